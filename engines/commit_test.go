package engines

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

type commitCase struct {
	name, cite       string
	axes             string
	dt               dtype.DType
	time, pkt, elem  string
	want             string // sequencer entries; the trailing number is the packet in elements
	wantCommitIn     int    // commit_in_size, bytes
	wantContiguous   int    // contiguous_sram_access_size, bytes; 0 = not stated
	wantCommitSize   int    // commit_size, bytes; 0 = not stated
	wantStatedSuffix int    // the manual's trailing `: n`, which equals commit_size (docs/spec-decisions.md)
}

var commitCases = []commitCase{
	// MOV-EX-30 truncation (002 L2195-2235).
	{name: "MOV-EX-30 i8_padding_truncation", cite: "002 L2201-2208",
		axes: "M=4, K=2, W=8, N=16, J=64", dt: dtype.I8, time: "M, K", pkt: "W # 32", elem: "M, K, W",
		want: "[4:16, 2:8, 8:1] : 8", wantCommitIn: 8},
	{name: "MOV-EX-30 f32_non_padding_truncation", cite: "002 L2209-2216",
		axes: "M=4, K=2, W=8, N=16, J=64", dt: dtype.F32, time: "M, K", pkt: "W", elem: "M, K, W = 4",
		want: "[4:8, 2:4, 4:1] : 4", wantCommitIn: 16},
	{name: "MOV-EX-30 bf16_truncation_with_transpose", cite: "002 L2217-2225",
		axes: "M=4, K=2, W=8, N=16, J=64", dt: dtype.BF16, time: "M, K", pkt: "N", elem: "K, M, N = 8",
		want: "[4:8, 2:32, 8:1] : 8", wantCommitIn: 16},
	{name: "MOV-EX-30 i4_no_truncation_with_transpose", cite: "002 L2226-2234",
		axes: "M=4, K=2, W=8, N=16, J=64", dt: dtype.I4, time: "M, K", pkt: "J", elem: "K, M, J",
		want: "[4:64, 2:256, 64:1] : 64", wantCommitIn: 32},
	// MOV-EX-31 commit sequencer (002 L2249-2313).
	{name: "MOV-EX-31 no_transpose", cite: "002 L2255-2267",
		axes: "M=4, K=2, W=8, N=16", dt: dtype.I8, time: "M, K", pkt: "W # 32", elem: "M, K, W",
		want: "[4:16, 2:8, 8:1] : 8", wantCommitIn: 8, wantContiguous: 64, wantCommitSize: 8, wantStatedSuffix: 8},
	{name: "MOV-EX-31 transpose", cite: "002 L2268-2280",
		axes: "M=4, K=2, W=8, N=16", dt: dtype.F32, time: "M, K", pkt: "W", elem: "K, M, W",
		want: "[4:8, 2:32, 8:1] : 8", wantCommitIn: 32, wantContiguous: 32, wantCommitSize: 32, wantStatedSuffix: 32},
	{name: "MOV-EX-31 transpose_with_truncation", cite: "002 L2281-2293",
		axes: "M=4, K=2, W=8, N=16", dt: dtype.BF16, time: "M, K", pkt: "N", elem: "K, M, N = 8",
		want: "[4:8, 2:32, 8:1] : 8", wantCommitIn: 16, wantContiguous: 16, wantCommitSize: 16, wantStatedSuffix: 16},
	{name: "MOV-EX-31 padding_chunking", cite: "002 L2294-2312",
		axes: "M=4, K=2, W=8, N=16", dt: dtype.I8, time: "K", pkt: "M, W", elem: "K, M, W # 16",
		want: "[2:64, 4:16, 8:1] : 32", wantCommitIn: 32, wantContiguous: 8, wantCommitSize: 8, wantStatedSuffix: 8},
	// MOV-EX-29 cast + commit: 16 time steps, 8 bf16 padded to 16 (002 L2176-2185).
	{name: "MOV-EX-29 cast_commit", cite: "002 L2176-2185",
		axes: "P=256, M=16, N=8", dt: dtype.BF16, time: "M", pkt: "N # 16", elem: "M, N # 16",
		want: "[16:16, 8:1] : 8", wantCommitIn: 16, wantContiguous: 16, wantCommitSize: 16},
}

