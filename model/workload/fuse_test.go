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
		{"attention-head.yaml", []Fusion{{Einsum: "qk", Ops: []string{"scale"}}}},
		{"llama3-70b-decode.yaml", []Fusion{{Einsum: "qk", Ops: []string{"scale"}}}},
		{"llama3-70b-prefill.yaml", []Fusion{{Einsum: "qk", Ops: []string{"scale"}}}},
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
	assert.Equal(t, []string{"s_scaled"}, qk.Outputs)
	require.Len(t, qk.Epilogue, 1)
	assert.Equal(t, "scale", qk.Epilogue[0].Name)
	assert.Nil(t, findOp(f, "scale"))
	assert.Nil(t, f.Tensor("s_raw"))
	assert.Len(t, f.Ops, len(w.Ops)-1)
	assert.Equal(t, []string{"s_raw"}, findOp(w, "qk").Outputs, "w unchanged")
	assert.NotNil(t, w.Tensor("s_raw"))

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
	assert.Equal(t, []string{"s_scaled"}, findOp(f, "qk").Outputs)
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
