package kernel

import (
	"fmt"
	"strconv"
	"strings"

	"tcpmap/model/dtype"
)

// The Vector Engine's intra-slice block (002 L4549-5277): every stage of its
// fixed order, Branch, Logic, Fxp, FxpToFp, Narrow, Float,
// IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip, Filter, Output
// (002 L4733-4747), the stash and the operand forms. This file holds the
// vocabulary: the stage kinds, the op tables with their ALUs, and the
// reading and printing of a stage's Param, which spells the method's value
// arguments as the manual does. Derivation, rules and semantics are in
// engines/vector*.go.

// The intra-slice stages beyond vector_init, vector_intra_slice_branch,
// vector_fxp and vector_final (program.go), named after their methods.
const (
	StVectorLogic     StageKind = "vector_logic"              // vector_logic(op, operand) (002 L4803-4820)
	StVectorFxpToFp   StageKind = "vector_fxp_to_fp"          // vector_fxp_to_fp(int_width) (002 L4837-4841)
	StVectorSplit     StageKind = "vector_split"              // vector_split::<Time2, Packet2>() (002 L4842-4863)
	StVectorTrim      StageKind = "vector_trim_way4"          // vector_trim_way4::<Packet2>() (002 L4850, L4864-4871)
	StVectorFpUnary   StageKind = "vector_fp_unary"           // vector_fp_unary(op) (002 L4878-4889)
	StVectorFpBinary  StageKind = "vector_fp_binary"          // vector_fp_binary(op, operand) (002 L4890-4899)
	StVectorFpTernary StageKind = "vector_fp_ternary"         // vector_fp_ternary(op, (o0, o1)) (002 L4900-4904, L5059)
	StVectorReduce    StageKind = "vector_intra_slice_reduce" // vector_intra_slice_reduce::<R, OTime, OPacket>(op) (002 L5285-5361)
	StVectorFpDiv     StageKind = "vector_fp_div"             // vector_fp_div(op, operand) (002 L4914-4918)
	StVectorConcat    StageKind = "vector_concat"             // vector_concat::<Time2, Packet2>() (002 L4919-4937)
	StVectorPad       StageKind = "vector_pad_way8"           // vector_pad_way8::<Packet2>() (002 L4925, L4938-4946)
	StVectorFpToFxp   StageKind = "vector_fp_to_fxp"          // vector_fp_to_fxp(int_width) (002 L4948-4952)
	StVectorClip      StageKind = "vector_clip"               // vector_clip(op, operand) (002 L4953-4972)
	StVectorFilter    StageKind = "vector_filter"             // vector_filter::<Time2>(mode) (002 L4973-4974)
	StVectorStash     StageKind = "vector_stash"              // vector_stash() (002 L4977-5051)

	// Two-group (pair) mode (002 L5154-5249): unzip enters it, a zip op
	// merges the groups with a binary op of its cluster.
	StVectorUnzip    StageKind = "vector_intra_slice_unzip" // vector_intra_slice_unzip::<I, TileTime, SplitTime>() (002 L4574-4577)
	StVectorLogicZip StageKind = "vector_logic_zip"         // vector_logic_zip(op)
	StVectorFxpZip   StageKind = "vector_fxp_zip"           // vector_fxp_zip(op) (002 L5112)
	StVectorFpZip    StageKind = "vector_fp_zip"            // vector_fp_zip(op) (002 L5222)
	StVectorClipZip  StageKind = "vector_clip_zip"          // vector_clip_zip(op) (002 L5178)
)

// ZipCluster is the ALU op stage whose op table and stage a zip op of kind
// k takes ("" for any other kind).
func ZipCluster(k StageKind) StageKind {
	switch k {
	case StVectorLogicZip:
		return StVectorLogic
	case StVectorFxpZip:
		return StVectorFxp
	case StVectorFpZip:
		return StVectorFpBinary
	case StVectorClipZip:
		return StVectorClip
	}
	return ""
}

// VectorStageKinds lists every stage kind that runs inside a Vector Engine
// pass (between vector_init and vector_final, both excluded), in the
// intra-slice block's order (002 L4733-4747).
var VectorStageKinds = []StageKind{
	StVectorBranch, StVectorStash, StVectorLogic, StVectorFxp, StVectorFxpToFp, StVectorSplit, StVectorTrim,
	StVectorFpUnary, StVectorFpBinary, StVectorFpTernary, StVectorReduce, StVectorFpDiv, StVectorConcat,
	StVectorPad, StVectorFpToFxp, StVectorClip, StVectorFilter,
	StVectorUnzip, StVectorLogicZip, StVectorFxpZip, StVectorFpZip, StVectorClipZip,
}

// IsVectorOp reports whether k is an ALU op stage of the intra-slice block,
// one that takes an op and operands: Logic, Fxp, Float, FpDiv and Clip.
func (k StageKind) IsVectorOp() bool {
	switch k {
	case StVectorLogic, StVectorFxp, StVectorFpUnary, StVectorFpBinary, StVectorFpTernary, StVectorFpDiv, StVectorClip:
		return true
	}
	return false
}

// ReadsVRF reports whether a stage of kind k names, in its Tensor, a VRF
// tensor it reads as an operand.
func (k StageKind) ReadsVRF() bool { return k.IsVectorOp() }

// The Logic, Float and Clip clusters' ALUs (002 L4805, L4877, L4955); the
// Fxp cluster's are in vector.go. Each is used at most once per pass
// (002 L4750, L5253).
const (
	ALULogicAnd    VeALU = "LogicAnd"
	ALULogicOr     VeALU = "LogicOr"
	ALULogicXor    VeALU = "LogicXor"
	ALULogicLshift VeALU = "LogicLshift"
	ALULogicRshift VeALU = "LogicRshift"
	ALUFpFma       VeALU = "FpFma"
	ALUFpFpu       VeALU = "FpFpu"
	ALUFpExp       VeALU = "FpExp"
	ALUFpMul0      VeALU = "FpMul0"
	ALUFpMul1      VeALU = "FpMul1"
	ALUClipAdd     VeALU = "ClipAdd"
	ALUClipMax     VeALU = "ClipMax"
	ALUClipMin     VeALU = "ClipMin"
)

