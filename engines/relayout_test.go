package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

func relayoutExpr(t *testing.T, axes mapping.Axes, src string) *mapping.Expr {
	t.Helper()
	e, err := mapping.Parse(src, axes, nil)
	require.NoError(t, err)
	return e
}

// TestDeriveRelayout: the manual's HBM-to-HBM Example 1 (002 L2608-2628)
// moves m![A, B, C] into m![B, A, C] with the 256-byte C run as the packet
// and the destination's order as the walk; a relayout spreads over the
// clusters and DMNs when its walk divides; a transpose of the innermost
// axis of bf16 elements moves 2-byte packets.
func TestDeriveRelayout(t *testing.T) {
	spec := Default()
	ex1, err := mapping.ParseAxes("A = 8, B = 8, C = 256")
	require.NoError(t, err)
	cmd, err := DeriveRelayout(spec, ex1, dtype.I8, relayoutExpr(t, ex1, "m![A, B, C]"), relayoutExpr(t, ex1, "m![B, A, C]"), 0, 16384)
	require.NoError(t, err)
	// The walk B, A of 64 packets spreads over 2 clusters × 8 DMNs (B and
	// A / 4), 4 packets each: A % 4 steps 2048 bytes in the source and 256
	// in the destination, as Example 1's read and write sequencers step A
	// (002 L2624-2627), and every packet is the whole 256-byte C run.
	require.Len(t, cmd.Descriptors, 16)
	packets := 0
	for _, d := range cmd.Descriptors {
		packets += d.Packets
		assert.Equal(t, 256, d.Stride0)
		require.Len(t, d.Entries, 2)
		assert.Equal(t, [2]int{2048, 256}, [2]int{d.Entries[0].SrcStride, d.Entries[0].DstStride})
		assert.Equal(t, 256, d.Entries[1].Size)
	}
	assert.Equal(t, 64, packets) // 002 L2628: 64 read requests

	big, err := mapping.ParseAxes("T = 1024, K = 8, D = 2048")
	require.NoError(t, err)
	cmd, err = DeriveRelayout(spec, big, dtype.BF16, relayoutExpr(t, big, "m![T, K, D]"), relayoutExpr(t, big, "m![K, T, D]"), 0, 1<<28)
	require.NoError(t, err)
	assert.Len(t, cmd.Descriptors, 16, "spread over 2 clusters × 8 DMNs")

	// A transpose of the innermost axis moves one 2-byte element a packet:
	// legal between two HBM tensors (the 8-byte packets are HBM-to-DM's
	// rule, 002 L2427, L2837), and priced as such by the cost model.
	tk, err := mapping.ParseAxes("T = 1024, K = 8")
	require.NoError(t, err)
	cmd, err = DeriveRelayout(spec, tk, dtype.BF16, relayoutExpr(t, tk, "m![T, K]"), relayoutExpr(t, tk, "m![K, T]"), 0, 1<<28)
	require.NoError(t, err)
	packets = 0
	for _, d := range cmd.Descriptors {
		packets += d.Packets
		assert.Equal(t, 2, d.Stride0)
	}
	assert.Equal(t, 8192, packets)
}
