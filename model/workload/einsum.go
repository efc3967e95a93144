package workload

import (
	"fmt"
	"slices"
	"strings"
)

// Einsum is a two-operand tensor contraction in einsum notation: each input
// lists its axes, the output lists the axes that survive; every input axis
// absent from the output is summed over (002 L110-L111). Tensor shapes are
// unordered sets of named axes (002 L101), so the order of names matters
// only as the default row-major layout of the operand.
type Einsum struct {
	Inputs [][]string // axes of each input, in the order written
	Output []string   // axes of the output, in the order written; empty for a scalar
}

// EinsumArity is the number of inputs of an einsum: "a tensor contraction is
// a operation on a tensor that takes two tensors" (002 L110).
const EinsumArity = 2

// EinsumError reports a malformed einsum. Col is the 1-based column of the
// offending character in the compact string (0 when the einsum came in list
// form); Operand is the input index of the offending axis, OutputOperand for
// the output, or WholeEinsum when no single axis is at fault; Index is the
// position of the axis in that operand.
type EinsumError struct {
	Col     int
	Operand int
	Index   int
	Msg     string
}

// Operand values of EinsumError that are not input indices.
const (
	OutputOperand = -1 // the error is in the output
	WholeEinsum   = -2 // the error concerns the einsum as a whole
)

// Error formats the error with its column when known.
func (e *EinsumError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("col %d: %s", e.Col, e.Msg)
	}
	return e.Msg
}

// ParseEinsum parses the compact form "IK,KJ->IJ": every axis is a single
// letter, operands are separated by commas, and the output follows "->"
// (empty for a scalar, as in the dot product "I, I -> 1" of 002 L114).
// Spaces are allowed around commas and the arrow, not inside an operand:
// "B S D" is a multi-letter-axis einsum and needs the list form. The result
// is checked as NewEinsum checks it, and errors carry the column.
func ParseEinsum(s string) (*Einsum, error) {
	p := einsumParser{s: s}
	e, err := p.parse()
	if err != nil {
		return nil, err
	}
	if ee := check(e); ee != nil {
		if ee.Operand == WholeEinsum {
			ee.Col = 1
		} else {
			ee.Col = p.cols[ee.Operand+1][ee.Index]
		}
		return nil, ee
	}
	return e, nil
}

// NewEinsum builds an einsum from axis lists (the list form, for multi-letter
// axes) and checks it: two inputs, valid axis names, no axis repeated inside
// an operand, every output axis present in some input.
func NewEinsum(inputs [][]string, output []string) (*Einsum, error) {
	e := &Einsum{Inputs: inputs, Output: output}
	if ee := check(e); ee != nil {
		return nil, ee
	}
	return e, nil
}

// check validates the structure of e and reports the first problem.
func check(e *Einsum) *EinsumError {
	if len(e.Inputs) != EinsumArity {
		return &EinsumError{Operand: WholeEinsum, Msg: fmt.Sprintf("an einsum takes %d inputs (002 L110), got %d", EinsumArity, len(e.Inputs))}
	}
	for i, in := range e.Inputs {
		if ee := checkOperand(in, i, "input "+fmt.Sprint(i)); ee != nil {
			return ee
		}
	}
	if ee := checkOperand(e.Output, OutputOperand, "the output"); ee != nil {
		return ee
	}
	for j, a := range e.Output {
		if !e.inInput(a) {
			return &EinsumError{Operand: OutputOperand, Index: j, Msg: fmt.Sprintf("output axis %s is in no input", a)}
		}
	}
	return nil
}

func checkOperand(axes []string, op int, what string) *EinsumError {
	for j, a := range axes {
		if !validAxisName(a) {
			return &EinsumError{Operand: op, Index: j, Msg: fmt.Sprintf("bad axis name %q in %s (an uppercase letter, then letters, digits or _)", a, what)}
		}
		for _, b := range axes[:j] {
			if a == b {
				return &EinsumError{Operand: op, Index: j, Msg: fmt.Sprintf("axis %s repeated in %s", a, what)}
			}
		}
	}
	return nil
}

// validAxisName reports whether s is an axis name as m![...] expressions
// take them: an ASCII uppercase letter, then letters, digits or underscores.
func validAxisName(s string) bool {
	return s != "" && s[0] >= 'A' && s[0] <= 'Z' && validName(s)
}

// validName reports whether s is a tensor or op name: a letter followed
// by letters, digits or underscores.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

func (e *Einsum) inInput(a string) bool {
	for _, in := range e.Inputs {
		if slices.Contains(in, a) {
			return true
		}
	}
	return false
}

