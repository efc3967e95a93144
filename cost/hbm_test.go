package cost

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomWindow returns a random window of an HBM channel: commands per
// slice × bank group, the groups with commands in a random arrival order,
// and the group of the command before (-1: none).
func randomWindow(r *rand.Rand, groups int) (counts []uint16, ord []uint8, prev int) {
	counts = make([]uint16, groups)
	for g := range counts {
		if r.Intn(3) > 0 {
			counts[g] = uint16(r.Intn(1 + r.Intn(64)))
		}
	}
	for _, g := range r.Perm(groups) {
		if counts[g] > 0 {
			ord = append(ord, uint8(g))
		}
	}
	return counts, ord, r.Intn(groups+1) - 1
}

// TestIssueByClass: the class-wise issue of a window is the greedy scan's,
// bit for bit, on random windows (counts per slice × bank group, groups in
// a random arrival order) after every previous group.
func TestIssueByClass(t *testing.T) {
	m := newModel(t)
	c := m.hbm
	require.True(t, c.classes, "RNGD's tCCD 2 < 3 < 4 (002 L2999-3001)")
	r := rand.New(rand.NewSource(9))
	for iter := 0; iter < 2000; iter++ {
		a, ord, prev := randomWindow(r, c.groups)
		b := append([]uint16(nil), a...)
		p1, u1, n1 := c.issueGreedy(a, ord, prev)
		p2, u2, n2 := c.issueByClass(b, ord, prev)
		require.Equal(t, [3]any{p1, u1, n1}, [3]any{p2, u2, n2}, "iteration %d: prev %d", iter, prev)
		require.Equal(t, a, b)
	}
}

// TestIssueRelabelled: relabelling the groups of a window by an XOR of
// their slice and bank-group bits (what a translation in HBM does,
// translate.go), arrival order kept, issues it the same way: the same
// delays and the relabelled last group.
func TestIssueRelabelled(t *testing.T) {
	m := newModel(t)
	c := m.hbm
	r := rand.New(rand.NewSource(11))
	for iter := 0; iter < 5000; iter++ {
		a, ord, prev := randomWindow(r, c.groups)
		x := r.Intn(c.groups)
		b := make([]uint16, c.groups)
		for g := range a {
			b[g^x] = a[g]
		}
		ordX := make([]uint8, len(ord))
		for i, g := range ord {
			ordX[i] = g ^ uint8(x)
		}
		prevX := prev
		if prev >= 0 {
			prevX = prev ^ x
		}
		p1, u1, n1 := c.issueByClass(a, ord, prev)
		p2, u2, n2 := c.issueByClass(b, ordX, prevX)
		require.Equal(t, u1, u2, "iteration %d", iter)
		require.Equal(t, n1, n2)
		require.Equal(t, p1^x, p2, "iteration %d", iter)
	}
}
