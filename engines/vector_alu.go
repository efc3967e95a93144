package engines

import (
	"fmt"
	"math"
)

// The Vector Engine's ALU semantics, bit-exact, on 32-bit element bits
// (i32 two's complement, f32 IEEE 754 binary32). The manual names the ops
// and their ALUs (002 L4803-4972, L5391-5402) and defines few of them
// beyond a word; docs/spec-decisions.md records each choice made where it
// does not ("Vector Engine shift amounts", "Vector Engine float
// arithmetic", "Vector Engine transcendental functions", "FxpToFp and
// FpToFxp", "Vector Engine min and max", "MulFxp format").

// veOpFn is a binary ALU op on element bits. Unary ops ignore b, ternary
// ops take c.
type veOpFn func(a, b, c uint32) uint32

// canonNaN is the quiet NaN every float op returns for a NaN result
// (docs/spec-decisions.md "Vector Engine float arithmetic").
const canonNaN = 0x7fc00000

// f32bits rounds a float32 result to its bits, NaNs canonical.
func f32bits(x float32) uint32 {
	if x != x {
		return canonNaN
	}
	return math.Float32bits(x)
}

// f32of is the float32 of element bits.
func f32of(b uint32) float32 { return math.Float32frombits(b) }

// f64to32 rounds a float64 result to f32 bits (round to nearest even), NaN
// canonical.
func f64to32(x float64) uint32 { return f32bits(float32(x)) }

// shiftLeft is a logical left shift of a by amount b taken unsigned;
// amounts of 32 and more shift every bit out (docs/spec-decisions.md
// "Vector Engine shift amounts").
func shiftLeft(a, b uint32) uint32 {
	if b >= 32 {
		return 0
	}
	return a << b
}

// shiftRightLogic is a logical right shift (0 for amounts ≥ 32).
func shiftRightLogic(a, b uint32) uint32 {
	if b >= 32 {
		return 0
	}
	return a >> b
}

// shiftRightArith is an arithmetic right shift (the sign fills every bit
// for amounts ≥ 32).
func shiftRightArith(a, b uint32) uint32 {
	if b >= 32 {
		b = 31
	}
	return uint32(int32(a) >> b)
}

// shiftLeftSat is a·2^b saturated to the i32 range (LeftShiftSat,
// 002 L4831): 0 stays 0, any other value saturates once its bits leave.
func shiftLeftSat(a, b uint32) uint32 {
	v := int32(a)
	if v == 0 {
		return 0
	}
	if b < 32 {
		r := int64(v) << b
		if b < 31 || r == int64(int32(r)) {
			return uint32(sat32(r))
		}
	}
	if v > 0 {
		return math.MaxInt32
	}
	return 1 << 31
}

// shiftRightRound is an arithmetic right shift rounding half up:
// ⌊(a + 2^(b−1)) / 2^b⌋ (ArithRightShiftRound, 002 L4836; the rounding of
// MulFxp, docs/spec-decisions.md "Vector Engine shift amounts"). Amounts
// of 32 and more give 0: a + 2^(b−1) lies in (0, 2^b) for every i32 a.
func shiftRightRound(a, b uint32) uint32 {
	if b == 0 {
		return a
	}
	if b >= 32 {
		return 0
	}
	return uint32(int32((int64(int32(a)) + 1<<(b-1)) >> b))
}