// VeOpInfo is one row of the manual's op tables: an op of a stage, the ALU
// it occupies ("" for the dedicated FpDiv and IntraSliceReduce resources,
// 002 L4908, L4915), its arity (1 unary, 2 binary, 3 ternary) and the
// element types it takes.
type VeOpInfo struct {
	Kind StageKind
	// Name is the op's canonical spelling: `AddFxp`, `MulF(Mul0)`.
	Name  string
	ALU   VeALU
	Arity int
	I32   bool
	F32   bool
	// Cite is the manual's line of the op.
	Cite string
}

// veOpTable is the manual's op tables (002 L4806-4836, L4878-4904,
// L4909-4918, L4956-4972, L5391-5402).
var veOpTable = []VeOpInfo{
	{StVectorLogic, "BitAnd", ALULogicAnd, 2, true, true, "002 L4809, L4818"},
	{StVectorLogic, "BitOr", ALULogicOr, 2, true, true, "002 L4810, L4819"},
	{StVectorLogic, "BitXor", ALULogicXor, 2, true, true, "002 L4811, L4820"},
	{StVectorLogic, "LeftShift", ALULogicLshift, 2, true, false, "002 L4812"},
	{StVectorLogic, "LogicRightShift", ALULogicRshift, 2, true, false, "002 L4813"},
	{StVectorLogic, "ArithRightShift", ALULogicRshift, 2, true, false, "002 L4814"},

	{StVectorFxp, "AddFxp", ALUFxpAdd, 2, true, false, "002 L4826"},
	{StVectorFxp, "AddFxpSat", ALUFxpAdd, 2, true, false, "002 L4827"},
	{StVectorFxp, "SubFxp", ALUFxpAdd, 2, true, false, "002 L4828"},
	{StVectorFxp, "SubFxpSat", ALUFxpAdd, 2, true, false, "002 L4829"},
	{StVectorFxp, "LeftShift", ALUFxpLshift, 2, true, false, "002 L4830"},
	{StVectorFxp, "LeftShiftSat", ALUFxpLshift, 2, true, false, "002 L4831"},
	{StVectorFxp, "MulFxp", ALUFxpMul, 2, true, false, "002 L4832"},
	{StVectorFxp, "MulInt", ALUFxpMul, 2, true, false, "002 L4833"},
	{StVectorFxp, "LogicRightShift", ALUFxpRshift, 2, true, false, "002 L4834"},
	{StVectorFxp, "ArithRightShift", ALUFxpRshift, 2, true, false, "002 L4835"},
	{StVectorFxp, "ArithRightShiftRound", ALUFxpRshift, 2, true, false, "002 L4836"},

	{StVectorFpUnary, "Exp", ALUFpExp, 1, false, true, "002 L4881"},
	{StVectorFpUnary, "NegExp", ALUFpExp, 1, false, true, "002 L4882"},
	{StVectorFpUnary, "Sqrt", ALUFpFpu, 1, false, true, "002 L4883"},
	{StVectorFpUnary, "Tanh", ALUFpFpu, 1, false, true, "002 L4884"},
	{StVectorFpUnary, "Sigmoid", ALUFpFpu, 1, false, true, "002 L4885"},
	{StVectorFpUnary, "Erf", ALUFpFpu, 1, false, true, "002 L4886"},
	{StVectorFpUnary, "Log", ALUFpFpu, 1, false, true, "002 L4887"},
	{StVectorFpUnary, "Sin", ALUFpFpu, 1, false, true, "002 L4888"},
	{StVectorFpUnary, "Cos", ALUFpFpu, 1, false, true, "002 L4889"},

	{StVectorFpBinary, "AddF", ALUFpFma, 2, false, true, "002 L4893"},
	{StVectorFpBinary, "SubF", ALUFpFma, 2, false, true, "002 L4894"},
	{StVectorFpBinary, "MulF(Mul0)", ALUFpMul0, 2, false, true, "002 L4895"},
	{StVectorFpBinary, "MulF(Mul1)", ALUFpMul1, 2, false, true, "002 L4896"},
	{StVectorFpBinary, "MaskMulF(Mul0)", ALUFpMul0, 2, false, true, "002 L4897"},
	{StVectorFpBinary, "MaskMulF(Mul1)", ALUFpMul1, 2, false, true, "002 L4898"},
	{StVectorFpBinary, "DivF", ALUFpFpu, 2, false, true, "002 L4899"},

	{StVectorFpTernary, "FmaF", ALUFpFma, 3, false, true, "002 L4903"},
	{StVectorFpTernary, "MaskFmaF", ALUFpFma, 3, false, true, "002 L4904"},

	{StVectorReduce, "AddSat", "", 1, true, false, "002 L5394"},
	{StVectorReduce, "Add", "", 1, false, true, "002 L5400"},
	{StVectorReduce, "Max", "", 1, true, true, "002 L5395, L5401"},
	{StVectorReduce, "Min", "", 1, true, true, "002 L5396, L5402"},

	{StVectorFpDiv, "DivF", "", 2, false, true, "002 L4918"},

	{StVectorClip, "Min", ALUClipMin, 2, true, true, "002 L4959, L4968"},
	{StVectorClip, "Max", ALUClipMax, 2, true, true, "002 L4960, L4969"},
	{StVectorClip, "AbsMin", ALUClipMin, 2, true, true, "002 L4961, L4970"},
	{StVectorClip, "AbsMax", ALUClipMax, 2, true, true, "002 L4962, L4971"},
	{StVectorClip, "AddFxp", ALUClipAdd, 2, true, false, "002 L4963"},
	{StVectorClip, "AddFxpSat", ALUClipAdd, 2, true, false, "002 L4964"},
	{StVectorClip, "Add", ALUClipAdd, 2, false, true, "002 L4972"},
}

