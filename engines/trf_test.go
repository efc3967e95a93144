package engines

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestTRFSequencerManualExamples reproduces the TRF Sequencer
// configurations the manual states (reg_read_size and entries), and checks
// every derived configuration against the oracle.
func TestTRFSequencerManualExamples(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, cite, axes   string
		d                  dtype.DType
		row, element       string
		outTime, outPacket string
		readSize           int
		entries            []kernel.TRFEntry // size, stride; Entry 0 = inner loop
	}{
		// "reg_read_size = 32B"; "Entry 0: { size: 2, stride: 1024 } — O",
		// "Entry 1: { size: 32, stride: 32 } — M".
		{"AL-EX-1 batched matmul", "002 L3854-3864", "M=32, N=8, K=16, L=2, O=2", dtype.BF16,
			"N", "O, M, K", "M, O", "L, K", 32, []kernel.TRFEntry{{Size: 2, Stride: 1024}, {Size: 32, Stride: 32}}},
		// "reg_read_size = 64B"; "Entry 0: { size: 32, stride: 0 } — M".
		{"TRF-EX-1 basic weight broadcasting", "002 L4234-4239", "M=32, N=8, K=32", dtype.BF16,
			"N", "K", "M", "K", 64, []kernel.TRFEntry{{Size: 32, Stride: 0}}},
		// "reg_read_size = 32B"; "Entry 0: { size: 32, stride: 0 } — M",
		// "Entry 1: { size: 2, stride: 32 } — O".
		{"TRF-EX-2 small reg_read_size", "002 L4281-4286", "M=32, N=8, K=16, L=2, O=2", dtype.BF16,
			"N", "O, K", "O, M", "L, K", 32, []kernel.TRFEntry{{Size: 32, Stride: 0}, {Size: 2, Stride: 32}}},
		// "if reg_read_size = 8, the 8 bytes are broadcast 8× to fill 64
		// bytes": 4 bf16 weights against a packet [L = 8, K = 4].
		{"TRF-EX-4 broadcast arithmetic", "002 L4104", "M=4, N=8, K=4, L=8", dtype.BF16,
			"N", "K", "M", "L, K", 8, []kernel.TRFEntry{{Size: 4, Stride: 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			in := TRFSequencerInput{DType: tc.d, Row: ceM(t, ax, tc.row), Element: ceM(t, ax, tc.element),
				OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPacket)}
			c, err := DeriveTRFSequencer(spec, in)
			require.NoError(t, err, tc.cite)
			assert.Equal(t, tc.readSize, c.RegReadSize, "reg_read_size, %s", tc.cite)
			assert.Equal(t, 64/tc.readSize, c.Broadcast, "broadcast, %s", tc.cite)
			var got []kernel.TRFEntry
			for _, e := range c.Entries {
				got = append(got, kernel.TRFEntry{Size: e.Size, Stride: e.Stride})
			}
			assert.Equal(t, tc.entries, got, "entries, %s", tc.cite)
			assert.Empty(t, ceTRFOracle(ax, tc.d, in.Row, in.Element, in.OutTime, in.OutPacket, c, 1<<20))
		})
	}
}

// TestTRFSequencerLabels checks the entry labels against the manual's
// (002 L3863-3864: O, then M).
func TestTRFSequencerLabels(t *testing.T) {
	ax := ceAx(t, "M=32, N=8, K=16, L=2, O=2")
	c, err := DeriveTRFSequencer(Default(), TRFSequencerInput{DType: dtype.BF16, Row: ceM(t, ax, "N"), Element: ceM(t, ax, "O, M, K"),
		OutTime: ceM(t, ax, "M, O"), OutPacket: ceM(t, ax, "L, K")})
	require.NoError(t, err)
	assert.Equal(t, "O", c.Entries[0].Term)
	assert.Equal(t, "M", c.Entries[1].Term)
	assert.Equal(t, "reg_read_size = 32B (broadcast 2×); Entry 0: { size: 2, stride: 1024 } — O, Entry 1: { size: 32, stride: 32 } — M", c.String())
}

