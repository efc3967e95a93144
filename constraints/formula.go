package constraints

import (
	"context"
	"fmt"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/logic"
	"github.com/go-air/gini/z"
)

// Lit is a literal of a Formula: a variable or its negation.
type Lit = z.Lit

// Rule labels a group of clauses: every clause of the group is guarded by
// the rule's activation literal, so a solve can assume the rule, and an
// unsatisfiable solve names the rules its proof needs (Formula.Why).
type Rule struct {
	// ID is the rule's name (e.g. "SPACE-SLICES", or an engines rule ID
	// such as "FETCH-R3" for a learned clause).
	ID string
	// Cite is the manual's lines the rule comes from (`002 L131`).
	Cite string
	// Text says what the rule requires.
	Text string
}

// Status is the outcome of a solve.
type Status int

// The solve outcomes.
const (
	Unknown Status = 0  // stopped by the time limit
	Sat     Status = 1  // a model exists
	Unsat   Status = -1 // no model under the assumptions
)

func (s Status) String() string {
	switch s {
	case Sat:
		return "sat"
	case Unsat:
		return "unsat"
	}
	return "unknown"
}

// Formula is a SAT problem built incrementally: variables, clauses grouped
// under rules, weighted sums compared with bounds (sorting networks,
// logic.CardSort), solved under assumptions with gini.
type Formula struct {
	g    *gini.Gini
	c    *logic.C
	mark []int8
	// rules are the rules by activation literal; ruleOf indexes them.
	rules  []Rule
	acts   []Lit
	ruleOf map[Lit]int
	// clauses counts the clauses added (structural and learned).
	clauses int
	buf     []Lit
}

// NewFormula returns an empty formula.
func NewFormula() *Formula {
	return &Formula{g: gini.New(), c: logic.NewC(), ruleOf: map[Lit]int{}}
}

// Var returns a fresh variable's positive literal.
func (p *Formula) Var() Lit { return p.c.Lit() }

// True is the constant true literal.
func (p *Formula) True() Lit { return p.c.T }

// Rule registers a rule and returns its activation literal: clauses added
// under it hold only when the literal is assumed (Solve assumes every rule
// unless told otherwise).
func (p *Formula) Rule(r Rule) Lit {
	a := p.Var()
	p.ruleOf[a] = len(p.rules)
	p.rules = append(p.rules, r)
	p.acts = append(p.acts, a)
	return a
}

// RuleOf returns the rule of an activation literal.
func (p *Formula) RuleOf(a Lit) (Rule, bool) {
	i, ok := p.ruleOf[a]
	if !ok {
		return Rule{}, false
	}
	return p.rules[i], true
}

// Rules returns every rule's activation literal, in registration order.
func (p *Formula) Rules() []Lit { return append([]Lit(nil), p.acts...) }

// Clauses returns the number of clauses added.
func (p *Formula) Clauses() int { return p.clauses }

// Clause adds the clause (¬rule ∨ lits...); rule 0 adds it unguarded.
// Literals of circuit outputs (Sum bounds) have their defining circuit
// added first.
func (p *Formula) Clause(rule Lit, lits ...Lit) {
	p.mark, _ = p.c.CnfSince(p.g, p.mark, lits...)
	if rule != 0 {
		p.g.Add(rule.Not())
	}
	for _, m := range lits {
		p.g.Add(m)
	}
	p.g.Add(0)
	p.clauses++
}

// ExactlyOne requires exactly one of lits under rule (pairwise at-most-one:
// the domains are small).
func (p *Formula) ExactlyOne(rule Lit, lits []Lit) {
	p.Clause(rule, lits...)
	p.AtMostOne(rule, lits)
}

// AtMostOne requires at most one of lits under rule.
func (p *Formula) AtMostOne(rule Lit, lits []Lit) {
	for i := range lits {
		for j := i + 1; j < len(lits); j++ {
			p.Clause(rule, lits[i].Not(), lits[j].Not())
		}
	}
}

