package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"tcpmap/constraints"
	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/pos"
	"tcpmap/model/workload"
	"tcpmap/results/digest"
	"tcpmap/results/record"
	"tcpmap/search"
)

// sweepDecoder reads a sweep file strictly, collecting positioned errors.
type sweepDecoder struct {
	file string
	errs workload.ErrorList
}

func (d *sweepDecoder) errAt(n *yaml.Node, field, format string, args ...any) {
	d.errs = append(d.errs, pos.Errorf(d.file, n, field, format, args...))
}

// maxSweepPoints bounds a sweep's expansion (a variable: the fuzzer
// lowers it to keep each input fast).
var maxSweepPoints = 100000

// Load reads and expands the sweep file at path against the base
// hardware spec.
func Load(path string, base *engines.Spec) (*Sweep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, workload.ErrorList{{File: path, Field: "file", Msg: err.Error()}}
	}
	return Parse(data, path, base)
}

// Parse reads and expands the sweep in data (file names it in errors
// and resolves workload files relative to it) against the base hardware
// spec. On failure the error is a workload.ErrorList.
func Parse(data []byte, file string, base *engines.Spec) (*Sweep, error) {
	d := &sweepDecoder{file: file}
	root := d.document(data)
	if root == nil {
		return nil, d.errs
	}
	sw := d.parse(root, base)
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return sw, nil
}

// document decodes data as one YAML document (pos.Document), keeping its
// problems.
func (d *sweepDecoder) document(data []byte) *yaml.Node {
	root, errs := pos.Document(d.file, data)
	d.errs = append(d.errs, errs...)
	return root
}

// pair is one key/value of a mapping.
type pair struct{ key, val *yaml.Node }

// mapping returns a mapping's pairs, reporting a non-mapping, an alias, a
// non-string or repeated key.
func (d *sweepDecoder) mapping(n *yaml.Node, field string) ([]pair, bool) {
	if n.Kind == yaml.AliasNode || hasAlias(n) {
		d.errAt(n, field, "YAML aliases are not supported")
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		d.errAt(n, field, "want a mapping, got %s", kindText(n))
		return nil, false
	}
	var out []pair
	seen := map[string]bool{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			d.errAt(k, field, "want a name as key, got %s", kindText(k))
			ok = false
			continue
		}
		if seen[k.Value] {
			d.errAt(k, joinField(field, k.Value), "repeated key")
			ok = false
			continue
		}
		seen[k.Value] = true
		out = append(out, pair{k, v})
	}
	return out, ok
}

// hasAlias reports whether the tree under n holds an alias.
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

func kindText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "a document"
}