// TestTRFSequencerChains derives the TRF Sequencer of every complete
// contraction example and checks it with the oracle. The Hello kernels and
// RED examples state no sequencer entries; their values below follow from
// the manual's rules: reg_read_size = the common contiguous part (002 L4108),
// a step per OutTime term with its byte stride (002 L4106, L3863-3864),
// stride 0 for axes the TRF lacks (002 L4177).
func TestTRFSequencerChains(t *testing.T) {
	spec := Default()
	want := map[string]struct {
		read    int
		entries []kernel.TRFEntry
	}{
		"AL-EX-1 batched matmul":                {32, []kernel.TRFEntry{{Size: 2, Stride: 1024}, {Size: 32, Stride: 32}}},
		"TRF-EX-1 basic weight broadcasting":    {64, []kernel.TRFEntry{{Size: 32, Stride: 0}}},
		"TRF-EX-2 small reg_read_size":          {32, []kernel.TRFEntry{{Size: 32, Stride: 0}, {Size: 2, Stride: 32}}},
		"RED-EX-1 matrix multiplication":        {64, []kernel.TRFEntry{{Size: 32, Stride: 0}}},
		"RED-EX-4 interleaved":                  {32, []kernel.TRFEntry{{Size: 4, Stride: 0}, {Size: 4, Stride: 32}}},
		"RED-EX-5 sequential":                   {32, []kernel.TRFEntry{{Size: 4, Stride: 0}, {Size: 4, Stride: 32}}},
		"HELLO-EX-1 dot product":                {64, []kernel.TRFEntry{{Size: 64, Stride: 64}}},
		"HELLO-EX-2 GEMV (one slice)":           {64, []kernel.TRFEntry{{Size: 64, Stride: 64}}},
		"HELLO-EX-3 GEMM, K = 1024 (one slice)": {64, []kernel.TRFEntry{{Size: 32, Stride: 64}, {Size: 4, Stride: 2048}, {Size: 32, Stride: 0}}},
	}
	for _, ch := range ceChains {
		t.Run(ch.name, func(t *testing.T) {
			ax := ceAx(t, ch.axes)
			in := TRFSequencerInput{DType: ch.d, Row: ceM(t, ax, ch.row), Element: ceM(t, ax, ch.element),
				OutTime: ceM(t, ax, ch.outTime), OutPacket: ceM(t, ax, ch.outPacket)}
			c, err := DeriveTRFSequencer(spec, in)
			require.NoError(t, err, ch.cite)
			w, ok := want[ch.name]
			require.True(t, ok)
			assert.Equal(t, w.read, c.RegReadSize)
			var got []kernel.TRFEntry
			for _, e := range c.Entries {
				got = append(got, kernel.TRFEntry{Size: e.Size, Stride: e.Stride})
			}
			assert.Equal(t, w.entries, got)
			assert.Empty(t, ceTRFOracle(ax, ch.d, in.Row, in.Element, in.OutTime, in.OutPacket, c, 1<<20))
		})
	}
}

// TestTRFSequencerCaseStudies derives the TRF side of the consistent
// batched-matmul dumps (002 L3720-3735): they state mappings but no
// register values, so the check is legality plus the oracle; the dumps'
// T: part is the 64-byte packet (32 bf16).
func TestTRFSequencerCaseStudies(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, cite, axes            string
		element, outTime, outPacket string
	}{
		// TRF [Row: N=8 | H: N/8=3, K=32, V=32]; computation [H: M=5, N/8=3, K=32 | Row | T: V=32].
		{"CE-EX-2 V vectorized", "002 L3723-3727", "M=5, N=24, K=32, V=32", "N / 8, K, V", "M, N / 8, K", "V"},
		// TRF [Row: N=8 | H: V=5, N/8=3, K=32, M=32]; computation [H: V=5, N/8=3, K=32 | Row | T: M=32].
		{"CE-EX-3 N x M tiled", "002 L3731-3735", "V=5, N=24, K=32, M=32", "V, N / 8, K, M", "V, N / 8, K", "M"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			in := TRFSequencerInput{DType: dtype.BF16, Row: ceM(t, ax, "N % 8"), Element: ceM(t, ax, tc.element),
				OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPacket)}
			c, err := DeriveTRFSequencer(spec, in)
			require.NoError(t, err, tc.cite)
			assert.Equal(t, 64, c.RegReadSize) // the 32-element packet is the innermost TRF axis
			assert.Empty(t, ceTRFOracle(ax, dtype.BF16, in.Row, in.Element, in.OutTime, in.OutPacket, c, 1<<20))
		})
	}
}

