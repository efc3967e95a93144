package rustread

import (
	"slices"
	"strconv"
	"strings"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// A kernel that updates an argument in place (an update_slice, emit's
// inplace.go) takes it as `&mut HbmTensor`, returns nothing, binds a view
// of it with one axis pinned and copies another argument there:
//
//	let v: HbmTensorViewMut<'_, bf16, Chip, m![H, 1 # 8, D]> =
//	    cache.view_mut().tile::<m![S], 1, m![H, 1 # 8, D]>(7);
//	row.view().to_hbm_view(&mut ctx.tdma, v);
//
// Its result (kernel.Tensor.InPlace) is named by the reference directive.

// inPlaceView parses the rest of the view's let, from its name on.
func (r *reader) inPlaceView(name token) {
	r.expect(":")
	r.expect("HbmTensorViewMut")
	dt, chip, elem, elemOff, bt := r.viewHead()
	if r.err != nil {
		return
	}
	base, ok := r.vars[bt.text]
	if !ok || base != r.inPlace {
		r.fail(bt.off, "a view outside a tile loop is a view of the argument the kernel updates in place (its &mut parameter), not of %s", bt.text)
		return
	}
	r.expect(".")
	r.expect("view_mut")
	r.expect("(")
	r.expect(")")
	r.expect(".")
	dim, m, dimOff, mOff := r.tileHead("the view is one index of the axis: a tile of 1")
	idxOff := r.tok().off
	idx := r.constExpr()
	r.expect(")")
	r.expect(";")
	if r.err != nil {
		return
	}
	if !m.Equal(elem) {
		r.fail(mOff, "the tile's mapping %s is not the view's type's %s", m.Text(), elem.Text())
		return
	}
	if dim.Kind() != mapping.KindSymbol {
		r.fail(dimOff, "the view pins one axis: want m![AXIS], found %s", dim.Text())
		return
	}
	want, stride, ok := r.pinnedElement(base, dim.Name())
	if !ok {
		r.fail(dimOff, "%s is no axis of %s's element m![%s]", dim.Name(), bt.text, base.Element)
		return
	}
	if !elem.Equal(want) {
		r.fail(elemOff, "the view of %s with %s pinned is %s, not %s", bt.text, dim.Name(), want.Text(), elem.Text())
		return
	}
	if idx < 0 || idx >= int64(dim.Size()) {
		r.fail(idxOff, "index %d of %s: want 0 to %d", idx, dim.Name(), dim.Size()-1)
		return
	}
	t := &kernel.Tensor{Mem: kernel.HBM, Role: kernel.Intermediate, DType: dt, Chip: chip, Element: elem, View: base.Name}
	if !chip.Equal(base.Chip) || dt != base.DType {
		r.fail(elemOff, "the view of %s has its type: %s, Chip %s", bt.text, base.DType, base.Chip.Text())
		return
	}
	r.newTensor(name.text, t)
	r.interm = append(r.interm, t)
	if r.viewOff == nil {
		r.viewOff = map[*kernel.Tensor]int64{}
	}
	r.viewOff[t] = idx * stride
}

// pinnedElement is base's element with axis's term `1 # n` and the bytes
// one index of the axis spans; false when the element has no such term.
func (r *reader) pinnedElement(base *kernel.Tensor, axis string) (*mapping.Expr, int64, bool) {
	parts := []*mapping.Expr{base.Element}
	if base.Element.Kind() == mapping.KindPair {
		parts = base.Element.Parts()
	}
	at := -1
	for i, p := range parts {
		if p.Kind() == mapping.KindSymbol && p.Name() == axis {
			at = i
		}
	}
	if at < 0 {
		return nil, 0, false
	}
	var terms []string
	stride := int64(base.DType.Bits()) / 8
	for i, p := range parts {
		switch {
		case i == at:
			terms = append(terms, "1 # "+strconv.Itoa(p.Size()))
		default:
			terms = append(terms, p.String())
			if i > at {
				stride *= int64(p.Size())
			}
		}
	}
	e, err := mapping.Parse(strings.Join(terms, ", "), r.axes, r.env)
	if err != nil {
		return nil, 0, false
	}
	return e, stride, true
}

// toHBMView parses `src.view().to_hbm_view(&mut ctx.tdma, v);`.
func (r *reader) toHBMView() {
	st, dt := r.viewToHBM()
	r.expect(")")
	r.expect(";")
	if r.err != nil {
		return
	}
	const m = "to_hbm_view"
	src, ok := r.vars[st.text]
	if !ok || src.Mem != kernel.HBM || src.Role != kernel.Input {
		r.fail(st.off, "%s copies an HBM argument of the kernel, not %s", m, st.text)
		return
	}
	dst, ok := r.vars[dt.text]
	if _, isView := r.viewOff[dst]; !ok || !isView {
		r.fail(dt.off, "%s writes a view of the argument the kernel updates in place, not %s", m, dt.text)
		return
	}
	r.prog.Ops = append(r.prog.Ops, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpHBMToHBM, Src: src.Name, Dst: dst.Name})
}

// inPlaceResult adds the result of a kernel that updates its &mut
// parameter in place — the parameter's whole view, named by the reference
// directive's output — and places the views of it, once the host program
// has placed the parameter.
func (r *reader) inPlaceResult() {
	if r.inPlace == nil {
		return
	}
	b := r.inPlace
	if r.output != nil {
		r.fail(r.outputOff, "a kernel that updates %s in place (&mut) returns nothing", b.Name)
		return
	}
	name := b.Name + "_new"
	if ref := r.prog.Reference; ref != nil && ref.Output != "" {
		name = ref.Output
	}
	if r.names[name] {
		r.fail(0, "the result %s of the kernel's update in place is named as another tensor", name)
		return
	}
	r.names[name] = true
	for k, t := range r.inputs {
		if t == b && len(r.launchArgs) > k && !slices.Contains(r.launchMut, k) {
			r.fail(r.launchOff, "launch lends %s as &%s: the kernel updates it in place (&mut)", r.launchArgs[k], r.launchArgs[k])
			return
		}
	}
	r.output = &kernel.Tensor{Name: name, Mem: kernel.HBM, Role: kernel.Output, DType: b.DType, Chip: b.Chip, Element: b.Element, Addr: b.Addr, View: b.Name}
	for t, off := range r.viewOff {
		t.Addr = b.Addr + off
	}
}
