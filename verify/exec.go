package verify

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The program executor: it runs a lowered kernel program op by op, in
// program order, on a Device, executing each engine's configuration as the
// program states it (engines.Lower fills in the ones it does not state).
// Nothing here looks at the einsum the kernel computes: a wrong stride,
// route or address in a configuration produces wrong bytes, as on the chip.
//
//   - A DMA op runs its descriptors: every packet moves stride0 bytes
//     between the addresses the descriptor's loops give (engines.DMAPacket,
//     002 L2567-2582).
//   - A chain runs slice by slice (slices in parallel): fetch walks its
//     sequencer over the slice's DM bytes and applies the fetch adapter
//     (002 L1689-2118), collect pads and splits packets into flits
//     (002 L3543-3564), to_trf stores flits in the TRF's bank-row layout
//     (002 L4052-4061), align builds the computation packets and reads the
//     TRF per its sequencer with broadcast (002 L3878-4177), contract and
//     accumulate multiply, reduce in tree order and accumulate
//     (002 L4384-4492), the Vector Engine applies its Fxp ops with a
//     constant or VRF operand (002 L4549-5277; to_vrf loads the VRF),
//     cast rounds (002 L6756-6784), transpose transposes blocks
//     (002 L6820-6886), and commit truncates and writes DM through its
//     sequencer (002 L2145-2353). A switch and the Inter-Slice Block are
//     the cross-slice steps: the slices' streams are gathered per cluster,
//     routed (002 L3086-3088) or reduced (002 L6583-6755,
//     verify/interslice.go) and scattered back.
//
// Main and sub contexts run in program order: functional results do not
// depend on their overlap when the program respects its hazards.

// ExecOptions tune an Executor.
type ExecOptions struct {
	// Run, when not nil, restricts the chains to the global slices it marks
	// (len Run = Device.TotalSlices()); stages before a switch still run on
	// every slice that feeds it. Nil runs every slice.
	Run []bool
	// Workers bounds the goroutines that run slices; 0 means GOMAXPROCS.
	Workers int
}

// ExecError locates an execution failure: the op, the stage within a chain
// (-1 for a DMA op) and the slice (-1 when none).
type ExecError struct {
	Op, Stage int
	Kind      string
	Slice     string
	Err       error
}

// Error prints the location, then the cause:
// `ops[3].stages[1] (fetch) on chip 0 cluster 0 slice 5: fetch: ...`.
func (e *ExecError) Error() string {
	at := fmt.Sprintf("ops[%d] (%s)", e.Op, e.Kind)
	if e.Stage >= 0 {
		at = fmt.Sprintf("ops[%d].stages[%d] (%s)", e.Op, e.Stage, e.Kind)
	}
	if e.Slice != "" {
		at += " on " + e.Slice
	}
	return at + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *ExecError) Unwrap() error { return e.Err }

// Executor runs one lowered program on one device.
type Executor struct {
	spec   *engines.Spec
	prog   *kernel.Program
	dev    *Device
	run    []bool
	allocs map[string]*Allocation
	plans  []*chainPlan // per op; nil for DMA ops
	runs   []*sliceRun  // per worker
	next   int          // the next op to run
	macs   atomic.Int64
	// veElems counts the elements entering Vector Engine passes
	// (exec_vector.go).
	veElems atomic.Int64

	// everywhere marks the chains that run on every slice whatever the
	// run set: their results feed a later chain's stages before a
	// cross-slice step, which run on every slice (runEverywhere).
	everywhere []bool

	// Sampling bookkeeping: tainted[t][g] marks the slices where tensor t
	// holds data computed from slices that were not run; hbmTainted the HBM
	// tensors written from tainted data; origin[t][pos] says where the
	// reference output's element position pos was last written from: 1 +
	// the global slice of a clean DM source, originHBM for a clean HBM
	// source, originTainted for tainted data, 0 when no DMA wrote it.
	tainted    map[string][]bool
	hbmTainted map[string]bool
	origin     map[string][]int32
	// originSrc[t][pos] is where the reference output's element position
	// pos was last copied from in DM: the global slice << 32 | the byte
	// address in it; -1 when not from DM (or a sub-byte element).
	originSrc map[string][]int64
}

// Origins of an HBM output element other than a slice (Executor.Origin).
const (
	originTainted int32 = -1
	originHBM     int32 = math.MaxInt32
)