// fmaF32 is a·b + c rounded once to f32 (FmaF, 002 L4903): the f32 product
// is exact in float64, and the sum's float64 rounding error is carried so
// that the final rounding to f32 is the single rounding of the exact value.
func fmaF32(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact: 24 + 24 bits
	cc := float64(c)
	s := p + cc
	if math.IsInf(s, 0) || math.IsNaN(s) || math.IsInf(p, 0) || math.IsInf(cc, 0) {
		return float32(s)
	}
	// Two-sum: s + e = p + c exactly.
	bb := s - p
	e := (p - (s - bb)) + (cc - bb)
	r := float32(s)
	if e == 0 || float64(r) == s || math.IsInf(float64(r), 0) {
		return r
	}
	// s is not an f32; only an exact midpoint between two f32 values can
	// round the wrong way (a midpoint is a float64, and e is below half an
	// ulp of s).
	lo, hi := r, r
	if float64(r) < s {
		hi = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		lo = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if mid := (float64(lo) + float64(hi)) / 2; mid == s {
		if e > 0 {
			return hi
		}
		return lo
	}
	return r
}

// maxF32 is IEEE 754-2019 maximumNumber: a NaN operand is ignored, +0 is
// above −0 (docs/spec-decisions.md "Vector Engine min and max").
func maxF32(a, b uint32) uint32 {
	x, y := f32of(a), f32of(b)
	switch {
	case x != x && y != y:
		return canonNaN
	case x != x:
		return b
	case y != y:
		return a
	case x > y:
		return a
	case y > x:
		return b
	}
	// Equal: prefer +0 over −0.
	if a>>31 == 0 {
		return a
	}
	return b
}

// minF32 is minimumNumber: NaN ignored, −0 below +0.
func minF32(a, b uint32) uint32 {
	x, y := f32of(a), f32of(b)
	switch {
	case x != x && y != y:
		return canonNaN
	case x != x:
		return b
	case y != y:
		return a
	case x < y:
		return a
	case y < x:
		return b
	}
	if a>>31 == 1 {
		return a
	}
	return b
}

// absI64 is |v| without overflow.
func absI64(v int32) int64 {
	if v < 0 {
		return -int64(v)
	}
	return int64(v)
}

// veBinaryFns are the element functions of every ALU op, keyed by stage
// cluster and op; the bool of the key is f32.
type veOpKey struct {
	cluster string
	op      string
	f32     bool
}

var veFns = map[veOpKey]veOpFn{
	// Logic (002 L4806-4820): bitwise on the bits, f32 included.
	{"logic", "BitAnd", false}:          func(a, b, _ uint32) uint32 { return a & b },
	{"logic", "BitOr", false}:           func(a, b, _ uint32) uint32 { return a | b },
	{"logic", "BitXor", false}:          func(a, b, _ uint32) uint32 { return a ^ b },
	{"logic", "BitAnd", true}:           func(a, b, _ uint32) uint32 { return a & b },
	{"logic", "BitOr", true}:            func(a, b, _ uint32) uint32 { return a | b },
	{"logic", "BitXor", true}:           func(a, b, _ uint32) uint32 { return a ^ b },
	{"logic", "LeftShift", false}:       func(a, b, _ uint32) uint32 { return shiftLeft(a, b) },
	{"logic", "LogicRightShift", false}: func(a, b, _ uint32) uint32 { return shiftRightLogic(a, b) },
	{"logic", "ArithRightShift", false}: func(a, b, _ uint32) uint32 { return shiftRightArith(a, b) },

	// Fxp (002 L4826-4836; "MulFxp format").
	{"fxp", "AddFxp", false}:    func(a, b, _ uint32) uint32 { return a + b },
	{"fxp", "AddFxpSat", false}: func(a, b, _ uint32) uint32 { return uint32(sat32(int64(int32(a)) + int64(int32(b)))) },
	{"fxp", "SubFxp", false}:    func(a, b, _ uint32) uint32 { return a - b },
	{"fxp", "SubFxpSat", false}: func(a, b, _ uint32) uint32 { return uint32(sat32(int64(int32(a)) - int64(int32(b)))) },
	{"fxp", "LeftShift", false}: func(a, b, _ uint32) uint32 { return shiftLeft(a, b) },
	{"fxp", "LeftShiftSat", false}: func(a, b, _ uint32) uint32 {
		return shiftLeftSat(a, b)
	},
	{"fxp", "MulFxp", false}: func(a, b, _ uint32) uint32 {
		return uint32(sat32((int64(int32(a))*int64(int32(b))>>30 + 1) >> 1))
	},
	{"fxp", "MulInt", false}:               func(a, b, _ uint32) uint32 { return a * b },
	{"fxp", "LogicRightShift", false}:      func(a, b, _ uint32) uint32 { return shiftRightLogic(a, b) },
	{"fxp", "ArithRightShift", false}:      func(a, b, _ uint32) uint32 { return shiftRightArith(a, b) },
	{"fxp", "ArithRightShiftRound", false}: func(a, b, _ uint32) uint32 { return shiftRightRound(a, b) },

	// Float unary (002 L4878-4889; "Vector Engine transcendental
	// functions": the float64 function rounded once to f32).
	{"fp", "Exp", true}:     func(a, _, _ uint32) uint32 { return f64to32(math.Exp(float64(f32of(a)))) },
	{"fp", "NegExp", true}:  func(a, _, _ uint32) uint32 { return f64to32(math.Exp(-float64(f32of(a)))) },
	{"fp", "Sqrt", true}:    func(a, _, _ uint32) uint32 { return f64to32(math.Sqrt(float64(f32of(a)))) },
	{"fp", "Tanh", true}:    func(a, _, _ uint32) uint32 { return f64to32(math.Tanh(float64(f32of(a)))) },
	{"fp", "Sigmoid", true}: func(a, _, _ uint32) uint32 { return f64to32(sigmoid64(float64(f32of(a)))) },
	{"fp", "Erf", true}:     func(a, _, _ uint32) uint32 { return f64to32(math.Erf(float64(f32of(a)))) },
	{"fp", "Log", true}:     func(a, _, _ uint32) uint32 { return f64to32(math.Log(float64(f32of(a)))) },
	{"fp", "Sin", true}:     func(a, _, _ uint32) uint32 { return f64to32(math.Sin(float64(f32of(a)))) },
	{"fp", "Cos", true}:     func(a, _, _ uint32) uint32 { return f64to32(math.Cos(float64(f32of(a)))) },
	// Float binary and ternary (002 L4890-4904): IEEE binary32, round to
	// nearest even.
	{"fp", "AddF", true}:       func(a, b, _ uint32) uint32 { return f32bits(f32of(a) + f32of(b)) },
	{"fp", "SubF", true}:       func(a, b, _ uint32) uint32 { return f32bits(f32of(a) - f32of(b)) },
	{"fp", "MulF(Mul0)", true}: func(a, b, _ uint32) uint32 { return f32bits(f32of(a) * f32of(b)) },
	{"fp", "MulF(Mul1)", true}: func(a, b, _ uint32) uint32 { return f32bits(f32of(a) * f32of(b)) },
	{"fp", "DivF", true}:       func(a, b, _ uint32) uint32 { return f32bits(f32of(a) / f32of(b)) },
	{"fp", "FmaF", true}:       func(a, b, c uint32) uint32 { return f32bits(fmaF32(f32of(a), f32of(b), f32of(c))) },
	// FpDiv (002 L4918).
	{"fpdiv", "DivF", true}: func(a, b, _ uint32) uint32 { return f32bits(f32of(a) / f32of(b)) },

	// Clip (002 L4956-4972; "Vector Engine min and max").
	{"clip", "Min", false}: func(a, b, _ uint32) uint32 { return uint32(min(int32(a), int32(b))) },
	{"clip", "Max", false}: func(a, b, _ uint32) uint32 { return uint32(max(int32(a), int32(b))) },
	{"clip", "AbsMin", false}: func(a, b, _ uint32) uint32 {
		if absI64(int32(a)) < absI64(int32(b)) {
			return a
		}
		return b
	},
	{"clip", "AbsMax", false}: func(a, b, _ uint32) uint32 {
		if absI64(int32(a)) > absI64(int32(b)) {
			return a
		}
		return b
	},
	{"clip", "AddFxp", false}:    func(a, b, _ uint32) uint32 { return a + b },
	{"clip", "AddFxpSat", false}: func(a, b, _ uint32) uint32 { return uint32(sat32(int64(int32(a)) + int64(int32(b)))) },
	{"clip", "Min", true}:        func(a, b, _ uint32) uint32 { return minF32(a, b) },
	{"clip", "Max", true}:        func(a, b, _ uint32) uint32 { return maxF32(a, b) },
	{"clip", "AbsMin", true}: func(a, b, _ uint32) uint32 {
		if abs32(a) < abs32(b) {
			return a
		}
		return b
	},
	{"clip", "AbsMax", true}: func(a, b, _ uint32) uint32 {
		if abs32(a) > abs32(b) {
			return a
		}
		return b
	},
	{"clip", "Add", true}: func(a, b, _ uint32) uint32 { return f32bits(f32of(a) + f32of(b)) },

	// Intra-slice reduce (002 L5391-5402): the tree's and the
	// accumulator's combining op.
	{"reduce", "AddSat", false}: func(a, b, _ uint32) uint32 { return uint32(sat32(int64(int32(a)) + int64(int32(b)))) },
	{"reduce", "Max", false}:    func(a, b, _ uint32) uint32 { return uint32(max(int32(a), int32(b))) },
	{"reduce", "Min", false}:    func(a, b, _ uint32) uint32 { return uint32(min(int32(a), int32(b))) },
	{"reduce", "Add", true}:     func(a, b, _ uint32) uint32 { return f32bits(f32of(a) + f32of(b)) },
	{"reduce", "Max", true}:     func(a, b, _ uint32) uint32 { return maxF32(a, b) },
	{"reduce", "Min", true}:     func(a, b, _ uint32) uint32 { return minF32(a, b) },
}

// abs32 is |x| of f32 bits as a float32 (a NaN stays NaN, so that a
// comparison with it is false and AbsMin/AbsMax return their second
// argument, as `if |a| < |b| { a } else { b }` does).
func abs32(b uint32) float32 { return f32of(b & 0x7fffffff) }

// sigmoid64 is 1 / (1 + e^−x) in float64, written so that neither side
// overflows.
func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// reduceIdentity is the identity element of an intra-slice reduce op
// (002 L5391-5402, L5557-5561), as element bits.
func reduceIdentity(op string, f32 bool) (uint32, error) {
	switch {
	case op == "AddSat" && !f32:
		return 0, nil
	case op == "Add" && f32:
		return math.Float32bits(0), nil
	case op == "Max" && !f32:
		return 1 << 31, nil // i32::MIN
	case op == "Min" && !f32:
		return math.MaxInt32, nil
	case op == "Max" && f32:
		return math.Float32bits(float32(math.Inf(-1))), nil
	case op == "Min" && f32:
		return math.Float32bits(float32(math.Inf(1))), nil
	}
	return 0, fmt.Errorf("vector: no intra-slice reduce op %q on %s", op, map[bool]string{false: "i32", true: "f32"}[f32])
}

// FxpToFp is vector_fxp_to_fp(int_width) on one element: the f32 nearest
// (ties to even) to x·2^(int_width − 31), x read as a fixed-point number
// with 31 − int_width fractional bits (002 L4838; docs/spec-decisions.md
// "FxpToFp and FpToFxp"). int_width 31 is the plain i32 → f32 conversion.
func FxpToFp(x int32, intWidth int) uint32 {
	return f64to32(math.Ldexp(float64(x), intWidth-31))
}

// FpToFxp is vector_fp_to_fxp(int_width) on one element: x·2^(31 −
// int_width) rounded half away from zero and saturated to the i32 range;
// NaN gives i32::MAX with a clear sign bit, i32::MIN with a set one
// (002 L4949; docs/spec-decisions.md "FxpToFp and FpToFxp").
func FpToFxp(b uint32, intWidth int) int32 {
	x := f32of(b)
	if x != x {
		if b>>31 == 0 {
			return math.MaxInt32
		}
		return math.MinInt32
	}
	return sat32f(math.Round(math.Ldexp(float64(x), 31-intWidth)))
}

// sat32f clamps an integral float64 to the i32 range.
func sat32f(v float64) int32 {
	if v >= math.MaxInt32 {
		return math.MaxInt32
	}
	if v <= math.MinInt32 {
		return math.MinInt32
	}
	return int32(v)
}

// cmpHolds evaluates one InputCmp on element bits (furiosa-visa-std
// InputCmpI32/F32::matches): signed or float comparisons, the Unsigned
// ones on the raw bits.
func cmpHolds(op string, f32 bool, x, bound uint32) bool {
	switch op {
	case "True":
		return true
	case "False":
		return false
	case "LessUnsigned":
		return x < bound
	case "GreaterUnsigned":
		return x > bound
	}
	if f32 {
		a, b := f32of(x), f32of(bound)
		switch op {
		case "Equal":
			return a == b
		case "Less":
			return a < b
		case "Greater":
			return a > b
		}
		return false
	}
	a, b := int32(x), int32(bound)
	switch op {
	case "Equal":
		return a == b
	case "Less":
		return a < b
	case "Greater":
		return a > b
	}
	return false
}
