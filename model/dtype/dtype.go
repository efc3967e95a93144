package dtype

import (
	"fmt"
	"strings"
)

// DType is an element type. The zero value is not a type: every method
// reports it as invalid rather than defaulting to one.
type DType uint8

// The element types. The nine storage types are the manual's DMA dtype list
// `i4 | i8 | f8e4m3 | f8e5m2 | i16 | fp16 | bf16 | i32 | f32` (002 L2525).
// I5 and I9 are the staging types of zero-point subtraction (002 L1965-L1966,
// RN L896); F4E2M1 is the MXFP4 element, decoded only by table lookup
// (002 L1940, RN L894).
const (
	// BF16 is bfloat16: 1 sign, 8 exponent, 7 mantissa bits (RN L891).
	BF16 DType = iota + 1
	// F16 is IEEE binary16 (002 L1971, L6779; spelled fp16 in 002 L2525).
	F16
	// F32 is IEEE binary32, the float accumulator type (002 L4391).
	F32
	// F8E4M3 is the 8-bit float with 4 exponent and 3 mantissa bits, no
	// infinity, max 448 (RN L892).
	F8E4M3
	// F8E5M2 is the IEEE-like 8-bit float with 5 exponent bits, bias 15
	// (RN L893).
	F8E5M2
	// F4E2M1 is the 4-bit float of MXFP4 (002 L1940, RN L894).
	F4E2M1
	// I4 is a signed nibble, packed two per byte (RN L895, RN L778).
	I4
	// I5 is the i4 zero-point staging type (002 L1965, RN L896).
	I5
	// I8 is a signed byte.
	I8
	// I9 is the i8 zero-point staging type (002 L1966, RN L896).
	I9
	// I16 is a signed 16-bit integer.
	I16
	// I32 is a signed 32-bit integer, the integer accumulator type (002 L4391).
	I32
	numDTypes
)

// All lists every valid DType in declaration order.
var All = []DType{BF16, F16, F32, F8E4M3, F8E5M2, F4E2M1, I4, I5, I8, I9, I16, I32}

// info is the static description of one type.
type info struct {
	name string
	// bits is the value width.
	bits int
	// sizeBits is the footprint in a packet or flit: i5 counts as i4 and
	// i9 as i8 (002 L4383: "64/128 elements for i4/i5, 32/64 elements for
	// i8/f8/i9").
	sizeBits int
	// slotBits is the width of one element in a byte buffer: i5/i9 live in
	// i8/i16 slots (RN L779), sub-byte types pack two per byte (RN L778).
	slotBits int
	float    bool
	staging  bool
}

var infos = [numDTypes]info{
	BF16:   {name: "bf16", bits: 16, sizeBits: 16, slotBits: 16, float: true},
	F16:    {name: "f16", bits: 16, sizeBits: 16, slotBits: 16, float: true},
	F32:    {name: "f32", bits: 32, sizeBits: 32, slotBits: 32, float: true},
	F8E4M3: {name: "f8e4m3", bits: 8, sizeBits: 8, slotBits: 8, float: true},
	F8E5M2: {name: "f8e5m2", bits: 8, sizeBits: 8, slotBits: 8, float: true},
	F4E2M1: {name: "f4e2m1", bits: 4, sizeBits: 4, slotBits: 4, float: true},
	I4:     {name: "i4", bits: 4, sizeBits: 4, slotBits: 4},
	I5:     {name: "i5", bits: 5, sizeBits: 4, slotBits: 8, staging: true},
	I8:     {name: "i8", bits: 8, sizeBits: 8, slotBits: 8},
	I9:     {name: "i9", bits: 9, sizeBits: 8, slotBits: 16, staging: true},
	I16:    {name: "i16", bits: 16, sizeBits: 16, slotBits: 16},
	I32:    {name: "i32", bits: 32, sizeBits: 32, slotBits: 32},
}

// aliases are extra spellings the manual uses: `fp16` in the DMA grammar
// (002 L2525) next to `f16` in the cast tables (002 L1971, L6779).
var aliases = map[string]DType{"fp16": F16}

// Valid reports whether d is one of the defined types.
func (d DType) Valid() bool { return d > 0 && d < numDTypes }

// String returns the manual's spelling (bf16, f8e4m3, i4, ...), or
// "dtype(N)" for an invalid value.
func (d DType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return infos[d].name
}

// Parse returns the type spelled name (case-sensitive, as in the manual:
// bf16, f16 or fp16, f32, f8e4m3, f8e5m2, f4e2m1, i4, i5, i8, i9, i16, i32).
// An unknown name is an error that lists the valid names.
func Parse(name string) (DType, error) {
	for _, d := range All {
		if infos[d].name == name {
			return d, nil
		}
	}
	if d, ok := aliases[name]; ok {
		return d, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (valid: %s)", name, ValidNames())
}

// ValidNames returns the accepted spellings, comma-separated, in declaration
// order, aliases in parentheses.
func ValidNames() string {
	var b strings.Builder
	for i, d := range All {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(infos[d].name)
		if d == F16 {
			b.WriteString(" (fp16)")
		}
	}
	return b.String()
}

// MarshalText implements encoding.TextMarshaler (the manual's spelling).
func (d DType) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("cannot marshal invalid %s", d)
	}
	return []byte(infos[d].name), nil
}

