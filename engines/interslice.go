package engines

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Inter-Slice Block of the Vector Engine (002 L6583-6755):
// `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)` folds the streams of
// the slices of a reduction group, lane by lane, and hands the result to
// the slices of SliceOut. It is entered right after vector_init
// (InterFirst) or from a Way8 intra-slice stage (IntraFirst), and followed
// by vector_intra_slice_branch (InterFirst) or vector_final
// (002 L4581, L4626-4629, L6599-6610).
//
// Derivation (DeriveInterSliceReduce): the reduced factor R is the
// innermost digits of Slice (every output rule of 002 L6626-6634 reduces
// the innermost R of m![A, R]); the smallest such block of r slices with
// SliceOut's digits outside it equal to Slice's is the reduction group,
// r the reduction ratio (002 L6744-6746). SliceOut's r inner positions
// are filled digit by digit: a padding digit `1 # n` is a dummy (only its
// position 0 holds the value, 002 L6643-6653), a term of an axis the input
// does not hold is a broadcast (002 L6661-6672), a term equal to a digit of
// Time is that digit promoted (002 L6681-6693). TimeOut keeps every other
// Time digit, in order.
//
// Semantics (InterSliceFold, InterSliceOutput): i32 Add wraps, AddSat
// saturates at each step, Max and Min compare; f32 Add and Mul round to
// nearest even after each step, Max and Min are Go's math.Max/math.Min
// (NaN wins, +0 above −0) as the Reducer's reduce-max (docs/spec-decisions.md
// "Reducer arithmetic"). The order across slices is not stated (002 L6739
// says "ring-like"); the decision (docs/spec-decisions.md "Inter-slice
// reduction order") is a left fold in ascending slice order starting from
// the group's slice 0: ((x0 ∘ x1) ∘ x2) ∘ … ∘ x(r−1).

var (
	ruleXSRType = NewRule(Rule{ID: "XSR-R1", Engine: "vector", Name: "inter-slice types and ops",
		Cite: "002 L6735, L6611-6625",
		Text: "the Inter-Slice Block reduces i32 streams with Add (wrapping), AddSat, Max or Min and f32 streams with Add, Max, Min or Mul"})
	ruleXSRScope = NewRule(Rule{ID: "XSR-R2", Engine: "vector", Name: "inter-slice scope",
		Cite: "002 L6584, L6736",
		Text: "inter-slice reduction happens within one 256-slice cluster: the stream's Slice holds at most a cluster's slices"})
	ruleXSRPacket = NewRule(Rule{ID: "XSR-R3", Engine: "vector", Name: "packet unchanged",
		Cite: "002 L6584-6585, L6633-6634, L6737",
		Text: "Chip, Cluster and Packet pass through the inter-slice reduction unchanged"})
	ruleXSREntry = NewRule(Rule{ID: "XSR-R4", Engine: "vector", Name: "inter-slice entry and exit",
		Cite: "002 L4581, L4626-4629, L6599-6610",
		Text: "vector_inter_slice_reduce is called once per pass: right after vector_init (InterFirst), then vector_intra_slice_branch or vector_final; or from a Way8 intra-slice stage — Branch, Logic, Fxp, FxpToFp, Widen, FpToFxp, Clip — (IntraFirst), then vector_final"})
	ruleXSROutput = NewRule(Rule{ID: "XSR-R5", Engine: "vector", Name: "output mapping",
		Cite: "002 L6584-6585, L6626-6634, L6681-6693",
		Text: "only Slice and Time are rewritten: SliceOut keeps Slice's digits outside the reduced factor and fills its freed positions by broadcast (a new axis), dummy (1 # n) or promotion (a Time digit); TimeOut keeps the other Time digits in order"})
	ruleXSRInner = NewRule(Rule{ID: "XSR-R6", Engine: "vector", Name: "reduced factor innermost",
		Cite: "002 L6626-6634, L6643-6653",
		Text: "the reduced factor R is the innermost digits of Slice = m![A, R], and every slice of it holds data"})
)

// InterSliceInput is a `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)`
// call on a stream.
type InterSliceInput struct {
	// DType is the stream's element type.
	DType dtype.DType
	// Op is the reduction.
	Op kernel.InterSliceOp
	// Slice, Time and Packet are the stream's mappings.
	Slice, Time, Packet *mapping.Expr
	// SliceOut and TimeOut are the call's type parameters.
	SliceOut, TimeOut *mapping.Expr
}

