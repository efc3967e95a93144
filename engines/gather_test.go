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

// gatherTensor is an HBM tensor of axes (row-major as written) at addr.
func gatherTensor(t *testing.T, axes mapping.Axes, name string, dt dtype.DType, element string, addr int64) *kernel.Tensor {
	t.Helper()
	e, err := mapping.Parse(element, axes, nil)
	require.NoError(t, err)
	return &kernel.Tensor{Name: name, Mem: kernel.HBM, DType: dt, Chip: mapping.Identity(), Element: e, Addr: addr}
}

// TestDeriveGather: a table of 64 rows of 8 × 4 bf16 (64 bytes) gathered
// at 32 index positions is one descriptor per DMN pair's port, the
// indirect entry over each one's positions, dealt out (DMN i takes i and
// i + 16), reading the table at row × 64 bytes (DMA-R16, 002 L1684-1688)
// and writing neighbouring rows; a row's place is its index
// value, a value outside the table is refused; the layouts a gather needs
// are checked.
func TestDeriveGather(t *testing.T) {
	axes, err := mapping.ParseAxes("R=64, A=8, B=4, S=32, C=2")
	require.NoError(t, err)
	table := gatherTensor(t, axes, "table", dtype.BF16, "R, A, B", 0)
	index := gatherTensor(t, axes, "idx", dtype.I32, "S", 1<<20)
	out := gatherTensor(t, axes, "out", dtype.BF16, "S, A, B", 2<<20)
	cmd, err := DeriveGather(Default(), table, index, out)
	require.NoError(t, err)
	require.Len(t, cmd.Descriptors, 16, "32 positions over 16 DMNs")
	engines := map[[2]int]bool{}
	for _, d := range cmd.Descriptors {
		require.NotEmpty(t, d.Entries)
		e := d.Entries[0]
		require.NotNil(t, e.Index)
		assert.Equal(t, kernel.DMAIndex{Tensor: "idx", Offset: e.Index.Offset, Step: 16, Rows: 64}, *e.Index)
		assert.Less(t, e.Index.Offset, 16)
		assert.Equal(t, 2, e.Size)
		assert.Equal(t, 64, e.SrcStride)
		assert.Equal(t, 16*64, e.DstStride)
		assert.Equal(t, 64, d.Stride0, "a row is one packet")
		assert.Equal(t, int(out.Addr)+e.Index.Offset*64, d.DstBase)
		engines[[2]int{d.Dmn.Cluster, d.Dmn.DMN / 2}] = true
	}
	assert.Len(t, engines, 8, "every DMA Engine")

	// Position p reads row 3p+1 of the table: packet q of a descriptor
	// moves position Offset + 16q.
	d := &cmd.Descriptors[5]
	look := func(x *kernel.DMAIndex, pos int) (int, error) { return (3*pos + 1) % 64, nil }
	for q := range d.Packets {
		src, dst, err := DMAPacketIndexed(d, q, look)
		require.NoError(t, err)
		pos := d.Entries[0].Index.Offset + 16*q
		assert.Equal(t, ((3*pos+1)%64)*64, src)
		assert.Equal(t, int(out.Addr)+pos*64, dst)
	}
	_, _, err = DMAPacketIndexed(d, 0, func(*kernel.DMAIndex, int) (int, error) { return 64, nil })
	var v *Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "DMA-R16", v.Rule.ID)
	_, _, err = DMAPacket(d, 0)
	require.True(t, errors.As(err, &v), "an indirect entry without its values: %v", err)

	for _, tc := range []struct {
		name              string
		table, index, out string
		want              string
	}{
		{"gathered axis inside the row", "A, R, B", "S", "S, A, B", "lies inside a row"},
		{"batched", "R, A, B", "A", "A, B", "shares axis A"},
		{"output order", "R, A, B", "S", "A, S, B", "writes the index's axes, then the table's row"},
		{"nothing gathered", "R, A", "S", "S, R, A", "nothing is gathered"},
		{"split axis", "R, A, B", "S", "S / 2, A, B, S % 2", "row-major"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DeriveGather(Default(), gatherTensor(t, axes, "table", dtype.BF16, tc.table, 0),
				gatherTensor(t, axes, "idx", dtype.I32, tc.index, 1<<20), gatherTensor(t, axes, "out", dtype.BF16, tc.out, 2<<20))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDeriveGatherSpread: 6 index positions (the MoE's 254 grids are
// 2 × 127) fill the 16 DMNs with parts of each row: 6 × 2 descriptors,
// each moving half of its rows' packets.
func TestDeriveGatherSpread(t *testing.T) {
	axes, err := mapping.ParseAxes("E=8, D=64, F=64, G=6")
	require.NoError(t, err)
	cmd, err := DeriveGather(Default(), gatherTensor(t, axes, "w", dtype.BF16, "E, D, F", 0),
		gatherTensor(t, axes, "ids", dtype.I32, "G", 1<<20), gatherTensor(t, axes, "wg", dtype.BF16, "G, D, F", 2<<20))
	require.NoError(t, err)
	// A row is 64 × 64 bf16 = 8 KB: packets of 4 KB, two a row.
	require.Len(t, cmd.Descriptors, 12)
	total := 0
	for _, d := range cmd.Descriptors {
		assert.Equal(t, 4096, d.Stride0)
		assert.Equal(t, 4096, d.Bytes, "one position, half a row")
		total += d.Bytes
	}
	assert.Equal(t, 6*8192, total)
}

// TestDeriveGatherDealt: a row of 64 packets (256 KB) is dealt out to the
// 16 DMNs a packet at a time, so that their streams move neighbouring
// packets of one row (002 L2987-2989): DMN j starts at packet j and steps
// 16 packets; a row of 3 packets with 16 index positions fills more DMNs
// with index blocks, which are then taken first.
func TestDeriveGatherDealt(t *testing.T) {
	axes, err := mapping.ParseAxes("E=8, D=256, F=512, G=2")
	require.NoError(t, err)
	cmd, err := DeriveGather(Default(), gatherTensor(t, axes, "w", dtype.BF16, "E, D, F", 0),
		gatherTensor(t, axes, "ids", dtype.I32, "G", 1<<24), gatherTensor(t, axes, "wg", dtype.BF16, "G, D, F", 2<<24))
	require.NoError(t, err)
	require.Len(t, cmd.Descriptors, 16)
	bases := map[int]bool{}
	for _, d := range cmd.Descriptors {
		require.Len(t, d.Entries, 3)
		assert.Equal(t, 2, d.Entries[0].Size, "both index positions")
		assert.Equal(t, entryOf(4, 16*4096), entryOf(d.Entries[1].Size, d.Entries[1].SrcStride), "4 packets, 16 apart")
		assert.Equal(t, d.SrcBase, d.DstBase-2<<24, "the same packet of the row read and written")
		assert.Zero(t, d.SrcBase%4096)
		bases[d.SrcBase/4096] = true
		assert.Equal(t, 2*4*4096, d.Bytes)
	}
	assert.Len(t, bases, 16, "each DMN starts at its own packet 0..15")
	for j := range 16 {
		assert.True(t, bases[j], "packet %d", j)
	}

	axes, err = mapping.ParseAxes("E=32, D=8, F=768, G=16")
	require.NoError(t, err)
	cmd, err = DeriveGather(Default(), gatherTensor(t, axes, "w", dtype.BF16, "E, D, F", 0),
		gatherTensor(t, axes, "ids", dtype.I32, "G", 1<<24), gatherTensor(t, axes, "wg", dtype.BF16, "G, D, F", 2<<24))
	require.NoError(t, err)
	require.Len(t, cmd.Descriptors, 16, "16 index blocks, not 3 parts × 4 blocks")
	for _, d := range cmd.Descriptors {
		assert.Equal(t, 1, d.Entries[0].Size)
		assert.Equal(t, 3*4096, d.Bytes, "a whole row")
	}
}

// entryOf pairs an entry's size and stride for one comparison.
func entryOf(size, stride int) [2]int { return [2]int{size, stride} }
