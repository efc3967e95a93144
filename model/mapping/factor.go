package mapping

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// FactorKind classifies a [Factor].
type FactorKind uint8

// Factor kinds of the factorized form (reference-notes §2.5).
const (
	FactorTerm      FactorKind = iota // a digit that steps an axis coordinate
	FactorBroadcast                   // a live digit that touches no axis (m![n], n > 1)
	FactorPad                         // padding of the cumulative extent
)

// String names the kind.
func (k FactorKind) String() string {
	switch k {
	case FactorTerm:
		return "Term"
	case FactorBroadcast:
		return "Broadcast"
	case FactorPad:
		return "Pad"
	}
	return fmt.Sprintf("FactorKind(%d)", k)
}

// Factor is one level of the factorized form (reference-notes §2.5
// `enum Factor { Term{inner, resize}, Padding{size, kind} }`, with
// broadcasts as their own kind).
//
// A Term or Broadcast factor is a digit with Extent values 0..Extent-1: it
// multiplies the cumulative extent by Extent, and for a Term each digit
// value v adds v·Stride to the coordinate of Axis. A Pad factor pads the
// cumulative extent of everything inner to it (E, the product/padded size
// of the factors before it) up to Extent: inside each block of Extent
// positions, offsets ≥ E are padding of kind Pad.
type Factor struct {
	Kind     FactorKind
	Axis     string  // Term: the axis name (a skewed axis keeps its own name, e.g. B')
	AxisSize int     // Term: the axis size
	Stride   int     // Term: coordinate step per digit value (axis coordinates)
	Extent   int     // Term, Broadcast: number of digit values (the live count); Pad: padded cumulative size
	Pad      PadKind // Pad: the padding kind
	sym      *Expr   // Term: the symbol leaf, for printing
	part     *Expr   // internal: an opaque part spliced in by TileView
}

// String prints a factor as `B:1x32` (axis, stride, extent), `*4`
// (broadcast) or `#16` / `#{!}16` / `#{0}16` (padding).
func (f Factor) String() string {
	switch f.Kind {
	case FactorTerm:
		if f.part != nil {
			return "<" + f.part.String() + ">"
		}
		return f.Axis + ":" + strconv.Itoa(f.Stride) + "x" + strconv.Itoa(f.Extent)
	case FactorBroadcast:
		return "*" + strconv.Itoa(f.Extent)
	}
	return f.Pad.op() + strconv.Itoa(f.Extent)
}

// Factors is a factorized mapping: factors innermost (fastest-varying)
// first. Decoding position p walks the factors outermost first: with E the
// cumulative extent below factor k, a Term or Broadcast takes digit p / E and
// keeps p % E; a Pad makes the cell padding when p ≥ E (reference-notes
// §2.5). The sequencer derivation walks this list to build its loop nest:
// each Term is a loop of Extent iterations whose address step is Stride
// times the axis' element step.
type Factors []Factor

// String prints the list innermost first, e.g. `[B:32x2 B:1x32 B:64x8]`
// for m![B / 64, B % 32, B / 32 % 2].
func (fs Factors) String() string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Equal reports whether two factor lists are the same.
func (fs Factors) Equal(o Factors) bool {
	if len(fs) != len(o) {
		return false
	}
	for i, f := range fs {
		g := o[i]
		if f.Kind != g.Kind || f.Axis != g.Axis || f.AxisSize != g.AxisSize || f.Stride != g.Stride ||
			f.Extent != g.Extent || f.Pad != g.Pad || (f.part == nil) != (g.part == nil) {
			return false
		}
	}
	return true
}

// Size is the total extent (1 for the empty list, the identity).
func (fs Factors) Size() int {
	e := 1
	for _, f := range fs {
		if f.Kind == FactorPad {
			e = f.Extent
		} else {
			e *= f.Extent
		}
	}
	return e
}

