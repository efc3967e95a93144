package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tcpmap/results"
	"tcpmap/results/record"
)

func init() { subcommands = append(subcommands, newResultsCmd) }

// resultsFlags are the store and the filters the query commands share.
type resultsFlags struct {
	db         string
	workload   string
	sweep      string
	bottleneck string
	status     string
	where      []string
}

func (f *resultsFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.workload, "workload", "", "only the workload `NAME` (or NAME/OP for an op of a graph)")
	cmd.Flags().StringVar(&f.sweep, "sweep", "", "only the results of the sweep `NAME`")
	cmd.Flags().StringVar(&f.bottleneck, "bottleneck", "", "only the results whose bottleneck contains `TEXT` (hbm, switch, main/fetch, …)")
	cmd.Flags().StringVar(&f.status, "status", "", "only the results with `STATUS` planned, no-plan or infeasible")
	cmd.Flags().StringArrayVar(&f.where, "where", nil, "only the results with `COND` on a parameter or a column: M=1024, M>=512, M=256..2048, dtype=bf16, roofline>0.5 (repeatable)")
}

// filter builds the filter; bad conditions are usage errors.
func (f *resultsFlags) filter() (record.Filter, error) {
	flt := record.Filter{Workload: f.workload, Sweep: f.sweep, Bottleneck: f.bottleneck, Status: f.status}
	switch f.status {
	case "", record.StatusPlanned, record.StatusNoPlan, record.StatusInfeasible:
	default:
		return flt, usageError{fmt.Errorf("--status %q: want planned, no-plan or infeasible", f.status)}
	}
	for _, w := range f.where {
		c, err := record.ParseCond(w)
		if err != nil {
			return flt, usageError{err}
		}
		flt.Where = append(flt.Where, c)
	}
	return flt, nil
}

// openStore opens an existing store: a query of a missing file is an
// error, not an empty store.
func openStore(path string) (*results.Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	return results.Open(path)
}

// query opens the store and lists the results the filters select.
func (f *resultsFlags) query(plans bool) (*results.Store, []*record.Record, error) {
	flt, err := f.filter()
	if err != nil {
		return nil, nil, err
	}
	st, err := openStore(f.db)
	if err != nil {
		return nil, nil, err
	}
	rs, err := st.List(flt, plans)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, rs, nil
}

func newResultsCmd(g *globals) *cobra.Command {
	f := &resultsFlags{}
	cmd := &cobra.Command{
		Use:   "results",
		Short: "Query, export, merge and plot the result store",
		Long: `results reads the result store that tcpmap sweep writes (--db, default
results/tcpmap.db; docs/results-store.md). list, best and export take filters:
--workload, --sweep, --bottleneck, --status and --where conditions on a swept
parameter (an axis name, dtype, hw.<field>, a planner option) or a column
(cycles, roofline, mac_utilization, hbm_utilization, gap, macs,
wall_seconds).`,
	}
	cmd.PersistentFlags().StringVar(&f.db, "db", results.DefaultPath, "the result store `FILE`")
	cmd.AddCommand(newResultsListCmd(g, f), newResultsShowCmd(g, f), newResultsBestCmd(g, f),
		newResultsExportCmd(f), newResultsMergeCmd(g), newResultsPlotCmd(g, f))
	return cmd
}

// writeResultsTable prints results one a line.
func writeResultsTable(w io.Writer, rs []*record.Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tpoint\tstatus\tcycles\t% MAC peak\t% roofline\tbottleneck\tsearch")
	for _, r := range rs {
		search := r.Optimal
		if search == "" && r.Status == record.StatusPlanned {
			search = fmt.Sprintf("gap %.0f%%", 100*r.Gap)
		}
		if r.Status != record.StatusPlanned {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\t%s\n", r.Key.ID()[:12], r.PointText(), r.Status, r.Message)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.2f\t%.1f\t%s\t%s\n", r.Key.ID()[:12], r.PointText(), r.Status,
			r.Cycles, 100*r.MACUtilization, 100*r.Roofline, r.Bottleneck, search)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d results\n", len(rs))
	return err
}

func newResultsListCmd(g *globals, f *resultsFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stored results the filters select, in sweep order",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, rs, err := f.query(false)
			if err != nil {
				return err
			}
			defer st.Close()
			if g.json {
				return record.WriteJSON(c.OutOrStdout(), rs)
			}
			return writeResultsTable(c.OutOrStdout(), rs)
		},
	}
	f.add(cmd)
	return cmd
}