func TestCommitManualExamples(t *testing.T) {
	spec := Default()
	for _, c := range commitCases {
		t.Run(c.name, func(t *testing.T) {
			ax, err := mapping.ParseAxes(c.axes)
			require.NoError(t, err)
			tm := mapping.MustParse(c.time, ax, nil)
			p := mapping.MustParse(c.pkt, ax, nil)
			el := mapping.MustParse(c.elem, ax, nil)
			cfg, err := ConfigCommit(spec, CommitRequest{DType: c.dt, Time: tm, Packet: p, Element: el, Context: kernel.CtxMain})
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.want, cfg.Seq.String(), c.cite)
			assert.Equal(t, c.wantCommitIn, cfg.CommitInSize, "commit_in_size (%s)", c.cite)
			assert.Equal(t, 32, cfg.InPacketBytes)
			if c.wantContiguous != 0 {
				assert.Equal(t, c.wantContiguous, cfg.ContiguousBytes, "contiguous_sram_access_size (%s)", c.cite)
			}
			if c.wantCommitSize != 0 {
				assert.Equal(t, c.wantCommitSize, cfg.CommitSize, "commit_size (%s)", c.cite)
				assert.Equal(t, c.wantCommitIn/c.wantCommitSize, cfg.WritesPerStep, c.cite)
			}
			if c.wantStatedSuffix != 0 {
				assert.Equal(t, c.wantStatedSuffix, cfg.CommitSize, "the stated `: n` (%s)", c.cite)
			}
			assert.Equal(t, tm.Size(), cfg.Steps)
			trunc := p
			if cfg.CommitInElems < p.Size() {
				trunc = p.Resize(cfg.CommitInElems)
			}
			checkOracle(t, el, tm, trunc, SeqWrite, cfg.Seq, nil)
		})
	}
}

// MOV-EX-31 padding_chunking: "The 32-byte packet is split into 4 × 8-byte
// writes along the M axis": packet[0..8] → 0, [8..16] → 16, [16..24] → 32,
// [24..32] → 48 (002 L2303-2307).
func TestCommitChunkedWrites(t *testing.T) {
	ax, _ := mapping.ParseAxes("M=4, K=2, W=8")
	cfg, err := ConfigCommit(Default(), CommitRequest{DType: dtype.I8, Time: mapping.MustParse("K", ax, nil),
		Packet: mapping.MustParse("M, W", ax, nil), Element: mapping.MustParse("K, M, W # 16", ax, nil), Context: kernel.CtxMain})
	require.NoError(t, err)
	require.Equal(t, 4, cfg.WritesPerStep)
	for w, want := range [][2]int{{0, 0}, {8, 16}, {16, 32}, {24, 48}} {
		off, addr, err := CommitWrite(cfg, 0, w)
		require.NoError(t, err)
		assert.Equal(t, want, [2]int{off, addr}, "write %d", w)
	}
	// Step 1 writes the K = 1 block, 64 bytes further.
	_, addr, err := CommitWrite(cfg, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, 64, addr)
	_, _, err = CommitWrite(cfg, 2, 0)
	assert.Error(t, err)
	_, _, err = CommitWrite(cfg, 0, 4)
	assert.Error(t, err)
	allocs := testing.AllocsPerRun(10, func() { _, _, _ = CommitWrite(cfg, 1, 3) })
	assert.Zero(t, allocs)

	// Truncation keeps the leading bytes (002 L2191).
	flit := make([]byte, 32)
	for i := range flit {
		flit[i] = byte(i)
	}
	cfg8, err := ConfigCommit(Default(), CommitRequest{DType: dtype.I8, Time: mapping.MustParse("M, K", ax, nil),
		Packet: mapping.MustParse("W # 32", ax, nil), Element: mapping.MustParse("M, K, W", ax, nil), Context: kernel.CtxMain})
	require.NoError(t, err)
	out, err := CommitTruncate(cfg8, flit)
	require.NoError(t, err)
	assert.Equal(t, flit[:8], out)
	_, err = CommitTruncate(cfg8, flit[:16])
	assert.Error(t, err)
}

