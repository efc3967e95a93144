package engines

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// fetchCase is a manual example of config_fetch.
type fetchCase struct {
	name, cite        string
	axes              string
	in, out           dtype.DType
	elem, time, pkt   string
	ctx               kernel.Context
	leftPad           *FetchLeftPad
	leftPadData       int    // size of the left-padded axis
	want              string // sequencer in the manual's notation
	wantFetch         int    // fetch_size in bytes, 0 = not stated
	wantFetchElems    int    // fetch_size in elements, 0 = not stated
	wantContiguous    int    // contiguous_sram_access_size in bytes, 0 = not stated
	wantContiguousEl  int    // the same in elements, 0 = not stated
	wantFPP           int    // fetches per packet (batching factor), 0 = not stated
	wantCycles        int    // Time::SIZE × ceil(Packet::SIZE / fetch_size) (002 L2060), 0 = not stated
	wantSteps         int
	wantPacketBytes   int
	wantMask          string // MaskConfig.String(), "" = no mask
	wantAlignRejected bool   // FE-R4 rejects the example (docs/spec-decisions.md)
}

var fetchCases = []fetchCase{
	{name: "MOV-EX-6 rearranging: fetch_size 16", cite: "002 L1426-1460",
		axes: "A=8, B=8, C=8", in: dtype.I8, out: dtype.I8, elem: "A, B, C # 32", time: "B, A", pkt: "C # 16", ctx: kernel.CtxMain,
		want: "[8:32, 8:256, 16:1] : 16", wantFetch: 16, wantMask: "last_dim = 2, lpad = 0, last_dim_rightmost_valid_count[0] = 8, pad_value = 0"},
	{name: "MOV-EX-7 splitting: fetch_size 32", cite: "002 L1461-1496",
		axes: "A=8, B=8, C=4", in: dtype.I8, out: dtype.I8, elem: "A, B, C # 8", time: "A % 2, B % 4, A / 2, B / 4", pkt: "C # 32", ctx: kernel.CtxMain,
		want: "[2:64, 4:8, 4:128, 2:32, 32:1] : 32", wantFetch: 32,
		wantMask: "last_dim = 4, lpad = 0, last_dim_rightmost_valid_count[0] = 4, pad_value = 0"},
	{name: "MOV-EX-8 slicing: fetch_size 8", cite: "002 L1497-1532",
		axes: "A=16, B=8, C=8", in: dtype.I8, out: dtype.I8, elem: "A, B, C", time: "A / 4, A % 4 = 3, B / 4, B % 4 = 2", pkt: "C", ctx: kernel.CtxMain,
		want: "[4:256, 3:64, 2:32, 2:8, 8:1] : 8", wantFetch: 8},
	{name: "MOV-EX-9 broadcasting: fetch_size 4", cite: "002 L1533-1566",
		axes: "A=16, T=4, P=4", in: dtype.I8, out: dtype.I8, elem: "A", time: "T, A", pkt: "P", ctx: kernel.CtxMain,
		want: "[4:0, 16:1, 4:0] : 4", wantFetch: 4, wantAlignRejected: true},
	{name: "MOV-EX-13 i8 to i32 matrix", cite: "002 L1727-1745",
		axes: "A=512, B=32", in: dtype.I8, out: dtype.I32, elem: "A, B", time: "A", pkt: "B", ctx: kernel.CtxMain,
		want: "[512:32, 32:1] : 32", wantSteps: 512, wantPacketBytes: 128,
		// The cast limit caps the fetch at 8 bytes of i8 = 32 bytes of i32 (002 L1996).
		wantFetch: 8, wantFPP: 4},
	{name: "MOV-EX-14 fully_contiguous", cite: "002 L1769-1780",
		axes: "N=4, C=3, H=4, W=8", in: dtype.I8, out: dtype.I8, elem: "N, C, H, W", time: "N, C, H", pkt: "W", ctx: kernel.CtxMain,
		want: "[4:96, 3:32, 4:8, 8:1] : 8", wantContiguous: 384, wantFetch: 8},
	{name: "MOV-EX-14 three_axes_non_contiguous", cite: "002 L1781-1792",
		axes: "N=4, C=3, H=4, W=8", in: dtype.I8, out: dtype.I8, elem: "N, C, H, W", time: "C", pkt: "N, H, W", ctx: kernel.CtxMain,
		want: "[3:32, 4:96, 4:8, 8:1] : 128", wantContiguous: 32, wantFetch: 32, wantFPP: 4},
	{name: "MOV-EX-14 four_axes_non_contiguous", cite: "002 L1793-1804",
		axes: "N=4, C=3, H=4, W=8", in: dtype.I8, out: dtype.I8, elem: "N, C, H, W", time: "1", pkt: "N, H, C, W", ctx: kernel.CtxMain,
		want: "[4:96, 4:8, 3:32, 8:1] : 384", wantContiguous: 8, wantFetch: 8, wantFPP: 48},
	{name: "MOV-EX-15 fetch_packet_C: 15 cycles", cite: "002 L1822-1827",
		axes: "A=3, B=5, C=2", in: dtype.F8E4M3, out: dtype.F8E4M3, elem: "A, B, C", time: "A, B", pkt: "C", ctx: kernel.CtxMain,
		want: "[3:10, 5:2, 2:1] : 2", wantCycles: 15, wantAlignRejected: true},
	{name: "MOV-EX-15 fetch_packet_BC: 3 cycles", cite: "002 L1828-1833",
		axes: "A=3, B=5, C=2", in: dtype.F8E4M3, out: dtype.F8E4M3, elem: "A, B, C", time: "A", pkt: "[B, C] # 16", ctx: kernel.CtxMain,
		want: "[3:10, 16:1] : 16", wantCycles: 3, wantFetch: 16,
		wantMask: "last_dim = 1, lpad = 0, last_dim_rightmost_valid_count[0] = 10, pad_value = 0"},
	{name: "MOV-EX-15 fetch_packet_ABC: 1 cycle", cite: "002 L1834-1839",
		axes: "A=3, B=5, C=2", in: dtype.F8E4M3, out: dtype.F8E4M3, elem: "A, B, C", time: "1", pkt: "[A, B, C] # 32", ctx: kernel.CtxMain,
		want: "[32:1] : 32", wantCycles: 1, wantFetch: 32,
		wantMask: "last_dim = 0, lpad = 0, last_dim_rightmost_valid_count[0] = 30, pad_value = 0"},
	{name: "MOV-EX-17 masking A = 63", cite: "002 L1883-1897",
		axes: "A=63", in: dtype.I8, out: dtype.I8, elem: "A", time: "1", pkt: "A # 64", ctx: kernel.CtxMain,
		want: "[64:1] : 64", wantMask: "last_dim = 0, lpad = 0, last_dim_rightmost_valid_count[0] = 63, pad_value = 0"},
	{name: "MOV-EX-18 masking case 1", cite: "002 L1903-1911",
		axes: "A=32, B=90", in: dtype.I8, out: dtype.I8, elem: "A, B # 96", time: "A, [B # 96] / 32", pkt: "[B # 96] % 32", ctx: kernel.CtxMain,
		leftPad: &FetchLeftPad{Axis: "B", N: 2}, leftPadData: 90,
		want: "[32:96, 3:32, 32:1] : 32 @ -2", wantSteps: 96, wantCycles: 96,
		// The manual writes last_dim_rightmost_valid_count[0] = 4, the number of
		// masked elements; the count itself is 32 - 4 = 28 (docs/spec-decisions.md).
		wantMask: "last_dim = 1, lpad = 2, last_dim_rightmost_valid_count[0] = 28, pad_value = 0"},
	{name: "MOV-EX-19 masking case 2", cite: "002 L1912-1921",
		axes: "A=32, B=90", in: dtype.I8, out: dtype.I8, elem: "A, B # 96", time: "[B # 96] / 32, A", pkt: "[B # 96] % 32", ctx: kernel.CtxMain,
		leftPad: &FetchLeftPad{Axis: "B", N: 2}, leftPadData: 90,
		want: "[3:32, 32:96, 32:1] : 32 @ -2", wantSteps: 96, wantCycles: 96,
		wantMask: "last_dim = 0, lpad = 2, last_dim_rightmost_valid_count[0] = 28, pad_value = 0"},
	{name: "MOV-EX-20 masking case 3 (without the dummy 1:0 entry)", cite: "002 L1922-1935",
		axes: "A=32, B=97", in: dtype.F32, out: dtype.F32, elem: "A, B # 128", time: "A, [B # 128] / 16", pkt: "[B # 128] % 16", ctx: kernel.CtxMain,
		// "Cycles: Time::SIZE = … = 256" counts packets; a 64-byte f32 packet
		// takes two 32-byte fetches (002 L1757-1758).
		want: "[32:128, 8:16, 16:1] : 16", wantSteps: 256, wantFPP: 2,
		wantMask: "last_dim_rightmost_valid_count_dim = 1, last_dim = 1, lpad = 0, last_dim_rightmost_valid_count[0..8] = [16 16 16 16 16 16 1 0], pad_value = 0"},
	// MOV-EX-27: the manual's i4 values are in elements (FA-A6): packet 8 /
	// 16 / 32 / 96, contiguous 384, fetch 8 / 16 / 32 / 32, batching 1 / 1 /
	// 1 / 3, cycles 48 / 24 / 12 / 12.
	{name: "MOV-EX-27 fetch_batch_1", cite: "002 L2067-2077",
		axes: "N=4, C=3, H=4, W=8", in: dtype.I4, out: dtype.I4, elem: "N, C, H, W", time: "N, C, H", pkt: "W", ctx: kernel.CtxMain,
		want: "[4:96, 3:32, 4:8, 8:1] : 8", wantContiguousEl: 384, wantFetchElems: 8, wantFPP: 1, wantCycles: 48, wantAlignRejected: true},
	{name: "MOV-EX-27 fetch_batch_2", cite: "002 L2078-2088",
		axes: "N=4, C=3, H=4, W=8", in: dtype.I4, out: dtype.I4, elem: "N, C, H, W", time: "N, C, H / 2", pkt: "H % 2, W", ctx: kernel.CtxMain,
		want: "[4:96, 3:32, 2:16, 2:8, 8:1] : 16", wantContiguousEl: 384, wantFetchElems: 16, wantFPP: 1, wantCycles: 24},
	{name: "MOV-EX-27 fetch_batch_3", cite: "002 L2089-2099",
		axes: "N=4, C=3, H=4, W=8", in: dtype.I4, out: dtype.I4, elem: "N, C, H, W", time: "N, C", pkt: "H, W", ctx: kernel.CtxMain,
		want: "[4:96, 3:32, 4:8, 8:1] : 32", wantContiguousEl: 384, wantFetchElems: 32, wantFPP: 1, wantCycles: 12},
	{name: "MOV-EX-27 fetch_batch_4", cite: "002 L2100-2111",
		axes: "N=4, C=3, H=4, W=8", in: dtype.I4, out: dtype.I4, elem: "N, C, H, W", time: "N", pkt: "C, H, W", ctx: kernel.CtxMain,
		want: "[4:96, 3:32, 4:8, 8:1] : 96", wantContiguousEl: 384, wantFetchElems: 32, wantFPP: 3, wantCycles: 12},
	{name: "MOV-EX-22 type cast i8 to i32", cite: "002 L1980-1994",
		axes: "A=8", in: dtype.I8, out: dtype.I32, elem: "A", time: "1", pkt: "A", ctx: kernel.CtxMain,
		want: "[8:1] : 8", wantFetch: 8, wantPacketBytes: 32},
	{name: "sub context: 8-byte fetches (002 L1759)", cite: "002 L1757-1759, L342-347",
		axes: "A=64", in: dtype.BF16, out: dtype.BF16, elem: "A", time: "1", pkt: "A", ctx: kernel.CtxSub,
		want: "[64:1] : 64", wantFetch: 8, wantFPP: 16},
	{name: "sub context: i4 to i32 reads 4 bytes (002 L2019-2020)", cite: "002 L1759, L2018-2021",
		axes: "A=64", in: dtype.I4, out: dtype.I32, elem: "A", time: "A / 8", pkt: "A % 8", ctx: kernel.CtxSub,
		want: "[8:8, 8:1] : 8", wantFetch: 4, wantFPP: 1, wantPacketBytes: 32},
}

