package search

import (
	"context"
	"errors"
	"sort"
	"time"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The exhaustive planner: every candidate of the space is built, lowered
// (engines.Lower decides legality exactly; a violation names its rule) and
// priced (cost.Model); the cheapest wins, ties going to the candidate
// enumerated first. It is the ground truth the SAT planner is cross-checked
// against on small shapes.

// Options configure a search.
type Options struct {
	// NoPrune prices every legal candidate exactly. By default a candidate
	// is first priced with the DMA commands at their lower bound
	// (cost.Model.DMABound, linear in their loops) and priced exactly only
	// when that bound could still make it one of the Top best.
	NoPrune bool
	// MaxTiles bounds the tiles of a tiled candidate (0: DefaultMaxTiles,
	// which Solve widens when no candidate fits within it).
	MaxTiles int
	// AllOrders searches every order of each axis's digits
	// (Space.WithAllOrders), not only the named ones the space holds.
	AllOrders bool
	// Where, when set, restricts the search to the branches of the space
	// it keeps (Space.EnumerateWhere); the result then claims no
	// optimality over the whole space.
	Where func(Stage, *Candidate) bool
	// Timeout stops the search after this long with the best candidate
	// found so far (0: no limit).
	Timeout time.Duration
	// Context, when set, stops the search as Timeout does once it is done
	// (a user's interrupt: `tcpmap plan` cancels it on Ctrl-C).
	Context context.Context
	// MaxEvaluations stops the search once it has evaluated this many
	// candidates (Stats.Evaluated) with the best candidate found so far
	// (0: no limit). Unlike Timeout it does not depend on the machine's
	// speed: a search stopped by it returns the same plan on any machine
	// and for any Workers. A search it stops claims no optimality, like
	// one Timeout stops.
	MaxEvaluations int
	// MaxListedIllegal stops the SAT planner once it has listed this many
	// candidates (Stats.Candidates) without a legal one (0: no limit),
	// as MaxEvaluations does (Stats.Stopped is StoppedBudget): a space
	// whose candidates all break one rule can list millions of them while
	// its evaluations trickle through the few the bounds let by. Graph
	// planning sets it for the layout classes other than the declared
	// one.
	MaxListedIllegal int
	// Top is how many of the best candidates to keep (at least 1).
	Top int
	// Progress, when set, is called about every ProgressEvery with the
	// statistics so far.
	Progress      func(Stats)
	ProgressEvery time.Duration
	// Workers is how many candidates the SAT planner evaluates at once
	// (0: GOMAXPROCS, at most 8). The result does not depend on it.
	Workers int
	// MemoryBudget stops the search, as Timeout does, once the Go heap
	// holds more than this many bytes (0: no limit); Stats.Stopped is then
	// StoppedMemory.
	MemoryBudget uint64
	// Spec, Exhaustive, NoPad and Library configure PlanOp (op.go):
	// the hardware (nil: engines.Default()), the exhaustive planner
	// instead of the SAT one for an einsum op, no padded search, and the
	// libraries' space (constraints.Space.Library, tcpmap plan --target).
	Spec                       *engines.Spec
	Exhaustive, NoPad, Library bool
	// window is the SAT planner's first window of a skeleton's list
	// (0: firstWindow); the tests set it to list again often.
	window int
}

// Why a search stopped before its end (Stats.Stopped).
const (
	StoppedTimeout   = "timeout"     // Options.Timeout passed
	StoppedInterrupt = "interrupted" // Options.Context is done
	StoppedBudget    = "evaluations" // Options.MaxEvaluations reached
	StoppedMemory    = "memory"      // Options.MemoryBudget exceeded
)

// stopped reports whether the options' context is done.
func (o *Options) stopped() bool { return o.Context != nil && o.Context.Err() != nil }

// listedOut reports whether MaxListedIllegal stops a search with
// statistics st.
func (o *Options) listedOut(st *Stats) bool {
	return o.MaxListedIllegal > 0 && st.Legal == 0 && st.Candidates >= o.MaxListedIllegal
}

// stopReason says why a search that stopped early stopped.
func (o *Options) stopReason(evaluated int) string {
	switch {
	case o.stopped() && memoryStopped(o.Context):
		return StoppedMemory
	case o.stopped():
		return StoppedInterrupt
	case o.MaxEvaluations > 0 && evaluated >= o.MaxEvaluations:
		return StoppedBudget
	}
	return StoppedTimeout
}

// Stats are a search's statistics.
type Stats struct {
	// Candidates is the number of candidates enumerated, Legal the number
	// that built and lowered without violation and priced without an
	// invalid finding. BoundEvaluations counts the programs priced with
	// DMA lower bounds, CostEvaluations those priced exactly, Pruned the
	// legal candidates whose bound ruled them out.
	Candidates       int
	Legal            int
	BoundEvaluations int
	CostEvaluations  int
	Pruned           int
	// Evaluated counts the candidate evaluations Options.MaxEvaluations
	// limits: each candidate the exhaustive planner builds; each bound
	// and each exact pricing of the SAT planner (a candidate built,
	// lowered and priced, or rejected on the way).
	Evaluated int
	// Skipped counts the candidates never built: their candidate bound
	// (a lower bound from their fields alone) could not beat the
	// incumbent. It is +Inf for a candidate whose input runs leave no
	// HBM-to-DM packet (runRefused): illegal, never built.
	Skipped int
	// BankBounded counts the candidates built but neither lowered nor
	// priced: each of their contracting main chains fetches 64
	// consecutive reads from one DM bank, so that it runs apart from every
	// DMA command (MEM-R1, 002 L2909), and that bound could not beat the
	// incumbent (evaluator.bankBound). Neither Legal nor Pruned counts
	// them: the engines did not check them.
	BankBounded int
	// Illegal counts rejected candidates by rule (or error kind).
	Illegal map[string]*RuleStat
	// LowerHits and LowerMisses count the op lowering memo's lookups.
	LowerHits, LowerMisses int
	// Wall is the search's wall time.
	Wall time.Duration
	// Complete is set when every candidate was evaluated (neither
	// Timeout nor MaxEvaluations stopped the search).
	Complete bool
	// Stopped says why an incomplete search stopped: StoppedTimeout,
	// StoppedInterrupt, StoppedBudget or StoppedMemory ("" when Complete).
	Stopped string
	// Restricted is set when Options.Where restricted the space.
	Restricted bool
	// Planner is "exhaustive" or "sat"; SAT holds the SAT layer's
	// statistics.
	Planner string
	SAT     SATStats
}

// RuleStat counts the candidates one rule rejected, with the first
// rejection's message as an example.
type RuleStat struct {
	Rule    string
	Cite    string
	Count   int
	Example string
}

// Rules returns the rejection counts sorted by count (descending), then
// rule.
func (s *Stats) Rules() []RuleStat {
	out := make([]RuleStat, 0, len(s.Illegal))
	for _, r := range s.Illegal {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

// Evaluated is a priced legal candidate.
type Evaluated struct {
	// Index is the candidate's position in the enumeration.
	Index     int
	Candidate Candidate
	// Program is the lowered kernel program, Report its price.
	Program *kernel.Program
	Report  *cost.Report
	// key is the candidate's canonical text, the SAT planner's tie-break.
	key string
	// handKey and handAddrs are a resident einsum's handover
	// (evaluator.handover).
	handKey   string
	handAddrs []int64
	handDM    *kernel.Tensor
}

// Result is a search's outcome.
type Result struct {
	Space *Space
	// Best is the winner; Top the best candidates, best first (Top[0] ==
	// Best). Both are empty when no candidate is legal.
	Best  *Evaluated
	Top   []*Evaluated
	Stats Stats
	// Proof is what the search proved about Best (the SAT planner; the
	// exhaustive planner proves by enumeration, Stats.Complete).
	Proof Proof
}

// better orders evaluated candidates: fewer cycles, then earlier in the
// enumeration.
func better(a, b *Evaluated) bool {
	if a.Report.Cycles != b.Report.Cycles {
		return a.Report.Cycles < b.Report.Cycles
	}
	return a.Index < b.Index
}

// evaluator builds, lowers and prices candidates of one space.
type evaluator struct {
	s     *Space
	low   *lowerer
	model *cost.Model // exact
	bound *cost.Model // DMA commands at their lower bound
	stats *Stats
	// strict prunes only candidates whose bound exceeds the cutoff (ties
	// are priced: the SAT planner breaks them by the candidate's text).
	strict bool
	// subFetch caches the verdict of the sub context's TRF-load fetch by
	// its request (build).
	subFetch map[subFetchKey]error
	// scratch and keys are the branch and bound's buffers for listing a
	// skeleton's candidates (bnb.listOf).
	scratch []scored
	win     []winKey
	// dma caches the tensors' DMA loads of the candidates listed.
	dma dmaCache
	// refused is the search's cache of order-free refusals (nil: none).
	refused *refusals
	// banks caches whether a main chain's fetch serializes with DMA by
	// its request (bankBound).
	banks map[bankKey]bool
	// handKey and handAddrs are the handover of the program handover
	// took its output's stores from last (a resident pair's einsum side).
	handKey   string
	handAddrs []int64
	handDM    *kernel.Tensor
}

func newEvaluator(s *Space, stats *Stats) (*evaluator, error) {
	m, err := cost.NewModel(s.Spec)
	if err != nil {
		return nil, err
	}
	b, err := cost.NewModel(s.Spec)
	if err != nil {
		return nil, err
	}
	b.DMABound = true
	return &evaluator{s: s, low: newLowerer(s.Spec), model: m, bound: b, stats: stats}, nil
}

// reject counts a rejected candidate under the rule err names, and
// returns the rule.
func (e *evaluator) reject(err error) string {
	id, cite := "error", ""
	var v *engines.Violation
	if errors.As(err, &v) {
		id, cite = v.Rule.ID, v.Rule.Cite
	} else if errors.Is(err, engines.ErrNotModelled) {
		id = "not-modelled"
	} else if errors.As(err, new(opShapeError)) {
		id = "op-shape"
	} else if errors.As(err, new(handoverError)) {
		id = "resident-handover"
	}
	r, ok := e.stats.Illegal[id]
	if !ok {
		r = &RuleStat{Rule: id, Cite: cite, Example: err.Error()}
		e.stats.Illegal[id] = r
	}
	r.Count++
	return id
}

// evaluate builds, lowers and prices c; it returns nil for an illegal
// candidate (counted in the statistics) and for one whose price with DMA
// lower bounds is no better than cutoff (cutoff nil: none).
func (e *evaluator) evaluate(idx int, c *Candidate, cutoff *Evaluated) *Evaluated {
	x, _ := e.evaluateWhy(idx, c, cutoff)
	return x
}

// evaluateWhy is evaluate that also returns the rule that rejected an
// illegal candidate.
func (e *evaluator) evaluateWhy(idx int, c *Candidate, cutoff *Evaluated) (*Evaluated, string) {
	p, err := e.build(c)
	if err != nil {
		return nil, e.reject(err)
	}
	if err := e.low.lower(p); err != nil {
		return nil, e.reject(err)
	}
	if err := e.handover(p); err != nil {
		return nil, e.reject(err)
	}
	if cutoff != nil {
		b, why := e.boundProgram(p)
		if why != "" {
			return nil, why
		}
		// A later candidate never wins a tie in the exhaustive order, so
		// a bound equal to the cutoff rules it out too.
		if b > cutoff.Report.Cycles || b == cutoff.Report.Cycles && !e.strict {
			e.stats.Legal++
			e.stats.Pruned++
			return nil, ""
		}
	}
	x, why := e.exactProgram(idx, c, p)
	if x != nil {
		e.stats.Legal++
	}
	return x, why
}

// boundProgram prices lowered program p with DMA commands at their lower
// bound; why names the rule when the price finds it invalid.
func (e *evaluator) boundProgram(p *kernel.Program) (float64, string) {
	b, why, _ := e.account(e.priceBound(p))
	return b, why
}

// exactProgram prices lowered program p of c exactly.
func (e *evaluator) exactProgram(idx int, c *Candidate, p *kernel.Program) (*Evaluated, string) {
	return e.accountExact(idx, e.priceExact(c, p, false))
}

// Exhaustive enumerates the whole space and returns the best candidates.
func Exhaustive(s *Space, opts Options) (*Result, error) {
	opts, stop := withMemoryBudget(opts)
	defer stop()
	start := time.Now()
	if opts.MaxTiles > 0 {
		s = s.WithMaxTiles(opts.MaxTiles) // the caller's space keeps its own bound
	}
	if opts.AllOrders {
		s = s.WithAllOrders(true)
	}
	res := &Result{Space: s, Stats: Stats{Illegal: map[string]*RuleStat{}, Planner: "exhaustive"}}
	ev, err := newEvaluator(s, &res.Stats)
	if err != nil {
		return nil, err
	}
	top := max(opts.Top, 1)
	every := opts.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	next := start.Add(every)
	stopped := false
	idx := 0
	res.Stats.Restricted = opts.Where != nil
	s.EnumerateWhere(opts.Where, func(c Candidate) bool {
		if opts.Timeout > 0 && time.Since(start) > opts.Timeout || opts.stopped() ||
			opts.MaxEvaluations > 0 && res.Stats.Evaluated >= opts.MaxEvaluations {
			stopped = true
			return false
		}
		res.Stats.Candidates++
		res.Stats.Evaluated++
		var cutoff *Evaluated
		if !opts.NoPrune && len(res.Top) == top {
			cutoff = res.Top[top-1]
		}
		x := ev.evaluate(idx, &c, cutoff)
		idx++
		if x != nil {
			res.keep(x, top)
		}
		if opts.Progress != nil && time.Now().After(next) {
			res.Stats.Wall = time.Since(start)
			res.Stats.LowerHits, res.Stats.LowerMisses = ev.low.hits, ev.low.misses
			opts.Progress(res.Stats)
			next = time.Now().Add(every)
		}
		return true
	})
	res.Stats.Wall = time.Since(start)
	res.Stats.LowerHits, res.Stats.LowerMisses = ev.low.hits, ev.low.misses
	res.Stats.Complete = !stopped
	if stopped {
		res.Stats.Stopped = opts.stopReason(res.Stats.Evaluated)
	}
	if len(res.Top) > 0 {
		res.Best = res.Top[0]
	}
	return res, nil
}

// keep inserts x into the top list if it ranks; the report is cloned
// since the cost model reuses its own.
func (r *Result) keep(x *Evaluated, n int) { r.keepBy(x, n, better) }

// keepBy is keep under an order.
func (r *Result) keepBy(x *Evaluated, n int, better func(a, b *Evaluated) bool) {
	if len(r.Top) == n && !better(x, r.Top[n-1]) {
		return
	}
	x.Report = x.Report.Clone()
	i := sort.Search(len(r.Top), func(i int) bool { return better(x, r.Top[i]) })
	r.Top = append(r.Top, nil)
	copy(r.Top[i+1:], r.Top[i:])
	r.Top[i] = x
	if len(r.Top) > n {
		r.Top = r.Top[:n]
	}
}
