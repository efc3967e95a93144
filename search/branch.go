package search

import (
	"cmp"
	"container/heap"
	"errors"
	"math"
	"slices"
	"time"

	"tcpmap/constraints"
)

// Branch and bound over the SAT encoding of the skeletons (issue §2).
//
// The solver proposes a skeleton whose encoded lower bounds (bound.go) are
// at most a level X; its Cluster/Slice placement is blocked whole and
// queued under the placement's bound (Space.placementBound), so the solver
// proposes each placement once. One best-first queue holds five kinds of
// items, each under a lower bound of every candidate it stands for:
//
//   - a placement: when it comes first, the enumerator lists its skeletons
//     (factors down to Row and Time) and queues each under its bounds
//     (Space.lowerBounds);
//   - a skeleton: when it comes first, the enumerator lists its tilings
//     (tile factors, tile order and buffering) and queues each under its
//     tiling bound (Space.tilingBound; tilingsOf);
//   - a tiling: when it comes first, its candidates are enumerated and the
//     best of them by their candidate bounds (cbound.go) listed in order,
//     a window at a time (listOf);
//   - a listed tiling, under its best candidate's bound: its candidates
//     are built and lowered in bound order up to the next item's bound,
//     each priced with DMA commands at their lower bound and queued as a
//     built candidate under that price (a built candidate whose main
//     chains' DM bank runs bound it above the incumbent is dropped before
//     the lowering: evaluator.bankBound);
//   - a built candidate: when it comes first, it is priced exactly.
//
// When the solver answers UNSAT under X, every skeleton whose encoded
// bounds are at most X belongs to a placement proposed, and the queue is
// worked on up to X. Every incumbent adds the clause "lower bounds at most
// its cycles" for good and drops the items above it. X doubles until it
// reaches the incumbent; then UNSAT with the queue empty proves the
// incumbent optimal under the cost model. A skeleton none of whose
// candidates is legal is counted (SATStats.IllegalSkeletons) and dropped.
// A level with more placements than the solver lists in the time given is
// interleaved with work on the queue (interleaved).

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
	// them; a skeleton counts once every tiling of it that could beat the
	// incumbent was evaluated), Empty the skeletons with no tiling in the
	// enumerated space.
	Models, Solves, Clauses, IllegalSkeletons, Empty int
	// BoundSkips counts skeletons whose bounds could not beat the
	// incumbent, TilingSkips the tilings of the skeletons split into
	// their tilings whose tiling bounds could not (their candidates are
	// never listed), OrderSkips the branches of a tiling's digit orders
	// (AllOrders) whose bound, with the axes not yet ordered in the zero
	// order, could not when the tiling was first listed (their candidates
	// are never listed either).
	BoundSkips, TilingSkips, OrderSkips int
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
	opts, stop := withMemoryBudget(opts)
	defer stop()
	start := time.Now()
	before := s.Capped()
	res, err := solve(s, opts)
	if err != nil || opts.MaxTiles > 0 || res.Best != nil || res.Stats.Candidates > 0 || !res.Stats.Complete ||
		s.Capped() == before {
		return res, err
	}
	o := opts
	o.MaxTiles = s.MaxTiles() * widenTiles
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
	if opts.MaxListedIllegal > 0 {
		if o.MaxListedIllegal = opts.MaxListedIllegal - res.Stats.Candidates; o.MaxListedIllegal <= 0 {
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
	sv, err := newBnB(s, opts)
	if errors.Is(err, constraints.ErrNoEncoding) {
		return Exhaustive(s, opts)
	}
	if err != nil {
		return nil, err
	}
	sv.run()
	return sv.finish(), nil
}

// Work counts of the branch and bound, in candidates and models, never in
// time, so that a search without a timeout is deterministic.
const (
	// firstEvery, firstLegal: after every firstEvery candidates built, or
	// firstLegal legal ones, the best built candidate that could still
	// beat the incumbent is priced out of turn (bnb.step).
	firstEvery, firstLegal = 1024, 128
	// interleaveWork is the items bnb.interleaved works on at a time.
	interleaveWork = 32
	// interleaveSpread: interleaved works on a built candidate (without an
	// incumbent, firstBuilt) or a listed skeleton (listedFirst) ahead of
	// the queue's best item when its bound is within this factor of that
	// item's, depth first, so that a search stopped early has a plan and
	// a good one (the skeletons' bounds are weak: the prefill RoPE's
	// queue is led by placements at 46 k cycles, its candidates start
	// near 130 k). One bounded further above waits its turn: the prefill
	// qk built candidates of 2 G cycles, 2,000 times the next
	// placement's bound, and priced them exactly, 8 s each (an exact
	// price walks every DMA request).
	interleaveSpread = 16
	// A level can hold more skeletons than the solver enumerates in the
	// time given (the prefill GEMMs of workloads/llama3-70b-prefill.yaml):
	// after every interleave models the solver proposes without exhausting
	// a level, the queued items are worked on (interleaved), so that a
	// search stopped early has candidates. The proof does not change: it
	// waits for UNSAT.
	interleave = 1024
)

// bnb is the SAT planner's branch and bound over one space: the solver
// proposes Cluster/Slice placements level by level (bounds doubling), their
// skeletons and candidates are queued best bound first, built, priced with
// DMA lower bounds and then exactly; the incumbent's cycles become clauses
// that rule out every skeleton bounded above them, and UNSAT with no bound
// assumed proves the incumbent optimal.
type bnb struct {
	s    *Space
	e    *Encoding
	opts Options
	res  *Result
	st   *Stats
	ev   *evaluator
	pool *workers
	// top is the number of plans kept; n the problem's axes.
	top, n int
	// start, every, next and deadline pace the progress reports and the
	// timeout.
	start, next, deadline time.Time
	every                 time.Duration
	// idx numbers the exact evaluations.
	idx int
	// proven: every candidate costs at least this. enumerated is the last
	// level the solver had no skeleton under: every skeleton whose bounds
	// are at most it was queued or evaluated; cur is the bound of the
	// skeleton being evaluated.
	proven, enumerated, cur float64
	// level is the bound the solver's models are held under.
	level float64
	// incumbentBound is the cycles of the worst of the Top when full.
	incumbentBound float64
	stopped        bool
	queue          skeletonQueue
	// walk is the frontier buffer of skeletonQueue.least.
	walk []int32
	// expanded holds tilings listed ahead of their turn by spare
	// workers (expand); speculated, built candidates priced ahead of their
	// turn (exact).
	expanded   map[itemKey]expansion
	speculated map[Candidate]exactOut
	// tracks follows the skeletons whose tilings are queued (finished).
	tracks map[Skeleton]*skeletonTrack
	// refused is the search's cache of order-free refusals, shared by
	// the workers' evaluators.
	refused *refusals
	// outs is evaluateBounds's buffer.
	outs []boundOut
	// window is a skeleton's first window; relists counts the listings
	// past a window.
	window, relists int
	// sinceFirst counts the candidates built since the last one priced
	// out of turn (step), legalSince the legal ones among them;
	// sinceDrain the models proposed since the queue was last drained.
	sinceFirst, legalSince, sinceDrain int
	// sinceSplit counts the skeletons split into their tilings in turn
	// (step) since the queue was last worked on depth first.
	sinceSplit int
}

// newBnB encodes s and readies a search under opts.
func newBnB(s *Space, opts Options) (*bnb, error) {
	start := time.Now()
	if opts.MaxTiles > 0 {
		s = s.WithMaxTiles(opts.MaxTiles)
	}
	if opts.AllOrders {
		s = s.WithAllOrders(true)
	}
	e, err := constraints.NewEncoding(s.Space)
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
	refused := newRefusals()
	for _, w := range pool.evs {
		w.refused = refused
	}
	sv := &bnb{s: s, e: e, opts: opts, res: res, st: &res.Stats, ev: ev, pool: pool, refused: refused,
		top: max(opts.Top, 1), n: len(s.P.Axes), start: start, every: opts.ProgressEvery,
		cur: math.Inf(1), level: s.fixedStartups(), incumbentBound: math.Inf(1),
		expanded: map[itemKey]expansion{}, speculated: map[Candidate]exactOut{}, tracks: map[Skeleton]*skeletonTrack{}}
	if sv.every <= 0 {
		sv.every = time.Second
	}
	if sv.window = opts.window; sv.window <= 0 {
		sv.window = firstWindow
	}
	sv.next = start.Add(sv.every)
	sv.st.Restricted = opts.Where != nil
	if opts.Timeout > 0 {
		sv.deadline = start.Add(opts.Timeout)
	}
	return sv, nil
}

// run proposes placements level by level until UNSAT with no bound
// assumed (the incumbent is proven), or the time or evaluation budget
// runs out (stopped).
func (sv *bnb) run() {
	e, st := sv.e, sv.st
	for {
		d, ok := sv.left()
		if !ok {
			sv.stopped = true
			return
		}
		var assume []constraints.Lit
		if sv.level < sv.incumbentBound {
			assume = sv.boundLits(sv.level)
		}
		st.SAT.Solves++
		r := e.Formula().SolveContext(sv.opts.Context, d, assume...)
		if r == constraints.Unknown {
			sv.stopped = true
			return
		}
		if r == constraints.Unsat {
			// Every skeleton whose bounds are at most level is queued
			// or done: evaluate the queued ones in bound order.
			if assume != nil {
				sv.enumerated = sv.level
			}
			if !sv.drain(sv.level) {
				sv.stopped = true
				return
			}
			sv.sinceDrain = 0
			if assume == nil {
				// Nothing is left: every skeleton was evaluated or
				// bounded out by the incumbents.
				if !sv.drain(math.Inf(1)) {
					sv.stopped = true
					return
				}
				sv.proven = sv.exhausted()
				return
			}
			sv.proven = math.Max(sv.proven, sv.level)
			sv.level *= 2
			// Stop when no skeleton is left at any level.
			if d, ok := sv.left(); ok && sv.queue.Len() == 0 {
				st.SAT.Solves++
				if r := e.Formula().SolveContext(sv.opts.Context, d); r == constraints.Unsat {
					sv.proven = sv.exhausted()
					return
				}
			}
			continue
		}
		st.SAT.Models++
		// Read the whole model before adding a clause: adding one may
		// undo the solver's assignment.
		k := e.Decode()
		kc := k.Candidate()
		// The whole Cluster/Slice placement is queued at once: its
		// candidates, enumerated directly, carry their own bounds, so the
		// solver proposes each placement once rather than each skeleton.
		e.Formula().Clause(0, e.PlacementClause()...)
		b := sv.s.placementBound(&kc)
		if b > sv.incumbentBound {
			st.SAT.Placements++
			continue
		}
		kp := new(Skeleton)
		*kp = k
		heap.Push(&sv.queue, queued{k: kp, bound: b, seq: st.SAT.Models, placement: true})
		if sv.sinceDrain++; sv.sinceDrain >= interleave {
			if !sv.interleaved() {
				sv.stopped = true
				return
			}
			sv.sinceDrain = 0
		}
	}
}

// boundLits returns the encoding's literals stating that a skeleton's
// lower bounds (bound.go) are at most x cycles.
func (sv *bnb) boundLits(x float64) []constraints.Lit {
	handed := -1
	if sv.s.hand != nil {
		handed = sv.s.hand.t
	}
	return sv.e.BoundLits(x, sv.s.fixedStartups(), sv.s.hbmReadBytesPerCycle(), handed)
}

// finish fills the statistics and the proof: proven when the search ran
// out of skeletons unrestricted, else the lower bound the unevaluated
// skeletons leave and the gap to it.
func (sv *bnb) finish() *Result {
	st, res := sv.st, sv.res
	st.Wall = time.Since(sv.start)
	st.LowerHits, st.LowerMisses = sv.ev.low.hits, sv.ev.low.misses
	st.SAT.Clauses = sv.e.Formula().Clauses()
	st.Complete = !sv.stopped
	if sv.stopped {
		st.Stopped = sv.opts.stopReason(st.Evaluated)
		if st.Stopped == StoppedTimeout && sv.opts.listedOut(st) {
			st.Stopped = StoppedBudget
		}
	}
	if len(res.Top) > 0 {
		res.Best = res.Top[0]
		best := res.Best.Report.Cycles
		lb := math.Min(sv.proven, best)
		if sv.stopped {
			// The unevaluated skeletons: queued, in evaluation, or not yet
			// proposed (bounds above the last level enumerated).
			lb = math.Min(best, math.Min(sv.enumerated, sv.cur))
			if sv.queue.Len() > 0 {
				lb = math.Min(lb, sv.queue.peek().bound)
			}
			lb = math.Max(lb, math.Min(sv.proven, best))
		}
		res.Proof = Proof{Proven: !sv.stopped && !st.Restricted, LowerBound: lb}
		if !res.Proof.Proven {
			res.Proof.Gap = (best - lb) / best
		} else {
			res.Proof.LowerBound = best
		}
	}
	return res
}

// left returns the time left (0: no limit) and whether the search
// may go on: neither the deadline nor the evaluation budget is
// reached. The budget is checked where evaluations are accounted, in
// sequential order, so that where it stops does not depend on the
// workers.
func (sv *bnb) left() (time.Duration, bool) {
	if sv.opts.stopped() || sv.opts.MaxEvaluations > 0 && sv.st.Evaluated >= sv.opts.MaxEvaluations || sv.opts.listedOut(sv.st) {
		return 0, false
	}
	if sv.deadline.IsZero() {
		return 0, true
	}
	d := time.Until(sv.deadline)
	return d, d > 0
}

// Tiling lists are windows (listOf): a tiling is listed whole before the
// search builds any of its candidates, often before the first incumbent
// exists, with nothing to cut, yet only its best few are ever built (a
// skeleton of the prefill layer's RoPE holds hundreds of thousands). A
// list holds the best window of them by key (candidate bound, then place
// in the enumeration); the rest are counted with the least of their
// bounds, and enumerated again, after the window's last key, if the
// search reaches them: whole the second time (up to maxWindow). The
// candidates come out in the same order as from one sorted list, so the
// search does not depend on the window (a smaller one saves memory and
// lists again more often: docs/design-notes.md).
const (
	// firstWindow is a tiling's first window; listed again, a tiling is
	// listed whole, up to maxWindow candidates.
	firstWindow, maxWindow = 1 << 14, 1 << 18
)

// boundKey orders a skeleton's candidates: a candidate's bound and its
// place in the enumeration.
type boundKey struct {
	bound float64
	i     int32
}

func (a boundKey) less(b boundKey) bool {
	return a.bound < b.bound || a.bound == b.bound && a.i < b.i
}

// winKey is a windowed candidate's key and its slot in the listing's
// scratch.
type winKey struct {
	key  boundKey
	slot int32
}

// listOf enumerates the candidates of skeleton k's tiling-th tiling
// (enumerate) with their candidate bounds and returns the best size of
// them (by key) in key order, in ev's scratch (one list a worker at a
// time). With from set (listing again), only the candidates after from
// whose bounds are at most prevCut are listed: the others were listed or
// counted before.
//
// Candidates whose bound exceeds cut are counted skipped and left out: the
// incumbent only falls, so they would never be built. Those beyond the
// window are counted in rest, with the least of their bounds.
func (sv *bnb) listOf(ev *evaluator, k *Skeleton, tiling int32, cut float64, from *boundKey, prevCut, prune float64, size int) expansion {
	if cap(ev.scratch) < size+1 {
		ev.scratch = make([]scored, size+1)
	}
	slots := ev.scratch[:size+1]
	h := ev.win[:0]
	probe := int32(0)
	ex := expansion{restBound: math.Inf(1), cut: cut, prune: prune}
	seq := int32(-1)
	add := func(c Candidate) bool {
		seq++
		// Bounded in its slot: a pointer to c itself would move every
		// candidate to the heap.
		s := &slots[probe]
		s.c = c
		s.bound = sv.s.candidateBoundCached(&s.c, &ev.dma)
		key := boundKey{s.bound, seq}
		switch {
		case from != nil && (!from.less(key) || s.bound > prevCut):
			// Listed, or counted skipped, before.
		case s.bound > cut:
			ex.skipped++
		case len(h) < size:
			h = append(h, winKey{key, probe})
			winUp(h, len(h)-1)
			probe = int32(len(h))
		case key.less(h[0].key):
			ex.rest++
			ex.restBound = min(ex.restBound, h[0].key.bound)
			evicted := h[0].slot
			h[0] = winKey{key, probe}
			winDown(h, 0)
			probe = evicted
		default:
			ex.rest++
			ex.restBound = min(ex.restBound, s.bound)
		}
		return true
	}
	sv.enumerate(k, tiling, nil, func(c *Candidate) bool {
		if sv.s.tilingBound(c) > prune {
			ex.orderSkips++
			return false
		}
		return true
	}, add)
	ev.win = h
	if len(h) == 0 {
		return ex
	}
	slices.SortFunc(h, func(a, b winKey) int {
		return cmp.Or(cmp.Compare(a.key.bound, b.key.bound), cmp.Compare(a.key.i, b.key.i))
	})
	ex.list = make([]scored, len(h))
	for j, w := range h {
		ex.list[j] = slots[w.slot]
	}
	ex.last = h[len(h)-1].key
	return ex
}

// winUp and winDown keep h a max-heap by key (container/heap would box
// each pushed key in an interface, an allocation a candidate).
func winUp(h []winKey, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[p].key.less(h[i].key) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func winDown(h []winKey, i int) {
	for {
		l, big := 2*i+1, i
		if l < len(h) && h[big].key.less(h[l].key) {
			big = l
		}
		if r := l + 1; r < len(h) && h[big].key.less(h[r].key) {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// expand lists queued tiling q's first window of candidates (listOf);
// with spare workers, and no user restriction to call concurrently, the
// next tilings the queue holds unlisted are listed meanwhile (pure work,
// kept until they come up).
func (sv *bnb) expand(q *queued) {
	ex, ok := sv.expanded[q.key()]
	if ok {
		delete(sv.expanded, q.key())
		// Listed under an older incumbent: cut as listOf would cut it now
		// (the list is in bound order, the rest after it), so that what is
		// evaluated, and where a budget of evaluations stops, does not
		// depend on the workers that listed ahead.
		n := len(ex.list)
		for n > 0 && ex.list[n-1].bound > sv.incumbentBound {
			n--
		}
		if n < len(ex.list) {
			ex.skipped += len(ex.list) - n + ex.rest
			ex.list, ex.rest = ex.list[:n], 0
		}
	} else {
		ks := []itemKey{q.key()}
		for sv.opts.Where == nil && len(ks) < len(sv.pool.evs) {
			var best int
			best, sv.walk = sv.queue.least(sv.incumbentBound, sv.walk, func(r *queued) bool {
				// Compared in place: an itemKey copies the skeleton.
				return !r.built && !r.placement && !r.listed && r.tiling != 0 && !r.ahead && !(r.tiling == q.tiling && *r.k == *q.k)
			})
			if best < 0 {
				break
			}
			sv.queue[best].ahead = true
			ks = append(ks, sv.queue[best].key())
		}
		exs := make([]expansion, len(ks))
		cut := sv.incumbentBound
		sv.pool.each(len(ks), func(ev *evaluator, i int) {
			exs[i] = sv.listOf(ev, &ks[i].k, ks[i].tiling, cut, nil, 0, cut, sv.window)
		})
		for i := 1; i < len(ks); i++ {
			sv.expanded[ks[i]] = exs[i]
		}
		ex = exs[0]
	}
	sv.st.Candidates += len(ex.list) + ex.rest + ex.skipped
	sv.st.Skipped += ex.skipped
	sv.st.SAT.OrderSkips += ex.orderSkips
	q.listed = true
	q.take(ex)
}

// Tilings are listed lazily: a skeleton that comes first is split into its
// tilings (its tile factors, tile order and buffering: the candidates the
// enumerator shows at StageTiles), each queued under its tiling bound
// (Space.tilingBound), and a tiling's candidates are listed only when it
// comes first. The skeleton bounds know nothing of tiles or of the serial
// path through them: on GEMM 4096³ every one of the 296 skeletons listed
// is bounded under the optimum (621,288 cycles), while only 204 of their
// 2,598 tilings are, holding 3,618 of their 285,460 candidates.

// enumerate enumerates skeleton k's candidates of its tiling-th tiling
// (1-based, in the enumeration's order); with tiling 0 it shows each of
// the skeleton's tilings to at instead, and enumerates none of their
// candidates. digits, when set, is shown each partial candidate at
// StageDigits (every digit order, Space.AllOrders): false drops the
// branch.
func (sv *bnb) enumerate(k *Skeleton, tiling int32, at func(*Candidate), digits func(*Candidate) bool, yield func(Candidate) bool) {
	n := int32(0)
	tiles := func(stage Stage, c *Candidate) bool {
		if stage == StageDigits && digits != nil {
			return digits(c)
		}
		if stage != StageTiles {
			return true
		}
		n++
		if tiling == 0 {
			at(c)
			return false
		}
		return n == tiling
	}
	if sv.opts.Where == nil {
		sv.s.EnumerateSkeletonWhere(k.Candidate(), tiles, yield)
		return
	}
	sv.s.EnumerateWhere(func(stage Stage, c *Candidate) bool {
		return k.Matches(stage, c, sv.n) && sv.opts.Where(stage, c) && tiles(stage, c)
	}, yield)
}

// tilingsOf lists the tilings of skeleton q, each under the larger of q's
// bound and its tiling bound, sorted by bound (then by place), and queues
// the first: a skeleton's next tiling is queued only when the one before
// it comes first (nextTiling), so the queue holds one unlisted tiling a
// skeleton rather than all of them (the prefill layer's qk split some 18
// million in its first minute, and moving the queue took half of it).
// Those the incumbent rules out are counted (SATStats.TilingSkips) and
// dropped.
func (sv *bnb) tilingsOf(q *queued) {
	n := int32(0)
	var list []pendingTiling
	sv.enumerate(q.k, 0, func(c *Candidate) {
		n++
		b := max(q.bound, sv.s.tilingBound(c))
		if b > sv.incumbentBound {
			sv.st.SAT.TilingSkips++
			return
		}
		list = append(list, pendingTiling{bound: b, tiling: n})
	}, nil, func(Candidate) bool { return false })
	if n == 0 {
		sv.st.SAT.Empty++
	}
	if len(list) == 0 {
		return
	}
	slices.SortFunc(list, func(a, b pendingTiling) int {
		if c := cmp.Compare(a.bound, b.bound); c != 0 {
			return c
		}
		return cmp.Compare(a.tiling, b.tiling)
	})
	tr := &skeletonTrack{open: len(list), pending: list}
	sv.tracks[*q.k] = tr
	sv.nextTiling(q.k, q.seq, tr)
}

// nextTiling queues the next tiling of skeleton k (tracked by tr), or,
// when the incumbent rules it out, counts it and the rest, which are
// bounded no lower, as skipped (SATStats.TilingSkips).
func (sv *bnb) nextTiling(k *Skeleton, seq int, tr *skeletonTrack) {
	if tr == nil || len(tr.pending) == 0 {
		return
	}
	p := tr.pending[0]
	if p.bound > sv.incumbentBound {
		sv.st.SAT.TilingSkips += len(tr.pending)
		tr.pending = nil
		return
	}
	tr.pending = tr.pending[1:]
	heap.Push(&sv.queue, queued{k: k, tiling: p.tiling, bound: p.bound, seq: seq})
}

// finished records that tiling q has no candidate left to evaluate; once
// every queued tiling of its skeleton is, a skeleton none of whose
// candidates was legal is counted (SATStats.IllegalSkeletons).
func (sv *bnb) finished(q *queued) {
	tr := sv.tracks[*q.k]
	if tr == nil {
		return
	}
	tr.legal = tr.legal || q.legal
	if q.rule != "" {
		tr.rule = q.rule
	}
	if tr.open--; tr.open > 0 {
		return
	}
	delete(sv.tracks, *q.k)
	if !tr.legal && tr.rule != "" {
		sv.st.SAT.IllegalSkeletons++
	}
}

// relist lists q's next window: the candidates after its last one.
func (sv *bnb) relist(q *queued) {
	// A tiling evaluated past its first window is listed whole (up to
	// maxWindow): enumerating it again a window at a time took 37 of the
	// prefill RoPE's first 60 s.
	sv.relists++
	ex := sv.listOf(sv.pool.evs[0], q.k, q.tiling, sv.incumbentBound, &q.last, q.cut, q.prune, max(min(q.rest, maxWindow), 1))
	sv.st.Skipped += ex.skipped
	q.take(ex)
}

// take makes ex q's window.
func (q *queued) take(ex expansion) {
	q.cands, q.rest, q.restBound, q.cut, q.last, q.prune = ex.list, ex.rest, ex.restBound, ex.cut, ex.last, ex.prune
}

// skeletons queues the skeletons of placement k (its Cluster/Slice
// factors), each under its bounds, as the enumerator lists them up to
// their Row and Time factors; those the incumbent rules out are
// dropped.
func (sv *bnb) skeletons(k *Skeleton, seq int) {
	seen := map[Skeleton]bool{} // the untiled and tiled passes list each
	sv.s.EnumerateWhere(func(stage Stage, c *Candidate) bool {
		if stage == StageSlices && !k.Matches(stage, c, sv.n) {
			return false
		}
		if sv.opts.Where != nil && !sv.opts.Where(stage, c) {
			return false
		}
		if stage != StageRows {
			return true
		}
		sk := constraints.SkeletonOf(c)
		if seen[sk] {
			return false
		}
		seen[sk] = true
		if b := sv.s.lowerBounds(c).max(); b > sv.incumbentBound {
			sv.st.SAT.BoundSkips++
		} else {
			kp := new(Skeleton)
			*kp = sk
			heap.Push(&sv.queue, queued{k: kp, bound: b, seq: seq})
		}
		return false // the skeleton's candidates wait for its turn
	}, func(Candidate) bool { return true })
}

// improved records a better incumbent and the clauses it makes
// permanent.
func (sv *bnb) improved() {
	if len(sv.res.Top) < sv.top || sv.res.Top[sv.top-1].Report.Cycles >= sv.incumbentBound {
		return
	}
	sv.incumbentBound = sv.res.Top[sv.top-1].Report.Cycles
	// For good: only skeletons whose bounds could still place among
	// the Top.
	for _, l := range sv.boundLits(sv.incumbentBound) {
		sv.e.Formula().Clause(0, l)
	}
}

// progress reports the statistics to opts.Progress once every
// ProgressEvery.
func (sv *bnb) progress() {
	if sv.opts.Progress != nil && time.Now().After(sv.next) {
		sv.st.Wall = time.Since(sv.start)
		sv.opts.Progress(*sv.st)
		sv.next = time.Now().Add(sv.every)
	}
}

// losesTie reports whether a candidate priced at least b cannot enter
// a full Top: b ties its worst, and ties go to the smaller candidate
// text (betterSAT), so only a smaller text could still enter.
func (sv *bnb) losesTie(c *Candidate, b float64) bool {
	return len(sv.res.Top) == sv.top && b == sv.incumbentBound && c.String(sv.s.P) > sv.res.Top[sv.top-1].key
}

// boundChunk is how many candidates the workers build and bound at a
// time. It does not depend on the workers: the order-free refusals a
// chunk finds are cached after it, in the candidates' order, so that the
// rule each refusal is counted under is the same for any number of
// workers (a cached refusal names its rule where a fresh lowering may
// report an earlier stage's first).
const boundChunk = 64

// evaluateBounds is evaluate with pruning: the candidates whose
// bounds are at most x (the incumbent does not move meanwhile) are
// built, lowered and priced with DMA lower bounds by the workers, a
// chunk at a time, and accounted in order.
func (sv *bnb) evaluateBounds(q *queued, x float64) []scored {
	list := q.cands
	chunk := boundChunk
	for len(list) > 0 && list[0].bound <= x {
		k, limit := 0, chunk
		if sv.opts.MaxEvaluations > 0 {
			limit = min(limit, sv.opts.MaxEvaluations-sv.st.Evaluated)
		}
		for k < len(list) && k < limit && list[k].bound <= x {
			k++
		}
		if k == 0 {
			break // the budget is spent (left says so)
		}
		if cap(sv.outs) < k {
			sv.outs = make([]boundOut, k)
		}
		sv.outs = sv.outs[:k]
		// The cut for the bank-run bound: the incumbent as the chunk
		// starts, the same for every worker (it only falls, so a
		// candidate above it is above it when accounted).
		cut := sv.incumbentBound
		if sv.opts.NoPrune {
			cut = math.Inf(1)
		}
		sv.pool.bounds(list[:k], sv.outs, cut)
		sv.sinceFirst += k
		for i := range k {
			if o := &sv.outs[i]; o.lowered {
				sv.refused.put(&list[i].c, o.err)
			}
		}
		for i := range k {
			sc := &list[i]
			sv.st.Evaluated++
			if sv.outs[i].early {
				sv.st.BankBounded++
				q.legal = true // not known illegal
			} else if b, why, ok := sv.ev.account(sv.outs[i]); !ok {
				q.rule = why
			} else {
				q.legal = true
				sv.st.Legal++
				sv.legalSince++
				if b = max(b, sc.bound); b > sv.incumbentBound || sv.losesTie(&sc.c, b) {
					sv.st.Pruned++
				} else {
					c := sc.c
					heap.Push(&sv.queue, queued{built: true, c: &c, bound: b, seq: q.seq})
				}
			}
			sv.progress()
			if _, ok := sv.left(); !ok {
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
	return list
}

// evaluate builds and lowers q's candidates in bound order while
// their bounds are at most x, prices each with DMA lower bounds and
// queues the legal ones under that price for their exact pricing
// (step); it returns the candidates left. With NoPrune each is priced
// exactly at once.
func (sv *bnb) evaluate(q *queued, x float64) []scored {
	if !sv.opts.NoPrune {
		return sv.evaluateBounds(q, x)
	}
	list := q.cands
	for len(list) > 0 && list[0].bound <= x {
		sc := list[0]
		list = list[1:]
		r, why := sv.ev.evaluateWhy(sv.idx, &sc.c, nil)
		sv.st.Evaluated++
		sv.idx++
		if r != nil {
			q.legal = true
			sv.res.keepBy(r, sv.top, betterSAT)
			sv.improved()
		} else if why != "" {
			q.rule = why
		}
		sv.progress()
		x = min(x, sv.incumbentBound)
		if _, ok := sv.left(); !ok {
			break
		}
	}
	return list
}

// exact prices built item q exactly, and with spare workers the next
// built items the queue would pop while the incumbent allows them
// (speculated, used when they come up).
func (sv *bnb) exact(q *queued) exactOut {
	cs := []Candidate{*q.c}
	var picked []int
	for len(cs) < len(sv.pool.evs) {
		best := -1
		for i := range sv.queue {
			r := &sv.queue[i]
			if !r.built || r.bound > sv.incumbentBound || slices.Contains(picked, i) {
				continue
			}
			if _, done := sv.speculated[*r.c]; done || *r.c == *q.c {
				continue
			}
			if best < 0 || sv.queue.Less(i, best) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		picked = append(picked, best)
		cs = append(cs, *sv.queue[best].c)
	}
	outs := make([]exactOut, len(cs))
	sv.pool.exacts(cs, outs)
	for k := 1; k < len(cs); k++ {
		sv.speculated[cs[k]] = outs[k]
	}
	return outs[0]
}

// work prices, expands or evaluates queued item q (see step) and
// queues what is left of it.
func (sv *bnb) work(q queued, x float64) {
	sv.cur = q.bound
	switch {
	case q.built && sv.losesTie(q.c, q.bound):
		delete(sv.speculated, *q.c)
		sv.st.Pruned++
	case q.built:
		o, ok := sv.speculated[*q.c]
		if ok {
			delete(sv.speculated, *q.c)
		} else {
			o = sv.exact(&q)
		}
		r, _ := sv.ev.accountExact(sv.idx, o)
		sv.st.Evaluated++
		sv.idx++
		if r != nil {
			sv.res.keepBy(r, sv.top, betterSAT)
			sv.improved()
		} else {
			sv.st.Legal-- // the exact price found it invalid
		}
		sv.progress()
	case q.placement:
		sv.skeletons(q.k, q.seq)
	case !q.listed && q.tiling == 0:
		sv.tilingsOf(&q)
	case !q.listed:
		sv.nextTiling(q.k, q.seq, sv.tracks[*q.k])
		sv.expand(&q)
	default:
		upto := x
		if sv.queue.Len() > 0 {
			upto = min(upto, sv.queue.peek().bound)
		}
		limit := max(upto, q.bound)
		for {
			q.cands = sv.evaluate(&q, limit)
			// The window is done and the next candidates are due: list
			// them now, as one sorted list would go on.
			if len(q.cands) > 0 || q.rest == 0 || q.restBound > min(limit, sv.incumbentBound) {
				break
			}
			if _, ok := sv.left(); !ok {
				break
			}
			sv.relist(&q)
		}
	}
	sv.cur = math.Inf(1)
	if q.listed && len(q.cands) == 0 && q.rest == 0 {
		sv.finished(&q)
	}
	if q.listed && (len(q.cands) > 0 || q.rest > 0) {
		if len(q.cands) > 0 {
			q.bound = max(q.bound, q.cands[0].bound)
		} else {
			q.bound = max(q.bound, q.restBound)
		}
		heap.Push(&sv.queue, q)
	}
}

// step works on the best queued item whose bound is at most x: a
// skeleton it expands, a skeleton's candidates it evaluates up to the
// next item's bound (best first across skeletons), a built candidate
// it prices exactly. It drops the queue when the incumbent rules it
// all out. more reports whether an item was worked on, ok whether
// time is left.
func (sv *bnb) step(x float64) (more, ok bool) {
	if sv.queue.Len() == 0 {
		return false, true
	}
	// After every firstEvery candidates built, or firstLegal legal
	// ones, the best built candidate that could still beat the
	// incumbent is priced out of turn: a large space may take long to
	// reach its turn (llama3-70b-prefill's RoPE and projections), and a
	// search stopped early needs a candidate, and a good one. Counted in
	// candidates, not time: the search stays deterministic.
	if sv.sinceFirst >= firstEvery || sv.legalSince >= firstLegal {
		sv.sinceFirst, sv.legalSince = 0, 0
		built := -1
		for i := range sv.queue {
			if r := &sv.queue[i]; r.built && r.bound < sv.incumbentBound && (built < 0 || r.bound < sv.queue[built].bound) {
				built = i
			}
		}
		if built >= 0 {
			sv.work(heap.Remove(&sv.queue, built).(queued), x)
			_, ok = sv.left()
			return true, ok
		}
	}
	q := sv.queue.peek()
	if q.bound > sv.incumbentBound {
		for _, r := range sv.queue {
			switch {
			case r.built:
				sv.st.Pruned++
			case !r.listed && r.tiling == 0:
				sv.st.SAT.BoundSkips++
			case !r.listed:
				sv.st.SAT.TilingSkips++
			default:
				sv.st.Skipped += len(r.cands) + r.rest
			}
		}
		for _, tr := range sv.tracks {
			sv.st.SAT.TilingSkips += len(tr.pending)
			tr.pending = nil
		}
		sv.queue = sv.queue[:0]
		return false, true
	}
	if q.bound > x {
		return false, true
	}
	q = heap.Pop(&sv.queue).(queued)
	split := !q.built && !q.placement && !q.listed && q.tiling == 0
	sv.work(q, x)
	if _, ok = sv.left(); !ok {
		return true, false
	}
	// Skeletons' bounds can tie under all their tilings' (dive): after
	// every interleave skeletons split in turn, the queue is worked on
	// depth first a while, so that a search stopped early has a plan.
	if split {
		if sv.sinceSplit++; sv.sinceSplit >= interleave {
			sv.sinceSplit = 0
			return true, sv.interleaved()
		}
	}
	return true, true
}

// interleaved works interleaveWork times on the queue: on the first built
// candidate (firstBuilt), on the best listed item (listedFirst), each
// within interleaveSpread of the queue's best bound, else on the queue's best
// item (step). It counts work, not time, so that a search without a
// timeout is deterministic.
func (sv *bnb) interleaved() bool {
	for w := 0; w < interleaveWork && sv.queue.Len() > 0; w++ {
		i := sv.dive()
		if i < 0 {
			if _, ok := sv.step(math.Inf(1)); !ok {
				return false
			}
			continue
		}
		if sv.queue[i].bound > sv.incumbentBound {
			break
		}
		sv.work(heap.Remove(&sv.queue, i).(queued), math.Inf(1))
		if _, ok := sv.left(); !ok {
			return false
		}
	}
	return true
}

// dive returns the item a depth-first search works on next, or -1: the
// first built candidate (firstBuilt), else the best listed tiling or built
// candidate (listedFirst), else the best tiling not listed yet
// (tilingFirst), each within interleaveSpread of the queue's best bound.
// Skeletons' bounds can tie far under every tiling's: each of the prefill
// qk's 500,000 and more skeletons is bounded at 1,390,363 cycles (its
// output's write), its tilings from 1,397,363 up, so best first splits
// every skeleton into its tilings (minutes) before it lists one.
func (sv *bnb) dive() int {
	if i := sv.firstBuilt(); i >= 0 {
		return i
	}
	if i := sv.listedFirst(); i >= 0 {
		return i
	}
	return sv.tilingFirst()
}

// tilingFirst returns the unlisted tiling with the lowest bound when that
// bound is within interleaveSpread of the queue's best item's, or -1.
func (sv *bnb) tilingFirst() int {
	best := -1
	for i := range sv.queue {
		if r := &sv.queue[i]; !r.listed && !r.built && !r.placement && r.tiling != 0 && (best < 0 || sv.queue.Less(i, best)) {
			best = i
		}
	}
	if best >= 0 && sv.queue[best].bound > interleaveSpread*sv.queue.peek().bound {
		return -1
	}
	return best
}

// listedFirst returns the listed skeleton or built candidate with the
// lowest bound when that bound is within interleaveSpread of the queue's best
// item's, or -1.
func (sv *bnb) listedFirst() int {
	best := -1
	for i := range sv.queue {
		if r := &sv.queue[i]; (r.listed || r.built) && (best < 0 || r.bound < sv.queue[best].bound) {
			best = i
		}
	}
	if best >= 0 && sv.queue[best].bound > interleaveSpread*sv.queue.peek().bound {
		return -1
	}
	return best
}

// firstBuilt returns, while there is no incumbent, the built candidate
// with the lowest bound when that bound is within interleaveSpread of the
// queue's best item's: its exact price, out of turn, is the first
// incumbent of a search that may be stopped early. Otherwise -1.
func (sv *bnb) firstBuilt() int {
	if len(sv.res.Top) >= sv.top || sv.queue.Len() == 0 {
		return -1
	}
	built := -1
	for i := range sv.queue {
		if r := &sv.queue[i]; r.built && (built < 0 || sv.queue.Less(i, built)) {
			built = i
		}
	}
	if built < 0 || sv.queue[built].bound > interleaveSpread*sv.queue.peek().bound {
		return -1
	}
	return built
}

// drain evaluates the queued skeletons' candidates whose bounds are at
// most x, best first.
func (sv *bnb) drain(x float64) bool {
	for {
		more, ok := sv.step(x)
		if !ok {
			return false
		}
		if !more {
			return true
		}
	}
}

// exhausted is the proven bound once no skeleton is left: the
// incumbent, or +Inf when nothing is legal.
func (sv *bnb) exhausted() float64 {
	if len(sv.res.Top) == sv.top {
		return sv.incumbentBound
	}
	return math.Inf(1)
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
	// k is the skeleton (shared by its tilings' items: the queue holds
	// millions of tilings in a large space, each item a pointer less
	// than a copy); nil for a built candidate.
	k     *Skeleton
	bound float64
	seq   int // the order the solver proposed it in, to break ties
	// tiling is 0 for a skeleton whose tilings are not listed yet, else
	// the skeleton's tiling (1-based, in the enumeration's order) whose
	// candidates the item holds (tilingsOf).
	tiling int32
	// cands are the candidates left of the window listed, best first;
	// listed is set once the skeleton is listed.
	cands  []scored
	listed bool
	// ahead is set once the tiling is listed ahead of its turn (expand:
	// its list waits in bnb.expanded).
	ahead bool
	// rest counts the candidates beyond the window whose bounds were at
	// most cut when listed, restBound the least of their bounds, last the
	// window's last key.
	rest      int
	restBound float64
	cut       float64
	last      boundKey
	// prune is the incumbent's cycles when the tiling was first listed:
	// every listing of it drops the digit-order branches bounded above
	// it, so that each lists the same candidates in the same order
	// (listOf).
	prune float64
	// built marks a candidate that built and lowered, queued under its
	// price with DMA lower bounds for its exact pricing.
	built bool
	// placement marks a Cluster/Slice placement the solver proposed,
	// queued under its placement bound until its skeletons are listed.
	placement bool
	// c is a built item's candidate.
	c *Candidate
	// legal is set once a candidate of the skeleton was legal, or was
	// bounded out by its bank run unchecked (not known illegal); rule is
	// the last rule that rejected one.
	legal bool
	rule  string
}

// itemKey names a queued tiling: its skeleton and its place.
type itemKey struct {
	k      Skeleton
	tiling int32
}

func (q *queued) key() itemKey { return itemKey{*q.k, q.tiling} }

// skeletonTrack follows a skeleton's tilings through the search: how many
// tilings, queued or pending, are not done yet, whether a candidate of one was legal,
// and the last rule that refused one.
type skeletonTrack struct {
	open  int
	legal bool
	rule  string
	// pending are the tilings not queued yet, best bound first
	// (nextTiling).
	pending []pendingTiling
}

// pendingTiling is a skeleton's tiling waiting for its turn to be queued:
// its place in the skeleton's enumeration and its bound.
type pendingTiling struct {
	bound  float64
	tiling int32
}

// scored is a candidate with its candidate bound.
type scored struct {
	c     Candidate
	bound float64
}

// expansion is a window of a skeleton's candidates (bnb.listOf): the best
// of those that could still beat the incumbent (cut), in key order, and
// how many could not (skipped); rest counts those beyond the window,
// restBound the least of their bounds, last is the window's last key.
type expansion struct {
	list          []scored
	skipped, rest int
	restBound     float64
	cut, prune    float64
	last          boundKey
	// orderSkips counts the digit-order branches dropped (SATStats).
	orderSkips int
}

// skeletonQueue is a min-heap of skeletons by bound.
type skeletonQueue []queued

func (q skeletonQueue) Len() int { return len(q) }
func (q skeletonQueue) Less(i, j int) bool {
	if q[i].bound != q[j].bound {
		return q[i].bound < q[j].bound
	}
	if q[i].seq != q[j].seq {
		return q[i].seq < q[j].seq
	}
	return q[i].tiling < q[j].tiling
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

// least returns the index of the least item (by Less, then by index, as a
// scan of the slice in order keeps the first of equal items) whose bound
// is at most limit and that ok accepts, or -1. It walks the heap best
// first from its root (walk is its frontier, returned for reuse): a child
// is never less than its parent, so the walk visits only the items less
// than the one it returns, and skips every subtree whose root is bounded
// past limit, where a scan would visit the whole queue (thousands of
// tilings listed, and each expand asking: 15 % of a search that lists
// millions of candidates without a legal one).
func (q skeletonQueue) least(limit float64, walk []int32, ok func(*queued) bool) (int, []int32) {
	before := func(a, b int32) bool {
		return q.Less(int(a), int(b)) || !q.Less(int(b), int(a)) && a < b
	}
	walk = walk[:0]
	if len(q) > 0 {
		walk = append(walk, 0)
	}
	for len(walk) > 0 {
		i := walk[0]
		n := len(walk) - 1
		walk[0] = walk[n]
		walk = walk[:n]
		for j := 0; ; { // sift down
			l, m := 2*j+1, j
			if l < n && before(walk[l], walk[m]) {
				m = l
			}
			if r := l + 1; r < n && before(walk[r], walk[m]) {
				m = r
			}
			if m == j {
				break
			}
			walk[j], walk[m] = walk[m], walk[j]
			j = m
		}
		if q[i].bound > limit {
			continue
		}
		if ok(&q[i]) {
			return int(i), walk
		}
		for c := 2*i + 1; c <= 2*i+2 && int(c) < len(q); c++ {
			walk = append(walk, c)
			for j := len(walk) - 1; j > 0; { // sift up
				p := (j - 1) / 2
				if !before(walk[j], walk[p]) {
					break
				}
				walk[j], walk[p] = walk[p], walk[j]
				j = p
			}
		}
	}
	return -1, walk
}
