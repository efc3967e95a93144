package verify

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"tcpmap/engines"
	"tcpmap/model/kernel"
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
	// hbmBytes[t] marks, a bit a byte, the tainted bytes of an HBM tensor
	// of the kernel's own (an intermediate that is not a view: the cluster
	// reduce's exchange through HBM), whose clean bytes stay clean when
	// other bytes of it are tainted.
	hbmBytes map[string]byteTaint
	origin   map[string][]int32
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
		plans: make([]*chainPlan, len(p.Ops)), tainted: map[string][]bool{}, hbmTainted: map[string]bool{}, hbmBytes: map[string]byteTaint{}, origin: map[string][]int32{}, originSrc: map[string][]int64{},
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

// RunHandoffs runs the program's handoffs of one kind
// (kernel.Program.Handoff) on the executor's device, with its run set and
// sampling bookkeeping: the to_dm ones before Run, to set the DM the
// previous kernel left; the to_hbm ones after it, to read the DM the kernel
// leaves to the next one into its HBM result.
func (x *Executor) RunHandoffs(kind kernel.OpKind) error {
	q := &kernel.Program{Name: x.prog.Name, Axes: x.prog.Axes, Chips: x.prog.Chips, Tensors: x.prog.Tensors, Reference: x.prog.Reference}
	for _, op := range x.prog.Handoff {
		if op.Kind == kind {
			q.Ops = append(q.Ops, op)
		}
	}
	y := &Executor{spec: x.spec, prog: q, dev: x.dev, run: x.run, allocs: x.allocs, tainted: x.tainted,
		hbmTainted: x.hbmTainted, hbmBytes: x.hbmBytes, origin: x.origin, originSrc: x.originSrc}
	for i, op := range q.Ops {
		if op.DMA == nil {
			return fmt.Errorf("handoff %d (%s): no DMA command: lower the program first (engines.Lower)", i, op.Kind)
		}
		if err := engines.CheckDMACommand(x.spec, op.DMA); err != nil {
			return fmt.Errorf("handoff %d (%s): %w", i, op.Kind, err)
		}
		if err := y.runDMA(op); err != nil {
			return fmt.Errorf("handoff %d (%s): %w", i, op.Kind, err)
		}
	}
	return nil
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