func newResultsBestCmd(g *globals, f *resultsFlags) *cobra.Command {
	var by []string
	cmd := &cobra.Command{
		Use:   "best",
		Short: "The result with the fewest cycles, or one per group (--by)",
		Long: `best prints the planned result with the fewest cycles among those the filters
select, or with --by one per group of results that share the named parameters
or fields (workload, op, einsum, axes, dtype, sweep, an axis name, hw.<field>,
a planner option): --by M,N lists the best K for each M and N.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, rs, err := f.query(false)
			if err != nil {
				return err
			}
			defer st.Close()
			best := record.Best(rs, by)
			if g.json {
				return record.WriteJSON(c.OutOrStdout(), best)
			}
			return writeResultsTable(c.OutOrStdout(), best)
		},
	}
	cmd.Flags().StringSliceVar(&by, "by", nil, "group by these `NAMES` (comma-separated)")
	f.add(cmd)
	return cmd
}

func newResultsExportCmd(f *resultsFlags) *cobra.Command {
	var csvOut, jsonOut bool
	var out string
	cmd := &cobra.Command{
		Use:   "export --csv|--json",
		Short: "Export the results the filters select as CSV or JSON",
		Long: `export writes every column of the results the filters select (the plans
left out: results show --plan writes one), one column per swept parameter
(param:NAME) in CSV, to stdout or --out FILE (replaced atomically).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if csvOut == jsonOut {
				return usageError{fmt.Errorf("export: give exactly one of --csv and --json")}
			}
			if out != "" {
				if err := checkOutput("--out", out); err != nil {
					return err
				}
			}
			st, rs, err := f.query(false)
			if err != nil {
				return err
			}
			defer st.Close()
			write := record.WriteJSON
			if csvOut {
				write = record.WriteCSV
			}
			if out == "" {
				return write(c.OutOrStdout(), rs)
			}
			var b strings.Builder
			if err := write(&b, rs); err != nil {
				return err
			}
			return writeFile(out, []byte(b.String()), 0o644)
		},
	}
	cmd.Flags().BoolVar(&csvOut, "csv", false, "write CSV")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "write JSON")
	cmd.Flags().StringVar(&out, "out", "", "write to `FILE` instead of stdout")
	f.add(cmd)
	return cmd
}

// showOutput is `results show --json`.
type showOutput struct {
	ID string `json:"id"`
	*record.Record
	Plan json.RawMessage `json:"plan,omitempty"`
}

