package search

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"tcpmap/constraints"
	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// An einsum's output left in DM for the op kernels after it
// (docs/design-notes.md "Einsum boundaries in DM"): a resident chain
// whose first op is an einsum. The op kernels after it are the pair
// space's (resident.go): every candidate with its handed-over tiles each
// in a DM buffer of its own. The einsum's side is its mapspace searched by
// the branch and bound (Solve) over the candidates whose output is stored
// from DM buffers no later tile reuses (takeHandoffs), which some kernel
// of the next op takes as they lie; each is priced at its own cycles (no
// store of its output) plus the cheapest chain of op kernels after it
// moved to its output's addresses (extendChain), less floor, a lower
// bound on every such chain that does not depend on the handover: the
// sum over the ops of the least HBM roofline of their kernels with their
// handed-over tensors left out (cost.Report's Roofline, which no kernel
// beats: TestOpRooflineBound; it counts only HBM bytes and MACs, which
// moving a kernel's DM tensors leaves alone). The space's bounds leave
// out the output's store (Space.hand: tensorDMA, fixedStartups,
// serialBound, storeTail) and stay below the einsum's own cycles, so they
// stay below that price: the search's proof holds for the pair. Its
// output tiles must each keep a buffer of their own, so only candidates
// whose output tiles are stored from distinct buffers (one tile holds it
// whole, in practice) are in the space: the einsum builder keeps no
// buffer for a handover (left open in the design notes). The next op's
// kernels that take the einsum's DM tensors as they lie are its own
// candidates whose keys match, and those that adopt the einsum's layout
// (opSpace.adopt), since the contraction's output layouts are not the op
// builders'. Graph planning does not offer this direction (addResident;
// docs/spec-decisions.md "DM residency across kernels"): it offers the
// mirror, an op chain handing its output to an einsum
// (planChainToEinsum).

// einsumHand is a resident chain's einsum side (Space.hand).
type einsumHand struct {
	// t is the handed-over tensor (TensorOut, or an input's index) and x
	// its name: the output left in DM for the kernels after the einsum,
	// or an input the kernels before it left there.
	t int
	x string
	// takes reports whether some chain of kernels on the other side
	// leaves or takes handover key of DM tensor d (memoized in taken).
	takes func(key string, d *kernel.Tensor) bool
	taken sync.Map
	// floor is at most the cycles of the kernels on the other side,
	// whatever the handover.
	floor float64
	// cont is the cheapest chain of kernels on the other side given the
	// einsum's handover (an error when none), memoized in memo.
	cont func(key string, addrs []int64, d *kernel.Tensor) (*chainLink, error)
	mu   sync.Mutex
	memo map[string]contResult
}

// contResult is one of cont's answers.
type contResult struct {
	link *chainLink
	err  error
}

// next is cont, memoized (cont is a pure function of the handover: two
// workers that ask at once compute the same answer).
func (h *einsumHand) next(key string, addrs []int64, d *kernel.Tensor) (*chainLink, error) {
	var b strings.Builder
	b.WriteString(key)
	for _, a := range addrs {
		b.WriteByte('@')
		b.WriteString(strconv.FormatInt(a, 10))
	}
	k := b.String()
	h.mu.Lock()
	r, ok := h.memo[k]
	h.mu.Unlock()
	if ok {
		return r.link, r.err
	}
	l, err := h.cont(key, addrs, d)
	h.mu.Lock()
	h.memo[k] = contResult{l, err}
	h.mu.Unlock()
	return l, err
}

// more is what the search adds to an einsum kernel's cycles for its
// handover: the cheapest chain on the other side, less the floor.
func (h *einsumHand) more(key string, addrs []int64, d *kernel.Tensor) (float64, error) {
	l, err := h.next(key, addrs, d)
	if err != nil {
		return 0, err
	}
	if l.cost < h.floor {
		return 0, fmt.Errorf("search: the kernels beside the einsum take %.0f cycles, below their floor %.0f", l.cost, h.floor)
	}
	return l.cost - h.floor, nil
}

// handoverError is an einsum candidate outside a resident pair's space:
// its output is not stored from buffers of its own, or no kernel of the
// next op takes it as it lies in DM (counted as "resident-handover").
type handoverError struct{ why string }

func (e handoverError) Error() string { return e.why }

