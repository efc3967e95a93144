// Package search holds the planners of one contraction (an einsum, or one
// einsum op of a graph): SAT-backed branch and bound over the constraints
// mapspace and the exhaustive baseline; and graph
// planning, a plan per op and a layout per tensor edge chosen together
// (graph.go, graphcache.go). It asks
// engines for legality and cost for prices; it never re-derives an engine
// rule. Sweeps, which plan every point of a sweep file into the result
// store, are its subpackage sweep.
//
// What exists (the mapspace itself — Problem, Candidate, the level table,
// Space with its Check, Enumerate and capacity rules, the SAT encoding, the
// mapping-file reader and the unsat cores — is in constraints/;
// mapspace.go spells its names here):
//
//   - mapspace.go: Space, constraints.Space with the kernel builder and its
//     memo; the builder tells the enumerator which DM layout choices build
//     distinct programs (constraints.LayoutOracle).
//   - build.go, chain.go: Space.Build, candidate → kernel.Program after the
//     manual's Hello kernels (002 L307-525); memo.go caches its expression
//     algebra (Normalize, Factorize, layoutsDiffer) by content.
//   - lower.go: engines.Lower op by op with a memo of every op's result;
//     a tile view's DMA op is lowered once and relocated to the others.
//   - bound.go, cbound.go: admissible lower bounds of a placement, a
//     skeleton and a candidate (from its fields, before it is built).
//   - branch.go: Solve, the SAT branch and bound (bnb: gini proposes
//     placements over constraints.Encoding; skeletons, candidates and built
//     candidates wait in one best-first queue under their bounds).
//   - parallel.go: the workers that build, lower and price candidates for
//     Solve; results are accounted in sequential order, so plans and
//     statistics do not depend on the number of workers.
//   - exhaustive.go: Exhaustive, the ground-truth planner: build, lower,
//     price (cost.Model, pruning by DMA lower bounds), keep the best.
//   - explain.go: Explain, a user mapping's legality (the minimal violated
//     rules, constraints.Encoding.Conflicts) and cost.
//   - infeasible.go: Infeasible, why a space has no legal candidate and
//     the nearest paddings that plan.
//   - plan.go: the model/plan.Plan of a result.
package search