// NewExecutor checks the program's allocation (Allocate) and prepares its
// chains. The program must be lowered (engines.Lower): every DMA op carries
// its command and every stage its configuration.
func NewExecutor(dev *Device, p *kernel.Program, opts ExecOptions) (*Executor, error) {
	if dev == nil || p == nil {
		return nil, errors.New("executor: nil device or program")
	}
	if p.Chips > dev.Chips() {
		return nil, fmt.Errorf("executor: kernel %q runs on %d chips, the device has %d", p.Name, p.Chips, dev.Chips())
	}
	if opts.Run != nil && len(opts.Run) != dev.TotalSlices() {
		return nil, fmt.Errorf("executor: run set of %d slices, the device has %d", len(opts.Run), dev.TotalSlices())
	}
	allocs, err := Allocate(dev, p)
	if err != nil {
		return nil, err
	}
	x := &Executor{spec: dev.spec, prog: p, dev: dev, run: opts.Run, allocs: map[string]*Allocation{},
		plans: make([]*chainPlan, len(p.Ops)), tainted: map[string][]bool{}, hbmTainted: map[string]bool{}, origin: map[string][]int32{}, originSrc: map[string][]int64{},
		everywhere: runEverywhere(p)}
	for i := range allocs {
		x.allocs[allocs[i].Tensor.Name] = &allocs[i]
	}
	for i, op := range p.Ops {
		if op.Kind != kernel.OpChain {
			if op.DMA == nil {
				return nil, &ExecError{Op: i, Stage: -1, Kind: string(op.Kind), Err: errors.New("no DMA command: lower the program first (engines.Lower)")}
			}
			// A stated command is run as written, but only if the hardware
			// could be programmed with it.
			if err := engines.CheckDMACommand(x.spec, op.DMA); err != nil {
				return nil, &ExecError{Op: i, Stage: -1, Kind: string(op.Kind), Err: err}
			}
			continue
		}
		if x.plans[i], err = x.planChain(i, op); err != nil {
			return nil, err
		}
	}
	w := opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	for k := 0; k < w; k++ {
		x.runs = append(x.runs, &sliceRun{x: x, reducers: map[*stagePlan]*engines.Reducer{}})
	}
	return x, nil
}

// Run runs the remaining ops in program order.
func (x *Executor) Run() error {
	for x.next < len(x.prog.Ops) {
		if err := x.Step(); err != nil {
			return err
		}
	}
	return nil
}

// Step runs the next op; it reports an error when every op has run.
func (x *Executor) Step() error {
	i := x.next
	if i >= len(x.prog.Ops) {
		return errors.New("executor: every op has run")
	}
	x.next++
	op := x.prog.Ops[i]
	if op.Kind == kernel.OpChain {
		return x.runChain(x.plans[i])
	}
	if err := x.runDMA(op); err != nil {
		return &ExecError{Op: i, Stage: -1, Kind: string(op.Kind), Err: err}
	}
	return nil
}

// MACs is the number of multiply-accumulates the Reducers have performed:
// Rows × packet elements per computation time step, padding included.
func (x *Executor) MACs() int64 { return x.macs.Load() }

// runs reports whether global slice g is in the run set.
func (x *Executor) inRun(g int) bool { return x.run == nil || x.run[g] }

func (x *Executor) taint(name string) []bool {
	t := x.tainted[name]
	if t == nil {
		t = make([]bool, x.dev.TotalSlices())
		x.tainted[name] = t
	}
	return t
}

// ---- DMA ----

// runDMA executes a DMA command's descriptors, packet by packet.
func (x *Executor) runDMA(op *kernel.Op) error {
	cmd := op.DMA
	stride := cmd.SliceStride
	if stride <= 0 {
		stride = x.spec.DMA.SliceStrideBytes.Value // slice_stride, 002 L2541
	}
	src, _ := x.prog.Tensor(op.Src)
	dst, _ := x.prog.Tensor(op.Dst)
	var srcTaint, dstTaint []bool
	if src.Mem != kernel.HBM {
		srcTaint = x.taint(src.Name)
	}
	if dst.Mem != kernel.HBM {
		dstTaint = x.taint(dst.Name)
	}
	var origin []int32
	var elemBits int64
	// The output's origins are kept by its own element positions, also
	// when a tile view of it (Tensor.View) is written.
	out := dst
	if dst.View != "" {
		if b, ok := x.prog.Tensor(dst.View); ok {
			out = b
		}
	}
	if out.Mem == kernel.HBM && x.prog.Reference != nil && out.Name == x.prog.Reference.Output {
		n := out.Chip.Size() * out.Element.Size()
		if origin = x.origin[out.Name]; origin == nil {
			origin = make([]int32, n)
			x.origin[out.Name] = origin
			srcs := make([]int64, n)
			for i := range srcs {
				srcs[i] = -1
			}
			x.originSrc[out.Name] = srcs
		}
		elemBits = int64(out.DType.SizeBits())
	}
	// Data read from slices that did not run taints what it is written to;
	// a destination slice is clean again once a clean packet lands there
	// and no tainted one does.
	written := map[int]bool{}
	var buf []byte
	for di := range cmd.Descriptors {
		d := &cmd.Descriptors[di]
		if cap(buf) < d.Stride0 {
			buf = make([]byte, d.Stride0)
		}
		b := buf[:d.Stride0]
		for q := 0; q < d.Packets; q++ {
			sa, da, err := engines.DMAPacket(d, q)
			if err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
			sg, err := x.dmaRead(d.Src, int64(sa), stride, b)
			if err != nil {
				return fmt.Errorf("%s: packet %d: read: %w", d, q, err)
			}
			tainted := (srcTaint != nil && sg >= 0 && srcTaint[sg]) || (src.Mem == kernel.HBM && x.hbmTainted[src.Name])
			dg, err := x.dmaWrite(d.Dst, int64(da), stride, b)
			if err != nil {
				return fmt.Errorf("%s: packet %d: write: %w", d, q, err)
			}
			switch {
			case dstTaint != nil && dg >= 0:
				if !written[dg] {
					written[dg] = true
					dstTaint[dg] = false
				}
				dstTaint[dg] = dstTaint[dg] || tainted
			case tainted:
				x.hbmTainted[dst.Name] = true
				x.hbmTainted[out.Name] = true
			}
			if origin != nil {
				o := originHBM
				switch {
				case tainted:
					o = originTainted
				case src.Mem != kernel.HBM:
					o = int32(sg + 1)
				}
				per := int64(out.Element.Size())
				lo := (int64(da) - out.Addr) * 8 / elemBits
				hi := (int64(da)+int64(d.Stride0)-out.Addr)*8 + elemBits - 1
				hi /= elemBits
				base := int64(d.Dst.Dmn.Chip) * per
				srcs := x.originSrc[out.Name]
				for e := max(lo, 0); e < min(hi, per); e++ {
					origin[base+e] = o
					srcs[base+e] = -1
					if src.Mem != kernel.HBM && elemBits >= 8 {
						b := int64(sa)%int64(stride) + out.Addr + e*elemBits/8 - int64(da)
						srcs[base+e] = int64(sg)<<32 | b
					}
				}
			}
		}
	}
	return nil
}

