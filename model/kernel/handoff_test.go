package kernel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/mapping"
)

// handedDot is the Hello dot product with lhs left in DM by the previous
// kernel (its load a to_dm handoff) and the result left in DM for the
// next (its store a to_hbm handoff): Program.Handoff.
func handedDot(t *testing.T) (*Program, string) {
	t.Helper()
	var p Program
	require.NoError(t, json.Unmarshal([]byte(readHelloDot(t)), &p))
	p.Handoff = []*Op{p.Ops[0], p.Ops[4]}
	p.Ops = p.Ops[1:4]
	require.NoError(t, p.Validate())
	data, err := json.Marshal(&p)
	require.NoError(t, err)
	return &p, string(data)
}

func TestHandoff(t *testing.T) {
	p, text := handedDot(t)
	assert.Contains(t, text, `"handoff":[{"context":"dma","kind":"to_dm","src":"lhs","dst":"lhs_dm"}`)
	var q Program
	require.NoError(t, json.Unmarshal([]byte(text), &q))
	again, err := json.Marshal(&q)
	require.NoError(t, err)
	assert.Equal(t, text, string(again), "the handoffs round-trip")
	// lhs_dm is read by the main chain and written by no op: the previous
	// kernel left it.
	require.NoError(t, p.CheckDataflow())
	without := *p
	without.Handoff = nil
	require.ErrorContains(t, without.CheckDataflow(), `reads DM tensor "lhs_dm", which no op writes`)

	r, err := p.Rename(func(s string) string { return "k." + s })
	require.NoError(t, err)
	assert.Equal(t, "k.lhs", r.Handoff[0].Src)
	assert.Equal(t, "k.out_dm", r.Handoff[1].Src)
	assert.Equal(t, "lhs", p.Handoff[0].Src, "the original keeps its names")

	for _, tc := range []struct{ name, old, new, want string }{
		{"a chain", `"handoff":[{"context":"dma","kind":"to_dm","src":"lhs","dst":"lhs_dm"}`, `"handoff":[{"context":"dma","kind":"dm_to_dm","src":"rhs_dm","dst":"lhs_dm"}`, "a handoff is a to_dm or to_hbm copy, not dm_to_dm"},
		{"into a DM tensor an op writes", `"kind":"to_dm","src":"lhs","dst":"lhs_dm"}`, `"kind":"to_dm","src":"lhs","dst":"out_dm"}`, `DM tensor "out_dm", which the previous kernel left, is written by ops[2]`},
		{"from an output", `"kind":"to_dm","src":"lhs","dst":"lhs_dm"}`, `"kind":"to_dm","src":"out","dst":"lhs_dm"}`, `tensor "out" is not an HBM input of the kernel`},
		{"into an input", `"kind":"to_hbm","src":"out_dm","dst":"out"}`, `"kind":"to_hbm","src":"out_dm","dst":"rhs"}`, `tensor "rhs" is not an HBM output of the kernel`},
		{"null", `"handoff":[{`, `"handoff":[null,{`, "handoff[0]: null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, strings.Contains(text, tc.old), tc.old)
			var q Program
			err := json.Unmarshal([]byte(strings.Replace(text, tc.old, tc.new, 1)), &q)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestEinsumExpr: an einsum reference written as the expression
// Handover composes (the product summed over each axis the output lacks,
// under the epilogue with acc its value); a padded einsum has none.
func TestEinsumExpr(t *testing.T) {
	axes, err := mapping.ParseAxes("I = 4, J = 8, K = 16, L = 2")
	require.NoError(t, err)
	tensor := func(name, el string) *Tensor {
		e, err := mapping.Parse(el, axes, nil)
		require.NoError(t, err)
		return &Tensor{Name: name, Mem: HBM, Element: e}
	}
	prog := func(r Reference) *Program {
		return &Program{Tensors: []*Tensor{tensor("a", "I, K"), tensor("b", "K, L, J"), tensor("c", "I, J")}, Reference: &r}
	}
	for _, c := range []struct {
		name string
		ref  Reference
		want string
		err  string
	}{
		{"sum over the contracted axes", Reference{Op: RefEinsum, Inputs: []string{"a", "b"}, Output: "c"}, "reduce_sum(reduce_sum(a * b, K), L)", ""},
		{"under an epilogue", Reference{Op: RefEinsum, Inputs: []string{"a", "b"}, Output: "c", Epilogue: "(acc) * 0.5"}, "(reduce_sum(reduce_sum((a * b), K), L) * 0.5)", ""},
		{"padded", Reference{Op: RefEinsum, Inputs: []string{"a", "b"}, Output: "c", Valid: map[string]int{"I": 3}}, "", "has no expression"},
		{"one input", Reference{Op: RefEinsum, Inputs: []string{"a"}, Output: "c"}, "", "has no expression"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := einsumExpr(prog(c.ref))
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, e)
			_, err = ParseRefExpr(e)
			require.NoError(t, err)
		})
	}
}
