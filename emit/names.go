package emit

import (
	"strconv"
	"strings"

	"tcpmap/model/kernel"
)

// Tensor names become Rust variables. A kernel program may name a tensor
// anything (the planner keeps a workload's names: `K_new`, `Q`,
// `W_router`); the emitted file needs snake_case identifiers that are no
// keyword and no name the file uses itself. rustNames maps every name to
// one, deterministically and one to one, and the file records each changed
// name in a `// tcpmap:name IDENT ORIGINAL` line, which Read uses to give
// the tensors their names back.

// namePair is one renamed tensor: the identifier the file uses and the
// program's name.
type namePair struct{ ident, orig string }

// snake maps a name to a snake_case identifier: ASCII letters lower-cased,
// any character that cannot be in an identifier replaced by '_', a leading
// digit prefixed with 't', and a keyword or a name the file uses itself
// suffixed with '_'. It distributes over the suffixes the loop form and the
// host program append (`_t0`, `_dm1`, `_hbm`), which are snake_case
// already: snake(a + s) = snake(a) + s.
func snake(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c - 'A' + 'a')
		case isIdentChar(c):
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "t" + s
	}
	if identOK(s) != nil {
		s += "_"
	}
	return s
}

// rustNames returns p with every tensor renamed to a Rust identifier (p
// itself when no name changes) and the renamed pairs in tensor order. Two
// names that map to one identifier (`Q` and `q`) are told apart by a
// number: the later one gets `_2`, `_3`, ...
func rustNames(p *kernel.Program) (*kernel.Program, []namePair, error) {
	ident := map[string]string{}
	used := map[string]bool{}
	var pairs []namePair
	// Tile views after the other tensors: a view `<base>_t<k>` takes its
	// base's identifier and its own suffix, so that the loop form's views
	// (kernel.TileLoop.Unroll names them after their base) keep their names.
	order := make([]*kernel.Tensor, 0, len(p.Tensors))
	for _, views := range []bool{false, true} {
		for _, t := range p.Tensors {
			if (t.View != "") == views {
				order = append(order, t)
			}
		}
	}
	for _, t := range order {
		if _, dup := ident[t.Name]; dup {
			continue // Validate reports it
		}
		s := snake(t.Name)
		if b, ok := ident[t.View]; ok && strings.HasPrefix(t.Name, t.View) {
			if suf := t.Name[len(t.View):]; snake("x"+suf) == "x"+suf {
				s = b + suf
			}
		}
		if used[s] {
			base := s
			for k := 2; used[s]; k++ {
				s = base + "_" + strconv.Itoa(k)
			}
		}
		used[s] = true
		ident[t.Name] = s
	}
	for _, t := range p.Tensors {
		if s := ident[t.Name]; s != t.Name {
			pairs = append(pairs, namePair{ident: s, orig: t.Name})
		}
	}
	if len(pairs) == 0 {
		return p, nil, nil
	}
	q, err := p.Rename(func(n string) string {
		if s, ok := ident[n]; ok {
			return s
		}
		return n
	})
	return q, pairs, err
}

// isIdentChar reports whether c may continue a Rust identifier (ASCII).
func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
