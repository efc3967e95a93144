package workload

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

// TestExpandMoE: the MoE block's two cumsums, its batched gather
// (Token_Rank) and its compaction (Expert_IDs, 002 L8643-8654) become ops
// of kinds with kernels; the others stay. The mask's scan along (T, K)
// scans K, then T's totals in two levels (T = 32 × 32: a product over T
// alone would be 2^27 elements); the gather reuses the graph's one-hot of
// the same index; the compaction's slots are the output's GRID, with the
// block positions the graph has.
func TestExpandMoE(t *testing.T) {
	w := load(t, "moe.yaml")
	nops := len(w.Ops)
	x, exps, err := Expand(w)
	require.NoError(t, err)
	assert.Len(t, w.Ops, nops, "w is not changed")
	var names []string
	for _, e := range exps {
		names = append(names, e.Op.Name)
	}
	assert.Equal(t, []string{"topk", "blocks_scan", "mask_scan", "token_rank", "expert_ids"}, names)
	parts := map[string][]string{}
	for _, e := range exps {
		parts[e.Op.Name] = e.Parts
		for _, p := range e.Parts {
			o := findOp(x, p)
			require.NotNil(t, o, p)
			assert.Equal(t, e.Op.Line, o.Line, "part %s carries its op's line", p)
		}
		assert.Nil(t, findOp(x, e.Op.Name), "%s is replaced", e.Op.Name)
	}
	assert.Equal(t, []string{"blocks_scan_in", "blocks_scan_prod", "blocks_scan_psum"}, parts["blocks_scan"])
	assert.Equal(t, []string{"token_rank_masked", "token_rank_sum"}, parts["token_rank"])
	assert.Equal(t, []string{"cumsum_mask", "expert_mask"}, findOp(x, "token_rank_masked").Inputs, "the graph's one-hot reused")
	// blocks_scan: num_blocks viewed over Er, times the prefix over
	// (Er, E), summed over Er into blocks_cumsum itself.
	pre := x.Tensor("blocks_scan_prefix")
	require.NotNil(t, pre)
	assert.Equal(t, &Values{Kind: ValuesPrefix, Query: "E", Key: "Er"}, pre.Values)
	assert.Equal(t, dtype.I32, pre.DType)
	assert.Equal(t, []string{"blocks_cumsum"}, findOp(x, "blocks_scan_psum").Outputs)
	// mask_scan: T split in two levels.
	for a, n := range map[string]int64{"Thi": 32, "Tlo": 32, "Kr": 8} {
		size, ok := x.AxisSize(a)
		require.True(t, ok, a)
		assert.Equal(t, n, size, a)
	}
	for _, o := range x.Ops {
		if o.Kind == KindMul && slices.Contains(parts["mask_scan"], o.Name) {
			assert.LessOrEqual(t, x.Tensor(o.Outputs[0]).Elems, int64(scanLimit), o.Name)
		}
	}
	assert.Equal(t, []string{"cumsum_mask"}, findOp(x, parts["mask_scan"][len(parts["mask_scan"])-1]).Outputs)
	// expert_ids: one-hot along GRID with new positions (the block
	// range runs over NB, not GRID: docs/spec-decisions.md "The MoE's
	// block range"), then the sums over NB and over E, one reduce each,
	// and the fill write expert_ids.
	oh := findOp(x, "expert_ids_onehot")
	require.NotNil(t, oh)
	assert.Equal(t, "GRID", oh.Axis)
	assert.Equal(t, "expert_ids_pos", oh.Inputs[1])
	assert.Equal(t, &Values{Kind: ValuesIota, Axis: "GRID"}, x.Tensor("expert_ids_pos").Values)
	for _, r := range []struct {
		op, axis string
		out      []string
	}{{"expert_ids_sum2", "NB", []string{"E", "GRID"}}, {"expert_ids_sum3", "E", []string{"GRID"}}} {
		o := findOp(x, r.op)
		require.NotNil(t, o, r.op)
		assert.Equal(t, KindReduce, o.Kind, r.op)
		assert.Equal(t, []string{r.axis}, o.Axes, r.op)
		assert.Equal(t, r.out, x.Tensor(o.Outputs[0]).Axes, r.op)
	}
	assert.Equal(t, findOp(x, "expert_ids_sum3").Outputs, findOp(x, "expert_ids_fill").Inputs)
	fill := findOp(x, "expert_ids_fill")
	assert.Equal(t, []string{"expert_ids"}, fill.Outputs)
	require.NotNil(t, fill.Scalar)
	assert.Equal(t, 1.0, *fill.Scalar)
	// Deterministic.
	y, _, err := Expand(w)
	require.NoError(t, err)
	assert.Equal(t, x, y)
}