// TestTRFSequencerRejects covers the TRF Sequencer's rules.
func TestTRFSequencerRejects(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, axes                       string
		d                                dtype.DType
		row, element, outTime, outPacket string
		rule                             string
	}{
		{"rows 3", "M=32, N=3, K=32", dtype.BF16, "N", "K", "M", "K", "TRF-R2"},
		{"packet of 32 bytes", "M=32, N=8, K=16", dtype.BF16, "N", "K", "M", "K", "TRF-R10"},
		{"i4 without a common byte", "M=4, N=8, K=64, L=2", dtype.I4, "N", "K, L", "M", "L, K", "TRF-R4"},
		{"packet broadcast of a TRF axis", "M=32, N=8, K=16, O=2", dtype.BF16, "N", "O, M, K", "M", "O, K", "TRF-R11"},
		{"OutPacket carries the Row", "M=32, N=8, K=16, O=2", dtype.BF16, "O", "N, K", "M", "O, K", "TRF-R11"},
		{"Row iterated in time", "M=4, N=8, K=32", dtype.BF16, "N", "K", "M, N", "K", "TRF-R12"},
		{"time term inside the read", "N=8, K=32", dtype.BF16, "N", "K", "K % 2", "K", "TRF-R12"},
		{"time digit the TRF lacks", "M=4, N=8, K=64", dtype.BF16, "N", "K % 32", "K / 32", "K % 32", "TRF-R12"},
		{"weights never read", "M=4, N=8, K=32, O=2", dtype.BF16, "N", "O, K", "M", "K", "TRF-R13"},
		{"incompatible decompositions", "M=4, N=8, K=32, A=15", dtype.BF16, "N", "A % 5, A / 5, K", "A % 3, A / 3", "K", "TRF-R12"},
		{"nine entries", "A=2, B=2, C=2, D=2, E=2, F=2, G=2, H=2, X=2, N=8, K=32", dtype.BF16,
			"N", "A, B, C, D, E, F, G, H, X, K", "X, H, G, F, E, D, C, B, A", "K", "TRF-R6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			_, err := DeriveTRFSequencer(spec, TRFSequencerInput{DType: tc.d, Row: ceM(t, ax, tc.row), Element: ceM(t, ax, tc.element),
				OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPacket)})
			var v *Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
		})
	}
}

// TestTRFSequencerMerge checks the merge of more than 8 entries
// (003 L349-351): broadcast entries merge (0 = n·0), contiguous ones too.
func TestTRFSequencerMerge(t *testing.T) {
	ax := ceAx(t, "A=2, B=2, C=2, D=2, E=2, F=2, G=2, H=2, X=2, N=8, K=32")
	c, err := DeriveTRFSequencer(Default(), TRFSequencerInput{DType: dtype.BF16, Row: ceM(t, ax, "N"), Element: ceM(t, ax, "K"),
		OutTime: ceM(t, ax, "A, B, C, D, E, F, G, H, X"), OutPacket: ceM(t, ax, "K")})
	require.NoError(t, err)
	assert.Equal(t, []kernel.TRFEntry{{Size: 512, Stride: 0, Term: "A, B, C, D, E, F, G, H, X"}}, c.Entries)
}

// TestCheckTRFSequencer checks hand-written configurations against the
// register-level rules.
func TestCheckTRFSequencer(t *testing.T) {
	spec := Default()
	ok := kernel.TRFSequencerConfig{RegReadSize: 64, Broadcast: 1, Entries: []kernel.TRFEntry{{Size: 32, Stride: 64}}, Rows: 8}
	require.NoError(t, CheckTRFSequencer(spec, &ok))
	cases := []struct {
		name string
		c    kernel.TRFSequencerConfig
		rule string
	}{
		// 002 L4110-4111: "the base address and all sequencer strides must be aligned to 64 bytes".
		{"unaligned stride", kernel.TRFSequencerConfig{RegReadSize: 64, Broadcast: 1, Entries: []kernel.TRFEntry{{Size: 2, Stride: 32}}}, "TRF-R5"},
		{"unaligned base", kernel.TRFSequencerConfig{RegReadSize: 64, Broadcast: 1, Base: 32, Entries: []kernel.TRFEntry{{Size: 2, Stride: 64}}}, "TRF-R5"},
		{"read size 3", kernel.TRFSequencerConfig{RegReadSize: 3, Broadcast: 21, Entries: []kernel.TRFEntry{{Size: 1}}}, "TRF-R4"},
		{"broadcast mismatch", kernel.TRFSequencerConfig{RegReadSize: 32, Broadcast: 1, Entries: []kernel.TRFEntry{{Size: 1}}}, "TRF-R4"},
		{"no entry", kernel.TRFSequencerConfig{RegReadSize: 32, Broadcast: 2}, "TRF-R6"},
		{"size 65537", kernel.TRFSequencerConfig{RegReadSize: 32, Broadcast: 2, Entries: []kernel.TRFEntry{{Size: 65537}}}, "TRF-R6"},
		{"stride 2^31", kernel.TRFSequencerConfig{RegReadSize: 32, Broadcast: 2, Entries: []kernel.TRFEntry{{Size: 2, Stride: 1 << 31}}}, "TRF-R6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTRFSequencer(spec, &tc.c)
			var v *Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			assert.Equal(t, tc.rule, v.Rule.ID)
		})
	}
}

