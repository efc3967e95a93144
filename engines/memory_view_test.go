package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/mapping"
)

// TestLiveExtent: a tile view's mapping keeps its parent's strides with
// the tiled digit padded (002 L813-831): its live elements end inside the
// parent, which a tensor placed right after the parent must not collide
// with.
func TestLiveExtent(t *testing.T) {
	d, f := mapping.Sym("D", 8), mapping.Sym("F", 12)
	for _, tc := range []struct {
		name string
		e    *mapping.Expr
		want int
	}{
		// m![D, F]: every position is live.
		{"plain", mapping.Pair(d, f), 96},
		// The tile view of F into 3 tiles of 4, m![D, 1 # 3, F % 4]: the
		// last live element is D = 7 (7·12) plus F % 4 = 3: 88 positions.
		{"tile view", mapping.Pair(d, mapping.Identity().Pad(3, mapping.Top), f.Mod(4)), 7*12 + 3 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := mapping.Factorize(tc.e)
			require.NoError(t, err)
			assert.Equal(t, tc.want, liveExtent(fs), fs.String())
		})
	}
}
