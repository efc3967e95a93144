package mapping

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests built from the worked examples of the manual's "Mapping
// Expressions" page (seed 002 L582-1028). Each case cites its lines.

func axes(t testing.TB, src string) Axes {
	t.Helper()
	a, err := ParseAxes(src)
	require.NoError(t, err, src)
	return a
}

func parse(t testing.TB, src string, a Axes) *Expr {
	t.Helper()
	e, err := Parse(src, a, nil)
	require.NoError(t, err, src)
	return e
}

func idx(coords ...any) Index {
	var cs []Coord
	for i := 0; i+1 < len(coords); i += 2 {
		cs = append(cs, Coord{coords[i].(string), coords[i+1].(int)})
	}
	return IndexOf(cs...)
}

func live(coords ...any) Cell { return Cell{Kind: Live, Index: idx(coords...)} }

var (
	padTop = Cell{Kind: Pad, Pad: Top}
	oob    = Cell{Kind: OOB}
)

// assertMap checks e.Map and the compiled Program against want.
func assertMap(t *testing.T, e *Expr, a Axes, i int, want Cell) {
	t.Helper()
	got := e.Map(i)
	assert.True(t, got.Equal(want), "%s map(%d) = %v, want %v", e, i, got, want)
	p, err := Compile(e, a)
	require.NoError(t, err)
	dst := make([]int, p.Slots())
	k, pk := p.Eval(i, dst)
	require.Equal(t, want.Kind, k, "%s Eval(%d)", e, i)
	switch k {
	case Live:
		var cs []Coord
		for s, v := range dst[:p.Coords()] {
			cs = append(cs, Coord{a.list[s].Name, v})
		}
		assert.True(t, IndexOf(cs...).Equal(want.Index), "%s Eval(%d) = %v, want %v", e, i, dst, want.Index)
	case Pad:
		assert.Equal(t, want.Pad, pk)
	}
}

func TestManualSymbol(t *testing.T) {
	// 002 L624-640: m![A] with A = 8 maps i to i![A: i]; map(SIZE) is None.
	a := axes(t, "A = 8")
	e := parse(t, "m![A]", a)
	assert.Equal(t, 8, e.Size())
	for i := 0; i < 8; i++ {
		assertMap(t, e, a, i, live("A", i))
	}
	assertMap(t, e, a, 8, oob)
	// 002 L671-673: i![A: 0] is the empty index.
	assert.Equal(t, "{}", e.Map(0).Index.String())
}

func TestManualPair(t *testing.T) {
	// 002 L674-715: m![A, B] with A=8, B=512; buffer index 519 holds
	// i![A: 1, B: 7] (L678); map(2*512+7) = {A: 2, B: 7} (L700); size 4096 (L584-587).
	a := axes(t, "A=8,B=512")
	e := parse(t, "m![A, B]", a)
	assert.Equal(t, 4096, e.Size())
	assertMap(t, e, a, 519, live("A", 1, "B", 7))
	assert.Equal(t, "{A: 1, B: 7}", e.Map(519).String())
	assertMap(t, e, a, 2*512+7, live("A", 2, "B", 7))
	for _, i := range []int{0, 1, 511, 512, 4095} {
		assertMap(t, e, a, i, live("A", i/512, "B", i%512)) // L697-699
	}
	assertMap(t, e, a, 4096, oob)
	// L681: m![A, B, C, D] is Pair<A, Pair<B, Pair<C, D>>> (right-associative).
	a4 := axes(t, "A=2,B=3,C=4,D=5")
	e4 := parse(t, "A, B, C, D", a4)
	assert.Equal(t, "A", e4.Left().String())
	assert.Equal(t, "B, C, D", e4.Right().String())
	assert.Equal(t, "C, D", e4.Right().Right().String())
}

