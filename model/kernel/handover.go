package kernel

import (
	"fmt"
	"slices"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// Handover returns one program that runs p, then q, where p leaves its
// result in DM for q (p's to_hbm handoffs of it, q's to_dm handoffs of it;
// Program.Handoff): those handoffs go, and q's chains read the DM tensors
// p left, which must sit at q's addresses with q's mappings. It is the
// form in which a pair of kernels that hand a tensor over in DM is written
// as one device function (emit), the Virtual ISA giving no means to pass a
// DM tensor from one launched kernel to the next.
//
// p's tensors keep their names; q's take prefix when p has a tensor of
// the name, except q's HBM arguments that p also has (a graph tensor both
// read), which must be the same tensor. The handed-over result leaves
// both. Both references must be expressions (RefExpr) or einsums of two
// inputs (einsumExpr); the merged one is q's with p's expression
// in place of the result, over p's inputs, then q's others.
func Handover(p, q *Program, prefix string) (*Program, error) {
	px, err := asExpr(p)
	if err != nil {
		return nil, fmt.Errorf("handover %s to %s: %s: %w", p.Name, q.Name, p.Name, err)
	}
	qx, err := asExpr(q)
	if err != nil {
		return nil, fmt.Errorf("handover %s to %s: %s: %w", p.Name, q.Name, q.Name, err)
	}
	p, q = px, qx
	if p.Reference == nil || q.Reference == nil || p.Reference.Op != RefExpr || q.Reference.Op != RefExpr {
		return nil, fmt.Errorf("handover %s to %s: both kernels must state an expression reference", p.Name, q.Name)
	}
	x := p.Reference.Output
	if !slices.Contains(q.Reference.Inputs, x) {
		return nil, fmt.Errorf("handover %s to %s: %s is not an input of %s", p.Name, q.Name, x, q.Name)
	}
	handed := func(prog *Program, op *Op, kind OpKind) bool {
		name := op.Src
		if kind == OpToHBM {
			name = op.Dst
		}
		t, ok := prog.Tensor(name)
		return op.Kind == kind && ok && t.Base() == x
	}
	var left []*Tensor
	for _, op := range p.Handoff {
		if handed(p, op, OpToHBM) {
			t, _ := p.Tensor(op.Src)
			left = append(left, t)
		}
	}
	taken := map[string]string{} // q's DM tensor → p's
	for _, op := range q.Handoff {
		if !handed(q, op, OpToDM) {
			continue
		}
		t, _ := q.Tensor(op.Dst)
		k := slices.IndexFunc(left, func(l *Tensor) bool { return SameDM(l, t) })
		if k < 0 {
			return nil, fmt.Errorf("handover %s to %s: DM tensor %s of %s is not where %s left %s", p.Name, q.Name, t.Name, q.Name, p.Name, x)
		}
		taken[t.Name] = left[k].Name
	}
	if len(taken) == 0 || len(left) == 0 {
		return nil, fmt.Errorf("handover %s to %s: %s is not handed over in DM", p.Name, q.Name, x)
	}
	rename := func(s string) string {
		if n, ok := taken[s]; ok {
			return n
		}
		t, _ := q.Tensor(s)
		pt, clash := p.Tensor(s)
		switch {
		case !clash:
			return s
		case t.Mem == HBM && t.View == "" && s != x:
			if pt.Mem != HBM || pt.View != "" || pt.DType != t.DType || pt.Addr != t.Addr || !pt.Element.Equal(t.Element) || !pt.Chip.Equal(t.Chip) {
				err = fmt.Errorf("handover %s to %s: both read %s, in two places or layouts", p.Name, q.Name, s)
			}
			return s
		}
		return prefix + s
	}
	r, rerr := q.Rename(rename)
	if rerr != nil {
		return nil, fmt.Errorf("handover %s to %s: %w", p.Name, q.Name, rerr)
	}
	if err != nil {
		return nil, err
	}
	axes, err := unionAxes(p.Axes, q.Axes)
	if err != nil {
		return nil, fmt.Errorf("handover %s to %s: %w", p.Name, q.Name, err)
	}
	m := &Program{Name: p.Name + "+" + q.Name, Axes: axes, Chips: p.Chips}
	drop := func(t *Tensor) bool { return t.Base() == x && t.Mem == HBM }
	for _, t := range p.Tensors {
		if !drop(t) {
			m.Tensors = append(m.Tensors, t)
		}
	}
	for k, t := range r.Tensors {
		src := q.Tensors[k]
		if _, ok := taken[src.Name]; ok || drop(src) {
			continue
		}
		if _, ok := p.Tensor(t.Name); ok {
			continue // an argument both read
		}
		m.Tensors = append(m.Tensors, t)
	}
	m.Ops = slices.Concat(p.Ops, r.Ops)
	for _, op := range p.Handoff {
		if !handed(p, op, OpToHBM) {
			m.Handoff = append(m.Handoff, op)
		}
	}
	for k, op := range r.Handoff {
		if !handed(q, q.Handoff[k], OpToDM) {
			m.Handoff = append(m.Handoff, op)
		}
	}
	// The reference: q's expression over p's in place of x.
	pe, err := ParseRefExpr(p.Reference.Expr)
	if err != nil {
		return nil, fmt.Errorf("handover %s to %s: %s's reference: %w", p.Name, q.Name, p.Name, err)
	}
	qe, err := ParseRefExpr(q.Reference.Expr)
	if err != nil {
		return nil, fmt.Errorf("handover %s to %s: %s's reference: %w", p.Name, q.Name, q.Name, err)
	}
	if xt, _ := p.Tensor(x); xt.DType != dtype.F32 && xt.DType != dtype.I32 {
		// The kernel stores its result rounded to its type, which the
		// next reads: the reference rounds there too (an f32 or i32
		// result is the expression's own type).
		if xt.DType != dtype.BF16 {
			return nil, fmt.Errorf("handover %s to %s: a %s result: the reference language rounds to bf16 only", p.Name, q.Name, xt.DType)
		}
		pe = &RefNode{Op: "bf16", Args: []*RefNode{pe}}
	}
	var subst func(n *RefNode) *RefNode
	subst = func(n *RefNode) *RefNode {
		if n.Op == "input" && n.Name == x {
			return pe
		}
		c := *n
		c.Args = nil
		for _, a := range n.Args {
			c.Args = append(c.Args, subst(a)) // a reduction's axis is its Name
		}
		return &c
	}
	ref := &Reference{Op: RefExpr, Output: r.Reference.Output, Expr: subst(qe).String(), Range: p.Reference.Range}
	if ref.Range == nil {
		ref.Range = q.Reference.Range
	}
	ref.Inputs = slices.Clone(p.Reference.Inputs)
	for k, in := range r.Reference.Inputs {
		if q.Reference.Inputs[k] != x && !slices.Contains(ref.Inputs, in) {
			ref.Inputs = append(ref.Inputs, in)
		}
	}
	m.Reference = ref
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("handover %s to %s: %w", p.Name, q.Name, err)
	}
	return m, nil
}

