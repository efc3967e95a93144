package engines

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Reducer (002 L4297-4548): `contract::<OutPacket>()`, the spatial
// reduction tree, and `accumulate::<OutTime, OutPacket>(kind)`, the temporal
// accumulator.
//
// contract (computing.md §7.4 D1): with P the elements of the 64-byte
// computation packet, the tree depth n is the smallest n ≤ the type's depth
// with Packet / 2^n ≡ OutPacket once both lose their outermost padding
// (002 L4392, L4437-4441; docs/spec-decisions.md "Reducer tree depth of
// padded packets"); m = OutPacket::SIZE columns carry data.
//
// accumulate (002 L4447-4448, L4490-4492): Interleaved has
// OutTime = [Time', OutPacket_contract] and OutPacket = Row # 8; Sequential
// has OutTime = [Time', Row, Packet_outer] and OutPacket = Packet_inner with
// the contract packet padded to a multiple of 8 and split at 8. Time' is
// Time with the reduced axes removed, order kept (002 L4448, L4491).

var (
	ruleRedRows = NewRule(Rule{ID: "RED-R1", Engine: "reducer", Name: "row count",
		Cite: "002 L4529-4530",
		Text: "the Row dimension has size 1, 2, 4 or 8"})
	ruleRedPacket = NewRule(Rule{ID: "RED-R2", Engine: "reducer", Name: "input packet",
		Cite: "002 L4099, L4387, L4530-4531",
		Text: "each Row multiplies 64-byte packets: no more elements than the type's tree depth reduces (i4 128, i8/f8 64, bf16 32)"})
	ruleRedSpatial = NewRule(Rule{ID: "RED-R3", Engine: "reducer", Name: "spatial reduction",
		Cite: "002 L4392, L4437-4441",
		Text: "contract::<OutPacket> keeps Packet / 2^n for a tree depth n: the innermost Packet % 2^n is summed; only padded outer Packet axes may be sliced away"})
	ruleRedWidth = NewRule(Rule{ID: "RED-R4", Engine: "reducer", Name: "spatial output limit",
		Cite: "002 L4397-4398, L4531-4532",
		Text: "the tree output is resized to 32 columns; configurations producing more than 32 output elements are invalid"})
	ruleRedMax = NewRule(Rule{ID: "RED-R6", Engine: "reducer", Name: "reduce-max row",
		Cite: "002 L4394-4395, L4533",
		Text: "reduce-max uses a single Row (Row 0)"})
	ruleRedInterleavedCap = NewRule(Rule{ID: "RED-R8", Engine: "reducer", Name: "interleaved capacity",
		Cite: "002 L4434, L4535-4536",
		Text: "Interleaved: the OutTime axes inner to the outermost reduce axis hold at most 128 (align_up(Row, 8) × inner ≤ 1024)"})
	ruleRedSequentialCap = NewRule(Rule{ID: "RED-R9", Engine: "reducer", Name: "sequential capacity",
		Cite: "002 L4434, L4488-4489, L4524, L4537-4538",
		Text: "Sequential: the OutTime axes inner to the outermost reduce axis, Row included, hold at most 32 (align_up(len, 32) × inner ≤ 1024)"})
	ruleRedInterleaved = NewRule(Rule{ID: "RED-R10", Engine: "reducer", Name: "interleaved output",
		Cite: "002 L4443, L4447-4448",
		Text: "Interleaved: OutTime = [Time', Packet / 2^n = m] and OutPacket = Row # 8; 32 / m column groups interleave"})
	ruleRedSequential = NewRule(Rule{ID: "RED-R11", Engine: "reducer", Name: "sequential output",
		Cite: "002 L4490-4492",
		Text: "Sequential: OutTime = [Time', Row, Packet_outer] and OutPacket = Packet_inner; only multiples of 8 elements (8, 16, 24, 32) are output"})
	ruleRedOrder = NewRule(Rule{ID: "RED-R12", Engine: "reducer", Name: "time order",
		Cite: "002 L4329-4331, L4448, L4491",
		Text: "OutTime keeps the order of the Time axes; the removed axes undergo reduce-add"})
	ruleRedPadded = NewRule(Rule{ID: "RED-R14", Engine: "reducer", Name: "reduced padding",
		Cite: "002 L4406-4408, L4431",
		Text: "a reduced Time axis is accumulated over every iteration, so it carries no padding"})
)

