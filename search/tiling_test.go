package search

import (
	"container/heap"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
)

// tilingSpaces are the spaces the tiling tests walk: tiles and both
// bufferings, split-K across slices, K chunks and the cluster reduce,
// dealt-out orders, the switch.
func tilingSpaces(t *testing.T) []struct {
	name string
	s    *Space
} {
	return []struct {
		name string
		s    *Space
	}{
		{"tiled-gemm", tiledGEMM(t)},
		{"small-bmm", newSplitSpace(t, loadWorkload(t, smallBMM))},
		{"dealt-out-gemm", newDealtOutSpace(t, loadWorkload(t, dealtOutGEMM))},
		{"reduced-gemm", newClusterKSpace(t, loadWorkload(t, reducedGEMM))},
	}
}

// TestTilingBoundAdmissible: a tiling's bound (Space.tilingBound, shown
// the candidate at StageTiles) is at most the candidate bound of each of
// its candidates, so a tiling bounded above the incumbent holds none that
// could beat it.
func TestTilingBoundAdmissible(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range tilingSpaces(t) {
		t.Run(tc.name, func(t *testing.T) {
			var tb float64
			tilings, n, tight, every := 0, 0, 0, sampleEvery()
			tc.s.EnumerateWhere(func(st Stage, c *Candidate) bool {
				if st == StageTiles {
					tb = tc.s.tilingBound(c)
					tilings++
				}
				return true
			}, func(c Candidate) bool {
				if n++; n%every != 0 {
					return true
				}
				cb := tc.s.candidateBound(&c)
				require.LessOrEqual(t, tb, cb, c.String(tc.s.P))
				if tb == cb {
					tight++
				}
				return true
			})
			require.Positive(t, tilings)
			t.Logf("%d tilings, %d candidates, %d sampled with the tiling bound tight", tilings, n, tight)
		})
	}
}

// TestEnumerateTilings: a skeleton's candidates listed tiling by tiling
// (bnb.enumerate) are its candidates in the enumerator's order, the
// tilings shown at StageTiles one to one with those listed, under the
// user's restriction too.
func TestEnumerateTilings(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded: make test runs it without the race detector in unit-norace")
	}
	t.Parallel()
	for _, tc := range tilingSpaces(t) {
		t.Run(tc.name, func(t *testing.T) {
			for _, where := range []func(Stage, *Candidate) bool{nil, func(st Stage, c *Candidate) bool {
				return st != StageTiles || !c.DoubleBuffer
			}} {
				sv, err := newBnB(tc.s, Options{Workers: 1, Where: where})
				require.NoError(t, err)
				n := len(tc.s.P.Axes)
				seen := map[Skeleton]bool{}
				sks := 0
				tc.s.EnumerateWhere(func(st Stage, c *Candidate) bool {
					if st != StageRows {
						return true
					}
					k := constraints.SkeletonOf(c)
					if seen[k] {
						return false
					}
					seen[k] = true
					if sks++; sks%3 != 0 {
						return false // a sample keeps the test short
					}
					var want, got []Candidate
					tc.s.EnumerateWhere(func(st Stage, c *Candidate) bool {
						return k.Matches(st, c, n) && (where == nil || where(st, c))
					}, func(c Candidate) bool { want = append(want, c); return true })
					var tilings []Candidate
					sv.enumerate(&k, 0, func(c *Candidate) { tilings = append(tilings, *c) }, nil, nil)
					for j := range tilings {
						before := len(got)
						sv.enumerate(&k, int32(j+1), nil, nil, func(c Candidate) bool { got = append(got, c); return true })
						for _, c := range got[before:] {
							assert.Equal(t, tilings[j].TileOrder, c.TileOrder)
							assert.Equal(t, tilings[j].DoubleBuffer, c.DoubleBuffer)
							for a := range n {
								assert.Equal(t, tilings[j].Factor(a, Tile), c.Factor(a, Tile))
							}
						}
					}
					require.Equal(t, want, got)
					return false
				}, func(Candidate) bool { return true })
				require.Positive(t, sks)
			}
		})
	}
}

// TestTilingsQueuedOneAtATime: a skeleton split into its tilings
// (bnb.tilingsOf) queues one of them, the best bounded, and each taken
// queues the next (nextTiling): the queue holds one unlisted tiling of the
// skeleton at a time, and they come out in bound order, each once.
func TestTilingsQueuedOneAtATime(t *testing.T) {
	s := tiledGEMM(t)
	sv, err := newBnB(s, Options{Workers: 1})
	require.NoError(t, err)
	var k Skeleton
	var want []float64
	s.EnumerateWhere(func(st Stage, c *Candidate) bool {
		if len(want) >= 3 {
			return false
		}
		if st != StageRows {
			return true
		}
		k, want = constraints.SkeletonOf(c), want[:0]
		sv.enumerate(&k, 0, func(c *Candidate) { want = append(want, s.tilingBound(c)) }, nil, func(Candidate) bool { return false })
		return false
	}, func(Candidate) bool { return true })
	require.GreaterOrEqual(t, len(want), 3, "a skeleton of several tilings")
	slices.Sort(want)

	sv.tilingsOf(&queued{k: &k})
	var got []float64
	places := map[int32]bool{}
	for sv.queue.Len() > 0 {
		require.Equal(t, 1, sv.queue.Len(), "unlisted tilings queued at once")
		q := heap.Pop(&sv.queue).(queued)
		got = append(got, q.bound)
		places[q.tiling] = true
		sv.nextTiling(q.k, q.seq, sv.tracks[k])
	}
	assert.Equal(t, want, got)
	assert.Len(t, places, len(want))
	assert.Equal(t, len(want), sv.tracks[k].open, "tilings not done")
}

// TestDive: depth first, the queue's built candidate comes before a listed
// tiling, a listed tiling before an unlisted one, an unlisted tiling before
// skeletons and placements, each only within interleaveSpread of the best
// bound.
func TestDive(t *testing.T) {
	sv, err := newBnB(tiledGEMM(t), Options{Workers: 1})
	require.NoError(t, err)
	var k Skeleton
	push := func(q queued) {
		q.k = &k
		heap.Push(&sv.queue, q)
	}
	push(queued{bound: 10, placement: true})
	push(queued{bound: 10})
	assert.Equal(t, -1, sv.dive(), "only a placement and a skeleton")
	push(queued{bound: 10 * interleaveSpread * 2, tiling: 1})
	assert.Equal(t, -1, sv.dive(), "a tiling bounded past the spread")
	push(queued{bound: 30, tiling: 2})
	push(queued{bound: 20, tiling: 3})
	i := sv.dive()
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, int32(3), sv.queue[i].tiling, "the best unlisted tiling")
	push(queued{bound: 50, tiling: 4, listed: true})
	i = sv.dive()
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, int32(4), sv.queue[i].tiling, "a listed tiling first")
	push(queued{bound: 60, built: true, c: &Candidate{}})
	i = sv.dive()
	require.GreaterOrEqual(t, i, 0)
	assert.True(t, sv.queue[i].built, "a built candidate first")
}
