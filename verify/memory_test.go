package verify

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/plan"
)

// TestMemoryBudget: a verification whose estimate passes its budget is
// refused before anything is allocated, with the estimate and the way
// out; within the budget (or with none) it runs. The estimate counts the
// inputs' and the output's elements at their rates.
func TestMemoryBudget(t *testing.T) {
	p, _, err := LoadKernel(filepath.Join("..", "workloads", "kernels", "hello-add.json"))
	require.NoError(t, err)
	need := MemoryEstimate(p)
	var in, out int64
	for _, x := range p.Tensors {
		switch {
		case x.Name == p.Reference.Output:
			out += logicalElems(p, x)
		case x.Mem == "hbm" && x.Role == "input" && x.View == "":
			in += logicalElems(p, x)
		}
	}
	require.Positive(t, in)
	require.Positive(t, out)
	assert.Equal(t, in*inputBytesPerElem+out*outputBytesPerElem, need)

	_, err = Verify(engines.Default(), p, Options{Seed: 1, MemoryBudget: need - 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `kernel "`+p.Name+`" needs about`)
	assert.Contains(t, err.Error(), "verify it at reduced sizes")
	for _, budget := range []int64{0, need} {
		q, _, err := LoadKernel(filepath.Join("..", "workloads", "kernels", "hello-add.json"))
		require.NoError(t, err)
		rep, err := Verify(engines.Default(), q, Options{Seed: 1, MemoryBudget: budget})
		require.NoError(t, err, "budget %d", budget)
		assert.True(t, rep.Pass)
	}

	g, err := plan.ReadGraph(filepath.Join("..", "model", "plan", "testdata", "head-64.graph.json"))
	require.NoError(t, err)
	gneed := GraphMemoryEstimate(g)
	require.Positive(t, gneed)
	_, err = VerifyGraph(engines.Default(), g, GraphOptions{Seed: 1, MemoryBudget: gneed - 1})
	assert.ErrorContains(t, err, "graph attention-head needs about")
}

// TestMemoryEpilogue: an einsum with an epilogue holds its intervals too:
// 24 bytes an output element for the einsum's interval, for each operation
// of the epilogue and for the result (the fused attention scale: one
// multiply, 72 bytes).
func TestMemoryEpilogue(t *testing.T) {
	assert.Zero(t, epilogueBytesPerElem(""))
	assert.EqualValues(t, 72, epilogueBytesPerElem("(acc) * 0.088388346"))
	assert.EqualValues(t, 96, epilogueBytesPerElem("(sigmoid((acc))) * 0.5"))
	p, err := plan.Read(filepath.Join("..", "results", "plans", "attention-head-qk+scale.plan.json"))
	require.NoError(t, err)
	q, err := plan.Read(filepath.Join("..", "results", "plans", "attention-head-qk.plan.json"))
	require.NoError(t, err)
	// The same inputs and output: the fused kernel's estimate is the
	// plain one's plus 72 bytes an output element (S × T).
	assert.Equal(t, MemoryEstimate(q.Program)+72*2048*2048, MemoryEstimate(p.Program))
}
