package engines

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// seqCase is a manual example of the sequencer derivation.
type seqCase struct {
	name, cite        string
	axes              string
	buf, time, packet string
	mode              SeqMode
	want              string // the configuration in the manual's notation; "" for an error
	wantInitial       string // entries before merging, when the manual states them
	wantRule          string // the violated rule for an error case
	wantContiguousRun int    // elements; 0 = not stated
	wantLabeled       string // labels, when worth checking
}

func parseSeq(t testing.TB, axes, buf, time, packet string) (b, tm, p *mapping.Expr) {
	t.Helper()
	ax, err := mapping.ParseAxes(axes)
	require.NoError(t, err)
	b, err = mapping.Parse(buf, ax, nil)
	require.NoError(t, err, "buf %s", buf)
	tm, err = mapping.Parse(time, ax, nil)
	require.NoError(t, err, "time %s", time)
	p, err = mapping.Parse(packet, ax, nil)
	require.NoError(t, err, "packet %s", packet)
	return
}

// The sequencer's worked examples (003 = 002 L1219-1688; 003 line n = 002
// line n+1218).
var seqCases = []seqCase{
	{name: "MOV-EX-5 NCHW to WHCN read", cite: "002 L1357-1420 (003 L139-202)",
		axes: "N=4, C=3, H=8, W=8", buf: "N, C, H, W", time: "W, H, C, N", packet: "1", mode: SeqRead,
		want: "[8:1, 8:8, 3:64, 4:192] : 1"},
	{name: "MOV-EX-5 NCHW to WHCN write (identical config, 002 L1406)", cite: "002 L1403-1420",
		axes: "N=4, C=3, H=8, W=8", buf: "N, C, H, W", time: "W, H, C, N", packet: "1", mode: SeqWrite,
		want: "[8:1, 8:8, 3:64, 4:192] : 1"},
	{name: "MOV-EX-6 rearranging axes", cite: "002 L1426-1460 (003 L208-242)",
		axes: "A=8, B=8, C=8", buf: "A, B, C # 32", time: "B, A", packet: "C # 16", mode: SeqRead,
		want: "[8:32, 8:256, 16:1] : 16", wantLabeled: "[B -> 8:32, A -> 8:256, C # 16 -> 16:1] : 16"},
	{name: "MOV-EX-7 splitting axes", cite: "002 L1461-1496 (003 L243-278)",
		axes: "A=8, B=8, C=4", buf: "A, B, C # 8", time: "A % 2, B % 4, A / 2, B / 4", packet: "C # 32", mode: SeqRead,
		want: "[2:64, 4:8, 4:128, 2:32, 32:1] : 32"},
	{name: "MOV-EX-8 slicing axes", cite: "002 L1497-1532 (003 L279-314)",
		axes: "A=16, B=8, C=8", buf: "A, B, C", time: "A / 4, A % 4 = 3, B / 4, B % 4 = 2", packet: "C", mode: SeqRead,
		want: "[4:256, 3:64, 2:32, 2:8, 8:1] : 8"},
	{name: "MOV-EX-9 broadcasting", cite: "002 L1533-1566 (003 L315-348)",
		axes: "A=16, T=4, P=4", buf: "A", time: "T, A", packet: "P", mode: SeqRead,
		want: "[4:0, 16:1, 4:0] : 4"},
	{name: "MOV-EX-10 merging 9 to 6 entries, packet 8 to 16", cite: "002 L1567-1627 (003 L349-409)",
		axes: "N=8, C=8, H=8, W=32", buf: "N, C, H, W",
		time: "W / 16, H % 2, H / 2, C / 2, C % 2, N / 2, N % 2, W / 8 % 2", packet: "W % 8", mode: SeqRead,
		wantInitial: "[2:16, 2:32, 4:64, 4:512, 2:256, 4:4096, 2:2048, 2:8, 8:1] : 8",
		want:        "[2:16, 2:32, 4:64, 8:256, 8:2048, 16:1] : 16",
		wantLabeled: "[W / 16 -> 2:16, H % 2 -> 2:32, H / 2 -> 4:64, C -> 8:256, N -> 8:2048, W % 16 -> 16:1] : 16"},
	{name: "MOV-EX-11 insufficient input", cite: "002 L1639-1659 (003 L421-441)",
		axes: "N=2048", buf: "N % 512", time: "N / 512", packet: "N % 512", mode: SeqRead, wantRule: "SEQ-R5"},
	{name: "MOV-EX-11 insufficient input, the buffer holds one coordinate (A = 1)", cite: "002 L1639-1659; FuzzDeriveFetch b484271877a61892",
		axes: "A=9", buf: "A = 1 # 128", time: "A", packet: "1", mode: SeqRead, wantRule: "SEQ-R5"},
	{name: "MOV-EX-11 insufficient input, the buffer holds one coordinate (A / 9)", cite: "002 L1639-1659",
		axes: "A=9, B=4", buf: "A / 9, B", time: "A", packet: "B", mode: SeqRead, wantRule: "SEQ-R5"},
	{name: "MOV-EX-12 incompatible shapes", cite: "002 L1660-1683 (003 L442-465)",
		axes: "A=15", buf: "A % 5, A / 5", time: "1", packet: "A % 3, A / 3", mode: SeqRead, wantRule: "SEQ-R6"},
	{name: "MOV-EX-4 broadcasting_write is rejected", cite: "002 L1328-1334, L7775",
		axes: "A=8, T=4, P=4", buf: "A", time: "T, A", packet: "P", mode: SeqWrite, wantRule: "SEQ-R10"},
	{name: "MOV-EX-4 strided_read", cite: "002 L1274-1290",
		axes: "A=8, B=512", buf: "A, B", time: "A, B / 32", packet: "B % 32", mode: SeqRead,
		want: "[8:512, 16:32, 32:1] : 32"},
	{name: "MOV-EX-4 strided_write", cite: "002 L1291-1297",
		axes: "A=8, B=512", buf: "A, B", time: "A, B / 32", packet: "B % 32", mode: SeqWrite,
		want: "[8:512, 16:32, 32:1] : 32"},
	// The manual states no configuration for tiling_read; the expected one is
	// SEQ-D1 by hand: A % 2 steps A by 1 (512·8 = 4096), B % 4 steps B by 1
	// (8), A / 2 steps A by 2 (8192), B / 4 steps B by 4 (32), "tiles A into
	// 2 × 4, B into 4 × 128 blocks" (002 L1305-1306).
	{name: "MOV-EX-4 tiling_read", cite: "002 L1305-1311",
		axes: "A=8, B=512, C=3", buf: "A, B, C # 8", time: "A % 2, B % 4, A / 2, B / 4", packet: "C # 32", mode: SeqRead,
		want: "[2:4096, 4:8, 4:8192, 128:32, 32:1] : 32"},
	{name: "MOV-EX-4 tiling_write writes C # 32 over C # 8 rows: rejected", cite: "002 L1312-1318, L7896",
		axes: "A=8, B=512, C=3", buf: "A, B, C # 8", time: "A % 2, B % 4, A / 2, B / 4", packet: "C # 32", mode: SeqWrite,
		wantRule: "SEQ-R12"},
	{name: "MOV-EX-14 fully_contiguous", cite: "002 L1769-1780",
		axes: "N=4, C=3, H=4, W=8", buf: "N, C, H, W", time: "N, C, H", packet: "W", mode: SeqRead,
		want: "[4:96, 3:32, 4:8, 8:1] : 8", wantContiguousRun: 384},
	{name: "MOV-EX-14 three_axes_non_contiguous", cite: "002 L1781-1792",
		axes: "N=4, C=3, H=4, W=8", buf: "N, C, H, W", time: "C", packet: "N, H, W", mode: SeqRead,
		want: "[3:32, 4:96, 4:8, 8:1] : 128", wantContiguousRun: 32},
	{name: "MOV-EX-14 four_axes_non_contiguous", cite: "002 L1793-1804",
		axes: "N=4, C=3, H=4, W=8", buf: "N, C, H, W", time: "1", packet: "N, H, C, W", mode: SeqRead,
		want: "[4:96, 4:8, 3:32, 8:1] : 384", wantContiguousRun: 8},
}

