package sweep

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"tcpmap/model/pos"
	"tcpmap/results/record"
	"tcpmap/search"
)

// PointPlanner plans one sweep point into a result record (Key, Sweep and
// Point are filled in by Run). A search the context stopped must
// return ErrInterrupted: its best-so-far is no result of the point.
type PointPlanner func(ctx context.Context, p *Point) (*record.Record, error)

// ErrInterrupted is a point whose search the sweep's context stopped; it
// is not stored and the rerun plans it.
var ErrInterrupted = errors.New("interrupted")

// Options are Run's settings.
type Options struct {
	// Store receives the results; points it holds are cache hits. The
	// workers call its Put at once: it must be safe for concurrent use.
	Store Store
	// Workers is how many points are planned at once (at least 1).
	Workers int
	// Force plans points the store already holds.
	Force bool
	// Shard and Shards: plan only the points whose Point.Shard(Shards)
	// is Shard (Shards 0 or 1: every point).
	Shard, Shards int
	// Context stops the sweep (Ctrl-C): points in flight are dropped,
	// everything stored stays.
	Context context.Context
	// Planner plans a point (nil: PlanPoint).
	Planner PointPlanner
	// Progress, when set, is called after each point (from one goroutine
	// at a time).
	Progress func(Progress)
}

// Progress is a sweep's state after a point.
type Progress struct {
	// Done of Total points of the shard are finished (cached, planned or
	// failed); Cached of them were cache hits.
	Done, Total, Cached int
	// Point is the point just finished, Record its result (nil on error),
	// Err its error.
	Point   *Point
	Record  *record.Record
	Err     error
	Elapsed time.Duration
}

// Summary is what a sweep did.
type Summary struct {
	// Points are the sweep's points, InShard those of this shard; Cached
	// were already stored; Planned, NoPlan and Infeasible were planned now
	// and stored with that status; Failed ended in an error (not stored);
	// Left were not planned because the sweep was stopped.
	Points, InShard, Cached, Planned, NoPlan, Infeasible, Failed, Left int
	// Interrupted is set when the context stopped the sweep.
	Interrupted bool
	// Errors are the failed points' errors, in point order.
	Errors []error
	Wall   time.Duration
}

// Run plans the sweep's points of the shard that the store does not
// hold (all of them with Force), Workers at a time, storing each result as
// soon as it is planned, in its own transaction. Stopped by the context,
// it returns after the points in flight end (their results are dropped);
// a rerun plans what is left.
func Run(sw *Sweep, o Options) (*Summary, error) {
	start := time.Now()
	if o.Store == nil {
		return nil, errors.New("sweep: no result store")
	}
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	plan := o.Planner
	if plan == nil {
		plan = PlanPoint
	}
	workers := max(o.Workers, 1)
	sum := &Summary{Points: len(sw.Points)}
	var todo []*Point
	for _, p := range sw.Points {
		if o.Shards > 1 && p.Shard(o.Shards) != o.Shard {
			continue
		}
		todo = append(todo, p)
	}
	sum.InShard = len(todo)
	// The hardware specs first: results refer to them.
	seenHW := map[string]bool{}
	for _, p := range todo {
		if !seenHW[p.Key.HW] {
			seenHW[p.Key.HW] = true
			if err := o.Store.PutHardware(p.Key.HW, p.SpecJSON); err != nil {
				return nil, err
			}
		}
	}
	var mu sync.Mutex
	done := 0
	report := func(p *Point, r *record.Record, err error) {
		done++
		if o.Progress != nil {
			o.Progress(Progress{Done: done, Total: sum.InShard, Cached: sum.Cached, Point: p, Record: r, Err: err, Elapsed: time.Since(start)})
		}
	}
	if !o.Force {
		ids := make([]string, len(todo))
		for i, p := range todo {
			ids[i] = p.Key.ID()
		}
		have, err := o.Store.Has(ids)
		if err != nil {
			return nil, err
		}
		left := todo[:0]
		for _, p := range todo {
			if have[p.Key.ID()] {
				sum.Cached++
				report(p, nil, nil)
				continue
			}
			left = append(left, p)
		}
		todo = left
	}

	jobs := make(chan *Point)
	var wg sync.WaitGroup
	errs := map[int]error{}
	var storeErr error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				if ctx.Err() != nil {
					mu.Lock()
					sum.Left++
					mu.Unlock()
					continue
				}
				r, err := plan(ctx, p)
				if errors.Is(err, ErrInterrupted) || (err == nil && ctx.Err() != nil && r.Stopped == search.StoppedInterrupt) {
					mu.Lock()
					sum.Left++
					mu.Unlock()
					continue
				}
				if err == nil {
					r.Key, r.Sweep, r.Point = p.Key, sw.Name, p.Index
					if r.Params == nil {
						r.Params = p.Params
					}
					err = o.Store.Put(r)
					if err != nil {
						mu.Lock()
						if storeErr == nil {
							storeErr = err
						}
						mu.Unlock()
					}
				}
				mu.Lock()
				switch {
				case err != nil:
					sum.Failed++
					errs[p.Index] = &pos.Error{File: sw.File, Line: p.Line, Col: p.Col, Msg: p.Text() + ": " + err.Error(), Err: err}
					r = nil
				case r.Status == record.StatusPlanned:
					sum.Planned++
				case r.Status == record.StatusNoPlan:
					sum.NoPlan++
				default:
					sum.Infeasible++
				}
				report(p, r, err)
				mu.Unlock()
			}
		}()
	}
