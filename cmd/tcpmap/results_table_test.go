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

// TestResultsReadmeTable: results/README.md's tables of the stored plans
// and layers are their own figures.
func TestResultsReadmeTable(t *testing.T) {
	if raceEnabled {
		t.Skip("reads and validates every stored plan and layer (50 s under -race): make test runs it in unit-norace")
	}
	const readme = "../../results/README.md"
	data, err := os.ReadFile(readme)
	require.NoError(t, err)
	text := string(data)
	i, j := strings.Index(text, plansTableBegin), strings.Index(text, plansTableEnd)
	require.True(t, i >= 0 && j > i, "%s: no plans table markers", readme)
	table, err := plansTable("../../results/plans")
	require.NoError(t, err)
	want := text[:i+len(plansTableBegin)] + "\n" + table + text[j:]
	k, l := strings.Index(want, layersTableBegin), strings.Index(want, layersTableEnd)
	require.True(t, k >= 0 && l > k, "%s: no layers table markers", readme)
	layers, err := layersTable("../../results/graphs")
	require.NoError(t, err)
	want = want[:k+len(layersTableBegin)] + "\n" + layers + want[l:]
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

// The stored layer plans' table in results/README.md, between these
// markers: each graph planned both ways (NAME: the einsums only; NAME-ve:
// the Vector Engine ops and fusion too) against its baseline.
const (
	layersTableBegin = "<!-- layers table: generated from results/graphs by TestResultsReadmeTable -->"
	layersTableEnd   = "<!-- end of layers table -->"
)

// layersTable renders the table of the graph plans stored under dir.
func layersTable(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.graph.json"+plan.Compressed))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("| layer | kernels | fused | views | no kernel | cycles | baseline (every op alone) | saving | % of roofline | relayouts | in DM | search |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, f := range files {
		g, err := plan.ReadGraph(f)
		if err != nil {
			return "", err
		}
		c, s := g.Cost, g.Search
		search := "proven"
		if s.Optimal != "proven" {
			search = fmt.Sprintf("gap %.0f%%", 100*s.Gap)
		}
		if s.Fusions > 0 {
			search += fmt.Sprintf(", %d fusion choices", s.Fusions)
		}
		if s.Resident > 0 {
			search += fmt.Sprintf(", %d tensor%s offered DM", s.Resident, plural(s.Resident))
		}
		if n := len(g.Expansions); n > 0 {
			var names []string
			for _, x := range g.Expansions {
				names = append(names, x.Name)
			}
			search += fmt.Sprintf(", %s computed by ops of other kinds", strings.Join(names, ", "))
		}
		var dm []string
		for _, t := range g.Tensors {
			if t.Place == plan.PlaceDM {
				dm = append(dm, t.Name)
			}
		}
		inDM := "-"
		if len(dm) > 0 {
			inDM = strings.Join(dm, ", ")
		}
		roof := "-"
		if c.Roofline > 0 {
			roof = fmt.Sprintf("%.1f", 100*c.Roofline)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.0f | %.0f | %.2f%% | %s | %.0f | %s | %s |\n",
			strings.TrimSuffix(filepath.Base(f), ".graph.json"+plan.Compressed), c.Planned, c.Fused, c.Views, c.NotPlannable,
			c.Cycles, c.BaselineCycles, 100*c.Saving, roof, c.RelayoutCycles, inDM, search)
	}
	return b.String(), nil
}

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
			if a.RowOuter {
				feat = append(feat, fmt.Sprintf("%s Row above Time", a.Name))
			}
			if a.DealtOut {
				feat = append(feat, fmt.Sprintf("%s dealt out", a.Name))
			}
			if a.ClusterInner {
				feat = append(feat, fmt.Sprintf("%s Cluster below Slice", a.Name))
			}
			if a.Digits != "" {
				feat = append(feat, fmt.Sprintf("%s digits %s", a.Name, strings.ReplaceAll(a.Digits, ".", " > ")))
			}
			if a.Class != "contracted" {
				continue
			}
			if a.Cluster > 1 {
				feat = append(feat, fmt.Sprintf("cluster reduce %s×%d", a.Name, a.Cluster))
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
		if s.DigitOrders == "all" {
			search += ", every digit order"
		}
		what := p.Workload.Einsum
		if om := p.OpMapping; om != nil {
			// A Vector Engine op: its kind and form, and its split.
			what = p.Workload.Kind
			if om.Form != what {
				what += " " + om.Form
			}
			feat = []string{fmt.Sprintf("%d tiles × %d clusters × %d slices", om.Tiles, om.Clusters, om.Slices)}
			switch {
			case om.Form == "gather":
				feat = []string{"one HBM-to-HBM DMA, an indirect loop"}
			case om.Form == "scatter":
				feat = []string{"one HBM-to-HBM DMA, an indirect loop writing"}
			case om.Clusters*om.Slices == 0:
				feat = []string{"one HBM-to-HBM DMA, in place"} // an update_slice
			}
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
