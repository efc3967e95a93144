package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWindowedListsAlike: a skeleton's list held in windows (listOf,
// relist) gives the search one sorted list gives. Windows of one
// candidate, listed again after every candidate built, and windows that
// hold every skeleton whole give the same plans, proof and statistics,
// run to the end and stopped halfway by a budget of evaluations.
func TestWindowedListsAlike(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range []struct {
		name string
		src  string
	}{
		{"tiny-gemv", tinyGEMV},
		{"small-bmm", smallBMM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSpace(t, loadWorkload(t, tc.src))
			run := func(window, budget int) (*Result, int) {
				sv, err := newBnB(s, Options{Top: 3, Workers: 1, window: window, MaxEvaluations: budget})
				require.NoError(t, err)
				sv.run()
				return sv.finish(), sv.relists
			}
			whole, relists := run(maxWindow, 0)
			require.NotNil(t, whole.Best)
			require.Zero(t, relists, "every skeleton fits one window")
			for _, budget := range []int{0, whole.Stats.Evaluated / 2} {
				windowed, relists := run(1, budget)
				assert.Positive(t, relists, "windows of one candidate are listed again")
				base := whole
				if budget > 0 {
					base, _ = run(maxWindow, budget)
					assert.Equal(t, StoppedBudget, base.Stats.Stopped)
				}
				requireSameSearch(t, base, windowed)
			}
		})
	}
}

// requireSameSearch requires a and b to have the same best candidates,
// proof and statistics (wall time and memo counts aside).
func requireSameSearch(t *testing.T, a, b *Result) {
	t.Helper()
	require.Len(t, b.Top, len(a.Top))
	for i := range a.Top {
		assert.Equal(t, a.Top[i].Candidate, b.Top[i].Candidate, "top %d", i)
		assert.Equal(t, a.Top[i].Report.Cycles, b.Top[i].Report.Cycles, "top %d", i)
	}
	assert.Equal(t, a.Proof, b.Proof)
	sa, sb := a.Stats, b.Stats
	sa.Wall, sb.Wall = 0, 0
	sa.LowerHits, sa.LowerMisses, sb.LowerHits, sb.LowerMisses = 0, 0, 0, 0
	assert.Equal(t, sa, sb)
}

// TestCandidateBoundCached: the listing's bound, with each tensor's DMA
// load kept from the candidate before (dmaCache), equals candidateBound
// on the candidates of the spaces, listed in the enumerator's order; and
// the cache serves some of them.
func TestCandidateBoundCached(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    *Space
	}{
		{"small-bmm", newSplitSpace(t, loadWorkload(t, smallBMM))},
		{"dealt-out-gemm", newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m dmaCache
			n, hits, every := 0, 0, sampleEvery()
			tc.s.Enumerate(func(c Candidate) bool {
				before := m
				got := tc.s.candidateBoundCached(&c, &m)
				for tt := range NumTensors {
					if before.ok[tt] && before.key[tt] == m.key[tt] {
						hits++
					}
				}
				if n++; n%every == 0 {
					require.Equal(t, tc.s.candidateBound(&c), got, c.String(tc.s.P))
				}
				return true
			})
			assert.Positive(t, hits)
			t.Logf("%d candidates, %d tensor loads from the cache", n, hits)
		})
	}
}