feed:
	for i, p := range todo {
		mu.Lock()
		stop := storeErr != nil || ctx.Err() != nil
		if stop {
			sum.Left += len(todo) - i
		}
		mu.Unlock()
		if stop {
			break
		}
		select {
		case jobs <- p:
		case <-ctx.Done():
			mu.Lock()
			sum.Left += len(todo) - i
			mu.Unlock()
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	sum.Interrupted = ctx.Err() != nil
	for _, p := range sw.Points {
		if e := errs[p.Index]; e != nil {
			sum.Errors = append(sum.Errors, e)
		}
	}
	sum.Wall = time.Since(start)
	if storeErr != nil {
		return sum, storeErr
	}
	return sum, nil
}

// ShardEnv are the variables a batch engine sets to a task's index, read
// in this order when --shard gives only the count: a Kubernetes Indexed
// Job's JOB_COMPLETION_INDEX (0-based) and a Slurm job array's
// SLURM_ARRAY_TASK_ID (the array's own numbering: run `--array=0-N-1`).
var ShardEnv = []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}

// ParseShard reads a --shard value: `I/N` (shard I of N, 0 ≤ I < N) or `N`,
// whose index comes from the first of ShardEnv that getenv finds set.
func ParseShard(s string, getenv func(string) string) (index, count int, err error) {
	is, ns, both := strings.Cut(s, "/")
	if !both {
		ns = is
	}
	count, err = strconv.Atoi(ns)
	if err != nil || count < 1 {
		return 0, 0, fmt.Errorf("--shard %q: want I/N or N with N a whole number ≥ 1", s)
	}
	if both {
		index, err = strconv.Atoi(is)
		if err != nil || index < 0 || index >= count {
			return 0, 0, fmt.Errorf("--shard %q: the index must be from 0 to %d", s, count-1)
		}
		return index, count, nil
	}
	for _, name := range ShardEnv {
		v := getenv(name)
		if v == "" {
			continue
		}
		index, err = strconv.Atoi(v)
		if err != nil || index < 0 || index >= count {
			return 0, 0, fmt.Errorf("--shard %d: %s=%q is not a shard index from 0 to %d", count, name, v, count-1)
		}
		return index, count, nil
	}
	return 0, 0, fmt.Errorf("--shard %d names no index and neither %s is set: give --shard I/%d", count, strings.Join(ShardEnv, " nor "), count)
}
