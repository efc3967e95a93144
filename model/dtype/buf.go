package dtype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Byte buffers hold elements packed little-endian (RN L776-L777: "a packed
// little-endian byte buffer"), SlotBits each. Sub-byte types pack two per
// byte, element 2k in the low nibble and 2k+1 in the high nibble (RN L778:
// "low nibble first"; the manual does not say, see docs/spec-decisions.md
// "i4 nibble order"). Staging types sit sign-extended in i8/i16 slots
// (RN L779).

// index checks i against buf and returns the bit width of a slot.
func (d DType) index(op string, buf []byte, i int) (int, error) {
	if !d.Valid() {
		return 0, fmt.Errorf("%s: invalid %s", op, d)
	}
	bits := infos[d].slotBits
	var n int
	switch bits { // len(buf)·8/bits without a division
	case 4:
		n = len(buf) << 1
	case 8:
		n = len(buf)
	case 16:
		n = len(buf) >> 1
	default:
		n = len(buf) >> 2
	}
	if uint(i) >= uint(n) {
		return 0, indexError(op, d, i, n, len(buf))
	}
	return bits, nil
}

// indexError is kept out of line so the accessors stay small.
//
//go:noinline
func indexError(op string, d DType, i, n, size int) error {
	return fmt.Errorf("%s %s: index %d out of range [0,%d) of a %d-byte buffer", op, d, i, n, size)
}

// loadBits reads slot i (already bounds-checked).
func loadBits(buf []byte, i, bits int) uint32 {
	switch bits {
	case 4:
		return uint32(buf[i>>1]>>(uint(i&1)*4)) & 0xf
	case 8:
		return uint32(buf[i])
	case 16:
		return uint32(binary.LittleEndian.Uint16(buf[2*i:]))
	}
	return binary.LittleEndian.Uint32(buf[4*i:])
}

// storeBits writes slot i (already bounds-checked; p fits the slot).
func storeBits(buf []byte, i, bits int, p uint32) {
	switch bits {
	case 4:
		sh := uint(i&1) * 4
		buf[i>>1] = buf[i>>1]&^(0xf<<sh) | byte(p)<<sh
	case 8:
		buf[i] = byte(p)
	case 16:
		binary.LittleEndian.PutUint16(buf[2*i:], uint16(p))
	default:
		binary.LittleEndian.PutUint32(buf[4*i:], p)
	}
}

// Load returns element i of buf read as d. It does not allocate. It is an
// error if d is invalid or i is outside buf.
func (d DType) Load(buf []byte, i int) (float64, error) {
	bits, err := d.index("Load", buf, i)
	if err != nil {
		return 0, err
	}
	return d.decode(loadBits(buf, i, bits)), nil
}

// Store writes v, rounded as Round does, as element i of buf. It does not
// allocate. It is an error if d is invalid, i is outside buf, or d cannot
// hold v at all (NaN or a fraction into an integer type, NaN into f4e2m1).
func (d DType) Store(buf []byte, i int, v float64) error {
	bits, err := d.index("Store", buf, i)
	if err != nil {
		return err
	}
	p, err := d.Encode(v)
	if err != nil {
		return fmt.Errorf("Store %s[%d]: %w", d, i, err)
	}
	storeBits(buf, i, bits, p)
	return nil
}

// LoadInt returns element i of buf as an integer of type d (sign-extended).
// It does not allocate. It is an error if d is not an integer type or i is
// outside buf.
func (d DType) LoadInt(buf []byte, i int) (int64, error) {
	if !d.IsInt() {
		return 0, fmt.Errorf("LoadInt: %s is not an integer type", d)
	}
	bits, err := d.index("LoadInt", buf, i)
	if err != nil {
		return 0, err
	}
	return wrap(int64(loadBits(buf, i, bits)), infos[d].bits), nil
}

// StoreInt writes v, wrapped to d's width (two's complement, RN L895,
// RN L897), as element i of buf. It does not allocate. It is an error if d
// is not an integer type or i is outside buf.
func (d DType) StoreInt(buf []byte, i int, v int64) error {
	if !d.IsInt() {
		return fmt.Errorf("StoreInt: %s is not an integer type", d)
	}
	bits, err := d.index("StoreInt", buf, i)
	if err != nil {
		return err
	}
	storeBits(buf, i, bits, d.encodeInt(v))
	return nil
}

// LoadF32 returns element i of buf, of the float type d, as the f32 the
// pipeline computes with (every float type widens to f32 exactly; bf16
// subnormals read as signed zero, RN L891). It does not allocate. It is an
// error if d is not a float type or i is outside buf.
func (d DType) LoadF32(buf []byte, i int) (float32, error) {
	if !d.IsFloat() {
		return 0, fmt.Errorf("LoadF32: %s is not a float type", d)
	}
	bits, err := d.index("LoadF32", buf, i)
	if err != nil {
		return 0, err
	}
	return float32(d.decode(loadBits(buf, i, bits))), nil
}

// StoreF32 converts the f32 v to the float type d with d's rounding and
// saturation and writes it as element i of buf. It does not allocate. It is
// an error if d is not a float type, i is outside buf, or d is f4e2m1 and v
// is NaN.
func (d DType) StoreF32(buf []byte, i int, v float32) error {
	if !d.IsFloat() {
		return fmt.Errorf("StoreF32: %s is not a float type", d)
	}
	bits, err := d.index("StoreF32", buf, i)
	if err != nil {
		return err
	}
	var p uint32
	switch d {
	case F32:
		p = math.Float32bits(v)
	case BF16:
		p = uint32(BF16FromF32(v))
	case F16:
		p = uint32(F16FromF32(v))
	case F8E4M3:
		p = uint32(F8E4M3FromF32(v))
	case F8E5M2:
		p = uint32(F8E5M2FromF32(v))
	case F4E2M1:
		c, ok := F4E2M1FromF32(v)
		if !ok {
			return fmt.Errorf("StoreF32 %s[%d]: f4e2m1 has no encoding for NaN", d, i)
		}
		p = uint32(c)
	}
	storeBits(buf, i, bits, p)
	return nil
}
