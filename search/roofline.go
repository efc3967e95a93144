package search

import (
	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/workload"
)

// LayerRoofline is a graph workload's roofline, the yardstick a kernel
// engineer holds a whole layer's plan against: the larger of its
// einsums' MACs at the chip's peak (each at its inputs' type, 002 L132,
// L4099) and the least HBM traffic any plan of it has at the HBM read and
// write bandwidths (cost.HBMRoofline): every graph input read once (a
// table only gathers read, at the rows they gather), every graph output
// written once (an input updated in place, at the rows the update
// writes). Intermediates move nothing: a plan could keep them all on chip.
// The Vector Engine's work is not in it.
func LayerRoofline(w *workload.Workload, spec *engines.Spec) float64 {
	bytesOf := func(t *workload.Tensor) int64 { return t.Elems * int64(t.DType.SizeBits()) / 8 }
	compute := 0.0
	for _, o := range w.Ops {
		if o.Kind != workload.KindEinsum || len(o.Inputs) == 0 {
			continue
		}
		sizes := map[string]int64{}
		for _, name := range operands(o) {
			if t := w.Tensor(name); t != nil {
				for _, a := range t.Axes {
					n, _ := w.AxisSize(a)
					sizes[a] = int64(n)
				}
			}
		}
		macs := int64(1)
		for _, n := range sizes {
			macs *= n
		}
		in := w.Tensor(o.Inputs[0])
		if in == nil {
			continue
		}
		if peak, err := spec.PeakMACsPerCycle(in.DType.SizeBits()); err == nil && peak > 0 {
			compute += float64(macs) / float64(peak*max(w.Chips, 1))
		}
	}
	consumers := map[string][]*workload.Op{}
	producer := map[string]*workload.Op{}
	for _, o := range w.Ops {
		for _, name := range o.Inputs {
			consumers[name] = append(consumers[name], o)
		}
		for _, name := range o.Outputs {
			producer[name] = o
		}
	}
	var read, write int64
	for _, t := range w.Tensors {
		cs := consumers[t.Name]
		switch {
		case t.Role == workload.RoleInput && len(cs) > 0:
			n, gathered := int64(0), true
			for _, c := range cs {
				if c.Kind != workload.KindGather || c.Inputs[0] != t.Name {
					gathered = false
					break
				}
				if out := w.Tensor(c.Outputs[0]); out != nil {
					n += bytesOf(out)
				}
			}
			if !gathered {
				n = bytesOf(t)
			}
			read += min(n, bytesOf(t))
		case t.Role == workload.RoleOutput:
			n := bytesOf(t)
			if p := producer[t.Name]; p != nil && p.Kind == workload.KindUpdateSlice && len(p.Inputs) > 1 {
				if s := w.Tensor(p.Inputs[1]); s != nil {
					n = bytesOf(s) // the rows the update writes in place
				}
			}
			if p := producer[t.Name]; p != nil && p.Kind == workload.KindScatter && len(p.Inputs) > 1 {
				// The rows the scatter writes, one per index position; the
				// rows no index names are not written.
				if idx := w.Tensor(p.Inputs[1]); idx != nil {
					span := int64(1)
					for _, a := range p.Axes {
						if k, ok := w.AxisSize(a); ok {
							span *= k
						}
					}
					n = min(n, bytesOf(t)/max(span, 1)*idx.Elems)
				}
			}
			write += n
		}
	}
	return max(compute, cost.HBMRoofline(spec, w.Chips, read, write))
}
