package dtype

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests below derive every expected value from bit arithmetic or from a
// slow reference that decodes each format from its field definition and
// rounds by searching the sorted list of representable values.

// refFormat is an independent description of a narrow float format:
// the value of every finite non-negative code, built from the field layout.
type refFormat struct {
	name     string
	vals     []float64 // ascending
	codes    []uint32
	signBit  uint32
	tiesUp   bool    // ties go to the larger magnitude (f8e5m2, RN L893) instead of the even code
	subLimit float64 // if > 0: inputs below it round among codes < subCodes only (f8e5m2's clamp, RN L893)
	subCodes uint32
	nan      uint32
	flushF32 bool // f32 subnormal inputs become signed zero (bf16, RN L891)
}

// fieldValue decodes a finite code with e exponent bits, m mantissa bits and
// the given bias, the textbook way.
func fieldValue(code uint32, e, m uint, bias int) float64 {
	exp := int(code>>m) & (1<<e - 1)
	man := float64(code & (1<<m - 1))
	if exp == 0 {
		return man * math.Pow(2, float64(1-bias)-float64(m))
	}
	return (1 + man/math.Pow(2, float64(m))) * math.Pow(2, float64(exp-bias))
}

func newRef(name string, e, m uint, bias int, maxCode uint32, extra []struct {
	v float64
	c uint32
}) *refFormat {
	r := &refFormat{name: name}
	for c := uint32(0); c <= maxCode; c++ {
		r.vals = append(r.vals, fieldValue(c, e, m, bias))
		r.codes = append(r.codes, c)
	}
	for _, x := range extra {
		r.vals = append(r.vals, x.v)
		r.codes = append(r.codes, x.c)
	}
	r.signBit = 1 << (e + m)
	return r
}

var (
	// bf16: 8 exponent bits, 7 mantissa bits, bias 127; the code after the
	// largest finite (0x7f7f) is +∞ = 0x7f80 at 2^128.
	refBF16 = func() *refFormat {
		r := newRef("bf16", 8, 7, 127, 0x7f7f, []struct {
			v float64
			c uint32
		}{{math.Ldexp(1, 128), 0x7f80}})
		r.nan, r.flushF32 = 0x7fc0, true
		return r
	}()
	// f16: IEEE binary16, +∞ = 0x7c00 at 2^16.
	refF16 = func() *refFormat {
		r := newRef("f16", 5, 10, 15, 0x7bff, []struct {
			v float64
			c uint32
		}{{65536, 0x7c00}})
		r.nan = 0x7e00
		return r
	}()
	// f8e4m3: bias 7, codes up to 0x7e; no ∞, so larger inputs clamp to the
	// last code (RN L892: saturate to 0x7e).
	refE4M3 = func() *refFormat {
		r := newRef("f8e4m3", 4, 3, 7, 0x7e, nil)
		r.nan = 0x7f
		return r
	}()
	// f8e5m2: bias 15, +∞ = 0x7c at 2^16, ties up; below 2^-14 only the
	// subnormal codes 0..3 (RN L893: "clamped to 3").
	refE5M2 = func() *refFormat {
		r := newRef("f8e5m2", 5, 2, 15, 0x7b, []struct {
			v float64
			c uint32
		}{{65536, 0x7c}})
		r.nan, r.tiesUp, r.subLimit, r.subCodes = 0x7e, true, math.Ldexp(1, -14), 4
		return r
	}()
)