// Extents returns the cumulative extent after each factor.
func (fs Factors) Extents() []int {
	out := make([]int, len(fs))
	e := 1
	for i, f := range fs {
		if f.Kind == FactorPad {
			e = f.Extent
		} else {
			e *= f.Extent
		}
		out[i] = e
	}
	return out
}

// Map decodes position i through the factor list (reference-notes §2.5);
// it agrees with [Expr.Map] of the expression the list came from.
func (fs Factors) Map(i int) Cell {
	size := fs.Size()
	if i < 0 || i >= size {
		return Cell{Kind: OOB}
	}
	ext := fs.Extents()
	var acc []term
	p := i
	for k := len(fs) - 1; k >= 0; k-- {
		below := 1
		if k > 0 {
			below = ext[k-1]
		}
		f := fs[k]
		switch f.Kind {
		case FactorPad:
			if p >= below {
				return Cell{Kind: Pad, Pad: f.Pad}
			}
		default:
			d := p / below
			p %= below
			if f.Kind == FactorTerm && d > 0 {
				acc = append(acc, term{axis: f.Axis, size: f.AxisSize, value: d * f.Stride})
			}
		}
	}
	return liveCell(acc)
}

// ErrNotFactorizable is wrapped by the errors of [Factorize] for mappings
// that have no factorized form over axis symbols (ragged resizes, strides
// that straddle padding, linear combinations, ...).
var ErrNotFactorizable = fmt.Errorf("not factorizable")

// verifyLimit bounds the sizes Factorize checks by enumeration when its
// structural result needs it (see Factorize).
const verifyLimit = 1 << 22

// Factorize returns the canonical factorized form of e (reference-notes
// §2.5-2.6): factors innermost first, with
//
//   - no Term or Broadcast of extent 1 and no Pad that pads nothing;
//   - adjacent Terms of one axis merged when the outer stride is the inner
//     stride times the inner extent (`B / 64, B % 64` is the single term B);
//   - adjacent Broadcasts merged, adjacent Pads of one kind merged (the larger
//     wins); Pads of different kinds stack (reference-notes §2.5);
//   - no coordinate overshoot: a term that would step past its axis is cut
//     to its live digits and followed by Top padding (`[R # 16 / 4, R # 16 % 4]`
//     with R = 14 is R:1x14 #16).
//
// Two expressions with the same Map have the same canonical factors, so
// Factorize (and [Normalize]) decides equivalence of factorizable mappings
// without enumerating positions. The list is built structurally from the
// expression (no enumeration); when the expression has composite atoms with
// several contributions or needed an overshoot cut, the result is also
// checked against Map position by position (sizes up to 2^22). Errors wrap
// [ErrNotFactorizable].
//
// Answers are remembered by the expression's structure (factorized): a
// planner lowers thousands of candidates whose expressions are new
// pointers over a few thousand distinct structures (GEMV 256×2048: 2.2 M
// calls, 5,676 distinct texts). The caller gets its own copy.
func Factorize(e *Expr) (Factors, error) {
	fs, err := FactorizeShared(e)
	return slices.Clip(slices.Clone(fs)), err
}

// FactorizeShared is Factorize without the copy: the factors returned are
// the cache's, shared by every caller, which must not modify them (a
// planner's hot loop compares them and reads them).
func FactorizeShared(e *Expr) (Factors, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	h := e.Hash()
	if x, ok := factorized.get(h, e); ok {
		return x.fs, x.err
	}
	fs, err := factorize(e)
	factorized.put(h, e, fs, err)
	return fs, err
}

// factorize is Factorize without the cache.
func factorize(e *Expr) (Factors, error) {
	fs, err := factors(e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", e, ErrNotFactorizable, err)
	}
	fs, cut, err := cutOvershoot(fs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", e, ErrNotFactorizable, err)
	}
	if cut || sharedAtoms(e) {
		if e.size > verifyLimit {
			return nil, fmt.Errorf("%s: %w: composite atoms of size %d are too large to verify", e, ErrNotFactorizable, e.size)
		}
		if at := verifiedAt(e, fs); at >= 0 {
			return nil, fmt.Errorf("%s: %w: the factors %v differ from the mapping at position %d", e, ErrNotFactorizable, fs, at)
		}
	}
	return fs, nil
}