func joinField(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// baseWorkload is one workload of the sweep before any point's changes:
// its YAML tree (a file's or the inline one), the op and the file name
// used in messages.
type baseWorkload struct {
	root  *yaml.Node
	file  string
	op    string
	at    *yaml.Node
	axes  map[string]bool
	graph bool
}

// value is one value a parameter takes: its node (for a hw field) and its
// text.
type value struct {
	node *yaml.Node
	text string
	at   *yaml.Node
}

// param is a parameter of the grid with its values.
type param struct {
	name   string
	at     *yaml.Node
	values []value
}

// assignment is a point's values by parameter name, in a fixed order.
type assignment struct {
	names []string
	vals  map[string]value
	at    *yaml.Node
}

func (d *sweepDecoder) parse(root *yaml.Node, base *engines.Spec) *Sweep {
	top, ok := d.mapping(root, "")
	if !ok {
		return nil
	}
	fields := map[string]pair{}
	for _, p := range top {
		switch p.key.Value {
		case "name", "workload", "workloads", "grid", "points", "exclude", "options":
			fields[p.key.Value] = p
		default:
			d.errAt(p.key, p.key.Value, "unknown field (want name, workload or workloads, grid, points, exclude, options)")
		}
	}
	sw := &Sweep{File: d.file}
	if p, ok := fields["name"]; !ok {
		d.errAt(root, "name", "missing: a sweep names itself (the result store's sweep column)")
	} else if p.val.Kind != yaml.ScalarNode || p.val.ShortTag() != "!!str" || p.val.Value == "" {
		d.errAt(p.val, "name", "want a name, got %s", kindText(p.val))
	} else {
		sw.Name = p.val.Value
	}

	var bases []*baseWorkload
	wp, one := fields["workload"]
	wsp, many := fields["workloads"]
	switch {
	case one && many:
		d.errAt(wsp.key, "workloads", "a sweep has workload or workloads, not both")
	case one:
		if b := d.workload(wp.val, "workload", sw.Name); b != nil {
			bases = append(bases, b)
		}
	case many:
		if wsp.val.Kind != yaml.SequenceNode || len(wsp.val.Content) == 0 {
			d.errAt(wsp.val, "workloads", "want a non-empty list of workloads, got %s", kindText(wsp.val))
		} else {
			for i, n := range wsp.val.Content {
				if b := d.workload(n, fmt.Sprintf("workloads[%d]", i), sw.Name); b != nil {
					bases = append(bases, b)
				}
			}
		}
	default:
		d.errAt(root, "workload", "missing: a sweep names a workload (file: or an inline einsum:) or workloads")
	}

	opts := PointOptions{Planner: "sat", Target: "manual", Pad: true}
	if p, ok := fields["options"]; ok {
		if ps, ok := d.mapping(p.val, "options"); ok {
			for _, q := range ps {
				if !isOption(q.key.Value) {
					d.errAt(q.key, "options."+q.key.Value, "unknown option (want %s)", strings.Join(optionNames, ", "))
					continue
				}
				d.setOption(&opts, q.key.Value, value{node: q.val, text: q.val.Value, at: q.val}, "options."+q.key.Value)
			}
		}
	}

	var grid []param
	if p, ok := fields["grid"]; ok {
		if ps, ok := d.mapping(p.val, "grid"); ok {
			if len(ps) == 0 {
				d.errAt(p.val, "grid", "empty: name the parameters to vary")
			}
			for _, q := range ps {
				field := "grid." + q.key.Value
				if !d.paramName(q.key, field, bases) {
					continue
				}
				vals := d.values(q.key.Value, q.val, field)
				if len(vals) > 0 {
					grid = append(grid, param{name: q.key.Value, at: q.key, values: vals})
				}
			}
		}
	}
	var explicit []assignment
	if p, ok := fields["points"]; ok {
		explicit = d.assignments(p.val, "points", bases)
		if explicit != nil && len(explicit) == 0 {
			d.errAt(p.val, "points", "empty: list the points, or leave points out")
		}
	}
	var exclude []assignment
	if p, ok := fields["exclude"]; ok {
		exclude = d.assignments(p.val, "exclude", bases)
	}
	if len(d.errs) > 0 {
		return nil
	}
	if len(grid) == 0 && len(explicit) == 0 {
		d.errAt(root, "grid", "missing: a sweep varies something (grid or points)")
		return nil
	}
	total := max(len(explicit), 1) * len(bases)
	for _, g := range grid {
		total *= len(g.values)
		if total > maxSweepPoints {
			d.errAt(g.at, "grid."+g.name, "the sweep expands to more than %d points", maxSweepPoints)
			return nil
		}
	}
	d.expand(sw, bases, grid, explicit, exclude, opts, base)
	return sw
}

// optionNames are the planner options a sweep sets or varies.
var optionNames = []string{"timeout", "max_evaluations", "max_tiles", "target", "planner", "pad", "digit_orders"}

func isOption(name string) bool {
	for _, o := range optionNames {
		if o == name {
			return true
		}
	}
	return false
}

// setOption reads one option's value into o.
func (d *sweepDecoder) setOption(o *PointOptions, name string, v value, field string) bool {
	n := v.node
	if n.Kind != yaml.ScalarNode {
		d.errAt(n, field, "want a single value, got %s", kindText(n))
		return false
	}
	switch name {
	case "timeout":
		t, err := time.ParseDuration(n.Value)
		if err != nil || t < 0 {
			d.errAt(n, field, "want a duration such as 30s or 2m, got %q", n.Value)
			return false
		}
		o.Timeout = t
	case "max_evaluations", "max_tiles":
		x, err := strconv.Atoi(n.Value)
		if err != nil || x < 0 || n.ShortTag() != "!!int" {
			d.errAt(n, field, "want a whole number ≥ 0, got %s", kindText(n))
			return false
		}
		if name == "max_tiles" {
			o.MaxTiles = x
		} else {
			o.MaxEvaluations = x
		}
	case "target":
		if !contains(Targets, n.Value) {
			d.errAt(n, field, "want one of %s, got %q", strings.Join(Targets, ", "), n.Value)
			return false
		}
		o.Target = n.Value
	case "planner":
		if n.Value != "sat" && n.Value != "exhaustive" {
			d.errAt(n, field, "want sat or exhaustive, got %q", n.Value)
			return false
		}
		o.Planner = n.Value
	case "pad":
		b, err := strconv.ParseBool(n.Value)
		if err != nil || n.ShortTag() != "!!bool" {
			d.errAt(n, field, "want true or false, got %s", kindText(n))
			return false
		}
		o.Pad = b
	case "digit_orders":
		if n.Value != "all" && n.Value != "named" {
			d.errAt(n, field, "want all or named, got %q", n.Value)
			return false
		}
		o.DigitOrders = ""
		if n.Value == "all" {
			o.DigitOrders = "all"
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// workload reads one workload entry: {file, op} or an inline einsum.
func (d *sweepDecoder) workload(n *yaml.Node, field, sweepName string) *baseWorkload {
	ps, ok := d.mapping(n, field)
	if !ok {
		return nil
	}
	keys := map[string]pair{}
	for _, p := range ps {
		keys[p.key.Value] = p
	}
	b := &baseWorkload{at: n, axes: map[string]bool{}}
	if f, ok := keys["file"]; ok {
		for _, p := range ps {
			if p.key.Value != "file" && p.key.Value != "op" {
				d.errAt(p.key, joinField(field, p.key.Value), "unknown field of a workload file entry (want file, op)")
				return nil
			}
		}
		if f.val.Kind != yaml.ScalarNode || f.val.Value == "" {
			d.errAt(f.val, field+".file", "want a file name, got %s", kindText(f.val))
			return nil
		}
		path := f.val.Value
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(d.file), path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			d.errAt(f.val, field+".file", "%v", err)
			return nil
		}
		// The file as it stands must be a valid workload: its own errors
		// are reported with its own positions.
		if _, err := workload.Parse(data, path); err != nil {
			var l workload.ErrorList
			if errors.As(err, &l) {
				d.errs = append(d.errs, l...)
			} else {
				d.errAt(f.val, field+".file", "%v", err)
			}
			return nil
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 {
			d.errAt(f.val, field+".file", "%s: not a YAML document", path)
			return nil
		}
		b.root, b.file = doc.Content[0], path
		if o, ok := keys["op"]; ok {
			if o.val.Kind != yaml.ScalarNode || o.val.Value == "" {
				d.errAt(o.val, field+".op", "want an op name, got %s", kindText(o.val))
				return nil
			}
			b.op = o.val.Value
		}
	} else {
		// An inline einsum workload; name defaults to the sweep's and
		// chips to 1; a dtype name stands for {in, acc, out}.
		if _, ok := keys["einsum"]; !ok {
			d.errAt(n, field, "want file: (a workload file) or einsum: (an inline einsum workload)")
			return nil
		}
		if _, ok := keys["op"]; ok {
			d.errAt(keys["op"].key, field+".op", "op names an op of a graph file; an inline einsum has none")
			return nil
		}
		root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
		root.Content = append(root.Content, n.Content...)
		if _, ok := keys["name"]; !ok {
			name := sweepName
			if name == "" {
				name = "sweep"
			}
			root.Content = append([]*yaml.Node{scalar("name"), scalar(name)}, root.Content...)
		}
		if _, ok := keys["chips"]; !ok {
			root.Content = append(root.Content, scalar("chips"), scalar("1"))
		}
		if p, ok := keys["dtype"]; ok && p.val.Kind == yaml.ScalarNode {
			dt, ok := d.dtypeNode(p.val, field+".dtype")
			if !ok {
				return nil
			}
			setKey(root, "dtype", dt)
		}
		data, err := yaml.Marshal(root)
		if err != nil {
			d.errAt(n, field, "%v", err)
			return nil
		}
		if _, err := workload.Parse(data, d.file); err != nil {
			d.workloadErrors(err, n, field)
			return nil
		}
		b.root, b.file = root, d.file
	}
	b.graph = child(b.root, "ops") != nil
	if ax := child(b.root, "axes"); ax != nil && ax.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ax.Content); i += 2 {
			b.axes[ax.Content[i].Value] = true
		}
	}
	return b
}

// workloadErrors reports a workload's errors at the sweep entry that made
// it (an inline workload's own lines are lost in re-encoding it).
func (d *sweepDecoder) workloadErrors(err error, at *yaml.Node, field string) {
	var l workload.ErrorList
	if !errors.As(err, &l) {
		d.errAt(at, field, "%v", err)
		return
	}
	for _, e := range l {
		f := field
		if e.Field != "" {
			f += "." + e.Field
		}
		d.errAt(at, f, "%s", e.Msg)
	}
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

// child returns the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// setKey sets key of mapping n to v, adding it when absent.
func setKey(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, scalar(key), v)
}

// dtypeNode turns a dtype name into the workload's {in, acc, out}.
func (d *sweepDecoder) dtypeNode(n *yaml.Node, field string) (*yaml.Node, bool) {
	dt, err := dtype.Parse(n.Value)
	if err != nil {
		d.errAt(n, field, "%v", err)
		return nil, false
	}
	acc, err := dtype.AccType(dt)
	if err != nil {
		d.errAt(n, field, "%s: %v", n.Value, err)
		return nil, false
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	m.Content = []*yaml.Node{scalar("in"), scalar(dt.String()), scalar("acc"), scalar(acc.String()), scalar("out"), scalar(dt.String())}
	return m, true
}

// paramName checks a parameter's name: an axis of every workload, dtype,
// hw.<path> or a planner option.
func (d *sweepDecoder) paramName(k *yaml.Node, field string, bases []*baseWorkload) bool {
	name := k.Value
	switch {
	case name == "dtype":
		for _, b := range bases {
			if b.graph {
				d.errAt(k, field, "dtype varies an einsum workload's element types; %s is a graph (its tensors have their own)", b.file)
				return false
			}
		}
		return true
	case strings.HasPrefix(name, "hw."):
		if len(name) == len("hw.") {
			d.errAt(k, field, "name a field of the hardware spec after hw. (hw.dm.bytes_per_slice)")
			return false
		}
		return true
	case isOption(name):
		return true
	case name != "" && name[0] >= 'A' && name[0] <= 'Z':
		for _, b := range bases {
			if !b.axes[name] {
				d.errAt(k, field, "%s is not an axis of the workload (%s)", name, axisList(b.axes))
				return false
			}
		}
		return true
	}
	d.errAt(k, field, "unknown parameter: want an axis name (capitalized), dtype, hw.<field of engines/rngd.yaml> or one of %s", strings.Join(optionNames, ", "))
	return false
}

func axisList(m map[string]bool) string {
	var l []string
	for a := range m {
		l = append(l, a)
	}
	sort.Strings(l)
	if len(l) == 0 {
		return "it declares no axes"
	}
	return "its axes: " + strings.Join(l, ", ")
}

// values reads a grid parameter's values: a list, one value, or for a
// number pow2: [lo, hi] (every power of two between) or range: [lo, hi,
// step].
func (d *sweepDecoder) values(name string, n *yaml.Node, field string) []value {
	if hasAlias(n) {
		d.errAt(n, field, "YAML aliases are not supported")
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			d.errAt(n, field, "empty list: give at least one value")
			return nil
		}
		var out []value
		for i, c := range n.Content {
			if v, ok := d.one(name, c, fmt.Sprintf("%s[%d]", field, i)); ok {
				out = append(out, v)
			}
		}
		return out
	case yaml.MappingNode:
		if len(n.Content) != 2 || (n.Content[0].Value != "pow2" && n.Content[0].Value != "range") {
			d.errAt(n, field, "want a list of values, pow2: [lo, hi] or range: [lo, hi, step]")
			return nil
		}
		return d.series(n.Content[0].Value, n.Content[1], field+"."+n.Content[0].Value)
	}
	if v, ok := d.one(name, n, field); ok {
		return []value{v}
	}
	return nil
}

// series expands pow2: [lo, hi] and range: [lo, hi, step].
func (d *sweepDecoder) series(kind string, n *yaml.Node, field string) []value {
	want := 2
	if kind == "range" {
		want = 3
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) != want {
		if kind == "range" {
			d.errAt(n, field, "want [lo, hi, step]")
		} else {
			d.errAt(n, field, "want [lo, hi]")
		}
		return nil
	}
	var xs []int64
	for i, c := range n.Content {
		x, err := strconv.ParseInt(c.Value, 10, 64)
		if err != nil || c.Kind != yaml.ScalarNode || x < 1 || x > workload.MaxAxisSize {
			d.errAt(c, fmt.Sprintf("%s[%d]", field, i), "want a whole number from 1 to 2^40, got %s", kindText(c))
			return nil
		}
		xs = append(xs, x)
	}
	lo, hi := xs[0], xs[1]
	if lo > hi {
		d.errAt(n, field, "lo %d is above hi %d", lo, hi)
		return nil
	}
	var out []value
	switch kind {
	case "pow2":
		if lo&(lo-1) != 0 || hi&(hi-1) != 0 {
			d.errAt(n, field, "lo and hi must be powers of two, got %d and %d", lo, hi)
			return nil
		}
		for x := lo; x <= hi; x *= 2 {
			out = append(out, value{node: scalar(strconv.FormatInt(x, 10)), text: strconv.FormatInt(x, 10), at: n})
		}
	case "range":
		step := xs[2]
		if (hi-lo)/step >= int64(maxSweepPoints) {
			d.errAt(n, field, "more than %d values", maxSweepPoints)
			return nil
		}
		for x := lo; x <= hi; x += step {
			out = append(out, value{node: scalar(strconv.FormatInt(x, 10)), text: strconv.FormatInt(x, 10), at: n})
		}
	}
	for _, v := range out {
		v.node.Tag = "!!int"
	}
	return out
}

// one reads one value of a parameter.
func (d *sweepDecoder) one(name string, n *yaml.Node, field string) (value, bool) {
	switch {
	case name == "dtype":
		if n.Kind != yaml.ScalarNode {
			d.errAt(n, field, "want an element type name (bf16, i8, …), got %s", kindText(n))
			return value{}, false
		}
		if _, ok := d.dtypeNode(n, field); !ok {
			return value{}, false
		}
		return value{node: n, text: n.Value, at: n}, true
	case strings.HasPrefix(name, "hw."):
		if n.Kind == yaml.ScalarNode {
			return value{node: n, text: n.Value, at: n}, true
		}
		var b strings.Builder
		enc := yaml.NewEncoder(&b)
		flow := *n
		flow.Style = yaml.FlowStyle
		if err := enc.Encode(&flow); err != nil {
			d.errAt(n, field, "%v", err)
			return value{}, false
		}
		return value{node: n, text: strings.TrimSpace(b.String()), at: n}, true
	case isOption(name):
		var o PointOptions
		if !d.setOption(&o, name, value{node: n}, field) {
			return value{}, false
		}
		return value{node: n, text: n.Value, at: n}, true
	}
	// An axis size.
	x, err := strconv.ParseInt(n.Value, 10, 64)
	if n.Kind != yaml.ScalarNode || err != nil || x < 1 || x > workload.MaxAxisSize {
		d.errAt(n, field, "want an axis size, a whole number from 1 to 2^40, got %s", kindText(n))
		return value{}, false
	}
	return value{node: n, text: strconv.FormatInt(x, 10), at: n}, true
}

// assignments reads points: or exclude:, a list of mappings from
// parameter names to single values.
func (d *sweepDecoder) assignments(n *yaml.Node, field string, bases []*baseWorkload) []assignment {
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, field, "want a list of points ({NAME: VALUE, …}), got %s", kindText(n))
		return nil
	}
	out := []assignment{}
	for i, c := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		ps, ok := d.mapping(c, f)
		if !ok {
			continue
		}
		if len(ps) == 0 {
			d.errAt(c, f, "empty point: give at least one parameter")
			continue
		}
		a := assignment{vals: map[string]value{}, at: c}
		for _, p := range ps {
			pf := f + "." + p.key.Value
			if !d.paramName(p.key, pf, bases) {
				continue
			}
			v, ok := d.one(p.key.Value, p.val, pf)
			if !ok {
				continue
			}
			a.names = append(a.names, p.key.Value)
			a.vals[p.key.Value] = v
		}
		out = append(out, a)
	}
	return out
}

