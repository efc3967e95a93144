package engines

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The intra-slice block's pass (002 L4678-4750): the stages in their fixed
// order, Way8 and Way4, the ALUs, the stash, and the derivation of every
// stage's configuration from the stream's mappings. lowerVectorStage
// (lower.go) walks a chain's Vector Engine stages through a vePass.

var (
	ruleVEWay = NewRule(Rule{ID: "VE-R6", Engine: "vector", Name: "Way8 and Way4 stages",
		Cite: "002 L4731-4747, L4804, L4822, L4875-4876, L4908, L4915, L4954",
		Text: "Logic, Fxp, FxpToFp, FpToFxp, Clip, Filter and Output run Way8 (8 elements per packet); Float, IntraSliceReduce and FpDiv run Way4 (4 elements): a Narrow (vector_split or vector_trim_way4) precedes them and a Widen (vector_concat or vector_pad_way8) follows them"})
	ruleVEOpType = NewRule(Rule{ID: "VE-R7", Engine: "vector", Name: "op types",
		Cite: "002 L4806-4822, L4837-4841, L4875, L4909-4918, L4948-4972",
		Text: "Fxp ops take i32; Float and FpDiv ops f32; FxpToFp takes i32 and FpToFxp f32; f32 Logic has only BitAnd, BitOr and BitXor; Clip AddFxp/AddFxpSat are i32, Add f32; intra-slice reduce AddSat is i32, Add f32"})
	ruleVETrim = NewRule(Rule{ID: "VE-R8", Engine: "vector", Name: "trim keeps the real lanes",
		Cite: "002 L4842-4871, L6578, L6582",
		Text: "vector_trim_way4 keeps the lower 4 lanes: the upper 4 must be padding, and Packet2 is the lower 4 ([T], [P] -> [T], [P = 4]); vector_split turns [T], [P] into [T, P / 2], [P % 4]"})
	ruleVEWiden = NewRule(Rule{ID: "VE-R9", Engine: "vector", Name: "widen reverses narrow",
		Cite: "002 L4919-4947",
		Text: "vector_concat reverses vector_split ([T, P / 2], [P % 4] -> [T], [P]); vector_pad_way8 reverses vector_trim_way4, padding the packet to 8 lanes ([T], [P] -> [T], [P # 8])"})
	ruleVEStash = NewRule(Rule{ID: "VE-R10", Engine: "vector", Name: "stash",
		Cite: "002 L4977-4990, L5258",
		Text: "vector_stash snapshots the stream at a Stashable stage (Branch, Logic, Fxp, Narrow, Fp, FpDiv, Clip); one stash per pass, read once by a later op of its element type"})
	ruleVEOperandSlots = NewRule(Rule{ID: "VE-R21", Engine: "vector", Name: "operand slots",
		Cite: "002 L5052-5062",
		Text: "binary and ternary ops take their operands (constants, a VRF tensor, the stash) per ExecutionId group: VeBranchOperand::always applies to every element, ::group to one group; the slots' groups do not overlap, and an op reads at most one register-file operand (VRF or stash)"})
	ruleVEArgMode = NewRule(Rule{ID: "VE-R22", Engine: "vector", Name: "argument mode",
		Cite: "002 L5082-5106",
		Text: "an op's argument mode is one of its arity's: Mode0/Mode1 (unary), Mode00/01/10/11 (binary), Mode012/002/102/112/020/021/120 (ternary); it routes the stream (0) and operands (1, 2) to the op's inputs"})
	ruleVEIntWidth = NewRule(Rule{ID: "VE-R23", Engine: "vector", Name: "int_width",
		Cite: "002 L4838, L4949",
		Text: "vector_fxp_to_fp and vector_fp_to_fxp take the integer bit width of the i32 fixed-point format, 0 to 31 (31: plain integers)"})
	ruleVEFilter = NewRule(Rule{ID: "VE-R24", Engine: "vector", Name: "filter",
		Cite: "002 L4973-4974, L5204-5205, L8580-8584",
		Text: "vector_filter::<Time2>(group) keeps the elements of one ExecutionId group, packed in stream order into Time2's Way8 packets"})
	ruleVEBranch = NewRule(Rule{ID: "VE-R25", Engine: "vector", Name: "branch modes",
		Cite: "002 L4794-4802",
		Text: "vector_intra_slice_branch sets each element's 4-bit ExecutionId: Unconditional 0; AxisToggle group bit axis_index % 2; Comparison bit i from comparison i of the element's value; ValidCount from the Valid Count Generator; Vrf from the VRF"})
	ruleVEPair = NewRule(Rule{ID: "VE-R11", Engine: "vector", Name: "two-group mode",
		Cite: "002 L4749, L5154-5205, L5259",
		Text: "vector_intra_slice_unzip comes right after vector_init and splits the stream by a 2-way Time axis into two groups; per-group ops take one operand per group (() skips one), the common stages (FxpToFp, Narrow, Widen, FpToFxp) apply to both, a _zip op merges them; stash and filter are unavailable while paired and after the zip"})
	ruleISRWay = NewRule(Rule{ID: "ISR-R1", Engine: "vector", Name: "reduce runs Way4",
		Cite: "002 L4908, L5298, L5365",
		Text: "the intra-slice reduce takes the 4-way packets of a Narrow stage"})
	ruleISROps = NewRule(Rule{ID: "ISR-R2", Engine: "vector", Name: "reduce ops",
		Cite: "002 L4909-4912, L5391-5402",
		Text: "intra-slice reduce ops: AddSat, Max, Min on i32; Add, Max, Min on f32"})
	ruleISRShape = NewRule(Rule{ID: "ISR-R3", Engine: "vector", Name: "reduce output shape",
		Cite: "002 L5359-5361",
		Text: "OTime and OPacket are exactly the input Time and Packet with every factor of the reduce label removed; when the label is in Packet it must be the packet's only axis, the packet reducing to m![1 # 4]"})
	ruleISRSlots = NewRule(Rule{ID: "ISR-R4", Engine: "vector", Name: "accumulator slots",
		Cite: "002 L5381, L5388, L5498-5543",
		Text: "the non-reduce Time factors inside the outermost reduce factor each need an accumulator slot: their product is at most 8"})
)

