package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/model/workload"
)

func init() { subcommands = append(subcommands, newWorkloadCmd) }

// workloadResult is one file's entry in `workload check --json`.
type workloadResult struct {
	File    string             `json:"file"`
	Valid   bool               `json:"valid"`
	Summary *workload.Summary  `json:"summary,omitempty"`
	Errors  workload.ErrorList `json:"errors,omitempty"`
}

func newWorkloadCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Work with workload files (einsum and graph YAML)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE...",
		Short: "Validate workload files and summarize each",
		Long: `check validates each workload file and prints, for a valid one, its name,
kind (einsum or graph), op count, chips, axes with sizes, dtypes, FLOPs
(2 per multiply-accumulate, 1 per vector-op element) and the minimum bytes
moved (inputs read once and outputs written once from/to HBM). Every error of
an invalid file is printed as file:line:col: field: msg; checking goes on with
the other files, and the exit code is 1 if any file is invalid.
The chips field is required: there is no default chip count.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			results := make([]workloadResult, 0, len(args))
			bad := false
			for _, file := range args {
				r := workloadResult{File: file}
				w, err := workload.Load(file)
				if err != nil {
					bad = true
					var list workload.ErrorList
					if !errors.As(err, &list) {
						list = workload.ErrorList{{File: file, Msg: err.Error()}}
					}
					r.Errors = list
				} else {
					s := w.Summary()
					r.Valid, r.Summary = true, &s
				}
				results = append(results, r)
			}
			if g.json {
				if err := writeJSON(c.OutOrStdout(), results); err != nil {
					return err
				}
			} else {
				for i, r := range results {
					if i > 0 {
						fmt.Fprintln(c.OutOrStdout())
					}
					if r.Valid {
						writeWorkloadSummary(c.OutOrStdout(), r.Summary)
						continue
					}
					fmt.Fprintf(c.OutOrStdout(), "%s: invalid (%d error%s)\n", r.File, len(r.Errors), plural(len(r.Errors)))
					for _, e := range r.Errors {
						fmt.Fprintln(c.OutOrStdout(), e.Error())
					}
				}
			}
			if bad {
				return exitError{exitFail}
			}
			return nil
		},
	})
	return cmd
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeWorkloadSummary prints one valid workload's summary as aligned text.
func writeWorkloadSummary(w io.Writer, s *workload.Summary) {
	kind := string(s.Form)
	if s.Einsum != "" {
		kind += " " + s.Einsum
	}
	var kinds []string
	for _, k := range s.OpKinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k.Kind, k.Count))
	}
	var axes []string
	for _, a := range s.Axes {
		axes = append(axes, fmt.Sprintf("%s=%d", a.Name, a.Size))
	}
	var dts []string
	for _, d := range s.DTypes {
		if d.Role != "" {
			dts = append(dts, d.Role+" "+d.DType.String())
		} else {
			dts = append(dts, fmt.Sprintf("%s (%d tensor%s)", d.DType, len(d.Used), plural(len(d.Used))))
		}
	}
	fmt.Fprintf(w, "%s: ok\n", s.File)
	rows := [][2]string{
		{"name", s.Name},
		{"kind", kind},
		{"ops", fmt.Sprintf("%d (%s)", s.Ops, strings.Join(kinds, ", "))},
		{"chips", fmt.Sprint(s.Chips)},
		{"axes", strings.Join(axes, " ")},
		{"dtypes", strings.Join(dts, ", ")},
		{"flops", fmt.Sprintf("%d (%s; 2 per MAC, 1 per vector-op element)", s.FLOPs, human(s.FLOPs, "FLOP"))},
		{"min bytes", fmt.Sprintf("%d (%s; inputs read once, outputs written once)", s.MinBytes, human(s.MinBytes, "B"))},
		{"inputs", strings.Join(s.Inputs, ", ")},
		{"outputs", strings.Join(s.Outputs, ", ")},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-10s %s\n", r[0], r[1])
	}
}

// human prints n with a decimal SI prefix: 1073741824 → "1.07 GFLOP".
func human(n int64, unit string) string {
	v := float64(n)
	for _, p := range []string{"", "k", "M", "G", "T", "P", "E"} {
		if v < 1000 || p == "E" {
			if p == "" {
				return fmt.Sprintf("%d %s", n, unit)
			}
			return fmt.Sprintf("%.3g %s%s", v, p, unit)
		}
		v /= 1000
	}
	return ""
}
