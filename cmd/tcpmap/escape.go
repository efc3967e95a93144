package main

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Terminal safety. Names come from files (workloads, kernels, plans, hardware
// specs) and can hold characters that act on a terminal instead of
// printing: NUL, escape sequences that recolor or rewrite the screen, a
// carriage return that overwrites the line, a right-to-left override that
// reverses what follows. Everything a command prints, text or JSON, goes
// through an escaper that writes them as escapes (`\x1b`, `\u202e`, a
// surrogate pair beyond U+FFFF; invalid UTF-8 bytes as `\xff`).
// Tabs and newlines, which the output uses itself, pass. JSON output stays
// valid JSON: its encoder already escapes the ASCII control characters, and
// a `\uXXXX` escape inside a JSON string is the same string.

// escaper writes to w with the characters above escaped. A UTF-8 sequence
// split across two writes is held until the next write (or Flush).
type escaper struct {
	w       io.Writer
	pending []byte
	buf     []byte
}

// newEscaper returns an escaper writing to w.
func newEscaper(w io.Writer) *escaper { return &escaper{w: w} }

// Write escapes b and writes it; it reports len(b) written unless the
// underlying writer fails.
func (e *escaper) Write(b []byte) (int, error) {
	data := b
	if len(e.pending) > 0 {
		data = append(e.pending, b...)
		e.pending = nil
	}
	out := e.buf[:0]
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c == '\n' || c == '\t' || c >= 0x20 && c != 0x7f {
				out = append(out, c)
			} else {
				out = fmt.Appendf(out, `\x%02x`, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(data[i:]) {
			e.pending = append([]byte(nil), data[i:]...)
			break
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case escaped(r) && r > 0xffff:
			// A surrogate pair, as JSON spells it.
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		case escaped(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	e.buf = out
	if _, err := e.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush writes a UTF-8 sequence left incomplete by the last write, as
// escaped bytes.
func (e *escaper) Flush() error {
	if len(e.pending) == 0 {
		return nil
	}
	var out []byte
	for _, c := range e.pending {
		out = fmt.Appendf(out, `\x%02x`, c)
	}
	e.pending = nil
	_, err := e.w.Write(out)
	return err
}

// escaped reports whether a non-ASCII rune acts on the terminal: a C1
// control, a format character (the bidirectional overrides and isolates,
// zero-width characters, the byte order mark) or a line or paragraph
// separator.
func escaped(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}
