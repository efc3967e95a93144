package constraints

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSumBounds: every assignment of four weighted literals satisfies
// exactly the bounds its weighted sum meets.
func TestSumBounds(t *testing.T) {
	weights := []int{1, 2, 3, 5}
	for mask := range 1 << len(weights) {
		p := NewFormula()
		var terms []Term
		sum := 0
		for i, w := range weights {
			v := p.Var()
			terms = append(terms, Term{Lit: v, Weight: w})
			if mask&(1<<i) != 0 {
				p.Clause(0, v)
				sum += w
			} else {
				p.Clause(0, v.Not())
			}
		}
		s, err := p.NewSum(terms)
		require.NoError(t, err)
		require.Equal(t, 11, s.Max())
		for k := -1; k <= 12; k++ {
			assert.Equal(t, sum <= k, p.Solve(0, s.AtMost(k)) == Sat, "sum %d ≤ %d", sum, k)
			assert.Equal(t, sum >= k, p.Solve(0, s.AtLeast(k)) == Sat, "sum %d ≥ %d", sum, k)
		}
	}
}

// TestWhyNamesRules: an unsatisfiable solve names the rules its proof
// needs and not the others.
func TestWhyNamesRules(t *testing.T) {
	p := NewFormula()
	x := []Lit{p.Var(), p.Var(), p.Var()}
	one := p.Rule(Rule{ID: "ONE", Text: "exactly one"})
	p.ExactlyOne(one, x)
	first := p.Rule(Rule{ID: "FIRST", Text: "x0"})
	p.Clause(first, x[0])
	second := p.Rule(Rule{ID: "SECOND", Text: "x1"})
	p.Clause(second, x[1])
	unrelated := p.Rule(Rule{ID: "OTHER"})
	p.Clause(unrelated, p.Var())
	require.Equal(t, Unsat, p.Solve(0))
	var ids []string
	for _, m := range p.Why() {
		r, ok := p.RuleOf(m)
		require.True(t, ok)
		ids = append(ids, r.ID)
	}
	assert.ElementsMatch(t, []string{"ONE", "FIRST", "SECOND"}, ids)
	// Without SECOND it is satisfiable, with x0 chosen.
	require.Equal(t, Sat, p.SolveRules([]Lit{one, first, unrelated}, 0))
	assert.True(t, p.Value(x[0]))
	assert.False(t, p.Value(x[1]))
	// An extra assumption shows up in Why too.
	require.Equal(t, Unsat, p.SolveRules([]Lit{one, first}, 0, x[2]))
	assert.ElementsMatch(t, []Lit{one, first, x[2]}, p.Why())
	_, err := p.NewSum([]Term{{Lit: x[0], Weight: -1}})
	assert.Error(t, err)
}

// pigeonhole encodes n+1 pigeons in n holes, one pigeon a hole: unsatisfiable,
// and exponentially hard for a CDCL solver.
func pigeonhole(n int) *Formula {
	p := NewFormula()
	in := make([][]Lit, n+1)
	for i := range in {
		in[i] = make([]Lit, n)
		for h := range in[i] {
			in[i][h] = p.Var()
		}
		p.Clause(0, in[i]...)
	}
	for h := range n {
		var col []Lit
		for i := range in {
			col = append(col, in[i][h])
		}
		p.AtMostOne(0, col)
	}
	return p
}

// TestSolveContext: with a live context a solve answers as Solve does; a
// done context stops it with Unknown, also in the middle of a hard solve.
func TestSolveContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := NewFormula()
	x, y := p.Var(), p.Var()
	p.Clause(0, x, y)
	assert.Equal(t, Sat, p.SolveContext(ctx, 0, x.Not()))
	assert.True(t, p.Value(y))
	assert.Equal(t, Unsat, p.SolveContext(ctx, 0, x.Not(), y.Not()))
	assert.Equal(t, Unsat, pigeonhole(3).SolveContext(ctx, 0))

	hard := pigeonhole(12)
	done := make(chan Status)
	go func() { done <- hard.SolveContext(ctx, 0) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	assert.Equal(t, Unknown, <-done)
	assert.Equal(t, Unknown, hard.SolveContext(ctx, 0), "a done context does not start a solve")
}
