package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// packOf is the manual's packed value of a bf16 score and an index (002
// L8547), computed from Go's float32 bits.
func packOf(score float32, index int32) int32 {
	return int32(math.Float32bits(score)&0xffff0000) | index
}

// TestGraphRefBitKinds: the graph reference of the branchless top-k's bit
// kinds (model/workload/op.go; 002 L8543-8590) — pack, unpack, sort_key,
// bit_and with a tensor and with a scalar — and gt of two i32 tensors
// broadcast against each other.
func TestGraphRefBitKinds(t *testing.T) {
	ax := func(n string, s int) mapping.Axis { return mapping.Axis{Name: n, Size: s} }
	E4, E2, F2 := ax("E", 4), ax("E", 2), ax("F", 2)
	bf, i32 := dtype.BF16, dtype.I32
	out := func(d dtype.DType, axes ...mapping.Axis) *Logical {
		n := 1
		for _, a := range axes {
			n *= a.Size
		}
		return &Logical{Name: "out", DType: d, Axes: axes, Vals: make([]float64, n)}
	}
	f64 := func(vs ...int32) []float64 {
		var r []float64
		for _, v := range vs {
			r = append(r, float64(v))
		}
		return r
	}
	negZero := math.Copysign(0, -1)
	inf := float32(math.Inf(1))
	mask := -65536.0
	lowHalf := 65535.0
	// Scores as bf16 values; 1 + 2^-12 is no bf16 value: pack takes the
	// bf16 it is stored as, 1.
	scores := []float64{-1.5, negZero, 1 + 0x1p-12, math.Inf(1)}
	packed := []int32{packOf(-1.5, 0), packOf(float32(negZero), 1), packOf(1, 2), packOf(inf, 3)}
	nanBits := int32(0x7fc10005)              // a NaN's upper half
	subnormal := int32(0x00010007)            // a subnormal bf16's
	minusOneKey := packOf(-1, 9) ^ 0x7fff0000 // sort_key of a negative packed value
	negZeroKey := packOf(float32(negZero), 0) ^ 0x7fff0000
	for _, tc := range []struct {
		name string
		op   plan.GraphOp
		ins  []*Logical
		out  *Logical
		want []float64
	}{
		{"pack", plan.GraphOp{Name: "p", Kind: "pack"},
			[]*Logical{glogical("s", bf, []mapping.Axis{E4}, scores...), glogical("i", i32, []mapping.Axis{E4}, 0, 1, 2, 3)},
			out(i32, E4), f64(packed...)},
		{"pack broadcast", plan.GraphOp{Name: "p", Kind: "pack"},
			[]*Logical{glogical("s", bf, []mapping.Axis{F2}, -1.5, 2), glogical("i", i32, []mapping.Axis{E2}, 0, 1)},
			out(i32, E2, F2), f64(packOf(-1.5, 0), packOf(2, 0), packOf(-1.5, 1), packOf(2, 1))},
		{"unpack", plan.GraphOp{Name: "u", Kind: "unpack"},
			[]*Logical{glogical("p", i32, []mapping.Axis{E4}, f64(packed...)...)},
			// +Inf packed with index 3 is an f32 NaN pattern, which the
			// cast to bf16 keeps a NaN: top-k's scores are finite.
			out(bf, E4), []float64{-1.5, negZero, 1, math.NaN()}},
		{"unpack of a NaN and a subnormal pattern", plan.GraphOp{Name: "u", Kind: "unpack"},
			[]*Logical{glogical("p", i32, []mapping.Axis{E2}, f64(nanBits, subnormal)...)},
			out(bf, E2), []float64{math.NaN(), 0}}, // a subnormal bf16 reads as zero (RN L891)
		{"sort_key", plan.GraphOp{Name: "k", Kind: "sort_key"},
			[]*Logical{glogical("p", i32, []mapping.Axis{E4}, f64(packOf(2, 3), packOf(-1, 9), packOf(float32(negZero), 0), 0)...)},
			out(i32, E4), f64(packOf(2, 3), minusOneKey, negZeroKey, 0)},
		{"bit_and scalar", plan.GraphOp{Name: "a", Kind: "bit_and", Scalar: &lowHalf},
			[]*Logical{glogical("p", i32, []mapping.Axis{E4}, f64(packed...)...)},
			out(i32, E4), []float64{0, 1, 2, 3}},
		{"bit_and tensors", plan.GraphOp{Name: "a", Kind: "bit_and"},
			[]*Logical{glogical("p", i32, []mapping.Axis{E2}, f64(packOf(-1.5, 7), -1)...), glogical("m", i32, nil, mask)},
			out(i32, E2), f64(packOf(-1.5, 0), -65536)},
		{"gt of two tensors", plan.GraphOp{Name: "g", Kind: "gt"},
			[]*Logical{glogical("a", i32, []mapping.Axis{F2}, 5, -3), glogical("b", i32, []mapping.Axis{E2}, -3, 5)},
			out(i32, E2, F2), []float64{1, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, graphRef(&tc.op, tc.ins, []*Logical{tc.out}))
			require.Len(t, tc.out.Vals, len(tc.want))
			for i, w := range tc.want {
				g := tc.out.Vals[i]
				if math.IsNaN(w) {
					assert.True(t, math.IsNaN(g), "element %d: %v", i, g)
					continue
				}
				assert.Equal(t, w, g, "element %d", i)
				assert.Equal(t, math.Signbit(w), math.Signbit(g), "element %d: the sign of %v", i, w)
			}
		})
	}
	// The sort key orders packed values as their scores, then indices.
	vals := []float32{float32(math.Inf(-1)), -2, -1.5, -1e-30, float32(negZero), 0, 1e-30, 1.5, 2, inf}
	var prev int32
	for k, v := range vals {
		for i := int32(0); i < 3; i++ {
			key := sortKey(packOf(float32(dtype.Round(float64(v), dtype.BF16)), i))
			if k > 0 || i > 0 {
				assert.Greater(t, key, prev, "%v index %d", v, i)
			}
			prev = key
		}
	}
}