// DeriveInterSliceReduce checks an inter-slice reduction and derives its
// configuration (see the file comment).
func DeriveInterSliceReduce(spec *Spec, in InterSliceInput) (kernel.InterSliceReduceConfig, error) {
	var c kernel.InterSliceReduceConfig
	if spec == nil {
		return c, errors.New("vector: nil hardware spec")
	}
	if err := ceCheckExprs("vector", []string{"slice", "time", "packet", "SliceOut", "TimeOut"},
		in.Slice, in.Time, in.Packet, in.SliceOut, in.TimeOut); err != nil {
		return c, err
	}
	if !veTypeOK(spec, in.DType) || !kernel.InterSliceOpFor(in.DType, in.Op) {
		return c, ruleXSRType.Violate("InterSliceReduceOp %s on a %s stream", in.Op, in.DType)
	}
	lanes, err := veLanes(spec, in.DType, in.Packet)
	if err != nil {
		return c, err
	}
	n := in.Slice.Size()
	if max := spec.Vector.InterSliceSlices.Value; n > max {
		return c, ruleXSRScope.Violate("Slice %s has %d slices, a cluster %d", in.Slice.Text(), n, max).With("slices", n)
	}
	if in.SliceOut.Size() != n {
		return c, ruleXSROutput.Violate("SliceOut %s has %d positions, Slice %s has %d", in.SliceOut.Text(), in.SliceOut.Size(), in.Slice.Text(), n)
	}
	r, reduced, fillExpr, err := xsrGroup(in.Slice, in.SliceOut)
	if err != nil {
		return c, err
	}
	for _, d := range reduced {
		switch {
		case d.kind == cePad || d.size != d.live:
			return c, ruleXSRInner.Violate("reduced digit %s of Slice %s includes padding slices, which hold no data", d.text(), in.Slice.Text())
		case d.kind == ceBcast:
			return c, ruleXSRInner.Violate("reduced digit %s of Slice %s is a broadcast: its slices hold copies of one another, not parts to reduce", d.text(), in.Slice.Text())
		}
	}
	fill, err := ceDigits(fillExpr)
	if err != nil {
		return c, ruleXSROutput.Violate("SliceOut %s: %v", in.SliceOut.Text(), err)
	}
	ti, err := ceDigits(in.Time)
	if err != nil {
		return c, ruleXSROutput.Violate("Time %s: %v", in.Time.Text(), err)
	}
	to, err := ceDigits(in.TimeOut)
	if err != nil {
		return c, ruleXSROutput.Violate("TimeOut %s: %v", in.TimeOut.Text(), err)
	}
	sd, err := ceDigits(in.Slice)
	if err != nil {
		return c, ruleXSROutput.Violate("Slice %s: %v", in.Slice.Text(), err)
	}
	pd, err := ceDigits(in.Packet)
	if err != nil {
		return c, ruleXSROutput.Violate("Packet %s: %v", in.Packet.Text(), err)
	}
	// The reduced coordinates occur in the reduced slices only: summing
	// them while Time, Packet or the kept slices step them too would fold
	// positions the stream holds elsewhere (or padding, where the summed
	// coordinate overshoots).
	others := append(append(append([]ceDigit(nil), sd[len(reduced):]...), ti...), pd...)
	for _, x := range reduced {
		for _, y := range others {
			if x.kind == ceTerm && y.kind == ceTerm && x.axis == y.axis && x.stride < y.stride*y.live && y.stride < x.stride*x.live {
				return c, ruleXSRInner.Violate("reduced digit %s of Slice %s overlaps digit %s of the stream: the reduced coordinates must be the reduced slices' alone",
					x.text(), in.Slice.Text(), y.text())
			}
		}
	}
	if err := ceRefine(&ti, &fill, &to); err != nil {
		return c, ruleXSROutput.Violate("Time %s against SliceOut %s and TimeOut %s: %v", in.Time.Text(), in.SliceOut.Text(), in.TimeOut.Text(), err)
	}
	inputAxes := ceAxes(append(append(append([]ceDigit(nil), sd...), ti...), pd...))
	used := make([]bool, len(ti))
	// Fill digits, innermost first as ceDigits lists them.
	fc := make([]kernel.InterSliceDigit, len(fill))
	for k, d := range fill {
		out := kernel.InterSliceDigit{Size: d.size, Live: d.live, Term: d.text()}
		switch d.kind {
		case cePad, ceBcast: // a dummy `1 # n`, or a broadcast `n`
		case ceTerm:
			j := xsrMatch(ti, used, d, 0)
			switch {
			case j >= 0: // promotion (002 L6681-6693)
				used[j] = true
				out.Stride = ti[j].pos
			case xsrKept(reduced, d):
				return c, ruleXSRInner.Violate("SliceOut keeps Slice digit %s, which lies in the reduced block of the innermost %d slices of Slice %s: SliceOut keeps only the digits outside the reduced factor",
					d.text(), r, in.Slice.Text())
			case inputAxes[d.axis]:
				return c, ruleXSROutput.Violate("SliceOut digit %s steps axis %s, which the stream holds in other digits: a freed slot takes a Time digit whole, a new axis or a dummy",
					d.text(), d.axis)
			}
			// else: a broadcast over a new axis (002 L6661-6672)
		}
		fc[len(fill)-1-k] = out
	}
	// TimeOut digits keep their order among Time's (002 L6681-6693):
	// matched outermost first, each below the last.
	tc := make([]kernel.InterSliceDigit, len(to))
	below := len(ti) // Time digits at or above this index are taken
	for k := len(to) - 1; k >= 0; k-- {
		d := to[k]
		j := -1
		for i := below - 1; i >= 0; i-- {
			if !used[i] && xsrSame(ti[i], d) {
				j = i
				break
			}
		}
		if j < 0 {
			if xsrMatch(ti, used, d, 0) >= 0 {
				return c, ruleXSROutput.Violate("TimeOut %s reorders the digits of Time %s at %s", in.TimeOut.Text(), in.Time.Text(), d.text())
			}
			return c, ruleXSROutput.Violate("TimeOut digit %s is not a digit of Time %s left after promotion", d.text(), in.Time.Text())
		}
		used[j], below = true, j
		tc[len(to)-1-k] = kernel.InterSliceDigit{Size: d.size, Live: d.live, Stride: ti[j].pos, Term: d.text()}
	}
	for i, u := range used {
		if !u && ti[i].size > 1 {
			return c, ruleXSROutput.Violate("Time digit %s of %s is neither in TimeOut %s nor promoted into SliceOut %s: the Inter-Slice Block reduces slices, not time",
				ti[i].text(), in.Time.Text(), in.TimeOut.Text(), in.SliceOut.Text())
		}
	}
	c = kernel.InterSliceReduceConfig{DType: in.DType, Op: in.Op, Lanes: lanes, Slices: n, Ratio: r,
		InPackets: in.Time.Size(), OutPackets: in.TimeOut.Size(), Fill: fc, Time: tc}
	if err := CheckInterSliceConfig(spec, &c); err != nil {
		return kernel.InterSliceReduceConfig{}, err
	}
	return c, nil
}

