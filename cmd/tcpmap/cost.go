package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tcpmap/cost"
	"tcpmap/engines"
)

func init() { subcommands = append(subcommands, newCostCmd) }

// priceFile loads, checks, lowers and prices one input (readInput: a
// kernel program, JSON or Rust, or a plan).
func priceFile(spec *engines.Spec, path string) (*cost.Report, error) {
	in, err := loadProgram(spec, path)
	if err != nil {
		return nil, err
	}
	if err := engines.Lower(spec, in.prog); err != nil {
		return nil, in.locate(err)
	}
	r, err := cost.Estimate(spec, in.prog)
	if err != nil {
		return nil, in.locate(err)
	}
	return r, nil
}

func newCostCmd(g *globals) *cobra.Command {
	var trace string
	cmd := &cobra.Command{
		Use:         "cost KERNEL.json|KERNEL.rs|PLAN.plan.json",
		Annotations: readsHW,
		Short:       "Price a kernel program: schedule, busy time per engine and context, bottleneck, utilization",
		Long: `cost reads a kernel program (its JSON, a Rust kernel, or a plan — told apart by
content, gzip-compressed or not), checks it against the hardware spec (the
validator verify and emit run too), lowers it (engines.Lower) and prices it
with the cost model: every op alone (each chain as a pipeline of its engines, each DMA
command over its request stream), then all ops as the scheduler runs them
(program order, one op per context, DMA commands issued together priced
together, RAW/WAR/WAW hazards, bank-starvation and contention rules).

It prints each op's schedule, the busy time of every context and engine,
the bottleneck on the critical path, the MAC utilization and roofline, and
the findings: hazards, penalties and unpriced costs with their rules and
citations. Times assume the spec's clock (the manual's 1 GHz assumption).
--json prints the report; --trace FILE writes a Chrome trace-event timeline
(open it in Perfetto), replacing the file atomically; its path is checked
before pricing. The exit code is 1 for an invalid kernel (a tensor read
before it is written, an address beyond its memory, a capacity exceeded,
live tensors overlapping, an engine rule broken), with the field's line.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if trace != "" {
				if err := checkOutput("--trace", trace); err != nil {
					return err
				}
			}
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			if gp, err := readGraphPlan(args[0]); err != nil || gp != nil {
				if err != nil {
					return err
				}
				return costGraph(c.OutOrStdout(), g, args[0], gp, trace) // graph_cmds.go
			}
			r, err := priceFile(spec, args[0])
			if err != nil {
				return err
			}
			if trace != "" {
				var b bytes.Buffer
				if err := cost.WriteTrace(&b, r); err != nil {
					return err
				}
				if err := writeFile(trace, b.Bytes(), 0o644); err != nil {
					return err
				}
			}
			out := c.OutOrStdout()
			if g.json {
				err = writeJSON(out, r)
			} else {
				err = writeCostReport(out, r)
			}
			if err != nil {
				return err
			}
			if e := r.Err(); e != nil {
				fmt.Fprintf(c.ErrOrStderr(), "tcpmap: %s: invalid kernel: %v\n", args[0], e)
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&trace, "trace", "", "write a Chrome trace-event timeline to `FILE`")
	return cmd
}

// writeCostReport prints a report as tables.
func writeCostReport(w io.Writer, r *cost.Report) error {
	ew := &errWriter{w: w}
	clock := fmt.Sprintf("%g GHz", r.Clock.GHz)
	if r.Clock.Assumption {
		clock += ", the manual's assumption (" + r.Clock.Cite + ")"
	}
	fmt.Fprintf(ew, "kernel %s: %.0f cycles = %.3f µs at %s\n", r.Kernel, r.Cycles, r.Seconds*1e6, clock)
	if r.DMABound {
		fmt.Fprintf(ew, "DMA commands priced by their lower bound\n")
	}
	fmt.Fprintf(ew, "bottleneck: %s (%.0f cycles, %.1f%% of the critical path ops %s)\n\n", r.Bottleneck, r.Bottleneck.Cycles, 100*r.Bottleneck.Share, pathText(r.Bottleneck.Path))

	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tcontext\tkind\tsrc → dst\tstart\tend\tcycles\talone\tbound by\twaits for\t")
	for _, o := range r.Ops {
		waits := "-"
		if o.Waits >= 0 {
			waits = fmt.Sprint(o.Waits)
		}
		kind := string(o.Kind)
		if o.Batch >= 0 {
			kind += fmt.Sprintf(" [batch %d]", o.Batch)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s → %s\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%s\t\n", o.Index, o.Context, kind, o.Src, o.Dst,
			o.Start, o.End, o.End-o.Start, o.Cost.Cycles, o.Cost.Bottleneck, waits)
	}
	tw.Flush()
	fmt.Fprintln(ew)

	tw = tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "context\tengine\tbusy\tutilization\t")
	for _, c := range r.Contexts {
		fmt.Fprintf(tw, "%s\t(all)\t%.0f\t%.1f%%\t\n", c.Context, c.Busy, 100*c.Utilization)
		for _, e := range r.Engines {
			if e.Context == c.Context {
				fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f%%\t\n", e.Context, e.Engine, e.Busy, 100*e.Utilization)
			}
		}
	}
	tw.Flush()
	fmt.Fprintln(ew)

	u, rf := r.Utilization, r.Roofline
	if u.MACs > 0 {
		fmt.Fprintf(ew, "MACs %d, peak %d/cycle (%s): MAC utilization %.4f%%\n", u.MACs, u.PeakMACsPerCycle, u.DType, 100*u.MAC)
	} else {
		fmt.Fprintf(ew, "MACs 0: no einsum reference, MAC utilization not applicable\n")
	}
	fmt.Fprintf(ew, "roofline: %d HBM bytes at %.0f B/cycle peak (%.2f%% used); intensity %.3f MAC/B, ridge %.3f MAC/B; compute %.0f cycles, memory %.0f cycles: %s-bound\n",
		rf.HBMBytes, rf.PeakHBMBytesPerCycle, 100*rf.HBM, rf.Intensity, rf.Ridge, rf.ComputeCycles, rf.MemoryCycles, rf.Bound)
	if rf.Attained > 0 {
		fmt.Fprintf(ew, "workload roofline: %.0f cycles (compute %.0f; %d bytes read and %d written once at the HBM read and write bandwidths: %.0f); this kernel is %.2f× it (%.1f%% of the roofline)\n",
			rf.IdealCycles, rf.ComputeCycles, rf.MinReadBytes, rf.MinWriteBytes, rf.MinMemoryCycles, 1/rf.Attained, 100*rf.Attained)
	}

	if len(r.Findings) > 0 {
		fmt.Fprintf(ew, "\nfindings:\n")
		for _, f := range r.Findings {
			where := "program"
			if f.Op >= 0 {
				where = fmt.Sprintf("ops[%d]", f.Op)
			}
			id := "?"
			if f.Violation != nil && f.Violation.Rule != nil {
				id = f.Violation.Rule.ID
			}
			fmt.Fprintf(ew, "  %s: %s %s\n", where, id, f.String())
		}
	}
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

// maxPathOps is how many critical-path ops the text report lists before
// eliding the middle (--json has them all).
const maxPathOps = 24

// pathText prints a critical path's op indices, the middle elided when
// long: [0 1 2 … 7173 7174] (n ops).
func pathText(path []int) string {
	if len(path) <= maxPathOps {
		return fmt.Sprint(path)
	}
	h := maxPathOps / 2
	head := strings.Trim(fmt.Sprint(path[:h]), "[]")
	tail := strings.Trim(fmt.Sprint(path[len(path)-h:]), "[]")
	return fmt.Sprintf("[%s … %s] (%d ops)", head, tail, len(path))
}
