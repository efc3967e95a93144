package dtype

import "math"

// Bit-level conversions between f32 and the narrow float formats. Each
// states the rule it implements; none allocates.

const (
	f32Abs     = 0x7fff_ffff // magnitude bits of an f32
	f32Inf     = 0x7f80_0000 // +∞
	f32ExpMask = 0x7f80_0000
	f32QNaN    = 0x7fc0_0000 // canonical f32 NaN (RN L891)
)

// BF16FromF32 converts f32 to bf16 bits (RN L891): NaN → 0x7fc0; an f32
// zero or subnormal → a zero of the same sign; otherwise round to nearest,
// ties to even (half::bf16::from_f32), which may carry into the exponent
// and overflow to ±∞.
func BF16FromF32(f float32) uint16 {
	x := math.Float32bits(f)
	if x&f32Abs > f32Inf {
		return 0x7fc0 // RN L891: NaN → 0x7fc0
	}
	if x&f32ExpMask == 0 {
		return uint16(x>>16) & 0x8000 // RN L891: f32 subnormal → signed zero
	}
	// RN L891: RNE on the 16 dropped bits. Round up when the half bit is
	// set and either a lower bit or the kept LSB (bit 16) is set.
	const half = 0x8000
	if x&half != 0 && x&(3*half-1) != 0 {
		return uint16(x>>16) + 1
	}
	return uint16(x >> 16)
}

// F32FromBF16 converts bf16 bits to f32 (RN L891): NaN → 0x7fc00000, a
// subnormal → a zero of the same sign, anything else exactly.
func F32FromBF16(b uint16) float32 {
	switch {
	case b&0x7fff > 0x7f80:
		return math.Float32frombits(f32QNaN) // RN L891
	case b&0x7f80 == 0:
		return math.Float32frombits(uint32(b&0x8000) << 16) // RN L891: subnormal → signed zero
	}
	return math.Float32frombits(uint32(b) << 16)
}

// F16 constants (IEEE binary16).
const (
	f16QNaN = 0x7e00
	f16Inf  = 0x7c00
	// f16MinNormal is 2^-14 as f32 bits.
	f16MinNormal = 0x3880_0000
	// f16Overflow is 65520 as f32 bits: halfway between the largest finite
	// f16 (65504) and 2^16; ties go to even, which is 2^16 = ∞.
	f16Overflow = 0x477f_f000
)

// F16FromF32 converts f32 to IEEE binary16 bits: round to nearest, ties to
// even, with gradual underflow; overflow → ±∞; NaN → 0x7e00. The manual lists
// f16 as a Cast Engine output (002 L6779) but states no rounding; see
// docs/spec-decisions.md "f16 numerics".
func F16FromF32(f float32) uint16 {
	x := math.Float32bits(f)
	sign := uint16(x>>16) & 0x8000
	a := x & f32Abs
	switch {
	case a > f32Inf:
		return f16QNaN
	case a >= f16Overflow:
		return sign | f16Inf
	case a >= f16MinNormal:
		// Round the 13 dropped mantissa bits to nearest even; the carry
		// may run into the exponent. Then rebias 127 → 15.
		r := (a + 0xfff + (a>>13)&1) >> 13
		return sign | uint16(r-(127-15)<<10)
	}
	// Subnormal f16: quantum 2^-24; the product is exact in float64.
	m := math.RoundToEven(float64(math.Float32frombits(a)) * (1 << 24))
	return sign | uint16(m)
}

