package emit

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectorGolden are Vector Engine kernels of every stage kind.
var vectorGolden = []string{"ve-staged-pipeline", "ve-residual-max", "ve-vrf-add", "ve-reduce-packet", "ve-pair-asymmetric",
	"ve-pair-sub-reverse", "ve-branch-relu", "ve-vcg-time", "softmax-decode", "rmsnorm-decode"}

// TestRustVectorCalls: the Vector Engine's calls print as the manual
// writes them (002 L4662-4676, L4996-5008, L5071-5079, L5419-5421,
// L5142-5152, L5237-5248).
func TestRustVectorCalls(t *testing.T) {
	for name, calls := range map[string][]string{
		"ve-staged-pipeline": {".vector_intra_slice_branch(BranchMode::Unconditional)", ".vector_fxp(FxpBinaryOp::AddFxp, 100)", ".vector_fxp_to_fp(31)",
			".vector_trim_way4::<m![A % 2 # 4]>()", ".vector_fp_unary(FpUnaryOp::Sigmoid)", ".vector_pad_way8::<m![A % 2 # 8]>()",
			".vector_fp_to_fxp(31)", ".vector_clip(ClipBinaryOpI32::Max, 0)"},
		"ve-residual-max":     {".vector_stash()", ".vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32)", ".vector_clip(ClipBinaryOpF32::Max, Stash)"},
		"ve-vrf-add":          {".vector_fxp(FxpBinaryOp::AddFxp, &w_vrf)"},
		"ve-reduce-packet":    {".vector_intra_slice_reduce::<R, m![A % 2], m![1 # 4]>(IntraSliceReduceOpF32::Add)"},
		"ve-pair-sub-reverse": {".vector_intra_slice_unzip::<I, m![1 # 2], m![1]>()", ".vector_fp_zip_with_mode(FpBinaryOp::SubF, BinaryArgMode::Mode10)"},
		"ve-pair-asymmetric":  {".vector_fp_unary(FpUnaryOp::Exp, true, false)", ".vector_fp_zip(FpBinaryOp::MulF(FpMulAlu::Mul0))"},
		"softmax-decode":      {".vector_split::<m![Sctx / 4], m![Sctx % 4]>()", ".vector_fp_div(FpDivBinaryOp::DivF, &s_vrf)", ".vector_concat::<m![Sctx / 8], m![Sctx % 8]>()"},
		"ve-bias-minus-x":     {".vector_fxp_with_mode(FxpBinaryOp::SubFxp, BinaryArgMode::Mode10, 7)"},
	} {
		src, err := Rust(loadGolden(t, name), RustOptions{})
		require.NoError(t, err, name)
		for _, c := range calls {
			assert.Contains(t, string(src), c, name)
		}
	}
	src, err := Rust(loadGolden(t, "softmax-decode"), RustOptions{})
	require.NoError(t, err)
	assert.Contains(t, string(src), "// tcpmap:reference expr(x) -> p = exp(x - reduce_max(x, Sctx)) / reduce_sum(exp(x - reduce_max(x, Sctx)), Sctx)\n")
	assert.Contains(t, string(src), "is checked by `tcpmap verify`, not on the host")
	src, err = Rust(loadGolden(t, "ve-vcg-time"), RustOptions{})
	require.NoError(t, err)
	assert.Contains(t, string(src), " ; inputs in [-4, -1]\n")
}

// TestReadVectorErrors: malformed Vector Engine calls are errors at their
// position.
func TestReadVectorErrors(t *testing.T) {
	good, err := Rust(loadGolden(t, "ve-staged-pipeline"), RustOptions{})
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
		src, err := Rust(loadGolden(f, name), RustOptions{Version: "f", Cost: "1"})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Read("fuzz.rs", src)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Read accepted an invalid program: %v", err)
		}
		out, err := Rust(p, RustOptions{})
		if err != nil {
			return
		}
		q, err := Read("fuzz.rs", out)
		if err != nil {
			t.Fatalf("emitted text does not read back: %v\n%s", err, out)
		}
		if a, b := programJSON(t, p), programJSON(t, q); a != b {
			t.Fatalf("round trip differs:\n%s\n%s", a, b)
		}
	})
}

// TestOptCommitTrimAfterVectorStages: under furiosa-opt-std 0.6.0 the
// commit_trim's packet is the inner |Element| / |Time| positions of the
// committed element, with Time the stream's Time after the Vector Engine's
// stages as engines.Lower tracks it: the unzip's SplitTime (ve-pair-add:
// Time 1, so the whole A % 2 per step, not A % 2 over I's two steps), the
// reduce's OTime (ve-reduce-time: R reduced to 1), the inter-slice reduce's
// TimeOut (xsr-promotion: T0, T1 of four steps, so the packet P of eight,
// 002 L6584-6585). The reader refuses the trim the Time before the stage
// would give.
func TestOptCommitTrimAfterVectorStages(t *testing.T) {
	for _, tc := range []struct{ kernel, trim, stale string }{
		{"ve-pair-add", ".commit_trim::<m![A % 2]>()", ".commit_trim::<m![1]>()"},
		{"ve-reduce-time", ".commit_trim::<m![A % 2]>()", ""},
		{"xsr-promotion", ".commit_trim::<m![P]>()", ".commit_trim::<m![P % 2]>()"},
	} {
		src, err := Rust(loadGolden(t, tc.kernel), RustOptions{API: Opt06})
		require.NoError(t, err, tc.kernel)
		assert.Contains(t, string(src), tc.trim, tc.kernel)
		if tc.stale == "" {
			continue
		}
		_, err = Read("k.rs", []byte(strings.Replace(string(src), tc.trim, tc.stale, 1)))
		require.Error(t, err, tc.kernel)
		assert.Contains(t, err.Error(), "commit_trim's packet is", tc.kernel)
	}
}
