// Package verify is the functional simulator's driver: device memory, the
// program executor that runs kernel programs engine by engine, the reference
// (computed from the computation the program states, kernel.Reference — the
// workload's einsum or expression — independently of the engines'
// configurations), and the comparison of the two.
package verify
