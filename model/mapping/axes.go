package mapping

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSize bounds every axis and expression size. Sizes beyond it are
// rejected so that size arithmetic can never overflow an int; 2^50 is far
// above any TCP buffer (an 8-chip system has 2 GB of SRAM, 004 "Size
// Constraint").
const MaxSize = 1 << 50

// Axis is one declared tensor axis: `A = 8` in `axes![A = 8, B = 512]`
// (002 L590-595).
type Axis struct {
	Name string // first char ASCII uppercase, rest alphanumeric or '_'; skewed axes end in '
	Size int    // number of coordinates, ≥ 1
}

// Skew defines a skewed axis Name = Base - By (002 L986-1003): its
// coordinate at any point equals the Base coordinate minus the By coordinate,
// modulo the size of Base. The skewed axis has the size of Base.
type Skew struct {
	Name string // e.g. "B'"
	Base string // e.g. "B"
	By   string // e.g. "A"
}

// Axes is an ordered list of axis declarations, plus skewed-axis
// definitions. The zero value declares no axis. Build it with [ParseAxes] or
// [NewAxes]; it is immutable.
type Axes struct {
	list  []Axis
	skews []Skew
	// idx indexes list by name once it is long (indexFrom), so that
	// declaring and looking up n axes stays linear in n.
	idx map[string]int
}

// indexFrom is the number of axes from which Axes keeps an index.
const indexFrom = 32

// add appends ax to a's list (a must own its list) and keeps the index.
func (a *Axes) add(ax Axis) {
	a.list = append(a.list, ax)
	switch {
	case a.idx != nil:
		a.idx[ax.Name] = len(a.list) - 1
	case len(a.list) >= indexFrom:
		a.idx = make(map[string]int, 2*len(a.list))
		for i, x := range a.list {
			a.idx[x.Name] = i
		}
	}
}

// NewAxes declares the given axes in order. It rejects invalid names,
// duplicates and sizes outside [1, MaxSize].
func NewAxes(list ...Axis) (Axes, error) {
	var a Axes
	for _, ax := range list {
		if err := checkAxisName(ax.Name, false); err != nil {
			return Axes{}, err
		}
		if _, dup := a.Size(ax.Name); dup {
			return Axes{}, fmt.Errorf("duplicate axis %q", ax.Name)
		}
		if ax.Size < 1 || ax.Size > MaxSize {
			return Axes{}, fmt.Errorf("axis %s: size %d must be between 1 and %d", ax.Name, ax.Size, MaxSize)
		}
		a.add(ax)
	}
	return a, nil
}

// WithSkew returns a copy of a that also declares the skewed axis
// s.Name = s.Base - s.By (002 L988). Base and By must be declared plain axes;
// the skewed axis takes Base's size and its name must be a valid axis name
// followed by one or more apostrophes, e.g. B'.
func (a Axes) WithSkew(s Skew) (Axes, error) {
	if err := checkAxisName(s.Name, true); err != nil {
		return Axes{}, err
	}
	if _, dup := a.Size(s.Name); dup {
		return Axes{}, fmt.Errorf("duplicate axis %q", s.Name)
	}
	bs, ok := a.plainSize(s.Base)
	if !ok {
		return Axes{}, fmt.Errorf("skewed axis %s: unknown base axis %q", s.Name, s.Base)
	}
	if _, ok := a.plainSize(s.By); !ok {
		return Axes{}, fmt.Errorf("skewed axis %s: unknown axis %q", s.Name, s.By)
	}
	if s.Base == s.By {
		return Axes{}, fmt.Errorf("skewed axis %s: %s - %s skews an axis by itself", s.Name, s.Base, s.By)
	}
	out := Axes{skews: append([]Skew(nil), a.skews...)}
	for _, ax := range a.list {
		out.add(ax)
	}
	out.add(Axis{Name: s.Name, Size: bs})
	out.skews = append(out.skews, s)
	return out, nil
}

