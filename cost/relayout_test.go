package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
)

// TestRelayoutCycles: a relayout of n bytes costs the DMA startup (500
// cycles, 002 L2467, L2827) and 2n bytes at the channels' peak: 2 stacks ×
// 16 channels × 256 bytes per 5.3 cycles (002 L2952-2953, L2980, L2744)
// = 1545.66 B/cycle, the read and write caps (0.75 TB/s each of 1.5,
// 002 L2602, L137) each half of it.
func TestRelayoutCycles(t *testing.T) {
	spec := engines.Default()
	peak := 2 * 16 * 256 / 5.3
	for _, n := range []int64{1, 4096, 1 << 20, 16 << 20} {
		got, err := RelayoutCycles(spec, n)
		require.NoError(t, err)
		assert.InDelta(t, 500+2*float64(n)/peak, got, 1e-6, "%d bytes", n)
	}
	got, err := RelayoutCycles(spec, 0)
	require.NoError(t, err)
	assert.Zero(t, got)
	_, err = RelayoutCycles(spec, -1)
	assert.Error(t, err)
	_, err = RelayoutCycles(nil, 1)
	assert.Error(t, err)
}
