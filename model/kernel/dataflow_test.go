package kernel

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckDataflow: a tensor read before an op writes it is an error at
// the read, naming the write that comes too late or saying none does.
func TestCheckDataflow(t *testing.T) {
	var p Program
	require.NoError(t, json.Unmarshal([]byte(readHelloDot(t)), &p))
	require.NoError(t, p.CheckDataflow())
	accesses := p.Accesses()
	require.NotEmpty(t, accesses)
	assert.Equal(t, Access{Op: 0, Stage: -1, Tensor: "lhs"}, accesses[0])
	assert.Equal(t, "ops[0].dst", accesses[1].Path())
	assert.Equal(t, "ops[2].stages[0].tensor", accesses[4].Path())

	order := func(ops ...int) *Program {
		q := p
		q.Ops = nil
		for _, i := range ops {
			q.Ops = append(q.Ops, p.Ops[i])
		}
		return &q
	}
	for _, tc := range []struct {
		name string
		p    *Program
		path string
		want string
	}{
		{"a DMA after the chain reading its result", order(1, 2, 3, 0, 4), "ops[2].stages[0].tensor", `reads DM tensor "lhs_dm" before ops[3] writes it`},
		{"no op writes the TRF tensor", order(0, 1, 3, 4), "ops[2].stages[3].tensor", `reads TRF tensor "rhs_trf", which no op writes`},
		{"the result moved out before it is computed", order(0, 1, 2, 4, 3), "ops[3].src", `reads DM tensor "out_dm" before ops[4] writes it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.CheckDataflow()
			var fe *FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tc.path, fe.Path)
			assert.EqualError(t, err, tc.path+": "+tc.want)
		})
	}
}
