// Package pos is the one positioned error of tcpmap's readers, and the
// helpers that find a position in the inputs they read: a YAML node's line
// and column, the line of a gopkg.in/yaml.v3 syntax error, the line and
// column of a byte offset (a JSON decoding error's, a Rust token's), and
// the line of a JSON path (`ops[3].stages[1]`).
//
// Every reader of a file reports its problems as *Error (or an ErrorList of
// them): workload files (model/workload), hardware specs (engines),
// mapping files (constraints), sweep files (search), kernel programs and
// plans (verify.Source, cost baselines) and Rust kernels (emit/rustread).
// The older names stay as aliases (workload.Error, engines.Error,
// rustread.Error are pos.Error), so errors.As with any of them finds the
// same value.
//
// Some error types of tcpmap are not positions in a file and stay their
// own: mapping.SyntaxError, workload.EinsumError and kernel.SwitchConfigError
// carry a column inside an expression string (`m![A / 3]`), without
// knowing which file or line the string came from; kernel.FieldError
// carries a JSON path inside a program; engines.LowerError and
// verify.ExecError an op and a stage. A reader that knows where the string
// sits turns them into an *Error: the column with InNode (a YAML scalar)
// or Offset (a byte offset in the file), the path, op and stage with the
// file's JSON index (verify.Source.Locate):
//
//	e, err := mapping.Parse(n.Value, axes, nil)
//	var se *mapping.SyntaxError
//	if errors.As(err, &se) {
//		return pos.InNode(file, n, se.Col, "layouts.in0", se.Msg)
//	}
package pos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one problem in an input file: the file, the 1-based line and
// column (0 when unknown), the field (a path such as "ops[2].inputs[1]" or
// "dm.banks.value"; empty when the problem is not one field's) and what is
// wrong. Msg is the text; a wrapped error Err (for errors.Is and
// errors.As) stands for it when Msg is empty.
type Error struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Col   int    `json:"col,omitempty"`
	Field string `json:"field,omitempty"`
	Msg   string `json:"msg"`
	// Err is the error the problem wraps, nil if none.
	Err error `json:"-"`
}

// Error formats e as "file:line:col: field: msg", leaving out what is
// unknown: an empty file, a zero line (and the column with it), a zero
// column, an empty field.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if e.File != "" {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Col))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.text())
	return b.String()
}

func (e *Error) text() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// MarshalJSON writes e's fields; msg is the text Error prints after the
// field (the wrapped error's when Msg is empty).
func (e *Error) MarshalJSON() ([]byte, error) {
	type fields Error
	f := fields(*e)
	f.Msg = e.text()
	return json.Marshal(f)
}

