package search_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/search"
	"tcpmap/verify"
)

// reducedWorkload loads a shipped workload and rewrites the sizes of the
// axes named in sizes, keeping everything else of the file (einsum or
// graph, dtypes, operand order, layouts). The file is re-parsed, so the
// reduced workload is validated as any workload file.
func reducedWorkload(t testing.TB, file string, sizes map[string]int) *workload.Workload {
	t.Helper()
	path := "../workloads/" + file
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	if len(sizes) > 0 {
		var doc yaml.Node
		require.NoError(t, yaml.Unmarshal(data, &doc))
		require.Equal(t, yaml.DocumentNode, doc.Kind)
		root := doc.Content[0]
		var axes *yaml.Node
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "axes" {
				axes = root.Content[i+1]
			}
		}
		require.NotNil(t, axes, "%s: no axes", path)
		seen := map[string]bool{}
		for i := 0; i+1 < len(axes.Content); i += 2 {
			if n, ok := sizes[axes.Content[i].Value]; ok {
				axes.Content[i+1].Value = fmt.Sprint(n)
				seen[axes.Content[i].Value] = true
			}
		}
		for a := range sizes {
			require.True(t, seen[a], "%s: no axis %s to reduce", path, a)
		}
		data, err = yaml.Marshal(&doc)
		require.NoError(t, err)
	}
	w, err := workload.Parse(data, path)
	require.NoError(t, err)
	return w
}

// tiledOnly keeps the candidates with an outer tile loop.
func tiledOnly(st search.Stage, c *search.Candidate) bool {
	return st < search.StageTiles || len(c.Tiles()) > 0
}

// TestPlansVerifyOnSimulator plans every single-contraction workload of
// workloads/ (and the two einsum ops of the attention head), at reduced
// sizes where simulating the full size would be slow, and runs the winning
// plan's kernel program on the functional simulator (package verify),
// which compares it with a reference computed independently from the
// workload's einsum. The plan goes through its JSON form first, as
// `tcpmap plan --out` then `tcpmap verify` would take it.
//
// The tiled rows force a plan with an outer tile loop (HBM tile views,
// kernel.Tensor.View): the space only tiles candidates that do not fit a
// slice's DM (512 KB, 002 L535) or TRF untiled, so these rows keep sizes
// large enough that some candidates need tiles, and Options.Where keeps
// only tiled candidates.
func TestPlansVerifyOnSimulator(t *testing.T) {
	spec := engines.Default()
	for _, tc := range []struct {
		name, file, op string
		// sizes overrides axis sizes; note says what runs.
		sizes map[string]int
		note  string
		// prove requires the planner to prove its winner optimal;
		// otherwise it plans for budget and the best plan found so far
		// is verified (proofs of the larger shapes take minutes under
		// -race; TestSolveMatchesExhaustive cross-checks proofs).
		prove  bool
		budget time.Duration
		// maxTiles bounds the tiles (0: the default); tiled keeps tiled
		// candidates only (no optimality claimed over the whole space).
		maxTiles int
		tiled    bool
	}{
		{name: "dot", file: "dot.yaml", note: "full size A=2048", prove: true},
		{name: "gemv", file: "gemv.yaml", note: "full size I=256 J=2048", prove: true},
		{name: "gemm", file: "gemm.yaml", sizes: map[string]int{"I": 32, "J": 32, "K": 128},
			note: "I=J=32 K=128 (full 512x512x2048)", budget: 3 * time.Second},
		{name: "gemm-4k", file: "gemm-4k.yaml", sizes: map[string]int{"I": 64, "J": 64, "K": 256},
			note: "I=J=64 K=256 (full 4096^3)", budget: 3 * time.Second},
		{name: "bmm", file: "bmm.yaml", note: "full size V=32 M=32 N=24 K=32", budget: 3 * time.Second},
		{name: "attention-head/qk", file: "attention-head.yaml", op: "qk", sizes: map[string]int{"S": 32, "T": 32, "D": 128},
			note: "S=T=32 D=128 (full S=T=2048)", budget: 3 * time.Second},
		{name: "attention-head/pv", file: "attention-head.yaml", op: "pv", sizes: map[string]int{"S": 32, "T": 32, "D": 128},
			note: "S=T=32 D=128 (full S=T=2048)", budget: 3 * time.Second},
		{name: "gemm-4k/tiled", file: "gemm-4k.yaml", sizes: map[string]int{"I": 256, "J": 256, "K": 512},
			note: "I=J=256 K=512, tiled candidates only, tiles <= 16", budget: 5 * time.Second, maxTiles: 16, tiled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			w := reducedWorkload(t, tc.file, tc.sizes)
			p, err := search.NewProblem(w, tc.op)
			require.NoError(t, err)
			s, err := search.NewSpace(p, spec)
			require.NoError(t, err)
			opts := search.Options{MaxTiles: tc.maxTiles, Timeout: tc.budget, Top: 3}
			if tc.tiled {
				opts.Where = tiledOnly
			}
			res, err := search.Solve(s, opts)
			require.NoError(t, err)
			require.NotNil(t, res.Best, "%s: no legal plan", tc.note)
			planned := time.Since(start)
			if tc.tiled {
				require.NotEmpty(t, res.Best.Candidate.Tiles(), "a tiled plan")
			}
			if tc.prove {
				assert.True(t, res.Proof.Proven, "%s: not proven optimal (gap %.3g)", tc.note, res.Proof.Gap)
			}

			t.Logf("%s: planned in %v: %d candidates, %d legal; best %.0f cycles, proven %v (gap %.3g)",
				tc.note, planned.Round(time.Millisecond), res.Stats.Candidates, res.Stats.Legal,
				res.Best.Report.Cycles, res.Proof.Proven, res.Proof.Gap)

			// The winner and the runners-up kept (Top), each through its
			// plan JSON as `tcpmap plan --out` hands it to `tcpmap verify`.
			for i, x := range res.Top {
				pl, err := res.PlanOf(x)
				require.NoError(t, err)
				data, err := pl.Marshal()
				require.NoError(t, err)
				back, err := plan.Unmarshal(data)
				require.NoError(t, err)
				require.NotNil(t, back.Program)
				vstart := time.Now()
				rep, err := verify.Verify(spec, back.Program, verify.Options{Seed: 1})
				require.NoError(t, err, "top %d: %s", i, x.Candidate.String(p))
				assert.True(t, rep.Pass, "top %d: %s\n%s", i, x.Candidate.String(p), rep)
				verdict := "FAIL"
				if rep.Pass {
					verdict = "PASS"
				}
				t.Logf("  top %d: %s; %.0f cycles; verify %s (%d elements, %d MACs) in %v",
					i, x.Candidate.String(p), x.Report.Cycles, verdict, rep.Compared, rep.MACs,
					time.Since(vstart).Round(time.Millisecond))
			}
		})
	}
}