// expand builds the points: each workload × each explicit point × the
// grid.
func (d *sweepDecoder) expand(sw *Sweep, bases []*baseWorkload, grid []param, explicit, exclude []assignment, opts PointOptions, base *engines.Spec) {
	if len(explicit) == 0 {
		explicit = []assignment{{vals: map[string]value{}}}
	}
	hw := &hwCache{base: base, specs: map[string]*hwEntry{}}
	seen := map[string]bool{}
	for _, b := range bases {
		for _, e := range explicit {
			idx := make([]int, len(grid))
			for {
				a := assignment{vals: map[string]value{}, at: e.at}
				for _, n := range e.names {
					a.names = append(a.names, n)
					a.vals[n] = e.vals[n]
				}
				for gi, g := range grid {
					if _, ok := a.vals[g.name]; ok {
						d.errAt(g.at, "grid."+g.name, "%s is set by points[…] too: vary a parameter in the grid or in the points, not both", g.name)
						return
					}
					a.names = append(a.names, g.name)
					a.vals[g.name] = g.values[idx[gi]]
					if a.at == nil {
						a.at = g.at
					}
				}
				if excluded(a, exclude) {
					sw.Excluded++
				} else if p := d.point(b, len(bases) > 1, a, opts, hw); p != nil {
					if id := p.Key.ID(); seen[id] {
						sw.Duplicates++
					} else {
						seen[id] = true
						p.Index = len(sw.Points)
						sw.Points = append(sw.Points, p)
					}
				} else {
					return // the point's error is reported; its siblings would repeat it
				}
				// The next grid combination, the last parameter fastest.
				k := len(grid) - 1
				for ; k >= 0; k-- {
					idx[k]++
					if idx[k] < len(grid[k].values) {
						break
					}
					idx[k] = 0
				}
				if k < 0 {
					break
				}
			}
		}
	}
}

