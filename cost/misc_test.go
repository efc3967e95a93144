package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

func TestCast(t *testing.T) {
	// One flit in, one out per cycle: never the bottleneck (002 L6819).
	got, err := Cast(&kernel.CastConfig{Valid: 4, InElems: 8, OutElems: 32}, 16)
	require.NoError(t, err)
	assert.Equal(t, 16, got)
	_, err = Cast(&kernel.CastConfig{Valid: 9, InElems: 8, OutElems: 32}, 16)
	assert.Error(t, err)
	_, err = Cast(nil, 1)
	assert.Error(t, err)
}

func TestPCIe(t *testing.T) {
	// 30 B/cycle for reads and writes (002 L2605, L2845).
	for _, c := range [][2]int{{0, 0}, {30, 1}, {31, 2}, {3000, 100}} {
		got, err := PCIeCycles(spec, c[0])
		require.NoError(t, err)
		assert.Equal(t, c[1], got, "%d bytes", c[0])
	}
	_, err := PCIeCycles(spec, -1)
	assert.Error(t, err)
}

// TestSplitReduce reproduces the LayerNorm split reduce: the partial sums
// [Batch = 32, SeqLen = 128] in f32, one element per packet, fetched
// interleaved from two tensors and added by the Vector Engine
// (002 L7206-7215, L7242-7252).
func TestSplitReduce(t *testing.T) {
	// "2 * (Batch * SeqLen * ceil(Hidden / flit_elements))" with the fetched
	// packet's one element in place of Hidden (docs/spec-decisions.md
	// "Split reduce estimate").
	perTensor, err := FetchCycles(32*128, 1, 1)
	require.NoError(t, err)
	ve, err := VectorBinaryCycles(32 * 128)
	require.NoError(t, err)
	assert.Equal(t, 4096, ve, "(Batch * SeqLen) cycles (002 L7251)")
	total, err := SplitReduceCycles(2, perTensor, ve, ve)
	require.NoError(t, err)
	assert.Equal(t, 8192, total, "~8K cycles (002 L7252)")
	// "~N * fetch + VE" without overlap (002 L7364).
	total, err = SplitReduceCycles(2, perTensor, ve, 0)
	require.NoError(t, err)
	assert.Equal(t, 2*4096+4096, total)
	_, err = SplitReduceCycles(0, 1, 1, 1)
	assert.Error(t, err)
}

func TestInterSliceReduce(t *testing.T) {
	// "~256 cycles (slice reduction)" for 256 slices (002 L7322, L4369).
	got, err := InterSliceReduceCycles(spec, 0, 256)
	require.NoError(t, err)
	assert.Equal(t, 256, got)
	got, err = InterSliceReduceCycles(spec, 100, 4)
	require.NoError(t, err)
	assert.Equal(t, 104, got, "input streaming time + a ring-sized tail (002 L6743)")
	_, err = InterSliceReduceCycles(spec, 0, 512)
	assert.Error(t, err)
}

// TestRulesWellFormed checks the rules this package declares.
func TestRulesWellFormed(t *testing.T) {
	for _, r := range append(costRules, ruleStoTRFPath) {
		assert.NotEmpty(t, r.ID)
		assert.NotContains(t, r.ID, "#duplicate")
		assert.NotEmpty(t, r.Engine)
		assert.NotEmpty(t, r.Name)
		assert.Regexp(t, `^00[0-4] L\d+`, r.Cite)
		assert.NotEmpty(t, r.Text)
	}
}

func TestEffectString(t *testing.T) {
	assert.Equal(t, "serialize with DMA", SerializeWithDMA.String())
	assert.Equal(t, "Effect(9)", Effect(9).String())
	assert.Contains(t, Finding{Effect: Unpriced}.String(), "unpriced")
}
