package engines

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// veProgram builds a kernel of one Vector Engine chain over the manual's
// A = 512 stream (Slice m![A / 2], Time m![1], Packet m![A % 2 # 8],
// 002 L4662-4676) of type dt, with the given intra-slice stages (JSON
// objects) between the branch and vector_final, and a VRF tensor w_vrf
// (m![A % 2 # 8], loaded by a sub chain) that stages may read.
func veProgram(t *testing.T, dt string, stages ...string) *kernel.Program {
	t.Helper()
	src := fmt.Sprintf(`{"name": "ve", "axes": "A=512", "chips": 1,
 "tensors": [
  {"name": "x_dm", "mem": "dm", "dtype": "%[1]s", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 2", "element": "A %% 2", "addr": 0},
  {"name": "w_dm", "mem": "dm", "dtype": "%[1]s", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 2", "element": "A %% 2", "addr": 64},
  {"name": "w_vrf", "mem": "vrf", "dtype": "%[1]s", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 2", "element": "A %% 2 # 8", "addr": 0},
  {"name": "y_dm", "mem": "dm", "dtype": "%[2]s", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 2", "element": "A %% 2", "addr": 128}],
 "ops": [
  {"context": "sub", "kind": "chain", "stages": [{"kind": "begin", "tensor": "w_dm"}, {"kind": "fetch", "dtype": "%[1]s", "time": "1", "packet": "A %% 2 # 8"},
   {"kind": "collect", "time": "1", "packet": "A %% 2 # 8"}, {"kind": "to_vrf", "tensor": "w_vrf"}]},
  {"context": "main", "kind": "chain", "stages": [{"kind": "begin", "tensor": "x_dm"}, {"kind": "fetch", "dtype": "%[1]s", "time": "1", "packet": "A %% 2 # 8"},
   {"kind": "collect", "time": "1", "packet": "A %% 2 # 8"}, {"kind": "vector_init"},
   %[3]s,
   {"kind": "vector_final"}, {"kind": "commit", "tensor": "y_dm"}]}]}`, dt, outType(dt, stages), strings.Join(stages, ",\n   "))
	return parseKernel(t, src)
}

// outType is the stream's type after the stages (the conversions change it).
func outType(dt string, stages []string) string {
	for _, s := range stages {
		switch {
		case strings.Contains(s, `"vector_fxp_to_fp"`):
			dt = "f32"
		case strings.Contains(s, `"vector_fp_to_fxp"`):
			dt = "i32"
		}
	}
	return dt
}

// Stage spellings for veProgram.
const (
	veBranch = `{"kind": "vector_intra_slice_branch", "param": "Unconditional"}`
	veTrim   = `{"kind": "vector_trim_way4", "packet": "A % 2 # 4"}`
	vePad    = `{"kind": "vector_pad_way8", "packet": "A % 2 # 8"}`
	veStash  = `{"kind": "vector_stash"}`
	veToFp   = `{"kind": "vector_fxp_to_fp", "param": "31"}`
	veToFxp  = `{"kind": "vector_fp_to_fxp", "param": "31"}`
)

func veOp(kind, param string) string {
	return fmt.Sprintf(`{"kind": %q, "param": %q}`, kind, param)
}

func veVRF(kind, param string) string {
	return fmt.Sprintf(`{"kind": %q, "param": %q, "tensor": "w_vrf"}`, kind, param)
}

