package search

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"
)

// A search's memory budget (Options.MemoryBudget): a watcher samples the
// Go heap and, past the budget, stops the search as Ctrl-C does, so that
// it ends with the best plan so far and says why (StoppedMemory) instead
// of growing until the machine kills it.

// ErrMemoryBudget is the cause of a context a search's memory watcher
// cancelled.
var ErrMemoryBudget = errors.New("memory budget reached")

// DefaultMemoryBudget is the heap budget of the searches the commands run
// (plan's --memory default, explain's, each sweep point's; the heap is the
// process's, shared by the points a sweep plans at once): well below the
// 24 GiB of the machine the project runs on.
const DefaultMemoryBudget = 8 << 30

// memoryEvery is how often the watcher samples the heap.
const memoryEvery = 50 * time.Millisecond

// heapMetric is the live heap and what the GC has yet to free: the bytes
// of heap objects (runtime/metrics).
const heapMetric = "/memory/classes/heap/objects:bytes"

// heapBytes returns the bytes the Go heap holds in objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// withMemoryBudget returns opts whose Context is also cancelled, with
// cause ErrMemoryBudget, once the heap exceeds opts.MemoryBudget bytes,
// and the function that stops the watcher. Without a budget it returns
// opts unchanged.
func withMemoryBudget(opts Options) (Options, func()) {
	if opts.MemoryBudget == 0 {
		return opts, func() {}
	}
	parent := opts.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	// over cancels the search when the heap exceeds the budget. The
	// metric counts what the GC has yet to free: an earlier search's
	// garbage (a graph plans many in a row) would stop this one at its
	// first sample. Collect, then judge the heap that is left.
	over := func() bool {
		if heapBytes() <= opts.MemoryBudget {
			return false
		}
		runtime.GC()
		if h := heapBytes(); h > opts.MemoryBudget {
			cancel(fmt.Errorf("%w: the heap holds %d MiB, the budget is %d MiB", ErrMemoryBudget, h>>20, opts.MemoryBudget>>20))
			return true
		}
		return false
	}
	// Sampled once before the search starts, so that a search begun over
	// its budget stops whatever the ticker's timing (a search shorter
	// than memoryEvery otherwise ran to its end).
	if !over() {
		go func() {
			t := time.NewTicker(memoryEvery)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-ctx.Done():
					return
				case <-t.C:
					if over() {
						return
					}
				}
			}
		}()
	}
	opts.Context = ctx
	return opts, func() {
		close(done)
		cancel(nil)
	}
}

// memoryStopped reports whether ctx was cancelled by a memory watcher.
func memoryStopped(ctx context.Context) bool {
	return ctx != nil && errors.Is(context.Cause(ctx), ErrMemoryBudget)
}
