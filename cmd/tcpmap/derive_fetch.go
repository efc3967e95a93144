package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

func init() {
	deriveCmds = append(deriveCmds, newDeriveFetchCmd)
}

// seqFlags are the mapping flags shared by `derive fetch` and `derive
// commit`.
type seqFlags struct {
	axes, dt, buf, time, packet, context string
}

func (f *seqFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.axes, "axes", "", "axis declarations `A=8,B=512` (required)")
	fl.StringVar(&f.dt, "dtype", "", "element type in DM, e.g. i8, bf16 (required)")
	fl.StringVar(&f.buf, "buf", "", "the DM tensor's Element mapping, e.g. 'm![A, B, C # 32]' (required)")
	fl.StringVar(&f.time, "time", "", "the stream's Time mapping (required)")
	fl.StringVar(&f.packet, "packet", "", "the stream's Packet mapping (required)")
	fl.StringVar(&f.context, "context", "main", "execution context: main or sub")
}

// parsed holds the parsed shared flags.
type parsed struct {
	axes              mapping.Axes
	dt                dtype.DType
	buf, time, packet *mapping.Expr
	ctx               kernel.Context
}

func (f *seqFlags) parse() (*parsed, error) {
	var p parsed
	var err error
	if p.axes, p.dt, err = axesAndDType(f.axes, f.dt); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		flag, src string
		dst       **mapping.Expr
	}{{"buf", f.buf, &p.buf}, {"time", f.time, &p.time}, {"packet", f.packet, &p.packet}} {
		if x.src == "" {
			return nil, usageError{fmt.Errorf("--%s is required", x.flag)}
		}
		if *x.dst, err = mapping.Parse(x.src, p.axes, nil); err != nil {
			return nil, usageError{fmt.Errorf("--%s %q: %w", x.flag, x.src, err)}
		}
	}
	switch f.context {
	case "main":
		p.ctx = kernel.CtxMain
	case "sub":
		p.ctx = kernel.CtxSub
	default:
		return nil, usageError{fmt.Errorf("--context %q: want main or sub", f.context)}
	}
	return &p, nil
}

// newDeriveFetchCmd is `tcpmap derive fetch`.
func newDeriveFetchCmd(g *globals) *cobra.Command {
	var f seqFlags
	var castTo, interleave, leftPad string
	var interleaveOffset, cluster, slice int
	var zeroPoints []int
	var table, rngds bool
	cmd := &cobra.Command{
		Use:   "fetch",
		Short: "Derive a Fetch Engine configuration (sequencer, fetch_size, adapter)",
		Long: `fetch derives the configuration of begin(dm).fetch::<D2, Time, Packet>()
(002 L1689-2144): the Fetch Sequencer's loops over the DM Element mapping in
the manual's notation [size:stride, ...] : packet (strides and packet in
elements), and with --json the whole configuration (fetch_size,
contiguous_sram_access_size, fetches per packet, adapter stages).
A violated rule prints the rule with the manual's line and exits 1.

Example (the manual's "Rearranging Axes", 002 L1426-1460):
  tcpmap derive fetch --dtype i8 --axes A=8,B=8,C=8 \
    --buf 'm![A, B, C # 32]' --time 'm![B, A]' --packet 'm![C # 16]'
prints [8:32, 8:256, 16:1] : 16`,
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
			req := engines.FetchRequest{InType: p.dt, OutType: p.dt, Element: p.buf, Time: p.time, Packet: p.packet,
				Context: p.ctx, ClusterSize: cluster, SliceSize: slice, Table: table, ZeroPoints: zeroPoints, RNGDS: rngds}
			if castTo != "" {
				if req.OutType, err = dtype.Parse(castTo); err != nil {
					return usageError{fmt.Errorf("--cast-to: %w", err)}
				}
			}
			if req.ClusterSize == 0 {
				req.ClusterSize = spec.Chip.Clusters.Value
			}
			if req.SliceSize == 0 {
				req.SliceSize = spec.Cluster.Slices.Value
			}
			if interleave != "" {
				req.Interleave = &engines.FetchInterleaveRequest{Axis: interleave, OffsetBytes: interleaveOffset}
			}
			if leftPad != "" {
				axis, n, ok := strings.Cut(leftPad, "=")
				v, err := strconv.Atoi(strings.TrimSpace(n))
				if !ok || err != nil || v < 0 {
					return usageError{fmt.Errorf("--left-pad %q: want AXIS=N", leftPad)}
				}
				req.LeftPad = &engines.FetchLeftPad{Axis: strings.TrimSpace(axis), N: v}
			}
			c, err := engines.ConfigFetch(spec, req)
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
	fl.StringVar(&castTo, "cast-to", "", "output type D2 of the fetch adapter's cast (default: no cast)")
	fl.IntVar(&cluster, "cluster", 0, "Cluster::SIZE of the tensor (0: the chip's clusters)")
	fl.IntVar(&slice, "slice", 0, "Slice::SIZE of the tensor (0: the cluster's slices)")
	fl.StringVar(&interleave, "interleave", "", "interleave axis of Time (begin_interleaved)")
	fl.IntVar(&interleaveOffset, "interleave-offset", 0, "bytes from the first interleaved tensor to the second")
	fl.StringVar(&leftPad, "left-pad", "", "left padding `AXIS=N` of the masked axis")
	fl.IntSliceVar(&zeroPoints, "zero-point", nil, "zero point(s) to subtract, one per interleaved tensor")
	fl.BoolVar(&table, "table", false, "fetch_with_table: index a lookup table")
	fl.BoolVar(&rngds, "rngds", false, "use the RNGD-S cast table")
	return cmd
}
