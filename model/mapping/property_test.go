package mapping

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Property tests over random axes and random expressions. The generators
// are seeded, so failures reproduce.

var sizeChoices = []int{1, 2, 3, 4, 5, 6, 8, 12, 16}

func randAxes(r *rand.Rand) Axes {
	n := 1 + r.Intn(3)
	var list []Axis
	for i := 0; i < n; i++ {
		list = append(list, Axis{Name: string(rune('A' + i)), Size: sizeChoices[r.Intn(len(sizeChoices))]})
	}
	a, _ := NewAxes(list...)
	return a
}

func divisors(n int) []int {
	var out []int
	for d := 1; d <= n; d++ {
		if n%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

// randExpr builds an arbitrary valid expression of size ≤ limit.
func randExpr(r *rand.Rand, a Axes, depth, limit int) *Expr {
	var e *Expr
	switch {
	case depth <= 0 || r.Intn(3) == 0:
		if r.Intn(6) == 0 {
			e = Broadcast(1 + r.Intn(3))
		} else {
			ax := a.list[r.Intn(a.Len())]
			e = Sym(ax.Name, ax.Size)
		}
	case r.Intn(3) == 0:
		n := 2 + r.Intn(2)
		parts := make([]*Expr, 0, n)
		size := 1
		for i := 0; i < n; i++ {
			p := randExpr(r, a, depth-1, limit/size)
			if size*p.Size() > limit {
				break
			}
			size *= p.Size()
			parts = append(parts, p)
		}
		e = Pair(parts...)
	default:
		e = randExpr(r, a, depth-1, limit)
	}
	for k := r.Intn(3); k > 0; k-- {
		s := e.Size()
		switch r.Intn(4) {
		case 0:
			ds := divisors(s)
			e = e.Div(ds[r.Intn(len(ds))])
		case 1:
			ds := divisors(s)
			e = e.Mod(ds[r.Intn(len(ds))])
		case 2:
			e = e.Resize(1 + r.Intn(s))
		case 3:
			if p := s + r.Intn(5); p <= limit {
				e = e.Pad(p, PadKind(r.Intn(3)))
			}
		}
	}
	return e
}

// randLayout builds an injective-off-padding expression: each axis split
// into disjoint digits `X / t % m`, the digits shuffled and grouped, groups
// optionally padded or resized.
func randLayout(r *rand.Rand, a Axes) (e *Expr, resized bool) {
	var pieces []*Expr
	for _, ax := range a.list {
		x := Sym(ax.Name, ax.Size)
		t := 1
		for rest := ax.Size; rest > 1; {
			ds := divisors(rest)
			m := ds[1+r.Intn(len(ds)-1)]
			pieces = append(pieces, x.Div(t).Mod(m))
			t *= m
			rest /= m
		}
	}
	r.Shuffle(len(pieces), func(i, j int) { pieces[i], pieces[j] = pieces[j], pieces[i] })
	var groups []*Expr
	for len(pieces) > 0 {
		n := 1 + r.Intn(len(pieces))
		g := Pair(pieces[:n]...)
		pieces = pieces[n:]
		switch r.Intn(4) {
		case 0:
			g = g.Pad(g.Size()+r.Intn(4), PadKind(r.Intn(3)))
		case 1:
			g = g.Resize(1 + r.Intn(g.Size()))
			resized = true
		}
		groups = append(groups, g)
	}
	return Pair(groups...), resized
}

// forRandom runs f for n seeds; MAPPING_PROPERTY_SCALE=k runs k·n seeds
// (for a longer local search, not for CI).
func forRandom(t *testing.T, n int, f func(t *testing.T, r *rand.Rand, a Axes)) {
	if k, err := strconv.Atoi(os.Getenv("MAPPING_PROPERTY_SCALE")); err == nil && k > 1 {
		n *= k
	}
	for seed := 0; seed < n; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		a := randAxes(r)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { f(t, r, a) })
	}
}

func TestPropertyRoundTrip(t *testing.T) {
	forRandom(t, 300, func(t *testing.T, r *rand.Rand, a Axes) {
		e := randExpr(r, a, 4, 2000)
		require.NoError(t, e.Err())
		back, err := Parse(e.String(), a, nil)
		require.NoError(t, err, e.String())
		require.True(t, back.Equal(e), "%s reparsed as %s", e, back)
	})
}