// round is the slow reference conversion of an f32 to the format's code.
func (r *refFormat) round(f float32) uint32 {
	if f != f {
		return r.nan
	}
	var sign uint32
	if math.Signbit(float64(f)) {
		sign = r.signBit
	}
	a := math.Abs(float64(f))
	if r.flushF32 && a < math.Ldexp(1, -126) {
		return sign // RN L891: f32 subnormal → signed zero
	}
	vals, codes := r.vals, r.codes
	if r.subLimit > 0 && a < r.subLimit {
		vals, codes = vals[:r.subCodes], codes[:r.subCodes]
	}
	i := sort.SearchFloat64s(vals, a) // first vals[i] >= a
	switch {
	case i == len(vals):
		return sign | codes[len(codes)-1] // beyond the top: clamp (saturate or ∞)
	case vals[i] == a:
		return sign | codes[i]
	}
	lo, hi := i-1, i
	mid := (vals[lo] + vals[hi]) / 2 // exact: one more bit than either
	switch {
	case a < mid:
		return sign | codes[lo]
	case a > mid:
		return sign | codes[hi]
	case r.tiesUp || codes[hi]&1 == 0:
		return sign | codes[hi]
	}
	return sign | codes[lo]
}

// randF32 returns f32 values: half uniformly random bit patterns, half with
// an exponent near [lo, hi] so that the narrow formats' ranges are covered.
func randF32(rng *rand.Rand, lo, hi int) float32 {
	if rng.IntN(2) == 0 {
		return math.Float32frombits(rng.Uint32())
	}
	e := lo + rng.IntN(hi-lo+1)
	bits := uint32(e+127)<<23 | rng.Uint32()&0x807f_ffff
	if rng.IntN(8) == 0 {
		bits &^= 0x7ff // many trailing zeros: exact values and ties
	}
	return math.Float32frombits(bits)
}

func TestAgainstReference(t *testing.T) {
	tests := []struct {
		ref    *refFormat
		conv   func(float32) uint32
		lo, hi int
	}{
		{refBF16, func(f float32) uint32 { return uint32(BF16FromF32(f)) }, -130, 129},
		{refF16, func(f float32) uint32 { return uint32(F16FromF32(f)) }, -27, 17},
		{refE4M3, func(f float32) uint32 { return uint32(F8E4M3FromF32(f)) }, -12, 10},
		{refE5M2, func(f float32) uint32 { return uint32(F8E5M2FromF32(f)) }, -19, 17},
	}
	const n = 60000
	for _, tt := range tests {
		t.Run(tt.ref.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tt.ref.name))))
			bad := 0
			for range n {
				f := randF32(rng, tt.lo, tt.hi)
				if got, want := tt.conv(f), tt.ref.round(f); got != want {
					bad++
					if bad < 10 {
						t.Errorf("%s(%g = %#08x) = %#x, reference %#x", tt.ref.name, f, math.Float32bits(f), got, want)
					}
				}
			}
			assert.Zero(t, bad)
		})
	}
}

func TestBF16Exhaustive(t *testing.T) {
	for b := range 1 << 16 {
		b := uint16(b)
		f := F32FromBF16(b)
		exp, man := b>>7&0xff, b&0x7f
		switch {
		case exp == 0xff && man != 0: // NaN → canonical (RN L891)
			require.Equal(t, uint32(0x7fc00000), math.Float32bits(f), "%#04x", b)
			require.Equal(t, uint16(0x7fc0), BF16FromF32(f))
		case exp == 0 && man != 0: // subnormal → signed zero (RN L891)
			require.Equal(t, uint32(b&0x8000)<<16, math.Float32bits(f), "%#04x", b)
			require.Equal(t, b&0x8000, BF16FromF32(f))
		default: // exact, and back bit for bit
			require.Equal(t, uint32(b)<<16, math.Float32bits(f), "%#04x", b)
			require.Equal(t, b, BF16FromF32(f), "%#04x", b)
		}
	}
}

func TestBF16Ties(t *testing.T) {
	// For every normal finite bf16 b, the f32 halfway to the next code is
	// b<<16 | 0x8000: RNE gives b when b is even and b+1 when odd (RN L891);
	// one f32 ulp above goes up, one below stays.
	for b := range 1 << 16 {
		b := uint16(b)
		if exp := b >> 7 & 0xff; exp == 0 || exp == 0xff {
			continue
		}
		tie := math.Float32frombits(uint32(b)<<16 | 0x8000)
		require.Equal(t, b+b&1, BF16FromF32(tie), "tie above %#04x", b)
		require.Equal(t, b+1, BF16FromF32(math.Nextafter32(tie, float32(math.Copysign(math.Inf(1), float64(tie))))))
		require.Equal(t, b, BF16FromF32(math.Nextafter32(tie, 0)))
	}
}

