package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/model/plan"
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

// The stored plans' table in results/README.md, between these markers:
// every plan with its price, its share of the MAC peak and of the
// workload's roofline, and what bounds it.
const (
	plansTableBegin = "<!-- plans table: generated from results/plans by TestResultsReadmeTable; go test ./cmd/tcpmap -run TestResultsReadmeTable -update-readme -->"
	plansTableEnd   = "<!-- end of plans table -->"
)

// plansTable renders the table of the plans stored under dir.
func plansTable(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.plan.json"))
	if err != nil {
		return "", err
	}
	gz, err := filepath.Glob(filepath.Join(dir, "*.plan.json"+plan.Compressed))
	if err != nil {
		return "", err
	}
	files = append(files, gz...)
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("| plan | einsum | cycles | % of MAC peak | % of roofline | roofline bound | bottleneck | mapping | search |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---|---|---|\n")
	for _, f := range files {
		p, err := plan.Read(f)
		if err != nil {
			return "", err
		}
		c, m, s := p.Cost, p.Mapping, p.Search
		var feat []string
		if m.Switch {
			feat = append(feat, "switch")
		}
		if len(m.TileOrder) > 0 {
			t := "tiles " + strings.Join(m.TileOrder, ",")
			if m.DoubleBuffer {
				t += " pipelined"
			}
			feat = append(feat, t)
		}
		for _, a := range m.Axes {
			if a.Class != "contracted" {
				continue
			}
			if a.Slice > 1 {
				feat = append(feat, fmt.Sprintf("split-K %s×%d", a.Name, a.Slice))
			}
			if a.Tile > 1 {
				feat = append(feat, fmt.Sprintf("%d %s chunks", a.Tile, a.Name))
			}
		}
		feat = append(feat, m.Packet+" "+m.Content)
		search := s.Optimal
		switch {
		case search == "" && s.Gap > 0:
			search = fmt.Sprintf("gap %.0f%%", 100*s.Gap)
		case search == "":
			search = "best found"
		}
		what := p.Workload.Einsum
		if om := p.OpMapping; om != nil {
			// A Vector Engine op: its kind and form, and its split.
			what = p.Workload.Kind
			if om.Form != what {
				what += " " + om.Form
			}
			feat = []string{fmt.Sprintf("%d tiles × %d clusters × %d slices", om.Tiles, om.Clusters, om.Slices)}
		}
		if len(p.Workload.Epilogue) > 0 {
			// An einsum with its epilogue (plan --op E --fuse).
			what += "` then `" + strings.Join(p.Workload.Epilogue, ", ")
		}
		fmt.Fprintf(&b, "| %s | `%s` | %.0f | %.2f | %.1f | %s | %s | %s | %s |\n",
			strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), plan.Compressed), ".plan.json"),
			what, c.Cycles, 100*c.MACUtilization, 100*c.Roofline, c.Bound, c.Bottleneck,
			strings.Join(feat, "; "), search)
	}
	return b.String(), nil
}