// handover moves the stores of the handed-over output out of lowered
// program p of a resident pair's einsum side into its handoffs (nothing
// without Space.hand), keeping their key and addresses for priceExact.
func (e *evaluator) handover(p *kernel.Program) error {
	h := e.s.hand
	if h == nil {
		return nil
	}
	kind, why := kernel.OpToHBM, "the output %s is not stored from DM buffers no later tile reuses"
	if h.t != TensorOut {
		kind, why = kernel.OpToDM, "the input %s is not loaded into DM buffers of its own, each once"
	}
	es := takeHandoffs(p, h.x, kind)
	if es == nil || !distinctDM(es) {
		return handoverError{fmt.Sprintf(why, h.x)}
	}
	key, addrs := handover(es)
	d := es[0].dm
	if len(es) > 1 {
		d = nil // only a handover of one tile is adopted
	}
	ok, known := h.taken.Load(key)
	if !known {
		ok, _ = h.taken.LoadOrStore(key, h.takes(key, d))
	}
	if !ok.(bool) {
		return handoverError{fmt.Sprintf("no chain of kernels beside the einsum hands %s over as it lies in DM", h.x)}
	}
	e.handKey, e.handAddrs, e.handDM = key, addrs, d
	return nil
}

// einsumChainOptions are the options of a resident chain's einsum
// search: no padding (a padded space is another problem), and budgets of
// evaluations (residentEvaluations) and of candidates listed with none
// taken (residentListed), so that the search ends on any machine with the
// same plan (a search they stop claims a gap, not the optimum).
func einsumChainOptions(spec *engines.Spec) Options {
	return Options{Spec: spec, NoPad: true, MaxEvaluations: residentEvaluations, MaxListedIllegal: residentListed}
}

// residentListed stops a resident chain's einsum search that has listed
// this many candidates with none taking a handover of the chain's
// (Options.MaxListedIllegal): where the two sides' layouts meet, the
// first match comes early (the attention head's pv: after more than
// 1,000), and where they do not, the budget of evaluations would take
// minutes to say so (the decode layer's down_proj: 50 s; at 2,000 its
// listing stops in about a second, session 35).
const residentListed = 2_000

// residentEvaluations is the evaluation budget of a resident chain's
// einsum search: most candidates the bounds let by are refused for
// their handover (no kernel takes it) before one is priced, so it is
// larger than a layout class's (DefaultLayoutEvaluations). The attention
// head's pv taking p from softmax is proven in 24,073 evaluations
// (session 35), most of them refusals.
const residentEvaluations = 200_000

// einsumResidentVersion names the einsum side of resident chains in the
// chain cache's keys.
const einsumResidentVersion = "einsum resident 3: branch and bound over the einsum, the op chain's handovers priced relocated, 2,000 listed without a match stop it; a handed tensor's tiles each in a buffer of their own"

// planEinsumChain is PlanChain for a chain whose first op is an einsum
// (the comment at the top of this file).
func planEinsumChain(w *workload.Workload, ops []*workload.Op, xs []string, spec *engines.Spec, opts Options) (*ResidentChain, error) {
	spaces, _, err := chainSpaces(w, ops, xs, spec)
	if err != nil {
		return nil, err
	}
	p, err := constraints.NewProblem(w, ops[0].Name)
	if err != nil {
		return nil, err
	}
	if p.Out.Name != xs[0] {
		return nil, fmt.Errorf("tensor %s is not %s's output", xs[0], ops[0].Name)
	}
	// Each op's kernels with their handed-over tensors taken: the next
	// op's handover keys (and which candidates take each), and the floor.
	byKey := map[string][]int{}
	floor := 0.0
	for k := 1; k < len(ops); k++ {
		out := ""
		if k < len(xs) {
			out = xs[k]
		}
		least, keys, err := opFloor(spec, spaces[k], xs[k-1], out)
		if err != nil {
			return nil, err
		}
		if k == 1 {
			for i, key := range keys {
				if key != "" {
					byKey[key] = append(byKey[key], i)
				}
			}
		}
		floor += least
	}
	// The kernels after the einsum, given its handover: the next op's
	// candidates whose handover key is the einsum's, and those that adopt
	// its DM tensor's layout (adopt).
	first := func(key string, d *kernel.Tensor) []spaceCand {
		var scs []spaceCand
		for _, i := range byKey[key] {
			scs = append(scs, spaceCand{spaces[1], spaces[1].cands[i]})
		}
		if d != nil {
			scs = append(scs, spaces[1].adopt(d)...)
		}
		return scs
	}
	rest := func(key string, addrs []int64, d *kernel.Tensor, stats []*Stats) (*chainLink, error) {
		links := []chainLink{{key: key, addrs: addrs}}
		var best *chainLink
		for k := 1; k < len(ops); k++ {
			out := ""
			if k < len(xs) {
				out = xs[k]
			}
			scs := spaces[k].all()
			if k == 1 {
				scs = first(key, d)
			}
			next, b, _, err := extendChain(spec, links, scs, xs[k-1], out, stats[k])
			if err != nil {
				return nil, err
			}
			links, best = next, b
		}
		if best == nil {
			return nil, handoverError{fmt.Sprintf("no chain of kernels after %s takes %s as it lies in DM", ops[0].Name, xs[0])}
		}
		return best, nil
	}
	scratch := func() []*Stats { return chainStats(len(ops)) }
	h := &einsumHand{t: TensorOut, x: xs[0], floor: floor, memo: map[string]contResult{}}
	h.takes = func(key string, d *kernel.Tensor) bool { return len(first(key, d)) > 0 }
	h.cont = func(key string, addrs []int64, d *kernel.Tensor) (*chainLink, error) {
		return rest(key, addrs, d, scratch())
	}
	res, err := solveHanded(p, spec, h, opts, ops[0].Name)
	if err != nil {
		return nil, err
	}
	// The winner's chain again, its statistics kept; the einsum's kernel
	// priced alone.
	stats := scratch()
	x := res.Best
	best, err := rest(x.handKey, x.handAddrs, x.handDM, stats)
	if err != nil {
		return nil, err
	}
	pl, err := einsumPlan(res, best, floor, spec)
	if err != nil {
		return nil, err
	}
	pl.Search.Resident = residentSays(ops, xs, 0)
	ch := &ResidentChain{Plans: []*plan.Plan{pl}, Pairs: res.Stats.CostEvaluations}
	for k := 1; k < len(ops); k++ {
		ch.Plans = append(ch.Plans, best.sides[k-1].plan(stats[k], ops, xs, k))
	}
	return ch, nil
}

