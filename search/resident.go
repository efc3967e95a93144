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

// dmOrder is the layout-class entry of an operand handed over in DM
// (graphModel: its producer's and its consumer's classes agree on it, any
// other pairing is infeasible). Its one element is no axis name.
var dmOrder = []string{"\x00dm"}

// isDM reports whether an operand's layout-class entry is dmOrder.
func isDM(order []string) bool { return len(order) == 1 && order[0] == dmOrder[0] }

// residentKind reports whether an op of kind k has its kernel built by
// the op mapspace (opspace.go), whose buffers a resident pair places.
func residentKind(k workload.Kind) bool {
	switch k {
	case workload.KindEinsum, workload.KindReshape, workload.KindGather, workload.KindUpdateSlice:
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
		if kind == kernel.OpToHBM && slices.ContainsFunc(p.Ops[i+1:], func(o *kernel.Op) bool { return writes(o, dmName) }) {
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

// writes reports whether op writes tensor name (a DMA's destination, a
// chain's commit, TRF or VRF load).
func writes(op *kernel.Op, name string) bool {
	if op.Kind != kernel.OpChain {
		return op.Dst == name
	}
	return slices.ContainsFunc(op.Stages, func(s *kernel.Stage) bool {
		return (s.Kind == kernel.StCommit || s.Kind == kernel.StToTRF || s.Kind == kernel.StToVRF) && s.Tensor == name
	})
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
// 002 L2939).
func relocate(p *kernel.Program, es []handoffEntry, addrs []int64) error {
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
		top = (top + align - 1) / align * align
		t.Addr = top
		top += n
	}
	return nil
}

// residentSide is one priced kernel of a pair.
type residentSide struct {
	c      opCand
	prog   *kernel.Program
	report *cost.Report
	es     []handoffEntry
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
	if !residentKind(prod.Kind) || !residentKind(cons.Kind) {
		return nil, fmt.Errorf("op %s (%s) or %s (%s) is not a Vector Engine op kernel", prod.Name, prod.Kind, cons.Name, cons.Kind)
	}
	sp, err := newOpSpace(w, prod, spec)
	if err != nil {
		return nil, err
	}
	sc, err := newOpSpace(w, cons, spec)
	if err != nil {
		return nil, err
	}
	if sp.out.Name != x || !slices.ContainsFunc(sc.ins, func(t *workload.Tensor) bool { return t.Name == x }) {
		return nil, fmt.Errorf("tensor %s is not %s's output and an input of %s", x, prod.Name, cons.Name)
	}
	stP := &Stats{Planner: "exhaustive", Illegal: map[string]*RuleStat{}, Complete: true}
	stC := &Stats{Planner: "exhaustive", Illegal: map[string]*RuleStat{}, Complete: true}
	evP, evC := &evaluator{stats: stP}, &evaluator{stats: stC}
	// The producers, built and priced by several workers at once, then
	// read off in candidate order: the cheapest of each handover (key and
	// addresses).
	type built struct {
		c      opCand
		prog   *kernel.Program
		es     []handoffEntry
		report *cost.Report
		err    error
	}
	prods := make([]built, len(sp.cands))
	if err := inParallel(spec, len(sp.cands), func(i int, m *cost.Model) {
		b := &prods[i]
		b.c = sp.cands[i]
		if b.c.Tiles > 1 {
			b.c.Keep = x // every tile's output still in DM at the end
		}
		if b.prog, b.err = sp.build(b.c); b.err != nil {
			return
		}
		if b.es = takeHandoffs(b.prog, x, kernel.OpToHBM); b.es != nil {
			b.report, b.err = sp.price(b.prog, m)
		}
	}); err != nil {
		return nil, err
	}
	type handover struct {
		key   string
		addrs []int64
		side  residentSide
	}
	var hs []handover
	for _, b := range prods {
		stP.Candidates++
		if b.err != nil {
			evP.reject(b.err)
			continue
		}
		if b.es == nil {
			continue
		}
		stP.Legal++
		stP.CostEvaluations++
		key := handoffKey(b.es)
		var addrs []int64
		for _, e := range b.es {
			addrs = append(addrs, e.dm.Addr)
		}
		k := slices.IndexFunc(hs, func(h handover) bool { return h.key == key && slices.Equal(h.addrs, addrs) })
		side := residentSide{c: b.c, prog: b.prog, report: b.report, es: b.es}
		switch {
		case k < 0:
			hs = append(hs, handover{key, addrs, side})
		case b.report.Cycles < hs[k].side.report.Cycles:
			hs[k].side = side
		}
	}
	// The consumers: each candidate whose handed-over tensors match a
	// handover, moved to its addresses and priced, again in parallel and
	// read off in candidate and handover order.
	type paired struct {
		h    int
		side residentSide
		err  error
	}
	type consumer struct {
		err   error
		pairs []paired
	}
	consumers := make([]consumer, len(sc.cands))
	if err := inParallel(spec, len(sc.cands), func(i int, m *cost.Model) {
		cr := &consumers[i]
		c := sc.cands[i]
		if c.Tiles > 1 {
			c.Keep = x // every tile of x in DM from the start
		}
		q, err := sc.build(c)
		if err != nil {
			cr.err = err
			return
		}
		es := takeHandoffs(q, x, kernel.OpToDM)
		if es == nil {
			return
		}
		key := handoffKey(es)
		first := true
		for k, h := range hs {
			if h.key != key {
				continue
			}
			if !first {
				// Another producer's addresses: the candidate built again.
				if q, err = sc.build(c); err != nil {
					cr.err = err
					return
				}
				es = takeHandoffs(q, x, kernel.OpToDM)
			}
			first = false
			pr := paired{h: k}
			if pr.err = relocate(q, es, h.addrs); pr.err == nil {
				pr.side = residentSide{c: c, prog: q, es: es}
				pr.side.report, pr.err = sc.price(q, m)
			}
			cr.pairs = append(cr.pairs, pr)
		}
	}); err != nil {
		return nil, err
	}
	var best *ResidentPair
	var bestP, bestC residentSide
	pairs := 0
	for _, cr := range consumers {
		stC.Candidates++
		if cr.err != nil {
			evC.reject(cr.err)
			continue
		}
		for _, pr := range cr.pairs {
			pairs++
			if pr.err != nil {
				evC.reject(pr.err)
				continue
			}
			stC.Legal++
			stC.CostEvaluations++
			h := hs[pr.h]
			if best == nil || pr.side.report.Cycles+h.side.report.Cycles < bestP.report.Cycles+bestC.report.Cycles {
				best = &ResidentPair{}
				bestP, bestC = h.side, pr.side
			}
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no kernels of %s and %s agree on where %s sits in DM, each of its tiles in a buffer of its own (%d and %d candidates)", prod.Name, cons.Name, x, stP.Candidates, stC.Candidates)
	}
	best.Pairs = pairs
	best.Prod = sp.plan(&opEvaluated{c: bestP.c, program: bestP.prog, report: bestP.report}, stP)
	best.Cons = sc.plan(&opEvaluated{c: bestC.c, program: bestC.prog, report: bestC.report}, stC)
	best.Prod.Search.Resident = fmt.Sprintf("%s left in DM for %s", x, cons.Name)
	best.Cons.Search.Resident = fmt.Sprintf("%s taken in DM from %s", x, prod.Name)
	return best, nil
}

// addResident gives each tensor that one planned Vector Engine op kernel
// writes and exactly one other reads, the next kernel in program order,
// the choice of staying in DM between them: a class of each op with the tensor's entry dmOrder and its other
// operands declared, whose plans are the best resident pair. A tensor with
// no such pair gets no class. An edge whose producer and consumer disagree
// on it costs +Inf (relayout): no assignment.
func (m *graphModel) addResident(memo *residentMemo) error {
	for _, t := range m.w.Tensors {
		p, ok := m.prod[t.Name]
		cs := m.cons[t.Name]
		if !ok || len(cs) != 1 || t.Role != workload.RoleIntermediate {
			continue
		}
		c := cs[0]
		po, co := m.w.Ops[p], m.w.Ops[c]
		if m.ops[p].status != plan.StatusPlanned || m.ops[c].status != plan.StatusPlanned ||
			!residentKind(po.Kind) || !residentKind(co.Kind) || len(po.Epilogue) > 0 || len(co.Epilogue) > 0 ||
			countOf(co.Inputs, t.Name) != 1 {
			continue
		}
		// Between the two kernels no other may run: its DM tensors could
		// overwrite the handed-over bytes (only views, which run nothing,
		// may sit between them in program order).
		if c < p || slices.ContainsFunc(m.ops[p+1:c], func(g gop) bool { return g.status != plan.StatusView }) {
			continue
		}
		pr, err := memo.plan(m.w, po, co, t.Name, m.spec)
		if err != nil {
			continue // no pair agrees on the tensor's DM: not a choice
		}
		for _, side := range []struct {
			op int
			pl *plan.Plan
		}{{p, pr.Prod}, {c, pr.Cons}} {
			ops := operands(m.w.Ops[side.op])
			ls := make([][]string, len(ops))
			ls[slices.Index(ops, t.Name)] = dmOrder
			g := &m.ops[side.op]
			g.classes = append(g.classes, layoutClass{layouts: ls, plan: side.pl, cycles: side.pl.Cost.Cycles})
		}
		m.resident++
	}
	return nil
}

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

// residentMemo keeps PlanResident's answers by residentKey: the fusion
// choices of one graph ask for the same pairs.
type residentMemo struct {
	mu    sync.Mutex
	pairs map[string]residentResult
}

// residentResult is one PlanResident answer.
type residentResult struct {
	pair *ResidentPair
	err  error
}

// plan is PlanResident, memoized.
func (r *residentMemo) plan(w *workload.Workload, prod, cons *workload.Op, x string, spec *engines.Spec) (*ResidentPair, error) {
	key, kerr := residentKey(w, prod, cons, x)
	if kerr == nil {
		r.mu.Lock()
		v, ok := r.pairs[key]
		r.mu.Unlock()
		if ok {
			return v.pair, v.err
		}
	}
	pr, err := PlanResident(w, prod, cons, x, spec)
	if kerr == nil {
		r.mu.Lock()
		r.pairs[key] = residentResult{pr, err}
		r.mu.Unlock()
	}
	return pr, err
}

// residentKey is what a resident pair depends on: the axes, the two ops
// and every tensor they read or write (names, axes, types, layouts).
func residentKey(w *workload.Workload, prod, cons *workload.Op, x string) (string, error) {
	parts := []any{w.Axes.String(), x, prod, cons}
	for _, o := range []*workload.Op{prod, cons} {
		for _, name := range operands(o) {
			parts = append(parts, w.Tensor(name))
		}
	}
	data, err := json.Marshal(parts)
	return string(data), err
}
