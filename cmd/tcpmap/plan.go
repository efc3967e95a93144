package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"tcpmap/constraints"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/search"
)

func init() { subcommands = append(subcommands, newPlanCmd) }

// planAlternative is one of the best candidates in `plan --top N`.
type planAlternative struct {
	Rank    int          `json:"rank"`
	Cycles  float64      `json:"cycles"`
	Mapping plan.Mapping `json:"mapping"`
	Summary string       `json:"summary"`
}

// planOutput is `plan --json`: the plan, the best candidates and the
// search's wall time (which the plan file leaves out to stay
// deterministic).
type planOutput struct {
	Plan         *plan.Plan        `json:"plan"`
	Alternatives []planAlternative `json:"alternatives,omitempty"`
	WallSeconds  float64           `json:"wall_seconds"`
	LowerHits    int               `json:"lower_memo_hits"`
	LowerMisses  int               `json:"lower_memo_misses"`
	Bounded      int               `json:"bound_evaluations"`
	Target       string            `json:"target"`
}

// planTargets are the values of plan --target: the library the plan's
// kernel is for, which decides the collect packets the planner may use
// (docs/spec-decisions.md "Collect packet: 32-byte flits in the libraries,
// 64-byte dual-channel flits in the manual").
var planTargets = map[string]string{
	"manual":   "the manual's hardware: collect packets of one 32-byte flit or one 64-byte dual-channel flit",
	"visa-0.1": "furiosa-visa-std 0.1.0: collect packets of one 32-byte flit, no dual-channel candidates, a cluster reduce through HBM",
	"opt-0.6":  "furiosa-opt-std 0.6.0: collect packets of one 32-byte flit, no dual-channel candidates, a cluster reduce through HBM",
}

