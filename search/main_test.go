package search

import (
	"testing"

	"tcpmap/internal/racerun"
)

// raceSearch selects the package's concurrency tests, the ones its race
// run runs (the workers' determinism at a budget, a listing limit, a
// timeout and a memory budget, the op spaces' and the graph's concurrent
// jobs and cache, the resident pairs' workers and an einsum's chain
// search's, the plans simulated by
// parallel subtests). The package's other tests run the same workers but
// no concurrent path these miss; under the detector they cost 3-10x, and
// `make test` runs every test of the package without it (unit-norace).
// TestRaceSearchNamed fails when it names a test no file declares.
const raceSearch = `^(TestWorkersDeterministic|TestMaxEvaluations|TestMaxListedIllegal|TestMemoryBudgetStops|TestTimeout|` +
	`TestPlanOpWorkersDeterministic|TestPlanOpBudget|TestPlanGraphWorkersDeterministic|TestPlanGraphBranch|` +
	`TestGraphBranchAndBoundBudget|TestDirCacheKeepsDeterministicPlans|TestPlanResident|TestResidentChainCache|` +
	`TestPlanEinsumChain|TestBnBLeftStopsAtTheEvaluationBudget|TestSplitKPlansVerify|TestRoPEPlanVerifies)$`

// TestMain runs raceSearch's tests alone under the race detector when no
// -run names others, so that `go test -race` of the race-tested packages
// is one command whose packages' runs overlap (make test's unit).
func TestMain(m *testing.M) { racerun.Main(m, raceDetector, raceSearch) }
