package search

import (
	"errors"
	"fmt"
	"math"
	"time"

	"tcpmap/constraints"
)

// Explaining a user's mapping (issue 6 §5): is a full or partial mapping,
// written in the manual's notation (the Hello GEMM's `type Slice =
// m![I / 32, J / 32]`, `type Row = m![J % 8]`, 002 L483-484), legal; if
// not, which rules it violates; if so, what it costs and how far it is
// from the optimum.
//
// The mapping's fields become assumption literals over the skeleton
// encoding (sat.go): a structurally impossible mapping is UNSAT, and the
// solver's failed assumptions, minimized by deletion, name the skeleton
// rules and the mapping fields that conflict. A structurally possible
// mapping is completed by the branch and bound restricted to the
// candidates agreeing with it (Options.Where); engines.Lower decides the
// completions' legality exactly and names the engine rules that rejected
// them.

// ErrExplainTimeout says the structural check stopped at the timeout.
var ErrExplainTimeout = errors.New("the structural check timed out")

// ExplainOptions configure Explain.
type ExplainOptions struct {
	// MaxTiles bounds the tiles of a tiled candidate (0: DefaultMaxTiles).
	MaxTiles int
	// Timeout bounds each search (0: none).
	Timeout time.Duration
	// MaxEvaluations bounds each planner search (the completions and the
	// optimum) by its candidate evaluations (Options.MaxEvaluations; 0:
	// none): unlike Timeout, where it stops does not depend on the
	// machine's speed.
	MaxEvaluations int
	// MemoryBudget bounds each search's heap (Options.MemoryBudget; 0:
	// none).
	MemoryBudget uint64
}

// Explanation is what Explain found.
type Explanation struct {
	// Legal is set when some completion of the mapping is legal.
	Legal bool
	// Conflicts are the reasons the mapping is structurally impossible:
	// each a minimal set of skeleton rules and mapping fields that cannot
	// hold together. After the first, each is found among the fields the
	// earlier ones leave out, so they name independent mistakes. A
	// conflict without fields means the workload itself has no skeleton.
	Conflicts []Conflict
	// Structural is false when the space has no SAT encoding (the
	// structural check was skipped).
	Structural bool
	// Completions is the restricted search (nil when structurally
	// impossible); its Stats.Illegal name the engine rules that rejected
	// the completions when none is legal.
	Completions *Result
	// Optimum is the unrestricted search (nil when the mapping is
	// illegal).
	Optimum *Result
	// e is the encoding (for tests).
	e *Encoding
}

// OptimumCycles returns the optimum's cycles: the unrestricted search's
// best, or the mapping's own when a search stopped early found nothing
// better; 0 when the mapping is illegal.
func (x *Explanation) OptimumCycles() float64 {
	if x.Completions == nil || x.Completions.Best == nil {
		return 0
	}
	c := x.Completions.Best.Report.Cycles
	if x.Optimum != nil && x.Optimum.Best != nil {
		c = math.Min(c, x.Optimum.Best.Report.Cycles)
	}
	return c
}

// Distance returns the legal mapping's cycles over the optimum's (≥ 1),
// or 0 when the mapping is illegal.
func (x *Explanation) Distance() float64 {
	o := x.OptimumCycles()
	if o == 0 {
		return 0
	}
	return x.Completions.Best.Report.Cycles / o
}

// Explain explains the mapping m (nil: none, the workload alone) on the
// space s.
func Explain(s *Space, m *MapSpec, opts ExplainOptions) (*Explanation, error) {
	if m == nil {
		m = &MapSpec{}
	}
	x := &Explanation{}
	e, err := constraints.NewEncoding(s.Space)
	switch {
	case errors.Is(err, constraints.ErrNoEncoding):
	case err != nil:
		return nil, err
	default:
		x.Structural = true
		x.e = e
		if x.Conflicts, err = e.Conflicts(m, opts.Timeout); err != nil {
			if errors.Is(err, constraints.ErrTimeout) {
				return nil, fmt.Errorf("%s: %w", s.P.File, ErrExplainTimeout)
			}
			return nil, err
		}
		if len(x.Conflicts) > 0 {
			return x, nil
		}
	}
	so := Options{MaxTiles: opts.MaxTiles, Timeout: opts.Timeout, MaxEvaluations: opts.MaxEvaluations, MemoryBudget: opts.MemoryBudget}
	so.Where = m.Where(s.P)
	// With the slices fixed, the enumeration prunes the space at its first
	// stage and the exhaustive planner evaluates only the mapping's
	// completions; otherwise the branch and bound bounds the search (it
	// walks every skeleton, which is slow when none is legal).
	run := Solve
	if m.Dims[Slice] != nil {
		run = Exhaustive
	}
	if x.Completions, err = run(s, so); err != nil {
		return nil, err
	}
	if x.Completions.Best == nil {
		return x, nil
	}
	x.Legal = true
	so.Where = nil
	if x.Optimum, err = Solve(s, so); err != nil {
		return nil, err
	}
	return x, nil
}
