package kernel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

// TestVeOpTable: every op of the manual's tables, with its ALU (002
// L4806-4836, L4878-4904, L4956-4972) and types.
func TestVeOpTable(t *testing.T) {
	for _, tc := range []struct {
		kind     StageKind
		n        int
		alus     []VeALU
		i32, f32 int
	}{
		{StVectorLogic, 6, []VeALU{ALULogicAnd, ALULogicOr, ALULogicXor, ALULogicLshift, ALULogicRshift}, 6, 3}, // 002 L4805-4820
		{StVectorFxp, 11, []VeALU{ALUFxpAdd, ALUFxpLshift, ALUFxpMul, ALUFxpRshift}, 11, 0},                     // 002 L4823-4836
		{StVectorFpUnary, 9, []VeALU{ALUFpExp, ALUFpFpu}, 0, 9},                                                 // 002 L4878-4889
		{StVectorFpBinary, 7, []VeALU{ALUFpFma, ALUFpMul0, ALUFpMul1, ALUFpFpu}, 0, 7},                          // 002 L4890-4899
		{StVectorFpTernary, 2, []VeALU{ALUFpFma}, 0, 2},                                                         // 002 L4900-4904
		{StVectorClip, 7, []VeALU{ALUClipMin, ALUClipMax, ALUClipAdd}, 6, 5},                                    // 002 L4955-4972
		{StVectorReduce, 4, []VeALU{""}, 3, 3},                                                                  // 002 L5391-5402
		{StVectorFpDiv, 1, []VeALU{""}, 0, 1},                                                                   // 002 L4916-4918
	} {
		ops := VeOps(tc.kind)
		assert.Len(t, ops, tc.n, tc.kind)
		alus := map[VeALU]bool{}
		i32, f32 := 0, 0
		for _, o := range ops {
			alus[o.ALU] = true
			if o.Takes(dtype.I32) {
				i32++
			}
			if o.Takes(dtype.F32) {
				f32++
			}
			got, ok := LookupVeOp(tc.kind, o.Name)
			require.True(t, ok)
			assert.Equal(t, o, got)
			assert.NotEmpty(t, o.Cite)
		}
		for _, a := range tc.alus {
			assert.True(t, alus[a], "%s uses %s", tc.kind, a)
		}
		assert.Len(t, alus, len(tc.alus), tc.kind)
		assert.Equal(t, tc.i32, i32, "%s i32 ops", tc.kind)
		assert.Equal(t, tc.f32, f32, "%s f32 ops", tc.kind)
	}
	// The manual's exp(sqrt(((x + 1) * 2) * 3)) uses five distinct ALUs
	// (002 L4905-4906).
	seen := map[VeALU]bool{}
	for _, o := range []struct {
		k  StageKind
		op string
	}{{StVectorFpBinary, "AddF"}, {StVectorFpBinary, "MulF(Mul0)"}, {StVectorFpBinary, "MulF(Mul1)"}, {StVectorFpUnary, "Sqrt"}, {StVectorFpUnary, "Exp"}} {
		info, ok := LookupVeOp(o.k, o.op)
		require.True(t, ok)
		assert.False(t, seen[info.ALU], "%s", info.ALU)
		seen[info.ALU] = true
	}
	assert.Len(t, seen, 5, "FpFma, FpMul0, FpMul1, FpFpu, FpExp (002 L4877)")
}