func newPlanCmd(g *globals) *cobra.Command {
	var (
		op       string
		fuse     bool
		top      int
		timeout  time.Duration
		maxEvals int
		out      string
		maxTiles int
		noPrune  bool
		noPad    bool
		workers  int
		planner  string
		target   string
		memory   int
		orders   string
		gf       graphPlanFlags
	)
	cmd := &cobra.Command{
		Use:         "plan WORKLOAD.yaml",
		Annotations: readsHW,
		Short:       "Plan a contraction: search its mapspace for the cheapest legal kernel",
		Long: `plan searches the mapspace of the workload's einsum (or, for a graph, of the
einsum op named by --op) for its cheapest legal kernel. Every candidate mapping
it evaluates is built into a kernel program, lowered by the engines (a violated
rule makes it illegal and is counted under its rule) and priced by the cost
model.

--planner sat (the default) runs branch and bound over a SAT encoding of the
mapspace (gini): the solver proposes the spatial skeleton of a mapping whose
admissible lower bounds (compute packets, input traffic) stay below a level,
every candidate of the skeleton is evaluated, and UNSAT under the incumbent's
cycles proves it optimal ("optimal: proven"). --planner exhaustive evaluates
every candidate ("optimal: exhaustive"; ties go to the candidate enumerated
first).

--digit-orders says how each axis's digits may nest: all holds every order of
the axis's levels, the tile digit's included, whatever the engines accept (a
plan of another order prints it as "digit order of I"); named holds tile >
cluster > slice > time > row > packet and three other orders with a recorded
use (a Row digit above its Time digit, Cluster and Slice digits dealt out below
Time, a Cluster digit below its Slice digit). One einsum is searched over every
order unless --digit-orders named says otherwise; a graph planned whole
searches its einsums' layout classes over the named orders unless
--digit-orders all says otherwise (every order would multiply the many
searches of a layer several times over). The proof holds within the space
searched ("optimal: proven (every digit order)" for all).

It prints the winner as the manual writes kernels (each tensor's Chip, Cluster,
Slice, Row and Element mappings, each chain's Time and Packet), the operand in
the TRF, the tiles, the predicted cycles, time, MAC utilization and
bottleneck, and the search statistics.

--target says which library the kernel is for: manual (the default) plans for
the hardware the manual describes; visa-0.1 and opt-0.6 (the APIs of tcpmap
emit --api) leave out the candidates whose collect packet is one 64-byte
dual-channel flit, which both of the vendor's libraries refuse (their collect
makes 32-byte flits), and exchange a cluster reduce's partial sums through
HBM (the libraries' DM-to-DM DMA keeps the Cluster mapping; on the manual's
hardware one DMA moves them between the clusters' DMs, which the Rust
emitter cannot spell in either library).

--top N lists the N best candidates. --timeout stops the search early with
the best candidate found so far and the gap to the proven lower bound; Ctrl-C
does the same. --out writes the plan with its lowered kernel program as JSON,
which cost, verify and emit read; the path is checked before the search, and
the file is replaced atomically. Searches longer than a second report
progress on stderr. --workers N evaluates candidates on N cores (default
all); plans, statistics and proofs are the same for any N.

Exit status: 0 a plan (proven, or the best so far when stopped by --timeout
or Ctrl-C, with its gap), 1 no legal mapping (the whole mapspace was
searched; the rules that empty it are named) or invalid input, 2 usage
errors, 3 stopped by --timeout or Ctrl-C before any legal candidate.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if top < 1 || top > maxTop {
				return usageError{fmt.Errorf("--top must be between 1 and %d, got %d", maxTop, top)}
			}
			if memory < 0 {
				return usageError{fmt.Errorf("--memory must not be negative, got %d", memory)}
			}
			if planner != "sat" && planner != "exhaustive" {
				return usageError{fmt.Errorf("--planner %q: want sat or exhaustive", planner)}
			}
			if planTargets[target] == "" {
				return usageError{fmt.Errorf("--target %q: want manual, visa-0.1 or opt-0.6", target)}
			}
			if timeout < 0 || maxTiles < 0 || workers < 0 || maxEvals < 0 {
				return usageError{fmt.Errorf("--timeout, --max-tiles and --workers must not be negative")}
			}
			if out != "" {
				// Before the search: a bad --out would lose its result.
				if err := checkOutput("--out", out); err != nil {
					return err
				}
			}
			if fuse && op == "" {
				return usageError{fmt.Errorf("--fuse plans one einsum op with its epilogue: name it with --op (a graph planned whole fuses with --vector-ops)")}
			}
			if op == "" {
				// A graph without --op is planned whole (graph_plan.go).
				wl, isGraph, err := loadGraphWorkload(args[0], gf.axes)
				if err != nil {
					return err
				}
				if isGraph {
					allOrders, err := allDigitOrders(orders, false)
					if err != nil {
						return err
					}
					return planGraph(c.OutOrStdout(), c.ErrOrStderr(), g, wl, gf, search.Options{MaxEvaluations: maxEvals, MaxTiles: maxTiles,
						AllOrders: allOrders, Timeout: timeout, Workers: workers, MemoryBudget: uint64(memory) << 20}, out)
				}
			}
			if gf.axes != "" {
				return usageError{fmt.Errorf("--axes resizes a graph planned whole (no --op)")}
			}
			allOrders, err := allDigitOrders(orders, true)
			if err != nil {
				return err
			}
			if w, o := nonEinsumOp(args[0], op); o != nil && !(fuse && o.Kind == workload.KindEinsum) {
				if fuse {
					return usageError{fmt.Errorf("--fuse: op %q is a %s; an epilogue fuses into an einsum", op, o.Kind)}
				}
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				// An einsum that contracts no axis searches its contraction
				// too: the einsum path's workers, memory and progress.
				return planOp(ctx, c, g, gf, w, o, search.Options{Timeout: timeout, MaxEvaluations: maxEvals, Workers: workers, AllOrders: allOrders,
					MemoryBudget: uint64(memory) << 20, ProgressEvery: planProgressEvery,
					Progress: func(st search.Stats) {
						fmt.Fprintf(c.ErrOrStderr(), "plan: %d candidates, %d legal, %d priced, %.1fs\n",
							st.Candidates, st.Legal, st.CostEvaluations, st.Wall.Seconds())
					}}, out)
			}
			s, err := loadFusedSpace(g, args[0], op, fuse)
			if err != nil {
				return err
			}
			s.Library = target != "manual"
			stderr := c.ErrOrStderr()
			run := search.Solve
			if planner == "exhaustive" {
				run = search.Exhaustive
			}
			// Ctrl-C (or SIGTERM) stops the search as --timeout does: the
			// best plan so far is printed and written. A second one, once
			// the search is over, ends the process (the output file is
			// written atomically).
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := search.Options{
				Top: top, Timeout: timeout, MaxEvaluations: maxEvals, MaxTiles: maxTiles, NoPrune: noPrune, Workers: workers,
				MemoryBudget: uint64(memory) << 20, AllOrders: allOrders,
				Context: ctx, ProgressEvery: planProgressEvery,
				Progress: func(st search.Stats) {
					fmt.Fprintf(stderr, "plan: %d candidates, %d legal, %d priced, %.1fs\n",
						st.Candidates, st.Legal, st.CostEvaluations, st.Wall.Seconds())
					if onPlanProgress != nil {
						onPlanProgress(ctx, st)
					}
				},
			}
			res, relax, why, err := search.SolveAnyShape(s, run, opts, !noPad)
			if err != nil {
				stop()
				return err
			}
			if relax != nil {
				// A plan, or a padded search stopped early (its verdict).
				fmt.Fprintf(stderr, "plan: no legal mapping at the workload's sizes; planned padded: %s\n", relax)
				s = res.Space
			}
			stop()
			if res.Best == nil {
				return noPlan(c, g, s, res, why, args[0], maxTiles)
			}
			pl, err := res.Plan()
			if err != nil {
				return err
			}
			if fuse {
				if err := fuseGathers(g, stderr, args[0], op, pl); err != nil {
					return err
				}
			}
			if out != "" {
				data, err := pl.Encode(out)
				if err != nil {
					return err
				}
				if err := writeFile(out, data, 0o644); err != nil {
					return err
				}
			}
			var alts []planAlternative
			for i, x := range res.Top {
				alts = append(alts, planAlternative{Rank: i + 1, Cycles: x.Report.Cycles,
					Mapping: s.Mapping(&x.Candidate), Summary: x.Candidate.String(s.P)})
			}
			if g.json {
				o := planOutput{Plan: pl, WallSeconds: res.Stats.Wall.Seconds(), Target: target,
					LowerHits: res.Stats.LowerHits, LowerMisses: res.Stats.LowerMisses, Bounded: res.Stats.BoundEvaluations}
				if top > 1 {
					o.Alternatives = alts
				}
				return writeJSON(c.OutOrStdout(), o)
			}
			wr := c.OutOrStdout()
			writePlan(wr, pl)
			if top > 1 {
				fmt.Fprintf(wr, "\ntop %d:\n", len(alts))
				for _, a := range alts {
					fmt.Fprintf(wr, "  %2d. %12.0f cycles  %s\n", a.Rank, a.Cycles, a.Summary)
				}
			}
			fmt.Fprintln(wr)
			fmt.Fprintf(wr, "target: %s (%s)\n", target, planTargets[target])
			writeSearchStats(wr, res)
			if out != "" {
				fmt.Fprintf(wr, "wrote %s\n", out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fuse, "fuse", false, "plan the einsum --op names with the elementwise ops after it (a constant scale, exp, sigmoid, silu) done by its kernel's Vector Engine pass, and a gather whose output it alone reads done by its loads")
	cmd.Flags().StringVar(&op, "op", "", "the op of a graph workload to plan (an einsum, or a Vector Engine op: softmax, rmsnorm, elementwise; reshape is free); without it a graph is planned whole")
	cmd.Flags().StringVar(&gf.axes, "axes", "", "plan a graph at other sizes: `A=N,B=M` replaces those axes' sizes")
	cmd.Flags().IntVar(&gf.layouts, "layouts", search.DefaultLayouts, "candidate HBM layouts of a tensor two planned ops share (1: row-major only)")
	cmd.Flags().IntVar(&gf.budget, "layout-evaluations", search.DefaultLayoutEvaluations, "bound the search of a graph's op in layouts other than the declared ones to `N` candidate evaluations (the same on any machine)")
	cmd.Flags().StringVar(&gf.cache, "cache", "", "keep every op plan of a graph in `DIR` under its content key, and reuse them")
	cmd.Flags().BoolVar(&gf.vector, "vector-ops", false, "plan a graph's Vector Engine ops too (search.PlanOp: rmsnorm, softmax, elementwise), not only its einsums, and fuse an einsum's epilogue (a constant scale, exp, sigmoid, silu) into its kernel where that is cheaper; such a graph plan emits under --api opt-0.6 when every op has a kernel and none is a view")
	cmd.Flags().BoolVar(&gf.noExp, "no-expand", false, "with --vector-ops, keep every op as the workload states it (no cumsum, batched gather or compact computed by ops of other kinds)")
	cmd.Flags().BoolVar(&gf.noFuse, "no-fuse", false, "with --vector-ops, plan every op as its own kernel (no epilogue fused into an einsum's kernel)")
	cmd.Flags().BoolVar(&gf.noDM, "no-residency", false, "with --vector-ops, keep every tensor in HBM between kernels (no tensor left in DM from one Vector Engine op's kernel to the next's)")
	cmd.Flags().BoolVar(&gf.only, "cache-only", false, "plan a graph from the cache and the stored plans only: an einsum op plan they lack is an error")
	cmd.Flags().StringVar(&gf.stored, "stored", defaultStored, "use the stored einsum plans in `DIR` (NAME-OP.plan.json[.gz]) for a graph's ops in their declared layouts (not with --hw)")
	cmd.Flags().IntVar(&top, "top", 1, fmt.Sprintf("list the `N` best candidates (at most %d)", maxTop))
	cmd.Flags().IntVar(&memory, "memory", defaultMemoryMiB, "stop the search with the best plan so far once its heap holds `MiB` mebibytes (0: no limit)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop after `D` (e.g. 30s) with the best candidate so far")
	cmd.Flags().IntVar(&maxEvals, "max-evaluations", 0, "stop after `N` candidate evaluations with the best so far: the same plan on any machine (0: no limit)")
	cmd.Flags().StringVar(&out, "out", "", "write the plan and its kernel program to `PLAN.json`")
	cmd.Flags().IntVar(&maxTiles, "max-tiles", 0, fmt.Sprintf("bound the tiles of a tiled candidate (default %d, widened 8× when no candidate fits within it)", constraints.DefaultMaxTiles))
	cmd.Flags().IntVar(&workers, "workers", 0, "evaluate candidates on `N` cores (default: all; the plan does not depend on it)")
	cmd.Flags().BoolVar(&noPrune, "no-prune", false, "price every legal candidate exactly (no lower-bound pruning)")
	cmd.Flags().BoolVar(&noPad, "no-pad", false, "when no mapping is legal at the workload's sizes, do not plan the nearest padding (report the paddings instead)")
	cmd.Flags().StringVar(&orders, "digit-orders", "", "the digit orders of each axis the search holds: all (every order of the axis's levels) or named (tile > cluster > slice > time > row > packet and the named choices: Row above Time, dealt out, Cluster below Slice); default all for one einsum, named for a graph planned whole")
	cmd.Flags().StringVar(&planner, "planner", "sat", "sat (branch and bound over the SAT encoding, proven optimal) or exhaustive")
	cmd.Flags().StringVar(&target, "target", "manual", "the library the kernel is for: manual, visa-0.1 or opt-0.6 (no 64-byte dual-channel collect packets, a cluster reduce through HBM)")
	return cmd
}

// writePlan prints a plan: the mapping, the kernel as the manual writes
// it, the cost.
func writePlan(w io.Writer, pl *plan.Plan) {
	wl := pl.Workload
	name := wl.Name
	if wl.Op != "" {
		name += " op " + wl.Op
	}
	ein := wl.Einsum
	if len(wl.Epilogue) > 0 {
		// The ops its kernel does after the contraction (--fuse).
		ein += ", then " + strings.Join(wl.Epilogue, ", ") + " in the kernel's Vector Engine pass"
	}
	if len(wl.Prologue) > 0 {
		// The gathers its loads do (--fuse).
		ein += "; " + strings.Join(wl.Prologue, ", ") + " done in its loads, which read the table's rows through the index"
	}
	fmt.Fprintf(w, "plan %s: %s  (%s)\n", name, ein, wl.Axes)
	m := pl.Mapping
	var pads []string
	for _, a := range m.Axes {
		if a.Valid > 0 {
			kind := "anything in its padding"
			if a.Class == "contracted" {
				kind = "zeros in its padding"
			}
			pads = append(pads, fmt.Sprintf("%s from %d to %d (%s)", a.Name, a.Valid, a.Size, kind))
		}
	}
	if len(pads) > 0 {
		fmt.Fprintf(w, "padded: %s; the kernel's tensors are stored padded; %s\n", strings.Join(pads, ", "), validExtent(m.Axes))
	}
	streams := "streams"
	if m.Switch {
		streams = "streams through the switch"
	}
	fmt.Fprintf(w, "mapping: %s in the TRF, %s %s; packet of %s axes (%s flits); accumulate %s; broadcast in %s\n",
		m.Stationary, m.Streaming, streams, m.Content, m.Packet, m.Accumulate, m.Broadcast)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  axis\tsize\tclass\ttile\tchip\tcluster\tslice\ttime\trow\tpacket\t")
	for _, a := range m.Axes {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", a.Name, a.Size, a.Class, a.Tile, a.Chip, a.Cluster, a.Slice, a.Time, a.Row, a.Packet)
	}
	tw.Flush()
	fmt.Fprintf(w, "  time order: %s\n", orNone(m.TimeOrder))
	for _, o := range []struct {
		what string
		has  func(plan.AxisMapping) bool
	}{
		{"Row digit above the Time digit", func(a plan.AxisMapping) bool { return a.RowOuter }},
		{"Cluster and Slice digits below the Time digit (dealt out)", func(a plan.AxisMapping) bool { return a.DealtOut }},
		{"Cluster digit below the Slice digit", func(a plan.AxisMapping) bool { return a.ClusterInner }},
	} {
		var names []string
		for _, a := range m.Axes {
			if o.has(a) {
				names = append(names, a.Name)
			}
		}
		if len(names) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", o.what, strings.Join(names, ", "))
		}
	}
	for _, a := range m.Axes {
		if a.Digits != "" {
			fmt.Fprintf(w, "  digit order of %s, outermost first: %s\n", a.Name, strings.ReplaceAll(a.Digits, ".", " > "))
		}
	}
	if len(m.TileOrder) > 0 {
		buf := "single-buffered"
		if m.DoubleBuffer {
			buf = "double-buffered, software-pipelined"
		}
		fmt.Fprintf(w, "  tiles: %s (outermost first), %s\n", strings.Join(m.TileOrder, ", "), buf)
	}
	var lay []string
	for _, l := range m.Layouts {
		lay = append(lay, l.Tensor+" "+l.Order)
	}
	fmt.Fprintf(w, "  DM layouts: %s\n", strings.Join(lay, ", "))
	writeKernel(w, pl.Program)
	c := pl.Cost
	fmt.Fprintf(w, "cost: %.0f cycles = %s; MAC utilization %.2f%%, HBM %.1f%%; bottleneck %s (%.0f%% of the critical path); %s-bound; %d findings\n",
		c.Cycles, seconds(c.Seconds), 100*c.MACUtilization, 100*c.HBMUtilization, c.Bottleneck, 100*c.BottleneckShare, c.Bound, c.Findings)
	if c.Roofline > 0 {
		fmt.Fprintf(w, "roofline: %.0f cycles (the MACs at peak, or each input read and the output written once at the HBM bandwidths); this plan is %.2f× it (%.1f%% of the roofline)\n",
			c.RooflineCycles, 1/c.Roofline, 100*c.Roofline)
	}
}

// maxOpsShown bounds the ops printed for a tiled kernel.
const maxOpsShown = 12

// writeKernel prints the program's tensors as Virtual ISA types and its
// ops as the manual's chains.
func writeKernel(w io.Writer, p *kernel.Program) {
	fmt.Fprintf(w, "kernel %s: axes![%s], #[device(chip = %d)]\n", p.Name, p.Axes, p.Chips)
	for _, t := range p.Tensors {
		fmt.Fprintf(w, "  %-10s %s\n", t.Name, tensorType(t))
	}
	for i, op := range p.Ops {
		if i == maxOpsShown {
			fmt.Fprintf(w, "  ... %d more ops (one group per tile)\n", len(p.Ops)-i)
			break
		}
		fmt.Fprintf(w, "  [%d] %s\n", i, opText(p, op))
	}
}

func mtext(e *mapping.Expr) string {
	if e == nil {
		return "_"
	}
	return e.Text()
}

// tensorType writes a tensor's Virtual ISA type (002 L133-141, L1029-1200).
func tensorType(t *kernel.Tensor) string {
	d := t.DType.String()
	switch t.Mem {
	case kernel.HBM:
		return fmt.Sprintf("HbmTensor<%s, %s, %s> @ %#x", d, mtext(t.Chip), mtext(t.Element), t.Addr)
	case kernel.DM:
		return fmt.Sprintf("DmTensor<%s, %s, %s, %s, %s> @ %#x", d, mtext(t.Chip), mtext(t.Cluster), mtext(t.Slice), mtext(t.Element), t.Addr)
	case kernel.TRF:
		return fmt.Sprintf("TrfTensor<%s, %s, %s, %s, %s, %s> TrfAddress::%s", d, mtext(t.Chip), mtext(t.Cluster), mtext(t.Slice), mtext(t.Row), mtext(t.Element), t.TrfAddress)
	case kernel.VRF:
		return fmt.Sprintf("VrfTensor<%s, %s, %s, %s, %s> @ %#x", d, mtext(t.Chip), mtext(t.Cluster), mtext(t.Slice), mtext(t.Element), t.Addr)
	}
	return string(t.Mem)
}

// opText writes an op as the manual's method chain.
func opText(p *kernel.Program, op *kernel.Op) string {
	switch op.Kind {
	case kernel.OpToDM:
		d, _ := p.Tensor(op.Dst)
		return fmt.Sprintf("dma   %s.to_dm(&mut ctx.tdma, %#x) -> %s", op.Src, d.Addr, op.Dst)
	case kernel.OpToHBM:
		d, _ := p.Tensor(op.Dst)
		return fmt.Sprintf("dma   %s.to_hbm(&mut ctx.tdma, %#x) -> %s", op.Src, d.Addr, op.Dst)
	case kernel.OpDMToDM:
		return fmt.Sprintf("dma   %s -> %s", op.Src, op.Dst)
	case kernel.OpHBMToHBM:
		d, _ := p.Tensor(op.Dst)
		if op.Index != "" {
			return fmt.Sprintf("dma   %s rows at %s (indirect loop) -> %s at %#x", op.Src, op.Index, op.Dst, d.Addr)
		}
		return fmt.Sprintf("dma   %s.to_hbm(&mut ctx.tdma, %#x) -> %s", op.Src, d.Addr, op.Dst)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s ", op.Context)
	for i, st := range op.Stages {
		if i > 0 {
			b.WriteString(".")
		}
		switch st.Kind {
		case kernel.StBegin:
			fmt.Fprintf(&b, "begin(%s.view())", st.Tensor)
		case kernel.StFetch:
			fmt.Fprintf(&b, "fetch::<%s, %s, %s>()", st.DType, mtext(st.Time), mtext(st.Packet))
		case kernel.StCollect, kernel.StTranspose:
			fmt.Fprintf(&b, "%s::<%s, %s>()", st.Kind, mtext(st.Time), mtext(st.Packet))
		case kernel.StToTRF:
			t, _ := p.Tensor(st.Tensor)
			fmt.Fprintf(&b, "to_trf(TrfAddress::%s) -> %s", t.TrfAddress, st.Tensor)
		case kernel.StAlign:
			fmt.Fprintf(&b, "align::<%s, %s, _, _>(&%s)", mtext(st.Time), mtext(st.Packet), st.Tensor)
		case kernel.StContract:
			fmt.Fprintf(&b, "contract::<%s>()", mtext(st.Packet))
		case kernel.StAccumulate:
			fmt.Fprintf(&b, "accumulate::<%s, %s>(AccumulationKind::%s)", mtext(st.Time), mtext(st.Packet), st.Param)
		case kernel.StCast:
			fmt.Fprintf(&b, "cast::<%s, %s>()", st.DType, mtext(st.Packet))
		case kernel.StCommit:
			t, _ := p.Tensor(st.Tensor)
			fmt.Fprintf(&b, "commit::<%s>(%#x) -> %s", mtext(t.Element), t.Addr, st.Tensor)
		default:
			fmt.Fprintf(&b, "%s(...)", st.Kind)
		}
	}
	return b.String()
}

// writeSearchStats prints the search statistics and the optimality claim.
func writeSearchStats(w io.Writer, res *search.Result) {
	st := res.Stats
	fmt.Fprintf(w, "search: %s (tiles ≤ %d), %d candidates, %d legal, %d priced exactly, %d pruned by a lower bound, %d skipped unbuilt, %.2fs\n",
		st.Planner, res.Space.MaxTiles(), st.Candidates, st.Legal, st.CostEvaluations, st.Pruned, st.Skipped, st.Wall.Seconds())
	if st.Planner == "sat" {
		orders := ""
		if res.Space.AllOrders() {
			// Their candidates are not among those counted above.
			orders = fmt.Sprintf(" (and %d branches of digit orders)", st.SAT.OrderSkips)
		}
		fmt.Fprintf(w, "sat: %d models (placements), %d solves, %d skeletons with no legal candidate, %d placements cut by a bound, %d skeletons and %d tilings bounded out%s, %d clauses\n",
			st.SAT.Models, st.SAT.Solves, st.SAT.IllegalSkeletons, st.SAT.Placements, st.SAT.BoundSkips, st.SAT.TilingSkips, orders, st.SAT.Clauses)
		if st.BankBounded > 0 {
			fmt.Fprintf(w, "  %d candidates built and bounded out unlowered: their main chains fetch 64 reads in a row from one DM bank and run apart from the DMA (MEM-R1, 002 L2909)\n", st.BankBounded)
		}
	}
	rules := st.Rules()
	if len(rules) > 0 {
		fmt.Fprintln(w, "illegal by rule:")
		for _, r := range rules {
			cite := ""
			if r.Cite != "" {
				cite = " (" + r.Cite + ")"
			}
			fmt.Fprintf(w, "  %-12s %8d%s  e.g. %s\n", r.Rule, r.Count, cite, firstLine(r.Example, 160))
		}
	}
	switch {
	case res.Best == nil && st.Complete:
		fmt.Fprintln(w, "optimal: no legal mapping (the whole mapspace was searched)")
	case res.Best == nil:
		fmt.Fprintf(w, "optimal: no plan (%s after %.1fs, before any legal candidate)\n", stoppedText(st.Stopped), st.Wall.Seconds())
	case st.Planner == "sat" && res.Proof.Proven:
		if res.Space.AllOrders() {
			fmt.Fprintln(w, "optimal: proven (every digit order)")
		} else {
			fmt.Fprintln(w, "optimal: proven")
		}
	case st.Planner == "sat":
		fmt.Fprintf(w, "optimal: no (%s after %.1fs; gap %.1f%% to the proven lower bound of %.0f cycles)\n",
			stoppedText(st.Stopped), st.Wall.Seconds(), 100*res.Proof.Gap, res.Proof.LowerBound)
	case st.Complete:
		fmt.Fprintln(w, "optimal: exhaustive")
	default:
		fmt.Fprintf(w, "optimal: no (%s after %.1fs; the best of %d candidates)\n", stoppedText(st.Stopped), st.Wall.Seconds(), st.Candidates)
	}
}

// maxTop bounds --top: each kept candidate holds its priced program.
const maxTop = 1000

// defaultMemoryMiB is --memory's default (search.DefaultMemoryBudget).
const defaultMemoryMiB = search.DefaultMemoryBudget >> 20

// stoppedText says why a search stopped early (search.Stats.Stopped).
func stoppedText(why string) string {
	switch why {
	case search.StoppedMemory:
		return "stopped at the --memory budget"
	case search.StoppedInterrupt:
		return "interrupted"
	case search.StoppedBudget:
		return "stopped at --max-evaluations"
	}
	return "stopped at --timeout"
}

// planProgressEvery is how often a search reports progress; tests shorten
// it.
var planProgressEvery = time.Second

// onPlanProgress, when set (by tests), is called after each progress report
// with the search's context, which Ctrl-C cancels.
var onPlanProgress func(ctx context.Context, st search.Stats)

// noPlanOutput is `plan --json` when the search produced no plan.
type noPlanOutput struct {
	Plan *plan.Plan `json:"plan"`
	// Verdict is "stopped" (by --timeout or the user, see Stopped) or
	// "no legal mapping" (the whole mapspace was searched).
	Verdict    string `json:"verdict"`
	Stopped    string `json:"stopped,omitempty"`
	Candidates int    `json:"candidates"`
	// Rules are the rules that empty the mapspace: the skeleton rules of
	// a minimal unsatisfiable core when no candidate exists, else the
	// engine rules that rejected every candidate.
	Rules []explainRule `json:"rules,omitempty"`
	// Relaxations are the nearest paddings of the axes with a legal
	// plan (search.Infeasible), smallest growth first.
	Relaxations []string `json:"relaxations,omitempty"`
	WallSeconds float64  `json:"wall_seconds"`
}

// noPlan reports a search without a plan: stopped early (exit 3, as
// explain's undecided verdict), or a mapspace proven to hold no legal
// mapping, with the rules that empty it (exit 1).
func noPlan(c *cobra.Command, g *globals, s *search.Space, res *search.Result, x *search.Infeasibility, file string, maxTiles int) error {
	st := res.Stats
	o := noPlanOutput{Candidates: st.Candidates, WallSeconds: st.Wall.Seconds()}
	var msg error
	code := exitFail
	if !st.Complete {
		o.Verdict, o.Stopped, code = "stopped", st.Stopped, exitAborted
		msg = fmt.Errorf("%s: %s after %.1fs before any legal candidate was found (%d candidates enumerated): no plan", file, stoppedText(st.Stopped), st.Wall.Seconds(), st.Candidates)
	} else {
		o.Verdict = "no legal mapping"
		// The SAT encoding's minimal core names the rules that empty the
		// mapspace, or the engine rules rejected every candidate; and the
		// nearest paddings that plan.
		if x == nil {
			var err error
			if x, err = search.Infeasible(s, res, 0); err != nil {
				return err
			}
		}
		for _, r := range x.Rules {
			o.Rules = append(o.Rules, explainRule{Rule: r.Rule, Cite: r.Cite, Example: r.Text})
		}
		if len(x.Rules) == 0 {
			for _, r := range x.Engine {
				o.Rules = append(o.Rules, explainRule{Rule: r.Rule, Cite: r.Cite, Count: r.Count, Example: r.Example})
			}
		}
		for _, r := range x.Relaxations {
			o.Relaxations = append(o.Relaxations, r.String())
		}
		var why []string
		for _, r := range o.Rules {
			t := r.Rule
			if r.Cite != "" {
				t += " (" + r.Cite + ")"
			}
			if r.Count > 0 {
				t += fmt.Sprintf(" ×%d", r.Count)
			} else if r.Example != "" {
				t += ": " + r.Example
			}
			why = append(why, t)
		}
		switch {
		case st.Candidates == 0 && len(why) > 0:
			msg = fmt.Errorf("%s: no legal mapping: the mapspace is empty under %s", file, strings.Join(why, "; "))
		case st.Candidates == 0:
			msg = fmt.Errorf("%s: no legal mapping: the mapspace (tiles ≤ %d) has no candidate", file, res.Space.MaxTiles())
		default:
			msg = fmt.Errorf("%s: no legal mapping: every one of the %d candidates breaks a rule: %s", file, st.Candidates, strings.Join(why, "; "))
		}
		if len(o.Relaxations) > 0 {
			msg = fmt.Errorf("%w\nnearest legal relaxations:\n  %s", msg, strings.Join(o.Relaxations, "\n  "))
		} else {
			msg = fmt.Errorf("%w\n%s", msg, search.NoRelaxation)
		}
	}
	if g.json {
		if err := writeJSON(c.OutOrStdout(), o); err != nil {
			return err
		}
	} else {
		writeSearchStats(c.OutOrStdout(), res)
	}
	fmt.Fprintf(c.ErrOrStderr(), "tcpmap: %v\n", msg)
	return exitError{code}
}

// validExtent says which part of a padded plan's output is the result
// (`the output's result is I < 1500, J < 2500`).
func validExtent(axes []plan.AxisMapping) string {
	var parts []string
	for _, a := range axes {
		if a.Valid > 0 && a.Class != "contracted" {
			parts = append(parts, fmt.Sprintf("%s < %d", a.Name, a.Valid))
		}
	}
	if len(parts) == 0 {
		return "the output is not padded"
	}
	return "the output's result is " + strings.Join(parts, ", ")
}

func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}

// seconds prints a duration in seconds with a readable unit.
func seconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	default:
		return fmt.Sprintf("%.2f µs", s*1e6)
	}
}

