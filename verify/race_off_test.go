//go:build !race

package verify

// raceEnabled is set under the race detector, whose slowdown makes the
// large kernels sample slices instead of simulating them all.
const raceEnabled = false
