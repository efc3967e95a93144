package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSolveMatchesExhaustive: on small workloads the SAT branch and bound
// proves the same optimum the exhaustive enumeration finds, with no more
// exact cost evaluations, and fewer where its bounds prune (fewer; on the
// dot product two legal candidates leave nothing to save, and on the small
// and reduced BMMs neither planner's DMA bound prunes a legal candidate).
// The larger spaces run without -short (`make test-long`).
func TestSolveMatchesExhaustive(t *testing.T) {
	if raceDetector {
		t.Skip("whole-space cross-check: `make test` runs it without the race detector (unit-norace)")
	}
	t.Parallel()
	for _, w := range []struct {
		name, src   string
		fewer, long bool
	}{
		{name: "dot"},
		{name: "gemv", fewer: true},
		{name: "tiny-gemm", src: tinyGEMM, fewer: true},
		{name: "small-bmm", src: smallBMM},
		{name: "tiny-bmm", src: tinyBMM, fewer: true, long: true},
		{name: "reduced-gemm", src: reducedGEMM, fewer: true, long: true},
		{name: "reduced-bmm", src: reducedBMM, long: true},
	} {
		t.Run(w.name, func(t *testing.T) {
			if w.long {
				longOnly(t)
			}
			var s *Space
			if w.src == "" {
				s = newSpace(t, workloadFile(t, w.name+".yaml"))
			} else {
				s = newSpace(t, loadWorkload(t, w.src))
			}
			ex, sat := requireSolveMatchesExhaustive(t, s)
			if w.fewer {
				assert.Less(t, sat.Stats.CostEvaluations, ex.Stats.CostEvaluations, "exact cost evaluations")
			} else {
				assert.LessOrEqual(t, sat.Stats.CostEvaluations, ex.Stats.CostEvaluations, "exact cost evaluations")
			}
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