// VeOps returns the ops of stage kind k in the manual's order.
func VeOps(k StageKind) []VeOpInfo {
	var out []VeOpInfo
	for _, o := range veOpTable {
		if o.Kind == k {
			out = append(out, o)
		}
	}
	return out
}

// LookupVeOp finds op name (canonical, see CanonicalVeOp) of stage kind k.
func LookupVeOp(k StageKind, name string) (VeOpInfo, bool) {
	for _, o := range veOpTable {
		if o.Kind == k && o.Name == name {
			return o, true
		}
	}
	return VeOpInfo{}, false
}

// Takes reports whether the op takes elements of type d.
func (o VeOpInfo) Takes(d dtype.DType) bool {
	return d == dtype.I32 && o.I32 || d == dtype.F32 && o.F32
}

// veEnumPrefixes are the Rust enum paths an op may be written with
// (furiosa-visa-std vector_engine/op/mod.rs; 002 L4568, L5059-5116).
var veEnumPrefixes = map[StageKind][]string{
	StVectorLogic:     {"LogicBinaryOpI32::", "LogicBinaryOpF32::", "LogicBinaryOp::"},
	StVectorFxp:       {"FxpBinaryOp::"},
	StVectorFpUnary:   {"FpUnaryOp::"},
	StVectorFpBinary:  {"FpBinaryOp::"},
	StVectorFpTernary: {"FpTernaryOp::"},
	StVectorReduce:    {"IntraSliceReduceOpI32::", "IntraSliceReduceOpF32::", "IntraSliceReduceOp::"},
	StVectorFpDiv:     {"FpDivBinaryOp::"},
	StVectorClip:      {"ClipBinaryOpI32::", "ClipBinaryOpF32::", "ClipBinaryOp::"},
}

// veEnumName names each stage's op enum, for messages.
var veEnumName = map[StageKind]string{
	StVectorLogic: "LogicBinaryOp", StVectorFxp: "FxpBinaryOp", StVectorFpUnary: "FpUnaryOp", StVectorFpBinary: "FpBinaryOp",
	StVectorFpTernary: "FpTernaryOp", StVectorReduce: "IntraSliceReduceOp", StVectorFpDiv: "FpDivBinaryOp", StVectorClip: "ClipBinaryOp",
}

// CanonicalVeOp strips an op's enum path and spaces: `FpBinaryOp::MulF(
// FpMulAlu::Mul0 )` → `MulF(Mul0)`.
func CanonicalVeOp(k StageKind, s string) string {
	s = strings.Join(strings.Fields(s), "")
	for _, p := range veEnumPrefixes[k] {
		if strings.HasPrefix(s, p) {
			s = s[len(p):]
			break
		}
	}
	return strings.ReplaceAll(s, "FpMulAlu::", "")
}

// VeEnumPath is the Rust enum path an op of kind k on elements of type d
// is printed with: `FxpBinaryOp::`, `ClipBinaryOpF32::`.
func VeEnumPath(k StageKind, d dtype.DType) string {
	suffix := "I32"
	if d == dtype.F32 {
		suffix = "F32"
	}
	switch k {
	case StVectorLogic:
		return "LogicBinaryOp" + suffix + "::"
	case StVectorClip:
		return "ClipBinaryOp" + suffix + "::"
	case StVectorReduce:
		return "IntraSliceReduceOp" + suffix + "::"
	}
	ps := veEnumPrefixes[k]
	if len(ps) == 0 {
		return ""
	}
	return ps[0]
}

// RustVeOp prints op name (canonical) as Rust: `FpBinaryOp::MulF(FpMulAlu::Mul0)`.
func RustVeOp(k StageKind, d dtype.DType, name string) string {
	if a, b, ok := strings.Cut(name, "("); ok {
		return VeEnumPath(k, d) + a + "(FpMulAlu::" + b
	}
	return VeEnumPath(k, d) + name
}

// ---- argument modes (002 L5082-5117)

// Argument modes: which inputs an op reads, stream (0) or operand (1, 2)
// (002 L5085-5106). The empty mode is the default of the op's arity.
var (
	UnaryArgModes   = []string{"Mode0", "Mode1"}                                                            // 002 L5085-5089
	BinaryArgModes  = []string{"Mode00", "Mode01", "Mode10", "Mode11"}                                      // 002 L5090-5096
	TernaryArgModes = []string{"Mode012", "Mode002", "Mode102", "Mode112", "Mode020", "Mode021", "Mode120"} // 002 L5097-5106
)

// argModePrefixes are the enum paths of the modes.
var argModePrefixes = []string{"UnaryArgMode::", "BinaryArgMode::", "TernaryArgMode::"}

// DefaultArgMode is the default mode of an arity: Mode0, Mode01, Mode012
// (002 L5087, L5093, L5100).
func DefaultArgMode(arity int) string {
	switch arity {
	case 1:
		return "Mode0"
	case 2:
		return "Mode01"
	case 3:
		return "Mode012"
	}
	return ""
}

// ArgModeOK reports whether mode is a mode of the given arity.
func ArgModeOK(arity int, mode string) bool {
	var list []string
	switch arity {
	case 1:
		list = UnaryArgModes
	case 2:
		list = BinaryArgModes
	case 3:
		list = TernaryArgModes
	}
	for _, m := range list {
		if m == mode {
			return true
		}
	}
	return false
}

// RustArgMode prints a mode with its enum path: `BinaryArgMode::Mode10`.
func RustArgMode(arity int, mode string) string {
	switch arity {
	case 1:
		return "UnaryArgMode::" + mode
	case 3:
		return "TernaryArgMode::" + mode
	}
	return "BinaryArgMode::" + mode
}

