package engines

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

func fb(x float32) uint32 { return math.Float32bits(x) }

// veApply runs one op of a stage kind on element bits.
func veApply(t *testing.T, k kernel.StageKind, op string, f32 bool, a, b, c uint32) uint32 {
	t.Helper()
	fn, ok := VeFunc(k, op, f32)
	require.True(t, ok, "%s %s", k, op)
	return fn(a, b, c)
}

// TestVectorShifts: the shift ops of Logic and Fxp (002 L4812-4814,
// L4830-4836) with amounts inside and beyond the word
// (docs/spec-decisions.md "Vector Engine shift amounts").
func TestVectorShifts(t *testing.T) {
	u := func(v int32) uint32 { return uint32(v) }
	for _, tc := range []struct {
		k       kernel.StageKind
		op      string
		a, b    int32
		want    int32
		comment string
	}{
		{kernel.StVectorLogic, "LeftShift", 3, 4, 48, "002 L4812"},
		{kernel.StVectorLogic, "LeftShift", -1, 31, minI32, "the sign bit"},
		{kernel.StVectorLogic, "LeftShift", -1, 32, 0, "≥ 32 shifts every bit out"},
		{kernel.StVectorLogic, "LeftShift", 1, -1, 0, "a negative amount is ≥ 32 unsigned"},
		{kernel.StVectorLogic, "LogicRightShift", -1, 28, 15, "002 L4813: zeros in"},
		{kernel.StVectorLogic, "LogicRightShift", -1, 40, 0, "≥ 32"},
		{kernel.StVectorLogic, "ArithRightShift", -16, 2, -4, "002 L4814: the sign in"},
		{kernel.StVectorLogic, "ArithRightShift", -16, 99, -1, "≥ 32: the sign fills"},
		{kernel.StVectorLogic, "ArithRightShift", 16, 99, 0, "≥ 32: the sign fills"},
		{kernel.StVectorFxp, "LeftShift", 0x40000001, 1, minI32 + 2, "002 L4830: wraps"},
		{kernel.StVectorFxp, "LeftShiftSat", 0x40000001, 1, maxI32, "002 L4831: saturates"},
		{kernel.StVectorFxp, "LeftShiftSat", -0x40000000, 1, minI32, "exactly MIN"},
		{kernel.StVectorFxp, "LeftShiftSat", -0x40000001, 1, minI32, "below MIN"},
		{kernel.StVectorFxp, "LeftShiftSat", 3, 2, 12, "in range"},
		{kernel.StVectorFxp, "LeftShiftSat", 0, 100, 0, "0 stays 0"},
		{kernel.StVectorFxp, "LeftShiftSat", 1, 31, maxI32, "2^31 saturates"},
		{kernel.StVectorFxp, "LeftShiftSat", -1, 31, minI32, "−2^31 fits"},
		{kernel.StVectorFxp, "LeftShiftSat", -1, 32, minI32, "beyond the word"},
		{kernel.StVectorFxp, "ArithRightShiftRound", 5, 1, 3, "002 L4836: 2.5 rounds half up"},
		{kernel.StVectorFxp, "ArithRightShiftRound", -5, 1, -2, "−2.5 rounds half up"},
		{kernel.StVectorFxp, "ArithRightShiftRound", 7, 2, 2, "1.75"},
		{kernel.StVectorFxp, "ArithRightShiftRound", 7, 0, 7, "no shift"},
		{kernel.StVectorFxp, "ArithRightShiftRound", maxI32, 31, 1, "(2^31 − 1) / 2^31 rounds to 1"},
		{kernel.StVectorFxp, "ArithRightShiftRound", minI32, 31, -1, ""},
		{kernel.StVectorFxp, "ArithRightShiftRound", minI32, 32, 0, "≥ 32: 0"},
		{kernel.StVectorFxp, "LogicRightShift", minI32, 31, 1, "002 L4834"},
		{kernel.StVectorFxp, "ArithRightShift", minI32, 31, -1, "002 L4835"},
	} {
		t.Run(fmt.Sprintf("%s/%s(%d,%d)", tc.k, tc.op, tc.a, tc.b), func(t *testing.T) {
			assert.Equal(t, tc.want, int32(veApply(t, tc.k, tc.op, false, u(tc.a), u(tc.b), 0)), tc.comment)
		})
	}
	// Oracles: LeftShiftSat = clamp(a·2^b), ArithRightShiftRound =
	// floor((a + 2^(b−1)) / 2^b) in exact integers, for amounts 0..40.
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 5000; i++ {
		a := int32(rng.Uint32())
		if i%4 == 0 {
			a >>= rng.Intn(31)
		}
		b := uint32(rng.Intn(41))
		A := big.NewInt(int64(a))
		l := new(big.Int).Lsh(A, uint(b))
		want := l.Int64()
		if l.Cmp(big.NewInt(maxI32)) > 0 {
			want = maxI32
		} else if l.Cmp(big.NewInt(minI32)) < 0 {
			want = minI32
		}
		require.Equal(t, int32(want), int32(veApply(t, kernel.StVectorFxp, "LeftShiftSat", false, uint32(a), b, 0)), "%d << %d", a, b)
		r := new(big.Int).Set(A)
		if b > 0 {
			r.Add(r, new(big.Int).Lsh(big.NewInt(1), uint(b-1)))
		}
		r.Rsh(r, uint(b)) // big.Int Rsh rounds toward −∞ (floor)
		require.Equal(t, int32(r.Int64()), int32(veApply(t, kernel.StVectorFxp, "ArithRightShiftRound", false, uint32(a), b, 0)), "%d >>r %d", a, b)
	}
}

