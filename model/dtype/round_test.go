package dtype

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sameValue compares floats bit for bit, treating every NaN as equal.
func sameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// refWrap wraps v into bits-wide two's complement by Euclidean modulo.
func refWrap(v int64, bits int) int64 {
	m := int64(1) << bits
	r := ((v % m) + m) % m
	if r >= m/2 {
		r -= m
	}
	return r
}

func TestRoundInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	ints := []DType{I4, I5, I8, I9, I16, I32}
	edge := []int64{0, 1, -1, 7, 8, -8, -9, 15, 16, -16, -17, 127, 128, -128, -129, 255, 256, 300,
		32767, 32768, -32768, -32769, math.MaxInt32, math.MaxInt32 + 1, math.MinInt32, math.MinInt32 - 1,
		math.MaxInt64, math.MinInt64}
	for _, d := range ints {
		vals := append([]int64(nil), edge...)
		for range 2000 {
			vals = append(vals, int64(rng.Uint64()), rng.Int64N(1<<20)-1<<19)
		}
		for _, v := range vals {
			want := refWrap(v, d.Bits())
			got, err := RoundInt(v, d)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s(%d)", d, v)
			if math.Abs(float64(v)) < 1<<53 {
				require.Equal(t, float64(want), Round(float64(v), d), "Round %s(%d)", d, v)
			}
		}
		lo, hi, err := d.IntRange()
		require.NoError(t, err)
		assert.Equal(t, refWrap(1<<(d.Bits()-1), d.Bits()), lo, "%s", d)
		assert.Equal(t, -lo-1, hi, "%s", d)
		m, err := d.MaxFinite()
		require.NoError(t, err)
		assert.Equal(t, float64(hi), m)
	}
	// The manual's i4 range: "zero point must be in the source range
	// −8..7 / −128..127" (RN L896).
	lo, hi, _ := I4.IntRange()
	assert.Equal(t, [2]int64{-8, 7}, [2]int64{lo, hi})
	lo, hi, _ = I8.IntRange()
	assert.Equal(t, [2]int64{-128, 127}, [2]int64{lo, hi})

	_, err := RoundInt(1, F32)
	assert.Error(t, err)
	_, _, err = BF16.IntRange()
	assert.Error(t, err)
}

func TestRoundIntNonIntegers(t *testing.T) {
	for _, v := range []float64{0.5, -1.25, math.NaN(), math.Inf(1), math.Inf(-1), 0x1p63, -0x1p64} {
		assert.True(t, math.IsNaN(Round(v, I8)), "Round(%g, i8)", v)
		_, err := I8.Encode(v)
		assert.Error(t, err, "%g", v)
	}
	assert.Equal(t, float64(refWrap(math.MinInt64, 8)), Round(-0x1p63, I8), "-2^63 is an integer: wraps to its low 8 bits")
	assert.Equal(t, float64(refWrap(-(1<<52+3), 8)), Round(-(1<<52+3), I8))
}

func TestRoundFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []DType{BF16, F16, F8E4M3, F8E5M2, F4E2M1, F32} {
		for range 20000 {
			f := randF32(rng, -20, 20)
			v := float64(f)
			r := Round(v, d)
			// Round = decode(encode(f32(v))).
			p, err := d.Encode(v)
			if d == F4E2M1 && f != f {
				require.Error(t, err)
				require.True(t, math.IsNaN(r))
				continue
			}
			require.NoError(t, err)
			back, err := d.Decode(p)
			require.NoError(t, err)
			require.True(t, sameValue(back, r), "%s: %g: %g vs %g", d, v, back, r)
			require.True(t, sameValue(Round(r, d), r), "%s idempotent at %g", d, v)
		}
	}
	// F32 is IEEE f32 (subnormals kept).
	sub := math.Float32frombits(1)
	assert.Equal(t, float64(sub), Round(float64(sub), F32))
}

func TestRoundViaF32(t *testing.T) {
	// The float path rounds to f32 first (002 L6779: the Cast Engine input is
	// f32). v = 1 + 2^-8 + 2^-30 rounds directly to bf16 as 1 + 2^-7 (above
	// the halfway point 1 + 2^-8), but f32 first gives exactly 1 + 2^-8, a
	// bf16 tie that goes to the even code, 1.
	v := 1 + math.Ldexp(1, -8) + math.Ldexp(1, -30)
	require.Equal(t, float32(1+math.Ldexp(1, -8)), toF32(v))
	assert.Equal(t, 1.0, Round(v, BF16))
}

