package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"tcpmap/constraints"
	"tcpmap/model/plan"
	"tcpmap/model/pos"
	"tcpmap/search"
)

func init() { subcommands = append(subcommands, newExplainCmd) }

// explainRule is an engine rule that rejected completions.
type explainRule struct {
	Rule    string `json:"rule"`
	Cite    string `json:"cite"`
	Count   int    `json:"count"`
	Example string `json:"example"`
}

// explainCost is a legal mapping's price and its distance from the
// optimum.
type explainCost struct {
	Cycles  float64 `json:"cycles"`
	Mapping string  `json:"mapping"`
	// Completion is the completed mapping in the plan's words.
	Completion    plan.Mapping `json:"completion"`
	Optimum       float64      `json:"optimum_cycles,omitempty"`
	OptimumProven bool         `json:"optimum_proven"`
	OptimumMap    string       `json:"optimum_mapping,omitempty"`
	Ratio         float64      `json:"ratio,omitempty"`
	Percent       float64      `json:"percent_above_optimum"`
}

// explainOutput is `explain --json`.
type explainOutput struct {
	Workload string `json:"workload"`
	Mapping  string `json:"mapping,omitempty"`
	Legal    bool   `json:"legal"`
	// Verdict is legal, structural (skeleton rules), engines (every
	// completion rejected by an engine rule), none (no candidate of the
	// mapspace agrees with the mapping) or timeout (undecided).
	Verdict   string            `json:"verdict"`
	Conflicts []search.Conflict `json:"conflicts,omitempty"`
	Engines   []explainRule     `json:"engine_rules,omitempty"`
	// Evaluated counts the completions evaluated.
	Evaluated int          `json:"completions_evaluated"`
	Cost      *explainCost `json:"cost,omitempty"`
	// DigitOrders is "all" when the space held every digit order
	// (--digit-orders all), empty for the named ones.
	DigitOrders string `json:"digit_orders,omitempty"`
}

