package search

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/internal/racerun"
)

// TestRaceSearchNamed: every test the race run selects (raceSearch, the
// package's concurrency tests) is a test of this package. A renamed or
// removed test would otherwise drop out of the race run without a word:
// go test -run matches nothing silently.
func TestRaceSearchNamed(t *testing.T) {
	missing, err := racerun.Undeclared(raceSearch, ".")
	require.NoError(t, err)
	assert.Empty(t, missing, "raceSearch names tests no test file of search declares")
	// make test's race run selects no tests itself: a -run there would
	// keep TestMain from selecting raceSearch, and would apply to every
	// race-tested package.
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	unit := regexp.MustCompile(`(?m)^unit:\n((?:\t.*\n)+)`).FindSubmatch(mk)
	require.NotNil(t, unit, "the Makefile's unit target")
	assert.Contains(t, string(unit[1]), "-race", "unit runs the race detector")
	assert.NotContains(t, string(unit[1]), "-run", "unit leaves the selection to TestMain")
	pkgs := regexp.MustCompile(`(?m)^RACE_PKGS\s*:=(.*)$`).FindSubmatch(mk)
	require.NotNil(t, pkgs, "the Makefile's RACE_PKGS")
	assert.Contains(t, strings.Fields(string(pkgs[1])), "./search")
	assert.Contains(t, strings.Fields(string(pkgs[1])), "./verify")
	// verify's tests the race run leaves out run without it: the plain
	// packages keep verify.
	plain := regexp.MustCompile(`(?m)^PLAIN_PKGS\s*=(.*)$`).FindSubmatch(mk)
	require.NotNil(t, plain, "the Makefile's PLAIN_PKGS")
	assert.NotContains(t, string(plain[1]), "verify", "PLAIN_PKGS keeps verify")
}
