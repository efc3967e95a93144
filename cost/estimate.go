package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Model prices lowered kernel programs: every op alone (program.go, and the
// DMA model for DMA commands), then the ops together as the scheduler runs
// them (schedule.go), into a Report (report.go). It keeps the prices of the
// access-stream walks (DMA requests, DM bank runs, TRF cache reads) of
// every configuration it has seen, so that a planner that prices many
// programs sharing most of their commands walks each once; evaluating a
// program whose commands are all cached does not allocate beyond what its
// findings need. A Model is not safe for concurrent use: create one per
// goroutine.
type Model struct {
	// DMABound prices DMA commands by DMAModel.DMABound, a lower bound in
	// time linear in their loops, instead of walking their requests: for a
	// planner that prunes before it prices. The report says so.
	DMABound bool
	// NoCache disables the caches (for tests that compare with them).
	NoCache bool

	spec *engines.Spec
	dma  *DMAModel

	report Report
	costs  []OpCost
	stages []StageCost
	sched  []opSched
	mem    engines.MemoryMap
	path   []int

	batches     []dmaBatchState
	batchDescs  []kernel.DMADescriptor
	batchCounts []int
	batchAlone  []float64
	canon       []kernel.DMADescriptor // a batch keyed by its HBM-translated form
	engs        []engineFree

	banks map[uint64][]bankEntry
	trfs  map[uint64][]trfEntry
	dmas  map[uint64][]dmaEntry
	syms  map[*mapping.Expr][]string
	loads map[[2]int][]Finding
}

// NewModel returns a model for spec.
func NewModel(spec *engines.Spec) (*Model, error) {
	if spec == nil {
		return nil, errors.New("cost: NewModel: nil spec")
	}
	dma, err := NewDMAModel(spec)
	if err != nil {
		return nil, err
	}
	return &Model{
		spec: spec, dma: dma,
		banks: map[uint64][]bankEntry{},
		trfs:  map[uint64][]trfEntry{},
		dmas:  map[uint64][]dmaEntry{},
		syms:  map[*mapping.Expr][]string{},
		loads: map[[2]int][]Finding{},
	}, nil
}

// Estimate prices a lowered program with a new Model and returns a report
// the caller owns.
func Estimate(spec *engines.Spec, p *kernel.Program) (*Report, error) {
	m, err := NewModel(spec)
	if err != nil {
		return nil, err
	}
	r, err := m.Evaluate(p)
	if err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// Evaluate prices a lowered program (engines.Lower has filled every DMA
// command and stage configuration). The report belongs to the Model and is
// overwritten by the next call; Clone keeps it. An error names the op (and
// stage) that cannot be priced; a kernel that breaks a rule the hardware
// does not tolerate is priced all the same, with Invalid findings (see
// Report.Err).
func (m *Model) Evaluate(p *kernel.Program) (*Report, error) {
	if p == nil {
		return nil, errors.New("cost: Evaluate: nil program")
	}
	r := &m.report
	r.reset(p.Name, m.DMABound)
	m.stages = m.stages[:0]
	if cap(m.costs) < len(p.Ops) {
		m.costs = make([]OpCost, len(p.Ops))
	}
	m.costs = m.costs[:len(p.Ops)]
	if err := m.footprints(p); err != nil {
		return nil, err
	}
	for i, op := range p.Ops {
		m.costs[i] = OpCost{}
		if _, ok := contextIndex(op.Context); !ok {
			return nil, fmt.Errorf("ops[%d]: unknown context %q", i, op.Context)
		}
		var err error
		switch {
		case op.Kind == kernel.OpChain && op.Context != kernel.CtxDMA:
			err = m.priceChain(p, i, op, &m.costs[i])
		case op.Kind != kernel.OpChain && op.Context == kernel.CtxDMA:
			err = m.priceDMAOp(p, i, op, &m.costs[i])
		default:
			err = fmt.Errorf("ops[%d]: a %s op cannot run in the %s context", i, op.Kind, op.Context)
		}
		if err != nil {
			return nil, err
		}
	}
	// Stage slices were appended to m.stages, which may have moved.
	at := 0
	for i := range m.costs {
		n := len(m.costs[i].Stages)
		m.costs[i].Stages = m.stages[at : at+n : at+n]
		at += n
	}
	if err := m.schedule(p); err != nil {
		return nil, err
	}
	return r, m.finish(p)
}

// priceDMAOp prices DMA op i alone: its resources (DMA Engines, HBM
// channels, DMNs), the bytes it moves to or from HBM, and the alignment
// penalties it pays.
func (m *Model) priceDMAOp(p *kernel.Program, i int, op *kernel.Op, oc *OpCost) error {
	if op.DMA == nil || len(op.DMA.Descriptors) == 0 {
		return fmt.Errorf("ops[%d] (%s): %w", i, op.Kind, errNotLowered)
	}
	m.batchCounts = append(m.batchCounts[:0], len(op.DMA.Descriptors))
	res, err := m.dmaPrice(op.DMA.Descriptors, m.batchCounts, nil)
	if err != nil {
		return fmt.Errorf("ops[%d] (%s): %w", i, op.Kind, err)
	}
	e := &res.est
	first := len(m.stages)
	if m.DMABound {
		m.stages = append(m.stages, StageCost{Engine: EngineDMA, Stage: -1, Cycles: e.Cycles, Span: e.Cycles})
	} else {
		m.stages = append(m.stages,
			StageCost{Engine: EngineDMA, Stage: -1, Cycles: e.EngineBound, Span: e.EngineBound},
			StageCost{Engine: EngineHBM, Stage: -1, Cycles: e.HBMBound, Span: e.HBMBound},
			StageCost{Engine: EngineDMN, Stage: -1, Cycles: e.DMNBound, Span: e.DMNBound})
	}
	oc.Stages = m.stages[first:len(m.stages):len(m.stages)]
	oc.Cycles, oc.Bottleneck = e.Cycles, EngineDMA
	best := -1.0
	for _, s := range oc.Stages {
		if s.Cycles > best {
			best, oc.Bottleneck = s.Cycles, s.Engine
		}
	}
	for k := range op.DMA.Descriptors {
		d := &op.DMA.Descriptors[k]
		b := int64(d.Bytes)
		if b == 0 {
			b = int64(d.Packets) * int64(d.Stride0)
		}
		for _, md := range [2]kernel.DMAMedia{d.Src, d.Dst} {
			if md.Kind == kernel.MediaHBM {
				oc.HBMBytes += b
			}
		}
		// An indirect loop also reads its index values (counted here;
		// their few requests are not priced: docs/spec-decisions.md
		// "Gather: the DMA's indirect loop").
		if idx, ok := p.Tensor(op.Index); ok && op.Index != "" {
			for _, e := range d.Entries {
				if e.Index != nil {
					if n, err := idx.DType.BytesFor(e.Size); err == nil {
						oc.HBMBytes += int64(n)
					}
				}
			}
		}
	}
	m.addFindings(i, res.findings)
	return nil
}

// The DMA alignment penalties, priced by the DMA model.
var (
	ruleHBMAlign = engines.NewRule(engines.Rule{ID: "MEM-P6", Engine: "memory", Name: "HBM misalignment",
		Cite: "002 L2859, L2983-2985",
		Text: "HBM is accessed in 256-byte units: a read crossing a unit boundary takes two transfers (2×), a write of part of a unit is a read-modify-write (about 50×)"})
	ruleDMWriteAlign = engines.NewRule(engines.Rule{ID: "DMA-P1", Engine: "dma", Name: "misaligned DM write",
		Cite: "002 L2414",
		Text: "a DM write not aligned to 8 bytes is a read-modify-write that triples its time"})
)

// alignFindings reports the alignment penalties a DMA estimate includes.
func (m *Model) alignFindings(e *DMAEstimate) []Finding {
	var fs []Finding
	if e.HBM.RMW > 0 || e.HBM.UnalignedReads > 0 {
		v := ruleHBMAlign.Violate("%d partial 256-byte HBM writes (read-modify-write) and %d reads crossing a 256-byte boundary, priced in the busiest channel's %.0f cycles",
			e.HBM.RMW, e.HBM.UnalignedReads, e.HBM.Busiest).With("rmw", e.HBM.RMW).With("unaligned_reads", e.HBM.UnalignedReads)
		fs = append(fs, Finding{Violation: v, Effect: Penalty})
	}
	if e.MisalignedDMWrites > 0 {
		v := ruleDMWriteAlign.Violate("%d DM write requests not aligned to %d bytes, each taking %d× its DMN time",
			e.MisalignedDMWrites, m.spec.DM.WriteAlignBytes.Value, m.spec.DM.MisalignedWriteFactor.Value).With("writes", e.MisalignedDMWrites)
		fs = append(fs, Finding{Violation: v, Effect: Penalty})
	}
	return fs
}
