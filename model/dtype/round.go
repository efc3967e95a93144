package dtype

import (
	"fmt"
	"math"
)

// Round returns the value v has after being stored in d.
//
// Floats: v is first rounded to f32 (the hardware converts from f32: the
// Cast Engine's float input is f32, 002 L6779, and the accumulator is f32,
// 002 L4391), then converted with d's rule (see BF16FromF32, F16FromF32,
// F8E4M3FromF32, F8E5M2FromF32, F4E2M1FromF32) and decoded back.
//
// Integers: v must be an integer within the int64 range; it wraps to d's
// width in two's complement (i32→i8/i16 "via as (wrap)", RN L897; i4
// "low 4 bits sign-extended (wrap)", RN L895).
//
// Round returns NaN when d cannot hold v at all (NaN, ±∞ or a fraction into
// an integer type, NaN into f4e2m1) or when d is invalid; Convert and Store
// report those cases as errors.
func Round(v float64, d DType) float64 {
	switch d {
	case F32:
		return float64(toF32(v))
	case BF16:
		return float64(F32FromBF16(BF16FromF32(toF32(v))))
	case F16:
		return float64(F32FromF16(F16FromF32(toF32(v))))
	case F8E4M3:
		return float64(F32FromF8E4M3(F8E4M3FromF32(toF32(v))))
	case F8E5M2:
		return float64(F32FromF8E5M2(F8E5M2FromF32(toF32(v))))
	case F4E2M1:
		c, ok := F4E2M1FromF32(toF32(v))
		if !ok {
			return math.NaN()
		}
		return float64(F32FromF4E2M1(c))
	case I4, I5, I8, I9, I16, I32:
		i, ok := intOf(v)
		if !ok {
			return math.NaN()
		}
		return float64(wrap(i, infos[d].bits))
	}
	return math.NaN()
}

// intOf returns v as an int64 when v is integral and in range.
func intOf(v float64) (int64, bool) {
	// -2^63 is representable; 2^63 is not.
	if v != math.Trunc(v) || v < -0x1p63 || v >= 0x1p63 {
		return 0, false // also NaN (v != v) and ±∞ (out of range)
	}
	return int64(v), true
}

// wrap keeps the low bits of v, sign-extended (two's complement wrap).
func wrap(v int64, bits int) int64 {
	s := 64 - uint(bits)
	return v << s >> s
}

// RoundInt wraps v to the integer type d (two's complement, RN L895,
// RN L897). It is an error if d is not an integer type.
func RoundInt(v int64, d DType) (int64, error) {
	if !d.IsInt() {
		return 0, fmt.Errorf("RoundInt: %s is not an integer type", d)
	}
	return wrap(v, infos[d].bits), nil
}

// canNaN reports whether d has a NaN encoding.
func canNaN(d DType) bool { return d.IsFloat() && d != F4E2M1 }

// Convert converts v, a value of type from, to type to, with to's rounding
// and saturation (see Round). It checks the value, not the site: whether the
// hardware can perform the conversion somewhere is CanCast's business. It is
// an error if either type is invalid, if v is not exactly a value of from
// (1.5 is not an i8; a bf16 subnormal does not exist, RN L891), or if to
// cannot hold it (a fraction or NaN into an integer type, NaN into f4e2m1).
func Convert(v float64, from, to DType) (float64, error) {
	if !from.Valid() || !to.Valid() {
		return 0, fmt.Errorf("Convert: invalid type %s → %s", from, to)
	}
	r := Round(v, from)
	if math.IsNaN(v) {
		if !canNaN(from) {
			return 0, fmt.Errorf("Convert: NaN is not a %s value", from)
		}
	} else if r != v || math.Signbit(r) != math.Signbit(v) && from.IsFloat() {
		return 0, fmt.Errorf("Convert: %v is not a %s value (storing it gives %v)", v, from, r)
	}
	out := Round(r, to)
	if math.IsNaN(out) && !math.IsNaN(r) || math.IsNaN(r) && !canNaN(to) {
		return 0, fmt.Errorf("Convert: %s value %v cannot be stored in %s", from, r, to)
	}
	return out, nil
}

