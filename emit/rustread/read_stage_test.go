package rustread

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit"
	"tcpmap/model/pos"
)

// TestReadInterSliceErrors: a malformed vector_inter_slice_reduce is an
// error at its position.
func TestReadInterSliceErrors(t *testing.T) {
	good, err := emit.Rust(loadGolden(t, "splitk-gemv"), emit.RustOptions{})
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
			line, _ := pos.Offset([]byte(bad), off)
			assert.Equal(t, fmt.Sprintf("k.rs:%d", line), fmt.Sprintf("%s:%d", re.File, re.Line), "%v", err)
		})
	}
}

// TestReadVectorErrors: malformed Vector Engine calls are errors at their
// position.
func TestReadVectorErrors(t *testing.T) {
	good, err := emit.Rust(loadGolden(t, "ve-staged-pipeline"), emit.RustOptions{})
	require.NoError(t, err)
	for _, tc := range []struct{ old, new, msg string }{
		{"FxpBinaryOp::AddFxp, 100", "FxpBinaryOp::AddF, 100", `unknown FxpBinaryOp "AddF"`},
		{".vector_fxp_to_fp(31)", ".vector_fxp_to_fp(x)", "int_width"},
		{"vector_trim_way4::<m![A % 2 # 4]>()", "vector_trim_way4()", "takes 1 type arguments"},
		{"ClipBinaryOpI32::Max, 0)", "ClipBinaryOpI32::Max, BinaryArgMode::Mode10, 0)", "a mode goes with the _with_mode call"},
		{"BranchMode::Unconditional", "BranchMode::Sometimes", "unknown branch mode"},
		{"FpUnaryOp::Sigmoid", "FpUnaryOp::Sigmoid, 1", "a unary op takes no operand"},
	} {
		src := strings.Replace(string(good), tc.old, tc.new, 1)
		require.NotEqual(t, string(good), src, tc.old)
		_, err := Read("k.rs", []byte(src))
		var re *Error
		require.True(t, errors.As(err, &re), "%s: %v", tc.new, err)
		assert.Contains(t, err.Error(), tc.msg, tc.new)
	}
}

// FuzzReadVector: FuzzRead seeded with the Vector Engine kernels: Read
// never panics, and what it accepts reads back from its emitted text.
func FuzzReadVector(f *testing.F) {
	for _, name := range vectorGolden {
		src, err := emit.Rust(loadGolden(f, name), emit.RustOptions{Version: "f", Cost: "1"})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(fuzzRoundTrip)
}
