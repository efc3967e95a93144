package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/search/sweep"
)

func init() { subcommands = append(subcommands, newRegressCmd) }

// regressResult is `tcpmap regress --json` output.
type regressResult struct {
	Baseline string         `json:"baseline"`
	Pass     bool           `json:"pass"`
	Updated  bool           `json:"updated,omitempty"`
	Current  *cost.Baseline `json:"current"`
	Drifts   []cost.Drift   `json:"drifts"`
}

// baselineComment heads the baseline file.
const baselineComment = "Cost-model regression baseline: predicted cycles and bottleneck of every golden kernel " +
	"(workloads/kernels/*.json) and every stored workload plan (results/plans/*.plan.json). `tcpmap regress` " +
	"(run by `make test`) fails when an entry drifts by more than the tolerance or changes bottleneck; " +
	"regenerate deliberately with `go run ./cmd/tcpmap regress --update`."

// currentBaseline prices every golden kernel under dir and every stored
// workload plan under plansDir.
func currentBaseline(spec *engines.Spec, dir, plansDir string) (*cost.Baseline, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	b := &cost.Baseline{Comment: baselineComment, Tolerance: cost.DefaultTolerance, Kernels: []cost.BaselineEntry{}, Plans: []cost.BaselineEntry{}}
	for _, f := range files {
		r, err := priceFile(spec, f)
		if err != nil {
			return nil, err
		}
		b.Kernels = append(b.Kernels, cost.Entry(filepath.ToSlash(f), r))
	}
	// Workload plans: the planner's plans of workloads/*.yaml, stored by
	// `tcpmap plan W --out results/plans/NAME.plan.json`; their kernel
	// programs are re-priced (re-planning is the planner's own test).
	plans, err := filepath.Glob(filepath.Join(plansDir, "*.plan.json"))
	if err != nil {
		return nil, err
	}
	// Large tiled plans are stored gzip-compressed (plan.Compressed).
	gz, err := filepath.Glob(filepath.Join(plansDir, "*.plan.json"+plan.Compressed))
	if err != nil {
		return nil, err
	}
	plans = append(plans, gz...)
	sort.Strings(plans)
	for _, f := range plans {
		r, err := priceFile(spec, f)
		if err != nil {
			return nil, err
		}
		b.Plans = append(b.Plans, cost.Entry(filepath.ToSlash(f), r))
	}
	// Graph plans: the layers' totals (graph_cmds.go).
	if err := graphBaselines(spec, plansDir, b); err != nil {
		return nil, err
	}
	return b, nil
}

