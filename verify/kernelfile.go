package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/pos"
)

// Source is a kernel program file as read: its name and bytes, to locate
// errors in it.
type Source struct {
	Name string
	Data []byte
}

// LoadKernel reads a kernel program's JSON file (model/kernel's form). A
// syntax or field error names the file, the line and the JSON path of the
// offending field.
func LoadKernel(path string) (*kernel.Program, *Source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseKernel(path, data)
}

// ParseKernel parses a kernel program's JSON; name is the file name errors
// carry.
func ParseKernel(name string, data []byte) (*kernel.Program, *Source, error) {
	src := &Source{Name: name, Data: data}
	var p kernel.Program
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, src, src.Locate(err)
	}
	return &p, src, nil
}

// Locate places err in the file: a *pos.Error wrapping it, with the line
// (and for a syntax error the column) it concerns, when it can tell: JSON
// syntax and type errors by their offset (pos.JSONPos); otherwise by the
// JSON path of the field the error names (jsonPath): a field error's path
// (kernel.FieldError, nested ones joined: `program` then
// `tensors[3].addr`), lowering errors (engines.LowerError) and execution
// errors (ExecError) by their op and stage, and errors whose message starts
// with a path (`tensors[3] "x": ...`).
func (s *Source) Locate(err error) error {
	if err == nil || s == nil {
		return err
	}
	e := pos.JSON(s.Name, s.Data, err)
	if e.Line == 0 {
		e.Line = s.pathLine(jsonPath(err))
		if m := unknownField.FindStringSubmatch(err.Error()); e.Line == 0 && m != nil {
			e.Line = s.keyLine(m[1])
		}
	}
	return e
}

// jsonPath returns the JSON path of the field err concerns, or "": the
// paths of the field errors in its chain, outermost first, followed by the
// path the innermost of them wraps (a lowering or execution error's op and
// stage, or a path its message starts with).
func jsonPath(err error) string {
	var parts []string
	rest := err
	for e := err; e != nil; e = errors.Unwrap(e) {
		if f, ok := e.(interface{ FieldPath() string }); ok {
			parts = append(parts, f.FieldPath())
			rest = errors.Unwrap(e)
		}
	}
	var le *engines.LowerError
	var xe *ExecError
	switch {
	case rest == nil:
	case errors.As(rest, &le):
		parts = append(parts, opPath(le.Op, le.Stage))
	case errors.As(rest, &xe):
		parts = append(parts, opPath(xe.Op, xe.Stage))
	default:
		if p := errPath(rest.Error()); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

func opPath(op, stage int) string {
	if stage < 0 {
		return fmt.Sprintf("ops[%d]", op)
	}
	return fmt.Sprintf("ops[%d].stages[%d]", op, stage)
}

var (
	// `tensors[3].chip: ...`, `ops[2].stages[1].dtype: ...`
	fieldPath = regexp.MustCompile(`^([a-z_]+(\[\d+\])?(\.[a-z_]+(\[\d+\])?)*):`)
	// `tensors[2] "x": ...`, `ops[3] (chain): stages[1] (fetch): ...`
	validatePath = regexp.MustCompile(`^([a-z_]+\[\d+\])( "[^"]*"| \([a-z_]+\))?: (stages\[\d+\])?`)
	unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)
)

// errPath extracts the JSON path an error message starts with.
func errPath(msg string) string {
	if m := fieldPath.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if m := validatePath.FindStringSubmatch(msg); m != nil {
		if m[3] != "" {
			return m[1] + "." + m[3]
		}
		return m[1]
	}
	if strings.HasPrefix(msg, "reference:") {
		return "reference"
	}
	return ""
}

// pathLine returns the line of the JSON value at path (`ops[3].stages[1]`),
// or of its longest prefix found; 0 when none is.
func (s *Source) pathLine(path string) int {
	for path != "" {
		if l := s.walk(func(p string, _ bool) bool { return p == path }); l > 0 {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// keyLine returns the line of the first object key named key.
func (s *Source) keyLine(key string) int {
	return s.walk(func(p string, isKey bool) bool { return isKey && (p == key || strings.HasSuffix(p, "."+key)) })
}

// walk reads the JSON tokens, calling match with the path of every value
// (`tensors[3].chip`) and of every key, and returns the line of the first
// match.
func (s *Source) walk(match func(path string, isKey bool) bool) int {
	type frame struct {
		arr     bool
		key     string
		idx     int
		wantKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(s.Data))
	var stack []frame
	path := func(extra string) string {
		var b strings.Builder
		for _, f := range stack {
			if f.arr {
				b.WriteString("[" + strconv.Itoa(f.idx) + "]")
			} else {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		if extra != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(extra)
		}
		return b.String()
	}
	done := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].arr {
				stack[n-1].idx++
			} else {
				stack[n-1].wantKey = true
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		line, _ := pos.Offset(s.Data, int(dec.InputOffset()))
		n := len(stack)
		if n > 0 && !stack[n-1].arr && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				stack = stack[:n-1]
				p := path(k)
				stack = append(stack, frame{key: k})
				if match(p, true) {
					return line
				}
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:n-1]
			done()
			continue
		}
		if n > 0 && match(path(""), false) {
			return line
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{arr: d == '[', wantKey: d == '{'})
			continue
		}
		done()
	}
}
