package search

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// The mapspace of a Vector Engine op (softmax, rmsnorm, the elementwise
// kinds). An op's tensors start and end in HBM; the kernel brings its
// input to DM, streams it through the Vector Engine's intra-slice block
// (fetch, collect, the stages of the op, commit) and writes the output
// back. What the space chooses:
//
//   - the spatial split: the op's independent positions (the rows of a
//     softmax or rmsnorm, every element of an elementwise op), in the
//     tensor's row-major order, over the chip's clusters and each
//     cluster's slices (1 or 2 clusters, 1 to 256 slices; a reduction
//     stays within a slice: the Intra-Slice Reduce reduces one slice's
//     stream, 002 L5278-5300);
//   - the form, where an op has more than one (softmax: the maximum
//     recomputed in each pass over DM, or exp(x − max) stored in DM
//     once);
//   - what follows from these: the Time and Packet of the stream (8 f32
//     lanes a packet, the Float stages at Way4, 002 L4549-4560), the DM
//     and VRF tensors, the casts. An input of a binary elementwise op may
//     lack some of the output's axes (a broadcast): its DM tensor holds
//     its own axes, the fetch reads the others with stride 0, and a tile
//     loop over axes it lacks loads it once.
//
// Every candidate is built (opkernel.go), lowered by engines.Lower (a
// broken rule rejects it under the rule's ID: a DM or VRF overflow, a
// fetch's slice count, …) and priced by cost.Model. The space is a few
// dozen candidates, so it is enumerated whole: the cheapest is optimal by
// enumeration ("exhaustive"). A tensor larger than the chip's DM is not
// tiled (no candidate fits; the capacity rule is named).

// opCand is a point of an op's mapspace.
type opCand struct {
	// Tiles splits the op's positions in time first (the outermost, in
	// row-major order): each tile is brought to DM, computed and written
	// back, two DM buffers alternating so that the next tile's load and
	// the last tile's store overlap this tile's chains. Clusters and
	// Slices split a tile's positions spatially.
	Tiles, Clusters, Slices int
	// Stagger offsets the output's HBM address by this many bytes past
	// its 256 MiB boundary, so that the tiles' loads and stores, issued
	// together, fall on other HBM banks (1 MiB: address bit 20; 16 GiB:
	// bit 34; both select the HBM slice, 002 L2966-2975).
	Stagger int64
	// Form is the kernel's form (opForms).
	Form string
	// MainLoad loads softmax's row sum into the VRF from the main context
	// instead of the sub one (always, when tiled).
	MainLoad bool
	// Inner is, for a reduce, how many packets of the kept innermost axis
	// sit inside the reduced axis in DM (1, 2 or 4: the reduce's 8
	// accumulator slots hold 2 Way4 halves of each): longer DMA runs.
	Inner int
	// Interleave, when set, deals a tile's positions out to the clusters
	// and DMNs a chunk of Interleave positions at a time (interleavePeel):
	// the DMNs' concurrent streams then read neighbouring HBM addresses,
	// in the same DRAM rows, instead of blocks a DMN's share apart, whose
	// rows conflict in every bank (002 L2987-2989).
	Interleave int
	// KeepIn and KeepOut, set by PlanChain only, name an input and the
	// output whose tiles each get a DM buffer of their own instead of two
	// alternating ones, so that every tile of the input was in DM when the
	// kernel began (left by the previous kernel) and every tile of the
	// output still is when it ends (left for the next).
	KeepIn, KeepOut string
	// HBMOrder, for a reduce, lays the input's tile out in DM in its HBM
	// order (the reduced axis whole where the input holds it) instead of
	// the stream's order: the DMA then moves the HBM layout's contiguous
	// runs whole, and the fetch walks DM in the stream's order.
	HBMOrder bool
	// Spread, for a tile over fewer slices than a cluster has, puts them
	// evenly over the cluster's slices (the padding below the positions'
	// slice digits: `G, 1 # 16`) instead of on the first ones: the DMA
	// then runs on as many DMNs, one per 32 slices (002 L2867-2868),
	// each a DMN's 128 B/cycle (002 L2603), rather than on one or two.
	Spread bool
}

// opSpace is an op's mapspace.
type opSpace struct {
	w    *workload.Workload
	o    *workload.Op
	spec *engines.Spec
	// family is "map" (elementwise), "rows" (a reduction along Red),
	// "reduce", "slice" (an update_slice, opslice.go), "gather" or
	// "scatter" (opgather.go).
	family string
	// ins are the tensor inputs (a scalar stands for none), out the output.
	ins []*workload.Tensor
	out *workload.Tensor
	// pos are the digits of the positions the space splits: every axis of
	// the output (map) or every axis but Red (rows), size-1 axes left out.
	pos []digit
	// red is the reduced axis of a rows op (of a reduce, its innermost);
	// reds a reduce's reduced axes in the input's HBM order.
	red  digit
	reds []digit
	// integer is set for an op on i32 tensors (the Fxp cluster, Way8).
	integer bool
	// bits names the i32 tensors of a pack (its index and output) or an
	// unpack (its input), held in DM as f32: the same bytes, which the
	// kernel streams as f32 bits (dmType).
	bits []string
	// order is each tensor's axes in its HBM order (its layout, or its
	// declared order).
	order map[string][]string
	// axes is the program's axes declaration.
	axes  string
	cands []opCand
	// lowerers holds each worker's lowerer, keyed by the worker's cost
	// model (*cost.Model → *lowerer; lower).
	lowerers *sync.Map
}

// maxOpTiles bounds an op's tiles: 64 tiles of a 16 MB tensor are 256 KB
// transfers, past which a transfer's fixed cost outweighs the overlap.
const maxOpTiles = 64

// opUnplannable says why the kinds the manual gives no means for have no
// kernel.
var opUnplannable = map[workload.Kind]string{
	workload.KindCausalMask: "the op has no mask input: the manual writes an attention_mask tensor to the branch log and " +
		"loads the ExecutionIds from the VRF (BranchMode::Vrf, 002 L4802, L8099), states neither the Branch Logger nor " +
		"the VRF tensor it reads, and has no means to make the mask from the axes' indices; give the op a second input " +
		"with values {kind: causal, query: Q, key: K}, which its kernel adds",
	workload.KindCumsum: "the manual's cumsum is a static branch logger whose ExecutionIds the Vector Engine loads from " +
		"the VRF (002 L8620, L8708-8720; BranchMode::Vrf, 002 L4802), and neither the Branch Logger nor that VRF tensor " +
		"is stated (engines: BranchMode::Vrf is not modelled)",
	workload.KindTopK: "the manual's branchless top-k packs each score with its expert index, compares all E x E pairs, " +
		"sums the ranks and compacts with the Filter (002 L8534-8590): a pipeline of kernels, not planned as one op " +
		"(docs/spec-decisions.md \"Top-k: the manual's branchless form\")",
	workload.KindOneHot: "a one-hot compares each index with its position along the new axis, which needs that position " +
		"as a value (the manual's Expert_Indices tensor, 002 L8623): give the op a second input over its new axis A " +
		"with values {kind: iota, axis: A}, which its kernel compares with",
}

// formInterleaved is the form of a float add of two tensors (an add, a
// causal mask's add of its mask) that fetches both from DM interleaved
// instead of loading the second into the VRF (interleavedAdd).
const formInterleaved = plan.FormInterleaved

// opForms lists the forms of each kind with more than one.
var opForms = map[workload.Kind][]string{
	workload.KindSoftmax: {"recompute", "stored"},
}