// TestParseVeCall: the manual's operand forms (002 L5052-5133) read to
// one canonical Param and print as Rust.
func TestParseVeCall(t *testing.T) {
	for _, tc := range []struct {
		kind          StageKind
		param, tensor string
		want          VeCall
		canon         string
		rust          string
		d             dtype.DType
		cite          string
	}{
		{StVectorFxp, "AddFxp, 1", "", VeCall{Op: "AddFxp", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeConst, Text: "1"}}}}},
			"AddFxp, 1", "FxpBinaryOp::AddFxp, 1", dtype.I32, "002 L214"},
		{StVectorFxp, "FxpBinaryOp::MulInt", "rhs_vrf", VeCall{Op: "MulInt", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeVRF, Tensor: "rhs_vrf"}}}}},
			"MulInt", "FxpBinaryOp::MulInt, &rhs_vrf", dtype.I32, "002 L295"},
		{StVectorFxp, "FxpBinaryOp::AddFxp, VeRhs::vrf(&vrf)", "vrf", VeCall{Op: "AddFxp", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeVRF, Tensor: "vrf"}}}}},
			"AddFxp", "FxpBinaryOp::AddFxp, &vrf", dtype.I32, "002 L5079"},
		{StVectorFxp, "FxpBinaryOp::SubFxp, BinaryArgMode::Mode10, 7", "", VeCall{Op: "SubFxp", Mode: "Mode10", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeConst, Text: "7"}}}}},
			"SubFxp, Mode10, 7", "FxpBinaryOp::SubFxp, BinaryArgMode::Mode10, 7", dtype.I32, "002 L5131"},
		{StVectorClip, "ClipBinaryOpF32::Max, Stash", "", VeCall{Op: "Max", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeStash}}}}},
			"Max, Stash", "ClipBinaryOpF32::Max, Stash", dtype.F32, "002 L5006"},
		{StVectorClip, "ClipBinaryOpF32::Max, 0.0f32", "", VeCall{Op: "Max", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeConst, Text: "0.0f32"}}}}},
			"Max, 0.0f32", "ClipBinaryOpF32::Max, 0.0f32", dtype.F32, "002 L4604"},
		{StVectorFpBinary, "FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32", "", VeCall{Op: "MulF(Mul0)", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeConst, Text: "2.0f32"}}}}},
			"MulF(Mul0), 2.0f32", "FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32", dtype.F32, "002 L5004"},
		{StVectorFpUnary, "FpUnaryOp::Sigmoid", "", VeCall{Op: "Sigmoid"}, "Sigmoid", "FpUnaryOp::Sigmoid", dtype.F32, "002 L4671"},
		{StVectorFpTernary, "FmaF, (2.0f32, 3.0f32)", "", VeCall{Op: "FmaF", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeConst, Text: "2.0f32"}, {Kind: VeConst, Text: "3.0f32"}}}}},
			"FmaF, (2.0f32, 3.0f32)", "FpTernaryOp::FmaF, (2.0f32, 3.0f32)", dtype.F32, "002 L5059"},
		{StVectorFpTernary, "FmaF, TernaryArgMode::Mode120, (&w, 1.5)", "w", VeCall{Op: "FmaF", Mode: "Mode120", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeVRF, Tensor: "w"}, {Kind: VeConst, Text: "1.5"}}}}},
			"FmaF, Mode120, (&w, 1.5)", "FpTernaryOp::FmaF, TernaryArgMode::Mode120, (&w, 1.5)", dtype.F32, "002 L5106"},
		{StVectorFxp, "MulInt, VeBranchOperand::group(VeRhs::constant(10), GroupId::Zero)", "", VeCall{Op: "MulInt", Slots: []VeSlot{{GuardGroup0, []VeOperand{{Kind: VeConst, Text: "10"}}}}},
			"MulInt, group(10, GroupId::Zero)", "FxpBinaryOp::MulInt, VeBranchOperand::group(VeRhs::constant(10), GroupId::Zero)", dtype.I32, "002 L5062"},
		{StVectorFxp, "AddFxp, [VeBranchOperand::group(100, GroupId::Zero), group(Stash, 1)]", "", VeCall{Op: "AddFxp", Slots: []VeSlot{
			{GuardGroup0, []VeOperand{{Kind: VeConst, Text: "100"}}}, {GuardGroup1, []VeOperand{{Kind: VeStash}}}}},
			"AddFxp, [group(100, GroupId::Zero), group(Stash, GroupId::One)]",
			"FxpBinaryOp::AddFxp, [VeBranchOperand::group(VeRhs::constant(100), GroupId::Zero), VeBranchOperand::group(VeRhs::Stash, GroupId::One)]", dtype.I32, "002 L5060-5062"},
		{StVectorLogic, "BitAnd, VeBranchOperand::always(0x7fffffff)", "", VeCall{Op: "BitAnd", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeConst, Text: "0x7fffffff"}}}}},
			"BitAnd, 0x7fffffff", "LogicBinaryOpF32::BitAnd, 0x7fffffff", dtype.F32, "002 L4818, L5061"},
		{StVectorFxp, "FxpBinaryOp::MulInt, 10, ()", "", VeCall{Op: "MulInt", Pair: true, Apply: [2]bool{true, false},
			Groups: [2][]VeSlot{{{GuardAlways, []VeOperand{{Kind: VeConst, Text: "10"}}}}, nil}},
			"MulInt, 10, ()", "FxpBinaryOp::MulInt, 10, ()", dtype.I32, "002 L5195"},
		{StVectorFpUnary, "FpUnaryOp::Exp, true, false", "", VeCall{Op: "Exp", Pair: true, Apply: [2]bool{true, false}},
			"Exp, true, false", "FpUnaryOp::Exp, true, false", dtype.F32, "002 L5244"},
		{StVectorFpBinary, "AddF, (), &w", "w", VeCall{Op: "AddF", Pair: true, Apply: [2]bool{false, true},
			Groups: [2][]VeSlot{nil, {{GuardAlways, []VeOperand{{Kind: VeVRF, Tensor: "w"}}}}}},
			"AddF, (), &w", "FpBinaryOp::AddF, (), &w", dtype.F32, "002 L5164-5165"},
		{StVectorFpDiv, "FpDivBinaryOp::DivF, &rms", "rms", VeCall{Op: "DivF", Slots: []VeSlot{{GuardAlways, []VeOperand{{Kind: VeVRF, Tensor: "rms"}}}}},
			"DivF", "FpDivBinaryOp::DivF, &rms", dtype.F32, "002 L4918"},
	} {
		t.Run(tc.param, func(t *testing.T) {
			got, err := ParseVeCall(tc.kind, tc.param, tc.tensor)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, tc.cite)
			assert.Equal(t, tc.canon, got.Param())
			again, err := ParseVeCall(tc.kind, got.Param(), tc.tensor)
			require.NoError(t, err)
			assert.Equal(t, got, again, "Param reads back")
			assert.Equal(t, tc.rust, got.Rust(tc.kind, tc.d))
			rust, err := ParseVeCall(tc.kind, got.Rust(tc.kind, tc.d), tc.tensor)
			require.NoError(t, err)
			assert.Equal(t, got, rust, "Rust reads back")
			assert.Equal(t, tc.tensor, got.VRF())
		})
	}
	for _, tc := range []struct {
		kind          StageKind
		param, tensor string
		err           string
	}{
		{StVectorFxp, "AddF, 1", "", `column 1: unknown FxpBinaryOp "AddF"`},
		{StVectorFxp, "  Nope", "", `column 3: unknown FxpBinaryOp "Nope"`},
		{StVectorFxp, "AddFxp", "", "missing operand"},
		{StVectorFxp, "AddFxp,x", "", `column 8: operand "x" is not a constant`},
		{StVectorFxp, "AddFxp, 1, 2, 3", "", "column 12: one operand argument expected"},
		{StVectorFxp, "AddFxp, (), ()", "", "applies to neither group"},
		{StVectorFpUnary, "Exp, false, false", "", "applies to neither group"},
		{StVectorFpUnary, "Exp, yes, no", "", "takes true or false"},
		{StVectorFxp, "AddFxp, Mode012, 1", "", "Mode012 is not a binary argument mode"},
		{StVectorFpUnary, "Exp, 1", "", "a unary op takes no operand"},
		{StVectorFpTernary, "FmaF, 1", "", "takes an (operand0, operand1) pair"},
		{StVectorFpTernary, "FmaF, (1, 2, 3)", "", "3 operands, a ternary op takes 2"},
		{StVectorFxp, "MulInt, 3", "rhs_vrf", "either a constant or a VRF tensor"},
		{StVectorFxp, "MulInt, &other", "rhs_vrf", `VRF operand &other, but the stage's tensor is "rhs_vrf"`},
		{StVectorFxp, "MulInt, &v", "", "the stage names no tensor"},
		{StVectorFxp, "MulInt, group(1, GroupId::Two)", "", `"GroupId::Two" is not a GroupId`},
		{StVectorFxp, "MulInt, (1", "", "unclosed bracket"},
		{StVectorFxp, "MulInt, 1)", "", "unbalanced"},
		{StVectorFxp, "MulInt, []", "", "an empty operand array"},
		{StVectorBranch, "Unconditional", "", "takes no op"},
		{StVectorFxp, "", "", "missing op"},
	} {
		_, err := ParseVeCall(tc.kind, tc.param, tc.tensor)
		require.Error(t, err, tc.param)
		assert.Contains(t, err.Error(), tc.err, tc.param)
	}
}

