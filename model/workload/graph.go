package workload

import (
	"fmt"
	"slices"
	"tcpmap/model/dtype"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
	"gopkg.in/yaml.v3"
)

// Field sets of the graph form, of a tensor and of an op.
var (
	graphRequired  = []string{"name", "axes", "chips", "tensors", "ops"}
	tensorRequired = []string{"axes", "dtype"}
	tensorOptional = []string{"layout", "values"}
	opRequired     = []string{"name", "kind", "inputs", "outputs"}
)

// opNodes keeps the YAML nodes of an op's fields for error positions.
type opNodes struct {
	field   string // "ops[3]"
	op      *yaml.Node
	inputs  []*yaml.Node
	outputs []*yaml.Node
	inList  *yaml.Node
	outList *yaml.Node
	params  map[string]*yaml.Node
}

func (n *opNodes) in(i int) (*yaml.Node, string) {
	if i < len(n.inputs) {
		return n.inputs[i], index(n.field+".inputs", i)
	}
	return n.inList, n.field + ".inputs"
}

func (n *opNodes) out(i int) (*yaml.Node, string) {
	if i < len(n.outputs) {
		return n.outputs[i], index(n.field+".outputs", i)
	}
	return n.outList, n.field + ".outputs"
}

func (n *opNodes) param(p string) (*yaml.Node, string) { return n.params[p], n.field + "." + p }

// graph holds the state of a graph validation.
type graph struct {
	d     *decoder
	w     *Workload
	axes  *axisTable
	tnode map[string]*yaml.Node // tensor name → key node
	nodes []*opNodes
}

// parseGraphForm reads a graph workload into w.
func (d *decoder) parseGraphForm(w *Workload, root *yaml.Node) {
	fs, ok := d.fields(root, "", graphRequired, nil)
	if !ok {
		return
	}
	if p, ok := fs["name"]; ok {
		w.Name, _ = d.str(p.val, "name")
	}
	w.Chips = d.chips(fs)
	g := &graph{d: d, w: w, axes: &axisTable{nodes: map[string]*yaml.Node{}, used: map[string]bool{}}, tnode: map[string]*yaml.Node{}}
	if p, ok := fs["axes"]; ok {
		g.axes = d.parseAxes(p.val)
		w.Axes = d.mappingAxes(g.axes, p.val)
	}
	if p, ok := fs["tensors"]; ok {
		g.tensors(p.val)
	}
	if p, ok := fs["ops"]; ok {
		g.ops(p.val)
	}
	if len(d.errs) > 0 {
		return
	}
	g.flow()
	if len(d.errs) > 0 {
		return
	}
	d.checkAxesUsed(g.axes)
	for i, op := range w.Ops {
		g.checkOp(op, g.nodes[i])
	}
	if len(d.errs) > 0 {
		return
	}
	for i, op := range w.Ops {
		d.opIterSpace(w, op, g.nodes[i].op, g.nodes[i].field)
	}
}

// tensors reads `tensors: {NAME: {axes: [...], dtype: T, layout: "m![...]"}}`.
func (g *graph) tensors(n *yaml.Node) {
	d := g.d
	pairs, ok := d.mapping(n, "tensors")
	if !ok {
		return
	}
	if len(pairs) == 0 {
		d.errAt(n, "tensors", "no tensors declared")
	}
	for _, p := range pairs {
		name, ok := d.name(p.key, "tensors", "tensor")
		if !ok {
			continue
		}
		field := join("tensors", name)
		fs, ok := d.fields(p.val, field, tensorRequired, tensorOptional)
		if !ok {
			continue
		}
		t := &Tensor{Name: name, Line: p.key.Line}
		good := true
		if q, ok := fs["axes"]; ok {
			axes, items, ok := d.names(q.val, join(field, "axes"), "axis")
			good = good && ok
			for i, a := range axes {
				if _, found := g.axes.size(a); !found {
					d.errAt(items[i], index(join(field, "axes"), i), "unknown axis %s (declared: %s)", a, axisNames(g.axes.list))
					good = false
				}
				g.axes.used[a] = true
			}
			t.Axes = axes
		} else {
			good = false
		}
		if q, ok := fs["dtype"]; ok {
			dt, ok := d.parseDType(q.val, join(field, "dtype"))
			good = good && ok
			t.DType = dt
		} else {
			good = false
		}
		if good {
			d.tensorElems(t, p.key, field, g.axes)
		}
		if q, ok := fs["layout"]; ok && good {
			if src, ok := d.str(q.val, join(field, "layout")); ok {
				t.Layout = src
				d.checkLayout(t, q.val, join(field, "layout"), g.w.Axes)
			}
		}
		if q, ok := fs["values"]; ok && good {
			d.values(t, q.val, join(field, "values"), g.axes)
		}
		g.w.Tensors = append(g.w.Tensors, t)
		g.tnode[name] = p.key
	}
}