// TestVectorConversions: VEC-EX-21 (vector-and-kernels.md §3; 002 L4838,
// L4949; docs/spec-decisions.md "FxpToFp and FpToFxp").
func TestVectorConversions(t *testing.T) {
	for _, tc := range []struct {
		x    int32
		iw   int
		want float32
	}{
		{7, 31, 7.0},
		{0x40000000, 0, 0.5},
		{16777217, 31, 16777216.0}, // RNE tie → even
		{16777219, 31, 16777220.0},
		{minI32, 31, -2147483648.0},
		{minI32, 0, -1.0},
		{maxI32, 31, 2147483648.0},
		{-3, 30, -1.5},
		{0, 31, 0},
	} {
		assert.Equal(t, fb(tc.want), FxpToFp(tc.x, tc.iw), "fxp_to_fp(%d)(%d)", tc.iw, tc.x)
	}
	for _, tc := range []struct {
		x    uint32
		iw   int
		want int32
	}{
		{fb(2.5), 31, 3}, // half away from zero
		{fb(-2.5), 31, -3},
		{fb(0.5), 31, 1},
		{fb(1e10), 31, maxI32},
		{fb(-1e10), 31, minI32},
		{canonNaN, 31, maxI32},
		{0xffc00000, 31, minI32}, // a NaN with the sign bit
		{fb(0.25), 0, 0x20000000},
		{fb(-1), 0, minI32},
		{fb(1), 0, maxI32}, // 2^31 saturates
		{fb(float32(math.Inf(1))), 31, maxI32},
	} {
		assert.Equal(t, tc.want, FpToFxp(tc.x, tc.iw), "fp_to_fxp(%d)(%#x)", tc.iw, tc.x)
	}
	// Round trip of every i32 that f32 holds exactly.
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 2000; i++ {
		x := int32(rng.Uint32()) >> 8
		iw := rng.Intn(32)
		assert.Equal(t, x, FpToFxp(FxpToFp(x, iw), iw))
	}
}