// ContractInput is what `aligned.contract::<OutPacket>()` derives from.
type ContractInput struct {
	// DType is the element type of both operands.
	DType dtype.DType
	// Op is the reduction; "" means Add.
	Op kernel.ReduceOp
	// Row is the computation Row mapping.
	Row *mapping.Expr
	// Packet is the computation packet (align's OutPacket).
	Packet *mapping.Expr
	// OutPacket is contract's OutPacket.
	OutPacket *mapping.Expr
}

// redDepth returns the hardware tree depth of an input type (002 L4388).
func redDepth(spec *Spec, d dtype.DType) (int, error) {
	t := &spec.Reducer.TreeDepth
	switch d {
	case dtype.I4, dtype.I5:
		return t.I4.Value, nil
	case dtype.I8, dtype.I9:
		return t.I8.Value, nil
	case dtype.F8E4M3, dtype.F8E5M2:
		return t.F8.Value, nil
	case dtype.BF16:
		return t.BF16.Value, nil
	}
	return 0, ruleCEType.Violate("element type %s is not a Reducer input (i4, i8, f8, bf16)", d)
}

// DeriveContract derives the spatial stage.
func DeriveContract(spec *Spec, in ContractInput) (kernel.ContractConfig, error) {
	var c kernel.ContractConfig
	if spec == nil {
		return c, errors.New("reducer: nil hardware spec")
	}
	if err := ceCheckExprs("reducer", []string{"row", "packet", "out packet"}, in.Row, in.Packet, in.OutPacket); err != nil {
		return c, err
	}
	out, err := dtype.AccType(in.DType) // widening, 002 L4391
	if err != nil {
		return c, ruleCEType.Violate("element type %s is not a Reducer input (i4, i8, f8, bf16)", in.DType)
	}
	maxDepth, err := redDepth(spec, in.DType)
	if err != nil {
		return c, err
	}
	op := in.Op
	if op == "" {
		op = kernel.ReduceAdd
	}
	if op != kernel.ReduceAdd && op != kernel.ReduceMax {
		return c, fmt.Errorf("reducer: unknown reduce op %q (want Add or Max)", string(op))
	}
	rows := in.Row.Size()
	if !ceContains(spec.Contraction.Rows.Value, rows) {
		return c, ruleRedRows.Violate("Row %s has size %d, want one of %v", in.Row.Text(), rows, spec.Contraction.Rows.Value).With("rows", rows)
	}
	if op == kernel.ReduceMax && rows > spec.Reducer.ReduceMaxRows.Value {
		return c, ruleRedMax.Violate("reduce-max with %d Rows, limit %d", rows, spec.Reducer.ReduceMaxRows.Value).With("rows", rows)
	}
	mac := spec.Stream.MACWidthBytes.Value
	pb, err := ceBytes(in.DType, in.Packet.Size(), "packet")
	if err != nil {
		return c, err
	}
	width := in.Packet.Size()
	if pb != mac || width > 1<<maxDepth {
		return c, ruleRedPacket.Violate("computation packet %s is %d bytes (%d elements), want %d bytes of at most %d elements",
			in.Packet.Text(), pb, width, mac, 1<<maxDepth).With("packet_bytes", pb)
	}
	want, err := ceStrip(in.OutPacket)
	if err != nil {
		return c, ruleRedSpatial.Violate("OutPacket %s: %v", in.OutPacket.Text(), err)
	}
	depth := -1
	for n := 0; n <= maxDepth && 1<<n <= width; n++ {
		if width%(1<<n) != 0 {
			break
		}
		po, _, err := ceSplit(in.Packet, 1<<n)
		if err != nil {
			continue
		}
		got, err := ceStrip(po)
		if err != nil || !ceEquiv(got, want) || in.OutPacket.Size() > po.Size() {
			continue
		}
		depth = n
		break
	}
	if depth < 0 {
		return c, ruleRedSpatial.Violate("OutPacket %s is not Packet %s / 2^n for any tree depth n ≤ %d",
			in.OutPacket.Text(), in.Packet.Text(), maxDepth)
	}
	m := in.OutPacket.Size()
	if lim := spec.Reducer.SpatialOutputLimitElements.Value; m > lim {
		return c, ruleRedWidth.Violate("contract OutPacket %s has %d elements at tree depth %d, limit %d", in.OutPacket.Text(), m, depth, lim).
			With("elements", m)
	}
	return kernel.ContractConfig{In: in.DType, Out: out, Op: op, Rows: rows, Width: width, Depth: depth,
		Columns: width >> depth, Valid: m}, nil
}

