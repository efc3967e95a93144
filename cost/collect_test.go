package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// TestCollectManual reproduces the manual's flit arithmetic.
func TestCollectManual(t *testing.T) {
	cases := []struct {
		name, cite         string
		steps, packet      int
		flits, pad, cycles int
		unused             float64
	}{
		{"MOV-EX-26: a 40-byte packet gets 24 bytes of zeros, 2 flits", "002 L2123-2124", 1, 40, 2, 24, 2, 24.0 / 64},
		{"MOV-EX-28: a 20-byte packet leaves (32 - 20)/32 ≈ 37.5 % unused", "002 L2128", 1, 20, 1, 12, 1, 0.375},
		{"COL-EX-1: 32 i8 are one flit", "002 L3565-3576", 8, 32, 1, 0, 8, 0},
		{"COL-EX-2: 16 i8 padded to a flit", "002 L3577-3588", 8, 16, 1, 16, 8, 0.5},
		{"COL-EX-3: 32 bf16 are 2 flits, Time A → [A, B / 16]", "002 L3589-3603", 8, 64, 2, 0, 16, 0},
		{"axis permutation: an 8-byte packet padded to a 32-byte flit", "002 L7661-7665", 15, 8, 1, 24, 15, 0.75},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CollectCycles(c.steps, c.packet, spec.Stream.FlitBytes.Value)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.flits, got.FlitsPerPacket, c.cite)
			assert.Equal(t, c.pad, got.PadBytes, c.cite)
			assert.Equal(t, c.cycles, got.Cycles, c.cite)
			assert.InDelta(t, c.unused, got.Unused, 1e-12, c.cite)
		})
	}
	_, err := CollectCycles(1, 0, 32)
	assert.Error(t, err)
}

// TestCollectLowered prices COL-EX-3 lowered by the engines' derivation.
func TestCollectLowered(t *testing.T) {
	ax, err := mapping.ParseAxes("A=8, B=32")
	require.NoError(t, err)
	tm, err := mapping.Parse("A", ax, nil)
	require.NoError(t, err)
	p, err := mapping.Parse("B", ax, nil)
	require.NoError(t, err)
	plan, err := engines.DeriveCollect(spec, engines.CollectRequest{DType: dtype.BF16, Time: tm, Packet: p})
	require.NoError(t, err)
	got, err := Collect(spec, &plan.Collect)
	require.NoError(t, err)
	assert.Equal(t, 16, got.Cycles, "8 packets of 64 bytes, 2 flits each (002 L3589-3603)")
	bad := plan.Collect
	bad.FlitBytes = 48
	_, err = Collect(spec, &bad)
	assert.Error(t, err)
}
