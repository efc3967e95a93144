package emit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustread"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// TestRustVectorCalls: the Vector Engine's calls print as the manual
// writes them (002 L4662-4676, L4996-5008, L5071-5079, L5419-5421,
// L5142-5152, L5237-5248).
func TestRustVectorCalls(t *testing.T) {
	for name, calls := range map[string][]string{
		"ve-staged-pipeline": {".vector_intra_slice_branch(BranchMode::Unconditional)", ".vector_fxp(FxpBinaryOp::AddFxp, 100)", ".vector_fxp_to_fp(31)",
			".vector_trim_way4::<m![A % 2 # 4]>()", ".vector_fp_unary(FpUnaryOp::Sigmoid)", ".vector_pad_way8::<m![A % 2 # 8]>()",
			".vector_fp_to_fxp(31)", ".vector_clip(ClipBinaryOpI32::Max, 0)"},
		"ve-residual-max":  {".vector_stash()", ".vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32)", ".vector_clip(ClipBinaryOpF32::Max, Stash)"},
		"ve-vrf-add":       {".vector_fxp(FxpBinaryOp::AddFxp, &w_vrf)"},
		"ve-reduce-packet": {".vector_intra_slice_reduce::<R, m![A % 2], m![1 # 4]>(IntraSliceReduceOpF32::Add)"},
		"ve-pair-add":      {".vector_intra_slice_unzip::<I, m![1 # 2], m![1]>()", ".vector_clip_zip(ClipBinaryOpI32::AddFxp)"},
		"ve-pair-one-side": {".vector_fxp(FxpBinaryOp::MulInt, 10, ())"},
		"silu-decode":      {".vector_split::<m![F % 56 / 4], m![F % 4]>()", ".vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), Stash)", ".vector_concat::<m![F % 56 / 8], m![F % 8]>()"},
		"ve-branch-relu": {".vector_intra_slice_branch(BranchMode::Comparison([InputCmp::I32(InputCmpI32::False), InputCmp::I32(InputCmpI32::False), InputCmp::I32(InputCmpI32::False), InputCmp::I32(InputCmpI32::Less { boundary: 0 })]))",
			".vector_fxp(FxpBinaryOp::MulInt, VeBranchOperand::group(VeRhs::constant(0), GroupId::One))"},
		"ve-bias-minus-x": {".vector_fxp_with_mode(FxpBinaryOp::SubFxp, BinaryArgMode::Mode10, 7)"},
	} {
		src, err := Rust(loadGolden(t, name), RustOptions{})
		require.NoError(t, err, name)
		for _, c := range calls {
			assert.Contains(t, string(src), c, name)
		}
	}
	src, err := Rust(loadGolden(t, "silu-decode"), RustOptions{})
	require.NoError(t, err)
	assert.Contains(t, string(src), "// tcpmap:reference expr(x) -> y = x * sigmoid(x) ; inputs in [-8, 8]\n")
	assert.Contains(t, string(src), "is checked by `tcpmap verify`, not on the host")
	src, err = Rust(loadGolden(t, "ve-vcg-time"), RustOptions{})
	require.NoError(t, err)
	assert.Contains(t, string(src), " ; inputs in [-4, -1]\n")
}

// TestOptCommitTrimAfterVectorStages: under furiosa-opt-std 0.6.0 the
// commit_trim's packet is the inner |Element| / |Time| positions of the
// committed element, with Time the stream's Time after the Vector Engine's
// stages as engines.Lower tracks it (kernel.Stage.VectorTime): the inter-slice reduce's
// TimeOut in xsr-promotion (T0, T1 of four steps, so the packet P of eight,
// 002 L6584-6585; the Time before it, sixteen steps, gave P % 2), which
// the reader refuses; the reduce's OTime, the unzip's SplitTime, the
// filter's Time2 and the Narrow/Widen Time, and no change for an ALU op.
func TestOptCommitTrimAfterVectorStages(t *testing.T) {
	src, err := Rust(loadGolden(t, "xsr-promotion"), RustOptions{API: Opt06})
	require.NoError(t, err)
	assert.Contains(t, string(src), ".commit_trim::<m![P]>()")
	_, err = rustread.Read("k.rs", []byte(strings.Replace(string(src), ".commit_trim::<m![P]>()", ".commit_trim::<m![P % 2]>()", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "commit_trim's packet is")

	axes, err := mapping.ParseAxes("R=16, A=8")
	require.NoError(t, err)
	parse := func(s string) *mapping.Expr {
		e, err := mapping.Parse(s, axes, nil)
		require.NoError(t, err)
		return e
	}
	before := parse("R")
	for _, tc := range []struct {
		kind kernel.StageKind
		time string // "" states none
		want string
	}{
		{kernel.StVectorReduce, "1", "1"},
		{kernel.StVectorUnzip, "R / 2", "R / 2"},
		{kernel.StVectorFilter, "R / 4", "R / 4"},
		{kernel.StVectorSplit, "R, A / 4", "R, A / 4"},
		{kernel.StVectorTrim, "", "R"},
		{kernel.StVectorFxp, "", "R"},
	} {
		st := &kernel.Stage{Kind: tc.kind}
		if tc.time != "" {
			st.Time = parse(tc.time)
		}
		assert.Equal(t, tc.want, st.VectorTime(before).String(), tc.kind)
	}
}