func TestPropertyLayoutInjective(t *testing.T) {
	forRandom(t, 300, func(t *testing.T, r *rand.Rand, a Axes) {
		e, resized := randLayout(r, a)
		require.NoError(t, e.Err())
		seen := map[string]int{}
		for i := 0; i < e.Size(); i++ {
			c := e.Map(i)
			require.NotEqual(t, OOB, c.Kind)
			if c.Kind != Live {
				continue
			}
			k := c.Index.String()
			if j, dup := seen[k]; dup {
				t.Fatalf("%s maps %d and %d to %s", e, j, i, k)
			}
			seen[k] = i
		}
		if resized {
			return // a ragged resize need not factorize
		}
		// a layout without resize factorizes and covers the whole tensor
		n := 1
		for _, ax := range a.list {
			n *= ax.Size
		}
		assert.Len(t, seen, n)
		fs, err := Factorize(e)
		require.NoError(t, err, e.String())
		assert.Equal(t, e.Size(), fs.Size())
	})
}

func TestPropertyCompileMatchesMap(t *testing.T) {
	forRandom(t, 300, func(t *testing.T, r *rand.Rand, a Axes) {
		e := randExpr(r, a, 4, 2000)
		p, err := Compile(e, a)
		require.NoError(t, err)
		dst := make([]int, p.Slots())
		for i := -1; i <= e.Size(); i++ {
			want := e.Map(i)
			k, pk := p.Eval(i, dst)
			require.Equal(t, want.Kind, k, "%s at %d", e, i)
			switch k {
			case Live:
				var cs []Coord
				for s, v := range dst[:p.Coords()] {
					cs = append(cs, Coord{a.list[s].Name, v})
				}
				require.True(t, IndexOf(cs...).Equal(want.Index), "%s at %d: %v vs %v", e, i, dst, want)
			case Pad:
				require.Equal(t, want.Pad, pk, "%s at %d", e, i)
			}
		}
	})
}

// 002 L1022-1028: every listed equivalence holds for random E.
func TestPropertyManualEquivalences(t *testing.T) {
	forRandom(t, 150, func(t *testing.T, r *rand.Rand, a Axes) {
		e := randExpr(r, a, 3, 200)
		e2 := randExpr(r, a, 2, 30)
		e3 := randExpr(r, a, 2, 30)
		for _, pair := range manualEquivalences(e, e2, e3) {
			x, err := Parse(pair[0], a, nil)
			require.NoError(t, err, pair[0])
			y, err := Parse(pair[1], a, nil)
			require.NoError(t, err, pair[1])
			ok, at := Equiv(x, y)
			require.True(t, ok, "%s ≢ %s at %d: %v vs %v", pair[0], pair[1], at, x.Map(at), y.Map(at))
		}
	})
}

func TestPropertyNormalize(t *testing.T) {
	forRandom(t, 400, func(t *testing.T, r *rand.Rand, a Axes) {
		e := randExpr(r, a, 4, 2000)
		n := Normalize(e)
		require.NoError(t, n.Err(), e.String())
		ok, at := Equiv(n, e)
		require.True(t, ok, "Normalize(%s) = %s differs at %d: %v vs %v", e, n, at, n.Map(at), e.Map(at))
		fs, err := Factorize(e)
		if err != nil {
			return
		}
		assert.Equal(t, n.String(), Normalize(n).String(), "idempotent")
		for i := 0; i < e.Size(); i++ {
			require.True(t, fs.Map(i).Equal(e.Map(i)), "%s: factors %v map %d to %v, expr to %v", e, fs, i, fs.Map(i), e.Map(i))
		}
		f2, err := Factorize(fs.Expr())
		require.NoError(t, err, fs.Expr().String())
		assert.True(t, fs.Equal(f2), "%v reprinted as %s factorizes to %v", fs, fs.Expr(), f2)
	})
}

// Equivalent rewrites of a factorizable mapping normalize to the same text
// (the canonical form is unique per Map).
func TestPropertyNormalFormUnique(t *testing.T) {
	forRandom(t, 300, func(t *testing.T, r *rand.Rand, a Axes) {
		e := randExpr(r, a, 3, 500)
		x := e
		for k := 0; k < 3; k++ {
			x = rewrite(r, x)
		}
		ok, at := Equiv(x, e)
		require.True(t, ok, "rewrite %s of %s differs at %d", x, e, at)
		fe, err1 := Factorize(e)
		fx, err2 := Factorize(x)
		if err1 != nil || err2 != nil {
			return
		}
		require.True(t, fe.Equal(fx), "%s → %v but %s → %v", e, fe, x, fx)
		assert.Equal(t, Normalize(e).String(), Normalize(x).String())
	})
}