// verified remembers verifyFactors' answers by the expression's text and
// its axes' sizes (verifyKey: the same text over the same axes is the same
// map, and factors builds the same list from it): a kernel's ops repeat a few expressions, and each
// check enumerates up to verifyLimit positions. Bounded: a full cache is
// emptied.
var verified struct {
	sync.Mutex
	at map[string]int
}

// maxVerified bounds the verified cache.
const maxVerified = 4096

// verifyKey is e's text followed by the size (and skew) of each axis it
// names.
func verifyKey(e *Expr) string {
	var b strings.Builder
	b.WriteString(e.Text())
	e.walk(func(x *Expr) {
		if x.kind == KindSymbol {
			fmt.Fprintf(&b, "|%s=%d", x.name, x.size)
			if x.skew != nil {
				fmt.Fprintf(&b, "=%s-%s", x.skew.Base, x.skew.By)
			}
		}
	})
	return b.String()
}

// verifiedAt is verifyFactors(e, fs), cached by verifyKey.
func verifiedAt(e *Expr, fs Factors) int {
	key := verifyKey(e)
	verified.Lock()
	at, ok := verified.at[key]
	verified.Unlock()
	if ok {
		return at
	}
	at = verifyFactors(e, fs)
	verified.Lock()
	if verified.at == nil || len(verified.at) >= maxVerified {
		verified.at = map[string]int{}
	}
	verified.at[key] = at
	verified.Unlock()
	return at
}

// factors builds the canonical factor list structurally (before the
// overshoot cut).
func factors(e *Expr) (Factors, error) {
	fs, err := rawFactors(e)
	if err != nil {
		return nil, err
	}
	return canonical(fs), nil
}

func rawFactors(e *Expr) (Factors, error) {
	switch e.kind {
	case KindSymbol:
		if e.size == 1 {
			return nil, nil
		}
		return Factors{{Kind: FactorTerm, Axis: e.name, AxisSize: e.size, Stride: 1, Extent: e.size, sym: e}}, nil
	case KindBroadcast:
		if e.arg == 1 {
			return nil, nil
		}
		return Factors{{Kind: FactorBroadcast, Extent: e.arg}}, nil
	case KindPair:
		var out Factors
		inner := 1
		for j := len(e.kids) - 1; j >= 0; j-- {
			fs, err := factors(e.kids[j])
			if err != nil {
				return nil, err
			}
			for _, f := range fs {
				if f.Kind == FactorPad {
					f.Extent *= inner
				}
				out = append(out, f)
			}
			inner *= e.kids[j].size
		}
		return out, nil
	case KindPadding:
		fs, err := factors(e.kids[0])
		if err != nil {
			return nil, err
		}
		return append(fs[:len(fs):len(fs)], Factor{Kind: FactorPad, Extent: e.arg, Pad: e.pad}), nil
	case KindModulo, KindResize:
		fs, err := factors(e.kids[0])
		if err != nil {
			return nil, err
		}
		return resizeFactors(fs, e.arg)
	case KindStride:
		fs, err := factors(e.kids[0])
		if err != nil {
			return nil, err
		}
		return strideFactors(fs, e.arg)
	case KindLinear:
		return nil, fmt.Errorf("a linear combination maps a position to several indices")
	}
	return nil, fmt.Errorf("invalid expression")
}

