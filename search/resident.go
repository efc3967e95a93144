package search

import (
	"cmp"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/results/digest"
)

// DM residency across kernels (docs/spec-decisions.md "DM residency across
// kernels"): a tensor that one Vector Engine op kernel writes and the next
// reads can stay in DM between them, the producer leaving out its stores
// and the consumer its loads (002 L138: the chip's 256 MB of DM is one
// flat memory both kernels address; 002 L7056: addresses are the
// program's). Both kernels must then agree on where each byte is: the
// same DM tensors (type, Chip, Cluster, Slice and Element mappings) at
// the same addresses, and the producer's tiles must not reuse a buffer
// once stored. The pair space is every candidate of each op with the
// handed-over tensor's tiles each in a DM buffer of its own (opCand.Keep:
// one tile holds the whole tensor; with more, the two alternating buffers
// would be overwritten by later tiles), paired when their DM tensors match
// tile for tile; the consumer's buffers are moved so that the handed-over
// ones sit where the producer left them. The stores and loads become the kernels' handoffs
// (kernel.Program.Handoff): not priced, not emitted; the simulator runs
// them to set and read the DM a kernel hands over.

// dmOrder is the layout-class entry of an operand handed over in DM by
// the kernels of a group (a chain of ops planned together: graphModel
// pairs a producer's and a consumer's classes only when their entries are
// the same group's, any other pairing is infeasible). Its first element
// is no axis name.
func dmOrder(group string) []string { return []string{dmMark, group} }

// dmMark marks dmOrder.
const dmMark = "\x00dm"

// isDM reports whether an operand's layout-class entry is a dmOrder.
func isDM(order []string) bool { return len(order) == 2 && order[0] == dmMark }

// residentKind reports whether an op of kind k has its kernel built by
// the op mapspace (opspace.go), whose buffers a resident pair places.
func residentKind(k workload.Kind) bool {
	switch k {
	case workload.KindEinsum, workload.KindReshape, workload.KindGather, workload.KindScatter, workload.KindUpdateSlice:
		return false
	}
	return true
}

// handoffEntry is one handed-over DM tensor of a kernel: its DMA (a store
// of the producer, a load of the consumer) and its key, the DM tensor's
// type and mappings with the HBM view's mapping and offset, the address
// left out.
type handoffEntry struct {
	key string
	op  *kernel.Op
	dm  *kernel.Tensor
}

// takeHandoffs moves the DMAs of kind that move tensor x (or a tile view
// of it) out of p's ops into its handoffs, and returns them sorted by key;
// nil when there are none or when a stored DM tensor is written again
// after its store (the producer's tiles reuse it).
func takeHandoffs(p *kernel.Program, x string, kind kernel.OpKind) []handoffEntry {
	var es []handoffEntry
	var keep []*kernel.Op
	for i, op := range p.Ops {
		hbmName, dmName := op.Src, op.Dst
		if kind == kernel.OpToHBM {
			hbmName, dmName = op.Dst, op.Src
		}
		h, ok := p.Tensor(hbmName)
		if op.Kind != kind || !ok || h.Base() != x || op.Index != "" {
			keep = append(keep, op)
			continue
		}
		dm, _ := p.Tensor(dmName)
		if kind == kernel.OpToHBM && slices.ContainsFunc(p.Ops[i+1:], func(o *kernel.Op) bool { return o.Writes(dmName) }) {
			return nil
		}
		base, _ := p.Tensor(x)
		// A result's tile view pads with `#{!}` (its padding written),
		// an input's with `#`: the same positions.
		view := strings.ReplaceAll(h.Element.Text(), "#{!}", "#")
		key := fmt.Sprintf("%s|%s|%s|%s|%s|%s@%d", dm.DType, dm.Chip, dm.Cluster, dm.Slice, dm.Element, view, h.Addr-base.Addr)
		es = append(es, handoffEntry{key: key, op: op, dm: dm})
	}
	if len(es) == 0 {
		return nil
	}
	p.Ops = keep
	slices.SortStableFunc(es, func(a, b handoffEntry) int { return cmp.Compare(a.key, b.key) })
	for _, e := range es {
		p.Handoff = append(p.Handoff, e.op)
	}
	return es
}