// loadSpace loads a workload file and returns the mapspace of its einsum,
// or of the einsum op named op of a graph, on the hardware spec in force.
func loadSpace(g *globals, file, op string) (*search.Space, error) {
	return loadFusedSpace(g, file, op, false)
}

// loadFusedSpace is loadSpace; with fuse, the einsum op carries the
// elementwise ops workload.Fusions offers after it as its epilogue.
func loadFusedSpace(g *globals, file, op string, fuse bool) (*search.Space, error) {
	spec, err := loadSpec(g)
	if err != nil {
		return nil, err
	}
	w, err := workload.Load(file)
	if err != nil {
		return nil, err
	}
	if fuse {
		if _, err := constraints.NewProblem(w, op); err != nil {
			return nil, err
		}
		fw, err := workload.FuseOp(w, op)
		switch {
		case err == nil:
			w = fw
		case len(gathersInto(w, op)) == 0:
			return nil, usageError{fmt.Errorf("--fuse: %w; nor does a gather feed it alone (its loads could read the table through the index)", err)}
		}
	}
	p, err := constraints.NewProblem(w, op)
	if err != nil {
		return nil, err
	}
	return search.NewSpace(p, spec)
}

// gathersInto lists the gathers whose output op, a contraction, alone
// reads (search.GatherPairs): --fuse does them in op's loads.
func gathersInto(w *workload.Workload, op string) []*workload.Op {
	var out []*workload.Op
	for _, p := range search.GatherPairs(w) {
		if p[1].Name == op {
			out = append(out, p[0])
		}
	}
	return out
}

