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

// TestDeriveScatter: the MoE's dispatch (002 L8664-8675) at a small size:
// T = 16 tokens of a row of D = 32 bf16 (64 bytes), each written at K = 2
// slots of GRID × BLK = 4 × 16. The 32 index positions deal out to 16
// descriptors, a multiple of K, each over positions i, i + 16 (Step 16),
// reading token i/2, then i/2 + 8 (the source stride 8 rows) and writing
// at the index's value times the row (the write side's IndirectLoop,
// Index.Write). A value outside the destination's rows is refused (DMA-R16),
// two positions naming one row too (DMA-R17), and the layouts a scatter
// needs are checked.
func TestDeriveScatter(t *testing.T) {
	axes, err := mapping.ParseAxes("T=16, K=2, D=32, GRID=4, BLK=16")
	require.NoError(t, err)
	data := gatherTensor(t, axes, "x", dtype.BF16, "T, D", 0)
	index := gatherTensor(t, axes, "idx", dtype.I32, "T, K", 1<<20)
	out := gatherTensor(t, axes, "xb", dtype.BF16, "GRID, BLK, D", 2<<20)
	cmd, err := DeriveScatter(Default(), data, index, out)
	require.NoError(t, err)
	require.Len(t, cmd.Descriptors, 16, "32 positions over 16 DMNs")
	offsets := map[int]bool{}
	for _, d := range cmd.Descriptors {
		require.NotEmpty(t, d.Entries)
		e := d.Entries[0]
		require.NotNil(t, e.Index)
		i := e.Index.Offset
		offsets[i] = true
		assert.Equal(t, kernel.DMAIndex{Tensor: "idx", Offset: i, Step: 16, Rows: 64, Write: true}, *e.Index)
		assert.Equal(t, 2, e.Size)
		assert.Equal(t, 8*64, e.SrcStride, "16 positions on: 8 tokens on")
		assert.Equal(t, 64, e.DstStride, "a destination row")
		assert.Equal(t, 64, d.Stride0, "a row is one packet")
		assert.Equal(t, int(data.Addr)+i/2*64, d.SrcBase, "position i holds token i / K")
		assert.Equal(t, int(out.Addr), d.DstBase)
	}
	assert.Len(t, offsets, 16)

	// Position p writes row 3p+1 of the destination; packet q of a
	// descriptor moves position Offset + 16q, token (Offset + 16q) / 2.
	d := &cmd.Descriptors[5]
	look := func(x *kernel.DMAIndex, pos int) (int, error) { return (3*pos + 1) % 64, nil }
	for q := range d.Packets {
		src, dst, err := DMAPacketIndexed(d, q, look)
		require.NoError(t, err)
		pos := d.Entries[0].Index.Offset + 16*q
		assert.Equal(t, int(data.Addr)+pos/2*64, src)
		assert.Equal(t, int(out.Addr)+((3*pos+1)%64)*64, dst)
	}
	_, _, err = DMAPacketIndexed(d, 0, func(*kernel.DMAIndex, int) (int, error) { return 64, nil })
	var v *Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "DMA-R16", v.Rule.ID)
	assert.Contains(t, err.Error(), "the destination's 64 rows")

	require.NoError(t, ScatterOnce("idx", []int{3, 1, -1, 2, 64, 0}, 64), "values outside the rows are DMA-R16's")
	err = ScatterOnce("idx", []int{3, 1, 7, 1}, 64)
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "DMA-R17", v.Rule.ID)
	assert.Contains(t, err.Error(), "row 1 at positions 1 and 3")

	// Data of one row, written at every index position: each descriptor
	// reads it at stride 0.
	one, err := DeriveScatter(Default(), gatherTensor(t, axes, "x", dtype.BF16, "D", 0),
		gatherTensor(t, axes, "idx", dtype.I32, "T, K", 1<<20), out)
	require.NoError(t, err)
	require.Len(t, one.Descriptors, 16)
	for _, d := range one.Descriptors {
		assert.Equal(t, 0, d.Entries[0].SrcStride)
		assert.Equal(t, int(data.Addr), d.SrcBase)
	}

	for _, tc := range []struct {
		name             string
		data, index, out string
		want             string
	}{
		{"index minor first", "T, D", "K, T", "GRID, BLK, D", "holds the axes it shares with the data first"},
		{"scattered axis inside the row", "T, D", "T, K", "GRID, D, BLK", "writes the scattered axes, then the data's row"},
		{"index along the output", "T, D", "T, GRID", "GRID, BLK, D", "it does not lie along it"},
		{"no row", "T", "T, K", "GRID, BLK", "no row is left"},
		{"nothing scattered", "T, D", "T, K", "T, D", "nothing to scatter along"},
		{"split axis", "T, D", "T, K", "GRID, BLK / 2, D, BLK % 2", "row-major"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DeriveScatter(Default(), gatherTensor(t, axes, "x", dtype.BF16, tc.data, 0),
				gatherTensor(t, axes, "idx", dtype.I32, tc.index, 1<<20), gatherTensor(t, axes, "xb", dtype.BF16, tc.out, 2<<20))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDeriveScatterSpread: the MoE's full-size rows (D = 2048 bf16, 4 KB,
// one packet) at T = 1024, K = 8: 8192 positions over the 16 DMNs, 512
// each, every byte of the rows written counted once.
func TestDeriveScatterSpread(t *testing.T) {
	axes, err := mapping.ParseAxes("T=1024, K=8, D=2048, GRID=254, BLK=64")
	require.NoError(t, err)
	cmd, err := DeriveScatter(Default(), gatherTensor(t, axes, "x_norm", dtype.BF16, "T, D", 0),
		gatherTensor(t, axes, "scatter_idx", dtype.I32, "T, K", 256<<20), gatherTensor(t, axes, "x_blocked", dtype.BF16, "GRID, BLK, D", 512<<20))
	require.NoError(t, err)
	require.Len(t, cmd.Descriptors, 16)
	total := 0
	for _, d := range cmd.Descriptors {
		assert.Equal(t, 4096, d.Stride0)
		assert.Equal(t, 512, d.Packets)
		assert.Equal(t, 254*64, d.Entries[0].Index.Rows)
		total += d.Bytes
	}
	assert.Equal(t, 1024*8*4096, total)
}