// xsrGroup finds the reduction group: the smallest block of r innermost
// Slice positions, on a digit boundary, outside which SliceOut equals
// Slice. It returns r, the reduced digits and SliceOut's inner r positions.
func xsrGroup(slice, sliceOut *mapping.Expr) (int, []ceDigit, *mapping.Expr, error) {
	sd, err := ceDigits(slice)
	if err != nil {
		return 0, nil, nil, ruleXSRInner.Violate("Slice %s: %v", slice.Text(), err)
	}
	r := 1
	for k, d := range sd {
		// A term padded on top (`A / 256 # 256`: 8 live slices of 256)
		// may be reduced over its live positions alone: the padding is
		// then outside the group (a live block of slices at the bottom of
		// the cluster, as the builder spreads them, search/build.go
		// placeSlices).
		sizes := []int{d.size}
		if d.kind == ceTerm && d.live < d.size {
			sizes = []int{d.live, d.size}
		}
		for _, sz := range sizes {
			so, _, err1 := ceSplit(slice, r*sz)
			oo, oi, err2 := ceSplit(sliceOut, r*sz)
			if err1 != nil || err2 != nil || !ceEquiv(so, oo) {
				continue
			}
			red := append([]ceDigit(nil), sd[:k+1]...)
			red[k].size = sz
			return r * sz, red, oi, nil
		}
		r *= d.size
	}
	return 0, nil, nil, ruleXSRInner.Violate("SliceOut %s keeps no outer part of Slice %s: the reduced factor must be Slice's innermost digits, and SliceOut must keep the digits outside it",
		sliceOut.Text(), slice.Text())
}

