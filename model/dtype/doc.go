// Package dtype holds the element types of the TCP (RNGD) and their exact
// numerics: names and widths, byte encodings, the rounding and saturation of
// every conversion, and the tables of where a conversion may legally happen.
//
// Citations in this package read "002 L1962" (seed 002 of the manual, line
// 1962; the authority) or "RN L891" (line 891 of ../shared/spec/reference-notes.md,
// the study of the vendor's public library, which states the bit-level
// numerics the manual leaves out). Where the two disagree or the manual is
// silent, the choice is recorded in docs/spec-decisions.md.
//
// Values travel as float64 (every supported type's values are exactly
// representable in float64). The hardware converts floats from f32 (the Cast
// Engine's input is f32, 002 L6776-L6779), so Round first rounds to f32 and
// then applies the f32→type conversion. Integer types wrap (two's complement).
//
// The hot-loop accessors (Load, Store, LoadInt, StoreInt) do not allocate;
// they return an error only for a bad index, a dtype they cannot hold, or a
// value the type cannot represent at all.
package dtype
