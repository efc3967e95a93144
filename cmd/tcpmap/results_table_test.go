package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite results/README.md's plans table")

// TestResultsReadmeTable: results/README.md's table of the stored plans
// is the plans' own figures.
func TestResultsReadmeTable(t *testing.T) {
	const readme = "../../results/README.md"
	data, err := os.ReadFile(readme)
	require.NoError(t, err)
	text := string(data)
	i, j := strings.Index(text, plansTableBegin), strings.Index(text, plansTableEnd)
	require.True(t, i >= 0 && j > i, "%s: no plans table markers", readme)
	table, err := plansTable("../../results/plans")
	require.NoError(t, err)
	want := text[:i+len(plansTableBegin)] + "\n" + table + text[j:]
	if *updateReadme {
		require.NoError(t, os.WriteFile(readme, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, text, "regenerate: go test ./cmd/tcpmap -run TestResultsReadmeTable -update-readme")
}
