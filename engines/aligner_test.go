package engines

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestStreamAdapterManualExamples reproduces every Stream Adapter
// configuration the manual states, and checks each against the oracle.
func TestStreamAdapterManualExamples(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, cite, axes   string
		d                  dtype.DType
		time, packet, row  string
		outTime, outPacket string
		flits, rows, tb    int
		dataBytes          int
	}{
		// "Stream Adapter (collect_flits = 2) ... Broadcasts Packet to Rows (N = 8)".
		{"AL-EX-1 batched matmul", "002 L3844-3852", "M=32, N=8, K=16, L=2, O=2", dtype.BF16,
			"M, O, L", "K", "N", "M, O", "L, K", 2, 8, 1, 64},
		{"SA-EX-1 collect_flits = 2", "002 L3959-3983", "M=32, N=8, K=16, L=2, O=2", dtype.BF16,
			"M, O, L", "K", "N", "M, O", "L, K", 2, 8, 1, 64},
		// "Packet = [K = 16 # 32] = 64B (32B data + 32B zero padding)".
		{"SA-EX-2 collect_flits = 1", "002 L3984-4009", "M=32, N=8, K=16", dtype.BF16,
			"M", "K", "N", "M", "K # 32", 1, 8, 1, 32},
		// "Time Broadcast: T = 5 - activation tiled 5 times per M position".
		{"SA-EX-3 time broadcast", "002 L4010-4034", "M=32, N=8, K=16, T=5", dtype.BF16,
			"M", "K", "N", "M, T", "K # 32", 1, 8, 5, 32},
		// "Pair consecutive 32-byte flits into 64-byte packets, halving time steps (A/16 → A/32)".
		{"HELLO-EX-1 dot product", "002 L353-355", "A=2048", dtype.BF16,
			"A / 16", "A % 16", "1", "A / 32", "A % 32", 2, 1, 1, 64},
		// The GEMV keeps a 64-byte packet: one dual-channel flit
		// (docs/spec-decisions.md "Aligner input of 64 bytes (Hello GEMV)").
		{"HELLO-EX-2 GEMV", "002 L414-416, L455-457", "I=256, J=2048", dtype.BF16,
			"J / 32", "J % 32", "1", "J / 32", "J % 32", 1, 1, 1, 64},
		{"HELLO-EX-3 GEMM", "002 L484, L516-517", "I=512, J=512, K=2048", dtype.BF16,
			"I % 32, J / 8 % 4, K / 16", "K % 16", "J % 8", "I % 32, J / 8 % 4, K / 32", "K % 32", 2, 8, 1, 64},
		{"TRF-EX-1 matmul", "002 L4221-4244", "M=32, N=8, K=32", dtype.BF16,
			"M, K / 16", "K % 16", "N", "M", "K", 2, 8, 1, 64},
		{"TRF-EX-2 small reg_read_size", "002 L4268-4291", "M=32, N=8, K=16, L=2, O=2", dtype.BF16,
			"O, M, L", "K", "N", "O, M", "L, K", 2, 8, 1, 64},
		{"RED-EX-1 matrix multiplication", "002 L4342-4353", "A=32, B=32, C=8", dtype.BF16,
			"A, B / 16", "B % 16", "C", "A", "B", 2, 8, 1, 64},
		{"RED-EX-4 interleaved", "002 L4460-4475", "M=4, N=8, K=64", dtype.BF16,
			"K / 16, M", "K % 16", "N", "K / 16, M", "K % 16 # 32", 1, 8, 1, 32},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			in := StreamAdapterInput{DType: tc.d, Time: ceM(t, ax, tc.time), Packet: ceM(t, ax, tc.packet), Row: ceM(t, ax, tc.row),
				OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPacket)}
			c, err := DeriveStreamAdapter(spec, in)
			require.NoError(t, err, tc.cite)
			assert.Equal(t, tc.flits, c.CollectFlits, "collect_flits, %s", tc.cite)
			assert.Equal(t, tc.rows, c.Rows, "rows, %s", tc.cite)
			assert.Equal(t, tc.tb, c.TimeBroadcast, "time broadcast, %s", tc.cite)
			assert.Equal(t, tc.dataBytes, c.DataBytes, "data bytes, %s", tc.cite)
			assert.Equal(t, in.OutTime.Size(), c.OutSteps)
			assert.Empty(t, ceSAOracle(ax, tc.d, in.Time, in.Packet, in.OutTime, in.OutPacket, c, 1<<20))
		})
	}
}

// TestStreamAdapterString prints the manual's wording.
func TestStreamAdapterString(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "M=32, N=8, K=16, T=5")
	c, err := DeriveStreamAdapter(spec, StreamAdapterInput{DType: dtype.BF16, Time: ceM(t, ax, "M"), Packet: ceM(t, ax, "K"),
		Row: ceM(t, ax, "N"), OutTime: ceM(t, ax, "M, T"), OutPacket: ceM(t, ax, "K # 32")})
	require.NoError(t, err)
	// 002 L4024-4028: collect_flits = 1, 32B data + 32B zero padding, N = 8, T = 5.
	assert.Equal(t, "collect_flits = 1, 32B data + 32B zero padding, rows = 8, time broadcast T = 5", c.String())
}

