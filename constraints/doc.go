// Package constraints states the mapspace of a workload as a SAT problem
// (gini): variables for factor placements and hardware sizes, one-hot and
// cardinality constraints, structural rules as clauses, and unsat-core
// explanations in the manual's terms. It prices nothing.
package constraints
