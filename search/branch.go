package search

import (
	"container/heap"
	"errors"
	"math"
	"slices"
	"sort"
	"time"

	"tcpmap/constraints"
)

// Branch and bound over the SAT encoding of the skeletons (issue §2).
//
// The solver proposes a skeleton whose encoded lower bounds (bound.go) are
// at most a level X; its Cluster/Slice placement is blocked whole and
// queued under the placement's bound (Space.placementBound), so the solver
// proposes each placement once. One best-first queue holds four kinds of
// items, each under a lower bound of every candidate it stands for:
//
//   - a placement: when it comes first, the enumerator lists its skeletons
//     (factors down to Row and Time) and queues each under its bounds
//     (Space.lowerBounds);
//   - a skeleton: when it comes first, its candidates are enumerated and
//     sorted by their candidate bounds (cbound.go);
//   - an expanded skeleton, under its best candidate's bound: its
//     candidates are built and lowered in bound order up to the next
//     item's bound, each priced with DMA commands at their lower bound and
//     queued as a built candidate under that price;
//   - a built candidate: when it comes first, it is priced exactly.
//
// When the solver answers UNSAT under X, every skeleton whose encoded
// bounds are at most X belongs to a placement proposed, and the queue is
// worked on up to X. Every incumbent adds the clause "lower bounds at most
// its cycles" for good and drops the items above it. X doubles until it
// reaches the incumbent; then UNSAT with the queue empty proves the
// incumbent optimal under the cost model. A skeleton none of whose
// candidates is legal is counted (SATStats.IllegalSkeletons) and dropped. A level with more placements than the solver lists in the
// time given is interleaved with work on the queue (interleaved).

// Proof is what a search proved about its best candidate.
type Proof struct {
	// Proven is set when the best candidate is optimal under the cost model
	// over the whole space.
	Proven bool
	// LowerBound is a proven lower bound on every candidate's cycles.
	LowerBound float64
	// Gap is (best − LowerBound) / best; 0 when proven.
	Gap float64
}

// SATStats are the SAT layer's statistics.
type SATStats struct {
	// Models is the number of models the solver gave (each a placement
	// proposed and blocked), Solves the solver calls, Clauses the clauses
	// of the encoding at the end, IllegalSkeletons the skeletons none of
	// whose candidates was legal (dropped; no clause is learned from
	// them), Empty the skeletons with no candidate in the enumerated
	// space.
	Models, Solves, Clauses, IllegalSkeletons, Empty int
	// BoundSkips counts skeletons whose bounds could not beat the
	// incumbent.
	BoundSkips int
	// Placements counts the Cluster and Slice placements proposed whose
	// bound could not beat the incumbent.
	Placements int
}

// widenTiles is how much Solve widens the default tile bound when no
// candidate fits within it.
const widenTiles = 8

// Solve plans with the SAT branch and bound. It falls back to Exhaustive
// when the space has no SAT encoding (sizes the encoding does not cover).
// With the default tile bound (Options.MaxTiles 0), a space none of whose
// candidates fits within DefaultMaxTiles tiles, though more tiles would fit
// some, is searched again with widenTiles times the bound (the plan's
// max_tiles says which).
func Solve(s *Space, opts Options) (*Result, error) {
	start := time.Now()
	before := s.capped.Load()
	res, err := solve(s, opts)
	if err != nil || opts.MaxTiles > 0 || res.Best != nil || res.Stats.Candidates > 0 || !res.Stats.Complete ||
		s.capped.Load() == before {
		return res, err
	}
	o := opts
	o.MaxTiles = s.maxTiles * widenTiles
	if opts.Timeout > 0 {
		if o.Timeout = opts.Timeout - time.Since(start); o.Timeout <= 0 {
			return res, nil
		}
	}
	if opts.MaxEvaluations > 0 {
		if o.MaxEvaluations = opts.MaxEvaluations - res.Stats.Evaluated; o.MaxEvaluations <= 0 {
			return res, nil
		}
	}
	res, err = solve(s, o)
	if res != nil {
		res.Stats.Wall = time.Since(start)
	}
	return res, err
}

