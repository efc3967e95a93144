package mapping

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Golden vectors: reference-notes §2.6 "Observed normalization/factorization
// test vectors". exact marks the rows whose spelling this package's
// canonical printer reproduces verbatim; for the others the expected text is
// an equivalent spelling, and the test checks equivalence and that both
// normalize to the same text.
func TestNormalizeGolden(t *testing.T) {
	for _, tc := range []struct {
		axes, in, want string
		exact          bool
	}{
		{"R=14", "R # 16 / 4, R # 16 % 4", "R # 16", true},
		{"A=8", "A % 1", "1", true},
		{"R=5", "R # 16 / 4", "1 # 2, [R # 8] / 4", false},
		{"R=3", "R # 64 / 8", "1 # 8", true},
		{"R=3,A=5", "R # 16 / 4, A", "A # 20", true},
		{"R=3,A=5", "R # 64 / 8, A", "A # 40", true},
		{"R=5,A=5", "R # 16 / 4, A", "[[[R # 8] / 4] # 4], A", true},
		{"A=5", "[A # 16 / 4] / 2", "1 # 2", true},
		{"R=19", "R # 24 / 4, R # 24 % 4", "R # 24", true}, // config_vector_narrow_split
	} {
		a := axes(t, tc.axes)
		in, want := parse(t, tc.in, a), parse(t, tc.want, a)
		ok, at := Equiv(in, want)
		require.True(t, ok, "%s ≢ %s at %d", tc.in, tc.want, at)
		n := Normalize(in)
		ok, at = Equiv(n, in)
		require.True(t, ok, "Normalize(%s) = %s changes position %d", tc.in, n, at)
		assert.Equal(t, Normalize(want).String(), n.String(), "%s and %s normalize differently", tc.in, tc.want)
		if tc.exact {
			assert.Equal(t, want.String(), n.String(), "Normalize(%s)", tc.in)
		}
	}
}

func TestFactorizeExamples(t *testing.T) {
	a := axes(t, "A=8,B=512,C=13,D=61")
	for _, tc := range []struct{ in, factors, norm string }{
		{"B / 64, B % 32, B / 32 % 2", "[B:32x2 B:1x32 B:64x8]", "B / 64, B % 32, B / 32 % 2"}, // 002 L928
		{"B / 64, B % 64", "[B:1x512]", "B"},                                                   // 002 L845
		{"A, B", "[B:1x512 A:1x8]", "A, B"},                                                    // 002 L678
		{"C, D # 64", "[D:1x61 #64 C:1x13]", "C, D # 64"},                                      // 002 L751
		{"1 # 2, A", "[A:1x8 #16]", "A # 16"},
		{"A #{!} 12 # 16", "[A:1x8 #{!}12 #16]", "A #{!} 12 # 16"}, // kinds stack (reference-notes §2.5)
		{"A # 12 # 16", "[A:1x8 #16]", "A # 16"},                   // same kind merges
		{"4, A", "[A:1x8 *4]", "4, A"},
		{"A, 2, 2", "[*4 A:1x8]", "A, 4"},
		{"[A, B] # 4099", "[B:1x512 A:1x8 #4099]", "[A, B] # 4099"},
		{"A = 3", "[A:1x3]", "A = 3"},
		{"A / 2 % 2", "[A:2x2]", "A / 2 % 2"},
	} {
		e := parse(t, tc.in, a)
		fs, err := Factorize(e)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.factors, fs.String(), tc.in)
		assert.Equal(t, e.Size(), fs.Size(), tc.in)
		n := Normalize(e)
		assert.Equal(t, tc.norm, n.String(), tc.in)
		ok, at := Equiv(n, e)
		assert.True(t, ok, "%s: normal form differs at %d", tc.in, at)
		for i := 0; i < e.Size(); i++ {
			require.True(t, fs.Map(i).Equal(e.Map(i)), "%s: factors map %d to %v, expr to %v", tc.in, i, fs.Map(i), e.Map(i))
		}
	}
}

func TestFactorizeErrors(t *testing.T) {
	a := axes(t, "A=4,B=4,N=5,F=3")
	for _, src := range []string{
		"[A, B] = 5",     // a ragged resize
		"[B, A # 9] / 4", // a stride straddling padding
		"$(N:1, F:2)",    // linear combination
		"[A, A]",         // two overshooting digits of one axis
	} {
		_, err := Factorize(parse(t, src, a))
		require.Error(t, err, src)
		assert.True(t, errors.Is(err, ErrNotFactorizable), "%s: %v", src, err)
		// Normalize keeps non-factorizable expressions equivalent.
		e := parse(t, src, a)
		ok, at := Equiv(Normalize(e), e)
		assert.True(t, ok, "%s: differs at %d", src, at)
	}
}