func TestConvert(t *testing.T) {
	tests := []struct {
		v        float64
		from, to DType
		want     float64
		cite     string
	}{
		// i32 → i8 wraps (RN L897): 300 − 256.
		{300, I32, I8, 300 - 256, "RN L897"},
		{-129, I32, I8, -129 + 256, "RN L897"},
		// i4 from_i32: low 4 bits sign-extended (RN L895): 9 − 16.
		{9, I32, I4, 9 - 16, "RN L895"},
		{-8, I4, I32, -8, "RN L895: sign-extended"},
		// Float narrowing follows the f32 rules.
		{1 + math.Ldexp(1, -8), F32, BF16, 1, "RN L891 tie to even"},
		{1000, F32, F8E4M3, 448, "RN L892 saturate"},
		{1e6, F32, F8E5M2, math.Inf(1), "RN L893 overflow → ∞"},
		{448, F8E4M3, BF16, 448, "exact (002 L1978)"},
		{6, F4E2M1, F8E4M3, 6, "RN L894"},
		{math.Inf(-1), F32, BF16, math.Inf(-1), ""},
		{5, I8, F32, 5, "integer to float is exact"},
	}
	for _, tt := range tests {
		got, err := Convert(tt.v, tt.from, tt.to)
		require.NoError(t, err, "%g %s→%s", tt.v, tt.from, tt.to)
		assert.True(t, sameValue(tt.want, got), "%g %s→%s = %g, want %g (%s)", tt.v, tt.from, tt.to, got, tt.want, tt.cite)
	}
	// The manual's fetch cast example: i8 [0, 1, …, 7] → i32 [0, 1, …, 7]
	// (002 L1987-L1988).
	for i := range 8 {
		got, err := Convert(float64(i), I8, I32)
		require.NoError(t, err)
		assert.Equal(t, float64(i), got, "002 L1987-L1988")
	}
	nan, err := Convert(math.NaN(), F32, BF16)
	require.NoError(t, err)
	assert.True(t, math.IsNaN(nan))

	bad := []struct {
		v        float64
		from, to DType
	}{
		{1.5, I8, I32},                          // not an i8
		{200, I8, I32},                          // out of i8 range
		{math.Ldexp(1, -130), BF16, F32},        // a bf16 subnormal does not exist (RN L891)
		{1 + math.Ldexp(1, -10), BF16, F32},     // not a bf16 value
		{math.NaN(), I32, F32},                  // integers have no NaN
		{math.NaN(), F32, I32},                  // NaN cannot become an integer
		{math.NaN(), F32, F4E2M1},               // f4e2m1 has no NaN
		{0.5, F32, I8},                          // a fraction cannot become an integer
		{1, DType(0), F32}, {1, F32, DType(99)}, // invalid types
	}
	for _, tt := range bad {
		_, err := Convert(tt.v, tt.from, tt.to)
		assert.Error(t, err, "%g %s→%s", tt.v, tt.from, tt.to)
	}
}

func TestEncodeDecode(t *testing.T) {
	tests := []struct {
		d DType
		v float64
		p uint32
	}{
		{BF16, 1, 0x3f80}, // f32 1.0 = 0x3f800000, high half
		{F16, 1, 0x3c00},  // exponent 15 = bias
		{F8E4M3, 1, 0x38}, // exponent 7 = bias
		{F8E5M2, 1, 0x3c}, // exponent 15 = bias
		{F32, 1, 0x3f800000},
		{F4E2M1, -6, 0xf},
		{I4, -1, 0xf},
		{I5, -1, 0xff},   // sign-extended in its i8 slot (RN L779)
		{I9, -1, 0xffff}, // sign-extended in its i16 slot (RN L779)
		{I9, 255, 0x00ff},
		{I32, -2, 0xfffffffe},
	}
	for _, tt := range tests {
		p, err := tt.d.Encode(tt.v)
		require.NoError(t, err)
		assert.Equal(t, tt.p, p, "%s(%g)", tt.d, tt.v)
		v, err := tt.d.Decode(p)
		require.NoError(t, err)
		assert.Equal(t, tt.v, v)
	}
	_, err := I4.Decode(0x10)
	assert.Error(t, err, "pattern wider than the slot")
	_, err = BF16.Decode(0x10000)
	assert.Error(t, err)
	_, err = F4E2M1.Encode(math.NaN())
	assert.Error(t, err)
	// An i5 slot holding a byte outside i5's range reads its low 5 bits.
	v, err := I5.Decode(0x10)
	require.NoError(t, err)
	assert.Equal(t, float64(refWrap(0x10, 5)), v)
}

func TestMaxFinite(t *testing.T) {
	// Each maximum is the largest finite decoded value, found by scanning.
	for _, d := range []DType{BF16, F16, F8E4M3, F8E5M2, F4E2M1} {
		best := math.Inf(-1)
		for p := range uint32(1) << d.SlotBits() {
			v, err := d.Decode(p)
			require.NoError(t, err)
			if !math.IsInf(v, 0) && !math.IsNaN(v) && v > best {
				best = v
			}
		}
		m, err := d.MaxFinite()
		require.NoError(t, err)
		assert.Equal(t, best, m, "%s", d)
	}
	m, err := F32.MaxFinite()
	require.NoError(t, err)
	assert.Equal(t, float64(math.MaxFloat32), m)
	m, _ = F4E2M1.MaxFinite()
	assert.Equal(t, 6.0, m, "RN L894: largest code 0x4c of f8e4m3 = 6")
}
