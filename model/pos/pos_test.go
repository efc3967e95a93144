package pos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestErrorFormat(t *testing.T) {
	cause := errors.New("json: cannot unmarshal string")
	for _, c := range []struct {
		name string
		e    Error
		want string
	}{
		{"everything", Error{File: "w.yaml", Line: 3, Col: 7, Field: "ops[2].inputs[1]", Msg: "unknown tensor"}, "w.yaml:3:7: ops[2].inputs[1]: unknown tensor"},
		{"no column", Error{File: "rngd.yaml", Line: 12, Field: "dm.banks.value", Msg: "want 2..64"}, "rngd.yaml:12: dm.banks.value: want 2..64"},
		{"no field", Error{File: "k.rs", Line: 4, Col: 1, Msg: "expected ;"}, "k.rs:4:1: expected ;"},
		{"no line", Error{File: "w.yaml", Field: "file", Msg: "no such file"}, "w.yaml: file: no such file"},
		{"column without line", Error{File: "w.yaml", Col: 5, Msg: "empty file"}, "w.yaml: empty file"},
		{"no file", Error{Line: 2, Col: 9, Msg: "unexpected token"}, "2:9: unexpected token"},
		{"field only", Error{Field: "chips", Msg: "missing"}, "chips: missing"},
		{"message only", Error{Msg: "empty spec"}, "empty spec"},
		{"wrapped error", Error{File: "k.json", Line: 5, Err: cause}, "k.json:5: json: cannot unmarshal string"},
		{"message over wrapped error", Error{File: "k.json", Line: 5, Msg: "bad", Err: cause}, "k.json:5: bad"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.e.Error())
		})
	}
}

func TestErrorsAs(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	e := &Error{File: "p.json", Line: 9, Err: cause}
	list := ErrorList{{File: "a", Line: 1, Msg: "x"}, e}
	wrapped := fmt.Errorf("reading: %w", list)

	var got *Error
	require.ErrorAs(t, wrapped, &got)
	assert.Equal(t, "a", got.File, "the first of the list")
	var l ErrorList
	require.ErrorAs(t, wrapped, &l)
	assert.Len(t, l, 2)
	assert.ErrorIs(t, wrapped, io.ErrUnexpectedEOF, "through the list and the error's Err")
	assert.Equal(t, "a:1: x\np.json:9: unexpected EOF", list.Error())
}

func TestErrorJSON(t *testing.T) {
	b, err := json.Marshal(ErrorList{
		{File: "w.yaml", Line: 3, Col: 7, Field: "f", Msg: "m"},
		{File: "w.yaml", Msg: "empty file", Err: errors.New("not printed")},
		{File: "k.json", Line: 2, Err: errors.New("json: unknown field \"x\"")},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `[{"file":"w.yaml","line":3,"col":7,"field":"f","msg":"m"},{"file":"w.yaml","msg":"empty file"},{"file":"k.json","line":2,"msg":"json: unknown field \"x\""}]`, string(b))
	var back ErrorList
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, ErrorList{{File: "w.yaml", Line: 3, Col: 7, Field: "f", Msg: "m"}, {File: "w.yaml", Msg: "empty file"}, {File: "k.json", Line: 2, Msg: "json: unknown field \"x\""}}, back, "read back: the text, not the wrapped error")
}

// yamlErr decodes src with yaml.v3 into a node tree and returns its error.
func yamlErr(t *testing.T, src string) error {
	t.Helper()
	var n yaml.Node
	err := yaml.Unmarshal([]byte(src), &n)
	require.Error(t, err, "%q must not parse", src)
	return err
}

