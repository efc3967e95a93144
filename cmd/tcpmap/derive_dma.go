package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

func init() {
	deriveCmds = append(deriveCmds, newDeriveDMACmd)
}

// dmaTensorFlags are the flags of one side of a DMA.
type dmaTensorFlags struct {
	media                     string
	chip, cluster, slice, el  string
	addr, bChip, bClus, bSlic int
}

func (f *dmaTensorFlags) add(cmd *cobra.Command, side, what string) {
	fl := cmd.Flags()
	fl.StringVar(&f.media, side+"-media", "", what+" media: hbm, dm or spm (required)")
	fl.StringVar(&f.chip, side+"-chip", "", what+" Chip mapping (default m![1])")
	fl.StringVar(&f.cluster, side+"-cluster", "", what+" Cluster mapping (DM only)")
	fl.StringVar(&f.slice, side+"-slice", "", what+" Slice mapping (DM only)")
	fl.StringVar(&f.el, side+"-element", "", what+" Element mapping (required)")
	fl.IntVar(&f.addr, side+"-addr", 0, what+" b_element: byte address of element 0")
	fl.IntVar(&f.bChip, side+"-base-chip", 0, what+" b_chip")
	fl.IntVar(&f.bClus, side+"-base-cluster", 0, what+" b_cluster (DM)")
	fl.IntVar(&f.bSlic, side+"-base-slice", 0, what+" b_slice (DM)")
}

// newDeriveDMACmd is `tcpmap derive dma`.
func newDeriveDMACmd(g *globals) *cobra.Command {
	var axes, dt, sChip, sCluster, sSlice, tm, pk string
	var src, dst dmaTensorFlags
	cmd := &cobra.Command{
		Use:   "dma",
		Short: "Derive a DMA command (descriptors with paired read/write sequencers)",
		Long: `dma derives the DMA descriptors of a tensor move (002 L2354-2808): per
DMN the shared loops with (read, write) byte strides, the bases and stride0,
segmenting a DMN's work where its stream would write outside the tensor.
Mappings are m![...] texts over --axes; a DM address is the cluster's virtual
address slice*slice_stride + byte (slice_stride = 4 MB).

Example (002 L2608-2636):
  tcpmap derive dma --axes A=8,B=8,C=256 --dtype i8 \
    --src-media hbm --src-element '[A, B, C]' \
    --dst-media hbm --dst-element '[B, A, C]' --dst-addr 16384 \
    --time '[A, B]' --packet C`,
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
			parse := func(flag, s string) (*mapping.Expr, error) {
				if s == "" {
					return nil, nil
				}
				e, err := mapping.Parse(s, ax, nil)
				if err != nil {
					return nil, usageError{fmt.Errorf("--%s %q: %w", flag, s, err)}
				}
				return e, nil
			}
			side := func(name string, f *dmaTensorFlags) (engines.DMATensor, error) {
				t := engines.DMATensor{Addr: f.addr, BaseChip: f.bChip, BaseCluster: f.bClus, BaseSlice: f.bSlic}
				switch strings.ToLower(f.media) {
				case "hbm":
					t.Media = kernel.MediaHBM
				case "dm":
					t.Media = kernel.MediaDM
				case "spm":
					t.Media = kernel.MediaSPM
				default:
					return t, usageError{fmt.Errorf("--%s-media %q: want hbm, dm or spm", name, f.media)}
				}
				if f.el == "" {
					return t, usageError{fmt.Errorf("--%s-element is required", name)}
				}
				var err error
				for _, p := range []struct {
					flag, src string
					dst       **mapping.Expr
				}{{"chip", f.chip, &t.Chip}, {"cluster", f.cluster, &t.Cluster}, {"slice", f.slice, &t.Slice}, {"element", f.el, &t.Element}} {
					if *p.dst, err = parse(name+"-"+p.flag, p.src); err != nil {
						return t, err
					}
				}
				return t, nil
			}
			req := engines.DMARequest{Axes: ax, DType: d}
			if req.Src, err = side("src", &src); err != nil {
				return err
			}
			if req.Dst, err = side("dst", &dst); err != nil {
				return err
			}
			if pk == "" {
				return usageError{fmt.Errorf("--packet is required")}
			}
			for _, p := range []struct {
				flag, src string
				dst       **mapping.Expr
			}{{"stream-chip", sChip, &req.Stream.Chip}, {"stream-cluster", sCluster, &req.Stream.Cluster},
				{"stream-slice", sSlice, &req.Stream.Slice}, {"time", tm, &req.Stream.Time}, {"packet", pk, &req.Stream.Packet}} {
				if *p.dst, err = parse(p.flag, p.src); err != nil {
					return err
				}
			}
			c, err := engines.DeriveDMA(spec, req)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), c)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), c.String())
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&axes, "axes", "", "axis declarations `A=8,B=512`")
	fl.StringVar(&dt, "dtype", "", "element type, e.g. i8, bf16 (required)")
	src.add(cmd, "src", "source")
	dst.add(cmd, "dst", "destination")
	fl.StringVar(&sChip, "stream-chip", "", "stream Chip mapping: selects the DMN's chip")
	fl.StringVar(&sCluster, "stream-cluster", "", "stream Cluster mapping: selects the DMN's cluster")
	fl.StringVar(&sSlice, "stream-slice", "", "stream Slice mapping: selects the DMN in the cluster")
	fl.StringVar(&tm, "time", "", "stream Time mapping of each DMN")
	fl.StringVar(&pk, "packet", "", "stream Packet mapping of each DMN (required)")
	return cmd
}