// ops reads the op list.
func (g *graph) ops(n *yaml.Node) {
	d := g.d
	items, ok := d.list(n, "ops")
	if !ok {
		return
	}
	if len(items) == 0 {
		d.errAt(n, "ops", "no ops")
	}
	names := map[string]int{}
	for i, it := range items {
		field := index("ops", i)
		op, nodes := g.op(it, field)
		if op == nil {
			continue
		}
		if prev, dup := names[op.Name]; dup && op.Name != "" {
			d.errAt(nodes.params["name"], field+".name", "op name %s repeated (first at line %d)", op.Name, prev)
		}
		names[op.Name] = op.Line
		g.w.Ops = append(g.w.Ops, op)
		g.nodes = append(g.nodes, nodes)
	}
}

// op reads one op: its fields, arity and parameters.
func (g *graph) op(n *yaml.Node, field string) (*Op, *opNodes) {
	d := g.d
	pairs, ok := d.mapping(n, field)
	if !ok {
		return nil, nil
	}
	nodes := &opNodes{field: field, op: n, params: map[string]*yaml.Node{}}
	op := &Op{Line: n.Line}
	keys := map[string]kv{}
	for _, p := range pairs {
		keys[p.key.Value] = p
	}
	var spec kindSpec
	kindOK := false
	if p, ok := keys["kind"]; ok {
		if s, ok := d.str(p.val, field+".kind"); ok {
			op.Kind = Kind(s)
			spec, kindOK = kinds[op.Kind]
			if !kindOK {
				d.errAt(p.val, field+".kind", "unknown op kind %q (kinds: %s)", s, kindList())
			}
		}
	}
	if !kindOK {
		if _, ok := keys["kind"]; !ok {
			d.errAt(n, field+".kind", "missing required field")
		}
		return nil, nil
	}
	allowed := append(append([]string{}, opRequired...), spec.params...)
	var optional []string
	if spec.scalar {
		optional = []string{"scalar"}
	}
	fs, _ := d.fields(n, field, allowed, optional)
	for k, p := range fs {
		nodes.params[k] = p.val
	}
	if p, ok := fs["name"]; ok {
		op.Name, _ = d.name(p.val, field+".name", "op")
		nodes.params["name"] = p.val
	}
	if p, ok := fs["scalar"]; ok {
		if v, ok := d.number(p.val, field+".scalar"); ok {
			op.Scalar = &v
		}
	}
	wantIn := spec.in
	if op.Scalar != nil {
		wantIn--
	}
	if p, ok := fs["inputs"]; ok {
		nodes.inList = p.val
		op.Inputs, nodes.inputs = g.operands(p.val, field+".inputs")
		if op.Inputs != nil && len(op.Inputs) != wantIn && (spec.maxIn == 0 || len(op.Inputs) < wantIn || len(op.Inputs) > spec.maxIn) {
			extra := ""
			if spec.scalar && op.Scalar == nil {
				extra = fmt.Sprintf(" (or %d and scalar)", spec.in-1)
			} else if op.Scalar != nil {
				extra = " besides scalar"
			}
			want := fmt.Sprintf("%d inputs%s", wantIn, extra)
			if spec.maxIn > 0 {
				want = fmt.Sprintf("%d to %d inputs", wantIn, spec.maxIn)
			}
			d.errAt(p.val, field+".inputs", "wrong arity: %s takes %s, got %d", op.Kind, want, len(op.Inputs))
		}
	}
	if p, ok := fs["outputs"]; ok {
		nodes.outList = p.val
		op.Outputs, nodes.outputs = g.operands(p.val, field+".outputs")
		if op.Outputs != nil && len(op.Outputs) != spec.out {
			d.errAt(p.val, field+".outputs", "wrong arity: %s has %d outputs, got %d", op.Kind, spec.out, len(op.Outputs))
		}
	}
	for _, name := range spec.params {
		p, ok := fs[name]
		if !ok {
			continue
		}
		pf := field + "." + name
		switch name {
		case "axis", "k", "query", "key":
			a, ok := d.name(p.val, pf, "axis")
			if !ok {
				continue
			}
			if _, found := g.axes.size(a); !found {
				d.errAt(p.val, pf, "unknown axis %s (declared: %s)", a, axisNames(g.axes.list))
				continue
			}
			g.axes.used[a] = true
			switch name {
			case "axis":
				op.Axis = a
			case "k":
				op.K = a
			case "query":
				op.Query = a
			case "key":
				op.Key = a
			}
		case "axes":
			axes, items, ok := d.names(p.val, pf, "axis")
			if !ok {
				continue
			}
			if len(axes) == 0 {
				d.errAt(p.val, pf, "no axes")
				continue
			}
			good := true
			for i, a := range axes {
				if _, found := g.axes.size(a); !found {
					d.errAt(items[i], index(pf, i), "unknown axis %s (declared: %s)", a, axisNames(g.axes.list))
					good = false
				}
				g.axes.used[a] = true
			}
			if good {
				op.Axes = axes
			}
		case "op":
			s, ok := d.str(p.val, pf)
			if !ok {
				continue
			}
			if s != ReduceSum && s != ReduceMax {
				d.errAt(p.val, pf, "unknown reduce op %q (sum or max)", s)
				continue
			}
			op.Reduce = s
		}
	}
	return op, nodes
}