func TestSequencerManualExamples(t *testing.T) {
	spec := Default()
	for _, c := range seqCases {
		t.Run(c.name, func(t *testing.T) {
			b, tm, p := parseSeq(t, c.axes, c.buf, c.time, c.packet)
			d, err := DeriveSequencer(spec, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: c.mode})
			if c.wantRule != "" {
				require.Error(t, err, c.cite)
				var v *Violation
				require.True(t, errors.As(err, &v), "%v is not a Violation", err)
				assert.Equal(t, c.wantRule, v.Rule.ID, "%v (%s)", err, c.cite)
				return
			}
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.want, d.Config.String(), c.cite)
			if c.wantInitial != "" {
				init := kernel.SeqConfig{Entries: d.Initial, PacketSize: p.Size()}
				assert.Equal(t, c.wantInitial, init.String(), c.cite)
				assert.True(t, d.Merged)
			}
			if c.wantLabeled != "" {
				assert.Equal(t, c.wantLabeled, d.Config.Labeled(), c.cite)
			}
			if c.wantContiguousRun != 0 {
				assert.Equal(t, c.wantContiguousRun, d.Config.ContiguousRun(), c.cite)
			}
			checkOracle(t, b, tm, p, c.mode, d.Config, nil)
		})
	}
}

// checkOracle checks cfg against the mappings' semantics: stream position p
// holds the tensor element of Pair(time, packet).Map(p); the address
// cfg.Offset(p) of the buffer must hold the same element (its coordinates
// on the buffer's axes; axes the buffer lacks are broadcast). Padded stream
// positions are don't-care on a read and must land on the buffer's padding
// on a write; a write must write every live buffer cell exactly once.
func checkOracle(t testing.TB, buf, time, packet *mapping.Expr, mode SeqMode, cfg kernel.SeqConfig, extra map[string]int) bool {
	t.Helper()
	stream := mapping.Pair(time, packet)
	if !assert.Equal(t, stream.Size(), cfg.Size(), "config %s visits %d positions, the stream has %d", cfg, cfg.Size(), stream.Size()) {
		return false
	}
	// Merging may grow the packet by whole time entries (002 L1619).
	if !assert.Zero(t, cfg.PacketSize%packet.Size(), "config %s: packet size is not a multiple of %d", cfg, packet.Size()) {
		return false
	}
	bufAxes := map[string]bool{}
	for _, s := range buf.Symbols() {
		bufAxes[s] = true
	}
	written := map[int]int{}
	it, err := cfg.Iter()
	require.NoError(t, err)
	for it.Next() {
		pos, addr := it.Pos(), it.Addr()
		if addr != cfg.Offset(pos) {
			t.Errorf("iterator address %d != Offset(%d) = %d", addr, pos, cfg.Offset(pos))
			return false
		}
		sc := stream.Map(pos)
		// Extra dimensions (interleave) select a buffer: strip them.
		var coords []mapping.Coord
		if sc.Kind == mapping.Live {
			for _, c := range sc.Index.Coords() {
				if stride, ok := extra[c.Axis]; ok {
					addr -= c.Value * stride
					continue
				}
				if bufAxes[c.Axis] {
					coords = append(coords, c)
				}
			}
		}
		bc := buf.Map(addr)
		switch sc.Kind {
		case mapping.Live:
			want := mapping.IndexOf(coords...)
			if bc.Kind != mapping.Live || !bc.Index.Equal(want) {
				t.Errorf("config %s: stream position %d holds %s (buffer part %s) but address %d holds %s", cfg, pos, sc, want, addr, bc)
				return false
			}
			written[addr]++
		default:
			if mode == SeqWrite && bc.Kind == mapping.Live {
				t.Errorf("config %s: padded stream position %d overwrites live address %d (%s)", cfg, pos, addr, bc)
				return false
			}
		}
	}
	if mode == SeqWrite {
		for a := 0; a < buf.Size(); a++ {
			if buf.Map(a).Kind == mapping.Live && written[a] != 1 {
				t.Errorf("config %s: live address %d written %d times", cfg, a, written[a])
				return false
			}
		}
	}
	return true
}

