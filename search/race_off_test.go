//go:build !race

package search_test

// raceEnabled is set under the race detector, whose slowdown makes the
// simulator tests verify only each search's best plan; `make test` runs
// them without it too, every plan kept (the Makefile's unit-norace).
const raceEnabled = false