// ---- operands (002 L5052-5081)

// VeOperandKind is the source of an operand (002 L5054-5058).
type VeOperandKind string

// The operand sources.
const (
	VeConst VeOperandKind = "const" // a scalar broadcast to every element (002 L5056)
	VeVRF   VeOperandKind = "vrf"   // a VRF tensor loaded by to_vrf (002 L5057)
	VeStash VeOperandKind = "stash" // the pass's stash (002 L5058)
)

// VeOperand is one operand as written: a constant's text (`100`,
// `2.5f32`), a VRF tensor's name, or the stash.
type VeOperand struct {
	Kind   VeOperandKind
	Text   string // the constant as written
	Tensor string // the VRF tensor
}

// Guards of an operand slot: which elements, by the group bit of their
// ExecutionId, the slot's operands apply to (002 L5060-5062).
const (
	GuardAlways = -1 // VeBranchOperand::always (002 L5061)
	GuardGroup0 = 0  // VeBranchOperand::group(_, GroupId::Zero) (002 L5062)
	GuardGroup1 = 1  // GroupId::One (furiosa-visa-std branch.rs; 002 names only Zero)
)

// VeSlot is one operand slot: the operands of one application of the op
// (one for a binary op, two for a ternary one) and the group it applies
// to.
type VeSlot struct {
	Guard    int
	Operands []VeOperand
}

// VeCall is the Param of an ALU op stage, read: the op (canonical), the
// argument mode ("" for the default) and the operand slots, applied in
// order, each to the elements its guard admits.
type VeCall struct {
	Op    string
	Mode  string
	Slots []VeSlot
	// Pair marks a per-group call of two-group mode (002 L5164-5165,
	// L5244): Groups are each group's slots (none: the group skips the
	// op, `()`), Apply says which groups a unary op applies to.
	Pair   bool
	Groups [2][]VeSlot
	Apply  [2]bool
}

// veArg is one top-level argument of a call, with its column (0-based
// byte offset) in the Param.
type veArg struct {
	text string
	off  int
}

// splitVeArgs splits s at its top-level commas (outside (), [] and {}),
// trimming each argument.
func splitVeArgs(s string, base int) ([]veArg, error) {
	var out []veArg
	depth, start := 0, 0
	push := func(end int) {
		raw := s[start:end]
		lead := len(raw) - len(strings.TrimLeft(raw, " \t\n"))
		out = append(out, veArg{strings.TrimSpace(raw), base + start + lead})
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("column %d: unbalanced %q", base+i+1, s[i])
			}
		case ',':
			if depth == 0 {
				push(i)
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("column %d: unclosed bracket", base+len(s)+1)
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	push(len(s))
	return out, nil
}

// inner returns the text inside a call `name(...)` with its offset, if a
// has that form for one of names.
func (a veArg) inner(names ...string) (veArg, bool) {
	for _, n := range names {
		if strings.HasPrefix(a.text, n) && strings.HasSuffix(a.text, ")") {
			rest := a.text[len(n):]
			rest = strings.TrimLeft(rest, " ")
			if strings.HasPrefix(rest, "(") {
				open := len(a.text) - len(rest)
				return veArg{a.text[open+1 : len(a.text)-1], a.off + open + 1}, true
			}
		}
	}
	return veArg{}, false
}

// parseVeConst checks that s is a number literal (an integer, possibly hex
// or negative, or a float, with an optional i32/f32 suffix).
func parseVeConst(s string) bool {
	t := strings.TrimSuffix(strings.TrimSuffix(s, "i32"), "f32")
	t = strings.ReplaceAll(t, "_", "")
	if _, err := strconv.ParseInt(t, 0, 64); err == nil {
		return true
	}
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "-0x") {
		return false
	}
	_, err := strconv.ParseFloat(t, 64)
	return err == nil
}

// parseVeOperand reads one operand: a constant, `Stash`, `&vrf`,
// `VeRhs::constant(c)`, `VeRhs::vrf(&v)` or `VeRhs::Stash`.
func parseVeOperand(a veArg) (VeOperand, error) {
	t := a.text
	switch {
	case t == "Stash" || t == "VeRhs::Stash":
		return VeOperand{Kind: VeStash}, nil
	case strings.HasPrefix(t, "&"):
		name := strings.TrimSpace(t[1:])
		if !isTensorRef(name) {
			return VeOperand{}, fmt.Errorf("column %d: %q is not a VRF tensor name", a.off+1, t)
		}
		return VeOperand{Kind: VeVRF, Tensor: name}, nil
	}
	if in, ok := a.inner("VeRhs::vrf"); ok {
		return parseVeOperand(in)
	}
	if in, ok := a.inner("VeRhs::constant"); ok {
		a = in
		t = in.text
	}
	if !parseVeConst(t) {
		return VeOperand{}, fmt.Errorf("column %d: operand %q is not a constant, Stash or &vrf_tensor", a.off+1, t)
	}
	return VeOperand{Kind: VeConst, Text: t}, nil
}

// isTensorRef reports whether s names a tensor: identifiers joined by
// `.` or `@` (a merged graph program's `OP.TENSOR` and `TENSOR@CONSUMER`,
// search.GraphProgram), or one identifier.
func isTensorRef(s string) bool {
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '@' }) {
		if !isIdent(part) {
			return false
		}
	}
	return s != "" && !strings.HasPrefix(s, ".") && !strings.HasPrefix(s, "@") &&
		!strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "@") && !strings.Contains(s, "..")
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// parseGroupID reads `GroupId::Zero`, `GroupId::One`, `0` or `1`.
func parseGroupID(a veArg) (int, error) {
	switch strings.TrimPrefix(a.text, "GroupId::") {
	case "Zero", "0":
		return GuardGroup0, nil
	case "One", "1":
		return GuardGroup1, nil
	}
	return 0, fmt.Errorf("column %d: %q is not a GroupId (Zero or One)", a.off+1, a.text)
}

