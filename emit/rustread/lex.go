package rustread

import (
	"fmt"
	"strings"

	"tcpmap/model/pos"
)

// The lexer of the Rust subset the reader parses: identifiers, integer and
// float literals, string and character literals, lifetimes, and punctuation,
// each with its byte offset; comments are dropped except the `// tcpmap:`
// directive lines of an emitted file's header.

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tIdent          // identifiers and keywords
	tInt            // integer literals, with an optional type suffix (`1i32`)
	tFloat          // float literals (`0.5`, `1e-3`, `2f64`)
	tString         // "..." and r"..." / r#"..."# literals
	tChar           // 'c'
	tLife           // 'a (lifetimes)
	tPunct          // punctuation: one character, or `::`, `->`, `=>`
)

// token is one token of the source.
type token struct {
	kind tokKind
	text string
	off  int // byte offset of the first character
}

// directive is a `// tcpmap:NAME VALUE` comment line.
type directive struct {
	name, value string
	off         int
	voff        int // where the value starts
}

// Error is an error in a Rust kernel file (a pos.Error), at a 1-based line
// and column (in bytes), formatted `file:line:col: msg`.
type Error = pos.Error

// maxTokens bounds the token count of one file, so that a hostile input
// cannot make the reader allocate without limit.
const maxTokens = 1 << 20

// lex splits src into tokens; the last token is tEOF at len(src).
func lex(src string) ([]token, []directive, int, error) {
	var toks []token
	var dirs []directive
	i := 0
	fail := func(off int, format string, args ...any) ([]token, []directive, int, error) {
		return nil, nil, off, fmt.Errorf(format, args...)
	}
	for i < len(src) {
		if len(toks) >= maxTokens {
			return fail(i, "too many tokens (more than %d)", maxTokens)
		}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			line := src[i : i+end]
			if rest, ok := strings.CutPrefix(line, "// tcpmap:"); ok {
				name, value, _ := strings.Cut(strings.TrimRight(rest, " \t\r"), " ")
				voff := i + len("// tcpmap:") + len(name) + 1 + len(value) - len(strings.TrimLeft(value, " \t"))
				dirs = append(dirs, directive{name: name, value: strings.TrimSpace(value), off: i, voff: voff})
			}
			i += end
		case strings.HasPrefix(src[i:], "/*"):
			depth, j := 0, i
			for j < len(src) {
				if strings.HasPrefix(src[j:], "/*") {
					depth++
					j += 2
				} else if strings.HasPrefix(src[j:], "*/") {
					depth--
					j += 2
					if depth == 0 {
						break
					}
				} else {
					j++
				}
			}
			if depth != 0 {
				return fail(i, "unterminated block comment")
			}
			i = j
		case isIdentStart(c):
			if (c == 'r' || c == 'b') && i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '#' && c == 'r') {
				end, err := rawString(src, i)
				if err != nil {
					return fail(i, "%v", err)
				}
				if end > 0 {
					toks = append(toks, token{tString, src[i:end], i})
					i = end
					continue
				}
			}
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			toks = append(toks, token{tIdent, src[i:j], i})
			i = j
		case c >= '0' && c <= '9':
			j, kind := number(src, i)
			toks = append(toks, token{kind, src[i:j], i})
			i = j
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return fail(i, "unterminated string literal")
			}
			toks = append(toks, token{tString, src[i : j+1], i})
			i = j + 1
		case c == '\'':
			// 'c', '\n', '\u{..}' are characters; 'a not followed by a
			// quote is a lifetime; a lone quote (the skewed axis B' of
			// 002 L988) is punctuation.
			if j := charEnd(src, i); j > 0 {
				toks = append(toks, token{tChar, src[i:j], i})
				i = j
			} else if i+1 < len(src) && isIdentStart(src[i+1]) {
				j := i + 2
				for j < len(src) && isIdentChar(src[j]) {
					j++
				}
				toks = append(toks, token{tLife, src[i:j], i})
				i = j
			} else {
				toks = append(toks, token{tPunct, "'", i})
				i++
			}
		case strings.ContainsRune("()[]{}<>,;:.!#&*+-/%=|^?@$~", rune(c)):
			n := 1
			if i+1 < len(src) {
				switch src[i : i+2] {
				case "::", "->", "=>":
					n = 2
				}
			}
			toks = append(toks, token{tPunct, src[i : i+n], i})
			i += n
		default:
			return fail(i, "unexpected character %q", rune(c))
		}
	}
	toks = append(toks, token{tEOF, "", len(src)})
	return toks, dirs, 0, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// number scans a numeric literal starting at i: integers in any base with