// handoffKey is the entries' keys in order: two kernels whose keys agree
// hand the same bytes over, once their addresses agree.
func handoffKey(es []handoffEntry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.key)
		b.WriteByte(';')
	}
	return b.String()
}

// relocate puts the consumer's handed-over DM tensors at the producer's
// addresses and moves every other DM tensor of p that would share a byte
// with them past the highest DM byte p uses (256-byte aligned, a DMA unit,
// 002 L2939). A tensor of pinned (another handover's, which must stay where
// it is) that would move is an error.
func relocate(p *kernel.Program, es []handoffEntry, addrs []int64, pinned ...*kernel.Tensor) error {
	type span struct{ lo, hi int64 }
	var taken []span
	handed := map[*kernel.Tensor]bool{}
	top := int64(0)
	size := func(t *kernel.Tensor) (int64, error) {
		n, err := t.DType.BytesFor(t.Element.Size())
		return int64(n), err
	}
	for i, e := range es {
		n, err := size(e.dm)
		if err != nil {
			return err
		}
		e.dm.Addr = addrs[i]
		handed[e.dm] = true
		taken = append(taken, span{addrs[i], addrs[i] + n})
	}
	for _, t := range p.Tensors {
		if t.Mem != kernel.DM {
			continue
		}
		n, err := size(t)
		if err != nil {
			return err
		}
		top = max(top, t.Addr+n)
	}
	const align = 256
	for _, t := range p.Tensors {
		if t.Mem != kernel.DM || handed[t] {
			continue
		}
		n, err := size(t)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(taken, func(s span) bool { return t.Addr < s.hi && s.lo < t.Addr+n }) {
			continue
		}
		if slices.Contains(pinned, t) {
			return fmt.Errorf("DM tensor %s, handed over from the kernel before, lies where %s's handover must", t.Name, p.Name)
		}
		top = (top + align - 1) / align * align
		t.Addr = top
		top += n
	}
	return nil
}

// residentSide is one priced kernel of a pair.
type residentSide struct {
	sp *opSpace
	c  opCand
	// inAddrs are where its handed-over input was moved (none for the
	// first kernel of a chain).
	inAddrs []int64
	prog    *kernel.Program
	report  *cost.Report
	es      []handoffEntry
}

// ResidentPair is the best pair of kernels for ops prod and cons of w with
// tensor x, prod's output and an input of cons, left in DM between them.
type ResidentPair struct {
	Prod, Cons *plan.Plan
	// Pairs counts the consumer kernels priced against a producer's
	// handover (legal or not).
	Pairs int
}

// PlanResident plans ops prod and cons of graph workload w with x handed
// over in DM (the pair space above), or says why no pair exists.
func PlanResident(w *workload.Workload, prod, cons *workload.Op, x string, spec *engines.Spec) (*ResidentPair, error) {
	c, err := PlanChain(w, []*workload.Op{prod, cons}, []string{x}, spec)
	if err != nil {
		return nil, err
	}
	return &ResidentPair{Prod: c.Plans[0], Cons: c.Plans[1], Pairs: c.Pairs}, nil
}

// ResidentChain is the best chain of kernels for ops[0], ops[1], … with
// xs[k], ops[k]'s output and an input of ops[k+1], left in DM between them.
type ResidentChain struct {
	Plans []*plan.Plan
	// Pairs counts the kernels priced against the previous kernel's
	// handover (legal or not).
	Pairs int
}

// chainLink is one way the chain can stand after an op: the handover of
// its output (the DM tensors' key and addresses), the cheapest kernels of
// the ops so far that leave it, and their cycles.
type chainLink struct {
	key   string
	addrs []int64
	cost  float64
	sides []residentSide
	// out is the handed-over tensors' entries in the last kernel.
	out []handoffEntry
}

