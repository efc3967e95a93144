package verify

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
)

func head64(t *testing.T) *plan.Graph {
	t.Helper()
	g, err := plan.ReadGraph(filepath.Join("..", "model", "plan", "testdata", "head-64.graph.json"))
	require.NoError(t, err)
	return g
}

// TestVerifyGraphHead: the attention head at S = T = D = 64 verifies
// whole: qk and pv simulated, pv on the device values the graph carried
// to it, every kernel within its own bound and every tensor within its
// composed bound of the graph's float64 reference.
func TestVerifyGraphHead(t *testing.T) {
	rep, err := VerifyGraph(engines.Default(), head64(t), GraphOptions{Seed: 1})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	assert.Equal(t, 2, rep.Simulated)
	assert.Equal(t, 3, rep.Fed)
	for _, o := range rep.Ops {
		if o.How != "simulated" {
			continue
		}
		require.NotNil(t, o.Kernel)
		require.Len(t, o.Graph, 1)
		assert.Positive(t, o.MACs)
		assert.Equal(t, 4096, o.Graph[0].N)
	}
}

// TestVerifyGraphWrongInput: a kernel fed another tensor than the one its
// op reads still matches its own reference (computed from what it read),
// but not the graph's: the graph comparison catches it.
func TestVerifyGraphWrongInput(t *testing.T) {
	g := head64(t)
	for i := range g.Ops {
		if g.Ops[i].Name == "pv" {
			g.Ops[i].Inputs[0] = "s_raw" // the scores before scaling, masking and softmax
		}
	}
	rep, err := VerifyGraph(engines.Default(), g, GraphOptions{Seed: 1})
	require.NoError(t, err)
	assert.False(t, rep.Pass)
	last := rep.Ops[len(rep.Ops)-1]
	assert.Equal(t, "pv", last.Op)
	assert.True(t, last.Kernel.Pass, "the kernel computed what it read")
	assert.False(t, last.Graph[0].Pass, "the graph's reference disagrees")
}

func glogical(name string, d dtype.DType, axes []mapping.Axis, vals ...float64) *Logical {
	return &Logical{Name: name, DType: d, Axes: axes, Vals: vals}
}

