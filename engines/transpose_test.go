package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestTransposeManualExamples reproduces the four Transpose Engine examples
// with every parameter they state.
func TestTransposeManualExamples(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, cite, axes string
		d                dtype.DType
		time, packet     string
		outTime, outPkt  string
		want             kernel.TransposeConfig
	}{
		// in_rows = 8 (D), packets_per_col = 1, elements_per_packet = 8,
		// in_cols = 8, out_rows = 8, output_alignment = 32, n = 8 (C), double.
		{"TR-EX-1 basic 8x8", "002 L6921-6942", "P=256, C=8, D=8, E=8", dtype.I8, "C, D", "E # 32", "C, E", "D # 32",
			kernel.TransposeConfig{ElementBits: 8, InRows: 8, PacketsPerCol: 1, ElementsPerPacket: 8, InCols: 8, OutRows: 8, OutputAlignment: 32, Iterations: 8, DoubleBuffer: true}},
		// in_rows = 4 (A), in_cols = 8 ("B=2 data elements, padded internally to
		// 8"), out_rows = 2 (B) ("6 rows trimmed"), n = 1, double.
		{"TR-EX-2 small matrix", "002 L6953-6975", "P=64, A=4, B=2", dtype.I8, "A", "B # 32", "B", "A # 32",
			kernel.TransposeConfig{ElementBits: 8, InRows: 4, PacketsPerCol: 1, ElementsPerPacket: 8, InCols: 8, OutRows: 2, OutputAlignment: 32, Iterations: 1, DoubleBuffer: true}},
		// in_rows = 8 (C), packets_per_col = 4 (D), in_cols = 32, out_rows = 32,
		// n = 2 (B), single buffering.
		{"TR-EX-3 large column", "002 L6986-7007", "P=256, B=2, C=8, D=4, E=8", dtype.I8, "B, C, D", "E # 32", "B, D, E", "C # 32",
			kernel.TransposeConfig{ElementBits: 8, InRows: 8, PacketsPerCol: 4, ElementsPerPacket: 8, InCols: 32, OutRows: 32, OutputAlignment: 32, Iterations: 2, DoubleBuffer: false}},
		// in_rows = 4 (D), in_cols = 8, out_rows = 8, output_alignment = 16,
		// n = 8 (C), double.
		{"TR-EX-4 bf16", "002 L7018-7038", "P=256, C=8, D=4, E=8", dtype.BF16, "C, D", "E # 16", "C, E", "D # 16",
			kernel.TransposeConfig{ElementBits: 16, InRows: 4, PacketsPerCol: 1, ElementsPerPacket: 8, InCols: 8, OutRows: 8, OutputAlignment: 16, Iterations: 8, DoubleBuffer: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			c, err := DeriveTranspose(spec, TransposeInput{DType: tc.d, Time: ceM(t, ax, tc.time), Packet: ceM(t, ax, tc.packet),
				OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPkt)})
			require.NoError(t, err, tc.cite)
			assert.Equal(t, tc.want, c, tc.cite)
		})
	}
}

// TestTransposeNewerVectors checks the newer library's extra cases
// (computing.md §9.8, non-authoritative): i8 in_cols 16, i4, f32.
func TestTransposeNewerVectors(t *testing.T) {
	spec := Default()
	cases := []struct {
		axes                          string
		d                             dtype.DType
		time, packet, outTime, outPkt string
		inRows, inCols, outRows, n    int
	}{
		{"B=2, C=8, D=2, E=8", dtype.I8, "B, C, D", "E # 32", "B, D, E", "C # 32", 8, 16, 16, 2},
		{"B=4, C=16, E=16", dtype.I4, "B, C", "E # 64", "B, E", "C # 64", 16, 16, 16, 4},
		{"B=4, D=2, E=8", dtype.F32, "B, D", "E", "B, E", "D # 8", 2, 8, 8, 4},
	}
	for _, tc := range cases {
		ax := ceAx(t, tc.axes)
		c, err := DeriveTranspose(spec, TransposeInput{DType: tc.d, Time: ceM(t, ax, tc.time), Packet: ceM(t, ax, tc.packet),
			OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPkt)})
		require.NoError(t, err, tc.axes)
		assert.Equal(t, [4]int{tc.inRows, tc.inCols, tc.outRows, tc.n}, [4]int{c.InRows, c.InCols, c.OutRows, c.Iterations}, tc.axes)
	}
}