// The intra-slice stage order (002 L4733-4747).
const (
	veStageInit    = 0
	veStageBranch  = 1  // Branch (002 L4735)
	veStageLogic   = 2  // Logic (002 L4736)
	veStageFxp     = 3  // Fxp (002 L4737)
	veStageFxpToFp = 4  // FxpToFp (002 L4738)
	veStageNarrow  = 5  // Narrow (002 L4739)
	veStageFloat   = 6  // Float (002 L4740)
	veStageReduce  = 7  // IntraSliceReduce (002 L4741)
	veStageFpDiv   = 8  // FpDiv (002 L4742)
	veStageWiden   = 9  // Widen (002 L4743)
	veStageFpToFxp = 10 // FpToFxp (002 L4744)
	veStageClip    = 11 // Clip (002 L4745)
	veStageFilter  = 12 // Filter (002 L4746)
	veStageOutput  = 13 // Output (002 L4747)
)

// veStageOf is the stage of each kind; vector_stash is no stage.
var veStageOf = map[kernel.StageKind]int{
	kernel.StVectorBranch: veStageBranch, kernel.StVectorLogic: veStageLogic, kernel.StVectorFxp: veStageFxp,
	kernel.StVectorFxpToFp: veStageFxpToFp, kernel.StVectorSplit: veStageNarrow, kernel.StVectorTrim: veStageNarrow,
	kernel.StVectorFpUnary: veStageFloat, kernel.StVectorFpBinary: veStageFloat, kernel.StVectorFpTernary: veStageFloat,
	kernel.StVectorReduce: veStageReduce, kernel.StVectorFpDiv: veStageFpDiv, kernel.StVectorConcat: veStageWiden,
	kernel.StVectorPad: veStageWiden, kernel.StVectorFpToFxp: veStageFpToFxp, kernel.StVectorClip: veStageClip,
	kernel.StVectorFilter: veStageFilter, kernel.StVectorFinal: veStageOutput,
	kernel.StVectorUnzip: veStageBranch, kernel.StVectorLogicZip: veStageLogic, kernel.StVectorFxpZip: veStageFxp,
	kernel.StVectorFpZip: veStageFloat, kernel.StVectorClipZip: veStageClip,
}

// veStageNames names the stages for messages.
var veStageNames = []string{"vector_init", "Branch", "Logic", "Fxp", "FxpToFp", "Narrow", "Float", "IntraSliceReduce", "FpDiv", "Widen", "FpToFxp", "Clip", "Filter", "Output"}

// veRepeatable are the clusters whose ALUs may serve several ops of one
// pass, one op per ALU (002 L4750: "multiple operators share a
// stage-local ALU pool").
var veRepeatable = map[int]bool{veStageLogic: true, veStageFxp: true, veStageFloat: true, veStageClip: true}

// veStashable are the stages vector_stash may follow (002 L4982-4983).
var veStashable = map[int]bool{veStageBranch: true, veStageLogic: true, veStageFxp: true, veStageNarrow: true,
	veStageFloat: true, veStageFpDiv: true, veStageClip: true}

// veWay4 are the stages that run Way4 (002 L4740-4742).
var veWay4 = map[int]bool{veStageFloat: true, veStageReduce: true, veStageFpDiv: true}

// vePass is the state of a Vector Engine pass while a chain is lowered: the
// last stage entered, the ALUs in use, the packet mode and the stash.
type vePass struct {
	stage int
	alus  []kernel.VeALU
	// way is 8 or 4 lanes per packet (002 L4731).
	way int
	// stash is the snapshot taken by vector_stash, nil before it.
	stash *veStashState
	// pair is set between vector_intra_slice_unzip and the zip op that
	// merges the groups; zipped after it (002 L5154-5205).
	pair, zipped bool
	// input is the stream entering the pass, and init vector_init's
	// configuration, which a reduce's Valid Count Generator joins.
	input VectorStream
	init  *kernel.VectorInitConfig
	// inter is the pass's inter-slice reduction order (engines/interslice.go).
	inter int
}

// veStashState is the stash: its type, the stream's mappings when it was
// taken, and whether an op has read it.
type veStashState struct {
	dt           dtype.DType
	time, packet *mapping.Expr
	lanes        int
	read         bool
}

// enter moves the pass to a stage of order pos, named kind.
func (v *vePass) enter(pos int, kind kernel.StageKind, last kernel.StageKind) error {
	if done, err := v.afterInterSlice(pos, kind); done || err != nil {
		return err
	}
	if pos == veStageBranch {
		if v.stage != veStageInit {
			return ruleVEEntry.Violate("%s after %s; it comes right after vector_init", kind, last)
		}
	} else if v.stage == veStageInit {
		return ruleVEEntry.Violate("%s right after vector_init; the intra-slice block starts with vector_intra_slice_branch or vector_intra_slice_unzip", kind)
	}
	switch {
	case kernel.ZipCluster(kind) != "" && !v.pair:
		return ruleVEPair.Violate("%s outside two-group mode: vector_intra_slice_unzip first", kind)
	case v.pair && (pos == veStageReduce || pos == veStageFpDiv || pos == veStageFilter || pos == veStageOutput):
		return ruleVEPair.Violate("%s while the groups are paired: merge them with a _zip op first", kind)
	case v.zipped && pos == veStageFilter:
		return ruleVEPair.Violate("vector_filter after a _zip op (002 L5204-5205)")
	}
	if pos < v.stage || pos == v.stage && !veRepeatable[pos] {
		return ruleVEOrder.Violate("%s (%s) after %s (%s): the stage order does not go back", kind, veStageNames[pos], last, veStageNames[v.stage])
	}
	switch {
	case veWay4[pos] && v.way != 4:
		return ruleVEWay.Violate("%s runs Way4: narrow the stream first (vector_split or vector_trim_way4)", kind)
	case pos == veStageNarrow && v.way != 8, pos == veStageWiden && v.way != 4:
		return ruleVEWay.Violate("%s after %s: Narrow takes Way8 and Widen Way4 packets", kind, last)
	case pos > veStageWiden && v.way != 8, pos < veStageNarrow && v.way != 8:
		return ruleVEWay.Violate("%s runs Way8: widen the stream first (vector_concat or vector_pad_way8)", kind)
	}
	v.stage = pos
	return nil
}

