package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

func init() {
	deriveCmds = append(deriveCmds, newDeriveCollectCmd)
}

// collectFlags are the flags of `tcpmap derive collect`.
type collectFlags struct {
	axes, dt, time, packet, outTime, outPacket string
	dual                                       bool
}

// newDeriveCollectCmd is `tcpmap derive collect`.
func newDeriveCollectCmd(g *globals) *cobra.Command {
	var f collectFlags
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Derive a Collect Engine normalization (output Time, Packet, flit count)",
		Long: `collect derives stream.collect::<Time2, Packet2>() (002 L3543-3669): the
packet is zero-padded to a 32-byte flit boundary and split into flits, the
inner flit becoming Packet2 and the flit count the new innermost Time factor.
It prints Time2, Packet2 and the flit count; with --out-time/--out-packet it
checks the kernel's stated mappings instead (a violated rule exits 1).

Example (the manual's multi-flit packet, 002 L3653-3669):
  tcpmap derive collect --axes A=8,B=32 --dtype bf16 --time A --packet B
prints Time m![A, B / 16]  Packet m![B % 16]  (64 B packet → 2 flits × 32 B).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			req, err := f.request()
			if err != nil {
				return err
			}
			plan, err := engines.DeriveCollect(spec, req)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), collectJSONOut{
					In:      colStreamJSON{Time: req.Time.Text(), Packet: req.Packet.Text()},
					Out:     colStreamJSON{Time: plan.OutTime.Text(), Packet: plan.OutPacket.Text()},
					Collect: &plan.Collect,
				})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Time %s  Packet %s  (%s)\n", plan.OutTime.Text(), plan.OutPacket.Text(), plan.Collect.String())
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.axes, "axes", "", "axis declarations `A=8,B=32` (required)")
	fl.StringVar(&f.dt, "dtype", "", "element type of the stream, e.g. i8, bf16 (required)")
	fl.StringVar(&f.time, "time", "", "the input stream's Time mapping (required)")
	fl.StringVar(&f.packet, "packet", "", "the input stream's Packet mapping (required)")
	fl.StringVar(&f.outTime, "out-time", "", "the kernel's output Time mapping, to check")
	fl.StringVar(&f.outPacket, "out-packet", "", "the kernel's output Packet mapping, to check")
	fl.BoolVar(&f.dual, "dual", false, "dual channel mode: 64-byte flits (002 L1997, L2127)")
	return cmd
}

// request parses the flags; errors are usage errors.
func (f *collectFlags) request() (engines.CollectRequest, error) {
	var req engines.CollectRequest
	axes, dt, err := axesAndDType(f.axes, f.dt)
	if err != nil {
		return req, err
	}
	req.DType = dt
	for _, x := range []struct {
		flag, src string
		need      bool
		dst       **mapping.Expr
	}{{"time", f.time, true, &req.Time}, {"packet", f.packet, true, &req.Packet},
		{"out-time", f.outTime, false, &req.OutTime}, {"out-packet", f.outPacket, false, &req.OutPacket}} {
		if x.src == "" {
			if x.need {
				return req, usageError{fmt.Errorf("--%s is required", x.flag)}
			}
			continue
		}
		if *x.dst, err = mapping.Parse(x.src, axes, nil); err != nil {
			return req, usageError{fmt.Errorf("--%s %q: %w", x.flag, x.src, err)}
		}
	}
	req.DualChannel = f.dual
	return req, nil
}

// collectJSONOut is the --json form of a derived collect.
type collectJSONOut struct {
	In      colStreamJSON   `json:"in"`
	Out     colStreamJSON   `json:"out"`
	Collect *kernel.Collect `json:"collect"`
}

// colStreamJSON holds a stream's Time and Packet as m![...] text.
type colStreamJSON struct {
	Time   string `json:"time"`
	Packet string `json:"packet"`
}
