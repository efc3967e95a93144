package search

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/cost"
	"tcpmap/model/kernel"
)

// smallDM returns s with a DM of n bytes a slice, which makes small
// workloads tile.
func smallDM(s *Space, n int) *Space {
	sp := *s.Spec
	sp.DM.BytesPerSlice.Value = n
	s.Spec = &sp
	return s
}

// tiledGEMM is a GEMM of I = 8, J = 64, K = 64 on a DM of 1 KB a slice:
// most candidates tile.
func tiledGEMM(t testing.TB) *Space {
	t.Helper()
	return smallDM(newSpace(t, loadWorkload(t, `name: tiled-gemm
einsum: IK,KJ->IJ
axes: {I: 8, J: 64, K: 64}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`)), 1024)
}

// TestSkeletonCapacity: the SAT encoding's capacity limits (Row count by
// the TRF, Row and Packet factors by the DM) hold for every candidate the
// enumerator yields, and they bind: the spaces are chosen so that some
// skeletons are excluded. Without K chunks; TestSkeletonCapacityTileK
// checks the limits widened by them.
func TestSkeletonCapacity(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	skeletonCapacity(t, false)
}

// TestSkeletonCapacityTileK is TestSkeletonCapacity with K chunks in the
// spaces (TileK): a Row holds one of at most 8 chunks. Its enumeration is
// the larger: it runs without the race detector (make test's
// unit-norace).
func TestSkeletonCapacityTileK(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("run without the race detector (make test's unit-norace)")
	}
	skeletonCapacity(t, true)
}

func skeletonCapacity(t *testing.T, tileK bool) {
	for _, w := range []struct {
		name, src string
		dm        int
		rows      int // the expected maxRows
		// rowsK and in1K are maxRows and in1's DM units with K chunks
		// (TileK): a Row holds one of at most 8 chunks (Space.kChunks).
		rowsK, in1K int
	}{
		// K = 8192 bf16 is 16 KB a Row: at most 4 Rows (8 KB × 8 / 4,
		// 002 L4118, L4151-4155).
		{"long-k", `name: long-k
einsum: IK,KJ->IJ
axes: {I: 16, J: 64, K: 8192}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`, 0, 4, 8, 0},
		// 1 KB of DM: in0's and in1's 64 contracted bf16 (128 B each,
		// at 128-byte boundaries) and the output's one element leave in1
		// 1024 − 128 − 128 = 768 bytes: 2 units of Row and Packet on J
		// (128 · 2² ≤ 768 < 128 · 2³). With K in 8 chunks in1's floor is
		// 8 elements, 16 B (the others still take 128 B at their
		// boundaries): 5 units (16 · 2⁵ ≤ 768 < 16 · 2⁶).
		{"tiled-gemm", `name: tiled-gemm
einsum: IK,KJ->IJ
axes: {I: 8, J: 64, K: 64}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`, 1024, 8, 8, 5},
	} {
		{
			t.Run(fmt.Sprintf("%s/tileK=%v", w.name, tileK), func(t *testing.T) {
				// long-k without split-K (its K = 8192 split across slices
				// makes the space too large to enumerate under -race); the
				// split clauses on tiled-gemm.
				s := newSplitSpace(t, loadWorkload(t, w.src)).WithRowsOuter(false)
				if w.name == "long-k" {
					s = s.WithSplitK(false)
				}
				if w.dm > 0 {
					s = smallDM(s, w.dm)
				}
				s = s.WithTileK(tileK)
				rowsWant, in1Want := w.rows, 2
				if tileK {
					rowsWant, in1Want = w.rowsK, w.in1K
				}
				require.Equal(t, rowsWant, s.MaxRows())
				// A switched candidate's streamed input is shared by its ring
				// (the SAT DM clause's switched limit).
				limits, switched := [NumTensors]int{}, [NumTensors]int{}
				for t := range NumTensors {
					limits[t] = s.DMUnits(t)
					switched[t] = s.DMUnitsOf(t, s.Spec.Switch.MaxRingSize.Value)
				}
				n, split := 0, 0
				var most [NumTensors]int
				s.Enumerate(func(c Candidate) bool {
					n++
					rows := 1
					// splitW is the room the contracted axes split across
					// slices or clusters make (SplitK, ClusterK): ⌈log2 p⌉
					// a unit, as the SAT encoding's clauses add it.
					splitW := 0
					for a, ax := range s.P.Axes {
						rows *= c.Factor(a, Row)
						if ax.Class == Contracted {
							for f := c.Factor(a, Slice) * c.Factor(a, Cluster); f > 1; {
								for p := 2; p <= f; p++ {
									if f%p == 0 {
										splitW += bits.Len(uint(p - 1))
										f /= p
										break
									}
								}
							}
						}
					}
					isSplit := s.Split(&c) > 1 || s.ClusterSplit(&c) > 1
					if isSplit {
						split++
						require.LessOrEqual(t, bits.TrailingZeros(uint(rows)), s.TRFUnitsSplit()+splitW, named{s, &c})
					} else {
						require.LessOrEqual(t, rows, s.MaxRows(), named{s, &c})
					}
					for k := range NumTensors {
						o := s.OperandOf(k)
						u := 0
						for a, ax := range s.P.Axes {
							if o.Has(ax.Name) && ax.Class != Contracted {
								u += bits.TrailingZeros(uint(c.Factor(a, Row) * c.Factor(a, Packet)))
							}
						}
						limit := limits[k]
						if c.Switch {
							limit = switched[k]
						}
						if isSplit && k != TensorOut {
							limit = s.DMUnitsSplit(k, 1) + splitW
						}
						require.LessOrEqual(t, u, limit, "tensor %d of %s", k, named{s, &c})
						if !c.Switch {
							most[k] = max(most[k], u)
							require.LessOrEqual(t, s.DMFloor(&c, k), int64(s.Spec.DM.BytesPerSlice.Value))
						}
					}
					return true
				})
				require.Positive(t, n)
				if w.dm == 1024 {
					assert.Equal(t, in1Want, limits[TensorIn1], "in1's DM units")
				}
				if s.SplitK() {
					assert.Positive(t, split, "split candidates (SplitK)")
				}
				t.Logf("%d candidates (%d split); DM unit limits %v, most used %v", n, split, limits, most)
			})
		}
	}
}

