package verify

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

// bf16Step returns the bf16 value k steps (ulps) from x, a bf16 value.
func bf16Step(x float64, k int) float64 {
	b := int32(dtype.BF16FromF32(float32(x)))
	if x < 0 {
		k = -k
	}
	return float64(dtype.F32FromBF16(uint16(b + int32(k))))
}

func TestCompareIntegers(t *testing.T) {
	p := refProgram(t, "I=2, J=3", `{"op": "add", "inputs": ["x"], "output": "y", "scalar": 1}`,
		hbm{"x", "input", "i32", "I, J"}, hbm{"y", "output", "i32", "I, J"})
	e, err := Reference(p, map[string]*Logical{"x": logical(t, p, "x", 0, 1, 2, 3, 4, 2147483647)})
	require.NoError(t, err)
	got := logical(t, p, "y", 1, 2, 3, 4, 5, -2147483648)
	c := Compare(e, got)
	assert.True(t, c.Pass, c.String())
	assert.Zero(t, c.Mismatches)
	assert.Nil(t, c.FirstBad)

	// Off by one at {I: 1, J: 0} and {I: 1, J: 2} (the unwrapped value 2^31).
	got = logical(t, p, "y", 1, 2, 3, 5, 5, 2147483648)
	c = Compare(e, got)
	assert.False(t, c.Pass)
	assert.Equal(t, 2, c.Mismatches)
	require.NotNil(t, c.FirstBad)
	assert.Equal(t, "{I: 1, J: 0}", c.FirstBad.Index)
	assert.Equal(t, 4.0, c.FirstBad.Ref)
	assert.Equal(t, 5.0, c.FirstBad.Got)
	assert.Equal(t, math.Pow(2, 32), c.MaxAbs)
	assert.Equal(t, "{I: 1, J: 2}", c.Worst, "both have an infinite ratio; the larger error is worst")
	assert.Contains(t, c.String(), "y (i32, 6 elements): FAIL, 2 of 6 elements outside the bound; first {I: 1, J: 0}: ref 4, got 5")
}

// dotCase: out[i] = Σ_k a[i,k]·b[k] in bf16.
func dotCase(t *testing.T, n int, a, b []float64) *Expected {
	t.Helper()
	p := refProgram(t, "I=1, K="+strconv.Itoa(n), `{"op": "einsum", "inputs": ["a", "b"], "output": "o"}`,
		hbm{"a", "input", "bf16", "I, K"}, hbm{"b", "input", "bf16", "K"}, hbm{"o", "output", "bf16", "I"})
	e, err := Reference(p, map[string]*Logical{"a": logical(t, p, "a", a...), "b": logical(t, p, "b", b...)})
	require.NoError(t, err)
	return e
}

func gotOf(e *Expected, vals ...float64) *Logical {
	return &Logical{Name: e.Out.Name, DType: e.Out.DType, Axes: e.Out.Axes, Vals: vals}
}

// simulateF32 sums the products in f32 in the given order and rounds to
// bf16 once, as the Contraction Engine does.
func simulateF32(a, b []float64, order []int) float64 {
	var s float32
	for _, i := range order {
		s += float32(a[i]) * float32(b[i])
	}
	return dtype.Round(float64(s), dtype.BF16)
}

