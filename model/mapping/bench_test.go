package mapping

import "testing"

// The nested-stride example of 002 L928 inside a DM-like layout.
func benchExpr(b *testing.B) (*Expr, Axes) {
	a := axes(b, "A=8,B=512,C=13,D=61")
	return parse(b, "A, C, B / 64, B % 32, B / 32 % 2, D # 64", a), a
}

func BenchmarkMap(b *testing.B) {
	e, _ := benchExpr(b)
	n := e.Size()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = e.Map(i % n)
	}
}

func BenchmarkEval(b *testing.B) {
	e, a := benchExpr(b)
	p, err := Compile(e, a)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int, p.Slots())
	n := p.Size()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Eval(i%n, dst)
	}
	if testing.AllocsPerRun(100, func() { p.Eval(12345, dst) }) != 0 {
		b.Fatal("Eval allocates")
	}
}

func BenchmarkEvalComposite(b *testing.B) {
	a := axes(b, "C=13,D=61")
	e := parse(b, "[C, D # 64] / 13, [C, D # 64] % 13", a)
	p, err := Compile(e, a)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int, p.Slots())
	n := p.Size()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Eval(i%n, dst)
	}
}

// Equiv by enumeration over ~1e6 positions (the nested-stride layout has
// no fast path: the two spellings differ in factors).
func BenchmarkEquiv1M(b *testing.B) {
	a := axes(b, "A=8,B=512,C=256")
	x := parse(b, "A, C, B", a)
	y := parse(b, "[A, C, B] / 64, [A, C, B] % 64", a)
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := equiv(x, y, false); !ok {
			b.Fatal("not equivalent")
		}
	}
}

func BenchmarkFactorize(b *testing.B) {
	e, _ := benchExpr(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Factorize(e); err != nil {
			b.Fatal(err)
		}
	}
}
