package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"tcpmap/model/pos"
)

// decoder walks a yaml.v3 node tree strictly: every mapping key must be a
// known field, no key may repeat, every scalar must have the expected type.
// It collects every error instead of stopping at the first.
type decoder struct {
	file string
	errs ErrorList
}

// kv is one key/value pair of a YAML mapping, in document order.
type kv struct {
	key, val *yaml.Node
}

func (d *decoder) errAt(n *yaml.Node, field, format string, args ...any) {
	d.errs = append(d.errs, pos.Errorf(d.file, n, field, format, args...))
}

func (d *decoder) syntaxErr(err error) { d.errs = append(d.errs, pos.YAML(d.file, err)...) }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "empty"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		}
		return fmt.Sprintf("%s %s", strings.TrimPrefix(n.ShortTag(), "!!"), n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// noAlias rejects YAML aliases (*name): they would let a small file expand
// into a huge tree, and workloads have no use for them.
func (d *decoder) noAlias(n *yaml.Node, field string) bool {
	if n.Kind == yaml.AliasNode {
		d.errAt(n, field, "YAML aliases are not supported")
		return false
	}
	return true
}

// mapping returns the pairs of a mapping node, reporting a non-mapping, a
// non-string key and a repeated key.
func (d *decoder) mapping(n *yaml.Node, field string) ([]kv, bool) {
	if !d.noAlias(n, field) {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		d.errAt(n, field, "must be a mapping, got %s", kindName(n))
		return nil, false
	}
	var out []kv
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.errAt(k, field, "keys must be names, got %s", kindName(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			d.errAt(k, join(field, k.Value), "repeated key (first at line %d)", prev.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, kv{k, v})
	}
	return out, true
}

// fields splits the pairs of a mapping into the allowed fields, reporting
// unknown ones (strict decoding) and missing required ones.
func (d *decoder) fields(n *yaml.Node, field string, required, optional []string) (map[string]kv, bool) {
	pairs, ok := d.mapping(n, field)
	if !ok {
		return nil, false
	}
	out := map[string]kv{}
	for _, p := range pairs {
		if !slices.Contains(required, p.key.Value) && !slices.Contains(optional, p.key.Value) {
			d.errAt(p.key, join(field, p.key.Value), "unknown field (allowed: %s)", strings.Join(append(append([]string{}, required...), optional...), ", "))
			continue
		}
		out[p.key.Value] = p
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			d.errAt(n, join(field, r), "missing required field")
		}
	}
	return out, true
}

// join appends a key to a field path.
func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

// str reads a string scalar.
func (d *decoder) str(n *yaml.Node, field string) (string, bool) {
	if !d.noAlias(n, field) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.errAt(n, field, "must be a string, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

// name reads a string scalar that must be an identifier (axis, tensor or op
// name): a letter, then letters, digits or underscores.
func (d *decoder) name(n *yaml.Node, field, what string) (string, bool) {
	s, ok := d.str(n, field)
	if !ok {
		return "", false
	}
	if what == "axis" && !validAxisName(s) {
		d.errAt(n, field, "bad axis name %q (an uppercase letter, then letters, digits or _, as in m![...])", s)
		return "", false
	}
	if !validName(s) {
		d.errAt(n, field, "bad %s name %q (a letter, then letters, digits or _)", what, s)
		return "", false
	}
	return s, true
}

// integer reads an integer scalar in [lo, hi].
func (d *decoder) integer(n *yaml.Node, field string, lo, hi int64) (int64, bool) {
	if !d.noAlias(n, field) {
		return 0, false
	}
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		d.errAt(n, field, "must be an integer, got %s", kindName(n))
		return 0, false
	}
	if v < lo || v > hi {
		d.errAt(n, field, "%d out of range [%d, %d]", v, lo, hi)
		return 0, false
	}
	return v, true
}

// number reads a finite int or float scalar.
func (d *decoder) number(n *yaml.Node, field string) (float64, bool) {
	if !d.noAlias(n, field) {
		return 0, false
	}
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil {
		d.errAt(n, field, "must be a number, got %s", kindName(n))
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.errAt(n, field, "must be finite, got %s", n.Value)
		return 0, false
	}
	return v, true
}

// list reads a sequence node.
func (d *decoder) list(n *yaml.Node, field string) ([]*yaml.Node, bool) {
	if !d.noAlias(n, field) {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, field, "must be a list, got %s", kindName(n))
		return nil, false
	}
	return n.Content, true
}

// names reads a list of identifiers, reporting repeats.
func (d *decoder) names(n *yaml.Node, field, what string) ([]string, []*yaml.Node, bool) {
	items, ok := d.list(n, field)
	if !ok {
		return nil, nil, false
	}
	out := make([]string, 0, len(items))
	good := true
	for i, it := range items {
		s, ok := d.name(it, index(field, i), what)
		if !ok {
			good = false
			continue
		}
		if slices.Contains(out, s) {
			d.errAt(it, index(field, i), "%s %s repeated", what, s)
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, items, good
}
