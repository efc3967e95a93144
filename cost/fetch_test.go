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

// configFetch lowers a fetch with the engines' derivation.
func configFetch(t testing.TB, axes string, in, out dtype.DType, elem, time, pkt string, ctx kernel.Context) *kernel.FetchConfig {
	t.Helper()
	ax, err := mapping.ParseAxes(axes)
	require.NoError(t, err)
	parse := func(s string) *mapping.Expr {
		e, err := mapping.Parse(s, ax, nil)
		require.NoError(t, err, s)
		return e
	}
	cfg, err := engines.ConfigFetch(spec, engines.FetchRequest{InType: in, OutType: out, Element: parse(elem),
		Time: parse(time), Packet: parse(pkt), Context: ctx, ClusterSize: 2, SliceSize: 256})
	require.NoError(t, err)
	return cfg
}

// TestFetchCyclesManual: #cycles = Time::SIZE × ceil(Packet::SIZE /
// fetch_size) (002 L2060) on the sizes the manual states.
func TestFetchCyclesManual(t *testing.T) {
	cases := []struct {
		name, cite           string
		steps, packet, fetch int
		want                 int
	}{
		// MOV-EX-15: f8e4m3, one byte per element.
		{"MOV-EX-15 fetch_packet_C: 2-byte packets, 15 cycles", "002 L1822-1827", 15, 2, 2, 15},
		{"MOV-EX-15 fetch_packet_BC: 16 bytes, 3 cycles", "002 L1828-1833", 3, 16, 16, 3},
		{"MOV-EX-15 fetch_packet_ABC: 32 bytes, 1 cycle", "002 L1834-1839", 1, 32, 32, 1},
		// MOV-EX-27 in elements (docs/spec-decisions.md "i4 batching example
		// counts elements").
		{"MOV-EX-27 fetch_batch_1: 48 cycles", "002 L2067-2072", 48, 8, 8, 48},
		{"MOV-EX-27 fetch_batch_2: 24 cycles", "002 L2078-2083", 24, 16, 16, 24},
		{"MOV-EX-27 fetch_batch_3: 12 cycles", "002 L2089-2094", 12, 32, 32, 12},
		{"MOV-EX-27 fetch_batch_4: 96 / 32 = 3 fetches per packet, 12 cycles", "002 L2100-2106", 4, 96, 32, 12},
		{"MOV-EX-18 masking case 1: 32 × 3 = 96", "002 L1908-1909", 96, 32, 32, 96},
		{"MOV-EX-19 masking case 2: 32 × 3 = 96", "002 L1917-1918", 96, 32, 32, 96},
		// Kernel examples (f8).
		{"axis permutation: 15 cycles of 8-byte packets", "002 L7653-7656, L7695", 15, 8, 8, 15},
		{"full-flit: 3 cycles", "002 L7718-7720, L7755-7756", 3, 32, 32, 3},
		{"tail padding dummy = 15: 10 cycles", "002 L7865", 10, 16, 16, 10},
		{"tail padding dummy = 23: 22 cycles", "002 L7866", 22, 8, 8, 22},
		{"tail padding dummy = 31: 6 cycles", "002 L7867", 6, 32, 32, 6},
		{"segmentation: 1024 cycles per execution", "002 L7955-7957", 1024, 32, 32, 1024},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FetchCycles(c.steps, c.packet, c.fetch)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.want, got, c.cite)
		})
	}
	_, err := FetchCycles(1, 0, 8)
	assert.Error(t, err)
	_, err = FetchCycles(-1, 8, 8)
	assert.Error(t, err)
}

