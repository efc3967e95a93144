package search

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"tcpmap/constraints"
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
	e, err := constraints.NewEncoding(s.Space)
	switch {
	case errors.Is(err, constraints.ErrNoEncoding):
	case err != nil:
		return nil, err
	default:
		if e.Formula().Solve(timeout) == constraints.Unsat {
			x.Rules = constraints.Core(e, nil, timeout).Rules
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
	if e, err := constraints.NewEncoding(t.Space); err == nil && e.Formula().Solve(0) == constraints.Unsat {
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
// padded to those sizes (constraints.Problem.Pad).
func (s *Space) resized(sizes map[string]int) (*Space, error) {
	p, err := s.P.Pad(sizes)
	if err != nil {
		return nil, err
	}
	r, err := NewSpace(p, s.Spec)
	if r != nil {
		r.Library = s.Library
		// The padded space keeps s's choices.
		r = r.WithSplitK(s.SplitK()).WithTileK(s.TileK()).WithClusterK(s.ClusterK()).
			WithRowsOuter(s.RowsOuter()).WithDealsOut(s.DealsOut()).WithClustersInner(s.ClustersInner()).
			WithAllOrders(s.AllOrders())
	}
	return r, err
}

// Sizes returns the relaxation's padded sizes by axis name.
func (r Relaxation) Sizes() map[string]int {
	sizes := make(map[string]int, len(r.Pads))
	for _, p := range r.Pads {
		sizes[p.Axis] = p.To
	}
	return sizes
}

// padCaps are the growths SolvePadded allows each padded axis, in order:
// an axis is padded to a multiple of the largest power of two that keeps
// it within the cap (1/32 first: I = 1500 to 1536 = 3·2⁹), the next cap
// when no plan exists at the last.
var padCaps = []float64{1.0 / 32, 1.0 / 8, 1.0 / 2, 1}

// alignedPadding returns the padding of s's axes at growth cap: each axis
// whose factor of two is below a 64-byte packet's elements (32 bf16,
// 002 L4099: below it an axis fills no packet and spreads over few slices)
// padded to the next multiple of the largest power of two within
// size·(1 + cap); nil when no axis grows.
func (s *Space) alignedPadding(cap float64) *Relaxation {
	r := &Relaxation{}
	for _, ax := range s.P.Axes {
		n := ax.Size
		if n&-n >= s.PacketElems(Single) {
			continue
		}
		best := n
		for k := 1; k <= 62 && 1<<k <= 2*n; k++ {
			m := (n + 1<<k - 1) >> k << k
			if float64(m) <= float64(n)*(1+cap) {
				best = m
			}
		}
		if best > n {
			r.Pads = append(r.Pads, Pad{Axis: ax.Name, From: n, To: best})
		}
	}
	if len(r.Pads) == 0 {
		return nil
	}
	return r
}

// AlignedPaddings returns the paddings SolvePadded tries first, in order:
// each axis whose factor of two is below 32 padded to a multiple of the
// largest power of two within a growth cap (padCaps: 1/32, 1/8, 1/2, 1).
// They factor well where the smallest paddings that have a legal candidate
// (Infeasibility.Relaxations) may not: odd-gemm's 1504 × 2504 × 1000 plans
// 78× slower than 1536 × 2560 × 1024.
func AlignedPaddings(s *Space) []Relaxation {
	var out []Relaxation
	seen := map[string]bool{}
	for _, c := range padCaps {
		if r := s.alignedPadding(c); r != nil && !seen[r.String()] {
			seen[r.String()] = true
			out = append(out, *r)
		}
	}
	return out
}

// SolvePadded plans a space with no legal candidate at the first of the
// paddings tries that plans (issue 14 §2, "Any shape";
// constraints.Problem.Pad: the kernel stores its tensors padded, zero in
// the contracted axes' padding): each is searched with run and opts, in
// order. The plan is optimal within its padded mapspace; the padding is
// chosen by the order of tries (AlignedPaddings, then the relaxations of
// Infeasible), not searched. It returns that search's result, whose Space
// is the padded one, and the padding; a nil result when none plans. A
// stopped search ends the trials with its result (a plan or not).
func SolvePadded(s *Space, tries []Relaxation, run func(*Space, Options) (*Result, error), opts Options) (*Result, *Relaxation, error) {
	for i := range tries {
		r := &tries[i]
		ps, err := s.resized(r.Sizes())
		if err != nil {
			return nil, nil, err
		}
		res, err := run(ps, opts)
		if err != nil {
			return nil, nil, err
		}
		if res.Best != nil || !res.Stats.Complete {
			return res, r, nil
		}
	}
	return nil, nil, nil
}

// SolveAnyShape searches s with run and opts; when the whole space is
// searched and holds no legal candidate, it plans the space padded (with
// pad set): SolvePadded over AlignedPaddings, then, when none of those
// plans, over the relaxations of Infeasible, which also says why the
// space is empty (why, nil when it was not needed). The paddings' searches
// share what is left of opts.Timeout. res is the padded search's result
// (its Space the padded one) when a padding planned or its search stopped
// early, relax that padding; otherwise res is s's own result.
func SolveAnyShape(s *Space, run func(*Space, Options) (*Result, error), opts Options, pad bool) (res *Result, relax *Relaxation, why *Infeasibility, err error) {
	start := time.Now()
	if res, err = run(s, opts); err != nil || res.Best != nil || !res.Stats.Complete {
		return res, nil, nil, err
	}
	left := opts
	remaining := func() {
		if opts.Timeout > 0 {
			if left.Timeout = opts.Timeout - time.Since(start); left.Timeout <= 0 {
				left.Timeout = time.Nanosecond
			}
		}
	}
	var pres *Result
	if pad {
		remaining()
		if pres, relax, err = SolvePadded(s, AlignedPaddings(s), run, left); err != nil {
			return nil, nil, nil, err
		}
	}
	if pres == nil {
		if why, err = Infeasible(s, res, 0); err != nil {
			return nil, nil, nil, err
		}
		if pad {
			remaining()
			if pres, relax, err = SolvePadded(s, why.Relaxations, run, left); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if pres != nil {
		return pres, relax, why, nil
	}
	return res, nil, why, nil
}