// TestGraphRefTopKOrder: topk ranks as the manual's packed sort keys do
// (002 L8547-8552): descending by value, among equal values the higher
// index first, +0 above −0, the values compared as the input stores them.
func TestGraphRefTopKOrder(t *testing.T) {
	negZero := math.Copysign(0, -1)
	E8, K8 := mapping.Axis{Name: "E", Size: 8}, mapping.Axis{Name: "K", Size: 8}
	// 1 + 2^-12 is stored as the bf16 1: a tie with the 1 at index 4,
	// which ranks first.
	x := glogical("x", dtype.BF16, []mapping.Axis{E8}, 0, negZero, 1+0x1p-12, -1.5, 1, negZero, -1.5, 0)
	vals := &Logical{Name: "v", DType: dtype.BF16, Axes: []mapping.Axis{K8}, Vals: make([]float64, 8)}
	idx := &Logical{Name: "i", DType: dtype.I32, Axes: []mapping.Axis{K8}, Vals: make([]float64, 8)}
	require.NoError(t, graphRef(&plan.GraphOp{Name: "k", Kind: "topk", Axis: "E", K: "K"}, []*Logical{x}, []*Logical{vals, idx}))
	assert.Equal(t, []float64{4, 2, 7, 0, 5, 1, 6, 3}, idx.Vals)
	assert.Equal(t, []float64{1, 1, 0, 0, negZero, negZero, -1.5, -1.5}, vals.Vals)
	for k, v := range vals.Vals {
		assert.Equal(t, k >= 4 && k < 6, math.Signbit(v) && v == 0, "value %d: %v", k, v)
	}
}

// topkWorkload is a graph of one topk of bf16 scores [T, E] keeping K.
func topkWorkload(t *testing.T, T, E, K int) *workload.Workload {
	t.Helper()
	src := fmt.Sprintf(`name: topk
chips: 1
axes: {T: %d, E: %d, K: %d}
tensors:
  scores:  {axes: [T, E], dtype: bf16}
  topv:    {axes: [T, K], dtype: bf16}
  topi:    {axes: [T, K], dtype: i32}
ops:
  - {name: topk, kind: topk, inputs: [scores], outputs: [topv, topi], axis: E, k: K}
`, T, E, K)
	w, err := workload.Parse([]byte(src), "topk.yaml")
	require.NoError(t, err)
	return w
}