func TestManualIdentity(t *testing.T) {
	// 002 L716-740: m![1] maps 0 to i![] and 1 to None; m![1, A] and m![A, 1] are m![A].
	e := parse(t, "m![1]", Axes{})
	assert.True(t, e.IsIdentity())
	assertMap(t, e, Axes{}, 0, live())
	assertMap(t, e, Axes{}, 1, oob)
	a := axes(t, "A=8")
	for _, src := range []string{"1, A", "A, 1"} {
		ok, at := Equiv(parse(t, src, a), parse(t, "A", a))
		assert.True(t, ok, "%s differs at %d", src, at)
		assert.Equal(t, "A", parse(t, src, a).String(), "identity dropped from a pair")
	}
}

func TestManualPadding(t *testing.T) {
	// 002 L741-760: axes C=13, D=61, m![C, D # 64].
	a := axes(t, "C = 13, D = 61")
	e := parse(t, "m![C, D # 64]", a)
	assert.Equal(t, 13*64, e.Size())
	for _, tc := range []struct {
		i    int
		want Cell
	}{
		{0, live()},         // L754
		{60, live("D", 60)}, // L755
		{61, padTop},        // L756
		{62, padTop},        // L757
		{63, padTop},        // L758
		{64, live("C", 1)},  // L759
		{13 * 64, oob},      // beyond the buffer
		{13*64 - 1, padTop}, // last row's padding
		{12*64 + 5, live("C", 12, "D", 5)},
	} {
		assertMap(t, e, a, tc.i, tc.want)
	}
	// reference-notes §2.4: the kinds.
	for src, k := range map[string]PadKind{"D #{*} 64": Top, "D #{!} 64": Bottom, "D #{0} 64": Zero, "D # {0} 64": Zero} {
		x := parse(t, src, a)
		assertMap(t, x, a, 61, Cell{Kind: Pad, Pad: k})
	}
}

func TestManualResize(t *testing.T) {
	// 002 L778-796: axes C=2, D=3, m![C, D = 2].
	a := axes(t, "C=2,D=3")
	e := parse(t, "m![C, D = 2]", a)
	want := []Cell{live(), live("D", 1), live("C", 1), live("C", 1, "D", 1), oob} // L790-794
	for i, w := range want {
		assertMap(t, e, a, i, w)
	}
}

func TestManualStrideModulo(t *testing.T) {
	// 002 L832-866: m![B / 64] has size 8, m![B % 64] size 64, and
	// m![B / 64, B % 64] is equivalent to m![B]; index 130 holds B = 130 (L837).
	a := axes(t, "A=8,B=512")
	d1, d2 := parse(t, "B / 64", a), parse(t, "B % 64", a)
	assert.Equal(t, 8, d1.Size())
	assert.Equal(t, 64, d2.Size())
	for i := 0; i < 8; i++ {
		assertMap(t, d1, a, i, live("B", 64*i)) // i![B / 64: i] = B: 64 i (reference-notes §2.4)
	}
	assertMap(t, d1, a, 8, oob)
	for j := 0; j < 64; j++ {
		assertMap(t, d2, a, j, live("B", j))
	}
	assertMap(t, d2, a, 64, oob)
	e := parse(t, "m![B / 64, B % 64]", a)
	assertMap(t, e, a, 130, live("B", 130))
	ok, at := Equiv(e, parse(t, "m![B]", a))
	assert.True(t, ok, "differs at %d", at)
	assertMap(t, e, a, 512, oob)

	// L906-912: the 4×4 table of m![B / 4, B % 4] with B = 16: row r, column c holds B = 4r + c.
	a16 := axes(t, "B=16")
	e16 := parse(t, "m![B / 4, B % 4]", a16)
	table := [4][4]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			assertMap(t, e16, a16, 4*r+c, live("B", table[r][c]))
			assertMap(t, parse(t, "B / 4", a16), a16, r, live("B", 4*r))
			assertMap(t, parse(t, "B % 4", a16), a16, c, live("B", c))
		}
	}
}

