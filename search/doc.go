// Package search holds the planners: SAT-backed branch and bound over the
// constraints mapspace, the exhaustive baseline, graph planning and autotune
// sweeps. It asks engines for legality and cost for prices; it never
// re-derives an engine rule.
//
// What exists:
//
//   - problem.go: Problem, the binary contraction to plan (from a
//     single-einsum workload or one einsum op of a graph), its axes and
//     their classes (contracted, batch, free of either input).
//   - space.go: Candidate, one point of the mapspace as a comparable value
//     of small integers (the stationary input, each axis's factor at each
//     Level — Tile, Chip, Cluster, Slice, Time, Row, Packet —, the Time
//     order, the tile order, the packet's content and mode, the broadcast
//     place, the accumulation kind, the DM layouts, double buffering);
//     Space, its Check and its deterministic Enumerate / EnumerateWhere.
//   - tile.go: tilings, for candidates whose tensors do not fit.
//   - build.go, chain.go: Space.Build, candidate → kernel.Program after the
//     manual's Hello kernels (002 L307-525); memo.go caches its expression
//     algebra (Normalize, Factorize, layoutsDiffer) by content.
//   - lower.go: engines.Lower op by op with a memo of every op's result;
//     a tile view's DMA op is lowered once and relocated to the others.
//   - bound.go, cbound.go: admissible lower bounds of a placement, a
//     skeleton and a candidate (from its fields, before it is built).
//   - sat.go, branch.go: Solve, the SAT branch and bound (gini proposes
//     placements; skeletons, candidates and built candidates wait in one
//     best-first queue under their bounds).
//   - parallel.go: the workers that build, lower and price candidates for
//     Solve; results are accounted in sequential order, so plans and
//     statistics do not depend on the number of workers.
//   - exhaustive.go: Exhaustive, the ground-truth planner: build, lower,
//     price (cost.Model, pruning by DMA lower bounds), keep the best.
//   - explain.go: Explain, a user mapping's legality (minimal violated
//     rules) and cost.
//   - plan.go: the model/plan.Plan of a result.
package search
