package kernel

import (
	"fmt"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// The Vector Engine's configuration data (002 L4549-5277) and the VRF's
// (002 L140, L1090, L3033): what `vector_init`, `vector_intra_slice_branch`,
// `vector_fxp`, `vector_final` and `to_vrf` configure. Derivation, rules and
// semantics are in engines/vector.go.

// BranchMode is the argument of `vector_intra_slice_branch(BranchMode::...)`
// (002 L4794-4802): how the Branch stage assigns each 32-bit element its
// 4-bit ExecutionId.
type BranchMode string

// The branch modes (002 L4798-4802). Only the variant is recorded; the
// arguments of AxisToggle and Comparison are not modelled yet.
const (
	// BranchUnconditional: all elements get ExecutionId 0 (002 L4798).
	BranchUnconditional BranchMode = "Unconditional"
	// BranchAxisToggle: group_id = axis_index % 2 (002 L4799).
	BranchAxisToggle BranchMode = "AxisToggle"
	// BranchValidCount: via the Valid Count Generator (002 L4800).
	BranchValidCount BranchMode = "ValidCount"
	// BranchComparison: branch bits from comparisons of the input (002 L4801).
	BranchComparison BranchMode = "Comparison"
	// BranchVrf: ExecutionIds loaded from the VRF (002 L4802).
	BranchVrf BranchMode = "Vrf"
)

// ParseBranchMode reads a branch mode as the manual spells it,
// optionally prefixed `BranchMode::` (`Unconditional`,
// `AxisToggle { axis: A }`, `Comparison([...])`): the variant is returned,
// its arguments are not.
func ParseBranchMode(s string) (BranchMode, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "BranchMode::")
	name := t
	if i := strings.IndexAny(t, "{( "); i >= 0 {
		name = t[:i]
	}
	switch m := BranchMode(name); m {
	case BranchUnconditional, BranchValidCount, BranchVrf:
		if name != t {
			return "", fmt.Errorf("branch mode %q takes no argument", s)
		}
		return m, nil
	case BranchAxisToggle, BranchComparison:
		return m, nil
	}
	return "", fmt.Errorf("unknown branch mode %q (want Unconditional, AxisToggle { axis }, ValidCount, Comparison([...]) or Vrf)", s)
}

// VeALU names one ALU of the Vector Engine; each is used at most once per
// pass (002 L4750, L5253).
type VeALU string

// The Fxp cluster's ALUs (002 L4823).
const (
	ALUFxpAdd    VeALU = "FxpAdd"
	ALUFxpLshift VeALU = "FxpLshift"
	ALUFxpMul    VeALU = "FxpMul"
	ALUFxpRshift VeALU = "FxpRshift"
)

// VectorInitConfig is the configuration of `vector_init()` (002
// L4561-4565): the stream entering the Vector Engine, one flit of eight
// 32-bit elements per packet (002 L4551).
type VectorInitConfig struct {
	// DType is the element type, i32 or f32 (002 L4551).
	DType dtype.DType `json:"dtype"`
	// Lanes is the number of elements per packet: 8 (Way8, 002 L4731).
	Lanes int `json:"lanes"`
	// Packets is the number of packets per slice in the pass (Time::SIZE).
	Packets int `json:"packets"`
	// VCG is the Valid Count Generator's configuration when the pass
	// reduces a padded axis (002 L5574-6582), nil otherwise.
	VCG *VCGConfig `json:"vcg,omitempty"`
}