func TestCompareFloatBound(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	t.Run("correctly rounded and f32-accumulated results pass", func(t *testing.T) {
		for iter := 0; iter < 200; iter++ {
			n := 1 + rng.Intn(300)
			a, b := make([]float64, n), make([]float64, n)
			for i := range a {
				a[i] = dtype.Round(rng.NormFloat64()*math.Ldexp(1, rng.Intn(20)-10), dtype.BF16)
				b[i] = dtype.Round(rng.NormFloat64(), dtype.BF16)
			}
			e := dotCase(t, n, a, b)
			c := Compare(e, gotOf(e, dtype.Round(e.Out.Vals[0], dtype.BF16)))
			require.True(t, c.Pass, "iter %d correctly rounded: %s", iter, c)
			order := rng.Perm(n)
			c = Compare(e, gotOf(e, simulateF32(a, b, order)))
			require.True(t, c.Pass, "iter %d f32 accumulation: %s", iter, c)
		}
	})
	t.Run("cancellation", func(t *testing.T) {
		// 2^24 + 1 − 2^24 in f32 left to right gives 0, the exact sum is 1:
		// the bound γ_3·(2^25 + 1) ≈ 6 admits the f32 result.
		a := []float64{1 << 24, 1, -(1 << 24)}
		b := []float64{1, 1, 1}
		e := dotCase(t, 3, a, b)
		assert.Equal(t, 1.0, e.Out.Vals[0])
		got := simulateF32(a, b, []int{0, 1, 2})
		require.Equal(t, 0.0, got)
		c := Compare(e, gotOf(e, got))
		assert.True(t, c.Pass, c.String())
		assert.Greater(t, c.Bound, 1.0)
		c = Compare(e, gotOf(e, 8))
		assert.False(t, c.Pass, "8 is beyond γ_3·(2^25+1) ≈ 6: %s", c)
	})
	t.Run("a few ulps beyond the bound fail", func(t *testing.T) {
		// All terms positive: Σ|ab| = |Σab|, so E ≈ 64·2^-24·|r|, far below
		// one bf16 ulp (2^-7 |r|): the result may be off by one rounding of
		// the output, not by two ulps.
		n := 64
		a, b := make([]float64, n), make([]float64, n)
		for i := range a {
			a[i] = dtype.Round(1+rng.Float64(), dtype.BF16)
			b[i] = dtype.Round(1+rng.Float64(), dtype.BF16)
		}
		e := dotCase(t, n, a, b)
		r := e.Out.Vals[0]
		rounded := dtype.Round(r, dtype.BF16)
		assert.True(t, Compare(e, gotOf(e, rounded)).Pass)
		for _, k := range []int{2, 3, -2, -3} {
			c := Compare(e, gotOf(e, bf16Step(rounded, k)))
			assert.False(t, c.Pass, "off by %d ulps: %s", k, c)
			require.NotNil(t, c.FirstBad)
			assert.Equal(t, "{I: 0}", c.FirstBad.Index)
			assert.Equal(t, r, c.FirstBad.Ref)
			assert.LessOrEqual(t, c.FirstBad.Lo, rounded)
			assert.GreaterOrEqual(t, c.FirstBad.Hi, rounded)
			assert.LessOrEqual(t, c.FirstBad.Hi-c.FirstBad.Lo, 2*(bf16Step(rounded, 1)-rounded), "the interval spans at most the two bf16 neighbours of r")
		}
	})
	t.Run("bound scales with the reduction length", func(t *testing.T) {
		// With cancellation, the allowed deviation grows with n: γ_n Σ|ab|.
		var bounds []float64
		for _, n := range []int{16, 256} {
			a, b := make([]float64, n), make([]float64, n)
			for i := range a {
				a[i] = float64(1-2*(i%2)) * 1024 // ±1024, exact sum 0
				b[i] = 1
			}
			e := dotCase(t, n, a, b)
			require.Equal(t, 0.0, e.Out.Vals[0])
			c := Compare(e, gotOf(e, 0))
			require.True(t, c.Pass)
			bounds = append(bounds, c.Bound)
			// The bound in f32 terms: γ_n·n·1024 ≈ n²·2^-14.
			g := float64(n) * 0x1p-24
			assert.InDelta(t, g/(1-g)*float64(n)*1024, c.Bound, 0.1*c.Bound+1e-30, "n=%d", n)
		}
		assert.Greater(t, bounds[1], 100*bounds[0])
	})
	t.Run("saturating output dtype", func(t *testing.T) {
		// f8e4m3 saturates at 448 (RN L892): a true 600 must read 448.
		p := refProgram(t, "K=2", `{"op": "einsum", "inputs": ["a", "b"], "output": "o"}`,
			hbm{"a", "input", "f32", "K"}, hbm{"b", "input", "f32", "K"}, hbm{"o", "output", "f8e4m3", "1"})
		e, err := Reference(p, map[string]*Logical{"a": logical(t, p, "a", 300, 300), "b": logical(t, p, "b", 1, 1)})
		require.NoError(t, err)
		assert.True(t, Compare(e, gotOf(e, 448)).Pass)
		assert.False(t, Compare(e, gotOf(e, 416)).Pass)
	})
	t.Run("NaN", func(t *testing.T) {
		e := dotCase(t, 1, []float64{2}, []float64{3})
		c := Compare(e, gotOf(e, math.NaN()))
		assert.False(t, c.Pass)
		assert.True(t, math.IsInf(c.MaxAbs, 1))
	})
}

func TestCompareProblems(t *testing.T) {
	e := dotCase(t, 2, []float64{1, 2}, []float64{3, 4})
	for _, tc := range []struct {
		name string
		got  *Logical
		want string
	}{
		{"nil", nil, "no simulated values"},
		{"dtype", &Logical{DType: dtype.F32, Axes: e.Out.Axes, Vals: []float64{11}}, "simulated values are f32, the reference bf16"},
		{"shape", &Logical{DType: dtype.BF16, Vals: []float64{11}}, "simulated values have axes [] and 1 elements, the reference [I=1] and 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(e, tc.got)
			assert.False(t, c.Pass)
			assert.Contains(t, c.Problem, tc.want)
			assert.Contains(t, c.String(), "FAIL: "+tc.want)
		})
	}
	assert.False(t, Compare(nil, nil).Pass)
}

func TestComparisonStringPass(t *testing.T) {
	e := dotCase(t, 2, []float64{1, 2}, []float64{3, 4})
	c := Compare(e, gotOf(e, 11))
	require.True(t, c.Pass)
	assert.Equal(t, "o (bf16, 1 elements): pass; max abs error 0, max rel error 0; bound "+fmt.Sprintf("%.3g", c.Bound)+" at {I: 0}", c.String())
}