// resizeFactors keeps the first r positions (E % r and E = r).
func resizeFactors(fs Factors, r int) (Factors, error) {
	fs = append(Factors(nil), fs...)
	for len(fs) > 0 {
		ext := fs.Extents()
		m := len(fs) - 1
		below := 1
		if m > 0 {
			below = ext[m-1]
		}
		switch {
		case r == ext[m]:
			return fs, nil
		case r > ext[m]:
			return nil, fmt.Errorf("resize %d beyond size %d", r, ext[m])
		case r <= below:
			fs = fs[:m] // the outermost digit is always 0
			continue
		}
		f := fs[m]
		if f.Kind == FactorPad {
			f.Extent = r // positions below..r-1 stay padding
		} else {
			if r%below != 0 {
				return nil, fmt.Errorf("resize %d cuts a digit of extent %d mid-block (block %d)", r, f.Extent, below)
			}
			f.Extent = r / below
		}
		fs[m] = f
		return fs, nil
	}
	if r != 1 {
		return nil, fmt.Errorf("resize %d beyond size 1", r)
	}
	return nil, nil
}

// strideFactors keeps the positions that are multiples of s (E / s).
func strideFactors(fs Factors, s int) (Factors, error) {
	below := 1
	for k := 0; k < len(fs); k++ {
		if below == s {
			return scalePads(fs[k:], s)
		}
		if s%below != 0 {
			return nil, fmt.Errorf("stride %d is not a multiple of the block %d", s, below)
		}
		d := s / below
		f := fs[k]
		if f.Kind == FactorPad {
			// d ≥ 2: the non-zero multiples of s in a block of f.Extent are ≥ s > below: padding.
			if f.Extent%s != 0 {
				if s%f.Extent == 0 {
					below = f.Extent
					continue
				}
				return nil, fmt.Errorf("stride %d straddles a padded block of %d", s, f.Extent)
			}
			rest, err := scalePads(fs[k+1:], s)
			if err != nil {
				return nil, err
			}
			return append(Factors{{Kind: FactorPad, Extent: f.Extent / s, Pad: f.Pad}}, rest...), nil
		}
		e := f.Extent
		switch {
		case d%e == 0:
			below *= e // this digit is always 0
			continue
		case e%d == 0:
			nf := f
			nf.Stride *= d
			nf.Extent = e / d
			rest, err := scalePads(fs[k+1:], s)
			if err != nil {
				return nil, err
			}
			return append(Factors{nf}, rest...), nil
		}
		// A ragged digit (d does not divide e) is fine when padding follows
		// right away: digit values j·d < e stay live, the rest of the
		// padded block is padding (e.g. R # 8 / 4 with R = 5 is R:4x2).
		if k+1 < len(fs) && fs[k+1].Kind == FactorPad && fs[k+1].Extent%s == 0 {
			nf := f
			nf.Stride *= d
			nf.Extent = (e + d - 1) / d
			rest, err := scalePads(fs[k+2:], s)
			if err != nil {
				return nil, err
			}
			pad := fs[k+1]
			pad.Extent /= s
			return append(Factors{nf, pad}, rest...), nil
		}
		return nil, fmt.Errorf("stride %d splits a digit of extent %d mid-block", s, e)
	}
	if below == s {
		return nil, nil
	}
	return nil, fmt.Errorf("stride %d beyond size %d", s, below)
}

// scalePads divides the cumulative extents of the pads in fs by s.
func scalePads(fs Factors, s int) (Factors, error) {
	out := append(Factors(nil), fs...)
	for i, f := range out {
		if f.Kind == FactorPad {
			if f.Extent%s != 0 {
				return nil, fmt.Errorf("padded block %d is not a multiple of %d", f.Extent, s)
			}
			out[i].Extent = f.Extent / s
		}
	}
	return out, nil
}