// PlanChain plans ops of graph workload w in a chain, each leaving its
// output xs[k] in DM for the next (the pair space above, link by link: a
// kernel of ops[k] is priced against every handover of ops[k-1] its DM
// tensors match, moved to its addresses, and the cheapest chain to each
// handover of its own output kept), or says why no chain exists. Its
// first op or its last may be an einsum (einsumres.go), not both.
func PlanChain(w *workload.Workload, ops []*workload.Op, xs []string, spec *engines.Spec) (*ResidentChain, error) {
	return planChain(w, ops, xs, spec, einsumChainOptions(spec))
}

// planChain is PlanChain with the options of an einsum's search.
func planChain(w *workload.Workload, ops []*workload.Op, xs []string, spec *engines.Spec, opts Options) (*ResidentChain, error) {
	if len(ops) < 2 || len(xs) != len(ops)-1 {
		return nil, fmt.Errorf("a chain of %d ops hands %d tensors over", len(ops), len(xs))
	}
	for k, o := range ops {
		first, last := k == 0, k == len(ops)-1
		if o.Kind == workload.KindEinsum && (!first && !last || first && ops[len(ops)-1].Kind == workload.KindEinsum) {
			return nil, fmt.Errorf("op %s: a chain has an einsum at one end only", o.Name)
		}
	}
	if ops[0].Kind == workload.KindEinsum {
		return planEinsumChain(w, ops, xs, spec, opts)
	}
	if ops[len(ops)-1].Kind == workload.KindEinsum {
		return planChainToEinsum(w, ops, xs, spec, opts)
	}
	spaces, stats, err := chainSpaces(w, ops, xs, spec)
	if err != nil {
		return nil, err
	}
	links, pairs, err := chainLinks(spec, spaces[:len(ops)-1], xs, stats)
	if err != nil {
		return nil, err
	}
	best, n, err := lastLink(spec, links, spaces[len(ops)-1].all(), xs[len(xs)-1], stats[len(ops)-1])
	if err != nil {
		return nil, err
	}
	pairs += n
	if best == nil {
		names := make([]string, len(ops))
		for k, o := range ops {
			names[k] = o.Name
		}
		return nil, fmt.Errorf("no kernels of %s agree on where %s sit in DM, each of their tiles in a buffer of its own", strings.Join(names, ", "), strings.Join(xs, ", "))
	}
	ch := &ResidentChain{Pairs: pairs}
	for k, side := range best.sides {
		ch.Plans = append(ch.Plans, side.plan(stats[k], ops, xs, k))
	}
	return ch, nil
}

// plan is the plan of side, the kernel of ops[k] in a chain handing
// xs[k] to ops[k+1].
func (side residentSide) plan(st *Stats, ops []*workload.Op, xs []string, k int) *plan.Plan {
	pl := side.sp.plan(&opEvaluated{c: side.c, program: side.prog, report: side.report}, st)
	pl.Search.Resident = residentSays(ops, xs, k)
	return pl
}

// residentSays is what the plan of ops[k] in a chain handing xs[k] to
// ops[k+1] says of its handovers (plan.Search.Resident).
func residentSays(ops []*workload.Op, xs []string, k int) string {
	var says []string
	if k > 0 {
		says = append(says, fmt.Sprintf("%s taken in DM from %s", xs[k-1], ops[k-1].Name))
	}
	if k < len(xs) {
		says = append(says, fmt.Sprintf("%s left in DM for %s", xs[k], ops[k+1].Name))
	}
	return strings.Join(says, "; ")
}

// chainSpaces is the op spaces of a chain's ops (each a Vector Engine
// op kernel) and their statistics, checked against the tensors xs[k]
// ops[k] hands to ops[k+1].
func chainSpaces(w *workload.Workload, ops []*workload.Op, xs []string, spec *engines.Spec) ([]*opSpace, []*Stats, error) {
	spaces := make([]*opSpace, len(ops))
	stats := chainStats(len(ops))
	for k, o := range ops {
		if o.Kind == workload.KindEinsum {
			continue // the einsum's end of a chain (einsumres.go)
		}
		if !residentKind(o.Kind) {
			return nil, nil, fmt.Errorf("op %s (%s) is not a Vector Engine op kernel", o.Name, o.Kind)
		}
		var err error
		if spaces[k], err = newOpSpace(w, o, spec); err != nil {
			return nil, nil, err
		}
	}
	for k, x := range xs {
		if k+1 >= len(ops) {
			break
		}
		if spaces[k] != nil && spaces[k].out.Name != x ||
			spaces[k+1] != nil && !slices.ContainsFunc(spaces[k+1].ins, func(t *workload.Tensor) bool { return t.Name == x }) {
			return nil, nil, fmt.Errorf("tensor %s is not %s's output and an input of %s", x, ops[k].Name, ops[k+1].Name)
		}
	}
	return spaces, stats, nil
}