// dmaMedia resolves a DMA media and address to a device memory: HBM(chip)
// addresses are the chip's; DM(chip, cluster, dmn) addresses are the
// cluster's virtual address slice·slice_stride + byte (002 L2541). It
// returns the global slice for DM (-1 for HBM) and the address within it.
func (x *Executor) dmaMedia(m kernel.DMAMedia, addr int64, stride int) (int, int64, error) {
	switch m.Kind {
	case kernel.MediaHBM:
		return -1, addr, nil
	case kernel.MediaDM:
		if addr < 0 {
			return 0, 0, fmt.Errorf("DM address %d", addr)
		}
		g, ok := x.dev.SliceIndex(m.Dmn.Chip, m.Dmn.Cluster, int(addr/int64(stride)))
		if !ok {
			return 0, 0, fmt.Errorf("DM address %d of %s names no slice of the device", addr, m)
		}
		return g, addr % int64(stride), nil
	}
	return 0, 0, fmt.Errorf("%s media: %w", m.Kind, engines.ErrNotModelled)
}

func (x *Executor) dmaRead(m kernel.DMAMedia, addr int64, stride int, b []byte) (int, error) {
	g, a, err := x.dmaMedia(m, addr, stride)
	if err != nil {
		return 0, err
	}
	if g < 0 {
		return g, x.dev.ReadHBM(m.Dmn.Chip, a, b)
	}
	return g, x.dev.ReadDM(g, a, b)
}

func (x *Executor) dmaWrite(m kernel.DMAMedia, addr int64, stride int, b []byte) (int, error) {
	g, a, err := x.dmaMedia(m, addr, stride)
	if err != nil {
		return 0, err
	}
	if g < 0 {
		return g, x.dev.WriteHBM(m.Dmn.Chip, a, b)
	}
	return g, x.dev.WriteDM(g, a, b)
}

// maxStreamBytes bounds one slice's stream between two stages. It is a
// limit of the simulator, not of the hardware, far above what the 512 KB of
// a slice's DM feeds through any real chain; a malformed configuration
// beyond it is an error, not an attempt to allocate.
const maxStreamBytes = 1 << 28

// streamSize is the product of factors, or an error when a factor is
// negative or the product exceeds maxStreamBytes.
func streamSize(factors ...int) (int, error) {
	n := 1
	for _, f := range factors {
		if f < 0 {
			return 0, fmt.Errorf("negative stream dimension %d", f)
		}
		if f != 0 && n > maxStreamBytes/f {
			return 0, fmt.Errorf("a stream beyond the simulator's limit of %d bytes per slice", maxStreamBytes)
		}
		n *= f
	}
	return n, nil
}

// ---- chains: planning ----

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

// ---- chains: running ----

