// Package search holds the planners: SAT-backed branch and bound over the
// constraints mapspace, the exhaustive baseline, graph planning and autotune
// sweeps. It asks engines for legality and cost for prices; it never
// re-derives an engine rule.
package search