// chainStats is the statistics of a chain's n op searches.
func chainStats(n int) []*Stats {
	st := make([]*Stats, n)
	for k := range st {
		st[k] = &Stats{Planner: "exhaustive", Illegal: map[string]*RuleStat{}, Complete: true}
	}
	return st
}

// chainLinks is the cheapest chain of kernels of spaces, each handing its
// output xs[k] over to the next (the last's to whatever follows), to each
// handover of the last's output: the first op's kernels built and priced
// by several workers at once, then read off in candidate order, the
// cheapest of each handover; each next op's paired with them
// (extendChain). pairs counts the kernels priced against a handover.
func chainLinks(spec *engines.Spec, spaces []*opSpace, xs []string, stats []*Stats) (links []chainLink, pairs int, err error) {
	{
		sp, x, st := spaces[0], xs[0], stats[0]
		ev := &evaluator{stats: st}
		type built struct {
			side residentSide
			err  error
		}
		firsts := make([]built, len(sp.cands))
		if err := inParallel(spec, len(sp.cands), func(i int, m *cost.Model) {
			b := &firsts[i]
			b.side.sp, b.side.c = sp, sp.cands[i]
			if b.side.c.Tiles > 1 {
				b.side.c.KeepOut = x // every tile's output still in DM at the end
			}
			if b.side.prog, b.err = sp.build(b.side.c); b.err != nil {
				return
			}
			if b.side.es = takeHandoffs(b.side.prog, x, kernel.OpToHBM); b.side.es != nil {
				b.side.report, b.err = sp.price(b.side.prog, m)
			}
		}); err != nil {
			return nil, 0, err
		}
		for _, b := range firsts {
			st.Candidates++
			if b.err != nil {
				ev.reject(b.err)
				continue
			}
			if b.side.es == nil {
				continue
			}
			st.Legal++
			st.CostEvaluations++
			key, addrs := handover(b.side.es)
			links = keepLink(links, chainLink{key: key, addrs: addrs, cost: b.side.report.Cycles, sides: []residentSide{b.side}, out: b.side.es})
		}
	}
	for k := 1; k < len(spaces); k++ {
		next, _, n, err := extendChain(spec, links, spaces[k].all(), xs[k-1], xs[k], stats[k])
		if err != nil {
			return nil, 0, err
		}
		pairs += n
		links = next
	}
	return links, pairs, nil
}

// lastLink is the cheapest whole chain: links, then a kernel of scs
// taking tensor in as one of them hands it over (extendChain).
func lastLink(spec *engines.Spec, links []chainLink, scs []spaceCand, in string, st *Stats) (*chainLink, int, error) {
	_, best, pairs, err := extendChain(spec, links, scs, in, "", st)
	return best, pairs, err
}

