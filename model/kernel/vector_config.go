package kernel

import (
	"fmt"
	"strings"

	"tcpmap/model/dtype"
)

// The intra-slice block's lowered configurations (engines/vector*.go
// derives them; verify runs them; cost prices them): what each stage's
// registers hold once the compiler has read the kernel's mappings.

// VeOperandConfig is a lowered operand: a constant's element bits (i32 two's
// complement or f32 IEEE 754), the VRF read, or the stash with the gather
// that maps the current stream's positions onto the stash's (nil when the
// stash has the stream's layout; -1 marks a padding position, read as 0).
type VeOperandConfig struct {
	Kind   VeOperandKind  `json:"kind"`
	Bits   uint32         `json:"bits,omitempty"`
	VRF    *VRFReadConfig `json:"vrf,omitempty"`
	Gather []int32        `json:"gather,omitempty"`
}

// String prints `0x3f800000`, `vrf w @ 0 [4:8]` or `stash`.
func (o VeOperandConfig) String() string {
	switch o.Kind {
	case VeVRF:
		if o.VRF != nil {
			return o.VRF.String()
		}
		return "vrf"
	case VeStash:
		if o.Gather != nil {
			return "stash (gathered)"
		}
		return "stash"
	}
	return fmt.Sprintf("%#x", o.Bits)
}

// VeSlotConfig is a lowered operand slot: Guard (GuardAlways, GuardGroup0,
// GuardGroup1) selects the elements it applies to by the group bit of their
// ExecutionId.
type VeSlotConfig struct {
	Guard    int               `json:"guard"`
	Operands []VeOperandConfig `json:"operands"`
}

// VectorOpConfig is the configuration of an ALU op stage (vector_logic,
// vector_fxp, vector_fp_unary/binary/ternary, vector_fp_div, vector_clip):
// the op, the ALU it takes (none for FpDiv's dedicated divider), the
// element type, the argument mode that routes the stream and operands into
// the op (002 L5082-5106), the packet's lanes (8 for Way8 stages, 4 for
// the Way4 ones, 002 L4731) and the operand slots. A unary op has no slot
// and applies to every element; an element no slot's guard admits keeps
// its value.
type VectorOpConfig struct {
	Op    string         `json:"op"`
	ALU   VeALU          `json:"alu,omitempty"`
	DType dtype.DType    `json:"dtype"`
	Arity int            `json:"arity"`
	Mode  string         `json:"mode"`
	Lanes int            `json:"lanes"`
	Slots []VeSlotConfig `json:"slots,omitempty"`
	// Pair, in two-group mode (002 L5154-5249), is the op's application to
	// each group: the stream holds group 0's packets, then group 1's.
	Pair *VePairConfig `json:"pair,omitempty"`
	// Zip marks a zip op: the two groups' streams are the op's inputs,
	// routed by Mode (0 group 0, 1 group 1, 002 L5107-5117), into one
	// stream.
	Zip bool `json:"zip,omitempty"`
}

// VePairConfig is a per-group op's application: whether each group
// applies it, and with which operand slots.
type VePairConfig struct {
	Apply [2]bool           `json:"apply"`
	Slots [2][]VeSlotConfig `json:"slots"`
}

// String prints `AddFxp (FxpAdd) Mode01, 0x1`.
func (c VectorOpConfig) String() string {
	var b strings.Builder
	b.WriteString(c.Op)
	if c.ALU != "" {
		fmt.Fprintf(&b, " (%s)", c.ALU)
	}
	b.WriteString(" " + c.Mode)
	for _, s := range c.Slots {
		b.WriteString(",")
		if s.Guard != GuardAlways {
			fmt.Fprintf(&b, " group %d:", s.Guard)
		}
		for _, o := range s.Operands {
			b.WriteString(" " + o.String())
		}
	}
	return b.String()
}

// VRF returns the VRF read of the config's operands, or nil.
func (c *VectorOpConfig) VRF() *VRFReadConfig {
	slots := c.Slots
	if c.Pair != nil {
		slots = append(append([]VeSlotConfig(nil), c.Pair.Slots[0]...), c.Pair.Slots[1]...)
	}
	for _, s := range slots {
		for _, o := range s.Operands {
			if o.Kind == VeVRF {
				return o.VRF
			}
		}
	}
	return nil
}

// VectorConvertConfig is the configuration of vector_fxp_to_fp and
// vector_fp_to_fxp (002 L4837-4841, L4948-4952): the conversion's direction
// and int_width (docs/spec-decisions.md "FxpToFp and FpToFxp").
type VectorConvertConfig struct {
	From     dtype.DType `json:"from"`
	To       dtype.DType `json:"to"`
	IntWidth int         `json:"int_width"`
}

