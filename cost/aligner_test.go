package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// TestStreamAdapterManual prices the manual's Stream Adapter examples.
func TestStreamAdapterManual(t *testing.T) {
	cases := []struct {
		name, cite       string
		in, cf, tb, rows int
		cycles, out      int
		util             float64
	}{
		// Collect Time [M = 32, O = 2, L = 2] flits; L collected: Time [M, O],
		// 64-byte packets broadcast to N = 8 Rows; full utilization.
		{"AL-EX-1 batched matmul: collect_flits = 2, 8 Rows", "002 L3816-3873", 128, 2, 1, 8, 128, 64, 1},
		{"SA-EX-1 collect_flits = 2", "002 L3959-3983", 128, 2, 1, 8, 128, 64, 1},
		{"SA-EX-2 collect_flits = 1: half MAC utilization", "002 L3984-4009, L3927", 32, 1, 1, 8, 32, 32, 0.5},
		{"SA-EX-3 time broadcast T = 5: activation tiled 5 times per M", "002 L4010-4034", 32, 1, 5, 8, 160, 160, 0.5},
		{"fewer Rows reduce throughput proportionally", "002 L3780, L3785", 128, 2, 1, 2, 128, 64, 0.25},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := StreamAdapter(spec, &kernel.StreamAdapterConfig{CollectFlits: c.cf, FlitBytes: 32, DataBytes: c.cf * 32,
				Rows: c.rows, TimeBroadcast: c.tb, InSteps: c.in, OutSteps: c.in / c.cf * c.tb})
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.cycles, got.Cycles, c.cite)
			assert.Equal(t, c.out, got.OutSteps, c.cite)
			assert.InDelta(t, c.util, got.MACUtilization, 1e-12, c.cite)
			assert.Empty(t, got.Findings)
		})
	}
	// collect_flits = 3 (shift-reuse) has unpriced latency (002 L3957).
	got, err := StreamAdapterCycles(spec, 96, 3, 1, 8, 32)
	require.NoError(t, err)
	require.Len(t, got.Findings, 1)
	assert.Equal(t, "SA-P1", got.Findings[0].Rule.ID)
	// A dual-channel flit fills the packet alone (002 L3928).
	got, err = StreamAdapterCycles(spec, 64, 1, 1, 8, 64)
	require.NoError(t, err)
	assert.Equal(t, 1.0, got.MACUtilization)
	for _, bad := range [][5]int{{3, 2, 1, 8, 32}, {4, 4, 1, 8, 32}, {4, 2, 0, 8, 32}, {4, 2, 1, 9, 32}} {
		_, err := StreamAdapterCycles(spec, bad[0], bad[1], bad[2], bad[3], bad[4])
		assert.Error(t, err, "%v", bad)
	}
	_, err = StreamAdapter(spec, &kernel.StreamAdapterConfig{CollectFlits: 2, FlitBytes: 32, Rows: 8, TimeBroadcast: 1, InSteps: 4, OutSteps: 3})
	assert.Error(t, err)
}