// F32FromF16 converts IEEE binary16 bits to f32 exactly (f16 subnormals are
// f32 normals); NaN → 0x7fc00000.
func F32FromF16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch exp {
	case 0x1f:
		if man != 0 {
			return math.Float32frombits(f32QNaN)
		}
		return math.Float32frombits(sign | f32Inf)
	case 0:
		v := float32(man) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// f8e4m3 constants (RN L892).
const (
	e4m3NaN       = 0x7f        // RN L892: encode NaN → 0x7f
	e4m3Max       = 0x7e        // RN L892: saturate to 0x7e (±448)
	e4m3MaxF32    = 0x43e0_0000 // 448.0
	e4m3MinNormal = 0x3c80_0000 // 2^-6 (exponent field 1, bias 7)
)

// e4m3Table decodes every f8e4m3 byte (RN L892: "decode by 256-entry
// table"): bias 7, 3 mantissa bits, subnormals m·2^-9, 0x7f/0xff NaN, no ∞.
var e4m3Table = func() (t [256]float32) {
	for b := range 256 {
		sign := float32(1)
		if b&0x80 != 0 {
			sign = -1
		}
		e, m := (b>>3)&0xf, b&7
		switch {
		case b&0x7f == 0x7f:
			t[b] = math.Float32frombits(f32QNaN) // RN L892: 0x7f/0xff = NaN
		case e == 0:
			t[b] = sign * float32(math.Ldexp(float64(m), -9))
		default:
			t[b] = sign * float32(math.Ldexp(float64(8+m), e-10))
		}
	}
	return t
}()

// F32FromF8E4M3 decodes f8e4m3 bits by table (RN L892).
func F32FromF8E4M3(b uint8) float32 { return e4m3Table[b] }

// F8E4M3FromF32 encodes f32 as f8e4m3 (RN L892): NaN → 0x7f; anything of
// magnitude above 448, including ±∞, saturates to ±448 (0x7e/0xfe); normals
// round to nearest even on the top 11 bits (8 exponent + 3 mantissa);
// subnormals (below 2^-6) round to nearest even multiples of 2^-9 (see
// docs/spec-decisions.md "f8e4m3 subnormals and infinity").
func F8E4M3FromF32(f float32) uint8 {
	x := math.Float32bits(f)
	sign := uint8(x>>24) & 0x80
	a := x & f32Abs
	switch {
	case a > f32Inf:
		return e4m3NaN
	case a > e4m3MaxF32:
		return sign | e4m3Max
	case a >= e4m3MinNormal:
		// RNE on the 20 dropped bits, then rebias 127 → 7.
		r := (a + 0x7ffff + (a>>20)&1) >> 20
		out := r - (127-7)<<3
		if out > e4m3Max {
			out = e4m3Max // RN L892: saturate
		}
		return sign | uint8(out)
	}
	m := math.RoundToEven(float64(math.Float32frombits(a)) * (1 << 9))
	return sign | uint8(m) // m = 8 is the min normal 0x08, encoded the same way
}

// f8e5m2 constants (RN L893).
const (
	e5m2NaN       = 0x7e        // RN L893: encode NaN → 0x7e
	e5m2Inf       = 0x7c        // RN L893: ∞ is 0x7c
	e5m2MinNormal = 0x3880_0000 // 2^-14 (exponent field 1, bias 15)
)

// F32FromF8E5M2 decodes f8e5m2 bits (RN L893: IEEE-like, bias 15, ∞ 0x7c,
// NaN above it); NaN → 0x7fc00000.
func F32FromF8E5M2(b uint8) float32 {
	sign := uint32(b&0x80) << 24
	exp := uint32(b>>2) & 0x1f
	man := uint32(b) & 3
	switch exp {
	case 0x1f:
		if man != 0 {
			return math.Float32frombits(f32QNaN)
		}
		return math.Float32frombits(sign | f32Inf)
	case 0:
		v := float32(man) * (1.0 / (1 << 16))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<21)
}

// F8E5M2FromF32 encodes f32 as f8e5m2 (RN L893): NaN → 0x7e; ±∞ → ±∞
// (0x7c/0xfc); normals round half up on bit 20 (the first dropped bit), the
// carry may run into the exponent and overflow to ±∞; subnormals (below
// 2^-14) are round(|x|·2^16), halves away from zero, clamped to 3.
func F8E5M2FromF32(f float32) uint8 {
	x := math.Float32bits(f)
	sign := uint8(x>>24) & 0x80
	a := x & f32Abs
	switch {
	case a > f32Inf:
		return e5m2NaN
	case a == f32Inf:
		return sign | e5m2Inf
	case a >= e5m2MinNormal:
		r := a>>21 + (a>>20)&1 // RN L893: round half up on bit 20
		out := r - (127-15)<<2
		if out >= e5m2Inf {
			return sign | e5m2Inf // RN L893: overflow → ∞
		}
		return sign | uint8(out)
	}
	m := math.Round(float64(math.Float32frombits(a)) * (1 << 16)) // RN L893
	if m > 3 {
		m = 3 // RN L893: clamped to 3
	}
	return sign | uint8(m)
}

// e2m1Values are the magnitudes of the f4e2m1 codes 0..7: the values of the
// f8e4m3 bytes 0x00,0x30,0x38,0x3c,0x40,0x44,0x48,0x4c the vendor's lookup
// table maps them to (RN L894).
var e2m1Values = [8]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}

// F32FromF4E2M1 decodes an f4e2m1 code (low 4 bits of c; bit 3 is the sign,
// RN L894: "8..15 the same with sign").
func F32FromF4E2M1(c uint8) float32 {
	v := e2m1Values[c&7]
	if c&8 != 0 {
		return -v
	}
	return v
}

// F4E2M1FromF32 encodes f32 as an f4e2m1 code. No hardware site produces
// f4e2m1 (it is only decoded, RN L894); this host-side quantiser rounds to
// nearest with ties to the even code and saturates to ±6 (±∞ included). NaN
// has no encoding: ok is false. See docs/spec-decisions.md "f4e2m1 encoding".
func F4E2M1FromF32(f float32) (code uint8, ok bool) {
	if f != f {
		return 0, false
	}
	var sign uint8
	if math.Signbit(float64(f)) {
		sign = 8
		f = -f
	}
	k := 0
	for k < 7 && e2m1Values[k+1] <= f {
		k++
	}
	if k < 7 {
		mid := (e2m1Values[k] + e2m1Values[k+1]) / 2 // exact in f32
		if f > mid || (f == mid && k&1 == 1) {
			k++
		}
	}
	return sign | uint8(k), true
}

// toF32 rounds a float64 to the nearest f32, ties to even, overflowing to
// ±∞ at and beyond the halfway point between MaxFloat32 and 2^128 (spelled
// out because Go leaves out-of-range float conversions implementation-defined).
func toF32(v float64) float32 {
	const overflow = 0x1.ffffffp127 // MaxFloat32 + half an ulp
	switch {
	case v >= overflow:
		return float32(math.Inf(1))
	case v <= -overflow:
		return float32(math.Inf(-1))
	}
	return float32(v)
}