// TestLowerVectorExamples lowers the manual's intra-slice pipelines and
// the rules' counterexamples (vector-and-kernels.md §2.19, §3).
func TestLowerVectorExamples(t *testing.T) {
	branch := strings.Replace(veBranch, "vector_intra_slice_branch", "vector_branch", 1)
	unary := func(op string) string { return veOp("vector_fp_unary", op) }
	binary := func(op string) string { return veOp("vector_fp_binary", op) }
	for _, tc := range []struct {
		name   string
		dt     string
		stages []string
		rule   string // "" legal; "nm" ErrNotModelled
		msg    string
		alus   []kernel.VeALU
	}{
		{"VEC-EX-4 staged pipeline (002 L4662-4676)", "i32", []string{branch, veOp("vector_fxp", "AddFxp, 100"), veToFp, veTrim, unary("Sigmoid"), vePad, veToFxp, veOp("vector_clip", "Max, 0")},
			"", "", []kernel.VeALU{kernel.ALUFxpAdd, kernel.ALUFpFpu, kernel.ALUClipMax}},
		{"VEC-EX-5 five ALUs (002 L4905-4906)", "f32", []string{branch, veTrim, binary("AddF, 1.0f32"), binary("MulF(Mul0), 2.0f32"), binary("MulF(Mul1), 3.0f32"), unary("Sqrt"), unary("Exp"), vePad},
			"", "", []kernel.VeALU{kernel.ALUFpFma, kernel.ALUFpMul0, kernel.ALUFpMul1, kernel.ALUFpFpu, kernel.ALUFpExp}},
		{"VEC-EX-7 tanh(sqrt(x)) (002 L4750)", "f32", []string{branch, veTrim, unary("Sqrt"), unary("Tanh"), vePad}, "VE-R5", "FpFpu is already in use", nil},
		{"VEC-EX-7 sigmoid then DivF", "f32", []string{branch, veTrim, unary("Sigmoid"), binary("DivF, 2.0f32"), vePad}, "VE-R5", "FpFpu is already in use", nil},
		{"VEC-EX-7 AddF then FmaF", "f32", []string{branch, veTrim, binary("AddF, 1.0f32"), veOp("vector_fp_ternary", "FmaF, (2.0f32, 1.0f32)"), vePad}, "VE-R5", "FpFma is already in use", nil},
		{"VEC-EX-7 DivF and the FpDiv stage", "f32", []string{branch, veTrim, binary("DivF, 2.0f32"), veOp("vector_fp_div", "DivF, 4.0f32"), vePad}, "", "", []kernel.VeALU{kernel.ALUFpFpu}},
		{"VEC-EX-8 stash (002 L4996-5008)", "f32", []string{branch, veStash, veTrim, binary("MulF(Mul0), 2.0f32"), vePad, veOp("vector_clip", "Max, Stash")}, "", "", []kernel.VeALU{kernel.ALUFpMul0, kernel.ALUClipMax}},
		{"VEC-EX-11 Mode10 (002 L5125-5133)", "i32", []string{branch, veOp("vector_fxp", "SubFxp, Mode10, 7")}, "", "", []kernel.VeALU{kernel.ALUFxpAdd}},
		{"VRF operand in Way4", "f32", []string{branch, veTrim, veVRF("vector_fp_binary", "AddF"), vePad}, "", "", []kernel.VeALU{kernel.ALUFpFma}},
		{"logic then fxp then clip", "i32", []string{branch, veOp("vector_logic", "BitAnd, 0x7fffffff"), veOp("vector_logic", "LeftShift, 1"), veOp("vector_fxp", "MulInt, 3"), veOp("vector_clip", "AbsMax, -5"), veOp("vector_clip", "AddFxpSat, 1")},
			"", "", []kernel.VeALU{kernel.ALULogicAnd, kernel.ALULogicLshift, kernel.ALUFxpMul, kernel.ALUClipMax, kernel.ALUClipAdd}},

		{"float before narrow", "f32", []string{branch, unary("Exp")}, "VE-R6", "runs Way4", nil},
		{"clip in Way4", "f32", []string{branch, veTrim, veOp("vector_clip", "Max, 0.0f32"), vePad}, "VE-R6", "", nil},
		{"final in Way4", "f32", []string{branch, veTrim}, "VE-R6", "widen the stream first", nil},
		{"narrow twice", "f32", []string{branch, veTrim, veTrim}, "VE-R4", "", nil},
		{"logic after fxp", "i32", []string{branch, veOp("vector_fxp", "AddFxp, 1"), veOp("vector_logic", "BitAnd, 1")}, "VE-R4", "does not go back", nil},
		{"VEC-EX-6 FxpAdd twice (002 L5260-5269)", "i32", []string{branch, veOp("vector_fxp", "AddFxp, 10"), veOp("vector_fxp", "MulInt, 2"), veOp("vector_fxp", "SubFxp, 5")}, "VE-R5", "FxpAdd is already in use", nil},
		{"fxp on f32", "f32", []string{branch, veOp("vector_fxp", "AddFxp, 1")}, "VE-R7", "", nil},
		{"float on i32", "i32", []string{branch, veTrim, unary("Exp"), vePad}, "VE-R7", "", nil},
		{"fp_to_fxp on i32", "i32", []string{branch, veToFxp}, "VE-R7", "", nil},
		{"f32 logic shift", "f32", []string{branch, veOp("vector_logic", "LeftShift, 1")}, "VE-R7", "", nil},
		{"Clip Add on i32", "i32", []string{branch, veOp("vector_clip", "Add, 1")}, "VE-R7", "", nil},
		{"f32 constant on i32", "i32", []string{branch, veOp("vector_clip", "Max, 2.5f32")}, "VE-R1", "is an f32", nil},
		{"int_width 32", "i32", []string{branch, veOp("vector_fxp_to_fp", "32")}, "VE-R23", "", nil},
		{"unary Mode1", "f32", []string{branch, veTrim, veOp("vector_fp_unary", "Exp, Mode1"), vePad}, "VE-R22", "", nil},
		{"stash twice", "f32", []string{branch, veStash, veStash}, "VE-R10", "one stash per pass", nil},
		{"stash after FxpToFp", "i32", []string{branch, veToFp, veStash}, "VE-R10", "Branch, Logic", nil},
		{"stash read twice", "i32", []string{branch, veStash, veOp("vector_fxp", "AddFxp, Stash"), veOp("vector_clip", "Max, Stash")}, "VE-R10", "a second time", nil},
		{"stash without vector_stash", "i32", []string{branch, veOp("vector_clip", "Max, Stash")}, "VE-R10", "has none", nil},
		{"stash typed", "i32", []string{branch, veStash, veToFp, veTrim, binary("AddF, Stash"), vePad}, "VE-R10", "typed", nil},
		{"VRF and stash in one op", "f32", []string{branch, veStash, veTrim, `{"kind": "vector_fp_ternary", "param": "FmaF, (&w_vrf, Stash)", "tensor": "w_vrf"}`, vePad}, "VE-R21", "register-file", nil},
		{"overlapping slots", "i32", []string{branch, veOp("vector_fxp", "AddFxp, [1, group(2, GroupId::Zero)]")}, "VE-R21", "overlapping", nil},
		{"MaskMulF", "f32", []string{branch, veTrim, binary("MaskMulF(Mul0), 2.0f32"), vePad}, "nm", "", nil},
		{"filter (002 L4973-4974)", "i32", []string{strings.Replace(branch, "Unconditional", "Comparison([False, False, False, Less(0)])", 1),
			`{"kind": "vector_filter", "time": "1", "param": "ValidBranchIds::ValidGroup { id: GroupId::Zero }"}`}, "", "", nil},
		{"filter without Time2", "i32", []string{branch, `{"kind": "vector_filter", "param": "0"}`}, "VE-R24", "Time2", nil},
		{"filter mode", "i32", []string{branch, `{"kind": "vector_filter", "time": "1", "param": "ValidAlways"}`}, "VE-R24", "", nil},
		{"filter before clip", "i32", []string{branch, `{"kind": "vector_filter", "time": "1", "param": "0"}`, veOp("vector_clip", "Max, 0")}, "VE-R4", "", nil},
		{"comparison boundary of another type", "i32", []string{strings.Replace(branch, "Unconditional", "Comparison([Less(0.5f32), True, True, True])", 1)}, "VE-R25", "is an f32", nil},
		{"AxisToggle of an axis the stream lacks", "i32", []string{strings.Replace(branch, "Unconditional", "AxisToggle { axis: Q }", 1)}, "VE-R25", "do not hold Q", nil},
		{"branch Vrf", "i32", []string{strings.Replace(branch, "Unconditional", "Vrf", 1)}, "nm", "", nil},
		{"branch ValidCount without a VCG: every lane valid", "i32", []string{strings.Replace(branch, "Unconditional", "ValidCount", 1)}, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := veProgram(t, tc.dt, tc.stages...)
			err := Lower(Default(), p)
			switch tc.rule {
			case "":
				require.NoError(t, err)
				var alus []kernel.VeALU
				for _, st := range p.Ops[1].Stages {
					if c := st.Config; c != nil && c.VectorOp != nil && c.VectorOp.ALU != "" {
						alus = append(alus, c.VectorOp.ALU)
					}
				}
				assert.Equal(t, tc.alus, alus)
			case "nm":
				assert.ErrorIs(t, err, ErrNotModelled)
			default:
				var v *Violation
				require.True(t, errors.As(err, &v), "%v", err)
				assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
				assert.Contains(t, err.Error(), tc.msg)
			}
		})
	}
}

