package results_test

import (
	"os"
	"testing"

	"tcpmap/results"
)

// TestMain makes the test binary one of the helper processes the kill
// tests start and kill, when its variable names a store: a writer of
// records (TestKill9, store_test.go) or a sweep (TestSweepKill9,
// sweep_test.go). It is in the external test package, the only one
// that sees both.
func TestMain(m *testing.M) {
	if path := os.Getenv(results.KillHelperEnv); path != "" {
		results.WriteUntilKilled(path)
	}
	if path := os.Getenv(sweepKillEnv); path != "" {
		sweepUntilKilled(path)
	}
	os.Exit(m.Run())
}