// xsrKept reports whether term digit d names (part of) a reduced digit's
// coordinates: a Slice digit kept in SliceOut inside the reduced block.
func xsrKept(reduced []ceDigit, d ceDigit) bool {
	for _, x := range reduced {
		if x.kind == ceTerm && x.axis == d.axis && d.stride >= x.stride && d.stride*d.live <= x.stride*x.live {
			return true
		}
	}
	return false
}

// xsrSame reports whether two digits name the same positions: the same
// term range and size, or padding and broadcast digits of the same shape.
func xsrSame(a, b ceDigit) bool {
	if a.kind != b.kind || a.size != b.size || a.live != b.live {
		return false
	}
	return a.kind != ceTerm || a.sameRange(b)
}

// xsrMatch is the index of the first unused Time digit at or after from
// that d names, or -1.
func xsrMatch(ti []ceDigit, used []bool, d ceDigit, from int) int {
	for j := from; j < len(ti); j++ {
		if !used[j] && d.kind == ceTerm && xsrSame(ti[j], d) {
			return j
		}
	}
	return -1
}

// CheckInterSliceConfig checks that an inter-slice configuration, derived
// or stated by a kernel, can be run: groups of Ratio slices inside the
// stream's slices and a cluster, fill digits covering the group, output
// time digits covering TimeOut, and every source inside the input packets.
func CheckInterSliceConfig(spec *Spec, c *kernel.InterSliceReduceConfig) error {
	if spec == nil || c == nil {
		return errors.New("vector: nil spec or inter-slice configuration")
	}
	if !veTypeOK(spec, c.DType) || !kernel.InterSliceOpFor(c.DType, c.Op) {
		return ruleXSRType.Violate("InterSliceReduceOp %s on %s", c.Op, c.DType)
	}
	if c.Lanes != spec.Vector.Way8ElementsPerCycle.Value {
		return ruleVEFlit.Violate("%d lanes per packet, want %d", c.Lanes, spec.Vector.Way8ElementsPerCycle.Value)
	}
	if c.Slices < 1 || c.Slices > spec.Vector.InterSliceSlices.Value {
		return ruleXSRScope.Violate("%d slices, a cluster has %d", c.Slices, spec.Vector.InterSliceSlices.Value).With("slices", c.Slices)
	}
	if c.Ratio < 1 || c.Slices%c.Ratio != 0 {
		return ruleXSRInner.Violate("reduction groups of %d slices do not tile %d slices", c.Ratio, c.Slices).With("ratio", c.Ratio)
	}
	if c.InPackets < 1 || c.OutPackets < 1 {
		return fmt.Errorf("vector: inter-slice reduce of %d packets into %d", c.InPackets, c.OutPackets)
	}
	prod := func(ds []kernel.InterSliceDigit) (int, error) {
		n := 1
		for _, d := range ds {
			if d.Size < 1 || d.Live < 1 || d.Live > d.Size || d.Stride < 0 {
				return 0, fmt.Errorf("vector: inter-slice digit %+v", d)
			}
			if n > c.Slices*c.InPackets {
				return 0, errors.New("vector: inter-slice digits beyond the stream")
			}
			n *= d.Size
		}
		return n, nil
	}
	nf, err := prod(c.Fill)
	if err != nil {
		return err
	}
	nt, err := prod(c.Time)
	if err != nil {
		return err
	}
	if nf != c.Ratio || nt != c.OutPackets {
		return ruleXSROutput.Violate("fill digits cover %d of %d slots, time digits %d of %d packets", nf, c.Ratio, nt, c.OutPackets)
	}
	last := 0
	for _, ds := range [][]kernel.InterSliceDigit{c.Fill, c.Time} {
		for _, d := range ds {
			last += (d.Live - 1) * d.Stride
		}
	}
	if last >= c.InPackets {
		return ruleXSROutput.Violate("an output position reads input packet %d of %d", last, c.InPackets)
	}
	return nil
}

// ---- semantics