// canonical applies the merge rules listed at Factorize.
func canonical(fs Factors) Factors {
	var out Factors
	e := 1
	for _, f := range fs {
		switch f.Kind {
		case FactorTerm, FactorBroadcast:
			if f.Extent == 1 {
				continue
			}
			if n := len(out); n > 0 && f.part == nil && out[n-1].part == nil && out[n-1].Kind == f.Kind &&
				(f.Kind == FactorBroadcast || out[n-1].Axis == f.Axis && out[n-1].Stride*out[n-1].Extent == f.Stride) {
				out[n-1].Extent *= f.Extent
				e *= f.Extent
				continue
			}
			out = append(out, f)
			e *= f.Extent
		case FactorPad:
			if f.Extent == e {
				continue
			}
			if n := len(out); n > 0 && out[n-1].Kind == FactorPad && out[n-1].Pad == f.Pad {
				out[n-1].Extent = f.Extent
				e = f.Extent
				continue
			}
			out = append(out, f)
			e = f.Extent
		}
	}
	return out
}

// cutOvershoot replaces a term whose coordinates can step past its axis by
// its live digits followed by Top padding (the overshoot rule of Map). Only
// an axis with a single term can be cut; two or more overshooting terms of
// one axis leave a ragged set of live cells.
func cutOvershoot(fs Factors) (Factors, bool, error) {
	maxc := map[string]int{}
	count := map[string]int{}
	for _, f := range fs {
		if f.Kind == FactorTerm && f.part == nil {
			maxc[f.Axis] += f.Stride * (f.Extent - 1)
			count[f.Axis]++
		}
	}
	cut := false
	var out Factors
	e := 1
	for _, f := range fs {
		if f.Kind == FactorTerm && f.part == nil && maxc[f.Axis] >= f.AxisSize {
			if count[f.Axis] > 1 {
				return nil, false, fmt.Errorf("coordinates of %s overshoot its size %d across %d digits", f.Axis, f.AxisSize, count[f.Axis])
			}
			nf := f
			nf.Extent = (f.AxisSize + f.Stride - 1) / f.Stride
			out = append(out, nf, Factor{Kind: FactorPad, Extent: e * f.Extent, Pad: Top})
			e *= f.Extent
			cut = true
			continue
		}
		out = append(out, f)
		if f.Kind == FactorPad {
			e = f.Extent
		} else {
			e *= f.Extent
		}
	}
	if cut {
		out = canonical(out)
	}
	return out, cut, nil
}

// sharedAtoms reports whether a composite atom occurs more than once (then
// Map decodes summed positions, which the structural rules only mirror
// when the atom splits cleanly).
func sharedAtoms(e *Expr) bool {
	seen := map[string]bool{}
	shared := false
	e.walk(func(x *Expr) {
		switch x.kind {
		case KindStride, KindModulo, KindResize:
			if a, _ := x.chain(); a.kind != KindSymbol && a.kind != KindBroadcast {
				k := a.String()
				shared = shared || seen[k]
				seen[k] = true
			}
		}
	})
	return shared
}

// verifyFactors returns the first position where fs and e differ, or -1.
func verifyFactors(e *Expr, fs Factors) int {
	x := fs.Expr()
	if e.size != x.size {
		return min(e.size, x.size)
	}
	_, at := equivEnum(e, x, false, e.size)
	return at
}

// Normalize returns the canonical spelling of e. For a factorizable e it
// is the expression printed from [Factorize]'s factors, so equivalent
// factorizable inputs normalize to the identical expression (and String).
// The spelling, outermost part first:
//
//   - a term of axis X (size S) with stride t and extent r prints as `X`,
//     `X / t`, then `% r` when r divides the remaining size (`= r` otherwise
//     or when padding follows it); a stride that does not divide S prints as
//     `X # P / t` with P the next multiple of t;
//   - a broadcast digit prints as its size;
//   - a padding factor attaches to the part below it when its extent is a
//     multiple of that part's block (`A # 20`, `B / 32 = 2 # 16`), pads the
//     whole inner expression otherwise (`[A, B] # 9`), and is `1 # p` with
//     nothing below it.
//
// An expression that is not factorizable keeps its structure, with each
// operand normalized.
func Normalize(e *Expr) *Expr {
	if e.Err() != nil {
		return e
	}
	if fs, err := FactorizeShared(e); err == nil {
		return fs.Expr()
	}
	switch e.kind {
	case KindPair:
		parts := make([]*Expr, len(e.kids))
		for j, k := range e.kids {
			parts[j] = Normalize(k)
		}
		return Pair(parts...)
	case KindStride:
		return Normalize(e.kids[0]).Div(e.arg)
	case KindModulo:
		return Normalize(e.kids[0]).Mod(e.arg)
	case KindResize:
		return Normalize(e.kids[0]).Resize(e.arg)
	case KindPadding:
		return Normalize(e.kids[0]).Pad(e.arg, e.pad)
	case KindLinear:
		ts := make([]*Expr, len(e.kids))
		for j, k := range e.kids {
			ts[j] = Normalize(k)
		}
		return must(NewLinear(ts, e.coefs))
	}
	return e
}

