package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"tcpmap/results"
	"tcpmap/search/sweep"
)

func init() { subcommands = append(subcommands, newSweepCmd) }

// sweepOutput is `sweep --json`.
type sweepOutput struct {
	Sweep       string   `json:"sweep"`
	Store       string   `json:"store"`
	Shard       string   `json:"shard,omitempty"`
	Points      int      `json:"points"`
	InShard     int      `json:"in_shard"`
	Excluded    int      `json:"excluded"`
	Duplicates  int      `json:"duplicates"`
	Cached      int      `json:"cached"`
	Planned     int      `json:"planned"`
	NoPlan      int      `json:"no_plan"`
	Infeasible  int      `json:"infeasible"`
	Failed      int      `json:"failed"`
	Left        int      `json:"left"`
	Interrupted bool     `json:"interrupted"`
	Errors      []string `json:"errors"`
	WallSeconds float64  `json:"wall_seconds"`
	// PointsPerSecond is the points planned now over the wall time.
	PointsPerSecond float64 `json:"points_per_second"`
}

// The SQLite store is what sweep.Run stores into and sweep.RegressStore
// reads.
var (
	_ sweep.Store       = (*results.Store)(nil)
	_ sweep.StoreReader = (*results.Store)(nil)
)

// sweepPlanner, when set (by tests), plans the points instead of
// sweep.PlanPoint.
var sweepPlanner sweep.PointPlanner

// onSweepProgress, when set (by tests), is called after each point with
// the sweep's context, which Ctrl-C cancels.
var onSweepProgress func(ctx context.Context, p sweep.Progress)

// sweepProgressEvery is how often a sweep prints a progress line when
// stderr is not a terminal.
var sweepProgressEvery = 10 * time.Second

// stderrTerminal reports whether the process's stderr is a terminal (the
// progress bar's writer); tests see a buffer, never a terminal.
var stderrTerminal = func() (io.Writer, bool) {
	return os.Stderr, term.IsTerminal(int(os.Stderr.Fd()))
}

