package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEscaper(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, tabs\tand\nnewlines µs ≤ → …", "plain text, tabs\tand\nnewlines µs ≤ → …"},
		{"nul\x00", `nul\x00`},
		{"esc\x1b[31mred", `esc\x1b[31mred`},
		{"cr\roverwrite", `cr\x0doverwrite`},
		{"del\x7f", `del\x7f`},
		{"rlo\u202eevil", `rlo\u202eevil`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"c1\u009b", `c1\u009b`},
		{"zwsp\u200b", `zwsp\u200b`},
		{"line\u2028sep", `line\u2028sep`},
		{"tag\U000E0041", `tag\udb40\udc41`},
		{"bad\xffutf8", `bad\xffutf8`},
	} {
		var b bytes.Buffer
		e := newEscaper(&b)
		n, err := e.Write([]byte(tc.in))
		require.NoError(t, err)
		assert.Equal(t, len(tc.in), n)
		require.NoError(t, e.Flush())
		assert.Equal(t, tc.want, b.String(), "%q", tc.in)
	}

	// A rune split across writes is written whole; a truncated one at the
	// end is flushed escaped.
	var b bytes.Buffer
	e := newEscaper(&b)
	s := []byte("a\u202eb≤")
	for i := range s {
		_, err := e.Write(s[i : i+1])
		require.NoError(t, err)
	}
	_, err := e.Write([]byte("\xe2\x89"))
	require.NoError(t, err)
	require.NoError(t, e.Flush())
	assert.Equal(t, `a\u202eb≤\xe2\x89`, b.String())
}

// TestNamesEscaped: a workload and a kernel whose names hold control
// characters print escaped, in text and in JSON (which stays valid and
// decodes to the name).
func TestNamesEscaped(t *testing.T) {
	const evil = "evil\x1b[31mred\x00nul\u202eabc"
	dir := t.TempDir()
	wl := filepath.Join(dir, "evil.yaml")
	require.NoError(t, os.WriteFile(wl, []byte("name: \"evil\\e[31mred\\0nul\\u202eabc\"\neinsum: A,A->\naxes: {A: 2048}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"), 0o644))
	kernel := filepath.Join(dir, "evil.json")
	src := strings.Replace(string(mustRead(t, goldenDot)), `"name": "hello-dot"`, `"name": "evil\u001b[31mred\u0000nul\u202eabc"`, 1)
	require.NoError(t, os.WriteFile(kernel, []byte(src), 0o644))
	for _, args := range [][]string{
		{"workload", "check", wl},
		{"plan", wl},
		{"cost", kernel},
		{"verify", kernel},
		{"emit", kernel, "--out", dir}, // refused: the name cannot name a file
	} {
		_, out, errOut := runCLI(t, args...)
		all := out + errOut
		assert.Contains(t, all, `evil\x1b[31mred\x00nul\u202eabc`, "%v", args)
		for _, c := range []string{"\x1b", "\x00", "\u202e"} {
			assert.NotContains(t, all, c, "%v", args)
		}
	}
	code, out, _ := runCLI(t, "workload", "check", wl, "--json")
	require.Equal(t, exitOK, code)
	assert.NotContains(t, out, "\u202e")
	var res []struct {
		Summary struct{ Name string } `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, evil, res[0].Summary.Name)
}

// FuzzEscaper: whatever is written, in whatever pieces, the output is
// valid UTF-8 without a control character other than tab and newline.
func FuzzEscaper(f *testing.F) {
	f.Add([]byte("plain\n"), 3)
	f.Add([]byte("esc\x1b[0m\u202e\xff\xe2\x89"), 1)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		var b bytes.Buffer
		e := newEscaper(&b)
		if cut <= 0 || cut > len(data) {
			cut = len(data)
		}
		for len(data) > 0 {
			n := min(cut, len(data))
			_, err := e.Write(data[:n])
			require.NoError(t, err)
			data = data[n:]
		}
		require.NoError(t, e.Flush())
		out := b.String()
		require.True(t, utf8.ValidString(out))
		for _, r := range out {
			require.False(t, r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || escaped(r)), "%q in %q", r, out)
		}
	})
}