// TestVectorFloatOps: IEEE binary32 arithmetic, canonical NaNs, the FMA's
// single rounding, min/max of ±0 and NaN (docs/spec-decisions.md "Vector
// Engine float arithmetic", "Vector Engine min and max") and the worked
// values of VEC-EX-5, -8, -10 (002 L4905-4906, L4996-5050).
func TestVectorFloatOps(t *testing.T) {
	fp := func(op string, a, b, c float32) float32 {
		k := kernel.StVectorFpBinary
		switch op {
		case "Exp", "NegExp", "Sqrt", "Tanh", "Sigmoid", "Erf", "Log", "Sin", "Cos":
			k = kernel.StVectorFpUnary
		case "FmaF":
			k = kernel.StVectorFpTernary
		}
		return f32of(veApply(t, k, op, true, fb(a), fb(b), fb(c)))
	}
	// exp(sqrt(((5 + 1) * 2) * 3)) = e^6 (VEC-EX-5).
	x := fp("AddF", 5, 1, 0)
	x = fp("MulF(Mul0)", x, 2, 0)
	x = fp("MulF(Mul1)", x, 3, 0)
	x = fp("Sqrt", x, 0, 0)
	assert.Equal(t, float32(6), x)
	assert.Equal(t, float32(403.4288024902344), fp("Exp", x, 0, 0), "VEC-EX-5")
	assert.Equal(t, float32(0.11920292), fp("Sigmoid", -2, 0, 0), "VEC-EX-10")
	assert.Equal(t, float32(1), fp("Sigmoid", 100, 0, 0), "VEC-EX-4: sigmoid(100.0) = 1.0")
	assert.Equal(t, float32(0.5), fp("Sigmoid", 0, 0, 0))
	assert.Equal(t, float32(math.Exp(-3)), fp("NegExp", 3, 0, 0))
	assert.Equal(t, float32(-8), fp("MulF(Mul0)", -4, 2, 0), "VEC-EX-8: 2x")
	assert.Equal(t, uint32(canonNaN), veApply(t, kernel.StVectorFpBinary, "DivF", true, fb(0), fb(0), 0), "0/0 is the canonical NaN")
	assert.Equal(t, uint32(canonNaN), veApply(t, kernel.StVectorFpUnary, "Sqrt", true, fb(-1), 0, 0))
	assert.Equal(t, uint32(canonNaN), veApply(t, kernel.StVectorFpUnary, "Log", true, fb(-1), 0, 0))
	assert.Equal(t, float32(math.Inf(-1)), fp("Log", 0, 0, 0))
	assert.Equal(t, float32(1.5), f32of(veApply(t, kernel.StVectorFpDiv, "DivF", true, fb(3), fb(2), 0)), "002 L4918")

	// FMA: one rounding. (1 + 2^-13)² = 1 + 2^-12 + 2^-26: the f32 product
	// loses 2^-26, the fused one keeps it.
	a := float32(1 + 0x1p-13)
	got := fp("FmaF", a, a, -float32(1+0x1p-12))
	assert.Equal(t, float32(0x1p-26), got)
	assert.Equal(t, float32(0), fp("SubF", fp("MulF(Mul0)", a, a, 0), float32(1+0x1p-12), 0), "an unfused multiply-add rounds twice")
	// Oracle: random operands against exact rational arithmetic.
	rng := rand.New(rand.NewSource(9))
	r32 := func() float32 {
		return float32(math.Ldexp(rng.Float64()*2-1, rng.Intn(40)-20))
	}
	for i := 0; i < 20000; i++ {
		a, b, c := r32(), r32(), r32()
		if i%3 == 0 {
			c = -float32(float64(a) * float64(b)) // cancellation
		}
		exact := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(a)), big.NewFloat(float64(b)))
		exact.Add(exact, big.NewFloat(float64(c)))
		w, _ := exact.Float32() // round to nearest even
		require.Equal(t, fb(w), fb(fp("FmaF", a, b, c)), "fma(%g, %g, %g)", a, b, c)
	}
	// Ties: a midpoint reached only through the float64 sum.
	for i := 0; i < 20000; i++ {
		a := float32(1 + float64(rng.Intn(1<<12))*0x1p-12)
		b := float32(1 + float64(rng.Intn(1<<12))*0x1p-12)
		c := float32(math.Ldexp(float64(rng.Intn(1<<23)), -rng.Intn(60)))
		exact := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(a)), big.NewFloat(float64(b)))
		exact.Add(exact, big.NewFloat(float64(c)))
		w, _ := exact.Float32()
		require.Equal(t, fb(w), fb(fp("FmaF", a, b, c)), "fma(%g, %g, %g)", a, b, c)
	}

	// Transcendentals: within half an ulp of f32 of the float64 function
	// (docs/spec-decisions.md "Vector Engine transcendental functions").
	for _, op := range []struct {
		name string
		f    func(float64) float64
	}{{"Exp", math.Exp}, {"Tanh", math.Tanh}, {"Sigmoid", func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
		{"Erf", math.Erf}, {"Sin", math.Sin}, {"Cos", math.Cos}, {"Sqrt", math.Sqrt}, {"Log", math.Log}} {
		for i := 0; i < 2000; i++ {
			x := float32(rng.Float64()*20 - 10)
			if op.name == "Sqrt" || op.name == "Log" {
				x = float32(math.Abs(float64(x)) + 1e-3)
			}
			want := op.f(float64(x))
			got := float64(fp(op.name, x, 0, 0))
			ulp := math.Abs(float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want)))
			require.LessOrEqual(t, math.Abs(got-want), 0.5*ulp*(1+1e-6)+1e-45, "%s(%g)", op.name, x)
		}
	}

	clip := func(op string, a, b uint32) uint32 { return veApply(t, kernel.StVectorClip, op, true, a, b, 0) }
	negZero := fb(float32(math.Copysign(0, -1)))
	assert.Equal(t, fb(0), clip("Max", negZero, fb(0)), "VEC-EX-3: max(−0.0, 0.0) = +0.0")
	assert.Equal(t, fb(0), clip("Max", fb(0), negZero))
	assert.Equal(t, negZero, clip("Min", fb(0), negZero))
	assert.Equal(t, fb(2), clip("Max", canonNaN, fb(2)), "a NaN operand is ignored")
	assert.Equal(t, fb(2), clip("Min", fb(2), canonNaN))
	assert.Equal(t, uint32(canonNaN), clip("Max", canonNaN, 0xffc00000))
	assert.Equal(t, fb(-3), clip("AbsMax", fb(-3), fb(2)), "the operand of larger magnitude, signed")
	assert.Equal(t, fb(2), clip("AbsMin", fb(-3), fb(2)))
	assert.Equal(t, fb(2), clip("AbsMax", fb(-2), fb(2)), "ties give the second")
	assert.Equal(t, float32(-1.5), f32of(clip("Add", fb(-3), fb(1.5))))
	// ReLU (VEC-EX-3, 002 L4590-4607).
	for _, c := range [][2]float32{{-1.5, 0}, {0, 0}, {2, 2}} {
		assert.Equal(t, fb(c[1]), clip("Max", fb(c[0]), fb(0)))
	}
	ci := func(op string, a, b int32) int32 {
		return int32(veApply(t, kernel.StVectorClip, op, false, uint32(a), uint32(b), 0))
	}
	assert.Equal(t, int32(105), ci("Max", 105, 5), "VEC-EX-9: max(x + 100, x)")
	assert.Equal(t, int32(2147483600), ci("Max", -2147483596, 2147483600), "VEC-EX-9: the wrapped sum loses")
	assert.Equal(t, int32(minI32), ci("AbsMax", minI32, maxI32), "|MIN| > |MAX| without overflow")
	assert.Equal(t, int32(maxI32), ci("AddFxpSat", maxI32, 1))
	assert.Equal(t, int32(minI32), ci("AddFxp", maxI32, 1))
	l := func(op string, a, b uint32) uint32 { return veApply(t, kernel.StVectorLogic, op, true, a, b, 0) }
	assert.Equal(t, fb(3), l("BitAnd", fb(-3), 0x7fffffff), "|x| by masking the sign bit (002 L4818)")
	assert.Equal(t, fb(-3), l("BitXor", fb(3), 0x80000000))
}

