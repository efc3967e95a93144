package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// TestDMAPacket executes the manual's descriptor example (002 L2566-2582):
// [A=256:(65536, 256), B=256:(256, 65536), C=256:(1, 1)], base=(0, 256^3),
// stride0 = 256: packet (a, b) reads 256 bytes at 65536·a + 256·b and writes
// them at 256³ + 256·a + 65536·b (the table's row for i = a·256² + b·256 + c,
// 002 L2577, at c = 0).
func TestDMAPacket(t *testing.T) {
	d := kernel.DMADescriptor{
		Entries: []kernel.DMAEntry{{Size: 256, SrcStride: 65536, DstStride: 256}, {Size: 256, SrcStride: 256, DstStride: 65536}, {Size: 256, SrcStride: 1, DstStride: 1}},
		SrcBase: 0, DstBase: 256 * 256 * 256, Stride0: 256, ElemBits: 8, Bytes: 256 * 256 * 256, Packets: 256 * 256,
	}
	for _, q := range []int{0, 1, 255, 256, 257, 65535} {
		a, b := q/256, q%256
		src, dst, err := DMAPacket(&d, q)
		require.NoError(t, err)
		assert.Equal(t, 65536*a+256*b, src, "packet %d", q)
		assert.Equal(t, 256*256*256+256*a+65536*b, dst, "packet %d", q)
	}
	// Per element (stride0 = 1): the table's rows i = 1 and i = 256 (002
	// L2572-2575).
	d.Stride0, d.Packets = 1, 256*256*256
	for _, c := range []struct{ i, src, dst int }{{0, 0, 1 << 24}, {1, 1, 1 + 1<<24}, {255, 255, 255 + 1<<24}, {256, 256, 65536 + 1<<24}} {
		src, dst, err := DMAPacket(&d, c.i)
		require.NoError(t, err)
		assert.Equal(t, c.src, src, "i = %d", c.i)
		assert.Equal(t, c.dst, dst, "i = %d", c.i)
	}
	// A 2-byte element with a 1-byte packet: the second byte of position 1.
	e := kernel.DMADescriptor{Entries: []kernel.DMAEntry{{Size: 4, SrcStride: 2, DstStride: 8}}, SrcBase: 100, DstBase: 200,
		Stride0: 1, ElemBits: 16, Packets: 8}
	src, dst, err := DMAPacket(&e, 3)
	require.NoError(t, err)
	assert.Equal(t, 100+2+1, src)
	assert.Equal(t, 200+8+1, dst)

	_, _, err = DMAPacket(&d, -1)
	assert.Error(t, err)
	_, _, err = DMAPacket(&d, d.Packets)
	assert.Error(t, err)
	bad := d
	bad.ElemBits = 4
	_, _, err = DMAPacket(&bad, 0)
	assert.Error(t, err)
	over := e
	over.Packets = 9 // one packet more than the loops hold
	_, _, err = DMAPacket(&over, 8)
	assert.Error(t, err)
}
