package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
)

// RelayoutCycles is the cost of copying a tensor of n bytes from one HBM
// layout into another by DMA, as graph planning prices a relayout between
// a producer and a consumer whose layouts disagree: one DMA command
// (its startup, 002 L2467, L2827) that reads the n bytes and writes them
// once, at the HBM read and write caps the cost model applies (the shares
// of the channels' peak, decision "HBM read and write bandwidth": 0.75 TB/s
// each, 002 L2602, L2636, within 1.5 TB/s together, 002 L137, L2980), as
// Report's roofline does for a kernel's inputs and outputs. It assumes
// both layouts stream at the full rate (their rows are at least the 256-byte
// access unit, 002 L2980); docs/spec-decisions.md "Graph relayouts".
func RelayoutCycles(spec *engines.Spec, n int64) (float64, error) {
	if spec == nil {
		return 0, errors.New("cost: RelayoutCycles: nil spec")
	}
	if n < 0 {
		return 0, fmt.Errorf("cost: RelayoutCycles: %d bytes", n)
	}
	if n == 0 {
		return 0, nil
	}
	h := &spec.HBM
	// The channels' peak per core cycle (002 L137, L2980), as Report.
	peak := ratio(float64(h.Stacks.Value*h.ChannelsPerStack.Value*h.AccessUnitBytes.Value), h.CyclesPerRequest.Value)
	share := func(tbps float64) float64 { return peak * ratio(tbps, h.PeakTBPerS.Value) }
	x := float64(n)
	move := max(ratio(x, share(h.ReadTBPerS.Value)), ratio(x, share(h.WriteTBPerS.Value)), ratio(2*x, peak))
	return float64(spec.DMA.StartupCycles.Value) + move, nil // 002 L2467, L2827
}