// TestTransposeTrimInterleaved tests the decision "Transpose trim keeps
// interleaved padded rows": with packets_per_col = 2 and 4 data elements of
// 8 per packet, the padded rows 4-7 and 12-15 are not at the end, so Trim
// (a row count, 002 L6845-6847) keeps all 16 and OutTime names them.
func TestTransposeTrimInterleaved(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "R=8, D=2, E=4")
	in := TransposeInput{DType: dtype.I8, Time: ceM(t, ax, "R, D"), Packet: ceM(t, ax, "E # 32"),
		OutTime: ceM(t, ax, "D, E # 8"), OutPacket: ceM(t, ax, "R # 32")}
	c, err := DeriveTranspose(spec, in)
	require.NoError(t, err)
	assert.Equal(t, 16, c.OutRows)
	in.OutTime = ceM(t, ax, "D, E")
	_, err = DeriveTranspose(spec, in)
	ceRequireRule(t, err, "TR-R9")
	// Trailing padding is trimmed: one packet per column, E = 4 of 8 kept.
	in = TransposeInput{DType: dtype.I8, Time: ceM(t, ax, "R"), Packet: ceM(t, ax, "E # 32"),
		OutTime: ceM(t, ax, "E"), OutPacket: ceM(t, ax, "R # 32")}
	c, err = DeriveTranspose(spec, in)
	require.NoError(t, err)
	assert.Equal(t, 4, c.OutRows)
}

// TestTransposeRejects covers the Transpose Engine's rules.
func TestTransposeRejects(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, axes                    string
		d                             dtype.DType
		time, packet, outTime, outPkt string
		rule                          string
	}{
		{"bf16 with 8 rows", "C=8, D=8, E=8", dtype.BF16, "C, D", "E # 16", "C, E", "D # 16", "TR-R2"},
		{"in_cols 24", "C=8, D=3, E=8", dtype.I8, "C, D", "E # 32", "D, E", "C # 32", "TR-R3"},
		{"data beyond 8 elements", "C=8, D=8, E=16", dtype.I8, "C, D", "E # 32", "C, E", "D # 32", "TR-R5"},
		{"16-byte packet", "C=8, D=8, E=8", dtype.I8, "C, D", "E # 16", "C, E", "D # 32", "TR-R1"},
		{"rows not in time", "C=8, D=8, E=8, F=8", dtype.I8, "C, D", "E # 32", "C, E", "F # 32", "TR-R9"},
		{"OutTime reordered", "C=8, D=8, E=8", dtype.I8, "C, D", "E # 32", "E, C", "D # 32", "TR-R9"},
		{"i16 in f32 terms", "C=8, D=8, E=8", dtype.I16, "C, D", "E # 16", "C, E", "D # 16", "TR-R2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			_, err := DeriveTranspose(spec, TransposeInput{DType: tc.d, Time: ceM(t, ax, tc.time), Packet: ceM(t, ax, tc.packet),
				OutTime: ceM(t, ax, tc.outTime), OutPacket: ceM(t, ax, tc.outPkt)})
			ceRequireRule(t, err, tc.rule)
		})
	}
}

// TestTransposeBlock checks the data movement against the diagram of
// 002 L6849-6855: input rows 0 1 2 3 / 4 5 6 7 become output rows
// 0 4 8 12 / 1 5 9 13, for TR-EX-3's shape (packets_per_col = 4) and for
// 4-bit elements.
func TestTransposeBlock(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "P=256, B=2, C=8, D=4, E=8")
	c, err := DeriveTranspose(spec, TransposeInput{DType: dtype.I8, Time: ceM(t, ax, "B, C, D"), Packet: ceM(t, ax, "E # 32"),
		OutTime: ceM(t, ax, "B, D, E"), OutPacket: ceM(t, ax, "C # 32")})
	require.NoError(t, err)
	in := make([]byte, c.InRows*c.PacketsPerCol*32)
	for r := 0; r < c.InRows; r++ {
		for col := 0; col < c.InCols; col++ { // M[r][col] = r·in_cols + col
			pc, k := col/8, col%8
			in[(r*c.PacketsPerCol+pc)*32+k] = byte(r*c.InCols + col)
		}
	}
	out := make([]byte, c.OutRows*32)
	require.NoError(t, TransposeBlock(&c, in, out))
	for o := 0; o < c.OutRows; o++ {
		for r := 0; r < 32; r++ {
			want := byte(0)
			if r < c.InRows {
				want = byte(r*c.InCols + o)
			}
			require.Equal(t, want, out[o*32+r], "output row %d element %d", o, r)
		}
	}
	allocs := testing.AllocsPerRun(50, func() { _ = TransposeBlock(&c, in, out) })
	assert.Zero(t, allocs)
	assert.Error(t, TransposeBlock(&c, in[:32], out))

	c4 := kernel.TransposeConfig{ElementBits: 4, InRows: 16, PacketsPerCol: 1, ElementsPerPacket: 16, InCols: 16, OutRows: 16, OutputAlignment: 64, Iterations: 1}
	in4, out4 := make([]byte, 16*32), make([]byte, 16*32)
	for r := 0; r < 16; r++ {
		for k := 0; k < 16; k++ {
			require.NoError(t, dtype.I4.StoreInt(in4[r*32:(r+1)*32], k, int64((r+k)%16-8)))
		}
	}
	require.NoError(t, TransposeBlock(&c4, in4, out4))
	for o := 0; o < 16; o++ {
		for r := 0; r < 64; r++ {
			v, err := dtype.I4.LoadInt(out4[o*32:(o+1)*32], r)
			require.NoError(t, err)
			want := int64(0)
			if r < 16 {
				want = int64((r+o)%16 - 8)
			}
			require.Equal(t, want, v, "row %d element %d", o, r)
		}
	}
}