// parseVeSlots reads the operand argument of an op of the given arity:
// one operand (binary) or an `(o0, o1)` pair (ternary), possibly wrapped in
// `VeBranchOperand::always/group` or `TernaryOperand::always/group`, or an
// array `[slot, ...]` of them.
func parseVeSlots(a veArg, arity int) ([]VeSlot, error) {
	if strings.HasPrefix(a.text, "[") && strings.HasSuffix(a.text, "]") {
		args, err := splitVeArgs(a.text[1:len(a.text)-1], a.off+1)
		if err != nil {
			return nil, err
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("column %d: an empty operand array", a.off+1)
		}
		var out []VeSlot
		for _, x := range args {
			s, err := parseVeSlots(x, arity)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	guard := GuardAlways
	body := []veArg{a}
	if in, ok := a.inner("VeBranchOperand::always", "always", "TernaryOperand::always"); ok {
		args, err := splitVeArgs(in.text, in.off)
		if err != nil {
			return nil, err
		}
		body = args
	} else if in, ok := a.inner("VeBranchOperand::group", "group", "TernaryOperand::group"); ok {
		args, err := splitVeArgs(in.text, in.off)
		if err != nil {
			return nil, err
		}
		if len(args) < 2 {
			return nil, fmt.Errorf("column %d: group(operand, GroupId) takes a GroupId", a.off+1)
		}
		if guard, err = parseGroupID(args[len(args)-1]); err != nil {
			return nil, err
		}
		body = args[:len(args)-1]
	}
	if arity == 3 && len(body) == 1 {
		b := body[0]
		if !strings.HasPrefix(b.text, "(") || !strings.HasSuffix(b.text, ")") {
			return nil, fmt.Errorf("column %d: a ternary op takes an (operand0, operand1) pair, found %q", b.off+1, b.text)
		}
		args, err := splitVeArgs(b.text[1:len(b.text)-1], b.off+1)
		if err != nil {
			return nil, err
		}
		body = args
	}
	if len(body) != arity-1 {
		return nil, fmt.Errorf("column %d: %d operands, a %s op takes %d", a.off+1, len(body), arityName(arity), arity-1)
	}
	slot := VeSlot{Guard: guard}
	for _, x := range body {
		o, err := parseVeOperand(x)
		if err != nil {
			return nil, err
		}
		slot.Operands = append(slot.Operands, o)
	}
	return []VeSlot{slot}, nil
}

func arityName(n int) string {
	switch n {
	case 1:
		return "unary"
	case 2:
		return "binary"
	case 3:
		return "ternary"
	}
	return fmt.Sprintf("%d-ary", n)
}

// modeArg reports whether a is an argument mode (`Mode10`,
// `BinaryArgMode::Mode10`) and returns it bare.
func modeArg(a veArg) (string, bool) {
	t := a.text
	for _, p := range argModePrefixes {
		t = strings.TrimPrefix(t, p)
	}
	if strings.HasPrefix(t, "Mode") && len(t) > 4 && strings.Trim(t[4:], "012") == "" {
		return t, true
	}
	return "", false
}

// ParseVeCall reads the Param of an ALU op stage of kind k (Logic, Fxp,
// Float, FpDiv, Clip): `Op[, Mode][, operand]`, the op possibly with its
// enum path (`FpBinaryOp::MulF(FpMulAlu::Mul0)`), the mode with its
// (`BinaryArgMode::Mode10`, the `_with_mode` methods, 002 L5125-5133), and
// the operand in any of the manual's forms (002 L5054-5062): a constant,
// `Stash`, `&vrf_tensor`, `VeBranchOperand::group(operand, GroupId::Zero)`,
// `(o0, o1)` for a ternary op, or an array of slots. tensor is the stage's
// Tensor: a binary op with one always-slot whose operand is omitted reads
// that VRF tensor (the form `vector_fxp(MulInt, &rhs_vrf)` is stored as
// Param `MulInt` and Tensor `rhs_vrf`, 002 L295). Every VRF operand must
// be tensor. Errors give the 1-based column.
func ParseVeCall(k StageKind, param, tensor string) (VeCall, error) {
	var c VeCall
	if !k.IsVectorOp() {
		return c, fmt.Errorf("%s takes no op", k)
	}
	args, err := splitVeArgs(param, 0)
	if err != nil {
		return c, fmt.Errorf("%s %q: %w", k, param, err)
	}
	if len(args) == 0 {
		return c, fmt.Errorf("%s: missing op", k)
	}
	c.Op = CanonicalVeOp(k, args[0].text)
	info, ok := LookupVeOp(k, c.Op)
	if !ok {
		var names []string
		for _, o := range VeOps(k) {
			names = append(names, o.Name)
		}
		return c, fmt.Errorf("%s %q: column %d: unknown %s %q (want one of %s)", k, param, args[0].off+1, veEnumName[k], c.Op, strings.Join(names, ", "))
	}
	rest := args[1:]
	if len(rest) > 0 {
		if m, ok := modeArg(rest[0]); ok {
			if !ArgModeOK(info.Arity, m) {
				return c, fmt.Errorf("%s %q: column %d: %s is not a %s argument mode", k, param, rest[0].off+1, m, arityName(info.Arity))
			}
			c.Mode = m
			rest = rest[1:]
		}
	}
	if info.Arity == 1 {
		switch len(rest) {
		case 0:
			return c, nil
		case 2:
			// vector_fp_unary(op, apply_g0, apply_g1) (002 L5244).
			c.Pair = true
			for g, a := range rest {
				switch a.text {
				case "true":
					c.Apply[g] = true
				case "false":
				default:
					return c, fmt.Errorf("%s %q: column %d: a per-group unary op takes true or false, found %q", k, param, a.off+1, a.text)
				}
			}
			if !c.Apply[0] && !c.Apply[1] {
				return c, fmt.Errorf("%s %q: the op applies to neither group", k, param)
			}
			return c, nil
		}
		return c, fmt.Errorf("%s %q: column %d: a unary op takes no operand", k, param, rest[0].off+1)
	}
	if len(rest) == 2 {
		// One operand per group, `()` to skip one (002 L5164-5165, L5195).
		c.Pair = true
		for g, a := range rest {
			if a.text == "()" {
				continue
			}
			if c.Groups[g], err = parseVeSlots(a, info.Arity); err != nil {
				return c, fmt.Errorf("%s %q: %w", k, param, err)
			}
			c.Apply[g] = true
		}
		if !c.Apply[0] && !c.Apply[1] {
			return c, fmt.Errorf("%s %q: the op applies to neither group", k, param)
		}
		if tensor != "" && c.VRF() == "" {
			return c, fmt.Errorf("%s %q: the stage names VRF tensor %q, which no operand reads: an operand is either a constant or a VRF tensor", k, param, tensor)
		}
		for _, o := range c.operands() {
			if o.Kind == VeVRF && o.Tensor != tensor {
				return c, fmt.Errorf("%s %q: VRF operand &%s, but the stage's tensor is %q", k, param, o.Tensor, tensor)
			}
		}
		return c, nil
	}
	switch len(rest) {
	case 0:
		if tensor == "" || info.Arity != 2 {
			return c, fmt.Errorf("%s %q: missing operand", k, param)
		}
		c.Slots = []VeSlot{{Guard: GuardAlways, Operands: []VeOperand{{Kind: VeVRF, Tensor: tensor}}}}
	case 1:
		if c.Slots, err = parseVeSlots(rest[0], info.Arity); err != nil {
			return c, fmt.Errorf("%s %q: %w", k, param, err)
		}
	default:
		return c, fmt.Errorf("%s %q: column %d: one operand argument expected, found %d", k, param, rest[1].off+1, len(rest))
	}
	if tensor != "" && c.VRF() == "" {
		return c, fmt.Errorf("%s %q: the stage names VRF tensor %q, which no operand reads: an operand is either a constant or a VRF tensor", k, param, tensor)
	}
	for _, s := range c.Slots {
		for _, o := range s.Operands {
			if o.Kind == VeVRF && o.Tensor != tensor {
				if tensor == "" {
					return c, fmt.Errorf("%s %q: VRF operand &%s, but the stage names no tensor", k, param, o.Tensor)
				}
				return c, fmt.Errorf("%s %q: VRF operand &%s, but the stage's tensor is %q", k, param, o.Tensor, tensor)
			}
		}
	}
	return c, nil
}

// operands lists every operand of the call, both groups' included.
func (c VeCall) operands() []VeOperand {
	var out []VeOperand
	for _, ss := range [][]VeSlot{c.Slots, c.Groups[0], c.Groups[1]} {
		for _, s := range ss {
			out = append(out, s.Operands...)
		}
	}
	return out
}

// VRF returns the VRF tensor the call reads, or "".
func (c VeCall) VRF() string {
	for _, o := range c.operands() {
		if o.Kind == VeVRF {
			return o.Tensor
		}
	}
	return ""
}

// Param prints the call in its canonical Param form, the form ParseVeCall
// reads back to the same VeCall: `MulInt` for a lone VRF operand (the
// stage's Tensor names it), else `Op[, Mode], operand` with the operand as
// Operand.String prints it.
func (c VeCall) Param() string {
	parts := []string{c.Op}
	if c.Mode != "" {
		parts = append(parts, c.Mode)
	}
	if c.Pair {
		return strings.Join(append(parts, c.groupArgs(false)...), ", ")
	}
	if len(c.Slots) == 1 && c.Slots[0].Guard == GuardAlways && len(c.Slots[0].Operands) == 1 &&
		c.Slots[0].Operands[0].Kind == VeVRF && c.Mode == "" {
		return strings.Join(parts, ", ")
	}
	if len(c.Slots) > 0 {
		parts = append(parts, slotsText(c.Slots, false))
	}
	return strings.Join(parts, ", ")
}

// Rust prints the call's arguments as Rust (the op with its enum path for
// elements of type d; the operands as the manual writes them).
func (c VeCall) Rust(k StageKind, d dtype.DType) string {
	info, _ := LookupVeOp(k, c.Op)
	parts := []string{RustVeOp(k, d, c.Op)}
	if c.Mode != "" {
		parts = append(parts, RustArgMode(info.Arity, c.Mode))
	}
	if c.Pair {
		return strings.Join(append(parts, c.groupArgs(true)...), ", ")
	}
	if len(c.Slots) > 0 {
		parts = append(parts, slotsText(c.Slots, true))
	}
	return strings.Join(parts, ", ")
}

// groupArgs prints a per-group call's two group arguments: `true`/`false`
// for a unary op (whose groups have no slots), an operand or `()`
// otherwise.
func (c VeCall) groupArgs(rust bool) []string {
	var out []string
	unary := len(c.Groups[0]) == 0 && len(c.Groups[1]) == 0
	for g := 0; g < 2; g++ {
		switch {
		case unary:
			out = append(out, fmt.Sprint(c.Apply[g]))
		case len(c.Groups[g]) == 0:
			out = append(out, "()")
		default:
			out = append(out, slotsText(c.Groups[g], rust))
		}
	}
	return out
}

func slotsText(slots []VeSlot, rust bool) string {
	if len(slots) == 1 {
		return slotText(slots[0], rust)
	}
	var xs []string
	for _, s := range slots {
		xs = append(xs, slotText(s, rust))
	}
	return "[" + strings.Join(xs, ", ") + "]"
}

func slotText(s VeSlot, rust bool) string {
	var ops []string
	for _, o := range s.Operands {
		ops = append(ops, o.text(rust && s.Guard != GuardAlways))
	}
	body := ops[0]
	if len(ops) > 1 {
		body = "(" + strings.Join(ops, ", ") + ")"
	}
	if s.Guard == GuardAlways {
		return body
	}
	g := "GroupId::Zero"
	if s.Guard == GuardGroup1 {
		g = "GroupId::One"
	}
	if !rust {
		return fmt.Sprintf("group(%s, %s)", body, g)
	}
	if len(ops) > 1 {
		return fmt.Sprintf("TernaryOperand::group(%s, %s, %s)", ops[0], ops[1], g)
	}
	return fmt.Sprintf("VeBranchOperand::group(%s, %s)", body, g)
}

// text prints an operand; wrapped (inside VeBranchOperand::group) it takes
// the VeRhs form the group constructor's argument type needs.
func (o VeOperand) text(wrapped bool) string {
	switch o.Kind {
	case VeStash:
		if wrapped {
			return "VeRhs::Stash"
		}
		return "Stash"
	case VeVRF:
		if wrapped {
			return "VeRhs::vrf(&" + o.Tensor + ")"
		}
		return "&" + o.Tensor
	}
	if wrapped {
		return "VeRhs::constant(" + o.Text + ")"
	}
	return o.Text
}

// String prints the operand as Param does.
func (o VeOperand) String() string { return o.text(false) }

// ---- conversions, narrow/widen, reduce, filter

// ParseIntWidth reads the int_width argument of vector_fxp_to_fp and
// vector_fp_to_fxp (002 L4838, L4949): an integer (`31`, `31u32`).
func ParseIntWidth(s string) (int, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "u32")
	v, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("int_width %q is not an integer", s)
	}
	return v, nil
}

