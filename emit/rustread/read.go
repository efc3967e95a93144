package rustread

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"tcpmap/emit/rustapi"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/pos"
)

// ReadFile reads a kernel program from a file: a Rust kernel (.rs, see
// Read) or the program's JSON form (.json, kernel.Program.UnmarshalJSON).
// Errors name the file, and for Rust and JSON syntax the line and column.
func ReadFile(path string) (*kernel.Program, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".rs" && ext != ".json" {
		return nil, fmt.Errorf("%s: unknown kernel file type %q: want .rs or .json", path, filepath.Ext(path))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch ext {
	case ".rs":
		return Read(path, b)
	case ".json":
		var p kernel.Program
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, pos.JSON(path, b, err)
		}
		return &p, nil
	}
	return nil, fmt.Errorf("%s: unknown kernel file type %q: want .rs or .json", path, filepath.Ext(path))
}

// Read parses a Rust Virtual ISA kernel back into a kernel program. It reads
// the subset Rust emits, in either API (read_api.go: the crate the file
// names tells which), and the manual's own Hello kernels (002 L175-220,
// L246-299, L307-362, L401-465):
//
//   - `axes![...]`, `type X = m![...];` aliases, `m![...]` types with aliases
//     and `{Alias}` escapes (002 L972-984);
//   - the `#[device(chip = N)]` kernel: its HbmTensor parameters and result,
//     `let` statements (annotated with the tensor type or not) whose values
//     are `to_dm` (with or without `::<Cluster, Slice, Element>`), `to_hbm`
//     and method chains `ctx.main|sub.begin(x.view()).fetch::<...>()...`
//     with every stage of kernel.StageKind (furiosa-opt-std 0.6.0's split
//     calls merged back into one stage and checked against each other), the
//     loop form of a tiled kernel (read_loop.go), and the tail expression;
//   - from the host functions, the HBM address of each input
//     (`let x_hbm = x.to_hbm(&mut ctx.pdma, ADDR)`) matched to the kernel's
//     parameters through `launch(kernel, (&mut ctx, &x_hbm, ...))`, and the
//     output's name (`let out_hbm = launch(...)` names it out);
//   - the header's directives: `// tcpmap:kernel NAME` and `// tcpmap:reference
//     OP(ARGS) -> OUT`, `// tcpmap:name IDENT ORIGINAL` (a tensor's name
//     back), and under furiosa-opt-std 0.6.0, which takes no address,
//     `// tcpmap:place NAME VALUE` for every tensor the kernel binds. Without
//     the kernel directive the program is named after the file.
//
// A variable bound again (the manual's `let lhs: DmTensor<...> =
// lhs.to_dm(...)`, 002 L339) names a new tensor: its name gets the memory as
// a suffix (lhs_dm, rhs_trf), then a number, until it is unique. Stage
// parameters come back in their canonical spelling (SwitchConfig as
// kernel.SwitchConfig.Variant prints it). Lowered configurations are not in
// the text and stay nil. A straight-line kernel's tensors are listed inputs,
// result, then in the order the kernel binds them. The program is
// validated. Errors are *Error with the file, line and column; Read never
// panics.
func Read(filename string, src []byte) (*kernel.Program, error) {
	r := &reader{file: filename, src: string(src)}
	p, err := r.read()
	if err != nil {
		return nil, err
	}
	return p, nil
}