// reference-notes §2.6 split_at vectors.
func TestSplitAtGolden(t *testing.T) {
	for _, tc := range []struct {
		axes, in     string
		n            int
		inner, outer string
		exact        bool
	}{
		{"A=2,B=2", "A # 4, B # 4", 8, "A, B # 4", "1 # 2", true},
		{"A=2,B=2,C=2", "A # 4, B, C", 8, "A, B, C", "1 # 2", true},
		{"A=2,B=2,C=2,D=2", "A # 4, B # 4, C # 16, D # 4", 16, "C # 4, D # 4", "A # 4, B # 4, 1 # 4", true},
		{"A=4,B=4", "B, A # 9", 4, "[B, A # 9] % 4", "[B, A # 9] / 4", true},
		{"A=8", "A # 16", 4, "A % 4", "1 # 2, A / 4 % 2", false},
		{"A=2,B=2,C=2,D=2", "A, B # 4, [C, D] # 8", 16, "B, 1 # 2, C, D", "A, 1 # 2", false},
		{"A=3", "A # 16", 4, "A # 4", "1 # 4", true},
		{"", "1 # 64", 8, "1 # 8", "1 # 8", true},
	} {
		a := axes(t, tc.axes)
		e := parse(t, tc.in, a)
		outer, inner, err := SplitAt(e, tc.n)
		require.NoError(t, err, tc.in)
		wi, wo := parse(t, tc.inner, a), parse(t, tc.outer, a)
		ok, at := Equiv(inner, wi)
		assert.True(t, ok, "split_at(%s, %d) inner %s ≢ %s at %d", tc.in, tc.n, inner, tc.inner, at)
		ok, at = Equiv(outer, wo)
		assert.True(t, ok, "split_at(%s, %d) outer %s ≢ %s at %d", tc.in, tc.n, outer, tc.outer, at)
		if tc.exact {
			assert.Equal(t, tc.inner, inner.String())
			assert.Equal(t, tc.outer, outer.String())
		}
		// §2.7: outer.pair(inner) reads the same buffer.
		ok, at = Equiv(Pair(outer, inner), e)
		assert.True(t, ok, "split_at(%s, %d): outer, inner differs at %d", tc.in, tc.n, at)
	}
	// split_at(m![1 # 64], 8): outer.mul(inner).normalize() == m![1 # 64].
	o, i, err := SplitAt(parse(t, "1 # 64", Axes{}), 8)
	require.NoError(t, err)
	assert.Equal(t, "1 # 64", Normalize(Pair(o, i)).String())
	// split_at(m![A # 9], 4) with A = 6 panics "not divisible" in the reference: an error here.
	_, _, err = SplitAt(parse(t, "A # 9", axes(t, "A=6")), 4)
	assert.ErrorContains(t, err, "does not divide")
}

// Factorize caches its position-by-position checks by text and axis sizes:
// one text over axes of other sizes is another map, checked anew.
func TestFactorizeVerifyCacheKeysSizes(t *testing.T) {
	for _, r := range []int{14, 13, 14, 12} {
		a := axes(t, fmt.Sprintf("R=%d", r))
		e := parse(t, "[R # 16 / 4, R # 16 % 4]", a)
		fs, err := Factorize(e)
		require.NoError(t, err, "R=%d", r)
		ok, at := Equiv(e, fs.Expr())
		assert.True(t, ok, "R=%d: differs at %d", r, at)
		for _, f := range fs {
			if f.Kind == FactorTerm {
				assert.Equal(t, r, f.AxisSize, "R=%d", r)
			}
		}
	}
}

// Factorize remembers its answers by structure: an Equal expression built
// anew gets the same factors (FactorizeShared too), a caller's edit of its
// copy does not reach the next caller, expressions that differ only in an axis size get their
// own answers, and an error is remembered as an error.
func TestFactorizeRemembers(t *testing.T) {
	a, err := ParseAxes("B=2048,C=12")
	require.NoError(t, err)
	src := "B / 64, C # 16, B % 32, B / 32 % 2"
	first, err := Factorize(MustParse(src, a, nil))
	require.NoError(t, err)
	want := factorizeUncached(t, MustParse(src, a, nil))
	assert.True(t, first.Equal(want), "%v vs %v", first, want)
	first[0].Extent = 99
	again, err := Factorize(MustParse(src, a, nil))
	require.NoError(t, err)
	assert.True(t, again.Equal(want), "a caller's edit leaked into the cache: %v", again)
	shared, err := FactorizeShared(MustParse(src, a, nil))
	require.NoError(t, err)
	assert.True(t, shared.Equal(want), "the shared answer is the same: %v", shared)

	b, err := ParseAxes("B=4096,C=12")
	require.NoError(t, err)
	other, err := Factorize(MustParse(src, b, nil))
	require.NoError(t, err)
	assert.True(t, other.Equal(factorizeUncached(t, MustParse(src, b, nil))))
	assert.False(t, other.Equal(want))

	// An expression that does not factor keeps its error.
	c := axes(t, "A=4,B=4")
	_, err1 := Factorize(parse(t, "[A, B] = 5", c))
	_, err2 := Factorize(parse(t, "[A, B] = 5", c))
	require.Error(t, err1)
	assert.Equal(t, err1.Error(), err2.Error())
	assert.ErrorIs(t, err2, ErrNotFactorizable)
}

func factorizeUncached(t *testing.T, e *Expr) Factors {
	t.Helper()
	fs, err := factorize(e)
	require.NoError(t, err)
	return fs
}
