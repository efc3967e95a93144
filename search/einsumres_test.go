package search

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
)

// sameDMHanded requires every DM tensor consumer c takes x in to be one
// producer p leaves it in (kernel.SameDM: type, address, mappings).
func sameDMHanded(t *testing.T, p, c *kernel.Program, x string) {
	t.Helper()
	var left []*kernel.Tensor
	for _, op := range p.Handoff {
		if h, ok := p.Tensor(op.Dst); ok && op.Kind == kernel.OpToHBM && h.Base() == x {
			d, _ := p.Tensor(op.Src)
			left = append(left, d)
		}
	}
	require.NotEmpty(t, left, "%s leaves %s in DM", p.Name, x)
	n := 0
	for _, op := range c.Handoff {
		if h, ok := c.Tensor(op.Src); ok && op.Kind == kernel.OpToDM && h.Base() == x {
			d, _ := c.Tensor(op.Dst)
			require.True(t, slices.ContainsFunc(left, func(l *kernel.Tensor) bool { return kernel.SameDM(l, d) }),
				"%s's DM tensor %s is not where %s left %s", c.Name, d.Name, p.Name, x)
			n++
		}
	}
	require.Equal(t, len(left), n, "%s takes every tile %s leaves", c.Name, p.Name)
}

// TestPlanChainToEinsum: the attention head's mask and softmax hand p
// over to the einsum pv. The chain's search is proven (the branch and
// bound over pv with the op chain's handovers priced relocated); pv
// loads no p, softmax stores none, and pv's DM tensors of p are where
// softmax left them; the three kernels cost less than the mask and
// softmax chained with p stored plus pv alone; softmax and pv written as
// one program pass the simulator against the composed reference (pv's einsum as reduce_sum, p rounded to bf16 as
// softmax stores it). TestGraphResidency runs the layer's kernels one by
// one on the simulator, pv's DM carried from the softmax's.
func TestPlanChainToEinsum(t *testing.T) {
	if raceDetector {
		t.Skip("an einsum search and simulations: make test runs it without -race in unit-norace")
	}
	spec := engines.Default()
	w := residentHead(t)
	ops := []*workload.Op{findOp(w, "causal"), findOp(w, "softmax"), findOp(w, "pv")}
	ch, err := PlanChain(w, ops, []string{"s_masked", "p"}, spec)
	require.NoError(t, err)
	require.Len(t, ch.Plans, 3)
	pv, sm := ch.Plans[2], ch.Plans[1]
	require.Equal(t, "proven", pv.Search.Optimal)
	require.Equal(t, "p taken in DM from softmax", pv.Search.Resident)
	require.Contains(t, sm.Search.Resident, "p left in DM for pv")
	n, moved := handoffsOf(pv.Program, "p", kernel.OpToDM)
	require.Positive(t, n)
	require.False(t, moved, "pv loads p itself")
	n, moved = handoffsOf(sm.Program, "p", kernel.OpToHBM)
	require.Positive(t, n)
	require.False(t, moved, "softmax stores p itself")
	sameDMHanded(t, sm.Program, pv.Program, "p")
	sameDMHanded(t, ch.Plans[0].Program, sm.Program, "s_masked")

	pair, err := PlanChain(w, ops[:2], []string{"s_masked"}, spec)
	require.NoError(t, err)
	alone, err := PlanOp(w, "pv", Options{Spec: spec})
	require.NoError(t, err)
	chain := ch.Plans[0].Cost.Cycles + sm.Cost.Cycles + pv.Cost.Cycles
	plain := pair.Plans[0].Cost.Cycles + pair.Plans[1].Cost.Cycles + alone.Plan.Cost.Cycles
	require.Less(t, chain, plain)
	t.Logf("chain %.0f cycles (%.0f + %.0f + %.0f), p stored: %.0f", chain, ch.Plans[0].Cost.Cycles, sm.Cost.Cycles, pv.Cost.Cycles, plain)
	verifyMerged(t, spec, sm.Program, pv.Program, "pv_", false)
}

