// Package citecheck checks the manual citations in the tree's comments
// mechanically.
//
// A citation names a seed of the manual and its lines: "002 L1630",
// "002 L1234-1240", "(002, L1996)", "002 L4391, L4533". A quoted
// citation is one that comes with a snippet of the manual in double quotes
// or backquotes, either just before it ("Type casting requires ..."
// (002 L1996)) or just after it (002 L1630: "..."). Only spaces, commas
// and an opening parenthesis, or a colon after the citation, may stand
// between the quote and the citation.
//
// [Scan] finds the citations in the comments of every Go file under a
// directory (and, for their lines only, in non-test string literals),
// [LoadManual] reads the seeds, and [Manual.Check] tells whether a
// citation's lines exist and whether its quote is found at them, within
// [Tolerance] lines. The rules a quote is checked by are documented on
// [Manual.Check].
package citecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Tolerance is how many lines a quote may lie outside the lines it cites:
// the quoted text must be found within lines lo-Tolerance … hi+Tolerance
// of a cited range lo-hi. One line forgives a quote that starts at the end
// of the line before; a wider window would pass the wrong citations this
// check exists for (the Hello GEMM's `type Row = m![J % 8]` cited at L481
// is at L484).
const Tolerance = 1

// Range is a span of cited lines, inclusive; Lo == Hi for a single line.
type Range struct{ Lo, Hi int }

// String prints the range as a citation does: "L12" or "L12-14".
func (r Range) String() string {
	if r.Lo == r.Hi {
		return "L" + strconv.Itoa(r.Lo)
	}
	return fmt.Sprintf("L%d-%d", r.Lo, r.Hi)
}

// Citation is one citation found in a comment or a string literal.
type Citation struct {
	File   string  // path relative to the scanned root, slash-separated
	Line   int     // line of the citation in File
	Seed   string  // "002"
	Ranges []Range // the cited lines
	Text   string  // the citation as written, e.g. "002 L1234-1240"
	Quote  string  // the quoted snippet of the manual, "" when none
	Code   bool    // the quote is in backquotes (code), not double quotes
}

// String prints where the citation is and how it is written.
func (c Citation) String() string {
	return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text)
}

// citeRE matches a citation: a seed, an optional comma, and one or more
// line ranges ("L12", "L12-14", "L12-L14") separated by commas.
var citeRE = regexp.MustCompile(`\b(00[0-4]),? L(\d+)(?:[-–]L?(\d+))?((?:,\s*L\d+(?:[-–]L?\d+)?)*)`)

var moreRE = regexp.MustCompile(`L(\d+)(?:[-–]L?(\d+))?`)

// Separators allowed between a quote and its citation.
var (
	colonRE  = regexp.MustCompile(`^\s*:\s*$`) // 002 L1:␣"quote"
	beforeRE = regexp.MustCompile(`^[\s,(]*$`) // "quote",␣(002 L1)
	afterRE  = regexp.MustCompile(`^[\s,(]*$`) // 002 L1␣("quote"
)

// Scan returns the citations in the comments of the Go files under root,
// and in the string literals of its non-test files (their lines only: no
// quote is attached to a citation in a string), in file order.
// Directories named testdata or starting with a dot are skipped.
func Scan(root string) ([]Citation, error) {
	var out []Citation
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, g := range f.Comments {
			var b strings.Builder
			for i, c := range g.List {
				if i > 0 {
					b.WriteByte('\n')
				}
				t := c.Text
				if strings.HasPrefix(t, "//") {
					t = t[2:]
				} else {
					t = strings.TrimSuffix(t[2:], "*/")
				}
				b.WriteString(t)
			}
			out = append(out, scanText(b.String(), rel, fset.Position(g.Pos()).Line)...)
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil // tests hold deliberately bad citations in strings
		}
		// String literals: rule citations and error messages. Only their
		// lines are checked; a quote inside a string is not attached.
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, c := range scanText(v, rel, fset.Position(lit.Pos()).Line) {
				c.Quote, c.Code = "", false
				out = append(out, c)
			}
			return true
		})
		return nil
	})
	return out, err
}