func TestManualNestedStride(t *testing.T) {
	// 002 L919-953: m![B / 64, B % 32, B / 32 % 2] maps 64i + 2j + k to
	// B = 64i + j + 32k; buffer index 67 maps to B = 97 (L946-950).
	a := axes(t, "A=8,B=512")
	e := parse(t, "m![B / 64, B % 32, B / 32 % 2]", a)
	assert.Equal(t, 512, e.Size())
	assertMap(t, e, a, 67, live("B", 97))
	assert.Equal(t, "{B: 97}", e.Map(67).String())
	p, err := Compile(e, a)
	require.NoError(t, err)
	dst := make([]int, 2)
	for i := 0; i < 8; i++ {
		for j := 0; j < 32; j++ {
			for k := 0; k < 2; k++ {
				pos := 64*i + 2*j + k
				want := 64*i + j + 32*k // L936
				got := e.Map(pos)
				require.True(t, got.Equal(live("B", want)), "map(%d) = %v, want B: %d", pos, got, want)
				kind, _ := p.Eval(pos, dst)
				require.Equal(t, Live, kind)
				require.Equal(t, []int{0, want}, dst)
			}
		}
	}
	assertMap(t, e, a, 512, oob) // L941
	// L952: buffer 001_00001_1 becomes B = 001_1_00001.
	assertMap(t, e, a, 0b001_00001_1, live("B", 0b001_1_00001))
}

func TestManualEscape(t *testing.T) {
	// 002 L972-984: L = m![A], R = m![B]; m![{ L }, { R }] is m![A, B].
	a := axes(t, "A=8,B=512")
	env := Env{"L": parse(t, "m![A]", a), "R": parse(t, "m![B]", a)}
	e, err := Parse("m![{ L }, { R }]", a, env)
	require.NoError(t, err)
	assert.True(t, e.Equal(parse(t, "A, B", a)))
	ok, _ := Equiv(e, parse(t, "A, B", a))
	assert.True(t, ok)
	// reference-notes §2.1: `# { Out::SIZE }` in argument position is a constant.
	env["Out"] = Broadcast(64)
	e, err = Parse("m![B / { Out::SIZE }, B % { Out }, A # { 16 }]", a, env)
	require.NoError(t, err)
	assert.Equal(t, "B / 64, B % 64, A # 16", e.String())
	e, err = Parse("B # { B::SIZE }", a, env)
	require.NoError(t, err)
	assert.Equal(t, "B", e.String(), "padding to the axis size is a no-op")
	_, err = Parse("{ Nope }", a, env)
	assert.ErrorContains(t, err, "col 1: unknown mapping {Nope}")
	_, err = Parse("A # { Nope }", a, env)
	assert.ErrorContains(t, err, "col 5: unknown constant {Nope}")
}

func TestManualSkew(t *testing.T) {
	// 002 L986-1003: axes A=4, B=4, B' = B - A; m![A, B' = 4].
	a := axes(t, "A=4, B=4, B'=B-A")
	e := parse(t, "m![A, B' = 4]", a)
	assert.Equal(t, 16, e.Size())
	table := [][4]int{ // (A, B') → (A, B), L995-1002
		{0, 0, 0, 0}, {0, 1, 0, 1}, {0, 2, 0, 2}, {0, 3, 0, 3},
		{1, 0, 1, 1}, {1, 1, 1, 2}, {1, 2, 1, 3}, {1, 3, 1, 0},
	}
	for _, row := range table {
		pos := row[0]*4 + row[1]
		c := e.Map(pos)
		require.Equal(t, Live, c.Kind)
		assert.True(t, c.Index.Equal(idx("A", row[0], "B'", row[1])), "raw %v", c.Index)
		u, err := a.Unskew(c.Index, e)
		require.NoError(t, err)
		assert.True(t, u.Equal(idx("A", row[2], "B", row[3])), "(A, B') = (%d, %d): got %v", row[0], row[1], u)
	}
	// L1003: A = 1, B' = 3 wraps to B = (3 + 1) % 4 = 0.
	u, err := a.Unskew(e.Map(7).Index, e)
	require.NoError(t, err)
	assert.Equal(t, "{A: 1}", u.String())
}

