package kernel

import "fmt"

// Collect is a lowered Collect Engine configuration: how each input packet
// is normalized to flits (002 L3543-3564). The packet is zero-padded to a
// flit boundary (002 L2122, L3561) and split into Flits flits, each
// delivered in its own time step (002 L3563, L3603); a packet of at most one
// flit is only padded (002 L3552).
type Collect struct {
	// InTime is the number of input packets (the input Time size).
	InTime int `json:"in_time"`
	// PacketBytes is the size of one input packet.
	PacketBytes int `json:"packet_bytes"`
	// FlitBytes is the size of one output packet: one 32-byte flit
	// (002 L3039, L3544), 64 bytes in dual channel mode (002 L1997, L2127).
	FlitBytes int `json:"flit_bytes"`
	// FlitElems is the number of elements per flit (32 bytes holds 64 i4,
	// 32 i8, 16 bf16, 8 f32; 002 L4383).
	FlitElems int `json:"flit_elems"`
	// Flits is the number of flits per input packet, ceil(PacketBytes /
	// FlitBytes); when it exceeds 1 it becomes the new innermost Time factor
	// (002 L3552, L3603).
	Flits int `json:"flits"`
	// PadBytes is the zero padding added to each packet: Flits · FlitBytes
	// − PacketBytes (002 L2122-2124).
	PadBytes int `json:"pad_bytes"`
}

// OutTime is the number of output time steps: InTime · Flits.
func (c *Collect) OutTime() int { return c.InTime * c.Flits }

// String prints the normalization as
// `40 B packet → 2 flits × 32 B (24 B zero padding)`.
func (c *Collect) String() string {
	s := fmt.Sprintf("%d B packet → %d flit", c.PacketBytes, c.Flits)
	if c.Flits != 1 {
		s += "s"
	}
	s += fmt.Sprintf(" × %d B", c.FlitBytes)
	if c.PadBytes > 0 {
		s += fmt.Sprintf(" (%d B zero padding)", c.PadBytes)
	}
	return s
}