// use takes an ALU for the pass.
func (v *vePass) use(a kernel.VeALU) error {
	if a == "" {
		return nil
	}
	for _, b := range v.alus {
		if a == b {
			return ruleVEALU.Violate("%s is already in use", a)
		}
	}
	v.alus = append(v.alus, a)
	return nil
}

// VectorStream is the stream's type inside a Vector Engine pass: element
// type, Slice, Time and Packet mappings (Packet of 8 elements in Way8, 4
// in Way4).
type VectorStream struct {
	DType               dtype.DType
	Slice, Time, Packet *mapping.Expr
	// Groups is 2 in two-group mode (Time is then each group's), else 1
	// (0 reads as 1).
	Groups int
}

// groups is the number of groups the stream holds.
func (s VectorStream) groups() int { return max(s.Groups, 1) }

// VeConstBits reads a constant operand as element bits of type d: an i32
// (decimal or hex, optional `i32` suffix; hex up to 0xffffffff is the bit
// pattern) or an f32 (optional `f32` suffix) rounded to nearest.
func VeConstBits(text string, d dtype.DType) (uint32, error) {
	t := strings.ReplaceAll(text, "_", "")
	switch d {
	case dtype.I32:
		if strings.HasSuffix(t, "f32") {
			return 0, fmt.Errorf("constant %q is an f32, the op takes i32", text)
		}
		t = strings.TrimSuffix(t, "i32")
		if v, err := strconv.ParseInt(t, 0, 32); err == nil {
			return uint32(int32(v)), nil
		}
		if strings.HasPrefix(t, "0x") {
			if v, err := strconv.ParseUint(t, 0, 32); err == nil {
				return uint32(v), nil
			}
		}
		return 0, fmt.Errorf("constant %q is not an i32", text)
	case dtype.F32:
		if strings.HasSuffix(t, "i32") {
			return 0, fmt.Errorf("constant %q is an i32, the op takes f32", text)
		}
		t = strings.TrimSuffix(t, "f32")
		if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "-0x") {
			return 0, fmt.Errorf("constant %q: write an f32 as a decimal number", text)
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("constant %q is not an f32", text)
		}
		return math.Float32bits(float32(v)), nil
	}
	return 0, fmt.Errorf("constant %q of type %s", text, d)
}

// veCluster is the cluster name of an ALU op stage, for the function table.
func veCluster(k kernel.StageKind) string {
	switch k {
	case kernel.StVectorLogic:
		return "logic"
	case kernel.StVectorFxp:
		return "fxp"
	case kernel.StVectorFpUnary, kernel.StVectorFpBinary, kernel.StVectorFpTernary:
		return "fp"
	case kernel.StVectorFpDiv:
		return "fpdiv"
	case kernel.StVectorClip:
		return "clip"
	}
	return ""
}

// VectorOpInput is an ALU op stage to derive: its kind, its call, the
// stream, the VRF tensor its operand reads (nil if none) and the stash
// (nil if the pass has none).
type VectorOpInput struct {
	Kind   kernel.StageKind
	Call   kernel.VeCall
	Stream VectorStream
	VRF    *VRFReadInput
	// Stash is the stash's type and mappings when it was taken.
	Stash *VectorStashInput
}

// VectorStashInput is the stash an op may read.
type VectorStashInput struct {
	DType        dtype.DType
	Time, Packet *mapping.Expr
}

// DeriveVectorOp checks an ALU op stage (Logic, Fxp, Float, FpDiv, Clip)
// and derives its configuration: the op's ALU and element type, the
// argument mode, the operands as element bits, VRF reads and the stash's
// gather.
func DeriveVectorOp(spec *Spec, in VectorOpInput) (kernel.VectorOpConfig, error) {
	var c kernel.VectorOpConfig
	if spec == nil {
		return c, errors.New("vector: nil hardware spec")
	}
	info, ok := kernel.LookupVeOp(in.Kind, in.Call.Op)
	if !ok {
		return c, fmt.Errorf("vector: %s: unknown op %q", in.Kind, in.Call.Op)
	}
	d := in.Stream.DType
	if !info.Takes(d) {
		return c, ruleVEOpType.Violate("%s(%s) on a %s stream (%s)", in.Kind, info.Name, d, info.Cite)
	}
	if strings.HasPrefix(info.Name, "Mask") {
		// "masked multiply", "masked fused multiply-add" (002 L4897-4898,
		// L4904): the manual does not say what masks them.
		return c, fmt.Errorf("vector: %s (%s): the mask of a masked op is not stated: %w", info.Name, info.Cite, ErrNotModelled)
	}
	mode := in.Call.Mode
	if mode == "" {
		mode = kernel.DefaultArgMode(info.Arity)
	}
	if !kernel.ArgModeOK(info.Arity, mode) {
		return c, ruleVEArgMode.Violate("%s is not a %d-ary mode", mode, info.Arity)
	}
	if info.Arity == 1 && mode != "Mode0" {
		// UnaryArgMode::Mode1 is op(operand) (002 L5089), but unary methods
		// take no operand (002 L4740, L5244).
		return c, ruleVEArgMode.Violate("%s: UnaryArgMode::%s reads an operand, and vector_fp_unary takes none", info.Name, mode)
	}
	lanes := in.Stream.Packet.Size()
	c = kernel.VectorOpConfig{Op: info.Name, ALU: info.ALU, DType: d, Arity: info.Arity, Mode: mode, Lanes: lanes}
	if in.Call.Pair != (in.Stream.groups() == 2) {
		if in.Call.Pair {
			return kernel.VectorOpConfig{}, ruleVEPair.Violate("%s with one argument per group outside two-group mode", info.Name)
		}
		return kernel.VectorOpConfig{}, ruleVEPair.Violate("%s in two-group mode takes one argument per group (() skips one)", info.Name)
	}
	if in.Call.Pair {
		pc := &kernel.VePairConfig{Apply: in.Call.Apply}
		for g := 0; g < 2; g++ {
			if info.Arity == 1 || !in.Call.Apply[g] {
				continue
			}
			sl, err := deriveSlots(spec, in, info, in.Call.Groups[g])
			if err != nil {
				return kernel.VectorOpConfig{}, err
			}
			pc.Slots[g] = sl
		}
		c.Pair = pc
		return c, nil
	}
	if info.Arity == 1 {
		return c, nil
	}
	sl, err := deriveSlots(spec, in, info, in.Call.Slots)
	if err != nil {
		return kernel.VectorOpConfig{}, err
	}
	c.Slots = sl
	return c, nil
}

