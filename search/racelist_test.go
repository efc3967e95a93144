package search

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRaceSearchNamed: every test the race run selects (raceSearch, the
// package's concurrency tests) is a test of this package. A renamed or
// removed test would otherwise drop out of the race run without a word:
// go test -run matches nothing silently.
func TestRaceSearchNamed(t *testing.T) {
	m := regexp.MustCompile(`^\^\(([^)]*)\)\$$`).FindStringSubmatch(raceSearch)
	require.NotNil(t, m, "raceSearch: ^(TestA|TestB)$")
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	declared := map[string]bool{}
	fn := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, d := range fn.FindAllSubmatch(src, -1) {
			declared[string(d[1])] = true
		}
	}
	names := strings.Split(m[1], "|")
	require.NotEmpty(t, names)
	for _, n := range names {
		require.True(t, declared[n], "raceSearch names %s, which no test file of search declares", n)
	}
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
}
