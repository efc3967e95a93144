package engines

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestSpatialReduceBF16 checks SpatialReduce's bf16 path bit for bit
// against the widening LoadF32 states (002 L4391) and the adjacent-pair tree
// (002 L4392), over random bit patterns (NaNs, infinities and subnormals
// included) and every tree depth.
func TestSpatialReduceBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	x, w := make([]byte, 64), make([]byte, 64)
	for iter := 0; iter < 200; iter++ {
		for i := range x {
			x[i], w[i] = byte(rng.Uint32()), byte(rng.Uint32())
		}
		for depth := 0; depth <= 5; depth++ {
			c := kernel.ContractConfig{In: dtype.BF16, Out: dtype.F32, Op: kernel.ReduceAdd, Rows: 1, Width: 32, Depth: depth, Columns: 32 >> depth, Valid: 32 >> depth}
			var s [32]float32
			for i := range s {
				a, err := dtype.BF16.LoadF32(x, i)
				require.NoError(t, err)
				b, err := dtype.BF16.LoadF32(w, i)
				require.NoError(t, err)
				s[i] = a * b
			}
			for n, k := 32, 0; k < depth; k++ {
				n /= 2
				for i := 0; i < n; i++ {
					s[i] = s[2*i] + s[2*i+1]
				}
			}
			out := make([]float32, 32)
			require.NoError(t, SpatialReduce(&c, x, w, out, nil))
			for i := 0; i < c.Columns; i++ {
				assert.Equal(t, math.Float32bits(s[i]), math.Float32bits(out[i]), "iteration %d depth %d column %d", iter, depth, i)
			}
		}
	}
	c := kernel.ContractConfig{In: dtype.BF16, Out: dtype.F32, Rows: 1, Width: 32, Depth: 5, Columns: 1, Valid: 1}
	assert.Error(t, SpatialReduce(&c, x[:32], w, make([]float32, 1), nil), "a short packet is an error")
}