// TestStreamAdapterRejects covers each Stream Adapter rule with a mapping
// that breaks it (several modelled on reference-notes §5.5 K2/K4 fixtures).
func TestStreamAdapterRejects(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, axes         string
		d                  dtype.DType
		time, packet, row  string
		outTime, outPacket string
		rule               string
	}{
		{"f32 input", "M=32, N=8, K=8", dtype.F32, "M", "K", "N", "M", "K # 16", "CE-R5"},
		{"16-byte input packet", "M=32, N=8, K=8", dtype.BF16, "M", "K", "N", "M", "K # 32", "SA-R0"},
		{"OutPacket of 32 bytes", "M=32, N=8, K=16", dtype.BF16, "M", "K", "N", "M", "K", "SA-R1"},
		{"three Rows", "M=32, N=3, K=16", dtype.BF16, "M", "K", "N", "M", "K # 32", "SA-R5"},
		{"packed factor outside", "M=32, N=8, K=16, L=2", dtype.BF16, "M, L", "K", "N", "M", "K, L", "SA-R3"},
		{"not the innermost time", "M=32, N=8, K=16, L=2", dtype.BF16, "L, M", "K", "N", "M", "L, K", "SA-R3"},
		{"tiling not innermost", "M=32, N=8, K=16, T=5", dtype.BF16, "M", "K", "N", "T, M", "K # 32", "SA-R6"},
		{"time order swapped", "M=32, N=8, K=16, A=4", dtype.BF16, "A, M", "K", "N", "M, A", "K # 32", "SA-R6"},
		{"tiling axis in the data", "M=32, N=8, K=16", dtype.BF16, "M / 2", "K", "N", "M / 2, M % 2", "K # 32", "SA-R6"},
		{"OutTime not a multiple", "M=32, N=8, K=16, F=6", dtype.BF16, "M", "K", "N", "F", "K # 32", "SA-R6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			_, err := DeriveStreamAdapter(spec, StreamAdapterInput{DType: tc.d, Time: ceM(t, ax, tc.time), Packet: ceM(t, ax, tc.packet),
				Row: ceM(t, ax, tc.row), OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPacket)})
			var v *Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
		})
	}
	_, err := DeriveStreamAdapter(spec, StreamAdapterInput{DType: dtype.BF16})
	assert.ErrorContains(t, err, "missing time mapping")
	_, err = DeriveStreamAdapter(nil, StreamAdapterInput{})
	assert.Error(t, err)
}

// TestStreamAdapterShiftReuse: the convolution case studies slide
// `$(W=30 + Fw=3)=32` in the Stream Adapter (002 L3739-3745), whose
// shift-reuse parameters are on a page the manual lacks: not modelled.
func TestStreamAdapterShiftReuse(t *testing.T) {
	ax := ceAx(t, "H=30, Fh=3, K=32, W=30, Fw=3, C=8")
	_, err := DeriveStreamAdapter(Default(), StreamAdapterInput{DType: dtype.BF16, Time: ceM(t, ax, "H, Fh, K"),
		Packet: ceM(t, ax, "$(W:1, Fw:1)"), Row: ceM(t, ax, "C"), OutTime: ceM(t, ax, "H, Fh, K"), OutPacket: ceM(t, ax, "$(W:1, Fw:1)")})
	assert.ErrorIs(t, err, ErrNotModelled)
}

// TestAlignManualExamples derives both Aligner paths of every complete
// contraction example.
func TestAlignManualExamples(t *testing.T) {
	spec := Default()
	for _, ch := range ceChains {
		t.Run(ch.name, func(t *testing.T) {
			ax := ceAx(t, ch.axes)
			c, err := DeriveAlign(spec, AlignInput{DType: ch.d, Time: ceM(t, ax, ch.time), Packet: ceM(t, ax, ch.packet),
				Row: ceM(t, ax, ch.row), Element: ceM(t, ax, ch.element), OutTime: ceM(t, ax, ch.outTime), OutPacket: ceM(t, ax, ch.outPacket)})
			require.NoError(t, err, ch.cite)
			assert.Equal(t, c.StreamAdapter.OutSteps, c.TRFSequencer.Steps())
			assert.Contains(t, c.String(), "collect_flits")
		})
	}
}

// TestStreamAdapterPacket checks the data path on bytes: collection, zero
// padding and time broadcast (002 L3921-3927, L3939).
func TestStreamAdapterPacket(t *testing.T) {
	stream := make([]byte, 4*32)
	for i := range stream {
		stream[i] = byte(i + 1)
	}
	dst := make([]byte, 64)
	two := kernel.StreamAdapterConfig{CollectFlits: 2, FlitBytes: 32, DataBytes: 64, Rows: 8, TimeBroadcast: 1, InSteps: 4, OutSteps: 2}
	require.NoError(t, StreamAdapterPacket(&two, stream, 1, dst))
	assert.Equal(t, stream[64:128], dst)
	one := kernel.StreamAdapterConfig{CollectFlits: 1, FlitBytes: 32, DataBytes: 32, Rows: 8, TimeBroadcast: 5, InSteps: 4, OutSteps: 20}
	require.NoError(t, StreamAdapterPacket(&one, stream, 7, dst)) // 7 / 5 = collect step 1
	assert.Equal(t, stream[32:64], dst[:32])
	assert.Equal(t, make([]byte, 32), dst[32:])
	assert.Error(t, StreamAdapterPacket(&one, stream, 20, dst))
	assert.Error(t, StreamAdapterPacket(&one, stream[:40], 9, dst))
	assert.Error(t, StreamAdapterPacket(nil, stream, 0, dst))
	allocs := testing.AllocsPerRun(100, func() { _ = StreamAdapterPacket(&two, stream, 1, dst) })
	assert.Zero(t, allocs)
}
