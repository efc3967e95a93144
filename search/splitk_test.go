package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/verify"
)

// Split-K (Space.SplitK): contracted axes split across a cluster's slices,
// the partial sums added by the Inter-Slice Block. Tested on spaces small
// enough to enumerate: the planner proves the exhaustive optimum, every
// bound holds for every legal split candidate, and the plans verify.

// splitSpaces are contractions whose output is too small to fill a
// cluster's slices: a skinny GEMV and GEMM and the manual's dot product
// (002 L111-120).
// long marks the spaces whose exhaustive search and bounds run only
// without -short (`make test-long`).
var splitSpaces = []struct {
	name, src string
	long      bool
}{
	{"dot", "name: dot\neinsum: A,A->\naxes: {A: 1024}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", false},
	{"skinny-gemv", "name: skinny-gemv\neinsum: IJ,J->I\naxes: {I: 8, J: 512}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", false},
	{"skinny-gemm", "name: skinny-gemm\neinsum: IK,KJ->IJ\naxes: {I: 4, J: 32, K: 256}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", true},
}

// TestSplitKSolveMatchesExhaustive: with split candidates in the space the
// SAT branch and bound (its TRF and DM clauses widened by the split
// units, no switch with a split) still proves the exhaustive optimum, and
// the optimum splits K.
func TestSplitKSolveMatchesExhaustive(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, w := range splitSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newSplitSpace(t, loadWorkload(t, w.src)).WithClusterK(false).WithRowsOuter(false)
			require.True(t, s.SplitK())
			_, sat := requireSolveMatchesExhaustive(t, s)
			assert.Greater(t, s.Split(&sat.Best.Candidate), 1, "the optimum splits K: %s", sat.Best.Candidate.String(s.P))
			// Without split-K the space's optimum is no better.
			r, err := Solve(s.WithSplitK(false), Options{})
			require.NoError(t, err)
			require.NotNil(t, r.Best)
			assert.GreaterOrEqual(t, r.Best.Report.Cycles, sat.Best.Report.Cycles)
			t.Logf("split %.0f cycles (%s), unsplit %.0f", sat.Best.Report.Cycles, sat.Best.Candidate.String(s.P), r.Best.Report.Cycles)
		})
	}
}

// TestSplitKBoundsAdmissible: every lower bound of every legal split
// candidate (sampled under -race) is at most its price.
func TestSplitKBoundsAdmissible(t *testing.T) {
	t.Parallel()
	for _, w := range splitSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newSplitSpace(t, loadWorkload(t, w.src)).WithClusterK(false).WithRowsOuter(false)
			split := boundsBelowWhere(t, s, func(c *Candidate) bool { return s.Split(c) > 1 })
			assert.Positive(t, split, "legal split candidates")
		})
	}
}

// TestSplitKPlansVerify: the split plans run on the simulator: each
// slice's partial sums through the Inter-Slice Block match the reference,
// with every slice simulated and with a sample (a reduction reads every
// slice of its group, which the sampled run keeps exact).
func TestSplitKPlansVerify(t *testing.T) {
	t.Parallel()
	for _, w := range splitSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			s := newSplitSpace(t, loadWorkload(t, w.src)).WithClusterK(false).WithRowsOuter(false)
			r, err := Solve(s, Options{Top: 3})
			require.NoError(t, err)
			for _, x := range r.Top {
				if s.Split(&x.Candidate) == 1 {
					continue
				}
				for _, sample := range []int{0, 2} {
					rep, err := verify.Verify(engines.Default(), x.Program, verify.Options{Seed: 3, Sample: sample})
					require.NoError(t, err, x.Candidate.String(s.P))
					assert.True(t, rep.Pass, "%s (sample %d): %s", x.Candidate.String(s.P), sample, rep)
				}
			}
		})
	}
}
