package search_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/search"
	"tcpmap/verify"
)

// TestEpilogueFusedPlanVerifies: the attention head's qk with its scale
// fused (workload.Fuse, 002 L8087-8089: the scores scaled in the Vector
// Engine) plans one kernel whose main chain scales the accumulator, and
// the simulator's values match the reference's einsum-then-scale on
// every slice.
func TestEpilogueFusedPlanVerifies(t *testing.T) {
	if raceEnabled {
		t.Skip("three searches and three simulations: make test runs it without -race in unit-norace")
	}
	w := reducedWorkload(t, "attention-head.yaml", map[string]int{"S": 64, "T": 64, "D": 64})
	spec := engines.Default()
	p := fusedPlan(t, w, workload.Fusion{Einsum: "qk", Ops: []string{"scale"}}, spec, 3000)
	assert.Equal(t, []string{"scale"}, p.Workload.Epilogue)
	require.NoError(t, p.Validate())
	assert.Equal(t, "s_scaled", p.Program.Reference.Output)
	assert.Contains(t, p.Program.Reference.Epilogue, "acc")
	rep, err := verify.Verify(spec, p.Program, verify.Options{Seed: 1})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)

	// The kernel does the scale: another constant fails.
	mutantFails(t, spec, p, func(st *kernel.Stage) bool { return st.Kind == kernel.StVectorFpBinary },
		"MulF(Mul0), 0.5f32", "a kernel scaling by 0.5 passed")

	// Unfused: qk alone, then the scale op; the fused kernel costs less
	// than the two (one HBM round trip of the scores less).
	qk, err := search.PlanOp(w, "qk", search.Options{Spec: spec, MaxEvaluations: 3000, Workers: 1})
	require.NoError(t, err)
	require.NotNil(t, qk.Plan)
	sc, err := search.PlanOp(w, "scale", search.Options{Spec: spec, MaxEvaluations: 3000, Workers: 1})
	require.NoError(t, err)
	require.NotNil(t, sc.Plan)
	t.Logf("fused qk+scale: %.0f cycles; qk %.0f + scale %.0f", p.Cost.Cycles, qk.Plan.Cost.Cycles, sc.Plan.Cost.Cycles)
	assert.Less(t, p.Cost.Cycles, qk.Plan.Cost.Cycles+sc.Plan.Cost.Cycles)
}

// TestEpilogueOperandPlanVerifies: the attention head's qk with its scale
// and its causal mask fused, the mask a tensor operand the kernel loads
// tile by tile into the VRF (build.go epilogueOperand): the plan
// verifies, and a kernel that skips the mask's add fails.
func TestEpilogueOperandPlanVerifies(t *testing.T) {
	if raceEnabled {
		t.Skip("a search and two simulations: make test runs it without -race in unit-norace")
	}
	w := reducedWorkload(t, "attention-head.yaml", map[string]int{"S": 64, "T": 64, "D": 64})
	spec := engines.Default()
	p := fusedPlan(t, w, workload.Fusion{Einsum: "qk", Ops: []string{"scale", "causal"}}, spec, 3000)
	assert.Equal(t, []string{"scale", "causal"}, p.Workload.Epilogue)
	require.NoError(t, p.Validate())
	assert.Equal(t, "s_masked", p.Program.Reference.Output)
	assert.Equal(t, []string{"q", "k", "mask"}, p.Program.Reference.Inputs)
	t.Logf("fused qk+scale+causal: %.0f cycles; epilogue %s", p.Cost.Cycles, p.Program.Reference.Epilogue)
	rep, err := verify.Verify(spec, p.Program, verify.Options{Seed: 1})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	loads := 0
	for _, op := range p.Program.Ops {
		if op.Kind == kernel.OpToDM && strings.HasPrefix(op.Src, "mask") {
			loads++
		}
	}
	assert.Positive(t, loads, "the mask is loaded")

	// The kernel adds the mask: subtracting it fails.
	mutantFails(t, spec, p, func(st *kernel.Stage) bool { return st.Kind == kernel.StVectorFpBinary && st.Tensor == "mask_vrf" },
		"SubF", "a kernel subtracting the mask passed")
}

// mutantFails verifies a copy of p's program whose stages that match
// take Vector Engine op param instead (at least one does), and fails the
// test with msg if it passes.
func mutantFails(t *testing.T, spec *engines.Spec, p *plan.Plan, match func(*kernel.Stage) bool, param, msg string) {
	t.Helper()
	data, err := p.Marshal()
	require.NoError(t, err)
	back, err := plan.Unmarshal(data)
	require.NoError(t, err)
	bad := back.Program
	n := 0
	for _, op := range bad.Ops {
		for _, st := range op.Stages {
			if match(st) {
				st.Param, st.Config = param, nil
				n++
			}
		}
	}
	require.Positive(t, n)
	rep, err := verify.Verify(spec, bad, verify.Options{Seed: 1})
	require.NoError(t, err)
	assert.False(t, rep.Pass, msg)
}

