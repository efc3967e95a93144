package cost

import (
	"errors"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The Inter-Slice Block's price in a chain (002 L6738-6754): the Vector
// Engine streams its input packets at one per cycle (002 L7247), and the
// reduction adds "that ring-sized tail", O(r) cycles for a reduction ratio
// r, before the first reduced output and after the last input. The
// constant of O(r) is not stated; the full tensor reduction example prices
// 256 slices at 256 cycles (002 L4369, L4375), one cycle per slice of the
// group (docs/spec-decisions.md "Inter-slice reduction tail").
//
// The tail is the Vector Engine stage's fill and drain: a Contraction
// Engine slower than the stream hides none of it (its span plus the tail,
// "contraction can dominate", 002 L6751), and a small tensor pays it whole
// ("the fixed ring-style tail can still matter", 002 L6754).

// interSliceTail is the ring tail of an inter-slice reduction: r cycles
// for a group of r slices (InterSliceReduceCycles after no streaming).
func interSliceTail(spec *engines.Spec, c *kernel.InterSliceReduceConfig) (float64, error) {
	if c == nil {
		return 0, errors.New("cost: nil inter-slice configuration")
	}
	n, err := InterSliceReduceCycles(spec, 0, c.Ratio)
	return float64(n), err
}
