package workload

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"tcpmap/model/dtype"
	"tcpmap/model/pos"
)

// Field sets of the single-einsum form.
var (
	einsumRequired = []string{"name", "einsum", "axes", "dtype", "chips"}
	einsumOptional = []string{"layouts"}
)

// Tensor names of the single-einsum form: input i is "in<i>", the output is
// "out". Keys of `layouts` are these names.
const (
	EinsumIn0 = "in0"
	EinsumIn1 = "in1"
	EinsumOut = "out"
)

// parseEinsumForm reads a single-einsum workload into w.
func (d *decoder) parseEinsumForm(w *Workload, root *yaml.Node) {
	fs, ok := d.fields(root, "", einsumRequired, einsumOptional)
	if !ok {
		return
	}
	if p, ok := fs["name"]; ok {
		w.Name, _ = d.str(p.val, "name")
	}
	w.Chips = d.chips(fs)
	axes := &axisTable{nodes: map[string]*yaml.Node{}, used: map[string]bool{}}
	if p, ok := fs["axes"]; ok {
		axes = d.parseAxes(p.val)
		w.Axes = d.mappingAxes(axes, p.val)
	}
	var dts *EinsumDTypes
	if p, ok := fs["dtype"]; ok {
		dts = d.einsumDTypes(p.val)
		w.DTypes = dts
	}
	var e *Einsum
	if p, ok := fs["einsum"]; ok {
		e = d.einsum(p.val, axes)
	}
	if e == nil {
		return
	}
	d.checkAxesUsed(axes)
	names := []string{EinsumIn0, EinsumIn1}
	for i, in := range e.Inputs {
		t := &Tensor{Name: names[i], Axes: in, Role: RoleInput, Line: fs["einsum"].val.Line}
		if dts != nil {
			t.DType = dts.In
		}
		w.Tensors = append(w.Tensors, t)
	}
	out := &Tensor{Name: EinsumOut, Axes: e.Output, Role: RoleOutput, Line: fs["einsum"].val.Line}
	if dts != nil {
		out.DType = dts.Out
	}
	w.Tensors = append(w.Tensors, out)
	for _, t := range w.Tensors {
		d.tensorElems(t, fs["einsum"].val, "einsum", axes)
	}
	w.Ops = []*Op{{Name: w.Name, Kind: KindEinsum, Inputs: names, Outputs: []string{EinsumOut}, Einsum: e, Line: fs["einsum"].key.Line}}
	if len(d.errs) == 0 {
		d.opIterSpace(w, w.Ops[0], fs["einsum"].val, "einsum")
	}
	if p, ok := fs["layouts"]; ok {
		d.layouts(w, p.val)
	}
}

// einsumDTypes reads `dtype: {in, acc, out}` and checks that acc is the
// accumulator the contraction widens in to (002 L3782).
func (d *decoder) einsumDTypes(n *yaml.Node) *EinsumDTypes {
	fs, ok := d.fields(n, "dtype", []string{"in", "acc", "out"}, nil)
	if !ok {
		return nil
	}
	dts := &EinsumDTypes{}
	var okIn, okAcc bool
	if p, ok := fs["in"]; ok {
		dts.In, okIn = d.parseDType(p.val, "dtype.in")
	}
	if p, ok := fs["acc"]; ok {
		dts.Acc, okAcc = d.parseDType(p.val, "dtype.acc")
	}
	if p, ok := fs["out"]; ok {
		dts.Out, _ = d.parseDType(p.val, "dtype.out")
	}
	if okIn && okAcc {
		want, err := accType(dts.In)
		switch {
		case err != nil:
			d.errAt(fs["in"].val, "dtype.in", "%v", err)
		case want != dts.Acc:
			d.errAt(fs["acc"].val, "dtype.acc", "a %s contraction accumulates in %s, not %s (002 L3782)", dts.In, want, dts.Acc)
		}
	}
	return dts
}

