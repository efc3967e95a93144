package engines

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestSplitKOutputs: the layouts of a split-K result, each one the
// Inter-Slice Block accepts (DeriveInterSliceReduce), with the dummy form
// first (002 L6626-6634).
func TestSplitKOutputs(t *testing.T) {
	for _, tc := range []struct {
		name, axes, slice, time string
		r                       int
		want                    [][2]string // SliceOut, TimeOut
	}{
		{"gemv: one output per slice", "I=64, J=2048", "I, J / 512", "1", 4,
			[][2]string{{"I, 1 # 4", "1"}}},
		{"gemm rows in time", "I=512, J=2048", "I / 8, J / 512", "I % 8", 4,
			[][2]string{{"I / 8, 1 # 4", "I % 8"}, {"I / 8, I % 4", "I / 4 % 2"}}},
		{"a digit split", "I=32, N=16, J=1024", "I, J / 128", "N", 8,
			[][2]string{{"I, 1 # 8", "N"}, {"I, N % 8", "N / 8"}}},
		{"whole digit promoted", "I=64, N=4, J=1024", "I, J / 256", "N", 4,
			[][2]string{{"I, 1 # 4", "N"}, {"I, N", "1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			slice, time := ceM(t, ax, tc.slice), ceM(t, ax, tc.time)
			outs, err := SplitKOutputs(slice, time, tc.r)
			require.NoError(t, err)
			require.Len(t, outs, len(tc.want))
			for i, w := range tc.want {
				assert.True(t, ceEquiv(ceM(t, ax, w[0]), outs[i].SliceOut), "SliceOut %d: %s, want m![%s]", i, outs[i].SliceOut.Text(), w[0])
				assert.True(t, ceEquiv(ceM(t, ax, w[1]), outs[i].TimeOut), "TimeOut %d: %s, want m![%s]", i, outs[i].TimeOut.Text(), w[1])
				assert.Equal(t, i > 0, outs[i].Promoted != nil)
				c, err := DeriveInterSliceReduce(Default(), InterSliceInput{DType: dtype.F32, Op: kernel.InterSliceAdd,
					Slice: slice, Time: time, Packet: ceM(t, ax, "1 # 8"), SliceOut: outs[i].SliceOut, TimeOut: outs[i].TimeOut})
				require.NoError(t, err, "output %d", i)
				assert.Equal(t, tc.r, c.Ratio)
			}
		})
	}
}

// TestSplitKOutputsRejects: the reduced slices are the innermost live
// digits (XSR-R6).
func TestSplitKOutputsRejects(t *testing.T) {
	ax := ceAx(t, "I=64, J=2048, K=3")
	for _, tc := range []struct {
		slice string
		r     int
	}{
		{"I, K # 4", 4},   // padding slices in the group
		{"I, J / 512", 3}, // no innermost block of 3 slices
	} {
		_, err := SplitKOutputs(ceM(t, ax, tc.slice), ceM(t, ax, "1"), tc.r)
		var v *Violation
		require.True(t, errors.As(err, &v), "%s / %d: %v", tc.slice, tc.r, err)
		assert.Equal(t, "XSR-R6", v.Rule.ID)
	}
	_, err := SplitKOutputs(ceM(t, ax, "I, J / 512"), ceM(t, ax, "1"), 1)
	assert.Error(t, err, "a group of one slice reduces nothing")
	_, err = SplitKStages(dtype.BF16, SplitKOutput{SliceOut: ceM(t, ax, "I, 1 # 4"), TimeOut: ceM(t, ax, "1")})
	var v *Violation
	require.True(t, errors.As(err, &v))
	assert.Equal(t, "XSR-R1", v.Rule.ID)
}

// TestSplitKStagesBuildGolden: the golden split-K GEMV
// (workloads/kernels/splitk-gemv.json) is the contraction chain up to
// accumulate, the stages SplitKStages returns for the dummy output, then
// cast and commit; built so, it lowers to the same configurations.
func TestSplitKStagesBuildGolden(t *testing.T) {
	golden := loadKernel(t, "splitk-gemv")
	main := golden.Ops[3]
	require.Equal(t, kernel.StAccumulate, main.Stages[5].Kind)
	ax := golden.Axes
	outs, err := SplitKOutputs(ceM(t, ax, "I, J / 512"), ceM(t, ax, "1"), 4)
	require.NoError(t, err)
	ve, err := SplitKStages(dtype.F32, outs[0])
	require.NoError(t, err)
	built := loadKernel(t, "splitk-gemv")
	st := built.Ops[3].Stages
	built.Ops[3].Stages = append(append(append([]*kernel.Stage(nil), st[:6]...), ve...), st[9:]...)
	require.NoError(t, Lower(Default(), golden))
	require.NoError(t, Lower(Default(), built))
	require.Equal(t, len(golden.Ops[3].Stages), len(built.Ops[3].Stages))
	for k, g := range golden.Ops[3].Stages {
		b := built.Ops[3].Stages[k]
		assert.Equal(t, g.Kind, b.Kind, "stage %d", k)
		assert.Equal(t, g.Config, b.Config, "stage %d (%s)", k, g.Kind)
	}
	xs := built.Ops[3].Stages[7].Config.VectorInterSlice
	require.NotNil(t, xs)
	assert.Equal(t, 4, xs.Ratio, "J / 512 splits J over 4 slices")
	assert.Equal(t, kernel.InterSliceAdd, xs.Op)
	assert.Equal(t, dtype.F32, xs.DType, "bf16 products accumulate in f32 (002 L4551)")
}
