package kernel

import (
	"encoding/json"
	"fmt"
	"strings"

	"tcpmap/model/dtype"
)

// AccumulationKind is the Reducer's output mode (002 L4400-4402, L4433-4492):
// `AccumulationKind::Interleaved` or `AccumulationKind::Sequential`.
type AccumulationKind string

// The accumulation kinds.
const (
	// Interleaved outputs one value of each of the 8 Rows per beat
	// (002 L4435-4448).
	Interleaved AccumulationKind = "Interleaved"
	// Sequential outputs up to 8 elements of one Row's packet per beat
	// (002 L4482-4492).
	Sequential AccumulationKind = "Sequential"
)

// ParseAccumulationKind reads a kind as the manual spells it, optionally
// prefixed `AccumulationKind::`.
func ParseAccumulationKind(s string) (AccumulationKind, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "AccumulationKind::")
	switch k := AccumulationKind(t); k {
	case Interleaved, Sequential:
		return k, nil
	}
	return "", fmt.Errorf("unknown accumulation kind %q (want Interleaved or Sequential)", s)
}

// UnmarshalJSON accepts only the two kinds.
func (k *AccumulationKind) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseAccumulationKind(s)
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// ReduceOp is the Reducer's reduction: addition, or max on Row 0 only
// (002 L4394-4395, L4533). The manual's dumps name it `reduce_op`
// (002 L3715).
type ReduceOp string

// The reduce ops.
const (
	ReduceAdd ReduceOp = "Add"
	ReduceMax ReduceOp = "Max"
)

// ContractConfig is the configuration of `contract::<OutPacket>()`, the
// Reducer's spatial stage (002 L4310-4317, L4384-4405): each Row multiplies
// its 64-byte stream and weight packets element by element, widening to the
// accumulator type, and its reduction tree sums adjacent pairs Depth times.
type ContractConfig struct {
	// In is the stream and weight element type: i4, i8, f8 or bf16 (002
	// L3782).
	In dtype.DType `json:"in"`
	// Out is the widened type, i32 or f32 (002 L4391).
	Out dtype.DType `json:"out"`
	// Op is the reduction (`reduce_op`).
	Op ReduceOp `json:"op"`
	// Rows is Row::SIZE (002 L4529-4530).
	Rows int `json:"rows"`
	// Width is the number of elements in a 64-byte computation packet:
	// 128 (i4), 64 (i8, f8) or 32 (bf16) (002 L4383, L4387-4388).
	Width int `json:"width"`
	// Depth is the configured tree depth n: the innermost Packet % 2^n
	// elements are summed (002 L4392).
	Depth int `json:"depth"`
	// Columns is Width / 2^Depth, the tree outputs per Row before the
	// resize to 32 columns (002 L4396-4399).
	Columns int `json:"columns"`
	// Valid is m, the tree outputs that carry data after slicing padded
	// Packet axes (002 L4437-4441).
	Valid int `json:"valid"`
}

// String prints `tree depth 5 (bf16 → f32), 1 column`.
func (c ContractConfig) String() string {
	s := fmt.Sprintf("tree depth %d (%s → %s), %d of %d columns", c.Depth, c.In, c.Out, c.Valid, c.Columns)
	if c.Op == ReduceMax {
		s += ", reduce max"
	}
	return s
}

// AccLoop is one loop of the computation Time mapping as the temporal
// accumulator walks it: Size iterations (padding included), reduced or
// surviving into the output.
type AccLoop struct {
	// Size is the loop's iteration count.
	Size int `json:"size"`
	// Reduced is true when the loop's axis is reduced by accumulation
	// (002 L4329-4331).
	Reduced bool `json:"reduced"`
	// Term names the loop's mapping term (`K / 16`); documentation only.
	Term string `json:"term,omitempty"`
}

// AccumulateConfig is the configuration of
// `accumulate::<OutTime, OutPacket>(kind)`, the Reducer's temporal stage
// (002 L4318-4324, L4406-4548).
//
// Computation time step t decodes into Loops (innermost first). The
// accumulator slot is the linear index of the surviving loops inner to the
// outermost reduced loop; a step whose reduced digits are all 0 stores, the
// others accumulate, and the step where every reduced and inner surviving
// digit is at its last value completes a block, which is output in OutTime
// order (002 L4410-4432).
type AccumulateConfig struct {
	// Kind is the output mode.
	Kind AccumulationKind `json:"kind"`
	// Rows is Row::SIZE.
	Rows int `json:"rows"`
	// Valid is m, the columns per Row that reach the output.
	Valid int `json:"valid"`
	// Columns is the tree outputs per Row (ContractConfig.Columns).
	Columns int `json:"columns"`
	// OutLen is the output packet length of Sequential mode: Valid rounded
	// up to a multiple of 8 (002 L4491); Interleaved outputs 8 (Row # 8).
	OutLen int `json:"out_len"`
	// Loops are the computation Time loops, innermost first.
	Loops []AccLoop `json:"loops"`
	// Iterations is the product of the reduced loops' sizes: how many
	// packets accumulate into each slot.
	Iterations int `json:"iterations"`
	// InnerTime is the product of the surviving loops inner to the
	// outermost reduced loop: the slots in use (002 L4432, L4534).
	InnerTime int `json:"inner_time"`
	// InnerAxes is the size of the OutTime axes inner to the outermost
	// reduce axis that the capacity rule bounds: InnerTime·Valid
	// (Interleaved, ≤ 128) or InnerTime·Rows (Sequential, ≤ 32)
	// (002 L4535-4538).
	InnerAxes int `json:"inner_axes"`
	// Capacity is the bound on InnerAxes: 128 or 32 (002 L4434).
	Capacity int `json:"capacity"`
	// Groups is the number of interleave steps that fill the accumulator:
	// 32 / m column groups (Interleaved, 002 L4443) or 8 / Row row groups
	// (Sequential, 002 L4488-4489).
	Groups int `json:"groups"`
	// Beats is the number of 32-byte output packets per block: InnerTime·Valid
	// (Interleaved) or InnerTime·Rows·OutLen/8 (Sequential).
	Beats int `json:"beats"`
}

// String prints `Interleaved: 4 iterations, inner 16 ≤ 128`.
func (c AccumulateConfig) String() string {
	return fmt.Sprintf("%s: %d iterations, inner %d ≤ %d, m = %d", c.Kind, c.Iterations, c.InnerAxes, c.Capacity, c.Valid)
}

// ReducerConfig is both Reducer stages of one contraction.
type ReducerConfig struct {
	// Contract is the spatial stage.
	Contract ContractConfig `json:"contract"`
	// Accumulate is the temporal stage.
	Accumulate AccumulateConfig `json:"accumulate"`
}

// String prints both stages.
func (c ReducerConfig) String() string {
	return c.Contract.String() + "; " + c.Accumulate.String()
}
