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

// pointItv is a scalar interval holding the one value v.
func pointItv(v float64, isInt bool) *itv {
	x := newItv(nil, isInt)
	x.mid[0], x.lo[0], x.hi[0] = v, v, v
	return x
}

// rangeItv is a scalar interval [lo, hi] whose point evaluation is mid.
func rangeItv(mid, lo, hi float64, isInt bool) *itv {
	x := newItv(nil, isInt)
	x.mid[0], x.lo[0], x.hi[0] = mid, lo, hi
	return x
}

// TestRefExprBits: the bit functions of the expression language — the
// branchless top-k's packing (002 L8543-8590) — exact on exact operands,
// bounded by the operands' signs otherwise, and unchecked where the bits
// are not known (a real interval, a NaN).
func TestRefExprBits(t *testing.T) {
	u32 := func(v uint32) float64 { return float64(int32(v)) }
	packed := u32(math.Float32bits(-1.5) | 3) // int32(0xBFC00003)
	inf := math.Inf(1)
	unchecked := [2]float64{math.Inf(-1), inf}
	for _, c := range []struct {
		expr   string
		given  map[string]*itv
		mid    float64
		lo, hi float64
	}{
		{"bit_or(bits(x), i)", map[string]*itv{"x": pointItv(-1.5, false), "i": pointItv(3, true)}, packed, packed, packed},
		{"from_bits(bit_and(p, -65536))", map[string]*itv{"p": pointItv(packed, true)}, -1.5, -1.5, -1.5},
		{"bit_xor(p, bit_and(shr(p, 31), 2147418112))", map[string]*itv{"p": pointItv(-1, true)},
			u32(0xffffffff ^ 0x7fff0000), u32(0xffffffff ^ 0x7fff0000), u32(0xffffffff ^ 0x7fff0000)},
		{"bit_xor(p, bit_and(shr(p, 31), 2147418112))", map[string]*itv{"p": pointItv(packed, true)},
			float64(int32(packed) ^ 0x7fff0000), float64(int32(packed) ^ 0x7fff0000), float64(int32(packed) ^ 0x7fff0000)},
		{"bit_xor(p, bit_and(shr(p, 31), 2147418112))", map[string]*itv{"p": pointItv(5, true)}, 5, 5, 5},
		// −0's bits are the sign's.
		{"bits(x)", map[string]*itv{"x": pointItv(math.Copysign(0, -1), false)}, u32(0x80000000), u32(0x80000000), u32(0x80000000)},
		{"bits(x)", map[string]*itv{"x": pointItv(math.Inf(-1), false)}, u32(0xff800000), u32(0xff800000), u32(0xff800000)},
		// A shift of 32 or more, or a negative one, shifts by 31.
		{"shr(p, 40)", map[string]*itv{"p": pointItv(-8, true)}, -1, -1, -1},
		{"shr(p, 0 - 1)", map[string]*itv{"p": pointItv(1<<30, true)}, 0, 0, 0},
		{"shr(p, 3)", map[string]*itv{"p": pointItv(-9, true)}, -2, -2, -2},
		// Unchecked: the bits of a real interval, of NaN, of a zero of
		// either sign; a float of a NaN pattern or of an integer interval.
		{"bits(x)", map[string]*itv{"x": rangeItv(1, 1-0x1p-20, 1+0x1p-20, false)}, u32(math.Float32bits(1)), unchecked[0], unchecked[1]},
		{"bits(x)", map[string]*itv{"x": pointItv(math.NaN(), false)}, u32(math.Float32bits(float32(math.NaN()))), unchecked[0], unchecked[1]},
		{"bits(x)", map[string]*itv{"x": rangeItv(0, math.Copysign(0, -1), 0, false)}, 0, unchecked[0], unchecked[1]},
		{"from_bits(p)", map[string]*itv{"p": pointItv(u32(0x7fc00001), true)}, math.NaN(), unchecked[0], unchecked[1]},
		{"from_bits(p)", map[string]*itv{"p": rangeItv(0, 0, 1, true)}, 0, unchecked[0], unchecked[1]},
		{"bit_and(p, 65535)", map[string]*itv{"p": rangeItv(packed, math.Inf(-1), inf, true)}, 3, unchecked[0], unchecked[1]},
		// Bounds by sign: the index half of a packed value; an
		// arithmetic shift's ends.
		{"bit_and(p, 65535)", map[string]*itv{"p": rangeItv(packed, math.MinInt32, math.MaxInt32, true)}, 3, 0, 65535},
		{"shr(p, 16)", map[string]*itv{"p": rangeItv(5, -70000, 70000, true)}, 0, -2, 1},
		{"bit_or(p, 3)", map[string]*itv{"p": rangeItv(-4, -8, -2, true)}, -1, -8, -1},
	} {
		n, err := kernel.ParseRefExpr(c.expr)
		require.NoError(t, err, c.expr)
		e := &exprEval{given: c.given, order: map[string]int{}}
		v, err := e.eval(n)
		require.NoError(t, err, c.expr)
		if math.IsNaN(c.mid) {
			assert.True(t, math.IsNaN(v.mid[0]), "%s: mid %v", c.expr, v.mid[0])
		} else {
			assert.Equal(t, c.mid, v.mid[0], "%s: mid", c.expr)
			assert.Equal(t, math.Signbit(c.mid), math.Signbit(v.mid[0]), "%s: mid's sign", c.expr)
		}
		assert.Equal(t, [2]float64{c.lo, c.hi}, [2]float64{v.lo[0], v.hi[0]}, "%s: bounds", c.expr)
	}
	for expr, msg := range map[string]string{
		"bits(i)":       "bits() takes a real",
		"from_bits(x)":  "from_bits() takes an integer",
		"bit_and(x, x)": "bit_and takes integers",
		"shr(x, 1.0)":   "shr takes integers",
		"bit_or(i, x)":  "of an integer and a real",
	} {
		n, err := kernel.ParseRefExpr(expr)
		require.NoError(t, err, expr)
		e := &exprEval{given: map[string]*itv{"x": pointItv(1, false), "i": pointItv(1, true)}, order: map[string]int{}}
		_, err = e.eval(n)
		assert.ErrorContains(t, err, msg, expr)
	}

	// Through a kernel's reference: a bf16 input packed with an index,
	// and an i32 input's upper half as an f32.
	ex := exprRef(t, exprProgram(t, "A=3", "A", "A", dtype.BF16, dtype.I32, "bit_or(bits(x), 3)"), -1.5, 0, 2)
	want := []float64{packed, 3, u32(math.Float32bits(2) | 3)}
	assert.Equal(t, want, ex.Out.Vals)
	assert.Equal(t, want, ex.Lo.Vals)
	assert.Equal(t, want, ex.Hi.Vals)
	ex = exprRef(t, exprProgram(t, "A=2", "A", "A", dtype.I32, dtype.F32, "from_bits(bit_and(x, -65536))"), packed, u32(math.Float32bits(3.25)|0xffff))
	assert.Equal(t, []float64{-1.5, 3.25}, ex.Out.Vals)
	assert.Equal(t, ex.Out.Vals, ex.Lo.Vals)
	assert.Equal(t, ex.Out.Vals, ex.Hi.Vals)
}

