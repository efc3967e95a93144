package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLibraryNoDualChannel: a space for the vendor's libraries (Library,
// `tcpmap plan --target visa-0.1|opt-0.6`) enumerates exactly the
// candidates of the whole space whose packet mode is not Dual, and both
// planners plan within it.
func TestLibraryNoDualChannel(t *testing.T) {
	t.Parallel()
	w := loadWorkload(t, tinyGEMV)
	s := newSpace(t, w)
	var all, single []Candidate
	s.Enumerate(func(c Candidate) bool { all = append(all, c); return true })
	n := newSpace(t, w)
	n.Library = true
	n.Enumerate(func(c Candidate) bool { single = append(single, c); return true })
	var want []Candidate
	for _, c := range all {
		if c.Mode != Dual {
			want = append(want, c)
		}
	}
	require.Less(t, len(want), len(all), "the tiny GEMV has dual-channel candidates")
	assert.Equal(t, want, single)
	for _, run := range []func(*Space, Options) (*Result, error){Solve, Exhaustive} {
		res, err := run(n, Options{})
		require.NoError(t, err)
		require.NotNil(t, res.Best)
		assert.NotEqual(t, Dual, res.Best.Candidate.Mode)
		assert.False(t, res.Stats.Restricted, "the target's space is whole: its optimum is proven")
	}
}