// Unwrap returns the wrapped error, nil if none.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at n (its line and column; none for a nil n)
// with the message format and args.
func Errorf(file string, n *yaml.Node, field, format string, args ...any) *Error {
	line, col := Node(n)
	return &Error{File: file, Line: line, Col: col, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ErrorList is every problem found in one input, in the order its reader
// reports them.
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

// Node returns n's 1-based line and column, 0, 0 for a nil n.
func Node(n *yaml.Node) (line, col int) {
	if n == nil {
		return 0, 0
	}
	return n.Line, n.Column
}

// ScalarCol is the file column of the 1-based column col of the scalar n's
// value: exact for single-line plain and flow scalars and for quoted ones
// without quotes, escapes or line breaks inside; otherwise (where the
// value's bytes are not the file's) the node's own column.
func ScalarCol(n *yaml.Node, col int) int {
	off := max(col-1, 0)
	switch n.Style {
	case 0, yaml.FlowStyle:
		if !strings.Contains(n.Value, "\n") {
			return n.Column + off
		}
	case yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle:
		if !strings.ContainsAny(n.Value, "'\"\\\n") {
			return n.Column + 1 + off
		}
	}
	return n.Column
}

// InNode returns an *Error at the 1-based column col inside the scalar n's
// value (an expression's own column, as mapping.SyntaxError carries it),
// placed in the file by ScalarCol.
func InNode(file string, n *yaml.Node, col int, field, msg string) *Error {
	return &Error{File: file, Line: n.Line, Col: ScalarCol(n, col), Field: field, Msg: msg}
}

// yamlLine is the line gopkg.in/yaml.v3 puts in its errors: "yaml: line 3:
// did not find expected key" (syntax), "line 3: field x not found in type
// T" (one of a *yaml.TypeError's Errors).
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// parserProblems are the problems yaml.v3's parser (as opposed to its
// scanner) reports. For these yaml.v3 prints the 0-based line of the mark
// (its decode.go parser.fail adds 1 for scanner errors only; gopkg.in/yaml.v3
// v3.0.1 parserc.go), so the 1-based line is one more, and a missing line
// (line 0 is not printed) means line 1.
var parserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive",
	"found duplicate %YAML directive", "found incompatible YAML document",
	"found undefined tag handle",
}

// scannerProblems are the problems yaml.v3's scanner reports (gopkg.in/yaml.v3
// v3.0.1 scannerc.go). It prints their lines 1-based, but a mark on the
// first line as no line at all.
var scannerProblems = []string{
	"block sequence entries are not allowed in this context", "could not find expected ':'",
	"could not find expected directive name", "did not find URI escaped octet",
	"did not find expected '!'", "did not find expected alphabetic or numeric character",
	"did not find expected comment or line break", "did not find expected digit or '.' character",
	"did not find expected hexdecimal number", "did not find expected tag URI",
	"did not find expected version number", "did not find expected whitespace or line break",
	"did not find expected whitespace", "did not find the expected '>'",
	"found a tab character that violates indentation", "found a tab character where an indentation space is expected",
	"found an incorrect leading UTF-8 octet", "found an incorrect trailing UTF-8 octet",
	"found an indentation indicator equal to 0", "found character that cannot start any token",
	"found extremely long version number", "found invalid Unicode character escape code",
	"found unexpected document indicator", "found unexpected end of stream",
	"found unexpected non-alphabetical character", "found unknown directive name",
	"found unknown escape character", "mapping keys are not allowed in this context",
	"mapping values are not allowed in this context",
}

// YAMLLine splits one gopkg.in/yaml.v3 error message into its 1-based line
// (0 when it names none) and its text without the "yaml: line N: " prefix,
// correcting the 0-based lines yaml.v3 prints for its parser's problems
// and the line it leaves out for a problem on the first line. A problem of
// yaml.v3's reader (bad UTF-8, control characters) has no line.
func YAMLLine(msg string) (line int, text string) {
	text = msg
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		text = msg[len(m[0]):]
	} else {
		text = strings.TrimPrefix(msg, "yaml: ")
	}
	switch {
	case slices.Contains(parserProblems, text):
		line++
	case line == 0 && (slices.Contains(scannerProblems, text) || strings.HasPrefix(text, "exceeded max depth of ")):
		line = 1 // a mark on the 0-based line 0 is printed as no line at all
	}
	return line, text
}

// YAML turns an error of gopkg.in/yaml.v3 decoding file into positioned
// errors, field "yaml": one for a syntax error, one per problem of a
// *yaml.TypeError.
func YAML(file string, err error) ErrorList {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make(ErrorList, len(msgs))
	for i, m := range msgs {
		line, text := YAMLLine(m)
		out[i] = &Error{File: file, Line: line, Field: "yaml", Msg: text}
	}
	return out
}

// Offset returns the 1-based line and column (in bytes) of byte offset off
// of data, clamped to data.
func Offset(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// JSONPos returns the 1-based line and column an encoding/json error
// decoding data points at: the offending byte of a *json.SyntaxError, the
// end of data for a truncated document, and the line alone of a
// *json.UnmarshalTypeError (its offset is the end of the value, not a
// column worth printing); 0, 0 when it points nowhere.
func JSONPos(data []byte, err error) (line, col int) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included.
		return Offset(data, int(se.Offset-1))
	case errors.As(err, &te):
		line, _ = Offset(data, int(te.Offset))
		return line, 0
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Offset(data, len(data))
	}
	return 0, 0
}

// JSON returns err, an encoding/json error decoding data read from file,
// as an *Error wrapping it, at the line and column JSONPos finds.
func JSON(file string, data []byte, err error) *Error {
	line, col := JSONPos(data, err)
	return &Error{File: file, Line: line, Col: col, Err: err}
}

// Document decodes data, the YAML file file, as exactly one document and
// returns its top node; otherwise nil and the positioned problems (a
// syntax error, an empty file, a second document).
func Document(file string, data []byte) (*yaml.Node, ErrorList) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrorList{Errorf(file, nil, "", "empty file")}
		}
		return nil, YAML(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, ErrorList{Errorf(file, &extra, "", "more than one YAML document")}
	} else if !errors.Is(err, io.EOF) {
		return nil, YAML(file, err) // a broken second document
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, ErrorList{Errorf(file, &doc, "", "empty file")}
	}
	return doc.Content[0], nil
}
