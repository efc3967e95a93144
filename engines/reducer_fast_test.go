package engines

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
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

// TestNewReducerMalformed: a configuration whose columns or beats do not fit
// the accumulator's 32 columns (002 L4409) or its own output is refused
// instead of indexing past the Reducer's buffers.
func TestNewReducerMalformed(t *testing.T) {
	spec := Default()
	ax, _ := mapping.ParseAxes("M=4, N=8, K=64")
	p := func(s string) *mapping.Expr { e, _ := mapping.Parse(s, ax, nil); return e }
	rc, err := DeriveReducer(spec, ReducerInput{DType: dtype.BF16, Row: p("N"), Time: p("K / 16, M"), Packet: p("K % 16 # 32"),
		ContractPacket: p("K % 16 / 4"), OutTime: p("M, K % 16 / 4"), OutPacket: p("N"), Kind: kernel.Interleaved})
	require.NoError(t, err)
	_, err = NewReducer(spec, rc)
	require.NoError(t, err)
	for name, mut := range map[string]func(c *kernel.ReducerConfig){
		"valid beyond 32 columns": func(c *kernel.ReducerConfig) { c.Accumulate.Valid = 33 },
		"columns not the tree's":  func(c *kernel.ReducerConfig) { c.Contract.Columns = 200 },
		"too few beats":           func(c *kernel.ReducerConfig) { c.Accumulate.Beats = 1 },
		"out_len beyond columns":  func(c *kernel.ReducerConfig) { c.Accumulate.Kind = kernel.Sequential; c.Accumulate.OutLen = 64 },
		"negative depth":          func(c *kernel.ReducerConfig) { c.Contract.Depth = -1 },
	} {
		c := rc
		c.Accumulate.Loops = append([]kernel.AccLoop(nil), rc.Accumulate.Loops...)
		mut(&c)
		_, err := NewReducer(spec, c)
		assert.Error(t, err, name)
	}
}

// TestCommitTruncateMalformed: a commit_in_size beyond the flit is an
// error, not a slice past it.
func TestCommitTruncateMalformed(t *testing.T) {
	flit := make([]byte, 32)
	for _, n := range []int{-1, 33, 1 << 40} {
		_, err := CommitTruncate(&kernel.CommitConfig{InPacketBytes: 32, CommitInSize: n}, flit)
		assert.Error(t, err, "commit_in_size %d", n)
	}
	p, err := CommitTruncate(&kernel.CommitConfig{InPacketBytes: 32, CommitInSize: 16}, flit)
	require.NoError(t, err)
	assert.Len(t, p, 16)
}