// TestLowerVectorConfigs: the lowered configurations of the staged i32
// pipeline (002 L4662-4676), stage by stage.
func TestLowerVectorConfigs(t *testing.T) {
	p := veProgram(t, "i32", strings.Replace(veBranch, "vector_intra_slice_branch", "vector_branch", 1),
		veOp("vector_fxp", "AddFxp, 100"), veToFp, veTrim, veOp("vector_fp_unary", "Sigmoid"), vePad, veToFxp, veOp("vector_clip", "Max, 0"))
	require.NoError(t, Lower(Default(), p))
	st := p.Ops[1].Stages
	assert.Equal(t, kernel.VectorOpConfig{Op: "AddFxp", ALU: kernel.ALUFxpAdd, DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8,
		Slots: []kernel.VeSlotConfig{{Guard: kernel.GuardAlways, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeConst, Bits: 100}}}}}, *st[5].Config.VectorOp)
	assert.Equal(t, kernel.VectorConvertConfig{From: dtype.I32, To: dtype.F32, IntWidth: 31}, *st[6].Config.VectorConvert)
	assert.Equal(t, kernel.VectorWayConfig{Kind: kernel.WayTrim, InPackets: 1, InLanes: 8, OutPackets: 1, OutLanes: 4}, *st[7].Config.VectorWay)
	assert.Equal(t, kernel.VectorOpConfig{Op: "Sigmoid", ALU: kernel.ALUFpFpu, DType: dtype.F32, Arity: 1, Mode: "Mode0", Lanes: 4}, *st[8].Config.VectorOp)
	assert.Equal(t, kernel.VectorWayConfig{Kind: kernel.WayPad, InPackets: 1, InLanes: 4, OutPackets: 1, OutLanes: 8}, *st[9].Config.VectorWay)
	assert.Equal(t, kernel.VectorConvertConfig{From: dtype.F32, To: dtype.I32, IntWidth: 31}, *st[10].Config.VectorConvert)
	assert.Equal(t, kernel.VectorFinalConfig{DType: dtype.I32, Lanes: 8, Packets: 1}, *st[12].Config.VectorFinal)
}

