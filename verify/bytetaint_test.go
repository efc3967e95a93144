package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestByteTaint: a tainted packet taints exactly its bytes of an HBM
// tensor of the kernel's own, a read overlapping one tainted byte is
// tainted, and a clean packet written over tainted bytes cleans them
// (sampling: what a sampled slice reads back through HBM is clean only
// where clean slices wrote it).
func TestByteTaint(t *testing.T) {
	b := make(byteTaint, 3) // 192 bytes
	b.set(60, 8, true)      // bytes 60..67 cross a word
	assert.False(t, b.any(0, 60))
	assert.True(t, b.any(67, 1))
	assert.True(t, b.any(50, 11))
	assert.False(t, b.any(68, 100))
	b.set(64, 2, false)
	assert.True(t, b.any(60, 4))
	assert.False(t, b.any(64, 2))
	assert.True(t, b.any(66, 2))
	assert.False(t, b.any(190, 10), "past the end reads nothing")
}
