package constraints

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/workload"
)

func TestProblemPad(t *testing.T) {
	w, err := workload.Parse([]byte("name: g\neinsum: IK,KJ->IJ\naxes: {I: 15, J: 23, K: 31}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"), "g.yaml")
	require.NoError(t, err)
	p, err := NewProblem(w, "")
	require.NoError(t, err)
	q, err := p.Pad(map[string]int{"I": 16, "K": 32})
	require.NoError(t, err)
	assert.False(t, p.Padded(), "the original is untouched")
	assert.True(t, q.Padded())
	assert.Equal(t, map[string]int{"I": 15, "K": 31}, q.Valid())
	assert.Equal(t, "I=16, J=23, K=32", q.Decl.String())
	assert.Equal(t, "m![I, K]", q.In[0].Layout.Text())
	assert.Equal(t, 16*32, q.In[0].Layout.Size())
	// Padding a padded axis again keeps its workload size.
	r, err := q.Pad(map[string]int{"I": 32})
	require.NoError(t, err)
	assert.Equal(t, 15, r.Axes[r.AxisIndex("I")].Valid)
	// Back to its size: not padded.
	r, err = q.Pad(map[string]int{"I": 15})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"K": 31}, r.Valid())

	_, err = p.Pad(map[string]int{"I": 14})
	assert.ErrorContains(t, err, "axis I of 15 padded to 14")
	_, err = p.Pad(map[string]int{"X": 14})
	assert.ErrorContains(t, err, "no axis X")

	// A plain stated layout (each axis whole, once) keeps its order; one
	// that splits an axis is the workload's to pad.
	layout := func(l string) *Problem {
		w, err := workload.Parse([]byte("name: g\neinsum: IK,KJ->IJ\naxes: {I: 15, J: 23, K: 31}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\nlayouts:\n  in0: \""+l+"\"\n"), "g.yaml")
		require.NoError(t, err)
		p, err := NewProblem(w, "")
		require.NoError(t, err)
		return p
	}
	q, err = layout("m![K, I]").Pad(map[string]int{"I": 16})
	require.NoError(t, err)
	assert.Equal(t, "m![K, I]", q.In[0].Layout.Text())
	_, err = layout("m![I / 5, K, I % 5]").Pad(map[string]int{"I": 16})
	assert.ErrorContains(t, err, "tensor in0 has a stated layout m![I / 5, K, I % 5]; pad it in the workload")
}
