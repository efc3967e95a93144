package workload

import (
	"errors"
	"slices"

	"gopkg.in/yaml.v3"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
	"tcpmap/model/pos"
)

// Set helpers over axis lists (shapes are sets, 002 L101).

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func setEq(a, b []string) bool { return len(a) == len(b) && subset(a, b) && subset(b, a) }

func minus(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func union(lists ...[]string) []string {
	out := []string{}
	for _, l := range lists {
		for _, x := range l {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

func shape(t *Tensor) string { return t.Name + " " + axesString(t.Axes) }

// elementwise checks an elementwise op's axes: each input's are the
// output's (broadcast along the others), and every output axis is some
// input's.
func elementwise(ins, outs []*Tensor, errIn, errOut func(int, string, ...any)) {
	var all [][]string
	for i, in := range ins {
		if !subset(in.Axes, outs[0].Axes) {
			errIn(i, "input %s has axes %s that the output %s lacks (elementwise ops broadcast, they do not reduce)", shape(in), axesString(minus(in.Axes, outs[0].Axes)), shape(outs[0]))
		}
		all = append(all, in.Axes)
	}
	if extra := minus(outs[0].Axes, union(all...)); len(extra) > 0 {
		errOut(0, "output axes %s are in no input", axesString(extra))
	}
}

// checkOp checks the operands of one op against its kind. Every operand
// tensor exists and every parameter axis is declared when it runs.
func (g *graph) checkOp(op *Op, n *opNodes) {
	d, w := g.d, g.w
	ins := make([]*Tensor, len(op.Inputs))
	for i, name := range op.Inputs {
		ins[i] = w.Tensor(name)
	}
	outs := make([]*Tensor, len(op.Outputs))
	for i, name := range op.Outputs {
		outs[i] = w.Tensor(name)
	}
	size := func(a string) int64 { s, _ := g.axes.size(a); return s }
	errOut := func(i int, format string, args ...any) {
		at, field := n.out(i)
		d.errAt(at, field, format, args...)
	}
	errIn := func(i int, format string, args ...any) {
		at, field := n.in(i)
		d.errAt(at, field, format, args...)
	}
	errParam := func(p string, format string, args ...any) {
		at, field := n.param(p)
		d.errAt(at, field, format, args...)
	}
	// wantOut checks that output i has exactly the axes want.
	wantOut := func(i int, want []string, why string) {
		if !setEq(outs[i].Axes, want) {
			errOut(i, "output %s must have axes %s (%s)", shape(outs[i]), axesString(want), why)
		}
	}
	notPresent := func(p, a string, t *Tensor) {
		errParam(p, "reduction axis %s not present in input %s", a, shape(t))
	}
	sameDType := func(i int, t *Tensor) {
		if outs[0].DType != t.DType {
			errOut(0, "%s keeps the dtype of %s (%s), got %s", op.Kind, t.Name, t.DType, outs[0].DType)
		}
	}
	intIndex := func(i int) {
		if !ins[i].DType.IsInt() {
			errIn(i, "index tensor %s must have an integer dtype, got %s", ins[i].Name, ins[i].DType)
		}
	}
	switch op.Kind {
	case KindEinsum:
		e := &Einsum{Inputs: [][]string{ins[0].Axes, ins[1].Axes}, Output: outs[0].Axes}
		if ee := check(e); ee != nil {
			errOut(0, "%s", ee.Msg)
			return
		}
		op.Einsum = e
		if ins[0].DType != ins[1].DType {
			errIn(1, "einsum inputs share one element type (002 L3891-L3894), got %s and %s", ins[0].DType, ins[1].DType)
		} else if _, err := accType(ins[0].DType); err != nil {
			errIn(0, "%v", err)
		}
	case KindPack:
		if ins[0].DType != dtype.BF16 {
			errIn(0, "pack takes the bf16 bits of %s, got %s (002 L8547)", ins[0].Name, ins[0].DType)
		}
		if ins[1].DType != dtype.I32 {
			errIn(1, "pack's low half %s must be i32, got %s", ins[1].Name, ins[1].DType)
		}
		if outs[0].DType != dtype.I32 {
			errOut(0, "pack writes i32, got %s", outs[0].DType)
		}
		elementwise(ins, outs, errIn, errOut)
	case KindUnpack:
		wantOut(0, ins[0].Axes, "the input's axes")
		if ins[0].DType != dtype.I32 || outs[0].DType != dtype.BF16 {
			errOut(0, "unpack reads i32 and writes bf16 (002 L8589), got %s to %s", ins[0].DType, outs[0].DType)
		}
	case KindSortKey:
		wantOut(0, ins[0].Axes, "the input's axes")
		if ins[0].DType != dtype.I32 || outs[0].DType != dtype.I32 {
			errOut(0, "sort_key reads and writes i32, got %s to %s", ins[0].DType, outs[0].DType)
		}
	case KindBitAnd:
		for i, in := range ins {
			if in.DType != dtype.I32 {
				errIn(i, "bit_and takes i32, got %s %s", in.Name, in.DType)
			}
		}
		if outs[0].DType != dtype.I32 {
			errOut(0, "bit_and writes i32, got %s", outs[0].DType)
		}
		elementwise(ins, outs, errIn, errOut)
	case KindAdd, KindSub, KindMul, KindDiv, KindCeilDiv, KindMax, KindGT, KindGE, KindLT, KindWhere:
		elementwise(ins, outs, errIn, errOut)
	case KindExp, KindSigmoid, KindSiLU:
		wantOut(0, ins[0].Axes, "the input's axes")
	case KindCast:
		wantOut(0, ins[0].Axes, "the input's axes")
		if outs[0].DType == ins[0].DType {
			errOut(0, "cast from %s to the same dtype", ins[0].DType)
		}
	case KindCopy:
		wantOut(0, ins[0].Axes, "the input's axes; only the layout may differ")
		sameDType(0, ins[0])
	case KindReshape:
		if outs[0].Elems != ins[0].Elems {
			errOut(0, "size mismatch: reshape of %s (%d elements) to %s (%d elements)", shape(ins[0]), ins[0].Elems, shape(outs[0]), outs[0].Elems)
		}
		sameDType(0, ins[0])
	case KindSoftmax, KindRMSNorm:
		if !slices.Contains(ins[0].Axes, op.Axis) {
			notPresent("axis", op.Axis, ins[0])
		}
		wantOut(0, ins[0].Axes, "the input's axes")
	case KindCausalMask:
		for _, p := range []struct{ name, axis string }{{"query", op.Query}, {"key", op.Key}} {
			if !slices.Contains(ins[0].Axes, p.axis) {
				errParam(p.name, "axis %s not present in input %s", p.axis, shape(ins[0]))
			}
		}
		switch {
		case op.Query == op.Key:
			errParam("key", "query and key are the same axis %s", op.Key)
		case size(op.Query) != size(op.Key):
			errParam("key", "size mismatch: query %s is %d, key %s is %d", op.Query, size(op.Query), op.Key, size(op.Key))
		}
		wantOut(0, ins[0].Axes, "the input's axes")
		if len(ins) == 2 {
			// The mask: x + mask is x where key <= query, −inf elsewhere.
			m := ins[1]
			switch {
			case m.Values == nil || m.Values.Kind != ValuesCausal || m.Values.Query != op.Query || m.Values.Key != op.Key:
				errIn(1, "the mask %s must have values {kind: causal, query: %s, key: %s}", m.Name, op.Query, op.Key)
			case len(minus(m.Axes, ins[0].Axes)) > 0:
				errIn(1, "the mask %s has axes the input %s lacks", shape(m), shape(ins[0]))
			case m.DType != ins[0].DType:
				errIn(1, "the mask is %s, the input %s", m.DType, ins[0].DType)
			}
		}
	case KindReduce, KindCumsum:
		for i, a := range op.Axes {
			if !slices.Contains(ins[0].Axes, a) {
				at, field := n.param("axes")
				if items := at.Content; i < len(items) {
					at, field = items[i], index(field, i)
				}
				d.errAt(at, field, "reduction axis %s not present in input %s", a, shape(ins[0]))
			}
		}
		if op.Kind == KindReduce {
			wantOut(0, minus(ins[0].Axes, op.Axes), "the input's axes without the reduced ones")
		} else {
			wantOut(0, ins[0].Axes, "the input's axes")
		}
	case KindTopK:
		if !slices.Contains(ins[0].Axes, op.Axis) {
			notPresent("axis", op.Axis, ins[0])
			return
		}
		if slices.Contains(ins[0].Axes, op.K) {
			errParam("k", "k axis %s is already an axis of input %s", op.K, shape(ins[0]))
			return
		}
		if size(op.K) > size(op.Axis) {
			errParam("k", "size mismatch: keeps %s = %d of only %s = %d", op.K, size(op.K), op.Axis, size(op.Axis))
		}
		want := append(minus(ins[0].Axes, []string{op.Axis}), op.K)
		wantOut(0, want, "the input's axes with "+op.Axis+" replaced by "+op.K)
		wantOut(1, want, "the input's axes with "+op.Axis+" replaced by "+op.K)
		sameDType(0, ins[0])
		if !outs[1].DType.IsInt() {
			errOut(1, "indices %s must have an integer dtype, got %s", outs[1].Name, outs[1].DType)
		}
	case KindOneHot:
		intIndex(0)
		if slices.Contains(ins[0].Axes, op.Axis) {
			errParam("axis", "depth axis %s is already an axis of input %s", op.Axis, shape(ins[0]))
			return
		}
		wantOut(0, append(append([]string{}, ins[0].Axes...), op.Axis), "the input's axes plus "+op.Axis)
		if len(ins) == 2 {
			// The positions along the new axis the indices are compared
			// with (the manual's Expert_Indices, 002 L8623).
			p := ins[1]
			if p.Values == nil || p.Values.Kind != ValuesIota || p.Values.Axis != op.Axis {
				errIn(1, "the positions %s must have values {kind: iota, axis: %s}", p.Name, op.Axis)
			} else if p.DType != ins[0].DType {
				errIn(1, "the positions are %s, the indices %s", p.DType, ins[0].DType)
			}
		}
	case KindCompact:
		if !setEq(ins[1].Axes, ins[0].Axes) {
			errIn(1, "keep mask %s must have the axes of %s", shape(ins[1]), shape(ins[0]))
			return
		}
		for _, a := range op.Axes {
			if !slices.Contains(ins[0].Axes, a) {
				errParam("axes", "axis %s not present in input %s", a, shape(ins[0]))
				return
			}
		}
		rest := minus(ins[0].Axes, op.Axes)
		if !subset(rest, outs[0].Axes) {
			errOut(0, "output %s must keep the uncompacted axes %s", shape(outs[0]), axesString(rest))
			return
		}
		packed := minus(outs[0].Axes, rest)
		var from, to []int64
		for _, a := range op.Axes {
			from = append(from, size(a))
		}
		for _, a := range packed {
			to = append(to, size(a))
		}
		nf, _ := elems(from)
		nt, _ := elems(to)
		if nt > nf {
			errOut(0, "size mismatch: compacts %d elements per row into %d slots", nf, nt)
		}
		sameDType(0, ins[0])
	case KindGather:
		intIndex(1)
		if !subset(op.Axes, ins[0].Axes) {
			errParam("axes", "gathered axes %s not all in table %s", axesString(op.Axes), shape(ins[0]))
			return
		}
		wantOut(0, union(ins[1].Axes, minus(ins[0].Axes, op.Axes)), "the index's axes plus the table's ungathered axes")
		sameDType(0, ins[0])
	case KindScatter:
		intIndex(1)
		if common := minus(op.Axes, minus(op.Axes, ins[0].Axes)); len(common) > 0 {
			errParam("axes", "addressed axes %s are already axes of data %s", axesString(common), shape(ins[0]))
			return
		}
		wantOut(0, union(minus(ins[0].Axes, ins[1].Axes), op.Axes), "the data's axes not in the index, plus the addressed axes")
		sameDType(0, ins[0])
	case KindUpdateSlice:
		if !slices.Contains(ins[0].Axes, op.Axis) {
			errParam("axis", "axis %s not present in %s", op.Axis, shape(ins[0]))
			return
		}
		if want := minus(ins[0].Axes, []string{op.Axis}); !setEq(ins[1].Axes, want) {
			errIn(1, "slice %s must have axes %s (%s without %s)", shape(ins[1]), axesString(want), ins[0].Name, op.Axis)
		}
		if ins[1].DType != ins[0].DType {
			errIn(1, "slice %s is %s, %s is %s", ins[1].Name, ins[1].DType, ins[0].Name, ins[0].DType)
		}
		wantOut(0, ins[0].Axes, "the axes of "+ins[0].Name)
		sameDType(0, ins[0])
	default:
		errParam("kind", "no check for kind %s", op.Kind)
	}
}

// opIterSpace sets op.Iter, the product of the sizes of every axis of the
// op's operands, reporting one too large to count.
func (d *decoder) opIterSpace(w *Workload, op *Op, at *yaml.Node, field string) {
	var axes [][]string
	for _, name := range append(append([]string{}, op.Inputs...), op.Outputs...) {
		if t := w.Tensor(name); t != nil {
			axes = append(axes, t.Axes)
		}
	}
	var sizes []int64
	for _, a := range union(axes...) {
		s, _ := w.AxisSize(a)
		sizes = append(sizes, s)
	}
	n, ok := elems(sizes)
	if !ok {
		d.errAt(at, field, "op %s iterates over more than %d points", op.Name, int64(MaxElems))
		return
	}
	op.Iter = n
}

// checkTotals reports a workload whose FLOP or byte total would not fit an
// int64 (each op and tensor is bounded by MaxElems, their sums are not).
func (d *decoder) checkTotals(w *Workload) {
	const limit = int64(1) << 62
	var flops, bytes int64
	for _, op := range w.Ops {
		flops += op.FLOPs()
		if flops > limit {
			d.errAt(nil, "ops", "the workload's FLOP count exceeds %d", limit)
			return
		}
	}
	for _, t := range w.Tensors {
		bytes += bytesOf(t)
		if bytes > limit {
			d.errAt(nil, "tensors", "the workload's tensors exceed %d bytes", limit)
			return
		}
	}
}

// checkLayout checks a tensor's HBM layout: a mapping expression
// (002 L574: m![H, W] is H-major) over exactly the tensor's axes whose size is the tensor's
// element count, so that it places every element once and adds no padding.
func (d *decoder) checkLayout(t *Tensor, n *yaml.Node, field string, axes mapping.Axes) {
	e, err := mapping.Parse(t.Layout, axes, nil)
	if err != nil {
		var se *mapping.SyntaxError
		if errors.As(err, &se) {
			d.errs = append(d.errs, pos.InNode(d.file, n, se.Col, field, se.Msg))
		} else {
			d.errAt(n, field, "%v", err)
		}
		return
	}
	syms := e.Symbols()
	if extra := minus(syms, t.Axes); len(extra) > 0 {
		d.errAt(n, field, "layout %s uses axes %s that tensor %s lacks", e.Text(), axesString(extra), shape(t))
		return
	}
	if missing := minus(t.Axes, syms); len(missing) > 0 {
		d.errAt(n, field, "layout %s leaves out axes %s of tensor %s", e.Text(), axesString(missing), shape(t))
		return
	}
	if int64(e.Size()) != t.Elems {
		d.errAt(n, field, "size mismatch: layout %s has %d positions, tensor %s has %d elements", e.Text(), e.Size(), shape(t), t.Elems)
		return
	}
	t.LayoutExpr = e
}