func TestSequencerInterleave(t *testing.T) {
	// begin_interleaved: the I axis of Time selects lhs or rhs (002 L1843-1850).
	b, tm, p := parseSeq(t, "A=512, B=32, I=2", "A, B", "A, I", "B")
	d, err := DeriveSequencer(Default(), SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqRead,
		Extra: []SeqExtraDim{{Axis: "I", Size: 2, Stride: 1 << 14}}})
	require.NoError(t, err)
	assert.Equal(t, "[512:32, 2:16384, 32:1] : 32", d.Config.String())
	checkOracle(t, b, tm, p, SeqRead, d.Config, map[string]int{"I": 1 << 14})
}

func TestSequencerLimits(t *testing.T) {
	spec := Default()
	// Nine unmergeable entries (SEQ-R1, 002 L1630).
	b, tm, p := parseSeq(t, "A=2,B=2,C=2,D=2,E=2,F=2,G=2,H=2,J=2", "A,B,C,D,E,F,G,H,J", "J,H,G,F,E,D,C,B", "A")
	_, err := DeriveSequencer(spec, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqRead})
	var v *Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "SEQ-R1", v.Rule.ID)
	assert.Equal(t, "sequencer: needs 9 entries after merging, limit 8 (002 L1630, L1568)", err.Error())

	// An entry of 65,537 iterations (SEQ-R2, 002 L1631-1632): a broadcast.
	b, tm, p = parseSeq(t, "A=8, T=65537", "A", "T", "A")
	_, err = DeriveSequencer(spec, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqRead})
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "SEQ-R2", v.Rule.ID)
	// 65,536 is allowed.
	b, tm, p = parseSeq(t, "A=8, T=65536", "A", "T", "A")
	_, err = DeriveSequencer(spec, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqRead})
	require.NoError(t, err)
}

