package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkersDeterministic: the SAT planner's plan, proof and statistics
// do not depend on how many workers evaluate its candidates (parallel.go).
func TestWorkersDeterministic(t *testing.T) {
	for _, s := range []*Space{
		newSpace(t, loadWorkload(t, reducedGEMM)),
		newSpace(t, loadWorkload(t, reducedBMM)),
		newSpace(t, workloadFile(t, "gemv.yaml")),
	} {
		var base *Result
		for _, n := range []int{1, 2} {
			r, err := Solve(s, Options{Workers: n, Top: 3})
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
	}
}