// scanText finds the citations in the text of one comment group that
// starts at line first of file.
func scanText(text, file string, first int) []Citation {
	// Quotes: the double quotes paired in order, and the backquotes.
	var quotes [][2]int // [open, close] byte offsets of the quote marks
	for _, mark := range []byte{'"', '`'} {
		open := -1
		for i := 0; i < len(text); i++ {
			if text[i] != mark {
				continue
			}
			if open < 0 {
				open = i
			} else {
				quotes = append(quotes, [2]int{open, i})
				open = -1
			}
		}
	}
	sort.Slice(quotes, func(i, j int) bool { return quotes[i][0] < quotes[j][0] })
	var out []Citation
	used := map[int]bool{} // quotes attached to a citation already
	ms := citeRE.FindAllStringSubmatchIndex(text, -1)
	cites := make([]Citation, len(ms))
	for k, m := range ms {
		c := Citation{
			File: file,
			Line: first + strings.Count(text[:m[0]], "\n"),
			Seed: text[m[2]:m[3]],
			Text: text[m[0]:m[1]],
		}
		lo, _ := strconv.Atoi(text[m[4]:m[5]])
		hi := lo
		if m[6] >= 0 {
			hi, _ = strconv.Atoi(text[m[6]:m[7]])
		}
		c.Ranges = append(c.Ranges, Range{lo, hi})
		for _, mm := range moreRE.FindAllStringSubmatch(text[m[8]:m[9]], -1) {
			lo, _ := strconv.Atoi(mm[1])
			hi := lo
			if mm[2] != "" {
				hi, _ = strconv.Atoi(mm[2])
			}
			c.Ranges = append(c.Ranges, Range{lo, hi})
		}
		cites[k] = c
	}
	// A quote belongs to the citation just before it when a colon stands
	// between them (002 L1630: "..."), else to the citation just after it
	// ("..." (002 L1996)), else to the citation just before it (002 L4391
	// "...").
	attach := func(k, qi int) {
		if !used[qi] && cites[k].Quote == "" {
			cites[k].Quote = text[quotes[qi][0]+1 : quotes[qi][1]]
			cites[k].Code = text[quotes[qi][0]] == '`'
			used[qi] = true
		}
	}
	for k, m := range ms {
		for qi, q := range quotes {
			if sep := text[min(m[1], q[0]):q[0]]; q[0] >= m[1] && colonRE.MatchString(sep) {
				attach(k, qi)
			}
		}
	}
	for k, m := range ms {
		for qi, q := range quotes {
			if q[1] < m[0] && beforeRE.MatchString(text[q[1]+1:m[0]]) {
				attach(k, qi)
			}
		}
	}
	for k, m := range ms {
		for qi, q := range quotes {
			if q[0] >= m[1] && afterRE.MatchString(text[m[1]:q[0]]) {
				attach(k, qi)
			}
		}
	}
	out = append(out, cites...)
	return out
}

// Manual is the text of the manual's seeds, by seed number ("002").
type Manual struct {
	seeds map[string]*seed
}

type seed struct {
	lines []string
	text  string // the normalized lines, concatenated
	start []int  // start[i] = offset of line i+1 in text
}

// LoadManual reads the seeds in dir, files named like 002_<hash>.txt.
// It fails when dir holds no seed.
func LoadManual(dir string) (*Manual, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "00[0-9]_*.txt"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no seed files (00N_*.txt) in %s", dir)
	}
	m := &Manual{seeds: map[string]*seed{}}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s := &seed{lines: strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")}
		var t strings.Builder
		for _, l := range s.lines {
			s.start = append(s.start, t.Len())
			t.WriteString(Normalize(l))
		}
		s.text = t.String()
		m.seeds[filepath.Base(p)[:3]] = s
	}
	return m, nil
}

// Lines returns the line count of a seed, 0 when the manual lacks it.
func (m *Manual) Lines(seedName string) int {
	s := m.seeds[seedName]
	if s == nil {
		return 0
	}
	return len(s.lines)
}

// latex rewrites the manual's inline LaTeX to the plain text a comment
// quotes: \(m = 4\) is m = 4, \times is ×, \rightarrow is →.
var latex = strings.NewReplacer(`\(`, "", `\)`, "", "$$", "", `\text{`, "",
	`\times`, "×", `\rightarrow`, "→", "->", "→",
	"‘", "'", "’", "'", "“", `"`, "”", `"`, "–", "-", "—", "-")

