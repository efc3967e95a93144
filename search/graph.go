package search

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"tcpmap/constraints"
	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/results/digest"
)

// Graph planning: one plan per op and one layout per tensor of a graph
// workload, chosen jointly to minimise the graph's cycles (every kernel and
// every relayout, run in program order on one chip).
//
// The model. Each op has layout classes: an HBM layout for each of its
// operands (a row-major order of the tensor's axes). A graph input is read
// in its declared layout; an intermediate tensor is stored in the layout
// its producer's class writes, and a consumer whose class reads another
// layout gets a relayout first (an HBM-to-HBM DMA copy, cost.RelayoutCycles).
// An op's class costs its kernel's cycles under the op planner (a view or
// an op that is not plannable costs nothing and has one class: every
// operand in its declared layout). The graph's cost is the sum over ops of
// their classes' costs plus the relayouts. The baseline is every op in its
// first class (every tensor row-major in its declared order): each op
// planned alone with row-major HBM between ops.
//
// The candidate layouts of a tensor are its declared row-major order and,
// when both its producer and one of its consumers have a kernel planner,
// up to GraphOptions.Layouts − 1 other orders of its axes (the
// permutations in lexicographic order, the declared one first): a layout
// that no consumer could read without a relayout can never beat the
// declared one. The search over the classes is a dynamic program when the
// ops with several classes interact along a chain, and an integer linear
// program (gonum's simplex under a branch and bound) otherwise; both prove the optimum under the model unless the node
// budget stops the branch and bound first (the best found and its gap).

// OpPlanner plans one op of a graph workload: its kernel plan with the
// op's operands in the HBM layouts w's tensors state (Tensor.LayoutExpr; nil
// is row-major in the declared order). An op it cannot plan is reported
// with a *NotPlannableError. PlanOpPlanner plans every op kind PlanOp
// plans (issue 15); EinsumPlanner only the einsums.
type OpPlanner func(w *workload.Workload, op string, opts Options) (*plan.Plan, error)

// NotPlannableError says that no planner maps an op yet.
type NotPlannableError struct {
	Op, Kind string
	// Why, when set, says more (the planner's own refusal).
	Why string
}

