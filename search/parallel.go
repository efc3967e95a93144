package search

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"tcpmap/model/kernel"
)

// Parallel evaluation. Building, lowering and pricing a candidate is a pure
// function of the candidate (the caches on the way only save work), so the
// SAT planner hands the candidates it would evaluate one after another to
// several workers, each with its own lowerer and cost models, and then
// accounts the results in the order it would have evaluated them: the
// search, its statistics and its plan are the same for any number of
// workers.

// maxWorkers bounds the workers of a search.
const maxWorkers = 8

// boundOut is a candidate's price with DMA lower bounds, or the error that
// rejects it.
type boundOut struct {
	b   float64
	err error
	// priced is set when the program was priced (a bound evaluation).
	priced bool
	// lowered is set when err is the engines' refusal of a lowering (not
	// the cache's): the accounting caches it (refusals.put) in the
	// candidates' order.
	lowered bool
	// early is set when b is the bank-run bound of the built program
	// (evaluator.bankBound) and exceeded the cut: the candidate was
	// neither lowered nor priced.
	early bool
}

// tryBound builds, lowers and prices c with DMA lower bounds. A built
// candidate whose bank-run bound (bankBound) exceeds cut is neither
// lowered nor priced: that bound is returned, early. It does not touch
// the statistics (account does).
func (e *evaluator) tryBound(c *Candidate, cut float64) boundOut {
	if err, ok := e.refused.get(c); ok {
		return boundOut{err: err}
	}
	p, err := e.build(c)
	if err != nil {
		return boundOut{err: err}
	}
	if b := e.bankBound(c, p); b > cut {
		return boundOut{b: b, early: true}
	}
	if err := e.low.lower(p); err != nil {
		return boundOut{err: err, lowered: true}
	}
	if err := e.handover(p); err != nil {
		return boundOut{err: err}
	}
	return e.priceBound(p)
}

// priceBound prices lowered program p with DMA commands at their lower
// bound, without touching the statistics.
func (e *evaluator) priceBound(p *kernel.Program) boundOut {
	r, err := e.bound.Evaluate(p)
	if err != nil {
		return boundOut{err: fmt.Errorf("cost: %w", err), priced: true}
	}
	if err := r.Err(); err != nil {
		return boundOut{err: err, priced: true}
	}
	return boundOut{b: r.Cycles, priced: true}
}

// account records o in the statistics: a bound evaluation, and the rule
// that rejected the candidate (why) or its price.
func (e *evaluator) account(o boundOut) (float64, string, bool) {
	if o.priced {
		e.stats.BoundEvaluations++
	}
	if o.err != nil {
		return 0, e.reject(o.err), false
	}
	return o.b, "", true
}

// workers is a pool of evaluators of one space: the first is the
// planner's own.
type workers struct {
	evs []*evaluator
}

// newWorkers returns n evaluators (at least 1; 0: GOMAXPROCS, at most
// maxWorkers), the first ev.
func newWorkers(ev *evaluator, n int) (*workers, error) {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	n = max(1, min(n, maxWorkers))
	w := &workers{evs: []*evaluator{ev}}
	for len(w.evs) < n {
		e, err := newEvaluator(ev.s, ev.stats)
		if err != nil {
			return nil, err
		}
		e.strict = ev.strict
		w.evs = append(w.evs, e)
	}
	return w, nil
}

// bounds fills out[i] with tryBound of cs[i].c, shared out among the
// workers.
func (w *workers) bounds(cs []scored, out []boundOut, cut float64) {
	w.each(len(cs), func(e *evaluator, i int) { out[i] = e.tryBound(&cs[i].c, cut) })
}

// exactOut is a candidate's exact price, or the error that rejects it.
type exactOut struct {
	// x is the evaluated candidate, its report its own (cloned) and its
	// Index unset.
	x      *Evaluated
	err    error
	priced bool
}

// tryExact builds, lowers and prices c exactly, without touching the
// statistics (accountExact does).
func (e *evaluator) tryExact(c *Candidate) exactOut {
	p, err := e.build(c)
	if err != nil {
		return exactOut{err: err}
	}
	if err := e.low.lower(p); err != nil {
		return exactOut{err: err}
	}
	if err := e.handover(p); err != nil {
		return exactOut{err: err}
	}
	return e.priceExact(c, p, true)
}

// priceExact prices lowered program p of c exactly, without touching the
// statistics; with own set the report is cloned, so that the model's next
// Evaluate leaves it alone.
func (e *evaluator) priceExact(c *Candidate, p *kernel.Program, own bool) exactOut {
	r, err := e.model.Evaluate(p)
	if err != nil {
		return exactOut{err: fmt.Errorf("cost: %w", err), priced: true}
	}
	if err := r.Err(); err != nil {
		return exactOut{err: err, priced: true}
	}
	if own || e.s.hand != nil {
		r = r.Clone()
	}
	if e.s.hand != nil {
		// The pair's price, less the continuation's floor (einsumres.go).
		more, err := e.s.hand.more(e.handKey, e.handAddrs, e.handDM)
		if err != nil {
			return exactOut{err: err, priced: true}
		}
		r.Cycles += more
	}
	x := &Evaluated{Candidate: *c, Program: p, Report: r}
	if e.s.hand != nil {
		x.handKey, x.handAddrs, x.handDM = e.handKey, slices.Clone(e.handAddrs), e.handDM
	}
	if e.strict {
		x.key = c.String(e.s.P)
	}
	return exactOut{x: x, priced: true}
}

// accountExact records o in the statistics as the idx-th evaluated
// candidate: a cost evaluation, and the rule that rejected the candidate
// (why) or the evaluated candidate.
func (e *evaluator) accountExact(idx int, o exactOut) (*Evaluated, string) {
	if o.priced {
		e.stats.CostEvaluations++
	}
	if o.err != nil {
		return nil, e.reject(o.err)
	}
	o.x.Index = idx
	return o.x, ""
}

// exacts fills out[i] with tryExact of cs[i], cs[i] on worker i: the
// planner's next candidate (cs[0]) always on its own evaluator, whose
// cost model has cached the DMA commands of the candidates it priced
// before (candidates in a row often share their largest moves).
func (w *workers) exacts(cs []Candidate, out []exactOut) {
	if len(cs) > len(w.evs) {
		w.each(len(cs), func(e *evaluator, i int) { out[i] = e.tryExact(&cs[i]) })
		return
	}
	var wg sync.WaitGroup
	for i := range cs {
		wg.Go(func() { out[i] = w.evs[i].tryExact(&cs[i]) })
	}
	wg.Wait()
}

// each runs f(worker, i) for i in 0..n-1, the indices shared out among the
// workers.
func (w *workers) each(n int, f func(e *evaluator, i int)) {
	if len(w.evs) == 1 || n == 1 {
		for i := range n {
			f(w.evs[0], i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, e := range w.evs[:min(len(w.evs), n)] {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(e, i)
			}
		})
	}
	wg.Wait()
}
