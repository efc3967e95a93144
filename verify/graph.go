package verify

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// Verifying a graph plan: every planned kernel runs on the simulator in
// program order, each on a device whose HBM inputs hold the values the
// graph's earlier kernels left (device memory carried between kernels by
// tensor name); views pass their input's bytes on; an op that is not yet
// plannable has no kernel, and its outputs are fed from the float64
// reference (rounded to their dtype) — the report says so.
//
// Two comparisons per planned kernel: its output against the reference
// computed from the kernel's actual inputs (Compare's bound: the kernel is
// correct), and every tensor the kernel writes against the float64
// reference of the whole graph, with a bound that composes: for an einsum
// C = Σ A·B with inputs known to within eA and eB of the graph's
// reference (elementwise), |Ĉ − C| ≤ E_kernel + Σ (|Â|·eB + eA·|B̂| + eA·eB),
// where E_kernel is the kernel's own rounding bound (Compare's) and Â, B̂
// the values the kernel read. The bound of a tensor after rounding to its
// dtype is what its consumers inherit.

// GraphOptions configure VerifyGraph.
type GraphOptions struct {
	// Seed seeds the graph inputs' random values.
	Seed uint64
	// Workers bounds the goroutines that run slices (0: GOMAXPROCS).
	Workers int
	// MemoryBudget refuses, before anything is allocated, a graph whose
	// GraphMemoryEstimate passes it (bytes; 0: no limit).
	MemoryBudget int64
}

// GraphReport is the outcome of VerifyGraph.
type GraphReport struct {
	Graph string `json:"graph"`
	Seed  uint64 `json:"seed"`
	// Ops lists every op in program order.
	Ops []GraphOpReport `json:"ops"`
	// Simulated counts the kernels run; Fed the ops whose outputs were fed
	// from the reference (not yet plannable).
	Simulated int `json:"simulated"`
	Fed       int `json:"fed"`
	// Unindexed counts the kernels fed from the reference because a
	// gather's index held a value outside its table, or a scatter's a row
	// outside its output or one row twice (outOfTable): the gather's or
	// scatter's own kernel, or one whose loads do the gather (its
	// prologue).
	Unindexed int `json:"unindexed,omitempty"`
	// Expanded counts the workload's ops the plan computes with other ops
	// (plan.Graph.Expansions) whose parts' reference equals the op's own
	// on this run's values (checked after the last part; a difference is
	// an error).
	Expanded int `json:"expanded,omitempty"`
	// Pass: every kernel matches its own reference and every tensor a
	// kernel wrote is within its composed bound of the graph's reference.
	Pass bool `json:"pass"`
}

