package search_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/search"
	"tcpmap/verify"
)

// TestGatherIntoLoads: the reduced MoE's up and down projections, planned
// over W_gathered_up and W_gathered_down, rewritten to read the experts'
// rows from W_up and W_down through expert_ids in their own loads
// (search.GatherIntoLoads): every load of the gathered tensor is an
// indirect DMA, the program verifies on the simulator against the einsum
// over the gathered rows (random indices), and it prices as the einsum
// did exactly (the same requests, the table at another 256 MiB multiple). The
// same program with the loads reading the table's first rows in order
// (no indirection) fails.
func TestGatherIntoLoads(t *testing.T) {
	if raceEnabled {
		t.Skip("the simulator under -race: make test runs it in unit-norace")
	}
	// The reduced MoE block's plans, from the committed op plans
	// (cmd/tcpmap's smallMoE).
	w := reducedWorkload(t, "moe.yaml", map[string]int{"T": 32, "D": 32, "F": 32, "E": 8, "K": 2, "GRID": 8})
	gp, err := search.PlanGraph(w, search.GraphOptions{Spec: engines.Default(), VectorOps: true, NoFuse: true, Cache: &search.DirCache{Dir: "testdata/graph/cache"}})
	require.NoError(t, err)
	for _, pair := range [][2]string{{"up_proj", "gather_up"}, {"down_proj", "gather_down"}} {
		var einsum *plan.Plan
		for _, o := range gp.Ops {
			if o.Name == pair[0] {
				einsum = o.Plan
			}
		}
		require.NotNil(t, einsum, pair[0])
		var g *workload.Op
		for _, o := range w.Ops {
			if o.Name == pair[1] {
				g = o
			}
		}
		p, err := search.GatherIntoLoads(engines.Default(), einsum.Program, w, g, g.Outputs[0])
		require.NoError(t, err, pair[0])
		loads := 0
		for _, op := range p.Ops {
			src, _ := p.Tensor(op.Src)
			if op.Kind != kernel.OpToDM || p.Gathered(src) == nil {
				continue
			}
			loads++
			assert.Equal(t, g.Inputs[1], op.Index)
			for _, d := range op.DMA.Descriptors {
				n := 0
				for _, e := range d.Entries {
					if e.Index != nil {
						n++
					}
				}
				assert.Equal(t, 1, n, "one indirect loop a descriptor")
			}
		}
		assert.Positive(t, loads, pair[0])
		rep, err := verify.Verify(engines.Default(), p, verify.Options{Seed: 21})
		require.NoError(t, err, pair[0])
		assert.True(t, rep.Pass, "%s: %s", pair[0], rep)
		c, err := cost.Estimate(engines.Default(), p)
		require.NoError(t, err)
		assert.Equal(t, einsum.Cost.Cycles, c.Cycles, "%s: the same requests, priced the same", pair[0])

		// Without the indirection the loads read rows 0, 1, … of
		// the table: the random indices tell it apart.
		data, err := json.Marshal(p)
		require.NoError(t, err)
		var text kernel.ProgramText
		require.NoError(t, json.Unmarshal(data, &text))
		for _, x := range text.Tensors {
			x.Gather = nil
		}
		for _, op := range text.Ops {
			if op.Index == "" {
				continue
			}
			op.Index = ""
			for i := range op.DMA.Descriptors {
				for k := range op.DMA.Descriptors[i].Entries {
					op.DMA.Descriptors[i].Entries[k].Index = nil
				}
			}
		}
		data, err = json.Marshal(&text)
		require.NoError(t, err)
		plain := &kernel.Program{}
		require.NoError(t, json.Unmarshal(data, plain))
		rep, err = verify.Verify(engines.Default(), plain, verify.Options{Seed: 21})
		if err == nil {
			assert.False(t, rep.Pass, "%s without its index", pair[0])
		}
	}
}
