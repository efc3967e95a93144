package search

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"tcpmap/constraints"
	"tcpmap/model/mapping"
)

// Explained infeasibility (issue 14 §2): when a search finds no legal
// candidate, the planner says why — the minimal set of the mapspace's rules
// that excludes every skeleton (an unsat core over the rule literals of the
// SAT encoding, minimized by deletion: explainCore), or the engine rules
// that rejected every candidate built — and the nearest relaxations that
// have a legal plan: an axis padded to a size the hardware's powers of two
// divide (`pad K from 999 to 1024`).

// Pad is one axis padded (`#`) from its size to a larger one.
type Pad struct {
	Axis     string
	From, To int
}

// Relaxation is one change of the workload under which the space has a
// legal candidate: some of its axes padded.
type Relaxation struct {
	Pads []Pad
}

func (r Relaxation) String() string {
	var parts []string
	for _, p := range r.Pads {
		parts = append(parts, fmt.Sprintf("pad %s from %d to %d (+%.1f%%)", p.Axis, p.From, p.To, 100*float64(p.To-p.From)/float64(p.From)))
	}
	return strings.Join(parts, ", ")
}

// growth is the factor by which the relaxation grows the iteration space.
func (r Relaxation) growth() float64 {
	g := 1.0
	for _, p := range r.Pads {
		g *= float64(p.To) / float64(p.From)
	}
	return g
}

// Infeasibility says why a space has no legal candidate.
type Infeasibility struct {
	// Rules is a minimal set of the mapspace's rules that together exclude
	// every skeleton; nil when skeletons exist.
	Rules []RuleViolation
	// Engine lists the engine rules that rejected the candidates built,
	// most frequent first, when skeletons exist but none of their
	// candidates is legal.
	Engine []RuleStat
	// Relaxations are the nearest paddings of one axis that have a legal
	// plan, smallest padding first.
	Relaxations []Relaxation
}

// String prints the explanation, one reason or relaxation a line.
func (x *Infeasibility) String() string {
	var b strings.Builder
	if len(x.Rules) > 0 {
		b.WriteString("no candidate: these rules together exclude every mapping:\n")
		for _, r := range x.Rules {
			fmt.Fprintf(&b, "  %s (%s): %s\n", r.Rule, r.Cite, r.Text)
		}
	}
	if len(x.Engine) > 0 {
		b.WriteString("no legal candidate: every candidate built broke an engine rule:\n")
		for _, r := range x.Engine {
			fmt.Fprintf(&b, "  %-14s %6d (%s)  e.g. %s\n", r.Rule, r.Count, r.Cite, r.Example)
		}
	}
	if len(x.Relaxations) == 0 {
		b.WriteString(NoRelaxation + "\n")
		return b.String()
	}
	b.WriteString("nearest legal relaxations:\n")
	for _, r := range x.Relaxations {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	return b.String()
}

// NoRelaxation says that none of the paddings relaxations tries plans.
const NoRelaxation = "no padding tried plans (each axis to a multiple of 2, 4, … up to its next power of two, alone or all together)"

// relaxProbe is how many candidates of a relaxed space are built, lowered
// and priced, in enumeration order, to find a legal one: a count, so the
// relaxations found do not depend on the machine's speed.
const relaxProbe = 256

// Infeasible explains a space none of whose candidates is legal. res is the
// search's result on s (its statistics name the engine rules); timeout
// bounds the unsat-core minimization (0: none).
func Infeasible(s *Space, res *Result, timeout time.Duration) (*Infeasibility, error) {
	x := &Infeasibility{}
	e, err := newSatSpace(s)
	switch {
	case errors.Is(err, errNoEncoding):
	case err != nil:
		return nil, err
	default:
		if e.p.Solve(timeout) == constraints.Unsat {
			x.Rules = explainCore(e, nil, timeout).Rules
		}
	}
	if len(x.Rules) == 0 && res != nil {
		x.Engine = res.Stats.Rules()
	}
	x.Relaxations = s.relaxations()
	return x, nil
}

// relaxations tries, for each axis, its size padded up to the next
// multiple of 2, 4, 8, … up to the next power of two, smallest first, and
// keeps the first with a legal candidate; when no single axis does, every
// axis padded to the next multiple of 2, 4, 8, … together. Smallest
// growth of the iteration space first.
func (s *Space) relaxations() []Relaxation {
	var out []Relaxation
	for _, ax := range s.P.Axes {
		for _, n := range paddedSizes(ax.Size) {
			r := Relaxation{Pads: []Pad{{Axis: ax.Name, From: ax.Size, To: n}}}
			if s.relaxedLegal(r) {
				out = append(out, r)
				break
			}
		}
	}
	for m := 2; len(out) == 0 && m <= 1<<20; m *= 2 {
		var r Relaxation
		done := true
		for _, ax := range s.P.Axes {
			if n := (ax.Size + m - 1) / m * m; n != ax.Size {
				r.Pads = append(r.Pads, Pad{Axis: ax.Name, From: ax.Size, To: n})
			}
			done = done && ax.Size <= m
		}
		if len(r.Pads) > 0 && s.relaxedLegal(r) {
			out = append(out, r)
		}
		if done {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].growth() < out[j].growth() })
	return out
}