func TestBF16Specials(t *testing.T) {
	inf := float32(math.Inf(1))
	assert.Equal(t, uint16(0x7f80), BF16FromF32(inf))
	assert.Equal(t, uint16(0xff80), BF16FromF32(-inf))
	assert.Equal(t, uint16(0x7fc0), BF16FromF32(math.Float32frombits(0xffc00001)), "RN L891: NaN of any sign → 0x7fc0")
	// The largest f32 is above the tie point after 0x7f7f: overflow to ∞.
	assert.Equal(t, uint16(0x7f80), BF16FromF32(math.MaxFloat32))
	// f32 subnormals flush to signed zero (RN L891).
	assert.Equal(t, uint16(0x0000), BF16FromF32(math.Float32frombits(0x007fffff)))
	assert.Equal(t, uint16(0x8000), BF16FromF32(math.Float32frombits(0x80000001)))
}

func TestF16Exhaustive(t *testing.T) {
	for h := range 1 << 16 {
		h := uint16(h)
		f := F32FromF16(h)
		exp, man := h>>10&0x1f, h&0x3ff
		switch {
		case exp == 0x1f && man != 0:
			require.True(t, f != f)
			require.Equal(t, uint16(0x7e00), F16FromF32(f))
			continue
		case exp == 0x1f:
			require.True(t, math.IsInf(float64(f), 0))
		default:
			want := fieldValue(uint32(h&0x7fff), 5, 10, 15)
			require.Equal(t, want, math.Abs(float64(f)), "%#04x", h)
		}
		require.Equal(t, h&0x8000 != 0, math.Signbit(float64(f)))
		require.Equal(t, h, F16FromF32(f), "%#04x", h)
	}
}

func TestF16Ties(t *testing.T) {
	// Every finite f16 h below the top: the midpoint to h+1 is exact in f32;
	// RNE gives the even one of h, h+1.
	for h := range 0x7bff {
		h := uint16(h)
		mid := (float64(F32FromF16(h)) + float64(F32FromF16(h+1))) / 2
		require.Equal(t, h+h&1, F16FromF32(float32(mid)), "tie above %#04x", h)
		require.Equal(t, h|0x8000+h&1, F16FromF32(float32(-mid)))
	}
	// Largest finite 65504 (0x7bff); the tie to 2^16 goes to even = ∞.
	assert.Equal(t, uint16(0x7c00), F16FromF32(65520))
	assert.Equal(t, uint16(0x7bff), F16FromF32(math.Nextafter32(65520, 0)))
}

func TestF8E4M3Exhaustive(t *testing.T) {
	for b := range 256 {
		b := uint8(b)
		f := F32FromF8E4M3(b)
		if b&0x7f == 0x7f { // RN L892: 0x7f/0xff = NaN
			require.True(t, f != f, "%#02x", b)
			require.Equal(t, uint8(0x7f), F8E4M3FromF32(f), "RN L892: NaN → 0x7f")
			continue
		}
		want := fieldValue(uint32(b&0x7f), 4, 3, 7)
		require.Equal(t, want, math.Abs(float64(f)), "%#02x", b)
		require.Equal(t, b&0x80 != 0, math.Signbit(float64(f)), "%#02x", b)
		require.Equal(t, b, F8E4M3FromF32(f), "%#02x round trip", b)
	}
}

