package search

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRaceSearchNamed: every test the Makefile's race run selects
// (RACE_SEARCH, the package's concurrency tests) is a test of this
// package. A renamed or removed test would otherwise drop out of the race
// run without a word: go test -run matches nothing silently.
func TestRaceSearchNamed(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^RACE_SEARCH := '\^\(([^)]*)\)\$\$'$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile's RACE_SEARCH line: '^(TestA|TestB)$$'")
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
	names := strings.Split(string(m[1]), "|")
	require.NotEmpty(t, names)
	for _, n := range names {
		require.True(t, declared[n], "RACE_SEARCH names %s, which no test file of search declares", n)
	}
}