// TestTopKExpansionEqualsReference: the graph reference of topk's
// expansion into the manual's branchless form (workload.Expand: pack,
// sort_key, the all-pairs gt, the rank's sum, its one-hot, the placing
// mul and sum, unpack and bit_and; 002 L8534-8594), run part by part,
// equals topk's own reference exactly (checkExpansion), on random bf16
// scores with deliberate ties, −0 and +0 in one row, and scores that are
// no bf16 value (as an einsum's float64 reference hands on) tying after
// rounding.
func TestTopKExpansionEqualsReference(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct{ T, E, K int }{{6, 8, 3}, {5, 8, 8}, {4, 16, 5}} {
		t.Run(fmt.Sprintf("T%d_E%d_K%d", c.T, c.E, c.K), func(t *testing.T) {
			w := topkWorkload(t, c.T, c.E, c.K)
			x, exps, err := workload.Expand(w)
			require.NoError(t, err)
			require.Len(t, exps, 1)
			kinds := map[workload.Kind]bool{}
			for _, o := range x.Ops {
				kinds[o.Kind] = true
			}
			for _, k := range []workload.Kind{workload.KindPack, workload.KindSortKey, workload.KindGT, workload.KindReduce,
				workload.KindUnpack, workload.KindBitAnd} {
				assert.True(t, kinds[k], "the expansion has a %s", k)
			}
			assert.False(t, kinds[workload.KindTopK])

			newVal := graphValue(x)
			rng := rand.New(rand.NewPCG(uint64(c.T*1000+c.E), 7))
			pool := []float64{-2, -1.5, negZero, 0, 0.5, 1, 1 + 0x1p-12, 3, -1.5 - 0x1p-14}
			vals := map[string]*gval{}
			for _, tt := range x.Tensors {
				if tt.Role != workload.RoleInput {
					continue
				}
				l, err := newVal(tt.Name)
				require.NoError(t, err)
				coords := make([]int, len(l.Axes))
				pos := axisPos(l)
				for i := range l.Vals {
					l.Coords(i, coords)
					switch {
					case tt.Values != nil && tt.Values.Kind == workload.ValuesIota:
						l.Vals[i] = float64(coords[pos[tt.Values.Axis]])
					case tt.Values != nil:
						l.Vals[i] = tt.Values.At(coords[pos[tt.Values.Query]], coords[pos[tt.Values.Key]])
					case coords[0] == 0 && coords[1] < 8:
						// Row 0: ±0, ties of 1 (one stored from 1 + 2^-12)
						// and of −1.5.
						l.Vals[i] = []float64{0, negZero, 1 + 0x1p-12, -1.5, 1, negZero, -1.5, 0}[coords[1]]
					case rng.IntN(2) == 0:
						l.Vals[i] = pool[rng.IntN(len(pool))]
					default:
						l.Vals[i] = dtype.Round(rng.NormFloat64(), dtype.BF16)
					}
				}
				vals[tt.Name] = &gval{ref: l}
			}
			require.Contains(t, vals, "scores")
			runGraphOps(t, x, vals)
			e := exps[0]
			gx := plan.Expansion(plan.GraphOp{Name: e.Op.Name, Kind: string(e.Op.Kind), Inputs: e.Op.Inputs, Outputs: e.Op.Outputs,
				Axis: e.Op.Axis, K: e.Op.K}, e.Parts)
			require.NoError(t, checkExpansion(&gx, vals, newVal))

			// The check has teeth: the old tie rule (ties to the lower
			// index) is not what the parts compute.
			topi := vals["topi"].ref
			if c.E > 8 {
				return // row 0's other scores may rank first
			}
			require.Equal(t, []float64{4, 2}, topi.Vals[:2], "row 0: the tie of 1s, the higher index first")
			if c.K >= 6 {
				assert.Equal(t, []float64{4, 2, 7, 0, 5, 1}, topi.Vals[:6], "row 0: +0 above −0")
			}
			topi.Vals[0], topi.Vals[1] = 2, 4
			assert.ErrorContains(t, checkExpansion(&gx, vals, newVal), "its parts compute")
		})
	}
}
