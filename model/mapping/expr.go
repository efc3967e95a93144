package mapping

import (
	"errors"
	"fmt"
)

// Kind is the constructor at the root of an [Expr] (reference-notes §2.3).
type Kind uint8

// The expression constructors of 002 L621-1016.
const (
	KindInvalid   Kind = iota // a poisoned result of an unchecked constructor; see [Expr.Err]
	KindSymbol                // A: an axis (002 L624-673), possibly skewed (002 L986-1003)
	KindBroadcast             // n: n cells that all hold the empty index; 1 is the identity (002 L716-740)
	KindPair                  // L, R, ...: major to minor (002 L674-715); stored flattened
	KindStride                // E / s (002 L832-903)
	KindModulo                // E % m (002 L832-903)
	KindResize                // E = r (002 L778-812)
	KindPadding               // E # p, E #{!} p, E #{0} p (002 L741-777, reference-notes §2.2)
	KindLinear                // $(e1:n1, ..., ed:nd) (002 L1004-1016)
)

var kindNames = [...]string{"Invalid", "Symbol", "Broadcast", "Pair", "Stride", "Modulo", "Resize", "Padding", "Linear"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// PadKind is what a padding cell reads as (reference-notes §2.3). The order
// is strictness: Bottom < Zero < Top.
type PadKind uint8

// Padding kinds; the zero value is Top, the kind of a plain `#`
// (reference-notes §2.2; 002 L741-777 knows only `#`).
const (
	Top    PadKind = iota // `#` or `#{*}`: arbitrary contents
	Bottom                // `#{!}`: inaccessible; reading or writing it is undefined
	Zero                  // `#{0}`: reads as zero
)

// String gives the kind's name: Top, Bottom or Zero.
func (k PadKind) String() string {
	switch k {
	case Top:
		return "Top"
	case Bottom:
		return "Bottom"
	case Zero:
		return "Zero"
	}
	return fmt.Sprintf("PadKind(%d)", k)
}

// op is the operator spelling of the kind in expression text.
func (k PadKind) op() string {
	switch k {
	case Bottom:
		return "#{!}"
	case Zero:
		return "#{0}"
	}
	return "#"
}

// Expr is an immutable mapping expression. Values are built by [Parse] or
// by the constructors; they are safe to share. A nil *Expr behaves as an
// invalid expression.
//
// Unchecked constructors ([Sym], [Pair], [Expr.Div], ...) never panic: on
// invalid input they return a poisoned expression of kind [KindInvalid]
// whose [Expr.Err] tells why; poison propagates through further
// construction. The New* constructors return the error directly.
type Expr struct {
	kind  Kind
	size  int     // cached Size()
	name  string  // symbol name
	arg   int     // stride, modulo, resize, padding size, broadcast size
	pad   PadKind // padding kind
	kids  []*Expr // unary: [inner]; pair: parts major→minor (≥2, none identity); linear: terms
	coefs []int   // linear: the strides n_k
	skew  *Skew   // symbol: non-nil for a skewed axis
	err   error   // invalid: why
	lin   bool    // contains a linear combination
}

func invalid(err error) *Expr { return &Expr{kind: KindInvalid, err: err} }

// Err is nil for a valid expression and the construction error otherwise.
func (e *Expr) Err() error {
	if e == nil {
		return errors.New("nil mapping expression")
	}
	return e.err
}

// Kind returns the root constructor.
func (e *Expr) Kind() Kind {
	if e == nil {
		return KindInvalid
	}
	return e.kind
}

// Size is the number of buffer positions (reference-notes §2.3 `size()`):
// Symbol → axis size, Stride → inner/s, Modulo → m, Resize → r, Padding → p,
// Pair → product, Broadcast → n, Linear → 1 + Σ (|e_k| - 1)·n_k (002 L1009).
// It is 0 for an invalid expression.
func (e *Expr) Size() int {
	if e == nil {
		return 0
	}
	return e.size
}

// Name is the axis name of a symbol ("" otherwise).
func (e *Expr) Name() string {
	if e == nil {
		return ""
	}
	return e.name
}

// Arg is the integer operand: the stride, modulo, resize or padded size, or
// the broadcast size. It is 0 for other kinds.
func (e *Expr) Arg() int {
	if e == nil {
		return 0
	}
	return e.arg
}

// PadKind is the padding kind of a Padding node (Top for other kinds).
func (e *Expr) PadKind() PadKind {
	if e == nil {
		return Top
	}
	return e.pad
}

// Inner is the operand of a Stride, Modulo, Resize or Padding node, nil
// otherwise.
func (e *Expr) Inner() *Expr {
	if e == nil {
		return nil
	}
	switch e.kind {
	case KindStride, KindModulo, KindResize, KindPadding:
		return e.kids[0]
	}
	return nil
}

// Parts returns the parts of a Pair, major first (pairs are stored
// flattened: `A, [B, C]` and `[A, B], C` are both the 3-part pair A, B, C,
// 002 L1025-1026). Any other expression is its own single part.
func (e *Expr) Parts() []*Expr {
	if e == nil {
		return nil
	}
	if e.kind == KindPair {
		return append([]*Expr(nil), e.kids...)
	}
	return []*Expr{e}
}

// Left and Right view a pair as the right-associative binary
// Pair{left: major, right: minor} of reference-notes §2.3: for A, B, C the
// left is A and the right is the pair B, C. For a non-pair, Left is the
// identity and Right is e itself.
func (e *Expr) Left() *Expr {
	if e.Kind() != KindPair {
		return Identity()
	}
	return e.kids[0]
}

// Right is the minor side of a pair; see [Expr.Left].
func (e *Expr) Right() *Expr {
	if e.Kind() != KindPair {
		return e
	}
	return Pair(e.kids[1:]...)
}

// Terms returns the terms and strides of a linear combination
// $(e1:n1, ...).
func (e *Expr) Terms() ([]*Expr, []int) {
	if e.Kind() != KindLinear {
		return nil, nil
	}
	return append([]*Expr(nil), e.kids...), append([]int(nil), e.coefs...)
}

// Skew returns the skew definition of a skewed-axis symbol.
func (e *Expr) Skew() (Skew, bool) {
	if e.Kind() != KindSymbol || e.skew == nil {
		return Skew{}, false
	}
	return *e.skew, true
}

// IsIdentity reports whether e is the identity m![1].
func (e *Expr) IsIdentity() bool { return e.Kind() == KindBroadcast && e.arg == 1 }

// Equal reports structural equality (same constructors, names, operands).
// Equivalent expressions need not be Equal; see [Equiv] and [Normalize].
func (e *Expr) Equal(o *Expr) bool {
	if e == nil || o == nil {
		return e == o
	}
	if e == o {
		return true
	}
	if e.kind != o.kind || e.size != o.size || e.name != o.name || e.arg != o.arg || e.pad != o.pad ||
		len(e.kids) != len(o.kids) || len(e.coefs) != len(o.coefs) || (e.skew == nil) != (o.skew == nil) {
		return false
	}
	if e.skew != nil && *e.skew != *o.skew {
		return false
	}
	if e.kind == KindInvalid {
		return e.err.Error() == o.err.Error()
	}
	for i := range e.kids {
		if !e.kids[i].Equal(o.kids[i]) {
			return false
		}
	}
	for i := range e.coefs {
		if e.coefs[i] != o.coefs[i] {
			return false
		}
	}
	return true
}

// Hash returns a structural hash of e: Equal expressions hash alike, so
// a cache may key expressions by it and compare with Equal.
func (e *Expr) Hash() uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	add := func(v uint64) { h = (h ^ v) * prime }
	var walk func(x *Expr)
	walk = func(x *Expr) {
		if x == nil {
			add(0xff)
			return
		}
		add(uint64(x.kind))
		add(uint64(x.size))
		add(uint64(x.arg))
		add(uint64(x.pad))
		for i := 0; i < len(x.name); i++ {
			add(uint64(x.name[i]))
		}
		add(uint64(len(x.kids)))
		for _, k := range x.kids {
			walk(k)
		}
		add(uint64(len(x.coefs)))
		for _, c := range x.coefs {
			add(uint64(c))
		}
	}
	walk(e)
	return h
}

