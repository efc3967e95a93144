package mapping

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAxes(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"A=8,B=512", "A=8, B=512"},      // 002 L594
		{"A = 8, B = 512", "A=8, B=512"}, // 002 L594 spacing
		{"A=8,", "A=8"},                  // trailing comma (reference-notes §2.2)
		{"Batch=2, Dummy64=64, X_1=3", "Batch=2, Dummy64=64, X_1=3"}, // reference-notes §2.1
		{"A=4,B=4,B'=B-A", "A=4, B=4, B'=B-A"},                       // 002 L988
		{"", ""},
	} {
		a, err := ParseAxes(tc.src)
		require.NoError(t, err, tc.src)
		assert.Equal(t, tc.want, a.String(), tc.src)
		b, err := ParseAxes(a.String())
		require.NoError(t, err)
		assert.Equal(t, a.String(), b.String())
	}
	a := axes(t, "A=4,B=4,B'=B-A")
	n, ok := a.Size("B'")
	assert.True(t, ok)
	assert.Equal(t, 4, n)
	assert.Equal(t, []string{"A", "B", "B'"}, a.Names())
	s, ok := a.Slot("B")
	assert.True(t, ok)
	assert.Equal(t, 1, s)

	for _, tc := range []struct{ src, err string }{
		{"A=8,A=4", "col 5: duplicate axis \"A\""},
		{"A=0", "col 3: axis A: size must be at least 1"},
		{"A=-1", "col 3: axis A: expected a size or a skew"},
		{"a=3", "col 1: axis name \"a\" must start with an ASCII uppercase letter"},
		{"A=8 B=3", "col 5: expected ',' between axis declarations"},
		{"A8", "col 3: expected '=' after axis A8"},
		{"A=99999999999999999999", "col 3: axis A: size 99999999999999999999 is too large"},
		{"A=4,B'=B-A", "unknown base axis \"B\""},
		{"A=4,B=4,C=B-A", "must end in an apostrophe"},
		{"A'=4", "only skewed axes"},
		{"A=4,A'=A-A", "skews an axis by itself"},
		{",", "col 1: expected an axis name"},
	} {
		_, err := ParseAxes(tc.src)
		require.Error(t, err, tc.src)
		assert.Contains(t, err.Error(), tc.err, tc.src)
		var se *SyntaxError
		assert.True(t, errors.As(err, &se), "%s: %T", tc.src, err)
	}
	_, err := NewAxes(Axis{"A", 8}, Axis{"A", 2})
	assert.ErrorContains(t, err, "duplicate")
	_, err = NewAxes(Axis{"A", 0})
	assert.Error(t, err)
	ok2, err := NewAxes(Axis{"A", 8}, Axis{"Batch", 2})
	require.NoError(t, err)
	assert.Equal(t, "A=8, Batch=2", ok2.String())
}

