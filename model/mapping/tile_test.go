package mapping

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManualTileViews(t *testing.T) {
	// 002 L813-831: view.tile::<m![B], 2, m![A, B = 2 # 4]>; L954-971:
	// tile::<m![B / 32], 2, m![A, B / 32 = 2 # 16, B % 32]>, tiles 0..14 overlap.
	a := axes(t, "A=8,B=512")
	for _, tc := range []struct {
		line      string
		base, dim string
		n         int
		view      string
	}{
		{"002 L823", "A, B", "B", 2, "A, B = 2 # 512"},
		{"002 L963", "A, B", "B / 32", 2, "A, B / 32 = 2 # 16, B % 32"},
		{"002 L971 (LEN 1 collapses to 1 # n)", "A, B", "B / 32", 1, "A, 1 # 16, B % 32"},
	} {
		base, dim := parse(t, tc.base, a), parse(t, tc.dim, a)
		view, err := TileView(base, dim, tc.n, Top)
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.view, view.String(), tc.line)
		require.NoError(t, Tile(base, dim, tc.n, parse(t, tc.view, a)), tc.line)
	}
	// L823 writes B = 2 # 4 for a B of 512 (the view keeps B's footprint,
	// L830-831); a footprint that does not match B's extent is rejected.
	err := Tile(parse(t, "A, B", a), parse(t, "B", a), 2, parse(t, "A, B = 2 # 4", a))
	assert.ErrorContains(t, err, "B = 2 # 512")
}
