package plan

import (
	"fmt"
	"slices"
	"strings"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/workload"
)

// validateOp checks the workload and mapping of a non-einsum op's plan
// (format version 2): the kind is a known op kind other than einsum, the
// einsum and the contraction mapping are absent, the axes are the
// program's, the op mapping names the program's axes with a form and
// spatial factors of at least 1, and the program states an expression
// reference (what verify checks it against).
func (p *Plan) validateOp() error {
	w := &p.Workload
	if p.Version < 2 {
		return fieldErr("workload.kind", "%q: a version-%d plan holds an einsum only", w.Kind, p.Version)
	}
	if w.Name == "" {
		return fieldErr("workload.name", "missing")
	}
	k := workload.Kind(w.Kind)
	if !slices.Contains(workload.Kinds(), k) || k == workload.KindEinsum {
		return fieldErr("workload.kind", "%q: want a non-einsum op kind", w.Kind)
	}
	if w.Einsum != "" {
		return fieldErr("workload.einsum", "%q: a %s op has no einsum", w.Einsum, w.Kind)
	}
	if p.OpMapping == nil {
		return fieldErr("op_mapping", "missing for a %s op", w.Kind)
	}
	if p.Mapping.Stationary != "" || p.Mapping.Streaming != "" || len(p.Mapping.Axes) > 0 {
		return fieldErr("mapping", "a %s op's plan has no contraction mapping", w.Kind)
	}
	axes, err := mapping.ParseAxes(w.Axes)
	if err != nil {
		return fieldErr("workload.axes", "%v", err)
	}
	m := p.OpMapping
	// An interleaved add's program declares its interleave axis after the
	// workload's.
	if got, want := axes.String(), p.Program.Axes.String(); got != want &&
		!(m.Form == FormInterleaved && len(p.Program.Axes.List()) == len(axes.List())+1 && extends(p.Program.Axes, axes, axes.Names())) {
		return fieldErr("workload.axes", "%q, but the program's axes are %q", got, want)
	}
	if m.Form == "" {
		return fieldErr("op_mapping.form", "missing")
	}
	names := axes.Names()
	for i, a := range m.Spread {
		if !slices.Contains(names, a) {
			return fieldErr(fmt.Sprintf("op_mapping.spread[%d]", i), "%q is not among the axes %q", a, w.Axes)
		}
	}
	if m.Reduced != "" {
		for _, a := range strings.Split(m.Reduced, ", ") {
			if !slices.Contains(names, a) {
				return fieldErr("op_mapping.reduced", "%q is not among the axes %q", a, w.Axes)
			}
		}
	}
	if m.Tiles < 1 {
		return fieldErr("op_mapping.tiles", "%d: want at least 1", m.Tiles)
	}
	if m.Stagger < 0 {
		return fieldErr("op_mapping.hbm_stagger", "%d is negative", m.Stagger)
	}
	// An update_slice, a gather and a scatter are one DMA
	// (search/opslice.go, search/opgather.go): they compute on no slice,
	// and their reference is their own.
	if ref, ok := map[workload.Kind]kernel.RefOp{workload.KindUpdateSlice: kernel.RefUpdateSlice, workload.KindGather: kernel.RefGather, workload.KindScatter: kernel.RefScatter}[k]; ok {
		if m.Clusters != 0 || m.Slices != 0 || m.Tiles != 1 {
			return fieldErr("op_mapping", "a %s is one DMA: 1 tile, no clusters or slices computing, not %d, %d, %d", k, m.Tiles, m.Clusters, m.Slices)
		}
		if r := p.Program.Reference; r == nil || r.Op != ref {
			return fieldErr("program.reference", "a %s's program states its %s reference", k, ref)
		}
		return nil
	}
	if m.Clusters < 1 {
		return fieldErr("op_mapping.clusters", "%d: want at least 1", m.Clusters)
	}
	if m.Slices < 1 {
		return fieldErr("op_mapping.slices", "%d: want at least 1", m.Slices)
	}
	if r := p.Program.Reference; r == nil || r.Op != kernel.RefExpr {
		return fieldErr("program.reference", "a %s op's program states its expression reference", w.Kind)
	}
	return nil
}
