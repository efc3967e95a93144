package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"

	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/search"
)

// graphPlanFlags are the flags of `plan GRAPH.yaml` beyond the per-op
// search's.
type graphPlanFlags struct {
	axes    string // --axes A=N,...: the graph at other sizes
	layouts int    // --layouts
	cache   string // --cache DIR
	stored  string // --stored DIR
	only    bool   // --cache-only
	vector  bool   // --vector-ops
	noFuse  bool   // --no-fuse
	noDM    bool   // --no-residency
	noExp   bool   // --no-expand
	budget  int    // --layout-evaluations
}

// graphOutput is `plan GRAPH.yaml --json`.
type graphOutput struct {
	Plan        *plan.Graph `json:"plan"`
	WallSeconds float64     `json:"wall_seconds"`
}

// loadGraphWorkload reads a workload and reports whether it is a graph;
// with axes ("A=N,B=M") the graph's axes get those sizes first.
func loadGraphWorkload(file, axes string) (*workload.Workload, bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, false, err
	}
	if axes != "" {
		if data, err = resizeAxes(data, file, axes); err != nil {
			return nil, false, err
		}
	}
	w, err := workload.Parse(data, file)
	if err != nil {
		return nil, false, err
	}
	return w, w.Form == workload.FormGraph, nil
}

// resizeAxes sets the sizes --axes names in the workload's `axes:` map.
func resizeAxes(data []byte, file, spec string) ([]byte, error) {
	sizes := map[string]int64{}
	var order []string
	for i, part := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseInt(val, 10, 64)
		if !ok || name == "" || err != nil || n < 1 {
			return nil, usageError{fmt.Errorf("--axes %q: item %d: want NAME=SIZE with SIZE ≥ 1", spec, i+1)}
		}
		if _, dup := sizes[name]; dup {
			return nil, usageError{fmt.Errorf("--axes %q: axis %s given twice", spec, name)}
		}
		sizes[name] = n
		order = append(order, name)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil // the workload parser reports it
	}
	root := doc.Content[0]
	var axes *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "axes" {
			axes = root.Content[i+1]
		}
	}
	if axes == nil || axes.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: --axes: the workload has no axes map", file)
	}
	// Splice the new sizes into the text, so that every error still
	// points at the file's own lines.
	type edit struct {
		off, n int
		val    string
	}
	var edits []edit
	seen := map[string]bool{}
	for i := 0; i+1 < len(axes.Content); i += 2 {
		name, v := axes.Content[i].Value, axes.Content[i+1]
		n, ok := sizes[name]
		if !ok {
			continue
		}
		seen[name] = true
		off := lineOffset(data, v.Line, v.Column)
		if v.Kind != yaml.ScalarNode || off < 0 || off+len(v.Value) > len(data) || string(data[off:off+len(v.Value)]) != v.Value {
			return nil, fmt.Errorf("%s:%d:%d: --axes: the size of %s is not a plain number", file, v.Line, v.Column, name)
		}
		edits = append(edits, edit{off, len(v.Value), strconv.FormatInt(n, 10)})
	}
	for _, name := range order {
		if !seen[name] {
			return nil, fmt.Errorf("%s: --axes: no axis %s in the workload", file, name)
		}
	}
	out := append([]byte(nil), data...)
	for k := len(edits) - 1; k >= 0; k-- { // back to front: offsets stay valid
		e := edits[k]
		out = append(out[:e.off], append([]byte(e.val), out[e.off+e.n:]...)...)
	}
	return out, nil
}

// lineOffset is the byte offset of line:col (1-based, col in bytes as the
// YAML decoder counts runes; the workloads' axes lines are ASCII), -1 when
// outside data.
func lineOffset(data []byte, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off + col - 1
}