// InterSliceI32 is one step of an i32 inter-slice reduction (002
// L6612-6618): Add wraps, AddSat clamps to [−2^31, 2^31−1].
func InterSliceI32(op kernel.InterSliceOp, a, b int32) (int32, error) {
	switch op {
	case kernel.InterSliceAdd:
		return a + b, nil
	case kernel.InterSliceAddSat:
		return sat32(int64(a) + int64(b)), nil
	case kernel.InterSliceMax:
		return max(a, b), nil
	case kernel.InterSliceMin:
		return min(a, b), nil
	}
	return 0, fmt.Errorf("vector: %q is not an InterSliceReduceOpI32", op)
}

// InterSliceF32 is one step of an f32 inter-slice reduction (002
// L6619-6625): IEEE single precision, round to nearest even; Max and Min
// as math.Max and math.Min (a NaN operand gives NaN, +0 > −0).
func InterSliceF32(op kernel.InterSliceOp, a, b float32) (float32, error) {
	switch op {
	case kernel.InterSliceAdd:
		return a + b, nil
	case kernel.InterSliceMul:
		return a * b, nil
	case kernel.InterSliceMax:
		return float32(math.Max(float64(a), float64(b))), nil
	case kernel.InterSliceMin:
		return float32(math.Min(float64(a), float64(b))), nil
	}
	return 0, fmt.Errorf("vector: %q is not an InterSliceReduceOpF32", op)
}

// InterSliceFold folds the streams of one reduction group into acc, lane
// by lane: in[j] is the stream of the group's slice j, InPackets packets
// of Lanes little-endian 32-bit elements; acc = ((in[0] ∘ in[1]) ∘ …) ∘
// in[Ratio−1] (docs/spec-decisions.md "Inter-slice reduction order").
// acc may alias in[0]. It does not allocate.
func InterSliceFold(c *kernel.InterSliceReduceConfig, in [][]byte, acc []byte) error {
	if c == nil {
		return errors.New("vector: nil inter-slice configuration")
	}
	n := c.InPackets * c.Lanes * 4
	if len(in) != c.Ratio || len(acc) != n {
		return fmt.Errorf("vector: inter-slice fold of %d streams into %d bytes, want %d streams of %d bytes", len(in), len(acc), c.Ratio, n)
	}
	for j, s := range in {
		if len(s) != n {
			return fmt.Errorf("vector: slice %d of the group streams %d bytes, want %d packets of %d bytes", j, len(s), c.InPackets, c.Lanes*4)
		}
	}
	copy(acc, in[0])
	isF := c.DType == dtype.F32
	for j := 1; j < len(in); j++ {
		s := in[j]
		for i := 0; i < n; i += 4 {
			a, b := binary.LittleEndian.Uint32(acc[i:]), binary.LittleEndian.Uint32(s[i:])
			var v uint32
			if isF {
				f, err := InterSliceF32(c.Op, math.Float32frombits(a), math.Float32frombits(b))
				if err != nil {
					return err
				}
				v = math.Float32bits(f)
			} else {
				x, err := InterSliceI32(c.Op, int32(a), int32(b))
				if err != nil {
					return err
				}
				v = uint32(x)
			}
			binary.LittleEndian.PutUint32(acc[i:], v)
		}
	}
	return nil
}

// InterSliceOutput writes the stream of the group's slice j (OutPackets
// packets) from the group's folded stream acc: output time step t holds
// packet Source(j, t). It reports false, writing nothing, for a slice of
// SliceOut's padding (a dummy position). It does not allocate.
func InterSliceOutput(c *kernel.InterSliceReduceConfig, acc []byte, j int, out []byte) (bool, error) {
	if c == nil {
		return false, errors.New("vector: nil inter-slice configuration")
	}
	pb := c.Lanes * 4
	if len(acc) != c.InPackets*pb || len(out) != c.OutPackets*pb {
		return false, fmt.Errorf("vector: inter-slice output of %d bytes from %d, want %d from %d", len(out), len(acc), c.OutPackets*pb, c.InPackets*pb)
	}
	if j < 0 || j >= c.Ratio {
		return false, fmt.Errorf("vector: slice %d outside the group of %d", j, c.Ratio)
	}
	if !c.LiveSlot(j) {
		return false, nil
	}
	for t := 0; t < c.OutPackets; t++ {
		src, ok := c.Source(j, t)
		if !ok {
			clear(out[t*pb : (t+1)*pb]) // a padded TimeOut position
			continue
		}
		if src < 0 || src >= c.InPackets {
			return false, fmt.Errorf("vector: output packet %d of slice %d reads input packet %d of %d", t, j, src, c.InPackets)
		}
		copy(out[t*pb:(t+1)*pb], acc[src*pb:(src+1)*pb])
	}
	return true, nil
}