func TestSequencerWriteRules(t *testing.T) {
	spec := Default()
	for _, c := range []struct {
		axes, buf, time, packet, rule string
	}{
		// Selective write: B is left unwritten (002 L7775).
		{"A=4, B=8", "A, B", "A", "B = 4", "SEQ-R11"},
		{"A=4, B=8", "A, B", "A", "1", "SEQ-R11"},
		// Broadcast write (002 L7775).
		{"A=4, T=2", "A", "T", "A", "SEQ-R10"},
		// A padded packet whose tail would overwrite the next row (002 L7896).
		{"A=4, B=6", "A, B", "A", "B # 8", "SEQ-R12"},
		// Buffer that repeats its data.
		{"A=4", "2, A", "1", "A", "SEQ-R11"},
	} {
		b, tm, p := parseSeq(t, c.axes, c.buf, c.time, c.packet)
		_, err := DeriveSequencer(spec, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqWrite})
		var v *Violation
		if assert.True(t, errors.As(err, &v), "%s / %s / %s: %v", c.buf, c.time, c.packet, err) {
			assert.Equal(t, c.rule, v.Rule.ID, "%s / %s / %s: %v", c.buf, c.time, c.packet, err)
		}
	}
	// A padded packet whose tail lands on the buffer's padding is fine.
	b, tm, p := parseSeq(t, "A=4, B=6", "A, B # 8", "A", "B # 8")
	d, err := DeriveSequencer(spec, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqWrite})
	require.NoError(t, err)
	assert.Equal(t, "[4:8, 8:1] : 8", d.Config.String())
	checkOracle(t, b, tm, p, SeqWrite, d.Config, nil)
}

func TestSequencerBadInput(t *testing.T) {
	spec := Default()
	b, tm, p := parseSeq(t, "A=4", "A", "1", "A")
	for _, req := range []SeqRequest{
		{Buf: b, Time: tm, Packet: p},
		{Buf: nil, Time: tm, Packet: p, Mode: SeqRead},
		{Buf: b, Time: mapping.Sym("A", 4).Div(3), Packet: p, Mode: SeqRead},
	} {
		_, err := DeriveSequencer(spec, req)
		assert.Error(t, err)
	}
	_, err := DeriveSequencer(nil, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqRead})
	assert.Error(t, err)
}

// randomSplit returns terms that split axis name (size n) into digits in a
// random order, sometimes sliced or padded.
func randomSplit(r *rand.Rand, name string, n int) []string {
	var fac []int
	for m := n; m > 1; {
		for d := 2; d <= m; d++ {
			if m%d == 0 {
				if r.Intn(2) == 0 || d == m {
					fac = append(fac, d)
					m /= d
					break
				}
			}
		}
	}
	// digits: inner first; term for digit i with stride s = Π inner.
	var terms []string
	s := 1
	for _, f := range fac {
		switch {
		case s == 1 && s*f == n:
			terms = append(terms, name)
		case s == 1:
			terms = append(terms, fmt.Sprintf("%s %% %d", name, f))
		case s*f == n:
			terms = append(terms, fmt.Sprintf("%s / %d", name, s))
		default:
			terms = append(terms, fmt.Sprintf("%s / %d %% %d", name, s, f))
		}
		s *= f
	}
	r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
	return terms
}

