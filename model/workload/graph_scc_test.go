package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSCCs pins the component partition the cycle report relies on: a
// self-loop alone, a two-cycle, a three-cycle reached from a chain.
func TestSCCs(t *testing.T) {
	// 0 → 0; 1 ⇄ 2; 3 → 4 → 5 → 6 → 4.
	comp := sccs([][]int{{0}, {2}, {1}, {4}, {5}, {6}, {4}})
	same := func(a, b int) bool { return comp[a] == comp[b] }
	assert.True(t, same(1, 2))
	assert.True(t, same(4, 5) && same(5, 6))
	assert.False(t, same(0, 1) || same(0, 3) || same(3, 4) || same(2, 4))
	assert.Empty(t, sccs(nil))
}
