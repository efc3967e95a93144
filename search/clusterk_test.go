package search

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/verify"
)

// Contracted axes across the clusters (Space.ClusterK): each cluster
// contracts its share of K, a DMA between the clusters' DMs gives each
// cluster both partial sums of half the output, and the Vector Engine adds
// them (the cluster reduce, 002 L7382-7610). Tested on spaces small enough
// to enumerate: every bound holds for every legal cluster-split
// candidate, the planner proves the exhaustive optimum, and the plans
// verify on the simulator.

// clusterKSpaces have an output of a few slices' worth and a long K, so
// that splitting K over the clusters halves each cluster's reads.
var clusterKSpaces = []struct {
	name, src string
	long      bool
}{
	{"cluster-gemm", "name: cluster-gemm\neinsum: IK,KJ->IJ\naxes: {I: 2, J: 32, K: 256}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", false},
	{"cluster-gemm-k512", "name: cluster-gemm-k512\neinsum: IK,KJ->IJ\naxes: {I: 8, J: 32, K: 512}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", true},
	{"cluster-gemm-i32", "name: cluster-gemm-i32\neinsum: IK,KJ->IJ\naxes: {I: 8, J: 64, K: 1024}\ndtype: {in: i8, acc: i32, out: i32}\nchips: 1\n", true},
}

// TestClusterKSolveMatchesExhaustive: with cluster-split candidates in the
// space the SAT branch and bound (its TRF and DM clauses widened by the
// cluster units) proves the exhaustive optimum.
func TestClusterKSolveMatchesExhaustive(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the exhaustive searches run without the race detector (make test's unit-norace)")
	}
	for _, w := range clusterKSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newClusterKSpace(t, loadWorkload(t, w.src))
			require.True(t, s.ClusterK())
			ex, sat := requireSolveMatchesExhaustive(t, s)
			t.Logf("optimum %.0f cycles: %s; exact cost evaluations: exhaustive %d, sat %d",
				sat.Best.Report.Cycles, sat.Best.Candidate.String(s.P), ex.Stats.CostEvaluations, sat.Stats.CostEvaluations)
			// Without the cluster split the space's optimum is no better.
			r, err := Solve(s.WithClusterK(false), Options{})
			require.NoError(t, err)
			require.NotNil(t, r.Best)
			assert.GreaterOrEqual(t, r.Best.Report.Cycles, sat.Best.Report.Cycles)
		})
	}
}

// TestClusterKBoundsAdmissible: every lower bound of every legal
// cluster-split candidate (sampled under -short) is at most its price.
func TestClusterKBoundsAdmissible(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	for _, w := range clusterKSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newClusterKSpace(t, loadWorkload(t, w.src))
			split := boundsBelowWhere(t, s, func(c *Candidate) bool { return s.ClusterSplit(c) > 1 })
			assert.Positive(t, split, "legal cluster-split candidates")
		})
	}
}

// TestClusterKPlansVerify: cluster-split plans run on the simulator: the
// partial sums of each cluster, the DMA between the clusters' DMs, the
// pair-mode add of each half and its store match the reference, with every
// slice simulated and with a sample. The first legal candidate of each
// K chunk count and buffering.
func TestClusterKPlansVerify(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the simulator runs without the race detector (make test's unit-norace)")
	}
	for _, w := range clusterKSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newClusterKSpace(t, loadWorkload(t, w.src))
			type kind struct {
				k      int
				tiled  bool
				double bool
			}
			verified := verifyKinds(t, s, func(c *Candidate) bool { return s.ClusterSplit(c) > 1 },
				func(c *Candidate) kind { return kind{s.KTiles(c), c.TileOrder[0] != NoAxis, c.DoubleBuffer} }, 0, 2)
			assert.GreaterOrEqual(t, len(verified), 2, "kinds verified: %v", verified)
			t.Logf("verified %v", verified)
		})
	}
}

var writeClusterK = flag.Bool("write-clusterk", false, "write emit/testdata/clusterk-library.json, the library route's kernel (TestClusterKLibraryRoute)")

// TestClusterKLibraryRoute: for the vendor's libraries (Space.Library,
// plan --target visa-0.1|opt-0.6), whose DmTensor::to_dm keeps the Cluster
// mapping, the cluster reduce exchanges its partial sums through HBM: the
// cluster's partial sums to an HBM tensor, then each half's two back into
// DM under the other Cluster mapping, with no DM-to-DM DMA; the kernel
// verifies, and it is the K-unchunked cluster-split kernel emit's tests
// and rust-check spell in both APIs (emit/testdata/clusterk-library.json).
func TestClusterKLibraryRoute(t *testing.T) {
	t.Parallel()
	s := newClusterKSpace(t, loadWorkload(t, clusterKSpaces[0].src))
	s.Library = true
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	var found *Evaluated
	var cand Candidate
	s.Enumerate(func(c Candidate) bool {
		if s.ClusterSplit(&c) == 1 || s.KTiles(&c) > 1 || c.TileOrder[0] != NoAxis {
			return true
		}
		if x := ev.evaluate(0, &c, nil); x != nil {
			found, cand = x, c
			return false
		}
		return true
	})
	require.NotNil(t, found, "a legal cluster-split candidate")
	var kinds []string
	for _, op := range found.Program.Ops {
		if op.Kind != kernel.OpChain {
			kinds = append(kinds, string(op.Kind)+" "+op.Src+" "+op.Dst)
		}
	}
	assert.Contains(t, kinds, "to_hbm out_cp out_cx")
	assert.Contains(t, kinds, "to_dm out_cx out_cq")
	assert.NotContains(t, strings.Join(kinds, ","), "dm_to_dm")
	if !raceDetector {
		// Every slice, and a sample: each sampled slice runs with its peer
		// in the other cluster, and the HBM tensor between them is
		// tainted byte by byte, so the peers' bytes read back are clean.
		for _, sample := range []int{0, 2} {
			rep, err := verify.Verify(engines.Default(), found.Program, verify.Options{Seed: 3, Sample: sample})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "sample %d: %s", sample, rep)
		}
	}
	if *writeClusterK {
		p, err := s.Build(&cand)
		require.NoError(t, err)
		data, err := json.MarshalIndent(p, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("../emit/testdata/clusterk-library.json", append(data, '\n'), 0o644))
	}
}
