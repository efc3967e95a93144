package emit

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// goldenKernels are the shipped kernel programs.
var goldenKernels = []string{"hello-add", "hello-mul", "hello-dot", "hello-gemv", "hello-gemm"}

func loadGolden(t testing.TB, name string) *kernel.Program {
	t.Helper()
	p, err := ReadFile(filepath.Join("..", "workloads", "kernels", name+".json"))
	require.NoError(t, err)
	return p
}

// programJSON is a program's JSON form without its lowered configurations,
// which the Rust text does not carry.
func programJSON(t testing.TB, p *kernel.Program) string {
	t.Helper()
	q := *p
	q.Ops = nil
	for _, op := range p.Ops {
		o := *op
		o.DMA = nil
		o.Stages = nil
		for _, st := range op.Stages {
			s := *st
			s.Config = nil
			o.Stages = append(o.Stages, &s)
		}
		q.Ops = append(q.Ops, &o)
	}
	b, err := json.Marshal(&q)
	require.NoError(t, err)
	return string(b)
}

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
			p, err := ReadFile(file)
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
			got, err := Read("k.rs", src)
			require.NoError(t, err, "%s", src)
			assert.JSONEq(t, programJSON(t, p), programJSON(t, got))
		})
	}
}