// TestPlanEinsumChain: an einsum hands its output over to an op kernel
// that adopts its DM layout (opSpace.adopt): the einsum stores nothing,
// the op kernel loads nothing and reads the DM tensors where the einsum
// left them; both pass the simulator, alone and written as one program.
//
// Under the race detector (raceSearch: the einsum search's workers ask
// for the kernels after it at once, einsumHand's memo) it runs at a
// smaller budget and simulates nothing.
func TestPlanEinsumChain(t *testing.T) {
	spec := engines.Default()
	w, err := workload.Parse([]byte(`name: mm-scale
chips: 1
axes: {I: 32, J: 32, K: 32}
tensors:
  a: {axes: [I, K], dtype: bf16}
  b: {axes: [K, J], dtype: bf16}
  c: {axes: [I, J], dtype: f32}
  d: {axes: [I, J], dtype: f32}
ops:
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: half, kind: mul, inputs: [c], outputs: [d], scalar: 0.5}
`), "mm-scale.yaml")
	require.NoError(t, err)
	// At a budget: the search is not proven (the adopted kernels cost far
	// above their floor, the roofline, which prunes little), its plan has
	// a gap.
	opts := einsumChainOptions(spec)
	opts.MaxEvaluations = 20_000
	if raceDetector {
		opts.MaxEvaluations = 1_200
	}
	ch, err := planChain(w, []*workload.Op{findOp(w, "mm"), findOp(w, "half")}, []string{"c"}, spec, opts)
	require.NoError(t, err)
	require.Len(t, ch.Plans, 2)
	mm, half := ch.Plans[0], ch.Plans[1]
	require.Equal(t, "c left in DM for half", mm.Search.Resident)
	require.Equal(t, "c taken in DM from mm", half.Search.Resident)
	n, moved := handoffsOf(mm.Program, "c", kernel.OpToHBM)
	require.Positive(t, n)
	require.False(t, moved, "mm stores c itself")
	sameDMHanded(t, mm.Program, half.Program, "c")
	require.Equal(t, StoppedBudget, mm.Search.Stopped)
	require.Positive(t, mm.Search.Gap)
	t.Logf("mm %.0f + half %.0f cycles; mm's search: %d candidates, gap %.2f", mm.Cost.Cycles, half.Cost.Cycles, mm.Search.Candidates, mm.Search.Gap)
	if raceDetector {
		return
	}
	verifyMerged(t, spec, mm.Program, half.Program, "half_", true)
}

// TestHandedBoundsBelow: with a tensor handed over in DM (Space.hand:
// the output left for the kernels after, or an input taken from those
// before), every legal candidate's price without that tensor's DMA is at
// least each of its bounds (bound.go, cbound.go: the tensor's load left
// out, one startup fewer), and its program moves none of the tensor.
func TestHandedBoundsBelow(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	tiledAll := 0
	for _, c := range []struct {
		src string
		tn  int
	}{{reducedGEMM, TensorOut}, {reducedGEMM, 0}, {reducedGEMM, 1}, {reducedBMM, TensorOut}} {
		src, tn := c.src, c.tn
		s := newSpace(t, loadWorkload(t, src))
		x := s.P.Out.Name
		if tn != TensorOut {
			x = s.P.In[tn].Name
		}
		// Every handover is taken, by a chain of no cycles beyond
		// its floor: the price is the einsum's own.
		s.hand = &einsumHand{t: tn, x: x, memo: map[string]contResult{},
			takes: func(string, *kernel.Tensor) bool { return true },
			cont:  func(string, []int64, *kernel.Tensor) (*chainLink, error) { return &chainLink{}, nil }}
		legal, tiled := 0, 0
		// Every 3·shortStride-th under -short: TestLowerBoundsAdmissible
		// checks the same spaces' bounds without a handover.
		eachLegalEvery(t, s, sampleEveryN(3), func(c *Candidate, e *Evaluated) {
			legal++
			requireBoundsBelow(t, s, c, e.Report.Cycles)
			kind := kernel.OpToHBM
			if tn != TensorOut {
				kind = kernel.OpToDM
			}
			n, moved := handoffsOf(e.Program, x, kind)
			require.Positive(t, n)
			require.False(t, moved, "%s moved by the kernel's own DMA", x)
			if n > 2 {
				tiled++ // more tiles than double buffers: each in a buffer of its own
			}
		})
		require.Positive(t, legal, "%s with %s handed over", s.P.Workload, x)
		tiledAll += tiled
	}
	require.Positive(t, tiledAll, "some tiled kernel hands its tensor over, a tile per buffer")
}

// TestChainEinsumPlaces: a chain with an einsum inside or at both ends is
// refused, naming the op.
func TestChainEinsumPlaces(t *testing.T) {
	w := residentHead(t)
	spec := engines.Default()
	_, err := PlanChain(w, []*workload.Op{findOp(w, "causal"), findOp(w, "pv"), findOp(w, "softmax")}, []string{"s_masked", "p"}, spec)
	require.ErrorContains(t, err, "op pv: a chain has an einsum at one end only")
	_, err = PlanChain(w, []*workload.Op{findOp(w, "qk"), findOp(w, "pv")}, []string{"s_raw"}, spec)
	require.ErrorContains(t, err, "op qk: a chain has an einsum at one end only")
}