// TestYAMLSyntaxLines: the line of each syntax error is the line of the
// problem in the source, whether yaml.v3's scanner (1-based) or parser
// (0-based) found it.
func TestYAMLSyntaxLines(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int
		msg       string
	}{
		// parser problems: yaml.v3 prints the line one short
		{"unclosed flow mapping", "a: 1\nb: 2\nc: {x: 1, y: 2\n", 3, "did not find expected ',' or '}'"},
		{"unclosed flow list", "a: [1, 2\nb: 3\n", 2, "did not find expected ',' or ']'"}, // at b
		{"list after a mapping", "a: 1\nb: 2\n- d\n", 3, "did not find expected key"},
		{"unclosed flow list at the end", "[1, 2", 2, "did not find expected ',' or ']'"}, // one past the last line: the end of the stream
		{"list item after a mapping", "a: b\n- c\n", 2, "did not find expected key"},
		{"mapping after a list", "- a\nb: c\n", 2, "did not find expected '-' indicator"},
		{"bad indentation of a list", "a:\n  - 1\n - 2\n", 3, "did not find expected key"},
		{"undefined tag handle", "a: !x!y 1\n", 1, "found undefined tag handle"},
		// scanner problems: yaml.v3 prints the line right
		{"tab indentation", "a:\n\tb: 1\n", 2, "found character that cannot start any token"},
		{"anchor without a name", "a: 1\nb: &\n", 2, "did not find expected alphabetic or numeric character"}, // a scanner problem, though it reads like the parser's
		{"mapping in a plain scalar", "x: 1\na: b: c\n", 2, "mapping values are not allowed in this context"},
		{"mapping in a plain scalar on line 1", "a: b: c\n", 1, "mapping values are not allowed in this context"}, // no line printed
		{"unclosed quote", "a: 1\nb: \"x\n", 2, "found unexpected end of stream"},                                 // where the quote opens
		// reader problems: no line
		{"control character", "a: 1\nb: \x01\n", 0, "control characters are not allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := YAML("f.yaml", yamlErr(t, c.src))
			require.Len(t, l, 1)
			assert.Equal(t, &Error{File: "f.yaml", Line: c.line, Field: "yaml", Msg: c.msg}, l[0])
		})
	}
}

// TestYAMLTypeErrors: a strict decode into a struct reports every problem
// with its line.
func TestYAMLTypeErrors(t *testing.T) {
	var v struct {
		A int    `yaml:"a"`
		B string `yaml:"b"`
	}
	dec := yaml.NewDecoder(strings.NewReader("a: x\nb: 2\nc: 3\n"))
	dec.KnownFields(true)
	err := dec.Decode(&v)
	require.Error(t, err)
	assert.Equal(t, ErrorList{
		{File: "s.yaml", Line: 1, Field: "yaml", Msg: "cannot unmarshal !!str `x` into int"},
		{File: "s.yaml", Line: 3, Field: "yaml", Msg: "field c not found in type struct { A int \"yaml:\\\"a\\\"\"; B string \"yaml:\\\"b\\\"\" }"},
	}, YAML("s.yaml", err))
}

func TestYAMLLine(t *testing.T) {
	for _, c := range []struct {
		msg  string
		line int
		text string
	}{
		{"yaml: line 4: mapping values are not allowed in this context", 4, "mapping values are not allowed in this context"},
		{"yaml: line 4: did not find expected key", 5, "did not find expected key"},
		{"yaml: did not find expected node content", 1, "did not find expected node content"}, // 0-based line 0 is not printed
		{"yaml: found character that cannot start any token", 1, "found character that cannot start any token"},
		{"yaml: line 3: found character that cannot start any token", 3, "found character that cannot start any token"},
		{"yaml: exceeded max depth of 10000", 1, "exceeded max depth of 10000"},
		{"line 7: field x not found in type T", 7, "field x not found in type T"},
		{"yaml: control characters are not allowed", 0, "control characters are not allowed"},
		{"something else", 0, "something else"},
	} {
		line, text := YAMLLine(c.msg)
		assert.Equal(t, c.line, line, c.msg)
		assert.Equal(t, c.text, text, c.msg)
	}
}

// FuzzYAMLLine: whatever the input, the line YAML finds for a syntax error
// is a line of the input (or one past its last, where yaml.v3 reports an
// unexpected end), never 0 when yaml.v3 named one and never beyond it.
func FuzzYAMLLine(f *testing.F) {
	for _, s := range []string{"a: {x: 1\n", "a:\n\tb: 1\n", "a: b: c\n", "a: 1\n  b: 2\n", "- a\nb: 1\n", "[1, 2\n", "%YAML 1.1\n%YAML 1.1\n---\na\n", "!x!y a\n", "a: \"x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		var n yaml.Node
		err := yaml.Unmarshal([]byte(src), &n)
		if err == nil {
			return
		}
		// yaml.v3 breaks lines at \n, \r, \r\n, NEL, LS and PS (yamlprivateh.go is_break).
		lines := 1 + strings.Count(src, "\n") + strings.Count(src, "\r") - strings.Count(src, "\r\n") +
			strings.Count(src, "\u0085") + strings.Count(src, "\u2028") + strings.Count(src, "\u2029")
		for _, e := range YAML("f", err) {
			if e.Line < 0 || e.Line > lines+1 {
				t.Fatalf("line %d outside the input's %d lines: %v", e.Line, lines, err)
			}
			if strings.Contains(err.Error(), "line ") && e.Line == 0 {
				t.Fatalf("line lost: %v", err)
			}
		}
	})
}