// TestDeriveVectorWay: the manual's Narrow and Widen shape semantics
// (002 L4855-4871, L4928-4946). The manual declares S = 64 and pads it to
// 16 (`S # 16`), which no mapping can (padding is to a larger size): S =
// 13 here.
func TestDeriveVectorWay(t *testing.T) {
	ax := vax(t, "S=13, A=512")
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	s := func(time, packet string) VectorStream {
		return VectorStream{DType: dtype.I32, Time: m(time), Packet: m(packet)}
	}
	for _, tc := range []struct {
		name          string
		kind          kernel.StageKind
		in            VectorStream
		time2, packet string
		want          kernel.VectorWayConfig
		rule          string
	}{
		{"split (002 L4855-4863)", kernel.StVectorSplit, s("S # 16 % 4", "A % 8"), "S # 16 % 4, A / 4 % 2", "A % 4",
			kernel.VectorWayConfig{Kind: kernel.WaySplit, InPackets: 4, InLanes: 8, OutPackets: 8, OutLanes: 4}, ""},
		{"trim (002 L4864-4871)", kernel.StVectorTrim, s("1", "A % 2 # 8"), "", "A % 2 # 4",
			kernel.VectorWayConfig{Kind: kernel.WayTrim, InPackets: 1, InLanes: 8, OutPackets: 1, OutLanes: 4}, ""},
		{"concat (002 L4928-4937)", kernel.StVectorConcat, s("A / 4 % 2", "A % 4"), "1", "A % 8",
			kernel.VectorWayConfig{Kind: kernel.WayConcat, InPackets: 2, InLanes: 4, OutPackets: 1, OutLanes: 8}, ""},
		{"pad (002 L4938-4946)", kernel.StVectorPad, s("1", "A % 2 # 4"), "", "A % 2 # 8",
			kernel.VectorWayConfig{Kind: kernel.WayPad, InPackets: 1, InLanes: 4, OutPackets: 1, OutLanes: 8}, ""},
		{"trim drops data", kernel.StVectorTrim, s("1", "A % 8"), "", "A % 4", kernel.VectorWayConfig{}, "VE-R8"},
		{"split Time2 not [T, P / 2]", kernel.StVectorSplit, s("S # 16 % 4", "A % 8"), "A / 4 % 2, S # 16 % 4", "A % 4", kernel.VectorWayConfig{}, "VE-R8"},
		{"split Packet2 not P % 4", kernel.StVectorSplit, s("1", "A % 8"), "A % 2", "A / 2 % 4", kernel.VectorWayConfig{}, "VE-R8"},
		{"concat Packet2", kernel.StVectorConcat, s("A / 4 % 2", "A % 4"), "1", "A % 4, A / 4 % 2", kernel.VectorWayConfig{}, "VE-R9"},
		{"pad of another packet", kernel.StVectorPad, s("1", "A % 2 # 4"), "", "A % 4 # 8", kernel.VectorWayConfig{}, "VE-R9"},
		{"split of a Way4 packet", kernel.StVectorSplit, s("1", "A % 4"), "A % 2", "A % 2", kernel.VectorWayConfig{}, "VE-R6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var t2 *mapping.Expr
			if tc.time2 != "" {
				t2 = m(tc.time2)
			}
			got, err := DeriveVectorWay(Default(), tc.kind, tc.in, t2, m(tc.packet))
			if tc.rule != "" {
				var v *Violation
				require.True(t, errors.As(err, &v), "%v", err)
				assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestDeriveVectorReduce: the intra-slice reduce examples (002
// L5404-5543) and the reduce rules.
func TestDeriveVectorReduce(t *testing.T) {
	for _, tc := range []struct {
		name, axes, dt, time, packet, op, otime, opacket string
		want                                             kernel.VectorReduceConfig
		rule                                             string
	}{
		{"VEC-EX-24 time (002 L5404-5426)", "A=8, R=16", "i32", "R", "A % 2 # 4", "IntraSliceReduceOpI32::AddSat", "1", "A % 2 # 4",
			kernel.VectorReduceConfig{Op: "AddSat", DType: dtype.I32, Axis: "R", Time: []kernel.VeReduceDigit{{Size: 16, Reduce: true}}, Lanes: 4, InPackets: 16, OutPackets: 1, Slots: 1, Span: 16}, ""},
		{"VEC-EX-25 packet (002 L5427-5449)", "A=8, R=4", "f32", "A % 2", "R", "Add", "A % 2", "1 # 4",
			kernel.VectorReduceConfig{Op: "Add", DType: dtype.F32, Axis: "R", PacketReduce: true, Time: []kernel.VeReduceDigit{{Size: 2}}, Lanes: 4, InPackets: 2, OutPackets: 2, Slots: 1, Span: 1}, ""},
		{"VEC-EX-26 time and packet (002 L5450-5473)", "A=8, R=16", "f32", "R / 4", "R % 4", "Max", "1", "1 # 4",
			kernel.VectorReduceConfig{Op: "Max", DType: dtype.F32, Axis: "R", PacketReduce: true, Time: []kernel.VeReduceDigit{{Size: 4, Reduce: true}}, Lanes: 4, InPackets: 4, OutPackets: 1, Slots: 1, Span: 4}, ""},
		{"slot example (002 L5502-5517)", "A=2, B=4, R=4", "i32", "R / 2, A % 2, R % 2", "B", "Min", "A % 2", "B",
			kernel.VectorReduceConfig{Op: "Min", DType: dtype.I32, Axis: "R", Time: []kernel.VeReduceDigit{{Size: 2, Reduce: true}, {Size: 2}, {Size: 2, Reduce: true}}, Lanes: 4, InPackets: 8, OutPackets: 2, Slots: 2, Span: 4}, ""},
		{"8 slots (002 L5519)", "A=2, B=4, C=4, R=16", "i32", "R, A % 2, B % 4", "C", "AddSat", "A % 2, B % 4", "C",
			kernel.VectorReduceConfig{Op: "AddSat", DType: dtype.I32, Axis: "R", Time: []kernel.VeReduceDigit{{Size: 16, Reduce: true}, {Size: 2}, {Size: 4}}, Lanes: 4, InPackets: 128, OutPackets: 8, Slots: 8, Span: 16}, ""},
		{"non-reduce outside the reduce takes no slot", "A=16, R=16", "f32", "A, R / 4", "R % 4", "Add", "A", "1 # 4",
			kernel.VectorReduceConfig{Op: "Add", DType: dtype.F32, Axis: "R", PacketReduce: true, Time: []kernel.VeReduceDigit{{Size: 16}, {Size: 4, Reduce: true}}, Lanes: 4, InPackets: 64, OutPackets: 16, Slots: 1, Span: 4}, ""},
		{"VEC-EX-28 12 slots (002 L5522-5543)", "A=6, B=8, R=16", "i32", "R, A % 3, B % 4", "B / 4 # 4", "AddSat", "A % 3, B % 4", "B / 4 # 4", kernel.VectorReduceConfig{}, "ISR-R4"},
		{"OTime keeps R", "A=8, R=16", "i32", "R", "A % 2 # 4", "AddSat", "R", "A % 2 # 4", kernel.VectorReduceConfig{}, "ISR-R3"},
		{"OTime reorders", "A=2, B=4, R=4", "i32", "A % 2, B % 4, R", "1 # 4", "AddSat", "B % 4, A % 2", "1 # 4", kernel.VectorReduceConfig{}, "ISR-R3"},
		{"packet mixes R with another axis", "A=2, R=2", "f32", "1", "A, R", "Add", "1", "1 # 4", kernel.VectorReduceConfig{}, "ISR-R3"},
		{"AddSat on f32", "A=8, R=16", "f32", "R", "A % 2 # 4", "AddSat", "1", "A % 2 # 4", kernel.VectorReduceConfig{}, "ISR-R2"},
		{"Add on i32", "A=8, R=16", "i32", "R", "A % 2 # 4", "Add", "1", "A % 2 # 4", kernel.VectorReduceConfig{}, "ISR-R2"},
		{"Way8 packet", "A=8, R=16", "i32", "R", "A % 2 # 8", "AddSat", "1", "A % 2 # 8", kernel.VectorReduceConfig{}, "ISR-R1"},
		{"VEC-EX-27 padded R (002 L5474-5497)", "R=13", "i32", "R # 32 / 4 % 2", "R # 32 % 4", "Min", "1", "1 # 4", kernel.VectorReduceConfig{}, "nm"},
		{"VCG-EX-11 time only R = 12 (002 L5816-5836)", "R=12, A=4", "f32", "R # 16", "A", "Add", "1", "A", kernel.VectorReduceConfig{}, "nm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ax := vax(t, tc.axes)
			m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
			d, err := dtype.Parse(tc.dt)
			require.NoError(t, err)
			in := VectorStream{DType: d, Time: m(tc.time), Packet: m(tc.packet)}
			if tc.name == "VEC-EX-27 padded R (002 L5474-5497)" {
				in.Slice = m("R # 32 / 8")
			}
			got, err := DeriveVectorReduce(Default(), VectorReduceInput{Stream: in,
				Axis: "R", Op: tc.op, OTime: m(tc.otime), OPacket: m(tc.opacket)})
			switch tc.rule {
			case "":
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			case "nm":
				assert.ErrorIs(t, err, ErrNotModelled)
			default:
				var v *Violation
				require.True(t, errors.As(err, &v), "%v", err)
				assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
			}
		})
	}
	// The manual's rejection text (002 L5541).
	ax := vax(t, "A=6, B=8, R=16")
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	_, err := DeriveVectorReduce(Default(), VectorReduceInput{Stream: VectorStream{DType: dtype.I32, Time: m("R, A % 3, B % 4"), Packet: m("B / 4 # 4")},
		Axis: "R", Op: "AddSat", OTime: m("A % 3, B % 4"), OPacket: m("B / 4 # 4")})
	assert.ErrorContains(t, err, "12 accumulator slots required, but only 8 are available")
}

// TestDeriveVRFReadBroadcastLanes: a VRF Element of broadcast lanes serves
// a packet whose axis the VRF lacks (docs/spec-decisions.md "VRF operands
// broadcast over lanes"), and only then.
func TestDeriveVRFReadBroadcastLanes(t *testing.T) {
	ax := vax(t, "S=8, C=64")
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	c, err := DeriveVRFRead(Default(), VRFReadInput{Tensor: "m", DType: dtype.F32, Element: m("S % 8, 8"), Time: m("S % 8, C / 4"), Packet: m("C % 4")})
	require.NoError(t, err)
	assert.Equal(t, []kernel.SeqEntry{{Size: 8, Stride: 8, Term: "S"}, {Size: 16, Stride: 0, Term: "C / 4"}}, c.Entries)
	assert.Empty(t, vrfOracle(ax, m("S % 8, 8"), m("S % 8, C / 4"), m("C % 4"), c))
	_, err = DeriveVRFRead(Default(), VRFReadInput{Tensor: "m", DType: dtype.F32, Element: m("C % 8, 8"), Time: m("C / 8 % 8"), Packet: m("C % 8")})
	var v *Violation
	require.True(t, errors.As(err, &v), "the VRF holds C: a broadcast lane cannot stand for it: %v", err)
	assert.Equal(t, "VE-R15", v.Rule.ID)
}

// vePairProgram is veProgram's stream with the group axis I in Time (the
// manual's pair examples, 002 L5173-5248: Time m![I], Packet m![A % 2 # 8]).
func vePairProgram(t *testing.T, dt string, stages ...string) *kernel.Program {
	t.Helper()
	src := fmt.Sprintf(`{"name": "ve", "axes": "A=512, I=2", "chips": 1,
 "tensors": [
  {"name": "x_dm", "mem": "dm", "dtype": "%[1]s", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 2", "element": "I, A %% 2", "addr": 0},
  {"name": "y_dm", "mem": "dm", "dtype": "%[2]s", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 2", "element": "A %% 2", "addr": 128}],
 "ops": [
  {"context": "main", "kind": "chain", "stages": [{"kind": "begin", "tensor": "x_dm"}, {"kind": "fetch", "dtype": "%[1]s", "time": "I", "packet": "A %% 2 # 8"},
   {"kind": "collect", "time": "I", "packet": "A %% 2 # 8"}, {"kind": "vector_init"},
   %[3]s,
   {"kind": "vector_final"}, {"kind": "commit", "tensor": "y_dm"}]}]}`, dt, outType(dt, stages), strings.Join(stages, ",\n   "))
	return parseKernel(t, src)
}

// TestLowerVectorPair: two-group mode's structure (002 L4749,
// L5154-5249; VE-R11 and VE-R12 of vector-and-kernels.md §2.19).
func TestLowerVectorPair(t *testing.T) {
	const unzip = `{"kind": "vector_intra_slice_unzip", "axis": "I", "param": "1 # 2", "time": "1"}`
	for _, tc := range []struct {
		name   string
		dt     string
		stages []string
		rule   string
		msg    string
	}{
		{"VEC-EX-14 pair add (002 L5173-5181)", "i32", []string{unzip, veOp("vector_clip_zip", "AddFxp")}, "", ""},
		{"VEC-EX-15 one side (002 L5190-5199)", "i32", []string{unzip, veOp("vector_fxp", "MulInt, 10, ()"), veOp("vector_clip_zip", "AddFxp")}, "", ""},
		{"VEC-EX-17 asymmetric (002 L5237-5248)", "f32", []string{unzip, veTrim, veOp("vector_fp_unary", "Exp, true, false"), veOp("vector_fp_zip", "MulF(Mul0)"), vePad}, "", ""},
		{"VEC-EX-18 Mode10 zip (002 L5142-5152)", "f32", []string{unzip, veTrim, veOp("vector_fp_zip", "SubF, Mode10"), vePad}, "", ""},
		{"common stages and a VRF-free fp op on both", "i32", []string{unzip, veToFp, `{"kind": "vector_split", "time": "A % 2 # 8 / 4", "packet": "A % 2 # 8 % 4"}`,
			veOp("vector_fp_binary", "AddF, 1.0f32, 2.0f32"), `{"kind": "vector_concat", "time": "1", "packet": "A % 2 # 8"}`, veToFxp, veOp("vector_clip_zip", "Max")}, "", ""},
		{"the pair shares its ALUs (002 L5205)", "i32", []string{unzip, veOp("vector_fxp", "MulInt, 10, ()"), veOp("vector_fxp_zip", "MulInt")}, "VE-R5", "FxpMul is already in use"},
		{"stash while paired (002 L5204)", "i32", []string{unzip, veStash}, "VE-R11", "two-group mode"},
		{"filter after zip (002 L5205)", "i32", []string{unzip, veOp("vector_clip_zip", "AddFxp"), `{"kind": "vector_filter", "time": "1", "param": "0"}`}, "VE-R11", "after a _zip"},
		{"final while paired", "i32", []string{unzip, veOp("vector_fxp", "MulInt, 10, ()")}, "VE-R11", "merge them"},
		{"zip without unzip", "i32", []string{strings.Replace(veBranch, "vector_intra_slice_branch", "vector_branch", 1), veOp("vector_clip_zip", "AddFxp")}, "VE-R11", "outside two-group mode"},
		{"one operand while paired", "i32", []string{unzip, veOp("vector_fxp", "MulInt, 10"), veOp("vector_clip_zip", "AddFxp")}, "VE-R11", "one argument per group"},
		{"unzip after branch (002 L4749)", "i32", []string{strings.Replace(veBranch, "vector_intra_slice_branch", "vector_branch", 1), unzip}, "VE-R3", ""},
		{"unzip over a Time without I", "i32", []string{`{"kind": "vector_intra_slice_unzip", "axis": "A", "param": "1 # 2", "time": "1"}`}, "VE-R11", "want one loop of 2"},
		{"SplitTime keeps I", "i32", []string{`{"kind": "vector_intra_slice_unzip", "axis": "I", "param": "1 # 2", "time": "I"}`}, "VE-R11", "SplitTime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := vePairProgram(t, tc.dt, tc.stages...)
			err := Lower(Default(), p)
			if tc.rule == "" {
				require.NoError(t, err)
				return
			}
			var v *Violation
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	// A per-group call outside two-group mode.
	p := veProgram(t, "i32", strings.Replace(veBranch, "vector_intra_slice_branch", "vector_branch", 1), veOp("vector_fxp", "MulInt, 10, ()"))
	err := Lower(Default(), p)
	var v *Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "VE-R11", v.Rule.ID)
}

// TestVectorExecPair: unzip sorts the packets by group, a per-group op
// treats each group with its own operand, a zip merges them (002
// L5154-5249).
func TestVectorExecPair(t *testing.T) {
	// Time [I, B] with I outer: packets (I=0, B=0), (0, 1), (1, 0), (1, 1).
	u := &kernel.VectorUnzipConfig{Axis: "I", Lanes: 8, InPackets: 4, Time: []kernel.VeReduceDigit{{Size: 2}, {Size: 2, Reduce: true}}}
	// Time [B, I]: I inner, as an interleaved fetch alternates its tensors.
	in := i32Packet(0, 0, 0, 0, 0, 0, 0, 0, 10, 10, 10, 10, 10, 10, 10, 10, 1, 1, 1, 1, 1, 1, 1, 1, 11, 11, 11, 11, 11, 11, 11, 11)
	out := make([]byte, len(in))
	require.NoError(t, VectorUnzipApply(u, VEStream{Data: in, Lanes: 8}, out))
	assert.Equal(t, []int32{0, 1, 10, 11}, []int32{i32s(out)[0], i32s(out)[8], i32s(out)[16], i32s(out)[24]}, "group 0: B = 0, 1; group 1: B = 0, 1")
	// vector_fxp(MulInt, 10, ()): group 0 only.
	c := &kernel.VectorOpConfig{Op: "MulInt", DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8,
		Pair: &kernel.VePairConfig{Apply: [2]bool{true, false}, Slots: [2][]kernel.VeSlotConfig{{constSlot(-1, 10)}, nil}}}
	res := make([]byte, len(out))
	require.NoError(t, VectorOpApply(kernel.StVectorFxp, c, VEStream{Data: out, Lanes: 8}, VeSources{}, res))
	assert.Equal(t, []int32{0, 10, 10, 11}, []int32{i32s(res)[0], i32s(res)[8], i32s(res)[16], i32s(res)[24]})
	// vector_clip_zip(AddFxp): 10·g0 + g1 (VEC-EX-15: g0 = 1, g1 = 11 → 21).
	z := &kernel.VectorOpConfig{Op: "AddFxp", DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8, Zip: true}
	zout := make([]byte, len(res)/2)
	require.NoError(t, VectorOpApply(kernel.StVectorClipZip, z, VEStream{Data: res, Lanes: 8}, VeSources{}, zout))
	assert.Equal(t, []int32{10, 21}, []int32{i32s(zout)[0], i32s(zout)[8]})
	// Mode10: g1 − g0 (VEC-EX-18).
	s := &kernel.VectorOpConfig{Op: "SubFxp", DType: dtype.I32, Arity: 2, Mode: "Mode10", Lanes: 8, Zip: true}
	require.NoError(t, VectorOpApply(kernel.StVectorFxpZip, s, VEStream{Data: out, Lanes: 8}, VeSources{}, zout))
	assert.Equal(t, []int32{10, 10}, []int32{i32s(zout)[0], i32s(zout)[8]})
	// VEC-EX-17: exp(g0)·g1 with g0 = 0, g1 = 3 → 3.
	ex := &kernel.VectorOpConfig{Op: "Exp", DType: dtype.F32, Arity: 1, Mode: "Mode0", Lanes: 4, Pair: &kernel.VePairConfig{Apply: [2]bool{true, false}}}
	pin := f32Packet(0, 0, 0, 0, 3, 3, 3, 3)
	pout := make([]byte, len(pin))
	require.NoError(t, VectorOpApply(kernel.StVectorFpUnary, ex, VEStream{Data: pin, Lanes: 4}, VeSources{}, pout))
	m := &kernel.VectorOpConfig{Op: "MulF(Mul0)", DType: dtype.F32, Arity: 2, Mode: "Mode01", Lanes: 4, Zip: true}
	mout := make([]byte, 16)
	require.NoError(t, VectorOpApply(kernel.StVectorFpZip, m, VEStream{Data: pout, Lanes: 4}, VeSources{}, mout))
	assert.Equal(t, []float32{3, 3, 3, 3}, f32s(mout))
}
