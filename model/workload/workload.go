package workload

import (
	"fmt"
	"math"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
	"tcpmap/model/pos"
)

// Form tells which of the two workload formats a file uses.
type Form string

// The two formats.
const (
	FormEinsum Form = "einsum" // a single einsum: fields name, einsum, axes, dtype, chips, layouts
	FormGraph  Form = "graph"  // named tensors and ordered ops: fields name, axes, chips, tensors, ops
)

// Size limits that keep every product (elements, FLOPs, bytes) inside int64.
const (
	MaxAxisSize = 1 << 40 // largest axis size accepted
	MaxElems    = 1 << 52 // largest tensor (or op iteration space) accepted, in elements
)

// AxisSize is a named axis and its size, as reported in a Summary.
type AxisSize struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// Role says where a tensor of a graph lives at the boundary: inputs are read
// from HBM, outputs written to HBM, intermediates may stay on chip.
type Role string

// The tensor roles.
const (
	RoleInput        Role = "input"        // produced by no op
	RoleOutput       Role = "output"       // produced by an op, consumed by none
	RoleIntermediate Role = "intermediate" // produced by an op and consumed by a later one
)

// Tensor is a named tensor: its axes (an unordered set, 002 L101, written in
// the order that is its default row-major layout), element type and
// optional HBM layout.
type Tensor struct {
	Name   string      `json:"name"`
	Axes   []string    `json:"axes"`
	DType  dtype.DType `json:"dtype"`
	Layout string      `json:"layout,omitempty"` // mapping expression source, "" = row-major in Axes order
	// LayoutExpr is Layout parsed; nil for the default row-major layout.
	LayoutExpr *mapping.Expr `json:"-"`
	Role       Role          `json:"role"`
	Elems      int64         `json:"elems"` // product of the axis sizes (1 for a scalar)
	// Values, when set, are the tensor's values, known before the graph
	// runs: a constant input the host builds, as the manual's
	// attention_mask[Sq, Sk] is (002 L8094-8099). Nil for data.
	Values *Values `json:"values,omitempty"`
	Line   int     `json:"line"`
}

// Values are a constant tensor's values, by rule.
type Values struct {
	// Kind is the rule: ValuesCausal, ValuesPrefix or ValuesIota.
	Kind string `json:"kind"`
	// Query and Key are the axes of a causal mask or a prefix.
	Query string `json:"query,omitempty"`
	Key   string `json:"key,omitempty"`
	// Axis is the axis of an iota.
	Axis string `json:"axis,omitempty"`
}

// ValuesCausal is an additive causal mask: 0 where the Key index is at
// most the Query index, −inf elsewhere, so that adding it keeps x where
// key <= query and makes it −inf elsewhere (causal_mask, 002 L8094).
const ValuesCausal = "causal"

// ValuesPrefix is a prefix indicator: 1 where the Key index is at most the
// Query index, 0 elsewhere, an integer tensor over the two axes. Summed
// against x along Key it gives x's inclusive prefix sums along it, which
// is how the planner computes a cumsum (Expand).
const ValuesPrefix = "prefix"

// ValuesIota is the positions along one axis, 0, 1, 2, …: the manual's
// Expert_Indices = [0, 1, …, E−1] and Block_Range = [0, 1, …, G−1] (002
// L8623), which one_hot compares its indices with.
const ValuesIota = "iota"

// At returns the value at Query index q and Key index k of a causal mask
// (0 or −inf) or a prefix (1 or 0).
func (v *Values) At(q, k int) float64 {
	if v.Kind == ValuesPrefix {
		if k <= q {
			return 1
		}
		return 0
	}
	if k <= q {
		return 0
	}
	return math.Inf(-1)
}

// Text is the values as the YAML states them.
func (v *Values) Text() string {
	if v.Kind == ValuesIota {
		return fmt.Sprintf("{kind: %s, axis: %s}", v.Kind, v.Axis)
	}
	return fmt.Sprintf("{kind: %s, query: %s, key: %s}", v.Kind, v.Query, v.Key)
}