func newResultsShowCmd(g *globals, f *resultsFlags) *cobra.Command {
	var planOut string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one stored result (ID: its key, or the first 6 or more hex digits)",
		Long: `show prints every field of one result, its parameters and its key's
hashes; --plan FILE writes its plan (the file tcpmap plan --out writes, which
cost, verify and emit read; compressed when FILE ends in .gz).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if planOut != "" {
				if err := checkOutput("--plan", planOut); err != nil {
					return err
				}
			}
			st, err := openStore(f.db)
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := st.Get(args[0])
			if err != nil {
				return usageError{err}
			}
			if r == nil {
				return fmt.Errorf("%s: no result %s", f.db, args[0])
			}
			var plan []byte
			if r.Plan != nil {
				if plan, err = record.Decompress(r.Plan); err != nil {
					return fmt.Errorf("%s: result %s: the stored plan: %w", f.db, r.Key.ID()[:12], err)
				}
			}
			if planOut != "" {
				if plan == nil {
					return fmt.Errorf("%s: result %s has no plan (%s)", f.db, r.Key.ID()[:12], r.Status)
				}
				data := plan
				if strings.HasSuffix(planOut, ".gz") {
					data = r.Plan
				}
				if err := writeFile(planOut, data, 0o644); err != nil {
					return err
				}
			}
			if g.json {
				return writeJSON(c.OutOrStdout(), showOutput{ID: r.Key.ID(), Record: r, Plan: plan})
			}
			w := c.OutOrStdout()
			fmt.Fprintf(w, "result %s\n", r.Key.ID())
			fmt.Fprintf(w, "point: %s (sweep %s, point %d)\n", r.PointText(), r.Sweep, r.Point)
			fmt.Fprintf(w, "workload: %s  (%s), %s\n", r.Einsum, r.Axes, r.DType)
			fmt.Fprintf(w, "status: %s", r.Status)
			if r.Message != "" {
				fmt.Fprintf(w, " (%s)", r.Message)
			}
			fmt.Fprintln(w)
			if r.Status == record.StatusPlanned {
				fmt.Fprintf(w, "cost: %.0f cycles = %s; MAC utilization %.2f%%, HBM %.1f%%; bottleneck %s (%.0f%%); %s-bound\n",
					r.Cycles, seconds(r.Seconds), 100*r.MACUtilization, 100*r.HBMUtilization, r.Bottleneck, 100*r.BottleneckShare, r.Bound)
				fmt.Fprintf(w, "roofline: %.0f cycles; this plan reaches %.1f%% of it\n", r.RooflineCycles, 100*r.Roofline)
				opt := r.Optimal
				if opt == "" {
					opt = fmt.Sprintf("no (stopped: %s; gap %.1f%%)", r.Stopped, 100*r.Gap)
				}
				fmt.Fprintf(w, "optimal: %s\n", opt)
			}
			fmt.Fprintf(w, "search: %d candidates, %d legal, %.2fs\n", r.Candidates, r.Legal, r.WallSeconds)
			fmt.Fprintf(w, "key: workload %s, hw %s, options %s, cost model %s\n", r.Key.Workload[:12], r.Key.HW[:12], r.Key.Options[:12], r.Key.Cost)
			if planOut != "" {
				fmt.Fprintf(w, "wrote %s\n", planOut)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&planOut, "plan", "", "write the result's plan to `FILE`")
	return cmd
}

// mergeOutput is `results merge --json`.
type mergeOutput struct {
	Out       string             `json:"out"`
	Inputs    []string           `json:"inputs"`
	Added     int                `json:"added"`
	Same      int                `json:"same"`
	Results   int                `json:"results"`
	Conflicts []results.Conflict `json:"conflicts"`
}

func newResultsMergeCmd(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge A.db B.db ... --out ALL.db",
		Short: "Merge result stores (the shards of a sweep) into one",
		Long: `merge copies every result of the input stores into --out (created if
missing; its own results stay). A result --out already holds is kept: an equal
one is counted as the same, a different one (another plan or cycles for the
same key, e.g. two searches stopped at their timeouts) is reported as a
conflict. Merging a store again changes nothing. Exit status 1 when there are
conflicts.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("merge: --out ALL.db is required")}
			}
			if c.Flags().Changed("db") {
				return usageError{fmt.Errorf("merge: --db does not apply; name the inputs and --out")}
			}
			for _, in := range args {
				if _, err := os.Stat(in); err != nil {
					return err
				}
			}
			dst, err := results.Open(out)
			if err != nil {
				return err
			}
			defer dst.Close()
			o := mergeOutput{Out: out, Inputs: args, Conflicts: []results.Conflict{}}
			for _, in := range args {
				rep, err := dst.Merge(in)
				if err != nil {
					return err
				}
				o.Added += rep.Added
				o.Same += rep.Same
				o.Conflicts = append(o.Conflicts, rep.Conflicts...)
			}
			if o.Results, err = dst.Count(); err != nil {
				return err
			}
			if g.json {
				if err := writeJSON(c.OutOrStdout(), o); err != nil {
					return err
				}
			} else {
				w := c.OutOrStdout()
				fmt.Fprintf(w, "merged %d stores into %s: %d added, %d already there, %d conflicts; %d results\n",
					len(args), out, o.Added, o.Same, len(o.Conflicts), o.Results)
				for _, x := range o.Conflicts {
					fmt.Fprintf(w, "CONFLICT %s %s: %s differs: kept %s; %s has %s\n", x.ID[:12], x.Point, x.Reason, x.Kept, x.File, x.Other)
				}
			}
			if len(o.Conflicts) > 0 {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the merged store `FILE`")
	return cmd
}