// tiledBMM is a BMM of V = 2, M = 2, N = 8, K = 32 on a DM of 512 bytes a
// slice: most candidates tile, and there are few of them.
func tiledBMM(t testing.TB) *Space {
	t.Helper()
	return smallDM(newSpace(t, loadWorkload(t, `name: tiled-bmm
einsum: VMK,VNK->VMN
axes: {V: 2, M: 2, N: 8, K: 32}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`)), 512)
}

// TestSolveMatchesExhaustiveTiled: with a DM small enough that most
// candidates tile, the branch and bound (candidate bounds, capacity
// clauses) proves the exhaustive optimum and skips some candidates (or
// skeletons) unbuilt. The tiled GEMM, larger, runs without -short (`make
// test-long`).
func TestSolveMatchesExhaustiveTiled(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range []struct {
		name  string
		space func(testing.TB) *Space
		long  bool
	}{
		{"tiled-bmm", tiledBMM, false},
		{"tiled-gemm", tiledGEMM, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.long {
				longOnly(t)
			}
			ex, sat := requireSolveMatchesExhaustive(t, tc.space(t))
			// Candidates skipped unbuilt, or whole skeletons skipped by
			// their bound before any candidate (the tiled GEMM's: its
			// output's few HBM channels, bound.go).
			assert.Positive(t, sat.Stats.Skipped+sat.Stats.SAT.BoundSkips, "candidates or skeletons skipped unbuilt")
			assert.Less(t, sat.Stats.Candidates-sat.Stats.Skipped, ex.Stats.Candidates, "candidates built")
			t.Logf("exhaustive: %d candidates, %d priced; sat: %d candidates, %d skipped unbuilt, %d priced",
				ex.Stats.Candidates, ex.Stats.CostEvaluations, sat.Stats.Candidates, sat.Stats.Skipped, sat.Stats.CostEvaluations)
		})
	}
}