// Symbols returns the distinct axis names used by e, in first-encounter
// order (major to minor).
func (e *Expr) Symbols() []string {
	var out []string
	seen := map[string]bool{}
	e.walk(func(x *Expr) {
		if x.kind == KindSymbol && !seen[x.name] {
			seen[x.name] = true
			out = append(out, x.name)
		}
	})
	return out
}

// Uses reports whether the axis name occurs in e, even in a term of extent
// 1 that [Factorize] drops (e.g. A = 1: the buffer holds one coordinate of A).
func (e *Expr) Uses(name string) bool { return e.uses(name) }

// uses reports whether the axis name occurs in e.
func (e *Expr) uses(name string) bool {
	found := false
	e.walk(func(x *Expr) {
		if x.kind == KindSymbol && x.name == name {
			found = true
		}
	})
	return found
}

// hasLinear reports whether e contains a linear combination.
func (e *Expr) hasLinear() bool { return e != nil && e.lin }

// sealed sets the cached flags of a freshly built node.
func (e *Expr) sealed() *Expr {
	e.lin = e.kind == KindLinear
	for _, k := range e.kids {
		e.lin = e.lin || k.lin
	}
	return e
}

func (e *Expr) walk(f func(*Expr)) {
	if e == nil {
		return
	}
	f(e)
	for _, k := range e.kids {
		k.walk(f)
	}
}