// Encode returns the bit pattern of v stored in d, in the low SlotBits bits
// (integers sign-extended to the slot: an i5 occupies an i8 slot, RN L779).
// It is an error if d is invalid or cannot hold v (see Round).
func (d DType) Encode(v float64) (uint32, error) {
	switch d {
	case F32:
		return math.Float32bits(toF32(v)), nil
	case BF16:
		return uint32(BF16FromF32(toF32(v))), nil
	case F16:
		return uint32(F16FromF32(toF32(v))), nil
	case F8E4M3:
		return uint32(F8E4M3FromF32(toF32(v))), nil
	case F8E5M2:
		return uint32(F8E5M2FromF32(toF32(v))), nil
	case F4E2M1:
		c, ok := F4E2M1FromF32(toF32(v))
		if !ok {
			return 0, fmt.Errorf("%s has no encoding for %v", d, v)
		}
		return uint32(c), nil
	case I4, I5, I8, I9, I16, I32:
		i, ok := intOf(v)
		if !ok {
			return 0, fmt.Errorf("%v is not an integer, cannot store it as %s", v, d)
		}
		return d.encodeInt(i), nil
	}
	return 0, fmt.Errorf("Encode: invalid %s", d)
}

// encodeInt returns the slot pattern of the wrapped integer (d must be an
// integer type).
func (d DType) encodeInt(i int64) uint32 {
	i = wrap(i, infos[d].bits)
	return uint32(i) & slotMask(infos[d].slotBits)
}

func slotMask(bits int) uint32 {
	if bits >= 32 {
		return 0xffff_ffff
	}
	return 1<<uint(bits) - 1
}

// Decode returns the value of the bit pattern p of type d. p must fit in
// SlotBits bits. Integers sign-extend their low Bits bits; floats follow the
// decode rules of their F32From functions (bf16 subnormals read as signed
// zero, RN L891; f8e4m3 0x7f/0xff read as NaN, RN L892).
func (d DType) Decode(p uint32) (float64, error) {
	if !d.Valid() {
		return 0, fmt.Errorf("Decode: invalid %s", d)
	}
	if p&^slotMask(infos[d].slotBits) != 0 {
		return 0, fmt.Errorf("Decode: pattern %#x wider than %s's %d bits", p, d, infos[d].slotBits)
	}
	return d.decode(p), nil
}

// decode is Decode without checks (d valid, p within the slot).
func (d DType) decode(p uint32) float64 {
	switch d {
	case F32:
		return float64(math.Float32frombits(p))
	case BF16:
		return float64(F32FromBF16(uint16(p)))
	case F16:
		return float64(F32FromF16(uint16(p)))
	case F8E4M3:
		return float64(F32FromF8E4M3(uint8(p)))
	case F8E5M2:
		return float64(F32FromF8E5M2(uint8(p)))
	case F4E2M1:
		return float64(F32FromF4E2M1(uint8(p)))
	}
	return float64(wrap(int64(p), infos[d].bits))
}

// MaxFinite returns the largest finite value of d: 448 for f8e4m3 (RN L892),
// 57344 for f8e5m2 (exponent field 30, mantissa 3: 1.75·2^15, RN L893), 65504
// for f16, 6 for f4e2m1 (RN L894), (2−2^-7)·2^127 for bf16, MaxFloat32 for
// f32, 2^(bits−1)−1 for integers. It is an error for an invalid type.
func (d DType) MaxFinite() (float64, error) {
	switch d {
	case F32:
		return math.MaxFloat32, nil
	case BF16:
		return float64(F32FromBF16(0x7f7f)), nil
	case F16:
		return float64(F32FromF16(0x7bff)), nil
	case F8E4M3:
		return float64(F32FromF8E4M3(e4m3Max)), nil
	case F8E5M2:
		return float64(F32FromF8E5M2(e5m2Inf - 1)), nil
	case F4E2M1:
		return float64(F32FromF4E2M1(7)), nil
	case I4, I5, I8, I9, I16, I32:
		return float64(int64(1)<<(infos[d].bits-1) - 1), nil
	}
	return 0, fmt.Errorf("MaxFinite: invalid %s", d)
}

// IntRange returns the range of the integer type d,
// −2^(bits−1) … 2^(bits−1)−1. It is an error if d is not an integer type.
func (d DType) IntRange() (lo, hi int64, err error) {
	if !d.IsInt() {
		return 0, 0, fmt.Errorf("IntRange: %s is not an integer type", d)
	}
	b := infos[d].bits
	return -(int64(1) << (b - 1)), int64(1)<<(b-1) - 1, nil
}