// AccumulateInput is what `contracted.accumulate::<OutTime, OutPacket>(kind)`
// derives from.
type AccumulateInput struct {
	// Contract is the spatial stage's configuration.
	Contract kernel.ContractConfig
	// Row is the computation Row mapping.
	Row *mapping.Expr
	// Time is the computation Time mapping (align's OutTime).
	Time *mapping.Expr
	// Packet is contract's OutPacket.
	Packet *mapping.Expr
	// OutTime and OutPacket are accumulate's mappings.
	OutTime, OutPacket *mapping.Expr
	// Kind is the AccumulationKind.
	Kind kernel.AccumulationKind
}

// DeriveAccumulate derives the temporal stage.
func DeriveAccumulate(spec *Spec, in AccumulateInput) (kernel.AccumulateConfig, error) {
	var c kernel.AccumulateConfig
	if spec == nil {
		return c, errors.New("reducer: nil hardware spec")
	}
	if err := ceCheckExprs("reducer", []string{"row", "time", "contract packet", "out time", "out packet"},
		in.Row, in.Time, in.Packet, in.OutTime, in.OutPacket); err != nil {
		return c, err
	}
	r := &spec.Reducer
	rows, m := in.Row.Size(), in.Packet.Size()
	if !ceContains(spec.Contraction.Rows.Value, rows) {
		return c, ruleRedRows.Violate("Row %s has size %d, want one of %v", in.Row.Text(), rows, spec.Contraction.Rows.Value).With("rows", rows)
	}
	if in.Contract.Valid != m || in.Contract.Rows != rows {
		return c, fmt.Errorf("reducer: contract configuration (%d columns, %d rows) does not match packet %s and Row %s",
			in.Contract.Valid, in.Contract.Rows, in.Packet.Text(), in.Row.Text())
	}
	bus := r.OutputBusElements.Value // 8, 002 L4436, L4491
	cols := r.AccumulatorColumns.Value
	var timeOut *mapping.Expr
	outLen := bus
	switch in.Kind {
	case kernel.Interleaved:
		if m < 1 || cols%m != 0 {
			return c, ruleRedInterleaved.Violate("m = %d columns do not divide the %d accumulator columns into groups", m, cols).With("m", m)
		}
		rowPad, err := mapping.NewPadding(in.Row, bus, mapping.Top)
		if err != nil || !ceEquiv(in.OutPacket, rowPad) {
			return c, ruleRedInterleaved.Violate("OutPacket %s must be Row # %d = m![%s # %d]", in.OutPacket.Text(), bus, in.Row.String(), bus)
		}
		tp, err := RetainedTime(spec, in.Kind, in.Row, in.Packet, in.OutTime)
		if err != nil {
			return c, err
		}
		timeOut = tp
	case kernel.Sequential:
		outLen = (m + bus - 1) / bus * bus
		if !ceContains(r.SequentialOutputElements.Value, outLen) {
			return c, ruleRedSequential.Violate("contract packet %s of %d elements pads to %d, want one of %v",
				in.Packet.Text(), m, outLen, r.SequentialOutputElements.Value).With("elements", outLen)
		}
		padded, err := mapping.NewPadding(in.Packet, outLen, mapping.Top)
		if err != nil {
			return c, ruleRedSequential.Violate("contract packet %s cannot pad to %d: %v", in.Packet.Text(), outLen, err)
		}
		_, pInner, err := ceSplit(padded, bus)
		if err != nil || !ceEquiv(in.OutPacket, pInner) {
			return c, ruleRedSequential.Violate("OutPacket %s must be Packet_inner m![%s]", in.OutPacket.Text(), ceText(pInner))
		}
		tp, err := RetainedTime(spec, in.Kind, in.Row, in.Packet, in.OutTime)
		if err != nil {
			return c, err
		}
		timeOut = tp
	default:
		return c, fmt.Errorf("reducer: unknown accumulation kind %q (want Interleaved or Sequential)", string(in.Kind))
	}

	// Time' against Time (002 L4448, L4491).
	td, err := ceDigits(in.Time)
	if err != nil {
		return c, ruleRedOrder.Violate("Time cannot be walked: %v", err)
	}
	od, err := ceDigits(timeOut)
	if err != nil {
		return c, ruleRedOrder.Violate("OutTime' %s cannot be walked: %v", timeOut.Text(), err)
	}
	if err := ceRefine(&td, &od); err != nil {
		return c, ruleRedOrder.Violate("OutTime' %s against Time %s: %v", timeOut.Text(), in.Time.Text(), err)
	}
	survive := make([]bool, len(td))
	j := 0
	for i, d := range td {
		if j < len(od) && redSameDigit(d, od[j]) {
			survive[i] = true
			j++
		}
	}
	if j < len(od) {
		return c, ruleRedOrder.Violate("OutTime' %s is not Time %s with axes removed in order (no match for %s)",
			timeOut.Text(), in.Time.Text(), od[j].text())
	}
	loops := make([]kernel.AccLoop, len(td))
	outer, iters := -1, 1
	for i, d := range td {
		loops[i] = kernel.AccLoop{Size: d.size, Reduced: !survive[i], Term: d.text()}
		if !survive[i] {
			if d.live != d.size {
				return c, ruleRedPadded.Violate("reduced Time term %s has %d live of %d iterations", d.text(), d.live, d.size)
			}
			outer = i
			iters *= d.size
		}
	}
	inner := 1
	for i := 0; i < outer; i++ {
		if survive[i] {
			inner *= td[i].size
		}
	}
	c = kernel.AccumulateConfig{Kind: in.Kind, Rows: rows, Valid: m, Columns: in.Contract.Columns, OutLen: outLen,
		Loops: loops, Iterations: iters, InnerTime: inner}
	switch in.Kind {
	case kernel.Interleaved:
		c.InnerAxes, c.Capacity = inner*m, r.InterleavedInnerCapacity.Value
		c.Beats = inner * m
		c.Groups = cols / m // 002 L4443
		if c.InnerAxes > c.Capacity {
			return kernel.AccumulateConfig{}, ruleRedInterleavedCap.Violate("OutTime axes inner to the outermost reduce axis hold %d × m %d = %d, limit %d",
				inner, m, c.InnerAxes, c.Capacity).With("inner", c.InnerAxes)
		}
	case kernel.Sequential:
		c.InnerAxes, c.Capacity = inner*rows, r.SequentialInnerCapacity.Value
		c.Beats = inner * rows * outLen / bus
		c.Groups = r.AccumulatorRows.Value / rows // 002 L4488-4489
		if c.InnerAxes > c.Capacity {
			return kernel.AccumulateConfig{}, ruleRedSequentialCap.Violate("OutTime axes inner to the outermost reduce axis hold %d × Row %d = %d, limit %d",
				inner, rows, c.InnerAxes, c.Capacity).With("inner", c.InnerAxes)
		}
	}
	return c, nil
}

