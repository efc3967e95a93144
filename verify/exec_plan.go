package verify

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The executor's chain planning: what each stage of a chain needs, derived once per chain.

// stagePlan is one executable stage of a chain: a stage with its
// configuration, or align together with the contract and accumulate that
// follow it (the Reducer consumes the Aligner's packets step by step).
type stagePlan struct {
	at     int // stage index in the chain
	kind   kernel.StageKind
	stage  *kernel.Stage
	tensor *kernel.Tensor
	cfg    *kernel.StageConfig
	// align: the to_trf configuration the TRF tensor was stored with, and
	// the Reducer's configuration.
	toTRF *kernel.ToTRFConfig
	red   kernel.ReducerConfig
}

// segment is a run of slice-local stages; sw or xsr, when set, is the
// cross-slice step that follows it: a switch, or the Inter-Slice Block's
// reduction (verify/interslice.go). swAt is that step's stage index.
type segment struct {
	stages []*stagePlan
	sw     *kernel.Switch
	xsr    *kernel.InterSliceReduceConfig
	swAt   int
	// veLanes, when positive, is the packet width of the Vector Engine
	// pass a segment continues after an inter-slice reduction: its slices
	// run on whichever worker takes them, so the pass's state starts anew
	// from the reduction's output (Way8 packets of one flit, no tags, no
	// valid counts, no stash; 002 L6603-6610).
	veLanes int
	// slices are the global slices the segment runs on; groups (for a
	// segment ending in a switch) are the (chip, cluster) rings it feeds,
	// as the global index of each ring's slice 0.
	slices []int
	groups []int
}

// chainPlan is a prepared chain.
type chainPlan struct {
	op       int
	begin    *kernel.Tensor
	out      *kernel.Tensor // the tensor the terminal stage writes
	reads    []string       // DM/TRF/VRF tensors the chain reads per slice
	readSeg  []int          // the segment of each read
	segs     []*segment
	switched bool
}

func (x *Executor) stageErr(op, at int, kind kernel.StageKind, err error) error {
	return &ExecError{Op: op, Stage: at, Kind: string(kind), Err: err}
}

// planChain checks a chain's stages and configurations and splits it into
// segments at its switches.
func (x *Executor) planChain(i int, op *kernel.Op) (*chainPlan, error) {
	st := op.Stages
	begin, _ := x.prog.Tensor(st[0].Tensor)
	cp := &chainPlan{op: i, begin: begin, reads: []string{begin.Name}, readSeg: []int{0}}
	if rhs := st[0].InterleavedTensor(); rhs != "" {
		cp.reads, cp.readSeg = append(cp.reads, rhs), append(cp.readSeg, 0)
	}
	seg := &segment{}
	for k := 1; k < len(st); k++ {
		s := st[k]
		fail := func(format string, args ...any) error {
			return x.stageErr(i, k, s.Kind, fmt.Errorf(format, args...))
		}
		c := s.Config
		need := func(ok bool) error {
			if c == nil || !ok {
				return fail("no %s configuration: lower the program first (engines.Lower)", s.Kind)
			}
			return nil
		}
		sp := &stagePlan{at: k, kind: s.Kind, stage: s, cfg: c}
		if s.Tensor != "" {
			sp.tensor, _ = x.prog.Tensor(s.Tensor)
		}
		var err error
		switch s.Kind {
		case kernel.StFetch:
			if k != 1 {
				return nil, fail("fetch must follow begin")
			}
			if err = need(c != nil && c.Fetch != nil); err == nil {
				err = engines.CheckSeqConfig(x.spec, c.Fetch.Seq, engines.SeqRead)
			}
			if err == nil {
				err = engines.CheckFetchAlign(x.spec, c.Fetch)
			}
		case kernel.StSwitch:
			if err = need(c != nil && c.Switch != nil); err != nil {
				return nil, err
			}
			sw := c.Switch
			if sw.Slices > x.dev.slices {
				return nil, fail("the switch routes %d slices, a cluster has %d", sw.Slices, x.dev.slices)
			}
			if _, err := streamSize(sw.Slices, sw.InTime, sw.PacketBytes); err != nil {
				return nil, x.stageErr(i, k, s.Kind, err)
			}
			if _, err := streamSize(sw.Route.OuterTime, sw.Route.OuterMoved, sw.Route.InnerTime, sw.Route.InnerMoved, sw.PacketBytes); err != nil {
				return nil, x.stageErr(i, k, s.Kind, err)
			}
			seg.sw, seg.swAt = c.Switch, k
			cp.segs = append(cp.segs, seg)
			cp.switched = true
			seg = &segment{}
			continue
		case kernel.StCollect:
			if err = need(c != nil && c.Collect != nil); err == nil {
				_, err = streamSize(c.Collect.InTime, c.Collect.Flits, c.Collect.FlitBytes)
			}
		case kernel.StToTRF:
			err = need(c != nil && c.ToTRF != nil)
		case kernel.StAlign:
			if err = need(c != nil && c.Align != nil); err != nil {
				return nil, err
			}
			if k+2 >= len(st) || st[k+1].Kind != kernel.StContract || st[k+2].Kind != kernel.StAccumulate {
				return nil, fail("align must be followed by contract and accumulate (the Reducer consumes the Aligner's packets)")
			}
			cc, ac := st[k+1].Config, st[k+2].Config
			if cc == nil || cc.Contract == nil {
				return nil, x.stageErr(i, k+1, kernel.StContract, errors.New("no contract configuration: lower the program first (engines.Lower)"))
			}
			if ac == nil || ac.Accumulate == nil {
				return nil, x.stageErr(i, k+2, kernel.StAccumulate, errors.New("no accumulate configuration: lower the program first (engines.Lower)"))
			}
			sp.red = kernel.ReducerConfig{Contract: *cc.Contract, Accumulate: *ac.Accumulate}
			if err := engines.CheckTRFSequencer(x.spec, &c.Align.TRFSequencer); err != nil {
				return nil, x.stageErr(i, k, s.Kind, err)
			}
			if _, err := streamSize(c.Align.StreamAdapter.OutSteps, x.spec.Stream.MACWidthBytes.Value); err != nil {
				return nil, x.stageErr(i, k, s.Kind, err)
			}
			a := &sp.red.Accumulate
			if _, err := streamSize(a.Rows, a.InnerTime, a.Beats, 32); err != nil {
				return nil, x.stageErr(i, k+2, kernel.StAccumulate, err)
			}
			if _, err := engines.NewReducer(x.spec, sp.red); err != nil {
				return nil, x.stageErr(i, k+2, kernel.StAccumulate, err)
			}
			if sp.toTRF = x.storedTRF(i, s.Tensor); sp.toTRF == nil {
				return nil, fail("TRF tensor %q is not stored by an earlier to_trf", s.Tensor)
			}
			cp.reads = append(cp.reads, s.Tensor)
			cp.readSeg = append(cp.readSeg, len(cp.segs))
			k += 2
		case kernel.StContract, kernel.StAccumulate:
			return nil, fail("%s must follow align", s.Kind)
		case kernel.StVectorInterSlice:
			if err = need(c != nil && c.VectorInterSlice != nil); err != nil {
				return nil, err
			}
			if err := x.planInterSlice(c.VectorInterSlice); err != nil {
				return nil, x.stageErr(i, k, s.Kind, err)
			}
			seg.xsr, seg.swAt = c.VectorInterSlice, k
			cp.segs = append(cp.segs, seg)
			cp.switched = true
			seg = &segment{veLanes: c.VectorInterSlice.Lanes}
			continue
		case kernel.StCast:
			err = need(c != nil && c.Cast != nil)
		case kernel.StTranspose:
			err = need(c != nil && c.Transpose != nil)
		case kernel.StCommit:
			if err = need(c != nil && c.Commit != nil); err == nil {
				err = engines.CheckSeqConfig(x.spec, c.Commit.Seq, engines.SeqWrite)
			}
			if err == nil && c.Commit.ValidCountPacking {
				err = fail("valid-count packing commits a runtime count (002 L2324): %w", engines.ErrNotModelled)
			}
		default:
			vrf, verr := planVector(s)
			if verr != nil {
				return nil, x.stageErr(i, k, s.Kind, verr)
			}
			if vrf != "" {
				cp.reads = append(cp.reads, vrf)
				cp.readSeg = append(cp.readSeg, len(cp.segs))
			}
		}
		if err != nil {
			return nil, err
		}
		seg.stages = append(seg.stages, sp)
		if s.Kind == kernel.StToTRF || s.Kind == kernel.StToVRF || s.Kind == kernel.StCommit {
			cp.out = sp.tensor
		}
	}
	cp.segs = append(cp.segs, seg)
	if err := x.planSlices(cp, op); err != nil {
		return nil, x.stageErr(i, 0, kernel.StBegin, err)
	}
	return cp, nil
}

