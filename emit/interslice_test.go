package emit

import (
	"errors"
	"fmt"
	"strings"
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

// TestReadInterSliceErrors: a malformed vector_inter_slice_reduce is an
// error at its position.
func TestReadInterSliceErrors(t *testing.T) {
	good, err := Rust(loadGolden(t, "splitk-gemv"), RustOptions{})
	require.NoError(t, err)
	src := string(good)
	const call = "vector_inter_slice_reduce::<m![I, 1 # 4], m![1]>(InterSliceReduceOpF32::Add)"
	for _, c := range []struct {
		name, new, at, wantInMsg string
	}{
		{"i32 enum on an f32 stream", "vector_inter_slice_reduce::<m![I, 1 # 4], m![1]>(InterSliceReduceOpI32::Add)", "InterSliceReduceOpI32", "on a f32 stream"},
		{"bare op", "vector_inter_slice_reduce::<m![I, 1 # 4], m![1]>(Add)", "Add)", "write the op with its enum"},
		{"unknown op", "vector_inter_slice_reduce::<m![I, 1 # 4], m![1]>(InterSliceReduceOpF32::Sum)", "InterSliceReduceOpF32::Sum", "not an op of InterSliceReduceOpF32"},
		{"unknown enum", "vector_inter_slice_reduce::<m![I, 1 # 4], m![1]>(InterSliceReduceOp::Add)", "InterSliceReduceOp::Add", "unknown enum"},
		{"one type argument", "vector_inter_slice_reduce::<m![I, 1 # 4]>(InterSliceReduceOpF32::Add)", "vector_inter_slice_reduce", "type argument"},
		{"bad mapping", "vector_inter_slice_reduce::<m![I / 3, 1 # 4], m![1]>(InterSliceReduceOpF32::Add)", "m![I / 3, 1 # 4]", "does not divide"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(src, call))
			bad := strings.Replace(src, call, c.new, 1)
			_, err := Read("k.rs", []byte(bad))
			require.Error(t, err)
			var re *Error
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Contains(t, re.Msg, c.wantInMsg)
			off := strings.Index(bad, c.at)
			require.GreaterOrEqual(t, off, 0)
			line, _ := position(bad, off)
			assert.Equal(t, fmt.Sprintf("k.rs:%d", line), fmt.Sprintf("%s:%d", re.File, re.Line), "%v", err)
		})
	}
}