func TestF8E4M3RoundingAndSaturation(t *testing.T) {
	// Max 448 (RN L892) is code 0x7e: 2^(15-7)·(1+6/8).
	max448 := math.Ldexp(1+6.0/8, 15-7)
	assert.Equal(t, max448, float64(F32FromF8E4M3(0x7e)))
	m, err := F8E4M3.MaxFinite()
	require.NoError(t, err)
	assert.Equal(t, max448, m)

	// Ties between consecutive codes b, b+1 (b+1 ≤ 0x7e) go to the even code.
	for b := uint8(0); b < 0x7e; b++ {
		mid := (float64(F32FromF8E4M3(b)) + float64(F32FromF8E4M3(b+1))) / 2
		require.Equal(t, b+b&1, F8E4M3FromF32(float32(mid)), "tie above %#02x", b)
		require.Equal(t, 0x80|(b+b&1), F8E4M3FromF32(float32(-mid)))
	}
	// Saturation (RN L892): anything above 448, ∞ included, gives ±448.
	next := max448 + math.Ldexp(1, 8-3) // the code that would follow 0x7e
	for _, v := range []float64{max448, (max448 + next) / 2, next, 1e6, math.MaxFloat32, math.Inf(1)} {
		assert.Equal(t, uint8(0x7e), F8E4M3FromF32(float32(v)), "%g", v)
		assert.Equal(t, uint8(0xfe), F8E4M3FromF32(float32(-v)), "%g", -v)
	}
	assert.Equal(t, uint8(0x7f), F8E4M3FromF32(float32(math.Copysign(math.NaN(), -1))))
	// Subnormals: quantum 2^-9; the smallest tie 2^-10 goes to the even code 0.
	assert.Equal(t, uint8(0x00), F8E4M3FromF32(float32(math.Ldexp(1, -10))))
	assert.Equal(t, uint8(0x01), F8E4M3FromF32(math.Nextafter32(float32(math.Ldexp(1, -10)), 1)))
	assert.Equal(t, uint8(0x80), F8E4M3FromF32(float32(-math.Ldexp(1, -11))), "signed zero")
}

func TestF8E5M2Exhaustive(t *testing.T) {
	for b := range 256 {
		b := uint8(b)
		f := F32FromF8E5M2(b)
		exp, man := b>>2&0x1f, b&3
		switch {
		case exp == 0x1f && man != 0:
			require.True(t, f != f, "%#02x", b)
			require.Equal(t, uint8(0x7e), F8E5M2FromF32(f), "RN L893: NaN → 0x7e")
			continue
		case exp == 0x1f:
			require.True(t, math.IsInf(float64(f), 0), "RN L893: ∞ is 0x7c")
		default:
			require.Equal(t, fieldValue(uint32(b&0x7f), 5, 2, 15), math.Abs(float64(f)), "%#02x", b)
		}
		require.Equal(t, b&0x80 != 0, math.Signbit(float64(f)), "%#02x", b)
		require.Equal(t, b, F8E5M2FromF32(f), "%#02x round trip", b)
	}
}