func newSweepCmd(g *globals) *cobra.Command {
	var (
		db      string
		workers int
		force   bool
		shard   string
	)
	cmd := &cobra.Command{
		Use:         "sweep SPEC.yaml",
		Annotations: readsHW,
		Short:       "Plan every point of a sweep file into the result store",
		Long: `sweep expands a sweep file (workloads/sweeps/*.yaml: a workload, the axis
sizes, dtypes, hardware-spec fields and planner options to vary, as a grid or a
list of points) and plans each point as tcpmap plan does, storing its result —
the plan (compressed), cycles, utilization, roofline, bottleneck, proven or gap,
search statistics, wall time — in the result store (--db, default
results/tcpmap.db; docs/results-store.md).

A point is stored under a key of content hashes (the contraction, the hardware
spec, the planner options, the cost model's version): a point the store holds
is not planned again (--force plans it again). Points are planned --workers at
a time, each search on one core. On a terminal a progress bar shows the count,
rate and ETA; otherwise a line every 10 seconds. Ctrl-C (or SIGTERM) stops the
sweep: the points in flight are dropped, every stored point stays, and running
the same command again resumes. A killed sweep (kill -9) loses only the points
in flight.

--shard I/N plans only the points whose key hashes to shard I of N (0-based),
into its own store; results merge joins the stores. --shard N takes I from
JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (a
Slurm job array); see docs/sweeps.md.

Exit status: 0 every point stored, 1 invalid input or a point that failed
(its error is printed; the others are stored), 2 usage errors, 3 interrupted
(rerun to resume).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if workers < 0 {
				return usageError{fmt.Errorf("--workers must not be negative, got %d", workers)}
			}
			if workers == 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			var si, sn int
			if shard != "" {
				var err error
				if si, sn, err = sweep.ParseShard(shard, os.Getenv); err != nil {
					return usageError{err}
				}
			}
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			sw, err := sweep.Load(args[0], spec)
			if err != nil {
				return err
			}
			st, err := results.Open(db)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			pr := newSweepProgress(c.ErrOrStderr(), sw.Name)
			defer pr.close()
			sum, err := sweep.Run(sw, sweep.Options{Store: st, Workers: workers, Force: force,
				Shard: si, Shards: sn, Context: ctx, Planner: sweepPlanner,
				Progress: func(p sweep.Progress) {
					pr.update(p)
					if onSweepProgress != nil {
						onSweepProgress(ctx, p)
					}
				}})
			pr.close()
			if err != nil {
				return err
			}
			planned := sum.Planned + sum.NoPlan + sum.Infeasible
			o := sweepOutput{Sweep: sw.Name, Store: db, Points: sum.Points, InShard: sum.InShard,
				Excluded: sw.Excluded, Duplicates: sw.Duplicates, Cached: sum.Cached, Planned: sum.Planned,
				NoPlan: sum.NoPlan, Infeasible: sum.Infeasible, Failed: sum.Failed, Left: sum.Left,
				Interrupted: sum.Interrupted, Errors: []string{}, WallSeconds: sum.Wall.Seconds()}
			if sn > 1 {
				o.Shard = fmt.Sprintf("%d/%d", si, sn)
			}
			if sum.Wall > 0 {
				o.PointsPerSecond = float64(planned) / sum.Wall.Seconds()
			}
			for _, e := range sum.Errors {
				o.Errors = append(o.Errors, e.Error())
			}
			if g.json {
				if err := writeJSON(c.OutOrStdout(), o); err != nil {
					return err
				}
			} else {
				w := c.OutOrStdout()
				shardText := ""
				if o.Shard != "" {
					shardText = fmt.Sprintf(", shard %s: %d", o.Shard, o.InShard)
				}
				fmt.Fprintf(w, "sweep %s: %d points%s; %d from the store, %d planned (%d with a plan, %d stopped without one, %d infeasible), %d failed",
					o.Sweep, o.Points, shardText, o.Cached, planned, o.Planned, o.NoPlan, o.Infeasible, o.Failed)
				if o.Left > 0 {
					fmt.Fprintf(w, ", %d left", o.Left)
				}
				fmt.Fprintf(w, "\n%d planned in %.1fs (%.3g points/s); store %s\n", planned, o.WallSeconds, o.PointsPerSecond, db)
			}
			for _, e := range o.Errors {
				fmt.Fprintf(c.ErrOrStderr(), "tcpmap: %s\n", e)
			}
			switch {
			case sum.Interrupted:
				fmt.Fprintf(c.ErrOrStderr(), "tcpmap: sweep interrupted: %d points left; run the same command again to resume\n", o.Left)
				return exitError{exitAborted}
			case sum.Failed > 0:
				return exitError{exitFail}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", results.DefaultPath, "the result store `FILE` (SQLite)")
	cmd.Flags().IntVar(&workers, "workers", 0, "plan `N` points at once (default: all cores)")
	cmd.Flags().BoolVar(&force, "force", false, "plan the points the store already holds again")
	cmd.Flags().StringVar(&shard, "shard", "", "plan shard `I/N` of the points (or N: I from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)")
	return cmd
}

// sweepProgress reports a sweep's progress on stderr: a bar on a terminal,
// otherwise sweep.Lines' plain lines (a line every sweepProgressEvery and
// one for each failed point).
type sweepProgress struct {
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	lines  *sweep.Lines
	closed bool
}

func newSweepProgress(stderr io.Writer, name string) *sweepProgress {
	p := &sweepProgress{}
	if tw, ok := stderrTerminal(); ok {
		// The bar writes its own control sequences straight to the
		// terminal; the sweep's name (read from a file) is escaped first.
		var esc strings.Builder
		e := newEscaper(&esc)
		io.WriteString(e, "sweep "+name)
		e.Flush()
		p.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(tw), progressbar.OptionSetDescription(esc.String()),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("points"),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
		return p
	}
	p.lines = sweep.NewLines(stderr, sweepProgressEvery)
	return p
}

// update records a finished point.
func (p *sweepProgress) update(s sweep.Progress) {
	if p.lines != nil {
		p.lines.Update(s)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar.GetMax() != s.Total {
		p.bar.ChangeMax(s.Total)
	}
	p.bar.Set(s.Done)
}

func (p *sweepProgress) close() {
	if p.lines != nil {
		p.lines.Close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.bar.Finish()
}