var oracleSizes = []int{1, 2, 3, 4, 6, 8, 12}

// randomSeqProblem builds a random buffer and stream over 1-3 axes.
func randomSeqProblem(r *rand.Rand, write bool) (axes, buf, time, packet string) {
	names := []string{"A", "B", "C"}[:1+r.Intn(3)]
	var decl, bufTerms, streamTerms []string
	for _, nm := range names {
		n := oracleSizes[1+r.Intn(len(oracleSizes)-1)]
		decl = append(decl, fmt.Sprintf("%s=%d", nm, n))
		bufTerms = append(bufTerms, randomSplit(r, nm, n)...)
		streamTerms = append(streamTerms, randomSplit(r, nm, n)...)
	}
	if !write && r.Intn(3) == 0 {
		decl = append(decl, "T=3")
		streamTerms = append(streamTerms, "T")
	}
	r.Shuffle(len(bufTerms), func(i, j int) { bufTerms[i], bufTerms[j] = bufTerms[j], bufTerms[i] })
	r.Shuffle(len(streamTerms), func(i, j int) { streamTerms[i], streamTerms[j] = streamTerms[j], streamTerms[i] })
	// Random padding of the buffer's innermost term.
	if r.Intn(3) == 0 {
		bufTerms[len(bufTerms)-1] = fmt.Sprintf("[%s] # %d", bufTerms[len(bufTerms)-1], 16)
	}
	if !write && r.Intn(3) == 0 {
		// Slice the first stream term.
		streamTerms[0] = fmt.Sprintf("[%s] = 1", streamTerms[0])
	}
	cut := r.Intn(len(streamTerms) + 1)
	time, packet = "1", "1"
	if cut > 0 {
		time = strings.Join(streamTerms[:cut], ", ")
	}
	if cut < len(streamTerms) {
		packet = strings.Join(streamTerms[cut:], ", ")
	}
	if !write && r.Intn(4) == 0 {
		packet = fmt.Sprintf("[%s] # 32", packet)
	}
	return strings.Join(decl, ", "), strings.Join(bufTerms, ", "), time, packet
}

// TestSequencerOracleProperty derives configurations for random buffer and
// stream pairs and checks every one against the mappings' semantics.
func TestSequencerOracleProperty(t *testing.T) {
	spec := Default()
	r := rand.New(rand.NewSource(3))
	ok := map[SeqMode]int{}
	for i := 0; i < 1500; i++ {
		mode := SeqRead
		if i%2 == 1 {
			mode = SeqWrite
		}
		axes, buf, tm, pk := randomSeqProblem(r, mode == SeqWrite)
		ax, err := mapping.ParseAxes(axes)
		require.NoError(t, err)
		b, err1 := mapping.Parse(buf, ax, nil)
		te, err2 := mapping.Parse(tm, ax, nil)
		pe, err3 := mapping.Parse(pk, ax, nil)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		d, err := DeriveSequencer(spec, SeqRequest{Buf: b, Time: te, Packet: pe, Mode: mode})
		if err != nil {
			var v *Violation
			require.True(t, errors.As(err, &v), "%s | %s | %s / %s: non-Violation error %v", axes, buf, tm, pk, err)
			continue
		}
		ok[mode]++
		if !checkOracle(t, b, te, pe, mode, d.Config, nil) {
			t.Fatalf("%s: buf %s, time %s, packet %s (%s) -> %s", axes, buf, tm, pk, mode, d.Config.Labeled())
		}
	}
	t.Logf("derived and checked: %d reads, %d writes", ok[SeqRead], ok[SeqWrite])
	assert.Greater(t, ok[SeqRead], 300)
	assert.Greater(t, ok[SeqWrite], 300)
}