// ---- checked constructors ----

// NewSym is the symbol of a plain axis of the given size (002 L624-673).
func NewSym(name string, size int) (*Expr, error) {
	if err := checkAxisName(name, false); err != nil {
		if err2 := checkAxisName(name, true); err2 != nil {
			return nil, err
		}
	}
	if size < 1 || size > MaxSize {
		return nil, fmt.Errorf("axis %s: size %d must be between 1 and %d", name, size, MaxSize)
	}
	return &Expr{kind: KindSymbol, name: name, size: size}, nil
}

// NewSkewSym is the symbol of a skewed axis s.Name = s.Base - s.By whose
// size is the base's size (002 L986-1003).
func NewSkewSym(s Skew, size int) (*Expr, error) {
	if err := checkAxisName(s.Name, true); err != nil {
		return nil, err
	}
	if size < 1 || size > MaxSize {
		return nil, fmt.Errorf("axis %s: size %d must be between 1 and %d", s.Name, size, MaxSize)
	}
	sk := s
	return &Expr{kind: KindSymbol, name: s.Name, size: size, skew: &sk}, nil
}

// NewBroadcast is m![n]: n positions that all hold the empty index; n = 1
// is the identity (002 L716-740, reference-notes §2.2).
func NewBroadcast(n int) (*Expr, error) {
	if n < 1 || n > MaxSize {
		return nil, fmt.Errorf("broadcast size %d must be between 1 and %d", n, MaxSize)
	}
	return &Expr{kind: KindBroadcast, arg: n, size: n}, nil
}

// NewPair is the pair of es, major first (002 L674-715). Nested pairs are
// flattened (associativity, 002 L1025-1026) and identity parts dropped
// (`[1, X] == X`, reference-notes §2.3 `pair`); no part leaves the identity.
func NewPair(es ...*Expr) (*Expr, error) {
	var parts []*Expr
	size := 1
	for _, x := range es {
		if err := x.Err(); err != nil {
			return nil, err
		}
		for _, p := range x.Parts() {
			if p.IsIdentity() {
				continue
			}
			if size > MaxSize/p.size {
				return nil, fmt.Errorf("pair size exceeds %d", MaxSize)
			}
			size *= p.size
			parts = append(parts, p)
		}
	}
	switch len(parts) {
	case 0:
		return Identity(), nil
	case 1:
		return parts[0], nil
	}
	return (&Expr{kind: KindPair, kids: parts, size: size}).sealed(), nil
}

// NewStride is e / s: position i holds e's position i·s; the size is
// |e| / s, and s must divide |e| (002 L868-885). s = 1 returns e
// (reference-notes §2.3).
func NewStride(e *Expr, s int) (*Expr, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	if s < 1 {
		return nil, fmt.Errorf("stride %d must be at least 1", s)
	}
	if e.size%s != 0 {
		return nil, fmt.Errorf("stride %d does not divide size %d of %s", s, e.size, e) // 002 L873
	}
	if s == 1 {
		return e, nil
	}
	return (&Expr{kind: KindStride, kids: []*Expr{e}, arg: s, size: e.size / s}).sealed(), nil
}