// deriveSlots lowers an op's operand slots: constants as element bits,
// VRF reads, the stash's gather.
func deriveSlots(spec *Spec, in VectorOpInput, info kernel.VeOpInfo, slots []kernel.VeSlot) ([]kernel.VeSlotConfig, error) {
	d := in.Stream.DType
	var out []kernel.VeSlotConfig
	if len(slots) == 0 {
		return nil, ruleVEOperandSlots.Violate("%s takes an operand", info.Name)
	}
	guards := map[int]bool{}
	rf := 0
	for _, s := range slots {
		if guards[s.Guard] || s.Guard == kernel.GuardAlways && len(guards) > 0 || guards[kernel.GuardAlways] {
			return nil, ruleVEOperandSlots.Violate("%s: operand slots for overlapping groups", info.Name)
		}
		guards[s.Guard] = true
		if len(s.Operands) != info.Arity-1 {
			return nil, ruleVEOperandSlots.Violate("%s takes %d operands per slot, found %d", info.Name, info.Arity-1, len(s.Operands))
		}
		sc := kernel.VeSlotConfig{Guard: s.Guard}
		for _, o := range s.Operands {
			oc := kernel.VeOperandConfig{Kind: o.Kind}
			switch o.Kind {
			case kernel.VeConst:
				b, err := VeConstBits(o.Text, d)
				if err != nil {
					return nil, ruleVEType.Violate("%s: %v", info.Name, err)
				}
				oc.Bits = b
			case kernel.VeVRF:
				rf++
				if in.VRF == nil || in.VRF.Tensor != o.Tensor {
					return nil, fmt.Errorf("vector: %s reads VRF tensor %q, which the stage does not name", info.Name, o.Tensor)
				}
				if in.VRF.DType != d {
					return nil, ruleVEOpType.Violate("%s reads VRF %q of %s on a %s stream", info.Name, o.Tensor, in.VRF.DType, d)
				}
				r := *in.VRF
				r.Time, r.Packet = in.Stream.Time, in.Stream.Packet
				rd, err := DeriveVRFRead(spec, r)
				if err != nil {
					return nil, err
				}
				oc.VRF = &rd
			case kernel.VeStash:
				rf++
				if in.Stash == nil {
					return nil, ruleVEStash.Violate("%s reads the stash, but the pass has none (vector_stash first) or it was read", info.Name)
				}
				if in.Stash.DType != d {
					return nil, ruleVEStash.Violate("%s on %s reads a %s stash: the stash is typed", info.Name, d, in.Stash.DType)
				}
				g, err := veGather(in.Stash.Time, in.Stash.Packet, in.Stream.Time, in.Stream.Packet)
				if err != nil {
					return nil, ruleVEStash.Violate("%s: the stash [%s, %s] cannot be read as [%s, %s]: %v",
						info.Name, in.Stash.Time, in.Stash.Packet, in.Stream.Time, in.Stream.Packet, err)
				}
				oc.Gather = g
			default:
				return nil, fmt.Errorf("vector: %s: unknown operand kind %q", info.Name, o.Kind)
			}
			sc.Operands = append(sc.Operands, oc)
		}
		out = append(out, sc)
	}
	if rf > 1 {
		// One register-file port per op: the VRF or the stash (furiosa-opt
		// intra-slice-chain.md "Tag": 3 immediates + 1 register-file
		// operand; 002 L5052-5062 shows one).
		return nil, ruleVEOperandSlots.Violate("%s reads %d register-file operands (VRF or stash), at most 1", info.Name, rf)
	}
	return out, nil
}

// veGather maps each position of the stream [toT, toP] to the position of
// the stream [fromT, fromP] holding the same element, -1 for a padding
// position; nil when the two hold every element at the same position
// (002 L4986: the stash "reinterprets or transposes it to the current
// mapping as needed"). An element of the current stream the stash does not
// hold is an error.
func veGather(fromT, fromP, toT, toP *mapping.Expr) ([]int32, error) {
	from, to := mapping.Pair(fromT, fromP), mapping.Pair(toT, toP)
	if from.Err() != nil || to.Err() != nil {
		return nil, errors.New("invalid mapping")
	}
	if ceEquiv(from, to) {
		return nil, nil
	}
	ff, err := mapping.Factorize(from)
	if err != nil {
		return nil, err
	}
	tf, err := mapping.Factorize(to)
	if err != nil {
		return nil, err
	}
	at := map[string]int32{}
	for i := 0; i < ff.Size(); i++ {
		if c := ff.Map(i); c.Kind == mapping.Live {
			k := c.Index.String()
			if _, dup := at[k]; !dup {
				at[k] = int32(i)
			}
		}
	}
	g := make([]int32, tf.Size())
	for i := range g {
		c := tf.Map(i)
		if c.Kind != mapping.Live {
			g[i] = -1
			continue
		}
		p, ok := at[c.Index.String()]
		if !ok {
			return nil, fmt.Errorf("element %s is not in the stash", c.Index)
		}
		g[i] = p
	}
	return g, nil
}