// TestBitRangeSound: the bounds of bit_and, bit_or, bit_xor and shr over
// intervals hold every result of values in them (random intervals of
// either sign, random values inside, the ends included).
func TestBitRangeSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	draw := func() float64 {
		switch rng.IntN(4) {
		case 0:
			return float64(rng.IntN(64) - 32)
		case 1:
			return float64(int32(rng.Uint32()))
		default:
			return float64(rng.IntN(1<<20) - 1<<19)
		}
	}
	in := func(lo, hi float64) float64 {
		switch rng.IntN(4) {
		case 0:
			return lo
		case 1:
			return hi
		}
		return lo + math.Floor(rng.Float64()*(hi-lo+1))
	}
	for _, op := range []string{"bit_and", "bit_or", "bit_xor", "shr"} {
		for k := 0; k < 2000; k++ {
			al, ah, bl, bh := draw(), draw(), draw(), draw()
			if op == "shr" && k%2 == 0 {
				bl, bh = float64(rng.IntN(40)-4), float64(rng.IntN(40)-4)
			}
			al, ah = math.Min(al, ah), math.Max(al, ah)
			bl, bh = math.Min(bl, bh), math.Max(bl, bh)
			lo, hi := bitRange(op, al, ah, bl, bh)
			require.LessOrEqual(t, lo, hi, "%s [%v, %v] [%v, %v]", op, al, ah, bl, bh)
			for j := 0; j < 20; j++ {
				a, b := in(al, ah), in(bl, bh)
				r := bitOf(op, a, b)
				require.True(t, r >= lo && r <= hi, "%s(%v, %v) = %v outside [%v, %v] of [%v, %v] [%v, %v]", op, a, b, r, lo, hi, al, ah, bl, bh)
			}
		}
	}
}
