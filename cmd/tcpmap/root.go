package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/engines"
)

// Version is the tcpmap version, printed by `tcpmap version` and written
// into the headers of emitted files.
const Version = "0.1.0"

// Exit codes shared by every subcommand.
const (
	exitOK      = 0 // success; for predicates (equiv, verify, regress): true / PASS
	exitFail    = 1 // invalid input, a rule violation, or a predicate that is false
	exitUsage   = 2 // bad flags or arguments
	exitAborted = 3 // reserved: interrupted or timed out without a result
)

// subcommands holds the constructors of the top-level subcommands. Each
// subcommand's file appends its constructor in an init function, so files
// added by separate pieces of work never edit the same list.
var subcommands []func(*globals) *cobra.Command

// globals are the persistent flags every subcommand sees.
type globals struct {
	json bool   // --json: machine-readable output
	hw   string // --hw FILE: hardware spec overriding the embedded rngd.yaml
	prof string // --cpuprofile FILE: a Go CPU profile of the command
	// spec is the spec --hw names, loaded before the command runs.
	spec *engines.Spec
}

// hwAnnotation marks a command that reads the hardware spec (on it or on
// an ancestor); every other command refuses --hw rather than ignore it.
const hwAnnotation = "tcpmap:hw"

// readsHW is the annotation of a command that reads the hardware spec.
var readsHW = map[string]string{hwAnnotation: "reads the hardware spec"}

// usesHW reports whether c, or a command above it, reads the hardware
// spec.
func usesHW(c *cobra.Command) bool {
	for ; c != nil; c = c.Parent() {
		if c.Annotations[hwAnnotation] != "" {
			return true
		}
	}
	return false
}

// checkHW honours or refuses --hw before a command runs: a command that
// reads the hardware spec gets it loaded (a missing or invalid file is an
// error before any work); any other refuses the flag.
func checkHW(g *globals, c *cobra.Command) error {
	if g.hw == "" {
		return nil
	}
	if !usesHW(c) {
		return usageError{fmt.Errorf("--hw: %s does not read the hardware spec", c.CommandPath())}
	}
	spec, err := engines.Load(g.hw)
	if err != nil {
		return err
	}
	g.spec = spec
	return nil
}

// exitError carries an exit code through cobra without printing anything
// more: the subcommand has already written its output.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError marks an error in the command line rather than in the input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "tcpmap",
		Short: "Plan, price, emit and verify tensor mappings for FuriosaAI's TCP (RNGD)",
		Long: `tcpmap takes an einsum or a model graph, searches the legal mappings of its
tensor axes onto the Tensor Contraction Processor (Chip, Cluster, Slice, Row,
Time, Packet) with a SAT solver, ranks them with an analytical cost model,
emits the winner as a Virtual ISA kernel and verifies it on a functional
simulator of the chip.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := checkHW(g, c); err != nil {
				return err
			}
			return startProfile(g)
		},
		PersistentPostRunE: func(*cobra.Command, []string) error { return stopProfile(g) },
	}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print machine-readable JSON")
	root.PersistentFlags().StringVar(&g.prof, "cpuprofile", "", "write a Go CPU profile of the command to `FILE` (go tool pprof reads it)")
	root.PersistentFlags().StringVar(&g.hw, "hw", "", "hardware spec `FILE` overriding the embedded engines/rngd.yaml")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the tcpmap version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"version": Version})
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "tcpmap %s\n", Version)
			return err
		},
	})
	for _, sub := range subcommands {
		root.AddCommand(sub(g))
	}
	return root
}

// run executes the command line args and returns the process exit code.
// Everything it prints goes through an escaper (escape.go): names read from
// files reach the terminal with their control characters escaped.
func run(args []string, stdout, stderr io.Writer) int {
	out, errw := newEscaper(stdout), newEscaper(stderr)
	defer out.Flush()
	defer errw.Flush()
	return execute(args, out, errw)
}

// execute is run with the writers given.
func execute(args []string, stdout, stderr io.Writer) int {
	var g globals
	root := newRootCmd(&g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if perr := stopProfile(&g); err == nil {
		err = perr
	}
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "tcpmap: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitFail
}

// isCobraUsage reports whether err is one of cobra's own command-line
// errors (unknown command, wrong argument count), which it returns as plain
// errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received "} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
