package search

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// The exact model of a graph whose choices branch (a tensor read by
// several ops that each have several classes, as attention's Q/K/V
// fan-out): an integer linear program over the classes, solved by branch
// and bound on its LP relaxation (gonum's simplex).
//
// Variables, all ≥ 0: x[i][k] = 1 when op i runs in class k; for every
// pair of classes (a of op i, b of op j) whose edges between i and j cost
// a relayout r > 0, y ≥ x[i][a] + x[j][b] − 1 (with a slack s: x[i][a] +
// x[j][b] − y + s = 1), which at integer points is 1 exactly when both
// are chosen; for a pair no assignment may hold (r = +Inf: a tensor one
// class leaves in DM and the other reads from HBM), x[i][a] + x[j][b] + s
// = 1. Constraints: Σ_k x[i][k] = 1 for each op. Objective: Σ the
// classes' own costs (unary: kernel, the graph inputs' relayouts, the
// relayouts to and from single-class ops) x + Σ r y. The matrix has full
// row rank (each op row has its own variables, each pair row its own
// slack), as the simplex needs.
//
// Branching fixes an op's class (only that class's variable remains) or
// forbids one (its variable and the pair rows through it go: y = 0 is
// then optimal). A node whose relaxation cannot beat the incumbent is
// pruned; a node whose relaxation is integral is a solution.

// ilpTol is the simplex's tolerance on the scaled objective and the
// integrality test's.
const ilpTol = 1e-9

// ilpSolve assigns the classes of the ops with several classes exactly,
// unless maxNodes (LP solves) stops it; ok is false when the simplex
// failed (the caller then enumerates).
func (m *graphModel) ilpSolve(choice []int, maxNodes int) (best []int, st solveStats, ok bool) {
	var vars []int
	for _, i := range m.order {
		if len(m.ops[i].classes) > 1 {
			vars = append(vars, i)
		}
	}
	fixed := 0.0
	for i := range m.ops {
		if len(m.ops[i].classes) == 1 {
			fixed += m.ops[i].classes[0].cost() + m.inputRelayout(i, 0)
		}
	}
	for _, e := range m.edges() {
		if len(m.ops[e.from].classes) == 1 && len(m.ops[e.to].classes) == 1 {
			fixed += m.relayout(e, 0, 0)
		}
	}
	unary := make([][]float64, len(vars))
	scale := 1.0
	for v, i := range vars {
		for k := range m.ops[i].classes {
			u := m.unary(i, k)
			unary[v] = append(unary[v], u)
			scale = max(scale, u)
		}
	}
	type pairCost struct {
		v, a, w, b int
		r          float64
	}
	var pairs, forbidden []pairCost
	for v := range vars {
		for w := v + 1; w < len(vars); w++ {
			for a := range m.ops[vars[v]].classes {
				for b := range m.ops[vars[w]].classes {
					switch r := m.pair(vars[v], a, vars[w], b); {
					case math.IsInf(r, 1):
						// No assignment has both (a tensor left in DM
						// and read from HBM): x[v][a] + x[w][b] ≤ 1.
						forbidden = append(forbidden, pairCost{v, a, w, b, r})
					case r > 0:
						pairs = append(pairs, pairCost{v, a, w, b, r})
						scale = max(scale, r)
					}
				}
			}
		}
	}

	best = slices.Clone(choice) // every op in class 0: the baseline
	bestCost := m.total(best)
	allowed := make([][]bool, len(vars))
	for v, i := range vars {
		allowed[v] = make([]bool, len(m.ops[i].classes))
		for k := range allowed[v] {
			allowed[v][k] = true
		}
	}
	// relax solves the LP of the classes allowed; it returns the bound
	// (unscaled, with the fixed part) and each op's class values.
	relax := func() (float64, [][]float64, error) {
		col := make([][]int, len(vars)) // column of x[v][k], −1 when forbidden
		n := 0
		for v := range vars {
			col[v] = make([]int, len(allowed[v]))
			for k, ok := range allowed[v] {
				col[v][k] = -1
				if ok {
					col[v][k] = n
					n++
				}
			}
		}
		var live, banned []pairCost
		for _, p := range pairs {
			if allowed[p.v][p.a] && allowed[p.w][p.b] {
				live = append(live, p)
			}
		}
		for _, p := range forbidden {
			if allowed[p.v][p.a] && allowed[p.w][p.b] {
				banned = append(banned, p)
			}
		}
		cols := n + 2*len(live) + len(banned)
		rows := len(vars) + len(live) + len(banned)
		A := mat.NewDense(rows, cols, nil)
		b := make([]float64, rows)
		c := make([]float64, cols)
		for v := range vars {
			for k, j := range col[v] {
				if j >= 0 {
					A.Set(v, j, 1)
					c[j] = unary[v][k] / scale
				}
			}
			b[v] = 1
		}
		for q, p := range live {
			row, y, s := len(vars)+q, n+2*q, n+2*q+1
			A.Set(row, col[p.v][p.a], 1)
			A.Set(row, col[p.w][p.b], 1)
			A.Set(row, y, -1)
			A.Set(row, s, 1)
			b[row] = 1
			c[y] = p.r / scale
		}
		for q, p := range banned {
			row, s := len(vars)+len(live)+q, n+2*len(live)+q
			A.Set(row, col[p.v][p.a], 1)
			A.Set(row, col[p.w][p.b], 1)
			A.Set(row, s, 1)
			b[row] = 1
		}
		f, x, err := lp.Simplex(c, A, b, ilpTol, nil)
		if err != nil {
			return 0, nil, err
		}
		vals := make([][]float64, len(vars))
		for v := range vars {
			vals[v] = make([]float64, len(allowed[v]))
			for k, j := range col[v] {
				if j >= 0 {
					vals[v][k] = x[j]
				}
			}
		}
		return fixed + f*scale, vals, nil
	}
	nodes := 0
	complete := true
	rootBound := math.Inf(-1)
	var failed error
	var rec func()
	rec = func() {
		if failed != nil {
			return
		}
		if nodes >= maxNodes {
			complete = false
			return
		}
		nodes++
		bound, vals, err := relax()
		if errors.Is(err, lp.ErrInfeasible) {
			return // the classes left allow no assignment
		}
		if err != nil {
			failed = err
			return
		}
		if nodes == 1 {
			rootBound = bound
		}
		if bound >= bestCost*(1-1e-12) {
			return
		}
		// The most fractional class of any op, or an integral solution.
		bv, bk, frac := -1, -1, 0.0
		cand := slices.Clone(choice)
		for v, i := range vars {
			top := 0
			for k, x := range vals[v] {
				if d := math.Min(x, 1-x); d > ilpTol && d > frac {
					bv, bk, frac = v, k, d
				}
				if x > vals[v][top] {
					top = k
				}
			}
			cand[i] = top
		}
		if c := m.total(cand); c < bestCost {
			bestCost = c
			copy(best, cand)
		}
		if bv < 0 {
			return // integral: the rounding above is the relaxation's optimum
		}
		saved := slices.Clone(allowed[bv])
		// Fix op bv to class bk, then forbid it.
		for k := range allowed[bv] {
			allowed[bv][k] = saved[k] && k == bk
		}
		rec()
		copy(allowed[bv], saved)
		allowed[bv][bk] = false
		rec()
		copy(allowed[bv], saved)
	}
	rec()
	if failed != nil {
		return nil, solveStats{}, false
	}
	st = solveStats{method: "ilp", proven: complete, nodes: nodes, lowerBound: bestCost}
	if !complete {
		st.lowerBound = min(bestCost, rootBound)
	}
	return best, st, true
}