// SameDM reports whether two DM tensors hold the same bytes in the same
// places: type, address and every mapping (a tensor one kernel leaves in
// DM and the one the next kernel takes, Program.Handoff).
func SameDM(a, b *Tensor) bool {
	return a.Mem == DM && b.Mem == DM && a.DType == b.DType && a.Addr == b.Addr && a.Chip.Equal(b.Chip) &&
		a.Cluster.Equal(b.Cluster) && a.Slice.Equal(b.Slice) && a.Element.Equal(b.Element)
}

// unionAxes declares a's axes and skews, then b's others: an axis both
// declare has one size.
func unionAxes(a, b mapping.Axes) (mapping.Axes, error) {
	list := a.List()
	for _, x := range b.List() {
		k := slices.IndexFunc(list, func(y mapping.Axis) bool { return y.Name == x.Name })
		switch {
		case k < 0:
			list = append(list, x)
		case list[k].Size != x.Size:
			return mapping.Axes{}, fmt.Errorf("axis %s of sizes %d and %d", x.Name, list[k].Size, x.Size)
		}
	}
	out, err := mapping.NewAxes(list...)
	var seen []string
	for _, sk := range slices.Concat(a.Skews(), b.Skews()) {
		if key := fmt.Sprint(sk); err == nil && !slices.Contains(seen, key) {
			seen = append(seen, key)
			out, err = out.WithSkew(sk)
		}
	}
	return out, err
}

// asExpr is p, or a copy whose einsum reference is an expression
// (einsumExpr).
func asExpr(p *Program) (*Program, error) {
	if p.Reference == nil || p.Reference.Op != RefEinsum {
		return p, nil
	}
	e, err := einsumExpr(p)
	if err != nil {
		return nil, err
	}
	c := *p
	r := *p.Reference
	r.Op, r.Expr, r.Epilogue = RefExpr, e, ""
	c.Reference = &r
	return &c, nil
}

// einsumExpr is the expression of q's einsum reference (RefEinsum) of two
// inputs: their product summed over each axis the output lacks
// (reduce_sum), in the order the inputs' mappings name them, under its
// epilogue when it has one (`acc` its value). A padded einsum
// (Reference.Valid) has none.
func einsumExpr(q *Program) (string, error) {
	r := q.Reference
	if len(r.Inputs) != 2 || len(r.Valid) > 0 {
		return "", fmt.Errorf("an einsum of %d inputs, %d axes padded, has no expression", len(r.Inputs), len(r.Valid))
	}
	out, ok := q.Tensor(r.Output)
	if !ok {
		return "", fmt.Errorf("no tensor %s", r.Output)
	}
	kept := out.Element.Symbols()
	var summed []string
	for _, in := range r.Inputs {
		t, ok := q.Tensor(in)
		if !ok {
			return "", fmt.Errorf("no tensor %s", in)
		}
		for _, a := range t.Element.Symbols() {
			if !slices.Contains(kept, a) && !slices.Contains(summed, a) {
				summed = append(summed, a)
			}
		}
	}
	e := fmt.Sprintf("%s * %s", r.Inputs[0], r.Inputs[1])
	for _, a := range summed {
		e = fmt.Sprintf("reduce_sum(%s, %s)", e, a)
	}
	if r.Epilogue == "" {
		return e, nil
	}
	acc, err := ParseRefExpr(e)
	if err != nil {
		return "", err
	}
	ep, err := ParseRefExpr(r.Epilogue)
	if err != nil {
		return "", fmt.Errorf("the epilogue: %w", err)
	}
	var subst func(n *RefNode) *RefNode
	subst = func(n *RefNode) *RefNode {
		if n.Op == "input" && n.Name == "acc" {
			return acc
		}
		c := *n
		c.Args = nil
		for _, a := range n.Args {
			c.Args = append(c.Args, subst(a))
		}
		return &c
	}
	return subst(ep).String(), nil
}
