package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Switch Engine cost (002 L3520-3542).

// SwitchCycles is the manual's estimate: cycle = ring_size × input_time ×
// cycles_per_packet, cycles_per_packet = packet_size / 32, the flits of one
// packet (002 L3523-3526), rounded up for a packet that is not a whole number
// of flits. All rings of a switch run in parallel and finish together, so
// this is the time of the whole switch (002 L3530-3532). flit is 32 bytes, 64
// in dual channel mode (002 L2125-2127).
func SwitchCycles(ringSize, inTime, packetBytes, flit int) (int, error) {
	if ringSize <= 0 || inTime < 0 || packetBytes <= 0 || flit <= 0 {
		return 0, fmt.Errorf("cost: switch with ring size %d, input time %d, %d-byte packets, %d-byte flits", ringSize, inTime, packetBytes, flit)
	}
	return ringSize * inTime * ceilDiv(packetBytes, flit), nil
}

// SwitchCost is the price of one switch.
type SwitchCost struct {
	// Cycles is ring_size × input_time × cycles_per_packet (002 L3524).
	Cycles int
	// Rings is the number of independent rings running in parallel
	// (002 L3212, L3531).
	Rings int
	// Findings holds the setup of a custom topology, which preempts the DMA
	// and sub contexts for an unstated number of cycles (002 L3533-3537).
	Findings []Finding
}

// Switch prices a lowered switch. Forwarding (ring size 1) is "the most
// efficient topology" (002 L3136-3138).
func Switch(spec *engines.Spec, sw *kernel.Switch) (SwitchCost, error) {
	var c SwitchCost
	if spec == nil || sw == nil {
		return c, errors.New("cost: Switch: nil spec or configuration")
	}
	if !sw.Config.Topology.Valid() {
		return c, fmt.Errorf("cost: Switch: topology %v", sw.Config.Topology)
	}
	if sw.RingSize <= 0 || sw.RingSize > spec.Switch.MaxRingSize.Value {
		return c, fmt.Errorf("cost: Switch: ring size %d outside 1..%d (002 L3364)", sw.RingSize, spec.Switch.MaxRingSize.Value)
	}
	var err error
	if c.Cycles, err = SwitchCycles(sw.RingSize, sw.InTime, sw.PacketBytes, sw.FlitBytes); err != nil {
		return c, err
	}
	c.Rings = sw.Rings
	if sw.Config.Topology == kernel.SwitchCustomBroadcast {
		v := ruleCustomSetup.Violate("custom topology with ring size %d: its snoop bitmaps are written to SFRs before it runs", sw.RingSize).
			With("ring_size", sw.RingSize)
		c.Findings = append(c.Findings, Finding{Violation: v, Effect: PreemptDMAAndSub})
	}
	return c, nil
}