// Implies adds a → b under rule.
func (p *Formula) Implies(rule, a, b Lit) { p.Clause(rule, a.Not(), b) }

// Term is a literal with a non-negative integer weight.
type Term struct {
	Lit    Lit
	Weight int
}

// Sum is a weighted sum of literals, Σ weight·[lit], sorted by a network
// of comparators over the literals repeated by their weights
// (logic.CardSort), so that each bound on it is one literal.
type Sum struct {
	p    *Formula
	card *logic.CardSort
	max  int
}

// NewSum builds the sorting network of a weighted sum.
func (p *Formula) NewSum(terms []Term) (*Sum, error) {
	var ms []Lit
	for _, t := range terms {
		if t.Weight < 0 {
			return nil, fmt.Errorf("constraints: negative weight %d", t.Weight)
		}
		for range t.Weight {
			ms = append(ms, t.Lit)
		}
	}
	if len(ms) == 0 {
		ms = []Lit{p.c.F}
	}
	return &Sum{p: p, card: p.c.CardSort(ms), max: len(ms)}, nil
}

// Max is the largest value the sum can take.
func (s *Sum) Max() int { return s.max }

// AtMost returns a literal true iff the sum is at most k.
func (s *Sum) AtMost(k int) Lit { return s.card.Leq(k) }

// AtLeast returns a literal true iff the sum is at least k.
func (s *Sum) AtLeast(k int) Lit { return s.card.Geq(k) }

// Solve looks for a model under every rule's activation and the extra
// assumptions; timeout 0 means none.
func (p *Formula) Solve(timeout time.Duration, assume ...Lit) Status {
	return p.SolveRules(p.acts, timeout, assume...)
}

// SolveContext is Solve that also stops, with Unknown, when ctx is done
// (a user's interrupt). The solver runs in the background and is polled,
// at most every maxPoll.
func (p *Formula) SolveContext(ctx context.Context, timeout time.Duration, assume ...Lit) Status {
	if ctx == nil || ctx.Done() == nil {
		return p.Solve(timeout, assume...)
	}
	if ctx.Err() != nil {
		return Unknown
	}
	p.mark, _ = p.c.CnfSince(p.g, p.mark, assume...)
	p.g.Assume(p.acts...)
	p.g.Assume(assume...)
	s := p.g.GoSolve()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	wait := minPoll
	poll := time.NewTimer(wait)
	defer poll.Stop()
	for {
		if r, done := s.Test(); done {
			return Status(r)
		}
		select {
		case <-ctx.Done():
			return Status(s.Stop())
		case <-expired:
			return Status(s.Stop())
		case <-poll.C:
		}
		wait = min(2*wait, maxPoll)
		poll.Reset(wait)
	}
}

// The polling interval of SolveContext grows from minPoll to maxPoll: a
// quick solve costs little more than a direct one, a long one is stopped
// within maxPoll of an interrupt.
const (
	minPoll = 20 * time.Microsecond
	maxPoll = 10 * time.Millisecond
)

// SolveRules is Solve with only the given rules active.
func (p *Formula) SolveRules(rules []Lit, timeout time.Duration, assume ...Lit) Status {
	p.mark, _ = p.c.CnfSince(p.g, p.mark, assume...)
	p.g.Assume(rules...)
	p.g.Assume(assume...)
	if timeout > 0 {
		return Status(p.g.Try(timeout))
	}
	return Status(p.g.Solve())
}

// Value returns a literal's value in the last model.
func (p *Formula) Value(m Lit) bool { return p.g.Value(m) }

// Why returns, after an unsatisfiable solve, a subset of its assumptions
// (rule activations and extra assumptions) that is already unsatisfiable.
func (p *Formula) Why() []Lit {
	p.buf = p.g.Why(p.buf[:0])
	return append([]Lit(nil), p.buf...)
}
