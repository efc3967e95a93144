package search

import "testing"

// The suite's two lengths (README, "Set-up"). `make test` runs `go test
// -short` under the race detector: every property is checked on reduced
// spaces, or on a deterministic sample of a space's candidates. `make
// test-long` runs `go test` without -short: the whole-size searches too,
// and every candidate of the sampled spaces.

// shortStride is the stride at which -short samples a space's candidates.
const shortStride = 10

// sparseStride is -short's stride over the spaces whose every tenth legal
// candidate still costs the suite minutes (the stream and bank bounds over
// spaces of 10^5 legal candidates): prime, so that it does not step in
// time with the enumeration's digits.
const sparseStride = 97

// longOnly skips t under -short: a whole-size search `make test-long`
// runs; a reduced version of its property stays in `make test`.
func longOnly(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("long: `make test-long` runs it (go test without -short)")
	}
}

// sampleEvery returns the stride at which the exhaustive property checks
// visit a space's candidates: every candidate without -short, every
// shortStride-th (the first included) under -short.
func sampleEvery() int {
	if testing.Short() {
		return shortStride
	}
	return 1
}

// sampleEveryN is sampleEvery thinned n times under -short: every
// n·shortStride-th candidate, every candidate without -short.
func sampleEveryN(n int) int {
	if testing.Short() {
		return n * shortStride
	}
	return 1
}

// sampleSparse is sampleEvery for the largest spaces: every sparseStride-th
// candidate under -short, every candidate without.
func sampleSparse() int {
	if testing.Short() {
		return sparseStride
	}
	return 1
}
