package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// exprProgram is a program with HBM input x over inAxes (type in) and
// output y over outAxes (type out) and an expr reference.
func exprProgram(t *testing.T, axes, inEl, outEl string, in, out dtype.DType, expr string) *kernel.Program {
	t.Helper()
	ax, err := mapping.ParseAxes(axes)
	require.NoError(t, err)
	m := func(s string) *mapping.Expr { return mapping.MustParse(s, ax, nil) }
	return &kernel.Program{Name: "e", Axes: ax, Chips: 1,
		Tensors: []*kernel.Tensor{
			{Name: "x", Mem: kernel.HBM, DType: in, Role: kernel.Input, Chip: m("1"), Element: m(inEl)},
			{Name: "y", Mem: kernel.HBM, DType: out, Role: kernel.Output, Chip: m("1"), Element: m(outEl), Addr: 1 << 20}},
		Reference: &kernel.Reference{Op: kernel.RefExpr, Inputs: []string{"x"}, Output: "y", Expr: expr}}
}

func exprRef(t *testing.T, p *kernel.Program, vals ...float64) *Expected {
	t.Helper()
	xt, _ := p.Tensor("x")
	x, err := NewLogical(p, xt)
	require.NoError(t, err)
	copy(x.Vals, vals)
	exp, err := Reference(p, map[string]*Logical{"x": x})
	require.NoError(t, err)
	return exp
}

// TestRefExpr: the interval evaluation of expression references
// (docs/spec-decisions.md "Expression references").
func TestRefExpr(t *testing.T) {
	// exp(0) = 1, bounded by one ulp of f32.
	e := exprRef(t, exprProgram(t, "A=2", "A", "A", dtype.F32, dtype.F32, "exp(x)"), 0, 1)
	assert.Equal(t, 1.0, e.Out.Vals[0])
	assert.InDelta(t, 1-0x1p-23, e.Lo.Vals[0], 1e-12)
	assert.InDelta(t, 1+0x1p-23, e.Hi.Vals[0], 1e-12)
	assert.InDelta(t, math.E, e.Out.Vals[1], 1e-6)

	// A sum of 4 terms: γ_3 Σ|t| around 10.
	e = exprRef(t, exprProgram(t, "R=4", "R", "1", dtype.F32, dtype.F32, "reduce_sum(x, R)"), 1, 2, 3, 4)
	assert.Equal(t, 10.0, e.Out.Vals[0])
	assert.Less(t, e.Lo.Vals[0], 10.0)
	assert.Greater(t, e.Lo.Vals[0], 10-1e-5)
	assert.Greater(t, e.Hi.Vals[0], 10.0)

	// bf16(): a stored bf16 result, rounded to nearest; the interval's
	// ends rounded too. 1 + 2^-9 rounds to 1 (ties to even), 1 + 3·2^-9
	// to 1 + 2^-7; exp(0)'s interval [1 − 2^-23, 1 + 2^-23] to [1, 1].
	e = exprRef(t, exprProgram(t, "A=3", "A", "A", dtype.F32, dtype.F32, "bf16(x)"), 1+0x1p-9, 1+3*0x1p-9, 0)
	assert.Equal(t, []float64{1, 1 + 0x1p-7, 0}, e.Out.Vals)
	e = exprRef(t, exprProgram(t, "A=1", "A", "A", dtype.F32, dtype.F32, "bf16(exp(x))"), 0)
	assert.Equal(t, []float64{1, 1, 1}, []float64{e.Out.Vals[0], e.Lo.Vals[0], e.Hi.Vals[0]})

	// Softmax's max: exact.
	e = exprRef(t, exprProgram(t, "A=2, R=3", "A, R", "A", dtype.F32, dtype.F32, "reduce_max(x, R)"), 1, 5, 2, -1, -3, -2)
	assert.Equal(t, []float64{5, -1}, e.Out.Vals)
	assert.Equal(t, e.Out.Vals, e.Lo.Vals)
	assert.Equal(t, e.Out.Vals, e.Hi.Vals)

	// i32 arithmetic wraps (AddFxp); sat_add clamps; an i32 sum that can
	// saturate depending on its order is unbounded.
	e = exprRef(t, exprProgram(t, "A=2", "A", "A", dtype.I32, dtype.I32, "x + 100"), math.MaxInt32, -5)
	assert.Equal(t, []float64{math.MinInt32 + 99, 95}, e.Out.Vals)
	assert.Equal(t, e.Out.Vals, e.Lo.Vals)
	// An i32 product wraps exactly (MulInt keeps the low 32 bits), past
	// the 2^53 a float64 holds: (2^30 + 3) · (2^30 + 3) ≡ 6 · 2^30 + 9.
	e = exprRef(t, exprProgram(t, "A=2", "A", "A", dtype.I32, dtype.I32, "x * x"), 1<<30+3, 989498111)
	sq := func(v int64) float64 { return float64(int32(v * v)) }
	assert.Equal(t, []float64{sq(1<<30 + 3), sq(989498111)}, e.Out.Vals)
	assert.Equal(t, e.Out.Vals, e.Lo.Vals)
	assert.Equal(t, e.Out.Vals, e.Hi.Vals)
	e = exprRef(t, exprProgram(t, "A=2", "A", "A", dtype.I32, dtype.I32, "sat_add(x, 100)"), math.MaxInt32, -5)
	assert.Equal(t, []float64{math.MaxInt32, 95}, e.Hi.Vals)
	e = exprRef(t, exprProgram(t, "R=2", "R", "1", dtype.I32, dtype.I32, "reduce_sum(x, R)"), math.MaxInt32, 1)
	assert.Equal(t, []float64{math.MinInt32}, e.Lo.Vals)
	assert.Equal(t, []float64{math.MaxInt32}, e.Hi.Vals)

	// round of a tie that the f32 rounding of 0.5 may move: 0 or 1.
	e = exprRef(t, exprProgram(t, "A=1", "A", "A", dtype.I32, dtype.I32, "round(float(x) * 0.5)"), 1)
	assert.Equal(t, []float64{0}, e.Lo.Vals)
	assert.Equal(t, []float64{1}, e.Hi.Vals)

	// Domains: sqrt of a negative is NaN exactly; a division by an interval
	// holding 0 is unchecked.
	e = exprRef(t, exprProgram(t, "A=3", "A", "A", dtype.F32, dtype.F32, "sqrt(x) + 1.0 / x"), -4, 0, 4)
	assert.True(t, math.IsNaN(e.Lo.Vals[0]))
	assert.True(t, math.IsInf(e.Lo.Vals[1], -1) && math.IsInf(e.Hi.Vals[1], 1))
	assert.InDelta(t, 2.25, e.Out.Vals[2], 1e-9)
	// sin over a range holding its maximum.
	lo, hi := trigRange("sin", 1, 2)
	assert.Equal(t, 1.0, hi)
	assert.InDelta(t, math.Sin(1), lo, 1e-14)

	// Compare with explicit bounds: inside passes, outside fails, a NaN
	// reference needs a NaN, an unchecked element passes and is counted.
	got := &Logical{Name: "y", DType: dtype.F32, Axes: e.Out.Axes, Vals: []float64{math.NaN(), 12345, float64(float32(2.25))}}
	c := Compare(e, got)
	assert.True(t, c.Pass, "%s", c)
	assert.Equal(t, 1, c.Unchecked)
	got.Vals[2] = 2.3
	c = Compare(e, got)
	assert.False(t, c.Pass)
	got.Vals[2], got.Vals[0] = 2.25, 1
	assert.False(t, Compare(e, got).Pass, "a NaN reference requires a NaN")

	for expr, msg := range map[string]string{
		"exp(x)":           "exp takes a real: convert with float()",
		"float(x) + 1":     "of an integer and a real",
		"round(x)":         "round() takes a real",
		"x / 2":            "integer division",
		"reduce_sum(x, B)": "has no axis B",
	} {
		p := exprProgram(t, "A=2, B=2", "A", "A", dtype.I32, dtype.I32, expr)
		xt, _ := p.Tensor("x")
		x, err := NewLogical(p, xt)
		require.NoError(t, err)
		_, err = Reference(p, map[string]*Logical{"x": x})
		require.Error(t, err, expr)
		assert.Contains(t, err.Error(), msg, expr)
	}
	p := exprProgram(t, "A=2, R=2", "A, R", "A", dtype.F32, dtype.F32, "x")
	xt, _ := p.Tensor("x")
	x, err := NewLogical(p, xt)
	require.NoError(t, err)
	_, err = Reference(p, map[string]*Logical{"x": x})
	assert.ErrorContains(t, err, "keeps axis R")
	p = exprProgram(t, "A=2", "A", "A", dtype.F32, dtype.I32, "x")
	x, err = NewLogical(p, p.Tensors[0])
	require.NoError(t, err)
	_, err = Reference(p, map[string]*Logical{"x": x})
	assert.ErrorContains(t, err, "the expression is a real, the output \"y\" is i32")
}