// RetainedTime is Time' of `accumulate::<OutTime, OutPacket>(kind)`: the
// Time axes the temporal accumulation keeps, which is OutTime without what
// the kind appends to them, the contract's packet for Interleaved (OutTime
// = [Time', Packet], 002 L4448) and [Row, Packet_outer] for Sequential
// (OutTime = [Time', Row, Packet_outer], Packet padded to a multiple of the
// 8-element output bus, 002 L4491). packet is contract's OutPacket and row
// the computation's Row. The newer library spells the accumulation as two
// calls, contract_time::<Time'>() and contract_lane::<OutTime,
// OutPacket>(mode); this is the first one's argument.
func RetainedTime(spec *Spec, kind kernel.AccumulationKind, row, packet, outTime *mapping.Expr) (*mapping.Expr, error) {
	if spec == nil {
		return nil, errors.New("reducer: nil hardware spec")
	}
	if err := ceCheckExprs("reducer", []string{"row", "contract packet", "out time"}, row, packet, outTime); err != nil {
		return nil, err
	}
	bus := spec.Reducer.OutputBusElements.Value // 8, 002 L4436, L4491
	m := packet.Size()
	switch kind {
	case kernel.Interleaved:
		if m < 1 || outTime.Size()%m != 0 {
			return nil, ruleRedInterleaved.Violate("OutTime %s must end with the contract packet %s", outTime.Text(), packet.Text())
		}
		tp, cp, err := ceSplit(outTime, m)
		if err != nil || !ceEquiv(cp, packet) {
			return nil, ruleRedInterleaved.Violate("OutTime %s must end with the contract packet %s", outTime.Text(), packet.Text())
		}
		return tp, nil
	case kernel.Sequential:
		outLen := (m + bus - 1) / bus * bus
		padded, err := mapping.NewPadding(packet, outLen, mapping.Top)
		if err != nil {
			return nil, ruleRedSequential.Violate("contract packet %s cannot pad to %d: %v", packet.Text(), outLen, err)
		}
		pOuter, _, err := ceSplit(padded, bus)
		if err != nil {
			return nil, ruleRedSequential.Violate("contract packet %s padded to %d cannot split at %d: %v", packet.Text(), outLen, bus, err)
		}
		tail := mapping.Pair(row, pOuter)
		if outTime.Size()%tail.Size() != 0 {
			return nil, ruleRedSequential.Violate("OutTime %s must end with [Row, Packet_outer] = m![%s]", outTime.Text(), tail.String())
		}
		tp, rest, err := ceSplit(outTime, tail.Size())
		if err != nil || !ceEquiv(rest, tail) {
			return nil, ruleRedSequential.Violate("OutTime %s must end with [Row, Packet_outer] = m![%s]", outTime.Text(), tail.String())
		}
		return tp, nil
	}
	return nil, fmt.Errorf("reducer: unknown accumulation kind %q (want Interleaved or Sequential)", string(kind))
}

