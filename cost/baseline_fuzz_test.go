package cost

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParseBaseline: a baseline file (the checked-in one, corrupted)
// parses to a baseline that writes and parses back unchanged, or to an
// error that names the file; never a panic.
func FuzzParseBaseline(f *testing.F) {
	if data, err := os.ReadFile("../results/cost-baseline.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"tolerance": 0.01, "kernels": [{"file": "a.json", "cycles": 5}]}`))
	f.Add([]byte(`{"tolerance": -1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBaseline("base.json", data)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "base.json"), "%v", err)
			return
		}
		var out bytes.Buffer
		require.NoError(t, b.Write(&out))
		c, err := ParseBaseline("base.json", out.Bytes())
		require.NoError(t, err, out.String())
		var again bytes.Buffer
		require.NoError(t, c.Write(&again))
		assert.Equal(t, out.String(), again.String())
	})
}
