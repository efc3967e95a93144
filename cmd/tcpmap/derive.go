package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// deriveCmds holds the constructors of the `tcpmap derive ENGINE`
// subcommands; each engine's file appends its own in an init function.
var deriveCmds []func(*globals) *cobra.Command

func init() {
	subcommands = append(subcommands, newDeriveCmd)
}

func newDeriveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:         "derive",
		Annotations: readsHW,
		Short:       "Derive an engine's configuration from mappings, as the vendor's compiler does",
		Long: `derive prints the configuration an engine gets from the mappings of a
kernel (sequencer entries, switch routes, reg_read_size, ...), or the rule the
mappings violate with the manual's line (exit 1).`,
	}
	for _, sub := range deriveCmds {
		cmd.AddCommand(sub(g))
	}
	return cmd
}

// axesAndDType parses the --axes and --dtype flags every derive command
// takes; a missing or bad value is a usage error naming the flag.
func axesAndDType(axesSrc, dtSrc string) (mapping.Axes, dtype.DType, error) {
	if axesSrc == "" {
		return mapping.Axes{}, 0, usageError{fmt.Errorf("--axes is required")}
	}
	axes, err := mapping.ParseAxes(axesSrc)
	if err != nil {
		return mapping.Axes{}, 0, usageError{fmt.Errorf("--axes %q: %w", axesSrc, err)}
	}
	if dtSrc == "" {
		return mapping.Axes{}, 0, usageError{fmt.Errorf("--dtype is required (%s)", dtype.ValidNames())}
	}
	d, err := dtype.Parse(dtSrc)
	if err != nil {
		return mapping.Axes{}, 0, usageError{fmt.Errorf("--dtype: %w", err)}
	}
	return axes, d, nil
}
