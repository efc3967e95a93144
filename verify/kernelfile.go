package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
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
		e.Line = pos.JSONLine(s.Data, jsonPath(err))
		if m := unknownField.FindStringSubmatch(err.Error()); e.Line == 0 && m != nil {
			e.Line = pos.JSONKeyLine(s.Data, m[1])
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
