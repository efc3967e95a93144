package search

import (
	"errors"
	"strings"
	"testing"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/workload"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkersDeterministic: the SAT planner's plan, proof and statistics
// do not depend on how many workers evaluate its candidates (parallel.go).
// The full-size GEMV, the reduced GEMM and BMM run without -short
// (`make test-long`).
func TestWorkersDeterministic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		w    *workload.Workload
		long bool
	}{
		{"tiny-gemv", loadWorkload(t, tinyGEMV), false},
		{"small-bmm", loadWorkload(t, smallBMM), false},
		{"gemv", workloadFile(t, "gemv.yaml"), true},
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

// TestWorkersDeterministicAtBudget: a search stopped by a budget of
// evaluations ends where one worker ends it, whatever the workers, with
// the same plan and statistics. The skeletons spare workers list ahead
// of their turn are listed under an older incumbent; unless cut to the
// incumbent when their turn comes, their extra candidates count as
// evaluations and move the stop (it did: 2,380 cycles on one worker,
// 2,337 on three at 10,000 evaluations).
func TestWorkersDeterministicAtBudget(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	// search/testdata/graph/branch.yaml's first einsum with its output
	// transposed, a layout class graph planning searches: most of its
	// candidates break FE-R5, and the budget stops it with a plan.
	g, err := workload.Load("testdata/graph/branch.yaml")
	require.NoError(t, err)
	w := withLayouts(g, []string{"h"}, [][]string{{"J", "I"}})
	p, err := constraints.NewProblem(w, "mm1")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	// Stopped by the budget, with a plan.
	samePlans(t, s, Options{MaxEvaluations: 1000}, []int{1, 3}, func(r *Result) {
		require.NotNil(t, r.Best)
		assert.Equal(t, StoppedBudget, r.Stats.Stopped)
	})
	// The whole search, on the same Space after those: the rule each
	// refusal is counted under does not depend on the workers nor on the
	// searches before (the order-free refusals are the search's, cached
	// between chunks in the candidates' order: refusals). Both differed:
	// FE-R5 1,130 and RED-R9 34 on one worker, 1,113 and 51 on three.
	samePlans(t, s, Options{}, []int{1, 3, 1}, func(r *Result) { require.True(t, r.Proof.Proven) })
}

// samePlans solves s with opts on each number of workers in turn, checks
// each result, and asserts byte-identical plans (statistics included).
func samePlans(t *testing.T, s *Space, opts Options, workers []int, check func(*Result)) {
	t.Helper()
	var want []byte
	for _, n := range workers {
		opts.Workers = n
		r, err := Solve(s, opts)
		require.NoError(t, err)
		check(r)
		pl, err := r.Plan()
		require.NoError(t, err)
		data, err := pl.Marshal()
		require.NoError(t, err)
		if want == nil {
			want = data
			continue
		}
		assert.Equal(t, string(want), string(data), "%d workers", n)
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
		requireSameSearch(t, base, r)
		for i := range r.Top {
			assert.Equal(t, base.Top[i].Index, r.Top[i].Index, "workers %d, top %d", n, i)
		}
	}
	return base
}

// The evaluator's build, which rejects a candidate whose TRF-load fetch
// breaks a rule before building the rest of its program, rejects exactly
// the candidates that Build followed by lowering rejects at that fetch,
// and accepts the others unchanged (the same program).
func TestEvaluatorBuildPrecheck(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newSplitSpace(t, loadWorkload(t, splitSpaces[2].src)) // skinny GEMM
	var st Stats
	st.Illegal = map[string]*RuleStat{}
	ev, err := newEvaluator(s, &st)
	require.NoError(t, err)
	low := newLowerer(s.Spec)
	step := 1
	if testing.Short() {
		step = 97 // a sample of the space's candidates
	}
	n, early := 0, 0
	s.Enumerate(func(c Candidate) bool {
		n++
		if n%step != 0 {
			return true
		}
		p1, err1 := ev.build(&c)
		p2, err2 := s.Build(&c)
		if err2 == nil {
			err2 = low.lower(p2)
		}
		if err1 != nil {
			require.Error(t, err2, "%s: rejected early (%v) but legal", c.String(s.P), err1)
			if strings.Contains(err1.Error(), "TRF load (sub context)") {
				early++
				var v1, v2 *engines.Violation
				require.True(t, errors.As(err1, &v1))
				require.True(t, errors.As(err2, &v2), "%v", err2)
			}
			return true
		}
		err1 = low.lower(p1)
		require.Equal(t, err2 == nil, err1 == nil, "%s: %v / %v", c.String(s.P), err1, err2)
		if err2 == nil {
			assert.Equal(t, p2.Ops, p1.Ops)
		}
		return true
	})
	assert.Positive(t, early, "no candidate of the space was rejected at its TRF load")
}
