package search

import (
	"encoding/json"
	"fmt"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
)

// A gather fused into its consumer's loads: the MoE's weight gathers copy
// 254 expert matrices of 3 MB into W_gathered (002 L8683-8686), which the
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
	for _, name := range g.Inputs {
		for _, a := range w.Tensor(name).Axes {
			n, _ := w.AxisSize(a)
			if _, ok := p.Axes.Size(a); !ok && n > 1 && !strings.Contains(strings.Join(axes, ","), a+"=") {
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