func newExplainCmd(g *globals) *cobra.Command {
	var (
		op       string
		mapFile  string
		fuse     bool
		maxTiles int
		timeout  time.Duration
		orders   string
	)
	cmd := &cobra.Command{
		Use:         "explain WORKLOAD.yaml [--mapping MAP.yaml]",
		Annotations: readsHW,
		Short:       "Explain why a full or partial mapping is legal or not, and how far it is from the optimum",
		Long: `explain checks a mapping written in the manual's notation (a YAML file with the
optional fields stationary, content, packet_mode, accumulate, and tile, cluster,
slice, time, row and packet as m![...] expressions over the workload's axes;
omitted fields are free).

A mapping no skeleton of the mapspace has gets the minimal set of rules it
violates (the SAT solver's failed assumptions, minimized), each with the
manual's citation, and the mapping fields involved. A structurally possible
mapping is completed by the branch and bound restricted to it: if no
completion lowers, the engine rules that rejected them are listed; if one
does, its cycles and its distance from the optimum are printed. Without
--mapping, the workload alone is explained.

Exit status: 0 legal, 1 illegal or unsatisfiable, 2 usage errors, 3 undecided
at --timeout.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if timeout < 0 || maxTiles < 0 {
				return usageError{fmt.Errorf("--timeout and --max-tiles must not be negative")}
			}
			if fuse && op == "" {
				return usageError{fmt.Errorf("--fuse explains one einsum op with its epilogue: name it with --op")}
			}
			all, err := allDigitOrders(orders, true)
			if err != nil {
				return err
			}
			s, err := loadFusedSpace(g, args[0], op, fuse)
			if err != nil {
				return err
			}
			s = s.WithAllOrders(all)
			var m *constraints.MapSpec
			if mapFile != "" {
				if m, err = constraints.LoadMapSpec(mapFile, s.P); err != nil {
					return err
				}
			}
			x, err := search.Explain(s, m, search.ExplainOptions{MaxTiles: maxTiles, Timeout: timeout, MemoryBudget: search.DefaultMemoryBudget})
			if errors.Is(err, search.ErrExplainTimeout) {
				fmt.Fprintf(c.ErrOrStderr(), "tcpmap: %v\n", err)
				return exitError{exitAborted}
			}
			if err != nil {
				return err
			}
			out := explainReport(args[0], mapFile, s, x)
			if g.json {
				if err := writeJSON(c.OutOrStdout(), out); err != nil {
					return err
				}
			} else if err := writeExplain(c.OutOrStdout(), out); err != nil {
				return err
			}
			switch {
			case out.Verdict == "timeout":
				return exitError{exitAborted}
			case !out.Legal:
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mapFile, "mapping", "", "the mapping `FILE` to explain (YAML, m![...] expressions)")
	cmd.Flags().StringVar(&op, "op", "", "the einsum op of a graph workload")
	cmd.Flags().BoolVar(&fuse, "fuse", false, "explain the einsum --op names with the elementwise ops after it done by its kernel (as plan --fuse)")
	cmd.Flags().IntVar(&maxTiles, "max-tiles", 0, "bound on a tiled candidate's tiles (0: the planner's default)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop each search after this long (0: none)")
	cmd.Flags().StringVar(&orders, "digit-orders", "", "the digit orders the space holds, as plan's: all (every order of each axis's levels, the default) or named")
	return cmd
}

// explainReport gathers an explanation's output.
func explainReport(file, mapFile string, s *search.Space, x *search.Explanation) *explainOutput {
	out := &explainOutput{Workload: file, Mapping: mapFile, Legal: x.Legal, Conflicts: x.Conflicts}
	if s.AllOrders() {
		out.DigitOrders = "all"
	}
	if x.Completions != nil {
		out.Evaluated = x.Completions.Stats.Candidates
	}
	switch {
	case x.Legal:
		out.Verdict = "legal"
		best := x.Completions.Best
		ec := &explainCost{Cycles: best.Report.Cycles, Mapping: best.Candidate.String(s.P), Completion: s.Mapping(&best.Candidate)}
		ec.Optimum, ec.OptimumMap = x.OptimumCycles(), ec.Mapping
		if o := x.Optimum; o != nil && o.Best != nil {
			ec.OptimumProven = o.Proof.Proven
			if o.Best.Report.Cycles <= ec.Optimum {
				ec.OptimumMap = o.Best.Candidate.String(s.P)
			}
		}
		ec.Ratio = x.Distance()
		ec.Percent = (ec.Ratio - 1) * 100
		out.Cost = ec
	case x.Completions == nil:
		out.Verdict = "structural"
	case !x.Completions.Stats.Complete:
		out.Verdict = "timeout"
	case x.Completions.Stats.Candidates == 0:
		out.Verdict = "none"
	default:
		out.Verdict = "engines"
		for _, r := range x.Completions.Stats.Rules() {
			out.Engines = append(out.Engines, explainRule{Rule: r.Rule, Cite: r.Cite, Count: r.Count, Example: r.Example})
		}
	}
	return out
}

// writeExplain prints an explanation as text.
func writeExplain(w io.Writer, o *explainOutput) error {
	subject := o.Workload
	if o.Mapping != "" {
		subject = o.Mapping + " on " + o.Workload
	}
	var err error
	pf := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	switch o.Verdict {
	case "legal":
		c := o.Cost
		pf("%s: legal\n", subject)
		pf("  cycles:   %.0f (best completion: %s)\n", c.Cycles, c.Mapping)
		if c.Optimum > 0 {
			proven := "best found"
			if c.OptimumProven {
				proven = "proven"
			}
			pf("  optimum:  %.0f (%s: %s)\n", c.Optimum, proven, c.OptimumMap)
			pf("  distance: %.3fx the optimum (+%.1f%%)\n", c.Ratio, c.Percent)
		}
	case "structural":
		if len(o.Conflicts) == 1 && len(o.Conflicts[0].Fields) == 0 {
			pf("%s: unsatisfiable: no mapping of the workload satisfies these rules together\n", subject)
		} else {
			pf("%s: illegal: %d conflict(s), each a minimal set of mapping fields and rules that cannot hold together\n", subject, len(o.Conflicts))
		}
		for i, k := range o.Conflicts {
			if len(o.Conflicts) > 1 {
				pf("conflict %d:\n", i+1)
			}
			for _, r := range k.Rules {
				pf("  %s (%s): %s\n", r.Rule, r.Cite, r.Text)
			}
			for _, f := range k.Fields {
				pf("  %s\n", &pos.Error{File: o.Mapping, Line: f.Line, Col: f.Col, Msg: f.Text})
			}
		}
	case "timeout":
		pf("%s: undecided: the search stopped at --timeout before any completion of the mapping proved legal (%d evaluated)\n", subject, o.Evaluated)
	case "none":
		if o.DigitOrders == "all" {
			pf("%s: illegal: no candidate of the mapspace agrees with the mapping: no order of each axis's digits over the levels gives its expressions (002 L483-484, L503), or the time expression's axes are not the computation's time order\n", subject)
		} else {
			pf("%s: illegal: no candidate of the mapspace agrees with the mapping: within an axis the levels nest tile, cluster, slice, time, row, packet major to minor, or in one of the named orders (a Row digit above Time, Cluster and Slice digits dealt out below Time, a Cluster digit below Slice; 002 L483-484, L503), and the time expression's axes are the computation's time order; --digit-orders all holds every order\n", subject)
		}
	default:
		pf("%s: illegal: every completion is rejected by the engines\n", subject)
		for _, r := range o.Engines {
			pf("  %s (%s): %d completions, e.g. %s\n", r.Rule, r.Cite, r.Count, r.Example)
		}
	}
	return err
}