// TestGraphRef: the graph reference of each kind on small hand-computed
// cases (model/workload/op.go's definitions).
func TestGraphRef(t *testing.T) {
	A, B := mapping.Axis{Name: "A", Size: 2}, mapping.Axis{Name: "B", Size: 2}
	f := dtype.F32
	s := 2.0
	for _, tc := range []struct {
		op   plan.GraphOp
		ins  []*Logical
		axes []mapping.Axis
		want []float64
	}{
		{plan.GraphOp{Name: "e", Kind: "einsum"}, []*Logical{glogical("x", f, []mapping.Axis{A, B}, 1, 2, 3, 4), glogical("w", f, []mapping.Axis{B}, 10, 1)},
			[]mapping.Axis{A}, []float64{12, 34}},
		{plan.GraphOp{Name: "m", Kind: "mul", Scalar: &s}, []*Logical{glogical("x", f, []mapping.Axis{A}, 1, -3)}, []mapping.Axis{A}, []float64{2, -6}},
		{plan.GraphOp{Name: "a", Kind: "add"}, []*Logical{glogical("x", f, []mapping.Axis{A, B}, 1, 2, 3, 4), glogical("y", f, []mapping.Axis{A}, 10, 20)},
			[]mapping.Axis{A, B}, []float64{11, 12, 23, 24}},
		{plan.GraphOp{Name: "s", Kind: "softmax", Axis: "B"}, []*Logical{glogical("x", f, []mapping.Axis{A, B}, 0, math.Log(3), 5, 5)},
			[]mapping.Axis{A, B}, []float64{0.25, 0.75, 0.5, 0.5}},
		{plan.GraphOp{Name: "r", Kind: "rmsnorm", Axis: "B"}, []*Logical{glogical("x", f, []mapping.Axis{A, B}, 3, 4, 1, 1)},
			[]mapping.Axis{A, B}, []float64{3 / math.Sqrt(12.5), 4 / math.Sqrt(12.5), 1, 1}},
		{plan.GraphOp{Name: "u", Kind: "silu"}, []*Logical{glogical("x", f, []mapping.Axis{A}, 0, 1)}, []mapping.Axis{A}, []float64{0, 1 / (1 + math.Exp(-1))}},
		{plan.GraphOp{Name: "s", Kind: "sigmoid"}, []*Logical{glogical("x", f, []mapping.Axis{A}, 0, 1)}, []mapping.Axis{A}, []float64{0.5, 1 / (1 + math.Exp(-1))}},
		{plan.GraphOp{Name: "e", Kind: "exp"}, []*Logical{glogical("x", f, []mapping.Axis{A}, 0, 1)}, []mapping.Axis{A}, []float64{1, math.E}},
		{plan.GraphOp{Name: "c", Kind: "cast"}, []*Logical{glogical("x", f, []mapping.Axis{A}, 0.25, 3)}, []mapping.Axis{A}, []float64{0.25, 3}},
		{plan.GraphOp{Name: "c", Kind: "causal_mask", Query: "A", Key: "B"}, []*Logical{glogical("x", f, []mapping.Axis{A, B}, 1, 2, 3, 4)},
			[]mapping.Axis{A, B}, []float64{1, math.Inf(-1), 3, 4}},
		{plan.GraphOp{Name: "g", Kind: "gather", Axes: []string{"A"}}, []*Logical{glogical("t", f, []mapping.Axis{A, B}, 1, 2, 3, 4), glogical("i", dtype.I32, nil, 1)},
			[]mapping.Axis{B}, []float64{3, 4}},
		{plan.GraphOp{Name: "p", Kind: "update_slice", Axis: "A"}, []*Logical{glogical("d", f, []mapping.Axis{A, B}, 1, 2, 3, 4), glogical("s", f, []mapping.Axis{B}, 8, 9)},
			[]mapping.Axis{A, B}, []float64{1, 2, 8, 9}},
		{plan.GraphOp{Name: "v", Kind: "reshape"}, []*Logical{glogical("x", f, []mapping.Axis{A, B}, 1, 2, 3, 4)},
			[]mapping.Axis{{Name: "C", Size: 4}}, []float64{1, 2, 3, 4}},
	} {
		t.Run(tc.op.Kind, func(t *testing.T) {
			n := 1
			for _, a := range tc.axes {
				n *= a.Size
			}
			out := &Logical{Name: "out", DType: f, Axes: tc.axes, Vals: make([]float64, n)}
			require.NoError(t, graphRef(&tc.op, tc.ins, []*Logical{out}))
			got := out
			require.Len(t, got.Vals, len(tc.want))
			for i := range tc.want {
				if math.IsInf(tc.want[i], 0) {
					assert.Equal(t, tc.want[i], got.Vals[i])
					continue
				}
				assert.InDelta(t, tc.want[i], got.Vals[i], 1e-12, "element %d", i)
			}
		})
	}
	err := graphRef(&plan.GraphOp{Name: "t", Kind: "erf"}, nil, []*Logical{{}})
	assert.ErrorContains(t, err, "not implemented")
}

