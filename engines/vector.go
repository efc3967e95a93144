package engines

import (
	"errors"
	"fmt"
	"math"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Vector Engine (002 L4549-5277) and the Vector Register File (002 L140,
// L1090, L3033): the pass's entry and exit, the VRF operand reads and
// to_vrf, which stores a collect stream into each slice's VRF. The
// intra-slice block's stages are in vector_pass.go (order, derivation,
// rules), vector_alu.go (the ALUs' bit-exact semantics) and vector_exec.go
// (their semantics on a slice's stream).
//
// VRF layout (ToVRFConfig): a VRF tensor at addr holds its Element position
// e at byte addr + e·size_of::<D>() of each slice's VRF (as a DmTensor does,
// 002 L1093); to_vrf writes collect flit t at addr + 32·t, its Element being
// the collect stream [Time, Packet] (002 L280-285). A VRF operand is read
// one packet per time step (VRFReadConfig): lane l of the packet at time
// step t reads Element position e(t) + l.

var (
	ruleVEType = NewRule(Rule{ID: "VE-R1", Engine: "vector", Name: "element types",
		Cite: "002 L4551, L5254",
		Text: "the Vector Engine operates exclusively on i32 and f32 data, streams and operands alike"})
	ruleVEFlit = NewRule(Rule{ID: "VE-R19", Engine: "vector", Name: "one flit per packet",
		Cite: "002 L4551, L4731, L3605",
		Text: "data moves through the Vector Engine in 32-byte flits of eight 32-bit values, one per packet (Way8)"})
	ruleVEEntry = NewRule(Rule{ID: "VE-R3", Engine: "vector", Name: "pass entry",
		Cite: "002 L4553-4565, L4581, L4722-4726",
		Text: "vector_init takes the Collect or the Contraction Engine's output; the single-stream intra-slice block starts with vector_intra_slice_branch right after vector_init"})
	ruleVEOrder = NewRule(Rule{ID: "VE-R4", Engine: "vector", Name: "stage order",
		Cite: "002 L4678, L4730-4747",
		Text: "intra-slice stages advance in the order Branch, Logic, Fxp, FxpToFp, Narrow, Float, IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip, Filter, Output; stages may be skipped, not revisited"})
	ruleVEALU = NewRule(Rule{ID: "VE-R5", Engine: "vector", Name: "ALU once per pass",
		Cite: "002 L4750, L4823, L5253, L5260-5269",
		Text: "each ALU is used at most once per pass: ops of the same ALU class need separate Tensor Unit invocations"})
	ruleVEExit = NewRule(Rule{ID: "VE-R20", Engine: "vector", Name: "pass exit",
		Cite: "002 L4584-4588, L4975-4976",
		Text: "a pass ends with vector_final, whose result continues to the Cast, Transpose or Commit Engine"})
	ruleVEOperand = NewRule(Rule{ID: "VE-R15", Engine: "vector", Name: "VRF operand",
		Cite: "002 L5054-5058, L5066-5079, L5256",
		Text: "an operand is an i32/f32 constant or a VRF tensor pre-loaded by to_vrf; each packet reads one VRF flit: the packet is the VRF Element's innermost eight elements, and each Time digit steps a VRF Element digit or an axis the VRF tensor lacks (re-read)"})
	ruleVRFInput = NewRule(Rule{ID: "VRF-R1", Engine: "vrf", Name: "flit input",
		Cite: "002 L3033, L3605",
		Text: "to_vrf stores the Collect Engine's output: 32-byte flits"})
	ruleVRFElement = NewRule(Rule{ID: "VRF-R2", Engine: "vrf", Name: "Element is the collect stream",
		Cite: "002 L280-285",
		Text: "to_vrf stores the collect stream in order: the VRF tensor's Element is [Time, Packet]"})
	ruleVRFCapacity = NewRule(Rule{ID: "VRF-R3", Engine: "vrf", Name: "capacity",
		Cite: "002 L140, L1090, L1093",
		Text: "a VRF tensor at addr occupies addr..addr + Element::SIZE·size_of::<D>(), within the 8 KB of a slice's VRF"})
	ruleVRFAlign = NewRule(Rule{ID: "VRF-R4", Engine: "vrf", Name: "alignment",
		Cite: "002 L1071",
		Text: "the starting address is a multiple of size_of::<D>()"})
	ruleVRFAddr = NewRule(Rule{ID: "VRF-R6", Engine: "vrf", Name: "to_vrf(addr) stores at the tensor's address",
		Cite: "002 L244, L285",
		Text: "to_vrf(addr) loads the collect stream into the VRF at addr, the address of the VRF tensor it returns"})
	ruleVRFSlices = NewRule(Rule{ID: "VRF-R5", Engine: "vrf", Name: "on the stream's slices",
		Cite: "002 L280-285, L5072-5073",
		Text: "to_vrf produces, and the Vector Engine reads, a VrfTensor with the stream's Chip, Cluster and Slice mappings and element type"})
)

// veLanes checks a Vector Engine stream: i32 or f32, packets of one flit of
// eight elements. It returns the lanes.
func veLanes(spec *Spec, d dtype.DType, packet *mapping.Expr) (int, error) {
	if !veTypeOK(spec, d) {
		return 0, ruleVEType.Violate("element type %s, want one of %v", d, spec.Vector.Types.Value)
	}
	lanes := spec.Vector.Way8ElementsPerCycle.Value
	pb, err := d.BytesFor(packet.Size())
	if err != nil {
		return 0, fmt.Errorf("vector: packet %s: %w", packet.Text(), err)
	}
	if pb != spec.Stream.FlitBytes.Value || packet.Size() != lanes {
		return 0, ruleVEFlit.Violate("packet %s is %d × %s = %d bytes, want one %d-byte flit of %d elements",
			packet.Text(), packet.Size(), d, pb, spec.Stream.FlitBytes.Value, lanes).With("packet_bytes", pb)
	}
	return lanes, nil
}

func veTypeOK(spec *Spec, d dtype.DType) bool {
	for _, s := range spec.Vector.Types.Value {
		if s == d.String() {
			return true
		}
	}
	return false
}

// VectorInitInput is the stream `vector_init()` takes.
type VectorInitInput struct {
	DType        dtype.DType
	Time, Packet *mapping.Expr
}

// DeriveVectorInit checks the stream entering the Vector Engine and derives
// vector_init's configuration.
func DeriveVectorInit(spec *Spec, in VectorInitInput) (kernel.VectorInitConfig, error) {
	var c kernel.VectorInitConfig
	if spec == nil {
		return c, errors.New("vector: nil hardware spec")
	}
	if err := ceCheckExprs("vector", []string{"time", "packet"}, in.Time, in.Packet); err != nil {
		return c, err
	}
	lanes, err := veLanes(spec, in.DType, in.Packet)
	if err != nil {
		return c, err
	}
	return kernel.VectorInitConfig{DType: in.DType, Lanes: lanes, Packets: in.Time.Size()}, nil
}

// VRFReadInput is a VRF operand read by a Vector Engine stage.
type VRFReadInput struct {
	// Tensor names the VRF tensor; DType, Element and Base are its type,
	// Element mapping and byte address.
	Tensor  string
	DType   dtype.DType
	Element *mapping.Expr
	Base    int
	// Time and Packet are the stream's mappings.
	Time, Packet *mapping.Expr
}

// DeriveVRFRead derives how each packet of the stream reads its VRF flit:
// the VRF Element splits into [outer, inner] at the packet's lanes, inner
// must be the stream's Packet (lane l reads the element l of the flit), and
// each Time digit, innermost first, becomes a loop entry whose stride is the
// position of the matching outer digit, or 0 for a digit whose axis the VRF
// tensor lacks (002 L5066-5079: the stream's Time B, absent from the VRF,
// re-reads the same flit). Every outer digit must be read.
func DeriveVRFRead(spec *Spec, in VRFReadInput) (kernel.VRFReadConfig, error) {
	var c kernel.VRFReadConfig
	if spec == nil {
		return c, errors.New("vector: nil hardware spec")
	}
	if err := ceCheckExprs("vector", []string{"time", "packet", "VRF element"}, in.Time, in.Packet, in.Element); err != nil {
		return c, err
	}
	if !veTypeOK(spec, in.DType) {
		return c, ruleVEType.Violate("VRF operand %q is %s, want one of %v", in.Tensor, in.DType, spec.Vector.Types.Value)
	}
	// One packet per time step: 8 elements in Way8, 4 in Way4 (002 L4731).
	lanes := in.Packet.Size()
	if lanes != spec.Vector.Way8ElementsPerCycle.Value && lanes != spec.Vector.Way4ElementsPerCycle.Value {
		return c, ruleVEFlit.Violate("packet %s has %d elements, want %d (Way8) or %d (Way4)", in.Packet.Text(), lanes,
			spec.Vector.Way8ElementsPerCycle.Value, spec.Vector.Way4ElementsPerCycle.Value)
	}
	if in.Element.Size()%lanes != 0 {
		return c, ruleVEOperand.Violate("VRF Element %s has %d elements, not whole flits of %d", in.Element.Text(), in.Element.Size(), lanes)
	}
	outer, inner, err := veSplit(in.Element, lanes)
	if err == nil && !ceEquiv(inner, in.Packet) && !vrfLanesBroadcast(inner, in.Packet, in.Element) {
		err = errors.New("lanes differ")
	}
	if err != nil {
		got := "?"
		if inner != nil {
			got = inner.Text()
		}
		return c, ruleVEOperand.Violate("the packet %s is not the innermost %d elements %s of VRF %q's Element %s",
			in.Packet.Text(), lanes, got, in.Tensor, in.Element.Text())
	}
	ot, err := ceDigits(in.Time)
	if err != nil {
		return c, ruleVEOperand.Violate("Time %s cannot be sequenced: %v", in.Time.Text(), err)
	}
	eo, err := ceDigits(outer)
	if err != nil {
		return c, ruleVEOperand.Violate("VRF Element %s cannot be sequenced: %v", in.Element.Text(), err)
	}
	ei, err := ceDigits(inner)
	if err != nil {
		return c, ruleVEOperand.Violate("VRF Element %s cannot be sequenced: %v", in.Element.Text(), err)
	}
	if err := ceRefine(&ot, &eo, &ei); err != nil {
		return c, ruleVEOperand.Violate("Time %s against VRF Element %s: %v", in.Time.Text(), in.Element.Text(), err)
	}
	vrfAxes := ceAxes(append(append([]ceDigit(nil), eo...), ei...))
	used := make([]bool, len(eo))
	entries := make([]kernel.SeqEntry, len(ot))
	for k, d := range ot {
		e := kernel.SeqEntry{Size: d.size, Term: d.text()}
		if d.kind == ceTerm {
			found := false
			for j, x := range eo {
				if !used[j] && d.sameRange(x) {
					used[j], found = true, true
					e.Stride = x.pos * lanes
					break
				}
			}
			if !found && vrfAxes[d.axis] {
				return c, ruleVEOperand.Violate("Time term %s steps axis %s, which VRF %q's Element %s holds only in other digits",
					d.text(), d.axis, in.Tensor, in.Element.Text())
			}
		}
		entries[len(ot)-1-k] = e
	}
	for j, x := range eo {
		if !used[j] && x.kind == ceTerm && x.live > 1 {
			return c, ruleVEOperand.Violate("VRF Element digit %s of %s is never read by Time %s", x.text(), in.Element.Text(), in.Time.Text())
		}
	}
	if len(entries) == 0 {
		entries = []kernel.SeqEntry{{Size: 1, Stride: 0}}
	}
	// A Time digit padded beyond the VRF digit it steps reads past the
	// tensor on its padding steps: those reads must stay inside the VRF.
	size := in.DType.Bits() / 8
	last := 0
	for _, e := range entries {
		last += (e.Size - 1) * e.Stride
	}
	if end := in.Base + (last+lanes)*size; in.Base < 0 || end > spec.VRF.BytesPerSlice.Value {
		return c, ruleVEOperand.Violate("VRF %q read at %d reaches byte %d, the VRF holds %d per slice",
			in.Tensor, in.Base, end, spec.VRF.BytesPerSlice.Value).With("bytes", end)
	}
	return kernel.VRFReadConfig{Tensor: in.Tensor, Base: in.Base, ElemBytes: size, Lanes: lanes, Entries: entries}, nil
}

// ToVRFInput is what `collect.to_vrf(addr)` derives from.
type ToVRFInput struct {
	DType dtype.DType
	// Time and Packet are the collect stream's mappings.
	Time, Packet *mapping.Expr
	// Element is the VRF tensor's Element mapping, Base its address.
	Element *mapping.Expr
	Base    int
}

// DeriveToVRF checks a to_vrf call and derives its configuration.
func DeriveToVRF(spec *Spec, in ToVRFInput) (kernel.ToVRFConfig, error) {
	var c kernel.ToVRFConfig
	if spec == nil {
		return c, errors.New("vrf: nil hardware spec")
	}
	if err := ceCheckExprs("vrf", []string{"time", "packet", "element"}, in.Time, in.Packet, in.Element); err != nil {
		return c, err
	}
	if !in.DType.Valid() || in.DType.SizeBits()%8 != 0 {
		return c, fmt.Errorf("vrf: element type %s does not fill whole bytes", in.DType)
	}
	flit := spec.Stream.FlitBytes.Value
	pb, err := in.DType.BytesFor(in.Packet.Size())
	if err != nil {
		return c, fmt.Errorf("vrf: packet %s: %w", in.Packet.Text(), err)
	}
	if pb != flit {
		return c, ruleVRFInput.Violate("collect packet %s is %d bytes, want one %d-byte flit", in.Packet.Text(), pb, flit).With("packet_bytes", pb)
	}
	if !ceEquiv(mapping.Pair(in.Time, in.Packet), in.Element) {
		return c, ruleVRFElement.Violate("Element %s is not the collect stream [%s, %s]", in.Element.Text(), in.Time.String(), in.Packet.String())
	}
	size := in.DType.SizeBits() / 8
	if in.Base < 0 || in.Base%size != 0 {
		return c, ruleVRFAlign.Violate("address %d is not a multiple of %d bytes", in.Base, size).With("addr", in.Base)
	}
	eb := in.Element.Size() * size
	capacity := spec.VRF.BytesPerSlice.Value
	if in.Base+eb > capacity {
		return c, ruleVRFCapacity.Violate("Element %s at %d needs bytes %d..%d, the VRF holds %d per slice",
			in.Element.Text(), in.Base, in.Base, in.Base+eb, capacity).With("bytes", eb).With("capacity", capacity)
	}
	return kernel.ToVRFConfig{Base: in.Base, Flits: in.Time.Size(), ElemBytes: size, ElementBytes: eb, CapacityBytes: capacity}, nil
}

// ---- semantics

// FxpApply is one Fxp ALU operation on i32 operands a (the stream) and b
// (the operand), vector-and-kernels.md §2.4 (002 L4826-4836 name them;
// reference-notes L874-876 define them bit-exactly; docs/spec-decisions.md
// "MulFxp format", "Vector Engine shift amounts").
func FxpApply(op string, a, b int32) (int32, error) {
	fn, ok := veFns[veOpKey{"fxp", op, false}]
	if !ok {
		return 0, fmt.Errorf("vector: unknown FxpBinaryOp %q", op)
	}
	return int32(fn(uint32(a), uint32(b), 0)), nil
}

// sat32 clamps v to the i32 range. For MulFxp only MIN × MIN reaches it:
// (2^62 >> 30 + 1) >> 1 = 2^31 → MAX (reference-notes L876).
func sat32(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int32(v)
}

// VRFMemory is one slice's Vector Register File for the simulator: 8 KB
// (002 L140, L1090) of bytes.
type VRFMemory struct {
	buf  []byte
	flit int
}

// NewVRFMemory returns a zeroed VRF.
func NewVRFMemory(spec *Spec) (*VRFMemory, error) {
	if spec == nil {
		return nil, errors.New("vrf: nil hardware spec")
	}
	return &VRFMemory{buf: make([]byte, spec.VRF.BytesPerSlice.Value), flit: spec.Stream.FlitBytes.Value}, nil
}

// Bytes returns the VRF's contents (not a copy).
func (m *VRFMemory) Bytes() []byte { return m.buf }

// StoreFlit is to_vrf's semantics: collect flit t goes to bytes
// Base + 32·t onward. It does not allocate.
func (m *VRFMemory) StoreFlit(c *kernel.ToVRFConfig, t int, flit []byte) error {
	if c == nil {
		return errors.New("vrf: nil to_vrf configuration")
	}
	if len(flit) != m.flit {
		return fmt.Errorf("vrf: flit of %d bytes, want %d", len(flit), m.flit)
	}
	if t < 0 || t >= c.Flits {
		return fmt.Errorf("vrf: flit %d outside the %d flits of the tensor", t, c.Flits)
	}
	a := c.Base + t*m.flit
	if a < 0 || a+m.flit > len(m.buf) {
		return fmt.Errorf("vrf: flit %d at byte %d outside the %d-byte VRF", t, a, len(m.buf))
	}
	copy(m.buf[a:a+m.flit], flit)
	return nil
}

// ReadFlit is the VRF operand read of time step t: the Lanes elements from
// position e(t) (VRFReadConfig.Element) into dst. It does not allocate.
func (m *VRFMemory) ReadFlit(c *kernel.VRFReadConfig, t int, dst []byte) error {
	if c == nil {
		return errors.New("vrf: nil VRF read configuration")
	}
	n := c.Lanes * c.ElemBytes
	if len(dst) != n {
		return fmt.Errorf("vrf: read of %d bytes, want %d", len(dst), n)
	}
	if t < 0 || t >= c.Steps() {
		return fmt.Errorf("vrf: time step %d outside [0, %d)", t, c.Steps())
	}
	a := c.Base + c.Element(t)*c.ElemBytes
	if a < 0 || a+n > len(m.buf) {
		return fmt.Errorf("vrf: read at byte %d outside the %d-byte VRF", a, len(m.buf))
	}
	copy(dst, m.buf[a:a+n])
	return nil
}

// vrfLanesBroadcast reports whether a VRF Element's innermost lanes serve
// the stream's packet lane for lane with broadcast copies: digit for digit,
// each is the packet's own term, or a broadcast digit where the packet
// steps an axis the VRF tensor lacks (the VRF holds one value for all of
// them, as m![8] holds a row's maximum for its 8 lanes: 002 L5066-5079
// broadcasts the same way over Time), or padding against padding.
func vrfLanesBroadcast(inner, packet, element *mapping.Expr) bool {
	id, err := ceDigits(inner)
	if err != nil {
		return false
	}
	pd, err := ceDigits(packet)
	if err != nil {
		return false
	}
	ed, err := ceDigits(element)
	if err != nil {
		return false
	}
	if ceRefine(&id, &pd) != nil || len(id) != len(pd) {
		return false
	}
	has := ceAxes(ed)
	for k := range id {
		i, p := id[k], pd[k]
		if i.pos != p.pos || i.size != p.size {
			return false
		}
		switch {
		case i.sameRange(p) && i.size == p.size:
		case i.kind == ceBcast && (p.kind != ceTerm || !has[p.axis]):
		case i.kind == cePad && p.kind == cePad:
		default:
			return false
		}
	}
	return true
}
