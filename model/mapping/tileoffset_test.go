package mapping

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTileOffset checks the manual's tiles against the position semantics:
// position q of a tile's view is position TileOffset + q of the base, and
// it holds the view's index shifted by start along the tiled dimension.
func TestTileOffset(t *testing.T) {
	a, err := ParseAxes("A=8,B=512")
	require.NoError(t, err)
	base := MustParse("A, B", a, nil)
	for _, tc := range []struct {
		name       string
		dim        string
		n, start   int
		wantOffset int // derived: start × the extent of base's digits inner to dim
		firstB     int // the B coordinate the tile starts at
	}{
		// 002 L820-823: tile01 = tile::<m![B], 2, _>(0) covers B 0..1,
		// tile23 = (2) covers B 2..3.
		{"tile01", "B", 2, 0, 0, 0},
		{"tile23", "B", 2, 2, 2, 2},
		// 002 L957-966: tile::<m![B / 32], 2, _>(i) covers blocks i, i+1 of
		// 32 elements; tile 14 is the last (blocks 14, 15).
		{"block 1", "B / 32", 2, 1, 32, 32},
		{"block 14", "B / 32", 2, 14, 14 * 32, 14 * 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dim := MustParse(tc.dim, a, nil)
			off, err := TileOffset(base, dim, tc.n, tc.start)
			require.NoError(t, err)
			assert.Equal(t, tc.wantOffset, off)
			view, err := TileView(base, dim, tc.n, Top)
			require.NoError(t, err)
			live := 0
			for q := 0; q < view.Size(); q++ {
				vc := view.Map(q)
				if vc.Kind != Live {
					continue
				}
				live++
				bc := base.Map(off + q)
				require.Equal(t, Live, bc.Kind, "q=%d", q)
				assert.Equal(t, vc.Index.Get("A"), bc.Index.Get("A"), "q=%d", q)
				assert.Equal(t, vc.Index.Get("B")+tc.firstB, bc.Index.Get("B"), "q=%d", q)
			}
			assert.Equal(t, 8*tc.n*(512/dim.Size()), live, "live cells: A × n × (B / |dim|)")
		})
	}
	// 002 L963-966: with 16 blocks, a 2-block tile cannot start at 15.
	_, err = TileOffset(base, MustParse("B / 32", a, nil), 2, 15)
	assert.ErrorContains(t, err, "does not fit")
	// B is not one run of digits of m![B % 32, B / 32]: no tile along it.
	_, err = TileOffset(MustParse("B % 32, B / 32", a, nil), MustParse("B", a, nil), 2, 0)
	assert.ErrorContains(t, err, "not a digit")
}
