package search_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
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

// tiled keeps the candidates with one slice per cluster (no Slice
// factors) and an outer tile loop over the axes tiles (by index, outermost
// first), with stationary input stationary, double buffered or not. The
// space tiles only the candidates that do not fit a slice untiled
// (search/tile.go); on one slice per cluster the tiled rows' shapes do
// not fit, and keeping to those bounds the candidates priced under -race.
func tiled(tiles []int, stationary uint8, double bool) func(search.Stage, *search.Candidate) bool {
	return func(st search.Stage, c *search.Candidate) bool {
		for a := range c.Split {
			if c.Split[a][search.Slice] > 1 {
				return false
			}
		}
		if st >= search.StageStationary && c.Stationary != stationary {
			return false
		}
		return st < search.StageTiles || slices.Equal(c.Tiles(), tiles) && c.DoubleBuffer == double
	}
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
// large enough that some candidates need tiles, Options.Where keeps only
// one kind of tiling, and search.Exhaustive plans the restricted space (the
// SAT planner visits the cheap untiled skeletons first, too slowly under
// -race). A tiled plan misdirected to read one tile from the first tile's
// address must fail, so a PASS shows every tile's DMA was simulated.
//
// No search has a wall-clock budget: the plans verified do not depend on
// the machine's speed. Under -short (`make test`) the BMM's and the
// attention head's searches stop after a count of candidate evaluations
// (proofs there price thousands of candidates exactly) and two of the four
// tiled rows run; `make test-long` proves every untiled plan and runs
// every row.
func TestPlansVerifyOnSimulator(t *testing.T) {
	if raceEnabled {
		t.Skip("the simulator under the race detector: `make test` runs it without it (unit-norace)")
	}
	t.Parallel()
	spec := engines.Default()
	for _, tc := range []struct {
		name, file, op string
		// sizes overrides axis sizes; note says what runs.
		sizes map[string]int
		note  string
		// prove requires the planner to prove its winner optimal.
		// Otherwise, under -short, the search stops after evals candidate
		// evaluations (Options.MaxEvaluations: the same plan on any
		// machine) and the best plan found so far is verified; without
		// -short it proves its winner too.
		prove bool
		evals int
		// shortEvals, under -short, stops a proving row's search after
		// this many evaluations instead (the plan verified is the best
		// found; the proof is TestSolveMatchesExhaustive's): its proof
		// alone takes tens of seconds.
		shortEvals int
		// maxTiles bounds the tiles (0: the default); where restricts the
		// space (forced tiled plans; no optimality claimed then).
		maxTiles int
		Where    func(search.Stage, *search.Candidate) bool
		// long rows run without -short only (`make test-long`).
		long bool
	}{
		{name: "dot", file: "dot.yaml", note: "full size A=2048", prove: true},
		{name: "gemv", file: "gemv.yaml", note: "full size I=256 J=2048", prove: true, shortEvals: 300},
		{name: "gemm", file: "gemm.yaml", sizes: map[string]int{"I": 32, "J": 32, "K": 128},
			note: "I=J=32 K=128 (full 512x512x2048)", prove: true},
		{name: "gemm-4k", file: "gemm-4k.yaml", sizes: map[string]int{"I": 64, "J": 64, "K": 256},
			note: "I=J=64 K=256 (full 4096^3)", prove: true, shortEvals: 300},
		{name: "bmm", file: "bmm.yaml", sizes: map[string]int{"V": 2, "M": 2, "N": 12},
			note: "V=2 M=2 N=12 K=32 (full V=32 M=32 N=24)", evals: 500},
		{name: "attention-head/qk", file: "attention-head.yaml", op: "qk", sizes: map[string]int{"S": 32, "T": 32, "D": 128},
			note: "S=T=32 D=128 (full S=T=2048)", evals: 2000},
		{name: "attention-head/pv", file: "attention-head.yaml", op: "pv", sizes: map[string]int{"S": 32, "T": 32, "D": 128},
			note: "S=T=32 D=128 (full S=T=2048)", evals: 2000},
		// Forced tiled plans: sizes where the candidates on one slice per
		// cluster do not fit a slice's DM or TRF untiled, so the space
		// tiles them; each row keeps one kind of tiling (exhaustively).
		{name: "gemm-4k/tiled-I", file: "gemm-4k.yaml", sizes: map[string]int{"I": 256, "J": 128, "K": 64},
			note:     "I=256 J=128 K=64, tiles over I, a stationary, double buffered, tiles <= 16",
			maxTiles: 16, Where: tiled([]int{0}, 0, true), long: true},
		{name: "gemm-4k/tiled-J", file: "gemm-4k.yaml", sizes: map[string]int{"I": 256, "J": 128, "K": 64},
			note:     "I=256 J=128 K=64, tiles over J (the streaming b's axis), a stationary, single buffered, tiles <= 16",
			maxTiles: 16, Where: tiled([]int{1}, 0, false), long: true},
		{name: "gemm-4k/tiled-IJ", file: "gemm-4k.yaml", sizes: map[string]int{"I": 256, "J": 128, "K": 64},
			note:     "I=256 J=128 K=64, tiles over I then J, a stationary, double buffered, tiles <= 16",
			maxTiles: 16, Where: tiled([]int{0, 1}, 0, true), long: true},
		{name: "attention-head/qk/tiled", file: "attention-head.yaml", op: "qk", sizes: map[string]int{"S": 256, "T": 256, "D": 32},
			note:     "S=T=256 D=32, tiles over S (the streaming q's axis), k stationary, double buffered, tiles <= 16",
			maxTiles: 16, Where: tiled([]int{0}, 1, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.long && testing.Short() {
				t.Skip("long: `make test-long` runs it (go test without -short)")
			}
			prove := tc.prove || tc.Where == nil && !testing.Short()
			evals := tc.evals
			if testing.Short() && tc.shortEvals > 0 {
				prove, evals = false, tc.shortEvals
			}
			start := time.Now()
			w := reducedWorkload(t, tc.file, tc.sizes)
			p, err := constraints.NewProblem(w, tc.op)
			require.NoError(t, err)
			s, err := search.NewSpace(p, spec)
			require.NoError(t, err)
			opts := search.Options{MaxTiles: tc.maxTiles, Top: 3}
			if !prove {
				opts.MaxEvaluations = evals
			}
			opts.Where = tc.Where
			solve := search.Solve
			if tc.Where != nil {
				solve = search.Exhaustive
			}
			res, err := solve(s, opts)
			require.NoError(t, err)
			require.NotNil(t, res.Best, "%s: no legal plan among %d candidates: %+v", tc.note, res.Stats.Candidates, res.Stats.Rules())
			planned := time.Since(start)
			if tc.Where != nil {
				for _, x := range res.Top {
					require.NotEmpty(t, x.Candidate.Tiles(), "a tiled plan")
				}
			}
			if prove {
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
			if tc.Where != nil {
				// Sampled: the output's tile views lead to the slices.
				pl, err := res.Plan()
				require.NoError(t, err)
				data, err := pl.Marshal()
				require.NoError(t, err)
				back, err := plan.Unmarshal(data)
				require.NoError(t, err)
				rep, err := verify.Verify(spec, back.Program, verify.Options{Seed: 2, Sample: 1})
				require.NoError(t, err)
				assert.True(t, rep.Pass, "sampled:\n%s", rep)
				assert.Positive(t, rep.Compared)
				t.Logf("  sampled (%s): %d of %d elements compared, pass %v", strings.Join(rep.Simulated, "; "),
					rep.Compared, rep.Comparison.N, rep.Pass)
			}
			if tc.Where != nil {
				// The PASS above means something only if the simulator
				// reads each tile where its DMA says: moving one tile's
				// source back onto the first tile must fail.
				pl, err := res.Plan()
				require.NoError(t, err)
				data, err := pl.Marshal()
				require.NoError(t, err)
				bad, err := plan.Unmarshal(data)
				require.NoError(t, err)
				moved := misdirectTile(t, bad.Program)
				rep, err := verify.Verify(spec, bad.Program, verify.Options{Seed: 1})
				if err != nil {
					// The validator refuses a descriptor reading outside
					// its tile view (DMA-R5/R6) before the simulator runs.
					assert.ErrorContains(t, err, "holds", "reading %s from the first tile's address", moved)
					return
				}
				assert.False(t, rep.Pass, "reading %s from the first tile's address passed", moved)
			}
		})
	}
}

// misdirectTile rewrites the first to_dm of an input tile view that is not
// at its argument's base so that it reads from the base (the first tile)
// instead, and returns the view's name.
func misdirectTile(t *testing.T, p *kernel.Program) string {
	t.Helper()
	for _, op := range p.Ops {
		if op.Kind != kernel.OpToDM || op.DMA == nil {
			continue
		}
		v, ok := p.Tensor(op.Src)
		if !ok || v.View == "" {
			continue
		}
		base, ok := p.Tensor(v.View)
		require.True(t, ok, "view %s of unknown %s", v.Name, v.View)
		off := v.Addr - base.Addr
		if off == 0 {
			continue
		}
		for i := range op.DMA.Descriptors {
			op.DMA.Descriptors[i].SrcBase -= int(off)
		}
		return v.Name
	}
	require.Fail(t, "no to_dm of a tile view past the first tile")
	return ""
}

// TestSpreadSlicesVerify plans, among the candidates whose clusters use
// fewer than all 256 slices, the best ones with and without a switch and
// checks that the builder spreads their live slices over the cluster's
// DMNs (search/build.go placeSlices: a live slice beyond the first S
// positions) and that the programs PASS on the simulator: fetch, TRF,
// switch, commit and DMA all take the spread slice mapping.
func TestSpreadSlicesVerify(t *testing.T) {
	if raceEnabled {
		t.Skip("56 s of simulation under -race: make test runs it in unit-norace")
	}
	t.Parallel()
	spec := engines.Default()
	for _, tc := range []struct {
		name, file string
		sizes      map[string]int
		switched   bool
	}{
		{"gemv", "gemv.yaml", nil, false},
		{"gemm/switched", "gemm.yaml", map[string]int{"I": 64, "J": 32, "K": 64}, true},
		{"bmm", "bmm.yaml", map[string]int{"V": 2, "M": 2, "N": 12}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name == "bmm" {
				t.Skip("long: `make test-long` runs it (gemv and the switched gemm cover the spread under -short)")
			}
			w := reducedWorkload(t, tc.file, tc.sizes)
			p, err := constraints.NewProblem(w, "")
			require.NoError(t, err)
			s, err := search.NewSpace(p, spec)
			require.NoError(t, err)
			// The spread without split-K (its own tests, splitk_test.go).
			s = s.WithSplitK(false)
			k := slices.IndexFunc(p.Axes, func(a constraints.Axis) bool { return a.Name == "K" })
			live := func(c *search.Candidate) int {
				n := 1
				for a := range c.Split {
					n *= max(int(c.Split[a][search.Slice]), 1)
				}
				return n
			}
			Where := func(st search.Stage, c *search.Candidate) bool {
				if n := live(c); n < 2 || n >= 256 || n%2 != 0 {
					return false
				}
				if tc.switched {
					// A ring is consecutive slices (002 L3364-3365): slices
					// beyond it, on another axis, to spread.
					axes := 0
					for a := range c.Split {
						if c.Split[a][search.Slice] > 1 {
							axes++
						}
					}
					if axes < 2 {
						return false
					}
					// Under -short, the contracted axis on the whole
					// packet (the 32 lanes the switch carries): the
					// space's other switched candidates are mostly
					// illegal (the stationary operand's fetch, FE-R5),
					// found so only by building them.
					if testing.Short() && st >= search.StagePacket && c.Split[k][search.Packet] < 32 {
						return false
					}
					// Under -short, too, a held in the TRF and no tiles
					// (the best spread plan of the whole space is so).
					if testing.Short() && (st >= search.StageStationary && c.Stationary != 0 || st >= search.StageTiles && len(c.Tiles()) > 0) {
						return false
					}
				}
				return st < search.StageStationary || c.Switch == tc.switched
			}
			opts := search.Options{Top: 3, Where: Where}
			if testing.Short() {
				opts.Top = 1 // the best; `make test-long` verifies three
			}
			res, err := search.Solve(s, opts)
			require.NoError(t, err)
			require.NotNil(t, res.Best, "no legal candidate: %+v", res.Stats.Rules())
			for i, x := range res.Top {
				pl, err := res.PlanOf(x)
				require.NoError(t, err)
				n := live(&x.Candidate)
				spread := false
				for _, tt := range pl.Program.Tensors {
					if tt.Mem != kernel.DM || tt.Slice == nil {
						continue
					}
					for k := n; k < tt.Slice.Size() && !spread; k++ {
						spread = tt.Slice.Map(k).Kind == mapping.Live
					}
				}
				assert.True(t, spread, "top %d: %d live slices not spread: %s", i, n, x.Candidate.String(p))
				rep, err := verify.Verify(spec, pl.Program, verify.Options{Seed: 1})
				require.NoError(t, err, "top %d: %s", i, x.Candidate.String(p))
				assert.True(t, rep.Pass, "top %d: %s\n%s", i, x.Candidate.String(p), rep)
				t.Logf("top %d: %s; %d live slices; %.0f cycles; verify %v", i, x.Candidate.String(p), n, x.Report.Cycles, rep.Pass)
			}
		})
	}
}

// BenchmarkPlanGraphMoEExpanded plans the MoE block at reduced sizes with
// its Vector Engine ops, its cumsums, token rank and compaction expanded
// (workload.Expand; the token rank's parts have no kernel at K = 2, so the
// graph is planned twice), from the committed op plans.
func BenchmarkPlanGraphMoEExpanded(b *testing.B) {
	w := reducedWorkload(b, "moe.yaml", map[string]int{"T": 32, "D": 32, "F": 32, "E": 8, "K": 2, "GRID": 8})
	spec := engines.Default()
	o := search.GraphOptions{Spec: spec, Planner: search.PlanOpPlanner(spec), VectorOps: true, CacheOnly: true, Cache: &search.DirCache{Dir: "testdata/graph/cache"}}
	for b.Loop() {
		if _, err := search.PlanGraph(w, o); err != nil {
			b.Fatal(err)
		}
	}
}