// DeriveVectorConvert checks vector_fxp_to_fp (kind StVectorFxpToFp) or
// vector_fp_to_fxp and derives its configuration.
func DeriveVectorConvert(kind kernel.StageKind, intWidth int, d dtype.DType) (kernel.VectorConvertConfig, error) {
	from, to := dtype.I32, dtype.F32
	if kind == kernel.StVectorFpToFxp {
		from, to = dtype.F32, dtype.I32
	}
	if d != from {
		return kernel.VectorConvertConfig{}, ruleVEOpType.Violate("%s takes %s, the stream is %s", kind, from, d)
	}
	if intWidth < 0 || intWidth > 31 {
		return kernel.VectorConvertConfig{}, ruleVEIntWidth.Violate("int_width %d is outside 0..31", intWidth).With("int_width", intWidth)
	}
	return kernel.VectorConvertConfig{From: from, To: to, IntWidth: intWidth}, nil
}

// DeriveVectorWay checks a Narrow or Widen stage (vector_split,
// vector_trim_way4, vector_concat, vector_pad_way8) against the stream and
// derives its configuration; time2 and packet2 are the stage's type
// arguments (time2 nil for trim and pad, which keep Time).
func DeriveVectorWay(spec *Spec, kind kernel.StageKind, s VectorStream, time2, packet2 *mapping.Expr) (kernel.VectorWayConfig, error) {
	var c kernel.VectorWayConfig
	if spec == nil {
		return c, errors.New("vector: nil hardware spec")
	}
	w8, w4 := spec.Vector.Way8ElementsPerCycle.Value, spec.Vector.Way4ElementsPerCycle.Value
	if packet2 == nil || (kind == kernel.StVectorSplit || kind == kernel.StVectorConcat) && time2 == nil {
		return c, fmt.Errorf("vector: %s needs its Time2 and Packet2 mappings", kind)
	}
	if err := ceCheckExprs("vector", []string{"Packet2"}, packet2); err != nil {
		return c, err
	}
	T, P := s.Time, s.Packet
	g := s.groups() // a pair's stream holds both groups' packets
	switch kind {
	case kernel.StVectorSplit, kernel.StVectorTrim:
		if P.Size() != w8 {
			return c, ruleVEWay.Violate("%s takes a Way8 packet of %d elements, %s has %d", kind, w8, P.Text(), P.Size())
		}
		outer, inner, err := veSplit(P, w4)
		if err != nil {
			return c, ruleVETrim.Violate("packet %s does not split at %d lanes: %v", P.Text(), w4, err)
		}
		if !ceEquiv(packet2, inner) {
			return c, ruleVETrim.Violate("Packet2 %s is not the packet's lower %d lanes %s", packet2.Text(), w4, inner.Text())
		}
		if kind == kernel.StVectorTrim {
			if n := veLive(outer); n > 1 {
				return c, ruleVETrim.Violate("the upper %d lanes of packet %s hold data (%s): vector_trim_way4 drops them; use vector_split", w8-w4, P.Text(), outer.Text())
			}
			return kernel.VectorWayConfig{Kind: kernel.WayTrim, InPackets: g * T.Size(), InLanes: w8, OutPackets: g * T.Size(), OutLanes: w4}, nil
		}
		if err := ceCheckExprs("vector", []string{"Time2"}, time2); err != nil {
			return c, err
		}
		if want := mapping.Pair(T, outer); !ceEquiv(time2, want) {
			return c, ruleVETrim.Violate("Time2 %s is not [Time, Packet / %d] = %s", time2.Text(), w4, want.Text())
		}
		return kernel.VectorWayConfig{Kind: kernel.WaySplit, InPackets: g * T.Size(), InLanes: w8, OutPackets: 2 * g * T.Size(), OutLanes: w4}, nil
	case kernel.StVectorConcat, kernel.StVectorPad:
		if P.Size() != w4 {
			return c, ruleVEWay.Violate("%s takes a Way4 packet of %d elements, %s has %d", kind, w4, P.Text(), P.Size())
		}
		if packet2.Size() != w8 {
			return c, ruleVEWiden.Violate("Packet2 %s has %d elements, want %d", packet2.Text(), packet2.Size(), w8)
		}
		if kind == kernel.StVectorPad {
			outer, inner, err := veSplit(packet2, w4)
			if err != nil || !ceEquiv(inner, P) || veLive(outer) > 1 {
				return c, ruleVEWiden.Violate("Packet2 %s is not packet %s padded to %d lanes", packet2.Text(), P.Text(), w8)
			}
			return kernel.VectorWayConfig{Kind: kernel.WayPad, InPackets: g * T.Size(), InLanes: w4, OutPackets: g * T.Size(), OutLanes: w8}, nil
		}
		if err := ceCheckExprs("vector", []string{"Time2"}, time2); err != nil {
			return c, err
		}
		if T.Size()%2 != 0 {
			return c, ruleVEWiden.Violate("Time %s has %d steps: vector_concat merges pairs of packets", T.Text(), T.Size())
		}
		touter, tinner, err := veSplit(T, 2)
		if err != nil {
			return c, ruleVEWiden.Violate("Time %s does not end in a factor of 2 to merge: %v", T.Text(), err)
		}
		if !ceEquiv(time2, touter) {
			return c, ruleVEWiden.Violate("Time2 %s is not Time without its innermost factor of 2, %s", time2.Text(), touter.Text())
		}
		if want := mapping.Pair(tinner, P); !ceEquiv(packet2, want) {
			return c, ruleVEWiden.Violate("Packet2 %s is not [Time %% 2, Packet] = %s", packet2.Text(), want.Text())
		}
		return kernel.VectorWayConfig{Kind: kernel.WayConcat, InPackets: g * T.Size(), InLanes: w4, OutPackets: g * T.Size() / 2, OutLanes: w8}, nil
	}
	return c, fmt.Errorf("vector: %s is not a Narrow or Widen stage", kind)
}

// veSplit splits e at n into independent mappings (mapping.SplitAt on its
// factorized form): a padded packet splits between its live and padding
// lanes (`A % 2 # 8` at 4 is `1 # 2`, `A % 2 # 4`).
func veSplit(e *mapping.Expr, n int) (outer, inner *mapping.Expr, err error) {
	outer, inner, err = mapping.SplitAt(e, n)
	if err != nil {
		return nil, nil, err
	}
	if _, err := mapping.Factorize(outer); err != nil {
		return nil, nil, fmt.Errorf("%s does not split at %d into loops", e.Text(), n)
	}
	if _, err := mapping.Factorize(inner); err != nil {
		return nil, nil, fmt.Errorf("%s does not split at %d into loops", e.Text(), n)
	}
	return outer, inner, nil
}

