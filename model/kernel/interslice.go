package kernel

import (
	"fmt"
	"strings"

	"tcpmap/model/dtype"
)

// The Inter-Slice Block's configuration data (002 L6583-6755): what
// `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)` configures.
// Derivation, rules and semantics are in engines/interslice.go.

// StVectorInterSlice is the stage `vector_inter_slice_reduce::<SliceOut,
// TimeOut>(op)` (002 L6586-6601): its Slice and Time are SliceOut and
// TimeOut, its Param the op (`AddSat`, `InterSliceReduceOpF32::Add`).
const StVectorInterSlice StageKind = "vector_inter_slice_reduce"

// InterSliceOp is an op of InterSliceReduceOpI32 or InterSliceReduceOpF32
// (002 L6611-6625).
type InterSliceOp string

// The inter-slice reduce ops (002 L6611-6625).
const (
	InterSliceAdd    InterSliceOp = "Add"    // i32 wrapping addition (002 L6614), f32 addition (002 L6621)
	InterSliceAddSat InterSliceOp = "AddSat" // i32 saturating addition (002 L6615)
	InterSliceMax    InterSliceOp = "Max"    // maximum (002 L6616, L6622)
	InterSliceMin    InterSliceOp = "Min"    // minimum (002 L6617, L6623)
	InterSliceMul    InterSliceOp = "Mul"    // f32 multiplication (002 L6624)
)

// interSliceOps lists the ops of each enum (002 L6612-6625).
var interSliceOps = map[dtype.DType][]InterSliceOp{
	dtype.I32: {InterSliceAdd, InterSliceAddSat, InterSliceMax, InterSliceMin},
	dtype.F32: {InterSliceAdd, InterSliceMax, InterSliceMin, InterSliceMul},
}

// InterSliceOpFor reports whether op is an op of the enum of element type
// d: InterSliceReduceOpI32 for i32, InterSliceReduceOpF32 for f32
// (002 L6611-6625).
func InterSliceOpFor(d dtype.DType, op InterSliceOp) bool {
	for _, o := range interSliceOps[d] {
		if o == op {
			return true
		}
	}
	return false
}

// ParseInterSliceOp reads the argument of vector_inter_slice_reduce as the
// manual spells it: `InterSliceReduceOpI32::AddSat`,
// `InterSliceReduceOpF32::Add` (002 L6649, L6667), or the bare variant
// `AddSat`. It returns the op and the element type its enum names (0 for
// a bare variant). Errors give the column (1-based) of the offending text.
func ParseInterSliceOp(s string) (InterSliceOp, dtype.DType, error) {
	lead := len(s) - len(strings.TrimLeft(s, " \t"))
	t := strings.TrimSpace(s)
	var d dtype.DType
	if enum, v, ok := strings.Cut(t, "::"); ok {
		switch strings.TrimSpace(enum) {
		case "InterSliceReduceOpI32":
			d = dtype.I32
		case "InterSliceReduceOpF32":
			d = dtype.F32
		default:
			return "", 0, fmt.Errorf("vector_inter_slice_reduce %q: column %d: unknown enum %q (want InterSliceReduceOpI32 or InterSliceReduceOpF32)", s, lead+1, strings.TrimSpace(enum))
		}
		lead += len(enum) + 2 + len(v) - len(strings.TrimLeft(v, " \t"))
		t = strings.TrimSpace(v)
	}
	op := InterSliceOp(t)
	switch {
	case d != 0 && !InterSliceOpFor(d, op):
		return "", 0, fmt.Errorf("vector_inter_slice_reduce %q: column %d: %q is not an op of %s (want %s)", s, lead+1, t, interSliceEnum(d), opList(interSliceOps[d]))
	case d == 0 && !InterSliceOpFor(dtype.I32, op) && !InterSliceOpFor(dtype.F32, op):
		return "", 0, fmt.Errorf("vector_inter_slice_reduce %q: column %d: unknown op %q (want Add, AddSat, Max, Min or Mul)", s, lead+1, t)
	}
	return op, d, nil
}

// interSliceEnum names the op enum of element type d (002 L6612, L6619).
func interSliceEnum(d dtype.DType) string {
	if d == dtype.F32 {
		return "InterSliceReduceOpF32"
	}
	return "InterSliceReduceOpI32"
}

// InterSliceEnum names the op enum of element type d, as the Rust API
// spells it: InterSliceReduceOpI32 or InterSliceReduceOpF32 (002 L6591,
// L6597).
func InterSliceEnum(d dtype.DType) string { return interSliceEnum(d) }