// ParseAxes parses a comma-separated axis declaration such as `A=8,B=512`
// or `A = 8, B = 512` (the body of `axes![...]`, 002 L594; a trailing comma
// is accepted), plus skewed axes written `B'=B-A` (002 L988). Errors carry
// the 1-based column as a *SyntaxError.
func ParseAxes(src string) (Axes, error) {
	var a Axes
	pos := 0
	col := func() int { return pos + 1 }
	skipSpace := func() {
		for pos < len(src) && isSpace(src[pos]) {
			pos++
		}
	}
	ident := func() (string, int, error) {
		skipSpace()
		start := pos
		for pos < len(src) && (isAlnum(src[pos]) || src[pos] == '_') {
			pos++
		}
		for pos < len(src) && src[pos] == '\'' {
			pos++
		}
		if start == pos {
			if pos >= len(src) {
				return "", start + 1, synErr(start+1, "expected an axis name, found end of input")
			}
			return "", start + 1, synErr(start+1, "expected an axis name, found %q", src[pos:pos+1])
		}
		return src[start:pos], start + 1, nil
	}
	skipSpace()
	if pos == len(src) {
		return a, nil
	}
	for {
		name, ncol, err := ident()
		if err != nil {
			return Axes{}, err
		}
		skipSpace()
		if pos >= len(src) || src[pos] != '=' {
			return Axes{}, synErr(col(), "expected '=' after axis %s", name)
		}
		pos++
		skipSpace()
		vcol := col()
		if pos < len(src) && isDigit(src[pos]) {
			start := pos
			for pos < len(src) && isDigit(src[pos]) {
				pos++
			}
			n, err := strconv.Atoi(src[start:pos])
			if err != nil || n > MaxSize {
				return Axes{}, synErr(vcol, "axis %s: size %s is too large (max %d)", name, src[start:pos], MaxSize)
			}
			if err := checkAxisName(name, false); err != nil {
				return Axes{}, synErr(ncol, "%v", err)
			}
			if _, dup := a.Size(name); dup {
				return Axes{}, synErr(ncol, "duplicate axis %q", name)
			}
			if n < 1 {
				return Axes{}, synErr(vcol, "axis %s: size must be at least 1", name)
			}
			a.add(Axis{Name: name, Size: n})
		} else {
			base, _, err := ident()
			if err != nil {
				return Axes{}, synErr(vcol, "axis %s: expected a size or a skew `BASE - BY`", name)
			}
			skipSpace()
			if pos >= len(src) || src[pos] != '-' {
				return Axes{}, synErr(col(), "skewed axis %s: expected '-' after %s", name, base)
			}
			pos++
			by, _, err := ident()
			if err != nil {
				return Axes{}, err
			}
			na, err := a.WithSkew(Skew{Name: name, Base: base, By: by})
			if err != nil {
				return Axes{}, synErr(ncol, "%v", err)
			}
			a = na
		}
		skipSpace()
		if pos == len(src) {
			return a, nil
		}
		if src[pos] != ',' {
			return Axes{}, synErr(col(), "expected ',' between axis declarations, found %q", src[pos:pos+1])
		}
		pos++
		skipSpace()
		if pos == len(src) {
			return a, nil // trailing comma (reference-notes §2.2)
		}
	}
}

// checkAxisName enforces the identifier rule of reference-notes §2.1: first
// char ASCII uppercase, rest ASCII alphanumeric or '_'. Skewed names must
// end in one or more apostrophes; plain names may not contain any.
func checkAxisName(name string, skewed bool) error {
	base := strings.TrimRight(name, "'")
	if skewed && base == name {
		return fmt.Errorf("skewed axis name %q must end in an apostrophe, e.g. B'", name)
	}
	if !skewed && base != name {
		return fmt.Errorf("axis %q: only skewed axes (NAME' = BASE - BY) may end in an apostrophe", name)
	}
	if base == "" {
		return fmt.Errorf("empty axis name")
	}
	if base[0] < 'A' || base[0] > 'Z' {
		return fmt.Errorf("axis name %q must start with an ASCII uppercase letter", name)
	}
	for i := 1; i < len(base); i++ {
		if !isAlnum(base[i]) && base[i] != '_' {
			return fmt.Errorf("axis name %q: character %q is not alphanumeric or '_'", name, base[i:i+1])
		}
	}
	return nil
}

