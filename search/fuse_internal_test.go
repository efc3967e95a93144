package search

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
)

// TestOperandBoundsBelow: in the space of a contraction whose epilogue
// adds a tensor (a residual add, the mask of a causal mask), every legal
// candidate's price is at least each of its bounds, which count the
// tensor's least load (operandDMA); that load is at most what the cost
// model prices the program's loads of the tensor at, each alone less its
// startup; and the program moves each tile it loads into the VRF.
func TestOperandBoundsBelow(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range []struct {
		name, raxes string
		dm          int // DM bytes a slice (0: the spec's)
	}{
		{"whole", "[I, J]", 0},
		// r broadcast over I, in a DM small enough to tile: a tile loop
		// over I outside one over J reads r again (operandPasses).
		{"broadcast", "[J]", 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mmResSpace(t, "{I: 16, J: 32, K: 64}", tc.raxes)
			p := s.P
			if tc.dm > 0 {
				s = smallDM(s, tc.dm)
			}
			startup := float64(s.Spec.DMA.StartupCycles.Value)
			legal, again := 0, 0
			tightest := 0.0 // the largest share of a load's price the bound claims
			eachLegalEvery(t, s, sampleEveryN(1), func(c *Candidate, e *Evaluated) {
				legal++
				requireBoundsBelow(t, s, c, e.Report.Cycles)
				loads, vrf := 0, 0
				priced := 0.0
				for i, op := range e.Program.Ops {
					if op.Kind == kernel.OpToDM {
						if src, ok := e.Program.Tensor(op.Src); ok && src.Base() == "r" {
							loads++
							priced += e.Report.Ops[i].Cost.Cycles - startup
						}
					}
					for _, st := range op.Stages {
						if st.Kind == kernel.StToVRF && st.Tensor == "r_vrf" {
							vrf++
						}
					}
				}
				require.Positive(t, loads)
				d := s.operandDMA(c)
				least := max(d.rd, d.hbm, d.dmn, d.engine)
				require.LessOrEqual(t, least, priced*(1+1e-9), "r's least load against its loads' prices, %s", named{s, c})
				// Every pass loads each of r's tiles once.
				passes, tiles := s.operandPasses(c, &p.Operands[0]), 1
				for _, a := range c.TileOrder {
					if a != NoAxis && p.Operands[0].Has(s.P.Axes[a].Name) {
						tiles *= c.Factor(int(a), Tile)
					}
				}
				require.InDelta(t, float64(loads), passes*float64(tiles), 0, "r's loads, %s", named{s, c})
				if passes > 1 {
					again++
				}
				tightest = max(tightest, least/priced)
				require.Equal(t, loads, vrf, "each tile of r loaded goes to the VRF once")
			})
			require.Positive(t, legal)
			t.Logf("%d legal candidates checked (%d read r more than once); the least load reaches %.0f%% of the loads' price", legal, again, 100*tightest)
			if tc.dm > 0 {
				// r's 128 bytes take a request's latency whatever the
				// bytes: the bound is far under the price, and what is
				// checked is that it stays under when r is read again.
				require.Positive(t, again, "candidates that read r more than once")
			} else {
				require.Greater(t, tightest, 0.9, "the least load is that of some candidate's loads")
			}
		})
	}
}

// TestVRFRefused: a candidate whose epilogue operand's tile is larger than
// the VRF (vrfRefused: bounded at +Inf, its tiling too, and never built
// by the search) is illegal when built; some are, and some of the space's
// candidates are legal.
func TestVRFRefused(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := mmResSpace(t, "{I: 64, J: 256, K: 32}", "[I, J]")
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	refused, vrf, legal, i, every := 0, 0, 0, 0, sampleEveryN(5)
	s.EnumerateWhere(func(st Stage, c *Candidate) bool {
		if st == StageTiles && s.vrfRefused(c) {
			require.Equal(t, math.Inf(1), s.tilingBound(c))
		}
		return true
	}, func(c Candidate) bool {
		if i++; i%every != 0 {
			return true
		}
		x, why := ev.evaluateWhy(i, &c, nil)
		if !s.vrfRefused(&c) {
			if x != nil {
				legal++
			}
			return true
		}
		refused++
		require.Nil(t, x, "%s: its operand's tile overfills the VRF, yet legal", named{s, &c})
		require.NotEmpty(t, why)
		if why == "VRF-R3" {
			vrf++
		}
		return true
	})
	require.Positive(t, refused, "candidates refused by their VRF tile")
	require.Positive(t, legal, "legal candidates")
	t.Logf("%d candidates refused by their VRF tile (%d by VRF-R3 first), %d legal", refused, vrf, legal)
}

// mmResSpace is the space of mm-res's einsum with its residual add of r
// (axes raxes) fused, at sizes axes: the epilogue operand r, no split-K,
// K chunks, cluster reduce, outer rows, dealt-out or inner clusters.
func mmResSpace(t *testing.T, axes, raxes string) *Space {
	t.Helper()
	w := loadWorkload(t, `name: mm-res
chips: 1
axes: `+axes+`
tensors:
  a: {axes: [I, K], dtype: bf16}
  b: {axes: [K, J], dtype: bf16}
  c: {axes: [I, J], dtype: f32}
  r: {axes: `+raxes+`, dtype: f32}
  d: {axes: [I, J], dtype: f32}
ops:
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: res, kind: add, inputs: [c, r], outputs: [d]}
`)
	fw, err := workload.Fuse(w, workload.Fusions(w))
	require.NoError(t, err)
	p, err := constraints.NewProblem(fw, "mm")
	require.NoError(t, err)
	require.Len(t, p.Operands, 1)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	return s.WithSplitK(false).WithTileK(false).WithClusterK(false).WithRowsOuter(false).WithDealsOut(false).WithClustersInner(false)
}
