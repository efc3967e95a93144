package search

import (
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
)

// TestOperandBoundsBelow: in the space of a contraction whose epilogue
// adds a tensor (a residual add, the mask of a causal mask), every legal
// candidate's price is at least each of its bounds, which count the
// tensor's least load (operandDMA), and its program loads the tensor and
// moves it into the VRF.
func TestOperandBoundsBelow(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	w := loadWorkload(t, `name: mm-res
chips: 1
axes: {I: 16, J: 32, K: 64}
tensors:
  a: {axes: [I, K], dtype: bf16}
  b: {axes: [K, J], dtype: bf16}
  c: {axes: [I, J], dtype: f32}
  r: {axes: [I, J], dtype: f32}
  d: {axes: [I, J], dtype: f32}
ops:
  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}
  - {name: res, kind: add, inputs: [c, r], outputs: [d]}
`)
	fw, err := workload.Fuse(w, workload.Fusions(w))
	require.NoError(t, err)
	p, err := constraints.NewProblem(fw, "mm")
	require.NoError(t, err)
	require.Len(t, p.Operands, 1)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	s = s.WithSplitK(false).WithTileK(false).WithClusterK(false).WithRowsOuter(false).WithDealsOut(false).WithClustersInner(false)
	legal := 0
	eachLegalEvery(t, s, sampleEveryN(1), func(c *Candidate, e *Evaluated) {
		legal++
		requireBoundsBelow(t, s, c, e.Report.Cycles)
		loads, vrf := 0, 0
		for _, op := range e.Program.Ops {
			if op.Kind == kernel.OpToDM {
				if src, ok := e.Program.Tensor(op.Src); ok && src.Base() == "r" {
					loads++
				}
			}
			for _, st := range op.Stages {
				if st.Kind == kernel.StToVRF && st.Tensor == "r_vrf" {
					vrf++
				}
			}
		}
		require.Positive(t, loads)
		require.Equal(t, loads, vrf, "each tile of r loaded goes to the VRF once")
	})
	require.Positive(t, legal)
	t.Logf("%d legal candidates checked", legal)
}