// TestEpilogueBroadcastOperand: scores over heads whose causal mask is
// one [S, T] tensor for every head (the prefill layer's, 002 L8094-8099):
// the fused kernel loads a tile of the mask only when the output tile
// reaches new S or T positions, keeps the heads' Time positions out of its
// VRF tensor, and verifies.
func TestEpilogueBroadcastOperand(t *testing.T) {
	if raceEnabled {
		t.Skip("a search and a simulation: make test runs it without -race in unit-norace")
	}
	w, err := workload.Parse([]byte(`name: heads
chips: 1
axes: {H: 4, S: 32, T: 32, D: 32}
tensors:
  q: {axes: [H, S, D], dtype: bf16}
  k: {axes: [H, T, D], dtype: bf16}
  s_raw: {axes: [H, S, T], dtype: f32}
  s_scaled: {axes: [H, S, T], dtype: f32}
  mask: {axes: [S, T], dtype: f32, values: {kind: causal, query: S, key: T}}
  s_masked: {axes: [H, S, T], dtype: f32}
ops:
  - {name: qk, kind: einsum, inputs: [q, k], outputs: [s_raw]}
  - {name: scale, kind: mul, inputs: [s_raw], outputs: [s_scaled], scalar: 0.125}
  - {name: causal, kind: causal_mask, inputs: [s_scaled, mask], outputs: [s_masked], query: S, key: T}
`), "heads.yaml")
	require.NoError(t, err)
	spec := engines.Default()
	p := fusedPlan(t, w, workload.Fusion{Einsum: "qk", Ops: []string{"scale", "causal"}}, spec, 3000)
	require.NoError(t, p.Validate())
	vrf, ok := p.Program.Tensor("mask_vrf")
	require.True(t, ok)
	assert.NotContains(t, vrf.Element.Text(), "H", "the heads are read again, not held")
	t.Logf("fused qk+scale+causal over heads: %.0f cycles; mask_vrf %s", p.Cost.Cycles, vrf.Element.Text())
	rep, err := verify.Verify(spec, p.Program, verify.Options{Seed: 1})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
}

// TestEpilogueCast: an einsum whose f32 output one cast reads (and nothing
// else) fuses the cast as its own output cast: no Vector Engine pass, the
// split and chunked K kept, and the fused kernel verifies.
func TestEpilogueCast(t *testing.T) {
	if raceEnabled {
		t.Skip("a search and a simulation: make test runs it without -race in unit-norace")
	}
	src := []byte(`name: mmcast
chips: 1
axes: {I: 64, K: 64, J: 64}
tensors:
  x: {axes: [I, K], dtype: bf16}
  w: {axes: [K, J], dtype: bf16}
  s: {axes: [I, J], dtype: f32}
  y: {axes: [I, J], dtype: bf16}
  z: {axes: [I, J], dtype: bf16}
ops:
  - {name: mm, kind: einsum, inputs: [x, w], outputs: [s]}
  - {name: down, kind: cast, inputs: [s], outputs: [y]}
  - {name: e, kind: exp, inputs: [y], outputs: [z]}
`)
	w, err := workload.Parse(src, "mmcast.yaml")
	require.NoError(t, err)
	spec := engines.Default()
	p := fusedPlan(t, w, workload.Fusion{Einsum: "mm", Ops: []string{"down"}}, spec, 2000)
	assert.Equal(t, "acc", p.Program.Reference.Epilogue)
	for _, op := range p.Program.Ops {
		for _, st := range op.Stages {
			assert.NotEqual(t, kernel.StVectorSplit, st.Kind, "a cast needs no Vector Engine pass")
		}
	}
	rep, err := verify.Verify(spec, p.Program, verify.Options{Seed: 1})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	// A cast ends an epilogue: the exp of the bf16 values does not fuse.
	_, err = workload.Fuse(w, []workload.Fusion{{Einsum: "mm", Ops: []string{"down", "e"}}})
	require.ErrorContains(t, err, `op "e" follows the cast down`)
}

// fusedPlan checks that w offers exactly the fusion want, fuses it and
// plans its einsum within evals candidate evaluations.
func fusedPlan(t *testing.T, w *workload.Workload, want workload.Fusion, spec *engines.Spec, evals int) *plan.Plan {
	t.Helper()
	fs := workload.Fusions(w)
	require.Len(t, fs, 1)
	require.Equal(t, want.Einsum, fs[0].Einsum)
	require.Equal(t, want.Ops, fs[0].Ops[:len(want.Ops)], "a prefix of the fusion offered")
	fw, err := workload.Fuse(w, []workload.Fusion{want})
	require.NoError(t, err)
	r, err := search.PlanOp(fw, want.Einsum, search.Options{Spec: spec, MaxEvaluations: evals, Workers: 1})
	require.NoError(t, err)
	require.NotNil(t, r.Plan)
	return r.Plan
}