// TestSolveWidensTiles: with the default tile bound, a space none of
// whose candidates fits within the bound, though more tiles would fit, is
// searched again with a wider bound (and says so); an explicit bound is
// kept.
func TestSolveWidensTiles(t *testing.T) {
	t.Parallel()
	s := smallDM(newSpace(t, loadWorkload(t, `name: tiled-gemm
einsum: IK,KJ->IJ
axes: {I: 8, J: 256, K: 64}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`)), 512)
	// Without split-K: K split across slices shrinks every tile below the
	// DM, and nothing would need tiles.
	s = s.WithMaxTiles(1).WithSplitK(false)
	// Unswitched: a switch shares the streamed tile over a ring of
	// slices, which fits here.
	unswitched := func(_ Stage, c *Candidate) bool { return !c.Switch }
	r, err := Solve(s, Options{MaxTiles: 1, Where: unswitched})
	require.NoError(t, err)
	assert.Zero(t, r.Stats.Candidates, "nothing fits untiled")
	assert.Equal(t, 1, r.Space.MaxTiles())

	r, err = Solve(s, Options{Where: unswitched})
	require.NoError(t, err)
	assert.Equal(t, widenTiles, r.Space.MaxTiles())
	assert.Positive(t, r.Stats.Candidates, "tiled candidates within %d tiles", widenTiles)
}

// TestEnumerateSkeleton: a skeleton's candidates enumerated from the
// skeleton itself are those EnumerateWhere restricted to it yields, in the
// same order.
func TestEnumerateSkeleton(t *testing.T) {
	t.Parallel()
	for _, s := range []*Space{
		tiledGEMM(t),
		newSpace(t, loadWorkload(t, reducedBMM)),
	} {
		n := len(s.P.Axes)
		var sks []Skeleton
		seen := map[Skeleton]bool{}
		s.EnumerateWhere(func(st Stage, c *Candidate) bool {
			if st == StageRows {
				k := constraints.SkeletonOf(c)
				if !seen[k] {
					seen[k] = true
					sks = append(sks, k)
				}
				return false
			}
			return true
		}, func(Candidate) bool { return true })
		require.NotEmpty(t, sks)
		total := 0
		for i, k := range sks {
			if i%5 != 0 {
				continue // a sample keeps the test short
			}
			var want, got []Candidate
			s.EnumerateWhere(func(st Stage, c *Candidate) bool { return k.Matches(st, c, n) },
				func(c Candidate) bool { want = append(want, c); return true })
			s.EnumerateSkeleton(k.Candidate(), func(c Candidate) bool { got = append(got, c); return true })
			require.Equal(t, want, got, "skeleton %d", i)
			total += len(got)
		}
		assert.Positive(t, total)
	}
}

// TestVectorPassesBelow: in every legal K-chunked or cluster-reduced
// candidate's exact price, the main context's chains that contract
// nothing (the split reduce's and the cluster reduce's Vector Engine
// passes) take at least vectorPasses: they stream both partial sums of a
// slice's outputs at eight lanes a cycle at best (002 L5272), one op at a
// time. Some take less than 1.5 times it: the bound is near their rate.
func TestVectorPassesBelow(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	spaces := []*Space{
		newTileKSpace(t, loadWorkload(t, tileKSpaces[0].src)),
		newClusterKSpace(t, loadWorkload(t, clusterKSpaces[0].src)),
	}
	n, tight := 0, 0
	for _, s := range spaces {
		eachLegal(t, s, func(c *Candidate, x *Evaluated) {
			steps := 1
			for _, a := range c.Tiles() {
				steps *= c.Factor(a, Tile)
			}
			v := s.vectorPasses(c, steps)
			if v == 0 {
				return
			}
			// The passes: the main context's chains that contract
			// nothing.
			var busy float64
			for _, o := range x.Report.Ops {
				op := x.Program.Ops[o.Index]
				if op.Context != kernel.CtxMain || op.Kind != kernel.OpChain {
					continue
				}
				contracts := false
				for _, st := range op.Stages {
					contracts = contracts || st.Kind == kernel.StContract
				}
				if !contracts {
					busy += o.End - o.Start
				}
			}
			require.LessOrEqual(t, v, busy, c.String(s.P))
			n++
			if 1.5*v > busy {
				tight++
			}
		})
	}
	assert.Positive(t, n)
	assert.Positive(t, tight, "a bound of 1.5 times the passes would fail somewhere")
	t.Logf("%d candidates, %d within 1.5 times the passes", n, tight)
}