type reader struct {
	file string
	src  string
	toks []token
	dirs []directive
	i    int
	err  error

	axes     mapping.Axes
	haveAxes bool
	env      mapping.Env

	prog     *kernel.Program
	chips    int
	kernelFn bool // a #[device] attribute precedes the next fn

	// The API (read_api.go).
	api    rustapi.API
	apiSet bool
	places map[string]*place

	// From the kernel.
	sawKernel bool
	ctxName   string
	vars      map[string]*kernel.Tensor // variable → tensor it holds
	names     map[string]bool           // tensor names in use
	inputs    []*kernel.Tensor
	output    *kernel.Tensor // the result type; named at the end
	outputOff int
	interm    []*kernel.Tensor
	tailOp    *kernel.Op // the to_hbm of the tail expression
	lp        *loopRead  // the tile loop (read_loop.go)
	pending   map[string]*kernel.Tensor
	declared  []string // the pending names in order
	binding   string   // the variable the chain being read binds
	outAt     int      // where the tail stores the result (0.6.0: placed once named)
	depth     int      // nesting of the constant expression being read

	// From the host.
	hostAddr   map[string]int64 // device variable → HBM address
	hostAddrAt map[string]int
	launchArgs []string
	launchMut  []int // the launch arguments lent &mut
	launchOff  int
	launchOut  string

	// inPlace is the kernel's &mut parameter, the argument it updates in
	// place (read_inplace.go); viewOff the byte offset of each view of it.
	inPlace *kernel.Tensor
	viewOff map[*kernel.Tensor]int64
}