// adopt returns the candidates of op space s (an elementwise op's) that
// take DM tensor d, one of its inputs whole in one tile, as it lies: s's
// one-tile candidates with the positions in d's digit order, its Cluster
// digits then its Slice digits then its Element's (the op builder's split:
// peel), over as many clusters and slices as d's mappings spread it. Each
// is built by a copy of s with those positions; whether its DM tensor is
// d's (the same mappings and type) is the handover key's to say. None
// when d's mappings are not digits of the op's positions (a broadcast,
// an Element with padding, an axis split other than the positions').
func (s *opSpace) adopt(d *kernel.Tensor) []spaceCand {
	if s.family != "map" || d == nil {
		return nil
	}
	digitsOf := func(e *mapping.Expr, padded bool) ([]digit, int, bool) {
		fs, err := mapping.Factorize(e)
		if err != nil {
			return nil, 0, false
		}
		var ds []digit
		n := 1
		for i := len(fs) - 1; i >= 0; i-- {
			switch f := fs[i]; f.Kind {
			case mapping.FactorTerm:
				ds = append(ds, digit{axis: f.Axis, full: f.AxisSize, div: f.Stride, size: f.Extent})
				n *= f.Extent
			case mapping.FactorPad:
				if !padded {
					return nil, 0, false
				}
			default:
				return nil, 0, false
			}
		}
		return ds, n, true
	}
	clD, clusters, ok1 := digitsOf(d.Cluster, true)
	slD, slices_, ok2 := digitsOf(d.Slice, true)
	in, _, ok3 := digitsOf(d.Element, false)
	if !ok1 || !ok2 || !ok3 || len(in) == 0 {
		return nil
	}
	pos := append(append(append([]digit{}, clD...), slD...), in...)
	// The digits' sizes multiply to each of the op's axes' (whether they
	// step it without a gap is the build's and the key's to say).
	per := map[string]int{}
	for _, g := range pos {
		if per[g.axis] == 0 {
			per[g.axis] = 1
		}
		per[g.axis] *= g.size
	}
	want := map[string]int{}
	for _, g := range s.pos {
		if want[g.axis] == 0 {
			want[g.axis] = 1
		}
		want[g.axis] *= g.size
	}
	if len(per) != len(want) {
		return nil
	}
	for a, n := range want {
		if per[a] != n {
			return nil
		}
	}
	sp := *s
	sp.pos = pos
	var out []spaceCand
	seen := map[opCand]bool{}
	for _, c := range s.cands {
		if c.Tiles != 1 || c.Interleave != 0 {
			continue
		}
		c.Clusters, c.Slices = clusters, slices_
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, spaceCand{&sp, c})
	}
	return out
}

// distinctDM reports whether every entry of es has a DM tensor of its
// own (two tiles in one buffer: one overwrites the other).
func distinctDM(es []handoffEntry) bool {
	for i := range es {
		for j := range i {
			if es[i].dm == es[j].dm {
				return false
			}
		}
	}
	return true
}

