package verify

import (
	"fmt"
	"math"
	"strings"

	"tcpmap/model/dtype"
)

// Comparison is the outcome of comparing a simulated output with its
// reference, element by element.
type Comparison struct {
	// Name and DType are the output tensor's; N is its number of elements.
	Name  string
	DType dtype.DType
	N     int
	// Pass reports that every element is within its bound (integers:
	// equal) and the shapes agree.
	Pass bool
	// Problem, when set, says why the values could not be compared (shape
	// or dtype mismatch); Pass is then false and the other fields are zero.
	Problem string
	// MaxAbs is the largest |got − ref|; MaxRel the largest
	// |got − ref| / |ref| over the elements with ref ≠ 0. A NaN where the
	// reference is not NaN counts as an infinite error.
	MaxAbs, MaxRel float64
	// Worst is the index (Logical.IndexString) of the element whose error
	// is largest relative to its bound (ties: the larger error, then the
	// first), and Bound the deviation allowed there, on the side of its
	// error.
	Worst string
	Bound float64
	// Mismatches counts the elements outside their bound.
	Mismatches int
	// Unchecked counts the elements an expression reference cannot bound
	// (an interval across a pole or a domain edge), or that the kernel does
	// not write (a scatter's rows no index names): any value passes.
	// UncheckedWhy says which (Expected.UncheckedWhy; empty: the first).
	Unchecked    int
	UncheckedWhy string
	// FirstBad is the first mismatching element in row-major order; nil
	// when there is none.
	FirstBad *Mismatch
}

// Mismatch is one element outside its bound.
type Mismatch struct {
	// Index is the element's tensor index, e.g. `{I: 3, J: 7}`.
	Index string
	// Ref is the reference value (unrounded), Got the simulated one, and
	// [Lo, Hi] the values Got may take.
	Ref, Got, Lo, Hi float64
}

// The unit roundoffs of the simulator's f32 accumulation and of the
// reference's float64 arithmetic (round to nearest: u = 2^-p).
const (
	uF32 = 0x1p-24
	uF64 = 0x1p-53
	// etaF32 is the smallest normal f32: an operation whose result
	// underflows errs by less than this, with gradual underflow or with
	// flush-to-zero.
	etaF32 = 0x1p-126
)

// gamma is γ_n = n·u/(1 − n·u) (Higham, Lemma 3.1), +Inf when n·u ≥ 1.
func gamma(n int, u float64) float64 {
	nu := float64(n) * u
	if nu >= 1 {
		return math.Inf(1)
	}
	return nu / (1 - nu)
}

