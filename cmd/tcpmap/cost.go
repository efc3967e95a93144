package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"tcpmap/emit"
	"tcpmap/model/plan"
	"tcpmap/verify"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
)

func init() { subcommands = append(subcommands, newCostCmd) }

// programLoader reads one kind of input into a kernel program.
type programLoader struct {
	// suffix selects the loader by file name; the first match wins, so
	// longer suffixes come first.
	suffix string
	load   func(spec *engines.Spec, path string) (*kernel.Program, error)
}

// programLoaders are the inputs `tcpmap cost` and `tcpmap regress` accept.
// A plan (`.plan.json`, from the planner) or a Rust kernel (`.rs`, through
// emit.ReadFile) is one more line here, before the plain JSON kernel.
var programLoaders = []programLoader{
	{".plan.json", readPlan},
	{".plan.json.gz", readPlan},
	{".rs", readKernelRust},
	{".json", readKernelJSON},
}

// readPlan reads a plan (`tcpmap plan --out`) and returns its kernel program.
func readPlan(_ *engines.Spec, path string) (*kernel.Program, error) {
	pl, err := plan.Read(path)
	if err != nil {
		return nil, err
	}
	if pl.Program == nil {
		return nil, fmt.Errorf("%s: the plan has no kernel program", path)
	}
	return pl.Program, nil
}

// readKernelRust reads a Rust Virtual ISA kernel in the subset tcpmap emits
// (emit.ReadFile); its errors name the file, line and column.
func readKernelRust(_ *engines.Spec, path string) (*kernel.Program, error) {
	return emit.ReadFile(path)
}

// loadProgram reads path with the loader its name selects.
func loadProgram(spec *engines.Spec, path string) (*kernel.Program, error) {
	var kinds []string
	for _, l := range programLoaders {
		if strings.HasSuffix(path, l.suffix) {
			return l.load(spec, path)
		}
		kinds = append(kinds, l.suffix)
	}
	return nil, usageError{fmt.Errorf("%s: unknown input kind: want a file ending in %s", path, strings.Join(kinds, ", "))}
}

// readKernelJSON reads a kernel program in its JSON form; errors name the
// file, the line and the JSON path (verify.LoadKernel).
func readKernelJSON(_ *engines.Spec, path string) (*kernel.Program, error) {
	p, _, err := verify.LoadKernel(path)
	return p, err
}

// priceFile loads, lowers and prices one input.
func priceFile(spec *engines.Spec, path string) (*cost.Report, error) {
	p, err := loadProgram(spec, path)
	if err != nil {
		return nil, err
	}
	if err := engines.Lower(spec, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := cost.Estimate(spec, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func newCostCmd(g *globals) *cobra.Command {
	var trace string
	cmd := &cobra.Command{
		Use:   "cost KERNEL.json",
		Short: "Price a kernel program: schedule, busy time per engine and context, bottleneck, utilization",
		Long: `cost lowers a kernel program (engines.Lower) and prices it with the cost
model: every op alone (each chain as a pipeline of its engines, each DMA
command over its request stream), then all ops as the scheduler runs them
(program order, one op per context, DMA commands issued together priced
together, RAW/WAR/WAW hazards, bank-starvation and contention rules).

It prints each op's schedule, the busy time of every context and engine,
the bottleneck on the critical path, the MAC utilization and roofline, and
the findings: hazards, penalties and unpriced costs with their rules and
citations. Times assume the spec's clock (the manual's 1 GHz assumption).
--json prints the report; --trace FILE writes a Chrome trace-event timeline
(open it in Perfetto). The exit code is 1 if a finding makes the kernel
invalid (a capacity exceeded, live tensors overlapping).`,
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
