package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"text/tabwriter"

	"tcpmap/cost"
	"tcpmap/emit"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/search"
	"tcpmap/verify"
)

// readGraphPlan reads path and returns its graph plan when it is one (a
// JSON object whose kind is "graph", gzip-compressed or not); nil, nil
// for any other file, which the single-kernel path reads and reports.
func readGraphPlan(path string) (*plan.Graph, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil // the single-kernel path reports it
	}
	if bytes.HasPrefix(data, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, nil
		}
		if data, err = io.ReadAll(io.LimitReader(zr, maxInflated+1)); err != nil || len(data) > maxInflated {
			return nil, nil
		}
	}
	if !plan.IsGraph(data) {
		return nil, nil
	}
	g, err := plan.UnmarshalGraph(data)
	if err != nil {
		return nil, (&verify.Source{Name: path, Data: data}).Locate(err)
	}
	return g, nil
}

// checkGraphKernels runs the validator every command runs (engines.Check)
// on every kernel of the graph plan and returns lowered copies, one per op
// (nil for ops without a kernel).
func checkGraphKernels(spec *engines.Spec, path string, g *plan.Graph) ([]*kernel.Program, error) {
	progs := make([]*kernel.Program, len(g.Ops))
	for i, o := range g.Ops {
		if o.Plan == nil {
			continue
		}
		where := fmt.Sprintf("%s: ops[%d] (%s).plan.program", path, i, o.Name)
		if err := engines.Check(spec, o.Plan.Program); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		data, err := o.Plan.Program.MarshalJSON()
		if err != nil {
			return nil, err
		}
		q := &kernel.Program{}
		if err := q.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if err := engines.Lower(spec, q); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		progs[i] = q
	}
	return progs, nil
}

// graphCostOp is one op of `cost GRAPH-PLAN`.
type graphCostOp struct {
	Op         string  `json:"op"`
	Status     string  `json:"status"`
	Start      float64 `json:"start"`
	Cycles     float64 `json:"cycles"`
	Planned    float64 `json:"planned_cycles"`
	Bottleneck string  `json:"bottleneck,omitempty"`
}

// graphCostOutput is `cost GRAPH-PLAN --json`.
type graphCostOutput struct {
	Graph          string        `json:"graph"`
	Ops            []graphCostOp `json:"ops"`
	Cycles         float64       `json:"cycles"`
	RelayoutCycles float64       `json:"relayout_cycles"`
	PlannedCycles  float64       `json:"planned_cycles"`
	OverlapCycles  float64       `json:"overlap_cycles,omitempty"`
	NotPlannable   int           `json:"not_plannable"`
}