func TestF8E5M2Rounding(t *testing.T) {
	// Normals round half up on bit 20 (RN L893): the midpoint between b and
	// b+1 always goes to b+1, carrying into the exponent; the top one
	// (above 0x7b) overflows to ∞ = 0x7c.
	for b := uint8(4); b < 0x7c; b++ {
		f := math.Float32bits(F32FromF8E5M2(b))
		half := math.Float32frombits(f | 1<<20)
		require.Equal(t, b+1, F8E5M2FromF32(half), "half above %#02x", b)
		require.Equal(t, b, F8E5M2FromF32(math.Nextafter32(half, 0)), "below half above %#02x", b)
		require.Equal(t, 0x80|(b+1), F8E5M2FromF32(-half))
	}
	// Largest finite: 0x7b = 2^15·1.75 = 57344; the half point to 2^16 is
	// 57344 + 2^12 and already overflows (RN L893: "may overflow to ∞").
	top := math.Ldexp(1.75, 15)
	m, err := F8E5M2.MaxFinite()
	require.NoError(t, err)
	assert.Equal(t, top, m)
	assert.Equal(t, uint8(0x7b), F8E5M2FromF32(math.Nextafter32(float32(top+4096), 0)))
	assert.Equal(t, uint8(0x7c), F8E5M2FromF32(float32(top+4096)))
	assert.Equal(t, uint8(0x7c), F8E5M2FromF32(math.MaxFloat32))
	assert.Equal(t, uint8(0xfc), F8E5M2FromF32(float32(math.Inf(-1))), "−∞ keeps its sign")
	assert.Equal(t, uint8(0x7e), F8E5M2FromF32(float32(math.Copysign(math.NaN(), -1))))

	// Subnormals: round(|x|·2^16), halves away from zero, clamped to 3.
	q := math.Ldexp(1, -16)
	for m := 0; m < 3; m++ {
		half := float32((float64(m) + 0.5) * q)
		require.Equal(t, uint8(m+1), F8E5M2FromF32(half), "half above %d", m)
		require.Equal(t, uint8(m), F8E5M2FromF32(math.Nextafter32(half, 0)))
	}
	// The clamp: just below 2^-14 = 4·2^-16 rounds to 4 but is clamped to 3.
	assert.Equal(t, uint8(3), F8E5M2FromF32(math.Nextafter32(float32(math.Ldexp(1, -14)), 0)))
	assert.Equal(t, uint8(4), F8E5M2FromF32(float32(math.Ldexp(1, -14))))
}

func TestF4E2M1(t *testing.T) {
	// RN L894: codes 0..7 decode like the f8e4m3 bytes
	// 0x00,0x30,0x38,0x3c,0x40,0x44,0x48,0x4c; 8..15 the same with sign.
	toE4M3 := [8]uint8{0x00, 0x30, 0x38, 0x3c, 0x40, 0x44, 0x48, 0x4c}
	for c := uint8(0); c < 16; c++ {
		want := F32FromF8E4M3(toE4M3[c&7] | (c&8)<<4)
		got := F32FromF4E2M1(c)
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "code %d", c)
		back, ok := F4E2M1FromF32(got)
		require.True(t, ok)
		require.Equal(t, c, back, "code %d round trip", c)
		// Midpoints between consecutive magnitudes go to the even code.
		if c < 7 {
			mid := (F32FromF4E2M1(c) + F32FromF4E2M1(c+1)) / 2
			got, _ := F4E2M1FromF32(mid)
			require.Equal(t, c+c&1, got, "tie above %d", c)
		}
	}
	for _, v := range []float32{7, 100, float32(math.Inf(1))} {
		c, ok := F4E2M1FromF32(v)
		assert.True(t, ok)
		assert.Equal(t, uint8(7), c, "saturate %g", v)
		c, _ = F4E2M1FromF32(-v)
		assert.Equal(t, uint8(15), c)
	}
	_, ok := F4E2M1FromF32(float32(math.NaN()))
	assert.False(t, ok)
}

func TestToF32(t *testing.T) {
	over := math.Ldexp(0x1ffffff, 127-24) // MaxFloat32 + half an ulp
	assert.True(t, math.IsInf(float64(toF32(over)), 1), "tie past MaxFloat32 goes to even = ∞")
	assert.True(t, math.IsInf(float64(toF32(-over)), -1))
	below := math.Nextafter(over, 0)
	assert.Equal(t, float32(math.MaxFloat32), toF32(below))
	assert.Equal(t, float32(-math.MaxFloat32), toF32(-below))
	assert.True(t, math.IsInf(float64(toF32(math.MaxFloat64)), 1))
	// RNE at 1 + 2^-24 (half an f32 ulp): ties to 1.
	assert.Equal(t, float32(1), toF32(1+math.Ldexp(1, -24)))
	assert.Equal(t, float32(1+math.Ldexp(1, -22)), toF32(1+3*math.Ldexp(1, -24)))
}
