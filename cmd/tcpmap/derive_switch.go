package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

func init() {
	deriveCmds = append(deriveCmds, newDeriveSwitchCmd)
}

// switchFlags are the flags of `tcpmap derive switch`.
type switchFlags struct {
	axes, dt                     string
	inSlice, inTime, inPacket    string
	outSlice, outTime, outPacket string
	topology                     string
	slice1, slice0, time0, ring  int
	dual, allBitmaps             bool
}

// newDeriveSwitchCmd is `tcpmap derive switch`.
func newDeriveSwitchCmd(g *globals) *cobra.Command {
	var f switchFlags
	cmd := &cobra.Command{
		Use:   "switch",
		Short: "Derive a Switch Engine configuration (topology, ring size, snoop bitmaps)",
		Long: `switch derives the configuration of fetch_tensor.switch::<Slice2, Time2>(config)
(002 L3054-3542) from the input stream's Slice, Time and Packet mappings and
either the output mappings (--out-slice, --out-time), a topology (--topology),
or both: the SwitchConfig in the manual's notation, the sizes the compiler
infers (slice2, time1, time2), the ring size, and each output slice's snoop
bitmap. Without --topology it finds the topology that produces the output
mappings; without output mappings it prints the topology's output mappings.
A violated rule exits 1 with the manual's line.

--topology takes the manual's literal, e.g.
  --topology 'Broadcast01 { slice1: 2, slice0: 2, time0: 4 }'
or a bare name with --slice1, --slice0, --time0 or --ring-size.

Example (the manual's Broadcast01, 002 L3160-3209):
  tcpmap derive switch --axes A=256,B=64,C=63,X=4 --dtype i8 \
    --in-slice A --in-time B --in-packet 'C # 64' \
    --out-slice 'A / 4, X' --out-time 'B / 4, A / 2 % 2, B % 4, A % 2'
prints SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }, ring_size 4.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			req, err := f.request(cmd)
			if err != nil {
				return err
			}
			plan, err := engines.DeriveSwitch(spec, req)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), switchJSON(req, plan))
			}
			return writeSwitch(cmd.OutOrStdout(), req, plan, f.allBitmaps)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.axes, "axes", "", "axis declarations `A=256,B=64` (required)")
	fl.StringVar(&f.dt, "dtype", "", "element type of the stream, e.g. i8, bf16 (required)")
	fl.StringVar(&f.inSlice, "in-slice", "", "the input stream's Slice mapping (required)")
	fl.StringVar(&f.inTime, "in-time", "", "the input stream's Time mapping (required)")
	fl.StringVar(&f.inPacket, "in-packet", "", "the input stream's Packet mapping (required)")
	fl.StringVar(&f.outSlice, "out-slice", "", "the output Slice mapping; axes the input lacks are broadcast axes")
	fl.StringVar(&f.outTime, "out-time", "", "the output Time mapping")
	fl.StringVar(&f.outPacket, "out-packet", "", "the output Packet mapping (must equal the input's)")
	fl.StringVar(&f.topology, "topology", "", "the SwitchConfig: 'Broadcast01 { slice1: 2, slice0: 2, time0: 4 }' or a bare name")
	fl.IntVar(&f.slice1, "slice1", 0, "slice1 of a bare --topology")
	fl.IntVar(&f.slice0, "slice0", 0, "slice0 of a bare --topology")
	fl.IntVar(&f.time0, "time0", 0, "time0 of a bare --topology")
	fl.IntVar(&f.ring, "ring-size", 0, "ring_size of a bare --topology CustomBroadcast")
	fl.BoolVar(&f.dual, "dual", false, "dual channel mode: 64-byte flits (002 L2127)")
	fl.BoolVar(&f.allBitmaps, "bitmaps", false, "print every snoop bitmap row, not just the first and last")
	return cmd
}

// request parses the flags into a switch request; errors are usage errors.
func (f *switchFlags) request(cmd *cobra.Command) (engines.SwitchRequest, error) {
	var req engines.SwitchRequest
	var err error
	if req.Axes, req.DType, err = axesAndDType(f.axes, f.dt); err != nil {
		return req, err
	}
	for _, x := range []struct {
		flag, src string
		need      bool
		dst       **mapping.Expr
	}{
		{"in-slice", f.inSlice, true, &req.InSlice}, {"in-time", f.inTime, true, &req.InTime}, {"in-packet", f.inPacket, true, &req.InPacket},
		{"out-slice", f.outSlice, false, &req.OutSlice}, {"out-time", f.outTime, false, &req.OutTime}, {"out-packet", f.outPacket, false, &req.OutPacket},
	} {
		if x.src == "" {
			if x.need {
				return req, usageError{fmt.Errorf("--%s is required", x.flag)}
			}
			continue
		}
		if *x.dst, err = mapping.Parse(x.src, req.Axes, nil); err != nil {
			return req, usageError{fmt.Errorf("--%s %q: %w", x.flag, x.src, err)}
		}
	}
	if (req.OutSlice == nil) != (req.OutTime == nil) {
		return req, usageError{fmt.Errorf("give both --out-slice and --out-time, or neither")}
	}
	params := cmd.Flags().Changed("slice1") || cmd.Flags().Changed("slice0") || cmd.Flags().Changed("time0") || cmd.Flags().Changed("ring-size")
	if f.topology == "" {
		if params {
			return req, usageError{fmt.Errorf("--slice1, --slice0, --time0 and --ring-size need a bare --topology name")}
		}
		if req.OutSlice == nil {
			return req, usageError{fmt.Errorf("give the output mappings (--out-slice, --out-time), a --topology, or both")}
		}
		req.DualChannel = f.dual
		return req, nil
	}
	var c kernel.SwitchConfig
	if strings.Contains(f.topology, "{") || !params {
		if params {
			return req, usageError{fmt.Errorf("--topology %q already states its parameters; drop --slice1/--slice0/--time0/--ring-size", f.topology)}
		}
		if c, err = kernel.ParseSwitchConfig(f.topology); err != nil {
			return req, usageError{fmt.Errorf("--topology %q: %w", f.topology, err)}
		}
	} else {
		if c.Topology, err = kernel.ParseSwitchTopology(f.topology); err != nil {
			return req, usageError{fmt.Errorf("--topology: %w", err)}
		}
		c.Slice1, c.Slice0, c.Time0, c.RingSize = f.slice1, f.slice0, f.time0, f.ring
	}
	req.Config = &c
	req.DualChannel = f.dual
	return req, nil
}

// switchJSONOut is the --json form of a derived switch.
type switchJSONOut struct {
	Config    string          `json:"config"`
	In        swStreamJSON    `json:"in"`
	Out       swStreamJSON    `json:"out"`
	Broadcast []string        `json:"broadcast,omitempty"`
	Switch    *kernel.Switch  `json:"switch"`
	Rows      []switchRowJSON `json:"bitmap_rows"`
}

// swStreamJSON holds a stream's mappings as m![...] text.
type swStreamJSON struct {
	Slice  string `json:"slice,omitempty"`
	Time   string `json:"time"`
	Packet string `json:"packet"`
}

// switchRowJSON is one run of identical snoop bitmaps.
type switchRowJSON struct {
	First   int   `json:"first"`
	Last    int   `json:"last"`
	Sources []int `json:"sources"`
}

func switchJSON(req engines.SwitchRequest, plan *engines.SwitchPlan) switchJSONOut {
	out := switchJSONOut{
		Config:    plan.Switch.Config.String(),
		In:        swStreamJSON{Slice: req.InSlice.Text(), Time: req.InTime.Text(), Packet: req.InPacket.Text()},
		Out:       swStreamJSON{Slice: plan.OutSlice.Text(), Time: plan.OutTime.Text(), Packet: plan.OutPacket.Text()},
		Broadcast: plan.Broadcast,
		Switch:    &plan.Switch,
	}
	for _, r := range plan.Switch.Route.Rows() {
		out.Rows = append(out.Rows, switchRowJSON{First: r.First, Last: r.Last, Sources: r.Sources.Slices()})
	}
	return out
}

// writeSwitch prints a derived switch as text.
func writeSwitch(w io.Writer, req engines.SwitchRequest, plan *engines.SwitchPlan, all bool) error {
	sw := &plan.Switch
	var b strings.Builder
	fmt.Fprintln(&b, sw.Config.String())
	var sizes []string
	for _, s := range []struct {
		name string
		v    int
	}{{"slice2", sw.Slice2}, {"time2", sw.Time2}, {"time1", sw.Time1}} {
		if s.v > 0 {
			sizes = append(sizes, fmt.Sprintf("%s = %d", s.name, s.v))
		}
	}
	if len(sizes) > 0 {
		fmt.Fprintf(&b, "  %s\n", strings.Join(sizes, ", "))
	}
	fmt.Fprintf(&b, "  in:  Slice %s  Time %s  Packet %s\n", req.InSlice.Text(), req.InTime.Text(), req.InPacket.Text())
	fmt.Fprintf(&b, "  out: Slice %s  Time %s  Packet %s\n", plan.OutSlice.Text(), plan.OutTime.Text(), plan.OutPacket.Text())
	if len(plan.Broadcast) > 0 {
		fmt.Fprintf(&b, "  broadcast axes: %s\n", strings.Join(plan.Broadcast, ", "))
	}
	rings := "ring"
	if sw.Rings != 1 {
		rings += "s"
	}
	flits := "flit"
	if sw.FlitsPerPacket != 1 {
		flits += "s"
	}
	fmt.Fprintf(&b, "  ring_size = %d (%d %s), input_time = %d, packet = %d B = %d %s of %d B\n",
		sw.RingSize, sw.Rings, rings, sw.InTime, sw.PacketBytes, sw.FlitsPerPacket, flits, sw.FlitBytes)
	rows := sw.Route.Rows()
	fmt.Fprintln(&b, "  snoop bitmaps (output slices: source slices):")
	const head = 3
	for i, r := range rows {
		if !all && len(rows) > head+1 && i >= head && i < len(rows)-1 {
			if i == head {
				fmt.Fprintf(&b, "    … (%d rows; --bitmaps prints all)\n", len(rows))
			}
			continue
		}
		fmt.Fprintf(&b, "    %s\n", r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