// String prints `i32 → f32, int_width 31`.
func (c VectorConvertConfig) String() string {
	return fmt.Sprintf("%s → %s, int_width %d", c.From, c.To, c.IntWidth)
}

// The Narrow and Widen stages' kinds (002 L4842-4947).
const (
	WaySplit  = "split"  // one 8-way flit → two 4-way packets (002 L4849)
	WayTrim   = "trim"   // keep the lower 4 lanes (002 L4850)
	WayConcat = "concat" // two 4-way packets → one 8-way flit (002 L4924)
	WayPad    = "pad"    // a 4-way packet padded to 8 lanes (002 L4925)
)

// VectorWayConfig is the configuration of vector_split, vector_trim_way4,
// vector_concat and vector_pad_way8: packets and lanes in and out.
type VectorWayConfig struct {
	Kind       string `json:"kind"`
	InPackets  int    `json:"in_packets"`
	InLanes    int    `json:"in_lanes"`
	OutPackets int    `json:"out_packets"`
	OutLanes   int    `json:"out_lanes"`
}

// String prints `split: 2 × 8 lanes → 4 × 4 lanes`.
func (c VectorWayConfig) String() string {
	return fmt.Sprintf("%s: %d × %d lanes → %d × %d lanes", c.Kind, c.InPackets, c.InLanes, c.OutPackets, c.OutLanes)
}

// VeReduceDigit is one Time loop of an intra-slice reduce's input: its size
// and whether it steps the reduce axis.
type VeReduceDigit struct {
	Size   int  `json:"size"`
	Reduce bool `json:"reduce,omitempty"`
}

// VectorReduceConfig is the configuration of vector_intra_slice_reduce
// (002 L5285-5402): the op and type; Packet reduce (the reduce axis fills
// the packet: each 4-lane packet goes through the 2-level tree
// op(op(a, b), op(c, d)) to one value, 002 L5365-5377) or not (each lane
// accumulates on its own); the input Time loops, outermost first, whose
// non-reduce digits index the output time steps; and the accumulator slots
// the mapping needs (002 L5498-5521).
type VectorReduceConfig struct {
	Op           string          `json:"op"`
	DType        dtype.DType     `json:"dtype"`
	Axis         string          `json:"axis"`
	PacketReduce bool            `json:"packet_reduce,omitempty"`
	Time         []VeReduceDigit `json:"time"`
	Lanes        int             `json:"lanes"`
	InPackets    int             `json:"in_packets"`
	OutPackets   int             `json:"out_packets"`
	Slots        int             `json:"slots"`
	// Span is the input time steps of one reduction group: the product of
	// the reduce digits (the delay of the first output, 002 L5569-5571).
	Span int `json:"span"`
}

// OutStep returns the output time step of input time step t: t's digits in
// the mixed radix of Time with the reduce digits dropped.
func (c *VectorReduceConfig) OutStep(t int) int {
	o, mul := 0, 1
	for i := len(c.Time) - 1; i >= 0; i-- {
		d := c.Time[i]
		if d.Size < 1 {
			return o
		}
		v := t % d.Size
		t /= d.Size
		if !d.Reduce {
			o += v * mul
			mul *= d.Size
		}
	}
	return o
}

// String prints `Add over R (packet tree): 8 → 2 packets, 2 slots`.
func (c VectorReduceConfig) String() string {
	where := "time"
	if c.PacketReduce {
		where = "packet tree"
	}
	return fmt.Sprintf("%s over %s (%s): %d → %d packets, %d slot%s", c.Op, c.Axis, where, c.InPackets, c.OutPackets, c.Slots, plural(c.Slots))
}

// VectorFilterConfig is the configuration of vector_filter::<Time2>(mode)
// (002 L4973-4974; docs/spec-decisions.md "Filter"): the elements whose
// ExecutionId group is Group are kept and packed in stream order into
// OutPackets packets of Lanes.
type VectorFilterConfig struct {
	Group      int `json:"group"`
	Lanes      int `json:"lanes"`
	InPackets  int `json:"in_packets"`
	OutPackets int `json:"out_packets"`
}

// String prints `group 0: 8 → 2 packets`.
func (c VectorFilterConfig) String() string {
	return fmt.Sprintf("group %d: %d → %d packets", c.Group, c.InPackets, c.OutPackets)
}