func TestParseErrors(t *testing.T) {
	a := axes(t, "A=8,B=512,C=3")
	for _, tc := range []struct{ src, err string }{
		{"m![A, Q]", "col 7: unknown axis \"Q\""},
		{"A, Q", "col 4: unknown axis \"Q\""},
		{"B / 3", "col 3: stride 3 does not divide size 512"}, // 002 L873
		{"B % 3", "col 3: modulo 3 does not divide size 512"}, // 002 L891
		{"A = 9", "col 3: resize 9 is larger than size 8"},    // reference-notes §2.3
		{"A # 7", "col 3: padding 7 is smaller than size 8"},  // reference-notes §2.3
		{"A / 0", "col 3: stride 0 must be at least 1"},
		{"A = 0", "col 3: resize 0 must be at least 1"},
		{"0", "col 1: broadcast size 0"},
		{"", "col 1: expected a mapping, found end of expression"},
		{"m![]", "col 4: expected a mapping"},
		{"m![A", "missing closing ']'"},
		{"m!A", "col 3: expected '[' after m!"},
		{"A,, B", "col 3: expected a mapping"},
		{"[A, B", "col 6: expected \"]\" closing the group opened at col 1"},
		{"(A, B]", "col 6: expected \")\""},
		{"A B", "col 3: unexpected \"B\""},
		{"A / B", "col 5: expected a number"},
		{"A / 4x", "col 6: invalid number \"4x\""},
		{"a", "col 1: axis name \"a\" must start with an ASCII uppercase letter"},
		{"A & B", "col 3: unexpected \"&\""},
		{"A # {", "col 5: unclosed '{'"},
		{"$(A:1", "col 6: expected ')' closing the linear combination"},
		{"$(A)", "col 4: expected ':'"},
		{"$A", "col 2: expected '(' after '$'"},
		{"A # 99999999999999999999", "col 5: number 99999999999999999999 is too large"},
		{"B, B, B, B, B, B, B", "pair size exceeds"},
	} {
		_, err := Parse(tc.src, a, nil)
		require.Error(t, err, tc.src)
		assert.Contains(t, err.Error(), tc.err, tc.src)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%s: %T", tc.src, err)
		assert.GreaterOrEqual(t, se.Col, 1)
		assert.LessOrEqual(t, se.Col, len(tc.src)+1)
	}
}

func TestParseForms(t *testing.T) {
	a := axes(t, "A=8,B=512,C=4")
	for _, tc := range []struct{ src, want string }{
		{"m![A, B]", "A, B"},
		{"  m! [ A , B , ]  ", "A, B"}, // trailing comma (reference-notes §2.2)
		{"(A, B), C", "A, B, C"},       // associativity (002 L1025-1026)
		{"A, [B, C]", "A, B, C"},
		{"[A, B] # 4099", "[A, B] # 4099"},                     // reference-notes §2.2 example
		{"(A, B) / 2", "[A, B] / 2"},                           // () and [] are the same grouping
		{"B / 32 = 2 # 16, B % 32", "B / 32 = 2 # 16, B % 32"}, // 002 L963
		{"A / 2 % 2", "A / 2 % 2"},                             // reference-notes §2.2: Modulo(Stride(A,2),2)
		{"A #{*} 9", "A # 9"},
		{"A #{!} 9", "A #{!} 9"},
		{"A #{ 0 } 9", "A #{0} 9"},
		{"A / 1", "A"},   // reference-notes §2.3: stride(1) is a no-op
		{"A % 8", "A"},   // modulo(size) is a no-op
		{"A = 8", "A"},   // resize(size) is a no-op
		{"A # 8", "A"},   // padding(size) is a no-op
		{"1, A, 1", "A"}, // identity dropped (002 L728-729)
		{"1", "1"},
		{"A % 1", "A % 1"},
		{"$(A:4, [B, C]:1)", "$(A:4, [B, C]:1)"},
	} {
		e, err := Parse(tc.src, a, nil)
		require.NoError(t, err, tc.src)
		assert.Equal(t, tc.want, e.String(), tc.src)
		back, err := Parse(e.String(), a, nil)
		require.NoError(t, err)
		assert.True(t, back.Equal(e), "%s: round trip %s", tc.src, back)
		back, err = Parse(e.Text(), a, nil)
		require.NoError(t, err)
		assert.True(t, back.Equal(e))
	}
	e := parse(t, "A / 2 % 2", a)
	assert.Equal(t, KindModulo, e.Kind())
	assert.Equal(t, 2, e.Arg())
	assert.Equal(t, KindStride, e.Inner().Kind())
	assert.Equal(t, "A", e.Inner().Inner().Name())
	assert.Equal(t, []string{"B", "A"}, parse(t, "B / 2, A, B % 2", a).Symbols())
}