func TestCommitRules(t *testing.T) {
	spec := Default()
	ax, _ := mapping.ParseAxes("M=4, K=2, W=8, N=16, T=2, S=256")
	mp := func(s string) *mapping.Expr { return mapping.MustParse(s, ax, nil) }
	for _, c := range []struct {
		name string
		req  CommitRequest
		rule string
	}{
		{"packet is not one flit", CommitRequest{DType: dtype.I8, Time: mp("M, K"), Packet: mp("W"), Element: mp("M, K, W")}, "CM-R1"},
		{"sub context not after fetch", CommitRequest{DType: dtype.I8, Time: mp("M, K"), Packet: mp("W # 32"), Element: mp("M, K, W"), Context: kernel.CtxSub}, "CM-R4"},
		{"valid count packing in main", CommitRequest{DType: dtype.I8, Time: mp("M, K"), Packet: mp("W # 32"), Element: mp("M, K, W"), ValidCountPacking: true}, "CM-R7"},
		{"broadcast write", CommitRequest{DType: dtype.I8, Time: mp("T, M, K"), Packet: mp("W # 32"), Element: mp("M, K, W")}, "SEQ-R10"},
		{"unwritten cells", CommitRequest{DType: dtype.I8, Time: mp("M"), Packet: mp("W # 32"), Element: mp("M, K, W")}, "SEQ-R11"},
		// Rows of 4 bytes, 8 apart: commit_size gcd(4, 16) = 4 is not a commit size.
		{"commit_size 4", CommitRequest{DType: dtype.I8, Time: mp("W / 4"), Packet: mp("[M, W % 4] # 32"), Element: mp("W / 4, M, W % 4 # 8")}, "CM-R3"},
		// A 4-byte row rounded up to 8 bytes would overwrite the next row (002 L7699, L7896).
		{"tail over live data", CommitRequest{DType: dtype.I8, Time: mp("M, K"), Packet: mp("W / 2 # 32"), Element: mp("K, M, W / 2")}, "SEQ-R12"},
		{"only padding written", CommitRequest{DType: dtype.I8, Time: mp("M"), Packet: mp("1 # 32"), Element: mp("M")}, "SEQ-R12"},
		{"bitmap too small", CommitRequest{DType: dtype.I8, Time: mp("M, K"), Packet: mp("W # 32"), Element: mp("M, K, W"), Slice: mp("S, T")}, "CM-R10"},
	} {
		if c.req.Context == "" {
			c.req.Context = kernel.CtxMain
		}
		_, err := ConfigCommit(spec, c.req)
		t.Run(c.name, func(t *testing.T) { assertRule(t, err, c.rule) })
	}
	// Sub context: 8-byte writes (002 L2248).
	cfg, err := ConfigCommit(spec, CommitRequest{DType: dtype.F32, Time: mp("M, K"), Packet: mp("W"), Element: mp("K, M, W"), Context: kernel.CtxSub, FromFetch: true})
	require.NoError(t, err)
	assert.Equal(t, 8, cfg.CommitSize)
	assert.Equal(t, 4, cfg.WritesPerStep)
	// CE-R6: rows of 12 bytes step by 12, not a multiple of 8 (002 L2338).
	ax2, _ := mapping.ParseAxes("A=3, B=4, C=8")
	_, err = ConfigCommit(spec, CommitRequest{DType: dtype.I8, Time: mapping.MustParse("B", ax2, nil), Packet: mapping.MustParse("[A, C] # 32", ax2, nil),
		Element: mapping.MustParse("B, A, C # 12", ax2, nil), Context: kernel.CtxMain})
	assertRule(t, err, "CM-R6")
	// Bad arguments.
	for _, req := range []CommitRequest{
		{DType: 0, Time: mp("M"), Packet: mp("W # 32"), Element: mp("M, W"), Context: kernel.CtxMain},
		{DType: dtype.I8, Time: mp("M"), Packet: mp("W # 32"), Element: mp("M, W"), Context: "dma"},
		{DType: dtype.I8, Time: nil, Packet: mp("W # 32"), Element: mp("M, W"), Context: kernel.CtxMain},
	} {
		_, err := ConfigCommit(spec, req)
		assert.Error(t, err)
	}
	_, err = ConfigCommit(nil, CommitRequest{})
	assert.Error(t, err)
}

// MOV-EX-32: `00000000...01` enables only slice 0, `11111111...10` every
// slice except 0 (002 L2316-2318).
func TestSliceBitmap(t *testing.T) {
	ax, _ := mapping.ParseAxes("S=256, R=255")
	// Slice 0 only: a slice mapping of one live slice padded to 256.
	bm, err := DeriveSliceBitmap(mapping.MustParse("1 # 256", ax, nil))
	require.NoError(t, err)
	s := bm.String()
	assert.Equal(t, strings.Repeat("0", 255)+"1", s)
	assert.True(t, strings.HasPrefix(s, "00000000") && strings.HasSuffix(s, "01"))
	assert.Equal(t, 1, bm.Count())
	// Every slice: 256 ones.
	bm, err = DeriveSliceBitmap(mapping.MustParse("S", ax, nil))
	require.NoError(t, err)
	assert.Equal(t, 256, bm.Count())
	// All but slice 0, built directly as in the manual's second example.
	var b2 kernel.SliceBitmap
	for k := 1; k < 256; k++ {
		require.True(t, b2.Set(k))
	}
	assert.Equal(t, strings.Repeat("1", 255)+"0", b2.String())
	assert.False(t, b2.Set(256))
	assert.False(t, b2.Has(0))
	// JSON round trip.
	js, err := json.Marshal(b2)
	require.NoError(t, err)
	var back kernel.SliceBitmap
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, b2, back)
	assert.Error(t, back.UnmarshalText([]byte("01")))
	assert.Error(t, back.UnmarshalText([]byte(strings.Repeat("2", 256))))
	_, err = DeriveSliceBitmap(nil)
	assert.Error(t, err)
}

