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

// TestReducerManual: spatial latency by tree depth, temporal latency by the
// reduction length, Row parallelism (002 L4542-4548, L3787).
func TestReducerManual(t *testing.T) {
	full := []struct {
		d     dtype.DType
		depth int
		want  int
	}{
		// "i4 depth 7 (128 elements in 7 cycles), i8/f8 depth 6 (64 elements
		// in 6 cycles), bf16 depth 5 (32 elements in 5 cycles)" (002 L4543);
		// "5-7 cycles for spatial reduction depending on data type" (002 L3787).
		{dtype.I4, 7, 7}, {dtype.I8, 6, 6}, {dtype.F8E4M3, 6, 6}, {dtype.F8E5M2, 6, 6}, {dtype.BF16, 5, 5},
	}
	for _, c := range full {
		got, err := ReducerCycles(spec, c.d, c.depth, 8, 1, 1, 1)
		require.NoError(t, err)
		assert.Equal(t, c.want, got.SpatialLatency, "%v, 002 L4543", c.d)
	}
	// The accumulator example: Time [B / 4, A % 8]: 16 flits, 8 slots, 2
	// iterations, output after flit 15 (002 L4410-4431).
	got, err := ReducerCycles(spec, dtype.BF16, 5, 1, 16, 2*8, 8)
	require.NoError(t, err)
	assert.Equal(t, 16, got.Cycles)
	assert.Equal(t, 16, got.TemporalLatency, "the block completes with flit 15")
	// Full tensor reduction, in slice: "Spatial | A % 32 | Reducer tree
	// (depth 5) | 5" (002 L4367), "Temporal | A / 32 % 8 | Reducer
	// accumulator (8 iterations) | 8" (002 L4368).
	got, err = ReducerCycles(spec, dtype.BF16, 5, 1, 8, 8, 1)
	require.NoError(t, err)
	assert.Equal(t, 5, got.SpatialLatency, "002 L4367")
	assert.Equal(t, 8, got.TemporalLatency, "002 L4368")
	// "Total: ~296 cycles" adds "~40 cycles" in slice to 256 (002
	// L4374-4376); the table's stages pipeline to 5 + 8 = 13
	// (docs/spec-decisions.md "Full tensor reduction cycles").
	total, err := InterSliceReduceCycles(spec, got.Latency, 256)
	require.NoError(t, err)
	assert.Equal(t, 13+256, total)
	// Rows: 8 Rows give 8× the parallelism of one (002 L4544); reduce-max
	// runs on Row 0 only, 1/8 of reduce-add (002 L4533, L4546).
	eight, err := ReducerCycles(spec, dtype.BF16, 5, 8, 64, 64, 1)
	require.NoError(t, err)
	one, err := ReducerCycles(spec, dtype.BF16, 5, 1, 64, 64, 1)
	require.NoError(t, err)
	assert.Equal(t, 8*one.Utilization, eight.Utilization)
	assert.Equal(t, 0.125, one.Utilization)
	for _, bad := range []struct {
		d                            dtype.DType
		depth, rows, steps, blk, out int
	}{{dtype.F32, 1, 1, 1, 1, 1}, {dtype.BF16, 1, 9, 1, 1, 1}, {dtype.BF16, 1, 1, 10, 4, 1}, {dtype.BF16, -1, 1, 1, 1, 1}} {
		_, err := ReducerCycles(spec, bad.d, bad.depth, bad.rows, bad.steps, bad.blk, bad.out)
		assert.Error(t, err, "%+v", bad)
	}
}

// TestReducerLowered prices Reducers lowered by the engines' derivation.
func TestReducerLowered(t *testing.T) {
	cases := []struct {
		name, cite, axes                                string
		row, time, packet, contract, accTime, accPacket string
		kind                                            kernel.AccumulationKind
		cycles, spatial, temporal, beats                int
	}{
		// K % 4 in the tree (depth 2), K / 16 (4) in the accumulator over M
		// (4): 16 steps, one block; m = 4 columns × M: 16 beats.
		{"RED-EX-4 interleaved", "002 L4451-4481", "M=4, N=8, K=64", "N", "K / 16, M", "K % 16 # 32", "K % 16 / 4",
			"M, K % 16 / 4", "N", kernel.Interleaved, 16, 2, 16, 16},
		// The dot product: depth 5, A / 32 (64 packets) accumulated into one
		// value (002 L354-357).
		{"HELLO-EX-1 dot product", "002 L315-362", "A=2048", "1", "A / 32", "A % 32", "1", "1", "1 # 8",
			kernel.Interleaved, 64, 5, 64, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ax, err := mapping.ParseAxes(c.axes)
			require.NoError(t, err)
			m := func(s string) *mapping.Expr {
				e, err := mapping.Parse(s, ax, nil)
				require.NoError(t, err, s)
				return e
			}
			cfg, err := engines.DeriveReducer(spec, engines.ReducerInput{DType: dtype.BF16, Row: m(c.row), Time: m(c.time),
				Packet: m(c.packet), ContractPacket: m(c.contract), OutTime: m(c.accTime), OutPacket: m(c.accPacket), Kind: c.kind})
			require.NoError(t, err, c.cite)
			got, err := Reducer(spec, &cfg)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.cycles, got.Cycles, c.cite)
			assert.Equal(t, c.spatial, got.SpatialLatency, c.cite)
			assert.Equal(t, c.temporal, got.TemporalLatency, c.cite)
			assert.Equal(t, c.beats, got.OutBeats, c.cite)
		})
	}
}