func TestConstructors(t *testing.T) {
	b := Sym("B", 512)
	e := Pair(b.Div(64), b.Mod(32), b.Div(32).Mod(2))
	require.NoError(t, e.Err())
	assert.Equal(t, "B / 64, B % 32, B / 32 % 2", e.String()) // 002 L928
	assert.True(t, e.Map(67).Equal(live("B", 97)))            // 002 L946

	// invalid inputs poison instead of panicking
	for _, bad := range []*Expr{
		b.Div(3), b.Mod(0), b.Resize(513), b.Pad(4, Top), Sym("b", 3), Sym("A", 0),
		Broadcast(0), Pair(b, b.Div(3)), b.Div(3).Mod(2), b.Pad(1024, PadKind(9)),
	} {
		require.Error(t, bad.Err())
		assert.Equal(t, KindInvalid, bad.Kind())
		assert.Equal(t, 0, bad.Size())
		assert.Equal(t, OOB, bad.Map(0).Kind)
		assert.Contains(t, bad.String(), "<invalid: ")
		_, err := Compile(bad, Axes{})
		assert.Error(t, err)
		_, err = Factorize(bad)
		assert.Error(t, err)
		_, _, err = SplitAt(bad, 1)
		assert.Error(t, err)
	}
	var nilExpr *Expr
	assert.Error(t, nilExpr.Err())
	assert.Equal(t, 0, nilExpr.Size())
	assert.Equal(t, "<nil>", nilExpr.String())
	assert.Equal(t, OOB, nilExpr.Map(0).Kind)

	_, err := NewStride(b, 3)
	assert.ErrorContains(t, err, "stride 3 does not divide size 512")
	x, err := NewPadding(b, 1024, Zero)
	require.NoError(t, err)
	assert.Equal(t, "B #{0} 1024", x.String())
	assert.True(t, Pair().IsIdentity())
	assert.True(t, Pair(Identity(), b).Equal(b))
	assert.Equal(t, "B", Pair(b, Identity()).String())
	l, err := NewLinear([]*Expr{Sym("N", 5), Sym("F", 3)}, []int{1, 2})
	require.NoError(t, err)
	assert.Equal(t, 9, l.Size()) // 002 L1016
	ts, ns := l.Terms()
	assert.Len(t, ts, 2)
	assert.Equal(t, []int{1, 2}, ns)
}

func TestOvershootIsTop(t *testing.T) {
	// docs/spec-decisions.md "Mapping: coordinate overshoot is Top padding".
	a := axes(t, "A=4")
	e := parse(t, "A, A", a)
	assertMap(t, e, a, 1*4+2, live("A", 3))
	assertMap(t, e, a, 1*4+3, padTop) // A = 4 ≥ |A|
	assertMap(t, e, a, 3*4+3, padTop)
	_, err := Factorize(e)
	assert.ErrorIs(t, err, ErrNotFactorizable)
	// A single overshooting term is cut: [A % 2, A / 2 % 2 ...] style
	a14 := axes(t, "R=14")
	r := parse(t, "R # 16 / 4, R # 16 % 4", a14)
	for i := 0; i < 16; i++ {
		want := live("R", i)
		if i >= 14 {
			want = padTop
		}
		assertMap(t, r, a14, i, want)
	}
}

func TestEquivPadKinds(t *testing.T) {
	// docs/spec-decisions.md "Mapping: equivalence compares padding kinds".
	a := axes(t, "A=8")
	top, zero := parse(t, "A # 16", a), parse(t, "A #{0} 16", a)
	ok, at := Equiv(top, zero)
	assert.False(t, ok)
	assert.Equal(t, 8, at)
	ok, at = EquivLoose(top, zero)
	assert.True(t, ok)
	assert.Equal(t, -1, at)
	ok, at = Equiv(parse(t, "A", a), parse(t, "A # 9", a))
	assert.False(t, ok)
	assert.Equal(t, 8, at, "different sizes differ at the smaller size")
}

