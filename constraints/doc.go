// Package constraints is the mapspace of a contraction: the Problem (an
// einsum's axes and their classes, from a workload), the Candidate mapping
// (each axis's factor at each level, the stationary input, the packet, the
// orders, the layouts), one table of which levels each axis role may take
// (levels.go), the Space with its Check, deterministic Enumerate and
// capacity rules (TRF Rows, DM), its SAT encoding over gini (Encoding:
// skeletons as prime-power units, rules as guarded clause groups,
// cardinality sums the planner bounds), the mapping-file reader (MapSpec)
// and unsat-core explanations in the manual's terms (Conflicts, Core).
// It prices nothing: search/ plans over it with cost/ and engines/.
package constraints