// TestToTRFManualExamples reproduces the to_trf calls of the manual.
func TestToTRFManualExamples(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, cite, axes   string
		d                  dtype.DType
		time, packet       string
		row, element       string
		addr               kernel.TrfAddress
		rows, elementBytes int
		rule               string // "" = legal
	}{
		// "Element: [O = 2, M = 32, K = 16]: each Row stores 2×32×16 = 1024 bf16 elements".
		{"AL-EX-1", "002 L3830-3838", "M=32, N=8, K=16, L=2, O=2", dtype.BF16, "N, O, M", "K", "N", "O, M, K", kernel.TrfFirstHalf, 8, 2048, ""},
		// "Element: [K = 32]: 32 weight elements stored per Row".
		{"TRF-EX-1", "002 L4210-4217", "M=32, N=8, K=32", dtype.BF16, "N, K / 16", "K % 16", "N", "K", kernel.TrfFull, 8, 64, ""},
		{"TRF-EX-2", "002 L4257-4264", "M=32, N=8, K=16, L=2, O=2", dtype.BF16, "N, O", "K", "N", "O, K", kernel.TrfFirstHalf, 8, 64, ""},
		{"HELLO-EX-1 dot product", "002 L342-347", "A=2048", dtype.BF16, "A / 16", "A % 16", "1", "A", kernel.TrfFull, 1, 4096, ""},
		{"HELLO-EX-2 GEMV", "002 L443-449", "I=256, J=2048", dtype.BF16, "J / 16", "J % 16", "1", "J", kernel.TrfFull, 1, 4096, ""},
		// The GEMM's TRF rows need 4 × 2048 bf16 = 16 KB, the Full TRF holds 8 KB
		// per Row (002 L139, L4118): rejected (docs/spec-decisions.md "Hello GEMM
		// TRF over-capacity").
		{"HELLO-EX-3 GEMM as written", "002 L479, L503-508", "I=512, J=512, K=2048", dtype.BF16,
			"J % 8, J / 8 % 4, K / 16", "K % 16", "J % 8", "J / 8 % 4, K", kernel.TrfFull, 8, 16384, "TRF-R3"},
		{"HELLO-EX-3 GEMM with K = 1024", "002 L479, L503-508", "I=512, J=512, K=1024", dtype.BF16,
			"J % 8, J / 8 % 4, K / 16", "K % 16", "J % 8", "J / 8 % 4, K", kernel.TrfFull, 8, 8192, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			c, err := DeriveToTRF(spec, ToTRFInput{DType: tc.d, Time: ceM(t, ax, tc.time), Packet: ceM(t, ax, tc.packet),
				Row: ceM(t, ax, tc.row), Element: ceM(t, ax, tc.element), Address: tc.addr})
			if tc.rule != "" {
				var v *Violation
				require.True(t, errors.As(err, &v), "want a violation, got %v", err)
				assert.Equal(t, tc.rule, v.Rule.ID)
				assert.Contains(t, err.Error(), "needs 16384 bytes per Row")
				return
			}
			require.NoError(t, err, tc.cite)
			assert.Equal(t, tc.rows, c.Rows)
			assert.Equal(t, tc.elementBytes, c.ElementBytes)
			assert.Equal(t, 3, c.RegType) // bf16: 20-bit, 002 L4147
			assert.LessOrEqual(t, c.ElementBytes, c.CapacityBytes)
		})
	}
}