func fetchReq(t testing.TB, c fetchCase) (FetchRequest, *mapping.Expr, *mapping.Expr, *mapping.Expr) {
	b, tm, p := parseSeq(t, c.axes, c.elem, c.time, c.pkt)
	return FetchRequest{InType: c.in, OutType: c.out, Element: b, Time: tm, Packet: p, Context: c.ctx,
		ClusterSize: 2, SliceSize: 256, LeftPad: c.leftPad}, b, tm, p
}

func TestFetchManualExamples(t *testing.T) {
	spec := Default()
	for _, c := range fetchCases {
		t.Run(c.name, func(t *testing.T) {
			req, b, tm, p := fetchReq(t, c)
			cfg, err := deriveFetch(spec, req)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.want, cfg.Seq.String(), c.cite)
			if c.wantFetch != 0 {
				assert.Equal(t, c.wantFetch, cfg.FetchSize, "fetch_size (%s)", c.cite)
			}
			if c.wantFetchElems != 0 {
				assert.Equal(t, c.wantFetchElems, cfg.FetchElems, "fetch_size in elements (%s)", c.cite)
			}
			if c.wantContiguous != 0 {
				assert.Equal(t, c.wantContiguous, cfg.ContiguousBytes, "contiguous_sram_access_size (%s)", c.cite)
			}
			if c.wantContiguousEl != 0 {
				assert.Equal(t, c.wantContiguousEl, cfg.ContiguousRun, "contiguous run (%s)", c.cite)
			}
			if c.wantFPP != 0 {
				assert.Equal(t, c.wantFPP, cfg.FetchesPerPacket, "fetches_per_packet (%s)", c.cite)
				assert.Equal(t, c.wantFPP, cfg.Adapter.FetchesPerPacket)
			}
			if c.wantCycles != 0 {
				// #cycles = Time::SIZE × ceil(Packet::SIZE / fetch_size) (002 L2060).
				cycles := tm.Size() * ((p.Size() + cfg.FetchElems - 1) / cfg.FetchElems)
				assert.Equal(t, c.wantCycles, cycles, "cycles (%s)", c.cite)
				assert.Equal(t, c.wantCycles, cfg.Steps*cfg.FetchesPerPacket, "steps × fetches per packet (%s)", c.cite)
			}
			if c.wantSteps != 0 {
				assert.Equal(t, c.wantSteps, cfg.Steps, c.cite)
			}
			if c.wantPacketBytes != 0 {
				assert.Equal(t, c.wantPacketBytes, cfg.PacketBytes, c.cite)
			}
			if c.wantMask == "" {
				assert.Nil(t, cfg.Adapter.Mask, c.cite)
			} else if assert.NotNil(t, cfg.Adapter.Mask, c.cite) {
				assert.Equal(t, c.wantMask, cfg.Adapter.Mask.String(), c.cite)
				checkMaskOracle(t, cfg, tm, p, c.leftPad, c.leftPadData)
			}
			if c.leftPad == nil {
				checkOracle(t, b, tm, p, SeqRead, cfg.Seq, nil)
			}
			_, err = ConfigFetch(spec, req)
			if c.wantAlignRejected {
				var v *Violation
				require.True(t, errors.As(err, &v), "%v", err)
				assert.Equal(t, "FE-R4", v.Rule.ID)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// checkMaskOracle compares MaskedAt with the stream's padding: a position is
// masked exactly when the stream holds padding there. With a left padding
// of n along an axis of data elements, position j of the padded axis
// (blockIndex) holds element j - n, so it is masked iff j < n or j ≥ n + data.
func checkMaskOracle(t *testing.T, cfg *kernel.FetchConfig, tm, p *mapping.Expr, lp *FetchLeftPad, data int) {
	t.Helper()
	stream := mapping.Pair(tm, p)
	m := cfg.Adapter.Mask
	for pos := 0; pos < stream.Size(); pos++ {
		want := stream.Map(pos).Kind != mapping.Live
		if lp != nil {
			j := blockIndex(cfg.Seq, m, pos)
			want = j < lp.N || j >= lp.N+data
		}
		require.Equal(t, want, MaskedAt(m, &cfg.Seq, pos), "position %d", pos)
	}
}

// blockIndex is the position inside the padded axis: LastDim digit · dim0 +
// the innermost digit.
func blockIndex(seq kernel.SeqConfig, m *kernel.MaskConfig, pos int) int {
	last := len(seq.Entries) - 1
	j := pos % seq.Entries[last].Size
	if m.LastDim == last {
		return j
	}
	q := pos
	for k := last; k > m.LastDim; k-- {
		q /= seq.Entries[k].Size
	}
	return (q%seq.Entries[m.LastDim].Size)*m.Dim0 + j
}

func BenchmarkConfigFetch(b *testing.B) {
	spec := Default()
	for _, c := range fetchCases {
		if c.name != "MOV-EX-6 rearranging: fetch_size 16" && c.name != "MOV-EX-27 fetch_batch_4" {
			continue
		}
		req, _, _, _ := fetchReq(b, c)
		b.Run(c.name[:9], func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := ConfigFetch(spec, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