// excluded reports whether a matches every entry of one exclude point.
func excluded(a assignment, exclude []assignment) bool {
	for _, x := range exclude {
		all := true
		for _, n := range x.names {
			v, ok := a.vals[n]
			if !ok || !sameValue(v.text, x.vals[n].text) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	x, e1 := strconv.ParseFloat(a, 64)
	y, e2 := strconv.ParseFloat(b, 64)
	return e1 == nil && e2 == nil && x == y
}

// hwCache builds each distinct hardware spec once.
type hwCache struct {
	base     *engines.Spec
	baseNode *yaml.Node
	specs    map[string]*hwEntry
}

type hwEntry struct {
	spec *engines.Spec
	json []byte
	err  string
}

// spec returns the base spec with the overrides applied (names sorted).
func (h *hwCache) spec(names []string, vals map[string]value) (*hwEntry, string, *yaml.Node) {
	var key strings.Builder
	for _, n := range names {
		fmt.Fprintf(&key, "%s=%s\n", n, vals[n].text)
	}
	if e, ok := h.specs[key.String()]; ok {
		return e, "", nil
	}
	if h.baseNode == nil {
		b, err := json.Marshal(h.base)
		if err != nil {
			return nil, err.Error(), nil
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, err.Error(), nil
		}
		h.baseNode = doc.Content[0]
	}
	root := deepCopy(h.baseNode)
	for _, n := range names {
		v := vals[n]
		path := strings.Split(strings.TrimPrefix(n, "hw."), ".")
		node := root
		for i, p := range path {
			next := child(node, p)
			if next == nil {
				return nil, fmt.Sprintf("%s: the hardware spec has no field %q under %s (its fields: %s)",
					n, p, orTop(strings.Join(path[:i], ".")), strings.Join(keysOf(node), ", ")), v.at
			}
			node = next
		}
		// A cited number {value, cite, …} takes the value; a plain one is
		// replaced.
		if vn := child(node, "value"); vn != nil && node.Kind == yaml.MappingNode {
			setKey(node, "value", deepCopy(v.node))
		} else if node.Kind == yaml.MappingNode {
			return nil, fmt.Sprintf("%s: a group of fields (%s), not one value: name one of them", n, strings.Join(keysOf(node), ", ")), v.at
		} else {
			*node = *deepCopy(v.node)
		}
	}
	data, err := yaml.Marshal(root)
	if err != nil {
		return nil, err.Error(), nil
	}
	e := &hwEntry{}
	s, err := engines.Parse(data, "hw")
	if err != nil {
		var l engines.ErrorList
		if errors.As(err, &l) {
			var msgs []string
			for _, x := range l {
				msgs = append(msgs, strings.TrimSuffix(x.Field, ".value")+": "+x.Msg)
			}
			e.err = "the hardware spec with these overrides is invalid: " + strings.Join(msgs, "; ")
		} else {
			e.err = "the hardware spec with these overrides is invalid: " + err.Error()
		}
	} else {
		e.spec = s
		e.json, _ = json.Marshal(s)
	}
	h.specs[key.String()] = e
	return e, "", nil
}

func orTop(s string) string {
	if s == "" {
		return "the top"
	}
	return s
}

func keysOf(n *yaml.Node) []string {
	var out []string
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}

func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = deepCopy(x)
	}
	return &c
}