func opList(ops []InterSliceOp) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

// InterSliceDigit is one digit of the Inter-Slice Block's output: Size
// positions, of which the first Live hold data (the others are padding,
// the `1 # n` of Dummy Replacement, 002 L6653); position i reads input time
// step i·Stride, summed over the digits. A Stride of 0 with Live = Size is
// a broadcast (the new axis X of 002 L6661-6672).
type InterSliceDigit struct {
	Size   int    `json:"size"`
	Live   int    `json:"live"`
	Stride int    `json:"stride"`
	Term   string `json:"term,omitempty"`
}

// InterSliceReduceConfig is the configuration of
// `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)` (002 L6583-6755):
// within a cluster, the stream's slices form groups of Ratio consecutive
// slices (the innermost Slice digits, reduced away); each group's Ratio
// streams of InPackets packets are folded lane by lane into one stream,
// and slice j of the group receives, at output time step t', the packet
// whose input time step the Fill digits (for j) and the Time digits (for
// t') select: promotion (a Time digit moved into SliceOut), broadcast
// (stride 0) or a dummy (padding) per Fill digit (002 L6626-6634).
// Chip, Cluster and Packet pass through (002 L6633-6634).
type InterSliceReduceConfig struct {
	// DType is the element type, i32 or f32 (002 L6735).
	DType dtype.DType `json:"dtype"`
	// Op is the reduction (002 L6611-6625).
	Op InterSliceOp `json:"op"`
	// Lanes is the number of elements per packet: 8 (Way8).
	Lanes int `json:"lanes"`
	// Slices is the number of slices of the stream's Slice mapping.
	Slices int `json:"slices"`
	// Ratio is the reduction ratio r: the slices of one reduction group
	// (002 L6744, L6746).
	Ratio int `json:"ratio"`
	// InPackets and OutPackets are the packets per slice before and after
	// (Time::SIZE, TimeOut::SIZE).
	InPackets  int `json:"in_packets"`
	OutPackets int `json:"out_packets"`
	// Fill are the digits of SliceOut's innermost Ratio positions, the slots
	// the reduced factor frees, outermost first.
	Fill []InterSliceDigit `json:"fill"`
	// Time are TimeOut's digits, outermost first.
	Time []InterSliceDigit `json:"time"`
}

// Source returns the input time step that slice j of a group (0 ≤ j <
// Ratio) holds at output time step t (0 ≤ t < OutPackets), and false when
// that position is padding.
func (c *InterSliceReduceConfig) Source(j, t int) (int, bool) {
	src := 0
	for i := len(c.Time) - 1; i >= 0; i-- {
		d := c.Time[i]
		if d.Size < 1 {
			return 0, false
		}
		k := t % d.Size
		if k >= d.Live {
			return 0, false
		}
		src += k * d.Stride
		t /= d.Size
	}
	for i := len(c.Fill) - 1; i >= 0; i-- {
		d := c.Fill[i]
		if d.Size < 1 {
			return 0, false
		}
		k := j % d.Size
		if k >= d.Live {
			return 0, false
		}
		src += k * d.Stride
		j /= d.Size
	}
	return src, true
}

// LiveSlot reports whether slice j of a group holds data: every Fill digit
// at a live position.
func (c *InterSliceReduceConfig) LiveSlot(j int) bool {
	for i := len(c.Fill) - 1; i >= 0; i-- {
		d := c.Fill[i]
		if d.Size < 1 || j%d.Size >= d.Live {
			return false
		}
		j /= d.Size
	}
	return true
}

// String prints `AddSat over 4 slices: 256 slices × 1 packet → fill [1 # 4], time []`.
func (c InterSliceReduceConfig) String() string {
	digits := func(ds []InterSliceDigit) string {
		s := make([]string, len(ds))
		for i, d := range ds {
			switch {
			case d.Live < d.Size && d.Live == 1 && d.Stride == 0:
				s[i] = fmt.Sprintf("1 # %d", d.Size)
			case d.Stride == 0:
				s[i] = fmt.Sprintf("bcast %d", d.Size)
			default:
				s[i] = fmt.Sprintf("%d:%d", d.Size, d.Stride)
				if d.Live < d.Size {
					s[i] += fmt.Sprintf(" (%d live)", d.Live)
				}
			}
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	return fmt.Sprintf("%s::%s over %d slices: %d slices × %d packet%s → %d, fill %s, time %s",
		interSliceEnum(c.DType), c.Op, c.Ratio, c.Slices, c.InPackets, plural(c.InPackets), c.OutPackets, digits(c.Fill), digits(c.Time))
}