// TestToTRFRejects covers the to_trf rules (modelled on reference-notes
// §5.5 K4's trf_mapping / trf_lane_time / trf_size fixtures).
func TestToTRFRejects(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, axes                 string
		time, packet, row, element string
		addr                       kernel.TrfAddress
		rule                       string
	}{
		{"rows 3", "A=3, K=16", "A", "K", "A", "K", kernel.TrfFull, "TRF-R2"},
		{"row not the outer time", "A=8, E=32, K=16", "A, E / 4", "K", "E / 4 % 8", "A, K", kernel.TrfFull, "TRF-R1"},
		{"element mismatch", "A=8, B=2, K=16", "A, B", "K", "A", "K, B", kernel.TrfFull, "TRF-R1"},
		{"rows do not divide time", "F=6, R=8, K=16", "F", "K", "R / 2", "K", kernel.TrfFull, "TRF-R1"},
		{"half of 8 KB", "N=8, A=256, K=16", "N, A", "K", "N", "A, K", kernel.TrfSecondHalf, "TRF-R3"},
		{"16-byte packet", "N=8, K=8", "N", "K", "N", "K", kernel.TrfFull, "TRF-R0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			_, err := DeriveToTRF(spec, ToTRFInput{DType: dtype.BF16, Time: ceM(t, ax, tc.time), Packet: ceM(t, ax, tc.packet),
				Row: ceM(t, ax, tc.row), Element: ceM(t, ax, tc.element), Address: tc.addr})
			var v *Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
		})
	}
	_, err := DeriveToTRF(spec, ToTRFInput{DType: dtype.BF16, Address: "Quarter"})
	assert.Error(t, err)
}

// TestTRFRowCapacity checks the per-Row capacity against the manual's
// numbers: 8 KB per MAC row (002 L139), 128 / 64 rows of 2 × 32 bytes
// (002 L4116-4118), doubled with rows = 4 (002 L4148).
func TestTRFRowCapacity(t *testing.T) {
	spec := Default()
	cases := []struct {
		addr kernel.TrfAddress
		rows int
		want int
	}{
		{kernel.TrfFull, 8, 8 << 10},      // 002 L139: "8 KB × 8 MAC rows / slice"
		{kernel.TrfFull, 4, 16 << 10},     // 002 L4148: "doubling the rows available per Row"
		{kernel.TrfFull, 1, 64 << 10},     // 3 free bank-row bits
		{kernel.TrfFirstHalf, 8, 4 << 10}, // 002 L4153: register_file_size / 2
		{kernel.TrfSecondHalf, 2, 16 << 10},
	}
	for _, tc := range cases {
		got, err := TRFRowCapacity(spec, tc.addr, tc.rows)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s rows %d", tc.addr, tc.rows)
	}
	_, err := TRFRowCapacity(spec, kernel.TrfFull, 3)
	assert.Error(t, err)
}

// TestTRFCacheCapacity checks the read cache's arithmetic, "8 × 4 × 2 × 32 =
// 2,048 bytes" (002 L4186-4189).
func TestTRFCacheCapacity(t *testing.T) {
	c := Default().TRF.Cache
	assert.Equal(t, 2048, c.Lanes.Value*c.RowsPerLane.Value*c.Columns.Value*c.EntryBytes.Value)
	assert.Equal(t, c.TotalBytes.Value, c.Lanes.Value*c.RowsPerLane.Value*c.Columns.Value*c.EntryBytes.Value)
}