// relaxedLegal reports whether the space with r's paddings has a legal
// candidate among its first relaxProbe (the skeleton encoding, when it
// covers the space, first rules out a structurally empty one).
func (s *Space) relaxedLegal(r Relaxation) bool {
	sizes := map[string]int{}
	for _, p := range r.Pads {
		sizes[p.Axis] = p.To
	}
	t, err := s.resized(sizes)
	if err != nil {
		return false
	}
	if e, err := newSatSpace(t); err == nil && e.p.Solve(0) == constraints.Unsat {
		return false
	}
	ev, err := newEvaluator(t, &Stats{Illegal: map[string]*RuleStat{}})
	if err != nil {
		return false
	}
	legal, i := false, 0
	t.Enumerate(func(c Candidate) bool {
		legal = ev.evaluate(i, &c, nil) != nil
		i++
		return !legal && i < relaxProbe
	})
	return legal
}

// paddedSizes lists n rounded up to multiples of 2, 4, 8, … up to the next
// power of two, each larger than n, without repeats, ascending.
func paddedSizes(n int) []int {
	if n <= 1 {
		return nil // a size-1 axis has no digit to pad
	}
	var out []int
	for m := 2; ; m *= 2 {
		p := (n + m - 1) / m * m
		if p > n && (len(out) == 0 || p > out[len(out)-1]) {
			out = append(out, p)
		}
		if m >= n {
			return out
		}
	}
}

// resized returns the space of s's problem with the axes named in sizes
// resized. Only operands stored plainly (each axis whole, row-major) are
// resized: a layout the workload states would no longer match.
func (s *Space) resized(sizes map[string]int) (*Space, error) {
	p := *s.P
	p.Axes = append([]Axis(nil), s.P.Axes...)
	var decl []mapping.Axis
	for a := range p.Axes {
		if n, ok := sizes[p.Axes[a].Name]; ok {
			p.Axes[a].Size = n
		}
		decl = append(decl, mapping.Axis{Name: p.Axes[a].Name, Size: p.Axes[a].Size})
	}
	var err error
	if p.Decl, err = mapping.NewAxes(decl...); err != nil {
		return nil, err
	}
	for t, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		if !s.plain[t] {
			return nil, fmt.Errorf("search: %s has a stated layout", o.Name)
		}
		parts := make([]*mapping.Expr, 0, len(o.Axes))
		for _, name := range s.hbmNames(t) {
			parts = append(parts, mapping.Sym(name, p.Axes[p.axis(name)].Size))
		}
		o.Layout = mapping.Identity()
		if len(parts) > 0 {
			o.Layout = mapping.Pair(parts...)
		}
	}
	r, err := NewSpace(&p, s.Spec)
	if r != nil {
		r.NoDualChannel = s.NoDualChannel
	}
	return r, err
}

// hbmNames returns tensor t's axes in its HBM layout's order, major first.
func (s *Space) hbmNames(t int) []string {
	var out []string
	for _, a := range s.hbm[t] {
		out = append(out, s.P.Axes[a].Name)
	}
	return out
}
