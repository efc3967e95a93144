package emit

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustread"
)

// TestRoundTripGolden: every shipped kernel program (workloads/kernels)
// and the simulator's test kernels (verify/testdata) emit in the default
// API, and read back as the same program; a shipped one the default API
// cannot spell (apiRefusals) is refused with its error.
func TestRoundTripGolden(t *testing.T) {
	var files []string
	for _, pat := range []string{"../workloads/kernels/*.json", "../verify/testdata/*.json"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), len(goldenKernels))
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			// The simulator's test kernels may test what the emitter
			// refuses; the shipped ones must emit.
			other := strings.HasPrefix(file, "../verify/")
			p, err := rustread.ReadFile(file)
			if err != nil && other {
				t.Skipf("not a kernel program: %v", err)
			}
			require.NoError(t, err)
			src, err := Rust(p, RustOptions{Version: "test", Cost: "1234 cycles"})
			if err != nil && other {
				t.Skipf("refused: %v", err)
			}
			if want, ok := apiRefusals[filepath.Base(file)+"/"+string(Visa01)]; ok && !other {
				// The default API cannot spell it (TestRoundTripAPIs
				// round-trips it in the other where it can).
				require.Error(t, err)
				assert.Contains(t, err.Error(), want)
				return
			}
			require.NoError(t, err)
			got, err := rustread.Read("k.rs", src)
			require.NoError(t, err, "%s", src)
			assert.JSONEq(t, programJSON(t, p), programJSON(t, got))
		})
	}
}