// CanonicalReduceOp strips the enum path of an IntraSliceReduceOp.
func CanonicalReduceOp(s string) string { return CanonicalVeOp(StVectorReduce, s) }

// ParseFilterGroup reads vector_filter's mode (002 L4973-4974): the group
// whose elements pass, `ValidBranchIds::ValidGroup { id: GroupId::Zero }`,
// `GroupId::Zero`, `Zero` or `0` (and One, 1).
func ParseFilterGroup(s string) (int, error) {
	t := strings.Join(strings.Fields(s), "")
	t = strings.TrimPrefix(t, "ValidBranchIds::")
	if in, ok := strings.CutPrefix(t, "ValidGroup{id:"); ok {
		t = strings.TrimSuffix(in, "}")
	}
	g, err := parseGroupID(veArg{text: t})
	if err != nil {
		return 0, fmt.Errorf("vector_filter mode %q: want ValidBranchIds::ValidGroup { id: GroupId::Zero } or One", s)
	}
	return g, nil
}

// FilterGroupRust prints a filter group as the library spells it.
func FilterGroupRust(g int) string {
	id := "Zero"
	if g == GuardGroup1 {
		id = "One"
	}
	return "ValidBranchIds::ValidGroup { id: GroupId::" + id + " }"
}

// ---- branch modes (002 L4794-4802)

