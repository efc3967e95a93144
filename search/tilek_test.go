package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// K chunks (Space.TileK): a contracted axis tiled in the innermost tile
// loops, each chunk's partial sums committed to DM and added by the split
// reduce (interleaved fetch, pair-mode Add, 002 L7151-7177). Tested on
// spaces small enough to enumerate: every bound holds for every legal
// chunked candidate, the planner proves the exhaustive optimum, and the
// chunked plans verify on the simulator.

// tileKSpaces need K chunks for 8 Rows: a Row of 8 KB (002 L4118,
// L4151-4155) holds 4096 bf16, so K = 8192 is two chunks or more.
var tileKSpaces = []struct {
	name, src string
	long      bool
}{
	{"long-k-gemm", "name: long-k-gemm\neinsum: IK,KJ->IJ\naxes: {I: 8, J: 8, K: 8192}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", false},
	{"long-k-gemm-i32", "name: long-k-gemm-i32\neinsum: IK,KJ->IJ\naxes: {I: 8, J: 16, K: 16384}\ndtype: {in: i8, acc: i32, out: i32}\nchips: 1\n", true},
}

// TestTileKSolveMatchesExhaustive: with K chunks in the space the SAT
// branch and bound (its TRF and DM clauses widened by the most chunks,
// Space.kChunks) still proves the exhaustive optimum, and the optimum
// chunks K: 8 Rows over two K chunks beat 4 Rows over the whole K.
func TestTileKSolveMatchesExhaustive(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the exhaustive searches run without the race detector (make test's unit-norace)")
	}
	for _, w := range tileKSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newTileKSpace(t, loadWorkload(t, w.src))
			require.True(t, s.TileK())
			ex, sat := requireSolveMatchesExhaustive(t, s)
			t.Logf("optimum %.0f cycles: %s; exact cost evaluations: exhaustive %d, sat %d (%.1f×)",
				sat.Best.Report.Cycles, sat.Best.Candidate.String(s.P), ex.Stats.CostEvaluations, sat.Stats.CostEvaluations,
				float64(ex.Stats.CostEvaluations)/float64(max(sat.Stats.CostEvaluations, 1)))
			// Without K chunks the space's optimum is no better.
			r, err := Solve(s.WithTileK(false), Options{})
			require.NoError(t, err)
			require.NotNil(t, r.Best)
			assert.GreaterOrEqual(t, r.Best.Report.Cycles, sat.Best.Report.Cycles)
			t.Logf("unchunked optimum %.0f cycles: %s", r.Best.Report.Cycles, r.Best.Candidate.String(s.P))
		})
	}
}

// TestTileKBoundsAdmissible: every lower bound of every legal chunked
// candidate (sampled under -short) is at most its price.
func TestTileKBoundsAdmissible(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, w := range tileKSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newTileKSpace(t, loadWorkload(t, w.src))
			chunked := boundsBelowWhere(t, s, func(c *Candidate) bool { return s.KTiles(c) > 1 })
			assert.Positive(t, chunked, "legal chunked candidates")
		})
	}
}

// TestTileKPlansVerify: chunked plans run on the simulator: each chunk's
// partial sums through DM, the split reduce's interleaved fetch and
// pair-mode add, match the reference, with every slice simulated and with
// a sample. The first legal candidate of each chunk count and buffering.
func TestTileKPlansVerify(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the simulator runs without the race detector (make test's unit-norace)")
	}
	for _, w := range tileKSpaces {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			if w.long {
				longOnly(t)
			}
			s := newTileKSpace(t, loadWorkload(t, w.src))
			type kind struct {
				k      int
				double bool
			}
			verified := verifyKinds(t, s, func(c *Candidate) bool { return s.KTiles(c) > 1 },
				func(c *Candidate) kind { return kind{s.KTiles(c), c.DoubleBuffer} }, 0, 2)
			assert.GreaterOrEqual(t, len(verified), 3, "chunk counts and bufferings verified: %v", verified)
			t.Logf("verified %v", verified)
		})
	}
}