func newResultsPlotCmd(g *globals, f *resultsFlags) *cobra.Command {
	var x, out, title string
	var seriesBy, pareto, only []string
	cmd := &cobra.Command{
		Use:   "plot --x PARAM --out PREFIX",
		Short: "Plot the results the filters select (SVG and PNG, gonum/plot)",
		Long: `plot draws the planned results the filters select and writes each plot as
PREFIX-NAME.svg and PREFIX-NAME.png (replaced atomically):

  cycles      the predicted cycles against the swept parameter --x, one line
              per combination of the --series parameters
  peak        the MAC utilization (% of the chip's peak) against --x
  roofline    every result on the roofline: attained MACs per cycle against
              MACs per HBM byte (the inputs read and output written once),
              under each hardware spec's roofs
  bottleneck  the results' bottlenecks, stacked per value of --x
  pareto      with --pareto A,B: every result on two objectives (columns or
              parameters, both minimized) and the front no result beats on
              both

--plots names the plots to draw (default: all, pareto with --pareto). For the
cycles and peak lines, every parameter that varies among the results at one
--x must be a --series parameter (fix the others with --where); the roofline
and bottleneck plots take any results.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if x == "" || out == "" {
				return usageError{fmt.Errorf("plot: --x PARAM and --out PREFIX are required")}
			}
			var po results.PlotOptions
			switch len(pareto) {
			case 0:
			case 2:
				po.Pareto = [2]string{pareto[0], pareto[1]}
			default:
				return usageError{fmt.Errorf("--pareto: want two objectives A,B, got %d", len(pareto))}
			}
			if err := checkOutput("--out", out+"-"+results.PlotCycles+".svg"); err != nil {
				return err
			}
			st, rs, err := f.query(false)
			if err != nil {
				return err
			}
			defer st.Close()
			po.X, po.Series, po.Title, po.Only = x, seriesBy, title, only
			files, err := results.Plot(rs, po, out)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(c.OutOrStdout(), map[string][]string{"files": files})
			}
			for _, file := range files {
				fmt.Fprintf(c.OutOrStdout(), "wrote %s\n", file)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&x, "x", "", "the swept parameter on the horizontal axis (an axis name, hw.<field>, …)")
	cmd.Flags().StringSliceVar(&seriesBy, "series", nil, "one line per combination of these `PARAMS` (comma-separated)")
	cmd.Flags().StringSliceVar(&pareto, "pareto", nil, "also plot the Pareto front of two objectives `A,B` (e.g. cycles,hw.dm.bytes_per_slice)")
	cmd.Flags().StringVar(&out, "out", "", "write PREFIX-cycles.svg, PREFIX-cycles.png, … (`PREFIX` may hold a folder)")
	cmd.Flags().StringSliceVar(&only, "plots", nil, "draw only these `PLOTS` (cycles, peak, roofline, bottleneck, pareto)")
	cmd.Flags().StringVar(&title, "title", "", "the plots' title (default: the sweep's name)")
	f.add(cmd)
	return cmd
}