// runChain runs a chain's segments, slices in parallel, with the switches
// between them.
func (x *Executor) runChain(cp *chainPlan) error {
	var streams [][]byte // per global slice, between segments
	for i, seg := range cp.segs {
		in := streams
		var out [][]byte
		if seg.sw != nil || seg.xsr != nil {
			out = make([][]byte, x.dev.TotalSlices())
		}
		err := x.parallel(seg.slices, func(r *sliceRun, g int) error {
			var src []byte
			if in != nil {
				src = in[g]
			}
			res, err := r.runStages(cp, seg, g, src)
			if err != nil {
				return err
			}
			if out != nil {
				out[g] = append([]byte(nil), res...)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if seg.sw != nil {
			var next []int // the slices the switch's output feeds
			if i+1 < len(cp.segs) {
				next = cp.segs[i+1].slices
			}
			if streams, err = x.runSwitch(cp, seg, out, next); err != nil {
				return x.stageErr(cp.op, seg.swAt, kernel.StSwitch, err)
			}
		} else if seg.xsr != nil {
			var next []int
			if i+1 < len(cp.segs) {
				next = cp.segs[i+1].slices
			}
			if streams, err = x.runInterSlice(seg, out, next); err != nil {
				return x.stageErr(cp.op, seg.swAt, kernel.StVectorInterSlice, err)
			}
		}
	}
	x.taintChain(cp)
	return nil
}

// taintChain records where the chain's output holds data computed from
// slices that did not run (sampling): everywhere the tensor lives but the
// last segment did not run, and where an input was tainted.
func (x *Executor) taintChain(cp *chainPlan) {
	if cp.out == nil {
		return
	}
	out := x.taint(cp.out.Name)
	last := cp.segs[len(cp.segs)-1]
	ran := make(map[int]bool, len(last.slices))
	for _, g := range last.slices {
		ran[g] = true
	}
	// Across a switch or an inter-slice reduction every slice of a ring
	// feeds every other: a tensor read before it and tainted on one slice
	// of the ring taints the ring.
	ringTaint := map[int]bool{}
	lastSeg := len(cp.segs) - 1
	for i, name := range cp.reads {
		if cp.readSeg[i] == lastSeg {
			continue
		}
		tt := x.taint(name)
		for _, g := range cp.segs[cp.readSeg[i]].slices {
			if tt[g] {
				ringTaint[g-g%x.dev.slices] = true
			}
		}
	}
	if a := x.allocs[cp.out.Name]; a != nil {
		for _, g := range a.Slices {
			if !ran[g] {
				out[g] = true
			}
		}
	}
	for g := range ran {
		t := ringTaint[g-g%x.dev.slices]
		for i, name := range cp.reads {
			if cp.readSeg[i] == lastSeg {
				t = t || x.taint(name)[g]
			}
		}
		out[g] = t
	}
}

// runSwitch gathers the streams of each ring the switch is fed, routes them
// (engines.SwitchApply) and returns the routed streams per global slice.
//
// Only the output of the slices in next (those the following segment
// runs) is routed: each slice's stream is its own allocation, so a ring's
// output is never held whole.
func (x *Executor) runSwitch(cp *chainPlan, seg *segment, in [][]byte, next []int) ([][]byte, error) {
	sw := seg.sw
	n, pb := sw.Slices, sw.PacketBytes
	inBytes, outBytes := sw.InTime*pb, sw.Route.OutTime()*pb
	out := make([][]byte, x.dev.TotalSlices())
	want := map[int]bool{}
	for _, g := range next {
		want[g] = true
	}
	for _, r := range seg.groups {
		src := make([]byte, n*inBytes)
		for s := 0; s < n; s++ {
			b := in[r+s]
			if b == nil {
				continue // a slice holding no data feeds zeros
			}
			if len(b) != inBytes {
				return nil, fmt.Errorf("%s: the stream holds %d bytes, the switch routes %d time steps of %d bytes", x.dev.SliceName(r+s), len(b), sw.InTime, pb)
			}
			copy(src[s*inBytes:], b)
		}
		for s := 0; s < n; s++ {
			if !want[r+s] {
				continue
			}
			dst := make([]byte, outBytes)
			if err := engines.SwitchApplySlice(sw, dst, src, s); err != nil {
				return nil, fmt.Errorf("ring of %s: %w", x.dev.SliceName(r), err)
			}
			out[r+s] = dst
		}
	}
	return out, nil
}

// parallel runs fn on every slice of slices, on the executor's workers. On
// failure it returns the error of the lowest failing slice: every slice
// below it has run, so the error does not depend on scheduling.
func (x *Executor) parallel(slices []int, fn func(r *sliceRun, g int) error) error {
	if len(slices) == 0 {
		return nil
	}
	var next atomic.Int64
	var fail atomic.Int64
	fail.Store(int64(len(slices)))
	errs := make([]error, len(slices))
	var wg sync.WaitGroup
	for w := 0; w < min(len(x.runs), len(slices)); w++ {
		wg.Add(1)
		go func(r *sliceRun) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(slices) || int64(i) > fail.Load() {
					return
				}
				if err := fn(r, slices[i]); err != nil {
					errs[i] = err
					for {
						f := fail.Load()
						if int64(i) >= f || fail.CompareAndSwap(f, int64(i)) {
							break
						}
					}
				}
			}
		}(x.runs[w])
	}
	wg.Wait()
	if f := fail.Load(); f < int64(len(slices)) {
		return errs[f]
	}
	return nil
}

// sliceRun is one worker's state: stream buffers and Reducers, reused from
// slice to slice so that the hot loops do not allocate.
type sliceRun struct {
	x        *Executor
	bufs     [2][]byte
	reducers map[*stagePlan]*engines.Reducer
	packet   [64]byte
	weights  []byte
	// trfCache maps a TRF Sequencer address to the Rows × 64-byte windows
	// read there, kept in trfSlab (align).
	trfCache map[int]int
	trfSlab  []byte
	scratch  [8]byte
	// ve is the Vector Engine pass's per-slice state (exec_vector.go).
	ve veSlice
}

// buffer returns a buffer of n bytes that is not buffer avoid (-1: none),
// and its index.
func (r *sliceRun) buffer(avoid, n int) ([]byte, int) {
	k := 0
	if avoid == 0 {
		k = 1
	}
	if cap(r.bufs[k]) < n {
		r.bufs[k] = make([]byte, n)
	}
	return r.bufs[k][:n], k
}

// runStages runs a segment's stages on global slice g. in is the segment's
// input stream (nil for the first segment, which starts with fetch); the
// result is the stream after the last stage (nil after a terminal stage).
func (r *sliceRun) runStages(cp *chainPlan, seg *segment, g int, in []byte) ([]byte, error) {
	cur := -1 // the buffer holding in; -1 when in is not one of ours
	if seg.veLanes > 0 {
		r.ve.reset(seg.veLanes)
	}
	for _, sp := range seg.stages {
		out, k, err := r.stage(cp, sp, g, in, cur)
		if err != nil {
			return nil, &ExecError{Op: cp.op, Stage: sp.at, Kind: string(sp.kind), Slice: r.x.dev.SliceName(g), Err: err}
		}
		in, cur = out, k
	}
	return in, nil
}

// stage runs one stage on slice g; cur is the buffer holding in.
func (r *sliceRun) stage(cp *chainPlan, sp *stagePlan, g int, in []byte, cur int) ([]byte, int, error) {
	c := sp.cfg
	switch sp.kind {
	case kernel.StFetch:
		return r.fetch(cp.begin, c.Fetch, g)
	case kernel.StCollect:
		cc := c.Collect
		out, k := r.buffer(cur, cc.OutTime()*cc.FlitBytes)
		return out, k, engines.CollectApply(cc, out, in)
	case kernel.StToTRF:
		return nil, -1, r.toTRF(c.ToTRF, g, in)
	case kernel.StAlign:
		return r.align(sp, g, in, cur)
	case kernel.StCast:
		return r.cast(c.Cast, in, cur)
	case kernel.StTranspose:
		return r.transpose(c.Transpose, in, cur)
	case kernel.StCommit:
		return nil, -1, r.commit(sp.tensor, c.Commit, g, in)
	}
	return r.vectorStage(sp, g, in, cur)
}

// fetch runs the Fetch Sequencer over the DM bytes of tensor t on slice g
// and the Fetch Adapter on every element (002 L1689-2118): position p of
// the stream reads the element at the sequencer's address p (in elements of
// InType from the tensor's address); masked positions take the pad value.
func (r *sliceRun) fetch(t *kernel.Tensor, cfg *kernel.FetchConfig, g int) ([]byte, int, error) {
	inBits, outBits := cfg.InType.SizeBits(), cfg.OutType.SizeBits()
	if inBits == 0 || outBits == 0 {
		return nil, -1, fmt.Errorf("fetch: invalid element types %s -> %s", cfg.InType, cfg.OutType)
	}
	elems := 1
	for _, e := range cfg.Seq.Entries {
		n, err := streamSize(elems, e.Size)
		if err != nil {
			return nil, -1, fmt.Errorf("fetch: sequencer %s: %w", cfg.Seq, err)
		}
		elems = n
	}
	if elems == 0 || elems*outBits%8 != 0 || elems*outBits/8 > maxStreamBytes {
		return nil, -1, fmt.Errorf("fetch: sequencer %s visits %d elements of %s: not whole bytes, or beyond the simulator's stream limit", cfg.Seq, elems, cfg.OutType)
	}
	out, k := r.buffer(-1, elems*outBits/8)
	a := &cfg.Adapter
	if cfg.InType == cfg.OutType && !a.Table && !a.Cast && len(a.ZeroPoints) == 0 && a.Mask == nil && inBits%8 == 0 {
		return out, k, r.fetchRaw(t, &cfg.Seq, g, inBits/8, out)
	}
	return out, k, r.fetchAdapted(t, cfg, g, out)
}

// fetchRaw is fetch without adapter stages on whole-byte elements: the
// elements' bytes are copied, a contiguous innermost entry (stride 1) as one
// run.
func (r *sliceRun) fetchRaw(t *kernel.Tensor, seq *kernel.SeqConfig, g, eb int, out []byte) error {
	es := seq.Entries
	if len(es) > kernel.MaxIterDepth {
		return fmt.Errorf("fetch: %d sequencer entries, at most %d", len(es), kernel.MaxIterDepth)
	}
	for i, e := range es {
		if e.Size < 1 {
			return fmt.Errorf("fetch: sequencer entry %d has size %d", i, e.Size)
		}
	}
	inner := kernel.SeqEntry{Size: 1, Stride: 1}
	outer := es
	if len(es) > 0 {
		inner, outer = es[len(es)-1], es[:len(es)-1]
	}
	var idx [kernel.MaxIterDepth]int
	off := seq.Base // element address of the current outer position
	run := inner.Size * eb
	dev := r.x.dev
	for pos := 0; pos < len(out); pos += run {
		dst := out[pos : pos+run]
		switch inner.Stride {
		case 1:
			if err := dev.ReadDM(g, t.Addr+int64(off)*int64(eb), dst); err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
		case 0:
			if err := dev.ReadDM(g, t.Addr+int64(off)*int64(eb), dst[:eb]); err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			for j := eb; j < run; j += eb {
				copy(dst[j:j+eb], dst[:eb])
			}
		default:
			for j := 0; j < inner.Size; j++ {
				a := t.Addr + int64(off+j*inner.Stride)*int64(eb)
				if err := dev.ReadDM(g, a, dst[j*eb:(j+1)*eb]); err != nil {
					return fmt.Errorf("fetch: %w", err)
				}
			}
		}
		for k := len(outer) - 1; k >= 0; k-- { // the odometer of 002 L1390-1401
			idx[k]++
			off += outer[k].Stride
			if idx[k] < outer[k].Size {
				break
			}
			off -= outer[k].Stride * outer[k].Size
			idx[k] = 0
		}
	}
	return nil
}

// fetchAdapted is fetch with the adapter's element-wise stages (masking,
// table, cast, zero points; 002 L1870) or sub-byte elements: element by
// element.
func (r *sliceRun) fetchAdapted(t *kernel.Tensor, cfg *kernel.FetchConfig, g int, out []byte) error {
	if cfg.Adapter.Table {
		return fmt.Errorf("fetch: table indexing reads a table the kernel program does not carry: %w", engines.ErrNotModelled)
	}
	inter := -1 // the entry of the interleave axis, for per-tensor zero points
	if it := cfg.Interleave; it != nil && len(cfg.Adapter.ZeroPoints) > 1 {
		for k, e := range cfg.Seq.Entries {
			if e.Term == it.Axis && e.Size == it.Tensors {
				inter = k
			}
		}
		if inter < 0 {
			return fmt.Errorf("fetch: no sequencer entry iterates the interleave axis %s", it.Axis)
		}
	}
	it, err := cfg.Seq.Iter()
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	inBits := int64(cfg.InType.SizeBits())
	nb := (inBits + 7) / 8
	for it.Next() {
		p := it.Pos()
		var v float64
		if cfg.Adapter.Mask != nil && engines.MaskedAt(cfg.Adapter.Mask, &cfg.Seq, p) {
			v = float64(cfg.Adapter.Mask.PadValue) // 002 L1906
		} else {
			bit := (t.Addr*8 + int64(it.Addr())*inBits)
			if bit < 0 {
				return fmt.Errorf("fetch: position %d reads DM before address 0", p)
			}
			b := r.scratch[:nb]
			if err := r.x.dev.ReadDM(g, bit/8, b); err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			raw, err := cfg.InType.Load(r.scratch[:], int(bit%8/inBits))
			if err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			tensor := 0
			if inter >= 0 {
				q := p
				for k := len(cfg.Seq.Entries) - 1; k > inter; k-- {
					q /= cfg.Seq.Entries[k].Size
				}
				tensor = q % cfg.Seq.Entries[inter].Size
			}
			if v, err = engines.FetchValue(cfg, raw, tensor, nil); err != nil {
				return fmt.Errorf("fetch: position %d: %w", p, err)
			}
		}
		if err := cfg.OutType.Store(out, p, v); err != nil {
			return fmt.Errorf("fetch: position %d: %w", p, err)
		}
	}
	return nil
}

// toTRF stores the collect flits in the TRF of slice g (002 L4052-4061).
func (r *sliceRun) toTRF(c *kernel.ToTRFConfig, g int, in []byte) error {
	fb := r.x.spec.Stream.FlitBytes.Value // 32-byte flits, 002 L3544
	if want := c.Rows * c.FlitsPerRow * fb; len(in) != want {
		return fmt.Errorf("to_trf: the stream holds %d bytes, the configuration stores %d Rows × %d flits of %d bytes", len(in), c.Rows, c.FlitsPerRow, fb)
	}
	trf, err := r.x.dev.TRF(g)
	if err != nil {
		return err
	}
	for t := 0; t*fb < len(in); t++ {
		if err := trf.StoreFlit(c, t, in[t*fb:(t+1)*fb]); err != nil {
			return err
		}
	}
	return nil
}

// align runs the Aligner and the Reducer for every computation time step:
// the Stream Adapter's packet, each Row's TRF window, then the Reducer's
// step, whose completed blocks form the output stream of 32-byte beats
// (002 L3878-4177, L4384-4492).
func (r *sliceRun) align(sp *stagePlan, g int, in []byte, cur int) ([]byte, int, error) {
	c := sp.cfg.Align
	sa, ts := &c.StreamAdapter, &c.TRFSequencer
	if want := sa.InSteps * sa.FlitBytes; len(in) != want {
		return nil, -1, fmt.Errorf("align: the stream holds %d bytes, the Stream Adapter reads %d flits of %d bytes", len(in), sa.InSteps, sa.FlitBytes)
	}
	red := r.reducers[sp]
	if red == nil {
		var err error
		if red, err = engines.NewReducer(r.x.spec, sp.red); err != nil {
			return nil, -1, err
		}
		r.reducers[sp] = red
	}
	trf, err := r.x.dev.TRF(g)
	if err != nil {
		return nil, -1, err
	}
	mac := r.x.spec.Stream.MACWidthBytes.Value // 64 bytes per Row per cycle, 002 L4099
	rows := sp.red.Accumulate.Rows
	if cap(r.weights) < rows*mac {
		r.weights = make([]byte, rows*mac)
	}
	if sa.OutSteps > ts.Steps() {
		return nil, -1, fmt.Errorf("align: the Stream Adapter produces %d computation steps, the TRF Sequencer reads %d", sa.OutSteps, ts.Steps())
	}
	// A TRF Sequencer entry of stride 0 re-reads the same weights (002
	// L4177): the TRF does not change during the chain, so the windows read
	// at an address are kept and reused, as the same read would return them.
	reuse := false
	for _, e := range ts.Entries {
		reuse = reuse || (e.Stride == 0 && e.Size > 1)
	}
	if r.trfCache == nil {
		r.trfCache = map[int]int{}
	}
	clear(r.trfCache)
	r.trfSlab = r.trfSlab[:0]
	x := r.packet[:mac]
	k := 0
	if cur == 0 {
		k = 1
	}
	out := r.bufs[k][:0]
	for t := 0; t < sa.OutSteps; t++ {
		if err := engines.StreamAdapterPacket(sa, in, t, x); err != nil {
			return nil, -1, err
		}
		w := r.weights[:rows*mac]
		if off, ok := r.trfCache[ts.Addr(t)]; reuse && ok {
			w = r.trfSlab[off : off+rows*mac]
		} else {
			for row := 0; row < rows; row++ {
				if err := trf.ReadPacket(sp.toTRF, ts, row, t, w[row*mac:(row+1)*mac]); err != nil {
					return nil, -1, err
				}
			}
			if reuse {
				r.trfCache[ts.Addr(t)] = len(r.trfSlab)
				r.trfSlab = append(r.trfSlab, w...)
			}
		}
		beats, err := red.Step(t, x, w)
		if err != nil {
			return nil, -1, err
		}
		out = append(out, beats...)
	}
	r.bufs[k] = out
	r.x.macs.Add(int64(sa.OutSteps) * int64(rows) * int64(sp.red.Contract.Width))
	return out, k, nil
}

// cast converts every packet (002 L6756-6784).
func (r *sliceRun) cast(c *kernel.CastConfig, in []byte, cur int) ([]byte, int, error) {
	ib, err1 := c.From.BytesFor(c.InElems)
	ob, err2 := c.To.BytesFor(c.OutElems)
	if err1 != nil || err2 != nil || ib < 1 || ob < 1 || len(in)%ib != 0 {
		return nil, -1, fmt.Errorf("cast: the stream holds %d bytes, not whole packets of %d %s", len(in), c.InElems, c.From)
	}
	n := len(in) / ib
	if _, err := streamSize(n, ob); err != nil {
		return nil, -1, fmt.Errorf("cast: %w", err)
	}
	out, k := r.buffer(cur, n*ob)
	for t := 0; t < n; t++ {
		if err := engines.CastPacket(c, in[t*ib:(t+1)*ib], out[t*ob:(t+1)*ob]); err != nil {
			return nil, -1, err
		}
	}
	return out, k, nil
}

// transpose transposes every block of in_rows × packets_per_col flits
// (002 L6842-6848).
func (r *sliceRun) transpose(c *kernel.TransposeConfig, in []byte, cur int) ([]byte, int, error) {
	flit := c.OutputAlignment * c.ElementBits / 8
	ib, err1 := streamSize(c.InRows, c.PacketsPerCol, flit)
	ob, err2 := streamSize(c.OutRows, flit)
	if err1 != nil || err2 != nil || ib < 1 || ob < 1 || len(in)%ib != 0 {
		return nil, -1, fmt.Errorf("transpose: the stream holds %d bytes, not whole blocks of %d", len(in), ib)
	}
	n := len(in) / ib
	if _, err := streamSize(n, ob); err != nil {
		return nil, -1, fmt.Errorf("transpose: %w", err)
	}
	out, k := r.buffer(cur, n*ob)
	for t := 0; t < n; t++ {
		if err := engines.TransposeBlock(c, in[t*ib:(t+1)*ib], out[t*ob:(t+1)*ob]); err != nil {
			return nil, -1, err
		}
	}
	return out, k, nil
}

// commit truncates every packet and writes it to tensor t's DM on slice g
// through the commit sequencer (002 L2190-2313); a slice the bitmap does not
// enable receives nothing (002 L2314-2319).
func (r *sliceRun) commit(t *kernel.Tensor, c *kernel.CommitConfig, g int, in []byte) error {
	_, _, s := r.x.dev.SliceCoords(g)
	if c.SliceBitmap != nil && !c.SliceBitmap.Has(s) {
		return nil
	}
	pb := c.InPacketBytes
	if pb < 1 || len(in) != c.Steps*pb {
		return fmt.Errorf("commit: the stream holds %d bytes, the commit writes %d packets of %d bytes", len(in), c.Steps, pb)
	}
	if c.CommitSize < 1 || c.CommitSize*c.WritesPerStep > c.CommitInSize {
		return fmt.Errorf("commit: %d writes of %d bytes from a %d-byte packet", c.WritesPerStep, c.CommitSize, c.CommitInSize)
	}
	for step := 0; step < c.Steps; step++ {
		p, err := engines.CommitTruncate(c, in[step*pb:(step+1)*pb])
		if err != nil {
			return err
		}
		for w := 0; w < c.WritesPerStep; w++ {
			off, addr, err := engines.CommitWrite(c, step, w)
			if err != nil {
				return err
			}
			if err := r.x.dev.WriteDM(g, t.Addr+int64(addr), p[off:off+c.CommitSize]); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
	}
	return nil
}

// ---- HBM tensors ----

// hbmLayout walks an HBM tensor's positions: position pos of
// Pair(Chip, Element) is element pos mod |Element| of chip pos / |Element|,
// at byte address Addr + element·bits/8 of that chip's HBM (002 L137,
// L1029-1200).
type hbmLayout struct {
	t      *kernel.Tensor
	prog   *mapping.Program
	per    int
	bits   int
	stride []int // per axis slot: the Logical stride, 0 for axes it lacks
	coords []int
}

func newHBMLayout(p *kernel.Program, t *kernel.Tensor, l *Logical) (*hbmLayout, error) {
	chip := t.Chip
	if chip == nil {
		chip = mapping.Identity()
	}
	e := mapping.Pair(chip, t.Element)
	prog, err := mapping.Compile(e, p.Axes)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	h := &hbmLayout{t: t, prog: prog, per: t.Element.Size(), bits: t.DType.SizeBits(),
		stride: make([]int, prog.Coords()), coords: make([]int, prog.Slots())}
	s := 1
	for i := len(l.Axes) - 1; i >= 0; i-- {
		slot, ok := p.Axes.Slot(l.Axes[i].Name)
		if !ok {
			return nil, fmt.Errorf("tensor %q: axis %s is not declared", t.Name, l.Axes[i].Name)
		}
		h.stride[slot] = s
		s *= l.Axes[i].Size
	}
	return h, nil
}

// logical returns the Logical offset of position pos, or false for padding.
func (h *hbmLayout) logical(pos int) (int, bool) {
	kind, _ := h.prog.Eval(pos, h.coords)
	if kind != mapping.Live {
		return 0, false
	}
	off := 0
	for slot, s := range h.stride {
		off += h.coords[slot] * s
	}
	return off, true
}

// chipBytes is the byte extent of one chip's part of the tensor.
func (h *hbmLayout) chipBytes() int { return (h.per*h.bits + 7) / 8 }

// WriteHBMTensor stores l's values into tensor t's HBM bytes through its
// mappings; positions of t's padding are left as they are.
func WriteHBMTensor(d *Device, p *kernel.Program, t *kernel.Tensor, l *Logical) error {
	h, err := newHBMLayout(p, t, l)
	if err != nil {
		return err
	}
	buf := make([]byte, h.chipBytes())
	for chip := 0; chip < h.prog.Size()/h.per; chip++ {
		if err := d.ReadHBM(chip, t.Addr, buf); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		for e := 0; e < h.per; e++ {
			off, ok := h.logical(chip*h.per + e)
			if !ok {
				continue
			}
			if err := t.DType.Store(buf, e, l.Vals[off]); err != nil {
				return fmt.Errorf("tensor %q at %s: %w", t.Name, l.IndexString(off), err)
			}
		}
		if err := d.WriteHBM(chip, t.Addr, buf); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	return nil
}

// ReadHBMTensor reads tensor t's values from its HBM bytes through its
// mappings.
func ReadHBMTensor(d *Device, p *kernel.Program, t *kernel.Tensor) (*Logical, error) {
	l, _, err := readHBMTensor(d, p, t)
	return l, err
}

// readHBMTensor reads t and, for each Logical offset, the HBM position it
// was read from (-1 when no live position holds it).
func readHBMTensor(d *Device, p *kernel.Program, t *kernel.Tensor) (*Logical, []int, error) {
	l, err := NewLogical(p, t)
	if err != nil {
		return nil, nil, err
	}
	h, err := newHBMLayout(p, t, l)
	if err != nil {
		return nil, nil, err
	}
	from := make([]int, l.Len())
	for i := range from {
		from[i] = -1
	}
	buf := make([]byte, h.chipBytes())
	for chip := 0; chip < h.prog.Size()/h.per; chip++ {
		if err := d.ReadHBM(chip, t.Addr, buf); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		for e := 0; e < h.per; e++ {
			off, ok := h.logical(chip*h.per + e)
			if !ok {
				continue
			}
			v, err := t.DType.Load(buf, e)
			if err != nil {
				return nil, nil, fmt.Errorf("tensor %q: %w", t.Name, err)
			}
			l.Vals[off] = v
			from[off] = chip*h.per + e
		}
	}
	return l, from, nil
}