// extendChain prices the kernels of scs whose handed-over input in matches a handover
// of links, moved to its addresses, in parallel and read off in candidate
// and handover order. With out set it returns the cheapest chain to each
// handover of out; with out "" the cheapest whole chain (nil for none).
// pairs counts the kernels priced against a handover (legal or not).
func extendChain(spec *engines.Spec, links []chainLink, scs []spaceCand, in, out string, st *Stats) (next []chainLink, best *chainLink, pairs int, err error) {
	ev := &evaluator{stats: st}
	type paired struct {
		link int
		side residentSide
		key  string
		addr []int64
		out  []handoffEntry
		err  error
	}
	type cand struct {
		err   error
		pairs []paired
	}
	cands := make([]cand, len(scs))
	if err := inParallel(spec, len(scs), func(i int, m *cost.Model) {
		cr := &cands[i]
		sc, c := scs[i].sp, scs[i].c
		if c.Tiles > 1 {
			c.KeepIn, c.KeepOut = in, out // every tile of both in DM
		}
		q, err := sc.build(c)
		if err != nil {
			cr.err = err
			return
		}
		es := takeHandoffs(q, in, kernel.OpToDM)
		if es == nil {
			return
		}
		key := handoffKey(es)
		first := true
		for j, l := range links {
			if l.key != key {
				continue
			}
			if !first {
				// Another handover's addresses: the candidate built again.
				if q, err = sc.build(c); err != nil {
					cr.err = err
					return
				}
				es = takeHandoffs(q, in, kernel.OpToDM)
			}
			first = false
			pr := paired{link: j}
			pr.err = relocate(q, es, l.addrs)
			if pr.err == nil && out != "" {
				outEs := takeHandoffs(q, out, kernel.OpToHBM)
				if outEs == nil {
					continue
				}
				pr.key, pr.addr = handover(outEs)
				pr.out = outEs
			}
			if pr.err == nil {
				pr.side = residentSide{sp: sc, c: c, inAddrs: l.addrs, prog: q, es: es}
				pr.side.report, pr.err = sc.price(q, m)
			}
			cr.pairs = append(cr.pairs, pr)
		}
	}); err != nil {
		return nil, nil, 0, err
	}
	for _, cr := range cands {
		st.Candidates++
		if cr.err != nil {
			ev.reject(cr.err)
			continue
		}
		for _, pr := range cr.pairs {
			pairs++
			if pr.err != nil {
				ev.reject(pr.err)
				continue
			}
			st.Legal++
			st.CostEvaluations++
			l := links[pr.link]
			nl := chainLink{key: pr.key, addrs: pr.addr, cost: l.cost + pr.side.report.Cycles, sides: append(slices.Clone(l.sides), pr.side), out: pr.out}
			if out != "" {
				next = keepLink(next, nl)
			} else if best == nil || nl.cost < best.cost {
				best = &nl
			}
		}
	}
	return next, best, pairs, nil
}

// spaceCand is a candidate of an op space.
type spaceCand struct {
	sp *opSpace
	c  opCand
}

// all is every candidate of s.
func (s *opSpace) all() []spaceCand {
	out := make([]spaceCand, len(s.cands))
	for i, c := range s.cands {
		out[i] = spaceCand{s, c}
	}
	return out
}

// keepLink adds l to ls, or keeps the cheaper of l and the link of ls
// with its handover.
func keepLink(ls []chainLink, l chainLink) []chainLink {
	i := slices.IndexFunc(ls, func(h chainLink) bool { return h.key == l.key && slices.Equal(h.addrs, l.addrs) })
	switch {
	case i < 0:
		return append(ls, l)
	case l.cost < ls[i].cost:
		ls[i] = l
	}
	return ls
}

// handover is the key and the DM addresses of a kernel's handed-over
// tensors.
func handover(es []handoffEntry) (string, []int64) {
	var addrs []int64
	for _, e := range es {
		addrs = append(addrs, e.dm.Addr)
	}
	return handoffKey(es), addrs
}

