package emit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// TestRustInterSlice: the Inter-Slice Block's call is printed as the
// manual writes it (002 L6649, L6667), the op's enum named by the stream's
// type, f32 after a bf16 contraction (002 L4551).
func TestRustInterSlice(t *testing.T) {
	for name, want := range map[string]string{
		"splitk-gemv":   ".vector_inter_slice_reduce::<m![I, 1 # 4], m![1]>(InterSliceReduceOpF32::Add)",
		"xsr-broadcast": ".vector_inter_slice_reduce::<m![W, X], m![1]>(InterSliceReduceOpF32::Add)",
		"xsr-promotion": ".vector_inter_slice_reduce::<m![W, T2], m![T0, T1]>(InterSliceReduceOpF32::Add)",
	} {
		src, err := Rust(loadGolden(t, name), RustOptions{})
		require.NoError(t, err, name)
		assert.Contains(t, string(src), want, name)
	}
	// A bare op takes the stream's enum.
	p := loadGolden(t, "splitk-gemv")
	for _, st := range p.Ops[3].Stages {
		if st.Kind == kernel.StVectorInterSlice {
			st.Param = "Max"
		}
	}
	src, err := Rust(p, RustOptions{})
	require.NoError(t, err)
	assert.Contains(t, string(src), "(InterSliceReduceOpF32::Max)")
	for _, st := range p.Ops[3].Stages {
		if st.Kind == kernel.StVectorInterSlice {
			st.Param = "AddSat"
		}
	}
	_, err = Rust(p, RustOptions{})
	assert.ErrorContains(t, err, "not an op of InterSliceReduceOpF32", "AddSat is i32's (002 L6615)")
}