// fuseGathers rewrites pl, the plan of einsum op of the workload in file,
// so that its loads do each gather whose output op alone reads
// (search.FuseGather); it says on stderr why a gather stays a kernel of
// its own.
func fuseGathers(g *globals, stderr io.Writer, file, op string, pl *plan.Plan) error {
	spec, err := loadSpec(g)
	if err != nil {
		return err
	}
	w, err := workload.Load(file)
	if err != nil {
		return err
	}
	for _, gop := range gathersInto(w, op) {
		q, err := search.FuseGather(spec, pl.Program, pl.Cost.Cycles, w, gop)
		if errors.Is(err, search.ErrNotFused) {
			fmt.Fprintf(stderr, "plan: the gather %s is not done in %s's loads: %v\n", gop.Name, op, err)
			continue
		}
		if err != nil {
			return err
		}
		pl.Program = q
		pl.Workload.Prologue = append(pl.Workload.Prologue, gop.Name)
	}
	return pl.Validate()
}

// allDigitOrders reads --digit-orders: all (every order of each axis's
// digits, search.Options.AllOrders) or named; unset, def (all for one
// einsum, named for a graph planned whole: docs/spec-decisions.md "Digit
// order: every order").
func allDigitOrders(flag string, def bool) (bool, error) {
	switch flag {
	case "":
		return def, nil
	case "all", "named":
		return flag == "all", nil
	}
	return false, usageError{fmt.Errorf("--digit-orders %q: want all or named", flag)}
}