// TestRandomValuesIn: a reference's range bounds the inputs.
func TestRandomValuesIn(t *testing.T) {
	p := exprProgram(t, "A=1000", "A", "A", dtype.I32, dtype.I32, "x")
	x, err := NewLogical(p, p.Tensors[0])
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 1))
	require.NoError(t, RandomValuesIn(rng, x, []float64{-3.5, 2}))
	seen := map[float64]bool{}
	for _, v := range x.Vals {
		assert.True(t, v >= -3 && v <= 2, "%v", v)
		seen[v] = true
	}
	assert.Len(t, seen, 6, "every integer of [-3, 2]")
	x.DType = dtype.BF16
	require.NoError(t, RandomValuesIn(rng, x, []float64{0, 4}))
	for _, v := range x.Vals {
		assert.True(t, v >= 0 && v <= 4 && dtype.Round(v, dtype.BF16) == v)
	}
	assert.Error(t, RandomValuesIn(rng, x, []float64{2, 1}))
}

// TestWidenInfinity: one f32 rounding widens a finite end and keeps an
// infinite one (−∞ + x is −∞ exactly; widening it by u·|−∞| gave NaN, and
// a causal mask's −∞ left its softmax rows unchecked), and the graph's
// distance of −∞ from −∞ is 0.
func TestWidenInfinity(t *testing.T) {
	for _, c := range []struct{ lo, hi float64 }{
		{math.Inf(-1), math.Inf(-1)}, {math.Inf(-1), 1}, {-1, math.Inf(1)}, {math.Inf(1), math.Inf(1)},
	} {
		lo, hi := widen(c.lo, c.hi, uOp)
		assert.False(t, math.IsNaN(lo) || math.IsNaN(hi), "%v", c)
		assert.LessOrEqual(t, lo, c.lo)
		assert.GreaterOrEqual(t, hi, c.hi)
		if math.IsInf(c.lo, 0) {
			assert.Equal(t, c.lo, lo)
		}
		if math.IsInf(c.hi, 0) {
			assert.Equal(t, c.hi, hi)
		}
	}
	lo, hi := widen(1, 2, uOp)
	assert.Less(t, lo, 1.0)
	assert.Greater(t, hi, 2.0)
	assert.Zero(t, distance(math.Inf(-1), math.Inf(-1)))
	assert.True(t, math.IsInf(distance(math.Inf(-1), 0), 1))
	assert.Equal(t, 0.5, distance(1, 1.5))
}
