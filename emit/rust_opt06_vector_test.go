package emit

import (
	"path/filepath"
	"strings"
	"tcpmap/emit/internal/emittest"
	"tcpmap/emit/rustread"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// optVectorForms are intra-slice stages the stored kernels do not hold,
// each written into one of them (optFormProgram): the 0.6.0 calls
// TestOptVectorForms reads back and TestRustCheck type-checks, and the
// refusals.
var optVectorForms = []struct {
	name, kernel string
	kind         kernel.StageKind // the stage to rewrite (its first)
	newKind      kernel.StageKind // its new kind, if it changes
	param        string
	want         string // a line of the emitted file
	refused      string // or the start of the error's reason
}{
	{"two guarded immediates", "ve-stash-fxp", kernel.StVectorFxp, "", "AddFxp, [group(1, GroupId::Zero), group(2, GroupId::One)]",
		".vector_fxp(FxpBinaryOp::AddFxp, Branched::imm(TagGuard::group(GroupId::Zero), 1).imm(TagGuard::group(GroupId::One), 2))", ""},
	{"a mode and an else slot", "ve-stash-fxp", kernel.StVectorFxp, "", "SubFxp, Mode10, [group(1, GroupId::Zero), 3]",
		".vector_fxp_with_mode(FxpBinaryOp::SubFxp, BinaryArgMode::Mode10, Branched::imm(TagGuard::group(GroupId::Zero), 1).imm(TagGuard::all(), 3))", ""},
	{"the stash on the rf port", "ve-stash-fxp", kernel.StVectorClip, "", "Max, [group(0, GroupId::Zero), Stash]",
		".vector_clip(ClipBinaryOpI32::Max, Branched::imm(TagGuard::group(GroupId::Zero), 0).rf(TagGuard::all(), Stash))", ""},
	{"a comparison tag mode", "ve-stash-fxp", kernel.StVectorBranch, "", "Comparison([Less(0), Equal(5), Greater(100), True])",
		".vector_intra_slice_tag(TagMode::Comparison([Cmp::Less(0), Cmp::Equal(5), Cmp::Greater(100), Cmp::True]))", ""},
	{"a float mode", "ve-five-alu", kernel.StVectorFpBinary, "", "SubF, Mode10, 1.0f32",
		".vector_fp_binary_with_mode(FpBinaryOp::SubF, BinaryArgMode::Mode10, 1.0f32)", ""},
	{"a ternary operand", "ve-five-alu", kernel.StVectorFpBinary, kernel.StVectorFpTernary, "FmaF, (2.0f32, 3.0f32)",
		".vector_fp_ternary(FpTernaryOp::FmaF, (2.0f32, 3.0f32))", ""},
	{"guarded ternary slots", "ve-five-alu", kernel.StVectorFpBinary, kernel.StVectorFpTernary, "FmaF, Mode102, [group((2.0f32, 3.0f32), GroupId::Zero), (1.0f32, 0.0f32)]",
		".vector_fp_ternary_with_mode(FpTernaryOp::FmaF, TernaryArgMode::Mode102, Branched::imm(TagGuard::group(GroupId::Zero), (2.0f32, 3.0f32)).imm(TagGuard::all(), (1.0f32, 0.0f32)))", ""},
	{"both groups' operands", "ve-pair-one-side", kernel.StVectorFxp, "", "MulInt, 10, 20",
		".vector_fxp(FxpBinaryOp::MulInt, 10, 20)", ""},

	{"a stash group operand", "ve-pair-one-side", kernel.StVectorFxp, "", "MulInt, Stash, ()", "",
		"furiosa-opt-std 0.6.0: a per-group operand of the two-group pair is a constant or a VRF tensor"},
	{"a guarded group operand", "ve-pair-one-side", kernel.StVectorFxp, "", "MulInt, group(1, GroupId::One), ()", "",
		"furiosa-opt-std 0.6.0: a per-group operand of the two-group pair is one unguarded operand or ()"},
	{"the rf port before an immediate", "ve-stash-fxp", kernel.StVectorClip, "", "Max, [Stash, 0]", "",
		"furiosa-opt-std 0.6.0: a pass reads its register-file port (a VRF tensor or the stash) in its last slot"},
	{"four immediates", "ve-stash-fxp", kernel.StVectorFxp, "", "AddFxp, [group(1, GroupId::Zero), group(2, GroupId::One), group(3, GroupId::Zero), 4]", "",
		"furiosa-opt-std 0.6.0: a pass has three immediate registers"},
	{"a unary mode", "ve-five-alu", kernel.StVectorFpUnary, "", "Sqrt, Mode1", "",
		"furiosa-opt-std 0.6.0's unary ops carry no argument mode"},
	{"a masked multiply", "ve-five-alu", kernel.StVectorFpBinary, "", "MaskMulF(Mul0), 1.0f32", "",
		"furiosa-opt-std 0.6.0 has no MaskMulF(Mul0)"},
	{"an axis toggle", "ve-stash-fxp", kernel.StVectorBranch, "", "AxisToggle { axis: A }", "",
		"branch mode AxisToggle: furiosa-opt-std 0.6.0's TagMode::AxisToggle takes furiosa-mapping's Ident"},
}

// optFormProgram is the stored kernel of an optVectorForms entry with its
// stage rewritten.
func optFormProgram(t testing.TB, kernelName string, kind, newKind kernel.StageKind, param string) *kernel.Program {
	t.Helper()
	p, err := rustread.ReadFile(filepath.Join("..", "workloads", "kernels", kernelName+".json"))
	require.NoError(t, err)
	st := emittest.StageOf(emittest.LastChain(p), kind)
	require.NotNil(t, st)
	if newKind != "" {
		st.Kind = newKind
	}
	st.Param = param
	return p
}

// TestOptVectorForms: the stages of optVectorForms print under
// furiosa-opt-std 0.6.0 as the vendor's call (a Branched layout, a mode, a
// ternary operand, a comparison tag mode) and read back as the same
// program; what 0.6.0 cannot say is refused with the op and the reason.
func TestOptVectorForms(t *testing.T) {
	for _, c := range optVectorForms {
		t.Run(c.name, func(t *testing.T) {
			p := optFormProgram(t, c.kernel, c.kind, c.newKind, c.param)
			src, err := Rust(p, RustOptions{API: Opt06, Version: "test"})
			if c.refused != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.refused)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, string(src), c.want)
			got, err := rustread.Read("k.rs", src)
			require.NoError(t, err)
			assert.JSONEq(t, programJSON(t, byName(p)), programJSON(t, byName(got)))
		})
	}
}