// String prints `i32 × 8 lanes, 1 packet`.
func (c VectorInitConfig) String() string {
	return fmt.Sprintf("%s × %d lanes, %d packet%s", c.DType, c.Lanes, c.Packets, plural(c.Packets))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// VectorBranchConfig is the configuration of
// `vector_intra_slice_branch(mode)` (002 L4794-4802).
type VectorBranchConfig struct {
	Mode BranchMode `json:"mode"`
	// DType is the stream's element type (Comparison compares as it).
	DType dtype.DType `json:"dtype,omitempty"`
	// Cmps are Comparison's four comparisons, bit i of the ExecutionId
	// from Cmps[i] (002 L4801), boundaries as element bits.
	Cmps []VeCmpConfig `json:"cmps,omitempty"`
	// Toggle is AxisToggle's parity of the axis coordinate (002 L4799).
	Toggle *VeToggleConfig `json:"toggle,omitempty"`
}

// VeCmpConfig is one lowered comparison: Op of InputCmp with the boundary's
// element bits.
type VeCmpConfig struct {
	Op   string `json:"op"`
	Bits uint32 `json:"bits,omitempty"`
}

// VeToggleConfig computes an element's axis coordinate parity for
// BranchMode::AxisToggle: the coordinate is a sum of digit·stride terms of
// the stream position's Slice, Time and lane digits, and only digits with
// an odd stride change its parity. Time and Slice are mixed-radix loops
// (outermost first) whose Stride is 1 for a digit that flips the parity and
// 0 otherwise; Lanes holds each lane's parity.
type VeToggleConfig struct {
	Axis  string     `json:"axis"`
	Slice []SeqEntry `json:"slice,omitempty"`
	Time  []SeqEntry `json:"time,omitempty"`
	Lanes []uint8    `json:"lanes"`
}

// String prints `BranchMode::Unconditional`.
func (c VectorBranchConfig) String() string {
	s := "BranchMode::" + string(c.Mode)
	switch {
	case c.Toggle != nil:
		s += " { axis: " + c.Toggle.Axis + " }"
	case len(c.Cmps) > 0:
		var xs []string
		for _, k := range c.Cmps {
			if k.Op == "True" || k.Op == "False" {
				xs = append(xs, k.Op)
			} else {
				xs = append(xs, fmt.Sprintf("%s(%#x)", k.Op, k.Bits))
			}
		}
		s += "([" + strings.Join(xs, ", ") + "])"
	}
	return s
}

// VRFReadConfig is how the Vector Engine reads a VRF operand: one flit of
// Lanes consecutive elements per stream packet, lane l reading element
// position e(t) + l of the VRF tensor, where e(t) = Σ digit_k·Stride_k over
// the digits of the packet's time step t in the mixed radix of Entries
// (innermost entry fastest), as a sequencer does (002 L1390-1401). A stride
// of 0 re-reads the same elements: a time axis the VRF tensor lacks
// (002 L5066-5079, where the VRF has no B and the stream's Time is B).
type VRFReadConfig struct {
	// Tensor names the VRF tensor.
	Tensor string `json:"tensor"`
	// Base is the tensor's byte address in each slice's VRF.
	Base int `json:"base"`
	// ElemBytes is the element size in bytes (4).
	ElemBytes int `json:"elem_bytes"`
	// Lanes is the number of elements read per packet (8).
	Lanes int `json:"lanes"`
	// Entries are the time loops, outermost first, strides in elements.
	Entries []SeqEntry `json:"entries"`
}

// Steps is the number of packets the read covers: the product of the entry
// sizes.
func (c *VRFReadConfig) Steps() int {
	n := 1
	for _, e := range c.Entries {
		n *= e.Size
	}
	return n
}

// Element is the element position e(t) of lane 0 at time step t.
func (c *VRFReadConfig) Element(t int) int {
	e := 0
	for i := len(c.Entries) - 1; i >= 0; i-- {
		s := c.Entries[i].Size
		if s < 1 {
			return e
		}
		e += (t % s) * c.Entries[i].Stride
		t /= s
	}
	return e
}

// String prints `vrf rhs_vrf @ 0 [1:0]`.
func (c VRFReadConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "vrf %s @ %d [", c.Tensor, c.Base)
	for i, e := range c.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d:%d", e.Size, e.Stride)
	}
	b.WriteByte(']')
	return b.String()
}

// VectorFinalConfig is the configuration of `vector_final()`, the exit of
// the Vector Engine towards Cast, Transpose or Commit (002 L4975-4976).
type VectorFinalConfig struct {
	// DType, Lanes and Packets describe the stream leaving the engine.
	DType   dtype.DType `json:"dtype"`
	Lanes   int         `json:"lanes"`
	Packets int         `json:"packets"`
}

// String prints `i32 × 8 lanes, 1 packet`.
func (c VectorFinalConfig) String() string {
	return VectorInitConfig{DType: c.DType, Lanes: c.Lanes, Packets: c.Packets}.String()
}

// ToVRFConfig is the configuration of `to_vrf(addr)` (002 L280-285, L3033):
// the collect stream's flits stored in order into each slice's VRF. The
// tensor's element at position e of its Element mapping sits at byte
// Base + e·ElemBytes of the slice's VRF (as a DmTensor at addr occupies
// addr..addr + Element::SIZE·size_of::<D>(), 002 L1093): flit t fills
// bytes Base + 32·t onward.
type ToVRFConfig struct {
	// Base is the byte address, the argument of to_vrf (002 L285).
	Base int `json:"base"`
	// Flits is the number of collect flits stored: Time::SIZE.
	Flits int `json:"flits"`
	// ElemBytes is the element size in bytes.
	ElemBytes int `json:"elem_bytes"`
	// ElementBytes is the tensor's size per slice, Element::SIZE·ElemBytes.
	ElementBytes int `json:"element_bytes"`
	// CapacityBytes is the VRF's size per slice, 8 KB (002 L140, L1090).
	CapacityBytes int `json:"capacity_bytes"`
}

// Offset is the byte address in the slice's VRF of element position e.
func (c *ToVRFConfig) Offset(e int) int { return c.Base + e*c.ElemBytes }

// String prints `to_vrf(0): 1 flit, 32 of 8192 bytes`.
func (c ToVRFConfig) String() string {
	return fmt.Sprintf("to_vrf(%d): %d flit%s, %d of %d bytes", c.Base, c.Flits, plural(c.Flits), c.ElementBytes, c.CapacityBytes)
}

// VectorTime is the stream's Time after an intra-slice stage, as
// engines.Lower tracks it: the Time the stage states (vector_split and
// vector_concat's, the reduce's OTime, the filter's Time2, the unzip's
// SplitTime), else before, the Time before it. The emitter and the Rust
// reader compute a commit_trim under furiosa-opt-std 0.6.0 from it.
func (st *Stage) VectorTime(before *mapping.Expr) *mapping.Expr {
	if st.Time != nil {
		return st.Time
	}
	return before
}
