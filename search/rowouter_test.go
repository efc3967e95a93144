package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
)

// A stationary free axis's Row digit above its Time digit
// (Candidate.RowAbove, Space.RowsOuter): each Row holds a contiguous run
// of the axis (`I / 2 % 4` on Row, `I % 2` in Time) instead of
// neighbouring Rows holding neighbouring positions (`I % 4` on Row, the
// Hello GEMM's order, 002 L483-484). Tested on reduced-gemm, whose I
// takes Rows and Time steps: every bound holds for every legal candidate
// with the order reversed, the planner proves the exhaustive optimum, the
// plans verify, and a mapping file that states the order selects it.

// TestRowsOuterBoundsAdmissible: every lower bound of every legal
// row-outer candidate is at most its price, and such candidates exist.
func TestRowsOuterBoundsAdmissible(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	s := newRowsOuterSpace(t, loadWorkload(t, rowsOuterGEMM))
	outer := boundsBelowWhere(t, s, func(c *Candidate) bool { return orderBits(c, (*Candidate).RowAbove) != 0 })
	assert.Positive(t, outer, "legal row-outer candidates")
}

// TestRowsOuterSolveMatchesExhaustive: with both digit orders in the space
// the SAT branch and bound proves the exhaustive optimum, no worse than
// the space with one order.
func TestRowsOuterSolveMatchesExhaustive(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the exhaustive searches run without the race detector (make test's unit-norace)")
	}
	s := newRowsOuterSpace(t, loadWorkload(t, rowsOuterGEMM))
	require.True(t, s.RowsOuter())
	require.False(t, s.WithRowsOuter(false).RowsOuter())
	_, sat := requireSolveMatchesExhaustive(t, s)
	r, err := Solve(s.WithRowsOuter(false), Options{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, r.Best.Report.Cycles, sat.Best.Report.Cycles)
	t.Logf("optimum %.0f cycles (%s); one order %.0f", sat.Best.Report.Cycles, sat.Best.Candidate.String(s.P), r.Best.Report.Cycles)
}

// TestRowsOuterPlansVerify: row-outer plans run on the simulator and match
// the reference (the TRF rows, the accumulator's Row # 8 packet and the
// output's layout all follow the order), every slice simulated; the first
// legal one of each DM layout of the output and accumulation kind.
func TestRowsOuterPlansVerify(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the simulator runs without the race detector (make test's unit-norace)")
	}
	s := newRowsOuterSpace(t, loadWorkload(t, rowsOuterGEMM))
	type kind struct {
		out Layout
		acc Accumulation
	}
	verified := verifyKinds(t, s, func(c *Candidate) bool { return orderBits(c, (*Candidate).RowAbove) != 0 },
		func(c *Candidate) kind { return kind{c.Layout[TensorOut], c.Acc} }, 0)
	assert.GreaterOrEqual(t, len(verified), 2, "kinds verified: %v", verified)
	t.Logf("verified %v", verified)
}

// TestRowsOuterMapSpec: a mapping file's Row and Time expressions state
// the digit order; the candidates that agree with it have it.
func TestRowsOuterMapSpec(t *testing.T) {
	t.Parallel()
	s := newRowsOuterSpace(t, loadWorkload(t, rowsOuterGEMM))
	for _, tc := range []struct {
		spec  string
		outer bool
	}{
		{"stationary: in0\nrow: m![I / 2]\n", true},
		{"stationary: in0\nrow: m![I % 8]\n", false},
	} {
		m, err := constraints.ParseMapSpec("map.yaml", []byte(tc.spec), s.P)
		require.NoError(t, err)
		n := 0
		s.EnumerateWhere(m.Where(s.P), func(c Candidate) bool {
			n++
			assert.Equal(t, tc.outer, c.RowAbove(s.P.AxisIndex("I")), "%s", c.String(s.P))
			return true
		})
		assert.Positive(t, n, tc.spec)
	}
}

// rowsOuterGEMM is small enough to enumerate in seconds: its I takes up to
// 8 Rows and 2 Time steps.
const rowsOuterGEMM = `name: rows-outer-gemm
einsum: IK,KJ->IJ
axes: {I: 16, J: 8, K: 32}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`