// EinsumDTypes are the element types of a single-einsum workload: the
// inputs, the accumulator and the output.
type EinsumDTypes struct {
	In  dtype.DType `json:"in"`
	Acc dtype.DType `json:"acc"`
	Out dtype.DType `json:"out"`
}

// Workload is a validated workload file. Every name it holds refers to
// something that exists; every op's operands have the shapes its kind needs.
type Workload struct {
	File  string       `json:"file"`
	Name  string       `json:"name"`
	Form  Form         `json:"form"`
	Chips int          `json:"chips"`
	Axes  mapping.Axes `json:"-"` // declaration order; Summary lists them

	Tensors []*Tensor     `json:"tensors"`
	Ops     []*Op         `json:"ops"`
	DTypes  *EinsumDTypes `json:"dtypes,omitempty"` // single-einsum form only
}

// Tensor returns the tensor called name, or nil.
func (w *Workload) Tensor(name string) *Tensor {
	for _, t := range w.Tensors {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// AxisSize returns the size of the axis called name.
func (w *Workload) AxisSize(name string) (int64, bool) {
	n, ok := w.Axes.Size(name)
	return int64(n), ok
}

// Load reads and validates the workload file at path.
func Load(path string) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, ErrorList{{File: path, Field: "file", Msg: err.Error()}}
	}
	return Parse(data, path)
}

// Parse validates the workload in data; filename is used in error messages.
// On failure the error is an ErrorList holding every problem found.
func Parse(data []byte, filename string) (*Workload, error) {
	d := &decoder{file: filename}
	root := d.document(data)
	if root == nil {
		return nil, d.errs
	}
	w := &Workload{File: filename}
	top, ok := d.mapping(root, "")
	if !ok {
		return nil, d.errs
	}
	keys := map[string]kv{}
	for _, p := range top {
		keys[p.key.Value] = p
	}
	_, isEinsum := keys["einsum"]
	_, isGraph := keys["ops"]
	switch {
	case isEinsum && isGraph:
		d.errAt(keys["ops"].key, "ops", "a workload has either einsum (single einsum) or ops (graph), not both")
		return nil, d.errs
	case isEinsum:
		w.Form = FormEinsum
		d.parseEinsumForm(w, root)
	case isGraph:
		w.Form = FormGraph
		d.parseGraphForm(w, root)
	default:
		d.errAt(root, "einsum", "missing: a workload has einsum (single einsum) or ops (graph)")
	}
	if len(d.errs) == 0 {
		d.checkTotals(w)
	}
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return w, nil
}

// document decodes data as one YAML document (pos.Document), keeping its
// problems.
func (d *decoder) document(data []byte) *yaml.Node {
	root, errs := pos.Document(d.file, data)
	d.errs = append(d.errs, errs...)
	return root
}

// axisTable is the declared axes with the node of each declaration.
type axisTable struct {
	list  []AxisSize
	nodes map[string]*yaml.Node
	used  map[string]bool
}

func (t *axisTable) size(name string) (int64, bool) {
	for _, a := range t.list {
		if a.Name == name {
			return a.Size, true
		}
	}
	return 0, false
}