func TestManualSliding(t *testing.T) {
	// 002 L1004-1016: N=5, F=3, $(N:1, F:2) has size 1 + 4·1 + 2·2 = 9 and
	// element (N, F) sits at buffer index N + 2F (the table at L1012).
	a := axes(t, "N=5, F=3")
	e := parse(t, "m![$(N:1, F:2)]", a)
	assert.Equal(t, 9, e.Size())
	assert.Equal(t, "$(N:1, F:2)", e.String())
	holds := map[int][]string{}
	for n := 0; n < 5; n++ {
		for f := 0; f < 3; f++ {
			holds[n+2*f] = append(holds[n+2*f], idx("N", n, "F", f).String())
		}
	}
	for i := 0; i < 9; i++ {
		var got []string
		for _, c := range e.MapAll(i) {
			require.Equal(t, Live, c.Kind)
			got = append(got, c.Index.String())
		}
		assert.ElementsMatch(t, holds[i], got, "position %d", i)
	}
	// L1014-1015: space index 4 maps to {4_N}, {2_N, 1_F} and {2_F}.
	var four []string
	for _, c := range e.MapAll(4) {
		four = append(four, c.String())
	}
	assert.Equal(t, []string{"{F: 1, N: 2}", "{F: 2}", "{N: 4}"}, four)
	assert.Equal(t, Multi, e.Map(4).Kind)
	assert.True(t, e.Map(0).Equal(live()), "position 0 holds only {}")
	assert.Equal(t, oob, e.Map(9))
	_, err := Compile(e, a)
	assert.Error(t, err)
	// L1006-1008: e1 * e2 is $(e1 : size(e2), e2 : 1), i.e. the pair e1, e2.
	a2 := axes(t, "A=3,B=4")
	ok, at := Equiv(parse(t, "$(A:4, B:1)", a2), parse(t, "A, B", a2))
	assert.True(t, ok, "differs at %d", at)
}

// manualEquivalences instantiates the equivalence list of 002 L1022-1028
// for E (and for E1, E2, E3 / A, B in the pair laws); it returns pairs of
// texts that must be equivalent.
func manualEquivalences(e, e2, e3 *Expr) [][2]string {
	E, E2, E3 := "["+e.String()+"]", "["+e2.String()+"]", "["+e3.String()+"]"
	out := [][2]string{
		{E, E + ", 1"}, // L1022-1023 identity of pairs
		{E, "1, " + E},
		{E + " / 1", E}, // L1027 idempotent operations
		{E + " # " + fmt.Sprint(e.Size()), E},
		{E + " = " + fmt.Sprint(e.Size()), E},
		{E + " % 1", "1"}, // L1028 modulo by 1
		{E + ", " + E2 + ", " + E3, "[" + E + ", " + E2 + "], " + E3}, // L1025-1026 associativity
		{E + ", " + E2 + ", " + E3, E + ", [" + E2 + ", " + E3 + "]"},
		{"[" + E + ", " + E2 + "] / " + fmt.Sprint(e2.Size()), E}, // L1024-1025 pair projection
		{"[" + E + ", " + E2 + "] % " + fmt.Sprint(e2.Size()), E2},
	}
	for n := 1; n <= e.Size(); n++ { // L1023-1024 stride-modulo decomposition
		if e.Size()%n == 0 {
			out = append(out, [2]string{E, E + " / " + fmt.Sprint(n) + ", " + E + " % " + fmt.Sprint(n)})
		}
	}
	return out
}

func TestManualEquivalences(t *testing.T) {
	// 002 L1017-1028 on the page's own mappings.
	a := axes(t, "A=8,B=512,C=13,D=61")
	exprs := []string{"A, B", "B / 64, B % 32, B / 32 % 2", "C, D # 64", "D = 2", "A # 12"}
	for _, s := range exprs {
		e := parse(t, s, a)
		for _, pair := range manualEquivalences(e, parse(t, "C", a), parse(t, "A / 2", a)) {
			x, err := Parse(pair[0], a, nil)
			require.NoError(t, err, pair[0])
			y, err := Parse(pair[1], a, nil)
			require.NoError(t, err, pair[1])
			ok, at := Equiv(x, y)
			assert.True(t, ok, "%s ≢ %s at %d", pair[0], pair[1], at)
		}
	}
}