// addResident gives each tensor that one planned Vector Engine op kernel
// writes and exactly one other reads, the next kernel in program order,
// the choice of staying in DM between them: a class of each op with the tensor's entry dmOrder and its other
// operands declared, whose plans are the best resident pair. A tensor with
// no such pair gets no class. An edge whose producer and consumer disagree
// on it costs +Inf (relayout): no assignment.
func (m *graphModel) addResident(memo *residentMemo) error {
	// The tensors that may stay in DM: each an edge from its producer to
	// its one consumer, the next kernel.
	type edge struct {
		p, c int
		x    string
	}
	var es []edge
	for _, t := range m.w.Tensors {
		p, ok := m.prod[t.Name]
		cs := m.cons[t.Name]
		if !ok || len(cs) != 1 || t.Role != workload.RoleIntermediate {
			continue
		}
		c := cs[0]
		po, co := m.w.Ops[p], m.w.Ops[c]
		// The consumer may be an einsum (einsumres.go: an op chain
		// handing its last output to an einsum, which may have an
		// epilogue); an einsum hands nothing over (its output's DM layout
		// is the contraction's, which the op kernels' loads from HBM read
		// in short runs: docs/design-notes.md).
		consumes := residentKind(co.Kind) && len(co.Epilogue) == 0 || co.Kind == workload.KindEinsum
		if m.ops[p].status != plan.StatusPlanned || m.ops[c].status != plan.StatusPlanned ||
			!residentKind(po.Kind) || !consumes || len(po.Epilogue) > 0 ||
			countOf(co.Inputs, t.Name) != 1 {
			continue
		}
		// Between the two kernels no other may run: its DM tensors could
		// overwrite the handed-over bytes (only views, which run nothing,
		// may sit between them in program order).
		if c < p || slices.ContainsFunc(m.ops[p+1:c], func(g gop) bool { return g.status != plan.StatusView }) {
			continue
		}
		es = append(es, edge{p, c, t.Name})
	}
	// The edges in chains (an op consumes at most one of them, the one
	// from the kernel before it, and produces at most one, its output),
	// in program order; each run of consecutive edges of a chain, up to
	// maxChain of them, is planned as a chain and gives each of its ops a
	// class whose handed-over operands carry the run's group.
	slices.SortFunc(es, func(a, b edge) int { return cmp.Compare(a.p, b.p) })
	offered := map[string]bool{}
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].p == es[j-1].c {
			j++
		}
		chain := es[i:j]
		runOps := func(run []edge) ([]*workload.Op, []int, []string, []string) {
			ops := []*workload.Op{m.w.Ops[run[0].p]}
			idx := []int{run[0].p}
			var xs, names []string
			names = append(names, ops[0].Name)
			for _, e := range run {
				ops = append(ops, m.w.Ops[e.c])
				idx = append(idx, e.c)
				xs = append(xs, e.x)
				names = append(names, m.w.Ops[e.c].Name)
			}
			return ops, idx, xs, names
		}
		// A chain ending at an einsum (its last edge, einsumres.go): its
		// runs from the shortest, and none longer once one finds no
		// einsum kernel that takes a handover. A longer run's handovers
		// are some of the shorter's (its last kernel's candidates, each
		// leaving its output as it would alone: the key holds no address),
		// and the einsum's search lists its candidates in the same order
		// (by their bounds) up to the same limit, so it finds none either.
		last := len(chain) - 1
		noneFrom := -1 // runs chain[a:] with a <= noneFrom find no pair
		if m.w.Ops[chain[last].c].Kind == workload.KindEinsum {
			for a := last; a >= max(0, last-maxChain+1); a-- {
				ops, _, xs, _ := runOps(chain[a:])
				if _, err := memo.plan(m.w, ops, xs, m.spec); err != nil {
					noneFrom = a
					break
				}
			}
		}
		for a := range chain {
			for b := a; b < min(len(chain), a+maxChain); b++ {
				run := chain[a : b+1]
				if b == last && a <= noneFrom {
					continue
				}
				ops, idx, xs, names := runOps(run)
				ch, err := memo.plan(m.w, ops, xs, m.spec)
				if err != nil {
					continue // no chain agrees on the tensors' DM: not a choice
				}
				group := strings.Join(names, ">")
				for k, i := range idx {
					opnds := operands(m.w.Ops[i])
					ls := make([][]string, len(opnds))
					if k > 0 {
						ls[slices.Index(opnds, xs[k-1])] = dmOrder(group)
					}
					if k < len(xs) {
						ls[slices.Index(opnds, xs[k])] = dmOrder(group)
					}
					pl := ch.Plans[k]
					m.ops[i].classes = append(m.ops[i].classes, layoutClass{layouts: ls, plan: pl, cycles: pl.Cost.Cycles})
				}
				for _, x := range xs {
					offered[x] = true
				}
			}
		}
		i = j
	}
	m.resident = len(offered)
	return nil
}

