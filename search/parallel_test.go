package search

import (
	"testing"

	"tcpmap/model/workload"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkersDeterministic: the SAT planner's plan, proof and statistics
// do not depend on how many workers evaluate its candidates (parallel.go).
// The reduced GEMM and BMM run without -short (`make test-long`).
func TestWorkersDeterministic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		w    *workload.Workload
		long bool
	}{
		{"gemv", workloadFile(t, "gemv.yaml"), false},
		{"small-bmm", loadWorkload(t, smallBMM), false},
		{"reduced-bmm", loadWorkload(t, reducedBMM), true},
		{"reduced-gemm", loadWorkload(t, reducedGEMM), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.long {
				longOnly(t)
			}
			requireWorkersDeterministic(t, newSpace(t, tc.w), Options{Top: 3})
		})
	}
}

// requireWorkersDeterministic solves s with opts on one and on two
// workers, requires the same plan, proof and statistics, and returns the
// one-worker result.
func requireWorkersDeterministic(t *testing.T, s *Space, opts Options) *Result {
	t.Helper()
	var base *Result
	for _, n := range []int{1, 2} {
		o := opts
		o.Workers = n
		r, err := Solve(s, o)
		require.NoError(t, err)
		require.NotNil(t, r.Best)
		if base == nil {
			base = r
			continue
		}
		require.Len(t, r.Top, len(base.Top))
		for i := range r.Top {
			assert.Equal(t, base.Top[i].Candidate, r.Top[i].Candidate, "workers %d, top %d", n, i)
			assert.Equal(t, base.Top[i].Report.Cycles, r.Top[i].Report.Cycles)
			assert.Equal(t, base.Top[i].Index, r.Top[i].Index)
		}
		assert.Equal(t, base.Proof, r.Proof)
		a, b := base.Stats, r.Stats
		a.Wall, b.Wall = 0, 0
		a.LowerHits, a.LowerMisses, b.LowerHits, b.LowerMisses = 0, 0, 0, 0
		assert.Equal(t, a, b, "workers %d", n)
	}
	return base
}