// veLive is the number of live positions of e (its size without padding).
func veLive(e *mapping.Expr) int {
	ds, err := ceDigits(e)
	if err != nil {
		return e.Size()
	}
	n := 1
	for _, d := range ds {
		n *= d.live
	}
	return n
}

// VectorReduceInput is an intra-slice reduce to derive: the stream (Way4),
// the reduce label, the op and the output mappings.
type VectorReduceInput struct {
	Stream         VectorStream
	Axis           string
	Op             string
	OTime, OPacket *mapping.Expr
	// VCG says the pass's Valid Count Generator tracks the axis
	// (DeriveVCG): its padding may then reach the reduce.
	VCG bool
}

// DeriveVectorReduce checks vector_intra_slice_reduce::<R, OTime,
// OPacket>(op) and derives its configuration (002 L5285-5543).
func DeriveVectorReduce(spec *Spec, in VectorReduceInput) (kernel.VectorReduceConfig, error) {
	var c kernel.VectorReduceConfig
	if spec == nil {
		return c, errors.New("vector: nil hardware spec")
	}
	s := in.Stream
	if err := ceCheckExprs("vector", []string{"OTime", "OPacket"}, in.OTime, in.OPacket); err != nil {
		return c, err
	}
	w4 := spec.Vector.IntraReduceTreeWidth.Value
	if s.Packet.Size() != w4 {
		return c, ruleISRWay.Violate("packet %s has %d elements, the reduce tree takes %d", s.Packet.Text(), s.Packet.Size(), w4)
	}
	op := kernel.CanonicalReduceOp(in.Op)
	info, ok := kernel.LookupVeOp(kernel.StVectorReduce, op)
	if !ok || !info.Takes(s.DType) {
		return c, ruleISROps.Violate("%s on %s", op, s.DType)
	}
	if in.Axis == "" {
		return c, ruleISRShape.Violate("no reduce label")
	}
	// Time loops, outermost first.
	td, err := ceDigits(s.Time)
	if err != nil {
		return c, ruleISRShape.Violate("Time %s: %v", s.Time.Text(), err)
	}
	pd, err := ceDigits(s.Packet)
	if err != nil {
		return c, ruleISRShape.Violate("Packet %s: %v", s.Packet.Text(), err)
	}
	isR := func(d ceDigit) bool { return d.kind == ceTerm && d.axis == in.Axis }
	padded := func(d ceDigit) bool { return d.size > d.live }
	c = kernel.VectorReduceConfig{Op: op, DType: s.DType, Axis: in.Axis, Lanes: w4, InPackets: s.Time.Size(), Span: 1}
	var nr []ceDigit
	for i := len(td) - 1; i >= 0; i-- {
		d := td[i]
		c.Time = append(c.Time, kernel.VeReduceDigit{Size: d.size, Reduce: isR(d)})
		if isR(d) {
			if padded(d) && !in.VCG {
				return kernel.VectorReduceConfig{}, fmt.Errorf("vector: reduce axis %s is padded in Time (%s) and no Valid Count Generator tracks it (002 L5574-6582): %w", in.Axis, d.text(), ErrNotModelled)
			}
			c.Span *= d.size
		} else {
			nr = append(nr, d)
		}
	}
	inPacket := false
	cover := 1 // the positions of R the Slice, Time and Packet loops span
	for _, d := range pd {
		if isR(d) {
			inPacket = true
			cover *= d.size
		}
	}
	for _, d := range td {
		if isR(d) {
			cover *= d.size
		}
	}
	if s.Slice != nil {
		sd, err := ceDigits(s.Slice)
		if err != nil {
			return kernel.VectorReduceConfig{}, ruleISRShape.Violate("Slice %s: %v", s.Slice.Text(), err)
		}
		for _, d := range sd {
			if isR(d) {
				cover *= d.size
			}
		}
	}
	if size, _ := axisSizeOf(pd, td, in.Axis); cover > size && !in.VCG {
		// Some slice or time step holds padding of R: only the Valid Count
		// Generator tells the reduce which (002 L5376-5377, L5474-5497).
		return kernel.VectorReduceConfig{}, fmt.Errorf("vector: reduce axis %s (%d) is padded to %d positions across Slice, Time and Packet: the Valid Count Generator (002 L5574-6582): %w",
			in.Axis, size, cover, ErrNotModelled)
	}
	wantPacket := s.Packet
	if inPacket {
		c.PacketReduce = true
		for i, d := range pd {
			switch {
			case in.VCG && (isR(d) && i == 0 || i > 0 && (d.kind == cePad || d.live == 1)):
				// The VCG's valid counts leave the padding out (002 L5376-5377).
			case isR(d) && padded(d), !isR(d) && d.live > 1 && d.kind != cePad:
				return kernel.VectorReduceConfig{}, ruleISRShape.Violate("Packet %s: the reduce axis %s must fill the packet alone (a packet reduces to one value)", s.Packet.Text(), in.Axis)
			case d.kind == cePad || !isR(d) && d.live == 1:
				if i == 0 {
					return kernel.VectorReduceConfig{}, ruleISRShape.Violate("Packet %s: the reduce axis must occupy the packet's first lanes", s.Packet.Text())
				}
				return kernel.VectorReduceConfig{}, fmt.Errorf("vector: reduce axis %s fills %d of the packet's %d lanes: the Valid Count Generator (002 L5574-6582): %w",
					in.Axis, veLive(s.Packet), w4, ErrNotModelled)
			}
		}
		wantPacket = mapping.Broadcast(1).Pad(w4, mapping.Top)
	}
	var nrExprs []*mapping.Expr
	for _, d := range nr {
		nrExprs = append(nrExprs, ceDigitExpr(d))
	}
	wantTime := mapping.Identity()
	if len(nrExprs) > 0 {
		wantTime = mapping.Pair(nrExprs...)
	}
	if !ceEquiv(in.OTime, wantTime) {
		return kernel.VectorReduceConfig{}, ruleISRShape.Violate("OTime %s is not Time %s without %s: %s", in.OTime.Text(), s.Time.Text(), in.Axis, wantTime.Text())
	}
	if !ceEquiv(in.OPacket, wantPacket) {
		return kernel.VectorReduceConfig{}, ruleISRShape.Violate("OPacket %s is not %s", in.OPacket.Text(), wantPacket.Text())
	}
	c.OutPackets = in.OTime.Size()
	// Slots: the non-reduce Time loops inside the outermost reduce loop
	// (002 L5500-5521).
	c.Slots = 1
	seenR := false
	for _, d := range c.Time {
		if d.Reduce {
			seenR = true
		} else if seenR {
			c.Slots *= d.Size
		}
	}
	if limit := spec.Vector.IntraReduceAccumulatorSlots.Value; c.Slots > limit {
		return kernel.VectorReduceConfig{}, ruleISRSlots.Violate("%d accumulator slots required, but only %d are available (Time %s)", c.Slots, limit, s.Time.Text()).With("slots", c.Slots)
	}
	return c, nil
}