// fail records the first error, at byte offset off.
func (r *reader) fail(off int, format string, args ...any) {
	if r.err != nil {
		return
	}
	line, col := pos.Offset([]byte(r.src), off)
	r.err = &Error{File: r.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (r *reader) tok() token {
	if r.i >= len(r.toks) {
		return token{kind: tEOF, off: len(r.src)}
	}
	return r.toks[r.i]
}

func (r *reader) peek(n int) token {
	if r.i+n >= len(r.toks) {
		return token{kind: tEOF, off: len(r.src)}
	}
	return r.toks[r.i+n]
}

func (r *reader) next() token {
	t := r.tok()
	if r.i < len(r.toks) {
		r.i++
	}
	return t
}

// is reports whether the current token is the punctuation or identifier s.
func (r *reader) is(s string) bool {
	t := r.tok()
	return (t.kind == tPunct || t.kind == tIdent) && t.text == s
}

// accept consumes s if it is next.
func (r *reader) accept(s string) bool {
	if r.err == nil && r.is(s) {
		r.next()
		return true
	}
	return false
}

// expect consumes s or fails.
func (r *reader) expect(s string) token {
	t := r.tok()
	if r.err != nil {
		return t
	}
	if !r.is(s) {
		r.fail(t.off, "want %q, found %s", s, describe(t))
		return t
	}
	return r.next()
}

func (r *reader) ident() token {
	t := r.tok()
	if r.err != nil {
		return t
	}
	if t.kind != tIdent {
		r.fail(t.off, "want an identifier, found %s", describe(t))
		return t
	}
	return r.next()
}

func describe(t token) string {
	if t.kind == tEOF {
		return "end of file"
	}
	return strconv.Quote(t.text)
}

func (r *reader) read() (*kernel.Program, error) {
	toks, dirs, off, err := lex(r.src)
	if err != nil {
		r.fail(off, "%v", err)
		return nil, r.err
	}
	r.toks, r.dirs = toks, dirs
	r.api = rustapi.Visa01
	if r.readPlaces(); r.err != nil {
		return nil, r.err
	}
	r.env = mapping.Env{}
	r.vars = map[string]*kernel.Tensor{}
	r.names = map[string]bool{}
	r.hostAddr = map[string]int64{}
	r.hostAddrAt = map[string]int{}
	r.prog = &kernel.Program{}
	for r.err == nil && r.tok().kind != tEOF {
		r.item()
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.finish()
}

// item parses one top-level item.
func (r *reader) item() {
	t := r.tok()
	switch {
	case r.is("#"):
		r.attribute()
	case r.is("extern") || r.is("use"):
		r.crateDecl()
	case r.is("axes") && r.peek(1).text == "!":
		r.axesDecl()
	case r.is("type"):
		r.typeAlias()
	case r.is("pub") || r.is("async") || r.is("fn"):
		r.accept("pub")
		r.accept("async")
		r.expect("fn")
		if r.kernelFn {
			r.kernelFn = false
			r.kernel()
			return
		}
		r.hostFn()
	case r.is("mod"):
		r.next()
		r.ident()
		if r.accept(";") {
			return
		}
		r.skipBalanced("{")
	default:
		r.fail(t.off, "unexpected %s at the top level (want an attribute, use, axes!, type, fn or mod)", describe(t))
	}
}

// skipTo skips past the next s at nesting depth 0.
func (r *reader) skipTo(s string) {
	depth := 0
	for r.err == nil {
		t := r.tok()
		switch {
		case t.kind == tEOF:
			r.fail(t.off, "want %q before the end of the file", s)
			return
		case t.kind == tPunct && (t.text == "(" || t.text == "[" || t.text == "{"):
			depth++
		case t.kind == tPunct && (t.text == ")" || t.text == "]" || t.text == "}"):
			depth--
			if depth < 0 {
				r.fail(t.off, "unbalanced %q", t.text)
				return
			}
		case depth == 0 && t.kind == tPunct && t.text == s:
			r.next()
			return
		}
		r.next()
	}
}

var closer = map[string]string{"(": ")", "[": "]", "{": "}"}

// skipBalanced consumes the group that opens with open and returns the
// index of its closing token.
func (r *reader) skipBalanced(open string) int {
	start := r.expect(open)
	if r.err != nil {
		return r.i
	}
	var stack []string
	stack = append(stack, closer[open])
	for r.err == nil {
		t := r.next()
		switch {
		case t.kind == tEOF:
			r.fail(start.off, "unclosed %q", open)
			return r.i
		case t.kind == tPunct && closer[t.text] != "":
			stack = append(stack, closer[t.text])
		case t.kind == tPunct && (t.text == ")" || t.text == "]" || t.text == "}"):
			if t.text != stack[len(stack)-1] {
				r.fail(t.off, "unbalanced %q (want %q)", t.text, stack[len(stack)-1])
				return r.i
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return r.i - 1
			}
		}
	}
	return r.i
}

// attribute parses `#![...]` (skipped) or `#[...]`; `#[device(chip = N)]`
// marks the next fn as the kernel (002 L199).
func (r *reader) attribute() {
	r.expect("#")
	if r.accept("!") {
		r.skipBalanced("[")
		return
	}
	if r.tok().text == "[" && r.peek(1).text == "device" {
		at := r.next()
		r.next()
		r.expect("(")
		r.expect("chip")
		r.expect("=")
		n := r.tok()
		if r.err == nil {
			v, ok := r.intLit(n)
			if !ok || v < 1 || v > 1<<20 {
				r.fail(n.off, "want the chip count of #[device(chip = N)], a positive integer, found %s", describe(n))
				return
			}
			r.next()
			if r.sawKernel || r.kernelFn {
				r.fail(at.off, "a second #[device] kernel: a file holds one kernel")
				return
			}
			r.chips = int(v)
		}
		r.expect(")")
		r.expect("]")
		r.kernelFn = true
		return
	}
	r.skipBalanced("[")
}

// rawGroup consumes a bracketed group and returns its inner text and the
// offset where it starts.
func (r *reader) rawGroup(open string) (string, int) {
	t := r.tok()
	end := r.skipBalanced(open)
	if r.err != nil || end >= len(r.toks) {
		return "", t.off
	}
	return r.src[t.off+1 : r.toks[end].off], t.off + 1
}

// axesDecl parses `axes![A = 2048];` (002 L183, L590-595).
func (r *reader) axesDecl() {
	at := r.next()
	r.expect("!")
	text, off := r.rawGroup("[")
	r.accept(";")
	if r.err != nil {
		return
	}
	if r.haveAxes {
		r.fail(at.off, "a second axes! declaration")
		return
	}
	a, err := mapping.ParseAxes(text)
	if err != nil {
		r.failIn(off, text, err)
		return
	}
	r.axes, r.haveAxes = a, true
}

// failIn reports an error of a sub-parser over text starting at off: a
// *mapping.SyntaxError or *kernel.SwitchConfigError column becomes the
// file position.
func (r *reader) failIn(off int, text string, err error) {
	var se *mapping.SyntaxError
	if errors.As(err, &se) {
		r.fail(off+se.Col-1, "%s", se.Msg)
		return
	}
	var ce *kernel.SwitchConfigError
	if errors.As(err, &ce) {
		r.fail(off+ce.Col-1, "%s", ce.Msg)
		return
	}
	r.fail(off, "%v", err)
}

// typeAlias parses `type Name = m![...];` (002 L184-186).
func (r *reader) typeAlias() {
	r.next()
	name := r.ident()
	r.expect("=")
	e := r.mapArg()
	r.expect(";")
	if r.err != nil {
		return
	}
	if _, dup := r.env[name.text]; dup {
		r.fail(name.off, "type alias %s is declared twice", name.text)
		return
	}
	r.env[name.text] = e
}

// mapArg parses a mapping in type position: `m![...]` or an alias.
func (r *reader) mapArg() *mapping.Expr {
	t := r.tok()
	if r.err != nil {
		return nil
	}
	if !r.haveAxes {
		r.fail(t.off, "a mapping before the axes! declaration")
		return nil
	}
	if t.kind == tIdent && t.text == "m" && r.peek(1).text == "!" {
		r.next()
		r.next()
		text, off := r.rawGroup("[")
		if r.err != nil {
			return nil
		}
		e, err := mapping.Parse(text, r.axes, r.env)
		if err != nil {
			r.failIn(off, text, err)
			return nil
		}
		return e
	}
	if t.kind == tIdent {
		e, ok := r.env[t.text]
		if !ok {
			r.fail(t.off, "unknown type alias %s (want m![...] or a declared alias)", t.text)
			return nil
		}
		r.next()
		return e
	}
	r.fail(t.off, "want a mapping m![...] or a type alias, found %s", describe(t))
	return nil
}

// dtypeArg parses an element type name.
func (r *reader) dtypeArg() dtype.DType {
	t := r.ident()
	if r.err != nil {
		return 0
	}
	d, err := dtype.Parse(t.text)
	if err != nil {
		r.fail(t.off, "%v", err)
		return 0
	}
	return d
}

// tensorType parses HbmTensor<D, Chip, Element>, DmTensor<D, Chip,
// Cluster, Slice, Element>, TrfTensor<D, Chip, Cluster, Slice, Row,
// Element> or VrfTensor<D, Chip, Cluster, Slice, Element> (002 L133-141).
func (r *reader) tensorType() *kernel.Tensor {
	t := r.ident()
	if r.err != nil {
		return nil
	}
	mem, ok := map[string]kernel.Memory{"HbmTensor": kernel.HBM, "DmTensor": kernel.DM, "TrfTensor": kernel.TRF, "VrfTensor": kernel.VRF}[t.text]
	if !ok {
		r.fail(t.off, "want HbmTensor, DmTensor, TrfTensor or VrfTensor, found %s", describe(t))
		return nil
	}
	x := &kernel.Tensor{Mem: mem, Role: kernel.Intermediate}
	r.expect("<")
	x.DType = r.dtypeArg()
	r.expect(",")
	x.Chip = r.mapArg()
	if mem != kernel.HBM {
		r.expect(",")
		x.Cluster = r.mapArg()
		r.expect(",")
		x.Slice = r.mapArg()
	}
	if mem == kernel.TRF {
		r.expect(",")
		x.Row = r.mapArg()
	}
	r.expect(",")
	x.Element = r.mapArg()
	r.accept(",")
	r.expect(">")
	if r.err != nil {
		return nil
	}
	return x
}

// intLit reads an integer literal token (decimal, 0x, 0o, 0b, underscores,
// an integer type suffix).
func (r *reader) intLit(t token) (int64, bool) {
	if t.kind != tInt {
		return 0, false
	}
	s := strings.ReplaceAll(t.text, "_", "")
	for _, suf := range []string{"usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8"} {
		if strings.HasSuffix(s, suf) && !strings.HasPrefix(s, "0x") {
			s = strings.TrimSuffix(s, suf)
			break
		}
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil || v > maxAddr {
		return 0, false
	}
	return v, true
}

// constExpr parses an integer constant expression: literals, `<<`, `+`,
// `*` and parentheses, with Rust's precedence (`*` over `+` over `<<`), as
// the manual writes addresses (`1 << 12`, `2 << 28`, 002 L277, L361).
func (r *reader) constExpr() int64 {
	v := r.constSum()
	for r.err == nil && r.isShift() {
		at := r.tok()
		r.next()
		r.next()
		s := r.constSum()
		if r.err != nil {
			return 0
		}
		if s < 0 || s > 62 || v > maxAddr>>s {
			r.fail(at.off, "address %d << %d is out of range", v, s)
			return 0
		}
		v <<= s
	}
	return v
}

// isShift reports whether the next two tokens are an adjacent `<<`.
func (r *reader) isShift() bool {
	a, b := r.tok(), r.peek(1)
	return a.kind == tPunct && a.text == "<" && b.kind == tPunct && b.text == "<" && b.off == a.off+1
}

func (r *reader) constSum() int64 {
	v := r.constProduct()
	for r.err == nil && r.is("+") {
		at := r.next()
		w := r.constProduct()
		if v > maxAddr-w {
			r.fail(at.off, "address out of range")
			return 0
		}
		v += w
	}
	return v
}

func (r *reader) constProduct() int64 {
	v := r.constAtom()
	for r.err == nil && r.is("*") {
		at := r.next()
		w := r.constAtom()
		if w != 0 && v > maxAddr/w {
			r.fail(at.off, "address out of range")
			return 0
		}
		v *= w
	}
	return v
}

func (r *reader) constAtom() int64 {
	t := r.tok()
	if r.err != nil {
		return 0
	}
	if r.is("[") && r.lp != nil && !r.lp.done {
		return r.parityAddr()
	}
	if r.is("(") {
		if r.depth >= maxDepth {
			r.fail(t.off, "constant expression nested more than %d deep", maxDepth)
			return 0
		}
		r.next()
		r.depth++
		v := r.constExpr()
		r.depth--
		r.expect(")")
		return v
	}
	v, ok := r.intLit(t)
	if !ok {
		r.fail(t.off, "want an integer address, found %s", describe(t))
		return 0
	}
	r.next()
	return v
}

// maxDepth bounds the nesting of parentheses in a constant expression.
const maxDepth = 64

// hostFn scans a host function's body for the input addresses and the
// launch (002 L187-198).
func (r *reader) hostFn() {
	r.ident()
	if r.tok().text == "<" {
		r.skipAngles()
	}
	r.skipBalanced("(")
	for r.err == nil && !r.is("{") && !r.is(";") && r.tok().kind != tEOF {
		r.next()
	}
	if r.accept(";") {
		return
	}
	start := r.i
	end := r.skipBalanced("{")
	if r.err != nil {
		return
	}
	// The body's tokens, without the mut of `let mut x_hbm` (the argument
	// the kernel updates in place, lent &mut).
	body := make([]token, 0, end-start)
	for i, t := range r.toks[start:end] {
		if t.text == "mut" && i > 0 && r.toks[start+i-1].text == "let" {
			continue
		}
		body = append(body, t)
	}
	text := func(k int) string {
		if k < len(body) {
			return body[k].text
		}
		return ""
	}
	for k := 0; k+3 < len(body); k++ {
		// let X = Y.to_hbm(&mut C.pdma, ADDR), or without the address
		// under furiosa-opt-std 0.6.0 (tensor/memory.rs)
		if text(k) == "let" && body[k+1].kind == tIdent && text(k+2) == "=" && body[k+3].kind == tIdent &&
			text(k+4) == "." && text(k+5) == "to_hbm" && text(k+6) == "(" && text(k+7) == "&" && text(k+8) == "mut" &&
			text(k+10) == "." && text(k+11) == "pdma" && (text(k+12) == "," || text(k+12) == ")") {
			v := int64(-1)
			if (text(k+12) == ",") != (r.api == rustapi.Visa01) {
				r.fail(body[k+5].off, "%s's to_hbm takes %s", r.api.Library(), map[bool]string{true: "(&mut ctx.pdma, ADDR)", false: "(&mut ctx.pdma), no address"}[r.api == rustapi.Visa01])
				return
			}
			if r.api == rustapi.Visa01 {
				sub := &reader{file: r.file, src: r.src, toks: append(append([]token(nil), body[k+13:]...), token{kind: tEOF, off: body[len(body)-1].off})}
				v = sub.constExpr()
				if sub.err != nil {
					r.err = sub.err
					return
				}
				if !sub.is(")") {
					r.fail(sub.tok().off, "want ')' after the HBM address, found %s", describe(sub.tok()))
					return
				}
			}
			name := body[k+1].text
			if _, dup := r.hostAddr[name]; dup {
				r.fail(body[k+1].off, "%s is moved to HBM twice", name)
				return
			}
			r.hostAddr[name] = v
			r.hostAddrAt[name] = body[k+1].off
		}
		// [let X =] launch(kernel, (&mut C, &A, &B))
		if text(k) == "launch" && text(k+1) == "(" && r.launchArgs == nil {
			r.launchOff = body[k].off
			if k >= 3 && text(k-3) == "let" && text(k-1) == "=" {
				r.launchOut = text(k - 2)
			}
			j := k + 2
			if body[j].kind != tIdent || text(j+1) != "," || text(j+2) != "(" {
				r.fail(body[k].off, "want launch(kernel, (&mut ctx, &input, ...))")
				return
			}
			j += 3
			r.launchArgs = []string{}
			first := true
			for j < len(body) && text(j) != ")" {
				if text(j) == "&" && text(j+1) == "mut" && first {
					j += 3
				} else if text(j) == "&" && text(j+1) == "mut" && j+2 < len(body) && body[j+2].kind == tIdent {
					// The argument the kernel updates in place.
					r.launchArgs = append(r.launchArgs, body[j+2].text)
					r.launchMut = append(r.launchMut, len(r.launchArgs)-1)
					j += 3
				} else if text(j) == "&" && j+1 < len(body) && body[j+1].kind == tIdent {
					r.launchArgs = append(r.launchArgs, body[j+1].text)
					j += 2
				} else {
					r.fail(body[j].off, "want &argument in launch's tuple, found %s", describe(body[j]))
					return
				}
				first = false
				if text(j) == "," {
					j++
				}
			}
		}
	}
}

// skipAngles skips a generic parameter list <...>.
func (r *reader) skipAngles() {
	depth := 0
	for r.err == nil {
		t := r.next()
		switch {
		case t.kind == tEOF:
			r.fail(t.off, "unclosed '<'")
			return
		case t.text == "<":
			depth++
		case t.text == ">":
			depth--
			if depth == 0 {
				return
			}
		}
	}
}

// newTensor names and registers a tensor bound to variable v: the
// variable's name, or with the memory as a suffix when the name is taken
// (002 L339 binds lhs again), then a number.
func (r *reader) newTensor(v string, t *kernel.Tensor) {
	name := v
	if r.names[name] {
		name = v + "_" + string(t.Mem)
		for k := 2; r.names[name]; k++ {
			name = fmt.Sprintf("%s_%s%d", v, t.Mem, k)
		}
	}
	t.Name = name
	r.names[name] = true
	r.vars[v] = t
}

// kernel parses the #[device] function (002 L199-220).
func (r *reader) kernel() {
	r.sawKernel = true
	r.ident()
	r.expect("(")
	ctx := r.ident()
	r.expect(":")
	r.expect("&")
	r.expect("mut")
	r.expect("Context")
	r.ctxName = ctx.text
	for r.err == nil && r.accept(",") {
		if r.is(")") {
			break
		}
		name := r.ident()
		r.expect(":")
		r.expect("&")
		mut := r.accept("mut")
		t := r.tensorType()
		if r.err != nil {
			return
		}
		if mut {
			if r.inPlace != nil || t.Mem != kernel.HBM {
				r.fail(name.off, "kernel parameter %s is &mut: a kernel updates one HBM argument in place", name.text)
				return
			}
			r.inPlace = t
		}
		if t.Mem != kernel.HBM {
			r.fail(name.off, "kernel parameter %s is a %s tensor: kernel arguments live in HBM", name.text, t.Mem)
			return
		}
		if _, dup := r.vars[name.text]; dup || name.text == r.ctxName {
			r.fail(name.off, "parameter %s is declared twice", name.text)
			return
		}
		t.Role = kernel.Input
		r.newTensor(name.text, t)
		r.inputs = append(r.inputs, t)
	}
	r.expect(")")
	if r.accept("->") {
		r.outputOff = r.tok().off
		t := r.tensorType()
		if r.err != nil {
			return
		}
		if t.Mem != kernel.HBM {
			r.fail(r.outputOff, "the kernel returns a %s tensor: its result lives in HBM", t.Mem)
			return
		}
		t.Role = kernel.Output
		r.output = t
	}
	r.expect("{")
	for r.err == nil && !r.is("}") {
		if r.tok().kind == tEOF {
			r.fail(r.tok().off, "unclosed kernel body")
			return
		}
		r.statement()
	}
	r.expect("}")
}

// statement parses `let x[: Type] = expr;` or the tail expression.
func (r *reader) statement() {
	if r.is("for") {
		r.forLoop()
		return
	}
	if r.is("let") && r.peek(2).text == ":" && r.peek(3).text == "HbmTensorViewMut" {
		r.next()
		r.inPlaceView(r.ident())
		return
	}
	if t := r.tok(); t.kind == tIdent && r.peek(1).text == "." && r.peek(2).text == "view" && r.peek(5).text == "." && r.peek(6).text == "to_hbm_view" {
		r.toHBMView()
		return
	}
	if r.accept("let") {
		mut := r.accept("mut")
		name := r.ident()
		var ann *kernel.Tensor
		annOff := r.tok().off
		if r.accept(":") {
			annOff = r.tok().off
			ann = r.tensorType()
		}
		r.expect("=")
		if r.err != nil {
			return
		}
		if mut {
			// `let mut x: Type = handle;` binds the result or declares a
			// tensor the tile loop assigns (read_loop.go).
			r.handleDecl(name, ann, annOff)
			r.expect(";")
			return
		}
		r.expression(name, ann, annOff, false)
		r.expect(";")
		return
	}
	// The tail: the kernel's result.
	t := r.tok()
	if r.output == nil {
		r.fail(t.off, "a tail expression in a kernel that returns nothing")
		return
	}
	if t.kind == tIdent && r.peek(1).text == "}" {
		v, ok := r.vars[t.text]
		if !ok {
			r.fail(t.off, "unknown variable %s", t.text)
			return
		}
		if v == r.output {
			// The result bound by HbmTensor::from_addr.
			r.next()
			return
		}
		if v.Mem != kernel.HBM || v.Role != kernel.Intermediate || !sameType(v, r.output) {
			r.fail(t.off, "the kernel returns %s, which is not an HbmTensor of the result type produced in the kernel", t.text)
			return
		}
		r.next()
		// The variable is the result: it takes the result's place.
		v.Role = kernel.Output
		for k, x := range r.interm {
			if x == v {
				r.interm = append(r.interm[:k], r.interm[k+1:]...)
				break
			}
		}
		r.output = v
		return
	}
	r.expression(token{}, nil, t.off, true)
	if r.err == nil && !r.is("}") {
		r.fail(r.tok().off, "want ';' or the end of the kernel, found %s", describe(r.tok()))
	}
}

func sameType(a, b *kernel.Tensor) bool {
	eq := func(x, y *mapping.Expr) bool { return x == nil && y == nil || x != nil && y != nil && x.Equal(y) }
	return a.Mem == b.Mem && a.DType == b.DType && eq(a.Chip, b.Chip) && eq(a.Cluster, b.Cluster) &&
		eq(a.Slice, b.Slice) && eq(a.Row, b.Row) && eq(a.Element, b.Element)
}

// expression parses the value of a let (bound to name, annotated with ann)
// or the tail expression.
func (r *reader) expression(name token, ann *kernel.Tensor, annOff int, tail bool) {
	t := r.tok()
	if t.kind != tIdent {
		r.fail(t.off, "want a tensor variable or %s, found %s", r.ctxName, describe(t))
		return
	}
	if t.text == r.ctxName {
		if tail {
			r.fail(t.off, "the kernel's result comes from to_hbm, not a chain")
			return
		}
		r.chain(name, ann, annOff)
		return
	}
	src, ok := r.variable(t.text)
	if !ok {
		r.fail(t.off, "unknown variable %s", t.text)
		return
	}
	r.next()
	r.expect(".")
	m := r.ident()
	if r.err != nil {
		return
	}
	var tf []typeArg
	if r.is("::") {
		tf = r.turbofish()
	}
	r.expect("(")
	r.expect("&")
	r.expect("mut")
	r.expect(r.ctxName)
	r.expect(".")
	r.expect("tdma")
	// The address (002 L202), which furiosa-opt-std 0.6.0 does not take:
	// the tensor's place line has it, the result's once it is named.
	var addr int64
	if r.api == rustapi.Visa01 {
		r.expect(",")
		addr = r.constExpr()
	} else if !tail && r.err == nil {
		addr, _ = r.placeOf(name.text, m.off, false)
	}
	r.expect(")")
	if r.err != nil {
		return
	}
	switch m.text {
	case "to_dm":
		// to_dm::<Cluster, Slice, Element>(&mut ctx.tdma, addr) returns
		// DmTensor<D, Chip, Cluster, Slice, Element> (002 L2378-2384).
		if tail {
			r.fail(m.off, "the kernel's result comes from to_hbm")
			return
		}
		if src.Mem != kernel.HBM && src.Mem != kernel.DM {
			r.fail(m.off, "to_dm of a %s tensor: the DMA moves HBM and DM tensors", src.Mem)
			return
		}
		var dst *kernel.Tensor
		if tf != nil {
			if len(tf) != 3 {
				r.fail(m.off, "to_dm takes <Cluster, Slice, Element>, found %d type arguments", len(tf))
				return
			}
			dst = &kernel.Tensor{Mem: kernel.DM, Role: kernel.Intermediate, DType: src.DType, Chip: src.Chip}
			dst.Cluster = r.mapOf(tf[0])
			dst.Slice = r.mapOf(tf[1])
			dst.Element = r.mapOf(tf[2])
		}
		dst = r.settle(dst, ann, annOff, kernel.DM, m)
		if dst == nil {
			return
		}
		dst.Addr = addr
		kind := kernel.OpToDM
		if src.Mem == kernel.DM {
			kind = kernel.OpDMToDM
		}
		r.newTensor(name.text, dst)
		r.interm = append(r.interm, dst)
		r.prog.Ops = append(r.prog.Ops, &kernel.Op{Context: kernel.CtxDMA, Kind: kind, Src: src.Name, Dst: dst.Name})
	case "to_hbm":
		if tf != nil {
			r.fail(m.off, "to_hbm takes no type arguments: its type is the annotation or the kernel's result type")
			return
		}
		if src.Mem != kernel.DM {
			r.fail(m.off, "to_hbm of a %s tensor: the DMA moves DM tensors to HBM", src.Mem)
			return
		}
		var dst *kernel.Tensor
		if tail {
			if r.tailOp != nil {
				r.fail(m.off, "the result is produced twice")
				return
			}
			dst = r.output
			r.outAt = m.off
		} else {
			dst = r.settle(nil, ann, annOff, kernel.HBM, m)
			if dst == nil {
				return
			}
			r.newTensor(name.text, dst)
			r.interm = append(r.interm, dst)
		}
		dst.Addr = addr
		op := &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToHBM, Src: src.Name, Dst: dst.Name}
		if tail {
			r.tailOp = op
		}
		r.prog.Ops = append(r.prog.Ops, op)
	default:
		r.fail(m.off, "unknown method %s (want to_dm or to_hbm, or a chain on %s)", m.text, r.ctxName)
	}
}

// maxAddr bounds the addresses the reader accepts: 2^62, far above any
// device memory, so that the constant arithmetic cannot overflow.
const maxAddr = int64(1) << 62
