package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// TestTransposeManual reproduces the transpose cycle calculations
// (002 L6899-6912) of TR-EX-1..4 from the parameters they state.
func TestTransposeManual(t *testing.T) {
	cases := []struct {
		name, cite                      string
		inRows, ppc, inCols, outRows, n int
		want                            int
	}{
		{"TR-EX-1 basic 8x8: 8 + 7 × 8 + 8 = 72", "002 L6925-6942", 8, 1, 8, 8, 8, 72},
		{"TR-EX-2 small matrix: 4 + 0 + 2 = 6", "002 L6957-6975", 4, 1, 8, 2, 1, 6},
		{"TR-EX-3 large column, single buffering: 2 × 64 = 128", "002 L6990-7007", 8, 4, 32, 32, 2, 128},
		{"TR-EX-4 bf16: 4 + 7 × 8 + 8 = 68", "002 L7022-7038", 4, 1, 8, 8, 8, 68},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			double := TransposeDoubleBuffered(spec, c.inCols)
			got, err := TransposeCycles(c.inRows, c.ppc, c.outRows, c.n, double)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.want, got, c.cite)
		})
	}
	// The buffering table: in_cols 8 and 16 double, 32 single (002 L6892-6896).
	assert.True(t, TransposeDoubleBuffered(spec, 8))
	assert.True(t, TransposeDoubleBuffered(spec, 16))
	assert.False(t, TransposeDoubleBuffered(spec, 32))
	_, err := TransposeCycles(0, 1, 1, 1, true)
	assert.Error(t, err)
}

// TestTransposeLowered prices TR-EX-1 and TR-EX-3 lowered by the engines'
// derivation.
func TestTransposeLowered(t *testing.T) {
	cases := []struct {
		name, cite, axes, time, pkt, outTime, outPkt string
		want                                         int
	}{
		{"TR-EX-1", "002 L6921-6942", "P=256, C=8, D=8, E=8", "C, D", "E # 32", "C, E", "D # 32", 72},
		{"TR-EX-3", "002 L6986-7007", "P=256, B=2, C=8, D=4, E=8", "B, C, D", "E # 32", "B, D, E", "C # 32", 128},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ax, err := mapping.ParseAxes(c.axes)
			require.NoError(t, err)
			m := func(s string) *mapping.Expr { return mapping.MustParse(s, ax, nil) }
			cfg, err := engines.DeriveTranspose(spec, engines.TransposeInput{DType: dtype.I8, Time: m(c.time), Packet: m(c.pkt),
				OutTime: m(c.outTime), OutPacket: m(c.outPkt)})
			require.NoError(t, err, c.cite)
			got, err := Transpose(spec, &cfg)
			require.NoError(t, err)
			assert.Equal(t, c.want, got, c.cite)
			cfg.DoubleBuffer = !cfg.DoubleBuffer
			_, err = Transpose(spec, &cfg)
			assert.Error(t, err)
		})
	}
}
