package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
)

// An output axis's Cluster and Slice digits below its Time digit
// (Candidate.DealtOut, Space.DealsOut): the clusters and slices are dealt the
// axis a chunk at a time (`I / 4 % 2` in Time, `I % 4` on Slice) instead
// of a contiguous block each (`I % 2` in Time, `I / 2` on Slice). Tested
// on dealtOutGEMM, whose I (a row of 256 bytes of in0 and of the
// output) takes Cluster, Slice and Time factors: every bound holds for
// every legal candidate with the order reversed, the planner finds the
// exhaustive optimum, the plans verify on every slice, and a mapping file
// that states the order selects it.

// TestDealtOutBoundsAdmissible: every lower bound of every legal
// dealt-out candidate (a sample under -short) is at most its price, and
// such candidates exist. Only they are built.
func TestDealtOutBoundsAdmissible(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	s := newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	legal := 0
	eachDealtOut(s, func(c *Candidate, i int) {
		if x := ev.evaluate(i, c, nil); x != nil {
			legal++
			requireBoundsBelow(t, s, c, x.Report.Cycles)
		}
	})
	assert.Positive(t, legal, "legal dealt-out candidates")
}

// eachDealtOut calls f with each dealt-out candidate of s (every
// sampleEvery-th under -short) and its index among them.
func eachDealtOut(s *Space, f func(c *Candidate, i int)) {
	i, every := 0, sampleEvery()
	s.Enumerate(func(c Candidate) bool {
		if orderBits(&c, (*Candidate).DealtOut) == 0 {
			return true
		}
		if i%every == 0 {
			f(&c, i)
		}
		i++
		return true
	})
}

// TestDealtOutLayoutsAlike: a dealt-out candidate's two DM layouts of each
// tensor differ exactly where its plain form's do (computed without the
// memo, whose key leaves the dealt-out axes out), and its output may be
// copied exactly where the plain form's may: the layout choices are the
// same.
func TestDealtOutLayoutsAlike(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	s := newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))
	n := 0
	eachDealtOut(s, func(c *Candidate, _ int) {
		base := *c
		clearNamedOrders(&base, false, true, false)
		for tt := range NumTensors {
			require.Equal(t, s.layoutsDifferOf(&base, tt), s.layoutsDifferOf(c, tt), "tensor %d of %s", tt, c.String(s.P))
		}
		require.Equal(t, s.Copyable(&base), s.Copyable(c), c.String(s.P))
		n++
	})
	assert.Positive(t, n, "dealt-out candidates compared")
}

// TestDealtOutSolveMatchesExhaustive: with both digit orders in the
// space the SAT branch and bound finds the exhaustive optimum, no worse
// than the space with one order. Both search the untiled candidates
// holding in1 in the TRF (Options.Where), where I is dealt out (in0
// stationary makes I its Row axis).
func TestDealtOutSolveMatchesExhaustive(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the exhaustive searches run without the race detector (make test's unit-norace)")
	}
	s := newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))
	require.True(t, s.DealsOut())
	require.False(t, s.WithDealsOut(false).DealsOut())
	opts := Options{Where: func(st Stage, c *Candidate) bool {
		switch st {
		case constraints.StageStationary:
			return c.Stationary == 1
		case constraints.StageTiles:
			return len(c.Tiles()) == 0
		}
		return true
	}}
	ex, err := Exhaustive(s, opts)
	require.NoError(t, err)
	sat, err := Solve(s, opts)
	require.NoError(t, err)
	require.NotNil(t, ex.Best)
	require.NotNil(t, sat.Best)
	// A restricted search claims no proof (Stats.Restricted); the
	// exhaustive search is the check.
	require.Equal(t, ex.Best.Report.Cycles, sat.Best.Report.Cycles, "exhaustive %s, sat %s",
		ex.Best.Candidate.String(s.P), sat.Best.Candidate.String(s.P))
	inner := 0
	s.EnumerateWhere(opts.Where, func(c Candidate) bool {
		if orderBits(&c, (*Candidate).DealtOut) != 0 {
			inner++
		}
		return true
	})
	assert.Positive(t, inner, "dealt-out candidates searched")
	r, err := Solve(s.WithDealsOut(false), opts)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, r.Best.Report.Cycles, sat.Best.Report.Cycles)
	t.Logf("optimum %.0f cycles (%s); one order %.0f; %d dealt-out candidates", sat.Best.Report.Cycles, sat.Best.Candidate.String(s.P), r.Best.Report.Cycles, inner)
}