// NewModulo is e % m: the first m positions of e; m must divide |e|
// (002 L886-903). m = |e| returns e (reference-notes §2.3).
func NewModulo(e *Expr, m int) (*Expr, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("modulo %d must be at least 1", m)
	}
	if e.size%m != 0 {
		return nil, fmt.Errorf("modulo %d does not divide size %d of %s", m, e.size, e) // 002 L891
	}
	if m == e.size {
		return e, nil
	}
	return (&Expr{kind: KindModulo, kids: []*Expr{e}, arg: m, size: m}).sealed(), nil
}

// NewResize is e = r: the first r positions of e, 1 ≤ r ≤ |e|
// (002 L778-812). r = |e| returns e (reference-notes §2.3).
func NewResize(e *Expr, r int) (*Expr, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	if r < 1 {
		return nil, fmt.Errorf("resize %d must be at least 1", r)
	}
	if r > e.size {
		return nil, fmt.Errorf("resize %d is larger than size %d of %s", r, e.size, e)
	}
	if r == e.size {
		return e, nil
	}
	return (&Expr{kind: KindResize, kids: []*Expr{e}, arg: r, size: r}).sealed(), nil
}

// NewPadding is e # p (kind Top), e #{!} p (Bottom) or e #{0} p (Zero):
// positions |e| ≤ i < p are padding of that kind (002 L741-777,
// reference-notes §2.2-2.4); p ≥ |e|, and p = |e| returns e.
func NewPadding(e *Expr, p int, kind PadKind) (*Expr, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	if kind > Zero {
		return nil, fmt.Errorf("invalid padding kind %d", kind)
	}
	if p < e.size {
		return nil, fmt.Errorf("padding %d is smaller than size %d of %s", p, e.size, e)
	}
	if p > MaxSize {
		return nil, fmt.Errorf("padding %d exceeds %d", p, MaxSize)
	}
	if p == e.size {
		return e, nil
	}
	return (&Expr{kind: KindPadding, kids: []*Expr{e}, arg: p, pad: kind, size: p}).sealed(), nil
}

// NewLinear is the linear combination $(e1:n1, ..., ed:nd) of 002 L1004-1016:
// size 1 + Σ (|e_k| - 1)·n_k; position s holds every index Σ t_k such that
// e_k maps s_k to t_k and s = Σ s_k·n_k. Strides must be ≥ 1.
func NewLinear(es []*Expr, ns []int) (*Expr, error) {
	if len(es) == 0 || len(es) != len(ns) {
		return nil, fmt.Errorf("linear combination needs one stride per term and at least one term")
	}
	size := 1
	for k, x := range es {
		if err := x.Err(); err != nil {
			return nil, err
		}
		if ns[k] < 1 || ns[k] > MaxSize {
			return nil, fmt.Errorf("linear combination stride %d must be between 1 and %d", ns[k], MaxSize)
		}
		if x.size-1 > 0 && ns[k] > (MaxSize-size)/(x.size-1) {
			return nil, fmt.Errorf("linear combination size exceeds %d", MaxSize)
		}
		size += (x.size - 1) * ns[k] // 002 L1009
	}
	return (&Expr{kind: KindLinear, kids: append([]*Expr(nil), es...), coefs: append([]int(nil), ns...), size: size}).sealed(), nil
}

// ---- unchecked (chainable) constructors ----

func must(e *Expr, err error) *Expr {
	if err != nil {
		return invalid(err)
	}
	return e
}

// Identity is m![1] (002 L716-740).
func Identity() *Expr { return &Expr{kind: KindBroadcast, arg: 1, size: 1} }

// Sym is [NewSym] without the error: an invalid input gives a poisoned
// expression (see [Expr.Err]).
func Sym(name string, size int) *Expr { return must(NewSym(name, size)) }

// Broadcast is [NewBroadcast] without the error.
func Broadcast(n int) *Expr { return must(NewBroadcast(n)) }

// Pair is [NewPair] without the error.
func Pair(es ...*Expr) *Expr { return must(NewPair(es...)) }

// Div is [NewStride] without the error: e / s.
func (e *Expr) Div(s int) *Expr { return must(NewStride(e, s)) }

// Mod is [NewModulo] without the error: e % m.
func (e *Expr) Mod(m int) *Expr { return must(NewModulo(e, m)) }

// Resize is [NewResize] without the error: e = r.
func (e *Expr) Resize(r int) *Expr { return must(NewResize(e, r)) }

// Pad is [NewPadding] without the error: e # p with the given kind.
func (e *Expr) Pad(p int, kind PadKind) *Expr { return must(NewPadding(e, p, kind)) }
