package cost

import (
	"encoding/json"
	"fmt"
	"io"
)

// The Chrome trace-event timeline of a report (the JSON Object Format:
// {"traceEvents": [...]}), which Perfetto and chrome://tracing open. Process
// 1 has one thread per context, process 2 one per engine of a context; each
// op is a complete ("X") event on its context's thread, and each priced stage
// an event on its engine's thread, from the op's start plus the fill of the
// stages before it, lasting the stage's occupancy. Overlapping events of one
// thread (concurrent DMA commands) go to extra lanes of it. Timestamps are in
// microseconds at the report's clock. The output is deterministic.

// traceEvent is one trace event.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

type traceFile struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
}

// traceThreads assigns lanes: threads are named, and an event that would
// overlap the last event of every lane of its thread opens a new lane.
type traceThreads struct {
	pid   int
	next  int
	names []string
	lanes [][]float64 // per name: each lane's end
	tids  [][]int
	meta  []traceEvent
}

func (t *traceThreads) place(name string, start, end float64) int {
	k := -1
	for i, n := range t.names {
		if n == name {
			k = i
		}
	}
	if k < 0 {
		k = len(t.names)
		t.names = append(t.names, name)
		t.lanes = append(t.lanes, nil)
		t.tids = append(t.tids, nil)
	}
	for l, e := range t.lanes[k] {
		if e <= start {
			t.lanes[k][l] = end
			return t.tids[k][l]
		}
	}
	t.next++
	tid := t.next
	label := name
	if n := len(t.lanes[k]); n > 0 {
		label = fmt.Sprintf("%s #%d", name, n+1)
	}
	t.lanes[k] = append(t.lanes[k], end)
	t.tids[k] = append(t.tids[k], tid)
	t.meta = append(t.meta,
		traceEvent{Name: "thread_name", Ph: "M", Pid: t.pid, Tid: tid, Args: map[string]any{"name": label}},
		traceEvent{Name: "thread_sort_index", Ph: "M", Pid: t.pid, Tid: tid, Args: map[string]any{"sort_index": tid}})
	return tid
}

// WriteTrace writes r as a Chrome trace-event JSON timeline.
func WriteTrace(w io.Writer, r *Report) error {
	if r == nil {
		return fmt.Errorf("cost: WriteTrace: nil report")
	}
	us := 1.0 / 1000 // a cycle in µs at 1 GHz
	if r.Clock.GHz > 0 {
		us = 1 / (r.Clock.GHz * 1000)
	}
	ctxs := &traceThreads{pid: 1}
	engs := &traceThreads{pid: 2, next: 100}
	// Reserve the context threads in their fixed order.
	for _, c := range contextOrder {
		ctxs.place(string(c), 0, 0)
	}
	var evs []traceEvent
	for i := range r.Ops {
		o := &r.Ops[i]
		dur := (o.End - o.Start) * us
		name := fmt.Sprintf("ops[%d] %s %s→%s", o.Index, o.Kind, o.Src, o.Dst)
		args := map[string]any{"op": o.Index, "cycles": o.End - o.Start, "bottleneck": o.Cost.Bottleneck.String(), "waits": o.Waits}
		if o.Batch >= 0 {
			args["dma_batch"] = o.Batch
		}
		tid := ctxs.place(string(o.Context), o.Start, o.End)
		evs = append(evs, traceEvent{Name: name, Cat: string(o.Context), Ph: "X", Ts: o.Start * us, Dur: &dur, Pid: 1, Tid: tid, Args: args})
		if o.Cost.Dual {
			d := dur
			tid := ctxs.place(string(contextOrder[ctxSub]), o.Start, o.End)
			evs = append(evs, traceEvent{Name: name + " (dual channel)", Cat: string(o.Context), Ph: "X", Ts: o.Start * us, Dur: &d, Pid: 1, Tid: tid, Args: args})
		}
		fill := 0.0
		for _, s := range o.Cost.Stages {
			start := o.Start + fill
			if s.Stage < 0 {
				start = o.Start
			}
			d := s.Cycles * us
			tid := engs.place(string(o.Context)+"."+s.Engine.String(), start, start+s.Cycles)
			evs = append(evs, traceEvent{Name: fmt.Sprintf("ops[%d] %s", o.Index, s.Engine), Cat: s.Engine.String(), Ph: "X",
				Ts: start * us, Dur: &d, Pid: 2, Tid: tid,
				Args: map[string]any{"op": o.Index, "cycles": s.Cycles, "fill": s.Fill, "drain": s.Drain}})
			fill += s.Fill
		}
	}
	var f traceFile
	f.DisplayTimeUnit = "ns"
	f.TraceEvents = append(f.TraceEvents,
		traceEvent{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": r.Kernel + " contexts"}},
		traceEvent{Name: "process_name", Ph: "M", Pid: 2, Args: map[string]any{"name": r.Kernel + " engines"}})
	f.TraceEvents = append(f.TraceEvents, ctxs.meta...)
	f.TraceEvents = append(f.TraceEvents, engs.meta...)
	f.TraceEvents = append(f.TraceEvents, evs...)
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(f)
}
