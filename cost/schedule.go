package cost

import (
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The scheduler: the manual's model of how a kernel's ops overlap
// (002 L7042-7070, "Scheduling"), as a list scheduler over the ops in
// program order.
//
//   - SCH-R1: ops issue in program order and are never reordered
//     (002 L7044-7054): an op starts no earlier than the op before it.
//   - SCH-R2: one op at a time per context: main, sub (002 L7063-7068). A
//     main chain in dual channel mode takes the sub context's channel as well
//     (002 L2127, L2142, L3052).
//   - The DMA context has 8 DMA Engines per chip, one per DMN pair, so up to
//     eight transfers proceed at once (002 L2404, L2549, L2830): DMA commands
//     issued together (each ready when the first of them starts) form a batch
//     priced as one, sharing the HBM channels and DMNs, with each engine
//     running its descriptors in order; a command issued later waits for the
//     engines it needs (docs/spec-decisions.md "Concurrent DMA commands").
//   - SCH-R3..R6: an op that reads or writes bytes another earlier op writes,
//     or writes bytes it reads, waits for it to finish (002 L7069-7070).
//   - MEM-R1/R3: an op whose fetch or commit runs 64 consecutive accesses on
//     one DM bank is scheduled as if it occupied DMA (002 L2909, L2917).
//   - SW-P1: a custom switch topology's setup preempts the DMA and sub
//     contexts (002 L3533-3537): the op waits for them.
//   - MEM-R2: concurrent main and sub ops whose same-bank runs add up to the
//     limit with a DMA request are run one after the other (002 L2913-2926).
//   - MEM-P4: a main op hammering one DM bank that a concurrent sub op uses
//     starves it; the worst case, main + sub, is priced (002 L2927-2932).
//   - TRF-P2: a sub-context TRF load concurrent with a main op whose TRF
//     reads miss the cache loses those cycles (002 L4194-4199).

// The rules the scheduler adds.
var (
	ruleContention = engines.NewRule(engines.Rule{ID: "MEM-P4", Engine: "memory", Name: "main/sub bank contention",
		Cite: "002 L2927-2932",
		Text: "a main-context command that continuously accesses one DM bank starves a concurrent sub-context command using that bank; worst case total = main + sub time, ideal max(main, sub)"})
	ruleTRFStall = engines.NewRule(engines.Rule{ID: "TRF-P2", Engine: "trf", Name: "StoTRF stalled by TRF cache misses",
		Cite: "002 L4181-4199",
		Text: "a TRF cache miss has priority over a concurrent SRAM-to-TRF write to the same bank column, stalling the write for that cycle"})
)

// opSched is an op's place in the schedule.
type opSched struct {
	start, end float64
	// bind is the op whose end (or, with bindStart, whose start: in-order
	// issue) set this op's start; -1 when it started at 0.
	bind      int
	bindStart bool
	// batch is the DMA batch of a DMA op, -1 otherwise.
	batch int
}

// dmaBatchState is a batch of DMA commands priced together.
type dmaBatchState struct {
	start float64
	ops   []int
	// cycles is the batch's price (with DMA lower bounds, its bound): the
	// last of its commands ends no earlier than start + cycles.
	cycles float64
	// busy is how long the batch keeps the DMA Engines, the HBM channels
	// and the DMNs busy from its start (EngineDMA, EngineHBM, EngineDMN;
	// with DMA lower bounds, the bound as the engines' time).
	busy [3]float64
}

// engineFree is when a DMA Engine is next free, and the op that holds it.
type engineFree struct {
	key  [3]int
	free float64
	op   int
	// users counts the batch's commands that run descriptors on the
	// engine; mark is the last of them counted (1-based).
	users, mark int
}

// schedule places every op of p, whose costs are in m.costs.
func (m *Model) schedule(p *kernel.Program) error {
	n := len(p.Ops)
	m.sched = m.sched[:0]
	for k := range m.batches {
		m.batches[k].ops = m.batches[k].ops[:0]
	}
	nb := 0
	m.engs = m.engs[:0]
	var (
		ctxFree             [numContexts]float64
		ctxLast             = [numContexts]int{-1, -1, -1}
		dmaEnd, dmaBlock    float64
		dmaEndOp, dmaBlockO = -1, -1
		open                = -1
		limit               = m.spec.DM.BankStarvation.ConsecutiveAccessLimit.Value
	)
	for i := 0; i < n; i++ {
		op := p.Ops[i]
		oc := &m.costs[i]
		ci, _ := contextIndex(op.Context)
		s := opSched{bind: -1, batch: -1}
		raise := func(t float64, j int, atStart bool) {
			if t > s.start {
				s.start, s.bind, s.bindStart = t, j, atStart
			}
		}
		if i > 0 {
			raise(m.sched[i-1].start, i-1, true) // SCH-R1
		}
		for j := 0; j < i; j++ {
			// An op that ended by the start found so far cannot raise
			// it: test its hazards only otherwise (same result, fewer
			// footprint comparisons).
			if m.sched[j].end > s.start && m.conflict(i, j) {
				raise(m.sched[j].end, j, false) // SCH-R3..R6
			}
		}
		if ci == ctxDMA {
			raise(dmaBlock, dmaBlockO, false)
			m.sched = append(m.sched, s)
			if open >= 0 && m.sched[i].start <= m.batches[open].start {
				m.sched[i].start = m.batches[open].start
				m.sched[i].batch = open
				m.batches[open].ops = append(m.batches[open].ops, i)
			} else {
				for _, d := range op.DMA.Descriptors {
					e := m.engineSlot(m.dma.engineKey(&d))
					if e.free > m.sched[i].start {
						m.sched[i].start, m.sched[i].bind, m.sched[i].bindStart = e.free, e.op, false
					}
				}
				if nb == len(m.batches) {
					m.batches = append(m.batches, dmaBatchState{})
				}
				open = nb
				nb++
				m.batches[open].start = m.sched[i].start
				m.batches[open].ops = append(m.batches[open].ops[:0], i)
				m.sched[i].batch = open
			}
			if err := m.priceBatch(p, &m.batches[open]); err != nil {
				return err
			}
			b := &m.batches[open]
			for k := range m.engs {
				m.engs[k].users, m.engs[k].mark = 0, 0
			}
			lastOp := b.ops[0]
			for k, j := range b.ops {
				if m.sched[j].end > dmaEnd {
					dmaEnd, dmaEndOp = m.sched[j].end, j
				}
				if m.sched[j].end >= m.sched[lastOp].end {
					lastOp = j
				}
				for _, d := range p.Ops[j].DMA.Descriptors {
					e := m.engineSlot(m.dma.engineKey(&d))
					if m.sched[j].end > e.free {
						e.free, e.op = m.sched[j].end, j
					}
					if e.mark != k+1 {
						e.mark = k + 1
						e.users++
					}
				}
			}
			// The batch's last command ends no earlier than its price:
			// the DMA context, and every engine all its commands use,
			// are busy until then. Exact pricing gives that price to the
			// last command already; with DMA lower bounds, which command
			// ends last is not known, but the batch's bound still holds
			// for whichever it is (docs/spec-decisions.md "DMA batch end
			// under lower bounds").
			if end := b.start + b.cycles; end > dmaEnd {
				dmaEnd, dmaEndOp = end, lastOp
			}
			for k := range m.engs {
				if e := &m.engs[k]; e.users == len(b.ops) && b.start+b.cycles > e.free {
					e.free, e.op = b.start+b.cycles, lastOp
				}
			}
			continue
		}
		raise(ctxFree[ci], ctxLast[ci], false) // SCH-R2
		if oc.Dual {
			raise(ctxFree[ctxSub], ctxLast[ctxSub], false)
		}
		if oc.SerializeWithDMA || oc.PreemptDMAAndSub {
			raise(dmaEnd, dmaEndOp, false) // MEM-R3, SW-P1
		}
		if oc.PreemptDMAAndSub {
			raise(ctxFree[ctxSub], ctxLast[ctxSub], false)
		}
		dur := oc.Cycles
		// Concurrent main and sub ops on the same DM bank (MEM-R2, MEM-P4).
		for moved := true; moved; {
			moved = false
			for j := 0; j < i; j++ {
				if !m.concurrentTU(p, i, j, s.start, dur) {
					continue
				}
				oj := &m.costs[j]
				if oc.BankRun > 0 && oj.BankRun > 0 && oc.Bank == oj.Bank && oc.BankRun+oj.BankRun+1 >= limit {
					if _, f := CumulativeBankAccess(m.spec, oc.BankRun, oj.BankRun, 1); f != nil {
						m.report.Findings = append(m.report.Findings, OpFinding{Op: i, Finding: *f})
					}
				} else if main, sub := m.mainSub(p, i, j); main >= 0 && m.costs[main].BankRun >= 2 &&
					m.costs[sub].Banks&(1<<uint(m.costs[main].Bank)) != 0 {
					v := ruleContention.Violate("main op %d runs %d consecutive accesses on DM bank %d, which sub op %d also accesses: run one after the other",
						main, m.costs[main].BankRun, m.costs[main].Bank, sub).With("run", m.costs[main].BankRun).With("bank", m.costs[main].Bank)
					m.report.Findings = append(m.report.Findings, OpFinding{Op: i, Finding: Finding{Violation: v, Effect: Penalty}})
				} else {
					continue
				}
				raise(m.sched[j].end, j, false)
				moved = true
			}
		}
		// A TRF load concurrent with TRF reads that miss (TRF-P2).
		if oc.TRFLoad {
			stall := 0.0
			for j := 0; j < i; j++ {
				oj := &m.costs[j]
				if oj.TRFMissStalls == 0 || p.Ops[j].Context != kernel.CtxMain {
					continue
				}
				sj := &m.sched[j]
				lo, hi := max(s.start, sj.start), min(s.start+dur, sj.end)
				if hi > lo && sj.end > sj.start {
					stall += float64(oj.TRFMissStalls) * (hi - lo) / (sj.end - sj.start)
				}
			}
			if stall > 0 {
				v := ruleTRFStall.Violate("TRF load concurrent with TRF reads that miss the cache: %.0f cycles of stalls", stall).With("stall_cycles", int(stall+0.5))
				m.report.Findings = append(m.report.Findings, OpFinding{Op: i, Finding: Finding{Violation: v, Effect: Penalty}})
				dur += stall
			}
		}
		s.end = s.start + dur
		m.sched = append(m.sched, s)
		ctxFree[ci], ctxLast[ci] = s.end, i
		if oc.Dual {
			ctxFree[ctxSub], ctxLast[ctxSub] = s.end, i
		}
		if oc.SerializeWithDMA && s.end > dmaBlock {
			dmaBlock, dmaBlockO = s.end, i
		}
	}
	m.batches = m.batches[:nb]
	return nil
}

// engineSlot returns the free-time record of the DMA Engine key.
func (m *Model) engineSlot(key [3]int) *engineFree {
	for k := range m.engs {
		if m.engs[k].key == key {
			return &m.engs[k]
		}
	}
	m.engs = append(m.engs, engineFree{key: key, op: -1})
	return &m.engs[len(m.engs)-1]
}

// concurrentTU reports whether op i, placed at [start, start+dur), overlaps
// op j in the other Tensor Unit context (main against sub).
func (m *Model) concurrentTU(p *kernel.Program, i, j int, start, dur float64) bool {
	ci, cj := p.Ops[i].Context, p.Ops[j].Context
	if ci == kernel.CtxDMA || cj == kernel.CtxDMA || ci == cj {
		return false
	}
	sj := &m.sched[j]
	return start < sj.end && sj.start < start+dur
}

// mainSub orders two ops of different Tensor Unit contexts: the main one,
// then the sub one.
func (m *Model) mainSub(p *kernel.Program, i, j int) (int, int) {
	if p.Ops[i].Context == kernel.CtxMain {
		return i, j
	}
	return j, i
}

// priceBatch prices the DMA commands of batch b together and sets each
// one's end: when the last of its descriptors ends on its engine, at least
// its own time alone; the batch's last command ends with the batch.
func (m *Model) priceBatch(p *kernel.Program, b *dmaBatchState) error {
	m.batchDescs = m.batchDescs[:0]
	m.batchCounts = m.batchCounts[:0]
	m.batchAlone = m.batchAlone[:0]
	for _, j := range b.ops {
		m.batchAlone = append(m.batchAlone, m.costs[j].Cycles)
		ds := p.Ops[j].DMA.Descriptors
		off := 0
		for _, d := range m.batchDescs {
			off = max(off, d.Exec+1)
		}
		for _, d := range ds {
			d.Exec += off
			m.batchDescs = append(m.batchDescs, d)
		}
		m.batchCounts = append(m.batchCounts, len(ds))
	}
	res, err := m.dmaPrice(m.batchDescs, m.batchCounts, m.batchAlone)
	if err != nil {
		j := b.ops[len(b.ops)-1]
		return fmt.Errorf("ops[%d] (%s): %w", j, p.Ops[j].Kind, err)
	}
	for k, j := range b.ops {
		m.sched[j].end = b.start + res.ends[k]
	}
	b.cycles = res.est.Cycles
	if m.DMABound {
		b.busy = [3]float64{res.est.Cycles, 0, 0}
	} else {
		b.busy = [3]float64{res.est.EngineBound, res.est.HBMBound, res.est.DMNBound}
	}
	return nil
}

// dmaPrice returns the cached price of descriptors run as one batch of
// commands, counts[k] of them belonging to command k, whose times alone are
// alone[k] (a function of the descriptors, so not part of the key; unused
// for a single command).
func (m *Model) dmaPrice(ds []kernel.DMADescriptor, counts []int, alone []float64) (*dmaBatch, error) {
	if len(counts) > 1 && len(alone) != len(counts) {
		return nil, fmt.Errorf("cost: DMA batch of %d commands with %d times alone", len(counts), len(alone))
	}
	// The key is the batch translated in HBM by the bits all its HBM
	// addresses share: its tile views share one entry (translate.go).
	// DMA lower bounds never read an HBM address (DMABound counts an HBM
	// side's requests and units from its loops and packet size alone), so
	// in bound pricing every HBM base is keyed as 0.
	key := ds
	if m.DMABound {
		key = m.zeroHBM(ds)
	} else if delta := m.dma.hbmShift(ds); delta != 0 {
		key = m.shiftHBM(ds, delta)
	}
	h := fnvOffset
	if m.DMABound {
		h.add(1)
	}
	for _, c := range counts {
		h.add(c)
	}
	hashDescs(&h, key)
	for k := range m.dmas[uint64(h)] {
		if e := &m.dmas[uint64(h)][k]; e.matches(m.DMABound, key, counts) {
			return &e.res, nil
		}
	}
	var r dmaBatch
	r.ends = make([]float64, len(counts))
	if m.DMABound {
		b, err := m.dma.DMABound(ds)
		if err != nil {
			return nil, err
		}
		r.est.Cycles = b
		at := 0
		for k, c := range counts {
			if r.ends[k], err = m.dma.DMABound(ds[at : at+c]); err != nil {
				return nil, err
			}
			at += c
		}
		if len(counts) > 1 {
			if _, err := m.dma.DMABoundEnds(ds, counts, r.ends); err != nil {
				return nil, err
			}
		}
	} else {
		est, err := m.dma.EstimateDescriptors(ds)
		if err != nil {
			return nil, err
		}
		r.est = est
		for k := range counts {
			if len(counts) == 1 {
				r.ends[k] = est.Cycles
			} else {
				r.ends[k] = alone[k]
			}
		}
		// Each engine port runs its descriptors in Exec order; a command
		// ends when its last descriptor does.
		per := m.dma.Descriptors()
		order := make([]int, len(per))
		cmdOf := make([]int, len(per))
		at := 0
		for k, c := range counts {
			for x := at; x < at+c; x++ {
				cmdOf[x] = k
			}
			at += c
		}
		for x := range order {
			order[x] = x
		}
		ports := m.dma.dmnsPerEng
		lane := func(d *DescriptorEstimate) int { return d.Engine*ports + d.Port }
		for x := 1; x < len(order); x++ {
			for y := x; y > 0 && (lane(&per[order[y]]) < lane(&per[order[y-1]]) ||
				lane(&per[order[y]]) == lane(&per[order[y-1]]) && per[order[y]].Exec < per[order[y-1]].Exec); y-- {
				order[y], order[y-1] = order[y-1], order[y]
			}
		}
		laneT := make([]float64, est.Engines*ports)
		for _, x := range order {
			d := &per[x]
			if d.Engine < 0 || d.Engine >= est.Engines || d.Port < 0 || d.Port >= ports {
				return nil, fmt.Errorf("cost: DMA descriptor %d on engine %d port %d of %d engines", x, d.Engine, d.Port, est.Engines)
			}
			laneT[lane(d)] += d.Cycles
			r.ends[cmdOf[x]] = max(r.ends[cmdOf[x]], laneT[lane(d)])
		}
		r.findings = m.alignFindings(&est)
	}
	// The batch ends with its last command. When the last-issued command
	// runs descriptors on every engine port the batch uses, each port runs
	// its descriptors after all the others' (Exec order), so it is the last
	// to end, in exact and bound pricing alike. Otherwise exact pricing takes
	// the command that ends last alone; with DMA lower bounds that command
	// may differ from the exact pricing's, so the batch's bound is given to
	// none of them (the schedule still holds the DMA context and shared
	// engines until it). docs/spec-decisions.md "DMA batch end".
	last := len(counts) - 1
	if !m.dma.covers(ds, len(ds)-counts[last]) {
		last = -1
		if !m.DMABound {
			last = 0
			for k := range r.ends {
				if r.ends[k] >= r.ends[last] {
					last = k
				}
			}
		}
	}
	if last >= 0 {
		r.ends[last] = max(r.ends[last], r.est.Cycles)
	}
	if len(m.dmas) >= maxCacheEntries {
		clear(m.dmas)
	}
	e := dmaEntry{bound: m.DMABound, counts: append([]int(nil), counts...), res: r}
	e.descs = make([]kernel.DMADescriptor, len(key))
	for k, d := range key {
		d.Entries = append([]kernel.DMAEntry(nil), d.Entries...)
		e.descs[k] = d
	}
	if m.NoCache {
		return &e.res, nil
	}
	m.dmas[uint64(h)] = append(m.dmas[uint64(h)], e)
	list := m.dmas[uint64(h)]
	return &list[len(list)-1].res, nil
}