// Axes returns every axis of the einsum once, in order of first appearance
// (inputs left to right, then the output). Its product is the iteration
// space: one multiply-accumulate per point.
func (e *Einsum) Axes() []string {
	var out []string
	for _, in := range append(append([][]string{}, e.Inputs...), e.Output) {
		for _, a := range in {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// Contracted returns the axes summed over: present in an input, absent from
// the output (002 L111), in order of first appearance.
func (e *Einsum) Contracted() []string {
	var out []string
	for _, a := range e.Axes() {
		if !slices.Contains(e.Output, a) {
			out = append(out, a)
		}
	}
	return out
}

// Batch returns the output axes present in every input (V in the batched
// matmul VMK,VNK->VMN, 002 L3710), in output order.
func (e *Einsum) Batch() []string {
	var out []string
	for _, a := range e.Output {
		all := true
		for _, in := range e.Inputs {
			all = all && slices.Contains(in, a)
		}
		if all {
			out = append(out, a)
		}
	}
	return out
}

// Free returns the output axes missing from at least one input (M and N in
// VMK,VNK->VMN, 002 L3710), in output order.
func (e *Einsum) Free() []string {
	var out []string
	for _, a := range e.Output {
		for _, in := range e.Inputs {
			if !slices.Contains(in, a) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// Broadcast returns the output axes that input i lacks, along which that
// input is broadcast ("A across J; B across I" for GEMM, 002 L120). It
// returns nil for an index out of range.
func (e *Einsum) Broadcast(i int) []string {
	if i < 0 || i >= len(e.Inputs) {
		return nil
	}
	var out []string
	for _, x := range e.Output {
		if !slices.Contains(e.Inputs[i], x) {
			out = append(out, x)
		}
	}
	return out
}

// String prints the compact form when every axis is a single letter
// ("IK,KJ->IJ") and otherwise the spaced form ("B S D, D F -> B S F").
func (e *Einsum) String() string {
	single := true
	for _, a := range e.Axes() {
		single = single && len(a) == 1
	}
	sep, comma, arrow := " ", ", ", " -> "
	if single {
		sep, comma, arrow = "", ",", "->"
	}
	ins := make([]string, len(e.Inputs))
	for i, in := range e.Inputs {
		ins[i] = strings.Join(in, sep)
	}
	return strings.TrimRight(strings.Join(ins, comma)+arrow+strings.Join(e.Output, sep), " ")
}

// einsumParser scans the compact form and records the column of every axis
// letter so that structural errors can point at it.
type einsumParser struct {
	s    string
	pos  int
	cols [][]int // cols[0] = output, cols[1+i] = input i
}

func (p *einsumParser) errf(pos int, format string, args ...any) *EinsumError {
	return &EinsumError{Col: pos + 1, Operand: WholeEinsum, Msg: fmt.Sprintf(format, args...)}
}

// unexpected reports the character at the current position.
func (p *einsumParser) unexpected() *EinsumError {
	c := p.s[p.pos]
	if c >= 'a' && c <= 'z' {
		return p.errf(p.pos, "lowercase %q: the compact form takes single uppercase-letter axes (IK,KJ->IJ); multi-letter axes such as Dk need the list form {inputs: [[...], [...]], output: [...]}", c)
	}
	return p.errf(p.pos, "unexpected %q: the compact form takes single uppercase-letter axes, commas and \"->\"", c)
}

func (p *einsumParser) skipSpace() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' }

// operand reads a run of uppercase letters; it stops at anything else.
func (p *einsumParser) operand() ([]string, []int) {
	var axes []string
	var cols []int
	for p.pos < len(p.s) && isLetter(p.s[p.pos]) {
		axes = append(axes, p.s[p.pos:p.pos+1])
		cols = append(cols, p.pos+1)
		p.pos++
	}
	return axes, cols
}

// afterOperand rejects a space followed by another letter inside an operand.
func (p *einsumParser) afterOperand(start int) *EinsumError {
	q := p.pos
	for q < len(p.s) && (p.s[q] == ' ' || p.s[q] == '\t') {
		q++
	}
	if q > p.pos && q < len(p.s) && isLetter(p.s[q]) && p.pos > start {
		return p.errf(q, "space inside an operand: the compact form takes single-letter axes written together (IK,KJ->IJ); write multi-letter axes in the list form {inputs: [[...], [...]], output: [...]}")
	}
	return nil
}

func (p *einsumParser) parse() (*Einsum, error) {
	e := &Einsum{}
	p.cols = [][]int{nil}
	if strings.TrimSpace(p.s) == "" {
		return nil, p.errf(0, "empty einsum")
	}
	for {
		p.skipSpace()
		start := p.pos
		axes, cols := p.operand()
		if len(axes) == 0 {
			if p.pos < len(p.s) && p.s[p.pos] != ',' && p.s[p.pos] != '-' {
				return nil, p.unexpected()
			}
			return nil, p.errf(p.pos, "empty input operand")
		}
		if err := p.afterOperand(start); err != nil {
			return nil, err
		}
		e.Inputs = append(e.Inputs, axes)
		p.cols = append(p.cols, cols)
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, p.errf(p.pos, "missing \"->\" and output")
		}
		if p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if strings.HasPrefix(p.s[p.pos:], "->") {
			p.pos += 2
			break
		}
		return nil, p.unexpected()
	}
	p.skipSpace()
	start := p.pos
	e.Output, p.cols[0] = p.operand()
	if err := p.afterOperand(start); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.s) {
		return nil, p.unexpected()
	}
	if e.Output == nil {
		e.Output = []string{}
	}
	return e, nil
}
