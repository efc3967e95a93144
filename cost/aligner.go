package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Aligner cost: the Stream Adapter, the data path of the Contraction Engine
// (002 L3878-3957). The TRF Sequencer, its weight path, is priced in trf.go.

// StreamAdapterCost is the price of one Stream Adapter configuration.
type StreamAdapterCost struct {
	// Cycles is the adapter's occupancy: it takes one flit per cycle from the
	// collect stream and emits at most one 64-byte computation packet per
	// cycle, so max(InSteps, OutSteps). collect_flits = 1 or 2 adds nothing
	// beyond these rates ("effectively a pass-through with no overhead",
	// 002 L3956); time broadcast repeats packets without re-fetching
	// (002 L3954) (docs/spec-decisions.md "Stream Adapter rate").
	Cycles int
	// InSteps and OutSteps are the collect flits consumed and the
	// computation packets produced.
	InSteps, OutSteps int
	// MACUtilization is the fraction of the Reducer's MACs that see data:
	// rows / 8 (002 L3780, L3785) × data bytes / 64 (collect_flits = 1:
	// "Only half the MACs produce meaningful results", 002 L3927).
	MACUtilization float64
	// Findings holds the unpriced latency of shift-reuse, collect_flits = 3
	// (002 L3957).
	Findings []Finding
}

// StreamAdapterCycles prices a Stream Adapter from its sizes: inSteps
// collect flits of flit bytes, collectFlits of them per computation packet,
// each packet repeated timeBroadcast times for the tiling axes and broadcast
// to rows Rows.
func StreamAdapterCycles(spec *engines.Spec, inSteps, collectFlits, timeBroadcast, rows, flit int) (StreamAdapterCost, error) {
	var c StreamAdapterCost
	if spec == nil {
		return c, errors.New("cost: StreamAdapter: nil spec")
	}
	mac := spec.Stream.MACWidthBytes.Value // 64 bytes per Row per cycle (002 L4099)
	if inSteps < 0 || collectFlits <= 0 || timeBroadcast <= 0 || flit <= 0 || collectFlits*flit > spec.StreamAdapter.FlitBufferBytes.Value {
		return c, fmt.Errorf("cost: StreamAdapter: %d steps, collect_flits %d of %d bytes (buffer %d), time broadcast %d",
			inSteps, collectFlits, flit, spec.StreamAdapter.FlitBufferBytes.Value, timeBroadcast)
	}
	if rows <= 0 || rows > spec.Slice.Rows.Value {
		return c, fmt.Errorf("cost: StreamAdapter: %d rows, at most %d", rows, spec.Slice.Rows.Value)
	}
	if inSteps%collectFlits != 0 {
		return c, fmt.Errorf("cost: StreamAdapter: %d flits are not whole packets of %d", inSteps, collectFlits)
	}
	c.InSteps = inSteps
	c.OutSteps = inSteps / collectFlits * timeBroadcast
	c.Cycles = max(c.InSteps, c.OutSteps)
	data := min(collectFlits*flit, mac)
	c.MACUtilization = float64(rows) / float64(spec.Slice.Rows.Value) * float64(data) / float64(mac)
	if collectFlits*flit > mac {
		v := ruleShiftReuse.Violate("collect_flits = %d: shift-reuse latency not priced", collectFlits).With("collect_flits", collectFlits)
		c.Findings = append(c.Findings, Finding{Violation: v, Effect: Unpriced})
	}
	return c, nil
}

// StreamAdapter prices a lowered Stream Adapter configuration.
func StreamAdapter(spec *engines.Spec, c *kernel.StreamAdapterConfig) (StreamAdapterCost, error) {
	if c == nil {
		return StreamAdapterCost{}, errors.New("cost: StreamAdapter: nil configuration")
	}
	r, err := StreamAdapterCycles(spec, c.InSteps, c.CollectFlits, c.TimeBroadcast, c.Rows, c.FlitBytes)
	if err == nil && r.OutSteps != c.OutSteps {
		return r, fmt.Errorf("cost: StreamAdapter: configuration has %d computation steps, its sizes give %d", c.OutSteps, r.OutSteps)
	}
	return r, err
}
