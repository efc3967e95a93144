package kernel

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// Program is a kernel program: the Virtual ISA chain of one device kernel
// as data (002 L199-235: `#[device(chip = N)] fn kernel(ctx, ...)`). Its
// tensors are declared once; its ops run in program order, each in one
// context.
type Program struct {
	// Name names the kernel.
	Name string
	// Axes declares the axes every mapping of the program uses
	// (`axes![A = 2048]`, 002 L145, L588-595).
	Axes mapping.Axes
	// Chips is the number of chips of `#[device(chip = N)]` (002 L1084).
	Chips int
	// Tensors are the program's tensors: HBM inputs and outputs and every
	// DM, TRF and VRF tensor the ops produce, each named once.
	Tensors []*Tensor
	// Ops are the operations in program order.
	Ops []*Op
	// Handoff are the DMA copies the kernel leaves to its neighbours in a
	// graph: a tensor left in DM across a kernel boundary
	// (docs/spec-decisions.md "DM residency across kernels"). A to_dm
	// handoff says that, when the kernel starts, its DM tensor Dst holds
	// the HBM input (or tile view) Src as that copy would load it: the
	// previous kernel left it there. A to_hbm handoff says that the
	// kernel ends with its DM tensor Src holding the HBM result (or tile
	// view) Dst as that copy would store it: the next kernel reads it
	// there. Handoffs are not the kernel's ops: nothing prices, schedules
	// or emits them; the simulator runs the to_dm ones before the kernel
	// and the to_hbm ones after it, to set and read the DM it hands over.
	Handoff []*Op
	// Reference states what the kernel computes, so that a simulation can
	// be checked against a result computed independently of the kernel.
	Reference *Reference
}

// RefOp names the computation a Reference states.
type RefOp string

// The computations a Reference can state.
const (
	// RefEinsum: the output is the einsum of the inputs over their axes
	// (the axes named by each HBM tensor's mappings): axes absent from the
	// output are summed (002 L104-118).
	RefEinsum RefOp = "einsum"
	// RefAdd: the output is the first input plus Scalar, or the sum of the
	// inputs, elementwise (002 L183-235: constant addition).
	RefAdd RefOp = "add"
	// RefMul: the output is the elementwise product of the inputs (002
	// L237-305: elementwise multiplication).
	RefMul RefOp = "mul"
	// RefUpdateSlice: the output is the first input with its last index of
	// Axis replaced by the second input, which holds the first's other
	// axes: the row a decoding step writes into a KV cache (002
	// L8286-8297, "kv_cache_l_K[s-1] = K_rope").
	RefUpdateSlice RefOp = "update_slice"
	// RefGather: the output is the first input (the table) at the rows
	// the second (the index) names: its axes absent from the output are
	// the gathered ones, their flat row-major position the index's value;
	// an index outside them reads 0 (workload.KindGather).
	RefGather RefOp = "gather"
	// RefScatter: the output holds the first input's (the data's) rows at
	// the rows the second (the index) names: its axes absent from the data
	// are the scattered ones, their flat row-major position the index's
	// value; the index's axes the data lacks write a row more than once.
	// The output's rows no index names are not part of the result (the
	// kernel does not write them: docs/spec-decisions.md "Scatter: the
	// DMA's indirect loop on the write side"). The index's random values
	// are distinct rows of the output (the kernel writes each row once,
	// DMA-R17).
	RefScatter RefOp = "scatter"
)

// Reference is the computation a kernel performs, over its HBM tensors.
type Reference struct {
	Op     RefOp
	Inputs []string
	Output string
	// Scalar is the constant of RefAdd with one input.
	Scalar float64
	// Valid is the workload's size of each padded axis of an einsum (the
	// program's axes declare the padded sizes; positions from Valid on are
	// padding): the kernel's callers store its inputs padded, with zeros
	// in the contracted axes' padding (002 L3768-3776: padding contracted
	// with zeros adds nothing) and anything in the others'; the output's
	// padding holds anything and is not part of the result
	// (docs/spec-decisions.md "Padded shapes").
	Valid map[string]int
	// Expr is the expression of RefExpr (refexpr.go) over Inputs.
	Expr string
	// Epilogue, for RefEinsum, is an expression in RefExpr's language over
	// the one name `acc`, the einsum's value (before any rounding to the
	// output type): the output is the epilogue at each element. It states
	// a contraction whose kernel does elementwise work after the
	// accumulator, in the main chain's Vector Engine pass
	// (workload.Fuse).
	Epilogue string
	// Range, when set ([lo, hi]), is the interval the inputs' random
	// values are drawn from (verify.RandomValuesIn), rounded to each
	// input's type; unset, a dtype's default range.
	Range []float64
	// Axis is the axis RefUpdateSlice replaces the last index of.
	Axis string
}

