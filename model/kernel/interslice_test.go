package kernel

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

// TestParseInterSliceOp reads the ops as the manual writes them (002
// L6649, L6667, L6690) and the enums' variants (002 L6611-6625).
func TestParseInterSliceOp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		op   InterSliceOp
		d    dtype.DType
		errC string // error with this column
	}{
		{in: "InterSliceReduceOpI32::AddSat", op: InterSliceAddSat, d: dtype.I32},
		{in: "InterSliceReduceOpF32::Add", op: InterSliceAdd, d: dtype.F32},
		{in: " InterSliceReduceOpF32 :: Mul ", op: InterSliceMul, d: dtype.F32},
		{in: "Max", op: InterSliceMax},
		{in: "Min", op: InterSliceMin},
		{in: "InterSliceReduceOpI32::Mul", errC: "column 24"},
		{in: "InterSliceReduceOpF32::AddSat", errC: "column 24"},
		{in: "InterSliceReduceOp::Add", errC: "column 1"},
		{in: "  Sum", errC: "column 3"},
		{in: "", errC: "column 1"},
	} {
		op, d, err := ParseInterSliceOp(tc.in)
		if tc.errC != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.errC, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.op, op, tc.in)
		assert.Equal(t, tc.d, d, tc.in)
	}
	assert.True(t, InterSliceOpFor(dtype.I32, InterSliceAddSat))
	assert.False(t, InterSliceOpFor(dtype.I32, InterSliceMul), "Mul is f32's only (002 L6624)")
	assert.False(t, InterSliceOpFor(dtype.F32, InterSliceAddSat), "AddSat is i32's only (002 L6615)")
	assert.False(t, InterSliceOpFor(dtype.BF16, InterSliceAdd))
}

// FuzzParseInterSliceOp: the parser never panics; what it accepts prints
// back (with the enum) to the same op.
func FuzzParseInterSliceOp(f *testing.F) {
	for _, s := range []string{"InterSliceReduceOpI32::AddSat", "InterSliceReduceOpF32::Add", "Max", "X::Y::Z", ":: Add"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		op, d, err := ParseInterSliceOp(s)
		if err != nil {
			if !strings.Contains(err.Error(), "column ") {
				t.Fatalf("error without a column: %v", err)
			}
			return
		}
		for _, e := range []dtype.DType{dtype.I32, dtype.F32} {
			if d != 0 && e != d || !InterSliceOpFor(e, op) {
				continue
			}
			op2, d2, err := ParseInterSliceOp(InterSliceEnum(e) + "::" + string(op))
			if err != nil || op2 != op || d2 != e {
				t.Fatalf("%q: %s::%s reads back as %v %v %v", s, InterSliceEnum(e), op, op2, d2, err)
			}
		}
	})
}

// TestParseBeginInterleave reads an interleaved begin's Param, `I, rhs`
// (begin_interleaved::<I, ...>(lhs.view(), rhs.view()), 002 L1866).
func TestParseBeginInterleave(t *testing.T) {
	b, err := ParseBeginInterleave("I, rhs_dm")
	require.NoError(t, err)
	assert.Equal(t, &BeginInterleave{Axis: "I", Tensor: "rhs_dm"}, b)
	assert.Equal(t, "I, rhs_dm", b.String())
	b, err = ParseBeginInterleave("  ")
	require.NoError(t, err)
	assert.Nil(t, b, "a plain begin")
	for in, col := range map[string]string{"I": "column 1", "1I, rhs": "column 1", " I, 9x": "column 5", "I,": "column 3"} {
		_, err := ParseBeginInterleave(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), col, in)
	}
	// A graph's merged program names a kernel's tensors op.tensor.
	b, err = ParseBeginInterleave("Kc, pv.o_ps1")
	require.NoError(t, err)
	assert.Equal(t, "pv.o_ps1", b.Tensor)
	_, err = ParseBeginInterleave("Kc, pv..o")
	assert.ErrorContains(t, err, "column 5")
	st := &Stage{Kind: StBegin, Tensor: "lhs", Param: "I, rhs"}
	assert.Equal(t, "rhs", st.InterleavedTensor())
	assert.Empty(t, (&Stage{Kind: StBegin, Tensor: "lhs"}).InterleavedTensor())
	assert.Empty(t, (&Stage{Kind: StAlign, Tensor: "w", Param: "I, rhs"}).InterleavedTensor())
}

// FuzzParseBeginInterleave: the parser never panics, errors name a
// column, and what it accepts prints back to itself.
func FuzzParseBeginInterleave(f *testing.F) {
	for _, s := range []string{"I, rhs", "", "I", ",", "A_1 ,b2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBeginInterleave(s)
		if err != nil {
			if !strings.Contains(err.Error(), "column ") {
				t.Fatalf("error without a column: %v", err)
			}
			return
		}
		if b == nil {
			return
		}
		c, err := ParseBeginInterleave(b.String())
		if err != nil || *c != *b {
			t.Fatalf("%q → %v reads back as %v, %v", s, b, c, err)
		}
	})
}