// planGraph is `plan GRAPH.yaml`: every op planned, the layouts chosen
// jointly, the graph plan printed and written.
func planGraph(w, stderr io.Writer, g *globals, wl *workload.Workload, f graphPlanFlags, opts search.Options, out string) error {
	spec, err := loadSpec(g)
	if err != nil {
		return err
	}
	cache := &search.DirCache{Dir: f.cache}
	if g.hw == "" && f.stored != "" {
		// The stored plans were made on the embedded spec.
		fi, err := os.Stat(f.stored)
		switch {
		case err == nil && fi.IsDir():
			cache.Stored = f.stored
		case f.stored != defaultStored:
			return usageError{fmt.Errorf("--stored %s: not a directory of stored plans", f.stored)}
		default:
			// Run from elsewhere than the repository's root: say so, as
			// planning the einsums takes far longer than reading them.
			fmt.Fprintf(stderr, "plan: no stored plans (no %s here): every einsum op is searched; --stored DIR names them\n", defaultStored)
		}
	}
	start := time.Now()
	var planner search.OpPlanner // the einsums only (the default)
	if f.vector {
		planner = search.PlanOpPlanner(spec)
	}
	gp, err := search.PlanGraph(wl, search.GraphOptions{Spec: spec, Op: opts, Cache: cache, Layouts: f.layouts, CacheOnly: f.only, Planner: planner,
		LayoutEvaluations: f.budget, VectorOps: f.vector, NoFuse: f.noFuse, NoResidency: f.noDM, NoExpand: f.noExp,
		Progress: func(op string, layouts []string, took time.Duration, searched int, err error) {
			if err != nil {
				fmt.Fprintf(stderr, "plan: op %s has no plan in layouts %s after %.1fs (not a choice): %v\n",
					op, strings.Join(layouts, ", "), took.Seconds(), err)
				return
			}
			fmt.Fprintf(stderr, "plan: op %s planned in %.1fs (layouts %s); %d op plans searched, %.1fs\n",
				op, took.Seconds(), strings.Join(layouts, ", "), searched, time.Since(start).Seconds())
		}})
	if err != nil {
		return err
	}
	wall := time.Since(start)
	if out != "" {
		data, err := gp.Encode(out)
		if err != nil {
			return err
		}
		if err := writeFile(out, data, 0o644); err != nil {
			return err
		}
	}
	if g.json {
		return writeJSON(w, graphOutput{Plan: gp, WallSeconds: wall.Seconds()})
	}
	writeGraph(w, gp, spec)
	fmt.Fprintf(w, "search: %s, %d layout classes, %d nodes, %d op plans cached or stored, %d searched, %.2fs\n",
		gp.Search.Method, gp.Search.Choices, gp.Search.Nodes, gp.Search.Cached, gp.Search.Searched, wall.Seconds())
	if n := gp.Search.Resident; n > 0 {
		var kept []string
		for _, t := range gp.Tensors {
			if t.Place == plan.PlaceDM {
				kept = append(kept, t.Name)
			}
		}
		fmt.Fprintf(w, "residency: %d tensor%s could stay in DM between a producer's and its consumer's kernels; kept there: %s (--no-residency: none)\n", n, plural(n), orNone(kept))
	}
	if n := gp.Search.Fusions; n > 0 {
		fmt.Fprintf(w, "fusion: %d choices of which epilogues to fuse into their contractions' kernels, each planned whole; the cheapest kept (--no-fuse: none)\n", n)
	}
	writeExpansions(w, gp)
	if n := prologues(gp); n > 0 {
		var names []string
		for _, o := range gp.Ops {
			for _, x := range o.Prologue {
				names = append(names, x+" → "+o.Name)
			}
		}
		fmt.Fprintf(w, "gathers read in their consumers' loads, through their index (the gather's kernel gone): %s (--no-fuse: none)\n", strings.Join(names, ", "))
	}
	unplanned := ""
	if n := gp.Search.Unplanned; n > 0 {
		unplanned = fmt.Sprintf("; %d layout classes stopped at --layout-evaluations before any legal candidate are not among them", n)
	}
	if gp.Search.Optimal == "proven" {
		model := "per-op plans, HBM layouts, DMA relayouts"
		if gp.Search.Fusions > 0 {
			model += ", epilogue fusion"
		}
		if prologues(gp) > 0 {
			model += ", gathers fused into loads"
		}
		if gp.Search.Resident > 0 {
			model += fmt.Sprintf(", DM residency of %d tensor%s", gp.Search.Resident, plural(gp.Search.Resident))
		}
		fmt.Fprintf(w, "optimal: proven (under the graph model: %s)%s\n", model, unplanned)
	} else {
		fmt.Fprintf(w, "optimal: no (node budget; gap %.1f%% to the lower bound of %.0f cycles)\n", 100*gp.Search.Gap, gp.Search.LowerBound)
	}
	if out != "" {
		fmt.Fprintf(w, "wrote %s\n", out)
	}
	return nil
}