// InputCmp is one comparison of BranchMode::Comparison (002 L4801): bit i
// of an element's ExecutionId is set when comparison i holds. The
// variants are furiosa-visa-std's (vector_engine/branch.rs); 002 names the
// type only.
type InputCmp struct {
	// Op is Equal, Less, Greater, LessUnsigned, GreaterUnsigned, True or
	// False.
	Op string `json:"op"`
	// Boundary is the constant compared with, as written.
	Boundary string `json:"boundary,omitempty"`
}

// inputCmpOps are the comparison variants; the ones without a boundary
// take none.
var inputCmpOps = map[string]bool{"Equal": true, "Less": true, "Greater": true, "LessUnsigned": true, "GreaterUnsigned": true, "True": false, "False": false}

// BranchSpec is a BranchMode with its arguments.
type BranchSpec struct {
	Mode BranchMode
	// Axis is AxisToggle's axis.
	Axis string
	// Cmps are Comparison's four comparisons.
	Cmps []InputCmp
}

// ParseBranch reads a BranchMode with its arguments: `Unconditional`,
// `AxisToggle { axis: A }`, `ValidCount`, `Vrf`, and
// `Comparison([c0, c1, c2, c3])` with each comparison written
// `InputCmp::I32(InputCmpI32::Less { boundary: 0 })`, `Less { boundary: 0 }`
// or `Less(0)`, and `True`/`False`.
func ParseBranch(s string) (BranchSpec, error) {
	m, err := ParseBranchMode(s)
	if err != nil {
		return BranchSpec{}, err
	}
	b := BranchSpec{Mode: m}
	t := strings.TrimPrefix(strings.TrimSpace(s), "BranchMode::")
	rest := strings.TrimSpace(t[len(m):])
	switch m {
	case BranchAxisToggle:
		in, ok := strings.CutPrefix(rest, "{")
		if !ok || !strings.HasSuffix(in, "}") {
			return b, fmt.Errorf("branch mode %q: want AxisToggle { axis: NAME }", s)
		}
		in = strings.TrimSpace(strings.TrimSuffix(in, "}"))
		name, ok := strings.CutPrefix(in, "axis:")
		name = strings.TrimPrefix(strings.TrimSpace(name), "Ident::")
		if !ok || !isIdent(name) {
			return b, fmt.Errorf("branch mode %q: want AxisToggle { axis: NAME }", s)
		}
		b.Axis = name
	case BranchComparison:
		in, ok := strings.CutPrefix(rest, "(")
		in, ok2 := strings.CutSuffix(in, ")")
		in = strings.TrimSpace(in)
		in, ok3 := strings.CutPrefix(in, "[")
		in, ok4 := strings.CutSuffix(in, "]")
		if !ok || !ok2 || !ok3 || !ok4 {
			return b, fmt.Errorf("branch mode %q: want Comparison([c0, c1, c2, c3])", s)
		}
		args, err := splitVeArgs(in, 0)
		if err != nil {
			return b, fmt.Errorf("branch mode %q: %w", s, err)
		}
		if len(args) != 4 {
			return b, fmt.Errorf("branch mode %q: Comparison takes [InputCmp; 4], found %d", s, len(args))
		}
		for _, a := range args {
			c, err := parseInputCmp(a.text)
			if err != nil {
				return b, fmt.Errorf("branch mode %q: %w", s, err)
			}
			b.Cmps = append(b.Cmps, c)
		}
	}
	return b, nil
}