// UnmarshalText implements encoding.TextUnmarshaler via Parse.
func (d *DType) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Bits is the value width in bits (i5 → 5, bf16 → 16); 0 for an invalid type.
func (d DType) Bits() int {
	if !d.Valid() {
		return 0
	}
	return infos[d].bits
}

// SizeBits is the footprint of one element in a packet, flit or memory,
// in bits: 4 for i4/i5/f4e2m1, 8 for i8/i9/f8, 16, 32 (002 L4383; i4 is
// "0.5 bytes", 002 L2231). 0 for an invalid type.
func (d DType) SizeBits() int {
	if !d.Valid() {
		return 0
	}
	return infos[d].sizeBits
}

// SlotBits is the width of one element in a byte buffer used by Load and
// Store: like SizeBits except that the staging types i5 and i9 occupy i8 and
// i16 slots (RN L779). 0 for an invalid type.
func (d DType) SlotBits() int {
	if !d.Valid() {
		return 0
	}
	return infos[d].slotBits
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d.Valid() && infos[d].float }

// IsInt reports whether d is an integer type.
func (d DType) IsInt() bool { return d.Valid() && !infos[d].float }

// Signed reports whether d represents negative values. Every TCP type is
// signed: the integers are two's complement (i4 is sign-extended, RN L895)
// and the floats carry a sign bit.
func (d DType) Signed() bool { return d.Valid() }

// IsStaging reports whether d is a staging type (i5, i9): produced only by
// zero-point subtraction and consumable only by the contraction, never
// stored to DM or HBM (RN L779, RN L896).
func (d DType) IsStaging() bool { return d.Valid() && infos[d].staging }

// IsStorage reports whether d can live in DM or HBM: the manual's DMA dtype
// list (002 L2525).
func (d DType) IsStorage() bool {
	switch d {
	case I4, I8, F8E4M3, F8E5M2, I16, F16, BF16, I32, F32:
		return true
	}
	return false
}

// ByteSize returns the bytes per element as the reduced fraction num/den:
// 1/2 for i4 (002 L2231: "64 elements × 0.5 bytes = 32 bytes"), 2/1 for
// bf16. It is computed from SizeBits.
func (d DType) ByteSize() (num, den int) {
	b := d.SizeBits()
	if b == 0 {
		return 0, 1
	}
	g := GCD(b, 8)
	return b / g, 8 / g
}

// GCD returns the greatest common divisor of a and b, non-negative;
// GCD(0, 0) is 0. The standard library has one only for big.Int.
func GCD[T ~int | ~int8 | ~int16 | ~int32 | ~int64](a, b T) T {
	for b != 0 {
		a, b = b, a%b
	}
	if a < 0 {
		return -a
	}
	return a
}

// ElemsIn returns how many elements occupy exactly n bytes (a 32-byte flit
// holds 64 i4, 32 i8, 16 bf16, 8 f32; 002 L4383). It is an error when n is
// negative, d is invalid, or n bytes do not hold a whole number of elements
// (3 bytes of bf16).
func (d DType) ElemsIn(n int) (int, error) {
	b := d.SizeBits()
	switch {
	case b == 0:
		return 0, fmt.Errorf("ElemsIn: invalid %s", d)
	case n < 0:
		return 0, fmt.Errorf("ElemsIn: negative byte count %d", n)
	case (8*n)%b != 0:
		return 0, fmt.Errorf("ElemsIn: %d bytes is not a whole number of %s elements (%d bits each)", n, d, b)
	}
	return 8 * n / b, nil
}

// BytesFor returns the bytes occupied by n elements. Every mapping's byte size
// must be whole bytes, so an odd count of a 4-bit type is an error
// (RN L923-L924: "an odd number of i4s is illegal as a packet"), as are a
// negative count and an invalid type.
func (d DType) BytesFor(n int) (int, error) {
	b := d.SizeBits()
	switch {
	case b == 0:
		return 0, fmt.Errorf("BytesFor: invalid %s", d)
	case n < 0:
		return 0, fmt.Errorf("BytesFor: negative element count %d", n)
	case (n*b)%8 != 0:
		return 0, fmt.Errorf("BytesFor: %d %s elements (%d bits each) do not fill whole bytes", n, d, b)
	}
	return n * b / 8, nil
}

// BufLen returns the length of a byte buffer that holds n elements for Load
// and Store: n·SlotBits/8 rounded up (an odd i4 count leaves the high nibble
// of the last byte unused). It is an error for a negative count or an
// invalid type.
func (d DType) BufLen(n int) (int, error) {
	b := d.SlotBits()
	switch {
	case b == 0:
		return 0, fmt.Errorf("BufLen: invalid %s", d)
	case n < 0:
		return 0, fmt.Errorf("BufLen: negative element count %d", n)
	}
	return (n*b + 7) / 8, nil
}