// operands reads a list of tensor names.
func (g *graph) operands(n *yaml.Node, field string) ([]string, []*yaml.Node) {
	items, ok := g.d.list(n, field)
	if !ok {
		return nil, nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := g.d.name(it, index(field, i), "tensor")
		if !ok {
			return nil, nil
		}
		out = append(out, s)
	}
	return out, items
}

// flow checks the dataflow of the ops in the order written: every operand
// is a declared tensor; every tensor is produced at most once; no op reads a
// tensor before the op producing it; cycles are reported as such; every
// declared tensor is used. It sets each tensor's role.
func (g *graph) flow() {
	d, w := g.d, g.w
	producer := map[string]int{}
	consumed := map[string]bool{}
	for i, op := range w.Ops {
		for j, t := range op.Outputs {
			at, field := g.nodes[i].out(j)
			if w.Tensor(t) == nil {
				d.errAt(at, field, "unknown tensor %s (not in tensors)", t)
				continue
			}
			if tt := w.Tensor(t); tt.Values != nil {
				d.errAt(at, field, "tensor %s has values %s: an input, not produced by an op", t, tt.Values.Text())
				continue
			}
			if p, dup := producer[t]; dup {
				d.errAt(at, field, "tensor %s is produced twice (also by op %s, line %d)", t, w.Ops[p].Name, w.Ops[p].Line)
				continue
			}
			producer[t] = i
		}
	}
	// Edges producer → consumer, for cycle detection.
	succ := make([][]int, len(w.Ops))
	type use struct{ op, in, prod int }
	var back []use
	for i, op := range w.Ops {
		for j, t := range op.Inputs {
			consumed[t] = true
			if w.Tensor(t) == nil {
				at, field := g.nodes[i].in(j)
				d.errAt(at, field, "unknown tensor %s (not in tensors)", t)
				continue
			}
			p, ok := producer[t]
			if !ok {
				continue
			}
			succ[p] = append(succ[p], i)
			if p >= i {
				back = append(back, use{i, j, p})
			}
		}
	}
	comp := sccs(succ)
	reported := map[int]bool{}
	for _, u := range back {
		at, field := g.nodes[u.op].in(u.in)
		t := w.Ops[u.op].Inputs[u.in]
		c := comp[u.op]
		if comp[u.prod] == c && (u.prod == u.op || cycleSize(comp, c) > 1) {
			if reported[c] {
				continue
			}
			reported[c] = true
			var names []string
			for k := range w.Ops {
				if comp[k] == c {
					names = append(names, w.Ops[k].Name)
				}
			}
			d.errAt(at, field, "cycle: ops %s depend on each other through tensor %s", axesString(names), t)
			continue
		}
		d.errAt(at, field, "tensor %s used before it is produced (by op %s, line %d; ops run in the order written)", t, w.Ops[u.prod].Name, w.Ops[u.prod].Line)
	}
	for _, t := range w.Tensors {
		_, produced := producer[t.Name]
		switch {
		case !produced && !consumed[t.Name]:
			d.errAt(g.tnode[t.Name], join("tensors", t.Name), "tensor declared but not used by any op")
		case !produced:
			t.Role = RoleInput
		case consumed[t.Name]:
			t.Role = RoleIntermediate
		default:
			t.Role = RoleOutput
		}
	}
}