// maxChain bounds the tensors one chain of kernels hands over in DM.
const maxChain = 4

// countOf counts name in names.
func countOf(names []string, name string) int {
	n := 0
	for _, x := range names {
		if x == name {
			n++
		}
	}
	return n
}

// inParallel runs work(i, model) for i in [0, n) on GOMAXPROCS workers,
// each with a cost model of its own.
func inParallel(spec *engines.Spec, n int, work func(i int, m *cost.Model)) error {
	nw := max(1, min(runtime.GOMAXPROCS(0), maxWorkers, n))
	models := make([]*cost.Model, nw)
	for k := range models {
		m, err := cost.NewModel(spec)
		if err != nil {
			return err
		}
		models[k] = m
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := range nw {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				work(i, models[k])
			}
		})
	}
	wg.Wait()
	return nil
}

// residentMemo keeps PlanChain's answers by residentKey: the fusion
// choices of one graph ask for the same pairs.
type residentMemo struct {
	mu    sync.Mutex
	pairs map[string]residentResult
	// cache, when it keeps chains (chainCache), keeps them across runs.
	cache PlanCache
}

// chainCache is a PlanCache that also keeps PlanChain's answers: the
// chain's plans in order, or the error that no chain agrees.
type chainCache interface {
	GetChain(key string, n int) ([]*plan.Plan, error, bool)
	PutChain(key string, ps []*plan.Plan, err error) error
}

// residentVersion names PlanChain's search in the chain cache's keys;
// opSpaceVersion and reduceVersion name the spaces it pairs.
const residentVersion = "resident 1: every candidate of each op paired by its handed-over DM tensors"

// residentResult is one PlanChain answer.
type residentResult struct {
	chain *ResidentChain
	err   error
}

// plan is PlanChain, memoized.
func (r *residentMemo) plan(w *workload.Workload, ops []*workload.Op, xs []string, spec *engines.Spec) (*ResidentChain, error) {
	key, kerr := residentKey(w, ops, xs)
	if kerr == nil {
		r.mu.Lock()
		v, ok := r.pairs[key]
		r.mu.Unlock()
		if ok {
			return v.chain, v.err
		}
	}
	cc, _ := r.cache.(chainCache)
	var dkey string
	if kerr == nil && cc != nil {
		hw, herr := digest.JSON(spec)
		parts := []string{key, hw, cost.Version, opSpaceVersion, reduceVersion, residentVersion}
		if slices.ContainsFunc(ops, func(o *workload.Op) bool { return o.Kind == workload.KindEinsum }) {
			parts = append(parts, einsumResidentVersion)
		}
		if dkey, kerr = digest.JSON(parts); herr != nil {
			kerr = herr
		}
		if kerr == nil {
			if ps, perr, ok := cc.GetChain(dkey, len(ops)); ok {
				ch := &ResidentChain{Plans: ps}
				if perr != nil {
					ch = nil
				}
				r.mu.Lock()
				r.pairs[key] = residentResult{ch, perr}
				r.mu.Unlock()
				return ch, perr
			}
		}
	}
	ch, err := PlanChain(w, ops, xs, spec)
	if kerr == nil {
		r.mu.Lock()
		r.pairs[key] = residentResult{ch, err}
		r.mu.Unlock()
		if cc != nil {
			var ps []*plan.Plan
			if ch != nil {
				ps = ch.Plans
			}
			if perr := cc.PutChain(dkey, ps, err); perr != nil {
				return nil, perr
			}
		}
	}
	return ch, err
}

// residentKey is what a resident chain depends on: the axes, the ops and
// every tensor they read or write (names, axes, types, layouts).
func residentKey(w *workload.Workload, ops []*workload.Op, xs []string) (string, error) {
	parts := []any{w.Axes.String(), xs, ops}
	for _, o := range ops {
		for _, name := range operands(o) {
			parts = append(parts, w.Tensor(name))
		}
	}
	data, err := json.Marshal(parts)
	return string(data), err
}