// TestFetchLowered prices fetches lowered by the engines' derivation from the
// manual's mappings.
func TestFetchLowered(t *testing.T) {
	cases := []struct {
		name, cite, axes    string
		in, out             dtype.DType
		elem, time, pkt     string
		ctx                 kernel.Context
		wantCycles, wantRds int
	}{
		{"MOV-EX-15 fetch_packet_BC: 3 cycles", "002 L1828-1833", "A=3, B=5, C=2", dtype.F8E4M3, dtype.F8E4M3,
			"A, B, C", "A", "[B, C] # 16", kernel.CtxMain, 3, 3},
		{"MOV-EX-15 fetch_packet_ABC: 1 cycle", "002 L1834-1839", "A=3, B=5, C=2", dtype.F8E4M3, dtype.F8E4M3,
			"A, B, C", "1", "[A, B, C] # 32", kernel.CtxMain, 1, 1},
		{"MOV-EX-27 fetch_batch_2: 24 cycles", "002 L2078-2088", "N=4, C=3, H=4, W=8", dtype.I4, dtype.I4,
			"N, C, H, W", "N, C, H / 2", "H % 2, W", kernel.CtxMain, 24, 24},
		{"MOV-EX-27 fetch_batch_3: 12 cycles", "002 L2089-2099", "N=4, C=3, H=4, W=8", dtype.I4, dtype.I4,
			"N, C, H, W", "N, C", "H, W", kernel.CtxMain, 12, 12},
		{"MOV-EX-27 fetch_batch_4: 12 cycles, batching 3", "002 L2100-2111", "N=4, C=3, H=4, W=8", dtype.I4, dtype.I4,
			"N, C, H, W", "N", "C, H, W", kernel.CtxMain, 12, 12},
		// "Cycles: Time::SIZE = … = 256" counts packets; a 64-byte f32
		// packet takes two 32-byte reads (docs/spec-decisions.md "Fetch
		// masking parameters").
		{"MOV-EX-20 masking case 3: 256 packets of two reads", "002 L1930-1934", "A=32, B=97", dtype.F32, dtype.F32,
			"A, B # 128", "A, [B # 128] / 16", "[B # 128] % 16", kernel.CtxMain, 512, 512},
		{"axis permutation: 15 cycles", "002 L7616-7625, L7695", "A=3, B=5, C=2", dtype.F8E4M3, dtype.F8E4M3,
			"A, B, C", "A, B", "C # 8", kernel.CtxMain, 15, 15},
		{"full-flit: 3 cycles", "002 L7711-7720", "A=3, B=5, C=2", dtype.F8E4M3, dtype.F8E4M3,
			"A, B, C", "A", "[B, C] # 32", kernel.CtxMain, 3, 3},
		{"segmentation, execution #0: 1024 cycles", "002 L7905-7909, L7957", "A=2048, B=32", dtype.F8E4M3, dtype.F8E4M3,
			"A, B", "A % 1024", "B", kernel.CtxMain, 1024, 1024},
		// Tail padding: A = 65 stored as m![B, A # 65+dummy]; the fetch reads
		// the dummies as data (002 L7809), so the DM axis is the padded one.
		{"tail padding dummy = 15: 10 cycles", "002 L7824-7835, L7865", "A=80, B=2", dtype.F8E4M3, dtype.F8E4M3,
			"B, A", "[B, A] / 16", "[B, A] % 16", kernel.CtxMain, 10, 10},
		{"tail padding dummy = 23: 22 cycles", "002 L7836-7847, L7866", "A=88, B=2", dtype.F8E4M3, dtype.F8E4M3,
			"B, A", "[B, A] / 8", "[B, A] % 8", kernel.CtxMain, 22, 22},
		{"tail padding dummy = 31: 6 cycles", "002 L7848-7859, L7867", "A=96, B=2", dtype.F8E4M3, dtype.F8E4M3,
			"B, A", "[B, A] / 32", "[B, A] % 32", kernel.CtxMain, 6, 6},
		// The table's 24-byte fetch is not a main-context fetch_size; the
		// 24-byte packet takes three 8-byte reads: 18 cycles, not 6
		// (docs/spec-decisions.md "Tail padding with a 24-byte packet").
		{"tail padding dummy = 7: 18 cycles (table: 6)", "002 L7812-7823, L7864", "A=72, B=2", dtype.F8E4M3, dtype.F8E4M3,
			"B, A", "[B, A] / 24", "[B, A] % 24", kernel.CtxMain, 18, 18},
		{"sub context: 8-byte reads (002 L1759)", "002 L1757-1759, L342-347", "A=64", dtype.BF16, dtype.BF16,
			"A", "1", "A", kernel.CtxSub, 16, 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := configFetch(t, c.axes, c.in, c.out, c.elem, c.time, c.pkt, c.ctx)
			got, err := Fetch(spec, cfg, Single)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.wantCycles, got.Cycles, c.cite)
			assert.Equal(t, c.wantRds, got.Reads, c.cite)
			assert.Zero(t, got.Latency, "no cast")
			// The formula on the derived sizes gives the same count.
			f, err := FetchCycles(cfg.Steps, cfg.Seq.PacketSize, cfg.FetchElems)
			require.NoError(t, err)
			assert.Equal(t, got.Cycles, f)
		})
	}
}