// Expr prints the factors as the canonical expression described at
// [Normalize].
func (fs Factors) Expr() *Expr {
	var parts []*Expr // innermost first
	e := 1
	for _, f := range fs {
		switch f.Kind {
		case FactorTerm:
			if f.part != nil {
				parts = append(parts, f.part)
			} else {
				parts = append(parts, termExpr(f))
			}
			e *= f.Extent
		case FactorBroadcast:
			parts = append(parts, Broadcast(f.Extent))
			e *= f.Extent
		case FactorPad:
			n := len(parts)
			switch {
			case n == 0:
				parts = append(parts, Identity().Pad(f.Extent, f.Pad))
			case f.Extent%(e/parts[n-1].size) == 0:
				last := parts[n-1]
				if last.kind == KindModulo { // a cut-then-padded digit reads as a resize: B = 2 # 4
					last = last.kids[0].Resize(last.arg)
				}
				parts[n-1] = last.Pad(f.Extent/(e/parts[n-1].size), f.Pad)
			default:
				whole := make([]*Expr, n)
				for j := range parts {
					whole[n-1-j] = parts[j]
				}
				parts = []*Expr{Pair(whole...).Pad(f.Extent, f.Pad)}
			}
			e = f.Extent
		}
	}
	out := make([]*Expr, len(parts))
	for j := range parts {
		out[len(parts)-1-j] = parts[j]
	}
	return Pair(out...)
}

// termExpr spells one term (see Normalize).
func termExpr(f Factor) *Expr {
	x := f.sym
	if x == nil {
		x = Sym(f.Axis, f.AxisSize)
	}
	s, t, r := f.AxisSize, f.Stride, f.Extent
	if s%t == 0 {
		x = x.Div(t)
		if r < s/t {
			if (s/t)%r == 0 {
				return x.Mod(r)
			}
			return x.Resize(r)
		}
		return x
	}
	live := (s + t - 1) / t
	x = x.Pad(t*live, Top).Div(t)
	if r < live {
		return x.Resize(r)
	}
	return x
}

// factorized remembers Factorize's answers by the expression's structural
// hash, checked with Equal on a hit (a collision recomputes and replaces).
// Bounded: a full cache is emptied.
var factorized factorCache

// maxFactorized bounds the factorized cache.
const maxFactorized = 1 << 16

type factorEntry struct {
	e   *Expr
	fs  Factors
	err error
}

type factorCache struct {
	sync.RWMutex
	m map[uint64]factorEntry
}

func (c *factorCache) get(h uint64, e *Expr) (factorEntry, bool) {
	c.RLock()
	x, ok := c.m[h]
	c.RUnlock()
	return x, ok && x.e.Equal(e)
}

func (c *factorCache) put(h uint64, e *Expr, fs Factors, err error) {
	c.Lock()
	if c.m == nil || len(c.m) >= maxFactorized {
		c.m = make(map[uint64]factorEntry, 256)
	}
	c.m[h] = factorEntry{e: e, fs: slices.Clip(fs), err: err}
	c.Unlock()
}