// costGraph re-prices every kernel of a graph plan with the cost model in
// force and adds the plan's relayouts: the graph's total now, against the
// total the plan states. --trace writes one timeline: each kernel a
// process (its contexts and engines threads), at its start in the graph's
// sequential schedule, and the relayouts on a process of their own.
func costGraph(w io.Writer, g *globals, path string, gp *plan.Graph, trace string) error {
	spec, err := loadSpec(g)
	if err != nil {
		return err
	}
	out, reports, err := priceGraph(spec, path, gp, true)
	if err != nil {
		return err
	}
	if trace != "" {
		var b bytes.Buffer
		if err := writeGraphTrace(&b, gp, out.Ops, reports, spec); err != nil {
			return err
		}
		if err := writeFile(trace, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if g.json {
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tstatus\tstart\tcycles\tplanned\tbottleneck\t")
	for _, o := range out.Ops {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t\n", o.Op, o.Status, o.Start, o.Cycles, o.Planned, o.Bottleneck)
	}
	tw.Flush()
	fmt.Fprintf(w, "graph %s: %.0f cycles (the plan states %.0f; relayouts %.0f; %d ops not yet plannable, not counted)\n",
		gp.Workload.Name, out.Cycles, out.PlannedCycles, out.RelayoutCycles, out.NotPlannable)
	if out.OverlapCycles > 0 {
		fmt.Fprintf(w, "overlapped: %.0f cycles with every kernel in one program (the plan states %.0f)\n", out.OverlapCycles, gp.Cost.OverlapCycles)
	}
	writeLayerRoofline(w, gp.Cost.RooflineCycles, out.Cycles, out.NotPlannable)
	writeExpansions(w, gp)
	if d := math.Abs(out.Cycles - out.PlannedCycles); d > cost.DefaultTolerance*out.PlannedCycles {
		fmt.Fprintf(w, "drift: the cost model in force prices the graph %.2f%% away from its plan\n", 100*d/max(out.PlannedCycles, 1))
	}
	if trace != "" {
		fmt.Fprintf(w, "wrote %s\n", trace)
	}
	return nil
}

// priceGraph re-prices every kernel of a graph plan (checked and lowered
// as every command does) and schedules them in program order with the
// plan's relayouts; with overlap, also every kernel in one program
// (search.GraphSchedule).
func priceGraph(spec *engines.Spec, path string, gp *plan.Graph, overlap bool) (graphCostOutput, []*cost.Report, error) {
	progs, err := checkGraphKernels(spec, path, gp)
	if err != nil {
		return graphCostOutput{}, nil, err
	}
	// The relayouts, re-priced as the DMA commands that do them
	// (search.RelayoutCycles).
	incoming := map[string]float64{}
	out := graphCostOutput{Graph: gp.Workload.Name, PlannedCycles: gp.Cost.Cycles, NotPlannable: gp.Cost.NotPlannable}
	if err := search.PriceRelayouts(spec, gp, func(t *plan.GraphTensor, r *plan.Relayout, cycles float64) {
		incoming[r.Consumer] += cycles
		out.RelayoutCycles += cycles
	}); err != nil {
		return graphCostOutput{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	var reports []*cost.Report
	now := 0.0
	for i, o := range gp.Ops {
		now += incoming[o.Name]
		op := graphCostOp{Op: o.Name, Status: o.Status, Start: now, Planned: o.Cycles}
		var r *cost.Report
		if progs[i] != nil {
			if r, err = cost.Estimate(spec, progs[i]); err != nil {
				return graphCostOutput{}, nil, fmt.Errorf("%s: ops[%d] (%s): %w", path, i, o.Name, err)
			}
			op.Cycles, op.Bottleneck = r.Cycles, r.Bottleneck.String()
		}
		reports = append(reports, r)
		now += op.Cycles
		out.Ops = append(out.Ops, op)
	}
	out.Cycles = now
	if overlap && gp.Cost.Planned > 0 {
		r, err := search.GraphSchedule(spec, gp)
		switch {
		case err == nil:
			out.OverlapCycles = r.Cycles
		case !errors.Is(err, search.ErrPadded) && !errors.Is(err, search.ErrRelayout):
			return graphCostOutput{}, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, reports, nil
}

// graphBaselines adds the stored graph plans (results/graphs/*.graph.json[.gz],
// beside plansDir)
// to the regression baseline: each graph's total, re-priced, as one
// entry of the plans (its bottleneck "graph": the total is a sum of
// kernels, each of which has its own).
func graphBaselines(spec *engines.Spec, plansDir string, b *cost.Baseline) error {
	var files []string
	dir := filepath.Join(filepath.Dir(plansDir), "graphs")
	for _, pat := range []string{"*.graph.json", "*.graph.json" + plan.Compressed} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	// The layers are priced side by side (each alone is sequential); the
	// baseline holds the sequential totals, not the overlapped schedule.
	entries := make([]cost.BaselineEntry, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			gp, err := readGraphPlan(f)
			if err == nil && gp == nil {
				err = fmt.Errorf("%s: not a graph plan", f)
			}
			if err != nil {
				errs[i] = err
				return
			}
			out, _, err := priceGraph(spec, f, gp, false)
			if err != nil {
				errs[i] = err
				return
			}
			entries[i] = cost.BaselineEntry{File: filepath.ToSlash(f), Name: gp.Workload.Name,
				Cycles: math.Round(out.Cycles*10) / 10, Bottleneck: "graph"}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	b.Plans = append(b.Plans, entries...)
	return nil
}

// writeGraphTrace writes one Chrome trace-event timeline of the graph:
// each kernel's own timeline (cost.WriteTrace) shifted to its start and
// moved to processes of its own (named after the op), and the relayouts.
func writeGraphTrace(w io.Writer, gp *plan.Graph, ops []graphCostOp, reports []*cost.Report, spec *engines.Spec) error {
	type event = map[string]any
	var all []event
	us := 1.0 / (spec.Clock.GHz.Value * 1000) // 002 L2623, L2744: cycles at the spec's clock
	pid := 1
	meta := func(pid int, name string) {
		all = append(all, event{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": map[string]any{"name": name}},
			event{"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": map[string]any{"sort_index": pid}})
	}
	meta(pid, "graph "+gp.Workload.Name)
	for i, o := range ops {
		dur := o.Cycles * us
		all = append(all, event{"name": o.Op, "cat": o.Status, "ph": "X", "ts": o.Start * us, "dur": dur, "pid": 1, "tid": 1,
			"args": map[string]any{"cycles": o.Cycles, "status": o.Status}})
		r := reports[i]
		if r == nil {
			continue
		}
		var b bytes.Buffer
		if err := cost.WriteTrace(&b, r); err != nil {
			return err
		}
		var tf struct {
			TraceEvents []event `json:"traceEvents"`
		}
		if err := json.Unmarshal(b.Bytes(), &tf); err != nil {
			return err
		}
		base := pid + 1
		meta(base, o.Op+" contexts")
		meta(base+1, o.Op+" engines")
		for _, e := range tf.TraceEvents {
			if e["name"] == "process_name" || e["name"] == "process_sort_index" {
				continue
			}
			if p, ok := e["pid"].(float64); ok {
				e["pid"] = base + int(p) - 1
			}
			if ts, ok := e["ts"].(float64); ok {
				e["ts"] = ts + o.Start*us
			}
			all = append(all, e)
		}
		pid += 2
	}
	return json.NewEncoder(w).Encode(map[string]any{"traceEvents": all, "displayTimeUnit": "ns"})
}

// verifyGraph is `verify GRAPH-PLAN`.
func verifyGraph(w io.Writer, g *globals, path string, gp *plan.Graph, opts verify.GraphOptions) error {
	spec, err := loadSpec(g)
	if err != nil {
		return err
	}
	if _, err := checkGraphKernels(spec, path, gp); err != nil {
		return err
	}
	rep, err := verify.VerifyGraph(spec, gp, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if g.json {
		err = writeJSON(w, rep)
	} else {
		_, err = fmt.Fprint(w, rep)
	}
	if err != nil {
		return err
	}
	if !rep.Pass {
		return exitError{exitFail}
	}
	return nil
}

// emitGraph is `emit GRAPH-PLAN --lang rust`: one Rust file, every
// kernel in a module and a host function running the layer
// (emit.GraphRust), DIR/NAME.graph.rs.
func emitGraph(w io.Writer, g *globals, path string, gp *plan.Graph, out string, api emit.API) error {
	spec, err := loadSpec(g)
	if err != nil {
		return err
	}
	if _, err := checkGraphKernels(spec, path, gp); err != nil {
		return err
	}
	if !fileName(gp.Workload.Name) {
		return fmt.Errorf("%s: graph name %q cannot name a file", path, gp.Workload.Name)
	}
	data, err := emit.GraphRust(gp, emit.RustOptions{Version: Version, Spec: spec, API: api})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	f := filepath.Join(out, gp.Workload.Name+".graph.rs")
	if err := writeFile(f, data, 0o644); err != nil {
		return err
	}
	if g.json {
		return writeJSON(w, map[string]any{"files": []emittedFile{{Path: f, Lang: "rust", Bytes: len(data)}}})
	}
	fmt.Fprintln(w, f)
	return nil
}
