package cost

import (
	"encoding/json"
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Report is the price of a kernel program: when each op runs, how busy each
// context and engine is, what bounds the total, how much of the chip's peak
// it uses, and what the cost model found.
type Report struct {
	// Kernel names the program.
	Kernel string `json:"kernel"`
	// Cycles is the makespan: the end of the last op, in core cycles.
	Cycles float64 `json:"cycles"`
	// Seconds is Cycles at the spec's clock.
	Seconds float64 `json:"seconds"`
	// Clock is the clock Seconds assumes.
	Clock Clock `json:"clock"`
	// DMABound is set when DMA commands were priced by their lower bound
	// (Model.DMABound): Cycles is then an estimate from below.
	DMABound bool `json:"dma_bound,omitempty"`
	// Ops are the scheduled ops in program order.
	Ops []OpReport `json:"ops"`
	// Contexts is the busy time of each context.
	Contexts []ContextBusy `json:"contexts"`
	// Engines is the busy time of each engine of each context that ran.
	Engines []EngineBusy `json:"engines"`
	// Bottleneck is what the critical path spends most of its time on.
	Bottleneck Bottleneck `json:"bottleneck"`
	// Utilization is the MAC utilization against the chip's peak.
	Utilization Utilization `json:"utilization"`
	// Roofline compares the program's work with its HBM traffic.
	Roofline Roofline `json:"roofline"`
	// Findings lists the hazards, penalties and unpriced costs found, in
	// program order (program-wide ones first).
	Findings []OpFinding `json:"findings"`
}

// Clock is the core clock a report's times assume.
type Clock struct {
	GHz float64 `json:"ghz"`
	// Assumption is set when the spec marks the clock as an assumption: the
	// manual states no clock, its estimates assume 1 GHz (002 L2623, L2744).
	Assumption bool   `json:"assumption"`
	Cite       string `json:"cite"`
}

// OpReport is one scheduled op.
type OpReport struct {
	Index   int            `json:"index"`
	Context kernel.Context `json:"context"`
	Kind    kernel.OpKind  `json:"kind"`
	// Src and Dst name the tensor an op reads first (a DMA source, a
	// chain's begin tensor) and the tensor it writes.
	Src string `json:"src"`
	Dst string `json:"dst"`
	// Start and End place the op in cycles from the kernel's start.
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Waits is the op whose end its start waited for, or whose start it
	// could not precede (program order); -1 when it starts at once.
	Waits int `json:"waits"`
	// Batch numbers the batch of DMA commands the op was priced with; -1 for
	// other ops.
	Batch int `json:"batch"`
	// Cost is the op's price alone.
	Cost OpCost `json:"cost"`
}

// ContextBusy is the time a context has an op running.
type ContextBusy struct {
	Context kernel.Context `json:"context"`
	Busy    float64        `json:"busy"`
	// Utilization is Busy / Report.Cycles.
	Utilization float64 `json:"utilization"`
}

// EngineBusy is the time an engine of a context is occupied.
type EngineBusy struct {
	Context     kernel.Context `json:"context"`
	Engine      Engine         `json:"engine"`
	Busy        float64        `json:"busy"`
	Utilization float64        `json:"utilization"`
}

// Bottleneck is the context and engine the critical path spends most time
// on: the chain of ops, from the last to end back to the first, each of
// which waited for the one before it; each op's time counts for its context
// and its own bottleneck engine.
type Bottleneck struct {
	Context kernel.Context `json:"context"`
	Engine  Engine         `json:"engine"`
	// Cycles is the critical path's time on that context and engine, Share
	// that time over Report.Cycles.
	Cycles float64 `json:"cycles"`
	Share  float64 `json:"share"`
	// Path lists the critical path's ops, first to last.
	Path []int `json:"path"`
}

// MarshalJSON writes the bottleneck; an empty program's has no context and
// no engine.
func (b Bottleneck) MarshalJSON() ([]byte, error) {
	w := struct {
		Context kernel.Context `json:"context"`
		Engine  string         `json:"engine"`
		Cycles  float64        `json:"cycles"`
		Share   float64        `json:"share"`
		Path    []int          `json:"path"`
	}{Context: b.Context, Cycles: b.Cycles, Share: b.Share, Path: b.Path}
	if b.Context != "" {
		w.Engine = b.Engine.String()
	}
	if w.Path == nil {
		w.Path = []int{}
	}
	return json.Marshal(w)
}

// String prints `main/fetch`, or `none` for an empty program.
func (b Bottleneck) String() string {
	if b.Context == "" {
		return "none"
	}
	return string(b.Context) + "/" + b.Engine.String()
}

// Utilization is the program's MACs against the chip's peak over its
// Cycles.
type Utilization struct {
	// MACs is the multiply-accumulates the program computes: the product of
	// the sizes of every axis of its einsum (Reference); 0 for elementwise
	// programs.
	MACs int64 `json:"macs"`
	// DType is the contraction input type the peak is for.
	DType string `json:"dtype,omitempty"`
	// PeakMACsPerCycle is the chips' peak (engines.Spec.PeakMACsPerCycle:
	// clusters × slices × rows × 64 bytes / element size, 002 L130-132,
	// L4099, L4387-4388).
	PeakMACsPerCycle int64 `json:"peak_macs_per_cycle"`
	// MAC is MACs / (PeakMACsPerCycle × Cycles), at most 1.
	MAC float64 `json:"mac"`
}

// Roofline places the program against the two roofs of the chip: its MACs
// at the peak rate, and its HBM traffic at the peak HBM bandwidth
// (002 L137, L2980).
type Roofline struct {
	// HBMBytes is the bytes DMA reads from and writes to HBM.
	HBMBytes int64 `json:"hbm_bytes"`
	// PeakHBMBytesPerCycle is the chips' HBM bandwidth per core cycle, as
	// the cost model's channels serve it: 32 channels of a 256-byte unit
	// each 5.3 cycles a chip (002 L2980, L2744; the stated 1.5 TB/s is
	// rounded, docs/spec-decisions.md "Rounded bandwidth figures", "Roofline
	// rates").
	PeakHBMBytesPerCycle float64 `json:"peak_hbm_bytes_per_cycle"`
	// Intensity is MACs per HBM byte; Ridge the intensity at which both
	// roofs meet, PeakMACsPerCycle / PeakHBMBytesPerCycle.
	Intensity float64 `json:"intensity"`
	Ridge     float64 `json:"ridge"`
	// ComputeCycles is MACs at the peak rate, MemoryCycles HBMBytes at the
	// peak bandwidth; Bound names the larger ("compute" or "memory"), or
	// "none" when the program has neither.
	ComputeCycles float64 `json:"compute_cycles"`
	MemoryCycles  float64 `json:"memory_cycles"`
	Bound         string  `json:"bound"`
	// HBM is HBMBytes / (PeakHBMBytesPerCycle × Cycles): the share of the
	// HBM bandwidth the program uses.
	HBM float64 `json:"hbm"`
	// The workload's roofline, what a kernel engineer judges a program
	// against: MinReadBytes and MinWriteBytes are its HBM inputs read once
	// and its outputs written once (the program's HBM tensors that are
	// not views), MinMemoryCycles the time to move them at the read and
	// write bandwidths (0.75 of the 1.5 TB/s each, 002 L2602, L2636, as
	// shares of PeakHBMBytesPerCycle) within the peak, IdealCycles the
	// larger of it and
	// ComputeCycles, and Attained IdealCycles / Cycles: the share of the
	// roofline the program reaches.
	MinReadBytes    int64   `json:"min_read_bytes"`
	MinWriteBytes   int64   `json:"min_write_bytes"`
	MinMemoryCycles float64 `json:"min_memory_cycles"`
	IdealCycles     float64 `json:"ideal_cycles"`
	Attained        float64 `json:"attained"`
}

// Err returns the first Invalid finding as an error, or nil: a kernel with
// one breaks a rule the hardware does not tolerate.
func (r *Report) Err() error {
	for i := range r.Findings {
		if f := &r.Findings[i]; f.Effect == Invalid && f.Violation != nil {
			return f.Violation
		}
	}
	return nil
}

// Clone returns a deep copy of the report, which a later Evaluate of the
// Model does not touch.
func (r *Report) Clone() *Report {
	c := *r
	c.Ops = append([]OpReport{}, r.Ops...)
	for i := range c.Ops {
		c.Ops[i].Cost.Stages = append([]StageCost{}, r.Ops[i].Cost.Stages...)
	}
	c.Contexts = append([]ContextBusy{}, r.Contexts...)
	c.Engines = append([]EngineBusy{}, r.Engines...)
	c.Findings = append([]OpFinding{}, r.Findings...)
	c.Bottleneck.Path = append([]int{}, r.Bottleneck.Path...)
	return &c
}

func (r *Report) reset(name string, bound bool) {
	*r = Report{Kernel: name, DMABound: bound, Ops: r.Ops[:0], Contexts: r.Contexts[:0], Engines: r.Engines[:0],
		Findings: r.Findings[:0], Bottleneck: Bottleneck{Path: r.Bottleneck.Path[:0]}}
}

// finish fills the report from the schedule.
func (m *Model) finish(p *kernel.Program) error {
	r := &m.report
	spec := m.spec
	r.Clock = Clock{GHz: spec.Clock.GHz.Value, Assumption: spec.Clock.GHz.Assumption, Cite: spec.Clock.GHz.Cite}
	var (
		ctxBusy [numContexts]float64
		ctxEnd  [numContexts]float64
		engBusy [numContexts][NumEngines]float64
		last    = -1
	)
	for i, op := range p.Ops {
		s := &m.sched[i]
		oc := &m.costs[i]
		or := OpReport{Index: i, Context: op.Context, Kind: op.Kind, Src: op.Src, Dst: op.Dst, Start: s.start, End: s.end,
			Waits: s.bind, Batch: s.batch, Cost: *oc}
		if op.Kind == kernel.OpChain {
			or.Src, or.Dst = "", ""
			if len(op.Stages) > 0 && op.Stages[0] != nil {
				or.Src = op.Stages[0].Tensor
			}
			if k := len(op.Stages) - 1; k >= 0 && op.Stages[k] != nil {
				or.Dst = op.Stages[k].Tensor
			}
		}
		r.Ops = append(r.Ops, or)
		if s.end > r.Cycles {
			r.Cycles, last = s.end, i
		}
		ci, _ := contextIndex(op.Context)
		// Busy time is the union of the context's op intervals; ops start in
		// program order, so a sweep suffices.
		occupy := func(c int) {
			lo := max(s.start, ctxEnd[c])
			if s.end > lo {
				ctxBusy[c] += s.end - lo
			}
			ctxEnd[c] = max(ctxEnd[c], s.end)
		}
		occupy(ci)
		if oc.Dual {
			occupy(ctxSub)
		}
		if ci == ctxDMA {
			continue // counted per batch below
		}
		for _, st := range oc.Stages {
			engBusy[ci][st.Engine] += st.Cycles
		}
	}
	// A DMA batch keeps each of its resources busy from its start for its
	// batch price, whatever share each command has: the union of those
	// intervals (batches start in program order).
	for e, eng := range [3]Engine{EngineDMA, EngineHBM, EngineDMN} {
		end := 0.0
		for k := range m.batches {
			b := &m.batches[k]
			if len(b.ops) == 0 {
				continue
			}
			lo, hi := max(b.start, end), b.start+b.busy[e]
			if hi > lo {
				engBusy[ctxDMA][eng] += hi - lo
			}
			end = max(end, hi)
		}
	}
	// A kernel ends no earlier than its DMA batches (schedule).
	for k := range m.batches {
		b := &m.batches[k]
		if end := b.start + b.cycles; end > r.Cycles && len(b.ops) > 0 {
			lastOp := b.ops[0]
			for _, j := range b.ops {
				if m.sched[j].end >= m.sched[lastOp].end {
					lastOp = j
				}
			}
			r.Cycles, last = end, lastOp
		}
	}
	for c := 0; c < numContexts; c++ {
		r.Contexts = append(r.Contexts, ContextBusy{Context: contextOrder[c], Busy: ctxBusy[c], Utilization: ratio(ctxBusy[c], r.Cycles)})
		for e := Engine(0); e < NumEngines; e++ {
			if b := engBusy[c][e]; b > 0 {
				r.Engines = append(r.Engines, EngineBusy{Context: contextOrder[c], Engine: e, Busy: b, Utilization: ratio(b, r.Cycles)})
			}
		}
	}
	r.Seconds = r.Cycles * spec.CycleTime()

	// The critical path, from the op that ends last back to the start.
	var onPath [numContexts][NumEngines]float64
	count := true
	for i := last; i >= 0; {
		s := &m.sched[i]
		if count {
			ci, _ := contextIndex(p.Ops[i].Context)
			onPath[ci][m.costs[i].Bottleneck] += s.end - s.start
			r.Bottleneck.Path = append(r.Bottleneck.Path, i)
		}
		count = !s.bindStart
		i = s.bind
	}
	path := r.Bottleneck.Path
	for a, b := 0, len(path)-1; a < b; a, b = a+1, b-1 {
		path[a], path[b] = path[b], path[a]
	}
	for c := 0; c < numContexts; c++ {
		for e := Engine(0); e < NumEngines; e++ {
			if t := onPath[c][e]; t > r.Bottleneck.Cycles {
				r.Bottleneck.Context, r.Bottleneck.Engine, r.Bottleneck.Cycles = contextOrder[c], e, t
			}
		}
	}
	// The busy time summed along the path may pass the makespan by a
	// rounding (1.0000000000000007 on a prefill kernel): a share is at most 1.
	r.Bottleneck.Share = min(1, ratio(r.Bottleneck.Cycles, r.Cycles))

	// Utilization and roofline.
	chips := int64(max(p.Chips, 1))
	u := &r.Utilization
	macs, dt, err := m.macs(p)
	if err != nil {
		return err
	}
	u.MACs = macs
	if dt != 0 {
		u.DType = dt.String()
		if peak, err := spec.PeakMACsPerCycle(dt.Bits()); err == nil {
			u.PeakMACsPerCycle = int64(peak) * chips
		}
	}
	if u.PeakMACsPerCycle > 0 {
		u.MAC = ratio(float64(u.MACs), float64(u.PeakMACsPerCycle)*r.Cycles)
	}
	rf := &r.Roofline
	for i := range m.costs {
		rf.HBMBytes += m.costs[i].HBMBytes
	}
	// 1.5 TB/s per chip at the core clock (002 L137, L2980).
	h := &spec.HBM
	rf.PeakHBMBytesPerCycle = ratio(float64(h.Stacks.Value*h.ChannelsPerStack.Value*h.AccessUnitBytes.Value), h.CyclesPerRequest.Value) * float64(chips)
	rf.Intensity = ratio(float64(u.MACs), float64(rf.HBMBytes))
	rf.Ridge = ratio(float64(u.PeakMACsPerCycle), rf.PeakHBMBytesPerCycle)
	rf.ComputeCycles = ratio(float64(u.MACs), float64(u.PeakMACsPerCycle))
	rf.MemoryCycles = ratio(float64(rf.HBMBytes), rf.PeakHBMBytesPerCycle)
	switch {
	case rf.ComputeCycles == 0 && rf.MemoryCycles == 0:
		rf.Bound = "none"
	case rf.ComputeCycles >= rf.MemoryCycles:
		rf.Bound = "compute"
	default:
		rf.Bound = "memory"
	}
	rf.HBM = ratio(float64(rf.HBMBytes), rf.PeakHBMBytesPerCycle*r.Cycles)
	// An argument updated in place (kernel.Tensor.InPlace) is neither
	// read nor written whole: the least its update moves is each tile
	// view of it an op writes, written once at the size of what the op
	// writes there (its source: an update_slice's slice; the view's
	// positions pad the rest of the argument).
	inPlace := map[string]bool{}
	for _, t := range p.Tensors {
		if t != nil && t.InPlace() {
			inPlace[t.View] = true
		}
	}
	written := map[string]bool{}
	for _, op := range p.Ops {
		t, ok := p.Tensor(op.Dst)
		src, sok := p.Tensor(op.Src)
		if ok && sok && t.Mem == kernel.HBM && t.Role == kernel.Intermediate && inPlace[t.View] && !written[t.Name] {
			written[t.Name] = true
			if n, err := src.DType.BytesFor(m.validElements(p, src)); err == nil {
				rf.MinWriteBytes += int64(n)
			}
		}
	}
	// A gather's table (the source of an op with an index) is read only
	// at the rows it gathers: at least what the gather writes.
	// A scatter's destination (op.Scatter) is written only at the rows
	// its index names: one row per index position.
	gathered := map[string]*kernel.Tensor{}
	scattered := map[string]int64{}
	for _, op := range p.Ops {
		if op.Index == "" {
			continue
		}
		t, ok := p.Tensor(op.Dst)
		if !ok {
			continue
		}
		if !op.Scatter {
			gathered[op.Src] = t
			continue
		}
		if idx, ok := p.Tensor(op.Index); ok {
			if rows := op.ScatterRows(); rows > 0 {
				scattered[t.Name] = int64(m.validElements(p, t)) / int64(rows) * int64(idx.Element.Size())
			}
		}
	}
	// A tensor handed over in DM (kernel.Program.Handoff) is neither read
	// from nor written to HBM.
	handed := map[string]bool{}
	for _, op := range p.Handoff {
		name := op.Src
		if op.Kind == kernel.OpToHBM {
			name = op.Dst
		}
		if t, ok := p.Tensor(name); ok {
			handed[t.Base()] = true
		}
	}
	for _, t := range p.Tensors {
		if t == nil || t.Mem != kernel.HBM || t.View != "" || t.Element == nil || inPlace[t.Name] || handed[t.Name] {
			continue
		}
		read := t
		if o, ok := gathered[t.Name]; ok {
			read = o
		}
		elems := m.validElements(p, read)
		if w, ok := scattered[t.Name]; ok {
			elems = int(min(w, int64(elems)))
		}
		n, err := t.DType.BytesFor(elems)
		if err != nil {
			continue
		}
		switch t.Role {
		case kernel.Input:
			rf.MinReadBytes += int64(n)
		case kernel.Output:
			rf.MinWriteBytes += int64(n)
		}
	}
	rf.MinMemoryCycles = HBMRoofline(spec, int(chips), rf.MinReadBytes, rf.MinWriteBytes)
	rf.IdealCycles = max(rf.ComputeCycles, rf.MinMemoryCycles)
	rf.Attained = ratio(rf.IdealCycles, r.Cycles)

	// Empty lists print as [] rather than null.
	if r.Findings == nil {
		r.Findings = []OpFinding{}
	}
	if r.Bottleneck.Path == nil {
		r.Bottleneck.Path = []int{}
	}
	if r.Ops == nil {
		r.Ops = []OpReport{}
	}
	if r.Engines == nil {
		r.Engines = []EngineBusy{}
	}
	// Findings in program order, program-wide ones first (stable).
	fs := r.Findings
	for a := 1; a < len(fs); a++ {
		for b := a; b > 0 && fs[b].Op < fs[b-1].Op; b-- {
			fs[b], fs[b-1] = fs[b-1], fs[b]
		}
	}
	return nil
}

// validElements is the elements of HBM tensor t outside the padding of
// kernel.Reference.Valid: the bytes the workload asks to move.
func (m *Model) validElements(p *kernel.Program, t *kernel.Tensor) int {
	n := t.Element.Size()
	if p.Reference == nil || len(p.Reference.Valid) == 0 {
		return n
	}
	for _, s := range m.symbols(t.Element) {
		if v, ok := p.Reference.Valid[s]; ok {
			if size, ok := p.Axes.Size(s); ok && size > 0 {
				n = n / size * v
			}
		}
	}
	return n
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// macs returns the multiply-accumulates of p's einsum, the product of the
// sizes of every axis its tensors name (002 L104-118), and the element type
// of its first input; 0 for programs without an einsum Reference. A padded
// axis counts its valid size (kernel.Reference.Valid): the padded lanes'
// MACs are work the kernel pays for, not work it was asked to do.
func (m *Model) macs(p *kernel.Program) (int64, dtype.DType, error) {
	ref := p.Reference
	if ref == nil || ref.Op != kernel.RefEinsum {
		return 0, 0, nil
	}
	var names [64]string
	n := 0
	var dt dtype.DType
	for k := 0; k <= len(ref.Inputs); k++ {
		name := ref.Output
		if k < len(ref.Inputs) {
			name = ref.Inputs[k]
		}
		t, ok := p.Tensor(name)
		if !ok || t == nil {
			return 0, 0, fmt.Errorf("reference: unknown tensor %q", name)
		}
		if k == 0 {
			dt = t.DType
		}
		for _, e := range [2]*mapping.Expr{t.Chip, t.Element} {
			if e == nil {
				continue
			}
		next:
			for _, s := range m.symbols(e) {
				for _, x := range names[:n] {
					if x == s {
						continue next
					}
				}
				if n == len(names) {
					return 0, 0, errors.New("reference: more than 64 axes")
				}
				names[n] = s
				n++
			}
		}
	}
	macs := int64(1)
	for _, s := range names[:n] {
		size, ok := p.Axes.Size(s)
		if !ok {
			return 0, 0, fmt.Errorf("reference: axis %q is not declared", s)
		}
		if v, ok := ref.Valid[s]; ok {
			size = v
		}
		macs *= int64(size)
	}
	return macs, dt, nil
}

// HBMRoofline is the least cycles in which chips chips move read bytes in
// from HBM and write bytes out to it: the roofline's memory term. The read
// and write caps are the cost model's, shares of the channels' rate (32 ×
// 256 B / 5.3 cycles a chip, 002 L137, L2980; docs/spec-decisions.md "HBM
// read and write bandwidth"), and both together the channels' rate.
func HBMRoofline(spec *engines.Spec, chips int, read, write int64) float64 {
	h := &spec.HBM
	peak := ratio(float64(h.Stacks.Value*h.ChannelsPerStack.Value*h.AccessUnitBytes.Value), h.CyclesPerRequest.Value) * float64(max(chips, 1))
	share := func(tbps float64) float64 { return peak * ratio(tbps, h.PeakTBPerS.Value) }
	return max(ratio(float64(read), share(h.ReadTBPerS.Value)),
		ratio(float64(write), share(h.WriteTBPerS.Value)),
		ratio(float64(read+write), peak))
}