func (e *NotPlannableError) Error() string {
	s := fmt.Sprintf("op %s (%s): not yet plannable", e.Op, e.Kind)
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

// StoppedError says that an op's search stopped (its budget, a timeout)
// before it found a legal plan: the op may be plannable with more budget.
type StoppedError struct {
	Op, Why string
	// Stopped is what stopped the search (Stats.Stopped: StoppedBudget,
	// StoppedTimeout, ...).
	Stopped string
}

func (e *StoppedError) Error() string { return e.Why }

// EinsumPlanner is the OpPlanner of einsum ops: the SAT planner over the
// op's mapspace on spec (SolveAnyShape, padded when the sizes have no
// mapping). Other kinds are not plannable by it.
func EinsumPlanner(spec *engines.Spec) OpPlanner {
	return func(w *workload.Workload, op string, opts Options) (*plan.Plan, error) {
		o := findOp(w, op)
		if o == nil {
			return nil, fmt.Errorf("%s: no op named %q", w.File, op)
		}
		if o.Kind != workload.KindEinsum {
			return nil, &NotPlannableError{Op: o.Name, Kind: string(o.Kind)}
		}
		p, err := constraints.NewProblem(w, op)
		if err != nil {
			return nil, &NotPlannableError{Op: o.Name, Kind: string(o.Kind), Why: err.Error()}
		}
		s, err := NewSpace(p, spec)
		if err != nil {
			return nil, err
		}
		res, _, _, err := SolveAnyShape(s, Solve, opts, true)
		if err != nil {
			return nil, err
		}
		switch {
		case res.Best == nil && !res.Stats.Complete:
			// Plannable, but the budget ran out: not a property of the op.
			return nil, &StoppedError{Op: o.Name, Stopped: res.Stats.Stopped, Why: fmt.Sprintf("%s:%d: op %s: the search stopped (%s) before any legal candidate; raise the budget", w.File, o.Line, o.Name, res.Stats.Stopped)}
		case res.Best == nil:
			return nil, &NotPlannableError{Op: o.Name, Kind: string(o.Kind), Why: "no legal mapping, padded or not"}
		}
		return res.Plan()
	}
}

// PlanOpPlanner is the OpPlanner of every op kind PlanOp plans (einsums
// and the Vector Engine ops, issue 15) on spec: an op PlanOp has no kernel
// for (ErrNoKernel), or whose space holds no legal candidate, is not
// plannable; a search stopped before any legal candidate is a
// *StoppedError; a view (reshape) needs no kernel and is not plannable as
// one (the graph treats reshapes of row-major tensors as views).
func PlanOpPlanner(spec *engines.Spec) OpPlanner {
	return func(w *workload.Workload, op string, opts Options) (*plan.Plan, error) {
		o := findOp(w, op)
		if o == nil {
			return nil, fmt.Errorf("%s: no op named %q", w.File, op)
		}
		opts.Spec = spec
		res, err := PlanOp(w, op, opts)
		switch {
		case errors.Is(err, ErrNoKernel):
			return nil, &NotPlannableError{Op: o.Name, Kind: string(o.Kind), Why: err.Error()}
		case err != nil:
			return nil, err
		case res.Free:
			return nil, &NotPlannableError{Op: o.Name, Kind: string(o.Kind), Why: "a view: no kernel"}
		case res.Plan == nil && !res.Stats.Complete:
			return nil, &StoppedError{Op: o.Name, Stopped: res.Stats.Stopped, Why: fmt.Sprintf("%s:%d: op %s: the search stopped (%s) before any legal candidate; raise the budget", w.File, o.Line, o.Name, res.Stats.Stopped)}
		case res.Plan == nil:
			why := res.Why
			if why == "" {
				why = "no legal mapping"
			}
			return nil, &NotPlannableError{Op: o.Name, Kind: string(o.Kind), Why: why}
		}
		return res.Plan, nil
	}
}

func findOp(w *workload.Workload, name string) *workload.Op {
	for _, o := range w.Ops {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// GraphOptions configure PlanGraph.
type GraphOptions struct {
	// Spec is the hardware spec (relayout costs; the einsum planner's).
	Spec *engines.Spec
	// Planner plans one op (nil: EinsumPlanner(Spec); PlanOpPlanner(Spec)
	// plans the Vector Engine ops too, and VectorOps says so).
	Planner OpPlanner
	// VectorOps says that Planner plans the ops other than einsums: only
	// then are their plans taken from the cache (a cache shared with a
	// run that planned them would otherwise change what an einsum-only
	// planning counts).
	VectorOps bool
	// Op are the options of every op's search.
	Op Options
	// Cache, when set, is asked for an op's plan before Planner and told
	// every plan Planner makes (PlanCache).
	Cache PlanCache
	// Layouts is the number of candidate layouts of a tensor that two
	// planned ops share (1: row-major only; 0 means DefaultLayouts).
	Layouts int
	// MaxNodes bounds the branch and bound's nodes (0: DefaultMaxNodes).
	MaxNodes int
	// Progress, when set, is told after each op plan a search made (not
	// the plans from the cache, nor the ops no planner maps): the op (a
	// fused einsum as qk+scale), its
	// layouts, the search's wall time and how many plans have been
	// searched so far; err is non-nil when the search gave no plan in
	// those layouts (stopped before a legal candidate, or none), which the
	// graph then does not choose.
	Progress func(op string, layouts []string, took time.Duration, searched int, err error)
	// CacheOnly plans nothing: an op plan the cache does not hold is an
	// error (ErrNotCached).
	CacheOnly bool
	// LayoutEvaluations bounds the candidate evaluations
	// (Options.MaxEvaluations) of a search in layouts other than the
	// declared ones (0: DefaultLayoutEvaluations; a smaller
	// Op.MaxEvaluations wins). A layout whose innermost run no DMA can
	// move enumerates illegal candidates for as long as it is let: the
	// budget, counted in evaluations rather than seconds, ends such a
	// search the same way on any machine. A class it stops before any
	// legal candidate is no choice (GraphSearch.Unplanned counts them).
	// Such a search also stops once it has listed listedPerEvaluation
	// times the budget in candidates without a legal one
	// (Options.MaxListedIllegal).
	LayoutEvaluations int
	// NoFuse plans every op as its own kernel. Otherwise, with VectorOps,
	// the graph is planned for every choice of the epilogues it offers
	// (workload.Fusions: an einsum's f32 output scaled, exp, sigmoid or
	// silu by its one reader, or added to a tensor or a causal mask), each
	// fusion's ops fused up to any of them or not at all (at most
	// MaxFusionChoices choices), and the cheapest is kept.
	NoFuse bool
	// NoResidency leaves every tensor in HBM between kernels. Otherwise,
	// with VectorOps, a tensor that one Vector Engine op kernel writes and
	// one other reads gets the choice of staying in DM between them
	// (PlanResident; docs/spec-decisions.md "DM residency across
	// kernels").
	NoResidency bool
	// NoExpand keeps every op as the workload states it. Otherwise, with
	// VectorOps, an op with no kernel of its own but an exact form in ops
	// that have one (workload.Expand: cumsum, a batched gather, compact)
	// is planned as that form, and the plan lists it among its
	// expansions.
	NoExpand bool
	// residents keeps the resident pairs planned over PlanGraph's fusion
	// choices, which share them (residentKey).
	residents *residentMemo
}

// listedPerEvaluation bounds, in a layout class other than the declared
// one, the candidates listed without a legal one per evaluation of the
// class's budget (Options.MaxListedIllegal): 300,000 at the default
// budget. Session 32 counted, on the four shipped graphs planned whole
// with --vector-ops, the candidates each search had listed when it found
// its first legal one: at most 51,592 (the prefill layer's pv, after
// 1,107 evaluations; 15,552 in the MoE block, 1,438 in the attention
// head). At 100 the decode layer's qk with its scores Hkv innermost, where
// no candidate is legal, listed a million candidates, 6.4 s of the
// layer's 16 s of CPU; at 30 it lists 300,000 and the layer plans in
// 8.1-8.6 s instead of 10.3-10.4 s, its plan byte for byte the same.
const listedPerEvaluation = 30

// MaxFusionChoices bounds the fusion choices PlanGraph compares: every
// combination of a prefix (or none) of each of a graph's fusions when
// there are at most this many, else none fused and all fused.
const MaxFusionChoices = 16

// ErrNotCached is the error of an op plan missing from the cache under
// GraphOptions.CacheOnly.
var ErrNotCached = errors.New("not in the plan cache")

// PlanCache holds op plans between runs, keyed by content (GraphKey). It
// also remembers the searches that gave no plan within their evaluation
// budget (a result the key determines, as a plan is): GetNone returns the
// error such a search gave.
type PlanCache interface {
	Get(key string, w *workload.Workload, op string) (*plan.Plan, bool)
	Put(key string, p *plan.Plan) error
	GetNone(key string) (error, bool)
	PutNone(key string, err error) error
}

// Defaults of GraphOptions.
const (
	DefaultLayouts  = 2
	DefaultMaxNodes = 1 << 20
	// DefaultLayoutEvaluations: 10,000 evaluations take 2-3 s on the
	// decode layer's pv with its weights Hkv innermost, where no candidate
	// is legal; run beside the other ops' searches (runJobs), they let the
	// whole decode layer plan in under 10 s from the stored einsum plans.
	// A search that found a plan on the shipped graphs spent at most
	// 1,107 evaluations before its first legal candidate (session 32).
	DefaultLayoutEvaluations = 10_000
)

// layoutClass is one class of an op: the layout of each operand (inputs,
// then outputs) as an axis order; nil entries are the declared order.
type layoutClass struct {
	layouts [][]string
	plan    *plan.Plan
	cycles  float64
	// gather, when set, is a gather this class's kernel can do in its own
	// loads (gatherSavings): fused, its program reads the gather's table
	// through its index and prices as plan's, and the gather's kernel,
	// gatherCycles, is gone. The model's cost of the class is cycles −
	// gatherCycles (cost).
	gather       string
	fused        *kernel.Program
	gatherCycles float64
}

// cost is the class's cost in the graph model: its kernel's cycles, less
// those of a gather it does in its loads.
func (c *layoutClass) cost() float64 { return c.cycles - c.gatherCycles }

// gop is an op of the graph being planned.
type gop struct {
	op      *workload.Op
	status  string
	reason  string
	classes []layoutClass
}

// graphModel is the planning model of a graph.
type graphModel struct {
	w     *workload.Workload
	spec  *engines.Spec
	ops   []gop
	order []int                 // topological order of the ops
	prod  map[string]int        // tensor → producing op
	cons  map[string][]int      // tensor → consuming ops, program order
	cands map[string][][]string // tensor → candidate axis orders (declared first)
	bytes map[string]int64
	// relay memoizes relayCost (tensor, from, to → cycles), dma prices the
	// relayouts' DMA commands, relayErr is the first relayout with no
	// command (PlanGraph reports it).
	relay    map[string]float64
	dma      *cost.DMAModel
	relayErr error
	es       []gedge // the edges, once computed (edges)
	// mu guards the plan cache, cached, planned and the progress reports
	// while runJobs plans ops at once.
	mu      sync.Mutex
	cached  int
	planned int
	// unplanned counts the layout classes whose search gave no plan.
	unplanned int
	// plain is the workload without fusions when w is a fusion choice
	// (plainNone), nil otherwise.
	plain *workload.Workload
	// resident counts the tensors given the choice of staying in DM
	// (addResident).
	resident int
}

// PlanGraph plans a graph workload: every op's plan for every layout class,
// then the classes minimising the graph's cycles.
func PlanGraph(w *workload.Workload, o GraphOptions) (*plan.Graph, error) {
	if w == nil || w.Form != workload.FormGraph {
		return nil, errors.New("search: PlanGraph: not a graph workload")
	}
	if !o.VectorOps || o.NoExpand {
		return planFused(w, o)
	}
	// An expansion is kept when each of its parts has a kernel: a part
	// without one (a Vector Engine op space with no legal candidate at
	// the graph's sizes) would leave several ops unplanned where the op
	// itself is one; the op then stays as it is and the graph is planned
	// again (its op plans from memory).
	var except []string
	why := map[string]string{} // an op not expanded: the part without a kernel
	o.Cache = &memCache{next: o.Cache, plans: map[string]*plan.Plan{}, none: map[string]error{}}
	var g *plan.Graph
	var exps []workload.Expansion
	for {
		xw, xs, err := workload.ExpandExcept(w, except)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if g, err = planFused(xw, o); err != nil {
			return nil, err
		}
		byName := map[string]*plan.GraphOp{}
		for i := range g.Ops {
			byName[g.Ops[i].Name] = &g.Ops[i]
		}
		var drop []string
		exps = exps[:0]
		for _, x := range xs {
			if i := slices.IndexFunc(x.Parts, func(p string) bool { return byName[p].Status == plan.StatusNotPlannable }); i >= 0 {
				drop = append(drop, x.Op.Name)
				p := byName[x.Parts[i]]
				why[x.Op.Name] = fmt.Sprintf("its form in other ops has a part without a kernel at these sizes, %s (%s): %s", p.Name, p.Kind, p.Reason)
				continue
			}
			exps = append(exps, x)
		}
		if len(drop) == 0 {
			break
		}
		except = append(except, drop...)
	}
	g.Search.NotExpanded = except
	for i := range g.Ops {
		if w, ok := why[g.Ops[i].Name]; ok {
			g.Ops[i].Reason = strings.TrimSuffix(g.Ops[i].Reason, ".") + "; " + w
		}
	}
	if len(exps) == 0 {
		return g, g.Validate()
	}
	for _, x := range exps {
		g.Expansions = append(g.Expansions, plan.Expansion(graphOpOf(x.Op), x.Parts))
		for i := range g.Ops {
			if slices.Contains(x.Parts, g.Ops[i].Name) {
				g.Ops[i].ExpandedFrom = x.Op.Name
			}
		}
	}
	// The roofline is the workload's: its inputs, outputs and einsums,
	// not the constants the expansions add.
	setRoofline(&g.Cost, w, o.Spec)
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("search: graph plan of %s: %w", w.Name, err)
	}
	return g, nil
}

// graphOpOf is op as a graph plan states it: its name, kind, operands and
// parameters (the caller sets its status, plan and schedule).
func graphOpOf(op *workload.Op) plan.GraphOp {
	return plan.GraphOp{Name: op.Name, Kind: string(op.Kind), Inputs: op.Inputs, Outputs: op.Outputs,
		Axis: op.Axis, Axes: op.Axes, Query: op.Query, Key: op.Key, K: op.K, Reduce: op.Reduce, Scalar: op.Scalar}
}

// setRoofline sets c's roofline: the layer w's (LayerRoofline), and the
// share of it c's cycles reach.
func setRoofline(c *plan.GraphCost, w *workload.Workload, spec *engines.Spec) {
	c.RooflineCycles, c.Roofline = LayerRoofline(w, spec), 0
	if c.Cycles > 0 {
		c.Roofline = c.RooflineCycles / c.Cycles
	}
}

// planFused is PlanGraph over w's ops as they stand, each fusion choice
// weighed.
func planFused(w *workload.Workload, o GraphOptions) (*plan.Graph, error) {
	if o.Spec == nil {
		return nil, errors.New("search: PlanGraph: no hardware spec")
	}
	if o.Planner == nil {
		o.Planner = EinsumPlanner(o.Spec)
	}
	if o.Layouts <= 0 {
		o.Layouts = DefaultLayouts
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	if o.residents == nil {
		o.residents = &residentMemo{pairs: map[string]residentResult{}, cache: o.Cache}
	}
	var fs []workload.Fusion
	if o.VectorOps && !o.NoFuse {
		fs = workload.Fusions(w)
	}
	if len(fs) == 0 {
		g, err := planGraph(w, nil, o)
		if err != nil {
			return nil, err
		}
		if err := overlap(o.Spec, g); err != nil {
			return nil, err
		}
		return g, nil
	}
	choices := fusionChoices(fs)
	// The choices share their op plans: an op outside the fusions plans
	// the same in each.
	mem := &memCache{next: o.Cache, plans: map[string]*plan.Plan{}, none: map[string]error{}}
	o.Cache = mem
	var best *plan.Graph
	var baseline, lower float64
	proven := true
	nodes, cached, searched, compared := 0, 0, 0, 0
	for k, sub := range choices {
		wv := w
		if len(sub) > 0 {
			var err error
			if wv, err = workload.Fuse(w, sub); err != nil {
				return nil, err
			}
		}
		var plain *workload.Workload
		if len(sub) > 0 {
			plain = w
		}
		g, err := planGraph(wv, plain, o)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			baseline = g.Cost.BaselineCycles
		}
		nodes += g.Search.Nodes
		cached += g.Search.Cached
		searched += g.Search.Searched
		if !fusedPlanned(g, sub) {
			// A fused einsum without a kernel: no choice (its fused ops
			// would run in no kernel).
			continue
		}
		compared++
		if len(sub) > 0 {
			if g, err = unfuse(g, w, sub); err != nil {
				return nil, err
			}
		}
		proven = proven && g.Search.Optimal == "proven"
		if compared == 1 || g.Search.LowerBound < lower {
			lower = g.Search.LowerBound
		}
		// Fewer ops without a kernel first (such an op counts nothing),
		// then fewer cycles.
		if best == nil || g.Cost.NotPlannable < best.Cost.NotPlannable ||
			g.Cost.NotPlannable == best.Cost.NotPlannable && g.Cost.Cycles < best.Cost.Cycles {
			best = g
		}
	}
	c := &best.Cost
	c.BaselineCycles = baseline
	c.Saving = 0
	setRoofline(c, w, o.Spec)
	if baseline > 0 {
		c.Saving = (baseline - c.Cycles) / baseline
	}
	st := &best.Search
	// Searched and Cached count each op plan once over the run: a plan an
	// earlier choice searched or read is not counted again; Unplanned is
	// the kept choice's own.
	st.Fusions, st.Nodes, st.Cached, st.Searched = compared, nodes, cached-mem.hits, searched
	st.Optimal, st.LowerBound, st.Gap = "", min(lower, c.Cycles), 0
	if proven {
		st.Optimal, st.LowerBound = "proven", c.Cycles
	} else if c.Cycles > 0 {
		st.Gap = (c.Cycles - st.LowerBound) / c.Cycles
	}
	// The schedule of the choice kept only (the choices are chosen on
	// Cycles).
	if err := overlap(o.Spec, best); err != nil {
		return nil, err
	}
	if err := best.Validate(); err != nil {
		return nil, fmt.Errorf("search: graph plan of %s: %w", w.Name, err)
	}
	return best, nil
}

// planGraph plans w with its ops as they stand (PlanGraph for one fusion
// choice; plain is the workload without fusions, nil when w is it).
func planGraph(w, plain *workload.Workload, o GraphOptions) (*plan.Graph, error) {
	m, err := newGraphModel(w, o)
	if err != nil {
		return nil, err
	}
	m.plain = plain
	if err := m.planOps(o); err != nil {
		return nil, err
	}
	if o.VectorOps && !o.NoResidency {
		if err := m.addResident(o.residents); err != nil {
			return nil, err
		}
	}
	if o.VectorOps && !o.NoFuse {
		if err := m.gatherSavings(); err != nil {
			return nil, err
		}
	}
	choice, st := m.solve(o.MaxNodes)
	if m.relayErr != nil {
		return nil, m.relayErr
	}
	base := make([]int, len(m.ops))
	g, err := m.graphPlan(choice, base, st)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// overlap sets g's OverlapCycles: every kernel in one program as the
// scheduler runs it (GraphSchedule); left 0 when a padded kernel or a
// relayout has no place in that program.
func overlap(spec *engines.Spec, g *plan.Graph) error {
	if g.Cost.Planned == 0 {
		return nil
	}
	r, err := GraphSchedule(spec, g)
	switch {
	case err == nil:
		g.Cost.OverlapCycles = r.Cycles
	case !errors.Is(err, ErrPadded) && !errors.Is(err, ErrRelayout):
		return err
	}
	return nil
}

// newGraphModel builds the model: the dataflow, the topological order
// (gonum), the candidate layouts and the relayout prices.
func newGraphModel(w *workload.Workload, o GraphOptions) (*graphModel, error) {
	m := &graphModel{w: w, spec: o.Spec, prod: map[string]int{}, cons: map[string][]int{},
		cands: map[string][][]string{}, bytes: map[string]int64{}, relay: map[string]float64{}}
	g := simple.NewDirectedGraph()
	for i, op := range w.Ops {
		m.ops = append(m.ops, gop{op: op})
		g.AddNode(simple.Node(i))
		for _, t := range op.Outputs {
			m.prod[t] = i
		}
	}
	for i, op := range w.Ops {
		for _, t := range op.Inputs {
			m.cons[t] = append(m.cons[t], i)
			if p, ok := m.prod[t]; ok && p != i && !g.HasEdgeFromTo(int64(p), int64(i)) {
				g.SetEdge(g.NewEdge(simple.Node(p), simple.Node(i)))
			}
		}
	}
	sorted, err := topo.SortStabilized(g, sortNodes)
	if err != nil {
		return nil, fmt.Errorf("%s: the ops' dataflow has a cycle: %v", w.File, err)
	}
	for _, n := range sorted {
		m.order = append(m.order, int(n.ID()))
	}
	for _, t := range w.Tensors {
		n, err := t.DType.BytesFor(int(t.Elems))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: tensor %s: %w", w.File, t.Line, t.Name, err)
		}
		m.bytes[t.Name] = int64(n)
		m.cands[t.Name] = [][]string{nil}
	}
	return m, nil
}

// sortNodes orders a set of ops of equal topological rank by program
// order, so that the order is deterministic.
func sortNodes(ns []graph.Node) {
	slices.SortFunc(ns, func(a, b graph.Node) int { return int(a.ID() - b.ID()) })
}

// distinctOrders returns up to n−1 orders of axes whose row-major layouts
// differ from the declared one's and from each other's, in lexicographic
// order of the positions. Two orders are the same layout when they agree
// on the axes of size above one (m![B, D] ≡ m![D, B] when B = 1): such a
// pair would plan the same kernels twice and price a relayout between
// equal bytes.
func (m *graphModel) distinctOrders(axes []string, n int) [][]string {
	var out [][]string
	seen := map[string]bool{m.orderKey(axes): true}
	idx := make([]int, len(axes))
	for i := range idx {
		idx[i] = i
	}
	for len(out) < n-1 && nextPermutation(idx) {
		p := make([]string, len(axes))
		for i, k := range idx {
			p[i] = axes[k]
		}
		if key := m.orderKey(p); !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out
}

// orderKey names the row-major layout of axes in order: the axes of size
// above one, which alone place bytes.
func (m *graphModel) orderKey(order []string) string {
	var b strings.Builder
	for _, a := range order {
		if n, _ := m.w.Axes.Size(a); n > 1 {
			b.WriteString(a)
			b.WriteByte(',')
		}
	}
	return b.String()
}

// nextPermutation advances idx to the next permutation in lexicographic
// order; false after the last.
func nextPermutation(idx []int) bool {
	i := len(idx) - 2
	for i >= 0 && idx[i] >= idx[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(idx) - 1
	for idx[j] <= idx[i] {
		j--
	}
	idx[i], idx[j] = idx[j], idx[i]
	slices.Reverse(idx[i+1:])
	return true
}

// operands lists an op's operands: inputs then outputs.
func operands(op *workload.Op) []string {
	return append(append([]string{}, op.Inputs...), op.Outputs...)
}

// planOps gives every op its classes. First each op is planned with its
// operands in their declared layouts (a reshape is a view; an op the
// planner refuses is not plannable, with that one class). Then a tensor
// whose producer and at least one consumer both have kernels gets its
// other candidate layouts (up to o.Layouts in all), and every op is
// planned for each combination of its operands' candidates that is not
// all-declared.
func (m *graphModel) planOps(o GraphOptions) error {
	n := len(m.ops)
	known := make([]bool, n) // the op's status is final
	var jobs []*opJob
	for i := range m.ops {
		g := &m.ops[i]
		declared := make([][]string, len(operands(g.op)))
		if g.op.Kind == workload.KindReshape {
			g.status, known[i] = plan.StatusView, true
			g.classes = []layoutClass{{layouts: declared}}
			continue
		}
		jobs = append(jobs, &opJob{op: i, layouts: declared, declared: true})
	}
	// deps[i]: the ops whose status op i's layout classes depend on, the
	// producers and consumers of its operands (tensorCands).
	deps := make([][]int, n)
	for i := range m.ops {
		for _, t := range operands(m.ops[i].op) {
			if p, ok := m.prod[t]; ok {
				deps[i] = append(deps[i], p)
			}
			deps[i] = append(deps[i], m.cons[t]...)
		}
	}
	expanded := make([]bool, n)
	computed := map[string]bool{}
	// expand queues op i's classes in layouts other than the declared
	// ones once the statuses they depend on are known.
	expand := func() {
		if o.Layouts < 2 {
			return
		}
		for i := range m.ops {
			if expanded[i] || !known[i] || m.ops[i].status != plan.StatusPlanned || slices.ContainsFunc(deps[i], func(j int) bool { return !known[j] }) {
				continue
			}
			expanded[i] = true
			combos := [][][]string{nil}
			for _, t := range operands(m.ops[i].op) {
				m.tensorCands(t, o, computed)
				var next [][][]string
				for _, c := range combos {
					for _, l := range m.cands[t] {
						next = append(next, append(slices.Clone(c), l))
					}
				}
				combos = next
			}
			for _, c := range combos[1:] { // combos[0] is the declared class
				jobs = append(jobs, &opJob{op: i, layouts: c})
			}
		}
	}
	expand()
	var first *opJob // the first job in order that failed
	// The searches that may run until their budget are an einsum's in
	// other layouts: first those, then the declared ops whose status they
	// wait for, then the others in order (the order changes when a search
	// runs, not what it gives).
	unblocks := make([]bool, n)
	for i := range m.ops {
		if m.ops[i].op.Kind == workload.KindEinsum {
			for _, j := range deps[i] {
				unblocks[j] = true
			}
		}
	}
	prio := func(j *opJob) int {
		switch einsum := m.ops[j.op].op.Kind == workload.KindEinsum; {
		case !j.declared && einsum:
			return 3
		case j.declared && unblocks[j.op]:
			return 2
		case !j.declared:
			return 1
		}
		return 0
	}
	m.runJobs(&jobs, o, prio, func(j *opJob) bool {
		if !j.declared {
			if j.err != nil && !isNoChoice(j.err) && (first == nil || j.seq < first.seq) {
				first = j
			}
			return first == nil
		}
		g := &m.ops[j.op]
		var np *NotPlannableError
		switch {
		case errors.As(j.err, &np):
			g.status, g.reason = plan.StatusNotPlannable, np.Error()
			g.classes = []layoutClass{{layouts: j.layouts}}
		case j.err != nil:
			if first == nil || j.seq < first.seq {
				first = j
			}
			return false
		default:
			g.status = plan.StatusPlanned
			g.classes = []layoutClass{{layouts: j.layouts, plan: j.plan, cycles: j.plan.Cost.Cycles}}
		}
		known[j.op] = true
		expand()
		return first == nil
	})
	if first != nil {
		return first.err
	}
	// Every tensor's candidate layouts, whether or not an op's classes
	// read them (relayouts do).
	for _, t := range m.w.Tensors {
		m.tensorCands(t.Name, o, computed)
	}
	// Each op's classes in the order of its combinations: an op's jobs
	// are queued together (expand), so which op's come first, which
	// depends on the searches' timing, changes no op's list.
	for _, j := range jobs {
		if j.declared {
			continue
		}
		if isNoChoice(j.err) {
			m.unplanned++ // no plan in these layouts (within the budget): not a choice
			continue
		}
		g := &m.ops[j.op]
		g.classes = append(g.classes, layoutClass{layouts: j.layouts, plan: j.plan, cycles: j.plan.Cost.Cycles})
	}
	return nil
}

// isNoChoice reports whether err is a search that gave no plan in its
// layouts: no kernel or no legal candidate, or none within its budget.
func isNoChoice(err error) bool {
	var np *NotPlannableError
	var se *StoppedError
	return errors.As(err, &np) || errors.As(err, &se)
}

// tensorCands adds tensor t's candidate layouts other than the declared
// one to m.cands, once (computed): the distinct axis orders of a tensor a
// planned op produces and another planned op computes on. It reads the
// statuses of t's producer and consumers.
func (m *graphModel) tensorCands(name string, o GraphOptions, computed map[string]bool) {
	if computed[name] || o.Layouts < 2 {
		return
	}
	computed[name] = true
	t := m.w.Tensor(name)
	planned := func(i int) bool { return m.ops[i].status == plan.StatusPlanned }
	// A consumer whose kernel computes on the tensor: an update_slice's is
	// one DMA of its slice, the same few descriptors from any layout
	// (opslice.go), so a layout of the slice another op could not use
	// never pays for its producer's search.
	computes := func(i int) bool { return planned(i) && m.w.Ops[i].Kind != workload.KindUpdateSlice }
	p, produced := m.prod[name]
	// An update_slice's result is its destination updated in place:
	// the destination's layout. A gather's output is the layout its DMA
	// writes, the index's axes then the table's row (opgather.go), and a
	// scatter's the one it writes (its scattered axes, then the row): no
	// other layout of it is searched (docs/spec-decisions.md "Gather: the
	// DMA's indirect loop").
	if t == nil || !produced || t.LayoutExpr != nil || !planned(p) || !slices.ContainsFunc(m.cons[name], computes) ||
		m.w.Ops[p].Kind == workload.KindUpdateSlice || m.w.Ops[p].Kind == workload.KindGather || m.w.Ops[p].Kind == workload.KindScatter {
		return
	}
	m.cands[name] = append(m.cands[name], m.distinctOrders(t.Axes, o.Layouts)...)
}

// opJob is one op plan graph planning asks for: op (an index of
// graphModel.ops) in a layout class (declared: its operands' declared
// layouts), and what planOp gave; seq is its place in the run.
type opJob struct {
	op       int
	layouts  [][]string
	declared bool
	seq      int
	plan     *plan.Plan
	err      error
}

// runJobs plans the jobs, as many at a time as the options' workers (0:
// GOMAXPROCS), the first of the highest priority next; done is called with each finished job on the
// calling goroutine, and may append jobs (the classes an op's status
// opens); it returns false to start no more. Each search is deterministic
// (its budget counts evaluations, and its result does not depend on its
// workers), and what the jobs add depends only on the statuses, so the
// graph plan does not depend on which search finishes first: the decode
// layer's attention einsums, searched in layouts with no legal candidate,
// run beside the Vector Engine ops' searches instead of after them.
func (m *graphModel) runJobs(jobs *[]*opJob, o GraphOptions, prio func(*opJob) int, done func(*opJob) bool) {
	n := o.Op.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	work := make(chan *opJob)
	finished := make(chan *opJob)
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Go(func() {
			for j := range work {
				j.plan, j.err = m.planOp(m.ops[j.op].op, j.layouts, o)
				finished <- j
			}
		})
	}
	// The next job: the first of the highest priority. The searches
	// running at once share the process's memory budget
	// (Options.MemoryBudget: the live heap, withMemoryBudget).
	sent := map[*opJob]bool{}
	pick := func() *opJob {
		var best *opJob
		for _, j := range *jobs {
			if !sent[j] && (best == nil || prio(j) > prio(best)) {
				best = j
			}
		}
		return best
	}
	numbered := 0 // jobs[:numbered] have their seq
	inflight, more := 0, true
	for {
		for ; numbered < len(*jobs); numbered++ {
			(*jobs)[numbered].seq = numbered
		}
		var send chan *opJob
		var j *opJob
		if more {
			if j = pick(); j != nil {
				send = work
			}
		}
		if send == nil && inflight == 0 {
			break
		}
		select {
		case send <- j:
			sent[j] = true
			inflight++
		case f := <-finished:
			inflight--
			more = done(f) && more
		}
	}
	close(work)
	wg.Wait()
}

// planOp plans op with its operands in the layouts ls (nil: declared),
// through the cache.
func (m *graphModel) planOp(op *workload.Op, layouts [][]string, o GraphOptions) (*plan.Plan, error) {
	ls := layouts
	w := m.w
	if slices.ContainsFunc(ls, func(l []string) bool { return l != nil }) {
		w = withLayouts(m.w, operands(op), ls)
		budget := o.LayoutEvaluations
		if budget <= 0 {
			budget = DefaultLayoutEvaluations
		}
		if o.Op.MaxEvaluations <= 0 || o.Op.MaxEvaluations > budget {
			o.Op.MaxEvaluations = budget
		}
		// A class whose candidates all break one rule lists millions of
		// them before its evaluations reach the budget: at
		// listedPerEvaluation listed a budgeted evaluation with none
		// legal, it has no plan either.
		o.Op.MaxListedIllegal = listedPerEvaluation * budget
	}
	// The cache, the counters and the progress report are shared by the
	// jobs runJobs runs at once; the search is not.
	m.mu.Lock()
	locked := true
	defer func() {
		if locked {
			m.mu.Unlock()
		}
	}()
	key := ""
	if o.Cache != nil && (o.VectorOps || op.Kind == workload.KindEinsum) {
		var err error
		if key, err = GraphKey(w, op.Name, m.spec, o.Op); err != nil {
			return nil, err
		}
		if err, ok := o.Cache.GetNone(key); ok {
			return nil, err
		}
		if err := m.plainNone(op, ls, o); err != nil {
			return nil, err
		}
		if p, ok := o.Cache.Get(key, w, op.Name); ok {
			// A stored plan states the cost of the model it was priced
			// with: price its program with the model in force.
			if err := reprice(m.spec, p); err != nil {
				return nil, fmt.Errorf("%s: op %s: stored plan: %w", w.File, op.Name, err)
			}
			m.cached++
			return p, nil
		}
	}
	if o.CacheOnly && op.Kind == workload.KindEinsum {
		return nil, fmt.Errorf("%s:%d: op %s: %w (--cache-only)", w.File, op.Line, op.Name, ErrNotCached)
	}
	m.mu.Unlock()
	locked = false
	start := time.Now()
	p, err := o.Planner(w, op.Name, o.Op)
	m.mu.Lock()
	locked = true
	var np *NotPlannableError
	if err != nil && errors.As(err, &np) {
		if mc, ok := o.Cache.(*memCache); ok && key != "" {
			mc.none[key] = err // the next fusion choice need not ask again
		}
		return nil, err // the op has no kernel
	}
	if err == nil {
		m.planned++
	}
	if o.Progress != nil {
		var ls []string
		for i, t := range operands(op) {
			ls = append(ls, m.layoutText(t, layouts[i]))
		}
		name := op.Name
		for _, e := range op.Epilogue {
			name += "+" + e.Name // a fused einsum: qk+scale
		}
		o.Progress(name, ls, time.Since(start), m.planned, err)
	}
	if err != nil {
		var se *StoppedError
		if key != "" && errors.As(err, &se) && se.Stopped == StoppedBudget {
			if perr := o.Cache.PutNone(key, err); perr != nil {
				return nil, perr
			}
		}
		return nil, err
	}
	if key != "" {
		if err := o.Cache.Put(key, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// reprice sets p's cost to the cost model's price of its program (a
// lowered copy) on spec.
func reprice(spec *engines.Spec, p *plan.Plan) error {
	data, err := p.Program.MarshalJSON()
	if err != nil {
		return err
	}
	q := &kernel.Program{}
	if err := q.UnmarshalJSON(data); err != nil {
		return err
	}
	if err := engines.Lower(spec, q); err != nil {
		return err
	}
	r, err := cost.Estimate(spec, q)
	if err != nil {
		return err
	}
	p.Cost = Cost(r)
	return nil
}

// plainNone returns the error of the einsum op without its epilogue in
// the layouts ls (the contraction's output in the layout ls gives the
// epilogue's output) when that search gave no plan within its evaluation
// budget (the cache's KEY.none): the fused einsum is then not searched in
// those layouts. Fusing only removes candidates (split and chunked K) and
// adds Vector Engine stages to the legal ones, so the plain einsum's
// legal candidates cover the fused one's. Nil otherwise, and for an op in
// its declared layouts or without an epilogue.
func (m *graphModel) plainNone(op *workload.Op, ls [][]string, o GraphOptions) error {
	if m.plain == nil || len(op.Epilogue) == 0 || !slices.ContainsFunc(ls, func(l []string) bool { return l != nil }) {
		return nil
	}
	raw := op.Epilogue[0].Inputs[0]
	// The contraction's operands: its two inputs (not the epilogue's
	// tensors after them) and its own output, in the fused output's layout.
	n := min(len(op.Inputs), workload.EinsumArity)
	names := append(slices.Clone(op.Inputs[:n]), raw)
	pls := append(slices.Clone(ls[:n]), ls[len(ls)-1])
	key, err := GraphKey(withLayouts(m.plain, names, pls), op.Name, m.spec, o.Op)
	if err != nil {
		return nil
	}
	if err, ok := o.Cache.GetNone(key); ok {
		return &StoppedError{Op: op.Name, Stopped: StoppedBudget,
			Why: fmt.Sprintf("%s:%d: op %s: not searched with its epilogue in these layouts: without it, %v", m.w.File, op.Line, op.Name, err)}
	}
	return nil
}

// withLayouts returns a copy of w whose tensors names[i] are stored
// row-major in the order ls[i] (nil: unchanged).
func withLayouts(w *workload.Workload, names []string, ls [][]string) *workload.Workload {
	c := *w
	c.Tensors = slices.Clone(w.Tensors)
	for i, name := range names {
		if ls[i] == nil {
			continue
		}
		for k, t := range c.Tensors {
			if t.Name != name {
				continue
			}
			nt := *t
			nt.LayoutExpr = orderExpr(w, ls[i])
			nt.Layout = "m![" + nt.LayoutExpr.Text() + "]"
			c.Tensors[k] = &nt
		}
	}
	return &c
}

// orderExpr is the row-major layout of axes in the given order.
func orderExpr(w *workload.Workload, axes []string) *mapping.Expr {
	if len(axes) == 0 {
		return mapping.Identity()
	}
	parts := make([]*mapping.Expr, len(axes))
	for i, a := range axes {
		n, _ := w.Axes.Size(a)
		parts[i] = mapping.Sym(a, n)
	}
	return mapping.Pair(parts...)
}

// layoutText is a tensor's layout for order (nil: its declared layout;
// plan.PlaceDM for a tensor handed over in DM).
func (m *graphModel) layoutText(tensor string, order []string) string {
	if isDM(order) {
		return plan.PlaceDM
	}
	t := m.w.Tensor(tensor)
	if order == nil {
		if t.LayoutExpr != nil {
			return t.LayoutExpr.Text()
		}
		order = t.Axes
	}
	return orderExpr(m.w, order).Text()
}

// stored returns the layout op i's class k writes tensor t in.
func (m *graphModel) layoutOf(i, k int, t string) []string {
	for j, x := range operands(m.ops[i].op) {
		if x == t {
			return m.ops[i].classes[k].layouts[j]
		}
	}
	return nil
}

// edges are the (tensor, producer, consumer, input position) pairs.
type gedge struct {
	tensor   string
	from, to int
}

func (m *graphModel) edges() []gedge {
	if m.es != nil {
		return m.es
	}
	es := []gedge{}
	for _, t := range m.w.Tensors {
		p, ok := m.prod[t.Name]
		if !ok {
			continue
		}
		for _, c := range m.cons[t.Name] {
			es = append(es, gedge{t.Name, p, c})
		}
	}
	m.es = es
	return es
}

// relayout is the cost of edge e with the producer in class a and the
// consumer in class b.
func (m *graphModel) relayout(e gedge, a, b int) float64 {
	from, to := m.layoutOf(e.from, a, e.tensor), m.layoutOf(e.to, b, e.tensor)
	if slices.Equal(from, to) {
		return 0
	}
	if isDM(from) || isDM(to) {
		return math.Inf(1) // left in DM, read from HBM, or the reverse: no assignment
	}
	return m.relayCost(e.tensor, m.layoutOf(e.from, a, e.tensor), m.layoutOf(e.to, b, e.tensor))
}

// layoutExpr is tensor t's HBM layout for order (nil: its declared one).
func (m *graphModel) layoutExpr(t string, order []string) *mapping.Expr {
	if order == nil {
		x := m.w.Tensor(t)
		if x.LayoutExpr != nil {
			return x.LayoutExpr
		}
		order = x.Axes
	}
	return orderExpr(m.w, order)
}

// relayCost is the cycles of copying tensor t from the HBM layout from
// into to (axis orders; nil: the declared layout): the DMA command the
// engines derive for the copy (engines.DeriveRelayout: both layouts'
// runs, spread over the clusters' DMNs) as the cost model prices it
// (docs/spec-decisions.md "Graph relayouts"). A copy with no command costs
// +Inf and is recorded in relayErr.
func (m *graphModel) relayCost(t string, from, to []string) float64 {
	key := t + "|" + strings.Join(from, ",") + "|" + strings.Join(to, ",")
	if c, ok := m.relay[key]; ok {
		return c
	}
	c, err := m.relayPrice(t, from, to)
	if err != nil {
		c = math.Inf(1)
		if m.relayErr == nil {
			m.relayErr = fmt.Errorf("%s: relayout of tensor %s from %s to %s: %w", m.w.File, t, m.layoutText(t, from), m.layoutText(t, to), err)
		}
	}
	m.relay[key] = c
	return c
}

func (m *graphModel) relayPrice(t string, from, to []string) (float64, error) {
	if m.dma == nil {
		var err error
		if m.dma, err = cost.NewDMAModel(m.spec); err != nil {
			return 0, err
		}
	}
	return relayoutCycles(m.spec, m.dma, m.w.Axes, m.w.Tensor(t).DType, m.layoutExpr(t, from), m.layoutExpr(t, to))
}

// RelayoutCycles is the cycles of a graph relayout: the DMA command the
// engines derive for copying a tensor of type dt from the HBM layout from
// into to (engines.DeriveRelayout), the two tensors at two 256 MiB
// multiples as a kernel's, priced by the cost model's DMA model
// (docs/spec-decisions.md "Graph relayouts"). Graph planning chooses
// layouts with it; `tcpmap cost` and `regress` re-price a graph plan's
// relayouts with it.
func RelayoutCycles(spec *engines.Spec, axes mapping.Axes, dt dtype.DType, from, to *mapping.Expr) (float64, error) {
	m, err := cost.NewDMAModel(spec)
	if err != nil {
		return 0, err
	}
	return relayoutCycles(spec, m, axes, dt, from, to)
}

func relayoutCycles(spec *engines.Spec, m *cost.DMAModel, axes mapping.Axes, dt dtype.DType, from, to *mapping.Expr) (float64, error) {
	cmd, err := engines.DeriveRelayout(spec, axes, dt, from, to, 0, plan.GraphAlign)
	if err != nil {
		return 0, err
	}
	est, err := m.EstimateDescriptors(cmd.Descriptors)
	if err != nil {
		return 0, err
	}
	return est.Cycles, nil
}

// inputRelayout is the cost of graph input t read by op i in class k.
func (m *graphModel) inputRelayout(i, k int) float64 {
	s := 0.0
	for _, t := range m.ops[i].op.Inputs {
		if _, ok := m.prod[t]; ok {
			continue
		}
		if l := m.layoutOf(i, k, t); l != nil {
			s += m.relayCost(t, nil, l)
		}
	}
	return s
}

// total is the model's cost of an assignment.
func (m *graphModel) total(choice []int) float64 {
	s := 0.0
	for i := range m.ops {
		s += m.ops[i].classes[choice[i]].cost() + m.inputRelayout(i, choice[i])
	}
	for _, e := range m.edges() {
		s += m.relayout(e, choice[e.from], choice[e.to])
	}
	return s
}

// solveStats says how the assignment was found.
type solveStats struct {
	method     string
	proven     bool
	nodes      int
	lowerBound float64
}

// solve picks one class per op. Ops with one class are fixed; the others
// interact through the edges between them. When every connected set of
// interacting ops is a chain, a dynamic program along each chain is exact;
// otherwise variable elimination (graphelim.go) is, when its tables stay
// within maxElimTable entries, and past that an integer linear program
// (graphilp.go), when its branch and bound finishes within maxNodes LP
// solves; should the simplex fail
// numerically, a branch and bound over the classes in topological order
// (the bound: the cost so far plus each unassigned op's cheapest class)
// takes its place.
func (m *graphModel) solve(maxNodes int) ([]int, solveStats) {
	choice := make([]int, len(m.ops))
	multi := func(i int) bool { return len(m.ops[i].classes) > 1 }
	// The interaction graph of the ops with several classes.
	ug := simple.NewUndirectedGraph()
	for i := range m.ops {
		if multi(i) {
			ug.AddNode(simple.Node(i))
		}
	}
	for _, e := range m.edges() {
		if multi(e.from) && multi(e.to) && e.from != e.to && !ug.HasEdgeBetween(int64(e.from), int64(e.to)) {
			ug.SetEdge(ug.NewEdge(simple.Node(e.from), simple.Node(e.to)))
		}
	}
	chains := true
	for _, comp := range topo.ConnectedComponents(ug) {
		ends := 0
		for _, n := range comp {
			d := ug.From(n.ID()).Len()
			if d > 2 {
				chains = false
			}
			if d <= 1 {
				ends++
			}
		}
		if len(comp) > 1 && ends != 2 {
			chains = false // a cycle
		}
	}
	if chains {
		for _, comp := range topo.ConnectedComponents(ug) {
			m.chainDP(comp, ug, choice)
		}
		c := m.total(choice)
		return choice, solveStats{method: "dp", proven: true, nodes: len(m.ops), lowerBound: c}
	}
	if best, st, ok := m.eliminate(choice); ok {
		return best, st
	}
	if best, st, ok := m.ilpSolve(choice, maxNodes); ok {
		return best, st
	}
	// The simplex failed numerically: enumerate instead.
	return m.branchAndBound(choice, maxNodes)
}

// unary is op i's own cost in class k with the fixed (single-class)
// neighbours' relayouts.
func (m *graphModel) unary(i, k int) float64 {
	s := m.ops[i].classes[k].cost() + m.inputRelayout(i, k)
	for _, e := range m.edges() {
		switch {
		case e.from == i && e.to == i:
			s += m.relayout(e, k, k)
		case e.from == i && len(m.ops[e.to].classes) == 1:
			s += m.relayout(e, k, 0)
		case e.to == i && len(m.ops[e.from].classes) == 1:
			s += m.relayout(e, 0, k)
		}
	}
	return s
}

// pair is the relayout cost between ops i (class a) and j (class b), over
// every edge between them in either direction.
func (m *graphModel) pair(i, a, j, b int) float64 {
	s := 0.0
	for _, e := range m.edges() {
		switch {
		case e.from == i && e.to == j:
			s += m.relayout(e, a, b)
		case e.from == j && e.to == i:
			s += m.relayout(e, b, a)
		}
	}
	return s
}

// chainDP assigns the classes of one chain of interacting ops exactly
// (Viterbi: the cheapest assignment of a path-structured sum of unary and
// pairwise costs).
func (m *graphModel) chainDP(comp []graph.Node, ug *simple.UndirectedGraph, choice []int) {
	if len(comp) == 1 {
		i := int(comp[0].ID())
		best := 0
		for k := range m.ops[i].classes {
			if m.unary(i, k) < m.unary(i, best) {
				best = k
			}
		}
		choice[i] = best
		return
	}
	// Walk the path from its lowest-numbered end.
	var start int64 = -1
	for _, n := range comp {
		if ug.From(n.ID()).Len() == 1 && (start < 0 || n.ID() < start) {
			start = n.ID()
		}
	}
	path := []int{int(start)}
	prev := int64(-1)
	for cur := start; ; {
		var next int64 = -1
		it := ug.From(cur)
		for it.Next() {
			if id := it.Node().ID(); id != prev {
				next = id
			}
		}
		if next < 0 {
			break
		}
		path = append(path, int(next))
		prev, cur = cur, next
	}
	cost := make([][]float64, len(path))
	back := make([][]int, len(path))
	for s, i := range path {
		n := len(m.ops[i].classes)
		cost[s] = make([]float64, n)
		back[s] = make([]int, n)
		for k := 0; k < n; k++ {
			cost[s][k] = m.unary(i, k)
			if s == 0 {
				continue
			}
			best, arg := math.Inf(1), 0
			for a := range cost[s-1] {
				if c := cost[s-1][a] + m.pair(path[s-1], a, i, k); c < best {
					best, arg = c, a
				}
			}
			cost[s][k] += best
			back[s][k] = arg
		}
	}
	last := len(path) - 1
	k := 0
	for a := range cost[last] {
		if cost[last][a] < cost[last][k] {
			k = a
		}
	}
	for s := last; s >= 0; s-- {
		choice[path[s]] = k
		k = back[s][k]
	}
}

// branchAndBound assigns the classes of the ops with several classes in
// topological order, exactly unless maxNodes stops it.
func (m *graphModel) branchAndBound(choice []int, maxNodes int) ([]int, solveStats) {
	var vars []int
	for _, i := range m.order {
		if len(m.ops[i].classes) > 1 {
			vars = append(vars, i)
		}
	}
	pos := map[int]int{}
	for k, i := range vars {
		pos[i] = k
	}
	minUnary := make([]float64, len(vars))
	for k, i := range vars {
		minUnary[k] = math.Inf(1)
		for c := range m.ops[i].classes {
			minUnary[k] = min(minUnary[k], m.unary(i, c))
		}
	}
	rest := make([]float64, len(vars)+1) // Σ minUnary[k:]
	for k := len(vars) - 1; k >= 0; k-- {
		rest[k] = rest[k+1] + minUnary[k]
	}
	fixed := 0.0 // the cost of the single-class ops among themselves
	for i := range m.ops {
		if len(m.ops[i].classes) == 1 {
			fixed += m.ops[i].classes[0].cost() + m.inputRelayout(i, 0)
		}
	}
	for _, e := range m.edges() {
		if len(m.ops[e.from].classes) == 1 && len(m.ops[e.to].classes) == 1 {
			fixed += m.relayout(e, 0, 0)
		}
	}
	best := slices.Clone(choice) // every op in class 0: the baseline
	bestCost := m.total(best)
	cur := slices.Clone(choice)
	nodes := 0
	complete := true
	var rec func(k int, acc float64)
	rec = func(k int, acc float64) {
		if k == len(vars) {
			if acc < bestCost {
				bestCost = acc
				copy(best, cur)
			}
			return
		}
		i := vars[k]
		for c := range m.ops[i].classes {
			if nodes >= maxNodes {
				complete = false
				return
			}
			nodes++
			add := m.unary(i, c)
			for _, j := range vars[:k] {
				add += m.pair(j, cur[j], i, c)
			}
			if fixed+acc+add+rest[k+1] >= bestCost {
				continue
			}
			cur[i] = c
			rec(k+1, acc+add)
			cur[i] = 0
		}
	}
	rec(0, 0)
	st := solveStats{method: "exact", proven: complete, nodes: nodes, lowerBound: bestCost}
	if !complete {
		st.lowerBound = min(bestCost, fixed+rest[0])
	}
	return best, st
}

// graphPlan assembles the graph plan of an assignment: ops with their
// schedule, tensors with their layouts and relayouts, the totals, the
// critical path and the baseline (the assignment base).
func (m *graphModel) graphPlan(choice, base []int, st solveStats) (*plan.Graph, error) {
	w := m.w
	g := &plan.Graph{Version: plan.GraphVersion, Kind: plan.GraphKind,
		Workload: plan.GraphWorkload{File: w.File, Name: w.Name, Axes: w.Axes.String(), Chips: w.Chips}}
	// Relayouts, per consumer.
	incoming := make([]float64, len(m.ops))
	relayouts := map[string][]plan.Relayout{}
	for _, t := range w.Tensors {
		var stored []string
		if p, ok := m.prod[t.Name]; ok {
			stored = m.layoutOf(p, choice[p], t.Name)
		}
		for _, c := range m.cons[t.Name] {
			read := m.layoutOf(c, choice[c], t.Name)
			if slices.Equal(stored, read) {
				continue
			}
			r := plan.Relayout{Consumer: w.Ops[c].Name, To: m.layoutText(t.Name, read), Kind: "dma",
				Bytes: m.bytes[t.Name], Cycles: m.relayCost(t.Name, stored, read)}
			relayouts[t.Name] = append(relayouts[t.Name], r)
			incoming[c] += r.Cycles
		}
	}
	clock := m.spec.Clock.GHz.Value // 002 L2623, L2744 (the manual's 1 GHz assumption)
	now := 0.0
	for i, op := range w.Ops {
		cl := m.ops[i].classes[choice[i]]
		o := graphOpOf(op)
		o.Status, o.Reason, o.Plan, o.Cycles = m.ops[i].status, m.ops[i].reason, cl.plan, cl.cycles
		for j, t := range operands(op) {
			o.Layouts = append(o.Layouts, m.layoutText(t, cl.layouts[j]))
		}
		now += incoming[i]
		o.Start = now
		now += m.weight(i, choice)
		g.Ops = append(g.Ops, o)
		g.Cost.KernelCycles += cl.cycles
		switch o.Status {
		case plan.StatusPlanned:
			g.Cost.Planned++
		case plan.StatusView:
			g.Cost.Views++
		default:
			g.Cost.NotPlannable++
		}
	}
	for _, t := range w.Tensors {
		gt := plan.GraphTensor{Name: t.Name, Axes: t.Axes, DType: t.DType.String(), Role: string(t.Role),
			Bytes: m.bytes[t.Name], Place: plan.PlaceHBM, Relayouts: relayouts[t.Name], Values: t.Values}
		var stored []string
		if p, ok := m.prod[t.Name]; ok {
			gt.Producer = w.Ops[p].Name
			stored = m.layoutOf(p, choice[p], t.Name)
			// A reshape's output is a view of its input; an update_slice's
			// is its destination updated in place (search/opslice.go).
			if k := w.Ops[p].Kind; k == workload.KindReshape || k == workload.KindUpdateSlice {
				gt.View = w.Ops[p].Inputs[0]
			}
		}
		gt.Layout = m.layoutText(t.Name, stored)
		if isDM(stored) {
			gt.Place, gt.Layout = plan.PlaceDM, ""
		}
		for _, c := range m.cons[t.Name] {
			gt.Consumers = append(gt.Consumers, w.Ops[c].Name)
		}
		for _, r := range gt.Relayouts {
			g.Cost.RelayoutCycles += r.Cycles
		}
		g.Tensors = append(g.Tensors, gt)
	}
	m.applyGathers(g, choice)
	c := &g.Cost
	c.Model = "tcpmap/cost"
	c.Cycles = c.KernelCycles + c.RelayoutCycles
	if clock > 0 {
		c.Seconds = c.Cycles / (clock * 1e9)
	}
	if c.Cycles > 0 {
		c.RelayoutShare = c.RelayoutCycles / c.Cycles
	}
	c.CriticalPath, c.CriticalCycles = m.criticalPath(choice, incoming)
	lw := w
	if m.plain != nil {
		lw = m.plain
	}
	setRoofline(c, lw, m.spec)
	c.BaselineCycles = m.total(base)
	for i := range m.ops {
		c.BaselineCycles += m.ops[i].classes[base[i]].gatherCycles // every op alone
	}
	if c.BaselineCycles > 0 {
		c.Saving = (c.BaselineCycles - c.Cycles) / c.BaselineCycles
	}
	choices := 0
	for i := range m.ops {
		choices += len(m.ops[i].classes)
	}
	g.Search = plan.GraphSearch{Method: st.method, Nodes: st.nodes, Choices: choices, LowerBound: min(st.lowerBound, c.Cycles),
		Cached: m.cached, Searched: m.planned, Unplanned: m.unplanned, Resident: m.resident}
	if st.proven {
		g.Search.Optimal = "proven"
		g.Search.LowerBound = c.Cycles
	} else if c.Cycles > 0 {
		g.Search.Gap = (c.Cycles - g.Search.LowerBound) / c.Cycles
	}
	fused := slices.ContainsFunc(w.Ops, func(o *workload.Op) bool { return len(o.Epilogue) > 0 })
	if fused {
		return g, nil // a fused workload's plan is validated restated (unfuse)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("search: graph plan of %s: %w", w.Name, err)
	}
	return g, nil
}

// criticalPath is the longest chain of dependent ops, each weighing its
// kernel's cycles and its incoming relayouts.
func (m *graphModel) criticalPath(choice []int, incoming []float64) ([]string, float64) {
	n := len(m.ops)
	dist := make([]float64, n)
	from := make([]int, n)
	for _, i := range m.order {
		from[i] = -1
		for _, t := range m.ops[i].op.Inputs {
			if p, ok := m.prod[t]; ok && p != i && dist[p] > dist[i] {
				dist[i], from[i] = dist[p], p
			}
		}
		dist[i] += m.weight(i, choice) + incoming[i]
	}
	end := 0
	for i := range dist {
		if dist[i] > dist[end] {
			end = i
		}
	}
	var path []string
	for i := end; i >= 0; i = from[i] {
		path = append(path, m.w.Ops[i].Name)
	}
	slices.Reverse(path)
	return path, dist[end]
}

// GraphKey is the content key of one op's plan in a graph (the plan
// cache's key, as results keys a sweep point): the SHA-256 of the op's
// canonical contraction (ProblemHash) for an einsum, or of its kind,
// parameters and operands (names, axes with sizes, dtypes, layouts) for
// another op; the hardware spec; the search options that change the plan;
// the cost model's version; and the version of the op's mapspace.
func GraphKey(w *workload.Workload, op string, spec *engines.Spec, o Options) (string, error) {
	x := findOp(w, op)
	if x == nil {
		return "", fmt.Errorf("%s: no op named %q", w.File, op)
	}
	var wh string
	var err error
	if x.Kind == workload.KindEinsum {
		p, perr := constraints.NewProblem(w, op)
		if perr != nil {
			return "", perr
		}
		wh, err = ProblemHash(p)
	} else {
		type operand struct {
			Name, DType, Layout string
			Axes                []string
			Sizes               []int64
		}
		// The op without its place in the file: a comment or an op
		// added above it moves no plan.
		xc := *x
		xc.Line = 0
		c := struct {
			Op       *workload.Op
			Chips    int
			Operands []operand
		}{Op: &xc, Chips: w.Chips}
		for _, name := range operands(x) {
			t := w.Tensor(name)
			od := operand{Name: t.Name, DType: t.DType.String(), Axes: t.Axes}
			if t.LayoutExpr != nil {
				od.Layout = t.LayoutExpr.Text()
			}
			for _, a := range t.Axes {
				n, _ := w.AxisSize(a)
				od.Sizes = append(od.Sizes, n)
			}
			c.Operands = append(c.Operands, od)
		}
		wh, err = digest.JSON(c)
	}
	if err != nil {
		return "", err
	}
	hw, err := digest.JSON(spec)
	if err != nil {
		return "", err
	}
	// AllOrders only when set, so that the keys of plans of the named
	// orders stay those stored before it.
	opts, err := digest.JSON(struct {
		MaxEvaluations, MaxTiles int
		AllOrders                bool `json:",omitempty"`
	}{o.MaxEvaluations, o.MaxTiles, o.AllOrders})
	if err != nil {
		return "", err
	}
	keys := []string{wh, hw, opts, cost.Version}
	if x.Kind != workload.KindEinsum {
		keys = append(keys, opSpaceVersion)
		switch x.Kind {
		case workload.KindGather, workload.KindScatter:
			keys = append(keys, gatherVersion)
		case workload.KindReduce:
			keys = append(keys, reduceVersion)
		}
	} else {
		keys = append(keys, mapSpaceVersion)
	}
	return digest.JSON(strings.Join(keys, "\n"))
}

// opSpaceVersion names the Vector Engine ops' mapspace (opspace.go) in the
// plan cache's keys: a plan found in a smaller space is no answer for the
// larger one. Bump it when the space gains candidates.
const opSpaceVersion = "op-space 5: a tile of an input stored in another HBM order is viewed in that order"

// gatherVersion names a gather's derivation (engines.DeriveGather) and the
// pricing of its indirect loop in its plans' keys: its one candidate is
// whatever DMA the derivation writes, priced as the cost model reads an
// indirect entry (cost.Version names the rest of the model).
const gatherVersion = "gather 4: a row's packets and the index positions dealt out to the DMNs; an indirect loop priced at its positions; a scatter; the indexed axes laid out in their declared order"

// reduceVersion names a reduce's space beyond opSpaceVersion's (the
// other kinds' keys stay those stored before it).
const reduceVersion = "reduce 3: the input in DM in its HBM order; a kept innermost axis of fewer than 8 lanes padded to 8"

// mapSpaceVersion names the contractions' mapspace (constraints.Space) in
// the plan cache's keys, as opSpaceVersion the ops'. Bump it when the
// space gains candidates.
const mapSpaceVersion = "map-space 2: cluster and slice digits dealt out"

// fusedPlanned reports whether every einsum fused by fs has a kernel in g
// (a fused workload's plan).
func fusedPlanned(g *plan.Graph, fs []workload.Fusion) bool {
	for _, f := range fs {
		for _, o := range g.Ops {
			if o.Name == f.Einsum && o.Status != plan.StatusPlanned {
				return false
			}
		}
	}
	return true
}

// fusionChoices lists the choices PlanGraph compares, none fused first:
// for each fusion none of its ops or a prefix of them (the scale alone, or
// the scale and the causal mask after it), every combination when there
// are at most MaxFusionChoices, else none and all. A fusion of one op is
// fused or not, as before prefixes: the choices' order is the subsets' of
// those (the first fusion's digit the lowest).
func fusionChoices(fs []workload.Fusion) [][]workload.Fusion {
	n := 1
	for _, f := range fs {
		n *= len(f.Ops) + 1
		if n > MaxFusionChoices {
			return [][]workload.Fusion{nil, fs}
		}
	}
	out := make([][]workload.Fusion, 0, n)
	for k := range n {
		var sub []workload.Fusion
		for _, f := range fs {
			r := len(f.Ops) + 1
			if m := k % r; m > 0 {
				sub = append(sub, workload.Fusion{Einsum: f.Einsum, Ops: f.Ops[:m]})
			}
			k /= r
		}
		out = append(out, sub)
	}
	return out
}

// unfuse restates g, the plan of w fused by fs (workload.Fuse), over w's
// own ops and tensors: each fusion's einsum keeps its output and names its
// epilogue, the fused ops are there with status fused (no kernel, no
// cycles, started when their kernel ends), the tensors between the
// contraction and the epilogue's end are stored nowhere, and the last
// one's producer is the last fused op, its layout the kernel's.
func unfuse(g *plan.Graph, w *workload.Workload, fs []workload.Fusion) (*plan.Graph, error) {
	into := map[string]string{} // fused op → its einsum
	epi := map[string][]string{}
	for _, f := range fs {
		epi[f.Einsum] = f.Ops
		for _, x := range f.Ops {
			into[x] = f.Einsum
		}
	}
	gops := map[string]*plan.GraphOp{}
	for i := range g.Ops {
		gops[g.Ops[i].Name] = &g.Ops[i]
	}
	gts := map[string]*plan.GraphTensor{}
	for i := range g.Tensors {
		gts[g.Tensors[i].Name] = &g.Tensors[i]
	}
	out := *g
	out.Ops, out.Tensors = nil, nil
	at := map[string]int{} // op → its index in w
	for i, op := range w.Ops {
		at[op.Name] = i
	}
	fusedT := map[string]string{}  // tensor stored nowhere → its producer in w
	lastOut := map[string]string{} // an epilogue's output → its fused op
	for _, op := range w.Ops {
		if e, ok := into[op.Name]; ok {
			k := gops[e]
			ops := epi[e]
			last := op.Name == ops[len(ops)-1]
			o := graphOpOf(op)
			o.Status, o.FusedInto, o.Layouts, o.Start = plan.StatusFused, e, []string{""}, k.Start+k.Cycles
			if y := workload.EpilogueOperand(op); y != "" {
				// The kernel reads the operand in its layout there.
				j := slices.Index(k.Inputs, y)
				if j < 0 {
					return nil, fmt.Errorf("search: fused graph of %s: kernel %s does not read %s", w.Name, e, y)
				}
				o.Layouts = append(o.Layouts, k.Layouts[j])
			}
			if last {
				o.Layouts = append(o.Layouts, k.Layouts[len(k.Layouts)-1])
				lastOut[op.Outputs[0]] = op.Name
			} else {
				o.Layouts = append(o.Layouts, "")
				fusedT[op.Outputs[0]] = op.Name
			}
			out.Ops = append(out.Ops, o)
			out.Cost.Fused++
			continue
		}
		k, ok := gops[op.Name]
		if !ok {
			return nil, fmt.Errorf("search: fused graph of %s: no op %s", w.Name, op.Name)
		}
		o := *k
		if ops, ok := epi[op.Name]; ok {
			o.Inputs = op.Inputs // the epilogue's tensors are its ops' inputs
			o.Outputs = op.Outputs
			o.Epilogue = ops
			o.Layouts = append(slices.Clone(k.Layouts[:len(op.Inputs)]), "")
			fusedT[op.Outputs[0]] = op.Name
		}
		out.Ops = append(out.Ops, o)
	}
	for _, t := range w.Tensors {
		if p, ok := fusedT[t.Name]; ok {
			b, err := t.DType.BytesFor(int(t.Elems))
			if err != nil {
				return nil, err
			}
			var cons []string
			for _, x := range w.Ops {
				if slices.Contains(x.Inputs, t.Name) {
					cons = append(cons, x.Name)
				}
			}
			out.Tensors = append(out.Tensors, plan.GraphTensor{Name: t.Name, Axes: t.Axes, DType: t.DType.String(), Role: string(t.Role),
				Bytes: int64(b), Producer: p, Consumers: cons, Place: plan.PlaceFused})
			continue
		}
		gt, ok := gts[t.Name]
		if !ok {
			return nil, fmt.Errorf("search: fused graph of %s: no tensor %s", w.Name, t.Name)
		}
		x := *gt
		if p, ok := lastOut[t.Name]; ok {
			x.Producer = p
		}
		// An epilogue's tensor operand is read by its op, fused into the
		// kernel that loads it (plan.Graph.KernelInputs).
		reader := func(c string) string {
			for _, name := range epi[c] {
				if k, ok := at[name]; ok && workload.EpilogueOperand(w.Ops[k]) == t.Name {
					return name
				}
			}
			return c
		}
		x.Consumers = nil
		for _, c := range gt.Consumers {
			x.Consumers = append(x.Consumers, reader(c))
		}
		slices.SortStableFunc(x.Consumers, func(a, b string) int { return at[a] - at[b] })
		// Its relayouts stay the kernel's: the copy is made for it.
		out.Tensors = append(out.Tensors, x)
	}
	// The critical path passes the fused ops after their kernel.
	var path []string
	for _, n := range g.Cost.CriticalPath {
		path = append(path, n)
		path = append(path, epi[n]...)
	}
	out.Cost.CriticalPath = path
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("search: fused graph of %s: %w", w.Name, err)
	}
	return &out, nil
}

// memCache keeps the op plans of one PlanGraph run in memory, in front of
// next (nil: none), so that its fusion choices share them.
type memCache struct {
	next  PlanCache
	plans map[string]*plan.Plan
	// none holds the searches that gave no plan: stopped at the budget
	// (told next too) or with no kernel in those layouts (memory only).
	none map[string]error
	// hits counts the plans served from memory: read or searched by an
	// earlier choice (not the searches that gave none).
	hits int
}

func (c *memCache) Get(key string, w *workload.Workload, op string) (*plan.Plan, bool) {
	if p, ok := c.plans[key]; ok {
		c.hits++
		return p, true
	}
	if c.next != nil {
		if p, ok := c.next.Get(key, w, op); ok {
			c.plans[key] = p
			return p, true
		}
	}
	return nil, false
}

// GetChain and PutChain pass a resident chain to and from next when it
// keeps chains (residentMemo keeps them in memory).
func (c *memCache) GetChain(key string, n int) ([]*plan.Plan, error, bool) {
	if cc, ok := c.next.(chainCache); ok {
		return cc.GetChain(key, n)
	}
	return nil, nil, false
}

func (c *memCache) PutChain(key string, ps []*plan.Plan, err error) error {
	if cc, ok := c.next.(chainCache); ok {
		return cc.PutChain(key, ps, err)
	}
	return nil
}

func (c *memCache) Put(key string, p *plan.Plan) error {
	c.plans[key] = p
	if c.next != nil {
		return c.next.Put(key, p)
	}
	return nil
}

func (c *memCache) GetNone(key string) (error, bool) {
	if err, ok := c.none[key]; ok {
		return err, true
	}
	if c.next != nil {
		return c.next.GetNone(key)
	}
	return nil, false
}

func (c *memCache) PutNone(key string, err error) error {
	c.none[key] = err
	if c.next != nil {
		return c.next.PutNone(key, err)
	}
	return nil
}

// PriceRelayouts prices every relayout of a graph plan with the model in
// force (search.RelayoutCycles: the DMA command from the tensor's stored
// layout to the one its consumer reads) and calls f with each.
func PriceRelayouts(spec *engines.Spec, gp *plan.Graph, f func(*plan.GraphTensor, *plan.Relayout, float64)) error {
	axes, err := mapping.ParseAxes(gp.Workload.Axes)
	if err != nil {
		return fmt.Errorf("workload.axes: %w", err)
	}
	for i := range gp.Tensors {
		t := &gp.Tensors[i]
		for j := range t.Relayouts {
			r := &t.Relayouts[j]
			at := fmt.Sprintf("tensors[%d].relayouts[%d]", i, j)
			dt, err := dtype.Parse(t.DType)
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			from, err := mapping.Parse(t.Layout, axes, nil)
			if err != nil {
				return fmt.Errorf("tensors[%d].layout: %w", i, err)
			}
			to, err := mapping.Parse(r.To, axes, nil)
			if err != nil {
				return fmt.Errorf("%s.to: %w", at, err)
			}
			c, err := RelayoutCycles(spec, axes, dt, from, to)
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			f(t, r, c)
		}
	}
	return nil
}
