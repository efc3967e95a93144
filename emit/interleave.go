package emit

import (
	"tcpmap/model/kernel"
)

// Interleaved fetch in Rust (002 L1866):
// `ctx.main.begin_interleaved::<I, _, _, _, _, _>(lhs.view(), rhs.view())`.

// beginCall prints a begin stage: begin(dm.view()) (002 L205), or
// begin_interleaved for an interleaved one.
func beginCall(st *kernel.Stage) (string, error) {
	b, err := kernel.ParseBeginInterleave(st.Param)
	if err != nil {
		return "", err
	}
	if b == nil {
		return "begin(" + st.Tensor + ".view())", nil
	}
	return "begin_interleaved::<" + b.Axis + ", _, _, _, _, _>(" + st.Tensor + ".view(), " + b.Tensor + ".view())", nil
}

// beginInterleaved reads `begin_interleaved::<I, _, _, _, _, _>(lhs.view(),
// rhs.view())` into st: two DM tensors of one element type.
func (r *reader) beginInterleaved(m token, tf []typeArg, st *kernel.Stage, s *stream) bool {
	st.Kind = kernel.StBegin
	if !r.nargs(m, tf, 1, 6) {
		return false
	}
	axis := tf[0]
	if axis.expr != nil || axis.name == "_" {
		r.fail(axis.off, "begin_interleaved's first type argument is the interleave axis")
		return false
	}
	for _, a := range tf[1:] {
		if a.name != "_" {
			r.fail(a.off, "begin_interleaved's other type arguments come from the tensors: write _")
			return false
		}
	}
	r.expect("(")
	var ts [2]*kernel.Tensor
	for i := range ts {
		if i > 0 {
			r.expect(",")
		}
		v := r.ident()
		r.expect(".")
		r.expect("view")
		r.noArgs()
		if r.err != nil {
			return false
		}
		t, ok := r.vars[v.text]
		if !ok || t.Mem != kernel.DM {
			r.fail(v.off, "begin_interleaved needs DM tensors, %s is not one", v.text)
			return false
		}
		if i == 1 && t.DType != ts[0].DType {
			r.fail(v.off, "%s is %s, %s is %s: interleaved tensors have one element type", v.text, t.DType, ts[0].Name, ts[0].DType)
			return false
		}
		ts[i] = t
	}
	r.expect(")")
	if r.err != nil {
		return false
	}
	st.Tensor = ts[0].Name
	st.Param = kernel.BeginInterleave{Axis: axis.name, Tensor: ts[1].Name}.String()
	*s = stream{dt: ts[0].DType, chip: ts[0].Chip, cluster: ts[0].Cluster, slic: ts[0].Slice}
	return true
}
