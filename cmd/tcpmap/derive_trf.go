package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

func init() {
	deriveCmds = append(deriveCmds, newDeriveTRFCmd)
}

// newDeriveTRFCmd is `tcpmap derive trf`: the TRF Sequencer of an align call.
func newDeriveTRFCmd(g *globals) *cobra.Command {
	var axes, dt, element, row, tm, pk string
	cmd := &cobra.Command{
		Use:   "trf",
		Short: "Derive the TRF Sequencer (reg_read_size and entries) of an align call",
		Long: `trf derives the TRF Sequencer configuration that makes a TRF tensor
[Row, Element] produce the computation mapping [Row, Time, Packet] of
align::<Time, Packet, _, _>(&trf) (002 L4035-4177): reg_read_size, the
common contiguous innermost part (002 L4108), and the (size, stride) entries,
Entry 0 the inner loop, strides in bytes. Mappings are m![...] texts over
--axes. A mapping the TRF Sequencer cannot produce exits 1 with the rule and
the manual's line.

Example (002 L3816-3873):
  tcpmap derive trf --axes M=32,N=8,K=16,L=2,O=2 --dtype bf16 \
    --trf 'O, M, K' --row N --time 'M, O' --packet 'L, K'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			ax, d, err := axesAndDType(axes, dt)
			if err != nil {
				return err
			}
			in := engines.TRFSequencerInput{DType: d}
			for _, p := range []struct {
				flag, src string
				dst       **mapping.Expr
			}{{"trf", element, &in.Element}, {"row", row, &in.Row}, {"time", tm, &in.OutTime}, {"packet", pk, &in.OutPacket}} {
				if p.src == "" {
					return usageError{fmt.Errorf("--%s is required", p.flag)}
				}
				e, err := mapping.Parse(p.src, ax, nil)
				if err != nil {
					return usageError{fmt.Errorf("--%s %q: %w", p.flag, p.src, err)}
				}
				*p.dst = e
			}
			c, err := engines.DeriveTRFSequencer(spec, in)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), c)
			}
			return printTRFSequencer(cmd.OutOrStdout(), c)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&axes, "axes", "", "axis declarations `M=32,N=8,K=16`")
	fl.StringVar(&dt, "dtype", "", "element type: i4, i8, f8e4m3, f8e5m2 or bf16 (required)")
	fl.StringVar(&element, "trf", "", "the TRF tensor's Element mapping (required)")
	fl.StringVar(&row, "row", "1", "the TRF tensor's Row mapping")
	fl.StringVar(&tm, "time", "", "the computation Time mapping, align's OutTime (required)")
	fl.StringVar(&pk, "packet", "", "the computation Packet mapping, align's OutPacket, 64 bytes (required)")
	return cmd
}

// printTRFSequencer prints the configuration as the manual's compiler dumps
// do (002 L3854-3864): reg_read_size, then one line per entry.
func printTRFSequencer(w io.Writer, c kernel.TRFSequencerConfig) error {
	if _, err := fmt.Fprintf(w, "reg_read_size = %dB (broadcast %d×), rows = %d\n", c.RegReadSize, c.Broadcast, c.Rows); err != nil {
		return err
	}
	for i, e := range c.Entries {
		if _, err := fmt.Fprintf(w, "Entry %d: { size: %d, stride: %d } — %s\n", i, e.Size, e.Stride, e.Term); err != nil {
			return err
		}
	}
	return nil
}
