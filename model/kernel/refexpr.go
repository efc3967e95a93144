package kernel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RefExpr: the output is an expression over the inputs (Reference.Expr),
// for kernels beyond one einsum, add or mul — the Vector Engine's
// elementwise chains and reductions (002 L4549-5573): softmax, rmsnorm,
// activations. The expression names the inputs and, in its reductions,
// axes; the output is its value at each output index.
const RefExpr RefOp = "expr"

// RefNode is one node of a reference expression.
//
// The language (ParseRefExpr): numbers (an integer literal is an i32, one
// with a point or exponent an f32 value taken exactly), input names, `+ -
// * /`, unary `-`, parentheses, and calls:
//
//   - float functions exp, sqrt, tanh, sigmoid, erf, log, sin, cos, abs;
//   - max(a, b), min(a, b) on two values of one type;
//   - reduce_sum(e, AXIS), reduce_max(e, AXIS), reduce_min(e, AXIS): e
//     reduced over an axis (the result lacks it);
//   - at(e, AXIS, k): e at coordinate k of an axis (the result lacks it),
//     as two-group mode's group 0 and group 1 of an interleave axis;
//   - integer ops, wrapping in i32 as the Fxp cluster's AddFxp, SubFxp and
//     MulInt do (002 L4826-4833): + - * on integers, sat_add(a, b),
//     sat_sub(a, b);
//   - float(e): an integer as a real number; round(e): a real rounded half
//     away from zero and saturated to i32; bf16(e): a real rounded to the
//     nearest bf16, as a kernel stores it (a result one kernel hands the
//     next in DM, Handover);
//   - bit ops on an i32's two's-complement bits, as the branchless top-k
//     packs a bf16 score and its index in one i32 (002 L8543-8590):
//     bits(e): a real's f32 bit pattern as an integer; from_bits(e): the
//     f32 whose bits an integer holds; bit_and(a, b), bit_or(a, b),
//     bit_xor(a, b); shr(a, b): a shifted right arithmetically by b bits
//     (b taken unsigned: b < 0 or b >= 32 shifts by 31).
//
// Integers and reals do not mix implicitly.
type RefNode struct {
	// Op is "num", "input", "neg", "+", "-", "*", "/" or a function name.
	Op string
	// Name is an input's name, or a reduction's axis.
	Name string
	// Num is a number's value; Int says it is an integer literal.
	Num float64
	Int bool
	// Args are the operands.
	Args []*RefNode
	// Pos is the 0-based byte offset of the node in the expression.
	Pos int
}

// refFuncs are the functions with their arity; a reduction's second
// argument is an axis.
var refFuncs = map[string]int{
	"exp": 1, "sqrt": 1, "tanh": 1, "sigmoid": 1, "erf": 1, "log": 1, "sin": 1, "cos": 1, "abs": 1,
	"max": 2, "min": 2, "sat_add": 2, "sat_sub": 2, "float": 1, "round": 1, "bf16": 1,
	"reduce_sum": 2, "reduce_max": 2, "reduce_min": 2, "at": 3,
	"bits": 1, "from_bits": 1, "bit_and": 2, "bit_or": 2, "bit_xor": 2, "shr": 2,
}

// IsRefReduce reports whether a function reduces over an axis.
func IsRefReduce(op string) bool { return strings.HasPrefix(op, "reduce_") }

// ParseRefExpr parses a reference expression. Errors give the 1-based
// column.
func ParseRefExpr(s string) (*RefNode, error) {
	p := &refParser{s: s}
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i < len(p.s) {
		return nil, p.errf("unexpected %q", p.s[p.i:])
	}
	return n, nil
}

type refParser struct {
	s string
	i int
}

func (p *refParser) errf(format string, args ...any) error {
	return fmt.Errorf("reference expression: column %d: %s", p.i+1, fmt.Sprintf(format, args...))
}

func (p *refParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *refParser) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// sum := prod (('+' | '-') prod)*
func (p *refParser) sum() (*RefNode, error) {
	n, err := p.prod()
	if err != nil {
		return nil, err
	}
	for c := p.peek(); c == '+' || c == '-'; c = p.peek() {
		at := p.i
		p.i++
		r, err := p.prod()
		if err != nil {
			return nil, err
		}
		n = &RefNode{Op: string(c), Args: []*RefNode{n, r}, Pos: at}
	}
	return n, nil
}

