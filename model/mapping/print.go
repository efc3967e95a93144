package mapping

import (
	"strconv"
	"strings"
)

// String prints the canonical text of e, the inside of `m![...]`: pairs
// flattened and separated by ", " (`A, B, C`), postfix operators spaced
// (`B / 32 % 2`, `D # 64`, `A #{!} 16`, `B = 2`), brackets only around a
// pair that is the operand of a postfix operator or a term of a linear
// combination (`[A, B] # 16`), broadcasts as their size (`1 # 2`), linear
// combinations as `$(N:1, F:2)`. [Parse] of the result gives back an
// [Expr.Equal] expression.
func (e *Expr) String() string {
	var b strings.Builder
	e.print(&b)
	return b.String()
}

// Text is e wrapped as `m![...]`, the form the manual writes.
func (e *Expr) Text() string { return "m![" + e.String() + "]" }

func (e *Expr) print(b *strings.Builder) {
	if e == nil {
		b.WriteString("<nil>")
		return
	}
	switch e.kind {
	case KindInvalid:
		b.WriteString("<invalid: ")
		b.WriteString(e.err.Error())
		b.WriteString(">")
	case KindSymbol:
		b.WriteString(e.name)
	case KindBroadcast:
		b.WriteString(strconv.Itoa(e.arg))
	case KindPair:
		for i, p := range e.kids {
			if i > 0 {
				b.WriteString(", ")
			}
			p.print(b)
		}
	case KindStride, KindModulo, KindResize, KindPadding:
		e.kids[0].printOperand(b)
		switch e.kind {
		case KindStride:
			b.WriteString(" / ")
		case KindModulo:
			b.WriteString(" % ")
		case KindResize:
			b.WriteString(" = ")
		case KindPadding:
			b.WriteString(" ")
			b.WriteString(e.pad.op())
			b.WriteString(" ")
		}
		b.WriteString(strconv.Itoa(e.arg))
	case KindLinear:
		b.WriteString("$(")
		for i, t := range e.kids {
			if i > 0 {
				b.WriteString(", ")
			}
			t.printOperand(b)
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.coefs[i]))
		}
		b.WriteString(")")
	}
}

// printOperand prints e where a single M1 is expected: a pair needs
// brackets there.
func (e *Expr) printOperand(b *strings.Builder) {
	if e != nil && e.kind == KindPair {
		b.WriteString("[")
		e.print(b)
		b.WriteString("]")
		return
	}
	e.print(b)
}