// TestOptVectorReadRefusals: the reader refuses, with the op, a 0.6.0
// intra-slice call it cannot take back to a stage: a 0.1.0 name, a
// Branched layout the builder cannot make or that fills its port before
// an immediate, an op given to vector_fp_div, an unknown comparison.
func TestOptVectorReadRefusals(t *testing.T) {
	emitted := func(name string) string {
		p, err := rustread.ReadFile(filepath.Join("..", "workloads", "kernels", name+".json"))
		require.NoError(t, err)
		src, err := Rust(p, RustOptions{API: Opt06, Version: "test"})
		require.NoError(t, err)
		return string(src)
	}
	relu, rms := emitted("ve-branch-relu"), emitted("rmsnorm-decode")
	guarded := "Branched::imm(TagGuard::group(GroupId::One), 0)"
	for _, tc := range []struct {
		name, src, old, new, want string
	}{
		{"0.1.0 trim", emitted("ve-sigmoid"), ".vector_narrow_trim::<", ".vector_trim_way4::<", "vector_trim_way4 is a method of furiosa-visa-std 0.1.0"},
		{"0.1.0 split", rms, ".vector_narrow_split::<", ".vector_split::<", "vector_split is a method of furiosa-visa-std 0.1.0"},
		{"port before an immediate", relu, guarded, "Branched::rf(TagGuard::all(), Stash).imm(TagGuard::group(GroupId::One), 0)", "in its last slot"},
		{"stash on an immediate", relu, guarded, "Branched::imm(TagGuard::all(), Stash)", "a Branched layout is"},
		{"a pattern guard", relu, guarded, "Branched::imm(TagGuard::matches([BitReq::One, BitReq::Ignore, BitReq::Ignore, BitReq::Ignore]), 0)", "a Branched layout is"},
		{"fp_div with its op", rms, ".vector_fp_div(8192.0f32)", ".vector_fp_div(FpDivBinaryOp::DivF, 8192.0f32)", "vector_fp_div"},
		{"unknown comparison", relu, "Cmp::Less(0)", "Cmp::Lesser(0)", "comparison"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, tc.src, tc.old)
			_, err := rustread.Read("k.rs", []byte(strings.Replace(tc.src, tc.old, tc.new, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