// newOpSpace derives the mapspace of o, or says why the op has none.
func newOpSpace(w *workload.Workload, o *workload.Op, spec *engines.Spec) (*opSpace, error) {
	at := fmt.Sprintf("%s:%d: op %s (%s)", w.File, o.Line, o.Name, o.Kind)
	s := &opSpace{w: w, o: o, spec: spec, out: w.Tensor(o.Outputs[0]), lowerers: &sync.Map{}}
	// A `scalar:` stands for the last input and is not listed.
	for _, name := range o.Inputs {
		s.ins = append(s.ins, w.Tensor(name))
	}
	switch o.Kind {
	case workload.KindUpdateSlice:
		return s.sliceSpace(at)
	case workload.KindGather:
		return s.gatherSpace(at)
	case workload.KindScatter:
		return s.scatterSpace(at)
	case workload.KindSoftmax, workload.KindRMSNorm:
		s.family = "rows"
	case workload.KindReduce:
		s.family = "reduce"
	case workload.KindAdd, workload.KindSub, workload.KindMul, workload.KindExp, workload.KindSigmoid, workload.KindSiLU, workload.KindCast,
		workload.KindCopy, workload.KindGT, workload.KindGE, workload.KindCeilDiv, workload.KindWhere, workload.KindSortKey, workload.KindBitAnd:
		s.family = "map"
	case workload.KindPack, workload.KindUnpack:
		// f32 streams: a bf16 widened to f32 is its bits shifted left 16
		// (the manual's "Score << 16", 002 L8547), and the i32 side is
		// read or written as f32 by the DMA, which moves bytes (the
		// manual's "reinterpreted as bf16 type", 002 L8589; dmType).
		s.family = "map"
		s.bits = o.Inputs[:1]
		if o.Kind == workload.KindPack {
			s.bits = append(o.Inputs[1:2:2], o.Outputs[0])
		}
	case workload.KindOneHot:
		if len(o.Inputs) != 2 {
			return nil, fmt.Errorf("%s: no kernel: %s (docs/spec-decisions.md \"One-hot: an equality with the positions\")", at, opUnplannable[o.Kind])
		}
		// [x == pos] of the indices and the positions (the workload
		// checks their iota rule): an i32 op of two tensors.
		s.family = "map"
	case workload.KindCausalMask:
		if len(o.Inputs) != 2 {
			return nil, fmt.Errorf("%s: no kernel: %s (docs/spec-decisions.md \"Causal mask: an additive mask input\")", at, opUnplannable[o.Kind])
		}
		// x + mask, the mask's values a causal rule (workload.Values;
		// the workload checks it is the op's): an add of two tensors.
		s.family = "map"
	default:
		if why, ok := opUnplannable[o.Kind]; ok {
			return nil, fmt.Errorf("%s: no kernel: %s (docs/spec-decisions.md \"Ops without a kernel\")", at, why)
		}
		return nil, fmt.Errorf("%s: no kernel for this kind yet", at)
	}
	s.integer = s.out.DType == dtype.I32 && o.Kind != workload.KindPack
	s.order = map[string][]string{}
	for _, t := range append(slices.Clone(s.ins), s.out) {
		ord, err := layoutOrder(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
		s.order[t.Name] = ord
		switch {
		case slices.Contains(s.bits, t.Name):
		case s.integer && t.DType != dtype.I32:
			return nil, fmt.Errorf("%s: tensor %s is %s, the output i32; an op's tensors are all i32 or all floats", at, t.Name, t.DType)
		case !s.integer && t.DType != dtype.F32 && t.DType != dtype.BF16:
			return nil, fmt.Errorf("%s: tensor %s is %s; the Vector Engine ops are planned for f32, bf16 and i32 tensors", at, t.Name, t.DType)
		}
	}
	if s.integer {
		switch o.Kind {
		case workload.KindAdd, workload.KindSub, workload.KindMul, workload.KindGT, workload.KindGE, workload.KindReduce, workload.KindOneHot,
			workload.KindSortKey, workload.KindBitAnd:
		case workload.KindWhere:
			if o.Scalar == nil || len(s.ins) != 2 {
				return nil, fmt.Errorf("%s: where(condition, tensor, constant) is planned: two tensor inputs and a scalar", at)
			}
		case workload.KindCeilDiv:
			// ceil(x / 2^k) = (x + 2^k − 1) >> k for x ≥ 0: a power-of-two
			// divisor only.
			if o.Scalar == nil || *o.Scalar < 1 || *o.Scalar > 1<<30 || bits.OnesCount64(uint64(*o.Scalar)) != 1 {
				return nil, fmt.Errorf("%s: ceil_div by a power-of-two constant is planned, not by %v", at, o.Scalar)
			}
		default:
			return nil, fmt.Errorf("%s: an i32 %s is not planned (the Fxp cluster's add, sub, mul and the comparisons with a constant are)", at, o.Kind)
		}
		if o.Scalar != nil && (*o.Scalar != math.Trunc(*o.Scalar) || math.Abs(*o.Scalar) >= 1<<31) {
			return nil, fmt.Errorf("%s: scalar %v is not an i32", at, *o.Scalar)
		}
	}
	if o.Kind == workload.KindWhere && !s.integer {
		return nil, fmt.Errorf("%s: an i32 where is planned (its select runs in the Logic and Fxp clusters)", at)
	}
	if (o.Kind == workload.KindGT || o.Kind == workload.KindGE) && (!s.integer || o.Scalar == nil && o.Kind == workload.KindGE) {
		return nil, fmt.Errorf("%s: an i32 compared with a constant, or two i32 tensors by gt, is planned", at)
	}
	if s.family == "reduce" {
		if err := s.reduceAxes(at); err != nil {
			return nil, err
		}
	}
	for _, t := range s.ins {
		switch {
		case s.family == "reduce", sameAxes(t.Axes, s.out.Axes):
		case s.family == "map" && len(s.ins) == 2 && subsetAxes(t.Axes, s.out.Axes):
			// A broadcast input of a binary elementwise op: its DM tensor
			// holds its own axes only, and the fetch reads the axes it
			// lacks with stride 0 (a broadcasting read, 002 L1533-1566;
			// the DMA replicates it over slices that differ in those axes,
			// docs/spec-decisions.md "DMA: broadcast reads").
		default:
			return nil, fmt.Errorf("%s: input %s has axes %v, the output %v; an input with axes the output lacks, or a broadcast input of an op other than a binary elementwise one, is not planned", at, t.Name, t.Axes, s.out.Axes)
		}
	}
	if o.Kind == workload.KindCopy && s.integer {
		return nil, fmt.Errorf("%s: a copy of f32 or bf16 is planned, not of i32", at)
	}
	if s.family == "map" && o.Scalar == nil && len(s.ins) != 2 && !slices.Contains([]workload.Kind{workload.KindExp, workload.KindSigmoid, workload.KindSiLU,
		workload.KindCast, workload.KindCopy, workload.KindUnpack, workload.KindSortKey}, o.Kind) {
		return nil, fmt.Errorf("%s: want two tensor inputs or a scalar", at)
	}
	// The program's axes, and the positions in the output's HBM order
	// (its layout, or its declared order): the DM tensors hold them
	// row-major in that order, the reduced axis innermost; the DMA
	// relays out a tensor stored in another order.
	var names []string
	axesOf := s.out.Axes
	if s.family == "reduce" {
		axesOf = s.ins[0].Axes
	}
	for _, a := range axesOf {
		if size, _ := w.AxisSize(a); size > 1 {
			names = append(names, fmt.Sprintf("%s=%d", a, size))
		}
	}
	for _, a := range s.order[s.out.Name] {
		size, _ := w.AxisSize(a)
		if size == 1 {
			continue
		}
		d := digit{axis: a, full: int(size), div: 1, size: int(size)}
		if s.family == "rows" && a == o.Axis {
			s.red = d
			continue
		}
		s.pos = append(s.pos, d)
	}
	if s.family == "reduce" {
		s.red = s.reds[len(s.reds)-1] // the innermost, reduced first
	}
	s.axes = strings.Join(names, ", ")
	if s.family == "rows" {
		if s.red.axis == "" {
			return nil, fmt.Errorf("%s: the axis %s has size 1: nothing to reduce", at, o.Axis)
		}
		if s.red.size%8 != 0 {
			return nil, fmt.Errorf("%s: the reduced axis %s = %d is not a multiple of the packet's 8 f32 lanes", at, o.Axis, s.red.size)
		}
	}
	forms := opForms[o.Kind]
	if forms == nil {
		forms = []string{string(o.Kind)}
	}
	if s.family == "map" && len(s.ins) == 2 && !s.integer && (o.Kind == workload.KindAdd || o.Kind == workload.KindCausalMask) {
		// The sum of two DM tensors without the VRF: an interleaved fetch
		// of both, the pair's groups added (interleavedAdd).
		forms = append(forms, formInterleaved)
	}
	total := digitsSize(s.pos)
	perCluster := spec.Cluster.Slices.Value
	for _, form := range forms {
		for tl := 1; tl <= maxOpTiles; tl *= 2 {
			for cl := 1; cl <= spec.Chip.Clusters.Value; cl *= 2 {
				for sl := 1; sl <= perCluster; sl *= 2 {
					if cl > 1 && sl < perCluster || total%(tl*cl*sl) != 0 || tl > 1 && (!s.tileable(tl) || s.bits != nil) {
						continue
					}
					main := o.Kind == workload.KindSoftmax && tl > 1
					if s.family == "reduce" {
						for _, in := range []int{1, 2, 4} {
							s.cands = append(s.cands, opCand{Tiles: tl, Clusters: cl, Slices: sl, Form: form, Inner: in})
							s.cands = append(s.cands, opCand{Tiles: tl, Clusters: cl, Slices: sl, Form: form, Inner: in, HBMOrder: true})
						}
						continue
					}
					s.cands = append(s.cands, opCand{Tiles: tl, Clusters: cl, Slices: sl, Form: form, MainLoad: main})
					if ch := s.interleaveChunk(); cl*sl >= 2*spec.Cluster.SlicesPerDMN.Value && s.tileSpansRows(tl) {
						// The DMNs' shares dealt out a chunk at a time.
						s.cands = append(s.cands, opCand{Tiles: tl, Clusters: cl, Slices: sl, Form: form, MainLoad: main, Interleave: ch})
					}
					if o.Kind == workload.KindSoftmax && tl == 1 {
						s.cands = append(s.cands, opCand{Tiles: tl, Clusters: cl, Slices: sl, Form: form, MainLoad: true})
					}
					if tl > 1 {
						// The stores of tile k and the loads of tile k + 2
						// are issued together: the output one HBM slice
						// bit away from the input spreads them over other
						// banks — bit 20, which a tile of 1 MB or more
						// spans itself, or bit 34, the third slice of
						// every channel (002 L2966-2975), whose banks no
						// input of a 16 GiB region touches.
						for _, st := range []int64{1 << 20, 1 << 34} {
							s.cands = append(s.cands, opCand{Tiles: tl, Clusters: cl, Slices: sl, Form: form, Stagger: st, MainLoad: main})
						}
					}
				}
			}
		}
	}
	// The untiled candidates over one cluster's 2 to 128 slices again,
	// those slices spread over the cluster's DMNs (opCand.Spread). A tiled
	// kernel spreads its tiles over the slices instead.
	for _, c := range s.cands[:len(s.cands):len(s.cands)] {
		if c.Tiles == 1 && c.Clusters == 1 && c.Slices > 1 && c.Slices < perCluster && c.Interleave == 0 {
			c.Spread = true
			s.cands = append(s.cands, c)
		}
	}
	return s, nil
}

// dmType is the type t is held in DM as: f32 for the i32 tensors a pack
// or an unpack streams as f32 bits (the DMA moves bytes, whatever the
// type, docs/spec-decisions.md "Top-k: the manual's branchless form"),
// else its own.
func (s *opSpace) dmType(t *workload.Tensor) dtype.DType {
	if slices.Contains(s.bits, t.Name) {
		return dtype.F32
	}
	return t.DType
}

// interleavePeel splits a tile's positions ds (major first) over clusters
// × slices with each DMN's share dealt out a chunk at a time: from the
// minor side, a chunk of positions stays within a slice, the cluster and
// DMN digits sit just above it, and the slice within its DMN (perDMN
// slices, 002 L2867-2868) takes the major part; a slice holds the rest.
// Position p of the tile is then [slice in DMN, rest, cluster, DMN,
// chunk], so the DMNs' DMA streams advance side by side through HBM. The
// slice digits are the DMN's, major, then the slice's within it.
func interleavePeel(ds []digit, clusters, slices, perDMN, chunk int) (clD, slD, in []digit, ok bool) {
	if perDMN < 1 || slices%perDMN != 0 || clusters*slices/perDMN < 2 {
		return nil, nil, nil, false
	}
	dmns := slices / perDMN
	n := digitsSize(ds)
	if chunk < 1 || n%(clusters*dmns*chunk) != 0 {
		return nil, nil, nil, false
	}
	outer, c, ok := peel(ds, n/chunk)
	if !ok {
		return nil, nil, nil, false
	}
	a, b, ok := peel(outer, n/chunk/(clusters*dmns))
	if !ok {
		return nil, nil, nil, false
	}
	clD, dmnD, ok := peel(b, clusters)
	if !ok {
		return nil, nil, nil, false
	}
	inDMN, rest, ok := peel(a, perDMN)
	if !ok {
		return nil, nil, nil, false
	}
	return clD, append(dmnD, inDMN...), append(rest, c...), true
}

// interleaveChunk is the chunk of positions a DMN takes in turn
// (opCand.Interleave): the fewest positions whose every streamed tensor
// moves at least one 256-byte HBM unit (002 L2984-2985: a shorter run is a
// partial unit), a power of two.
func (s *opSpace) interleaveChunk() int {
	per := 1 // positions' elements: a rows op's row
	if s.family == "rows" {
		per = s.red.size
	}
	minBits := 0
	for _, t := range append(slices.Clone(s.ins), s.out) {
		if b := t.DType.SizeBits(); minBits == 0 || b < minBits {
			minBits = b
		}
	}
	unit := int(s.spec.HBM.AccessUnitBytes.Value) * 8
	c := 1
	for c*per*minBits < unit {
		c *= 2
	}
	return c
}

// tileSpansRows reports whether a tile of some tensor of the op, in tiles
// tiles, spans more than one DRAM row of every bank: more bytes than the
// addresses below the lowest row bit (2 MiB, 002 L2971). Below that the
// DMNs' blocks of a tile share their rows however they are dealt out, so
// the space holds no interleaved candidate for it (opCand.Interleave).
func (s *opSpace) tileSpansRows(tiles int) bool {
	low := -1
	for _, b := range s.spec.HBM.AddressBits.Row.Value {
		if low < 0 || b < low {
			low = b
		}
	}
	if low < 0 {
		return false
	}
	for _, t := range append(slices.Clone(s.ins), s.out) {
		if t.Elems*int64(t.DType.SizeBits())/8/int64(tiles) > 1<<low {
			return true
		}
	}
	return false
}

// layoutOrder is t's axes in its HBM order: its declared order, or the
// order its layout lists them in when the layout is a row-major order of
// its axes (the layouts graph planning gives tensors); any other layout
// is refused.
func layoutOrder(t *workload.Tensor) ([]string, error) {
	if t.LayoutExpr == nil {
		return t.Axes, nil
	}
	var ord []string
	text := strings.TrimSuffix(strings.TrimPrefix(t.LayoutExpr.Text(), "m!["), "]")
	for _, f := range strings.Split(text, ",") {
		ord = append(ord, strings.TrimSpace(f))
	}
	if !sameAxes(ord, t.Axes) {
		return nil, fmt.Errorf("tensor %s has the layout %s, not a row-major order of its axes %v; only those are planned", t.Name, t.Layout, t.Axes)
	}
	return ord, nil
}

// sameAxes reports whether a and b hold the same axes, in any order.
func sameAxes(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// subsetAxes reports whether every axis of a is one of b's.
func subsetAxes(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// held is the digits of ds on axes tensor t holds (a broadcast input
// holds fewer than the positions).
func held(ds []digit, t *workload.Tensor) []digit {
	var out []digit
	for _, d := range ds {
		if slices.Contains(t.Axes, d.axis) {
			out = append(out, d)
		}
	}
	return out
}

// inHBMOrder returns ds ordered as the axes of order (a tensor's HBM
// order), the digits of one axis in their order.
func inHBMOrder(ds []digit, order []string) []digit {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b digit) int {
		return slices.Index(order, a.axis) - slices.Index(order, b.axis)
	})
	return out
}

// tileable reports whether n tiles of the positions are contiguous in
// every tensor's HBM order: the tile digits are the positions' outer part
// (peel: whole axes, then an outer part of the next), whose axes must be
// every tensor's outermost axes in that order (size-1 axes aside), so
// that tile k is the k-th n-th of each tensor's bytes. More than one axis
// tiles a tensor whose outermost axis is short: the prefill scores
// [G = 8, Hkv = 8, Sq, Sk] in 64 tiles of G and Hkv.
func (s *opSpace) tileable(n int) bool {
	outer, _, ok := peel(s.pos, n)
	if len(s.pos) == 0 || !ok || len(outer) == 0 {
		return false
	}
	for _, t := range append(slices.Clone(s.ins), s.out) {
		// A broadcast input that holds none of the tile digits' axes is
		// loaded once, for every tile; one that holds some of them but not
		// all is not tiled.
		tout := outer
		if s.family == "map" {
			if tout = held(outer, t); len(tout) == 0 {
				continue
			} else if len(tout) < len(outer) {
				return false
			}
		}
		k := 0
		for _, a := range s.order[t.Name] {
			if k == len(tout) {
				break
			}
			if size, _ := s.w.AxisSize(a); size > 1 {
				if a != tout[k].axis {
					return false
				}
				k++
			}
		}
		if k < len(tout) {
			return false
		}
	}
	return true
}

// resident reports whether input t of candidate c is loaded once for
// every tile: a broadcast input holding none of the tile digits' axes.
func (s *opSpace) resident(t *workload.Tensor, tiles int) bool {
	if s.family != "map" || tiles == 1 || t == s.out {
		return false
	}
	outer, _, _ := peel(s.pos, tiles)
	return len(held(outer, t)) == 0
}

// sliceText is a tensor's Slice mapping over the digits ds of n slices: a
// fetch reads 64, 128 or 256 slices (002 L1751-1754), so fewer are padded
// to 64 or 128 (`1 # 4, G` puts G on the first slices), or spread over a
// cluster's slices (`G, 1 # 64` puts G on every 64th: opCand.Spread).
func (s *opSpace) sliceText(ds []digit, n int, spread bool) string {
	pad := 64
	for pad < n {
		pad *= 2
	}
	if spread && len(ds) > 0 {
		pad = s.spec.Cluster.Slices.Value
		return fmt.Sprintf("%s, 1 # %d", digitsText(ds), pad/n)
	}
	if n == pad {
		return digitsText(ds)
	}
	if len(ds) == 0 {
		return fmt.Sprintf("1 # %d", pad)
	}
	return fmt.Sprintf("1 # %d, %s", pad/n, digitsText(ds))
}

// build writes candidate c's kernel program.
func (s *opSpace) build(c opCand) (*kernel.Program, error) {
	switch s.family {
	case "slice":
		return s.buildSlice()
	case "gather":
		return s.buildGather()
	case "scatter":
		return s.buildScatter()
	}
	_, afterTile, ok := peel(s.pos, c.Tiles)
	if !ok {
		return nil, fmt.Errorf("%d tiles do not divide the positions", c.Tiles)
	}
	var clD, slD, in []digit
	if c.Interleave > 0 {
		if clD, slD, in, ok = interleavePeel(afterTile, c.Clusters, c.Slices, s.spec.Cluster.SlicesPerDMN.Value, c.Interleave); !ok {
			return nil, fmt.Errorf("the positions of a tile (%s) do not deal out to %d clusters × %d slices in chunks of %d", digitsText(afterTile), c.Clusters, c.Slices, c.Interleave)
		}
	} else {
		rest := afterTile
		if clD, rest, ok = peel(rest, c.Clusters); !ok {
			return nil, fmt.Errorf("%d clusters do not divide the positions", c.Clusters)
		}
		if slD, in, ok = peel(rest, c.Slices); !ok {
			return nil, fmt.Errorf("%d slices do not divide the positions", c.Slices)
		}
	}
	b := &opBuilder{s: s, c: c, k: kProg{Name: s.o.Name, Axes: s.axes, Chips: 1}, bufs: map[string][]string{}}
	if c.Form == formInterleaved {
		b.k.Axes += ", " + interleaveAxis + "=2"
	}
	b.cluster = fmt.Sprintf("1 # %d", s.spec.Chip.Clusters.Value)
	if c.Clusters > 1 {
		b.cluster = digitsText(clD)
	}
	b.slice = s.sliceText(slD, c.Slices, c.Spread)
	b.in = in
	// The per-slice digits of a streamed tensor: the positions within the
	// slice, then the reduced axis (rows); for a reduce, the input's axes
	// in its order, the reduced one whole, the output's the positions.
	ds := slices.Clone(in)
	if s.family == "rows" {
		ds = append(ds, s.red)
	}
	dsOf := func(t *workload.Tensor) []digit {
		if s.family == "reduce" {
			if t == s.out {
				return in
			}
			if c.HBMOrder {
				return s.mixReduced(in)
			}
			el, _ := s.reduceEl(in, c.Inner, s.reds)
			return el
		}
		return held(ds, t)
	}
	if s.family == "reduce" && !s.reducible(in, c.Inner) {
		return nil, fmt.Errorf("the positions within a slice (%s) do not end in a multiple of 8 of one axis", digitsText(in))
	}
	// HBM tensors: inputs, then the output, each at its own 256 MiB
	// multiple (a whole number of HBM interleaving periods). A tile is a
	// view of its tensor (kernel.Tensor.View): the tile digits pinned to
	// the tile's first position, at the tile's byte offset (the tile
	// digits are the outermost, so a tile is contiguous).
	var hbm int64
	views := map[string][]string{}
	for _, t := range append(slices.Clone(s.ins), s.out) {
		role, pad := "input", "#"
		if t == s.out {
			role, pad = "output", "#{!}"
		}
		b.k.Tensors = append(b.k.Tensors, kTensor{Name: t.Name, Mem: "hbm", DType: t.DType.String(), Role: role, Chip: "1",
			Element: b.hbmElement(t), Addr: hbm})
		bytes := t.Elems * int64(t.DType.SizeBits()) / 8
		if c.Tiles > 1 && !s.resident(t, c.Tiles) {
			// The tensor's element with the tile digits pinned: `S, T`
			// in 16 tiles of S is `1 # 16, S % 128, T` (the form the
			// emitter's tile loop, kernel.Recognize, reads back).
			vd := held(append(slices.Clone(afterTile), ds[len(in):]...), t)
			if s.family == "reduce" && t != s.out {
				vd = s.mixReduced(afterTile)
			}
			// In the tensor's own HBM order: a tile of an input stored in
			// another order than the output's holds its bytes so (the
			// tile digits are outermost in every order, tileable).
			vd = inHBMOrder(vd, s.order[t.Name])
			el := fmt.Sprintf("1 %s %d, %s", pad, c.Tiles, digitsText(vd))
			for k := 0; k < c.Tiles; k++ {
				v := fmt.Sprintf("%s_t%d", t.Name, k)
				b.k.Tensors = append(b.k.Tensors, kTensor{Name: v, Mem: "hbm", DType: t.DType.String(), Role: "intermediate", Chip: "1",
					Element: el, Addr: hbm + int64(k)*bytes/int64(c.Tiles), View: t.Name, tile: k})
				views[t.Name] = append(views[t.Name], v)
			}
		} else {
			views[t.Name] = []string{t.Name}
		}
		hbm += alignUp(bytes, 256<<20)
		if t == s.ins[len(s.ins)-1] {
			hbm += c.Stagger
		}
	}
	// The streamed DM tensors: one buffer, two alternating, or one a tile
	// (Keep).
	for _, t := range append(slices.Clone(s.ins), s.out) {
		nbuf := min(c.Tiles, 2)
		switch {
		case s.resident(t, c.Tiles):
			nbuf = 1
		case t.Name == c.KeepIn || t.Name == c.KeepOut:
			nbuf = c.Tiles
		}
		var bb []string
		for k := 0; k < nbuf; k++ {
			name := t.Name + "_dm"
			if nbuf > 1 {
				name += strconv.Itoa(k)
			}
			bb = append(bb, b.local(name, "dm", s.dmType(t), digitsText(dsOf(t)), digitsSize(dsOf(t))))
		}
		b.bufs[t.Name] = bb
	}
	toDM := func(k int) {
		for _, t := range s.ins {
			if s.resident(t, c.Tiles) {
				if k == 0 {
					b.k.Ops = append(b.k.Ops, kOp{Context: "dma", Kind: "to_dm", Src: t.Name, Dst: b.bufs[t.Name][0]})
				}
				continue
			}
			b.k.Ops = append(b.k.Ops, kOp{Context: "dma", Kind: "to_dm", Src: views[t.Name][k], Dst: b.tileBuf(t.Name, k)})
		}
	}
	toDM(0)
	if c.Tiles > 1 {
		toDM(1)
	}
	for k := 0; k < c.Tiles; k++ {
		b.buf = k
		var err error
		switch s.o.Kind {
		case workload.KindSoftmax:
			err = b.softmax()
		case workload.KindRMSNorm:
			err = b.rmsnorm()
		case workload.KindReduce:
			err = b.reduce()
		default:
			err = b.elementwise()
		}
		if err != nil {
			return nil, err
		}
		b.k.Ops = append(b.k.Ops, kOp{Context: "dma", Kind: "to_hbm", Src: b.tileBuf(s.out.Name, k), Dst: views[s.out.Name][k]})
		if k+2 < c.Tiles {
			toDM(k + 2)
		}
	}
	b.k.orderTensors()
	return b.k.program()
}

// orderTensors puts the HBM arguments and result first, then the tile
// views by tile, each tile's in the order the ops take them, then the
// on-chip tensors: the
// order kernel.Recognize reads a tile loop in (the emitter prints a tiled
// program as one loop over its tiles).
func (k *kProg) orderTensors() {
	byName := map[string]kTensor{}
	var args, locals []kTensor
	for _, t := range k.Tensors {
		byName[t.Name] = t
		switch {
		case t.Mem == "hbm" && t.View == "":
			args = append(args, t)
		case t.Mem != "hbm":
			locals = append(locals, t)
		}
	}
	var views []kTensor
	seen := map[string]bool{}
	for _, op := range k.Ops {
		for _, n := range []string{op.Src, op.Dst} {
			if t, ok := byName[n]; ok && t.View != "" && !seen[n] {
				seen[n] = true
				views = append(views, t)
			}
		}
	}
	sort.SliceStable(views, func(i, j int) bool { return views[i].tile < views[j].tile })
	k.Tensors = append(append(args, views...), locals...)
}

// opBuilder writes one candidate's program.
type opBuilder struct {
	s *opSpace
	c opCand
	k kProg
	// cluster and slice are the DM tensors' Cluster and Slice mappings; in
	// the digits of the positions within a slice.
	cluster, slice string
	in             []digit
	// bufs are the DM buffers of each streamed tensor (one, two that
	// alternate between tiles, or one a tile: opCand.Keep), buf the
	// current tile.
	bufs map[string][]string
	buf  int
	// dm and vrf are the next free byte of a slice's DM and VRF.
	dm, vrf int64
}

// hbmElement is an HBM tensor's Element: its axes of size above 1.
func (b *opBuilder) hbmElement(t *workload.Tensor) string {
	var e []string
	for _, a := range b.s.order[t.Name] {
		if n, _ := b.s.w.AxisSize(a); n > 1 {
			e = append(e, a)
		}
	}
	if len(e) == 0 {
		return "1"
	}
	return strings.Join(e, ", ")
}

// local adds a DM or VRF tensor of elems elements (per slice) and returns
// its name. DM tensors start at 256-byte boundaries, VRF ones at 32-byte.
// A tile's chains ask again for the tensors the first tile's created:
// they are the same (a DM or VRF tensor of that name and memory).
func (b *opBuilder) local(name, mem string, dt dtype.DType, element string, elems int) string {
	for b.k.hasTensor(name) {
		if b.k.isLocal(name, mem) {
			return name
		}
		name += "_"
	}
	bytes := int64(elems) * int64(dt.SizeBits()) / 8
	at := &b.dm
	align := int64(256)
	if mem == "vrf" {
		at, align = &b.vrf, 32
	}
	*at = alignUp(*at, align)
	b.k.Tensors = append(b.k.Tensors, kTensor{Name: name, Mem: mem, DType: dt.String(), Role: "intermediate", Chip: "1",
		Cluster: b.cluster, Slice: b.slice, Element: element, Addr: *at})
	*at += bytes
	return name
}

func (k *kProg) isLocal(name, mem string) bool {
	for _, t := range k.Tensors {
		if t.Name == name {
			return t.Mem == mem && t.Role == "intermediate"
		}
	}
	return false
}

func (k *kProg) hasTensor(name string) bool {
	for _, t := range k.Tensors {
		if t.Name == name {
			return true
		}
	}
	return false
}

// stream is the fetch, collect and vector head of a main chain over DM
// tensor src whose per-slice digits are ds: the stream in f32 packets of
// 8 lanes, split to Way4 for the Float stages.
func stream(src string, ds []digit) ([]kStage, []digit, []digit, error) {
	t8, p8, ok := withPacket(ds, 8)
	if !ok {
		return nil, nil, nil, fmt.Errorf("the positions within a slice (%s) do not end in a multiple of 8 of one axis", digitsText(ds))
	}
	t4, p4, _ := withPacket(ds, 4)
	return []kStage{
		{Kind: "begin", Tensor: src},
		{Kind: "fetch", DType: "f32", Time: digitsText(t8), Packet: digitsText(p8)},
		{Kind: "collect", Time: digitsText(t8), Packet: digitsText(p8)},
		{Kind: "vector_init"},
		{Kind: "vector_branch", Param: "Unconditional"},
		{Kind: "vector_split", Time: digitsText(t4), Packet: digitsText(p4)},
	}, t8, p8, nil
}

// tail closes a main chain that ran at Way4 back to Way8 (concat), casts
// to the output's type and commits to dst.
func tail(t8, p8 []digit, out dtype.DType, dst string) []kStage {
	st := []kStage{
		{Kind: "vector_concat", Time: digitsText(t8), Packet: digitsText(p8)},
		{Kind: "vector_final"},
	}
	if out != dtype.F32 && out != dtype.I32 {
		st = append(st, kStage{Kind: "cast", DType: out.String(), Packet: digitsText(p8) + " # 16"})
	}
	return append(st, kStage{Kind: "commit", Tensor: dst})
}

// load is the current tile's DM buffer of input t (build loads it).
func (b *opBuilder) load(t *workload.Tensor, _ []digit) string { return b.tileBuf(t.Name, b.buf) }

// outBuf is the current tile's DM buffer of the output (build stores it).
func (b *opBuilder) outBuf() string { return b.tileBuf(b.s.out.Name, b.buf) }

// tileBuf is tensor name's DM buffer for tile k.
func (b *opBuilder) tileBuf(name string, k int) string {
	bb := b.bufs[name]
	return bb[k%len(bb)]
}

// chain appends a chain op.
func (b *opBuilder) chain(ctx string, st []kStage) {
	b.k.Ops = append(b.k.Ops, kOp{Context: ctx, Kind: "chain", Stages: st})
}

// reference states the op's float64 reference over its inputs.
func (b *opBuilder) reference(expr string, rng []float64) {
	var ins []string
	for _, t := range b.s.ins {
		ins = append(ins, t.Name)
	}
	b.k.Reference = kReference{Op: "expr", Inputs: ins, Output: b.s.out.Name, Expr: expr, Range: rng}
}

// elementwise is the one-chain kernel of an elementwise op: the Float
// stage (with a constant, a second input through the VRF, or the stash
// for SiLU's x · sigmoid(x)) between the stream's head and tail.
func (b *opBuilder) elementwise() error {
	if b.s.integer {
		return b.integerwise()
	}
	s := b.s
	x := s.ins[0]
	xdm := b.load(x, b.in)
	switch s.o.Kind {
	case workload.KindPack:
		return b.pack(xdm)
	case workload.KindUnpack:
		return b.unpack(xdm)
	}
	head, t8, p8, err := stream(xdm, b.in)
	if err != nil {
		return err
	}
	var mid []kStage
	var expr string
	var rng []float64
	if b.c.Form == formInterleaved {
		return b.interleavedAdd(xdm)
	}
	if len(s.ins) == 2 {
		// The second input: DM, then the VRF through the sub context; the
		// Float stage reads it per position (a VRF operand indexed by the
		// stream's Time and Packet, 002 L5066-5079).
		// A broadcast input's VRF tensor holds the stream's Time digits
		// of its own axes only, read again along the others (a VRF
		// operand indexed by Time alone, as 002 L5066-5079's
		// m![A % 2 # 8] under Time m![B]), when it holds the packet's
		// axis; otherwise the VRF holds every position, each lane's value
		// fetched from DM with stride 0 along the axis it lacks (a
		// broadcasting read, 002 L1533-1566): a VRF operand does not
		// broadcast over lanes (VE-R15).
		y := s.ins[1]
		ydm := b.load(y, b.in)
		yt := t8
		if len(held(p8, y)) == len(p8) {
			yt = held(t8, y)
		}
		yvrf := b.local(y.Name+"_vrf", "vrf", dtype.F32, digitsText(append(slices.Clone(yt), p8...)), digitsSize(yt)*digitsSize(p8))
		b.chain("sub", []kStage{
			{Kind: "begin", Tensor: ydm},
			{Kind: "fetch", DType: "f32", Time: digitsText(yt), Packet: digitsText(p8)},
			{Kind: "collect", Time: digitsText(yt), Packet: digitsText(p8)},
			{Kind: "to_vrf", Tensor: yvrf},
		})
		op, sym, ok := binaryFloatOp(s.o.Kind)
		if !ok {
			return fmt.Errorf("%s of two tensors is not planned", s.o.Kind)
		}
		mid = []kStage{{Kind: "vector_fp_binary", Tensor: yvrf, Param: op}}
		expr = fmt.Sprintf("%s %s %s", x.Name, sym, y.Name)
	} else if s.o.Kind == workload.KindCast || s.o.Kind == workload.KindCopy {
		// A copy is a cast into its own type: f32 and bf16 pass the f32
		// datapath exactly; the DMAs read and write each tensor's own
		// layout (the KV cache store, 002 L8070).
		expr = x.Name
	} else if mid, expr, rng, err = floatMid(s.o, x.Name); err != nil {
		return err
	}
	b.chain("main", append(append(head, mid...), tail(t8, p8, s.out.DType, b.outBuf())...))
	b.reference(expr, rng)
	return nil
}

// binaryFloatOp returns the Float cluster's op (002 L4890-4899) of an
// elementwise op of two f32 tensors, and its reference's operator; a
// causal mask adds its mask (0 or −inf, 002 L8094-8099).
func binaryFloatOp(k workload.Kind) (op, sym string, ok bool) {
	switch k {
	case workload.KindAdd, workload.KindCausalMask:
		return "AddF", "+", true
	case workload.KindSub:
		return "SubF", "-", true
	case workload.KindMul:
		return "MulF(Mul0)", "*", true
	}
	return "", "", false
}

// interleavedAdd is the one-chain kernel of a float add of two tensors
// held in DM under one mapping (the second above the first): a fetch that
// interleaves them along an axis of size 2 the program declares (FE-R8,
// 002 L1843-1867), the pair's two groups unzipped and added by the Clip
// cluster's Add in pair mode, as the split reduce adds two partial sums
// (002 L5154-5165, L5178, L7151-7177), then the cast and the commit. It
// needs no VRF, whose 8 KB bound the other form's second input
// (002 L140): a causal mask broadcast over heads, resident in DM for all
// the tiles, is one such second tensor.
func (b *opBuilder) interleavedAdd(xdm string) error {
	s := b.s
	ydm := b.load(s.ins[1], b.in)
	xd, yd := held(b.in, s.ins[0]), held(b.in, s.ins[1])
	if digitsText(xd) != digitsText(yd) || s.ins[0].DType != s.ins[1].DType {
		return fmt.Errorf("interleaved: the inputs are held in DM as %s and %s, not one mapping", digitsText(xd), digitsText(yd))
	}
	t8, p8, ok := withPacket(b.in, 8)
	if !ok {
		return fmt.Errorf("the positions within a slice (%s) do not end in a multiple of 8 of one axis", digitsText(b.in))
	}
	ft := append(slices.Clone(t8), digit{axis: interleaveAxis, full: 2, div: 1, size: 2})
	tt := digitsText(t8)
	if tt == "" {
		tt = "1"
	}
	st := []kStage{
		{Kind: "begin", Tensor: xdm, Param: kernel.BeginInterleave{Axis: interleaveAxis, Tensor: ydm}.String()},
		{Kind: "fetch", DType: "f32", Time: digitsText(ft), Packet: digitsText(p8)},
		{Kind: "collect", Time: digitsText(ft), Packet: digitsText(p8)},
		{Kind: "vector_init"},
		{Kind: string(kernel.StVectorUnzip), Time: tt, Axis: interleaveAxis, Param: tt + ", 1 # 2"},
		{Kind: string(kernel.StVectorClipZip), Param: "Add"},
		{Kind: "vector_final"},
	}
	if out := s.out.DType; out != dtype.F32 {
		st = append(st, kStage{Kind: "cast", DType: out.String(), Packet: digitsText(p8) + " # 16"})
	}
	b.chain("main", append(st, kStage{Kind: "commit", Tensor: b.outBuf()}))
	b.reference(fmt.Sprintf("%s + %s", s.ins[0].Name, s.ins[1].Name), nil)
	return nil
}

// pack is the one-chain kernel of (bits of bf16 x) << 16 | y (002 L8547):
// x fetched to f32, which is its bits shifted left 16 (a bf16 is an f32's
// upper half), the Logic cluster's BitOr with y's bits from the VRF at
// Way8 (002 L4815-4820, on fp bit patterns), committed as f32 to the DM
// tensor whose bytes the DMA stores into the i32 output; y reaches the
// VRF the same way, its bytes read as f32 (dmType).
func (b *opBuilder) pack(xdm string) error {
	s := b.s
	y := s.ins[1]
	t8, p8, ok := withPacket(b.in, 8)
	if !ok {
		return fmt.Errorf("the positions within a slice (%s) do not end in a multiple of 8 of one axis", digitsText(b.in))
	}
	fetch := []kStage{
		{Kind: "fetch", DType: "f32", Time: digitsText(t8), Packet: digitsText(p8)},
		{Kind: "collect", Time: digitsText(t8), Packet: digitsText(p8)},
	}
	ydm := b.load(y, b.in)
	yvrf := b.local(y.Name+"_vrf", "vrf", dtype.F32, digitsText(append(slices.Clone(t8), p8...)), digitsSize(t8)*digitsSize(p8))
	b.chain("sub", append(append([]kStage{{Kind: "begin", Tensor: ydm}}, fetch...), kStage{Kind: "to_vrf", Tensor: yvrf}))
	st := append([]kStage{{Kind: "begin", Tensor: xdm}}, fetch...)
	st = append(st, kStage{Kind: "vector_init"}, kStage{Kind: "vector_branch", Param: "Unconditional"},
		kStage{Kind: "vector_logic", Tensor: yvrf, Param: "BitOr"}, kStage{Kind: "vector_final"}, kStage{Kind: "commit", Tensor: b.outBuf()})
	b.chain("main", st)
	b.reference(fmt.Sprintf("bit_or(bits(%s), %s)", s.ins[0].Name, y.Name), nil)
	return nil
}

// unpack is the one-chain kernel of the bf16 whose bits are x's upper
// half: x's bytes read as f32 (dmType) in packets of 8 lanes, or fewer
// padded to 8 as the i32 kernels' (integerwise), cast to bf16 by the
// chain's cast (round to nearest even, 002 L6778): the upper half exactly
// when the lower is below 0x8000, as a top-k's packed index is
// (002 L8589; the reference states the rounding).
func (b *opBuilder) unpack(xdm string) error {
	t, p, pk, ok := b.lanes8()
	if !ok {
		return fmt.Errorf("the positions within a slice (%s) do not end in an axis's innermost part", digitsText(b.in))
	}
	b.chain("main", []kStage{
		{Kind: "begin", Tensor: xdm},
		{Kind: "fetch", DType: "f32", Time: digitsText(t), Packet: pk},
		{Kind: "collect", Time: digitsText(t), Packet: pk},
		{Kind: "vector_init"}, {Kind: "vector_branch", Param: "Unconditional"}, {Kind: "vector_final"},
		{Kind: "cast", DType: b.s.out.DType.String(), Packet: digitsText(p) + " # 16"},
		{Kind: "commit", Tensor: b.outBuf()},
	})
	b.reference(fmt.Sprintf("bf16(from_bits(%s))", b.s.ins[0].Name), nil)
	return nil
}

// lanes8 splits the positions within a slice into Time and a packet of 8
// lanes, or of the largest divisor of the innermost digit below 8 padded
// to 8 (`GRID % 2 # 8`, as ve-vrf-add's `A % 2 # 8`): pk is the packet's
// text.
func (b *opBuilder) lanes8() (t, p []digit, pk string, ok bool) {
	lanes := 8
	if len(b.in) > 0 {
		for b.in[len(b.in)-1].size%lanes != 0 {
			lanes--
		}
	}
	if t, p, ok = withPacket(b.in, lanes); !ok {
		return nil, nil, "", false
	}
	pk = digitsText(p)
	if lanes < 8 {
		pk += " # 8"
	}
	return t, p, pk, true
}

// interleaveAxis is the interleaved fetch's axis of size 2, which an op
// kernel's program declares when a candidate's form needs it.
const interleaveAxis = "Ilv"

// floatMid is the Float cluster's work of a float elementwise op of one
// tensor x at Way4 (002 L4878-4899): a constant added, subtracted or
// multiplied, exp, sigmoid, or SiLU's x · sigmoid(x) with x kept in the
// stash (002 L4549-4560, as workloads/kernels/silu-decode.json); expr is
// its reference over x, rng the input range the reference draws from (nil:
// the dtype's). An op kernel and a contraction's epilogue (workload.Fuse)
// both spell it.
func floatMid(o *workload.Op, x string) (mid []kStage, expr string, rng []float64, err error) {
	switch o.Kind {
	case workload.KindAdd, workload.KindSub, workload.KindMul:
		if o.Scalar == nil {
			return nil, "", nil, fmt.Errorf("%s of two tensors is not a one-input op", o.Kind)
		}
		c := *o.Scalar
		op := map[workload.Kind]string{workload.KindAdd: "AddF", workload.KindSub: "SubF", workload.KindMul: "MulF(Mul0)"}[o.Kind]
		sym := map[workload.Kind]string{workload.KindAdd: "+", workload.KindSub: "-", workload.KindMul: "*"}[o.Kind]
		// The constant is an f32 immediate: the reference uses its f32
		// value.
		return []kStage{{Kind: "vector_fp_binary", Param: op + ", " + f32Text(c)}},
			fmt.Sprintf("%s %s %s", x, sym, strings.TrimSuffix(f32Text(c), "f32")), nil, nil
	case workload.KindExp:
		return []kStage{{Kind: "vector_fp_unary", Param: "Exp"}}, fmt.Sprintf("exp(%s)", x), []float64{-8, 8}, nil
	case workload.KindSigmoid:
		return []kStage{{Kind: "vector_fp_unary", Param: "Sigmoid"}}, fmt.Sprintf("sigmoid(%s)", x), []float64{-8, 8}, nil
	case workload.KindSiLU:
		return []kStage{{Kind: "vector_stash"}, {Kind: "vector_fp_unary", Param: "Sigmoid"}, {Kind: "vector_fp_binary", Param: "MulF(Mul0), Stash"}},
			fmt.Sprintf("%s * sigmoid(%s)", x, x), []float64{-8, 8}, nil
	case workload.KindCast:
		// The values pass the f32 datapath unchanged; the chain's cast
		// stage converts them to the output type.
		return nil, x, nil, nil
	}
	return nil, "", nil, fmt.Errorf("%s is not planned", o.Kind)
}

// integerwise is the one-chain kernel of an i32 elementwise op in the
// Fxp cluster at Way8 (002 L4822-4836): AddFxp, SubFxp or MulInt with a
// constant or a second input through the VRF; a comparison with a
// constant c as the Clip stage's clamp of x − c (gt) or x − c + 1 (ge) to
// [0, 1], which for integers is 1 exactly when x > c (x ≥ c)
// (002 L4956-4972); a one-hot as the Clip stage's AbsMin(x − pos, −1) + 1,
// 1 exactly when x = pos.
func (b *opBuilder) integerwise() error {
	s := b.s
	x := s.ins[0]
	xdm := b.load(x, b.in)
	// A packet of 8 lanes, or fewer padded to 8 (lanes8).
	t8, _, pk, ok := b.lanes8()
	if !ok {
		return fmt.Errorf("the positions within a slice (%s) do not end in an axis's innermost part", digitsText(b.in))
	}
	fetch := []kStage{
		{Kind: "fetch", DType: "i32", Time: digitsText(t8), Packet: pk},
		{Kind: "collect", Time: digitsText(t8), Packet: pk},
	}
	st := append([]kStage{{Kind: "begin", Tensor: xdm}}, fetch...)
	branch := "Unconditional"
	if s.o.Kind == workload.KindWhere {
		// The condition's zeros take the branch's group One (the fourth
		// comparison, as ve-branch-relu's Less(0), 002 L4801).
		branch = "Comparison([False, False, False, Equal(0)])"
	}
	// vrf loads a second input into the VRF through the sub context: the
	// collect stream, its packet padded to 8 lanes when fewer
	// (002 L280-285).
	vrf := func(y *workload.Tensor) string {
		ydm := b.load(y, b.in)
		yvrf := b.local(y.Name+"_vrf", "vrf", dtype.I32, digitsText(t8)+", "+pk, digitsSize(t8)*8)
		b.chain("sub", append(append([]kStage{{Kind: "begin", Tensor: ydm}}, fetch...), kStage{Kind: "to_vrf", Tensor: yvrf}))
		return yvrf
	}
	st = append(st, kStage{Kind: "vector_init"}, kStage{Kind: "vector_branch"})
	at := len(st) - 1
	op := map[workload.Kind]string{workload.KindAdd: "AddFxp", workload.KindSub: "SubFxp", workload.KindMul: "MulInt", workload.KindOneHot: "SubFxp"}[s.o.Kind]
	sym := map[workload.Kind]string{workload.KindAdd: "+", workload.KindSub: "-", workload.KindMul: "*"}[s.o.Kind]
	var expr string
	var rng []float64
	switch {
	case s.o.Kind == workload.KindWhere:
		// where(c, y, k): the Logic cluster clears every lane (BitAnd 0)
		// and ORs y into the lanes whose c is not zero (group Zero); the
		// Fxp cluster adds k to the others (group One): y where c ≠ 0,
		// k where c = 0 (002 L4794-4836, operands per group 002 L5058-5062).
		y := s.ins[1]
		yvrf := vrf(y)
		k := int64(*s.o.Scalar)
		st = append(st, kStage{Kind: "vector_logic", Param: "BitAnd, 0"},
			kStage{Kind: "vector_logic", Tensor: yvrf, Param: fmt.Sprintf("BitOr, group(&%s, GroupId::Zero)", yvrf)},
			kStage{Kind: "vector_fxp", Param: fmt.Sprintf("AddFxp, group(%d, GroupId::One)", k)})
		// The reference: m = 1 where c ≠ 0 (min(|c|, 1) for integers),
		// y·m + k·(1 − m), over inputs in [−3, 3], so that a fifth of the
		// conditions are zero and both groups are exercised.
		c := x.Name
		m := fmt.Sprintf("min(max(%s, 0) + max(0 - %s, 0), 1)", c, c)
		expr, rng = fmt.Sprintf("%s * %s + (0 + %d) * (1 - %s)", y.Name, m, k, m), []float64{-3, 3}
	case s.o.Kind == workload.KindSortKey:
		// The negative values take the branch's group One (Less(0), as
		// ve-branch-relu, 002 L4801), whose score bits the Logic
		// cluster's BitXor flips (002 L8550-8552); group Zero passes.
		branch = "Comparison([False, False, False, Less(0)])"
		st = append(st, kStage{Kind: "vector_logic", Param: fmt.Sprintf("BitXor, group(%d, GroupId::One)", 0x7fff0000)})
		expr = fmt.Sprintf("bit_xor(%s, bit_and(shr(%s, 31), %d))", x.Name, x.Name, 0x7fff0000)
	case s.o.Kind == workload.KindBitAnd:
		if len(s.ins) == 2 {
			y := s.ins[1]
			st = append(st, kStage{Kind: "vector_logic", Tensor: vrf(y), Param: "BitAnd"})
			expr = fmt.Sprintf("bit_and(%s, %s)", x.Name, y.Name)
			break
		}
		st = append(st, kStage{Kind: "vector_logic", Param: fmt.Sprintf("BitAnd, %d", int64(*s.o.Scalar))})
		expr = fmt.Sprintf("bit_and(%s, %d)", x.Name, int64(*s.o.Scalar))
	case s.o.Kind == workload.KindGT && len(s.ins) == 2:
		// x > y as the clamp of the saturating x − y to [0, 1]
		// (SubFxpSat, 002 L4829; Clip Max and Min, 002 L4956-4972): the
		// saturated difference keeps its sign over all of i32, so the
		// comparison holds for every pair.
		y := s.ins[1]
		st = append(st, kStage{Kind: "vector_fxp", Tensor: vrf(y), Param: "SubFxpSat"},
			kStage{Kind: "vector_clip", Param: "Max, 0"}, kStage{Kind: "vector_clip", Param: "Min, 1"})
		expr = fmt.Sprintf("min(max(sat_sub(%s, %s), 0), 1)", x.Name, y.Name)
	case len(s.ins) == 2:
		y := s.ins[1]
		yvrf := vrf(y)
		st = append(st, kStage{Kind: "vector_fxp", Tensor: yvrf, Param: op})
		expr = fmt.Sprintf("%s %s %s", x.Name, sym, y.Name)
		if s.o.Kind == workload.KindOneHot {
			// [x == pos] from d = x − pos in the Clip stage (002
			// L4956-4972): AbsMin(d, −1) is 0 where d = 0 (|0| < 1) and −1
			// elsewhere, and adding 1 makes it 1 where x = pos, 0
			// elsewhere. The reference states the equality for integers,
			// 1 − min(|x − pos|, 1), over inputs in [−3, 3], so that a
			// seventh of the pairs are equal and both values are
			// exercised.
			st = append(st, kStage{Kind: "vector_clip", Param: "AbsMin, -1"}, kStage{Kind: "vector_clip", Param: "AddFxp, 1"})
			expr, rng = fmt.Sprintf("1 - min(abs(%s - %s), 1)", x.Name, y.Name), []float64{-3, 3}
		}
	case s.o.Kind == workload.KindCeilDiv:
		// (x + d − 1) >> log2 d in the Fxp cluster (AddFxp, then
		// ArithRightShift, 002 L4826, L4835): ceil(x / d) for x ≥ 0 (a
		// count). The reference states the ceiling of the real quotient,
		// round(float(x + d − 1) / d − 0.5) (exact for these integers:
		// r/d − 0.5 ≥ −0.5 rounds away from zero to the floor for x ≥ 0),
		// over inputs in [0, 2^20].
		d := int64(*s.o.Scalar)
		st = append(st, kStage{Kind: "vector_fxp", Param: fmt.Sprintf("AddFxp, %d", d-1)},
			kStage{Kind: "vector_fxp", Param: fmt.Sprintf("ArithRightShift, %d", bits.TrailingZeros64(uint64(d)))})
		expr, rng = fmt.Sprintf("round(float(%s + %d) / %d.0 - 0.5)", x.Name, d-1, d), []float64{0, 1 << 20}
	case s.o.Kind == workload.KindGT || s.o.Kind == workload.KindGE:
		c := int64(*s.o.Scalar)
		if s.o.Kind == workload.KindGE {
			c--
		}
		st = append(st, kStage{Kind: "vector_fxp", Param: fmt.Sprintf("SubFxp, %d", c)},
			kStage{Kind: "vector_clip", Param: "Max, 0"}, kStage{Kind: "vector_clip", Param: "Min, 1"})
		// The reference is the clamp; inputs within ±2^20 keep x − c
		// from wrapping, where the clamp and the comparison agree.
		expr, rng = fmt.Sprintf("min(max(%s - %d, 0), 1)", x.Name, c), []float64{-1 << 20, 1 << 20}
	default:
		st = append(st, kStage{Kind: "vector_fxp", Param: fmt.Sprintf("%s, %d", op, int64(*s.o.Scalar))})
		expr = fmt.Sprintf("%s %s %d", x.Name, sym, int64(*s.o.Scalar))
	}
	st[at].Param = branch
	st = append(st, kStage{Kind: "vector_final"}, kStage{Kind: "commit", Tensor: b.outBuf()})
	b.chain("main", st)
	b.reference(expr, rng)
	return nil
}

// reduceAxes checks a reduce: its reduced axes (those of size 1 left
// out) and the output the input without them; for i32 a sum (AddSat,
// 002 L5394) or a maximum.
func (s *opSpace) reduceAxes(at string) error {
	o, x := s.o, s.ins[0]
	if o.Reduce != workload.ReduceSum && o.Reduce != workload.ReduceMax {
		return fmt.Errorf("%s: reduce op %q", at, o.Reduce)
	}
	var kept []string
	for _, a := range x.Axes {
		if !slices.Contains(o.Axes, a) {
			kept = append(kept, a)
		}
	}
	if !sameAxes(kept, s.out.Axes) {
		return fmt.Errorf("%s: the output's axes %v are not the input's %v without %v", at, s.out.Axes, x.Axes, o.Axes)
	}
	for _, a := range s.order[x.Name] {
		if n, _ := s.w.AxisSize(a); n > 1 && slices.Contains(o.Axes, a) {
			s.reds = append(s.reds, digit{axis: a, full: int(n), div: 1, size: int(n)})
		}
	}
	if len(s.reds) == 0 {
		return fmt.Errorf("%s: the axes %v have size 1: nothing to reduce", at, o.Axes)
	}
	return nil
}

// mixReduced is the digits of the reduce's input for the output's
// position digits ds: the input's axes in order, the reduced one whole, a
// kept one as the digits of it in ds.
func (s *opSpace) mixReduced(ds []digit) []digit {
	var out []digit
	for _, a := range s.order[s.ins[0].Name] {
		if i := slices.IndexFunc(s.reds, func(d digit) bool { return d.axis == a }); i >= 0 {
			out = append(out, s.reds[i])
			continue
		}
		for _, d := range ds {
			if d.axis == a {
				out = append(out, d)
			}
		}
	}
	return out
}

// dmReduced is the DM element of the reduce's input for the output's
// position digits ds (whose last is the kept innermost axis L): the other
// digits, L's part above its packet, the reduced axis, then L's 8 packet
// lanes (`T % 8, D / 8, K, D % 8`). The reduced axis is the innermost
// Time step but the Way4 half, so that the reduce accumulates two
// packets at a time: it holds 8 accumulator slots (ISR-R4, 002 L5381,
// L5388). Nil when L's part is no multiple of 8.
func (s *opSpace) dmReduced(ds []digit, inner int) []digit { return dmWith(ds, inner, s.reds) }

// dmWith is dmReduced with the reduced digits reds.
func dmWith(ds []digit, inner int, reds []digit) []digit { return dmLanes(ds, 8*inner, reds) }

// reduceEl is the DM element of a reduce pass over reds (dmWith), or,
// when the kept innermost axis L's part is no multiple of 8, with L's
// largest part of 4, 2 or 1 lanes innermost, streamed in a packet padded
// to 8 (pad: `K # 8`, as the i32 kernels' packets, integerwise); nil when
// neither (inner above 1 is for whole packets only).
func (s *opSpace) reduceEl(ds []digit, inner int, reds []digit) (el []digit, pad bool) {
	if el := dmWith(ds, inner, reds); el != nil {
		return el, false
	}
	if inner != 1 || len(ds) == 0 {
		return nil, false
	}
	lanes := 4
	for ds[len(ds)-1].size%lanes != 0 {
		lanes /= 2
	}
	el = dmLanes(ds, lanes, reds)
	return el, el != nil
}

// reducible reports whether a reduce has a DM element for positions ds.
func (s *opSpace) reducible(ds []digit, inner int) bool {
	el, _ := s.reduceEl(ds, inner, s.reds)
	return el != nil
}

// dmLanes is dmWith with n lanes of the kept innermost axis innermost.
func dmLanes(ds []digit, n int, reds []digit) []digit {
	if len(ds) == 0 {
		return nil
	}
	last := ds[len(ds)-1]
	if last.div != 1 || last.size%n != 0 {
		return nil
	}
	out := slices.Clone(ds[:len(ds)-1])
	if last.size > n {
		out = append(out, digit{last.axis, last.full, n, last.size / n})
	}
	return append(append(out, reds...), digit{last.axis, last.full, 1, n})
}

// without drops the digits of axis a.
func without(ds []digit, a string) []digit {
	var out []digit
	for _, d := range ds {
		if d.axis != a {
			out = append(out, d)
		}
	}
	return out
}

// reduce: the reduced axis runs in Time, the kept innermost axis in the
// packet; the Intra-Slice Reduce sums (or takes the maximum) over the
// reduced axis's Time steps (002 L5278-5300, as ve-reduce-time and
// ve-vcg-time: the reduced digit need not be the innermost step).
func (b *opBuilder) reduce() error {
	s := b.s
	x := s.ins[0]
	src := b.load(x, nil)
	op, ref := "Add", "reduce_sum"
	if s.integer {
		op = "AddSat"
	}
	if s.o.Reduce == workload.ReduceMax {
		op, ref = "Max", "reduce_max"
	}
	dt, fetch := dtype.F32, "f32"
	if s.integer {
		dt, fetch = dtype.I32, "i32"
	}
	// One pass per reduced axis, the innermost first: each reduces one
	// axis in Time and commits the rest (in f32 or i32 between passes).
	expr := x.Name
	for k := len(s.reds) - 1; k >= 0; k-- {
		el, pad := s.reduceEl(b.in, b.c.Inner, s.reds[:k+1])
		if el == nil {
			return fmt.Errorf("the positions within a slice (%s) do not end in a multiple of 8 of one axis", digitsText(b.in))
		}
		r := s.reds[k].axis
		dst, out := b.outBuf(), s.out.DType
		if k > 0 {
			next, _ := s.reduceEl(b.in, b.c.Inner, s.reds[:k])
			dst = b.local(fmt.Sprintf("part%d_dm", k), "dm", dt, digitsText(next), digitsSize(next))
			out = dt
		}
		var st []kStage
		if pad {
			st = paddedReduce(src, el, r, fetch, op, out, dst)
		} else {
			head, t8, p8, err := stream(src, el)
			if err != nil {
				return err
			}
			head[1].DType = fetch
			t4, p4, _ := withPacket(el, 4)
			st = append(slices.Clone(head), kStage{Kind: "vector_intra_slice_reduce", Time: digitsText(without(t4, r)),
				Packet: digitsText(p4), Axis: r, Param: op})
			st = append(st, tail(without(t8, r), p8, out, dst)...)
		}
		b.chain("main", st)
		src = dst
		expr = fmt.Sprintf("%s(%s, %s)", ref, expr, r)
	}
	var rng []float64
	if s.integer {
		rng = []float64{-1000, 1000} // far from AddSat's saturation
	}
	b.reference(expr, rng)
	return nil
}

// paddedReduce is a reduce pass over r whose packet holds the kept
// innermost axis's last digit (4, 2 or 1 lanes: el's last) padded to 8
// (`K # 8`): split to Way4, its second half all padding (`1 # 2` in Time,
// `K # 4` in the packet), reduced in Time, concatenated, cast to out when
// it is neither f32 nor i32, and committed to dst, whose mapping drops the
// padding (002 L280-285).
func paddedReduce(src string, el []digit, r, fetch, op string, out dtype.DType, dst string) []kStage {
	t, p := el[:len(el)-1], digitsText(el[len(el)-1:])
	with := func(ds []digit, d string) string {
		if len(ds) == 0 {
			return d
		}
		return digitsText(ds) + ", " + d
	}
	kept := without(t, r)
	st := []kStage{
		{Kind: "begin", Tensor: src},
		{Kind: "fetch", DType: fetch, Time: digitsText(t), Packet: p + " # 8"},
		{Kind: "collect", Time: digitsText(t), Packet: p + " # 8"},
		{Kind: "vector_init"},
		{Kind: "vector_branch", Param: "Unconditional"},
		{Kind: "vector_split", Time: with(t, "1 # 2"), Packet: p + " # 4"},
		{Kind: "vector_intra_slice_reduce", Time: with(kept, "1 # 2"), Packet: p + " # 4", Axis: r, Param: op},
		{Kind: "vector_concat", Time: digitsText(kept), Packet: p + " # 8"},
		{Kind: "vector_final"},
	}
	if out != dtype.F32 && out != dtype.I32 {
		st = append(st, kStage{Kind: "cast", DType: out.String(), Packet: p + " # 16"})
	}
	return append(st, kStage{Kind: "commit", Tensor: dst})
}

// rowStats are the per-row tensors of a reduction: the reduce's commit in
// DM (one f32 padded to two: 8-byte DM writes, 002 L2426) and its
// broadcast over a packet's 8 lanes in the VRF.
func (b *opBuilder) rowStat(name string, rows []digit) (dm, vrf string, toVRF []kStage) {
	rt := digitsText(rows)
	el := "1 # 2"
	vel := "8"
	if len(rows) > 0 {
		el, vel = rt+", 1 # 2", rt+", 8"
	}
	n := digitsSize(rows)
	dm = b.local(name+"_dm", "dm", dtype.F32, el, 2*n)
	vrf = b.local(name+"_vrf", "vrf", dtype.F32, vel, 8*n)
	toVRF = []kStage{
		{Kind: "begin", Tensor: dm},
		{Kind: "fetch", DType: "f32", Time: rt, Packet: "8"},
		{Kind: "collect", Time: rt, Packet: "8"},
		{Kind: "to_vrf", Tensor: vrf},
	}
	return dm, vrf, toVRF
}

// reduceTail reduces the stream along the reduced axis per row and
// commits the row's value to dst.
// The stages before run at Way4, those after at Way8.
func (b *opBuilder) reduceTail(rows []digit, op, dst string, before, after []kStage) []kStage {
	st := []kStage{{Kind: "vector_intra_slice_reduce", Time: digitsText(rows), Packet: "1 # 4", Axis: b.s.red.axis, Param: op}}
	st = append(append(st, before...), kStage{Kind: "vector_pad_way8", Packet: "1 # 8"})
	return append(append(st, after...), kStage{Kind: "vector_final"}, kStage{Kind: "commit", Tensor: dst})
}

// softmax: the row maximum, exp(x − max) summed, then exp(x − max) / sum
// (002 L8106-8109). Form "recompute" recomputes exp(x − max) in the last
// pass (workloads/kernels/softmax-*.json); form "stored" commits it to DM
// (f32) in the second pass and reduces and divides from there.
func (b *opBuilder) softmax() error {
	s := b.s
	x := s.ins[0]
	ds := append(slices.Clone(b.in), s.red)
	rows := b.in
	xdm := b.load(x, ds)
	head, t8, p8, err := stream(xdm, ds)
	if err != nil {
		return err
	}
	mdm, mvrf, mload := b.rowStat("m", rows)
	b.chain("main", append(slices.Clone(head), b.reduceTail(rows, "Max", mdm, nil, nil)...))
	b.chain("sub", mload)
	sdm, svrf, sload := b.rowStat("s", rows)
	// The sum's load into the VRF runs in the sub context (as the golden
	// kernels) or in the main one (MainLoad): nothing overlaps it (the
	// last pass waits for it), and a step of a tile loop holds no two ops
	// alike (kernel.Recognize), which two sub-context loads of the same
	// shape would be, so a tiled softmax loads it from main.
	sumLoad := "sub"
	if b.c.MainLoad {
		sumLoad = "main"
	}
	subExp := []kStage{{Kind: "vector_fp_binary", Tensor: mvrf, Param: "SubF"}, {Kind: "vector_fp_unary", Param: "Exp"}}
	pdm := ""
	switch b.c.Form {
	case "recompute":
		b.chain("main", append(append(slices.Clone(head), subExp...), b.reduceTail(rows, "Add", sdm, nil, nil)...))
		b.chain(sumLoad, sload)
		pdm = b.outBuf()
		mid := append(slices.Clone(subExp), kStage{Kind: "vector_fp_div", Tensor: svrf, Param: "DivF"})
		b.chain("main", append(append(slices.Clone(head), mid...), tail(t8, p8, s.out.DType, pdm)...))
	case "stored":
		edm := b.local("e_dm", "dm", dtype.F32, digitsText(ds), digitsSize(ds))
		b.chain("main", append(append(slices.Clone(head), subExp...), tail(t8, p8, dtype.F32, edm)...))
		ehead, _, _, _ := stream(edm, ds)
		b.chain("main", append(slices.Clone(ehead), b.reduceTail(rows, "Add", sdm, nil, nil)...))
		b.chain(sumLoad, sload)
		pdm = b.outBuf()
		b.chain("main", append(append(slices.Clone(ehead), kStage{Kind: "vector_fp_div", Tensor: svrf, Param: "DivF"}), tail(t8, p8, s.out.DType, pdm)...))
	default:
		return fmt.Errorf("softmax form %q", b.c.Form)
	}
	r := s.red.axis
	b.reference(fmt.Sprintf("exp(%[1]s - reduce_max(%[1]s, %[2]s)) / reduce_sum(exp(%[1]s - reduce_max(%[1]s, %[2]s)), %[2]s)", x.Name, r), nil)
	return nil
}

// rmsNormEps is RMSNorm's epsilon: the manual does not state it (002
// L8016); Llama 3's 1e-5 (docs/spec-decisions.md, the Vector Engine's
// golden kernels).
const rmsNormEps = 0.00001

// rmsnorm: the mean of squares per row plus epsilon, its square root, then
// x divided by it (002 L8016, L8245-8252), as
// workloads/kernels/rmsnorm-decode.json.
func (b *opBuilder) rmsnorm() error {
	s := b.s
	x := s.ins[0]
	ds := append(slices.Clone(b.in), s.red)
	rows := b.in
	xdm := b.load(x, ds)
	head, t8, p8, err := stream(xdm, ds)
	if err != nil {
		return err
	}
	rt := digitsText(rows)
	el := "1 # 2"
	if len(rows) > 0 {
		el = rt + ", 1 # 2"
	}
	n := digitsSize(rows)
	rdm := b.local("r_dm", "dm", dtype.F32, el, 2*n)
	// x², summed per row, divided by the row's length; then + eps in the
	// Clip stage, which runs at Way8 (002 L4549-4560).
	sq := kStage{Kind: "vector_fp_binary", Param: "MulF(Mul0), Mode00, 0.0f32"}
	mean := kStage{Kind: "vector_fp_div", Param: "DivF, " + f32Text(float64(s.red.size))}
	eps := kStage{Kind: "vector_clip", Param: "Add, " + f32Text(rmsNormEps)}
	b.chain("main", append(append(slices.Clone(head), sq), b.reduceTail(rows, "Add", rdm, []kStage{mean}, []kStage{eps})...))
	qdm := b.local("q_dm", "dm", dtype.F32, el, 2*n)
	b.chain("main", []kStage{
		{Kind: "begin", Tensor: rdm},
		{Kind: "fetch", DType: "f32", Time: rt, Packet: "1 # 8"},
		{Kind: "collect", Time: rt, Packet: "1 # 8"},
		{Kind: "vector_init"},
		{Kind: "vector_branch", Param: "Unconditional"},
		{Kind: "vector_trim_way4", Packet: "1 # 4"},
		{Kind: "vector_fp_unary", Param: "Sqrt"},
		{Kind: "vector_pad_way8", Packet: "1 # 8"},
		{Kind: "vector_final"},
		{Kind: "commit", Tensor: qdm},
	})
	vel := "8"
	if len(rows) > 0 {
		vel = rt + ", 8"
	}
	qvrf := b.local("q_vrf", "vrf", dtype.F32, vel, 8*n)
	b.chain("sub", []kStage{
		{Kind: "begin", Tensor: qdm},
		{Kind: "fetch", DType: "f32", Time: rt, Packet: "8"},
		{Kind: "collect", Time: rt, Packet: "8"},
		{Kind: "to_vrf", Tensor: qvrf},
	})
	b.chain("main", append(append(slices.Clone(head), kStage{Kind: "vector_fp_div", Tensor: qvrf, Param: "DivF"}), tail(t8, p8, s.out.DType, b.outBuf())...))
	b.reference(fmt.Sprintf("%[1]s / sqrt(reduce_sum(%[1]s * %[1]s, %[2]s) / %[3]d.0 + %[4]s)", x.Name, s.red.axis, s.red.size,
		strings.TrimSuffix(f32Text(rmsNormEps), "f32")), nil)
	return nil
}

// opEvaluated is a priced candidate of an op's space.
type opEvaluated struct {
	c       opCand
	program *kernel.Program
	report  *cost.Report
}

// planVectorOp plans a non-einsum op over its mapspace.
func planVectorOp(w *workload.Workload, o *workload.Op, spec *engines.Spec, opts Options) (*OpResult, error) {
	res := &OpResult{Op: o.Name, Kind: o.Kind}
	if o.Kind == workload.KindReshape {
		return planReshape(w, o, res)
	}
	s, err := newOpSpace(w, o, spec)
	if err != nil {
		return nil, noKernel(err)
	}
	start := time.Now()
	st := &res.Stats
	st.Planner = "exhaustive"
	st.Illegal = map[string]*RuleStat{}
	ev := &evaluator{s: nil, stats: st}
	var deadline time.Time
	if opts.Timeout > 0 {
		deadline = start.Add(opts.Timeout)
	}
	// The candidates are built, checked and priced by several workers at
	// once, each with its cost model, taking them in order; a stop
	// (interrupt, deadline) ends the taking, so the candidates evaluated
	// are a prefix of the space's. The statistics and the winner are then
	// read off in candidate order (the lowest cycles, the first of equal
	// ones), as one worker would find them.
	n := len(s.cands)
	if opts.MaxEvaluations > 0 {
		n = min(n, opts.MaxEvaluations)
	}
	nw := opts.Workers
	if nw <= 0 {
		nw = runtime.GOMAXPROCS(0)
	}
	nw = max(1, min(nw, maxWorkers, n))
	models := make([]*cost.Model, nw)
	for k := range models {
		m, err := cost.NewModel(spec)
		if err != nil {
			return nil, err
		}
		models[k] = m
	}
	errs := make([]error, n)
	done := make([]bool, n)
	bests := make([]*opEvaluated, nw)
	bestAt := make([]int, nw)
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := range nw {
		wg.Go(func() {
			for !opts.stopped() && (deadline.IsZero() || !time.Now().After(deadline)) {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				x, err := s.evaluate(s.cands[i], models[k])
				errs[i], done[i] = err, true
				if err == nil && (bests[k] == nil || x.report.Cycles < bests[k].report.Cycles) {
					bests[k], bestAt[k] = x, i
				}
			}
		})
	}
	wg.Wait()
	for i := range n {
		if !done[i] {
			break
		}
		st.Candidates++
		st.Evaluated++
		if errs[i] != nil {
			ev.reject(errs[i])
			continue
		}
		st.Legal++
		st.CostEvaluations++
	}
	var best *opEvaluated
	at := n
	for k, x := range bests {
		if x != nil && (best == nil || x.report.Cycles < best.report.Cycles || x.report.Cycles == best.report.Cycles && bestAt[k] < at) {
			best, at = x, bestAt[k]
		}
	}
	stopped := ""
	if st.Evaluated < len(s.cands) {
		stopped = opts.stopReason(st.Evaluated)
	}
	st.Wall = time.Since(start)
	st.Complete = stopped == ""
	st.Stopped = stopped
	if best == nil {
		var why []string
		for _, r := range st.Rules() {
			why = append(why, fmt.Sprintf("%s ×%d (%s)", r.Rule, r.Count, r.Example))
		}
		res.Why = strings.Join(why, "; ")
		if st.Complete {
			return res, noKernel(fmt.Errorf("%s:%d: op %s: no legal mapping among %d candidates: %s", w.File, o.Line, o.Name, st.Candidates, res.Why))
		}
		return res, nil
	}
	res.Report = best.report
	res.Plan = s.plan(best, st)
	return res, nil
}

// price checks, lowers and prices a built program.
func (s *opSpace) price(p *kernel.Program, m *cost.Model) (*cost.Report, error) {
	if err := engines.Check(s.spec, p); err != nil {
		return nil, err
	}
	if err := s.lower(p, m); err != nil {
		return nil, err
	}
	r, err := m.Evaluate(p)
	if err != nil {
		return nil, fmt.Errorf("cost: %w", err)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return r.Clone(), nil
}

// lower lowers p as engines.Lower does, through the lowerer of the
// worker pricing with m (each worker prices with a cost model of its own):
// the kernels of one op space share most of their ops (a tile's moves at
// other HBM addresses, the loads and chains of forms and staggers alike),
// which the lowerer derives once (search/lower.go; the decode layer's
// planning spent a third of its CPU in engines.Lower, session 34). A
// program the lowerer does not cover — handoffs, a gather's index, a
// gathered load, a configuration stated before lowering — is lowered by
// engines.Lower. TestOpLowererMatchesLower checks the two alike.
func (s *opSpace) lower(p *kernel.Program, m *cost.Model) error {
	if !lowererCovers(p) {
		return engines.Lower(s.spec, p)
	}
	if err := p.Validate(); err != nil {
		return err
	}
	l, ok := s.lowerers.Load(m)
	if !ok {
		l, _ = s.lowerers.LoadOrStore(m, newLowerer(s.spec))
	}
	return l.(*lowerer).lower(p)
}

// lowererCovers reports whether the lowerer lowers p as engines.Lower
// does: p has no gather (an op's index or a gathered load, whose lowering
// reads tensors the op does not name) and no configuration stated before
// lowering (which engines.Lower keeps, and the lowerer's memo does not
// key). Its handoffs are DMA commands the lowerer lowers as engines.Lower
// does (lowerer.lower).
func lowererCovers(p *kernel.Program) bool {
	for _, op := range p.Handoff {
		if op.Index != "" || op.DMA != nil {
			return false
		}
	}
	for _, t := range p.Tensors {
		if t.Gather != nil {
			return false
		}
	}
	for _, op := range p.Ops {
		if op.Index != "" || op.DMA != nil {
			return false
		}
		for _, st := range op.Stages {
			if st.Config != nil {
				return false
			}
		}
	}
	return true
}

// evaluate builds, lowers and prices one candidate.
func (s *opSpace) evaluate(c opCand, m *cost.Model) (*opEvaluated, error) {
	p, err := s.build(c)
	if err != nil {
		var v *engines.Violation
		if !errors.As(err, &v) {
			err = opShapeError{err}
		}
		return nil, err
	}
	r, err := s.price(p, m)
	if err != nil {
		return nil, err
	}
	return &opEvaluated{c: c, program: p, report: r}, nil
}

// opShapeError is a candidate the op space cannot build: its positions do
// not divide over its tiles, slices and packet lanes as the kernel needs
// (counted as "op-shape", not under an engine rule).
type opShapeError struct{ err error }

func (e opShapeError) Error() string { return e.err.Error() }
func (e opShapeError) Unwrap() error { return e.err }

// plan assembles the plan of the winner.
func (s *opSpace) plan(x *opEvaluated, st *Stats) *plan.Plan {
	pl := &plan.Plan{
		Version:  plan.Version,
		Workload: plan.Workload{File: s.w.File, Name: s.w.Name, Op: s.o.Name, Kind: string(s.o.Kind), Axes: s.axes},
		Cost:     Cost(x.report),
		Search: plan.Search{Planner: "exhaustive", Stopped: st.Stopped, Candidates: st.Candidates, Legal: st.Legal,
			CostEvaluations: st.CostEvaluations, MaxTiles: maxOpTiles},
		Program: x.program,
	}
	if st.Complete {
		pl.Search.Optimal = "exhaustive"
	} else {
		// The candidates not priced are bounded by the workload's
		// roofline (its inputs read and its output written once at the
		// HBM bandwidths), which no candidate beats (the cost model moves
		// those bytes at those rates at best; TestOpRooflineBound).
		lb := x.report.Roofline.IdealCycles
		pl.Search.LowerBound = lb
		pl.Search.Gap = (x.report.Cycles - lb) / x.report.Cycles
	}
	for _, r := range st.Rules() {
		pl.Search.Illegal = append(pl.Search.Illegal, plan.RuleCount{Rule: r.Rule, Cite: r.Cite, Count: r.Count})
	}
	om := &plan.OpMapping{Form: x.c.Form, Tiles: x.c.Tiles, Clusters: x.c.Clusters, Slices: x.c.Slices, Stagger: x.c.Stagger, MainLoad: x.c.MainLoad, Inner: x.c.Inner, Interleave: x.c.Interleave, HBMOrder: x.c.HBMOrder, DMNSpread: x.c.Spread}
	switch s.family {
	case "rows":
		om.Reduced = s.red.axis
	case "reduce":
		var rs []string
		for _, d := range s.reds {
			rs = append(rs, d.axis)
		}
		om.Reduced = strings.Join(rs, ", ")
	}
	for _, d := range s.pos {
		om.Spread = append(om.Spread, d.axis)
	}
	pl.OpMapping = om
	return pl
}

// planReshape plans a reshape: a row-major view of the same elements in
// the same order needs no kernel when both tensors are row-major (no
// layout) and of one dtype, and is refused otherwise.
func planReshape(w *workload.Workload, o *workload.Op, res *OpResult) (*OpResult, error) {
	in, out := w.Tensor(o.Inputs[0]), w.Tensor(o.Outputs[0])
	if in.LayoutExpr != nil || out.LayoutExpr != nil || in.DType != out.DType {
		return nil, noKernel(fmt.Errorf("%s:%d: op %s (reshape): %s and %s are not both row-major of one dtype; a relayout kernel is not planned", w.File, o.Line, o.Name, in.Name, out.Name))
	}
	res.Free = true
	res.Stats.Complete = true
	res.Stats.Planner = "exhaustive"
	return res, nil
}
