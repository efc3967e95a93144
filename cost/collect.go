package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Collect Engine cost (002 L3543-3669, L2119-2130).

// CollectCost is the price of normalizing a stream to flits.
type CollectCost struct {
	// Cycles is the number of output flits, one per cycle on the flit-wide
	// channel (002 L2125-2126): Time::SIZE × ceil(packet / flit).
	Cycles int
	// FlitsPerPacket is ceil(packet / flit); PadBytes the zeros added to each
	// packet, flits · flit − packet (002 L2122-2124).
	FlitsPerPacket, PadBytes int
	// Unused is the fraction of flit payload the padding wastes,
	// PadBytes / (FlitsPerPacket · flit) (002 L2128).
	Unused float64
}

// CollectCycles prices steps packets of packetBytes normalized to flits of
// flit bytes (32, or 64 in dual channel mode, 002 L2125-2127).
func CollectCycles(steps, packetBytes, flit int) (CollectCost, error) {
	var c CollectCost
	if steps < 0 || packetBytes <= 0 || flit <= 0 {
		return c, fmt.Errorf("cost: collect of %d packets of %d bytes into %d-byte flits", steps, packetBytes, flit)
	}
	c.FlitsPerPacket = ceilDiv(packetBytes, flit)
	c.PadBytes = c.FlitsPerPacket*flit - packetBytes
	c.Unused = float64(c.PadBytes) / float64(c.FlitsPerPacket*flit)
	c.Cycles = steps * c.FlitsPerPacket
	return c, nil
}

// Collect prices a lowered collect.
func Collect(spec *engines.Spec, c *kernel.Collect) (CollectCost, error) {
	if spec == nil || c == nil {
		return CollectCost{}, errors.New("cost: Collect: nil spec or configuration")
	}
	if c.FlitBytes != spec.Stream.FlitBytes.Value && c.FlitBytes != spec.Stream.DualChannelFlitBytes.Value {
		return CollectCost{}, fmt.Errorf("cost: Collect: %d-byte flits, want %d or %d (002 L2125-2127)", c.FlitBytes,
			spec.Stream.FlitBytes.Value, spec.Stream.DualChannelFlitBytes.Value)
	}
	return CollectCycles(c.InTime, c.PacketBytes, c.FlitBytes)
}