// Size returns the size of the named axis (plain or skewed).
func (a Axes) Size(name string) (int, bool) {
	if a.idx != nil {
		if i, ok := a.idx[name]; ok {
			return a.list[i].Size, true
		}
		return 0, false
	}
	for _, ax := range a.list {
		if ax.Name == name {
			return ax.Size, true
		}
	}
	return 0, false
}

func (a Axes) plainSize(name string) (int, bool) {
	if _, ok := a.skewOf(name); ok {
		return 0, false
	}
	return a.Size(name)
}

// skewOf returns the skew definition of a skewed axis.
func (a Axes) skewOf(name string) (Skew, bool) {
	for _, s := range a.skews {
		if s.Name == name {
			return s, true
		}
	}
	return Skew{}, false
}

// Skews returns the skewed-axis definitions in declaration order.
func (a Axes) Skews() []Skew { return append([]Skew(nil), a.skews...) }

// Names returns the axis names in declaration order.
func (a Axes) Names() []string {
	out := make([]string, len(a.list))
	for i, ax := range a.list {
		out[i] = ax.Name
	}
	return out
}

// List returns a copy of the axis declarations in declaration order
// (skewed axes included, with their base's size).
func (a Axes) List() []Axis { return append([]Axis(nil), a.list...) }

// Len is the number of declared axes, skewed ones included.
func (a Axes) Len() int { return len(a.list) }

// Slot returns the declaration position of the named axis, the slot that
// [Program.Eval] writes its coordinate to.
func (a Axes) Slot(name string) (int, bool) {
	if a.idx != nil {
		i, ok := a.idx[name]
		return i, ok
	}
	for i, ax := range a.list {
		if ax.Name == name {
			return i, true
		}
	}
	return 0, false
}

// String prints the declaration in the form ParseAxes reads: `A=8, B=512`,
// skewed axes as `B'=B-A`.
func (a Axes) String() string {
	var b strings.Builder
	for i, ax := range a.list {
		if i > 0 {
			b.WriteString(", ")
		}
		if s, ok := a.skewOf(ax.Name); ok {
			fmt.Fprintf(&b, "%s=%s-%s", s.Name, s.Base, s.By)
		} else {
			fmt.Fprintf(&b, "%s=%d", ax.Name, ax.Size)
		}
	}
	return b.String()
}

// Unskew rewrites an index over skewed axes into the base axes: for
// B' = B - A, B = (B' + A) mod |B| (002 L1003). A skew applies when one of
// the expressions that produced idx (the dimension mappings whose indices were
// summed) uses the skewed axis; since coordinate 0 is dropped from indices,
// the index alone cannot tell B' = 0 from an unused B'. An index that holds
// both a skewed axis and its base is rejected (the manual gives it no
// meaning).
func (a Axes) Unskew(idx Index, from ...*Expr) (Index, error) {
	out := idx.clone()
	for _, s := range a.skews {
		used := false
		for _, e := range from {
			if e.uses(s.Name) {
				used = true
			}
		}
		if !used {
			continue
		}
		if idx.Get(s.Base) != 0 {
			return Index{}, fmt.Errorf("index %v holds both skewed axis %s and its base %s", idx, s.Name, s.Base)
		}
		size, _ := a.Size(s.Base)
		out = out.with(s.Name, 0).with(s.Base, (idx.Get(s.Name)+idx.Get(s.By))%size) // 002 L1003
	}
	return out, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}