// solve is Solve within the tile bound of s or opts.
func solve(s *Space, opts Options) (*Result, error) {
	start := time.Now()
	if opts.MaxTiles > 0 {
		t := *s
		t.maxTiles = opts.MaxTiles
		s = &t
	}
	e, err := newSatSpace(s)
	if errors.Is(err, errNoEncoding) {
		return Exhaustive(s, opts)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Space: s, Stats: Stats{Illegal: map[string]*RuleStat{}, Planner: "sat"}}
	ev, err := newEvaluator(s, &res.Stats)
	if err != nil {
		return nil, err
	}
	ev.strict = true
	pool, err := newWorkers(ev, opts.Workers)
	if err != nil {
		return nil, err
	}
	top := max(opts.Top, 1)
	every := opts.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	next := start.Add(every)
	st := &res.Stats
	st.Restricted = opts.Where != nil
	deadline := time.Time{}
	if opts.Timeout > 0 {
		deadline = start.Add(opts.Timeout)
	}
	// left returns the time left (0: no limit) and whether the search
	// may go on: neither the deadline nor the evaluation budget is
	// reached. The budget is checked where evaluations are accounted, in
	// sequential order, so that where it stops does not depend on the
	// workers.
	left := func() (time.Duration, bool) {
		if opts.stopped() || opts.MaxEvaluations > 0 && st.Evaluated >= opts.MaxEvaluations {
			return 0, false
		}
		if deadline.IsZero() {
			return 0, true
		}
		d := time.Until(deadline)
		return d, d > 0
	}
	n := len(s.P.Axes)
	idx := 0
	proven := 0.0 // every candidate costs at least this
	// enumerated is the last level the solver had no skeleton under:
	// every skeleton whose bounds are at most it was queued or evaluated;
	// cur is the bound of the skeleton being evaluated.
	enumerated, cur := 0.0, math.Inf(1)
	level := 2 * float64(s.Spec.DMA.StartupCycles.Value)
	incumbentBound := math.Inf(1) // cycles of the worst of the Top when full
	stopped := false
	var queue skeletonQueue
	// expand enumerates skeleton k's candidates with their candidate
	// bounds, best first.
	listOf := func(k *skeleton) []scored {
		var list []scored
		add := func(c Candidate) bool {
			list = append(list, scored{c: c, bound: s.candidateBound(&c)})
			return true
		}
		if opts.Where == nil {
			s.enumerateSkeleton(k.candidate(), add)
		} else {
			s.EnumerateWhere(func(stage Stage, c *Candidate) bool {
				return k.matches(stage, c, n) && opts.Where(stage, c)
			}, add)
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].bound < list[j].bound })
		return list
	}
	// expand lists skeleton k's candidates (listOf); with spare workers,
	// and no user restriction to call concurrently, the next skeletons the
	// queue holds unexpanded are listed meanwhile (pure work, kept until
	// they come up).
	expanded := map[skeleton][]scored{}
	expand := func(k *skeleton) []scored {
		list, ok := expanded[*k]
		if ok {
			delete(expanded, *k)
		} else {
			ks := []skeleton{*k}
			for opts.Where == nil && len(ks) < len(pool.evs) {
				best := -1
				for i := range queue {
					r := &queue[i]
					if r.built || r.placement || r.cands != nil || r.bound > incumbentBound || slices.Contains(ks, r.k) {
						continue
					}
					if _, done := expanded[r.k]; done {
						continue
					}
					if best < 0 || queue.Less(i, best) {
						best = i
					}
				}
				if best < 0 {
					break
				}
				ks = append(ks, queue[best].k)
			}
			lists := make([][]scored, len(ks))
			pool.each(len(ks), func(_ *evaluator, i int) { lists[i] = listOf(&ks[i]) })
			for i := 1; i < len(ks); i++ {
				expanded[ks[i]] = lists[i]
			}
			list = lists[0]
		}
		st.Candidates += len(list)
		if len(list) == 0 {
			st.SAT.Empty++
		}
		return list
	}
	// skeletons queues the skeletons of placement k (its Cluster/Slice
	// factors), each under its bounds, as the enumerator lists them up to
	// their Row and Time factors; those the incumbent rules out are
	// dropped.
	skeletons := func(k *skeleton, seq int) {
		seen := map[skeleton]bool{} // the untiled and tiled passes list each
		s.EnumerateWhere(func(stage Stage, c *Candidate) bool {
			if stage == StageSlices && !k.matches(stage, c, n) {
				return false
			}
			if opts.Where != nil && !opts.Where(stage, c) {
				return false
			}
			if stage != StageRows {
				return true
			}
			sk := skeleton{stationary: c.Stationary, sw: c.Switch, content: c.Content, mode: c.Mode, acc: c.Acc, split: c.Split}
			if seen[sk] {
				return false
			}
			seen[sk] = true
			if b := s.lowerBounds(c).max(); b > incumbentBound {
				st.SAT.BoundSkips++
			} else {
				heap.Push(&queue, queued{k: sk, bound: b, seq: seq})
			}
			return false // the skeleton's candidates wait for its turn
		}, func(Candidate) bool { return true })
	}
	// improved records a better incumbent and the clauses it makes
	// permanent.
	improved := func() {
		if len(res.Top) < top || res.Top[top-1].Report.Cycles >= incumbentBound {
			return
		}
		incumbentBound = res.Top[top-1].Report.Cycles
		// For good: only skeletons whose bounds could still place among
		// the Top.
		for _, l := range e.boundLits(incumbentBound) {
			e.p.Clause(0, l)
		}
	}
	progress := func() {
		if opts.Progress != nil && time.Now().After(next) {
			st.Wall = time.Since(start)
			opts.Progress(*st)
			next = time.Now().Add(every)
		}
	}
	// losesTie reports whether a candidate priced at least b cannot enter
	// a full Top: b ties its worst, and ties go to the smaller candidate
	// text (betterSAT), so only a smaller text could still enter.
	losesTie := func(c *Candidate, b float64) bool {
		return len(res.Top) == top && b == incumbentBound && c.String(s.P) > res.Top[top-1].key
	}
	// evaluateBounds is evaluate with pruning: the candidates whose
	// bounds are at most x (the incumbent does not move meanwhile) are
	// built, lowered and priced with DMA lower bounds by the workers, a
	// chunk at a time, and accounted in order.
	var outs []boundOut
	// sinceFirst counts the candidates built since the last one priced out
	// of turn (step), legalSince the legal ones among them.
	const firstEvery, firstLegal = 1024, 128
	sinceFirst, legalSince := 0, 0
	evaluateBounds := func(q *queued, x float64) []scored {
		list := q.cands
		chunk := 16 * len(pool.evs)
		for len(list) > 0 && list[0].bound <= x {
			k, limit := 0, chunk
			if opts.MaxEvaluations > 0 {
				limit = min(limit, opts.MaxEvaluations-st.Evaluated)
			}
			for k < len(list) && k < limit && list[k].bound <= x {
				k++
			}
			if k == 0 {
				break // the budget is spent (left says so)
			}
			if cap(outs) < k {
				outs = make([]boundOut, k)
			}
			outs = outs[:k]
			pool.bounds(list[:k], outs)
			sinceFirst += k
			for i := range k {
				sc := &list[i]
				st.Evaluated++
				if b, why, ok := ev.account(outs[i]); !ok {
					q.rule = why
				} else {
					q.legal = true
					st.Legal++
					legalSince++
					if b = max(b, sc.bound); b > incumbentBound || losesTie(&sc.c, b) {
						st.Pruned++
					} else {
						heap.Push(&queue, queued{built: true, c: sc.c, bound: b, seq: q.seq})
					}
				}
				progress()
				if _, ok := left(); !ok {
					list = list[i+1:]
					k = -1
					break
				}
			}
			if k < 0 {
				break
			}
			list = list[k:]
		}
		if len(list) == 0 && !q.legal && q.rule != "" {
			st.SAT.IllegalSkeletons++
		}
		return list
	}
	// evaluate builds and lowers q's candidates in bound order while
	// their bounds are at most x, prices each with DMA lower bounds and
	// queues the legal ones under that price for their exact pricing
	// (step); it returns the candidates left. With NoPrune each is priced
	// exactly at once.
	evaluate := func(q *queued, x float64) []scored {
		if !opts.NoPrune {
			return evaluateBounds(q, x)
		}
		list := q.cands
		for len(list) > 0 && list[0].bound <= x {
			sc := list[0]
			list = list[1:]
			r, why := ev.evaluateWhy(idx, &sc.c, nil)
			st.Evaluated++
			idx++
			if r != nil {
				q.legal = true
				res.keepBy(r, top, betterSAT)
				improved()
			} else if why != "" {
				q.rule = why
			}
			progress()
			x = min(x, incumbentBound)
			if _, ok := left(); !ok {
				break
			}
		}
		if len(list) == 0 && !q.legal && q.rule != "" {
			st.SAT.IllegalSkeletons++
		}
		return list
	}
	// exact prices built item q exactly, and with spare workers the next
	// built items the queue would pop while the incumbent allows them
	// (speculated, used when they come up).
	speculated := map[Candidate]exactOut{}
	exact := func(q *queued) exactOut {
		cs := []Candidate{q.c}
		var picked []int
		for len(cs) < len(pool.evs) {
			best := -1
			for i := range queue {
				r := &queue[i]
				if !r.built || r.bound > incumbentBound || slices.Contains(picked, i) {
					continue
				}
				if _, done := speculated[r.c]; done || r.c == q.c {
					continue
				}
				if best < 0 || queue.Less(i, best) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			picked = append(picked, best)
			cs = append(cs, queue[best].c)
		}
		outs := make([]exactOut, len(cs))
		pool.exacts(cs, outs)
		for k := 1; k < len(cs); k++ {
			speculated[cs[k]] = outs[k]
		}
		return outs[0]
	}
	// work prices, expands or evaluates queued item q (see step) and
	// queues what is left of it.
	work := func(q queued, x float64) {
		cur = q.bound
		switch {
		case q.built && losesTie(&q.c, q.bound):
			delete(speculated, q.c)
			st.Pruned++
		case q.built:
			o, ok := speculated[q.c]
			if ok {
				delete(speculated, q.c)
			} else {
				o = exact(&q)
			}
			r, _ := ev.accountExact(idx, o)
			st.Evaluated++
			idx++
			if r != nil {
				res.keepBy(r, top, betterSAT)
				improved()
			} else {
				st.Legal-- // the exact price found it invalid
			}
			progress()
		case q.placement:
			skeletons(&q.k, q.seq)
		case q.cands == nil:
			q.cands = expand(&q.k)
		default:
			upto := x
			if queue.Len() > 0 {
				upto = min(upto, queue.peek().bound)
			}
			q.cands = evaluate(&q, max(upto, q.bound))
		}
		cur = math.Inf(1)
		if !q.built && !q.placement && len(q.cands) > 0 {
			q.bound = max(q.bound, q.cands[0].bound)
			heap.Push(&queue, q)
		}
	}
	// step works on the best queued item whose bound is at most x: a
	// skeleton it expands, a skeleton's candidates it evaluates up to the
	// next item's bound (best first across skeletons), a built candidate
	// it prices exactly. It drops the queue when the incumbent rules it
	// all out. more reports whether an item was worked on, ok whether
	// time is left.
	step := func(x float64) (more, ok bool) {
		if queue.Len() == 0 {
			return false, true
		}
		// After every firstEvery candidates built, or firstLegal legal
		// ones, the best built candidate that could still beat the
		// incumbent is priced out of turn: a large space may take long to
		// reach its turn (llama3-70b-prefill's RoPE and projections), and a
		// search stopped early needs a candidate, and a good one. Counted in
		// candidates, not time: the search stays deterministic.
		if sinceFirst >= firstEvery || legalSince >= firstLegal {
			sinceFirst, legalSince = 0, 0
			built := -1
			for i := range queue {
				if r := &queue[i]; r.built && r.bound < incumbentBound && (built < 0 || r.bound < queue[built].bound) {
					built = i
				}
			}
			if built >= 0 {
				work(heap.Remove(&queue, built).(queued), x)
				_, ok = left()
				return true, ok
			}
		}
		q := queue.peek()
		if q.bound > incumbentBound {
			for _, r := range queue {
				switch {
				case r.built:
					st.Pruned++
				case r.cands == nil:
					st.SAT.BoundSkips++
				default:
					st.Skipped += len(r.cands)
				}
			}
			queue = queue[:0]
			return false, true
		}
		if q.bound > x {
			return false, true
		}
		q = heap.Pop(&queue).(queued)
		work(q, x)
		_, ok = left()
		return true, ok
	}
	// interleaved works interleaveWork times on the best queued item that
	// is already expanded or built; on the best skeleton to expand when
	// none is. It counts work, not time, so that a search without a
	// timeout is deterministic.
	const interleaveWork = 32
	interleaved := func() bool {
		for w := 0; w < interleaveWork && queue.Len() > 0; w++ {
			// Without an incumbent, a built candidate first: its exact
			// price is the first incumbent.
			best, built := -1, -1
			for i := range queue {
				r := &queue[i]
				if (r.cands != nil || r.built) && (best < 0 || r.bound < queue[best].bound) {
					best = i
				}
				if r.built && (built < 0 || r.bound < queue[built].bound) {
					built = i
				}
			}
			if built >= 0 && len(res.Top) < top {
				best = built
			}
			if best < 0 {
				if _, ok := step(math.Inf(1)); !ok {
					return false
				}
				continue
			}
			if queue[best].bound > incumbentBound {
				break
			}
			work(heap.Remove(&queue, best).(queued), math.Inf(1))
			if _, ok := left(); !ok {
				return false
			}
		}
		return true
	}
	// drain evaluates the queued skeletons' candidates whose bounds are at
	// most x, best first.
	drain := func(x float64) bool {
		for {
			more, ok := step(x)
			if !ok {
				return false
			}
			if !more {
				return true
			}
		}
	}
	// A level can hold more skeletons than the solver enumerates in the
	// time given (the prefill GEMMs of workloads/llama3-70b-prefill.yaml):
	// after every interleave models the solver proposes without exhausting
	// a level, the queued items are worked on (interleaved), so that a
	// search stopped early has candidates. The proof does not change: it waits
	// for UNSAT.
	const interleave = 1024
	sinceDrain := 0
	// exhausted is the proven bound once no skeleton is left: the
	// incumbent, or +Inf when nothing is legal.
	exhausted := func() float64 {
		if len(res.Top) == top {
			return incumbentBound
		}
		return math.Inf(1)
	}
	for {
		d, ok := left()
		if !ok {
			stopped = true
			break
		}
		var assume []constraints.Lit
		if level < incumbentBound {
			assume = e.boundLits(level)
		}
		st.SAT.Solves++
		r := e.p.SolveContext(opts.Context, d, assume...)
		if r == constraints.Unknown {
			stopped = true
			break
		}
		if r == constraints.Unsat {
			// Every skeleton whose bounds are at most level is queued
			// or done: evaluate the queued ones in bound order.
			if assume != nil {
				enumerated = level
			}
			if !drain(level) {
				stopped = true
				break
			}
			sinceDrain = 0
			if assume == nil {
				// Nothing is left: every skeleton was evaluated or
				// bounded out by the incumbents.
				if !drain(math.Inf(1)) {
					stopped = true
					break
				}
				proven = exhausted()
				break
			}
			proven = math.Max(proven, level)
			level *= 2
			// Stop when no skeleton is left at any level.
			if d, ok := left(); ok && queue.Len() == 0 {
				st.SAT.Solves++
				if r := e.p.SolveContext(opts.Context, d); r == constraints.Unsat {
					proven = exhausted()
					break
				}
			}
			continue
		}
		st.SAT.Models++
		// Read the whole model before adding a clause: adding one may
		// undo the solver's assignment.
		k := e.decode()
		kc := k.candidate()
		// The whole Cluster/Slice placement is queued at once: its
		// candidates, enumerated directly, carry their own bounds, so the
		// solver proposes each placement once rather than each skeleton.
		e.p.Clause(0, e.placementClause()...)
		b := s.placementBound(&kc)
		if b > incumbentBound {
			st.SAT.Placements++
			continue
		}
		heap.Push(&queue, queued{k: k, bound: b, seq: st.SAT.Models, placement: true})
		if sinceDrain++; sinceDrain >= interleave {
			if !interleaved() {
				stopped = true
				break
			}
			sinceDrain = 0
		}
	}
	st.Wall = time.Since(start)
	st.LowerHits, st.LowerMisses = ev.low.hits, ev.low.misses
	st.SAT.Clauses = e.p.Clauses()
	st.Complete = !stopped
	if stopped {
		st.Stopped = opts.stopReason(st.Evaluated)
	}
	if len(res.Top) > 0 {
		res.Best = res.Top[0]
		best := res.Best.Report.Cycles
		lb := math.Min(proven, best)
		if stopped {
			// The unevaluated skeletons: queued, in evaluation, or not yet
			// proposed (bounds above the last level enumerated).
			lb = math.Min(best, math.Min(enumerated, cur))
			if queue.Len() > 0 {
				lb = math.Min(lb, queue.peek().bound)
			}
			lb = math.Max(lb, math.Min(proven, best))
		}
		res.Proof = Proof{Proven: !stopped && !st.Restricted, LowerBound: lb}
		if !res.Proof.Proven {
			res.Proof.Gap = (best - lb) / best
		} else {
			res.Proof.LowerBound = best
		}
	}
	return res, nil
}

