package cost

import (
	"encoding/json"
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Pricing one op of a kernel program. A chain (a Tensor Unit op in the main
// or sub context) is a pipeline: every stage streams its input at its own
// rate, so the op takes as long as its slowest stage plus the fill of the
// stages before it and the drain of those after it (docs/spec-decisions.md
// "Chain op time"). A DMA op's price comes from the DMA model (dma.go), which
// the scheduler calls for each batch of concurrent commands.

// Engine names a unit of the chip an op occupies: the Tensor Unit engines of
// a context, the DMA Engines, and the memories a DMA command can be bound by.
type Engine uint8

// The engines, in pipeline order.
const (
	// EngineFetch reads DM (002 L1689-2144).
	EngineFetch Engine = iota
	// EngineSwitch redistributes packets across slices (002 L3520-3542).
	EngineSwitch
	// EngineCollect normalizes packets to flits (002 L3543-3669).
	EngineCollect
	// EngineRegWrite writes a register file: to_trf (SRAM-to-TRF, 002
	// L4052-4114) or to_vrf.
	EngineRegWrite
	// EngineAligner is the Contraction Engine's Stream Adapter and TRF
	// Sequencer (002 L3878-4199).
	EngineAligner
	// EngineReducer is the Contraction Engine's tree and accumulator
	// (002 L4297-4548).
	EngineReducer
	// EngineVector is the Vector Engine (002 L4549-6755).
	EngineVector
	// EngineCast is the Cast Engine (002 L6756-6819).
	EngineCast
	// EngineTranspose is the Transpose Engine (002 L6820-6912).
	EngineTranspose
	// EngineCommit writes DM (002 L2145-2353).
	EngineCommit
	// EngineDMA is the DMA Engines' transfers: one 256-byte request per
	// cycle per engine, and the 500-cycle startup (002 L2465-2472, L2596).
	EngineDMA
	// EngineHBM is the busiest HBM channel of a DMA command (002 L2948-3009).
	EngineHBM
	// EngineDMN is the busiest Data Memory Network of a DMA command
	// (002 L2862-2941).
	EngineDMN
	// NumEngines counts the engines.
	NumEngines
)

var engineNames = [NumEngines]string{"fetch", "switch", "collect", "regwrite", "aligner", "reducer", "vector", "cast", "transpose", "commit", "dma", "hbm", "dmn"}

// String names the engine.
func (e Engine) String() string {
	if e < NumEngines {
		return engineNames[e]
	}
	return fmt.Sprintf("Engine(%d)", uint8(e))
}

// MarshalText writes the engine's name.
func (e Engine) MarshalText() ([]byte, error) {
	if e >= NumEngines {
		return nil, fmt.Errorf("cost: engine %d out of range", uint8(e))
	}
	return []byte(engineNames[e]), nil
}

// UnmarshalText reads an engine's name.
func (e *Engine) UnmarshalText(b []byte) error {
	for i, n := range engineNames {
		if n == string(b) {
			*e = Engine(i)
			return nil
		}
	}
	return fmt.Errorf("cost: unknown engine %q", b)
}

// The contexts an op runs in, as indices (002 L7058-7066).
const (
	ctxMain = iota
	ctxSub
	ctxDMA
	numContexts
)

var contextOrder = [numContexts]kernel.Context{kernel.CtxMain, kernel.CtxSub, kernel.CtxDMA}

func contextIndex(c kernel.Context) (int, bool) {
	for i, x := range contextOrder {
		if x == c {
			return i, true
		}
	}
	return 0, false
}

// StageCost is the price of one stage of an op on one engine.
type StageCost struct {
	// Engine is the engine the stage occupies.
	Engine Engine `json:"engine"`
	// Stage is the index of the chain stage priced (the first one, for the
	// Reducer's contract + accumulate and for consecutive Vector Engine
	// stages); -1 for a DMA op's resources.
	Stage int `json:"stage"`
	// Cycles is the engine's occupancy: the cycles it is busy on the op.
	Cycles float64 `json:"cycles"`
	// Span is the time from the stage's first input to its last output when
	// it runs at its own rate: Cycles plus its latency (the Transpose
	// Engine's formula already holds its fill and drain).
	Span float64 `json:"span"`
	// Fill is the time from the stage's first input to its first output:
	// the Fetch Adapter's cast latency (002 L2135), the Reducer's tree depth
	// plus the packets of its first accumulation block (002 L4543-4548), the
	// Transpose Engine's first input buffer (002 L6899-6912), one cycle per
	// Vector Engine ALU (002 L5275).
	Fill float64 `json:"fill"`
	// Drain is the time from the stage's last input to its last output: the
	// cast latency, the Reducer's tree depth, the Transpose Engine's last
	// output rows, the Vector Engine's ALU latency.
	Drain float64 `json:"drain"`
}

// OpCost is the price of one op, before scheduling.
type OpCost struct {
	// Cycles is the op's duration on its own.
	Cycles float64 `json:"cycles"`
	// Bottleneck is the engine whose span sets Cycles.
	Bottleneck Engine `json:"bottleneck"`
	// Stages are the priced stages in pipeline order.
	Stages []StageCost `json:"stages"`
	// Dual is set for a main-context chain in dual channel mode: it takes the
	// sub context's Switch channel, so the sub context is unavailable while
	// it runs (002 L2127, L2142, L3052).
	Dual bool `json:"dual,omitempty"`
	// SerializeWithDMA is set when a finding forbids running the op
	// concurrently with DMA (002 L2909, L2917).
	SerializeWithDMA bool `json:"serialize_with_dma,omitempty"`
	// PreemptDMAAndSub is set when setting the op up preempts the DMA and
	// sub contexts (002 L3533-3537).
	PreemptDMAAndSub bool `json:"preempt_dma_and_sub,omitempty"`
	// BankRun is the longest run of consecutive same-bank DM accesses of the
	// op's fetch and commit, on DM bank Bank; Banks is the set of banks they
	// touch (bit b for bank b) (002 L2874-2879, L2898).
	BankRun int    `json:"bank_run,omitempty"`
	Bank    int    `json:"bank,omitempty"`
	Banks   uint32 `json:"banks,omitempty"`
	// TRFMissStalls is the cycles a concurrent SRAM-to-TRF load loses to this
	// op's TRF cache misses (002 L4194-4199).
	TRFMissStalls int `json:"trf_miss_stalls,omitempty"`
	// TRFLoad is set when the op writes TRF (to_trf), so that concurrent TRF
	// misses stall it.
	TRFLoad bool `json:"trf_load,omitempty"`
	// HBMBytes is the bytes a DMA op reads from and writes to HBM.
	HBMBytes int64 `json:"hbm_bytes,omitempty"`
}

// compose is the pipeline time of stages: the largest over s of the fill of
// the stages before s, the span of s and the drain of the stages after s. It
// returns the time and the index of the stage that sets it (the first on a
// tie).
func compose(stages []StageCost) (float64, int) {
	drains := 0.0
	for i := range stages {
		drains += stages[i].Drain
	}
	best, at := 0.0, -1
	fills := 0.0
	for i := range stages {
		s := &stages[i]
		drains -= s.Drain
		if t := fills + s.Span + drains; t > best || at < 0 {
			best, at = t, i
		}
		fills += s.Fill
	}
	return best, at
}

// priced is an error locating a stage that cannot be priced.
func stageErr(op, stage int, kind kernel.StageKind, err error) error {
	return fmt.Errorf("ops[%d].stages[%d] (%s): %w", op, stage, kind, err)
}

var errNotLowered = errors.New("no lowered configuration (run engines.Lower first)")

// priceChain prices chain op i of p into oc, appending the stage costs to
// m.stages and the findings to m.report.
func (m *Model) priceChain(p *kernel.Program, i int, op *kernel.Op, oc *OpCost) error {
	spec := m.spec
	ch := Single
	dual := spec.Stream.DualChannelFlitBytes.Value
	for _, st := range op.Stages {
		if st == nil {
			return fmt.Errorf("ops[%d]: null stage", i)
		}
		if c := st.Config; c != nil {
			if c.Collect != nil && c.Collect.FlitBytes == dual || c.Switch != nil && c.Switch.FlitBytes == dual {
				ch = Dual
			}
		}
	}
	if ch == Dual && op.Context != kernel.CtxMain {
		return fmt.Errorf("ops[%d]: dual channel mode (%d-byte flits) takes the sub context's channel; a %s chain cannot use it (002 L2127, L2142)", i, dual, op.Context)
	}
	oc.Dual = ch == Dual
	first := len(m.stages)
	var (
		fetch    *kernel.FetchConfig
		contract *kernel.ContractConfig
		base     int64
		steps    int // stream time steps entering the next stage
		vec      = -1
	)
	add := func(s StageCost) { m.stages = append(m.stages, s) }
	for k, st := range op.Stages {
		cfg := st.Config
		need := func(ok bool) error {
			if !ok {
				return stageErr(i, k, st.Kind, errNotLowered)
			}
			return nil
		}
		if !isVectorStage(st.Kind) {
			vec = -1
		}
		switch st.Kind {
		case kernel.StBegin:
			t, ok := p.Tensor(st.Tensor)
			if !ok {
				return stageErr(i, k, st.Kind, fmt.Errorf("unknown tensor %q", st.Tensor))
			}
			base = t.Addr

		case kernel.StFetch:
			if err := need(cfg != nil && cfg.Fetch != nil); err != nil {
				return err
			}
			fetch = cfg.Fetch
			f, err := Fetch(spec, fetch, ch)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			lat := float64(f.Latency)
			add(StageCost{Engine: EngineFetch, Stage: k, Cycles: float64(f.Cycles), Span: float64(f.Cycles) + lat, Fill: lat, Drain: lat})
			m.addFindings(i, f.Findings)
			bits := fetch.InType.SizeBits()
			if bits <= 0 || fetch.FetchElems <= 0 {
				return stageErr(i, k, st.Kind, fmt.Errorf("fetch of %d elements of %v", fetch.FetchElems, fetch.InType))
			}
			if err := m.banksOf(i, oc, &fetch.Seq, bits, fetch.FetchElems, base); err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			steps = fetch.Steps

		case kernel.StSwitch:
			if err := need(cfg != nil && cfg.Switch != nil); err != nil {
				return err
			}
			s, err := Switch(spec, cfg.Switch)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			add(StageCost{Engine: EngineSwitch, Stage: k, Cycles: float64(s.Cycles), Span: float64(s.Cycles)})
			for _, f := range s.Findings {
				if f.Effect == PreemptDMAAndSub {
					oc.PreemptDMAAndSub = true
				}
			}
			m.addFindings(i, s.Findings)

		case kernel.StCollect:
			if err := need(cfg != nil && cfg.Collect != nil); err != nil {
				return err
			}
			c, err := Collect(spec, cfg.Collect)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			add(StageCost{Engine: EngineCollect, Stage: k, Cycles: float64(c.Cycles), Span: float64(c.Cycles)})
			steps = cfg.Collect.OutTime()

		case kernel.StToTRF:
			if err := need(cfg != nil && cfg.ToTRF != nil && fetch != nil); err != nil {
				return err
			}
			to := cfg.ToTRF
			if to.Rows <= 0 || to.FlitsPerRow < 0 {
				return stageErr(i, k, st.Kind, fmt.Errorf("%d rows of %d flits", to.Rows, to.FlitsPerRow))
			}
			fs, err := m.trfLoadFindings(fetch, to)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			// The TRF takes one flit per cycle per Row's region: Rows ×
			// flits_per_row writes (002 L4053-4054, L4113).
			n := float64(to.Rows * to.FlitsPerRow)
			add(StageCost{Engine: EngineRegWrite, Stage: k, Cycles: n, Span: n})
			m.addFindings(i, fs)
			oc.TRFLoad = true

		case kernel.StToVRF:
			if err := need(cfg != nil && cfg.ToVRF != nil); err != nil {
				return err
			}
			// One collect flit per cycle into the VRF (002 L280-285, L3033).
			if cfg.ToVRF.Flits < 0 {
				return stageErr(i, k, st.Kind, fmt.Errorf("%d flits", cfg.ToVRF.Flits))
			}
			n := float64(cfg.ToVRF.Flits)
			add(StageCost{Engine: EngineRegWrite, Stage: k, Cycles: n, Span: n})

		case kernel.StAlign:
			if err := need(cfg != nil && cfg.Align != nil); err != nil {
				return err
			}
			sa, err := StreamAdapter(spec, &cfg.Align.StreamAdapter)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			tr, err := m.trfRead(&cfg.Align.TRFSequencer)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			// Both Aligner paths feed the Reducer in lockstep, one
			// computation packet per cycle (002 L3778, L4099).
			n := float64(max(sa.Cycles, tr.Cycles))
			add(StageCost{Engine: EngineAligner, Stage: k, Cycles: n, Span: n})
			m.addFindings(i, sa.Findings)
			oc.TRFMissStalls = tr.StoTRFStalls
			steps = sa.OutSteps

		case kernel.StContract:
			if err := need(cfg != nil && cfg.Contract != nil); err != nil {
				return err
			}
			contract = cfg.Contract

		case kernel.StAccumulate:
			if err := need(cfg != nil && cfg.Accumulate != nil); err != nil {
				return err
			}
			if contract == nil {
				return stageErr(i, k, st.Kind, errors.New("accumulate without a contract before it"))
			}
			r, err := Reducer(spec, &kernel.ReducerConfig{Contract: *contract, Accumulate: *cfg.Accumulate})
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			c := float64(r.Cycles)
			add(StageCost{Engine: EngineReducer, Stage: k - 1, Cycles: c, Span: c + float64(r.SpatialLatency),
				Fill: float64(r.Latency), Drain: float64(r.SpatialLatency)})
			contract = nil
			steps = r.OutBeats

		case kernel.StCast:
			if err := need(cfg != nil && cfg.Cast != nil); err != nil {
				return err
			}
			n, err := Cast(cfg.Cast, steps)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			add(StageCost{Engine: EngineCast, Stage: k, Cycles: float64(n), Span: float64(n)})

		case kernel.StTranspose:
			if err := need(cfg != nil && cfg.Transpose != nil); err != nil {
				return err
			}
			t := cfg.Transpose
			n, err := Transpose(spec, t)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			add(StageCost{Engine: EngineTranspose, Stage: k, Cycles: float64(n), Span: float64(n),
				Fill: float64(t.InRows * t.PacketsPerCol), Drain: float64(t.OutRows)})
			steps = t.Iterations * t.OutRows

		case kernel.StVectorInit, kernel.StVectorFinal:
			// Consecutive Vector Engine stages are one pipeline on one
			// engine (cost/vector.go).
			if vec < 0 {
				vec = len(m.stages)
				add(StageCost{Engine: EngineVector, Stage: k})
			}
			if err := m.vectorStage(&m.stages[vec], st, &steps); err != nil {
				return stageErr(i, k, st.Kind, err)
			}

		case kernel.StVectorInterSlice:
			if err := need(cfg != nil && cfg.VectorInterSlice != nil && vec >= 0); err != nil {
				return err
			}
			n, err := interSliceTail(spec, cfg.VectorInterSlice)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			v := &m.stages[vec]
			v.Span += n
			v.Fill += n
			v.Drain += n
			steps = cfg.VectorInterSlice.OutPackets

		case kernel.StCommit:
			if err := need(cfg != nil && cfg.Commit != nil); err != nil {
				return err
			}
			c := cfg.Commit
			n, err := Commit(c)
			if err != nil {
				return stageErr(i, k, st.Kind, err)
			}
			add(StageCost{Engine: EngineCommit, Stage: k, Cycles: float64(n), Span: float64(n)})
			t, ok := p.Tensor(st.Tensor)
			if !ok {
				return stageErr(i, k, st.Kind, fmt.Errorf("unknown tensor %q", st.Tensor))
			}
			bits := c.DType.SizeBits()
			if bits <= 0 || c.CommitSize*8%bits != 0 {
				return stageErr(i, k, st.Kind, fmt.Errorf("%d-byte writes of %v", c.CommitSize, c.DType))
			}
			if err := m.banksOf(i, oc, &c.Seq, bits, c.CommitSize*8/bits, t.Addr); err != nil {
				return stageErr(i, k, st.Kind, err)
			}

		default:
			if isVectorStage(st.Kind) {
				if vec < 0 {
					return stageErr(i, k, st.Kind, errors.New("a Vector Engine stage outside a pass"))
				}
				if err := m.vectorStage(&m.stages[vec], st, &steps); err != nil {
					return stageErr(i, k, st.Kind, err)
				}
				continue
			}
			return stageErr(i, k, st.Kind, errors.New("unknown stage kind"))
		}
	}
	if contract != nil {
		return fmt.Errorf("ops[%d]: contract without accumulate: the Reducer's temporal stage is needed to price it", i)
	}
	oc.Stages = m.stages[first:len(m.stages):len(m.stages)]
	if len(oc.Stages) == 0 {
		return fmt.Errorf("ops[%d]: chain without priced stages", i)
	}
	t, at := compose(oc.Stages)
	oc.Cycles, oc.Bottleneck = t, oc.Stages[at].Engine
	return nil
}

// banksOf records the DM bank behaviour of a fetch or commit of op i: the
// longest same-bank run and the starvation finding, which makes the op
// serialize with DMA (002 L2909).
func (m *Model) banksOf(i int, oc *OpCost, seq *kernel.SeqConfig, bits, access int, base int64) error {
	r, f, err := m.bankRun(seq, bits, access, base)
	if err != nil {
		return err
	}
	oc.Banks |= r.Banks
	if r.MaxRun > oc.BankRun {
		oc.BankRun, oc.Bank = r.MaxRun, r.Bank
	}
	if f != nil {
		oc.SerializeWithDMA = true
		m.report.Findings = append(m.report.Findings, OpFinding{Op: i, Finding: *f})
	}
	return nil
}

// addFindings records the findings of op i.
func (m *Model) addFindings(i int, fs []Finding) {
	for _, f := range fs {
		m.report.Findings = append(m.report.Findings, OpFinding{Op: i, Finding: f})
	}
}

// OpFinding is a finding about one op of a program (Op ≥ 0) or about the
// program as a whole (Op = -1: capacity, overlapping tensors).
type OpFinding struct {
	Op int
	Finding
}

// MarshalJSON writes the finding with its rule's ID, engine and citation.
func (f OpFinding) MarshalJSON() ([]byte, error) {
	type values = []engines.NamedValue
	w := struct {
		Op      int    `json:"op"`
		Rule    string `json:"rule"`
		Engine  string `json:"engine"`
		Name    string `json:"name"`
		Cite    string `json:"cite"`
		Effect  string `json:"effect"`
		Message string `json:"message"`
		Values  values `json:"values,omitempty"`
	}{Op: f.Op, Effect: f.Effect.String()}
	if v := f.Violation; v != nil && v.Rule != nil {
		w.Rule, w.Engine, w.Name, w.Cite = v.Rule.ID, v.Rule.Engine, v.Rule.Name, v.Rule.Cite
		w.Message, w.Values = v.Error(), v.Values
	}
	return json.Marshal(w)
}