// prod := unary (('*' | '/') unary)*
func (p *refParser) prod() (*RefNode, error) {
	n, err := p.unary()
	if err != nil {
		return nil, err
	}
	for c := p.peek(); c == '*' || c == '/'; c = p.peek() {
		at := p.i
		p.i++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		n = &RefNode{Op: string(c), Args: []*RefNode{n, r}, Pos: at}
	}
	return n, nil
}

// unary := '-' unary | primary
func (p *refParser) unary() (*RefNode, error) {
	if p.peek() == '-' {
		at := p.i
		p.i++
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &RefNode{Op: "neg", Args: []*RefNode{n}, Pos: at}, nil
	}
	return p.primary()
}

func isRefIdent(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && (c >= '0' && c <= '9' || c == '\'')
}

func (p *refParser) primary() (*RefNode, error) {
	c := p.peek()
	at := p.i
	switch {
	case c == '(':
		p.i++
		n, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, p.errf("want ')'")
		}
		p.i++
		return n, nil
	case c >= '0' && c <= '9' || c == '.':
		j := p.i
		for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.' || p.s[j] == 'e' || p.s[j] == 'E' ||
			(p.s[j] == '-' || p.s[j] == '+') && j > p.i && (p.s[j-1] == 'e' || p.s[j-1] == 'E')) {
			j++
		}
		text := p.s[p.i:j]
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, p.errf("bad number %q", text)
		}
		p.i = j
		isInt := !strings.ContainsAny(text, ".eE")
		if isInt && (v > 1<<31-1) {
			return nil, fmt.Errorf("reference expression: column %d: integer %s is beyond i32", at+1, text)
		}
		return &RefNode{Op: "num", Num: v, Int: isInt, Pos: at}, nil
	case isRefIdent(c, true):
		j := p.i
		for j < len(p.s) && isRefIdent(p.s[j], j == p.i) {
			j++
		}
		name := p.s[p.i:j]
		p.i = j
		if p.peek() != '(' {
			return &RefNode{Op: "input", Name: name, Pos: at}, nil
		}
		arity, ok := refFuncs[name]
		if !ok {
			return nil, fmt.Errorf("reference expression: column %d: unknown function %s", at+1, name)
		}
		p.i++
		n := &RefNode{Op: name, Pos: at}
		for k := 0; k < arity; k++ {
			if k > 0 {
				if p.peek() != ',' {
					return nil, p.errf("%s takes %d arguments", name, arity)
				}
				p.i++
			}
			if name == "at" && k == 2 {
				p.skip()
				j := p.i
				for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
					j++
				}
				v, err := strconv.Atoi(p.s[p.i:j])
				if err != nil || v > 1<<30 {
					return nil, p.errf("at's third argument is a coordinate")
				}
				n.Num, n.Int = float64(v), true
				p.i = j
				continue
			}
			if (IsRefReduce(name) || name == "at") && k == 1 {
				p.skip()
				j := p.i
				for j < len(p.s) && isRefIdent(p.s[j], j == p.i) {
					j++
				}
				if j == p.i {
					return nil, p.errf("%s's second argument is an axis", name)
				}
				n.Name = p.s[p.i:j]
				p.i = j
				continue
			}
			a, err := p.sum()
			if err != nil {
				return nil, err
			}
			n.Args = append(n.Args, a)
		}
		if p.peek() != ')' {
			return nil, p.errf("%s takes %d argument%s", name, arity, plural(arity))
		}
		p.i++
		return n, nil
	case c == 0:
		return nil, p.errf("unexpected end")
	}
	return nil, p.errf("unexpected %q", string(c))
}

