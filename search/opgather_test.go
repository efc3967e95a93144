package search_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/cost"
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

// TestScatterOp: the MoE's dispatch (002 L8664-8675) at a reduced size is
// one HBM-to-HBM DMA whose indirect loop moves its write side (the
// index's values the rows written), verified on the simulator with
// distinct random rows, the rows no index names unchecked. Without the
// indirection, or with a descriptor reading the index at another token's
// positions, it fails; an
// index naming a row twice is an error of the kernel (DMA-R17). Its
// roofline counts the rows written, not the whole output. An output whose
// layout holds the scattered axes in another order than it declares them
// is refused.
func TestScatterOp(t *testing.T) {
	if raceEnabled {
		t.Skip("the simulator under -race: make test runs it in unit-norace")
	}
	moe := reducedWorkload(t, "moe.yaml", map[string]int{"T": 16, "D": 32, "F": 16, "E": 8, "K": 2, "BLK": 4, "GRID": 12})
	r, err := search.PlanOp(moe, "dispatch", search.Options{})
	require.NoError(t, err)
	pl := r.Plan
	assert.Equal(t, "scatter", pl.OpMapping.Form)
	assert.Equal(t, "exhaustive", pl.Search.Optimal)
	require.Len(t, pl.Program.Ops, 1)
	op := pl.Program.Ops[0]
	assert.Equal(t, kernel.OpHBMToHBM, op.Kind)
	assert.True(t, op.Scatter)
	assert.Equal(t, "scatter_idx", op.Index)
	// 16 tokens × 2 choices of 64 bytes written; x_norm (1 KB) and the
	// index (128 bytes) read: the output's 48 rows are not all written.
	est, err := cost.Estimate(engines.Default(), pl.Program)
	require.NoError(t, err)
	assert.Equal(t, int64(16*2*64), est.Roofline.MinWriteBytes)
	assert.Equal(t, int64(16*32*2+16*2*4), est.Roofline.MinReadBytes)
	rep, err := verify.Verify(engines.Default(), pl.Program, verify.Options{Seed: 11})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	assert.Equal(t, (12*4-16*2)*32, rep.Comparison.Unchecked, "the rows no index names")

	broken := func(edit func(p *kernel.Program)) *verify.Report {
		data, err := json.Marshal(pl.Program)
		require.NoError(t, err)
		p := &kernel.Program{}
		require.NoError(t, json.Unmarshal(data, p))
		require.True(t, p.Ops[0].Scatter, "the program's JSON keeps the scatter")
		edit(p)
		rep, err := verify.Verify(engines.Default(), p, verify.Options{Seed: 11})
		require.NoError(t, err)
		return rep
	}
	plain := broken(func(p *kernel.Program) {
		p.Ops[0].Index, p.Ops[0].Scatter = "", false
		for k := range p.Ops[0].DMA.Descriptors {
			for e := range p.Ops[0].DMA.Descriptors[k].Entries {
				p.Ops[0].DMA.Descriptors[k].Entries[e].Index = nil
			}
		}
	})
	assert.False(t, plain.Pass, "the copy into rows 0, 1, … passed the scatter's check")
	shifted := broken(func(p *kernel.Program) {
		// Descriptor 0 reads the index two positions on, token 1's.
		p.Ops[0].DMA.Descriptors[0].Entries[0].Index.Offset += 2
	})
	assert.False(t, shifted.Pass, "token 0's rows written at token 1's slots passed")

	// The output laid out with its scattered axes in another order than
	// it declares them: the index's value is their position in the
	// declared order, which that layout's rows do not follow.
	data, err := os.ReadFile("../workloads/moe.yaml")
	require.NoError(t, err)
	src := strings.Replace(string(data), "  x_blocked:       {axes: [GRID, BLK, D], dtype: bf16}",
		`  x_blocked:       {axes: [GRID, BLK, D], dtype: bf16, layout: "BLK, GRID, D"}`, 1)
	require.NotEqual(t, string(data), src, "the x_blocked line moved")
	wl, err := workload.Parse([]byte(src), "moe.yaml")
	require.NoError(t, err)
	_, err = search.PlanOp(wl, "dispatch", search.Options{})
	require.ErrorIs(t, err, search.ErrNoKernel)
	assert.ErrorContains(t, err, "moe.yaml:96: op dispatch (scatter): no kernel: x_blocked's layout m![BLK, GRID, D] holds the axes its index addresses as BLK, GRID, but the index's value is their position in the order x_blocked declares them, GRID, BLK")

	// The same kernel on an index naming row 0 twice.
	dev, err := verify.NewDevice(engines.Default(), 1)
	require.NoError(t, err)
	p := pl.Program
	require.NoError(t, engines.Lower(engines.Default(), p))
	idxT, _ := p.Tensor("scatter_idx")
	idx, err := verify.NewLogical(p, idxT)
	require.NoError(t, err)
	for i := range idx.Vals {
		idx.Vals[i] = float64(i)
	}
	idx.Vals[5] = 0
	require.NoError(t, verify.WriteHBMTensor(dev, p, idxT, idx))
	x, err := verify.NewExecutor(dev, p, verify.ExecOptions{})
	require.NoError(t, err)
	err = x.Run()
	var v *engines.Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "DMA-R17", v.Rule.ID)
}