// EquivLimit decides huge expressions by their canonical factorizations
// (loosely with every padding made Top), enumerates up to its limit, and
// refuses beyond it only when neither decides.
func TestEquivLimit(t *testing.T) {
	huge := axes(t, "A=1099511627776, B=4")
	for _, tc := range []struct {
		name, a, b string
		loose      bool
		eq         bool
		at         int
		refused    bool
	}{
		{name: "same spelling", a: "A", b: "A", loose: true, eq: true, at: -1},
		{name: "split and whole", a: "A / 2, A % 2", b: "A", eq: true, at: -1},
		{name: "split and whole, loose", a: "A / 2, A % 2", b: "A", loose: true, eq: true, at: -1},
		{name: "pad kinds, loose", a: "A # 1099511627778", b: "A #{0} 1099511627778", loose: true, eq: true, at: -1},
		{name: "inner pad kinds, loose", a: "A / 2, A % 2 # 4", b: "A / 2, A % 2 #{0} 4", loose: true, eq: true, at: -1},
		{name: "inner pad kinds differ early", a: "A / 2, A % 2 # 4", b: "A / 2, A % 2 #{0} 4", eq: false, at: 2},
		{name: "outer pad kinds differ beyond the limit", a: "A # 1099511627778", b: "A #{0} 1099511627778", eq: false, at: -1},
		{name: "transposed", a: "A % 2, A / 2", b: "A", eq: false, at: 1},
		{name: "linear, undecided", a: "$(A:1, B:1)", b: "$(B:1, A:1)", refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eq, at, err := EquivLimit(parse(t, tc.a, huge), parse(t, tc.b, huge), tc.loose, 1<<16)
			if tc.refused {
				require.ErrorIs(t, err, ErrEnumerationLimit)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.eq, eq)
			assert.Equal(t, tc.at, at)
		})
	}
	// Small expressions are enumerated whole, as Equiv does.
	a := axes(t, "A=8")
	eq, at, err := EquivLimit(parse(t, "A # 16", a), parse(t, "A #{0} 16", a), false, 1<<16)
	require.NoError(t, err)
	assert.False(t, eq)
	assert.Equal(t, 8, at)
}

// Axes keeps an index once it is long: lookups agree with the declaration
// order, duplicates are still found, a skew extends the index.
func TestAxesIndexed(t *testing.T) {
	var decl []string
	for i := range 100 {
		decl = append(decl, fmt.Sprintf("X%d=%d", i, i+1))
	}
	a := axes(t, strings.Join(decl, ", "))
	for i := range 100 {
		n, ok := a.Size(fmt.Sprintf("X%d", i))
		assert.True(t, ok)
		assert.Equal(t, i+1, n)
		s, ok := a.Slot(fmt.Sprintf("X%d", i))
		assert.True(t, ok)
		assert.Equal(t, i, s)
	}
	_, ok := a.Size("Y")
	assert.False(t, ok)
	_, err := ParseAxes(strings.Join(decl, ", ") + ", X7=3")
	assert.ErrorContains(t, err, `duplicate axis "X7"`)
	sk, err := a.WithSkew(Skew{Name: "X3'", Base: "X3", By: "X2"})
	require.NoError(t, err)
	s, ok := sk.Slot("X3'")
	assert.True(t, ok)
	assert.Equal(t, 100, s)
	_, ok = a.Size("X3'")
	assert.False(t, ok, "the original is unchanged")
}

// FuzzParseAxes: an axis declaration (--axes) parses to axes that print
// back (String) to a declaration parsing to the same axes, or to an error;
// never a panic.
func FuzzParseAxes(f *testing.F) {
	for _, s := range []string{"A=8,B=512", "A = 8, B = 512,", "A=4,B=4,B'=B-A", "A=1099511627776", "A=0", "A=8,A=8", "B'=B-A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAxes(s)
		if err != nil {
			return
		}
		b, err := ParseAxes(a.String())
		require.NoError(t, err, "%q → %q", s, a.String())
		assert.Equal(t, a.String(), b.String())
		assert.Equal(t, a.List(), b.List())
	})
}