// TestSliceBitmapCompiled: the bitmap, derived through the compiled
// expression, has a slice exactly where Map says the position is live:
// padded, broadcast and paired slice mappings.
func TestSliceBitmapCompiled(t *testing.T) {
	ax, _ := mapping.ParseAxes("S=256, R=255, I=4096, J=8")
	for _, src := range []string{"1 # 256", "S", "R # 256", "I / 512 % 2, I / 32 % 128", "J # 16, 16", "J, 2 # 32",
		"2 # 8, J # 32", "J # 32, 8"} {
		e := mapping.MustParse(src, ax, nil)
		bm, err := DeriveSliceBitmap(e)
		require.NoError(t, err, src)
		for k := range e.Size() {
			assert.Equal(t, e.Map(k).Kind == mapping.Live, bm.Has(k), "%s: slice %d", src, k)
		}
	}
}

// TestCommitOracleProperty derives commits of random i8 streams of one
// 32-byte packet per step into random layouts and checks each against the
// write oracle.
func TestCommitOracleProperty(t *testing.T) {
	spec := Default()
	ax, _ := mapping.ParseAxes("A=2, B=4, C=8, D=3")
	packets := []string{"C # 32", "B, C", "[B, C] # 32", "C, B", "A, B, C", "[D, C] # 32"}
	elems := [][]string{
		{"A", "B", "C"}, {"A", "C", "B"}, {"B", "A", "C # 16"}, {"C", "A", "B"}, {"A", "D", "C"}, {"D", "A", "C # 16"},
	}
	ok := 0
	for _, pk := range packets {
		p := mapping.MustParse(pk, ax, nil)
		for _, e := range elems {
			el := mapping.MustParse(strings.Join(e, ", "), ax, nil)
			// Time: the element's axes that the packet lacks, in both orders.
			var rest []string
			for _, s := range el.Symbols() {
				if !strings.Contains(pk, s) {
					rest = append(rest, s)
				}
			}
			for _, order := range [][]string{rest, reverse(rest)} {
				tmText := "1"
				if len(order) > 0 {
					tmText = strings.Join(order, ", ")
				}
				tm := mapping.MustParse(tmText, ax, nil)
				cfg, err := ConfigCommit(spec, CommitRequest{DType: dtype.I8, Time: tm, Packet: p, Element: el, Context: kernel.CtxMain})
				if err != nil {
					continue
				}
				ok++
				trunc := p
				if cfg.CommitInElems < p.Size() {
					trunc = p.Resize(cfg.CommitInElems)
				}
				require.True(t, checkOracle(t, el, tm, trunc, SeqWrite, cfg.Seq, nil), "%s / %s -> %s", tmText, pk, el)
			}
		}
	}
	assert.Greater(t, ok, 15)
}

func reverse(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}

func BenchmarkConfigCommit(b *testing.B) {
	spec := Default()
	ax, _ := mapping.ParseAxes("M=4, K=2, W=8")
	req := CommitRequest{DType: dtype.I8, Time: mapping.MustParse("K", ax, nil), Packet: mapping.MustParse("M, W", ax, nil),
		Element: mapping.MustParse("K, M, W # 16", ax, nil), Context: kernel.CtxMain}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ConfigCommit(spec, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeFactors checks the allocation-free decoder against Expr.Map.
func TestDecodeFactors(t *testing.T) {
	ax, _ := mapping.ParseAxes("A=3, B=4, C=8, R=14")
	for _, src := range []string{"A, B, C", "[B, C] # 40", "C # 16, A", "C % 4, B, C / 4", "4, A", "A = 2 # 4, B", "[R # 16 / 4, R # 16 % 4]"} {
		e := mapping.MustParse(src, ax, nil)
		fs, err := mapping.Factorize(e)
		require.NoError(t, err, src)
		ext := fs.Extents()
		for p := 0; p < e.Size(); p++ {
			coords, live := decodeFactors(fs, ext, p, nil)
			c := e.Map(p)
			require.Equal(t, c.Kind == mapping.Live, live, "%s position %d", src, p)
			if !live {
				continue
			}
			var got []mapping.Coord
			for _, a := range coords {
				got = append(got, mapping.Coord{Axis: a.axis, Value: a.v})
			}
			assert.True(t, mapping.IndexOf(got...).Equal(c.Index), "%s position %d: %v vs %s", src, p, coords, c)
		}
	}
}