// opFloor is the least HBM roofline (cost.Report's: the MACs, the HBM
// bytes each read or written once at the HBM rates, which no kernel
// beats, TestOpRooflineBound) of op space sc's kernels with input in
// (none when "") and output out (none when "") handed over in DM, each
// of their tiles in a buffer of its own; and each candidate's handover
// key of in ("" for a candidate that does not hand it over).
func opFloor(spec *engines.Spec, sc *opSpace, in, out string) (float64, []string, error) {
	type seen struct {
		key  string
		roof float64
		ok   bool
	}
	seens := make([]seen, len(sc.cands))
	if err := inParallel(spec, len(sc.cands), func(i int, m *cost.Model) {
		c := sc.cands[i]
		if c.Tiles > 1 {
			c.KeepIn, c.KeepOut = in, out
		}
		q, err := sc.build(c)
		if err != nil {
			return
		}
		var key string
		if in != "" {
			es := takeHandoffs(q, in, kernel.OpToDM)
			if es == nil {
				return
			}
			key = handoffKey(es)
		}
		if out != "" && takeHandoffs(q, out, kernel.OpToHBM) == nil {
			return
		}
		r, err := sc.price(q, m)
		if err != nil {
			return
		}
		seens[i] = seen{key: key, roof: r.Roofline.IdealCycles, ok: true}
	}); err != nil {
		return 0, nil, err
	}
	least := math.Inf(1)
	keys := make([]string, len(seens))
	for i, x := range seens {
		if x.ok {
			least = min(least, x.roof)
			keys[i] = x.key
		}
	}
	if math.IsInf(least, 1) {
		return 0, nil, fmt.Errorf("no kernel of %s hands %s over in DM, each of its tiles in a buffer of its own", sc.o.Name, strings.Trim(in+", "+out, ", "))
	}
	return least, keys, nil
}

// planChainToEinsum is PlanChain for a chain whose last op is an einsum:
// the op kernels before it (the pair space's, chainLinks) each hand their
// output to the next, the last its output to the einsum, whose mapspace
// is searched by the branch and bound over the candidates that load that
// input into DM buffers of their own, each once (takeHandoffs,
// distinctDM), with a handover key some chain before leaves. Each is
// priced at its own cycles (no load of that input) plus the cheapest such
// chain with its last kernel's handed-over tensors moved to the einsum's
// addresses (relocate; the einsum's kernel stays as priced), less the
// floor (opFloor summed over the ops before): the proof of the comment at
// the top of this file, mirrored.
func planChainToEinsum(w *workload.Workload, ops []*workload.Op, xs []string, spec *engines.Spec, opts Options) (*ResidentChain, error) {
	n := len(ops)
	spaces, stats, err := chainSpaces(w, ops, xs, spec)
	if err != nil {
		return nil, err
	}
	x := xs[n-2]
	p, err := constraints.NewProblem(w, ops[n-1].Name)
	if err != nil {
		return nil, err
	}
	t := slices.IndexFunc(p.In[:], func(o constraints.Operand) bool { return o.Name == x })
	if t < 0 || p.In[1-t].Name == x {
		return nil, fmt.Errorf("tensor %s is not one input of %s", x, ops[n-1].Name)
	}
	links, _, err := chainLinks(spec, spaces[:n-1], xs, stats)
	if err != nil {
		return nil, err
	}
	// The floor: the least over the links of their kernels' rooflines,
	// which moving a kernel's DM tensors leaves alone (HBM bytes and MACs).
	floor := math.Inf(1)
	byKey := map[string][]int{}
	for i, l := range links {
		byKey[l.key] = append(byKey[l.key], i)
		roof := 0.0
		for _, side := range l.sides {
			roof += side.report.Roofline.IdealCycles
		}
		floor = min(floor, roof)
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("no kernels of %s hand %s over in DM, each of its tiles in a buffer of its own", ops[n-2].Name, x)
	}
	// moved is link l with its last kernel built again, its handed-over
	// input where the kernel before left it and its output at addrs.
	moved := func(l chainLink, addrs []int64, m *cost.Model) (*chainLink, error) {
		k := len(l.sides) - 1
		last := l.sides[k]
		c := last.c
		q, err := last.sp.build(c)
		if err != nil {
			return nil, err
		}
		var es []handoffEntry
		var pinned []*kernel.Tensor
		if k > 0 {
			if es = takeHandoffs(q, xs[k-1], kernel.OpToDM); es == nil {
				return nil, fmt.Errorf("search: %s no longer takes %s", ops[k].Name, xs[k-1])
			}
			if err := relocate(q, es, last.inAddrs); err != nil {
				return nil, err
			}
			for _, e := range es {
				pinned = append(pinned, e.dm)
			}
		}
		out := takeHandoffs(q, x, kernel.OpToHBM)
		if out == nil {
			return nil, fmt.Errorf("search: %s no longer hands %s over", ops[k].Name, x)
		}
		if err := relocate(q, out, addrs, pinned...); err != nil {
			return nil, handoverError{err.Error()}
		}
		r, err := last.sp.price(q, m)
		if err != nil {
			return nil, err
		}
		side := residentSide{sp: last.sp, c: c, inAddrs: last.inAddrs, prog: q, report: r, es: es}
		if k == 0 {
			side.es = out
		}
		ml := chainLink{key: l.key, addrs: addrs, cost: l.cost - last.report.Cycles + r.Cycles,
			sides: append(slices.Clone(l.sides[:k]), side), out: out}
		return &ml, nil
	}
	model, err := cost.NewModel(spec)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex // model's
	cont := func(key string, addrs []int64, _ *kernel.Tensor) (*chainLink, error) {
		mu.Lock()
		defer mu.Unlock()
		var best *chainLink
		var last error
		for _, i := range byKey[key] {
			ml, err := moved(links[i], addrs, model)
			if err != nil {
				last = err
				continue
			}
			if best == nil || ml.cost < best.cost {
				best = ml
			}
		}
		if best == nil {
			if last == nil {
				last = handoverError{fmt.Sprintf("no chain of kernels before %s leaves %s as it loads it", ops[n-1].Name, x)}
			}
			return nil, last
		}
		return best, nil
	}
	h := &einsumHand{t: t, x: x, floor: floor, memo: map[string]contResult{}, cont: cont}
	h.takes = func(key string, _ *kernel.Tensor) bool { return len(byKey[key]) > 0 }
	res, err := solveHanded(p, spec, h, opts, ops[n-1].Name)
	if err != nil {
		return nil, err
	}
	best, err := h.next(res.Best.handKey, res.Best.handAddrs, nil)
	if err != nil {
		return nil, err
	}
	ch := &ResidentChain{Pairs: res.Stats.CostEvaluations}
	for k, side := range best.sides {
		ch.Plans = append(ch.Plans, side.plan(stats[k], ops, xs, k))
	}
	pl, err := einsumPlan(res, best, floor, spec)
	if err != nil {
		return nil, err
	}
	pl.Search.Resident = residentSays(ops, xs, n-1)
	ch.Plans = append(ch.Plans, pl)
	return ch, nil
}

