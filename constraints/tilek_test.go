package constraints

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTileKCheck: K chunks (TileK) are well formed only as the innermost
// tile loops, within MaxKTiles, without split-K or a copied output; their
// footprint holds the partial-sum buffers (two for two chunks, three for
// more), which the enumerator's tilings count. A GEMM whose K of 8192
// bf16 fills two 8 KB TRF Rows of 8 (002 L4118, L4151-4155) enumerates
// chunked candidates, each passing Check.
func TestTileKCheck(t *testing.T) {
	s := levelSpace(t, `name: long-k
einsum: IK,KJ->IJ
axes: {I: 8, J: 16, K: 8192}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`)
	require.True(t, s.TileK())
	var chunked *Candidate
	n := 0
	s.Enumerate(func(c Candidate) bool {
		if s.KTiles(&c) > 1 {
			n++
			require.NoError(t, s.Check(&c))
			if chunked == nil && s.KTiles(&c) == 2 && c.Factor(s.P.AxisIndex("J"), Tile) > 1 {
				x := c
				chunked = &x
			}
		}
		return true
	})
	require.Positive(t, n)
	require.NotNil(t, chunked, "a candidate tiling J and chunking K")
	j, k := s.P.AxisIndex("J"), s.P.AxisIndex("K")
	assert.Equal(t, []int{j, k}, chunked.Tiles(), "K chunks innermost")

	// K outer to J: rejected.
	c := *chunked
	SetOrder(&c.TileOrder, []int{k, j})
	assert.ErrorContains(t, s.Check(&c), "innermost")
	// More than MaxKTiles chunks.
	c = *chunked
	c.Split[k][Tile] *= 8
	c.Split[k][Time] /= 8
	assert.ErrorContains(t, s.Check(&c), "K chunks")
	// Not without the space's TileK.
	assert.Error(t, s.WithTileK(false).Check(chunked))

	// The footprint: two partial-sum buffers of the output tile in f32
	// for two chunks, three for four.
	f, err := s.footprint(chunked)
	require.NoError(t, err)
	// One buffer: the output tile's elements in f32, at least its bf16
	// bytes (each aligned to DMAlign).
	outF32 := f.partial / 2
	assert.Equal(t, 2*outF32, f.partial)
	assert.GreaterOrEqual(t, outF32, f.tensor[TensorOut])
	assert.Zero(t, outF32%DMAlign)
	c = *chunked
	c.Split[k][Tile] *= 2
	c.Split[k][Time] /= 2
	f4, err := s.footprint(&c)
	require.NoError(t, err)
	assert.Equal(t, 3*outF32, f4.partial)
	assert.Equal(t, 0, PartialBuffers(1))
}

// TestPipelinedKChunks: a candidate that fits untiled also comes with
// software-pipelined K chunks (double-buffered, a power of two of them up
// to MaxKTiles), as it comes with pipelined chunks of its output axes; a
// space without TileK has none.
func TestPipelinedKChunks(t *testing.T) {
	s := levelSpace(t, `name: short-k
einsum: IK,KJ->IJ
axes: {I: 8, J: 16, K: 256}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`)
	counts := map[int]int{}
	s.Enumerate(func(c Candidate) bool {
		if k := s.KTiles(&c); k > 1 {
			require.NoError(t, s.Check(&c))
			require.True(t, c.DoubleBuffer, "pipelined K chunks are double-buffered")
			counts[k]++
		}
		return true
	})
	for k := range counts {
		assert.LessOrEqual(t, k, MaxKTiles)
		assert.Zero(t, k&(k-1), "%d chunks: a power of two", k)
	}
	assert.Positive(t, counts[2])
	assert.Positive(t, counts[MaxKTiles])
	s.WithTileK(false).Enumerate(func(c Candidate) bool {
		require.Equal(t, 1, s.KTiles(&c))
		return true
	})
}
