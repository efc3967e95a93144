package search

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/cost"
)

// The branch and bound's parts, one at a time, on the manual's dot product
// (workloads/dot.yaml): its search state is set by hand and each method's
// answer derived from the state.

func newDotBnB(t *testing.T, opts Options) *bnb {
	t.Helper()
	sv, err := newBnB(newSpace(t, workloadFile(t, "dot.yaml")), opts)
	require.NoError(t, err)
	return sv
}

func TestBnBLeftStopsAtTheEvaluationBudget(t *testing.T) {
	sv := newDotBnB(t, Options{MaxEvaluations: 5, Workers: 1})
	sv.st.Evaluated = 4
	d, ok := sv.left()
	assert.True(t, ok)
	assert.Zero(t, d, "no deadline: no time limit")
	sv.st.Evaluated = 5
	_, ok = sv.left()
	assert.False(t, ok)
}

func TestBnBLosesTie(t *testing.T) {
	sv := newDotBnB(t, Options{Workers: 1})
	var c Candidate
	key := c.String(sv.s.P)
	sv.res.Top = []*Evaluated{{Report: &cost.Report{Cycles: 100}, key: key}}
	sv.incumbentBound = 100
	assert.False(t, sv.losesTie(&c, 99), "a lower bound can still win")
	assert.False(t, sv.losesTie(&c, 100), "the same text does not lose its own tie")
	d := c
	d.Stationary = 1
	small, large := c, d
	if d.String(sv.s.P) < key {
		small, large = d, c
	}
	sv.res.Top[0].key = small.String(sv.s.P)
	assert.True(t, sv.losesTie(&large, 100), "a tie goes to the smaller text")
	assert.False(t, sv.losesTie(&small, 100))
}

func TestBnBFinish(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		stopped, restricted          bool
		proven, enumerated, cur, que float64
		wantProven                   bool
		wantLB, wantGap              float64
	}{
		// Ran out of skeletons: the incumbent is the bound.
		{name: "exhausted", proven: 100, enumerated: 64, cur: math.Inf(1), wantProven: true, wantLB: 100},
		// Stopped: the least of the last level enumerated, the skeleton in
		// evaluation and the queue's head, not below what was proven.
		{name: "stopped at a level", stopped: true, proven: 40, enumerated: 60, cur: math.Inf(1), que: 70, wantLB: 60, wantGap: 0.4},
		{name: "stopped in a skeleton", stopped: true, proven: 40, enumerated: 60, cur: 50, que: 70, wantLB: 50, wantGap: 0.5},
		{name: "stopped, queue below", stopped: true, proven: 40, enumerated: 60, cur: math.Inf(1), que: 30, wantLB: 40, wantGap: 0.6},
		// A restricted search (explain's) proves nothing about the space.
		{name: "restricted", restricted: true, proven: 100, enumerated: 64, cur: math.Inf(1), wantLB: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sv := newDotBnB(t, Options{Workers: 1})
			sv.res.Top = []*Evaluated{{Report: &cost.Report{Cycles: 100}}}
			sv.stopped, sv.st.Restricted = tc.stopped, tc.restricted
			sv.proven, sv.enumerated, sv.cur = tc.proven, tc.enumerated, tc.cur
			if tc.que > 0 {
				sv.queue = skeletonQueue{{bound: tc.que}}
			}
			res := sv.finish()
			assert.Equal(t, tc.wantProven, res.Proof.Proven)
			assert.InDelta(t, tc.wantLB, res.Proof.LowerBound, 1e-9)
			assert.InDelta(t, tc.wantGap, res.Proof.Gap, 1e-9)
			assert.Equal(t, !tc.stopped, res.Stats.Complete)
		})
	}
}

// A memory budget stops the search as a timeout does, and says so: with
// a budget of one byte the watcher stops the first search that runs past
// its first sample (workloads/gemm.yaml's whole space takes seconds).
func TestMemoryBudgetStops(t *testing.T) {
	t.Parallel()
	s := newSplitSpace(t, workloadFile(t, "gemm.yaml"))
	for _, run := range []func(*Space, Options) (*Result, error){Solve, Exhaustive} {
		res, err := run(s, Options{MemoryBudget: 1})
		require.NoError(t, err)
		assert.False(t, res.Stats.Complete)
		assert.Equal(t, StoppedMemory, res.Stats.Stopped)
		assert.False(t, res.Proof.Proven)
	}
}

