package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/emit"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/verify"
)

func init() { subcommands = append(subcommands, newVerifyCmd) }

// newVerifyCmd is `tcpmap verify KERNEL.json`: run the kernel program on
// the functional simulator and compare its output with its reference.
func newVerifyCmd(g *globals) *cobra.Command {
	var seed uint64
	var slices string
	cmd := &cobra.Command{
		Use:   "verify KERNEL.json|KERNEL.rs|PLAN.plan.json",
		Short: "Run a kernel program on the functional simulator and compare it with its reference",
		Long: `verify lowers a kernel program (deriving every engine configuration it does
not state), fills its HBM inputs with random values from --seed, runs it engine
by engine on simulated HBM, DM, TRF and VRF, reads the output back and compares
it with the reference the kernel states. It prints PASS or FAIL with the error
statistics and exits 0 on PASS, 1 on FAIL or on an error.

A Rust kernel (.rs) in the subset tcpmap emits is read back first (emit); a
plan (.plan.json) is verified through the kernel program it holds.

--slices sample:K simulates K slices chosen at random among those the output is
read from, and compares the output elements they produce.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sample, err := verify.ParseSlices(slices)
			if err != nil {
				return usageError{fmt.Errorf("--slices: %w", err)}
			}
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			p, locate, err := loadVerifyKernel(args[0])
			if err != nil {
				return err
			}
			rep, err := verify.Verify(spec, p, verify.Options{Seed: seed, Sample: sample})
			if err != nil {
				return locate(err)
			}
			out := cmd.OutOrStdout()
			if g.json {
				err = writeJSON(out, rep)
			} else {
				_, err = fmt.Fprint(out, rep)
			}
			if err != nil {
				return err
			}
			if !rep.Pass {
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the random inputs and of the slice sample")
	cmd.Flags().StringVar(&slices, "slices", "all", "slices to simulate: all, or sample:K")
	return cmd
}

// loadVerifyKernel reads a kernel program, JSON or Rust, and returns with it
// the function that locates a later error in the file.
func loadVerifyKernel(path string) (*kernel.Program, func(error) error, error) {
	locate := func(err error) error { return fmt.Errorf("%s: %w", path, err) }
	if isPlanFile(path) {
		pl, err := plan.Read(path)
		if err != nil {
			return nil, nil, err
		}
		if pl.Program == nil {
			return nil, nil, fmt.Errorf("%s: the plan has no kernel program", path)
		}
		return pl.Program, locate, nil
	}
	if strings.HasSuffix(path, ".rs") {
		p, err := emit.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		return p, locate, nil
	}
	p, src, err := verify.LoadKernel(path)
	if err != nil {
		return nil, nil, err
	}
	return p, src.Locate, nil
}

// isPlanFile reports whether path names a plan: NAME.plan.json, or
// NAME.plan.json.gz compressed (plan.Read reads both).
func isPlanFile(path string) bool {
	return strings.HasSuffix(path, ".plan.json") || strings.HasSuffix(path, ".plan.json"+plan.Compressed)
}