// redSameDigit reports whether two loops are the same loop.
func redSameDigit(a, b ceDigit) bool {
	if a.kind != b.kind || a.size != b.size {
		return false
	}
	return a.kind != ceTerm || (a.axis == b.axis && a.stride == b.stride && a.live == b.live)
}

// ceText prints e, or its error.
func ceText(e *mapping.Expr) string {
	if e == nil {
		return "<nil>"
	}
	return e.String()
}

// ReducerInput is a whole contraction's Reducer: contract then accumulate.
type ReducerInput struct {
	// DType is the operands' element type.
	DType dtype.DType
	// Op is the reduction; "" means Add.
	Op kernel.ReduceOp
	// Row, Time and Packet are the computation mapping.
	Row, Time, Packet *mapping.Expr
	// ContractPacket is contract::<OutPacket>.
	ContractPacket *mapping.Expr
	// OutTime and OutPacket are accumulate::<OutTime, OutPacket>.
	OutTime, OutPacket *mapping.Expr
	// Kind is the AccumulationKind.
	Kind kernel.AccumulationKind
}

// DeriveReducer derives both Reducer stages.
func DeriveReducer(spec *Spec, in ReducerInput) (kernel.ReducerConfig, error) {
	cc, err := DeriveContract(spec, ContractInput{DType: in.DType, Op: in.Op, Row: in.Row, Packet: in.Packet, OutPacket: in.ContractPacket})
	if err != nil {
		return kernel.ReducerConfig{}, err
	}
	ac, err := DeriveAccumulate(spec, AccumulateInput{Contract: cc, Row: in.Row, Time: in.Time, Packet: in.ContractPacket,
		OutTime: in.OutTime, OutPacket: in.OutPacket, Kind: in.Kind})
	if err != nil {
		return kernel.ReducerConfig{}, err
	}
	return kernel.ReducerConfig{Contract: cc, Accumulate: ac}, nil
}