// betterSAT orders evaluated candidates for the SAT planner, whose visiting
// order is the solver's: fewer cycles, then the candidate's canonical text,
// so that ties resolve the same way whatever the order.
func betterSAT(a, b *Evaluated) bool {
	if a.Report.Cycles != b.Report.Cycles {
		return a.Report.Cycles < b.Report.Cycles
	}
	return a.key < b.key
}

// queued is a skeleton waiting to be evaluated, with its exact bound, or,
// once expanded, its candidates not yet evaluated with the smallest of
// their bounds.
type queued struct {
	k     skeleton
	bound float64
	seq   int // the order the solver proposed it in, to break ties
	// cands are the candidates left, best first (nil before expansion).
	cands []scored
	// built marks a candidate that built and lowered, queued under its
	// price with DMA lower bounds for its exact pricing.
	built bool
	// placement marks a Cluster/Slice placement the solver proposed,
	// queued under its placement bound until its skeletons are listed.
	placement bool
	c         Candidate
	// legal is set once a candidate of the skeleton was legal; rule is
	// the last rule that rejected one.
	legal bool
	rule  string
}

// scored is a candidate with its candidate bound.
type scored struct {
	c     Candidate
	bound float64
}

// skeletonQueue is a min-heap of skeletons by bound.
type skeletonQueue []queued

func (q skeletonQueue) Len() int { return len(q) }
func (q skeletonQueue) Less(i, j int) bool {
	if q[i].bound != q[j].bound {
		return q[i].bound < q[j].bound
	}
	return q[i].seq < q[j].seq
}
func (q skeletonQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *skeletonQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *skeletonQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
func (q skeletonQueue) peek() queued { return q[0] }