// einsum reads the einsum field: the compact string or the list form
// {inputs: [[...], [...]], output: [...]}; every axis must be declared.
func (d *decoder) einsum(n *yaml.Node, axes *axisTable) *Einsum {
	if !d.noAlias(n, "einsum") {
		return nil
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		e, err := ParseEinsum(n.Value)
		if err != nil {
			ee := err.(*EinsumError)
			d.errs = append(d.errs, pos.InNode(d.file, n, ee.Col, "einsum", ee.Msg))
			return nil
		}
		// Column of each axis letter, for unknown-axis errors.
		ok := true
		for _, a := range e.Axes() {
			if _, found := axes.size(a); !found {
				col := 0
				for i := 0; i < len(n.Value); i++ {
					if n.Value[i:i+1] == a {
						col = i
						break
					}
				}
				d.errs = append(d.errs, pos.InNode(d.file, n, col+1, "einsum", d.unknownAxisMsg(a, axes, n.Value)))
				ok = false
			}
			axes.used[a] = true
		}
		if !ok {
			return nil
		}
		return e
	}
	if n.Kind != yaml.MappingNode {
		d.errAt(n, "einsum", "must be a string such as IK,KJ->IJ or a mapping {inputs: [[I, K], [K, J]], output: [I, J]}, got %s", kindName(n))
		return nil
	}
	fs, ok := d.fields(n, "einsum", []string{"inputs", "output"}, nil)
	if !ok || len(fs) < 2 {
		return nil
	}
	items, ok := d.list(fs["inputs"].val, "einsum.inputs")
	if !ok {
		return nil
	}
	var inputs [][]string
	var nodes [][]*yaml.Node
	good := true
	for i, it := range items {
		names, ns, ok := d.names(it, index("einsum.inputs", i), "axis")
		good = good && ok
		inputs = append(inputs, names)
		nodes = append(nodes, ns)
	}
	output, outNodes, ok := d.names(fs["output"].val, "einsum.output", "axis")
	if !ok || !good {
		return nil
	}
	e, err := NewEinsum(inputs, output)
	if err != nil {
		ee := err.(*EinsumError)
		switch {
		case ee.Operand == WholeEinsum:
			d.errAt(fs["inputs"].val, "einsum.inputs", "%s", ee.Msg)
		case ee.Operand == OutputOperand:
			d.errAt(outNodes[ee.Index], index("einsum.output", ee.Index), "%s", ee.Msg)
		default:
			d.errAt(nodes[ee.Operand][ee.Index], index(index("einsum.inputs", ee.Operand), ee.Index), "%s", ee.Msg)
		}
		return nil
	}
	ok = true
	for i, in := range append(inputs, output) {
		for j, a := range in {
			if _, found := axes.size(a); !found {
				field, at := index("einsum.output", j), outNodes
				if i < len(inputs) {
					field, at = index(index("einsum.inputs", i), j), nodes[i]
				}
				d.errAt(at[j], field, "%s", d.unknownAxisMsg(a, axes, ""))
				ok = false
			}
			axes.used[a] = true
		}
	}
	if !ok {
		return nil
	}
	return e
}

// unknownAxisMsg explains an undeclared axis; in a compact einsum it points
// out a multi-letter axis written as letters.
func (d *decoder) unknownAxisMsg(a string, axes *axisTable, compact string) string {
	for _, x := range axes.list {
		if len(x.Name) > 1 && compact != "" && strings.Contains(compact, x.Name) {
			return fmt.Sprintf("unknown axis %s: multi-letter axes such as %s need the list form {inputs: [[...], [...]], output: [...]}", a, x.Name)
		}
	}
	return fmt.Sprintf("unknown axis %s (declared: %s)", a, axisNames(axes.list))
}

func axisNames(list []AxisSize) string {
	s := make([]string, len(list))
	for i, a := range list {
		s[i] = a.Name
	}
	return axesString(s)
}

// layouts reads `layouts: {in0: "m![K, I]", ...}`: the HBM layout of a
// tensor of the single einsum, keyed by the tensor names in0, in1, out.
func (d *decoder) layouts(w *Workload, n *yaml.Node) {
	pairs, ok := d.mapping(n, "layouts")
	if !ok {
		return
	}
	for _, p := range pairs {
		field := join("layouts", p.key.Value)
		t := w.Tensor(p.key.Value)
		if t == nil {
			d.errAt(p.key, field, "unknown tensor %s (layouts are keyed by in0, in1, out)", p.key.Value)
			continue
		}
		src, ok := d.str(p.val, field)
		if !ok {
			continue
		}
		t.Layout = src
		d.checkLayout(t, p.val, field, w.Axes)
	}
}

// accType is the accumulator type of a contraction over inputs of type in.
func accType(in dtype.DType) (dtype.DType, error) {
	return dtype.AccType(in)
}
