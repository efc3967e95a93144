package engines

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

func loadInterleaved(t *testing.T) *kernel.Program {
	t.Helper()
	data, err := os.ReadFile("../verify/testdata/interleaved-fetch.json")
	require.NoError(t, err)
	return parseKernel(t, string(data))
}

// TestLowerInterleavedFetch: begin_interleaved gives the fetch sequencer
// the interleave axis as an extra dimension whose step is the distance
// from lhs to rhs in elements (002 L1843-1867): Time m![A, I] over
// m![A, B] i8 with rhs 16384 bytes above lhs is [512:32, 2:16384, 32:1].
func TestLowerInterleavedFetch(t *testing.T) {
	p := loadInterleaved(t)
	require.NoError(t, Lower(Default(), p))
	f := p.Ops[2].Stages[1].Config.Fetch
	require.NotNil(t, f.Interleave)
	assert.Equal(t, kernel.FetchInterleave{Axis: "I", Tensors: 2, Stride: 16384}, *f.Interleave)
	assert.Equal(t, []kernel.SeqEntry{{Size: 512, Stride: 32, Term: "A"}, {Size: 2, Stride: 16384, Term: "I"}, {Size: 32, Stride: 1, Term: "B"}}, f.Seq.Entries)
	assert.Equal(t, 1024, f.Steps, "512 packets from each tensor")
}

// TestLowerInterleavedFetchRejects: interleaving needs two tensors of one
// type with identical mappings (FE-R8, 002 L1844, L1851), the second above
// the first, and the axis in Time.
func TestLowerInterleavedFetchRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(p *kernel.Program)
		rule string // "" for a plain error
		want string
	}{
		{"other element type", func(p *kernel.Program) {
			tensor(p, "rhs_dm").DType, tensor(p, "rhs").DType = dtype.F8E4M3, dtype.F8E4M3
		}, "FE-R8", "one element type"},
		{"other mapping", func(p *kernel.Program) {
			tensor(p, "rhs_dm").Slice = ceM(t, p.Axes, "1 # 128")
		}, "FE-R8", "identical mappings"},
		{"rhs below lhs", func(p *kernel.Program) {
			tensor(p, "lhs_dm").Addr, tensor(p, "rhs_dm").Addr = 16384, 0
		}, "", "must lie above"},
		{"axis not in Time", func(p *kernel.Program) {
			p.Ops[2].Stages[1].Time = ceM(t, p.Axes, "A")
			p.Ops[2].Stages[1].Packet = ceM(t, p.Axes, "I, B")
		}, "FE-R8", "not a term of Time"},
		{"three tensors", func(p *kernel.Program) {
			p.Axes = ceAx(t, "A=512, B=32, I=4")
			for _, x := range p.Tensors {
				for _, e := range x.Dims() {
					*e = *ceM(t, p.Axes, e.String())
				}
			}
			p.Ops[2].Stages[1].Time = ceM(t, p.Axes, "A, I")
		}, "FE-R8", "at most 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadInterleaved(t)
			tc.edit(p)
			err := Lower(Default(), p)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
			var le *LowerError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, 2, le.Op)
			if tc.rule != "" {
				var v *Violation
				require.True(t, errors.As(err, &v), "%v", err)
				assert.Equal(t, tc.rule, v.Rule.ID)
			}
		})
	}
}

func tensor(p *kernel.Program, name string) *kernel.Tensor {
	t, _ := p.Tensor(name)
	return t
}