// rewrite applies one law of 002 L1022-1028 at the root.
func rewrite(r *rand.Rand, e *Expr) *Expr {
	switch r.Intn(4) {
	case 0:
		ds := divisors(e.Size())
		n := ds[r.Intn(len(ds))]
		return Pair(e.Div(n), e.Mod(n))
	case 1:
		parts := e.Parts()
		if len(parts) >= 2 {
			k := 1 + r.Intn(len(parts)-1)
			return Pair(Pair(parts[:k]...).Pad(Pair(parts[:k]...).Size(), Top), Pair(parts[k:]...))
		}
	case 2:
		return Pair(Identity(), e.Div(1), Identity())
	case 3:
		parts := e.Parts()
		if len(parts) >= 2 {
			// [A, B] / |B| ≡ A and [A, B] % |B| ≡ B, recombined
			k := 1 + r.Intn(len(parts)-1)
			lo := Pair(parts[k:]...)
			return Pair(e.Div(lo.Size()), e.Mod(lo.Size()))
		}
	}
	return e
}

func TestPropertySplitAt(t *testing.T) {
	forRandom(t, 300, func(t *testing.T, r *rand.Rand, a Axes) {
		e := randExpr(r, a, 3, 1000)
		ds := divisors(e.Size())
		n := ds[r.Intn(len(ds))]
		outer, inner, err := SplitAt(e, n)
		require.NoError(t, err)
		assert.Equal(t, n, inner.Size())
		assert.Equal(t, e.Size()/n, outer.Size())
		ok, at := Equiv(Pair(outer, inner), e)
		require.True(t, ok, "split_at(%s, %d) = %s | %s differs at %d", e, n, outer, inner, at)
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"m![A, B]", "B / 64, B % 32, B / 32 % 2", "C, D # 64", "[A, B] #{!} 4099", "$(N:1, F:2)",
		"A, B' = 4", "A # { L::SIZE }", "{ L }, 1 # 2", "(A, B) / 2 % 4 = 3 #{0} 8", "m![", "#{", "$($(",
	} {
		f.Add(s)
	}
	a := axes(f, "A=8,B=512,C=13,D=61,N=5,F=3,B'=B-A")
	env := Env{"L": Sym("A", 8)}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src, a, env)
		if err != nil {
			var se *SyntaxError
			if !asSyntax(err, &se) || se.Col < 1 || se.Col > len(src)+1 {
				t.Fatalf("%q: error %v without a column in range", src, err)
			}
			return
		}
		back, err := Parse(e.String(), a, nil)
		if err != nil {
			t.Fatalf("%q printed as %q which does not parse: %v", src, e, err)
		}
		if !back.Equal(e) {
			t.Fatalf("%q printed as %q reparsed as %q", src, e, back)
		}
		if !e.hasLinear() || e.Size() <= 1<<12 {
			_ = e.Map(0)
			_ = e.Map(e.Size() - 1)
		}
		if e.Size() <= 1<<12 && !e.hasLinear() {
			if ok, at := Equiv(back, e); !ok {
				t.Fatalf("%q: reparse differs at %d", src, at)
			}
			n := Normalize(e)
			if ok, at := Equiv(n, e); !ok {
				t.Fatalf("%q: Normalize = %s differs at %d", src, n, at)
			}
		}
	})
}

func asSyntax(err error, se **SyntaxError) bool {
	s, ok := err.(*SyntaxError)
	*se = s
	return ok
}

// TestHashFollowsEqual: Equal expressions hash alike, whichever way they
// were built; expressions that differ in a constant, a name or a
// constructor hash differently here.
func TestHashFollowsEqual(t *testing.T) {
	ax := axes(t, "I=128, J=64, K=64")
	a := parse(t, "[I / 32, J % 16 # 64]", ax)
	b := parse(t, "[I / 32, J % 16 # 64]", ax)
	require.True(t, a.Equal(b))
	require.Equal(t, a.Hash(), b.Hash())
	for _, other := range []string{"[I / 16, J % 16 # 64]", "[I / 32, K % 16 # 64]", "[I / 32, J % 16 # 128]", "[J % 16 # 64, I / 32]"} {
		o := parse(t, other, ax)
		require.False(t, a.Equal(o))
		require.NotEqual(t, a.Hash(), o.Hash(), other)
	}
}
