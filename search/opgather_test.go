package search_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
	"tcpmap/search"
	"tcpmap/verify"
)

// TestGatherOps: the gathers of the MoE layer at reduced size (the weight
// gathers, the combine's gather back, a table of one i32 per row) and the
// prefill layer's RoPE lookup plan as one DMA with an indirect loop and
// verify on the simulator, their indices drawn at random among the
// table's rows; the copy without its indirection reads rows 0, 1, … and
// fails the same check; a gather whose index shares an axis with its
// table (token_rank) is refused, saying so.
func TestGatherOps(t *testing.T) {
	if raceEnabled {
		t.Skip("the simulator under -race: make test runs it in unit-norace")
	}
	moe := reducedWorkload(t, "moe.yaml", map[string]int{"T": 16, "D": 32, "F": 16, "E": 8, "K": 2, "BLK": 4, "GRID": 6})
	prefill := reducedWorkload(t, "llama3-70b-prefill.yaml", map[string]int{"S": 64, "Smax": 128})
	// Rows of 32 packets of 4 KB: each DMN moves packets j and j + 16 of
	// every row (engines.DeriveGather deals a row out).
	wide := reducedWorkload(t, "moe.yaml", map[string]int{"T": 16, "D": 1024, "F": 64, "E": 8, "K": 2, "BLK": 4, "GRID": 6})
	for _, tc := range []struct {
		name string
		w    *workload.Workload
		op   string
	}{
		{"moe/gather_up", moe, "gather_up"},
		{"moe/gather_down", moe, "gather_down"},
		{"moe/gather_back", moe, "gather_back"},
		{"moe/token_block", moe, "token_block"},
		{"prefill/rope_lookup", prefill, "rope_lookup"},
		{"moe/gather_up/dealt", wide, "gather_up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			r, err := search.PlanOp(w, tc.op, search.Options{})
			require.NoError(t, err)
			pl := r.Plan
			assert.Equal(t, "gather", pl.OpMapping.Form)
			assert.Equal(t, "exhaustive", pl.Search.Optimal)
			require.Len(t, pl.Program.Ops, 1)
			op := pl.Program.Ops[0]
			assert.Equal(t, kernel.OpHBMToHBM, op.Kind)
			assert.NotEmpty(t, op.Index)
			rep, err := verify.Verify(engines.Default(), pl.Program, verify.Options{Seed: 11})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "%s", rep)

			// Without the indirection the DMA copies rows 0, 1, …: the
			// random indices tell it apart.
			data, err := json.Marshal(pl.Program)
			require.NoError(t, err)
			plain := &kernel.Program{}
			require.NoError(t, json.Unmarshal(data, plain))
			plain.Ops[0].Index = ""
			for k := range plain.Ops[0].DMA.Descriptors {
				for e := range plain.Ops[0].DMA.Descriptors[k].Entries {
					plain.Ops[0].DMA.Descriptors[k].Entries[e].Index = nil
				}
			}
			rep, err = verify.Verify(engines.Default(), plain, verify.Options{Seed: 11})
			require.NoError(t, err)
			assert.False(t, rep.Pass, "the copy of rows 0, 1, … passed the gather's check")
		})
	}
	_, err := search.PlanOp(moe, "token_rank", search.Options{})
	require.ErrorIs(t, err, search.ErrNoKernel)
	assert.ErrorContains(t, err, "op token_rank (gather): no kernel: the index topk_indices shares axis T with the table cumsum_mask, a batched gather")
}
