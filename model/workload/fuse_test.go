package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFusions: the shipped graphs offer the attention scale as an epilogue
// of qk (an f32 score read by the scale alone, 002 L8087-8089); decode's
// silu reads a bf16 gate (not fused: its rounding is part of the graph),
// and the MoE router's scores go to topk (no Float op).
func TestFusions(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []Fusion
	}{
		// The head's causal mask adds its mask, a tensor over the scores'
		// axes; the prefill layer's, broadcast over the heads.
		{"attention-head.yaml", []Fusion{{Einsum: "qk", Ops: []string{"scale", "causal"}}}},
		{"llama3-70b-decode.yaml", []Fusion{{Einsum: "qk", Ops: []string{"scale"}}}},
		{"llama3-70b-prefill.yaml", []Fusion{{Einsum: "qk", Ops: []string{"scale", "causal"}}}},
		{"moe.yaml", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			w := load(t, tc.file)
			assert.Equal(t, tc.want, Fusions(w))
		})
	}
}

// TestFuse: the fused workload's einsum carries its epilogue and writes
// the scale's output; the scale and the raw scores are gone, w is not
// changed; what is not an epilogue is refused.
func TestFuse(t *testing.T) {
	w := load(t, "attention-head.yaml")
	f, err := Fuse(w, Fusions(w))
	require.NoError(t, err)
	qk := findOp(f, "qk")
	require.NotNil(t, qk)
	assert.Equal(t, []string{"s_masked"}, qk.Outputs)
	assert.Equal(t, []string{"q", "k", "mask"}, qk.Inputs, "the causal mask's mask is read by the fused kernel")
	require.Len(t, qk.Epilogue, 2)
	assert.Equal(t, "scale", qk.Epilogue[0].Name)
	assert.Equal(t, "causal", qk.Epilogue[1].Name)
	assert.Nil(t, findOp(f, "scale"))
	assert.Nil(t, findOp(f, "causal"))
	assert.Nil(t, f.Tensor("s_raw"))
	assert.Nil(t, f.Tensor("s_scaled"))
	assert.Len(t, f.Ops, len(w.Ops)-2)
	assert.Equal(t, []string{"s_raw"}, findOp(w, "qk").Outputs, "w unchanged")
	assert.Equal(t, []string{"q", "k"}, findOp(w, "qk").Inputs, "w unchanged")
	assert.NotNil(t, w.Tensor("s_raw"))

	// The scale alone (a prefix of the chain).
	f1, err := Fuse(w, []Fusion{{Einsum: "qk", Ops: []string{"scale"}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"s_scaled"}, findOp(f1, "qk").Outputs)
	assert.Equal(t, []string{"q", "k"}, findOp(f1, "qk").Inputs)

	for _, tc := range []struct {
		name string
		f    Fusion
		msg  string
	}{
		{"no einsum", Fusion{Einsum: "softmax", Ops: []string{"pv"}}, `no einsum op "softmax"`},
		{"not an epilogue", Fusion{Einsum: "pv", Ops: []string{"softmax"}}, `op "softmax" is not an epilogue`},
		{"not its reader", Fusion{Einsum: "pv", Ops: []string{"scale"}}, "reads s_raw, not o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fuse(w, []Fusion{tc.f})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestFuseOp: one einsum's epilogue fused, or why it has none.
func TestFuseOp(t *testing.T) {
	w := load(t, "attention-head.yaml")
	f, err := FuseOp(w, "qk")
	require.NoError(t, err)
	assert.Equal(t, []string{"s_masked"}, findOp(f, "qk").Outputs)
	_, err = FuseOp(w, "pv")
	require.ErrorContains(t, err, `op "pv" has no epilogue to fuse`)
}

// TestProductOp: an einsum that contracts no axis is also a multiply
// (the MoE weighting, 002 L8705); a contraction, an integer product, and
// an op of another kind are not.
func TestProductOp(t *testing.T) {
	w, err := Parse([]byte(`name: p
chips: 1
axes: {T: 4, K: 2, D: 8}
tensors:
  y:  {axes: [T, K, D], dtype: bf16}
  r:  {axes: [T, K], dtype: bf16}
  yw: {axes: [T, K, D], dtype: bf16}
  s:  {axes: [T, D], dtype: f32}
  a:  {axes: [T, K], dtype: i8}
  b:  {axes: [T, K], dtype: i8}
  ab: {axes: [T, K], dtype: i32}
  e:  {axes: [T, D], dtype: f32}
ops:
  - {name: weight, kind: einsum, inputs: [y, r], outputs: [yw]}
  - {name: sum,    kind: einsum, inputs: [yw, r], outputs: [s]}
  - {name: iprod,  kind: einsum, inputs: [a, b], outputs: [ab]}
  - {name: act,    kind: exp,    inputs: [s], outputs: [e]}
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false, false} {
		o := w.Ops[i]
		m := ProductOp(w, o)
		if (m != nil) != want {
			t.Errorf("%s: ProductOp = %v, want a multiply: %v", o.Name, m, want)
			continue
		}
		if m != nil && (m.Kind != KindMul || m.Name != o.Name || o.Kind != KindEinsum || m.Einsum != nil) {
			t.Errorf("%s: %+v, want a mul of the same name (the op itself unchanged)", o.Name, m)
		}
	}
}

// TestEpilogueOperand: an op of two tensors is an epilogue when its
// second tensor spans some of the output's axes (broadcast over the
// others) and is ready before the einsum; an operand written after the
// einsum and an operand that is the value itself are not (an elementwise
// op's input cannot hold an axis its output lacks: the workload refuses
// it).
func TestEpilogueOperand(t *testing.T) {
	parse := func(t *testing.T, tensors, ops string) *Workload {
		w, err := Parse([]byte(`name: e
chips: 1
axes: {I: 32, J: 32, K: 32}
tensors:
  a: {axes: [I, K], dtype: bf16}
  b: {axes: [K, J], dtype: bf16}
  c: {axes: [I, J], dtype: f32}
  d: {axes: [I, J], dtype: f32}`+tensors+`
ops:`+ops+"\n"), "e.yaml")
		require.NoError(t, err)
		return w
	}
	const r = `
  r: {axes: [I, J], dtype: f32}`
	const r2 = r + `
  r2: {axes: [I, J], dtype: f32}`
	for _, tc := range []struct {
		name, tensors, ops string
		want               []Fusion
		inputs             []string
	}{
		{"residual add", r, `
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: res, kind: add, inputs: [c, r], outputs: [d]}`, []Fusion{{Einsum: "mm", Ops: []string{"res"}}}, []string{"a", "b", "r"}},
		{"broadcast operand", `
  row: {axes: [J], dtype: f32}`, `
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: res, kind: add, inputs: [c, row], outputs: [d]}`, []Fusion{{Einsum: "mm", Ops: []string{"res"}}}, []string{"a", "b", "row"}},
		{"operand written after", r2, `
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: mk, kind: mul, inputs: [r], outputs: [r2], scalar: 2}
  - {name: res, kind: add, inputs: [c, r2], outputs: [d]}`, nil, nil},
		{"operand written before", r2, `
  - {name: mk, kind: mul, inputs: [r], outputs: [r2], scalar: 2}
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: res, kind: add, inputs: [c, r2], outputs: [d]}`, []Fusion{{Einsum: "mm", Ops: []string{"res"}}}, []string{"a", "b", "r2"}},
		{"value second", r, `
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: res, kind: sub, inputs: [r, c], outputs: [d]}`, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := parse(t, tc.tensors, tc.ops)
			assert.Equal(t, tc.want, Fusions(w))
			if tc.want == nil {
				return
			}
			f, err := Fuse(w, tc.want)
			require.NoError(t, err)
			assert.Equal(t, tc.inputs, findOp(f, "mm").Inputs)
		})
	}
	w := parse(t, r2, `
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: mk, kind: mul, inputs: [r], outputs: [r2], scalar: 2}
  - {name: res, kind: add, inputs: [c, r2], outputs: [d]}`)
	_, err := Fuse(w, []Fusion{{Einsum: "mm", Ops: []string{"res"}}})
	require.ErrorContains(t, err, `op "res" reads r2, written after mm`)

	// An outer product plus one of its own inputs: the kernel's
	// arguments are distinct tensors, so the add is not fused.
	w, err = Parse([]byte(`name: o
chips: 1
axes: {I: 32, J: 32}
tensors:
  a: {axes: [I], dtype: bf16}
  b: {axes: [J], dtype: bf16}
  c: {axes: [I, J], dtype: f32}
  d: {axes: [I, J], dtype: f32}
ops:
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: res, kind: add, inputs: [c, a], outputs: [d]}
`), "o.yaml")
	require.NoError(t, err)
	assert.Nil(t, Fusions(w))
	_, err = Fuse(w, []Fusion{{Einsum: "mm", Ops: []string{"res"}}})
	require.ErrorContains(t, err, `op "res" reads a, which the kernel reads already`)
}