func newRegressCmd(g *globals) *cobra.Command {
	var baseline, kernels, plans, db string
	var update bool
	rf := &resultsFlags{}
	cmd := &cobra.Command{
		Use:         "regress",
		Annotations: readsHW,
		Short:       "Check the cost model's predictions against results/cost-baseline.json",
		Long: `regress prices every golden kernel (workloads/kernels/*.json) and compares
its predicted cycles and bottleneck with the baseline. It exits 1 and lists
every entry whose cycles drifted by more than the baseline's tolerance
(0.5%), whose bottleneck changed, or that is missing from either side.
--update rewrites the baseline with the current predictions, for a
deliberate change of the model, replacing the file atomically. Run it from
the repository root.

Before pricing anything it opens the baseline (or, with --update, checks that
it can be written) and checks that --kernels and --plans are directories: a
missing one is an error, not a list of drifts. Every kernel and plan is
validated as cost validates it.

--db STORE re-prices instead every plan in a result store (tcpmap sweep), each
on the hardware spec it was planned on (the store keeps it; --hw does not
apply), and prints each point's stored and current cycles and their change,
the points that drifted by more than 0.5% or changed bottleneck, and Kendall's
rank correlation (tau) of the old cycles against the new over all points: a
change of the model that reorders the plans shows there even when no single
number moves much. The filters of tcpmap results (--workload, --sweep,
--where, …) select the points. Exit status 1 when a point drifted.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if db != "" {
				return regressStore(c, g, rf, db, update)
			}
			if rf.workload != "" || rf.sweep != "" || rf.bottleneck != "" || rf.status != "" || len(rf.where) > 0 {
				return usageError{fmt.Errorf("regress: the result filters apply with --db only")}
			}
			// Inputs and outputs first: pricing takes a while.
			if err := checkInputDir("--kernels", kernels); err != nil {
				return err
			}
			if err := checkInputDir("--plans", plans); err != nil {
				return err
			}
			var old *cost.Baseline
			if update {
				if err := checkOutput("--baseline", baseline); err != nil {
					return err
				}
			} else {
				var err error
				if old, err = cost.ReadBaseline(baseline); err != nil {
					return err
				}
			}
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			cur, err := currentBaseline(spec, kernels, plans)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			res := regressResult{Baseline: baseline, Current: cur, Drifts: []cost.Drift{}}
			if update {
				var b bytes.Buffer
				if err := cur.Write(&b); err != nil {
					return err
				}
				if err := writeFile(baseline, b.Bytes(), 0o644); err != nil {
					return err
				}
				res.Pass, res.Updated = true, true
				if g.json {
					return writeJSON(out, res)
				}
				_, err := fmt.Fprintf(out, "wrote %s: %d kernels, %d plans\n", baseline, len(cur.Kernels), len(cur.Plans))
				return err
			}
			if d := cost.Compare(old, cur); len(d) > 0 {
				res.Drifts = d
			}
			res.Pass = len(res.Drifts) == 0
			if g.json {
				if err := writeJSON(out, res); err != nil {
					return err
				}
			} else {
				ew := &errWriter{w: out}
				for _, e := range cur.Kernels {
					fmt.Fprintf(ew, "kernel %s: %.1f cycles, %s\n", e.File, e.Cycles, e.Bottleneck)
				}
				for _, d := range res.Drifts {
					fmt.Fprintf(ew, "DRIFT %s\n", d)
				}
				if res.Pass {
					fmt.Fprintf(ew, "PASS: %d kernels, %d plans match %s\n", len(cur.Kernels), len(cur.Plans), baseline)
				} else {
					fmt.Fprintf(ew, "FAIL: %d entries drifted from %s (rerun with --update if the change is deliberate)\n", len(res.Drifts), baseline)
				}
				n := len(cur.Kernels) + len(cur.Plans)
				failed := len(res.Drifts)
				fmt.Fprintf(ew, "regress: %d passed, %d failed\n", max(n-failed, 0), failed)
				if ew.err != nil {
					return ew.err
				}
			}
			if !res.Pass {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&baseline, "baseline", "results/cost-baseline.json", "baseline `FILE`")
	cmd.Flags().StringVar(&kernels, "kernels", "workloads/kernels", "`DIR` of golden kernel programs (*.json)")
	cmd.Flags().StringVar(&plans, "plans", "results/plans", "`DIR` of stored workload plans (*.plan.json)")
	cmd.Flags().BoolVar(&update, "update", false, "rewrite the baseline with the current predictions")
	cmd.Flags().StringVar(&db, "db", "", "re-price the plans of the result store `STORE` instead")
	rf.add(cmd)
	return cmd
}

// regressStore is `regress --db`.
func regressStore(c *cobra.Command, g *globals, rf *resultsFlags, db string, update bool) error {
	switch {
	case update:
		return usageError{fmt.Errorf("regress --db: --update does not apply (a store is re-planned with tcpmap sweep --force)")}
	case g.hw != "":
		return usageError{fmt.Errorf("regress --db: --hw does not apply: each stored plan is re-priced on the hardware spec it was planned on")}
	}
	for _, name := range []string{"baseline", "kernels", "plans"} {
		if c.Flags().Changed(name) {
			return usageError{fmt.Errorf("regress --db: --%s does not apply", name)}
		}
	}
	rf.db = db
	flt, err := rf.filter()
	if err != nil {
		return err
	}
	st, err := openStore(db)
	if err != nil {
		return err
	}
	defer st.Close()
	reg, err := sweep.RegressStore(st, flt, cost.DefaultTolerance)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	if g.json {
		if err := writeJSON(out, reg); err != nil {
			return err
		}
	} else {
		ew := &errWriter{w: out}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "id\tpoint\tstored cycles\tcurrent cycles\tchange\tbottleneck\t")
		for _, d := range reg.Points {
			mark := ""
			if d.Drifted {
				mark = "DRIFT"
			}
			bott := d.NewBottleneck
			if d.OldBottleneck != d.NewBottleneck {
				bott = d.OldBottleneck + " → " + d.NewBottleneck
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%+.2f%%\t%s\t%s\n", d.ID[:12], d.Point, d.Old, d.New, 100*d.Change, bott, mark)
		}
		tw.Flush()
		tau := "n/a (fewer than two points)"
		if reg.Tau != nil {
			tau = fmt.Sprintf("%.4f", *reg.Tau)
		}
		fmt.Fprintf(ew, "regress %s: %d points re-priced, %d drifted (over %.1f%% or another bottleneck); Kendall's tau of stored vs current cycles: %s\n",
			db, len(reg.Points), reg.Drifted, 100*reg.Tolerance, tau)
		if ew.err != nil {
			return ew.err
		}
	}
	if reg.Drifted > 0 {
		return exitError{exitFail}
	}
	return nil
}
