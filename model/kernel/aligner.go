package kernel

import (
	"fmt"
	"strings"
)

// StreamAdapterConfig is the configuration of the Aligner's Stream Adapter
// (002 L3878-3957): it collects CollectFlits consecutive flits of the collect
// stream into one 64-byte computation packet (zero-padding the rest),
// broadcasts that packet to Rows Rows, and repeats it TimeBroadcast times
// for the tiling axes at the inner end of the computation Time
// (002 L3902-3946).
//
// Computation time step t reads collect time steps
// (t / TimeBroadcast)·CollectFlits + k for k < CollectFlits; flit k fills
// bytes [k·FlitBytes, (k+1)·FlitBytes) of the 64-byte packet.
type StreamAdapterConfig struct {
	// CollectFlits is collect_flits: 1 or 2 (3 is shift-reuse, 002
	// L3916-3920, L3950).
	CollectFlits int `json:"collect_flits"`
	// FlitBytes is the width of an incoming flit: 32 (single channel) or 64
	// (one dual-channel flit, 002 L3928).
	FlitBytes int `json:"flit_bytes"`
	// DataBytes is the data per computation packet,
	// CollectFlits·FlitBytes; the rest of the 64 bytes is zero
	// (002 L3921-3927).
	DataBytes int `json:"data_bytes"`
	// Rows is the number of Rows receiving the broadcast: 1, 2, 4 or 8
	// (002 L3929-3931, L3953).
	Rows int `json:"rows"`
	// TimeBroadcast is the product of the tiling axes' sizes: how often each
	// collected packet repeats (002 L3937-3946, L3954); 1 without tiling.
	TimeBroadcast int `json:"time_broadcast"`
	// TimeBroadcastTerms prints the tiling axes (`T`), empty without tiling.
	TimeBroadcastTerms string `json:"time_broadcast_terms,omitempty"`
	// InSteps is the collect stream's Time::SIZE (flits per slice).
	InSteps int `json:"in_steps"`
	// OutSteps is the computation mapping's Time::SIZE:
	// InSteps / CollectFlits · TimeBroadcast.
	OutSteps int `json:"out_steps"`
}

// String prints the configuration as the manual's examples describe it:
// `collect_flits = 2, rows = 8` and `, time broadcast T = 5` with tiling
// (002 L3847-3852, L4024-4028).
func (c StreamAdapterConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "collect_flits = %d", c.CollectFlits)
	if c.FlitBytes != 32 {
		fmt.Fprintf(&b, " (%d-byte dual-channel flit)", c.FlitBytes)
	}
	if c.DataBytes < 64 {
		fmt.Fprintf(&b, ", %dB data + %dB zero padding", c.DataBytes, 64-c.DataBytes)
	}
	fmt.Fprintf(&b, ", rows = %d", c.Rows)
	if c.TimeBroadcast > 1 {
		fmt.Fprintf(&b, ", time broadcast %s = %d", c.TimeBroadcastTerms, c.TimeBroadcast)
	}
	return b.String()
}

// AlignConfig is the configuration of `align::<OutTime, OutPacket, _, _>(&trf)`
// (002 L3885-3897): both Aligner paths, which produce the same computation
// mapping (002 L3778, L3790-3791).
type AlignConfig struct {
	// StreamAdapter is the data path.
	StreamAdapter StreamAdapterConfig `json:"stream_adapter"`
	// TRFSequencer is the weight path.
	TRFSequencer TRFSequencerConfig `json:"trf_sequencer"`
}

// String prints both paths on one line.
func (c AlignConfig) String() string {
	return "Stream Adapter: " + c.StreamAdapter.String() + " | TRF Sequencer: " + c.TRFSequencer.String()
}