// ---- lowering

// The Way8 intra-slice stages, by their position in the stage order (002
// L4733-4747), from which vector_inter_slice_reduce may be called
// (IntraFirst, 002 L6603-6604).
var xsrEligible = map[int]string{1: "Branch", 2: "Logic", 3: "Fxp", 4: "FxpToFp", 9: "Widen", 10: "FpToFxp", 11: "Clip"}

// The pass's inter-slice state (vePass.inter).
const (
	xsrNone       = iota // no inter-slice reduction yet
	xsrInterFirst        // reduced right after vector_init (002 L4629)
	xsrIntraFirst        // reduced after the intra-slice block (002 L4628)
)

// enterInterSlice records the pass's inter-slice reduction (XSR-R4) and
// the packet mode it leaves: the Inter-Slice Block takes and gives Way8
// packets of one flit (002 L4731, L6603-6604), so an InterFirst reduction
// continues into vector_intra_slice_branch, a Way8 stage (002 L4735,
// L6610), or vector_final.
func (v *vePass) enterInterSlice(last kernel.StageKind) error {
	if v.inter != xsrNone {
		return ruleXSREntry.Violate("a second vector_inter_slice_reduce in one pass")
	}
	if v.stage == veStageInit {
		v.inter, v.way = xsrInterFirst, 8
		return nil
	}
	if _, ok := xsrEligible[v.stage]; !ok {
		return ruleXSREntry.Violate("vector_inter_slice_reduce after %s; from the intra-slice block it follows only Branch, Logic, Fxp, FxpToFp, Widen, FpToFxp or Clip", last)
	}
	v.inter, v.way = xsrIntraFirst, 8
	return nil
}

// afterInterSlice checks a stage entered after an inter-slice reduction
// (XSR-R4): after an IntraFirst one only vector_final follows; after an
// InterFirst one vector_final may end the pass at once (done reports that
// the stage is entered), or vector_intra_slice_branch opens the
// intra-slice block.
func (v *vePass) afterInterSlice(pos int, kind kernel.StageKind) (done bool, err error) {
	switch {
	case v.inter == xsrIntraFirst && pos != veStageOutput:
		return false, ruleXSREntry.Violate("%s after an IntraFirst vector_inter_slice_reduce; only vector_final follows it", kind)
	case v.inter == xsrInterFirst && v.stage == veStageInit && pos == veStageOutput:
		v.stage = pos
		return true, nil
	}
	return false, nil
}

// lowerInterSlice lowers vector_inter_slice_reduce: the pass's order, the
// derivation on the stream, and the stream's new Slice and Time.
func lowerInterSlice(spec *Spec, st *chainState, stage *kernel.Stage) error {
	if err := st.ve.enterInterSlice(st.prev); err != nil {
		return err
	}
	if stage.Slice == nil || stage.Time == nil {
		return fmt.Errorf("vector_inter_slice_reduce states SliceOut and TimeOut (slice, time)")
	}
	if stage.Packet != nil && !ceEquiv(stage.Packet, st.packet) {
		return ruleXSRPacket.Violate("Packet %s after the reduction, %s before", stage.Packet.Text(), st.packet.Text())
	}
	op, d, err := kernel.ParseInterSliceOp(stage.Param)
	if err != nil {
		return err
	}
	if d != 0 && d != st.dt {
		return ruleXSRType.Violate("%s::%s on a %s stream", kernel.InterSliceEnum(d), op, st.dt)
	}
	c, err := DeriveInterSliceReduce(spec, InterSliceInput{DType: st.dt, Op: op, Slice: st.slice, Time: st.time, Packet: st.packet,
		SliceOut: stage.Slice, TimeOut: stage.Time})
	if err != nil {
		return err
	}
	if stage.Config.VectorInterSlice == nil {
		stage.Config.VectorInterSlice = &c
	} else if err := CheckInterSliceConfig(spec, stage.Config.VectorInterSlice); err != nil {
		return err
	}
	st.slice, st.time = stage.Slice, stage.Time
	return nil
}
