package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// A gather fused into its consumer's loads: the MoE's weight gathers copy
// 256 expert matrices of 3 MB into W_gathered (002 L8683-8686), which the
// sparse MLP's einsums then read again. A kernel engineer reads the
// experts' rows straight from the table instead: each DMA that loads a
// tile of W_gathered walks W_up's rows through the index, an IndirectLoop
// (002 L1684-1688) in the load's own descriptors. The einsum is planned as
// it stands (its loads of the gathered tensor priced as the gather's
// output would be read: the index's values are not known when planning,
// docs/spec-decisions.md "Gather: the DMA's indirect loop"); its program is
// then rewritten (GatherIntoLoads) and the gather's kernel disappears
// (docs/spec-decisions.md "Gather fused into its einsum's loads").

// GatherIntoLoads returns a copy of p, whose HBM argument v is the output
// of w's gather op g, in which v is a gathered argument
// (kernel.Tensor.Gather): g's table and index become arguments of the
// kernel (declared at their workload layouts, after every HBM region of p,
// each at a 256 MiB boundary, the table's gathered axes added to the
// program's), every load of v reads the table through the index, and the
// program is checked and lowered again (its loads' descriptors then hold
// the indirect loops, engines.gatherLoad). p is not changed.
func GatherIntoLoads(spec *engines.Spec, p *kernel.Program, w *workload.Workload, g *workload.Op, v string) (*kernel.Program, error) {
	if g.Kind != workload.KindGather || len(g.Inputs) != 2 || len(g.Outputs) != 1 || g.Outputs[0] != v {
		return nil, fmt.Errorf("gather into loads: op %s is not the gather of %s", g.Name, v)
	}
	vt, ok := p.Tensor(v)
	if !ok || vt.Mem != kernel.HBM || vt.Role != kernel.Input || vt.View != "" {
		return nil, fmt.Errorf("gather into loads: %s is not an HBM argument of kernel %s", v, p.Name)
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var t kernel.ProgramText
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	// The axes the table and the index add (the gathered ones).
	axes := []string{t.Axes}
	added := map[string]bool{}
	for _, name := range g.Inputs {
		for _, a := range w.Tensor(name).Axes {
			n, _ := w.AxisSize(a)
			if _, ok := p.Axes.Size(a); !ok && n > 1 && !added[a] {
				added[a] = true
				axes = append(axes, fmt.Sprintf("%s=%d", a, n))
			}
		}
	}
	t.Axes = strings.Join(axes, ", ")
	var end int64
	for _, x := range p.Tensors {
		if x.Mem != kernel.HBM || x.View != "" {
			continue
		}
		n, err := x.DType.BytesFor(x.Element.Size() * x.Chip.Size())
		if err != nil {
			return nil, err
		}
		end = max(end, x.Addr+int64(n))
	}
	addr := alignUp(end, 256<<20)
	for _, name := range g.Inputs {
		if _, dup := p.Tensor(name); dup {
			return nil, fmt.Errorf("gather into loads: kernel %s already has a tensor %s", p.Name, name)
		}
		x := w.Tensor(name)
		ord, err := layoutOrder(x)
		if err != nil {
			return nil, fmt.Errorf("gather into loads: %w", err)
		}
		el := strings.Join(live(w, ord), ", ")
		if el == "" {
			el = "1"
		}
		t.Tensors = append(t.Tensors, &kernel.TensorText{Name: name, Mem: kernel.HBM, DType: x.DType.String(), Role: kernel.Input, Chip: "1", Element: el, Addr: addr})
		addr = alignUp(addr+x.Elems*int64(x.DType.SizeBits())/8, 256<<20)
	}
	for _, x := range t.Tensors {
		if x.Name == v {
			x.Gather = &kernel.Gather{Table: g.Inputs[0], Index: g.Inputs[1]}
		}
	}
	views := map[string]bool{v: true}
	for _, x := range p.Tensors {
		if x.View == v {
			views[x.Name] = true
		}
	}
	for _, op := range t.Ops {
		if views[op.Src] {
			if op.Kind != kernel.OpToDM {
				return nil, fmt.Errorf("gather into loads: kernel %s reads %s by %s, not a load", p.Name, op.Src, op.Kind)
			}
			op.Index, op.DMA = g.Inputs[1], nil
		}
	}
	if data, err = json.Marshal(&t); err != nil {
		return nil, err
	}
	q := &kernel.Program{}
	if err := json.Unmarshal(data, q); err != nil {
		return nil, fmt.Errorf("gather into loads: kernel %s: %w", p.Name, err)
	}
	if err := engines.Check(spec, q); err != nil {
		return nil, fmt.Errorf("gather into loads: kernel %s: %w", p.Name, err)
	}
	if err := engines.Lower(spec, q); err != nil {
		return nil, fmt.Errorf("gather into loads: kernel %s: %w", p.Name, err)
	}
	return q, nil
}

// ErrNotFused is what FuseGather's refusal wraps: the kernel's loads
// cannot do the gather (they walk its rows in two loops) or would price
// otherwise.
var ErrNotFused = errors.New("not fused")

// FuseGather is GatherIntoLoads of gather op g's output in p, a kernel
// priced at cycles, kept only when the rewritten kernel prices exactly so
// (its loads make the same requests): a gather fused into its consumer
// then saves its own kernel's cycles and nothing else changes. Its error
// wraps ErrNotFused when the rewrite is refused or prices otherwise.
func FuseGather(spec *engines.Spec, p *kernel.Program, cycles float64, w *workload.Workload, g *workload.Op) (*kernel.Program, error) {
	q, err := GatherIntoLoads(spec, p, w, g, g.Outputs[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFused, err)
	}
	rep, err := cost.Estimate(spec, q)
	if err != nil {
		return nil, fmt.Errorf("search: %s fused into kernel %s: %w", g.Name, p.Name, err)
	}
	if rep.Cycles != cycles {
		return nil, fmt.Errorf("%w: the kernel %s would price %.0f cycles, not %.0f", ErrNotFused, p.Name, rep.Cycles, cycles)
	}
	return q, nil
}

// GatherPairs lists w's gathers whose output one contraction alone reads
// and the graph does not return: each is a (gather, einsum) pair that
// the graph model may fuse (graphModel.gatherSavings). Program order.
func GatherPairs(w *workload.Workload) [][2]*workload.Op {
	var out [][2]*workload.Op
	for _, g := range w.Ops {
		if g.Kind != workload.KindGather || len(g.Outputs) != 1 {
			continue
		}
		t := w.Tensor(g.Outputs[0])
		if t == nil || t.Role == workload.RoleOutput {
			continue
		}
		var cons []*workload.Op
		for _, o := range w.Ops {
			if slices.Contains(o.Inputs, t.Name) {
				cons = append(cons, o)
			}
		}
		// A contraction: an einsum that contracts nothing may be planned
		// as a Vector Engine multiply (workload.ProductOp), whose loads
		// this rewrite is not for.
		if len(cons) == 1 && cons[0].Kind == workload.KindEinsum && len(cons[0].Epilogue) == 0 && workload.ProductOp(w, cons[0]) == nil {
			out = append(out, [2]*workload.Op{g, cons[0]})
		}
	}
	return out
}

// gatherSavings finds, for each gather whose output one contraction alone
// reads (GatherPairs), the contraction's classes that read that output in
// the layout the gather writes and whose kernel, its loads reading the
// table through the index (GatherIntoLoads), prices as before: fused,
// such a class saves the gather's cycles (layoutClass.gather). A gather
// has one plan (one candidate, one layout class: its output keeps the
// layout its DMA writes), so the saving is the same in every such class,
// and the graph model, choosing on class costs less the savings
// (layoutClass.cost), proves its optimum with the fusions among its
// choices.
func (m *graphModel) gatherSavings() error {
	idx := map[string]int{}
	for i := range m.ops {
		idx[m.ops[i].op.Name] = i
	}
	for _, pair := range GatherPairs(m.w) {
		gi, ei := idx[pair[0].Name], idx[pair[1].Name]
		g := &m.ops[gi]
		if g.status != plan.StatusPlanned || len(g.classes) != 1 || g.classes[0].plan == nil {
			continue
		}
		out := pair[0].Outputs[0]
		wrote := m.layoutOf(gi, 0, out)
		for k := range m.ops[ei].classes {
			c := &m.ops[ei].classes[k]
			if c.plan == nil || isDM(wrote) || !slices.Equal(m.layoutOf(ei, k, out), wrote) {
				continue
			}
			q, err := FuseGather(m.spec, c.plan.Program, c.cycles, m.w, pair[0])
			if errors.Is(err, ErrNotFused) {
				continue // its loads walk the rows in two loops, or price otherwise
			}
			if err != nil {
				return err
			}
			c.gather, c.fused, c.gatherCycles = pair[0].Name, q, g.classes[0].cycles
		}
	}
	return nil
}

// applyGathers fuses into their consumers, in g (the plan of choice), the
// gathers whose consumer's chosen class does them in its loads: the
// consumer's plan holds the fused program (GraphOp.Prologue), the gather's
// status is fused, its output is stored nowhere, and the counts and kernel
// cycles follow (the start times and the critical path already weigh the
// gather 0, graphModel.weight).
func (m *graphModel) applyGathers(g *plan.Graph, choice []int) {
	ops := map[string]*plan.GraphOp{}
	for i := range g.Ops {
		ops[g.Ops[i].Name] = &g.Ops[i]
	}
	for i := range m.ops {
		cl := &m.ops[i].classes[choice[i]]
		if cl.gather == "" {
			continue
		}
		eop, gop := ops[m.ops[i].op.Name], ops[cl.gather]
		out := gop.Outputs[0]
		pl := *eop.Plan
		pl.Program = cl.fused
		pl.Workload.Prologue = append(slices.Clone(pl.Workload.Prologue), gop.Name)
		eop.Plan = &pl
		eop.Prologue = append(eop.Prologue, gop.Name)
		for k, in := range eop.Inputs {
			if in == out {
				eop.Layouts[k] = ""
			}
		}
		g.Cost.KernelCycles -= gop.Cycles
		gop.Status, gop.FusedInto, gop.Plan, gop.Cycles = plan.StatusFused, eop.Name, nil, 0
		gop.Layouts[len(gop.Layouts)-1] = ""
		for t := range g.Tensors {
			if g.Tensors[t].Name == out {
				g.Tensors[t].Place, g.Tensors[t].Layout = plan.PlaceFused, ""
			}
		}
		g.Cost.Planned--
		g.Cost.Fused++
	}
}

// weight is op i's cycles in the sequential schedule of choice: its class's
// kernel, or 0 for a gather that its consumer's chosen class does in its
// loads.
func (m *graphModel) weight(i int, choice []int) float64 {
	if m.ops[i].op.Kind != workload.KindGather {
		return m.ops[i].classes[choice[i]].cycles
	}
	for _, k := range m.cons[m.ops[i].op.Outputs[0]] {
		if m.ops[k].classes[choice[k]].gather == m.ops[i].op.Name {
			return 0
		}
	}
	return m.ops[i].classes[choice[i]].cycles
}