func TestCheckSeqPacketFetch(t *testing.T) {
	mk := func(es ...kernel.SeqEntry) kernel.SeqConfig { return kernel.SeqConfig{Entries: es, PacketSize: 1} }
	// fetch_batch_4: innermost W 8:1, run 384, accesses of 32 (002 L2100-2106).
	b4 := mk(kernel.SeqEntry{Size: 4, Stride: 96}, kernel.SeqEntry{Size: 3, Stride: 32}, kernel.SeqEntry{Size: 4, Stride: 8}, kernel.SeqEntry{Size: 8, Stride: 1})
	assert.NoError(t, CheckSeqPacketFetch(b4, 32))
	// MOV-EX-5: strided innermost entry, discrete one-element packets (002 L1375-1384).
	nchw := mk(kernel.SeqEntry{Size: 8, Stride: 1}, kernel.SeqEntry{Size: 8, Stride: 8}, kernel.SeqEntry{Size: 3, Stride: 64}, kernel.SeqEntry{Size: 4, Stride: 192})
	assert.NoError(t, CheckSeqPacketFetch(nchw, 1))
	err := CheckSeqPacketFetch(nchw, 4)
	var v *Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "SEQ-R4", v.Rule.ID)
	// Broadcast packet (MOV-EX-9): stride 0 counts as contiguous (002 L1635).
	bc := mk(kernel.SeqEntry{Size: 4, Stride: 0}, kernel.SeqEntry{Size: 16, Stride: 1}, kernel.SeqEntry{Size: 4, Stride: 0})
	assert.NoError(t, CheckSeqPacketFetch(bc, 4))
	assert.Error(t, CheckSeqPacketFetch(bc, 0))
}

func TestCheckSeqConfig(t *testing.T) {
	spec := Default()
	ok := kernel.SeqConfig{Entries: []kernel.SeqEntry{{Size: 8, Stride: 32}, {Size: 16, Stride: 1}}, PacketSize: 16, PacketEntries: 1}
	assert.NoError(t, CheckSeqConfig(spec, ok, SeqWrite))
	bad := ok
	bad.PacketSize = 8
	assert.Error(t, CheckSeqConfig(spec, bad, SeqRead))
	bc := kernel.SeqConfig{Entries: []kernel.SeqEntry{{Size: 4, Stride: 0}, {Size: 16, Stride: 1}}, PacketSize: 16, PacketEntries: 1}
	assert.NoError(t, CheckSeqConfig(spec, bc, SeqRead))
	assert.ErrorContains(t, CheckSeqConfig(spec, bc, SeqWrite), "stride 0")
	nine := kernel.SeqConfig{Entries: make([]kernel.SeqEntry, 9), PacketSize: 1}
	for i := range nine.Entries {
		nine.Entries[i] = kernel.SeqEntry{Size: 2, Stride: 1 << i}
	}
	assert.ErrorContains(t, CheckSeqConfig(spec, nine, SeqRead), "9 entries")
	big := kernel.SeqConfig{Entries: []kernel.SeqEntry{{Size: 65537, Stride: 1}}, PacketSize: 1}
	assert.ErrorContains(t, CheckSeqConfig(spec, big, SeqRead), "65537")
	assert.Error(t, CheckSeqConfig(nil, ok, SeqRead))
}

// TestOracleDetectsWrongConfig makes sure the oracle can fail: a derived
// configuration with two strides swapped must be caught.
func TestOracleDetectsWrongConfig(t *testing.T) {
	b, tm, p := parseSeq(t, "A=8, B=8, C=8", "A, B, C # 32", "B, A", "C # 16")
	d, err := DeriveSequencer(Default(), SeqRequest{Buf: b, Time: tm, Packet: p, Mode: SeqRead})
	require.NoError(t, err)
	wrong := d.Config
	wrong.Entries = append([]kernel.SeqEntry(nil), wrong.Entries...)
	wrong.Entries[0].Stride, wrong.Entries[1].Stride = wrong.Entries[1].Stride, wrong.Entries[0].Stride
	ft := &fakeT{}
	assert.False(t, checkOracle(ft, b, tm, p, SeqRead, wrong, nil))
	assert.True(t, ft.failed)
}

// fakeT records failures of checks that are expected to fail.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Errorf(format string, args ...any) { f.failed = true }
func (f *fakeT) FailNow()                          { f.failed = true }

func BenchmarkDeriveSequencer(b *testing.B) {
	spec := Default()
	for _, c := range []struct{ name, axes, buf, time, packet string }{
		{"rearranging", "A=8, B=8, C=8", "A, B, C # 32", "B, A", "C # 16"},
		{"merging", "N=8, C=8, H=8, W=32", "N, C, H, W", "W / 16, H % 2, H / 2, C / 2, C % 2, N / 2, N % 2, W / 8 % 2", "W % 8"},
	} {
		bf, tm, p := parseSeq(b, c.axes, c.buf, c.time, c.packet)
		req := SeqRequest{Buf: bf, Time: tm, Packet: p, Mode: SeqRead}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := DeriveSequencer(spec, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
