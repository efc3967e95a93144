package cost

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIssueByClass: the class-wise issue of a window is the greedy scan's,
// bit for bit, on random windows (counts per slice × bank group) after
// every previous group.
func TestIssueByClass(t *testing.T) {
	m := newModel(t)
	c := m.hbm
	require.True(t, c.classes, "RNGD's tCCD 2 < 3 < 4 (002 L2999-3001)")
	r := rand.New(rand.NewSource(9))
	for iter := 0; iter < 2000; iter++ {
		a := make([]uint16, c.groups)
		for g := range a {
			if r.Intn(3) > 0 {
				a[g] = uint16(r.Intn(1 + r.Intn(64)))
			}
		}
		b := append([]uint16(nil), a...)
		prev := r.Intn(c.groups+1) - 1
		p1, u1, n1 := c.issueGreedy(a, prev)
		p2, u2, n2 := c.issueByClass(b, prev)
		require.Equal(t, [3]any{p1, u1, n1}, [3]any{p2, u2, n2}, "iteration %d: prev %d", iter, prev)
		require.Equal(t, a, b)
	}
}