// TestExpandTopK: the MoE's top-k is the manual's branchless pipeline
// (002 L8534-8594): pack, sort key, the all-to-all comparison of the keys
// against their view along a copy of E, the rank sum, the placement by
// rank, unpack and the index's mask; a top-k the form does not cover
// keeps its kind.
func TestExpandTopK(t *testing.T) {
	w := load(t, "moe.yaml")
	x, exps, err := Expand(w)
	require.NoError(t, err)
	require.Equal(t, "topk", exps[0].Op.Name)
	assert.Equal(t, []string{"topk_pack", "topk_key", "topk_keyr", "topk_above", "topk_rank", "topk_onehot", "topk_placed",
		"topk_selected", "topk_scores", "topk_indices"}, exps[0].Parts)
	kinds := map[string]Kind{}
	for _, p := range exps[0].Parts {
		kinds[p] = findOp(x, p).Kind
	}
	assert.Equal(t, map[string]Kind{"topk_pack": KindPack, "topk_key": KindSortKey, "topk_keyr": KindReshape, "topk_above": KindGT,
		"topk_rank": KindReduce, "topk_onehot": KindOneHot, "topk_placed": KindMul, "topk_selected": KindReduce,
		"topk_scores": KindUnpack, "topk_indices": KindBitAnd}, kinds)
	// The index packed is the graph's own Expert_Indices (002 L8623).
	assert.Equal(t, []string{"scores", "expert_indices"}, findOp(x, "topk_pack").Inputs)
	// The comparison: the keys over (T, Ec) above the keys over (T, E);
	// T x E x E = 2^24 elements at full size.
	above := findOp(x, "topk_above")
	assert.Equal(t, []string{"topk_keyr", "topk_key"}, above.Inputs)
	assert.Equal(t, []string{"T", "E", "Ec"}, x.Tensor("topk_above").Axes)
	assert.Equal(t, int64(1<<24), x.Tensor("topk_above").Elems)
	assert.Equal(t, []string{"Ec"}, findOp(x, "topk_rank").Axes)
	// The rank's one-hot along K, against new positions along K.
	oh := findOp(x, "topk_onehot")
	assert.Equal(t, "K", oh.Axis)
	pos := x.Tensor(oh.Inputs[1])
	assert.Equal(t, &Values{Kind: ValuesIota, Axis: "K"}, pos.Values)
	assert.Equal(t, []string{"E"}, findOp(x, "topk_selected").Axes)
	assert.Equal(t, []string{"topk_scores"}, findOp(x, "topk_scores").Outputs)
	ix := findOp(x, "topk_indices")
	assert.Equal(t, []string{"topk_indices"}, ix.Outputs)
	require.NotNil(t, ix.Scalar)
	assert.Equal(t, float64(0xffff), *ix.Scalar)
	// A top-k of f32 scores, or along an axis past 2^15 (unpack rounds
	// the upper half up past an index of 0x8000), keeps its kind.
	for _, src := range []string{
		"name: k\nchips: 1\naxes: {T: 4, E: 8, K: 2}\ntensors:\n  s: {axes: [T, E], dtype: f32}\n  v: {axes: [T, K], dtype: f32}\n  i: {axes: [T, K], dtype: i32}\nops:\n  - {name: tk, kind: topk, inputs: [s], outputs: [v, i], axis: E, k: K}\n",
		"name: k\nchips: 1\naxes: {T: 1, E: 32769, K: 2}\ntensors:\n  s: {axes: [T, E], dtype: bf16}\n  v: {axes: [T, K], dtype: bf16}\n  i: {axes: [T, K], dtype: i32}\nops:\n  - {name: tk, kind: topk, inputs: [s], outputs: [v, i], axis: E, k: K}\n",
	} {
		w, err := Parse([]byte(src), "k.yaml")
		require.NoError(t, err)
		y, exps, err := Expand(w)
		require.NoError(t, err)
		assert.Empty(t, exps)
		assert.Same(t, w, y)
	}
}

// TestExpandKeeps: graphs with nothing to expand come back as they are;
// an op whose exact form needs what its tensors do not give keeps its
// kind: a float cumsum (bf16 sums round), a compaction whose keep mask is
// not known to hold 0 or 1, a gather whose index shares no axis with its
// table (it has a kernel).
func TestExpandKeeps(t *testing.T) {
	for _, f := range []string{"attention-head.yaml", "llama3-70b-decode.yaml", "llama3-70b-prefill.yaml"} {
		w := load(t, f)
		x, exps, err := Expand(w)
		require.NoError(t, err)
		assert.Empty(t, exps, f)
		assert.Same(t, w, x, f)
	}
	src := `name: keeps
chips: 1
axes: {T: 16, E: 8, P: 8}
tensors:
  x:    {axes: [T, E], dtype: f32}
  xs:   {axes: [T, E], dtype: f32}
  g:    {axes: [T, E], dtype: i32}
  k:    {axes: [T, E], dtype: i32}
  c:    {axes: [P], dtype: i32}
  tab:  {axes: [E], dtype: i32}
  idx:  {axes: [T], dtype: i32}
  r:    {axes: [T], dtype: i32}
ops:
  - {name: scan,  kind: cumsum,  inputs: [x], outputs: [xs], axes: [T]}
  - {name: pack,  kind: compact, inputs: [g, k], outputs: [c], axes: [T, E]}
  - {name: look,  kind: gather,  inputs: [tab, idx], outputs: [r], axes: [E]}
`
	w, err := Parse([]byte(src), "keeps.yaml")
	require.NoError(t, err)
	x, exps, err := Expand(w)
	require.NoError(t, err)
	assert.Empty(t, exps)
	assert.Same(t, w, x)
}