// TestVectorReduceIdentity: the identity elements (002 L5391-5402,
// L5557-5561).
func TestVectorReduceIdentity(t *testing.T) {
	for _, tc := range []struct {
		op   string
		f32  bool
		want uint32
	}{
		{"AddSat", false, 0}, {"Max", false, 1 << 31}, {"Min", false, maxI32},
		{"Add", true, 0}, {"Max", true, 0xff800000}, {"Min", true, 0x7f800000},
	} {
		got, err := reduceIdentity(tc.op, tc.f32)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s f32=%v", tc.op, tc.f32)
		fn := veFns[veOpKey{"reduce", tc.op, tc.f32}]
		for _, x := range []uint32{0, 5, fb(-3), 1 << 31, maxI32} {
			if tc.f32 && x&0x7fffffff > 0x7f800000 {
				continue // a NaN
			}
			if tc.f32 && tc.op == "Add" && x == 1<<31 {
				continue // 0.0 + −0.0 = +0.0: the manual's identity 0.0 is exact for every other value
			}
			assert.Equal(t, x, fn(got, x, 0), "identity of %s on %#x", tc.op, x)
		}
	}
	_, err := reduceIdentity("AddSat", true)
	assert.Error(t, err)
}

// TestVectorComparisons: VEC-EX-23, the four comparisons setting bits 0-3
// of the ExecutionId (002 L4801; furiosa-visa-std branch.rs).
func TestVectorComparisons(t *testing.T) {
	cmps := []kernel.VeCmpConfig{{Op: "Less", Bits: 0}, {Op: "Equal", Bits: 5}, {Op: "Greater", Bits: 100}, {Op: "True"}}
	c := &kernel.VectorBranchConfig{Mode: kernel.BranchComparison, DType: dtype.I32, Cmps: cmps}
	in := i32Packet(7, 5, -1, 200, 0, 100, 101, minI32)
	tags := make([]uint8, 8)
	require.NoError(t, VectorBranchApply(c, VEStream{Data: in, Lanes: 8}, 0, tags))
	assert.Equal(t, []uint8{8, 10, 9, 12, 8, 8, 12, 9}, tags, "VEC-EX-23: 7 → 8, 5 → 10, −1 → 9, 200 → 12")
	assert.True(t, cmpHolds("LessUnsigned", false, 5, uint32(0xffffffff)))
	assert.False(t, cmpHolds("Less", false, 5, uint32(0xffffffff)))
	assert.True(t, cmpHolds("Less", true, fb(-1), fb(0)))
	assert.False(t, cmpHolds("Equal", true, canonNaN, canonNaN))
	assert.True(t, cmpHolds("GreaterUnsigned", true, fb(-1), fb(1)), "on the bits")
}
