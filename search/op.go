package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"tcpmap/constraints"
	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// PlanOp plans one op of a workload as a kernel: the entry point of graph
// planning. An einsum op (or the single-einsum form, op "") is searched
// as `tcpmap plan --op` searches it (SolveAnyShape: the SAT planner, or
// the exhaustive one with Options.Exhaustive; padded when its sizes have
// no mapping unless Options.NoPad). Any other op kind is planned over its
// own mapspace (opspace.go): every candidate is built into a kernel
// program, lowered by engines/ (a broken rule makes it illegal, counted
// under its rule), priced by cost/, and the cheapest wins; the op spaces
// are small and enumerated whole (Options.Workers candidates at once, read
// off in the space's order), so the optimum is proven by enumeration
// ("exhaustive") unless Timeout, MaxEvaluations or the context stopped the
// enumeration (the plan then carries its gap to the bound of the
// candidates not priced).
//
// An op PlanOp has no kernel for is refused with an error wrapping
// ErrNoKernel (graph planning treats it as not plannable).
//
// The hardware is Options.Spec (nil: engines.Default()). The result's Plan
// holds the lowered kernel.Program and its cost; a view op that needs no
// kernel (a reshape whose row-major layout is the input's) has Free set
// and a plan whose program only declares the two HBM tensors at the same
// address.
func PlanOp(w *workload.Workload, op string, opts Options) (*OpResult, error) {
	if w == nil {
		return nil, fmt.Errorf("search: PlanOp: no workload")
	}
	spec := opts.Spec
	if spec == nil {
		spec = engines.Default()
	}
	o, err := lookupOp(w, op)
	if err != nil {
		return nil, err
	}
	if o.Kind == workload.KindEinsum {
		res, err := planEinsumOp(w, o, op, spec, opts)
		if err != nil {
			return nil, err
		}
		if mo := workload.ProductOp(w, o); mo != nil {
			return planProduct(w, o, mo, res, spec, opts)
		}
		return res, nil
	}
	res, err := planVectorOp(w, o, spec, opts)
	if errors.Is(err, ErrNoKernel) {
		if _, exps, xerr := workload.Expand(w); xerr == nil {
			for _, x := range exps {
				if x.Op.Name == o.Name {
					return nil, noKernel(fmt.Errorf("%w; it has an exact form in %d ops of kinds with kernels, which a graph planned whole (--vector-ops) uses when each of them has a kernel (docs/spec-decisions.md \"Index ops in kernels of other kinds\")", err, len(x.Parts)))
				}
			}
		}
	}
	return res, err
}