// TestDMAIssueBoundsBelow: on every legal double-buffered tiled candidate of a
// GEMV whose output tiles are written back in read-modify-writes (a
// decode projection's shape, its contracted axis split across slices or
// not), the DMA context's bound from the stores after the last load
// (Space.storeTail) is at most the candidate's price; and on every legal
// candidate of a cluster-reduce space (Space.ClusterK), so is the bound
// from its exchanges between the clusters (Space.exchanges). Each adds
// more than a startup to the bound of all the DMA traffic on some
// candidates and is close to the price on some (the tail within 1.5 times
// it, so that a tail counted twice fails; the exchanges, one DMN side of
// the exchange only, within 2.5 times).
func TestDMAIssueBoundsBelow(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	type term struct {
		name           string
		s              *Space
		factor         float64 // tight: within factor times the price
		every          int     // the sample's stride
		n, adds, tight int
	}
	terms := []*term{
		{name: "store tail", factor: 1.5, every: sampleEveryN(3), s: newSplitSpace(t, loadWorkload(t, "name: tail-gemv\neinsum: BD,QD->BQ\naxes: {B: 1, D: 1024, Q: 256}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"))},
		{name: "exchanges", factor: 2.5, every: sampleEvery(), s: newClusterKSpace(t, loadWorkload(t, clusterKSpaces[0].src))},
	}
	for _, tm := range terms {
		s := tm.s
		eachLegalEvery(t, s, tm.every, func(c *Candidate, x *Evaluated) {
			var whole [NumTensors]dmaLoad
			for tt := range NumTensors {
				whole[tt] = s.tensorDMA(c, tt, true, true)
			}
			sh := s.tileShapeOf(c)
			load := sh.perTile(&whole)
			nk, steps := s.KTiles(c), sh.steps
			all := s.allLoads(&sh, &load, nk)
			startup := float64(s.Spec.DMA.StartupCycles.Value)
			b := 0.0
			switch {
			case tm.name == "exchanges":
				b = s.exchanges(c, steps/nk, all, startup)
			case c.DoubleBuffer && steps > 1:
				b = s.storeTail(c, &sh, nk, load, all, startup)
			}
			if b == 0 {
				return
			}
			tm.n++
			require.LessOrEqual(t, b, x.Report.Cycles, "%s: %s", tm.name, c.String(s.P))
			if b > all.cycles(startup)+startup+1 {
				tm.adds++
			}
			if tm.factor*b > x.Report.Cycles {
				tm.tight++
			}
		})
		assert.Positive(t, tm.n, tm.name)
		assert.Positive(t, tm.adds, "%s adds more than a startup to the DMA traffic's bound somewhere", tm.name)
		assert.Positive(t, tm.tight, "%s times %.1f would fail somewhere", tm.name, tm.factor)
		t.Logf("%s: %d candidates, adds on %d, within %.1f times the price on %d", tm.name, tm.n, tm.adds, tm.factor, tm.tight)
	}
}

