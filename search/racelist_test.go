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
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	assert.NotContains(t, string(mk), "-run $(RACE_SEARCH)", "the race run's selection is raceSearch (TestMain)")
}
