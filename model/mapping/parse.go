package mapping

import (
	"fmt"
	"strconv"
	"strings"
)

// SyntaxError is a parse or semantic error in expression or axis text, at
// a 1-based byte column of the source string.
type SyntaxError struct {
	Col int    // 1-based byte column in the source
	Msg string // what is wrong
}

// Error formats the error as `col 7: unknown axis "Q"`.
func (e *SyntaxError) Error() string { return fmt.Sprintf("col %d: %s", e.Col, e.Msg) }

func synErr(col int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Env names mappings for escapes (002 L972-984). In atom position `{ L }`
// splices Env["L"]. In operator-argument position (`A # { N }`,
// reference-notes §2.1-2.2) the escape is an integer constant: a literal
// (`{ 64 }`), the size of a named mapping (`{ L }` or `{ L::SIZE }`, the
// manual's `Out::SIZE`), or the size of a declared axis (`{ A::SIZE }` or
// `{ A }` when no mapping has that name). Bind an integer constant N with
// Env{"N": Broadcast(n)}.
type Env map[string]*Expr

// Parse reads a mapping expression: the text inside `m![...]` or the whole
// `m![...]` (reference-notes §2.2 grammar):
//
//	Mapping := M1 { "," M1 } [","]                 pairs, right-associative, major first
//	M1      := M2 { ("/" | "%" | "=" | "#" | "#{*}" | "#{!}" | "#{0}") Num }
//	M2      := Symbol | Nat | "{" Name "}" | "(" Mapping ")" | "[" Mapping "]"
//	         | "$(" M1 ":" Num { "," M1 ":" Num } [","] ")"
//	Num     := Nat | "{" Const "}"
//
// A Nat n in atom position is the broadcast m![n] (m![1] is the identity).
// Symbols must be declared in axes. Errors, syntactic or semantic (unknown
// axis, a stride or modulo that does not divide, a resize larger or a
// padding smaller than the size: the constructor asserts of reference-notes
// §2.3), are *SyntaxError with the column in src.
func Parse(src string, axes Axes, env Env) (*Expr, error) {
	p := &parser{src: src, axes: axes, env: env}
	p.skip()
	end := len(src)
	if strings.HasPrefix(src[p.pos:], "m!") {
		p.pos += 2
		p.skip()
		if p.pos >= len(src) || src[p.pos] != '[' {
			return nil, synErr(p.pos+1, "expected '[' after m!")
		}
		p.pos++
		// the matching ']' must be the last non-space byte
		end = len(strings.TrimRight(src, " \t\r\n"))
		if end <= p.pos || src[end-1] != ']' {
			return nil, synErr(end+1, "missing closing ']' of m![...]")
		}
		end--
	}
	p.end = end
	e, err := p.mapping()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.pos < p.end {
		return nil, synErr(p.pos+1, "unexpected %s", p.describe())
	}
	return e, nil
}

type parser struct {
	src   string
	pos   int
	end   int
	axes  Axes
	env   Env
	depth int
}

// maxDepth bounds the nesting of groups and linear combinations.
const maxDepth = 200

func (p *parser) skip() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

func (p *parser) peek() byte {
	p.skip()
	if p.pos >= p.end {
		return 0
	}
	return p.src[p.pos]
}

func (p *parser) describe() string {
	if p.pos >= p.end {
		return "end of expression"
	}
	r := p.src[p.pos:]
	if len(r) > 1 && r[0] >= 0x80 {
		return fmt.Sprintf("byte %q", r[:1])
	}
	return fmt.Sprintf("%q", r[:1])
}

// mapping := M1 { "," M1 } [","]
func (p *parser) mapping() (*Expr, error) {
	start := p.pos
	var parts []*Expr
	for {
		e, err := p.m1()
		if err != nil {
			return nil, err
		}
		parts = append(parts, e)
		if p.peek() != ',' {
			break
		}
		p.pos++
		if c := p.peek(); c == 0 || c == ')' || c == ']' {
			break // trailing comma
		}
	}
	e, err := NewPair(parts...)
	if err != nil {
		return nil, synErr(start+1, "%v", err)
	}
	return e, nil
}

// m1 := M2 { op Num }
func (p *parser) m1() (*Expr, error) {
	e, err := p.m2()
	if err != nil {
		return nil, err
	}
	for {
		c := p.peek()
		opCol := p.pos + 1
		var kind Kind
		pad := Top
		switch c {
		case '/':
			kind = KindStride
		case '%':
			kind = KindModulo
		case '=':
			kind = KindResize
		case '#':
			kind = KindPadding
		default:
			return e, nil
		}
		p.pos++
		if kind == KindPadding {
			p.skip()
			if k, n, ok := p.hashFill(); ok {
				pad = k
				p.pos += n
			}
		}
		n, err := p.num()
		if err != nil {
			return nil, err
		}
		var r *Expr
		switch kind {
		case KindStride:
			r, err = NewStride(e, n)
		case KindModulo:
			r, err = NewModulo(e, n)
		case KindResize:
			r, err = NewResize(e, n)
		case KindPadding:
			r, err = NewPadding(e, n, pad)
		}
		if err != nil {
			return nil, synErr(opCol, "%v", err)
		}
		e = r
	}
}

// hashFill recognizes `{*}`, `{!}`, `{0}` (spaces allowed inside) right
// after '#' (reference-notes §2.1). It returns the kind and the byte length.
func (p *parser) hashFill() (PadKind, int, bool) {
	i := p.pos
	if i >= p.end || p.src[i] != '{' {
		return 0, 0, false
	}
	j := i + 1
	for j < p.end && isSpace(p.src[j]) {
		j++
	}
	if j >= p.end {
		return 0, 0, false
	}
	var k PadKind
	switch p.src[j] {
	case '*':
		k = Top
	case '!':
		k = Bottom
	case '0':
		k = Zero
	default:
		return 0, 0, false
	}
	j++
	for j < p.end && isSpace(p.src[j]) {
		j++
	}
	if j >= p.end || p.src[j] != '}' {
		return 0, 0, false
	}
	return k, j + 1 - i, true
}

// num := Nat | "{" Const "}"
func (p *parser) num() (int, error) {
	c := p.peek()
	col := p.pos + 1
	switch {
	case isDigit(c):
		return p.nat()
	case c == '{':
		body, err := p.brace()
		if err != nil {
			return 0, err
		}
		return p.constant(body, col)
	}
	return 0, synErr(col, "expected a number, found %s", p.describe())
}

func (p *parser) nat() (int, error) {
	col := p.pos + 1
	start := p.pos
	for p.pos < p.end && isDigit(p.src[p.pos]) {
		p.pos++
	}
	if p.pos < p.end && (isAlnum(p.src[p.pos]) || p.src[p.pos] == '_') {
		return 0, synErr(p.pos+1, "invalid number %q", p.src[start:p.pos+1])
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n > MaxSize {
		return 0, synErr(col, "number %s is too large (max %d)", p.src[start:p.pos], MaxSize)
	}
	return n, nil
}

// brace reads a `{ ... }` group (no nesting) and returns its trimmed body.
func (p *parser) brace() (string, error) {
	col := p.pos + 1
	close := strings.IndexByte(p.src[p.pos:p.end], '}')
	if close < 0 {
		return "", synErr(col, "unclosed '{'")
	}
	body := p.src[p.pos+1 : p.pos+close]
	p.pos += close + 1
	return strings.TrimSpace(body), nil
}

// constant evaluates an escaped operator argument; see [Env].
func (p *parser) constant(body string, col int) (int, error) {
	if body == "" {
		return 0, synErr(col, "empty escape {}")
	}
	if isDigit(body[0]) {
		n, err := strconv.Atoi(body)
		if err != nil || n > MaxSize {
			return 0, synErr(col, "invalid constant {%s}", body)
		}
		return n, nil
	}
	name := strings.TrimSpace(strings.TrimSuffix(body, "::SIZE"))
	if e, ok := p.env[name]; ok {
		if err := e.Err(); err != nil {
			return 0, synErr(col, "escape {%s}: %v", body, err)
		}
		return e.Size(), nil
	}
	if n, ok := p.axes.Size(name); ok {
		return n, nil
	}
	return 0, synErr(col, "unknown constant {%s}: not a named mapping or a declared axis", body)
}

// m2 := Symbol | Nat | Escaped | "(" mapping ")" | "[" mapping "]" | "$(" ... ")"
func (p *parser) m2() (*Expr, error) {
	c := p.peek()
	col := p.pos + 1
	switch {
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_':
		start := p.pos
		for p.pos < p.end && (isAlnum(p.src[p.pos]) || p.src[p.pos] == '_') {
			p.pos++
		}
		for p.pos < p.end && p.src[p.pos] == '\'' {
			p.pos++
		}
		name := p.src[start:p.pos]
		size, ok := p.axes.Size(name)
		if !ok {
			if err := checkAxisName(strings.TrimRight(name, "'"), false); err != nil {
				return nil, synErr(col, "%v", err)
			}
			return nil, synErr(col, "unknown axis %q", name)
		}
		if s, ok := p.axes.skewOf(name); ok {
			return NewSkewSym(s, size)
		}
		return NewSym(name, size)
	case isDigit(c):
		n, err := p.nat()
		if err != nil {
			return nil, err
		}
		e, err := NewBroadcast(n)
		if err != nil {
			return nil, synErr(col, "%v", err)
		}
		return e, nil
	case c == '{':
		body, err := p.brace()
		if err != nil {
			return nil, err
		}
		e, ok := p.env[body]
		if !ok {
			return nil, synErr(col, "unknown mapping {%s} (not in the environment)", body)
		}
		if err := e.Err(); err != nil {
			return nil, synErr(col, "mapping {%s}: %v", body, err)
		}
		return e, nil
	case c == '(' || c == '[' || c == '$':
		if p.depth >= maxDepth {
			return nil, synErr(col, "expression nested deeper than %d", maxDepth)
		}
		p.depth++
		defer func() { p.depth-- }()
	}
	switch {
	case c == '(' || c == '[':
		closer := byte(')')
		if c == '[' {
			closer = ']'
		}
		p.pos++
		e, err := p.mapping()
		if err != nil {
			return nil, err
		}
		if p.peek() != closer {
			return nil, synErr(p.pos+1, "expected %q closing the group opened at col %d, found %s", string(closer), col, p.describe())
		}
		p.pos++
		return e, nil
	case c == '$':
		return p.linear()
	case c == 0:
		return nil, synErr(p.pos+1, "expected a mapping, found end of expression")
	}
	return nil, synErr(col, "expected a mapping, found %s", p.describe())
}

// linear := "$(" M1 ":" Num { "," M1 ":" Num } [","] ")"   (002 L1004-1016)
func (p *parser) linear() (*Expr, error) {
	col := p.pos + 1
	p.pos++ // '$'
	if p.peek() != '(' {
		return nil, synErr(p.pos+1, "expected '(' after '$'")
	}
	p.pos++
	var es []*Expr
	var ns []int
	for {
		e, err := p.m1()
		if err != nil {
			return nil, err
		}
		if p.peek() != ':' {
			return nil, synErr(p.pos+1, "expected ':' and a stride after a linear-combination term, found %s", p.describe())
		}
		p.pos++
		p.skip()
		n, err := p.num()
		if err != nil {
			return nil, err
		}
		es, ns = append(es, e), append(ns, n)
		if p.peek() == ',' {
			p.pos++
			if p.peek() == ')' {
				break
			}
			continue
		}
		break
	}
	if p.peek() != ')' {
		return nil, synErr(p.pos+1, "expected ')' closing the linear combination opened at col %d, found %s", col, p.describe())
	}
	p.pos++
	e, err := NewLinear(es, ns)
	if err != nil {
		return nil, synErr(col, "%v", err)
	}
	return e, nil
}

// MustParse is for tests and constant tables: it returns a poisoned
// expression (see [Expr.Err]) instead of an error.
func MustParse(src string, axes Axes, env Env) *Expr {
	e, err := Parse(src, axes, env)
	if err != nil {
		return invalid(err)
	}
	return e
}
