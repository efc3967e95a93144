package engines

import "testing"

// shortTrials returns n, the trials of a random property test, or a third
// of them under -short: `make test` runs the properties with fewer random
// cases under the race detector, `make test-long` with all of them.
func shortTrials(n int) int {
	if testing.Short() {
		return n / 3
	}
	return n
}