// Memory is where a tensor lives (002 L133-141).
type Memory string

// The memories of the TCP.
const (
	HBM Memory = "hbm" // HbmTensor: on-package, per chip (002 L137)
	DM  Memory = "dm"  // DmTensor: on-chip SRAM, per slice (002 L138)
	TRF Memory = "trf" // TrfTensor: the Contraction Engine's register file, per row (002 L139)
	VRF Memory = "vrf" // VrfTensor: the Vector Engine's register file, per slice (002 L140)
)

// Role says whether a tensor is a kernel argument, the kernel's result or an
// intermediate.
type Role string

// Tensor roles.
const (
	Input        Role = "input"        // an HBM argument of the kernel
	Output       Role = "output"       // an HBM result of the kernel
	Intermediate Role = "intermediate" // produced and consumed inside the kernel
)

// Tensor is one typed tensor of a program, with the mapping of each of its
// hardware dimensions (004; 002 L1029-1200). A position of the tensor is a
// tuple of positions, one per dimension; the tensor element it holds is the
// sum of the dimensions' indices (reference-notes §2.4, "tensor holding
// semantics").
type Tensor struct {
	Name  string
	Mem   Memory
	DType dtype.DType
	Role  Role
	// Chip maps the chip dimension (HBM, DM, TRF, VRF).
	Chip *mapping.Expr
	// Cluster and Slice map the spatial dimensions of on-chip tensors
	// (DM, TRF, VRF); nil for HBM.
	Cluster *mapping.Expr
	Slice   *mapping.Expr
	// Row maps the MAC rows of a TRF tensor (002 L3900-3940); nil otherwise.
	Row *mapping.Expr
	// Element maps the elements within one chip (HBM) or one slice (DM),
	// one row (TRF), or one slice's VRF.
	Element *mapping.Expr
	// Addr is the byte address: within the chip's HBM, the slice's DM or
	// VRF; for TRF the address mode below says where it sits.
	Addr int64
	// TrfAddress is the TRF address mode (Full, FirstHalf, SecondHalf) of a
	// TRF tensor (002 L3949-3960).
	TrfAddress TrfAddress
	// View names the HBM kernel argument or result this tensor is a tile
	// view of (`tile::<dim, n, _>(t)`, 002 L813-831, L954-971): it
	// addresses bytes of that tensor rather than bytes of its own, so it
	// never collides with it or with another view of it. Empty for a
	// tensor of its own. A result (role Output) that views an argument
	// whole — same address, same mappings — is that argument updated in
	// place (InPlace): the kernel writes some of its bytes through tile
	// views of the argument and leaves the rest as they were.
	View string
	// Gather, on an HBM input, makes it a gathered argument: its bytes are
	// the rows of the table (another HBM input) that the index's values
	// name, in index order, as a gather kernel would have written them
	// (engines.DeriveGather's layout: the index's axes, then the row).
	// The kernel's caller passes the table and the index, not this
	// tensor: each load of it is a DMA whose read side walks the table
	// through an indirect loop over the index (the op's Index; 002
	// L1684-1688), the gather fused into the loads of its consumer
	// (docs/spec-decisions.md "Gather fused into its einsum's loads").
	Gather *Gather
}

// Gather names the table and the index whose rows a gathered argument
// holds (Tensor.Gather).
type Gather struct {
	Table string `json:"table"`
	Index string `json:"index"`
}

// Gathered reports whether t is a gathered argument (Tensor.Gather), or a
// view of one in p.
func (p *Program) Gathered(t *Tensor) *Gather {
	if t.Gather != nil {
		return t.Gather
	}
	if t.View != "" {
		if b, ok := p.Tensor(t.View); ok {
			return b.Gather
		}
	}
	return nil
}

