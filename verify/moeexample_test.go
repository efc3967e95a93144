package verify

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/mapping"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// moeExampleGraph is the MoE's expert id expansion (002 L8649-8654) over
// the manual's example's sizes: E = 4 experts, a grid of G = 8 blocks.
const moeExampleGraph = `name: moe-example
chips: 1
axes: {E: 4, GRID: 8}
tensors:
  num_blocks:     {axes: [E], dtype: i32}
  expert_indices: {axes: [E], dtype: i32, values: {kind: iota, axis: E}}
  block_range:    {axes: [GRID], dtype: i32, values: {kind: iota, axis: GRID}}
  diff:           {axes: [E, GRID], dtype: i32}
  has_block:      {axes: [E, GRID], dtype: i32}
  grid:           {axes: [E, GRID], dtype: i32}
  grid_valid:     {axes: [E, GRID], dtype: i32}
  expert_ids:     {axes: [GRID], dtype: i32}
ops:
  - {name: diff,       kind: sub,     inputs: [num_blocks, block_range], outputs: [diff]}
  - {name: has_block,  kind: gt,      inputs: [diff], outputs: [has_block], scalar: 0}
  - {name: grid,       kind: where,   inputs: [has_block, expert_indices], outputs: [grid], scalar: -1}
  - {name: grid_valid, kind: ge,      inputs: [grid], outputs: [grid_valid], scalar: 0}
  - {name: expert_ids, kind: compact, inputs: [grid, grid_valid], outputs: [expert_ids], axes: [E, GRID]}
`

// TestMoEExpertIDsExample: the manual's worked example of the expert id
// expansion (002 L8655-8658: expert 0 has 2 blocks, expert 1 3, expert 3
// 3) through the graph reference: Diff's and Grid's rows as the manual
// writes them, and Expert_IDs = [0, 0, 1, 1, 1, 3, 3, 3], the compaction
// and its expansion in ops of other kinds (workload.Expand) alike.
func TestMoEExpertIDsExample(t *testing.T) {
	w, err := workload.Parse([]byte(moeExampleGraph), "moe-example.yaml")
	require.NoError(t, err)
	x, exps, err := workload.Expand(w)
	require.NoError(t, err)
	require.Len(t, exps, 1, "the compaction is expanded")
	for _, g := range []*workload.Workload{w, x} {
		vals := runGraphRef(t, g, map[string][]float64{"num_blocks": {2, 3, 0, 3}})
		diff := vals["diff"].ref.Vals
		assert.Equal(t, []float64{2, 1, 0, -1, -2}, diff[0:5], "Diff[0] (002 L8656)")
		assert.Equal(t, []float64{3, 2, 1, 0, -1}, diff[8:13], "Diff[1]")
		grid := vals["grid"].ref.Vals
		assert.Equal(t, []float64{0, 0, -1, -1}, grid[0:4], "Grid[0] (002 L8657)")
		assert.Equal(t, []float64{1, 1, 1, -1, -1}, grid[8:13], "Grid[1]")
		assert.Equal(t, []float64{0, 0, 1, 1, 1, 3, 3, 3}, vals["expert_ids"].ref.Vals, "Expert_IDs (002 L8658), %s", g.Name)
		if g == x {
			e := exps[0]
			gx := plan.Expansion(plan.GraphOp{Name: e.Op.Name, Kind: string(e.Op.Kind), Inputs: e.Op.Inputs, Outputs: e.Op.Outputs,
				Axes: e.Op.Axes}, e.Parts)
			require.NoError(t, checkExpansion(&gx, vals, graphValue(x)))
		}
	}
}

// graphValue returns a zero Logical of g's tensor name.
func graphValue(g *workload.Workload) func(string) (*Logical, error) {
	return func(name string) (*Logical, error) {
		tt := g.Tensor(name)
		if tt == nil {
			return nil, fmt.Errorf("no tensor %s", name)
		}
		l := &Logical{Name: name, DType: tt.DType}
		n := 1
		for _, a := range tt.Axes {
			s, ok := g.Axes.Size(a)
			if !ok {
				return nil, fmt.Errorf("no axis %s", a)
			}
			l.Axes = append(l.Axes, mapping.Axis{Name: a, Size: s})
			n *= s
		}
		l.Vals = make([]float64, n)
		return l, nil
	}
}

// runGraphRef runs the graph reference of every op of g in order, the
// inputs given by name (an iota's values from its rule).
func runGraphRef(t *testing.T, g *workload.Workload, inputs map[string][]float64) map[string]*gval {
	t.Helper()
	newVal := graphValue(g)
	vals := map[string]*gval{}
	for _, tt := range g.Tensors {
		if tt.Role != workload.RoleInput {
			continue
		}
		l, err := newVal(tt.Name)
		require.NoError(t, err)
		switch {
		case inputs[tt.Name] != nil:
			copy(l.Vals, inputs[tt.Name])
		case tt.Values != nil && tt.Values.Kind == workload.ValuesIota:
			for i := range l.Vals {
				l.Vals[i] = float64(i)
			}
		case tt.Values != nil:
			coords := make([]int, len(l.Axes))
			pos := axisPos(l)
			for i := range l.Vals {
				l.Coords(i, coords)
				l.Vals[i] = tt.Values.At(coords[pos[tt.Values.Query]], coords[pos[tt.Values.Key]])
			}
		default:
			t.Fatalf("no values for input %s", tt.Name)
		}
		vals[tt.Name] = &gval{ref: l}
	}
	runGraphOps(t, g, vals)
	return vals
}

// runGraphOps runs the graph reference of every op of g in order over
// vals, which holds g's inputs, and adds each op's outputs to it.
func runGraphOps(t *testing.T, g *workload.Workload, vals map[string]*gval) {
	t.Helper()
	newVal := graphValue(g)
	for _, o := range g.Ops {
		op := &plan.GraphOp{Name: o.Name, Kind: string(o.Kind), Inputs: o.Inputs, Outputs: o.Outputs, Axis: o.Axis, Axes: o.Axes,
			Query: o.Query, Key: o.Key, K: o.K, Reduce: o.Reduce, Scalar: o.Scalar}
		var ins, outs []*Logical
		for _, name := range o.Inputs {
			require.Contains(t, vals, name, "op %s", o.Name)
			ins = append(ins, vals[name].ref)
		}
		for _, name := range o.Outputs {
			l, err := newVal(name)
			require.NoError(t, err)
			outs = append(outs, l)
		}
		require.NoError(t, graphRef(op, ins, outs), "op %s", o.Name)
		for k, name := range o.Outputs {
			vals[name] = &gval{ref: outs[k]}
		}
	}
}