// AccumulateStep is the accumulator's control for computation time step t
// (002 L4410-4432): the slot it updates, whether it stores (first pass over
// the reduced axes) or accumulates, and whether it completes a block, whose
// slots are then output. It does not allocate.
func AccumulateStep(c *kernel.AccumulateConfig, t int) (slot int, store, emit bool) {
	outer := -1
	for i, l := range c.Loops {
		if l.Reduced {
			outer = i
		}
	}
	store, emit = true, true
	w := 1
	for i, l := range c.Loops {
		if l.Size < 1 {
			return 0, false, false
		}
		d := t % l.Size
		t /= l.Size
		switch {
		case l.Reduced:
			if d != 0 {
				store = false
			}
			if d != l.Size-1 {
				emit = false
			}
		case i < outer:
			slot += d * w
			w *= l.Size
			if d != l.Size-1 {
				emit = false
			}
		}
	}
	return slot, store, emit
}

// SpatialReduce is the multiply and reduction tree of one Row
// (002 L4384-4392): products of the 64-byte stream packet x and weight
// packet w, widened (i4/i8 → i32, f8/bf16 → f32), then Depth levels of
// adjacent pair sums, s_k[i] = s_{k−1}[2i] + s_{k−1}[2i+1] (or max). It
// writes the Columns results to outF (float inputs) or outI (integer
// inputs). Float arithmetic is f32 with round-to-nearest-even and integer
// arithmetic wraps (docs/spec-decisions.md "Reducer arithmetic"). It does not
// allocate.
func SpatialReduce(c *kernel.ContractConfig, x, w []byte, outF []float32, outI []int32) error {
	if c == nil || c.Width < 1 || c.Width > 128 || c.Depth < 0 || c.Width>>c.Depth < 1 {
		return errors.New("reducer: invalid contract configuration")
	}
	q := c.Width >> c.Depth
	isMax := c.Op == kernel.ReduceMax
	if c.In.IsFloat() {
		if len(outF) < q {
			return fmt.Errorf("reducer: output buffer of %d, want %d", len(outF), q)
		}
		var s [128]float32 // the widest packet: 128 i4, 002 L4388
		fast := c.In == dtype.BF16 && len(x) >= 2*c.Width && len(w) >= 2*c.Width
		if fast {
			// The same widening as LoadF32 (dtype.F32FromBF16), without its
			// per-element dispatch: the simulator's hot loop.
			for i := 0; i < c.Width; i++ {
				s[i] = dtype.F32FromBF16(binary.LittleEndian.Uint16(x[2*i:])) * dtype.F32FromBF16(binary.LittleEndian.Uint16(w[2*i:]))
			}
		}
		for i := 0; i < c.Width && !fast; i++ {
			a, err := c.In.LoadF32(x, i)
			if err != nil {
				return err
			}
			b, err := c.In.LoadF32(w, i)
			if err != nil {
				return err
			}
			s[i] = float32(a * b)
		}
		for n, k := c.Width, 0; k < c.Depth; k++ {
			n /= 2
			for i := 0; i < n; i++ {
				if isMax {
					s[i] = float32(math.Max(float64(s[2*i]), float64(s[2*i+1])))
				} else {
					s[i] = s[2*i] + s[2*i+1]
				}
			}
		}
		copy(outF[:q], s[:q])
		return nil
	}
	if len(outI) < q {
		return fmt.Errorf("reducer: output buffer of %d, want %d", len(outI), q)
	}
	var s [128]int32
	for i := 0; i < c.Width; i++ {
		a, err := c.In.LoadInt(x, i)
		if err != nil {
			return err
		}
		b, err := c.In.LoadInt(w, i)
		if err != nil {
			return err
		}
		s[i] = int32(a) * int32(b)
	}
	for n, k := c.Width, 0; k < c.Depth; k++ {
		n /= 2
		for i := 0; i < n; i++ {
			if isMax {
				s[i] = redMaxI(s[2*i], s[2*i+1])
			} else {
				s[i] = s[2*i] + s[2*i+1]
			}
		}
	}
	copy(outI[:q], s[:q])
	return nil
}