// axisSizeOf is the size of axis a as the digits of the lists state it.
func axisSizeOf(lists ...any) (int, bool) {
	a := lists[len(lists)-1].(string)
	for _, l := range lists[:len(lists)-1] {
		for _, d := range l.([]ceDigit) {
			if d.kind == ceTerm && d.axis == a {
				return d.axisSize, true
			}
		}
	}
	return 0, false
}

// ceDigitExpr is a loop as a mapping: the term of its axis, a broadcast or
// a padding (`1 # n`).
func ceDigitExpr(d ceDigit) *mapping.Expr {
	switch d.kind {
	case ceBcast:
		return mapping.Broadcast(d.size)
	case cePad:
		return mapping.Broadcast(1).Pad(d.size, mapping.Top)
	}
	e := mapping.Sym(d.axis, d.axisSize)
	if d.stride > 1 {
		e = e.Div(d.stride)
	}
	if d.live < e.Size() {
		if e.Size()%d.live == 0 {
			e = e.Mod(d.live)
		} else {
			e = e.Resize(d.live)
		}
	}
	if d.size > d.live {
		e = e.Pad(d.size, mapping.Top)
	}
	return e
}

// DeriveVectorFilter checks vector_filter::<Time2>(group) and derives its
// configuration.
func DeriveVectorFilter(spec *Spec, s VectorStream, group int, time2 *mapping.Expr) (kernel.VectorFilterConfig, error) {
	if spec == nil {
		return kernel.VectorFilterConfig{}, errors.New("vector: nil hardware spec")
	}
	if err := ceCheckExprs("vector", []string{"Time2"}, time2); err != nil {
		return kernel.VectorFilterConfig{}, err
	}
	if group != kernel.GuardGroup0 && group != kernel.GuardGroup1 {
		return kernel.VectorFilterConfig{}, ruleVEFilter.Violate("group %d, want 0 or 1", group)
	}
	return kernel.VectorFilterConfig{Group: group, Lanes: s.Packet.Size(), InPackets: s.Time.Size(), OutPackets: time2.Size()}, nil
}

// DeriveVectorBranchSpec checks vector_intra_slice_branch(mode) against
// the stream and derives its configuration.
func DeriveVectorBranchSpec(spec *Spec, b kernel.BranchSpec, s VectorStream) (kernel.VectorBranchConfig, error) {
	c := kernel.VectorBranchConfig{Mode: b.Mode, DType: s.DType}
	switch b.Mode {
	case kernel.BranchUnconditional:
		return c, nil
	case kernel.BranchComparison:
		if len(b.Cmps) != 4 {
			return c, ruleVEBranch.Violate("Comparison takes 4 comparisons, found %d", len(b.Cmps))
		}
		for _, k := range b.Cmps {
			kc := kernel.VeCmpConfig{Op: k.Op}
			if k.Boundary != "" {
				v, err := VeConstBits(k.Boundary, s.DType)
				if err != nil {
					return c, ruleVEBranch.Violate("comparison %s: %v", k.Op, err)
				}
				kc.Bits = v
			}
			c.Cmps = append(c.Cmps, kc)
		}
		return c, nil
	case kernel.BranchAxisToggle:
		t, err := veToggle(b.Axis, s)
		if err != nil {
			return c, err
		}
		c.Toggle = t
		return c, nil
	case kernel.BranchValidCount:
		// The Valid Count Generator's counts (002 L4800): padding lanes get
		// group 1 (docs/spec-decisions.md "Valid Count Generator").
		return c, nil
	case kernel.BranchVrf:
		// "Load ExecutionIds from VRF (pre-written by Branch Logger in prior
		// TuExec)" (002 L4802): neither the VRF tensor, its address nor the
		// Branch Logger is stated.
		return c, fmt.Errorf("vector: BranchMode::Vrf: the VRF tensor it loads and the Branch Logger are not stated (002 L4802): %w", ErrNotModelled)
	}
	return c, ruleVEBranch.Violate("unknown mode %q", b.Mode)
}