// point builds one point: the workload with its axes and dtype, the spec
// with its overrides, the options, the key.
func (d *sweepDecoder) point(b *baseWorkload, several bool, a assignment, opts PointOptions, hw *hwCache) *Point {
	at := a.at
	p := &Point{Params: map[string]string{}, Op: b.op}
	if at != nil {
		p.Line, p.Col = at.Line, at.Column
	}
	var hwNames []string
	root := deepCopy(b.root)
	for _, n := range a.names {
		v := a.vals[n]
		p.Params[n] = v.text
		switch {
		case n == "dtype":
			dt, ok := d.dtypeNode(v.node, n)
			if !ok {
				return nil
			}
			setKey(root, "dtype", dt)
		case strings.HasPrefix(n, "hw."):
			hwNames = append(hwNames, n)
		case isOption(n):
			if !d.setOption(&opts, n, v, n) {
				return nil
			}
		default:
			ax := child(root, "axes")
			sz := child(ax, n)
			*sz = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: v.text}
		}
	}
	p.Options = opts
	data, err := yaml.Marshal(root)
	if err != nil {
		d.errAt(at, "points", "%v", err)
		return nil
	}
	w, err := workload.Parse(data, b.file)
	if err != nil {
		d.workloadErrors(err, at, pointField(a))
		return nil
	}
	p.Workload = w
	if several {
		name := w.Name
		if b.op != "" {
			name += "/" + b.op
		}
		p.Params["workload"] = name
	}
	prob, err := constraints.NewProblem(w, b.op)
	if err != nil {
		d.errAt(b.at, "workload", "%v", err)
		return nil
	}
	p.Problem = prob
	sort.Strings(hwNames)
	e, msg, eat := hw.spec(hwNames, a.vals)
	if msg != "" {
		d.errAt(eat, pointField(a), "%s", msg)
		return nil
	}
	if e.err != "" {
		d.errAt(at, pointField(a), "%s", e.err)
		return nil
	}
	p.Spec, p.SpecJSON = e.spec, e.json
	if p.Key, err = pointKey(prob, e.json, opts); err != nil {
		d.errAt(at, pointField(a), "%v", err)
		return nil
	}
	return p
}

// pointField names a point in messages by its parameters.
func pointField(a assignment) string {
	var parts []string
	for _, n := range a.names {
		parts = append(parts, n+"="+a.vals[n].text)
	}
	if len(parts) == 0 {
		return "point"
	}
	return "point " + strings.Join(parts, " ")
}

// pointKey is a point's content key.
func pointKey(p *constraints.Problem, specJSON []byte, o PointOptions) (record.Key, error) {
	wh, err := search.ProblemHash(p)
	if err != nil {
		return record.Key{}, err
	}
	oh, err := digest.JSON(o)
	if err != nil {
		return record.Key{}, err
	}
	return record.Key{Workload: wh, HW: digest.Bytes(specJSON), Options: oh, Cost: cost.Version}, nil
}

func sortedParamNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