// TestParseBranch: the branch modes with their arguments (002
// L4796-4802), in the manual's, the library's and the short spellings.
func TestParseBranch(t *testing.T) {
	for in, want := range map[string]BranchSpec{
		"Unconditional": {Mode: BranchUnconditional},
		"BranchMode::AxisToggle { axis: Ident::I }": {Mode: BranchAxisToggle, Axis: "I"},
		"AxisToggle { axis: A }":                    {Mode: BranchAxisToggle, Axis: "A"},
		"Comparison([Less(0), Equal(5), Greater(100), True])": {Mode: BranchComparison, Cmps: []InputCmp{
			{"Less", "0"}, {"Equal", "5"}, {"Greater", "100"}, {"True", ""}}},
		"BranchMode::Comparison([InputCmp::I32(InputCmpI32::Less { boundary: 0 }), InputCmp::I32(InputCmpI32::GreaterUnsigned { boundary: -1 }), InputCmpI32::False, False])": {
			Mode: BranchComparison, Cmps: []InputCmp{{"Less", "0"}, {"GreaterUnsigned", "-1"}, {"False", ""}, {"False", ""}}},
		"ValidCount": {Mode: BranchValidCount},
		"Vrf":        {Mode: BranchVrf},
	} {
		got, err := ParseBranch(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		back, err := ParseBranch(got.Param())
		require.NoError(t, err)
		assert.Equal(t, got, back, "Param reads back")
		rust, err := ParseBranch(got.Rust(dtype.I32))
		require.NoError(t, err)
		assert.Equal(t, got, rust, "Rust reads back: %s", got.Rust(dtype.I32))
	}
	assert.Equal(t, "BranchMode::Comparison([InputCmp::F32(InputCmpF32::Less { boundary: 0.5 }), InputCmp::F32(InputCmpF32::True), InputCmp::F32(InputCmpF32::True), InputCmp::F32(InputCmpF32::True)])",
		BranchSpec{Mode: BranchComparison, Cmps: []InputCmp{{"Less", "0.5"}, {"True", ""}, {"True", ""}, {"True", ""}}}.Rust(dtype.F32))
	for _, in := range []string{"Comparison([Less(0), True, True])", "Comparison([Sometimes, True, True, True])",
		"Comparison([Less, True, True, True])", "Comparison([True(1), True, True, True])", "Comparison(Less(0))",
		"AxisToggle", "AxisToggle { axis: }", "Comparison([Less(x), True, True, True])"} {
		_, err := ParseBranch(in)
		assert.Error(t, err, in)
	}
}

func TestParseVectorArgs(t *testing.T) {
	for in, want := range map[string]int{"31": 31, " 0 ": 0, "31u32": 31} {
		got, err := ParseIntWidth(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ParseIntWidth("x")
	assert.Error(t, err)
	for in, want := range map[string]int{"ValidBranchIds::ValidGroup { id: GroupId::Zero }": 0, "GroupId::One": 1, "0": 0, "One": 1} {
		got, err := ParseFilterGroup(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		back, err := ParseFilterGroup(FilterGroupRust(got))
		require.NoError(t, err)
		assert.Equal(t, got, back)
	}
	_, err = ParseFilterGroup("ValidAlways")
	assert.Error(t, err)
	assert.Equal(t, "Max", CanonicalReduceOp("IntraSliceReduceOpF32::Max"))
	assert.Equal(t, "IntraSliceReduceOpI32::AddSat", RustVeOp(StVectorReduce, dtype.I32, "AddSat"))
}

// FuzzParseVeCall: any Param either fails with an error or reads to a call
// whose canonical Param and Rust forms read back to the same call.
func FuzzParseVeCall(f *testing.F) {
	for _, s := range []string{"AddFxp, 1", "MulInt", "SubFxp, Mode10, 7", "Max, Stash", "FmaF, Mode120, (&w, 1.5)",
		"AddFxp, [group(100, GroupId::Zero), group(Stash, 1)]", "MulF(Mul0), 2.0f32", "Exp", "DivF, &w", "BitXor, -1"} {
		f.Add(s)
	}
	kinds := []StageKind{StVectorLogic, StVectorFxp, StVectorFpUnary, StVectorFpBinary, StVectorFpTernary, StVectorFpDiv, StVectorClip}
	f.Fuzz(func(t *testing.T, param string) {
		for _, k := range kinds {
			for _, tensor := range []string{"", "w"} {
				c, err := ParseVeCall(k, param, tensor)
				if err != nil {
					continue
				}
				back, err := ParseVeCall(k, c.Param(), tensor)
				if err != nil {
					t.Fatalf("%s %q: Param %q does not read back: %v", k, param, c.Param(), err)
				}
				assert.Equal(t, c, back)
				rust, err := ParseVeCall(k, c.Rust(k, dtype.F32), tensor)
				if err != nil {
					t.Fatalf("%s %q: Rust %q does not read back: %v", k, param, c.Rust(k, dtype.F32), err)
				}
				assert.Equal(t, c, rust)
			}
		}
	})
}

// FuzzParseBranch: a branch mode reads back from its Param and Rust forms.
func FuzzParseBranch(f *testing.F) {
	for _, s := range []string{"Unconditional", "AxisToggle { axis: A }", "Comparison([Less(0), Equal(5), Greater(100), True])", "Vrf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBranch(s)
		if err != nil {
			return
		}
		back, err := ParseBranch(b.Param())
		if err != nil {
			t.Fatalf("%q: Param %q: %v", s, b.Param(), err)
		}
		assert.Equal(t, b, back)
		rust, err := ParseBranch(b.Rust(dtype.I32))
		if err != nil {
			t.Fatalf("%q: Rust %q: %v", s, b.Rust(dtype.I32), err)
		}
		assert.Equal(t, b, rust)
	})
}

// TestParseVeZip: the zip ops' Param (002 L5107-5117, L5148, L5178, L5222).
func TestParseVeZip(t *testing.T) {
	for _, tc := range []struct {
		k     StageKind
		in    string
		canon string
		rust  string
	}{
		{StVectorClipZip, "ClipBinaryOpI32::AddFxp", "AddFxp", "ClipBinaryOpI32::AddFxp"},
		{StVectorFpZip, "FpBinaryOp::MulF(FpMulAlu::Mul0)", "MulF(Mul0)", "FpBinaryOp::MulF(FpMulAlu::Mul0)"},
		{StVectorFpZip, "FpBinaryOp::SubF, BinaryArgMode::Mode10", "SubF, Mode10", "FpBinaryOp::SubF, BinaryArgMode::Mode10"},
		{StVectorFxpZip, "SubFxp, Mode11", "SubFxp, Mode11", "FxpBinaryOp::SubFxp, BinaryArgMode::Mode11"},
		{StVectorLogicZip, "BitXor", "BitXor", "LogicBinaryOpI32::BitXor"},
	} {
		c, err := ParseVeZip(tc.k, tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.canon, c.ZipParam())
		assert.Equal(t, tc.rust, c.ZipRust(tc.k, dtype.I32))
		back, err := ParseVeZip(tc.k, c.ZipRust(tc.k, dtype.I32))
		require.NoError(t, err)
		assert.Equal(t, c, back)
	}
	for _, in := range []string{"", "Sqrt", "FmaF", "AddFxp, Mode012", "AddFxp, 1", "AddFxp, Mode01, Mode10"} {
		_, err := ParseVeZip(StVectorFpZip, in)
		assert.Error(t, err, in)
	}
	_, err := ParseVeZip(StVectorFxp, "AddFxp")
	assert.Error(t, err, "vector_fxp is no zip")
}

// FuzzParseVeZip: a zip op's Param reads back from its canonical and Rust
// forms.
func FuzzParseVeZip(f *testing.F) {
	for _, s := range []string{"AddFxp", "SubF, Mode10", "FpBinaryOp::MulF(FpMulAlu::Mul0)", "BitXor, BinaryArgMode::Mode11"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range []StageKind{StVectorLogicZip, StVectorFxpZip, StVectorFpZip, StVectorClipZip} {
			c, err := ParseVeZip(k, s)
			if err != nil {
				continue
			}
			for _, txt := range []string{c.ZipParam(), c.ZipRust(k, dtype.I32), c.ZipRust(k, dtype.F32)} {
				back, err := ParseVeZip(k, txt)
				if err != nil {
					t.Fatalf("%s %q: %q does not read back: %v", k, s, txt, err)
				}
				assert.Equal(t, c, back)
			}
		}
	})
}