func TestScalarCol(t *testing.T) {
	// The column of the 'Q' (column 6 of the value "m![A, Q]") in the file.
	src := `a: m![A, Q]
b: "m![A, Q]"
c: 'm![A, Q]'
d: 'm![A,''Q]'
e: |
  m![A, Q]
f: {g: 'm![A, Q]'}
`
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(src), &doc))
	m := doc.Content[0]
	at := map[string]*yaml.Node{}
	for i := 0; i < len(m.Content); i += 2 {
		at[m.Content[i].Value] = m.Content[i+1]
	}
	at["g"] = at["f"].Content[1]
	for _, c := range []struct {
		key  string
		want int
	}{
		{"a", 10},
		{"b", 11},
		{"c", 11},
		{"d", 4}, // a doubled quote: the value's bytes are not the file's
		{"e", 4}, // a block scalar: the node's column
		{"g", 15},
	} {
		n := at[c.key]
		assert.Equal(t, c.want, ScalarCol(n, 7), c.key)
		if c.key == "a" {
			assert.Equal(t, &Error{File: "m.yaml", Line: 1, Col: 10, Field: "a", Msg: "unknown axis Q"}, InNode("m.yaml", n, 7, "a", "unknown axis Q"))
		}
	}
	assert.Equal(t, 4, ScalarCol(at["a"], 0), "column 0 is the value's start")
}

func TestErrorf(t *testing.T) {
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("x:\n  y: 5\n"), &doc))
	y := doc.Content[0].Content[1].Content[1]
	assert.Equal(t, "f.yaml:2:6: x.y: 5 out of range", Errorf("f.yaml", y, "x.y", "%d out of range", 5).Error())
	assert.Equal(t, "f.yaml: empty file", Errorf("f.yaml", nil, "", "empty file").Error())
}

func TestOffset(t *testing.T) {
	data := []byte("ab\ncd\n\nef")
	for _, c := range []struct{ off, line, col int }{
		{0, 1, 1}, {1, 1, 2}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 3, 1}, {7, 4, 1}, {8, 4, 2},
		{9, 4, 3},               // the end
		{-4, 1, 1}, {100, 4, 3}, // clamped
	} {
		line, col := Offset(data, c.off)
		assert.Equal(t, [2]int{c.line, c.col}, [2]int{line, col}, "offset %d", c.off)
	}
}

func TestJSONPos(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	for _, c := range []struct {
		name, src string
		line, col int
	}{
		{"syntax", "{\n  \"a\": 1,\n  x\n}", 3, 3},
		{"type", "{\n  \"a\":\n  \"s\"\n}", 3, 0},
		{"truncated", "{\n  \"a\": 1", 2, 8},        // the last byte
		{"truncated stream", "{\n  \"a\": 1", 2, 9}, // after the last byte
	} {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.src)
			err := json.Unmarshal(data, &v)
			if c.name == "truncated stream" {
				err = json.NewDecoder(bytes.NewReader(data)).Decode(&v)
				require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			}
			require.Error(t, err)
			line, col := JSONPos(data, err)
			assert.Equal(t, [2]int{c.line, c.col}, [2]int{line, col})
			e := JSON("k.json", data, err)
			assert.ErrorIs(t, e, err)
			assert.Equal(t, c.line, e.Line)
		})
	}
	line, col := JSONPos(nil, errors.New("tensors[3]: null"))
	assert.Zero(t, line+col, "not a decoding error: no position")
	assert.Equal(t, "k.json: tensors[3]: null", JSON("k.json", nil, errors.New("tensors[3]: null")).Error())
}

// TestDocument: one document's top node; every other input a positioned
// problem.
func TestDocument(t *testing.T) {
	n, errs := Document("w.yaml", []byte("name: x\n"))
	require.Empty(t, errs)
	require.NotNil(t, n)
	assert.Equal(t, yaml.MappingNode, n.Kind)
	for _, c := range []struct{ src, want string }{
		{"", "w.yaml: empty file"},
		{"# only a comment\n", "w.yaml: empty file"},
		{"a: 1\n---\nb: 2\n", "w.yaml:2:1: more than one YAML document"}, // at its marker
		{"a: [1\n", "w.yaml:2"},
		{"a: 1\n---\nb: [\n", "w.yaml:4"},
	} {
		n, errs := Document("w.yaml", []byte(c.src))
		assert.Nil(t, n, c.src)
		require.NotEmpty(t, errs, c.src)
		assert.Contains(t, errs.Error(), c.want, c.src)
	}
}
