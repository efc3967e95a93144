package main

import "github.com/spf13/cobra"

// deriveCmds holds the constructors of the `tcpmap derive ENGINE`
// subcommands; each engine's file appends its own in an init function.
var deriveCmds []func(*globals) *cobra.Command

func init() {
	subcommands = append(subcommands, newDeriveCmd)
}

func newDeriveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "derive",
		Short: "Derive an engine's configuration from mappings, as the vendor's compiler does",
		Long: `derive prints the configuration an engine gets from the mappings of a
kernel (sequencer entries, switch routes, reg_read_size, ...), or the rule the
mappings violate with the manual's line (exit 1).`,
	}
	for _, sub := range deriveCmds {
		cmd.AddCommand(sub(g))
	}
	return cmd
}
