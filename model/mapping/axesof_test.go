package mapping

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAxesOf: expressions built in code compile over the axes they name,
// and the compiled program agrees with Map.
func TestAxesOf(t *testing.T) {
	a, err := ParseAxes("A=8,B=512,C=13")
	require.NoError(t, err)
	e := MustParse("B / 64, C # 16, B % 32, B / 32 % 2", a, nil)
	got, err := AxesOf(e, MustParse("A", a, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"B", "C", "A"}, got.Names())
	p, err := Compile(e, got)
	require.NoError(t, err)
	dst := make([]int, p.Slots())
	for i := 0; i < e.Size(); i++ {
		kind, _ := p.Eval(i, dst)
		assert.Equal(t, e.Map(i).Kind, kind, "position %d", i)
	}

	_, err = AxesOf(Sym("A", 8), Sym("A", 4))
	assert.ErrorContains(t, err, "axis A has sizes 8 and 4")
	s, err := ParseAxes("A=4,B=4,B'=B-A")
	require.NoError(t, err)
	_, err = AxesOf(MustParse("A, B' = 4", s, nil))
	assert.ErrorContains(t, err, "skewed axis")
}
