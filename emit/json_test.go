package emit

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// TestJSON: the JSON form reads back as the same program and is
// deterministic.
func TestJSON(t *testing.T) {
	for _, name := range goldenKernels {
		p := loadGolden(t, name)
		b, err := JSON(p)
		require.NoError(t, err)
		again, err := JSON(loadGolden(t, name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(b, again), name)
		var q kernel.Program
		require.NoError(t, q.UnmarshalJSON(b))
		assert.JSONEq(t, programJSON(t, p), programJSON(t, &q))
	}
	_, err := JSON(&kernel.Program{Name: "x"})
	assert.ErrorContains(t, err, "chips must be at least 1")
}