// VectorStashConfig is the configuration of vector_stash() (002
// L4977-5051): the snapshot's type and size.
type VectorStashConfig struct {
	DType   dtype.DType `json:"dtype"`
	Lanes   int         `json:"lanes"`
	Packets int         `json:"packets"`
}

// String prints `f32 × 8 lanes, 1 packet`.
func (c VectorStashConfig) String() string {
	return VectorInitConfig{DType: c.DType, Lanes: c.Lanes, Packets: c.Packets}.String()
}

// VectorUnzipConfig is the configuration of vector_intra_slice_unzip
// (002 L4574-4577, L5154-5165): the input Time's loops (outermost first),
// one of them the group axis of size 2; group g's packets are the input
// packets whose group digit is g, in order. The stream of a pair holds
// group 0's packets, then group 1's.
type VectorUnzipConfig struct {
	Axis      string          `json:"axis"`
	Lanes     int             `json:"lanes"`
	InPackets int             `json:"in_packets"`
	Time      []VeReduceDigit `json:"time"` // Reduce marks the group digit
}

// GroupOf returns the group of input packet t and its position in the
// group's stream.
func (c *VectorUnzipConfig) GroupOf(t int) (group, pos int) {
	mul := 1
	for i := len(c.Time) - 1; i >= 0; i-- {
		d := c.Time[i]
		if d.Size < 1 {
			return 0, 0
		}
		v := t % d.Size
		t /= d.Size
		if d.Reduce {
			group = v
		} else {
			pos += v * mul
			mul *= d.Size
		}
	}
	return group, pos
}

// String prints `unzip over I: 2 × 8 lanes → 2 groups of 1`.
func (c VectorUnzipConfig) String() string {
	return fmt.Sprintf("unzip over %s: %d × %d lanes → 2 groups of %d", c.Axis, c.InPackets, c.Lanes, c.InPackets/2)
}

// VCGCounter is one sequencer counter of the Valid Count Generator (002
// L6211-6248): a limit, the original dimension it feeds (VCGPacket,
// VCGGate0..2, or VCGNone) and its stride.
type VCGCounter struct {
	Limit  int `json:"limit"`
	Dim    int `json:"dim"`
	Stride int `json:"stride,omitempty"`
}

// The original dimensions of the VCG (002 L6184-6189, L6250-6258).
const (
	VCGNone   = -1
	VCGPacket = 0
	VCGGate0  = 1 // gate dims 0-2 are 1-3
)

// VCGGate is one gate dimension (002 L6300-6341): slices whose
// s & Mask is below Match are valid, at Match (and above, when
// Transposed) valid while the dimension's index is below V, above it
// (standard) invalid. Mask 0, Match 1 disables the gate.
type VCGGate struct {
	Mask       int  `json:"mask"`
	Match      int  `json:"match"`
	V          int  `json:"v"`
	Transposed bool `json:"transposed,omitempty"`
}

// VCGConfig is the Valid Count Generator's configuration (002
// L6166-6341): up to 8 counters over a slice's flits (c_0 fastest), the
// packet dimension's valid count VP and width StrideP (0: no packet
// dimension, every flit full), and three gates. vc(s, t) = packet_vc(t) ×
// gate_0 × gate_1 × gate_2 tells how many of flit t's lanes on slice s
// are data (a prefix, 002 L6176-6179).
type VCGConfig struct {
	// Axis is the reduce axis the configuration tracks.
	Axis     string       `json:"axis"`
	Lanes    int          `json:"lanes"`
	Counters []VCGCounter `json:"counters"`
	StrideP  int          `json:"stride_p,omitempty"`
	VP       int          `json:"v_p,omitempty"`
	Gates    [3]VCGGate   `json:"gates"`
}

// DisabledVCGGate is a gate that passes every flit (002 L6331).
var DisabledVCGGate = VCGGate{Mask: 0, Match: 1}

// String prints `R: packet V=19 stride 8; gate 0 mask 0x7 match 5 V 2`.
func (c VCGConfig) String() string {
	var parts []string
	if c.StrideP > 0 {
		parts = append(parts, fmt.Sprintf("packet V=%d stride %d", c.VP, c.StrideP))
	}
	for g, x := range c.Gates {
		if x == DisabledVCGGate {
			continue
		}
		m := "standard"
		if x.Transposed {
			m = "transposed"
		}
		parts = append(parts, fmt.Sprintf("gate %d mask %#x match %d V %d %s", g, x.Mask, x.Match, x.V, m))
	}
	return c.Axis + ": " + strings.Join(parts, "; ")
}
