package search

import (
	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The bank-run bound. A main-context command whose fetch or commit runs 64
// consecutive accesses on one DM bank must not run concurrently with DMA
// (MEM-R1, 002 L2898, L2906, L2909; cost.BankStarvation): the scheduler
// starts it after every DMA command issued before it and starts every
// DMA command issued after it once it ends. When each of a candidate's
// contracting main chains is such a command, the kernel takes at least
// their time plus the DMA commands' own, one after the other — a bound
// the candidate bound cannot give, since the bank run depends on the DM
// addresses the builder assigns. It is taken after the build, before the
// lowering and the pricing, and read through the same fetch derivation
// and bank walk (engines.ConfigFetch, cost.FetchBanks) the lowering and
// the cost model use, so that it claims a serialization exactly where the
// price has one.

// bankKey identifies a main chain's fetch request and the DM address its
// tensor starts at.
type bankKey struct {
	element, time, packet string
	in, out               string
	cluster, slice        int
	base                  int64
}

// serialized reports whether the fetch of main chain op runs 64
// consecutive reads on one DM bank, from its request as the lowering
// derives it (lowerStage); false when the derivation fails (the lowering
// refuses the candidate) or the begin interleaves two tensors.
func (e *evaluator) serialized(p *kernel.Program, op *kernel.Op) bool {
	if len(op.Stages) < 2 || op.Stages[0].Kind != kernel.StBegin || op.Stages[1].Kind != kernel.StFetch ||
		op.Stages[0].InterleavedTensor() != "" || op.Stages[0].Config != nil || op.Stages[1].Config != nil {
		return false
	}
	t, ok := p.Tensor(op.Stages[0].Tensor)
	if !ok || t.Element == nil || t.Cluster == nil || t.Slice == nil {
		return false
	}
	f := op.Stages[1]
	if f.Time == nil || f.Packet == nil {
		return false
	}
	out := f.DType
	if out == 0 {
		out = t.DType
	}
	k := bankKey{element: t.Element.Text(), time: f.Time.Text(), packet: f.Packet.Text(), in: t.DType.String(), out: out.String(),
		cluster: t.Cluster.Size(), slice: t.Slice.Size(), base: t.Addr}
	if v, ok := e.banks[k]; ok {
		return v
	}
	v := false
	cfg, err := engines.ConfigFetch(e.s.Spec, engines.FetchRequest{
		InType: t.DType, OutType: out, Element: t.Element, Time: f.Time, Packet: f.Packet,
		Context: op.Context, ClusterSize: t.Cluster.Size(), SliceSize: t.Slice.Size(),
	})
	if err == nil {
		_, finding, err := cost.FetchBanks(e.s.Spec, cfg, t.Addr)
		v = err == nil && finding != nil && finding.Effect == cost.SerializeWithDMA
	}
	if e.banks == nil || len(e.banks) >= maxMemoEntries {
		e.banks = map[bankKey]bool{}
	}
	e.banks[k] = v
	return v
}

// bankBound returns a lower bound on the cycles of built program p of c
// when the fetch of each of its contracting main chains runs 64
// consecutive reads on one DM bank (serialized), 0 otherwise: those chains
// and the DMA commands run one after the other, so the kernel takes at
// least the chains' time — each tile step's packets, or its stream
// (fetchBound, switchBound) — plus the DMA commands' (every command over
// the tile steps, Space.allLoads, one startup counted).
func (e *evaluator) bankBound(c *Candidate, p *kernel.Program) float64 {
	s := e.s
	chains := 0
	for _, op := range p.Ops {
		if op.Context != kernel.CtxMain || op.Kind != kernel.OpChain || !contracts(op) {
			continue
		}
		if !e.serialized(p, op) {
			return 0
		}
		chains++
	}
	sh := s.tileShapeOf(c)
	if chains == 0 || chains != sh.steps {
		return 0
	}
	var loads [NumTensors]dmaLoad
	for t := range NumTensors {
		loads[t] = s.tensorDMA(c, t, true, true)
	}
	per := sh.perTile(&loads)
	all := s.allLoads(&sh, &per, s.KTiles(c))
	packets := s.packets(c)
	main := max(packets/float64(sh.steps), s.fetchBound(c, true), s.switchBound(c, true))
	return float64(chains)*main + all.cycles(float64(s.Spec.DMA.StartupCycles.Value))
}

// contracts reports whether chain op has a contract stage.
func contracts(op *kernel.Op) bool {
	for _, st := range op.Stages {
		if st != nil && st.Kind == kernel.StContract {
			return true
		}
	}
	return false
}