func parseInputCmp(s string) (InputCmp, error) {
	t := strings.Join(strings.Fields(s), "")
	for _, p := range []string{"InputCmp::I32(", "InputCmp::F32("} {
		if in, ok := strings.CutPrefix(t, p); ok {
			t = strings.TrimSuffix(in, ")")
		}
	}
	t = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(t, "InputCmpI32::"), "InputCmpF32::"), "InputCmp::")
	name := t
	arg := ""
	if i := strings.IndexAny(t, "({"); i >= 0 {
		name, arg = t[:i], t[i:]
	}
	needs, ok := inputCmpOps[name]
	if !ok {
		return InputCmp{}, fmt.Errorf("comparison %q: want Equal, Less, Greater, LessUnsigned, GreaterUnsigned, True or False", s)
	}
	if !needs {
		if arg != "" {
			return InputCmp{}, fmt.Errorf("comparison %q: %s takes no boundary", s, name)
		}
		return InputCmp{Op: name}, nil
	}
	switch {
	case strings.HasPrefix(arg, "{boundary:") && strings.HasSuffix(arg, "}"):
		arg = arg[len("{boundary:") : len(arg)-1]
	case strings.HasPrefix(arg, "(") && strings.HasSuffix(arg, ")"):
		arg = arg[1 : len(arg)-1]
	default:
		return InputCmp{}, fmt.Errorf("comparison %q: %s takes a boundary", s, name)
	}
	if !parseVeConst(arg) {
		return InputCmp{}, fmt.Errorf("comparison %q: boundary %q is not a number", s, arg)
	}
	return InputCmp{Op: name, Boundary: arg}, nil
}

// Param prints the branch spec in its canonical Param form:
// `Comparison([Less(0), Equal(5), Greater(100), True])`,
// `AxisToggle { axis: A }`.
func (b BranchSpec) Param() string {
	switch b.Mode {
	case BranchAxisToggle:
		return "AxisToggle { axis: " + b.Axis + " }"
	case BranchComparison:
		var xs []string
		for _, c := range b.Cmps {
			if c.Boundary == "" {
				xs = append(xs, c.Op)
			} else {
				xs = append(xs, c.Op+"("+c.Boundary+")")
			}
		}
		return "Comparison([" + strings.Join(xs, ", ") + "])"
	}
	return string(b.Mode)
}

// Rust prints the branch spec as furiosa-visa-std spells it for elements
// of type d: `BranchMode::Comparison([InputCmp::I32(InputCmpI32::Less {
// boundary: 0 }), ...])`, `BranchMode::AxisToggle { axis: Ident::A }`.
func (b BranchSpec) Rust(d dtype.DType) string {
	switch b.Mode {
	case BranchAxisToggle:
		return "BranchMode::AxisToggle { axis: Ident::" + b.Axis + " }"
	case BranchComparison:
		ty := "I32"
		if d == dtype.F32 {
			ty = "F32"
		}
		var xs []string
		for _, c := range b.Cmps {
			v := "InputCmp" + ty + "::" + c.Op
			if c.Boundary != "" {
				v += " { boundary: " + c.Boundary + " }"
			}
			xs = append(xs, "InputCmp::"+ty+"("+v+")")
		}
		return "BranchMode::Comparison([" + strings.Join(xs, ", ") + "])"
	}
	return "BranchMode::" + string(b.Mode)
}

// ParseVeZip reads the Param of a zip op (vector_logic_zip, vector_fxp_zip,
// vector_fp_zip, vector_clip_zip; 002 L5107-5117, L5178, L5222): a binary
// op of the zip's cluster, optionally with a mode, in which 0 is group 0
// and 1 group 1 (Mode01, the default, is op(group0, group1)).
func ParseVeZip(k StageKind, param string) (VeCall, error) {
	var c VeCall
	cl := ZipCluster(k)
	if cl == "" {
		return c, fmt.Errorf("%s is no zip op", k)
	}
	args, err := splitVeArgs(param, 0)
	if err != nil {
		return c, fmt.Errorf("%s %q: %w", k, param, err)
	}
	if len(args) == 0 || len(args) > 2 {
		return c, fmt.Errorf("%s %q: want op[, mode]", k, param)
	}
	c.Op = CanonicalVeOp(cl, args[0].text)
	info, ok := LookupVeOp(cl, c.Op)
	if !ok || info.Arity != 2 {
		return c, fmt.Errorf("%s %q: column %d: %q is not a binary %s", k, param, args[0].off+1, c.Op, veEnumName[cl])
	}
	if len(args) == 2 {
		m, ok := modeArg(args[1])
		if !ok || !ArgModeOK(2, m) {
			return c, fmt.Errorf("%s %q: column %d: %q is not a BinaryArgMode", k, param, args[1].off+1, args[1].text)
		}
		c.Mode = m
	}
	return c, nil
}

// ZipParam prints a zip call's canonical Param.
func (c VeCall) ZipParam() string {
	if c.Mode == "" {
		return c.Op
	}
	return c.Op + ", " + c.Mode
}

// ZipRust prints a zip call's Rust arguments for elements of type d.
func (c VeCall) ZipRust(k StageKind, d dtype.DType) string {
	s := RustVeOp(ZipCluster(k), d, c.Op)
	if c.Mode != "" {
		s += ", " + RustArgMode(2, c.Mode)
	}
	return s
}
