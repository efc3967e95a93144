package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/model/workload"
	"tcpmap/search"
)

// nonEinsumOp returns the op of a graph workload called name when it is
// not an einsum, or is an einsum that contracts no axis (planned as a
// contraction and as a multiply, search.PlanOp); nil for another einsum,
// or when the workload does not load (the einsum path reports that).
func nonEinsumOp(file, name string) (*workload.Workload, *workload.Op) {
	if name == "" {
		return nil, nil
	}
	w, err := workload.Load(file)
	if err != nil {
		return nil, nil
	}
	for _, o := range w.Ops {
		if o.Name == name && (o.Kind != workload.KindEinsum || workload.ProductOp(w, o) != nil) {
			return w, o
		}
	}
	return nil, nil
}

// planOp is `tcpmap plan --op NAME` for a non-einsum op: search.PlanOp
// over the op's mapspace (enumerated whole), the plan printed and written.
//
// An op with no kernel of its own that graph planning computes with ops
// of other kinds (workload.Expand) is planned so: the graph of the op
// alone, planned whole with --vector-ops; --out then writes a graph plan.
func planOp(ctx context.Context, c *cobra.Command, g *globals, gf graphPlanFlags, w *workload.Workload, o *workload.Op, opts search.Options, out string) error {
	spec, err := loadSpec(g)
	if err != nil {
		return err
	}
	opts.Spec, opts.Context = spec, ctx
	if o.Kind != workload.KindEinsum {
		opts.Progress = nil // an op space is priced in a second or two
	}
	res, err := search.PlanOp(w, o.Name, opts)
	if errors.Is(err, search.ErrNoKernel) {
		if sub, serr := workload.OpGraph(w, o.Name); serr == nil {
			if _, exps, xerr := workload.Expand(sub); xerr == nil && len(exps) == 1 {
				with := ""
				if m := workload.MaskOp(w, o); m != nil {
					// The compaction's form needs its mask's 0s and 1s.
					with = fmt.Sprintf(", with %s (%s), which writes its mask", m.Name, m.Kind)
				}
				fmt.Fprintf(c.OutOrStdout(), "plan %s op %s: %s has no kernel of its own: planned as the graph of the %d ops of kinds with kernels that compute it%s (docs/spec-decisions.md \"Index ops in kernels of other kinds\")\n",
					w.Name, o.Name, o.Kind, len(exps[0].Parts), with)
				gf.vector = true
				return planGraph(c.OutOrStdout(), c.ErrOrStderr(), g, sub, gf, opts, out)
			}
		}
	}
	if err != nil {
		return err
	}
	wr := c.OutOrStdout()
	if res.Free {
		fmt.Fprintf(wr, "plan %s op %s: %s needs no kernel: a row-major view of %s's bytes as %s\n", w.Name, o.Name, o.Kind, o.Inputs[0], o.Outputs[0])
		return nil
	}
	if res.Plan == nil {
		fmt.Fprintf(c.ErrOrStderr(), "%s: op %s: stopped (%s) before any legal candidate\n", w.File, o.Name, res.Stats.Stopped)
		if res.Product != "" {
			fmt.Fprintf(c.ErrOrStderr(), "%s: op %s contracts no axis; as a Vector Engine multiply: %s\n", w.File, o.Name, res.Product)
		}
		return exitError{3}
	}
	pl := res.Plan
	if out != "" {
		data, err := pl.Encode(out)
		if err != nil {
			return err
		}
		if err := writeFile(out, data, 0o644); err != nil {
			return err
		}
	}
	if g.json {
		return writeJSON(wr, planOutput{Plan: pl, WallSeconds: res.Stats.Wall.Seconds(), Target: "manual"})
	}
	if o.Kind == workload.KindEinsum {
		// An einsum that contracts no axis, planned both ways.
		fmt.Fprintf(wr, "plan %s op %s: einsum %s contracts no axis: planned as a contraction and as a Vector Engine multiply (an input broadcast over the axes it lacks)\n", w.Name, o.Name, o.Einsum)
		if pl.OpMapping == nil {
			fmt.Fprintf(wr, "kept the contraction: cycles %.0f (%.3f µs); bottleneck %s; %.1f%% of the roofline; optimal: %s\n",
				pl.Cost.Cycles, pl.Cost.Seconds*1e6, pl.Cost.Bottleneck, 100*pl.Cost.Roofline, orText(pl.Search.Optimal, "no (stopped)"))
			fmt.Fprintf(wr, "the multiply: %s\n", res.Product)
			if out != "" {
				fmt.Fprintf(wr, "wrote %s\n", out)
			}
			return nil
		}
		switch {
		case res.Einsum == nil:
		case res.Einsum.Best != nil:
			fmt.Fprintf(wr, "kept the multiply: the contraction's best is %.0f cycles\n", res.Einsum.Best.Report.Cycles)
		default:
			fmt.Fprintf(wr, "kept the multiply: the contraction search found no plan (%s)\n", orText(res.Einsum.Stats.Stopped, "no legal candidate"))
		}
	}
	m := pl.OpMapping
	fmt.Fprintf(wr, "plan %s op %s: %s (%s)\n", w.Name, o.Name, pl.Workload.Kind, pl.Workload.Axes)
	switch o.Kind {
	case workload.KindGather:
		fmt.Fprintf(wr, "form %s: the rows of %s that %s names (gathered axes %s) copied in index order into %s by one HBM-to-HBM DMA with an indirect loop; no slice computes", m.Form, o.Inputs[0], o.Inputs[1], strings.Join(o.Axes, ", "), o.Outputs[0])
	case workload.KindScatter:
		fmt.Fprintf(wr, "form %s: the rows of %s written at the rows of %s that %s names (scattered axes %s) by one HBM-to-HBM DMA with an indirect loop on its write side; the rows no index names are not written; no slice computes", m.Form, o.Inputs[0], o.Outputs[0], o.Inputs[1], strings.Join(o.Axes, ", "))
	case workload.KindUpdateSlice:
		fmt.Fprintf(wr, "form %s: %s written in place into the last %s of %s by one HBM-to-HBM DMA; no slice computes", m.Form, o.Inputs[1], o.Axis, o.Inputs[0])
	default:
		fmt.Fprintf(wr, "form %s; %v split into %d tiles (two DM buffers when more than one), each over %d cluster(s) × %d slice(s)", m.Form, m.Spread, m.Tiles, m.Clusters, m.Slices)
	}
	if m.Reduced != "" {
		fmt.Fprintf(wr, "; %s reduced within each slice", m.Reduced)
	}
	if m.HBMOrder {
		fmt.Fprintf(wr, "; the input in DM in its HBM order")
	}
	if m.DMNSpread {
		fmt.Fprintf(wr, "; the slices spread over the cluster's DMNs")
	}
	if m.Stagger > 0 {
		fmt.Fprintf(wr, "; output %d bytes past its HBM boundary", m.Stagger)
	}
	fmt.Fprintln(wr)
	fmt.Fprintf(wr, "cycles %.0f (%.3f µs); bottleneck %s (%.1f%%); HBM %d bytes; roofline %.0f cycles: %.1f%% of the roofline\n",
		pl.Cost.Cycles, pl.Cost.Seconds*1e6, pl.Cost.Bottleneck, 100*pl.Cost.BottleneckShare, pl.Cost.HBMBytes, pl.Cost.RooflineCycles, 100*pl.Cost.Roofline)
	st := pl.Search
	opt := "optimal: exhaustive (every candidate of the op's space priced)"
	if st.Optimal == "" {
		opt = fmt.Sprintf("stopped (%s): the best of the %d candidates priced; gap %.1f%% to the roofline (%.0f cycles), which bounds the others",
			st.Stopped, st.Candidates, 100*st.Gap, st.LowerBound)
		if o.Kind == workload.KindEinsum {
			opt = fmt.Sprintf("the multiply's space enumerated whole, the contraction's search stopped (%s); gap %.1f%% to the lower bound %.0f cycles (the smaller of the two spaces' bounds, at least the roofline)",
				st.Stopped, 100*st.Gap, st.LowerBound)
		}
	}
	fmt.Fprintf(wr, "%s; %d candidates, %d legal\n", opt, st.Candidates, st.Legal)
	for _, r := range st.Illegal {
		if r.Cite == "" {
			// Not an engine rule: the op space's own shape (a
			// candidate whose positions do not divide as it needs).
			fmt.Fprintf(wr, "  illegal %-8s ×%d (no engine rule: the candidate's positions do not divide as its kernel needs)\n", r.Rule, r.Count)
			continue
		}
		fmt.Fprintf(wr, "  illegal %-8s ×%d (%s)\n", r.Rule, r.Count, r.Cite)
	}
	if out != "" {
		fmt.Fprintf(wr, "wrote %s\n", out)
	}
	return nil
}

// orText is s, or alt when s is empty.
func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