// GraphOpReport is one op's outcome.
type GraphOpReport struct {
	Op     string `json:"op"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	// How is "simulated", "view" or "fed from the reference".
	How string `json:"how"`
	// Kernel compares the kernel's output with the reference computed
	// from the inputs it read (simulated ops only).
	Kernel *Comparison `json:"kernel,omitempty"`
	// Graph compares each output with the whole graph's float64
	// reference, within the composed bound (simulated ops only).
	Graph []Comparison `json:"graph,omitempty"`
	// MACs simulated.
	MACs int64 `json:"macs,omitempty"`
	// Relayouts are the copies of the op's inputs into the layouts its
	// kernel reads, run on the simulator before it (simulated ops only).
	Relayouts []RelayoutCheck `json:"relayouts,omitempty"`
	Pass      bool            `json:"pass"`
}

// RelayoutCheck is one relayout run on the simulator: the tensor copied
// from its stored layout into To by the HBM-to-HBM DMA the engines derive
// (kernel.OpHBMToHBM), and how many of its elements the copy holds
// other values for (a copy is exact).
type RelayoutCheck struct {
	Tensor     string `json:"tensor"`
	From       string `json:"from"`
	To         string `json:"to"`
	Elements   int    `json:"elements"`
	Mismatches int    `json:"mismatches"`
	Pass       bool   `json:"pass"`
}

// gval is one graph tensor's values: on the device (as stored, in its
// dtype), in the float64 reference, and the bound on their distance.
type gval struct {
	dev, ref, err *Logical
}

// VerifyGraph verifies a graph plan (see above). It fails with an error
// when an op's reference is not implemented or a kernel does not run.
func VerifyGraph(spec *engines.Spec, g *plan.Graph, opts GraphOptions) (*GraphReport, error) {
	if spec == nil || g == nil {
		return nil, errors.New("verify: nil spec or graph plan")
	}
	axes, err := mapping.ParseAxes(g.Workload.Axes)
	if err != nil {
		return nil, fmt.Errorf("verify: graph %s: axes %q: %w", g.Workload.Name, g.Workload.Axes, err)
	}
	if err := checkMemory("graph "+g.Workload.Name, GraphMemoryEstimate(g), opts.MemoryBudget); err != nil {
		return nil, err
	}
	tensors := map[string]*plan.GraphTensor{}
	for i := range g.Tensors {
		tensors[g.Tensors[i].Name] = &g.Tensors[i]
	}
	newVal := func(name string) (*Logical, error) {
		t := tensors[name]
		dt, err := dtype.Parse(t.DType)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", name, err)
		}
		l := &Logical{Name: name, DType: dt}
		n := 1
		for _, a := range t.Axes {
			size, ok := axes.Size(a)
			if !ok {
				return nil, fmt.Errorf("tensor %s: unknown axis %s", name, a)
			}
			l.Axes = append(l.Axes, mapping.Axis{Name: a, Size: size})
			if n > (1<<31)/size {
				return nil, fmt.Errorf("tensor %s has more than 2^31 elements: verify the graph at reduced sizes (plan --axes)", name)
			}
			n *= size
		}
		l.Vals = make([]float64, n)
		return l, nil
	}
	vals := map[string]*gval{}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))
	for _, t := range g.Tensors {
		if t.Producer != "" {
			continue
		}
		l, err := newVal(t.Name)
		if err != nil {
			return nil, err
		}
		if err := RandomValues(rng, l); err != nil {
			return nil, err
		}
		if v := t.Values; v != nil {
			// A constant input (a causal mask, an iota): its rule's
			// values.
			pos := axisPos(l)
			coords := make([]int, len(l.Axes))
			for i := range l.Vals {
				l.Coords(i, coords)
				if v.Kind == workload.ValuesIota {
					l.Vals[i] = float64(coords[pos[v.Axis]])
				} else {
					l.Vals[i] = v.At(coords[pos[v.Query]], coords[pos[v.Key]])
				}
			}
		} else if l.DType.IsInt() {
			// Integer inputs are index tables and positions: 0, 1, 2, …
			// along a single axis (the MoE's Expert_Indices and
			// Block_Range, 002 L8623; prefill's position(i) = i, 002
			// L8048), 0 for a scalar (decode's position); over several
			// axes (an op's graph alone, plan --op: the MoE's expert
			// choices, its mask), small values drawn at random, 0 to 7,
			// so that a scan or a gather of them is not of zeros.
			for i := range l.Vals {
				switch len(l.Axes) {
				case 0:
					l.Vals[i] = 0
				case 1:
					l.Vals[i] = float64(i)
				default:
					l.Vals[i] = float64(rng.IntN(8))
				}
			}
		}
		zero, _ := newVal(t.Name)
		vals[t.Name] = &gval{dev: l, ref: l, err: zero}
	}
	rep := &GraphReport{Graph: g.Workload.Name, Seed: opts.Seed, Pass: true}
	held := map[string][]heldDM{} // tensors left in DM, by graph tensor name
	for i := range g.Ops {
		o := &g.Ops[i]
		or := GraphOpReport{Op: o.Name, Kind: o.Kind, Status: o.Status, Pass: true}
		if o.Status == plan.StatusFused && prologue(g, o) {
			// A gather its consumer's loads do (GraphOp.Prologue): its
			// output, stored nowhere, is what those loads read — the
			// table's device rows at the index's device values — and the
			// graph's reference of it.
			dev, ref, err := gatherVal(o, vals, newVal)
			if err != nil {
				return nil, err
			}
			e, _ := newVal(o.Outputs[0])
			for k, r := range ref.Vals {
				e.Vals[k] = distance(dev.Vals[k], r)
			}
			vals[o.Outputs[0]] = &gval{dev: dev, ref: ref, err: e}
			or.How = "fused into " + o.FusedInto + "'s loads"
			rep.Ops = append(rep.Ops, or)
			continue
		}
		if o.Status == plan.StatusFused {
			// Its kernel (o.FusedInto's) computed its output.
			if _, ok := vals[o.Outputs[0]]; !ok && g.Tensors[tensorIndex(g, o.Outputs[0])].Place != plan.PlaceFused {
				return nil, fmt.Errorf("op %s: fused into %s, which did not write %s", o.Name, o.FusedInto, o.Outputs[0])
			}
			or.How = "fused into " + o.FusedInto
			rep.Ops = append(rep.Ops, or)
			continue
		}
		// The kernel's inputs: the op's, then its epilogue's tensors.
		var ins []*gval
		for _, name := range g.KernelInputs(o) {
			v, ok := vals[name]
			if !ok {
				return nil, fmt.Errorf("op %s: input %s has no value", o.Name, name)
			}
			ins = append(ins, v)
		}
		var outs []*Logical
		for _, name := range o.Outputs {
			l, err := newVal(name)
			if err != nil {
				return nil, err
			}
			outs = append(outs, l)
		}
		// The float64 reference of the whole graph.
		var refIns []*Logical
		for _, v := range ins[:len(o.Inputs)] {
			refIns = append(refIns, v.ref)
		}
		if err := graphRef(o, refIns, outs); err != nil {
			return nil, err
		}
		ref := outs[0]
		out := o.Outputs[0]
		for _, name := range o.Epilogue {
			// The graph's reference of the fused ops, after the op's.
			k := slices.IndexFunc(g.Ops, func(x plan.GraphOp) bool { return x.Name == name })
			if k < 0 {
				return nil, fmt.Errorf("op %s: no epilogue op %s", o.Name, name)
			}
			x := &g.Ops[k]
			l, err := newVal(x.Outputs[0])
			if err != nil {
				return nil, err
			}
			args := []*Logical{ref}
			if len(x.Inputs) == 2 {
				args = append(args, vals[x.Inputs[1]].ref) // its tensor operand
			}
			if err := graphRef(x, args, []*Logical{l}); err != nil {
				return nil, err
			}
			ref, out = l, x.Outputs[0]
		}
		switch o.Status {
		case plan.StatusView:
			or.How = "view"
			dev, _ := newVal(o.Outputs[0])
			e, _ := newVal(o.Outputs[0])
			copy(dev.Vals, ins[0].dev.Vals)
			copy(e.Vals, ins[0].err.Vals)
			vals[o.Outputs[0]] = &gval{dev: dev, ref: ref, err: e}
		case plan.StatusNotPlannable, plan.StatusPlanned:
			why := ""
			if o.Status == plan.StatusPlanned {
				// A gather's kernel, or one whose loads do gathers
				// (its prologue), cannot read a row outside the table.
				why = outOfTable(o, ins, ref)
				for _, name := range o.Prologue {
					k := slices.IndexFunc(g.Ops, func(x plan.GraphOp) bool { return x.Name == name })
					if x := &g.Ops[k]; why == "" && len(x.Inputs) == 2 {
						why = outOfTable(x, []*gval{vals[x.Inputs[0]], vals[x.Inputs[1]]}, nil)
					}
				}
				if why == "" {
					if err := simulateOp(spec, axes, o, out, g.KernelInputs(o), ins, ref, &or, tensors, vals, held, newVal, opts, rep); err != nil {
						return nil, err
					}
					break
				}
				rep.Unindexed++
			} else {
				rep.Fed++
			}
			or.How = "fed from the reference" + why
			for j, name := range o.Outputs {
				dev, _ := newVal(name)
				e, _ := newVal(name)
				for k, r := range outs[j].Vals {
					dev.Vals[k] = storeRound(r, dev.DType)
					e.Vals[k] = distance(dev.Vals[k], r)
				}
				vals[name] = &gval{dev: dev, ref: outs[j], err: e}
			}
		default:
			return nil, fmt.Errorf("op %s: status %q", o.Name, o.Status)
		}
		rep.Pass = rep.Pass && or.Pass
		rep.Ops = append(rep.Ops, or)
		if x := lastPart(g, o.Name); x != nil {
			if err := checkExpansion(x, vals, newVal); err != nil {
				return nil, err
			}
			rep.Expanded++
		}
	}
	return rep, nil
}

// lastPart returns the expansion whose last part is op, nil when none.
func lastPart(g *plan.Graph, op string) *plan.GraphExpansion {
	for i := range g.Expansions {
		x := &g.Expansions[i]
		if x.Parts[len(x.Parts)-1] == op {
			return x
		}
	}
	return nil
}

// checkExpansion computes the reference of the op x stands for, on its
// inputs' reference values, and requires its parts' reference of each
// output to equal it: the expansion is exact (workload.Expand), so any
// difference is a wrong expansion.
func checkExpansion(x *plan.GraphExpansion, vals map[string]*gval, newVal func(string) (*Logical, error)) error {
	var ins, outs []*Logical
	for _, name := range x.Inputs {
		v, ok := vals[name]
		if !ok {
			return fmt.Errorf("expansion %s: input %s has no value", x.Name, name)
		}
		ins = append(ins, v.ref)
	}
	for _, name := range x.Outputs {
		l, err := newVal(name)
		if err != nil {
			return err
		}
		outs = append(outs, l)
	}
	if err := graphRef(x.Op(), ins, outs); err != nil {
		return fmt.Errorf("expansion %s: %w", x.Name, err)
	}
	for j, name := range x.Outputs {
		got := vals[name].ref
		for k, want := range outs[j].Vals {
			if got.Vals[k] != want {
				return fmt.Errorf("expansion %s (%s): its parts compute %s[%d] = %v, the op %v", x.Name, x.Kind, name, k, got.Vals[k], want)
			}
		}
	}
	return nil
}

// simulateOp runs planned op o's kernel (and the relayouts of its inputs
// it reads) on the simulator; names are the kernel's inputs, ins their
// values.
func simulateOp(spec *engines.Spec, axes mapping.Axes, o *plan.GraphOp, out string, names []string, ins []*gval, ref *Logical, or *GraphOpReport,
	tensors map[string]*plan.GraphTensor, vals map[string]*gval, held map[string][]heldDM, newVal func(string) (*Logical, error), opts GraphOptions, rep *GraphReport) error {
	if len(o.Outputs) != 1 {
		return fmt.Errorf("op %s: a kernel of %d outputs", o.Name, len(o.Outputs))
	}
	or.How = "simulated"
	rep.Simulated++
	for k, name := range names { // the kernel's inputs: the op's, then its epilogue's tensors
		gt := tensors[name]
		for _, r := range gt.Relayouts {
			if r.Consumer != o.Name {
				continue
			}
			rc, err := runRelayout(spec, axes, gt, r, ins[k].dev, nil)
			if err != nil {
				return fmt.Errorf("op %s: relayout of %s: %w", o.Name, name, err)
			}
			or.Relayouts = append(or.Relayouts, rc)
			or.Pass = or.Pass && rc.Pass
		}
	}
	if err := runKernel(spec, o, out, ins, ref, or, vals, held, newVal, opts); err != nil {
		return fmt.Errorf("op %s: %w", o.Name, err)
	}
	return nil
}

// prologue reports whether fused op o is a gather its consumer's loads do
// (plan.GraphOp.Prologue).
func prologue(g *plan.Graph, o *plan.GraphOp) bool {
	k := slices.IndexFunc(g.Ops, func(x plan.GraphOp) bool { return x.Name == o.FusedInto })
	return k >= 0 && slices.Contains(g.Ops[k].Prologue, o.Name)
}

// gatherVal is the output of gather o, fused into its consumer's loads,
// on the device (the table's device values at the index's, as the loads
// read them; a row outside the table reads 0, and the consumer is then
// fed from the reference, outOfTable) and in the graph's reference.
func gatherVal(o *plan.GraphOp, vals map[string]*gval, newVal func(string) (*Logical, error)) (dev, ref *Logical, err error) {
	var dIns, rIns []*Logical
	for _, name := range o.Inputs {
		v, ok := vals[name]
		if !ok {
			return nil, nil, fmt.Errorf("op %s: input %s has no value", o.Name, name)
		}
		dIns, rIns = append(dIns, v.dev), append(rIns, v.ref)
	}
	if dev, err = newVal(o.Outputs[0]); err != nil {
		return nil, nil, err
	}
	if ref, err = newVal(o.Outputs[0]); err != nil {
		return nil, nil, err
	}
	if err := graphRef(o, dIns, []*Logical{dev}); err != nil {
		return nil, nil, err
	}
	if err := graphRef(o, rIns, []*Logical{ref}); err != nil {
		return nil, nil, err
	}
	return dev, ref, nil
}

// outOfTable says why a planned gather or scatter is fed from the
// reference, or "" to simulate it: a gather's index (the device values)
// holds a row outside its table, which the gather's DMA cannot read (rule
// DMA-R16; the MoE's empty grids hold expert id −1, skipped at run time,
// 002 L8615-8616), while the graph's reference reads 0 there
// (docs/spec-decisions.md "Gather: the DMA's indirect loop"); a scatter's
// index (out: the graph's reference of its output, for its axes) a row
// outside its output (DMA-R16) or one row twice, which its DMA writes in
// no stated order (DMA-R17; docs/spec-decisions.md "Scatter: the DMA's
// indirect loop on the write side").
func outOfTable(o *plan.GraphOp, ins []*gval, out *Logical) string {
	if o.Kind == "scatter" && len(ins) == 2 && out != nil {
		rows := 1
		for _, a := range out.Axes {
			if slices.Contains(o.Axes, a.Name) {
				rows *= a.Size
			}
		}
		vals := make([]int, len(ins[1].dev.Vals))
		for i, v := range ins[1].dev.Vals {
			if v < 0 || v >= float64(rows) {
				return fmt.Sprintf(": its index %s holds %v at position %d, outside the output's %d rows, which its DMA cannot write (DMA-R16)", o.Inputs[1], v, i, rows)
			}
			vals[i] = int(v)
		}
		var v *engines.Violation
		if err := engines.ScatterOnce(o.Inputs[1], vals, rows); errors.As(err, &v) {
			return fmt.Sprintf(": its %s, which its DMA writes in no stated order (%s)", v.Detail, v.Rule.ID)
		}
		return ""
	}
	if o.Kind != "gather" || len(ins) != 2 {
		return ""
	}
	rows := 1
	for _, a := range ins[0].dev.Axes {
		if slices.Contains(o.Axes, a.Name) {
			rows *= a.Size
		}
	}
	for i, v := range ins[1].dev.Vals {
		if v < 0 || v >= float64(rows) {
			return fmt.Sprintf(": its index %s holds %v at position %d, outside the table's %d rows, which its DMA cannot read (DMA-R16)", o.Inputs[1], v, i, rows)
		}
	}
	return ""
}

// runRelayout runs the relayout r of graph tensor gt, whose device values
// are v, on the simulator: v stored in gt's layout at one HBM address, an
// HBM-to-HBM copy (kernel.OpHBMToHBM, lowered by engines.DeriveRelayout,
// 002 L2608-2636) into r.To at another, and the copy read back and
// compared with v element by element. lowered, when set, may change the
// lowered program before it runs (tests).
func runRelayout(spec *engines.Spec, axes mapping.Axes, gt *plan.GraphTensor, r plan.Relayout, v *Logical, lowered func(*kernel.Program)) (RelayoutCheck, error) {
	rc := RelayoutCheck{Tensor: gt.Name, From: gt.Layout, To: r.To, Elements: len(v.Vals)}
	from, err := mapping.Parse(gt.Layout, axes, nil)
	if err != nil {
		return rc, fmt.Errorf("layout %s: %w", gt.Layout, err)
	}
	to, err := mapping.Parse(r.To, axes, nil)
	if err != nil {
		return rc, fmt.Errorf("layout %s: %w", r.To, err)
	}
	p := &kernel.Program{Name: "relayout_" + gt.Name, Axes: axes, Chips: 1,
		Tensors: []*kernel.Tensor{
			{Name: "src", Mem: kernel.HBM, DType: v.DType, Role: kernel.Input, Chip: mapping.Identity(), Element: from},
			{Name: "dst", Mem: kernel.HBM, DType: v.DType, Role: kernel.Output, Chip: mapping.Identity(), Element: to, Addr: plan.GraphAlign},
		},
		Ops:       []*kernel.Op{{Context: kernel.CtxDMA, Kind: kernel.OpHBMToHBM, Src: "src", Dst: "dst"}},
		Reference: &kernel.Reference{Op: kernel.RefExpr, Inputs: []string{"src"}, Output: "dst", Expr: "src"},
	}
	if err := engines.Lower(spec, p); err != nil {
		return rc, err
	}
	if lowered != nil {
		lowered(p)
	}
	dev, err := NewDevice(spec, 1)
	if err != nil {
		return rc, err
	}
	src, dst := p.Tensors[0], p.Tensors[1]
	in, err := NewLogical(p, src)
	if err != nil {
		return rc, err
	}
	if err := reorder(v, in); err != nil {
		return rc, err
	}
	if err := WriteHBMTensor(dev, p, src, in); err != nil {
		return rc, err
	}
	x, err := NewExecutor(dev, p, ExecOptions{})
	if err != nil {
		return rc, err
	}
	if err := x.Run(); err != nil {
		return rc, err
	}
	got, err := ReadHBMTensor(dev, p, dst)
	if err != nil {
		return rc, err
	}
	back := &Logical{Name: v.Name, DType: v.DType, Axes: v.Axes, Vals: make([]float64, len(v.Vals))}
	if err := reorder(got, back); err != nil {
		return rc, err
	}
	for i, w := range back.Vals {
		if w != v.Vals[i] && !(math.IsNaN(w) && math.IsNaN(v.Vals[i])) {
			rc.Mismatches++
		}
	}
	rc.Pass = rc.Mismatches == 0
	return rc, nil
}

// storeRound is r as a tensor of dtype d stores it.
func storeRound(r float64, d dtype.DType) float64 {
	if d.IsInt() {
		return math.Round(r)
	}
	return dtype.Round(r, d)
}

// runKernel runs one planned op's kernel with its inputs' device values,
// compares its output with the kernel's own reference and with the
// graph's, and records the output's device value and composed bound.
func runKernel(spec *engines.Spec, o *plan.GraphOp, out string, ins []*gval, ref *Logical, or *GraphOpReport, vals map[string]*gval,
	held map[string][]heldDM, newVal func(string) (*Logical, error), opts GraphOptions) error {
	// A copy of the program: lowering modifies it.
	data, err := o.Plan.Program.MarshalJSON()
	if err != nil {
		return err
	}
	p := &kernel.Program{}
	if err := p.UnmarshalJSON(data); err != nil {
		return err
	}
	if p.Reference == nil {
		return fmt.Errorf("the kernel has no reference")
	}
	if len(p.Reference.Valid) > 0 {
		return fmt.Errorf("the kernel is planned padded; a graph's kernels are verified at sizes with an unpadded plan (plan --axes)")
	}
	if err := engines.Lower(spec, p); err != nil {
		return err
	}
	dev, err := NewDevice(spec, p.Chips)
	if err != nil {
		return err
	}
	inputs := map[string]*Logical{}
	if len(p.Reference.Inputs) != len(ins) {
		return fmt.Errorf("the kernel reads %d inputs, the op (with its epilogue's tensors) %d", len(p.Reference.Inputs), len(ins))
	}
	// The op's k-th input (then its epilogue's tensors) is the kernel's
	// k-th reference input; a
	// gathered one (a gather fused into the kernel's loads) is read
	// through its index from its table, which the device holds instead.
	store := func(t *kernel.Tensor, v *Logical) (*Logical, error) {
		l, err := NewLogical(p, t)
		if err != nil {
			return nil, err
		}
		if err := reorder(v, l); err != nil {
			return nil, err
		}
		for i, v := range l.Vals {
			l.Vals[i] = storeRound(v, l.DType) // as HBM stores it
		}
		if t.Gather == nil {
			if err := WriteHBMTensor(dev, p, t, l); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	for k, name := range p.Reference.Inputs {
		t, ok := p.Tensor(name)
		if !ok || t.Mem != kernel.HBM {
			return fmt.Errorf("the kernel has no HBM tensor %s", name)
		}
		l, err := store(t, ins[k].dev)
		if err != nil {
			return err
		}
		inputs[name] = l
		if g := t.Gather; g != nil {
			for _, src := range []string{g.Table, g.Index} {
				st, ok := p.Tensor(src)
				v, known := vals[src]
				if !ok || !known {
					return fmt.Errorf("the gathered %s's %s has no value", name, src)
				}
				if _, err := store(st, v.dev); err != nil {
					return err
				}
			}
		}
	}
	x, err := NewExecutor(dev, p, ExecOptions{Workers: opts.Workers})
	if err != nil {
		return err
	}
	taken, err := takeHeld(dev, p, o, held)
	if err != nil {
		return err
	}
	defer func() {
		if len(taken) > 0 {
			or.How += " (" + strings.Join(taken, ", ") + ")"
		}
	}()
	if err := x.Run(); err != nil {
		return err
	}
	if err := leaveHeld(dev, p, o.Name, out, held); err != nil {
		return err
	}
	if err := x.RunHandoffs(kernel.OpToHBM); err != nil {
		return err
	}
	or.MACs = x.MACs()
	outT, _ := p.Tensor(p.Reference.Output)
	got, err := ReadHBMTensor(dev, p, outT)
	if err != nil {
		return err
	}
	exp, err := Reference(p, inputs)
	if err != nil {
		return err
	}
	kc := Compare(exp, got)
	or.Kernel = &kc
	if p.Reference.Op != kernel.RefEinsum || p.Reference.Epilogue != "" {
		// A Vector Engine kernel (softmax, rmsnorm, elementwise), or an
		// einsum with an epilogue (out is the epilogue's output): checked
		// against its own reference on the values it read; its output's
		// distance from the graph's reference is measured, not composed
		// (the composed bound is a plain einsum's), and consumers inherit
		// it.
		outDev, err := newVal(out)
		if err != nil {
			return err
		}
		if err := reorder(got, outDev); err != nil {
			return err
		}
		e, _ := newVal(out)
		for k, r := range ref.Vals {
			e.Vals[k] = distance(outDev.Vals[k], r)
		}
		or.How = "simulated; graph distance measured"
		or.Pass = kc.Pass
		vals[out] = &gval{dev: outDev, ref: ref, err: e}
		return nil
	}
	// The graph-level bound: the kernel's own rounding bound plus what its
	// inputs' bounds propagate (einsum of |Â|·eB + eA·|B̂| + eA·eB).
	outDev, _ := newVal(o.Outputs[0])
	if err := reorder(got, outDev); err != nil {
		return err
	}
	local, _ := newVal(o.Outputs[0])
	if err := reorder(exp.Out, local); err != nil {
		return err
	}
	abs, _ := newVal(o.Outputs[0])
	if err := reorder(exp.Abs, abs); err != nil {
		return err
	}
	absA, absB := absOf(ins[0].dev), absOf(ins[1].dev)
	prop, _ := newVal(o.Outputs[0])
	for _, pair := range [][2]*Logical{{absA, ins[1].err}, {ins[0].err, absB}, {ins[0].err, ins[1].err}} {
		part, _ := newVal(o.Outputs[0])
		if err := einsumInto(pair[0], pair[1], part); err != nil {
			return err
		}
		for k := range prop.Vals {
			prop.Vals[k] += part.Vals[k]
		}
	}
	gm := (gamma(exp.Depth, uF32) + gamma(exp.Depth, uF64)) / (1 - gamma(exp.Depth, uF64))
	under := float64(exp.Ops) * etaF32
	lo, _ := newVal(o.Outputs[0])
	hi, _ := newVal(o.Outputs[0])
	e, _ := newVal(o.Outputs[0])
	for k, r := range ref.Vals {
		b := (gm*abs.Vals[k]+under+prop.Vals[k])*(1+0x1p-40) + gamma(exp.Depth, uF64)*math.Abs(r)
		lo.Vals[k], hi.Vals[k] = r-b, r+b
		// What consumers inherit: the distance of the stored value's
		// possible range from the reference.
		e.Vals[k] = math.Max(roundOut(r+b, ref.DType, true)-r, r-roundOut(r-b, ref.DType, false))
	}
	gc := Compare(&Expected{Out: ref, Lo: lo, Hi: hi}, outDev)
	or.Graph = append(or.Graph, gc)
	or.Pass = kc.Pass && gc.Pass
	vals[o.Outputs[0]] = &gval{dev: outDev, ref: ref, err: e}
	return nil
}

// heldDM is a DM tensor a kernel leaves to the next one in a graph (the
// source of a to_hbm handoff, kernel.Program.Handoff): its bytes on each
// slice it lives on.
type heldDM struct {
	t     *kernel.Tensor
	op    string         // the op whose kernel left it
	bytes map[int][]byte // global slice → the tensor's bytes from its address
}

// leaveHeld keeps the DM bytes of the kernel's to_hbm handoffs (the
// kernel's result left in DM), under the graph tensor name out, with the
// op whose kernel left them.
func leaveHeld(dev *Device, p *kernel.Program, producer, out string, held map[string][]heldDM) error {
	for _, h := range p.Handoff {
		if h.Kind != kernel.OpToHBM {
			continue
		}
		t, _ := p.Tensor(h.Src)
		n, err := t.DType.BytesFor(t.Element.Size())
		if err != nil {
			return err
		}
		gs, err := tensorSlices(dev, t)
		if err != nil {
			return err
		}
		kept := heldDM{t: t, op: producer, bytes: map[int][]byte{}}
		for _, g := range gs {
			b := make([]byte, n)
			if err := dev.ReadDM(g, t.Addr, b); err != nil {
				return fmt.Errorf("handoff of %s: %w", out, err)
			}
			kept.bytes[g] = b
		}
		held[out] = append(held[out], kept)
	}
	return nil
}

// takeHeld writes into the kernel's device, for each of its to_dm
// handoffs, the DM bytes the producing kernel left (leaveHeld): the
// handoff's DM tensor must be one the producer left, at the same address
// with the same mappings, or the kernel would read another layout than
// the one it was given.
func takeHeld(dev *Device, p *kernel.Program, o *plan.GraphOp, held map[string][]heldDM) ([]string, error) {
	var taken []string
	for _, op := range p.Handoff {
		if op.Kind != kernel.OpToDM {
			continue
		}
		src, _ := p.Tensor(op.Src)
		k := slices.Index(p.Reference.Inputs, src.Base())
		if k < 0 || k >= len(o.Inputs) {
			return nil, fmt.Errorf("handoff of %s: not an input of the kernel's reference", src.Base())
		}
		name := o.Inputs[k]
		t, _ := p.Tensor(op.Dst)
		i := slices.IndexFunc(held[name], func(h heldDM) bool { return kernel.SameDM(h.t, t) })
		if i < 0 {
			return nil, fmt.Errorf("%s: DM tensor %s (%s at %d) is not where its producer left it in DM", name, t.Name, dmText(t), t.Addr)
		}
		for g, b := range held[name][i].bytes {
			if err := dev.WriteDM(g, t.Addr, b); err != nil {
				return nil, fmt.Errorf("handoff of %s: %w", name, err)
			}
		}
		if took := name + " taken in DM from " + held[name][i].op; !slices.Contains(taken, took) {
			taken = append(taken, took)
		}
	}
	return taken, nil
}

// dmText prints a DM tensor's mappings.
func dmText(t *kernel.Tensor) string {
	return fmt.Sprintf("chip %s, cluster %s, slice %s, element %s", t.Chip, t.Cluster, t.Slice, t.Element)
}

// distance is |a − b|, 0 when they are equal (−∞ stored where the
// reference has −∞, a causal mask's: ∞ − ∞ is NaN).
func distance(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a - b)
}

// absOf is |l| elementwise.
func absOf(l *Logical) *Logical {
	c := &Logical{Name: l.Name, DType: l.DType, Axes: l.Axes, Vals: make([]float64, len(l.Vals))}
	for i, v := range l.Vals {
		c.Vals[i] = math.Abs(v)
	}
	return c
}

// reorder copies src into dst, which names the same axes possibly in
// another order. An axis of size one holds one coordinate: either side may
// leave it out (an op kernel's tensors drop them).
func reorder(src, dst *Logical) error {
	if nonUnit(src.Axes) != nonUnit(dst.Axes) || len(src.Vals) != len(dst.Vals) {
		return fmt.Errorf("tensor %s: axes %s and %s differ", dst.Name, axesString(src.Axes), axesString(dst.Axes))
	}
	strides := make([]int, len(src.Axes)) // of each src axis in dst
	for i, a := range src.Axes {
		if a.Size == 1 {
			continue // coordinate 0: no stride
		}
		s := 1
		found := false
		for j := len(dst.Axes) - 1; j >= 0; j-- {
			if dst.Axes[j].Name == a.Name {
				if dst.Axes[j].Size != a.Size {
					return fmt.Errorf("tensor %s: axis %s of size %d and %d", dst.Name, a.Name, a.Size, dst.Axes[j].Size)
				}
				strides[i], found = s, true
			}
			s *= dst.Axes[j].Size
		}
		if !found {
			return fmt.Errorf("tensor %s: axis %s missing", dst.Name, a.Name)
		}
	}
	coords := make([]int, len(src.Axes))
	for off, v := range src.Vals {
		src.Coords(off, coords)
		d := 0
		for i, c := range coords {
			d += c * strides[i]
		}
		dst.Vals[d] = v
	}
	return nil
}

// nonUnit counts the axes of size above one.
func nonUnit(axes []mapping.Axis) int {
	n := 0
	for _, a := range axes {
		if a.Size != 1 {
			n++
		}
	}
	return n
}

// index maps each axis name of l to its coordinate position.
func axisPos(l *Logical) map[string]int {
	m := make(map[string]int, len(l.Axes))
	for i, a := range l.Axes {
		m[a.Name] = i
	}
	return m
}

// iterSpace is the union of the axes of ls (first appearance order).
func iterSpace(ls ...*Logical) []mapping.Axis {
	var out []mapping.Axis
	seen := map[string]bool{}
	for _, l := range ls {
		for _, a := range l.Axes {
			if !seen[a.Name] {
				seen[a.Name] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// forEach calls f with each point of the space (coordinates by axis
// position in space) and the offsets of that point in each of ls (axes a
// tensor lacks are broadcast).
func forEach(space []mapping.Axis, ls []*Logical, f func(offs []int)) {
	strides := make([][]int, len(ls))
	for k, l := range ls {
		pos := axisPos(l)
		strides[k] = make([]int, len(space))
		s := 1
		st := make([]int, len(l.Axes))
		for i := len(l.Axes) - 1; i >= 0; i-- {
			st[i] = s
			s *= l.Axes[i].Size
		}
		for i, a := range space {
			if p, ok := pos[a.Name]; ok {
				strides[k][i] = st[p]
			}
		}
	}
	n := 1
	for _, a := range space {
		n *= a.Size
	}
	coords := make([]int, len(space))
	offs := make([]int, len(ls))
	for it := 0; it < n; it++ {
		for k := range ls {
			o := 0
			for i, c := range coords {
				o += c * strides[k][i]
			}
			offs[k] = o
		}
		f(offs)
		for i := len(space) - 1; i >= 0; i-- {
			coords[i]++
			if coords[i] < space[i].Size {
				break
			}
			coords[i] = 0
		}
	}
}

// einsumInto sets out to the einsum of a and b: the sum over the axes out
// lacks of the products (float64).
func einsumInto(a, b, out *Logical) error {
	for i := range out.Vals {
		out.Vals[i] = 0
	}
	space := iterSpace(out, a, b)
	forEach(space, []*Logical{out, a, b}, func(o []int) { out.Vals[o[0]] += a.Vals[o[1]] * b.Vals[o[2]] })
	return nil
}

// graphRef computes op o's output from its inputs in float64: the graph's
// reference, op by op, from the definitions of the workload's kinds
// (model/workload/op.go).
func graphRef(o *plan.GraphOp, ins []*Logical, outs []*Logical) error {
	out := outs[0]
	scalar := func() *Logical {
		return &Logical{Name: "scalar", Vals: []float64{*o.Scalar}}
	}
	binary := func(f func(x, y float64) float64) error {
		b := scalar
		if o.Scalar == nil {
			if len(ins) != 2 {
				return fmt.Errorf("op %s (%s): want two inputs", o.Name, o.Kind)
			}
			b = func() *Logical { return ins[1] }
		}
		a, bb := ins[0], b()
		forEach(iterSpace(out), []*Logical{out, a, bb}, func(x []int) { out.Vals[x[0]] = f(a.Vals[x[1]], bb.Vals[x[2]]) })
		return nil
	}
	// along runs f over each line of the output along axis (same axes as
	// the input).
	along := func(axis string, f func(in, out []float64)) error {
		x := ins[0]
		if !sameAxes(x.Axes, out.Axes) {
			return fmt.Errorf("op %s (%s): input and output axes differ", o.Name, o.Kind)
		}
		p, ok := axisPos(x)[axis]
		if !ok {
			return fmt.Errorf("op %s (%s): no axis %s", o.Name, o.Kind, axis)
		}
		n, stride := x.Axes[p].Size, 1
		for i := p + 1; i < len(x.Axes); i++ {
			stride *= x.Axes[i].Size
		}
		line, res := make([]float64, n), make([]float64, n)
		for base := 0; base < len(x.Vals); base++ {
			if base/stride%n != 0 {
				continue
			}
			for k := 0; k < n; k++ {
				line[k] = x.Vals[base+k*stride]
			}
			f(line, res)
			for k := 0; k < n; k++ {
				out.Vals[base+k*stride] = res[k]
			}
		}
		return nil
	}
	var err error
	switch o.Kind {
	case "einsum":
		err = einsumInto(ins[0], ins[1], out)
	case "mul":
		err = binary(func(x, y float64) float64 { return x * y })
	case "add":
		err = binary(func(x, y float64) float64 { return x + y })
	case "sub":
		err = binary(func(x, y float64) float64 { return x - y })
	case "silu", "sigmoid", "exp":
		f := map[string]func(float64) float64{
			"silu":    func(v float64) float64 { return v / (1 + math.Exp(-v)) },
			"sigmoid": func(v float64) float64 { return 1 / (1 + math.Exp(-v)) },
			"exp":     math.Exp,
		}[o.Kind]
		forEach(iterSpace(out), []*Logical{out, ins[0]}, func(x []int) {
			out.Vals[x[0]] = f(ins[0].Vals[x[1]])
		})
	case "softmax":
		err = along(o.Axis, func(in, res []float64) {
			m := math.Inf(-1)
			for _, v := range in {
				m = math.Max(m, v)
			}
			s := 0.0
			for k, v := range in {
				res[k] = math.Exp(v - m)
				s += res[k]
			}
			for k := range res {
				res[k] /= s
			}
		})
	case "rmsnorm":
		err = along(o.Axis, func(in, res []float64) {
			s := 0.0
			for _, v := range in {
				s += v * v
			}
			r := math.Sqrt(s / float64(len(in)))
			for k, v := range in {
				res[k] = v / r
			}
		})
	case "causal_mask":
		pos := axisPos(out)
		q, k := pos[o.Query], pos[o.Key]
		coords := make([]int, len(out.Axes))
		for i, v := range ins[0].Vals {
			out.Coords(i, coords)
			out.Vals[i] = v
			if coords[k] > coords[q] {
				out.Vals[i] = math.Inf(-1)
			}
		}
	case "copy", "cast":
		// The same values in another buffer, layout or type (the stored
		// tensor's rounding is its dtype's): by axis name.
		if err := reorder(ins[0], out); err != nil {
			return fmt.Errorf("op %s: %w", o.Name, err)
		}
	case "reshape":
		if len(ins[0].Vals) != len(out.Vals) {
			return fmt.Errorf("op %s: reshape of %d elements into %d", o.Name, len(ins[0].Vals), len(out.Vals))
		}
		copy(out.Vals, ins[0].Vals) // row-major in the declared orders: the same sequence
	case "gather":
		// table[index]: the gathered axes of the table (o.Axes) at the
		// index's value, flat and row-major over them in the table's order
		// (one axis: its coordinate); the output has the table's other axes
		// and the index's. An index outside the gathered axes reads 0 (an
		// empty MoE grid, whose expert id is -1, 002 L8615-L8616).
		if err := gatherRows(out, ins[0], ins[1], o.Axes); err != nil {
			return fmt.Errorf("op %s: %w", o.Name, err)
		}
	case "scatter":
		// data to the output's axes o.Axes at the flat row-major index
		// (the inverse of gather); positions no index names hold 0.
		if _, err := scatterRows(out, ins[0], ins[1], o.Axes); err != nil {
			return fmt.Errorf("op %s: %w", o.Name, err)
		}
	case "topk":
		// The K largest along axis (K = the size of the k axis), in the
		// order the manual's branchless top-k ranks them (002
		// L8547-8552): each score packed with its index, (bits << 16) |
		// index, and the packed values compared as sort keys
		// (sort_key). So: descending by value; among equal values the
		// higher index first (the index is the key's low half); +0 above
		// −0 (their keys differ in the sign). The values are compared as
		// the input's dtype stores them (the packed form holds the
		// stored bf16 bits, whatever the float64 reference carried), and
		// output so; NaNs order as their keys do (topkKey). Outputs:
		// values, indices.
		x, idx := ins[0], outs[1]
		xst := make([]int, len(x.Axes)) // x's strides
		st := 1
		for k := len(x.Axes) - 1; k >= 0; k-- {
			xst[k] = st
			st *= x.Axes[k].Size
		}
		p := axisPos(x)[o.Axis]
		n := x.Axes[p].Size
		opos := axisPos(out)
		kpos := opos[o.K]
		kn := out.Axes[kpos].Size
		ost := 1
		for q := kpos + 1; q < len(out.Axes); q++ {
			ost *= out.Axes[q].Size
		}
		oc := make([]int, len(out.Axes))
		order := make([]int, n)
		line, keys := make([]float64, n), make([]int64, n)
		for i := range out.Vals {
			out.Coords(i, oc)
			if oc[kpos] != 0 {
				continue
			}
			base := 0
			for k, a := range x.Axes {
				if k != p {
					base += oc[opos[a.Name]] * xst[k]
				}
			}
			for e := range order {
				order[e] = e
				line[e] = x.Vals[base+e*xst[p]]
				if x.DType.IsFloat() {
					line[e] = dtype.Round(line[e], x.DType)
				}
				keys[e] = topkKey(line[e])
			}
			sort.Slice(order, func(a, b int) bool {
				ka, kb := keys[order[a]], keys[order[b]]
				if ka != kb {
					return ka > kb
				}
				return order[a] > order[b]
			})
			for r := 0; r < kn && r < n; r++ {
				out.Vals[i+r*ost] = line[order[r]]
				idx.Vals[i+r*ost] = float64(order[r])
			}
		}
	case "one_hot":
		// out[..., e] = 1 where in[...] == e, along the new axis.
		x := ins[0]
		opos := axisPos(out)
		ap := opos[o.Axis]
		oc := make([]int, len(out.Axes))
		for i := range out.Vals {
			out.Coords(i, oc)
			xo := 0
			for _, a := range x.Axes {
				xo = xo*a.Size + oc[opos[a.Name]]
			}
			out.Vals[i] = 0
			if int(x.Vals[xo]) == oc[ap] {
				out.Vals[i] = 1
			}
		}
	case "reduce":
		// sum or max over o.Axes.
		x := ins[0]
		init := 0.0
		if o.Reduce == "max" {
			init = math.Inf(-1)
		}
		for i := range out.Vals {
			out.Vals[i] = init
		}
		forEach(iterSpace(x), []*Logical{out, x}, func(q []int) {
			if o.Reduce == "max" {
				out.Vals[q[0]] = math.Max(out.Vals[q[0]], x.Vals[q[1]])
			} else {
				out.Vals[q[0]] += x.Vals[q[1]]
			}
		})
	case "cumsum":
		// Inclusive prefix sums over o.Axes, flat and row-major over them
		// in the tensor's order, for each position of the other axes.
		x := ins[0]
		if !sameAxes(x.Axes, out.Axes) {
			return fmt.Errorf("op %s (%s): input and output axes differ", o.Name, o.Kind)
		}
		scan := map[string]bool{}
		for _, a := range o.Axes {
			scan[a] = true
		}
		xc := make([]int, len(x.Axes))
		sums := map[int]float64{} // the other axes' flat position → running sum
		for i, v := range x.Vals {
			x.Coords(i, xc)
			key := 0
			for k, a := range x.Axes {
				if !scan[a.Name] {
					key = key*a.Size + xc[k]
				}
			}
			sums[key] += v
			out.Vals[i] = sums[key]
		}
	case "ceil_div":
		err = binary(func(x, y float64) float64 { return math.Ceil(x / y) })
	case "gt":
		err = binary(func(x, y float64) float64 { return b2f(x > y) })
	case "ge":
		err = binary(func(x, y float64) float64 { return b2f(x >= y) })
	case "lt":
		err = binary(func(x, y float64) float64 { return b2f(x < y) })
	case "pack":
		// (bits of bf16 a) << 16 | b: the score and its index in one i32
		// (002 L8547); a is taken as the bf16 it is stored as (nearest,
		// as dtype.Round).
		err = binary(func(x, y float64) float64 {
			bits := dtype.BF16FromF32(float32(dtype.Round(x, dtype.F32)))
			return float64(int32(uint32(bits)<<16 | uint32(i32Of(y))))
		})
	case "unpack":
		// The bf16 nearest the f32 whose bits are a (round to nearest
		// even, as the kernel's cast): the bf16 whose bits are a >> 16
		// when a's lower half is below 0x8000, as a packed top-k index is
		// (002 L8589); a NaN pattern is NaN, a subnormal a zero of its
		// sign (as dtype decodes bf16, RN L891; pack makes neither).
		forEach(iterSpace(out), []*Logical{out, ins[0]}, func(q []int) {
			out.Vals[q[0]] = float64(dtype.F32FromBF16(dtype.BF16FromF32(math.Float32frombits(uint32(i32Of(ins[0].Vals[q[1]]))))))
		})
	case "sort_key":
		// a, or a ^ 0x7fff0000 where a < 0 (Packed_Value_cmp, 002
		// L8550-8552): packed floats ordered as i32.
		forEach(iterSpace(out), []*Logical{out, ins[0]}, func(q []int) {
			out.Vals[q[0]] = float64(sortKey(i32Of(ins[0].Vals[q[1]])))
		})
	case "bit_and":
		err = binary(func(x, y float64) float64 { return float64(i32Of(x) & i32Of(y)) })
	case "max":
		err = binary(math.Max)
	case "div":
		err = binary(func(x, y float64) float64 { return x / y })
	case "where":
		// cond != 0 ? a : b, b the scalar when given.
		cond, a := ins[0], ins[1]
		b := &Logical{Name: "scalar", Vals: []float64{0}}
		switch {
		case o.Scalar != nil:
			b.Vals[0] = *o.Scalar
		case len(ins) == 3:
			b = ins[2]
		default:
			return fmt.Errorf("op %s (where): want three inputs", o.Name)
		}
		forEach(iterSpace(out), []*Logical{out, cond, a, b}, func(q []int) {
			if cond.Vals[q[1]] != 0 {
				out.Vals[q[0]] = a.Vals[q[2]]
			} else {
				out.Vals[q[0]] = b.Vals[q[3]]
			}
		})
	case "compact":
		// The values of x where keep != 0, in row-major order over
		// o.Axes, packed to the front of the output; the rest is -1 (no
		// value: an empty grid, 002 L8615-L8616, L8654).
		x, keep := ins[0], ins[1]
		k := 0
		for i := range out.Vals {
			out.Vals[i] = -1
		}
		for i, v := range x.Vals {
			if keep.Vals[i] != 0 && k < len(out.Vals) {
				out.Vals[k] = v
				k++
			}
		}
	case "update_slice":
		// dest with its last index of axis replaced by src (the row the
		// decode step writes, s − 1; workloads/llama3-70b-decode.yaml).
		dest, src := ins[0], ins[1]
		p := axisPos(dest)[o.Axis]
		last := dest.Axes[p].Size - 1
		copy(out.Vals, dest.Vals)
		dp := axisPos(dest)
		dc := make([]int, len(dest.Axes))
		for i := range out.Vals {
			dest.Coords(i, dc)
			if dc[p] != last {
				continue
			}
			so := 0
			for _, a := range src.Axes {
				so = so*a.Size + dc[dp[a.Name]]
			}
			out.Vals[i] = src.Vals[so]
		}
	default:
		return fmt.Errorf("op %s: the graph reference of kind %s is not implemented", o.Name, o.Kind)
	}
	return err
}

// i32Of is the i32 an integer value holds (wrapped to 32 bits).
func i32Of(v float64) int32 { return int32(int64(v)) }

// sortKey is Packed_Value_cmp (002 L8550-8552): a packed value whose
// upper half is a float's, as an i32 whose order is the float's — the
// magnitude bits of a negative one flipped.
func sortKey(a int32) int32 {
	if a >= 0 {
		return a
	}
	return a ^ 0x7fff0000
}

// topkKey is a float64 as an int64 in the order topk ranks values: the
// sort key's trick on the float64's bits (the magnitude of a negative
// value flipped), so −0 ranks below +0, a positive NaN above +∞ and a
// negative one below −∞. On the values of one float type it orders as
// sortKey orders their packed forms (the conversion to float64 keeps
// the order of the bits within a sign).
func topkKey(v float64) int64 {
	b := int64(math.Float64bits(v))
	if b < 0 {
		return b ^ math.MaxInt64
	}
	return b
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// String prints the report for the CLI.
func (r *GraphReport) String() string {
	var b strings.Builder
	for _, o := range r.Ops {
		fmt.Fprintf(&b, "  %-14s %-13s %-22s", o.Op, o.Kind, o.How)
		for _, r := range o.Relayouts {
			fmt.Fprintf(&b, " relayout %s %s -> %s: %d of %d elements differ;", r.Tensor, r.From, r.To, r.Mismatches, r.Elements)
		}
		if o.Kernel != nil {
			fmt.Fprintf(&b, " kernel: %s", o.Kernel.String())
			for _, g := range o.Graph {
				fmt.Fprintf(&b, "; graph: %s", g.String())
			}
		}
		b.WriteString("\n")
	}
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s: graph %s, seed %d: %d kernels simulated, %d ops fed from the reference (not yet plannable)",
		verdict, r.Graph, r.Seed, r.Simulated, r.Fed)
	if r.Unindexed > 0 {
		fmt.Fprintf(&b, ", %d kernels fed from the reference (an index naming a row their DMA cannot move)", r.Unindexed)
	}
	if r.Expanded > 0 {
		fmt.Fprintf(&b, "; %d ops computed by other ops, their parts' reference equal to the op's", r.Expanded)
	}
	b.WriteString("\n")
	return b.String()
}

// gatherRows fills out with table at the rows index names: the table's
// gathered axes at the index's value, flat and row-major over them in the
// table's order (one axis: its coordinate); out has the table's other axes
// and the index's. An index outside the gathered axes reads 0 (an empty
// MoE grid, whose expert id is -1, 002 L8615-L8616). The graph's
// reference and a gather kernel's (kernel.RefGather) both read it.
func gatherRows(out, table, index *Logical, axes []string) error {
	tpos, opos := axisPos(table), axisPos(out)
	gathered := map[string]bool{}
	span := 1
	for _, a := range axes {
		p, ok := tpos[a]
		if !ok {
			return fmt.Errorf("the table %s has no axis %s", table.Name, a)
		}
		gathered[a] = true
		span *= table.Axes[p].Size
	}
	for _, a := range index.Axes {
		if _, ok := opos[a.Name]; !ok {
			return fmt.Errorf("the output %s lacks the index %s's axis %s", out.Name, index.Name, a.Name)
		}
	}
	for _, a := range table.Axes {
		if _, ok := opos[a.Name]; !ok && !gathered[a.Name] {
			return fmt.Errorf("the output %s lacks the table %s's ungathered axis %s", out.Name, table.Name, a.Name)
		}
	}
	oc := make([]int, len(out.Axes))
	gc := map[string]int{}
	for i := range out.Vals {
		out.Coords(i, oc)
		io := 0
		for _, a := range index.Axes {
			io = io*a.Size + oc[opos[a.Name]]
		}
		at := int(index.Vals[io])
		out.Vals[i] = 0
		if at < 0 || at >= span {
			continue
		}
		to, rest := 0, at
		// The gathered coordinates from the flat index, minor first.
		for k := len(table.Axes) - 1; k >= 0; k-- {
			if a := table.Axes[k]; gathered[a.Name] {
				gc[a.Name] = rest % a.Size
				rest /= a.Size
			}
		}
		for _, a := range table.Axes {
			c, ok := gc[a.Name]
			if !ok || !gathered[a.Name] {
				c = oc[opos[a.Name]]
			}
			to = to*a.Size + c
		}
		out.Vals[i] = table.Vals[to]
	}
	return nil
}

// scatterRows sets out to data's rows at the rows index names: out's axes
// named by axes are the scattered ones, the index's value their flat
// row-major position; index positions along the axes data lacks write the
// same row more than once (the MoE's K choices of a token), and an index
// value outside them writes nothing. It returns which positions of out
// were written; the others hold 0. Two positions naming one row: the
// later position's row is kept.
func scatterRows(out, data, index *Logical, axes []string) ([]bool, error) {
	opos, dpos := axisPos(out), axisPos(data)
	scattered := map[string]bool{}
	span := 1
	for _, a := range axes {
		p, ok := opos[a]
		if !ok {
			return nil, fmt.Errorf("the output %s has no axis %s", out.Name, a)
		}
		if _, ok := dpos[a]; ok {
			return nil, fmt.Errorf("the scattered axis %s is an axis of the data %s", a, data.Name)
		}
		scattered[a] = true
		span *= out.Axes[p].Size
	}
	for _, a := range data.Axes {
		if _, ok := opos[a.Name]; !ok && !slices.ContainsFunc(index.Axes, func(x mapping.Axis) bool { return x.Name == a.Name }) {
			return nil, fmt.Errorf("the data %s's axis %s is neither the output %s's nor the index %s's", data.Name, a.Name, out.Name, index.Name)
		}
	}
	for _, a := range out.Axes {
		if _, ok := dpos[a.Name]; !ok && !scattered[a.Name] {
			return nil, fmt.Errorf("the output %s's axis %s is neither scattered nor the data %s's", out.Name, a.Name, data.Name)
		}
	}
	// The data's elements grouped by their coordinates along the axes the
	// index shares (flat, in the index's order).
	// coord(k) is the coordinate along the index's k-th axis.
	key := func(coord func(k int, a string) int) int {
		n := 0
		for k, a := range index.Axes {
			c := 0
			if _, ok := dpos[a.Name]; ok {
				c = coord(k, a.Name)
			}
			n = n*a.Size + c
		}
		return n
	}
	groups := map[int][]int{}
	dc := make([]int, len(data.Axes))
	for di := range data.Vals {
		data.Coords(di, dc)
		k := key(func(_ int, a string) int { return dc[dpos[a]] })
		groups[k] = append(groups[k], di)
	}
	for i := range out.Vals {
		out.Vals[i] = 0
	}
	written := make([]bool, len(out.Vals))
	ic := make([]int, len(index.Axes))
	gc := make([]int, len(out.Axes))
	for ii, v := range index.Vals {
		at := int(v)
		if at < 0 || at >= span || v != math.Trunc(v) {
			continue
		}
		index.Coords(ii, ic)
		k := key(func(k int, _ string) int { return ic[k] })
		// The scattered coordinates from the flat index, minor first.
		rest := at
		for k := len(out.Axes) - 1; k >= 0; k-- {
			if scattered[out.Axes[k].Name] {
				gc[k] = rest % out.Axes[k].Size
				rest /= out.Axes[k].Size
			}
		}
		for _, di := range groups[k] {
			data.Coords(di, dc)
			oo := 0
			for k, a := range out.Axes {
				c := gc[k]
				if !scattered[a.Name] {
					c = dc[dpos[a.Name]]
				}
				oo = oo*a.Size + c
			}
			out.Vals[oo] = data.Vals[di]
			written[oo] = true
		}
	}
	return written, nil
}

// tensorIndex is the index of the graph tensor called name (-1: none).
func tensorIndex(g *plan.Graph, name string) int {
	return slices.IndexFunc(g.Tensors, func(t plan.GraphTensor) bool { return t.Name == name })
}