// TestGraphRefMoE: the MoE block's kinds on small hand-computed cases
// (002 L8618-L8705; model/workload/op.go).
func TestGraphRefMoE(t *testing.T) {
	ax := func(n string, s int) mapping.Axis { return mapping.Axis{Name: n, Size: s} }
	T1, T2, E3, E4, K2 := ax("T", 1), ax("T", 2), ax("E", 3), ax("E", 4), ax("K", 2)
	f, i32 := dtype.F32, dtype.I32
	s64, sm1 := 64.0, -1.0
	out := func(d dtype.DType, axes ...mapping.Axis) *Logical {
		n := 1
		for _, a := range axes {
			n *= a.Size
		}
		return &Logical{Name: "out", DType: d, Axes: axes, Vals: make([]float64, n)}
	}
	for _, tc := range []struct {
		name string
		op   plan.GraphOp
		ins  []*Logical
		outs []*Logical
		want [][]float64
	}{
		{"topk", plan.GraphOp{Name: "k", Kind: "topk", Axis: "E", K: "K"}, []*Logical{glogical("x", f, []mapping.Axis{T1, E4}, 1, 5, 3, 5)},
			[]*Logical{out(f, T1, K2), out(i32, T1, K2)}, [][]float64{{5, 5}, {3, 1}}}, // a tie: the higher index first (002 L8547-8552)
		{"one_hot", plan.GraphOp{Name: "o", Kind: "one_hot", Axis: "E"}, []*Logical{glogical("i", i32, []mapping.Axis{T2}, 2, 0)},
			[]*Logical{out(i32, T2, E3)}, [][]float64{{0, 0, 1, 1, 0, 0}}},
		{"reduce", plan.GraphOp{Name: "r", Kind: "reduce", Reduce: "sum", Axes: []string{"T"}}, []*Logical{glogical("x", i32, []mapping.Axis{T2, E3}, 1, 2, 3, 4, 5, 6)},
			[]*Logical{out(i32, E3)}, [][]float64{{5, 7, 9}}},
		{"cumsum", plan.GraphOp{Name: "c", Kind: "cumsum", Axes: []string{"E"}}, []*Logical{glogical("x", i32, []mapping.Axis{T2, E3}, 1, 2, 3, 4, 5, 6)},
			[]*Logical{out(i32, T2, E3)}, [][]float64{{1, 3, 6, 4, 9, 15}}},
		{"ceil_div", plan.GraphOp{Name: "d", Kind: "ceil_div", Scalar: &s64}, []*Logical{glogical("x", i32, []mapping.Axis{E4}, 0, 1, 64, 65)},
			[]*Logical{out(i32, E4)}, [][]float64{{0, 1, 1, 2}}},
		{"where", plan.GraphOp{Name: "w", Kind: "where", Scalar: &sm1}, []*Logical{glogical("c", i32, []mapping.Axis{T2}, 1, 0), glogical("a", i32, []mapping.Axis{T2}, 7, 8)},
			[]*Logical{out(i32, T2)}, [][]float64{{7, -1}}},
		{"compact", plan.GraphOp{Name: "p", Kind: "compact", Axes: []string{"E"}}, []*Logical{glogical("x", i32, []mapping.Axis{E4}, 5, -1, 6, -1), glogical("k", i32, []mapping.Axis{E4}, 1, 0, 1, 0)},
			[]*Logical{out(i32, E3)}, [][]float64{{5, 6, -1}}},
		{"scatter", plan.GraphOp{Name: "s", Kind: "scatter", Axes: []string{"G", "B"}}, []*Logical{glogical("d", f, []mapping.Axis{T2, ax("D", 1)}, 10, 20), glogical("i", i32, []mapping.Axis{T2}, 3, 0)},
			[]*Logical{out(f, ax("G", 2), ax("B", 2), ax("D", 1))}, [][]float64{{20, 0, 0, 10}}},
		// Each token's row at its K = 2 slots; -1 names none.
		{"scatter along K", plan.GraphOp{Name: "s", Kind: "scatter", Axes: []string{"G", "B"}}, []*Logical{glogical("d", f, []mapping.Axis{T2, ax("D", 2)}, 1, 2, 3, 4), glogical("i", i32, []mapping.Axis{T2, ax("K", 2)}, 3, 0, 1, -1)},
			[]*Logical{out(f, ax("G", 2), ax("B", 2), ax("D", 2))}, [][]float64{{1, 2, 3, 4, 0, 0, 1, 2}}},
		{"gather two axes", plan.GraphOp{Name: "g", Kind: "gather", Axes: []string{"G", "B"}}, []*Logical{glogical("t", f, []mapping.Axis{ax("G", 2), ax("B", 2), ax("D", 1)}, 1, 2, 3, 4), glogical("i", i32, []mapping.Axis{T2}, 3, -1)},
			[]*Logical{out(f, T2, ax("D", 1))}, [][]float64{{4, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, graphRef(&tc.op, tc.ins, tc.outs))
			for k, w := range tc.want {
				assert.Equal(t, w, tc.outs[k].Vals, "output %d", k)
			}
		})
	}
}