// TestFetchDualChannel: "Bandwidth doubles to 64 bytes per cycle ... Fetch
// cycles halve for large transfers" (002 L2138-2142).
func TestFetchDualChannel(t *testing.T) {
	large := configFetch(t, "A=32, B=97", dtype.F32, dtype.F32, "A, B # 128", "A, [B # 128] / 16", "[B # 128] % 16", kernel.CtxMain)
	s, err := Fetch(spec, large, Single)
	require.NoError(t, err)
	d, err := Fetch(spec, large, Dual)
	require.NoError(t, err)
	assert.Equal(t, s.Cycles/2, d.Cycles, "64-byte packets: two 32-byte reads per cycle")
	assert.Equal(t, s.Reads, d.Reads)
	small := configFetch(t, "A=3, B=5, C=2", dtype.F8E4M3, dtype.F8E4M3, "A, B, C", "A", "[B, C] # 32", kernel.CtxMain)
	s, err = Fetch(spec, small, Single)
	require.NoError(t, err)
	d, err = Fetch(spec, small, Dual)
	require.NoError(t, err)
	assert.Equal(t, s.Cycles, d.Cycles, "one read per packet gains nothing")
	sub := configFetch(t, "A=64", dtype.BF16, dtype.BF16, "A", "1", "A", kernel.CtxSub)
	_, err = Fetch(spec, sub, Dual)
	assert.ErrorContains(t, err, "sub context")
	_, err = Fetch(spec, small, Channel(7))
	assert.Error(t, err)
}

// TestFetchAdapter: type conversion takes 1-2 cycles (002 L2135); table
// lookup overhead is named but not numbered (002 L1955-1959).
func TestFetchAdapter(t *testing.T) {
	cast := configFetch(t, "A=512, B=32", dtype.I8, dtype.I32, "A, B", "A", "B", kernel.CtxMain)
	c, err := Fetch(spec, cast, Single)
	require.NoError(t, err)
	assert.Equal(t, 2, c.Latency)
	// MOV-EX-13: 512 rows of 32 i32 (128 bytes); the cast limit caps a read
	// at 8 bytes of i8 (002 L1727-1745, L1996).
	assert.Equal(t, 512*4, c.Cycles)
	assert.Equal(t, 512*32, c.Bytes)
	cfg := *cast
	cfg.Adapter.Table = true
	c, err = Fetch(spec, &cfg, Single)
	require.NoError(t, err)
	require.Len(t, c.Findings, 1)
	assert.Equal(t, Unpriced, c.Findings[0].Effect)
	assert.Equal(t, "FA-P5", c.Findings[0].Rule.ID)
	assert.Contains(t, c.Findings[0].String(), "002 L1955-1959")
	_, err = Fetch(nil, &cfg, Single)
	assert.Error(t, err)
	cfg.FetchesPerPacket = 0
	_, err = Fetch(spec, &cfg, Single)
	assert.Error(t, err)
}

func BenchmarkFetch(b *testing.B) {
	cfg := configFetch(b, "A=32, B=97", dtype.F32, dtype.F32, "A, B # 128", "A, [B # 128] / 16", "[B # 128] % 16", kernel.CtxMain)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fetch(spec, cfg, Single); err != nil {
			b.Fatal(err)
		}
	}
}
