package workload

import (
	"fmt"
	"strings"
)

// Error is one problem found in a workload file. It names the file, the
// position (1-based line and column of the offending YAML node, or of the
// offending character inside an einsum string) and the field, written as a
// path such as "ops[2].inputs[1]" or "tensors.q.dtype".
type Error struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Col   int    `json:"col"`
	Field string `json:"field"`
	Msg   string `json:"msg"`
}

// Error formats e as "file:line:col: field: msg". A zero column (a YAML
// syntax error, which yaml.v3 reports by line only) is left out, and so is
// an empty field.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in one workload file, in the order the
// validator met them (document order for field errors, op order for graph
// errors). Parse and Load return it as their error when the file is invalid.
type ErrorList []*Error

// Error joins the errors, one per line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap exposes the individual errors to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}
