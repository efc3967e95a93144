package emit

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/plan"
)

// storedPrograms are the shipped kernel programs (workloads/kernels) and
// the programs of the stored plans (results/plans), by file; under -short
// the compressed plans (the tiled prefill and large GEMM ones) are left out.
func storedPrograms(t testing.TB, short bool) map[string]*kernel.Program {
	t.Helper()
	out := map[string]*kernel.Program{}
	kernels, err := filepath.Glob("../workloads/kernels/*.json")
	require.NoError(t, err)
	for _, f := range kernels {
		p, err := ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = p
	}
	plans, err := filepath.Glob("../results/plans/*")
	require.NoError(t, err)
	for _, f := range plans {
		if short && strings.HasSuffix(f, ".gz") {
			continue
		}
		pl, err := plan.Read(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = pl.Program
	}
	return out
}

// byName is p with its tensors in the order of their names. The Rust text
// declares a straight-line kernel's tensors in the order its ops produce
// them, which need not be the order of the program's list (a plan lists a
// commit's accumulator after the tensor it feeds); the list's order means
// nothing else.
func byName(p *kernel.Program) *kernel.Program {
	q := *p
	q.Tensors = append([]*kernel.Tensor(nil), p.Tensors...)
	sort.SliceStable(q.Tensors, func(a, b int) bool { return q.Tensors[a].Name < q.Tensors[b].Name })
	return &q
}

// TestRoundTripAPIs: every stored kernel program and plan emits in both
// APIs, the same bytes every time, a tiled one as a loop, and reads back as
// the same program, up to the order of its tensor list.
func TestRoundTripAPIs(t *testing.T) {
	for name, p := range storedPrograms(t, testing.Short()) {
		for _, api := range APIs {
			t.Run(name+"/"+string(api), func(t *testing.T) {
				src, err := Rust(p, RustOptions{API: api, Version: "test"})
				require.NoError(t, err)
				again, err := Rust(p, RustOptions{API: api, Version: "test"})
				require.NoError(t, err)
				assert.True(t, string(src) == string(again), "the same bytes for the same program")
				if _, ok := kernel.Recognize(p); ok {
					assert.Contains(t, string(src), "    for t in 0..", "a tiled program prints as a loop")
				}
				got, err := Read("k.rs", src)
				require.NoError(t, err)
				assert.JSONEq(t, programJSON(t, byName(p)), programJSON(t, byName(got)))
			})
		}
	}
}