// planProduct plans an einsum that contracts no axis (workload.ProductOp)
// over the second space it has, the Vector Engine's elementwise multiply
// (one input broadcast), and keeps the cheaper of that plan and the
// contraction search's res. The optimality claim covers both spaces: the
// multiply's space is enumerated whole, so a multiply plan is optimal
// when the contraction search finished (or its lower bound is no lower);
// otherwise its lower bound is the smaller of the two spaces', and never
// below the workload's roofline, which bounds every kernel (the cost
// model moves the bytes at the HBM rates at best, TestOpRooflineBound).
func planProduct(w *workload.Workload, o, mo *workload.Op, res *OpResult, spec *engines.Spec, opts Options) (*OpResult, error) {
	vr, err := planVectorOp(w, mo, spec, opts)
	if err != nil {
		if errors.Is(err, ErrNoKernel) {
			res.Product = "no kernel: " + err.Error()
			return res, nil // no multiply kernel: the contraction's plan stands
		}
		return nil, err
	}
	switch {
	case vr.Plan == nil:
		res.Product = "no plan: its enumeration stopped (" + vr.Stats.Stopped + ") before any legal candidate"
		return res, nil
	case res.Plan != nil && res.Plan.Cost.Cycles <= vr.Plan.Cost.Cycles:
		res.Product = fmt.Sprintf("%.0f cycles", vr.Plan.Cost.Cycles)
		return res, nil
	}
	vr.Op, vr.Kind = res.Op, o.Kind
	vr.Einsum = res.Einsum
	pl := vr.Plan
	pl.Workload.Op = res.Op // its kind stays mul: the plan is a multiply's
	vs := &pl.Search
	// The contraction space's bound: its proven optimum, or the lower
	// bound it stopped with (none when it stopped before any plan).
	cb := 0.0
	if res.Plan != nil {
		cb = res.Plan.Search.LowerBound
		if res.Plan.Search.Optimal != "" {
			cb = res.Plan.Cost.Cycles
		}
	}
	if res.Stats.Complete && res.Plan == nil {
		cb = pl.Cost.Cycles // no legal contraction: nothing below the multiply
	}
	lb := pl.Cost.Cycles
	if vs.Optimal == "" {
		lb = vs.LowerBound
	}
	lb = min(lb, cb)
	if rl := vr.Report.Roofline.IdealCycles; lb < rl {
		lb = rl
	}
	if lb < pl.Cost.Cycles {
		vs.Optimal = ""
		vs.LowerBound, vs.Gap = lb, (pl.Cost.Cycles-lb)/pl.Cost.Cycles
		if vs.Stopped == "" {
			vs.Stopped = res.Stats.Stopped
		}
	}
	// The counts cover both spaces: the contraction's candidates, legal
	// ones, pricings and rejections by rule join the multiply's.
	vs.Candidates += res.Stats.Candidates
	vs.Legal += res.Stats.Legal
	vs.CostEvaluations += res.Stats.CostEvaluations
	vs.Pruned += res.Stats.Pruned
	for _, r := range res.Stats.Rules() {
		k := slices.IndexFunc(vs.Illegal, func(x plan.RuleCount) bool { return x.Rule == r.Rule })
		if k < 0 {
			vs.Illegal = append(vs.Illegal, plan.RuleCount{Rule: r.Rule, Cite: r.Cite, Count: r.Count})
			continue
		}
		vs.Illegal[k].Count += r.Count
	}
	slices.SortStableFunc(vs.Illegal, func(a, b plan.RuleCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return vr, nil
}

// ErrNoKernel is what PlanOp's refusal of an op it has no kernel for wraps
// (errors.Is): a kind without a kernel (gather, scatter, update_slice,
// causal_mask, top-k, …), tensors it does not plan (a layout other than
// row-major, a dtype, a broadcast input), or an op space with no legal
// candidate. Other errors (no such op, an I/O or model error) do not wrap
// it.
var ErrNoKernel = errors.New("no kernel")

// noKernel wraps err with ErrNoKernel, keeping err's message.
func noKernel(err error) error { return noKernelError{err} }

type noKernelError struct{ err error }

func (e noKernelError) Error() string   { return e.err.Error() }
func (e noKernelError) Unwrap() []error { return []error{e.err, ErrNoKernel} }

// OpResult is one op planned as a kernel (PlanOp).
type OpResult struct {
	// Op is the planned op's name ("" for a single-einsum workload), Kind
	// its kind.
	Op   string
	Kind workload.Kind
	// Plan is the winner: its lowered kernel program (Plan.Program) and
	// its cost (Plan.Cost). Nil when no candidate was legal (Why says
	// why), or when the search stopped before any was.
	Plan *plan.Plan
	// Report is the cost model's full report of Plan.Program.
	Report *cost.Report
	// Free is set for an op that needs no kernel (a view).
	Free bool
	// Stats are the search's statistics.
	Stats Stats
	// Einsum is the contraction search's result, for an einsum op (nil
	// otherwise); Relaxation the padding it planned with (nil: none);
	// Infeasible why the unpadded space was empty (nil: it was not).
	Einsum     *Result
	Relaxation *Relaxation
	Infeasible *Infeasibility
	// Why names the rules that emptied the op's space, for a non-einsum op
	// with no legal candidate.
	Why string
	// Product, for an einsum that contracts no axis whose contraction plan
	// was kept (or which has none), says what its multiply came to: its
	// cycles, or why it has no kernel.
	Product string
}

// lookupOp returns the op of w called name; "" names the single einsum of
// a single-einsum workload.
func lookupOp(w *workload.Workload, name string) (*workload.Op, error) {
	if name == "" {
		if len(w.Ops) == 1 {
			return w.Ops[0], nil
		}
		return nil, fmt.Errorf("%s: the workload has %d ops; name one (--op)", w.File, len(w.Ops))
	}
	for _, o := range w.Ops {
		if o.Name == name {
			return o, nil
		}
	}
	return nil, fmt.Errorf("%s: no op called %q", w.File, name)
}

// planEinsumOp searches an einsum op's contraction mapspace
// (SolveAnyShape).
func planEinsumOp(w *workload.Workload, o *workload.Op, name string, spec *engines.Spec, opts Options) (*OpResult, error) {
	p, err := constraints.NewProblem(w, name)
	if err != nil {
		return nil, err
	}
	s, err := NewSpace(p, spec)
	if err != nil {
		return nil, err
	}
	s.Library = opts.Library
	run := Solve
	if opts.Exhaustive {
		run = Exhaustive
	}
	res, relax, why, err := SolveAnyShape(s, run, opts, !opts.NoPad)
	if err != nil {
		return nil, err
	}
	out := &OpResult{Op: name, Kind: o.Kind, Stats: res.Stats, Einsum: res, Relaxation: relax, Infeasible: why}
	if res.Best == nil {
		return out, nil
	}
	if out.Plan, err = res.Plan(); err != nil {
		return nil, err
	}
	out.Report = res.Best.Report
	return out, nil
}
