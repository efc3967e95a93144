package verify

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// TestPaddingContract: the inputs of a padded einsum hold zeros in their
// contracted axes' padding and a poison in the others' (kernel.Reference.
// Valid), and the output's padding is left out of the comparison.
func TestPaddingContract(t *testing.T) {
	// in0[I = 4, K = 4] of IK,K->I with I valid to 3 and K valid to 2.
	in := &Logical{Name: "in0", DType: dtype.BF16, Axes: []mapping.Axis{{Name: "I", Size: 4}, {Name: "K", Size: 4}}, Vals: make([]float64, 16)}
	for i := range in.Vals {
		in.Vals[i] = 1
	}
	valid := map[string]int{"I": 3, "K": 2}
	require.NoError(t, padInput(valid, map[string]bool{"I": true}, in))
	for i := range 4 {
		for k := range 4 {
			v := in.Vals[i*4+k]
			switch {
			case k >= 2: // contracted padding, also where I is padding
				assert.Zero(t, v, "I=%d K=%d", i, k)
			case i >= 3: // free padding
				assert.True(t, math.IsNaN(v), "I=%d K=%d", i, k)
			default:
				assert.Equal(t, 1.0, v, "I=%d K=%d", i, k)
			}
		}
	}
	// An integer input's poison is its type's largest value.
	ints := &Logical{Name: "x", DType: dtype.I8, Axes: []mapping.Axis{{Name: "I", Size: 4}}, Vals: make([]float64, 4)}
	require.NoError(t, padInput(valid, map[string]bool{"I": true}, ints))
	assert.Equal(t, []float64{0, 0, 0, 127}, ints.Vals)

	out := &Logical{Name: "out", DType: dtype.BF16, Axes: []mapping.Axis{{Name: "I", Size: 4}}, Vals: []float64{1, 2, 3, 99}}
	exp := &Expected{Out: &Logical{Name: "out", DType: dtype.BF16, Axes: out.Axes, Vals: []float64{1, 2, 3, 7}},
		Abs: &Logical{Name: "out", DType: dtype.BF16, Axes: out.Axes, Vals: []float64{1, 2, 3, 7}}}
	assert.False(t, Compare(exp, out).Pass, "the padded position differs")
	assert.Equal(t, 1, maskPadding(valid, out, exp))
	assert.True(t, Compare(exp, out).Pass, "the padding is not compared")
	assert.True(t, padded(valid, out, 3))
	assert.False(t, padded(valid, out, 2))
	assert.False(t, padded(nil, out, 3))
}