func redMaxI(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// Reducer runs one contraction's Reducer on packets for the simulator: the
// spatial tree per Row, the resize to 32 columns (002 L4396-4405) and the
// temporal accumulator (002 L4406-4492). Its buffers are allocated once by
// NewReducer; Step does not allocate.
type Reducer struct {
	cc      kernel.ContractConfig
	ac      kernel.AccumulateConfig
	mac     int
	cols    int
	bus     int
	float   bool
	accF    []float32
	accI    []int32
	colF    [128]float32
	colI    [128]int32
	out     []byte
	outerIx int
}

// NewReducer prepares a Reducer for a configuration.
func NewReducer(spec *Spec, c kernel.ReducerConfig) (*Reducer, error) {
	if spec == nil {
		return nil, errors.New("reducer: nil hardware spec")
	}
	ac := c.Accumulate
	if ac.Rows < 1 || ac.Rows > spec.Reducer.Rows.Value || ac.InnerTime < 1 || ac.Valid < 1 || ac.Beats < 1 ||
		c.Contract.Rows != ac.Rows || c.Contract.Width < 1 || c.Contract.Width > 128 {
		return nil, errors.New("reducer: invalid configuration")
	}
	cols := spec.Reducer.AccumulatorColumns.Value
	bus := spec.Reducer.OutputBusElements.Value
	// What Step indexes: the tree's columns, the accumulator's columns and
	// the output beats (a configuration written by hand may state anything).
	cc := c.Contract
	beats := ac.InnerTime * ac.Valid // Interleaved: one value per Row per beat
	if ac.Kind != kernel.Interleaved {
		beats = (ac.InnerTime*ac.Rows*ac.OutLen + bus - 1) / bus
	}
	if cc.Depth < 0 || cc.Width>>cc.Depth < 1 || cc.Columns != cc.Width>>cc.Depth || ac.Valid > cols || ac.OutLen < 0 || ac.OutLen > cols ||
		ac.InnerTime > 1<<20 || beats > ac.Beats || ac.Beats > 1<<20 {
		return nil, errors.New("reducer: invalid configuration")
	}
	r := &Reducer{cc: c.Contract, ac: ac, mac: spec.Stream.MACWidthBytes.Value, cols: cols,
		bus: bus, float: c.Contract.In.IsFloat(), outerIx: -1}
	n := ac.Rows * ac.InnerTime * cols
	if r.float {
		r.accF = make([]float32, n)
	} else {
		r.accI = make([]int32, n)
	}
	r.out = make([]byte, ac.Beats*r.bus*4)
	for i, l := range ac.Loops {
		if l.Reduced {
			r.outerIx = i
		}
	}
	return r, nil
}

// Step consumes computation time step t: the 64-byte stream packet x and the
// Rows × 64 bytes of weight packets w (Row r at w[r·64:]). When t completes a
// block it returns the block's output beats, 32 bytes each (8 little-endian
// f32 or i32), in OutTime order; the slice is valid until the next Step.
// Interleaved beats hold one value per Row, Rows ≥ Row::SIZE reading 0
// (docs/spec-decisions.md "Reducer dummy rows"); Sequential beats hold 8
// columns of one Row.
func (r *Reducer) Step(t int, x, w []byte) ([]byte, error) {
	if len(x) != r.mac || len(w) != r.ac.Rows*r.mac {
		return nil, fmt.Errorf("reducer: packets of %d and %d bytes, want %d and %d", len(x), len(w), r.mac, r.ac.Rows*r.mac)
	}
	slot, store, emit := AccumulateStep(&r.ac, t)
	if slot >= r.ac.InnerTime {
		return nil, fmt.Errorf("reducer: time step %d maps to slot %d of %d", t, slot, r.ac.InnerTime)
	}
	q := r.cc.Columns
	isMax := r.cc.Op == kernel.ReduceMax
	for row := 0; row < r.ac.Rows; row++ {
		if err := SpatialReduce(&r.cc, x, w[row*r.mac:(row+1)*r.mac], r.colF[:], r.colI[:]); err != nil {
			return nil, err
		}
		base := (row*r.ac.InnerTime + slot) * r.cols
		n := r.cols // Sequential: every column, zero beyond q (002 L4487)
		if r.ac.Kind == kernel.Interleaved {
			n = r.ac.Valid // only the first m columns are written (002 L4438)
		}
		for col := 0; col < n; col++ {
			if r.float {
				v := float32(0)
				if col < q {
					v = r.colF[col]
				}
				switch {
				case store:
					r.accF[base+col] = v
				case isMax:
					r.accF[base+col] = float32(math.Max(float64(r.accF[base+col]), float64(v)))
				default:
					r.accF[base+col] += v
				}
			} else {
				v := int32(0)
				if col < q {
					v = r.colI[col]
				}
				switch {
				case store:
					r.accI[base+col] = v
				case isMax:
					r.accI[base+col] = redMaxI(r.accI[base+col], v)
				default:
					r.accI[base+col] += v
				}
			}
		}
	}
	if !emit {
		return nil, nil
	}
	k := 0
	put := func(row, s, col int) {
		var u uint32
		if row < r.ac.Rows {
			i := (row*r.ac.InnerTime+s)*r.cols + col
			if r.float {
				u = math.Float32bits(r.accF[i])
			} else {
				u = uint32(r.accI[i])
			}
		}
		binary.LittleEndian.PutUint32(r.out[k:], u)
		k += 4
	}
	for s := 0; s < r.ac.InnerTime; s++ {
		if r.ac.Kind == kernel.Interleaved {
			for j := 0; j < r.ac.Valid; j++ {
				for row := 0; row < r.bus; row++ {
					put(row, s, j)
				}
			}
			continue
		}
		for row := 0; row < r.ac.Rows; row++ {
			for col := 0; col < r.ac.OutLen; col++ {
				put(row, s, col)
			}
		}
	}
	return r.out[:k], nil
}

// Rules of a stated Reducer configuration.
var (
	ruleRedStated = NewRule(Rule{ID: "RED-R15", Engine: "reducer", Name: "contract follows from its types",
		Cite: "002 L4310-4317, L4383-4399",
		Text: "contract::<OutPacket>() widens i4/i8 to i32 and f8/bf16 to f32; its width (64 bytes of the input type), tree depth and columns follow from the stream's type and Packet and the OutPacket"})
	ruleRedAccStated = NewRule(Rule{ID: "RED-R16", Engine: "reducer", Name: "accumulate takes the contraction's output",
		Cite: "002 L4318-4324, L4406-4441",
		Text: "accumulate::<OutTime, OutPacket>(kind) accumulates the contraction's Rows and its m valid columns of its tree outputs, in the kind the stage names"})
)

// CheckAccumulateConfig checks a stated accumulate configuration against
// the one the contraction before it, the stage's kind and its mappings give
// (RED-R16): the loops are the configuration the Reducer runs, and may be
// stated otherwise; every other field follows from them, the kind and the
// contraction.
func CheckAccumulateConfig(a *kernel.AccumulateConfig, derived kernel.AccumulateConfig) error {
	if a == nil {
		return errors.New("reducer: nil accumulate configuration")
	}
	got, want := *a, derived
	got.Loops, want.Loops = nil, nil
	if !reflect.DeepEqual(got, want) {
		return ruleRedAccStated.Violate("stated %s (%d Rows, %d of %d columns, out_len %d, %d iterations, inner %d, %d groups, %d beats); the contraction, kind and mappings give %s (%d Rows, %d of %d columns, out_len %d, %d iterations, inner %d, %d groups, %d beats)",
			a, a.Rows, a.Valid, a.Columns, a.OutLen, a.Iterations, a.InnerTime, a.Groups, a.Beats,
			derived, derived.Rows, derived.Valid, derived.Columns, derived.OutLen, derived.Iterations, derived.InnerTime, derived.Groups, derived.Beats)
	}
	n, m := 1, 1
	for _, l := range a.Loops {
		n *= l.Size
	}
	for _, l := range derived.Loops {
		m *= l.Size
	}
	if n != m || len(a.Loops) != len(derived.Loops) {
		return ruleRedAccStated.Violate("loops %v walk %d computation steps, the computation Time %d", a.Loops, n, m)
	}
	return nil
}
