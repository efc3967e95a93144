package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/verify"
)

// clusterInnerGEMM splits I and J over both clusters and their slices.
const clusterInnerGEMM = `name: cluster-inner-gemm
einsum: IK,JK->IJ
axes: {I: 4, J: 16, K: 64}
dtype: {in: bf16, acc: f32, out: f32}
chips: 1
`

// TestClusterInnerLegalAlike: on cluster-inner-gemm (each of I and J
// split over both clusters and their slices, stationary or streamed),
// every candidate with a Cluster digit below its Slice digit is legal
// exactly when its form with the Cluster digit above is: the engines
// accept either order. Most pairs price alike (each slice holds a block
// of the same size either way); the log counts those that do not.
func TestClusterInnerLegalAlike(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newClustersInnerSpace(t, loadWorkload(t, clusterInnerGEMM))
	require.True(t, s.ClustersInner())
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	n, legal, apart, every := 0, 0, 0, sampleEvery()
	s.Enumerate(func(c Candidate) bool {
		if orderBits(&c, (*Candidate).ClusterBelow) == 0 {
			return true
		}
		if n++; n%every != 0 {
			return true
		}
		plain := c
		clearNamedOrders(&plain, false, false, true)
		x, y := ev.evaluate(0, &c, nil), ev.evaluate(0, &plain, nil)
		require.Equal(t, y == nil, x == nil, c.String(s.P))
		if x != nil {
			legal++
			if x.Report.Cycles != y.Report.Cycles {
				apart++
			}
		}
		return true
	})
	require.Positive(t, legal)
	t.Logf("%d candidates with clusters inner, %d checked legal, %d priced apart from their plain form", n, legal, apart)
}

// wideGEMV is a decode-sized GEMV whose weights the two clusters stream
// faster in turns than in halves.
const wideGEMV = `name: wide-gemv
einsum: IJ,J->I
axes: {I: 8192, J: 1024}
dtype: {in: bf16, acc: f32, out: f32}
chips: 1
`

// TestClusterInnerWins: the order is a real choice. On wide-gemv the
// proven optimum takes the slices' blocks of I to the clusters in turn:
// 26,004 cycles against 26,306 with each cluster holding half of I (the
// weights' rows the two clusters stream at once are neighbours, not
// 4,096 rows apart), and it runs on the simulator.
func TestClusterInnerWins(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newSplitSpace(t, loadWorkload(t, wideGEMV))
	in, err := Solve(s, Options{})
	require.NoError(t, err)
	out, err := Solve(s.WithClustersInner(false), Options{})
	require.NoError(t, err)
	require.NotNil(t, in.Best)
	require.NotNil(t, out.Best)
	require.True(t, in.Proof.Proven)
	require.True(t, out.Proof.Proven)
	assert.NotZero(t, orderBits(&in.Best.Candidate, (*Candidate).ClusterBelow), in.Best.Candidate.String(s.P))
	assert.Less(t, in.Best.Report.Cycles, out.Best.Report.Cycles)
	rep, err := verify.Verify(engines.Default(), in.Best.Program, verify.Options{Seed: 5})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	t.Logf("clusters inner %.0f cycles (%s), plain %.0f", in.Best.Report.Cycles, in.Best.Candidate.String(s.P), out.Best.Report.Cycles)
}

// TestClusterInnerPlansVerify: plans whose Cluster digits sit below their
// Slice digits run on the simulator and match the reference, every slice
// simulated: the first legal one with each input stationary, with the
// stationary operand's axis or the streamed operand's axis so ordered.
func TestClusterInnerPlansVerify(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the simulator runs without the race detector (make test's unit-norace)")
	}
	s := newClustersInnerSpace(t, loadWorkload(t, clusterInnerGEMM))
	type kind struct {
		stationary uint8
		inner      uint8
	}
	verified := verifyKinds(t, s, func(c *Candidate) bool { return orderBits(c, (*Candidate).ClusterBelow) != 0 },
		func(c *Candidate) kind { return kind{c.Stationary, orderBits(c, (*Candidate).ClusterBelow)} }, 0)
	assert.GreaterOrEqual(t, len(verified), 4, "kinds verified: %v", verified)
	t.Logf("verified %v", verified)
}

// TestClusterInnerSolveMatchesExhaustive: with both orders of the Cluster
// and Slice digits, the branch and bound proves the exhaustive optimum,
// and the plan keeps the Cluster digit above (the candidate's text, which
// breaks ties, is a prefix of its form with clusters inner).
func TestClusterInnerSolveMatchesExhaustive(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the exhaustive searches run without the race detector (make test's unit-norace)")
	}
	s := newClustersInnerSpace(t, loadWorkload(t, clusterInnerGEMM))
	_, sat := requireSolveMatchesExhaustive(t, s)
	assert.Zero(t, orderBits(&sat.Best.Candidate, (*Candidate).ClusterBelow), sat.Best.Candidate.String(s.P))
}

// TestClusterInnerMapSpec: a mapping file's Cluster and Slice expressions
// state the digit order; the candidates that agree with it have it.
func TestClusterInnerMapSpec(t *testing.T) {
	t.Parallel()
	s := newClustersInnerSpace(t, loadWorkload(t, clusterInnerGEMM))
	i := s.P.AxisIndex("I")
	for _, tc := range []struct {
		spec  string
		inner bool
	}{
		// I's 4 positions over 2 clusters of 2 slices.
		{"stationary: in0\ncluster: 'm![I % 2]'\nslice: 'm![I / 2]'\n", true},
		{"stationary: in0\ncluster: 'm![I / 2]'\nslice: 'm![I % 2]'\n", false},
	} {
		m, err := constraints.ParseMapSpec("map.yaml", []byte(tc.spec), s.P)
		require.NoError(t, err)
		n := 0
		s.EnumerateWhere(m.Where(s.P), func(c Candidate) bool {
			n++
			assert.Equal(t, tc.inner, c.ClusterBelow(i), "%s", c.String(s.P))
			return true
		})
		assert.Positive(t, n, tc.spec)
	}
}

// clearNamedOrders turns off the named digit orders the flags say (the
// Row digit above Time, dealt out, the Cluster digit below Slice) on
// every axis of c, keeping the others.
func clearNamedOrders(c *Candidate, row, dealt, inner bool) {
	for a := range MaxAxes {
		r, d, ci, ok := c.NamedOrder(a)
		if !ok {
			continue
		}
		c.SetNamedOrder(a, r && !row, d && !dealt, ci && !inner)
	}
}

// orderBits is the axis bit set of c's axes whose order f reports
// (Candidate.RowAbove, DealtOut, ClusterBelow).
func orderBits(c *Candidate, f func(*Candidate, int) bool) uint8 {
	var bits uint8
	for a := range MaxAxes {
		if f(c, a) {
			bits |= 1 << uint(a)
		}
	}
	return bits
}
