package main

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tcpmap/engines"
)

func init() { subcommands = append(subcommands, newHWCmd) }

// hwCheckResult is `hw check --json` output.
type hwCheckResult struct {
	File   string            `json:"file"`
	Valid  bool              `json:"valid"`
	Values int               `json:"values,omitempty"`
	Errors engines.ErrorList `json:"errors,omitempty"`
}

// loadSpec returns the spec named by --hw (loaded by checkHW before the
// command ran), or the embedded one.
func loadSpec(g *globals) (*engines.Spec, error) {
	switch {
	case g.spec != nil:
		return g.spec, nil
	case g.hw == "":
		return engines.Default(), nil
	}
	return engines.Load(g.hw)
}

func newHWCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hw",
		Short: "Show or check the hardware spec (engines/rngd.yaml)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:         "show",
		Annotations: readsHW,
		Short:       "Print the effective hardware spec with its citations",
		Long: `show prints every number of the effective hardware spec (the embedded
engines/rngd.yaml, or the file given with --hw) as one line per value:
its path, the manual lines that state it, the value, whether it is an
assumption or taken from a worked example, and a note. --json prints the spec
itself.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := loadSpec(g)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(c.OutOrStdout(), s)
			}
			return writeSpec(c.OutOrStdout(), s, g.hw == "")
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Validate a hardware spec file",
		Long: `check parses a hardware spec file and runs every check on it: unknown,
missing, null and ill-typed fields, citations, and the arithmetic tying the
numbers together. Errors are printed as file:line: field: message; the exit
code is 1 if the file is invalid.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			file := args[0]
			r := hwCheckResult{File: file}
			s, err := engines.Load(file)
			if err != nil {
				if !errors.As(err, &r.Errors) {
					r.Errors = engines.ErrorList{{File: file, Msg: err.Error()}}
				}
			} else {
				r.Valid, r.Values = true, len(s.Entries())
			}
			out := c.OutOrStdout()
			if g.json {
				if err := writeJSON(out, r); err != nil {
					return err
				}
			} else if r.Valid {
				fmt.Fprintf(out, "%s: ok (%d values)\n", file, r.Values)
			} else {
				fmt.Fprintf(out, "%s: invalid (%d error%s)\n", file, len(r.Errors), plural(len(r.Errors)))
				for _, e := range r.Errors {
					fmt.Fprintln(out, e.Error())
				}
			}
			if !r.Valid {
				return exitError{exitFail}
			}
			return nil
		},
	})
	return cmd
}

// writeSpec prints a spec as aligned lines: path, citation, value, flags and
// note.
func writeSpec(w io.Writer, s *engines.Spec, embedded bool) error {
	src := s.Name()
	if embedded {
		src += " (embedded)"
	}
	if _, err := fmt.Fprintf(w, "# hardware spec %s\n", src); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range s.Entries() {
		var flags []string
		if e.Assumption {
			flags = append(flags, "assumption")
		}
		if e.DerivedFromExample {
			flags = append(flags, "from example")
		}
		line := formatValue(e.Value)
		if len(flags) > 0 {
			line += "  [" + strings.Join(flags, ", ") + "]"
		}
		if e.Note != "" {
			line += "  # " + e.Note
		}
		// The value goes last so that long tables do not widen the columns.
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Path, e.Cite, line)
	}
	return tw.Flush()
}

// formatValue prints a spec value; table rows (slices of structs) show their
// field names.
func formatValue(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Struct {
		return fmt.Sprintf("%+v", v)
	}
	return fmt.Sprint(v)
}