// Compare compares got, the simulated output read back by tensor index,
// with exp, the reference computed by Reference, and reports every element
// outside its bound.
//
// Integer outputs must equal the reference exactly (the reference is
// already wrapped to the output dtype).
//
// Float outputs get a rigorous elementwise bound. The simulator multiplies
// the operands into f32 (bf16 and f8 products are exact in f32; the
// Contraction Engine widens bf16/f8 to f32, 002 L4391), sums the products
// in f32 — the reducer's tree, then temporal accumulation, in whatever order
// — and rounds the f32 result to the output dtype once. By the standard
// model of floating-point arithmetic, fl(x op y) = (x op y)(1 + δ),
// |δ| ≤ u (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// SIAM 2002, §2.2, eq. (2.4)), a term that goes through at most n roundings
// carries a relative error of at most γ_n = n·u/(1 − n·u) (Lemma 3.1), so
// the computed sum ŝ of s = Σ t_i satisfies |ŝ − s| ≤ γ_n Σ|t_i| whatever
// the summation order (§3.1 for inner products; §4.2 for any order: each
// term takes part in at most n − 1 additions). n is Expected.Depth: for a
// two-input einsum of R terms per element, one (possibly inexact) product
// and at most R − 1 additions, so n = R. Underflow adds at most one
// smallest normal f32 (2^-126) per operation, whether the hardware
// underflows gradually or flushes to zero (the underflow term of the model
// with underflow, Higham §2.2): Expected.Ops of them. The
// reference itself is computed in float64 with the same operations, so it
// errs by at most γ64_n·A, and its A = Σ|t_i| (Expected.Abs) is at least
// (1 − γ64_n) times the true one. Hence the f32 result lies within
//
//	E = (γ32_n + γ64_n) · A / (1 − γ64_n) + Ops · 2^-126
//
// of the reference r. Rounding to the output dtype is monotone (round to
// nearest even, f8e5m2's round half up, saturation and overflow to ±∞ all
// are), so the output lies in [Round(r − E), Round(r + E)]: that interval,
// computed with dtype.Round, is the bound. It exceeds [r − E, r + E] by at
// most half an ulp of the output dtype at each end, and it stays correct
// where the output saturates or overflows. A reference that is NaN or ±∞
// requires the same value. The bound assumes what the Contraction Engine
// does: f32 accumulation and one rounding to the output dtype; a kernel that
// rounds partial sums to a narrower type in between exceeds it.
func Compare(exp *Expected, got *Logical) Comparison {
	if exp == nil || exp.Out == nil {
		return Comparison{Problem: "no reference"}
	}
	ref := exp.Out
	c := Comparison{Name: ref.Name, DType: ref.DType, N: len(ref.Vals), UncheckedWhy: exp.UncheckedWhy}
	switch {
	case got == nil:
		c.Problem = "no simulated values"
		return c
	case got.DType != ref.DType:
		c.Problem = fmt.Sprintf("simulated values are %s, the reference %s", got.DType, ref.DType)
		return c
	case !sameAxes(got.Axes, ref.Axes) || len(got.Vals) != len(ref.Vals):
		c.Problem = fmt.Sprintf("simulated values have axes %s and %d elements, the reference %s and %d",
			axesString(got.Axes), len(got.Vals), axesString(ref.Axes), len(ref.Vals))
		return c
	}
	isInt := ref.DType.IsInt()
	explicit := exp.Lo != nil && exp.Hi != nil
	if explicit && (len(exp.Lo.Vals) != len(ref.Vals) || len(exp.Hi.Vals) != len(ref.Vals)) {
		c.Problem = "the reference's bounds do not match its values"
		return c
	}
	if !isInt && !explicit && (exp.Abs == nil || len(exp.Abs.Vals) != len(ref.Vals)) {
		c.Problem = "the reference has no magnitudes for the float bound"
		return c
	}
	var g, under float64
	if !isInt {
		g = (gamma(exp.Depth, uF32) + gamma(exp.Depth, uF64)) / (1 - gamma(exp.Depth, uF64))
		under = float64(exp.Ops) * etaF32
	}
	worst, worstRatio, worstErr := -1, -1.0, 0.0
	for i, r := range ref.Vals {
		v := got.Vals[i]
		lo, hi := r, r
		unchecked := false
		switch {
		case explicit:
			lo, hi = exp.Lo.Vals[i], exp.Hi.Vals[i]
			unchecked = math.IsInf(lo, -1) && math.IsInf(hi, 1)
			if !isInt && !math.IsNaN(lo) && !math.IsNaN(hi) {
				lo, hi = roundOut(lo, ref.DType, false), roundOut(hi, ref.DType, true)
			}
		case !isInt && !math.IsNaN(r) && !math.IsInf(r, 0):
			e := (g*exp.Abs.Vals[i] + under) * (1 + 0x1p-50)
			lo = dtype.Round(math.Nextafter(r-e, math.Inf(-1)), ref.DType)
			hi = dtype.Round(math.Nextafter(r+e, math.Inf(1)), ref.DType)
		}
		var err float64
		ok := false
		switch {
		case unchecked:
			ok = true
			c.Unchecked++
		case explicit && math.IsNaN(lo):
			ok = math.IsNaN(v)
			if !ok {
				err = math.Inf(1)
			}
		case math.IsNaN(r):
			ok = math.IsNaN(v)
			if !ok {
				err = math.Inf(1)
			}
		case math.IsNaN(v):
			err = math.Inf(1)
		case math.IsInf(r, 0):
			ok = v == r
			if !ok {
				err = math.Inf(1)
			}
		default:
			err = math.Abs(v - r)
			ok = v >= lo && v <= hi
		}
		if unchecked {
			continue // no bound to rank it by
		}
		if err > c.MaxAbs {
			c.MaxAbs = err
		}
		if r != 0 && !math.IsNaN(r) {
			if q := err / math.Abs(r); q > c.MaxRel {
				c.MaxRel = q
			}
		}
		allowed := 0.0
		if !math.IsNaN(r) && !math.IsInf(r, 0) {
			up, down := math.Max(hi-r, 0), math.Max(r-lo, 0)
			switch {
			case v > r:
				allowed = up
			case v < r:
				allowed = down
			default:
				allowed = math.Max(up, down)
			}
		}
		ratio := 0.0
		if err > 0 {
			ratio = math.Inf(1)
			if allowed > 0 {
				ratio = err / allowed
			}
		}
		if !ok && ratio <= 1 {
			// Outside an interval whose rounded ends are not symmetric
			// about r: a mismatch all the same, ranked above every pass.
			ratio = math.Nextafter(1, 2)
		}
		if ratio > worstRatio || (ratio == worstRatio && err > worstErr) {
			worst, worstRatio, worstErr = i, ratio, err
			c.Bound = allowed
		}
		if !ok {
			c.Mismatches++
			if c.FirstBad == nil {
				c.FirstBad = &Mismatch{Index: ref.IndexString(i), Ref: r, Got: v, Lo: lo, Hi: hi}
			}
		}
	}
	if worst >= 0 {
		c.Worst = ref.IndexString(worst)
	}
	c.Pass = c.Mismatches == 0
	return c
}

// String prints the comparison on one line for the CLI, e.g.
//
//	out (bf16, 262144 elements): pass; max abs error 0.0039, max rel error 0.0039; bound 0.0078 at {I: 3, J: 7}
func (c Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s, %d elements): ", c.Name, c.DType, c.N)
	if c.Problem != "" {
		fmt.Fprintf(&b, "FAIL: %s", c.Problem)
		return b.String()
	}
	if c.Pass {
		b.WriteString("pass")
	} else {
		fmt.Fprintf(&b, "FAIL, %d of %d elements outside the bound; first %s: ref %.9g, got %.9g, allowed [%.9g, %.9g]",
			c.Mismatches, c.N, c.FirstBad.Index, c.FirstBad.Ref, c.FirstBad.Got, c.FirstBad.Lo, c.FirstBad.Hi)
	}
	fmt.Fprintf(&b, "; max abs error %.3g, max rel error %.3g; bound %.3g at %s", c.MaxAbs, c.MaxRel, c.Bound, c.Worst)
	if c.Unchecked > 0 {
		why := c.UncheckedWhy
		if why == "" {
			why = "the bound crosses a pole or a domain edge"
		}
		fmt.Fprintf(&b, "; %d element%s unchecked (%s)", c.Unchecked, map[bool]string{true: "", false: "s"}[c.Unchecked == 1], why)
	}
	return b.String()
}
