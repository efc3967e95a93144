package engines

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"tcpmap/model/pos"
)

// Loading a hardware spec file: parsing, field positions, derived values.

var defaultSpec = sync.OnceValues(func() (*Spec, error) { return Parse(rngdYAML, "rngd.yaml") })

// Default returns the embedded RNGD spec (engines/rngd.yaml), parsed once. It
// panics only if the embedded file is invalid, which TestDefault rules out.
// The returned Spec is shared: do not modify it.
func Default() *Spec {
	s, err := defaultSpec()
	if err != nil {
		panic("engines: embedded rngd.yaml is invalid: " + err.Error())
	}
	return s
}

// Load reads and parses the spec file at path.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Error is a problem in a spec file (a pos.Error): the file, the 1-based
// line (0 if unknown), the dotted field path ("dm.banks.value"; empty for
// syntax errors) and what is wrong, formatted `file:line: field: message`.
type Error = pos.Error

// ErrorList is every problem Parse found, in line order.
type ErrorList = pos.ErrorList

// Parse parses and checks a spec; name is the file name used in errors. It
// rejects YAML syntax errors, unknown, duplicate, missing, null and ill-typed
// fields, malformed citations and numbers that contradict each other; the
// error is an ErrorList of `file:line: field: message`.
func Parse(data []byte, name string) (*Spec, error) {
	p := &parser{file: name, pos: map[cited]fieldPos{}}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, p.yamlError(err, nil)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, ErrorList{{File: name, Line: 1, Msg: "empty spec"}}
	}
	doc := root.Content[0]
	lines := map[int]string{}
	indexLines(doc, "", lines, 0)

	s := &Spec{name: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, p.yamlError(err, lines)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		line := extra.Line
		if err != nil {
			return nil, p.yamlError(err, lines)
		}
		return nil, ErrorList{{File: name, Line: line, Msg: "more than one YAML document"}}
	}

	p.walk(reflect.ValueOf(s).Elem(), doc, "", doc.Line)
	if len(p.errs) > 0 {
		return nil, p.sorted()
	}
	p.check(s)
	if len(p.errs) > 0 {
		return nil, p.sorted()
	}
	s.derive()
	return s, nil
}

// derive precomputes the address-mapping masks used by HBMChannel.
func (s *Spec) derive() {
	s.hbmStackMask = 0
	for _, b := range s.HBM.AddressBits.Stack.Value {
		s.hbmStackMask |= 1 << uint(b)
	}
	s.hbmChanMasks = make([]uint64, len(s.HBM.ChannelXOR))
	for i, x := range s.HBM.ChannelXOR {
		for _, b := range x.Value {
			s.hbmChanMasks[i] |= 1 << uint(b)
		}
	}
	s.hbmChannels = s.HBM.ChannelsPerStack.Value
}

// fieldPos is where a Value sits in the file.
type fieldPos struct {
	path string
	line int
}

type parser struct {
	file string
	pos  map[cited]fieldPos // *Value[T] → its path and line
	errs ErrorList
}

func (p *parser) add(line int, field, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) sorted() ErrorList {
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	return p.errs
}

// yamlError converts a yaml.v3 error (syntax or type errors, which carry
// "line N:" prefixes) into an ErrorList, naming the field at that line.
func (p *parser) yamlError(err error, lines map[int]string) error {
	for _, e := range pos.YAML(p.file, err) {
		m := e.Msg
		field := lines[e.Line]
		if fm := unknownFieldRE.FindStringSubmatch(m); fm != nil && field != "" {
			m = "unknown field (not in " + fm[2] + ")"
		}
		p.add(e.Line, field, "%s", m)
	}
	return p.sorted()
}

var unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)

// indexLines maps each line that holds a mapping key or a sequence item to the
// dotted path of that field, for naming the fields of yaml.v3's line-only
// errors. It does not follow aliases.
func indexLines(n *yaml.Node, path string, lines map[int]string, depth int) {
	if n == nil || depth > 64 {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sub := joinPath(path, k.Value)
			if _, ok := lines[k.Line]; !ok {
				lines[k.Line] = sub
			}
			indexLines(v, sub, lines, depth+1)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			sub := fmt.Sprintf("%s[%d]", path, i)
			if _, ok := lines[c.Line]; !ok && c.Kind != yaml.ScalarNode {
				lines[c.Line] = sub
			}
			indexLines(c, sub, lines, depth+1)
		}
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// yamlName returns a struct field's YAML key and whether it may be omitted.
func yamlName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("yaml")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, strings.Contains(opts, "omitempty")
}

// walk pairs the decoded value v with its node n: it rejects missing required
// fields, nulls and merge keys, and records where each Value sits. keyLine is
// the line of the key that names v (where a block mapping's problems are
// reported).
func (p *parser) walk(v reflect.Value, n *yaml.Node, path string, keyLine int) {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	if isNull(n) {
		p.add(n.Line, path, "null value")
		return
	}
	if c, ok := v.Addr().Interface().(cited); ok {
		p.pos[c] = fieldPos{path: path, line: keyLine}
	}
	switch v.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			p.add(n.Line, path, "expected a mapping")
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "<<" {
				p.add(n.Content[i].Line, path, "merge keys (<<) are not supported")
				return
			}
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, optional := yamlName(f)
			sub := joinPath(path, name)
			var key, val *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == name {
					key, val = n.Content[j], n.Content[j+1]
				}
			}
			if val == nil {
				if !optional {
					p.add(keyLine, sub, "missing required field")
				}
				continue
			}
			p.walk(v.Field(i), val, sub, key.Line)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return // yaml.v3 has already rejected it
		}
		if len(n.Content) != v.Len() {
			// yaml.v3 drops null items from sequences; report them.
			for i, c := range n.Content {
				if isNull(c) {
					p.add(c.Line, fmt.Sprintf("%s[%d]", path, i), "null value")
				}
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			p.walk(v.Index(i), n.Content[i], fmt.Sprintf("%s[%d]", path, i), n.Content[i].Line)
		}
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
