package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"tcpmap/engines"
	"tcpmap/model/mapping"
)

func init() {
	deriveCmds = append(deriveCmds, newDeriveCommitCmd)
}

// newDeriveCommitCmd is `tcpmap derive commit`.
func newDeriveCommitCmd(g *globals) *cobra.Command {
	var f seqFlags
	var sliceMap string
	var fromFetch bool
	cmd := &cobra.Command{
		Use:   "commit",
		Short: "Derive a Commit Engine configuration (truncation, sequencer, commit_size)",
		Long: `commit derives the configuration of stream.commit::<Element>(addr)
(002 L2145-2353): the Commit Sequencer's loops writing the truncated packets
into the DM Element mapping, in the manual's notation [size:stride, ...] :
packet (strides and packet in elements), and with --json the whole
configuration (commit_in_size, contiguous_sram_access_size, commit_size,
writes per packet, slice bitmap). A violated rule exits 1.

Example (the manual's padding_chunking, 002 L2294-2312):
  tcpmap derive commit --dtype i8 --axes M=4,K=2,W=8 \
    --buf 'm![K, M, W # 16]' --time 'm![K]' --packet 'm![M, W]'
prints [2:64, 4:16, 8:1] : 32`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			p, err := f.parse()
			if err != nil {
				return err
			}
			req := engines.CommitRequest{DType: p.dt, Time: p.time, Packet: p.packet, Element: p.buf, Context: p.ctx, FromFetch: fromFetch}
			if sliceMap != "" {
				if req.Slice, err = mapping.Parse(sliceMap, p.axes, nil); err != nil {
					return usageError{fmt.Errorf("--slice %q: %w", sliceMap, err)}
				}
			}
			c, err := engines.ConfigCommit(spec, req)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), c)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), c.Seq.String())
			return err
		},
	}
	f.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&sliceMap, "slice", "", "the tensor's Slice mapping, to derive the slice bitmap")
	fl.BoolVar(&fromFetch, "from-fetch", false, "the stream comes straight from a fetch (required in the sub context)")
	return cmd
}
