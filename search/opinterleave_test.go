package search

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/workload"
	"tcpmap/verify"
)

// TestInterleavePeel: a tile of 512 rows dealt out to 2 clusters × 256
// slices a row at a time puts rows r and r + 1 on neighbouring DMNs: the
// cluster is row / 8 % 2, the slice's DMN row % 8, the slice within its
// DMN row / 16 (32 of them); 4 rows in chunks of 2 keep a chunk in one
// slice.
func TestInterleavePeel(t *testing.T) {
	s := digit{"S", 512, 1, 512}
	cl, sl, in, ok := interleavePeel([]digit{s}, 2, 256, 32, 1)
	require.True(t, ok)
	assert.Equal(t, "S / 8 % 2", digitsText(cl))
	assert.Equal(t, "S % 8, S / 16", digitsText(sl))
	assert.Equal(t, "1", digitsText(in), "a row a slice")

	x := digit{"X", 8192, 1, 8192}
	cl, sl, in, ok = interleavePeel([]digit{x}, 1, 128, 32, 2)
	require.True(t, ok)
	assert.Equal(t, "1", digitsText(cl))
	assert.Equal(t, "X / 2 % 4, X / 256", digitsText(sl), "DMN (X / 2) % 4, then the slice in it")
	assert.Equal(t, "X / 8 % 32, X % 2", digitsText(in), "a slice's chunks, the chunk innermost")

	_, _, _, ok = interleavePeel([]digit{s}, 1, 32, 32, 1)
	assert.False(t, ok, "one DMN: nothing to deal out")
	_, _, _, ok = interleavePeel([]digit{{"S", 256, 1, 256}}, 2, 256, 32, 1)
	assert.False(t, ok, "fewer rows than slices")
}

// TestOpInterleaveDMNs: the prefill layer's RMSNorm over 2 clusters, its
// rows dealt out to the 16 DMNs a row at a time, is cheaper than with each
// DMN reading its own block of the tile (16 blocks 512 KB apart, whose
// DRAM rows conflict in every bank) under the same cost model; and
// interleaved kernels of a row op, an elementwise op and the interleaved
// add of two tensors compute what their references say on every slice.
func TestOpInterleaveDMNs(t *testing.T) {
	if raceDetector {
		t.Skip("the simulator under -race: make test runs it in unit-norace")
	}
	m, err := cost.NewModel(engines.Default())
	require.NoError(t, err)
	w := opWorkload(t, "llama3-70b-prefill.yaml")
	s, err := newOpSpace(w, findOp(w, "rmsnorm_in"), engines.Default())
	require.NoError(t, err)
	blocks, err := s.evaluate(opCand{Tiles: 4, Clusters: 2, Slices: 256, Form: "rmsnorm"}, m)
	require.NoError(t, err)
	dealt, err := s.evaluate(opCand{Tiles: 4, Clusters: 2, Slices: 256, Form: "rmsnorm", Interleave: s.interleaveChunk()}, m)
	require.NoError(t, err)
	assert.Less(t, dealt.report.Cycles, blocks.report.Cycles, "%.0f against %.0f cycles", dealt.report.Cycles, blocks.report.Cycles)

	src, err := os.ReadFile("../workloads/attention-head.yaml")
	require.NoError(t, err)
	small, err := workload.Parse([]byte(strings.Replace(string(src), "axes: {S: 2048, T: 2048, D: 128}", "axes: {S: 512, T: 512, D: 128}", 1)), "head-512.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		op   string
		cand opCand
	}{
		{"softmax", opCand{Tiles: 1, Clusters: 2, Slices: 256, Form: "recompute", Interleave: 1}},
		{"scale", opCand{Tiles: 2, Clusters: 2, Slices: 256, Form: "mul", Interleave: 64}},
		{"causal", opCand{Tiles: 2, Clusters: 2, Slices: 256, Form: formInterleaved, Interleave: 64}},
	} {
		s, err := newOpSpace(small, findOp(small, tc.op), engines.Default())
		require.NoError(t, err)
		x, err := s.evaluate(tc.cand, m)
		require.NoError(t, err, tc.op)
		rep, err := verify.Verify(engines.Default(), x.program, verify.Options{Seed: 4})
		require.NoError(t, err, tc.op)
		assert.True(t, rep.Pass, "%s: %s", tc.op, rep)
	}
}
