//go:build !race

package search

// raceDetector is set under the race detector, whose slowdown makes the
// whole-space cross-checks run only in `make test`'s unit-norace.
const raceDetector = false