func cycleSize(comp []int, c int) int {
	n := 0
	for _, x := range comp {
		if x == c {
			n++
		}
	}
	return n
}

// sccs returns the strongly connected component of every node, numbered
// arbitrarily (gonum's Tarjan).
func sccs(succ [][]int) []int {
	g := simple.NewDirectedGraph()
	for v := range succ {
		g.AddNode(simple.Node(v))
	}
	for v, us := range succ {
		for _, u := range us {
			if u != v { // a simple graph has no self-loops; they join no component
				g.SetEdge(simple.Edge{F: simple.Node(v), T: simple.Node(u)})
			}
		}
	}
	comp := make([]int, len(succ))
	for c, nodes := range topo.TarjanSCC(g) {
		for _, n := range nodes {
			comp[n.ID()] = c
		}
	}
	return comp
}

// values reads a tensor's values rule: {kind: causal, query: A, key: B},
// an additive causal mask over two axes of the tensor of equal sizes, or
// {kind: iota, axis: A}, an integer tensor over A alone holding its
// positions.
func (d *decoder) values(t *Tensor, n *yaml.Node, field string, axes *axisTable) {
	fs, ok := d.fields(n, field, []string{"kind"}, []string{"query", "key", "axis"})
	if !ok {
		return
	}
	k, ok := fs["kind"]
	if !ok {
		return // fields reported it missing
	}
	kind, ok := d.str(k.val, join(field, "kind"))
	if !ok {
		return
	}
	// The fields each kind takes.
	var want, not []string
	switch kind {
	case ValuesCausal, ValuesPrefix:
		want, not = []string{"query", "key"}, []string{"axis"}
	case ValuesIota:
		want, not = []string{"axis"}, []string{"query", "key"}
	default:
		d.errAt(k.val, join(field, "kind"), "unknown values kind %q (causal, prefix, iota)", kind)
		return
	}
	bad := false
	for _, f := range want {
		if _, ok := fs[f]; !ok {
			d.errAt(n, join(field, f), "missing required field (values of kind %s)", kind)
			bad = true
		}
	}
	for _, f := range not {
		if p, ok := fs[f]; ok {
			d.errAt(p.key, join(field, f), "values of kind %s take no %s", kind, f)
			bad = true
		}
	}
	if bad {
		return
	}
	if kind == ValuesIota {
		d.iota(t, field, fs)
		return
	}
	v := &Values{Kind: kind}
	for _, p := range []struct {
		name string
		to   *string
	}{{"query", &v.Query}, {"key", &v.Key}} {
		q := fs[p.name]
		a, ok := d.name(q.val, join(field, p.name), "axis")
		if !ok {
			return
		}
		if !slices.Contains(t.Axes, a) {
			d.errAt(q.val, join(field, p.name), "axis %s not present in tensor %s", a, shape(t))
			return
		}
		*p.to = a
	}
	qs, _ := axes.size(v.Query)
	ks, _ := axes.size(v.Key)
	switch {
	case v.Query == v.Key:
		d.errAt(fs["key"].val, join(field, "key"), "query and key are the same axis %s", v.Key)
	case qs != ks:
		d.errAt(fs["key"].val, join(field, "key"), "size mismatch: query %s is %d, key %s is %d", v.Query, qs, v.Key, ks)
	case kind == ValuesCausal && t.DType != dtype.F32 && t.DType != dtype.BF16:
		d.errAt(fs["kind"].val, join(field, "kind"), "a causal mask holds −inf: f32 or bf16, not %s", t.DType)
	case kind == ValuesPrefix && (len(t.Axes) != 2 || !t.DType.IsInt()):
		d.errAt(fs["kind"].val, join(field, "kind"), "a prefix is an integer tensor over its query and key axes alone, not %s %s", t.DType, shape(t))
	default:
		t.Values = v
	}
}

// iota reads {kind: iota, axis: A}: the tensor's one axis A, an integer
// dtype.
func (d *decoder) iota(t *Tensor, field string, fs map[string]kv) {
	a, ok := d.name(fs["axis"].val, join(field, "axis"), "axis")
	if !ok {
		return
	}
	switch {
	case len(t.Axes) != 1 || t.Axes[0] != a:
		d.errAt(fs["axis"].val, join(field, "axis"), "an iota over %s is a tensor over %s alone, not %s", a, a, shape(t))
	case !t.DType.IsInt():
		d.errAt(fs["kind"].val, join(field, "kind"), "an iota holds positions: an integer dtype, not %s", t.DType)
	default:
		t.Values = &Values{Kind: ValuesIota, Axis: a}
	}
}