// veToggle derives AxisToggle's parity loops: the axis coordinate of a
// stream position is the sum of its digits' value·stride over the Slice,
// Time and Packet loops of the axis, so its parity is the parity of the
// sum of the odd-stride digits.
func veToggle(axis string, s VectorStream) (*kernel.VeToggleConfig, error) {
	t := &kernel.VeToggleConfig{Axis: axis}
	found := false
	loops := func(e *mapping.Expr, what string) ([]kernel.SeqEntry, []ceDigit, error) {
		ds, err := ceDigits(e)
		if err != nil {
			return nil, nil, ruleVEBranch.Violate("AxisToggle: %s %s: %v", what, e.Text(), err)
		}
		var out []kernel.SeqEntry
		for i := len(ds) - 1; i >= 0; i-- {
			d := ds[i]
			par := 0
			if d.kind == ceTerm && d.axis == axis {
				found = true
				par = d.stride % 2
			}
			out = append(out, kernel.SeqEntry{Size: d.size, Stride: par, Term: d.text()})
		}
		return out, ds, nil
	}
	var err error
	if s.Slice != nil {
		if t.Slice, _, err = loops(s.Slice, "Slice"); err != nil {
			return nil, err
		}
	}
	if t.Time, _, err = loops(s.Time, "Time"); err != nil {
		return nil, err
	}
	pl, _, err := loops(s.Packet, "Packet")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ruleVEBranch.Violate("AxisToggle { axis: %s }: the stream's mappings do not hold %s", axis, axis)
	}
	n := s.Packet.Size()
	t.Lanes = make([]uint8, n)
	for l := 0; l < n; l++ {
		t.Lanes[l] = uint8(seqParity(pl, l))
	}
	return t, nil
}

// seqParity is Σ digit·stride mod 2 of position i in the mixed radix of
// loops (outermost first).
func seqParity(loops []kernel.SeqEntry, i int) int {
	p := 0
	for k := len(loops) - 1; k >= 0; k-- {
		sz := loops[k].Size
		if sz < 1 {
			return p
		}
		p += (i % sz) * loops[k].Stride
		i /= sz
	}
	return p & 1
}

// sortedALUs lists the ALUs in use, for messages.
func (v *vePass) sortedALUs() []string {
	var out []string
	for _, a := range v.alus {
		out = append(out, string(a))
	}
	sort.Strings(out)
	return out
}

// DeriveVectorUnzip checks vector_intra_slice_unzip::<I, TileTime,
// SplitTime>() (002 L4574-4577, L5154-5165) and derives its configuration:
// Time holds the group axis I in one loop of 2 (the interleave of
// begin_interleaved, 002 L5156); SplitTime is Time without it, TileTime
// Time with it replaced by `1 # 2` (the examples' m![1 # 2] and m![1] for
// Time m![I], 002 L5176).
func DeriveVectorUnzip(spec *Spec, s VectorStream, axis string, tileTime, splitTime *mapping.Expr) (kernel.VectorUnzipConfig, error) {
	var c kernel.VectorUnzipConfig
	if spec == nil {
		return c, errors.New("vector: nil hardware spec")
	}
	if err := ceCheckExprs("vector", []string{"TileTime", "SplitTime"}, tileTime, splitTime); err != nil {
		return c, err
	}
	td, err := ceDigits(s.Time)
	if err != nil {
		return c, ruleVEPair.Violate("Time %s: %v", s.Time.Text(), err)
	}
	c = kernel.VectorUnzipConfig{Axis: axis, Lanes: s.Packet.Size(), InPackets: s.Time.Size()}
	var split, tile []*mapping.Expr
	n := 0
	for i := len(td) - 1; i >= 0; i-- {
		d := td[i]
		isI := d.kind == ceTerm && d.axis == axis
		if isI {
			n++
			if d.size != 2 || d.live != 2 {
				return kernel.VectorUnzipConfig{}, ruleVEPair.Violate("the group axis %s is the loop %s of Time %s, want a loop of 2", axis, d.text(), s.Time.Text())
			}
			tile = append(tile, mapping.Broadcast(1).Pad(2, mapping.Top))
		} else {
			split = append(split, ceDigitExpr(d))
			tile = append(tile, ceDigitExpr(d))
		}
		c.Time = append(c.Time, kernel.VeReduceDigit{Size: d.size, Reduce: isI})
	}
	if n != 1 {
		return kernel.VectorUnzipConfig{}, ruleVEPair.Violate("Time %s holds the group axis %s in %d loops, want one loop of 2", s.Time.Text(), axis, n)
	}
	wantSplit, wantTile := mapping.Identity(), mapping.Pair(tile...)
	if len(split) > 0 {
		wantSplit = mapping.Pair(split...)
	}
	if !ceEquiv(splitTime, wantSplit) {
		return kernel.VectorUnzipConfig{}, ruleVEPair.Violate("SplitTime %s is not Time %s without %s: %s", splitTime.Text(), s.Time.Text(), axis, wantSplit.Text())
	}
	if tileTime != nil && !ceEquiv(tileTime, wantTile) {
		return kernel.VectorUnzipConfig{}, ruleVEPair.Violate("TileTime %s is not Time %s with %s as 1 # 2: %s", tileTime.Text(), s.Time.Text(), axis, wantTile.Text())
	}
	return c, nil
}

// DeriveVectorZip checks a zip op (vector_logic_zip, vector_fxp_zip,
// vector_fp_zip, vector_clip_zip; 002 L5107-5117) on a pair and derives
// its configuration: a binary op of the zip's cluster whose inputs are the
// groups, routed by the mode (0 group 0, 1 group 1).
func DeriveVectorZip(spec *Spec, k kernel.StageKind, call kernel.VeCall, s VectorStream) (kernel.VectorOpConfig, error) {
	if spec == nil {
		return kernel.VectorOpConfig{}, errors.New("vector: nil hardware spec")
	}
	cl := kernel.ZipCluster(k)
	info, ok := kernel.LookupVeOp(cl, call.Op)
	if !ok || info.Arity != 2 {
		return kernel.VectorOpConfig{}, fmt.Errorf("vector: %s: no binary op %q", k, call.Op)
	}
	if !info.Takes(s.DType) {
		return kernel.VectorOpConfig{}, ruleVEOpType.Violate("%s(%s) on a %s stream (%s)", k, info.Name, s.DType, info.Cite)
	}
	if strings.HasPrefix(info.Name, "Mask") {
		return kernel.VectorOpConfig{}, fmt.Errorf("vector: %s (%s): the mask of a masked op is not stated: %w", info.Name, info.Cite, ErrNotModelled)
	}
	mode := call.Mode
	if mode == "" {
		mode = kernel.DefaultArgMode(2)
	}
	return kernel.VectorOpConfig{Op: info.Name, ALU: info.ALU, DType: s.DType, Arity: 2, Mode: mode, Lanes: s.Packet.Size(), Zip: true}, nil
}