// TestStreamBoundsBelow: fetchBound, the streamed operand's fetch with a
// packet whose innermost digit is not innermost in the DM layout (one read
// per element, 002 L1757-1761, L2060), and switchBound, a switched
// candidate's switch (ring × input time × flits a packet, 002 L3523-3526),
// are at most the fetch and switch stages' cycles of every main chain of
// every legal candidate they make a claim for, over the named and every
// digit order of qk-shaped contractions (K streamed or stationary,
// switched or not); and each equals them on some (an overestimate by one
// read or one flit a packet fails).
func TestStreamBoundsBelow(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for i, s := range []*Space{
		newSpace(t, loadWorkload(t, "name: fetch-qk\neinsum: HGD,HSD->HGS\naxes: {H: 2, G: 4, S: 64, D: 64}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n")),
		newSpace(t, loadWorkload(t, "name: fetch-qk-small\neinsum: HGD,HSD->HGS\naxes: {H: 2, G: 2, S: 32, D: 32}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n")).WithAllOrders(true),
		// A projection whose weight's two free axes share the packet, as
		// the prefill layer's q_proj (its packet's run ends at its
		// innermost axis's packet digit).
		newSpace(t, loadWorkload(t, "name: fetch-proj\neinsum: SD,DHK->SHK\naxes: {S: 32, D: 32, H: 4, K: 16}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n")),
	} {
		type term struct {
			name               string
			engine             cost.Engine
			bound              func(c *Candidate) float64
			n, tight, sw, dual int
		}
		terms := []*term{
			{name: "fetch", engine: cost.EngineFetch, bound: func(c *Candidate) float64 { return s.fetchBound(c, true) }},
			{name: "switch", engine: cost.EngineSwitch, bound: func(c *Candidate) float64 { return s.switchBound(c, true) }},
		}
		eachLegalEvery(t, s, 4*sampleSparse(), func(c *Candidate, x *Evaluated) {
			for _, tm := range terms {
				b := tm.bound(c)
				if b == 0 {
					continue
				}
				tm.n++
				for _, o := range x.Report.Ops {
					if o.Context != kernel.CtxMain || o.Kind != kernel.OpChain {
						continue
					}
					for _, st := range o.Cost.Stages {
						if st.Engine != tm.engine {
							continue
						}
						require.LessOrEqual(t, b, st.Cycles, "%s: op %d of %s", tm.name, o.Index, c.String(s.P))
						if b == st.Cycles {
							tm.tight++
							if c.Switch {
								tm.sw++
							}
							if c.Mode == Dual {
								tm.dual++
							}
						}
					}
				}
			}
		})
		name := []string{"qk", "qk-small over every order", "projection"}[i]
		for _, tm := range terms {
			assert.Positive(t, tm.n, "%s %s", name, tm.name)
			assert.Positive(t, tm.tight, "%s: the %s bound equals the stage somewhere", name, tm.name)
			assert.Positive(t, tm.sw, "%s: the %s bound equals the stage on a switched candidate", name, tm.name)
			if tm.name == "fetch" || i != 1 {
				assert.Positive(t, tm.dual, "%s: the %s bound equals the stage in dual channel mode", name, tm.name)
			}
			t.Logf("%s, %s: %d candidates with a claim; the bound equals a main chain's stage %d times (%d switched, %d dual)", name, tm.name, tm.n, tm.tight, tm.sw, tm.dual)
		}
	}
}

// TestBankBoundBelow: the bank-run bound (evaluator.bankBound: a
// candidate whose contracting main chains each fetch 64 reads in a row
// from one DM bank runs them apart from the DMA, MEM-R1, 002 L2909) is at
// most the exact price of every legal candidate it makes a claim for, on
// projections whose weight's time steps fall on one bank in some layouts;
// where it makes a claim the priced main chains are the ones serialized
// with DMA; and it adds to the candidate bound somewhere.
func TestBankBoundBelow(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		every     int // the sample's stride under -short
	}{
		{"bank-proj", "name: bank-proj\neinsum: SD,DHK->SHK\naxes: {S: 32, D: 128, H: 4, K: 16}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", 3 * sampleSparse()},
		{"bank-gemm", "name: bank-gemm\neinsum: IK,KJ->IJ\naxes: {I: 32, J: 32, K: 128}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", sampleEvery()},
	} {
		s := newSpace(t, loadWorkload(t, tc.src))
		ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
		require.NoError(t, err)
		n, adds := 0, 0
		eachLegalEvery(t, s, tc.every, func(c *Candidate, x *Evaluated) {
			p, err := ev.build(c)
			require.NoError(t, err)
			b := ev.bankBound(c, p)
			if b == 0 {
				return
			}
			n++
			require.LessOrEqual(t, b, x.Report.Cycles, c.String(s.P))
			for _, o := range x.Report.Ops {
				if o.Context == kernel.CtxMain && o.Kind == kernel.OpChain && contracts(p.Ops[o.Index]) {
					assert.True(t, o.Cost.SerializeWithDMA, "op %d of %s: claimed serialized, priced concurrent with DMA", o.Index, c.String(s.P))
				}
			}
			if b > s.candidateBound(c) {
				adds++
			}
		})
		t.Logf("%s: %d legal candidates with a claim, above the candidate bound on %d", tc.name, n, adds)
		assert.Positive(t, n, tc.name)
		assert.Positive(t, adds, tc.name)
	}
}
