package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"tcpmap/verify"
)

func init() { subcommands = append(subcommands, newVerifyCmd) }

// newVerifyCmd is `tcpmap verify KERNEL.json`: run the kernel program on
// the functional simulator and compare its output with its reference.
func newVerifyCmd(g *globals) *cobra.Command {
	var seed uint64
	var slices string
	var memory int64
	cmd := &cobra.Command{
		Use:         "verify KERNEL.json|KERNEL.rs|PLAN.plan.json",
		Annotations: readsHW,
		Short:       "Run a kernel program on the functional simulator and compare it with its reference",
		Long: `verify lowers a kernel program (deriving every engine configuration it does
not state), fills its HBM inputs with random values from --seed, runs it engine
by engine on simulated HBM, DM, TRF and VRF, reads the output back and compares
it with the reference the kernel states. It prints PASS or FAIL with the error
statistics and exits 0 on PASS, 1 on FAIL or on an error.

The input is told apart by its content, gzip-compressed or not: a kernel
program's JSON, a Rust kernel in the subset tcpmap emits (read back through
emit), or a plan (tcpmap plan --out), verified through the kernel program it
holds after the whole plan is validated. Every input is first checked
against the hardware spec by the validator cost and emit run too.

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
			if gp, err := readGraphPlan(args[0]); err != nil || gp != nil {
				if err != nil {
					return err
				}
				return verifyGraph(cmd.OutOrStdout(), g, args[0], gp, verify.GraphOptions{Seed: seed, MemoryBudget: memory << 20}) // graph_cmds.go
			}
			in, err := loadProgram(spec, args[0])
			if err != nil {
				return err
			}
			rep, err := verify.Verify(spec, in.prog, verify.Options{Seed: seed, Sample: sample, MemoryBudget: memory << 20})
			if err != nil {
				return in.locate(err)
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
	cmd.Flags().Int64Var(&memory, "memory", verify.DefaultMemoryBudget>>20, "refuse a kernel or graph whose simulation needs more than `MiB` mebibytes by its estimate (0: no limit)")
	return cmd
}
