package search

import (
	"math"
	"slices"
)

// maxElimTable bounds the entries of one factor variable elimination
// builds (the product of the class counts of the ops it spans): past it,
// the integer program takes over.
const maxElimTable = 1 << 20

// factor is a cost table over some ops' classes: scope the variables
// (indices into the eliminated ops, ascending), table the cost of each
// assignment, row-major over scope.
type factor struct {
	scope []int
	table []float64
}

// eliminate picks one class per op exactly by variable elimination (bucket
// elimination over the interaction graph of the ops with several classes,
//
// the ops eliminated in min-weight order: each time the op whose
// neighbours' class counts multiply to the least, ties to the lowest
// index). Eliminating an op replaces the factors that span it by one over
// its neighbours, the least over its classes, and keeps its best class
// for each assignment of them; the last factor is the optimum, and the
// classes are read back in reverse order. The cost of a layer's model is a
// sum of unary and pairwise terms over a graph of small width (chains,
// fan-outs, joins), so the tables stay small; it returns false when one
// would pass maxElimTable entries.
func (m *graphModel) eliminate(choice []int) ([]int, solveStats, bool) {
	var vars []int // op of each variable
	of := map[int]int{}
	for _, i := range m.order {
		if len(m.ops[i].classes) > 1 {
			of[i] = len(vars)
			vars = append(vars, i)
		}
	}
	n := len(vars)
	dom := make([]int, n)
	for v, i := range vars {
		dom[v] = len(m.ops[i].classes)
	}
	var fs []*factor
	adj := make([]map[int]bool, n)
	for v, i := range vars {
		adj[v] = map[int]bool{}
		f := &factor{scope: []int{v}}
		for k := range dom[v] {
			f.table = append(f.table, m.unary(i, k))
		}
		fs = append(fs, f)
	}
	seen := map[[2]int]bool{}
	for _, e := range m.edges() {
		v, okv := of[e.from]
		w, okw := of[e.to]
		if !okv || !okw || v == w {
			continue
		}
		if v > w {
			v, w = w, v
		}
		if seen[[2]int{v, w}] {
			continue
		}
		seen[[2]int{v, w}] = true
		adj[v][w], adj[w][v] = true, true
		f := &factor{scope: []int{v, w}, table: make([]float64, dom[v]*dom[w])}
		for a := range dom[v] {
			for b := range dom[w] {
				f.table[a*dom[w]+b] = m.pair(vars[v], a, vars[w], b)
			}
		}
		fs = append(fs, f)
	}
	type record struct {
		v     int
		scope []int
		best  []int // v's class for each assignment of scope
	}
	var recs []record
	done := make([]bool, n)
	entries := 0
	for range n {
		// The op whose neighbours' tables are smallest.
		v, weight := -1, math.MaxInt
		for u := range n {
			if done[u] {
				continue
			}
			wgt := 1
			for x := range adj[u] {
				wgt = min(wgt*dom[x], maxElimTable+1)
			}
			if wgt < weight {
				v, weight = u, wgt
			}
		}
		if weight > maxElimTable {
			return nil, solveStats{}, false
		}
		scope := make([]int, 0, len(adj[v]))
		for x := range adj[v] {
			scope = append(scope, x)
		}
		slices.Sort(scope)
		var in, rest []*factor
		for _, f := range fs {
			if slices.Contains(f.scope, v) {
				in = append(in, f)
			} else {
				rest = append(rest, f)
			}
		}
		nf := &factor{scope: scope, table: make([]float64, weight)}
		best := make([]int, weight)
		asg := make([]int, n) // the assignment of scope, and v's class
		for idx := range weight {
			r := idx
			for k := len(scope) - 1; k >= 0; k-- {
				asg[scope[k]] = r % dom[scope[k]]
				r /= dom[scope[k]]
			}
			bc, bk := math.Inf(1), 0
			for c := range dom[v] {
				asg[v] = c
				s := 0.0
				for _, f := range in {
					s += f.table[f.at(asg, dom)]
				}
				if s < bc {
					bc, bk = s, c
				}
			}
			nf.table[idx], best[idx] = bc, bk
		}
		entries += weight * dom[v]
		recs = append(recs, record{v: v, scope: scope, best: best})
		fs = append(rest, nf)
		done[v] = true
		for _, x := range scope {
			delete(adj[x], v)
			for _, y := range scope {
				if x != y {
					adj[x][y] = true
				}
			}
		}
	}
	asg := make([]int, n)
	for k := len(recs) - 1; k >= 0; k-- {
		r := recs[k]
		idx := 0
		for _, x := range r.scope {
			idx = idx*dom[x] + asg[x]
		}
		asg[r.v] = r.best[idx]
	}
	out := slices.Clone(choice)
	for v, i := range vars {
		out[i] = asg[v]
	}
	c := m.total(out)
	return out, solveStats{method: "elimination", proven: true, nodes: entries, lowerBound: c}, true
}

// at is the index of the assignment asg (by variable) in f's table.
func (f *factor) at(asg, dom []int) int {
	idx := 0
	for _, x := range f.scope {
		idx = idx*dom[x] + asg[x]
	}
	return idx
}
