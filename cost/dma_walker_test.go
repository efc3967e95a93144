package cost

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestWalkerPackets: the walker visits a descriptor's packets where
// engines.DMAPacket puts them (stride0 consecutive bytes of the loops'
// flat positions, 002 L2566-2582), also when a packet cuts across loops
// that continue each other on both sides (one contiguous run, 002 L2593):
// moe.yaml down_proj's `[BLK % 8, F]` of bf16 (F = 768) moves in packets
// of 4096 bytes, the largest that divides its 12288-byte run (002
// L2428-2429), each 2048 elements that do not tile F's 768.
func TestWalkerPackets(t *testing.T) {
	bf16 := func(d kernel.DMADescriptor) kernel.DMADescriptor { d.ElemBits = 16; return d }
	for _, tc := range []struct {
		name string
		d    kernel.DMADescriptor
	}{
		{"manual example 1", example1()[0]},
		{"[BLK % 8, F] bf16", bf16(desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 4096,
			loop{8, 1536, 1536}, loop{768, 2, 2}))},
		{"[G, BLK % 8, F] bf16, G apart", bf16(desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 4096,
			loop{2, 1 << 20, 16384}, loop{8, 1536, 1536}, loop{768, 2, 2}))},
		{"three contiguous loops", desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 1024,
			loop{3, 1 << 16, 8192}, loop{2, 1536, 1536}, loop{4, 384, 384}, loop{384, 1, 1})},
		{"a size-1 loop inside the packet", desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 2048,
			loop{4, 1024, 1024}, loop{1, 7, 9}, loop{1024, 1, 1})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			positions := 1
			for _, e := range d.Entries {
				positions *= e.Size
			}
			d.Bytes = positions * d.ElemBits / 8
			d.Packets = d.Bytes / d.Stride0
			var w walker
			require.NoError(t, w.init(&d, 256))
			assert.Equal(t, d.Packets, w.packets)
			for q := 0; !w.finished(); q++ {
				src, dst, err := engines.DMAPacket(&d, q)
				require.NoError(t, err)
				require.Equal(t, src, w.src, fmt.Sprint("packet ", q))
				require.Equal(t, dst, w.dst, fmt.Sprint("packet ", q))
				for range w.reqs {
					w.next()
				}
			}
			m := newModel(t)
			est, err := m.EstimateDescriptors([]kernel.DMADescriptor{d})
			require.NoError(t, err)
			assert.Equal(t, d.Packets, est.Packets)
			assert.Equal(t, d.Bytes, est.Bytes)
		})
	}
	// Loops that do not continue each other still do not tile.
	d := bf16(desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 4096, loop{8, 1600, 1536}, loop{768, 2, 2}))
	var w walker
	assert.ErrorContains(t, w.init(&d, 256), "does not tile")
}