// writeExpansions prints the ops a graph plan computes with ops of other
// kinds, and those it could not.
func writeExpansions(w io.Writer, gp *plan.Graph) {
	if n := gp.Search.NotExpanded; len(n) > 0 {
		fmt.Fprintf(w, "not expanded: %s (a part of its form in other ops has no kernel at these sizes: the op stays one op without a kernel)\n", strings.Join(n, ", "))
		// The part that has none, from the op's reason (search.PlanGraph).
		for _, o := range gp.Ops {
			if _, part, ok := strings.Cut(o.Reason, "; its form in other ops has a part without a kernel at these sizes, "); ok && slices.Contains(n, o.Name) {
				name, _, _ := strings.Cut(part, ":")
				fmt.Fprintf(w, "  %s: %s has no kernel (the plan's reason for %s says why)\n", o.Name, name, o.Name)
			}
		}
	}
	for _, x := range gp.Expansions {
		fmt.Fprintf(w, "expanded: %s (%s) computed by %d ops of kinds with kernels: %s (--no-expand: none)\n", x.Name, x.Kind, len(x.Parts), strings.Join(x.Parts, ", "))
	}
}

// writeGraph prints a graph plan: the per-op table and the totals.
func writeGraph(w io.Writer, gp *plan.Graph, spec *engines.Spec) {
	fmt.Fprintf(w, "graph %s: %d ops (%s)\n", gp.Workload.Name, len(gp.Ops), gp.Workload.Axes)
	producer := map[string]string{}
	relayout := map[[2]string]bool{}
	inDM := map[string]bool{}
	for _, t := range gp.Tensors {
		producer[t.Name] = t.Producer
		inDM[t.Name] = t.Place == plan.PlaceDM
		for _, r := range t.Relayouts {
			relayout[[2]string{t.Name, r.Consumer}] = true
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  op\tkind\tstatus\tkernel\tcycles\tMAC util\tbottleneck\tinputs from\t")
	for _, o := range gp.Ops {
		var from []string
		for _, in := range o.Inputs {
			src := "hbm input"
			if p := producer[in]; p != "" {
				src = p
			}
			if relayout[[2]string{in, o.Name}] {
				src += " (relayout)"
			}
			if inDM[in] {
				src += " (in DM)"
			}
			from = append(from, in+"←"+src)
		}
		cyc, util, bn, kern := "-", "-", "-", "-"
		if o.Plan != nil {
			kern = kernelText(o.Plan)
			if len(o.Epilogue) > 0 {
				kern += ", then " + strings.Join(o.Epilogue, ", ")
			}
			cyc = fmt.Sprintf("%.0f", o.Cycles)
			util = fmt.Sprintf("%.2f%%", 100*o.Plan.Cost.MACUtilization)
			bn = o.Plan.Cost.Bottleneck
		}
		status := o.Status
		if o.ExpandedFrom != "" {
			status += " (" + o.ExpandedFrom + ")"
		}
		if o.Status == plan.StatusFused {
			status = "fused into " + o.FusedInto
			if gp.Prologued(&gp.Tensors[slices.IndexFunc(gp.Tensors, func(t plan.GraphTensor) bool { return t.Name == o.Outputs[0] })]) {
				status += "'s loads"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", o.Name, o.Kind, status, kern, cyc, util, bn, strings.Join(from, ", "))
	}
	tw.Flush()
	c := gp.Cost
	fused := ""
	if epi := c.Fused - prologues(gp); epi > 0 {
		fused = fmt.Sprintf(", %d fused into their producers' kernels", epi)
	}
	if n := prologues(gp); n > 0 {
		fused += fmt.Sprintf(", %d gathers fused into their consumers' loads", n)
	}
	fmt.Fprintf(w, "total: %.0f cycles = %s (%d ops planned%s, %d views, %d not yet plannable: their kernels are not counted)\n",
		c.Cycles, seconds(c.Seconds), c.Planned, fused, c.Views, c.NotPlannable)
	fmt.Fprintf(w, "relayouts: %.0f cycles (%.1f%% of the total)\n", c.RelayoutCycles, 100*c.RelayoutShare)
	if c.OverlapCycles > 0 {
		fmt.Fprintf(w, "overlapped: %.0f cycles with every kernel in one program, as the scheduler overlaps the contexts across kernel boundaries (%+.2f%%)\n",
			c.OverlapCycles, 100*(c.OverlapCycles-c.Cycles)/c.Cycles)
	}
	fmt.Fprintf(w, "critical path: %s (%.0f cycles)\n", strings.Join(c.CriticalPath, " → "), c.CriticalCycles)
	fmt.Fprintf(w, "baseline (each op alone, row-major HBM between ops): %.0f cycles; this plan saves %.2f%%\n", c.BaselineCycles, 100*c.Saving)
	writeLayerRoofline(w, c.RooflineCycles, c.Cycles, c.NotPlannable)
	if c.NotPlannable > 0 {
		var names []string
		for _, o := range gp.Ops {
			if o.Status == plan.StatusNotPlannable {
				names = append(names, o.Name+" ("+o.Kind+")")
			}
		}
		fmt.Fprintf(w, "not yet plannable: %s\n", strings.Join(names, ", "))
	}
	_ = spec
}

// kernelText sums a kernel up in a few words: the operand in the TRF, the
// tiles, the packet.
func kernelText(p *plan.Plan) string {
	if m := p.OpMapping; m != nil {
		// A Vector Engine op: its form and spread (search.PlanOp); an
		// update_slice, a gather and a scatter are one DMA, on no slice.
		switch {
		case m.Form == "gather" || m.Form == "scatter":
			return m.Form + ", one DMA, an indirect loop"
		case m.Clusters*m.Slices == 0:
			return m.Form + ", one DMA in place"
		}
		s := fmt.Sprintf("%s over %d slices", m.Form, m.Clusters*m.Slices)
		if m.Tiles > 1 {
			s += fmt.Sprintf(", %d tiles", m.Tiles)
		}
		return s
	}
	tiles := 1
	for _, a := range p.Mapping.Axes {
		tiles *= a.Tile
	}
	s := p.Mapping.Stationary + " in TRF"
	if tiles > 1 {
		s += fmt.Sprintf(", %d tiles", tiles)
	}
	if p.Mapping.Switch {
		s += ", switched"
	}
	return s
}

// defaultStored is where `plan GRAPH.yaml` finds the stored einsum plans.
var defaultStored = filepath.Join("results", "plans")

// writeLayerRoofline prints a layer's roofline (search.LayerRoofline) and
// the plan's distance to it; nothing for a plan that states none.
func writeLayerRoofline(w io.Writer, roofline, cycles float64, notPlannable int) {
	if roofline <= 0 || cycles <= 0 {
		return
	}
	note := ""
	if notPlannable > 0 {
		note = fmt.Sprintf("; %d ops without a kernel count nothing in the plan", notPlannable)
	}
	fmt.Fprintf(w, "roofline: %.0f cycles (the einsums' MACs at peak, the layer's inputs read and outputs written once at the HBM bandwidths); this plan is %.2f× it, %.1f%% of the roofline%s\n",
		roofline, cycles/roofline, 100*roofline/cycles, note)
}

// prologues counts the gathers of gp fused into their consumers' loads
// (plan.GraphOp.Prologue).
func prologues(gp *plan.Graph) int {
	n := 0
	for _, o := range gp.Ops {
		n += len(o.Prologue)
	}
	return n
}
