package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// TestSwitchCyclesManual: cycle = ring_size × input_time × cycles_per_packet
// (002 L3524-3526) on the manual's estimates. The examples' text gives dtype
// i8, so a packet's bytes are its elements (docs/spec-decisions.md "Switch
// example dtypes", "Switch partial extraction cycle count").
func TestSwitchCyclesManual(t *testing.T) {
	cases := []struct {
		name, cite                 string
		ring, inTime, packet, want int
	}{
		{"SW-EX-3 Broadcast01: (2 × 2) × 64 × 64/32 = 512", "002 L3205-3209", 4, 64, 64, 512},
		{"SW-EX-8 custom permutation: 256 × 8 × 64/32 = 4096", "002 L3361-3363", 256, 8, 64, 4096},
		{"SW-EX-9 custom broadcast: 32 × 8 × 2 = 512", "002 L3398-3400", 32, 8, 64, 512},
		// The manual prints "4 × 8 × 2 = 128"; the product is 64.
		{"SW-EX-10 partial extraction: 4 × 8 × 2 = 64 (printed 128)", "002 L3438-3440", 4, 8, 64, 64},
		{"SW-EX-13 ring_size 4, input_time 64, 64-byte packets: 512", "002 L3527-3529", 4, 64, 64, 512},
		// Forwarding: ring_size 1, "the most efficient topology"; 32 f32 =
		// 128-byte packets over 64 time steps.
		{"SW-EX-2 forwarding: 1 × 64 × 4", "002 L3129-3138", 1, 64, 128, 256},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SwitchCycles(c.ring, c.inTime, c.packet, spec.Stream.FlitBytes.Value)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.want, got, c.cite)
		})
	}
	// Dual channel: 64-byte flits halve the flits per packet (002 L2127, L2140).
	d, err := SwitchCycles(4, 64, 64, spec.Stream.DualChannelFlitBytes.Value)
	require.NoError(t, err)
	assert.Equal(t, 256, d)
	_, err = SwitchCycles(0, 1, 1, 32)
	assert.Error(t, err)
}

// TestSwitchLowered prices switches lowered by the engines' derivation.
func TestSwitchLowered(t *testing.T) {
	const customAxes = "A=16, B=16, C=8, D=8, E=8, X=2, Y=2, Z=4" // 002 L3346, L3385, L3424
	cases := []struct {
		name, cite, axes                  string
		inS, inT, inP, outS, outT, config string
		cycles, rings                     int
		custom                            bool
	}{
		{"SW-EX-3 Broadcast01: 512 cycles, 64 rings of 4", "002 L3160-3212", "A=256, B=64, C=63, D=8", "A", "B", "C # 64", "", "",
			"Broadcast01 { slice1: 2, slice0: 2, time0: 4 }", 512, 64, false},
		{"SW-EX-8 custom permutation: 4096", "002 L3342-3366", customAxes, "A, B", "C", "D, E",
			"B % 4, B / 4, A % 4, A / 4", "C", "CustomBroadcast { ring_size: 256 }", 4096, 1, true},
		{"SW-EX-9 custom broadcast: 512", "002 L3381-3401", customAxes, "A, B", "C", "D, E",
			"A / 2, X, B / 2, Y", "C, A % 2, B % 2", "CustomBroadcast { ring_size: 32 }", 512, 8, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ax, err := mapping.ParseAxes(c.axes)
			require.NoError(t, err)
			parse := func(s string) *mapping.Expr {
				if s == "" {
					return nil
				}
				e, err := mapping.Parse(s, ax, nil)
				require.NoError(t, err, s)
				return e
			}
			cfg, err := kernel.ParseSwitchConfig(c.config)
			require.NoError(t, err)
			plan, err := engines.DeriveSwitch(spec, engines.SwitchRequest{Axes: ax, DType: dtype.I8,
				InSlice: parse(c.inS), InTime: parse(c.inT), InPacket: parse(c.inP), OutSlice: parse(c.outS), OutTime: parse(c.outT), Config: &cfg})
			require.NoError(t, err, c.cite)
			got, err := Switch(spec, &plan.Switch)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.cycles, got.Cycles, c.cite)
			assert.Equal(t, c.rings, got.Rings, "rings in parallel, 002 L3531-3532")
			if c.custom {
				require.Len(t, got.Findings, 1)
				f := got.Findings[0]
				assert.Equal(t, PreemptDMAAndSub, f.Effect, "002 L3535")
				assert.Equal(t, "SW-P1", f.Rule.ID)
			} else {
				assert.Empty(t, got.Findings)
			}
		})
	}
	_, err := Switch(spec, &kernel.Switch{})
	assert.Error(t, err)
	_, err = Switch(nil, nil)
	assert.Error(t, err)
}

func BenchmarkSwitch(b *testing.B) {
	sw := kernel.Switch{Config: kernel.SwitchConfig{Topology: kernel.SwitchBroadcast01, Slice1: 2, Slice0: 2, Time0: 4},
		RingSize: 4, Rings: 64, InTime: 64, PacketBytes: 64, FlitBytes: 32}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Switch(spec, &sw); err != nil {
			b.Fatal(err)
		}
	}
}