// A memory budget judges the heap the search holds, not an earlier
// search's garbage: with the collector off and 512 MiB of garbage over a
// budget the live heap is well under, a search runs on (a graph plans many
// searches in a row; the metric counts what the GC has yet to free, and
// the prefill layer's classes stopped for memory after 0.1 s).
func TestMemoryBudgetGarbage(t *testing.T) {
	if raceDetector {
		t.Skip("the collector switched off process-wide: make test runs it in unit-norace")
	}
	s := newSplitSpace(t, workloadFile(t, "gemm.yaml"))
	runtime.GC()
	live := heapBytes()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	garbage := make([][]byte, 0, 512)
	for range 512 {
		garbage = append(garbage, make([]byte, 1<<20))
	}
	garbage = nil
	_ = garbage
	require.Greater(t, heapBytes(), live+256<<20, "the garbage is still counted")
	res, err := Solve(s, Options{MemoryBudget: live + 256<<20, MaxEvaluations: 2000})
	require.NoError(t, err)
	assert.NotEqual(t, StoppedMemory, res.Stats.Stopped)
}

// TestBnBFirstBuilt: without an incumbent, the built candidate with the
// lowest bound is priced ahead of the queue's best item only when its
// bound is within interleaveSpread of that item's; with an incumbent, never.
func TestBnBFirstBuilt(t *testing.T) {
	sv := newDotBnB(t, Options{Workers: 1})
	push := func(q queued) { heap.Push(&sv.queue, q) }
	// A placement at 100, a listed skeleton at 150, built candidates at
	// 1.5 and 3 times interleaveSpread × 100 / 2.
	near, far := 0.75*interleaveSpread*100, 1.5*interleaveSpread*100
	push(queued{bound: 100, placement: true, seq: 1})
	push(queued{bound: 150, listed: true, seq: 2})
	push(queued{bound: far, built: true, seq: 3})
	push(queued{bound: near, built: true, seq: 4})
	i := sv.firstBuilt()
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, near, sv.queue[i].bound, "the lowest-bound built candidate, within interleaveSpread × 100")
	// The placement's bound falls to 50: near is more than interleaveSpread
	// times it.
	sv.queue[0].bound = 50
	heap.Fix(&sv.queue, 0)
	assert.Equal(t, -1, sv.firstBuilt(), "the queue is worked on best first")
	// With an incumbent nothing is priced out of turn here.
	sv.queue[0].bound = 100
	heap.Fix(&sv.queue, 0)
	require.GreaterOrEqual(t, sv.firstBuilt(), 0)
	sv.res.Top = []*Evaluated{{}}
	assert.Equal(t, -1, sv.firstBuilt())
}

// TestBnBListedFirst: interleaved takes the lowest-bound listed skeleton
// or built candidate ahead of placements and skeletons not yet listed
// when its bound is within interleaveSpread of the queue's best.
func TestBnBListedFirst(t *testing.T) {
	sv := newDotBnB(t, Options{Workers: 1})
	heap.Push(&sv.queue, queued{bound: 100, placement: true, seq: 1})
	heap.Push(&sv.queue, queued{bound: 100, seq: 2})
	heap.Push(&sv.queue, queued{bound: 2 * interleaveSpread * 100, listed: true, seq: 3})
	assert.Equal(t, -1, sv.listedFirst(), "the listed skeleton bounds far above the placement")
	heap.Push(&sv.queue, queued{bound: interleaveSpread * 100, listed: true, seq: 4})
	i := sv.listedFirst()
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, 4, sv.queue[i].seq, "the listed skeleton within interleaveSpread of the best bound")
	assert.NotEqual(t, 4, sv.queue.peek().seq, "step would have taken the placement (seq 1)")
}

// TestQueueLeast checks skeletonQueue.least against a scan of the whole
// queue in slice order (the first of equal items kept): random heaps with
// ties in bound, seq and tiling, random predicates and limits.
func TestQueueLeast(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var walk []int32
	for trial := range 2000 {
		var q skeletonQueue
		for range rng.IntN(40) {
			heap.Push(&q, queued{bound: float64(rng.IntN(6)), seq: rng.IntN(3), tiling: int32(rng.IntN(3)), ahead: rng.IntN(3) == 0})
		}
		limit := float64(rng.IntN(7))
		if trial%5 == 0 {
			limit = math.Inf(1)
		}
		ok := func(r *queued) bool { return !r.ahead }
		want := -1
		for i := range q {
			if q[i].bound > limit || !ok(&q[i]) {
				continue
			}
			if want < 0 || q.Less(i, want) {
				want = i
			}
		}
		var got int
		got, walk = q.least(limit, walk, ok)
		require.Equal(t, want, got, "trial %d: queue %v, limit %v", trial, q, limit)
	}
}