// InPlace reports whether t is a result that is an argument updated in
// place (a whole view of it; see View).
func (t *Tensor) InPlace() bool { return t.Role == Output && t.View != "" }

// Base returns the name of the tensor whose bytes t holds: its View, or its
// own name.
func (t *Tensor) Base() string {
	if t.View != "" {
		return t.View
	}
	return t.Name
}

// Dims returns the tensor's dimension mappings in order, major first, with
// the nil ones left out.
func (t *Tensor) Dims() []*mapping.Expr {
	var out []*mapping.Expr
	for _, e := range []*mapping.Expr{t.Chip, t.Cluster, t.Slice, t.Row, t.Element} {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// Context is the execution context an op runs in (002 L148-154).
type Context string

// The contexts.
const (
	CtxDMA  Context = "dma"  // ctx.tdma / ctx.pdma transfers
	CtxMain Context = "main" // ctx.main
	CtxSub  Context = "sub"  // ctx.sub
)

// OpKind names an op.
type OpKind string

// The ops.
const (
	// OpToDM moves an HBM tensor to DM (`to_dm`, 002 L2377).
	OpToDM OpKind = "to_dm"
	// OpToHBM moves a DM tensor to HBM (`to_hbm`).
	OpToHBM OpKind = "to_hbm"
	// OpDMToDM copies between DM tensors (DMA, 002 L2659-2681).
	OpDMToDM OpKind = "dm_to_dm"
	// OpHBMToHBM copies an HBM tensor into another HBM tensor through
	// their element mappings (DMA, 002 L2608-2636: a relayout; the
	// library's HbmTensor::to_hbm). Graph planning's relayouts between two
	// kernels are these (search.GraphProgram).
	OpHBMToHBM OpKind = "hbm_to_hbm"
	// OpChain is a tensor-unit pipeline in the main or sub context:
	// `begin → fetch → [switch] → collect → ...` (002 L213-233).
	OpChain OpKind = "chain"
)

// Op is one operation of a program.
type Op struct {
	Context Context
	Kind    OpKind
	// Src and Dst name the tensors of a DMA op.
	Src, Dst string
	// Stages are the stages of a chain, in pipeline order.
	Stages []*Stage
	// DMA is the lowered DMA command of a DMA op (engines.Lower); a
	// hand-written kernel may state its own.
	DMA *DMACommand
	// Index, on an HBM-to-HBM copy, names an integer HBM tensor whose
	// values choose the source rows: a gather (the sequencer's
	// IndirectLoop, 002 L1684-1688). The source's axes that the
	// destination lacks are the gathered ones, major in the source's
	// layout; the index's axes take their place in the destination
	// (engines.DeriveGather; docs/spec-decisions.md "Gather: the DMA's
	// indirect loop").
	Index string
	// Scatter, with Index on an HBM-to-HBM copy, makes the index's values
	// choose the destination rows instead: a scatter (the write side's
	// IndirectLoop). The destination's axes that the source lacks are the
	// scattered ones, major in the destination's layout; the index holds
	// the source's row axes major, then the axes each row is written once
	// along (engines.DeriveScatter; docs/spec-decisions.md "Scatter: the
	// DMA's indirect loop on the write side").
	Scatter bool
}

// StageKind names a stage of a tensor-unit chain (002 L213-233, the method
// names of the Virtual ISA).
type StageKind string

// The stages of a chain.
const (
	StBegin        StageKind = "begin"         // begin(dm.view()): the chain's input DM tensor
	StFetch        StageKind = "fetch"         // fetch::<D, Time, Packet>()
	StSwitch       StageKind = "switch"        // switch(SwitchConfig::...)
	StCollect      StageKind = "collect"       // collect::<Time, Packet>()
	StToTRF        StageKind = "to_trf"        // to_trf(TrfAddress::...)
	StToVRF        StageKind = "to_vrf"        // to_vrf(addr)
	StAlign        StageKind = "align"         // align::<Time, Packet, _, _>(&trf)
	StContract     StageKind = "contract"      // contract::<OutPacket>() (002 L4314)
	StAccumulate   StageKind = "accumulate"    // accumulate::<Time, Packet>(AccumulationKind::...)
	StCast         StageKind = "cast"          // cast::<D, Packet>()
	StTranspose    StageKind = "transpose"     // transpose::<Time, Packet>()
	StVectorInit   StageKind = "vector_init"   // vector_init()
	StVectorBranch StageKind = "vector_branch" // vector_intra_slice_branch(BranchMode::...)
	StVectorFxp    StageKind = "vector_fxp"    // vector_fxp(FxpBinaryOp::..., operand)
	StVectorFinal  StageKind = "vector_final"  // vector_final()
	StCommit       StageKind = "commit"        // commit::<Element>(addr)
)

// Stage is one method call of a chain, with the type parameters the kernel
// states. Fields a stage does not use stay zero.
type Stage struct {
	Kind StageKind
	// Tensor names the stage's tensor: the DM input of begin, the TRF/VRF
	// result of to_trf/to_vrf, the TRF operand of align, the VRF operand of
	// vector_fxp, the DM result of commit.
	Tensor string
	// DType is the element type after the stage (fetch, cast).
	DType dtype.DType
	// Time and Packet are the stream mappings after the stage (fetch,
	// collect, align, accumulate, transpose; cast and contract state only
	// their Packet).
	Time, Packet *mapping.Expr
	// Param holds the stage's value argument as the manual spells it:
	// the switch topology (`Broadcast01 { slice1: 256, slice0: 1, time0: 1 }`),
	// the AccumulationKind, the BranchMode, the vector op and its constant.
	Param string
	// Slice is the slice mapping after a switch.
	Slice *mapping.Expr
	// Axis is the axis a stage names as a type argument: the reduce label
	// of vector_intra_slice_reduce::<R, OTime, OPacket> (002 L5359), the
	// group axis of vector_intra_slice_unzip::<I, TileTime, SplitTime>
	// (002 L4575).
	Axis string
	// Config is the stage's lowered engine configuration (engines.Lower);
	// a hand-written kernel may state its own, which the simulator then runs
	// as written.
	Config *StageConfig
}

// StageConfig is a stage's engine configuration: the field of the stage's
// engine is set, the others are nil.
type StageConfig struct {
	Fetch      *FetchConfig      `json:"fetch,omitempty"`
	Switch     *Switch           `json:"switch,omitempty"`
	Collect    *Collect          `json:"collect,omitempty"`
	ToTRF      *ToTRFConfig      `json:"to_trf,omitempty"`
	Align      *AlignConfig      `json:"align,omitempty"`
	Contract   *ContractConfig   `json:"contract,omitempty"`
	Accumulate *AccumulateConfig `json:"accumulate,omitempty"`
	Cast       *CastConfig       `json:"cast,omitempty"`
	Transpose  *TransposeConfig  `json:"transpose,omitempty"`
	Commit     *CommitConfig     `json:"commit,omitempty"`
	// The Vector Engine's stages and the VRF load (model/kernel/vector.go).
	VectorInit   *VectorInitConfig   `json:"vector_init,omitempty"`
	VectorBranch *VectorBranchConfig `json:"vector_branch,omitempty"`
	VectorFinal  *VectorFinalConfig  `json:"vector_final,omitempty"`
	ToVRF        *ToVRFConfig        `json:"to_vrf,omitempty"`
	// The Inter-Slice Block (model/kernel/interslice.go).
	VectorInterSlice *InterSliceReduceConfig `json:"vector_inter_slice_reduce,omitempty"`
	// The intra-slice block's other stages (model/kernel/vector_config.go):
	// every ALU op stage (vector_logic, vector_fxp, vector_fp_*,
	// vector_fp_div, vector_clip), the conversions, Narrow and Widen, the
	// intra-slice reduce, the filter and the stash.
	VectorOp      *VectorOpConfig      `json:"vector_op,omitempty"`
	VectorConvert *VectorConvertConfig `json:"vector_convert,omitempty"`
	VectorWay     *VectorWayConfig     `json:"vector_way,omitempty"`
	VectorReduce  *VectorReduceConfig  `json:"vector_reduce,omitempty"`
	VectorFilter  *VectorFilterConfig  `json:"vector_filter,omitempty"`
	VectorStash   *VectorStashConfig   `json:"vector_stash,omitempty"`
	VectorUnzip   *VectorUnzipConfig   `json:"vector_unzip,omitempty"`
}

// Tensor returns the program's tensor with the given name.
func (p *Program) Tensor(name string) (*Tensor, bool) {
	for _, t := range p.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Validate checks the program's structure: names unique and defined before
// use, every mapping's axes declared, DMA ops in the DMA context and chains
// in main or sub, each chain beginning with begin and fetch and ending in a
// terminal stage. Hardware rules are the engines' business, not this one's.
func (p *Program) Validate() error {
	if p.Chips < 1 {
		return fmt.Errorf("kernel %q: chips must be at least 1, got %d", p.Name, p.Chips)
	}
	seen := map[string]bool{}
	for i, t := range p.Tensors {
		where := fmt.Sprintf("tensors[%d] %q", i, t.Name)
		if t.Name == "" {
			return fmt.Errorf("tensors[%d]: missing name", i)
		}
		if seen[t.Name] {
			return fmt.Errorf("%s: duplicate tensor name", where)
		}
		seen[t.Name] = true
		if err := t.validate(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	for i, t := range p.Tensors {
		if t.View == "" {
			continue
		}
		if b, ok := p.Tensor(t.View); !ok || b.Mem != HBM || b.Role == Intermediate && t.Role == Output || b.View != "" {
			// A tile may view an HBM tensor of the kernel's own: in a
			// layer's merged program, a kernel's tile of an argument it
			// reads through a relayout views the copy (search.GraphProgram).
			return fmt.Errorf("tensors[%d] %q: view of %q, which is not an HBM tensor of the kernel", i, t.Name, t.View)
		}
		b, _ := p.Tensor(t.View)
		if b.DType != t.DType {
			return fmt.Errorf("tensors[%d] %q: a view has its tensor's dtype %s, not %s", i, t.Name, b.DType, t.DType)
		}
		if t.Role == Output && (b.Role != Input || b.Addr != t.Addr || !b.Chip.Equal(t.Chip) || !b.Element.Equal(t.Element)) {
			return fmt.Errorf("tensors[%d] %q: a result that is a view of %q is that argument updated in place: an input at the same address with the same mappings", i, t.Name, t.View)
		}
		if t.Element != nil && b.Element != nil {
			// A view's bytes are its tensor's: the axes they share nest
			// in the same order (a tile of an input stored in another
			// order than the kernel's output is in its own order).
			vs, bs := t.Element.Symbols(), b.Element.Symbols()
			vs = slices.DeleteFunc(vs, func(a string) bool { return !slices.Contains(bs, a) })
			bs = slices.DeleteFunc(bs, func(a string) bool { return !slices.Contains(vs, a) })
			if !slices.Equal(vs, bs) {
				return fmt.Errorf("tensors[%d] %q: a view of %q nests its axes %v, the tensor's bytes nest them %v", i, t.Name, t.View, vs, bs)
			}
		}
	}
	for i, t := range p.Tensors {
		if t.Gather != nil {
			if err := p.validateGather(t); err != nil {
				return fmt.Errorf("tensors[%d] %q: gather: %w", i, t.Name, err)
			}
		}
	}
	for i, op := range p.Ops {
		if err := p.validateOp(op); err != nil {
			return fmt.Errorf("ops[%d] (%s): %w", i, op.Kind, err)
		}
	}
	for i, op := range p.Handoff {
		if err := p.validateHandoff(op); err != nil {
			return fmt.Errorf("handoff[%d] (%s): %w", i, op.Kind, err)
		}
	}
	if p.Reference != nil {
		if err := p.validateReference(p.Reference); err != nil {
			return fmt.Errorf("reference: %w", err)
		}
	}
	return nil
}

func (p *Program) validateReference(r *Reference) error {
	switch r.Op {
	case RefEinsum, RefMul:
		if len(r.Inputs) < 1 {
			return fmt.Errorf("%s needs inputs", r.Op)
		}
	case RefAdd:
		if len(r.Inputs) < 1 {
			return fmt.Errorf("add needs inputs")
		}
	case RefExpr:
		if err := p.validateRefExpr(r); err != nil {
			return err
		}
	case RefUpdateSlice:
		if len(r.Inputs) != 2 {
			return fmt.Errorf("update_slice needs two inputs, the tensor and the slice, not %d", len(r.Inputs))
		}
		if _, ok := p.Axes.Size(r.Axis); !ok {
			return fmt.Errorf("update_slice axis %q: no such axis", r.Axis)
		}
	case RefGather:
		if len(r.Inputs) != 2 {
			return fmt.Errorf("gather needs two inputs, the table and the index, not %d", len(r.Inputs))
		}
	case RefScatter:
		if len(r.Inputs) != 2 {
			return fmt.Errorf("scatter needs two inputs, the data and the index, not %d", len(r.Inputs))
		}
	default:
		return fmt.Errorf("unknown op %q: want einsum, add, mul, update_slice, gather, scatter or expr", r.Op)
	}
	if r.Axis != "" && r.Op != RefUpdateSlice {
		return fmt.Errorf("an axis goes with op update_slice")
	}
	if (r.Expr != "") != (r.Op == RefExpr) {
		return fmt.Errorf("an expression goes with op expr")
	}
	if r.Epilogue != "" {
		if r.Op != RefEinsum {
			return fmt.Errorf("an epilogue goes with op einsum")
		}
		if err := validateEpilogue(r.Epilogue, r.Inputs); err != nil {
			return err
		}
	}
	if r.Range != nil && (len(r.Range) != 2 || !(r.Range[0] < r.Range[1]) || math.IsInf(r.Range[0], 0) || math.IsInf(r.Range[1], 0)) {
		return fmt.Errorf("range %v: want [lo, hi] with finite lo < hi", r.Range)
	}
	if r.Scalar != 0 && (r.Op != RefAdd || len(r.Inputs) != 1) {
		return fmt.Errorf("a scalar goes with add of one input")
	}
	if len(r.Valid) > 0 && r.Op != RefEinsum {
		return fmt.Errorf("valid sizes go with an einsum")
	}
	for _, name := range slices.Sorted(maps.Keys(r.Valid)) {
		n, ok := p.Axes.Size(name)
		if !ok {
			return fmt.Errorf("valid size of %s: no such axis", name)
		}
		if v := r.Valid[name]; v < 1 || v >= n {
			return fmt.Errorf("valid size %d of %s: want 1 to %d (the axis's padded size %d excluded)", v, name, n-1, n)
		}
	}
	for i, name := range append(append([]string(nil), r.Inputs...), r.Output) {
		t, ok := p.Tensor(name)
		if !ok {
			return fmt.Errorf("unknown tensor %q", name)
		}
		want := Input
		if i == len(r.Inputs) {
			want = Output
		}
		if t.Mem != HBM || t.Role != want {
			return fmt.Errorf("tensor %q is a %s %s tensor, want an HBM %s", name, t.Mem, t.Role, want)
		}
	}
	return nil
}

func (t *Tensor) validate() error {
	if t.DType == 0 {
		return fmt.Errorf("missing dtype")
	}
	switch t.Role {
	case Input, Output, Intermediate:
	default:
		return fmt.Errorf("role %q: want input, output or intermediate", t.Role)
	}
	need := map[string]bool{"chip": true, "element": true}
	switch t.Mem {
	case HBM:
	case DM, VRF:
		need["cluster"], need["slice"] = true, true
	case TRF:
		need["cluster"], need["slice"], need["row"] = true, true, true
	default:
		return fmt.Errorf("memory %q: want hbm, dm, trf or vrf", t.Mem)
	}
	for _, d := range []struct {
		name string
		e    *mapping.Expr
	}{{"chip", t.Chip}, {"cluster", t.Cluster}, {"slice", t.Slice}, {"row", t.Row}, {"element", t.Element}} {
		if need[d.name] && d.e == nil {
			return fmt.Errorf("%s tensor needs a %s mapping", t.Mem, d.name)
		}
		if !need[d.name] && d.e != nil {
			return fmt.Errorf("%s tensor has no %s dimension", t.Mem, d.name)
		}
	}
	if t.Addr < 0 {
		return fmt.Errorf("negative address %d", t.Addr)
	}
	if (t.Mem == TRF) != (t.TrfAddress != "") {
		return fmt.Errorf("trf_address is for TRF tensors only, and required for them")
	}
	if t.Mem == TRF {
		if _, err := ParseTrfAddress(string(t.TrfAddress)); err != nil {
			return err
		}
	}
	if t.Role != Intermediate && t.Mem != HBM {
		return fmt.Errorf("%s tensors are intermediate; kernel arguments and results live in HBM", t.Mem)
	}
	if t.View != "" && (t.Mem != HBM || t.Role == Input) {
		return fmt.Errorf("view of %q: only an intermediate HBM tensor (a tile view) or a result (the argument updated in place) views an argument", t.View)
	}
	return nil
}

func (p *Program) validateOp(op *Op) error {
	switch op.Kind {
	case OpToDM, OpToHBM, OpDMToDM, OpHBMToHBM:
		if op.Context != CtxDMA {
			return fmt.Errorf("a DMA op runs in the dma context, not %q", op.Context)
		}
		if len(op.Stages) != 0 {
			return fmt.Errorf("a DMA op has no stages")
		}
		want := map[OpKind][2]Memory{OpToDM: {HBM, DM}, OpToHBM: {DM, HBM}, OpDMToDM: {DM, DM}, OpHBMToHBM: {HBM, HBM}}[op.Kind]
		if src, ok := p.Tensor(op.Src); ok {
			if g := p.Gathered(src); g != nil && (op.Kind != OpToDM || op.Index != g.Index) {
				return fmt.Errorf("%q holds the rows of %s at %s: it is read by a load (to_dm) through that index, not %s with index %q", op.Src, g.Table, g.Index, op.Kind, op.Index)
			}
		}
		if op.Scatter && (op.Index == "" || op.Kind != OpHBMToHBM) {
			return fmt.Errorf("a scatter is an HBM-to-HBM copy through an index, not %s with index %q", op.Kind, op.Index)
		}
		if op.Index != "" {
			src, _ := p.Tensor(op.Src)
			if op.Kind != OpHBMToHBM && (op.Kind != OpToDM || src == nil || p.Gathered(src) == nil) {
				return fmt.Errorf("an index (a gather) is read by an HBM-to-HBM copy or a load of a gathered argument only, not %s", op.Kind)
			}
			t, ok := p.Tensor(op.Index)
			switch {
			case !ok:
				return fmt.Errorf("unknown index tensor %q", op.Index)
			case t.Mem != HBM || !t.DType.IsInt():
				return fmt.Errorf("index tensor %q is %s in %s, want an integer HBM tensor", op.Index, t.DType, t.Mem)
			}
		}
		for i, name := range []string{op.Src, op.Dst} {
			t, ok := p.Tensor(name)
			if !ok {
				return fmt.Errorf("unknown tensor %q", name)
			}
			if t.Mem != want[i] {
				return fmt.Errorf("tensor %q is in %s, want %s", name, t.Mem, want[i])
			}
		}
		return nil
	case OpChain:
		if op.Context != CtxMain && op.Context != CtxSub {
			return fmt.Errorf("a chain runs in the main or sub context, not %q", op.Context)
		}
		return p.validateChain(op.Stages)
	}
	return fmt.Errorf("unknown op kind %q", op.Kind)
}

// validateGather checks a gathered argument (Tensor.Gather): an HBM input
// of the table's dtype, its table and index HBM tensors of their own (an
// integer index; inputs of a kernel, or written by an earlier kernel of a
// layer's merged program), neither of them gathered.
func (p *Program) validateGather(t *Tensor) error {
	if t.Mem != HBM || t.Role != Input || t.View != "" {
		return fmt.Errorf("a gathered tensor is an HBM argument (role input, no view), not a %s %s tensor", t.Mem, t.Role)
	}
	table, ok := p.Tensor(t.Gather.Table)
	if !ok {
		return fmt.Errorf("unknown table %q", t.Gather.Table)
	}
	index, ok := p.Tensor(t.Gather.Index)
	if !ok {
		return fmt.Errorf("unknown index %q", t.Gather.Index)
	}
	for _, x := range []*Tensor{table, index} {
		if x.Mem != HBM || x.View != "" || x.Gather != nil || x.Name == t.Name {
			return fmt.Errorf("%q is not another HBM argument of its own", x.Name)
		}
	}
	if table.DType != t.DType {
		return fmt.Errorf("the table %q is %s, the gathered tensor %s: a gather copies rows as they are", table.Name, table.DType, t.DType)
	}
	if !index.DType.IsInt() {
		return fmt.Errorf("the index %q is %s, not an integer", index.Name, index.DType)
	}
	return nil
}

// validateHandoff checks a handoff (Program.Handoff): a to_dm copy of an
// HBM input into a DM tensor no op writes, or a to_hbm copy of a DM tensor
// into an HBM result.
func (p *Program) validateHandoff(op *Op) error {
	if op.Kind != OpToDM && op.Kind != OpToHBM {
		return fmt.Errorf("a handoff is a to_dm or to_hbm copy, not %s", op.Kind)
	}
	if op.Index != "" {
		return fmt.Errorf("a handoff reads no index")
	}
	if err := p.validateOp(op); err != nil {
		return err
	}
	hbm, dm, role := op.Src, op.Dst, Input
	if op.Kind == OpToHBM {
		hbm, dm, role = op.Dst, op.Src, Output
	}
	t, _ := p.Tensor(hbm)
	if b, ok := p.Tensor(t.Base()); !ok || b.Role != role {
		return fmt.Errorf("tensor %q is not an HBM %s of the kernel", hbm, role)
	}
	if op.Kind == OpToDM {
		for i, o := range p.Ops {
			if o.Writes(dm) {
				return fmt.Errorf("DM tensor %q, which the previous kernel left, is written by ops[%d]", dm, i)
			}
		}
	}
	return nil
}

// Writes reports whether op writes tensor name: a DMA's destination, or a
// chain's commit, TRF or VRF load.
func (op *Op) Writes(name string) bool {
	if op.Kind != OpChain {
		return op.Dst == name
	}
	return slices.ContainsFunc(op.Stages, func(s *Stage) bool {
		return (s.Kind == StCommit || s.Kind == StToTRF || s.Kind == StToVRF) && s.Tensor == name
	})
}

// terminal stages end a chain.
var terminal = map[StageKind]bool{StToTRF: true, StToVRF: true, StCommit: true}

// stageTensorMem is the memory of the tensor a stage names, for the stages
// that name one.
var stageTensorMem = map[StageKind]Memory{
	StBegin: DM, StToTRF: TRF, StToVRF: VRF, StAlign: TRF, StCommit: DM,
}

func (p *Program) validateChain(stages []*Stage) error {
	if len(stages) < 3 || stages[0].Kind != StBegin || stages[1].Kind != StFetch {
		return fmt.Errorf("a chain starts with begin and fetch and has a terminal stage")
	}
	for i, st := range stages {
		last := i == len(stages)-1
		if terminal[st.Kind] != last {
			if last {
				return fmt.Errorf("stages[%d] (%s): a chain ends in to_trf, to_vrf or commit", i, st.Kind)
			}
			return fmt.Errorf("stages[%d] (%s): a terminal stage must be last", i, st.Kind)
		}
		if mem, ok := stageTensorMem[st.Kind]; ok {
			t, found := p.Tensor(st.Tensor)
			if !found {
				return fmt.Errorf("stages[%d] (%s): unknown tensor %q", i, st.Kind, st.Tensor)
			}
			if t.Mem != mem {
				return fmt.Errorf("stages[%d] (%s): tensor %q is in %s, want %s", i, st.Kind, st.Tensor, t.Mem, mem)
			}
		}
		if st.Kind == StBegin {
			if err := p.validateInterleave(st); err != nil {
				return fmt.Errorf("stages[%d] (begin): %w", i, err)
			}
		}
		if st.Kind.ReadsVRF() && st.Tensor != "" {
			if t, found := p.Tensor(st.Tensor); !found || t.Mem != VRF {
				return fmt.Errorf("stages[%d] (%s): operand %q is not a VRF tensor", i, st.Kind, st.Tensor)
			}
		}
		if st.Axis != "" {
			if st.Kind != StVectorReduce && st.Kind != StVectorUnzip {
				return fmt.Errorf("stages[%d] (%s): only vector_intra_slice_reduce and vector_intra_slice_unzip name an axis", i, st.Kind)
			}
			if _, ok := p.Axes.Size(st.Axis); !ok {
				return fmt.Errorf("stages[%d] (%s): unknown axis %q", i, st.Kind, st.Axis)
			}
		}
	}
	return nil
}