// underscores and a type suffix, and floats with a fraction, an exponent or
// an f32/f64 suffix.
func number(src string, i int) (int, tokKind) {
	j := i
	if strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0o") || strings.HasPrefix(src[i:], "0b") {
		j += 2
		for j < len(src) && (isIdentChar(src[j])) {
			j++
		}
		return j, tInt
	}
	for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
		j++
	}
	kind := tInt
	// A fraction needs a digit after the dot: `0..8` is a range and
	// `x.0.1` a field access.
	if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
		kind = tFloat
		j++
		for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && src[k] >= '0' && src[k] <= '9' {
			kind = tFloat
			j = k
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '_') {
				j++
			}
		}
	}
	// Type suffix.
	if j < len(src) && isIdentStart(src[j]) {
		k := j
		for k < len(src) && isIdentChar(src[k]) {
			k++
		}
		if s := src[j:k]; s == "f32" || s == "f64" {
			kind = tFloat
		}
		j = k
	}
	return j, kind
}

// rawString scans r"..." or r#"..."# starting at i; it returns 0 when the
// text is not a raw string (an identifier starting with r or b).
func rawString(src string, i int) (int, error) {
	j := i + 1
	if src[i] == 'b' {
		// b"...": a byte string.
		k := j + 1
		for k < len(src) && src[k] != '"' {
			if src[k] == '\\' {
				k++
			}
			k++
		}
		if k >= len(src) {
			return 0, fmt.Errorf("unterminated byte string literal")
		}
		return k + 1, nil
	}
	hashes := 0
	for j < len(src) && src[j] == '#' {
		hashes++
		j++
	}
	if j >= len(src) || src[j] != '"' {
		if hashes > 0 {
			return 0, fmt.Errorf("malformed raw string literal")
		}
		return 0, nil
	}
	end := "\"" + strings.Repeat("#", hashes)
	k := strings.Index(src[j+1:], end)
	if k < 0 {
		return 0, fmt.Errorf("unterminated raw string literal")
	}
	return j + 1 + k + len(end), nil
}

// charEnd returns the end of a character literal starting at i, or 0.
func charEnd(src string, i int) int {
	j := i + 1
	if j >= len(src) {
		return 0
	}
	if src[j] == '\\' {
		if j+2 >= len(src) {
			return 0
		}
		k := strings.IndexByte(src[j+2:], '\'')
		if k < 0 || k > 10 {
			return 0
		}
		return j + 2 + k + 1
	}
	// One UTF-8 character then a quote.
	n := 1
	for n < 4 && j+n < len(src) && src[j+n]&0xC0 == 0x80 {
		n++
	}
	if j+n < len(src) && src[j+n] == '\'' {
		return j + n + 1
	}
	return 0
}

// Token is a token of a Rust source as the reader sees it: its text and
// the byte offset of its first character.
type Token struct {
	Text string
	Off  int
}

// Tokens splits src into the tokens Read parses, comments dropped; on a
// lexical error, off is the byte offset of the error.
func Tokens(src string) (toks []Token, off int, err error) {
	ts, _, off, err := lex(src)
	if err != nil {
		return nil, off, err
	}
	for _, t := range ts {
		if t.kind != tEOF {
			toks = append(toks, Token{Text: t.text, Off: t.off})
		}
	}
	return toks, 0, nil
}