// Normalize prepares text for comparison: inline LaTeX becomes plain
// text, typographic quotes and dashes become ASCII, arrows become →,
// letters become lower case, and all white space goes: the manual's text
// was extracted with the spaces around its code and bold spans lost
// ("i4depth 7"), and a comment rewraps what it quotes.
func Normalize(s string) string {
	s = latex.Replace(s)
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsSpace(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// identRE matches a name.
var identRE = regexp.MustCompile(`^[\pL_][\pL\pN_]*$`)

// ellipsisRE matches an elision inside a quote.
var ellipsisRE = regexp.MustCompile(`\s*(?:\[\.\.\.\]|\[…\]|\.\.\.|…)\s*`)

// fragments splits a quote at its elisions into normalized pieces.
func fragments(quote string) []string {
	var out []string
	for _, f := range ellipsisRE.Split(quote, -1) {
		if f = Normalize(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Check reports what is wrong with a citation, or nil.
//
// Every cited line must exist in its seed. A quote is split at its
// elisions ("...", "…", "[...]"); each piece, with white space collapsed,
// typographic quotes and dashes made ASCII and case ignored, must occur in
// the seed's text in order, within the lines of one cited range widened
// by [Tolerance] lines on each side (the lines joined by a space). When a
// quote is not found there, the error names the lines where it is found,
// if anywhere.
//
// A quote in backquotes is code. It is checked the same way when it occurs
// somewhere in the seed; when it occurs nowhere, or elides with "...", it
// is schematic (a signature such as `tile::<dim, n, _>(t)`, not a copy of
// the manual's text), and a single name (`axis`) is a name; neither is
// checked.
func (m *Manual) Check(c Citation) error {
	s := m.seeds[c.Seed]
	if s == nil {
		return fmt.Errorf("%s: seed %s is not in the manual", c, c.Seed)
	}
	for _, r := range c.Ranges {
		if r.Lo < 1 || r.Hi < r.Lo || r.Hi > len(s.lines) {
			return fmt.Errorf("%s: %s is outside seed %s (L1-%d) or reversed", c, r, c.Seed, len(s.lines))
		}
	}
	if c.Code && (identRE.MatchString(c.Quote) || strings.Contains(c.Quote, "...")) {
		return nil // a name, or schematic code
	}
	frags := fragments(c.Quote)
	if len(frags) == 0 {
		return nil
	}
	for _, r := range c.Ranges {
		lo := max(r.Lo-Tolerance, 1)
		hi := min(r.Hi+Tolerance, len(s.lines))
		if s.find(frags, s.start[lo-1], s.end(hi)) >= 0 {
			return nil
		}
	}
	// Name the occurrence nearest the cited lines.
	best, dist := -1, 0
	for at := s.find(frags, 0, len(s.text)); at >= 0; at = s.find(frags, at+1, len(s.text)) {
		l, d := s.lineAt(at), -1
		for _, r := range c.Ranges {
			if e := max(r.Lo-l, l-r.Hi, 0); d < 0 || e < d {
				d = e
			}
		}
		if best < 0 || d < dist {
			best, dist = at, d
		}
	}
	if best >= 0 {
		first, last := s.lineAt(best), s.lineAt(s.findEnd(frags, best)-1)
		where := "L" + strconv.Itoa(first)
		if last != first {
			where += "-" + strconv.Itoa(last)
		}
		return fmt.Errorf("%s: quote %q is at %s %s", c, c.Quote, c.Seed, where)
	}
	if c.Code {
		return nil // schematic code, not a quote
	}
	return fmt.Errorf("%s: quote %q is not in seed %s", c, c.Quote, c.Seed)
}

// end returns the offset just past line n (1-based) in s.text.
func (s *seed) end(n int) int {
	if n >= len(s.start) {
		return len(s.text)
	}
	return s.start[n]
}

// lineAt returns the 1-based line holding offset off of s.text.
func (s *seed) lineAt(off int) int {
	return sort.Search(len(s.start), func(i int) bool { return s.start[i] > off })
}

// find returns the offset of the first piece when the pieces occur in
// order within s.text[from:to], else -1.
func (s *seed) find(frags []string, from, to int) int {
	w := s.text[from:to]
	for start := 0; ; {
		i := strings.Index(w[start:], frags[0])
		if i < 0 {
			return -1
		}
		i += start
		rest, ok := w[i+len(frags[0]):], true
		for _, f := range frags[1:] {
			j := strings.Index(rest, f)
			if j < 0 {
				ok = false
				break
			}
			rest = rest[j+len(f):]
		}
		if ok {
			return from + i
		}
		start = i + 1
	}
}

// findEnd returns the offset just past the last piece of the match of
// frags at off.
func (s *seed) findEnd(frags []string, off int) int {
	end := off + len(frags[0])
	for _, f := range frags[1:] {
		end += strings.Index(s.text[end:], f) + len(f)
	}
	return end
}