// solveHanded searches einsum op's problem p with h's tensor handed over
// (Space.hand), or says that no candidate was taken.
func solveHanded(p *Problem, spec *engines.Spec, h *einsumHand, opts Options, op string) (*Result, error) {
	s, err := NewSpace(p, spec)
	if err != nil {
		return nil, err
	}
	s.hand = h
	res, err := Solve(s, opts)
	if err != nil {
		return nil, err
	}
	if res.Best == nil {
		why := "the whole space"
		if res.Stats.Stopped != "" {
			why = "stopped by its " + res.Stats.Stopped + " limit"
		}
		return nil, fmt.Errorf("no kernels of %s agree on where %s sits in DM (%d candidates listed, %s)", op, h.x, res.Stats.Candidates, why)
	}
	return res, nil
}

// einsumPlan is the plan of a resident chain's einsum: the search's
// winner priced alone (its report held the chain's price beyond the
// floor), its lower bound the einsum's share of the search's.
func einsumPlan(res *Result, best *chainLink, floor float64, spec *engines.Spec) (*plan.Plan, error) {
	x := res.Best
	m, err := cost.NewModel(spec)
	if err != nil {
		return nil, err
	}
	r, err := m.Evaluate(x.Program)
	if err != nil {
		return nil, err
	}
	x.Report = r
	pl, err := res.PlanOf(x)
	if err != nil {
		return nil, err
	}
	if lb := pl.Search.LowerBound; lb > 0 {
		// The search's bound is on the einsum's cycles and the chain's
		// beyond its floor: the einsum's share is what the chain found
		// leaves of it.
		pl.Search.LowerBound = max(0, min(r.Cycles, lb-(best.cost-floor)))
		if pl.Search.Optimal == "proven" {
			// The pair is proven: the share is the cycles, whatever the
			// rounding of the subtraction above.
			pl.Search.LowerBound = pl.Cost.Cycles
		}
		pl.Search.Gap = (r.Cycles - pl.Search.LowerBound) / r.Cycles
	}
	return pl, nil
}