// TestTRFLocate checks the layout: every byte of every Row has its own place,
// halves use rows 0-63 and 64-127 (002 L4138), a 64-byte aligned read spans
// both bank columns of one bank row (002 L4111), Row r reads bank row r
// (002 L4117, L4168), and rows < 8 extend into the free bank rows (002 L4148).
func TestTRFLocate(t *testing.T) {
	spec := Default()
	for _, addr := range []kernel.TrfAddress{kernel.TrfFull, kernel.TrfFirstHalf, kernel.TrfSecondHalf} {
		for _, rows := range []int{1, 2, 4, 8} {
			c := kernel.ToTRFConfig{Address: addr, Rows: rows, RegType: 3}
			capacity, err := TRFRowCapacity(spec, addr, rows)
			require.NoError(t, err)
			seen := map[kernel.TRFLocation]bool{}
			for r := 0; r < rows; r++ {
				for b := 0; b < capacity; b++ {
					l, err := TRFLocate(spec, &c, r, b)
					if err != nil {
						t.Fatal(err)
					}
					if seen[l] || l.BankRow >= 8 || l.BankRow%rows != r {
						t.Fatalf("%s rows %d: Row %d byte %d at %v (reused %v)", addr, rows, r, b, l, seen[l])
					}
					seen[l] = true
					if (addr == kernel.TrfFirstHalf && l.Row >= 64) || (addr == kernel.TrfSecondHalf && l.Row < 64) {
						t.Fatalf("%s: Row %d byte %d in bank row %d", addr, r, b, l.Row)
					}
					if b%64 == 0 {
						l2, err := TRFLocate(spec, &c, r, b+32)
						if err != nil || l2.BankRow != l.BankRow || l2.Row != l.Row || l2.Column != 1-l.Column {
							t.Fatalf("%s: 64-byte line at %d spans %v and %v", addr, b, l, l2)
						}
					}
				}
			}
			assert.Len(t, seen, rows*capacity)
		}
	}
	c := kernel.ToTRFConfig{Address: kernel.TrfFull, Rows: 8, RegType: 3}
	l, err := TRFLocate(spec, &c, 3, 70)
	require.NoError(t, err)
	// bf16: 4 slots per element (002 L4147), byte 6 is element 3 → slot 12.
	assert.Equal(t, kernel.TRFLocation{BankRow: 3, Row: 1, Column: 0, Byte: 6, Slot: 12}, l)
	_, err = TRFLocate(spec, &c, 8, 0)
	assert.Error(t, err)
	_, err = TRFLocate(spec, &c, 0, 8192)
	assert.Error(t, err)
}

// TestTRFMemory stores a tensor with to_trf and reads it back through the
// TRF Sequencer of TRF-EX-2 (002 L4249-4295).
func TestTRFMemory(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "M=32, N=8, K=16, L=2, O=2")
	tt, err := DeriveToTRF(spec, ToTRFInput{DType: dtype.BF16, Time: ceM(t, ax, "N, O"), Packet: ceM(t, ax, "K"),
		Row: ceM(t, ax, "N"), Element: ceM(t, ax, "O, K"), Address: kernel.TrfSecondHalf})
	require.NoError(t, err)
	seq, err := DeriveTRFSequencer(spec, TRFSequencerInput{DType: dtype.BF16, Row: ceM(t, ax, "N"), Element: ceM(t, ax, "O, K"),
		OutTime: ceM(t, ax, "O, M"), OutPacket: ceM(t, ax, "L, K")})
	require.NoError(t, err)
	mem, err := NewTRFMemory(spec)
	require.NoError(t, err)
	flit := make([]byte, 32)
	for f := 0; f < 16; f++ { // [N, O] = 16 flits: Row f/2, O = f%2
		for i := range flit {
			flit[i] = byte(f*32 + i)
		}
		require.NoError(t, mem.StoreFlit(&tt, f, flit))
	}
	dst := make([]byte, 64)
	for r := 0; r < 8; r++ {
		for step := 0; step < 64; step++ { // [O, M]: O = step / 32
			require.NoError(t, mem.ReadPacket(&tt, &seq, r, step, dst))
			f := r*2 + step/32
			for i := 0; i < 64; i++ {
				require.Equal(t, byte(f*32+i%32), dst[i], "Row %d step %d byte %d", r, step, i)
			}
		}
	}
	allocs := testing.AllocsPerRun(100, func() { _ = mem.ReadPacket(&tt, &seq, 3, 40, dst) })
	assert.Zero(t, allocs)
	assert.Error(t, mem.StoreFlit(&tt, 16, flit))
	assert.Error(t, mem.ReadPacket(&tt, &seq, 0, 64, dst))
}

// TestCheckTRFRegions checks region isolation (002 L4156-4158).
func TestCheckTRFRegions(t *testing.T) {
	assert.NoError(t, CheckTRFRegions(kernel.TrfFirstHalf, kernel.TrfSecondHalf))
	assert.NoError(t, CheckTRFRegions(kernel.TrfFull))
	for _, ms := range [][]kernel.TrfAddress{
		{kernel.TrfFull, kernel.TrfFirstHalf},
		{kernel.TrfSecondHalf, kernel.TrfSecondHalf},
	} {
		var v *Violation
		require.True(t, errors.As(CheckTRFRegions(ms...), &v))
		assert.Equal(t, "TRF-R8", v.Rule.ID)
	}
	assert.Error(t, CheckTRFRegions("Quarter"))
}