// TestPrefixValues: a prefix is an integer tensor over its two axes;
// other shapes and types are refused where the file says so.
func TestPrefixValues(t *testing.T) {
	for _, tc := range []struct{ tensor, err string }{
		{"  p: {axes: [A, B], dtype: i32, values: {kind: prefix, query: B, key: A}}\n", ""},
		{"  p: {axes: [A, B], dtype: f32, values: {kind: prefix, query: B, key: A}}\n", "p.yaml:5:48: tensors.p.values.kind: a prefix is an integer tensor over its query and key axes alone, not f32 p [A, B]"},
		{"  p: {axes: [A, B, C], dtype: i32, values: {kind: prefix, query: B, key: A}}\n", "a prefix is an integer tensor over its query and key axes alone"},
		{"  p: {axes: [A, B], dtype: i32, values: {kind: prefix, query: A, key: A}}\n", "query and key are the same axis A"},
		{"  p: {axes: [A, B], dtype: i32, values: {kind: prefix, axis: A}}\n", "missing required field"},
	} {
		head := "name: p\nchips: 1\naxes: {A: 4, B: 4}\ntensors:\n"
		if strings.Contains(tc.tensor, "C]") {
			head = "name: p\nchips: 1\naxes: {A: 4, B: 4, C: 2}\ntensors:\n"
		}
		src := head + tc.tensor + "  y: {axes: [A, B], dtype: i32}\n  z: {axes: [A, B], dtype: i32}\nops:\n  - {name: m, kind: mul, inputs: [p, y], outputs: [z]}\n"
		w, err := Parse([]byte(src), "p.yaml")
		if tc.err == "" {
			require.NoError(t, err)
			v := w.Tensor("p").Values
			assert.Equal(t, 1.0, v.At(1, 0), "key 0 ≤ query 1")
			assert.Equal(t, 1.0, v.At(2, 2))
			assert.Equal(t, 0.0, v.At(0, 1), "key 1 > query 0")
			continue
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.err)
	}
}

// TestExpandPrimeScan: a scan along an axis of prime length too long to
// multiply out whole (and not splittable) is not expanded, and leaves no
// tensor or axis of its form behind; a short prime one is.
func TestExpandPrimeScan(t *testing.T) {
	src := func(n int) string {
		return "name: prime\nchips: 1\naxes: {P: " + strconv.Itoa(n) + ", E: 64}\ntensors:\n" +
			"  x: {axes: [P, E], dtype: i32}\n  y: {axes: [P, E], dtype: i32}\n" +
			"ops:\n  - {name: scan, kind: cumsum, inputs: [x], outputs: [y], axes: [P]}\n"
	}
	w, err := Parse([]byte(src(65521)), "prime.yaml") // 65521 · 64 · 65521 > 2^28
	require.NoError(t, err)
	x, exps, err := Expand(w)
	require.NoError(t, err)
	assert.Empty(t, exps)
	assert.Same(t, w, x)
	w, err = Parse([]byte(src(127)), "prime.yaml")
	require.NoError(t, err)
	x, exps, err = Expand(w)
	require.NoError(t, err)
	require.Len(t, exps, 1)
	assert.Equal(t, []string{"scan_in", "scan_prod", "scan_psum"}, exps[0].Parts)
	assert.NotNil(t, x.Tensor("scan_prefix"))
}

// TestOpGraphCompactMask: the compaction alone comes with the comparison
// that writes its mask, and expands there; an op of another kind comes
// alone.
func TestOpGraphCompactMask(t *testing.T) {
	w := load(t, "moe.yaml")
	g, err := OpGraph(w, "expert_ids")
	require.NoError(t, err)
	var names []string
	for _, o := range g.Ops {
		names = append(names, o.Name)
	}
	assert.Equal(t, []string{"grid_valid", "expert_ids"}, names)
	assert.Equal(t, findOp(w, "grid_valid").Line, g.Ops[0].Line)
	_, exps, err := Expand(g)
	require.NoError(t, err)
	require.Len(t, exps, 1)
	assert.Equal(t, "expert_ids", exps[0].Op.Name)
	g, err = OpGraph(w, "token_rank")
	require.NoError(t, err)
	require.Len(t, g.Ops, 1)
	assert.Nil(t, MaskOp(w, findOp(w, "token_rank")))
}
