//go:build race

package verify

// raceEnabled is set under the race detector, whose slowdown makes the
// tests skip the manual's GEMM sizes and mutate fewer configurations;
// `make test` runs those tests without it too (the Makefile's
// unit-norace).
const raceEnabled = true