// TestDealtOutPlansVerify: dealt-out plans run on the simulator and
// match the reference (the DMAs deal each slice its chunks, the commit
// writes them back), every slice simulated; the first legal one of each
// DM layout of the output, with I on one cluster and on both.
func TestDealtOutPlansVerify(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the simulator runs without the race detector (make test's unit-norace)")
	}
	s := newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))
	type kind struct {
		out      Layout
		clusters int
	}
	i := s.P.AxisIndex("I")
	verified := verifyKinds(t, s, func(c *Candidate) bool { return orderBits(c, (*Candidate).DealtOut) != 0 },
		func(c *Candidate) kind { return kind{c.Layout[TensorOut], c.Factor(i, Cluster)} }, 0)
	// Both output layouts, I dealt out over one cluster's slices and over
	// both clusters.
	assert.GreaterOrEqual(t, len(verified), 4, "kinds verified: %v", verified)
	t.Logf("verified %v", verified)
}

// TestDealtOutSplitPlansVerify: dealt-out plans that also split the
// contracted axis (across slices, across the clusters, in K chunks) run on
// the simulator and match the reference, every slice simulated; the
// first legal one of each split.
func TestDealtOutSplitPlansVerify(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the simulator runs without the race detector (make test's unit-norace)")
	}
	s := newSplitSpace(t, loadWorkload(t, dealtOutGEMM))
	type kind struct{ slices, clusters, chunks int }
	verified := verifyKinds(t, s, func(c *Candidate) bool {
		return orderBits(c, (*Candidate).DealtOut) != 0 && (s.Split(c) > 1 || s.ClusterSplit(c) > 1 || s.KTiles(c) > 1)
	}, func(c *Candidate) kind { return kind{s.Split(c), s.ClusterSplit(c), s.KTiles(c)} }, 0)
	for _, k := range []kind{{2, 1, 1}, {1, 2, 1}, {1, 1, 2}} {
		assert.True(t, verified[k], "a dealt-out plan split %+v verified: %v", k, verified)
	}
	t.Logf("verified %v", verified)
}

// TestDealtOutMapSpec: a mapping file's Slice and Time expressions
// state the digit order; the candidates that agree with it have it.
func TestDealtOutMapSpec(t *testing.T) {
	t.Parallel()
	s := newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))
	for _, tc := range []struct {
		spec  string
		inner bool
	}{
		// I's Time digit above its 4 slices, K's 4 time steps of
		// 32-element packets.
		{"stationary: in1\ntime: 'm![I / 4, K / 32]'\n", true},
		{"stationary: in1\ntime: 'm![I % 2, K / 32]'\n", false},
	} {
		m, err := constraints.ParseMapSpec("map.yaml", []byte(tc.spec), s.P)
		require.NoError(t, err)
		n := 0
		s.EnumerateWhere(m.Where(s.P), func(c Candidate) bool {
			n++
			assert.Equal(t, tc.inner, c.DealtOut(s.P.AxisIndex("I")), "%s", c.String(s.P))
			return true
		})
		assert.Positive(t, n, tc.spec)
	}
}

// TestDealtOutWholeUnits: the order is offered only where each
// slice's chunk moves whole 256-byte HBM units (002 L2980-2985): not for
// an axis whose positions are 2-byte elements innermost in HBM.
func TestDealtOutWholeUnits(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	s := newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))
	j, i := s.P.AxisIndex("J"), s.P.AxisIndex("I")
	n := 0
	s.Enumerate(func(c Candidate) bool {
		require.False(t, c.DealtOut(j), "J's positions are 2 bytes innermost in the output: %s", c.String(s.P))
		if c.DealtOut(i) {
			n++
		}
		return true
	})
	assert.Positive(t, n, "candidates dealing I out")
}

// dealtOutGEMM is small enough to enumerate in seconds: a row of I is
// 128 bf16 (256 bytes) of in0 and of the output, and in1 (J K, as
// attention's keys) sits in the TRF with its rows contiguous.
const dealtOutGEMM = `name: dealt-out-gemm
einsum: IK,JK->IJ
axes: {I: 8, J: 64, K: 128}
dtype: {in: bf16, acc: f32, out: f32}
chips: 1
`
