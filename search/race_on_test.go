//go:build race

package search_test

// raceEnabled is set under the race detector, whose slowdown makes the
// simulator tests skip; `make test` runs them without it (the Makefile's
// unit-norace).
const raceEnabled = true