// String prints the expression fully parenthesized, in the syntax
// ParseRefExpr reads.
func (n *RefNode) String() string {
	switch n.Op {
	case "num":
		if n.Int {
			return strconv.FormatInt(int64(n.Num), 10)
		}
		s := strconv.FormatFloat(n.Num, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case "input":
		return n.Name
	case "neg":
		return "(-" + n.Args[0].String() + ")"
	case "+", "-", "*", "/":
		return "(" + n.Args[0].String() + " " + n.Op + " " + n.Args[1].String() + ")"
	}
	var args []string
	for _, a := range n.Args {
		args = append(args, a.String())
	}
	if IsRefReduce(n.Op) || n.Op == "at" {
		args = append(args, n.Name)
	}
	if n.Op == "at" {
		args = append(args, strconv.Itoa(int(n.Num)))
	}
	return n.Op + "(" + strings.Join(args, ", ") + ")"
}

// Walk calls f on n and every node below it, parents first.
func (n *RefNode) Walk(f func(*RefNode)) {
	f(n)
	for _, a := range n.Args {
		a.Walk(f)
	}
}

// validateRefExpr checks an expr reference: the expression parses, names
// only its inputs, and reduces over declared axes.
func (p *Program) validateRefExpr(r *Reference) error {
	if strings.ContainsAny(r.Expr, "\r\n") {
		return fmt.Errorf("reference expression spans several lines")
	}
	n, err := ParseRefExpr(r.Expr)
	if err != nil {
		return err
	}
	ins := map[string]bool{}
	for _, in := range r.Inputs {
		ins[in] = true
	}
	used := map[string]bool{}
	var bad error
	n.Walk(func(x *RefNode) {
		if bad != nil {
			return
		}
		switch {
		case x.Op == "input" && !ins[x.Name]:
			bad = fmt.Errorf("reference expression: column %d: %q is not an input of the reference", x.Pos+1, x.Name)
		case x.Op == "input":
			used[x.Name] = true
		case IsRefReduce(x.Op) || x.Op == "at":
			size, ok := p.Axes.Size(x.Name)
			switch {
			case !ok:
				bad = fmt.Errorf("reference expression: column %d: %s over %q, which is not a declared axis", x.Pos+1, x.Op, x.Name)
			case x.Op == "at" && int(x.Num) >= size:
				bad = fmt.Errorf("reference expression: column %d: coordinate %d of %s, which has %d", x.Pos+1, int(x.Num), x.Name, size)
			}
		}
	})
	if bad != nil {
		return bad
	}
	for _, in := range r.Inputs {
		if !used[in] {
			return fmt.Errorf("reference expression: input %q is not used", in)
		}
	}
	return nil
}

// EpilogueInput is the name an einsum reference's Epilogue calls the
// einsum's value.
const EpilogueInput = "acc"

// validateEpilogue checks an einsum's epilogue: one line, parsed, naming
// acc (at least once) and otherwise only the reference's inputs past the
// contraction's two (an epilogue's tensor operands, EpilogueOperands),
// with no reduction nor at (elementwise work).
func validateEpilogue(src string, inputs []string) error {
	if strings.ContainsAny(src, "\r\n") {
		return fmt.Errorf("reference epilogue spans several lines")
	}
	n, err := ParseRefExpr(src)
	if err != nil {
		return fmt.Errorf("reference epilogue: %w", err)
	}
	var operands []string
	if len(inputs) > 2 {
		operands = inputs[2:]
	}
	used := false
	var bad error
	n.Walk(func(x *RefNode) {
		switch {
		case bad != nil:
		case x.Op == "input" && x.Name == EpilogueInput:
			used = true
		case x.Op == "input" && !slices.Contains(operands, x.Name):
			bad = fmt.Errorf("reference epilogue: column %d: %q: an epilogue names %s, the einsum's value, and the inputs after the contraction's two (%s)", x.Pos+1, x.Name, EpilogueInput, strings.Join(operands, ", "))
		case IsRefReduce(x.Op) || x.Op == "at":
			bad = fmt.Errorf("reference epilogue: column %d: %s: an epilogue is elementwise", x.Pos+1, x.Op)
		}
	})
	if bad != nil {
		return bad
	}
	if !used {
		return fmt.Errorf("reference epilogue: %s is not used", EpilogueInput)
	}
	return nil
}

// Factors returns the inputs an einsum reference multiplies: with an
// epilogue of tensor operands, the inputs before them (the contraction's
// two, or one); otherwise all of them.
func (r *Reference) Factors() []string {
	if r.Op == RefEinsum && r.Epilogue != "" && len(r.Inputs) > 2 {
		return r.Inputs[:2]
	}
	return r.Inputs
}

// EpilogueOperands returns the tensors an einsum reference's epilogue
// reads besides acc: its inputs after the contraction's two.
func (r *Reference) EpilogueOperands() []string {
	if r.Op == RefEinsum && r.Epilogue != "" && len(r.Inputs) > 2 {
		return r.Inputs[2:]
	}
	return nil
}
