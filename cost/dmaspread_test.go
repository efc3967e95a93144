package cost

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestDMASpreadWeightLoad prices the load of a GEMV's 4 MiB bf16 weight
// matrix W[I, J] (I = 1024, J = 2048) from HBM into the DM of the live
// slices, placed as the builder used to place them (padded at the top:
// `m![I / 16 # 256]`, 64 slices under DMNs 0-1 of a cluster) and as it
// places them now (spread over the DMNs, search/build.go placeSlices), and
// checks each price against the figure the manual's rates give: a 500-cycle
// startup (002 L2467) plus the slowest of
//
//   - the busiest DMN, 128 B/cycle (002 L2603, L2884),
//   - the busiest DMA Engine, one per DMN pair, 256 B/cycle (002 L2404,
//     L2596),
//   - the chip's HBM reads, 0.75 of the 1.5 TB/s (002 L2602) as a share of
//     the 32 channels' 256 bytes per 5.3 cycles (002 L2744, L2980;
//     docs/spec-decisions.md "HBM read and write bandwidth").
//
// The top-padded placement runs on one engine per live cluster, on one
// DMN when a DMN holds every live slice: 16,884 cycles with 64 slices of
// one cluster (issue 14's figure), 33,268 with 8; spread over the DMNs the
// load is bound by the HBM's reads, 5,927 cycles, 2.8× and 5.6× faster.
func TestDMASpreadWeightLoad(t *testing.T) {
	const bytes = 1024 * 2048 * 2
	h := &spec.HBM
	startup := float64(spec.DMA.StartupCycles.Value)
	dmnRate := float64(spec.DM.DMNBytesPerCycle.Value)
	engRate := float64(spec.DMA.BytesPerCycle.Value)
	channels := float64(h.Stacks.Value * h.ChannelsPerStack.Value)
	readRate := channels * float64(h.AccessUnitBytes.Value) / h.CyclesPerRequest.Value * h.ReadTBPerS.Value / h.PeakTBPerS.Value
	for _, tc := range []struct {
		name, cluster, slice, element string
		dmns, engines                 int // DMNs and engines sharing the bytes evenly
		bound                         string
	}{
		{"one cluster, 64 slices padded at the top", "1 # 2", "I / 16 # 256", "I % 16, J", 2, 1, "engine"},
		{"two clusters, 32 slices padded at the top", "I / 512", "I / 16 % 32 # 256", "I % 16, J", 2, 2, "engine"},
		{"two clusters, 4 slices padded at the top", "I / 512", "I / 128 % 4 # 256", "I % 128, J", 2, 2, "dmn"},
		{"one cluster, 64 slices spread", "1 # 2", "I / 128, I / 16 % 8 # 32", "I % 16, J", 8, 4, "hbm"},
		{"two clusters, 32 slices spread", "I / 512", "I / 64 % 8, I / 16 % 4 # 32", "I % 16, J", 16, 8, "hbm"},
		{"two clusters, 4 slices spread", "I / 512", "I / 128 % 4, 1 # 64", "I % 128, J", 8, 8, "hbm"},
		{"one cluster, 8 slices padded at the top", "1 # 2", "I / 128 # 256", "I % 128, J", 1, 1, "dmn"},
		{"one cluster, 8 slices spread", "1 # 2", "I / 128, 1 # 32", "I % 128, J", 8, 4, "hbm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parseProgram(t, fmt.Sprintf(`{"name": "w", "axes": "I=1024, J=2048", "chips": 1,
  "tensors": [
    {"name": "w", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "I, J", "addr": 0},
    {"name": "w_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": %q, "slice": %q, "element": %q, "addr": 0}
  ],
  "ops": [{"context": "dma", "kind": "to_dm", "src": "w", "dst": "w_dm"}]}`, tc.cluster, tc.slice, tc.element))
			require.NoError(t, engines.Lower(spec, p))
			est, err := newModel(t).Estimate(p.Ops[0].DMA)
			require.NoError(t, err)
			dmn := float64(bytes) / float64(tc.dmns) / dmnRate
			eng := float64(bytes) / float64(tc.engines) / engRate
			rd := float64(bytes) / readRate
			want := startup + max(dmn, eng, rd)
			assert.Equal(t, tc.engines, est.Engines, "engines")
			assert.InEpsilon(t, want, est.Cycles, 0.005, "cycles: dmn %.0f, engine %.0f, HBM read %.0f", dmn, eng, rd)
			got := map[string]float64{"dmn": est.DMNBound, "engine": est.EngineBound, "hbm": est.HBMBound}
			assert.Equal(t, est.Cycles, got[tc.bound], "bound by %s: %+v", tc.bound, got)
			t.Logf("%-44s %5d descriptors on %d engines: %8.1f cycles (want %8.1f)", tc.name, len(p.Ops[0].DMA.Descriptors), est.Engines, est.Cycles, want)
		})
	}
}

// parseProgram reads a kernel program's JSON.
func parseProgram(t *testing.T, src string) *kernel.Program {
	t.Helper()
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(src), &p))
	return &p
}