// parseAxes reads `axes: {NAME: SIZE, ...}`. A size may also name an axis
// declared with a number (`Sq: S`), for two roles of one length.
func (d *decoder) parseAxes(n *yaml.Node) *axisTable {
	t := &axisTable{nodes: map[string]*yaml.Node{}, used: map[string]bool{}}
	pairs, ok := d.mapping(n, "axes")
	if !ok {
		return t
	}
	if len(pairs) == 0 {
		d.errAt(n, "axes", "no axes declared")
	}
	literal := map[string]int64{}
	for _, p := range pairs {
		name, ok := d.name(p.key, "axes", "axis")
		if !ok {
			continue
		}
		field := join("axes", name)
		var size int64
		if p.val.Kind == yaml.ScalarNode && p.val.ShortTag() == "!!str" {
			ref := p.val.Value
			s, found := literal[ref]
			if !found {
				if _, declared := t.nodes[ref]; declared {
					d.errAt(p.val, field, "axis %s is itself an alias; name an axis declared with a number", ref)
				} else {
					d.errAt(p.val, field, "unknown axis %s (a size is a number or an axis declared above with a number)", ref)
				}
				continue
			}
			size = s
			t.used[ref] = true
		} else {
			s, ok := d.integer(p.val, field, 1, MaxAxisSize)
			if !ok {
				continue
			}
			size = s
			literal[name] = s
		}
		t.list = append(t.list, AxisSize{Name: name, Size: size})
		t.nodes[name] = p.key
	}
	return t
}

// mappingAxes converts the table for the mapping package; the names and
// sizes were checked against the same rules, so an error here is reported
// at the axes field rather than expected.
func (d *decoder) mappingAxes(t *axisTable, n *yaml.Node) mapping.Axes {
	list := make([]mapping.Axis, len(t.list))
	for i, a := range t.list {
		list[i] = mapping.Axis{Name: a.Name, Size: int(a.Size)}
	}
	axes, err := mapping.NewAxes(list...)
	if err != nil {
		d.errAt(n, "axes", "%v", err)
	}
	return axes
}

// checkAxesUsed reports declared axes that nothing refers to (a typo in a
// tensor's axes would otherwise leave a silently unused axis).
func (d *decoder) checkAxesUsed(t *axisTable) {
	for _, a := range t.list {
		if !t.used[a.Name] {
			d.errAt(t.nodes[a.Name], join("axes", a.Name), "axis declared but not used")
		}
	}
}

// elems multiplies the sizes of axes, reporting an overflow of MaxElems.
func elems(sizes []int64) (int64, bool) {
	n := int64(1)
	for _, s := range sizes {
		if s <= 0 || n > MaxElems/s {
			return 0, false
		}
		n *= s
	}
	return n, true
}

// parseDType reads a dtype name and checks that tensors can hold it.
func (d *decoder) parseDType(n *yaml.Node, field string) (dtype.DType, bool) {
	s, ok := d.str(n, field)
	if !ok {
		return 0, false
	}
	dt, err := dtype.Parse(s)
	if err != nil {
		d.errAt(n, field, "%v", err)
		return 0, false
	}
	if !dt.IsStorage() {
		d.errAt(n, field, "%s is not a storage type: tensors are one of i4, i8, f8e4m3, f8e5m2, i16, f16, bf16, i32, f32 (002 L2525)", dt)
		return 0, false
	}
	return dt, true
}

// chips reads the required `chips` field: the number of chips the workload
// runs on. There is no default (002 L129: the chip count is
// "system-dependent").
func (d *decoder) chips(fs map[string]kv) int {
	p, ok := fs["chips"]
	if !ok {
		return 0
	}
	v, _ := d.integer(p.val, "chips", 1, 1<<20)
	return int(v)
}

// tensorElems computes a tensor's element count and checks its byte size.
func (d *decoder) tensorElems(t *Tensor, at *yaml.Node, field string, axes *axisTable) {
	sizes := make([]int64, 0, len(t.Axes))
	for _, a := range t.Axes {
		s, ok := axes.size(a)
		if !ok {
			return
		}
		sizes = append(sizes, s)
	}
	n, ok := elems(sizes)
	if !ok {
		d.errAt(at, field, "tensor %s has more than %d elements", t.Name, int64(MaxElems))
		return
	}
	t.Elems = n
	if _, err := t.DType.BytesFor(int(n)); err != nil && t.DType.Valid() {
		d.errAt(at, field, "tensor %s: %v", t.Name, err)
	}
}

func axesString(axes []string) string { return "[" + strings.Join(axes, ", ") + "]" }
