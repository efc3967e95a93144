// Package verify is the functional simulator's driver: device memory, the
// program executor that runs kernel programs engine by engine, the reference
// computed independently from the workload, and the comparison of the two.
package verify