// TestVerifyGraphRelayout: a relayout the graph states runs on the
// simulator before its consumer — the reduced attention head with q
// stored transposed (m![D, S]) and relayouted for qk (m![S, D]): the
// HBM-to-HBM copy (engines.DeriveRelayout, 002 L2608-2636) holds every
// element of q, and qk verifies on it.
func TestVerifyGraphRelayout(t *testing.T) {
	g := head64(t)
	for i := range g.Tensors {
		if x := &g.Tensors[i]; x.Name == "q" {
			require.Equal(t, "m![S, D]", x.Layout)
			x.Layout = "m![D, S]"
			x.Relayouts = []plan.Relayout{{Consumer: "qk", To: "m![S, D]", Kind: "dma", Bytes: x.Bytes, Cycles: 1000}}
		}
	}
	rep, err := VerifyGraph(engines.Default(), g, GraphOptions{Seed: 1})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	var checks []RelayoutCheck
	for _, o := range rep.Ops {
		checks = append(checks, o.Relayouts...)
	}
	require.Len(t, checks, 1)
	assert.Equal(t, RelayoutCheck{Tensor: "q", From: "m![D, S]", To: "m![S, D]", Elements: 64 * 64, Pass: true}, checks[0])
	assert.Contains(t, rep.String(), "relayout q m![D, S] -> m![S, D]: 0 of 4096 elements differ")
}

// TestRelayoutCheckFails: a relayout copy whose command moves the wrong
// bytes (its first descriptor's source base one element off) is caught.
func TestRelayoutCheckFails(t *testing.T) {
	axes, err := mapping.ParseAxes("S = 16, D = 8")
	require.NoError(t, err)
	gt := &plan.GraphTensor{Name: "q", Axes: []string{"S", "D"}, DType: "f32", Layout: "m![D, S]"}
	r := plan.Relayout{Consumer: "qk", To: "m![S, D]"}
	v := &Logical{Name: "q", DType: dtype.F32, Axes: []mapping.Axis{{Name: "S", Size: 16}, {Name: "D", Size: 8}}, Vals: make([]float64, 128)}
	for i := range v.Vals {
		v.Vals[i] = float64(i)
	}
	ok, err := runRelayout(engines.Default(), axes, gt, r, v, nil)
	require.NoError(t, err)
	assert.True(t, ok.Pass)
	bad, err := runRelayout(engines.Default(), axes, gt, r, v, func(p *kernel.Program) {
		p.Ops[0].DMA.Descriptors[0].SrcBase += 4
	})
	require.NoError(t, err)
	assert.False(t, bad.Pass)
	assert.Positive(t, bad.Mismatches)
}

// TestRelayoutPermutations: every relayout between two row-major orders
// of three axes (36 pairs of the 6 orders) for 1-, 2- and 4-byte
// elements — a transpose of the innermost axis too — derives an
// HBM-to-HBM command (engines.DeriveRelayout) whose simulated copy holds
// every element where the destination layout puts it.
func TestRelayoutPermutations(t *testing.T) {
	axes, err := mapping.ParseAxes("A = 4, B = 8, C = 64")
	require.NoError(t, err)
	orders := [][]string{{"A", "B", "C"}, {"A", "C", "B"}, {"B", "A", "C"}, {"B", "C", "A"}, {"C", "A", "B"}, {"C", "B", "A"}}
	text := func(o []string) string { return "m![" + strings.Join(o, ", ") + "]" }
	for _, dt := range []dtype.DType{dtype.I8, dtype.BF16, dtype.F32} {
		v := &Logical{Name: "x", DType: dt, Axes: []mapping.Axis{{Name: "A", Size: 4}, {Name: "B", Size: 8}, {Name: "C", Size: 64}}, Vals: make([]float64, 4*8*64)}
		for i := range v.Vals {
			v.Vals[i] = float64(i%100 - 50) // exact in i8, bf16 and f32
		}
		for _, from := range orders {
			for _, to := range orders {
				gt := &plan.GraphTensor{Name: "x", Axes: []string{"A", "B", "C"}, DType: dt.String(), Layout: text(from)}
				rc, err := runRelayout(engines.Default(), axes, gt, plan.Relayout{Consumer: "c", To: text(to)}, v, nil)
				require.NoError(t, err, "%s %s -> %s", dt, text(from), text(to))
				assert.True(t, rc.Pass, "%s %s -> %s: %d of %d differ", dt, text(from), text(to), rc.Mismatches, rc.Elements)
			}
		}
	}
}