// storedTRF returns the to_trf configuration of the last chain before op i
// that stores TRF tensor name.
func (x *Executor) storedTRF(i int, name string) *kernel.ToTRFConfig {
	for j := i - 1; j >= 0; j-- {
		op := x.prog.Ops[j]
		for _, s := range op.Stages {
			if s.Kind == kernel.StToTRF && s.Tensor == name && s.Config != nil && s.Config.ToTRF != nil {
				return s.Config.ToTRF
			}
		}
	}
	return nil
}

// planSlices decides where each segment runs. The first segment runs on the
// slices where the begin tensor holds data; after a switch, on the live
// slices of the switch's output Slice mapping in the rings the switch was
// fed. Segments that feed a switch run on every such slice; the others only
// on the run set.
func (x *Executor) planSlices(cp *chainPlan, op *kernel.Op) error {
	live, err := tensorSlices(x.dev, cp.begin)
	if err != nil {
		return err
	}
	chip, cluster := cp.begin.Chip, cp.begin.Cluster
	for si, seg := range cp.segs {
		if si > 0 {
			prev := cp.segs[si-1]
			out := op.Stages[prev.swAt].Slice
			if out == nil {
				return fmt.Errorf("switch at stage %d states no output Slice mapping", prev.swAt)
			}
			all, err := spatialSlices(x.dev, chip, cluster, out, cp.begin.Name)
			if err != nil {
				return err
			}
			ring := map[int]bool{}
			for _, g := range prev.groups {
				ring[g] = true
			}
			live = live[:0:0]
			for _, g := range all {
				if ring[g-g%x.dev.slices] {
					live = append(live, g)
				}
			}
		}
		if seg.sw != nil || seg.xsr != nil {
			seg.slices = live
			seen := map[int]bool{}
			for _, g := range live {
				if r := g - g%x.dev.slices; !seen[r] {
					seen[r] = true
					seg.groups = append(seg.groups, r)
				}
			}
			continue
		}
		for _, g := range live {
			if x.inRun(g) || x.everywhere[cp.op] {
				seg.slices = append(seg.slices, g)
			}
		}
	}
	return nil
}
