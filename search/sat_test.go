package search

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSolveMatchesExhaustive: on small workloads the SAT branch and bound
// proves the same optimum the exhaustive enumeration finds, with fewer
// cost evaluations.
func TestSolveMatchesExhaustive(t *testing.T) {
	for _, w := range []struct{ name, src string }{
		{"dot", ""}, {"gemv", ""},
		{"reduced-gemm", reducedGEMM},
		{"reduced-bmm", reducedBMM},
	} {
		t.Run(w.name, func(t *testing.T) {
			var s *Space
			if w.src == "" {
				s = newSpace(t, workloadFile(t, w.name+".yaml"))
			} else {
				s = newSpace(t, loadWorkload(t, w.src))
			}
			ex, sat := requireSolveMatchesExhaustive(t, s)
			t.Logf("exhaustive: %d candidates, %d priced; sat: %d models, %d candidates, %d priced, %d illegal skeletons, %d clauses; %.0f cycles",
				ex.Stats.Candidates, ex.Stats.CostEvaluations, sat.Stats.SAT.Models, sat.Stats.Candidates,
				sat.Stats.CostEvaluations, sat.Stats.SAT.IllegalSkeletons, sat.Stats.SAT.Clauses, sat.Best.Report.Cycles)
		})
	}
}

// requireSolveMatchesExhaustive plans s both ways and requires the SAT
// branch and bound to prove the exhaustive optimum.
func requireSolveMatchesExhaustive(t *testing.T, s *Space) (ex, sat *Result) {
	t.Helper()
	ex, err := Exhaustive(s, Options{})
	require.NoError(t, err)
	sat, err = Solve(s, Options{})
	require.NoError(t, err)
	require.NotNil(t, ex.Best)
	require.NotNil(t, sat.Best)
	require.True(t, sat.Proof.Proven)
	require.Equal(t, ex.Best.Report.Cycles, sat.Best.Report.Cycles, "exhaustive %s, sat %s",
		ex.Best.Candidate.String(s.P), sat.Best.Candidate.String(s.P))
	return ex, sat
}
