package engines

import (
	"encoding/binary"
	"errors"
	"fmt"

	"tcpmap/model/kernel"
)

// The intra-slice block's semantics on one slice's stream: each stage's
// configuration applied to the packets of a pass, bit-exactly (the ALU
// functions of vector_alu.go). The simulator (verify/) calls one function
// per stage; none of them allocates.

// VEStream is one slice's stream inside a Vector Engine pass: Data holds
// the packets in time order, Lanes 32-bit elements each (8 in Way8, 4 in
// Way4, 002 L4731), little-endian. Tags holds each element's 4-bit
// ExecutionId (002 L4795), nil when all are 0; VC each packet's valid
// count (002 L6168-6179), nil when every lane is valid.
type VEStream struct {
	Data  []byte
	Lanes int
	Tags  []uint8
	VC    []uint8
}

// Packets is the number of packets of the stream.
func (s *VEStream) Packets() int {
	if s.Lanes <= 0 {
		return 0
	}
	return len(s.Data) / (4 * s.Lanes)
}

func (s *VEStream) check() error {
	if s.Lanes <= 0 || len(s.Data)%(4*s.Lanes) != 0 {
		return fmt.Errorf("vector: a stream of %d bytes is not whole packets of %d 32-bit lanes", len(s.Data), s.Lanes)
	}
	if s.Tags != nil && len(s.Tags) != len(s.Data)/4 {
		return fmt.Errorf("vector: %d ExecutionIds for %d elements", len(s.Tags), len(s.Data)/4)
	}
	if s.VC != nil && len(s.VC) != s.Packets() {
		return fmt.Errorf("vector: %d valid counts for %d packets", len(s.VC), s.Packets())
	}
	return nil
}

func get32(b []byte, i int) uint32    { return binary.LittleEndian.Uint32(b[4*i:]) }
func put32(b []byte, i int, v uint32) { binary.LittleEndian.PutUint32(b[4*i:], v) }

// VeSources are what operands read besides constants: the slice's VRF and
// the pass's stash (its bytes as vector_stash took them).
type VeSources struct {
	VRF   *VRFMemory
	Stash []byte
}

// veSel decodes an argument mode into the source of each op input: 0 the
// stream, 1 operand 0, 2 operand 1 (002 L5085-5106: the digits of
// `Mode012`).
func veSel(mode string, arity int) ([3]int, error) {
	var s [3]int
	if len(mode) != 4+arity {
		return s, fmt.Errorf("vector: argument mode %q for a %d-ary op", mode, arity)
	}
	for k := 0; k < arity; k++ {
		d := int(mode[4+k] - '0')
		if d < 0 || d > arity-1 {
			return s, fmt.Errorf("vector: argument mode %q reads input %d of %d", mode, d, arity-1)
		}
		s[k] = d
	}
	return s, nil
}

// VeFunc returns the element function of an op of stage kind k on f32 or
// i32 elements.
func VeFunc(k kernel.StageKind, op string, f32 bool) (func(a, b, c uint32) uint32, bool) {
	fn, ok := veFns[veOpKey{veCluster(k), op, f32}]
	return fn, ok
}

// VectorOpApply runs an ALU op stage of kind k on stream in, writing out
// (which may alias in.Data): a unary op maps every element; a binary or
// ternary op applies, for each operand slot, to the elements whose
// ExecutionId group the slot's guard admits, its inputs routed by the
// argument mode; the other elements keep their value.
func VectorOpApply(k kernel.StageKind, c *kernel.VectorOpConfig, in VEStream, src VeSources, out []byte) error {
	if c == nil {
		return errors.New("vector: nil op configuration")
	}
	if err := in.check(); err != nil {
		return err
	}
	if in.Lanes != c.Lanes {
		return fmt.Errorf("vector: %s takes %d-lane packets, the stream has %d", c.Op, c.Lanes, in.Lanes)
	}
	if cl := kernel.ZipCluster(k); cl != "" {
		k = cl
	}
	fn, ok := VeFunc(k, c.Op, c.DType.String() == "f32")
	if !ok {
		return fmt.Errorf("vector: %s has no %s op %q on %s", k, veCluster(k), c.Op, c.DType)
	}
	if c.Zip {
		return vectorZip(fn, c, in, out)
	}
	if len(out) != len(in.Data) {
		return fmt.Errorf("vector: %s: output of %d bytes for %d", c.Op, len(out), len(in.Data))
	}
	if c.Pair == nil {
		return applySlots(fn, c, c.Slots, in, src, out)
	}
	// Two-group mode: group 0's packets, then group 1's, each with its
	// own operands (002 L5164-5165); a group that skips the op keeps its
	// values.
	half := len(in.Data) / 2
	if half%(4*in.Lanes) != 0 {
		return fmt.Errorf("vector: a pair of %d bytes is not two groups of %d-lane packets", len(in.Data), in.Lanes)
	}
	for g := 0; g < 2; g++ {
		sub := VEStream{Data: in.Data[g*half : (g+1)*half], Lanes: in.Lanes}
		if in.Tags != nil {
			sub.Tags = in.Tags[g*half/4 : (g+1)*half/4]
		}
		o := out[g*half : (g+1)*half]
		if !c.Pair.Apply[g] {
			if &o[0] != &sub.Data[0] {
				copy(o, sub.Data)
			}
			continue
		}
		if err := applySlots(fn, c, c.Pair.Slots[g], sub, src, o); err != nil {
			return err
		}
	}
	return nil
}

// vectorZip runs a zip op: out = op over the two groups' streams, routed by
// the mode (002 L5107-5117: 0 group 0, 1 group 1).
func vectorZip(fn veOpFn, c *kernel.VectorOpConfig, in VEStream, out []byte) error {
	half := len(in.Data) / 2
	if half%(4*in.Lanes) != 0 || len(out) != half {
		return fmt.Errorf("vector: zip of %d bytes into %d: two groups of %d-lane packets into one", len(in.Data), len(out), in.Lanes)
	}
	sel, err := veSel(c.Mode, 2)
	if err != nil {
		return err
	}
	g0, g1 := in.Data[:half], in.Data[half:]
	for i := 0; i < half/4; i++ {
		v := [2]uint32{get32(g0, i), get32(g1, i)}
		put32(out, i, fn(v[sel[0]], v[sel[1]], 0))
	}
	return nil
}

// applySlots applies an op to stream in: a unary op maps every element;
// otherwise each operand slot applies to the elements its guard admits,
// the others keeping their value.
func applySlots(fn veOpFn, c *kernel.VectorOpConfig, slots []kernel.VeSlotConfig, in VEStream, src VeSources, out []byte) error {
	n := len(in.Data) / 4
	if c.Arity == 1 {
		for i := 0; i < n; i++ {
			put32(out, i, fn(get32(in.Data, i), 0, 0))
		}
		return nil
	}
	sel, err := veSel(c.Mode, c.Arity)
	if err != nil {
		return err
	}
	if n > 0 && &out[0] != &in.Data[0] {
		copy(out, in.Data)
	}
	lanes := in.Lanes
	var flit [32]byte
	var ov [2][8]uint32
	for _, s := range slots {
		if len(s.Operands) != c.Arity-1 {
			return fmt.Errorf("vector: %s slot with %d operands", c.Op, len(s.Operands))
		}
		for t := 0; t*lanes < n; t++ {
			base := t * lanes
			for j, o := range s.Operands {
				switch o.Kind {
				case kernel.VeConst:
					for l := 0; l < lanes; l++ {
						ov[j][l] = o.Bits
					}
				case kernel.VeVRF:
					if src.VRF == nil || o.VRF == nil || o.VRF.Lanes != lanes || o.VRF.ElemBytes != 4 {
						return fmt.Errorf("vector: %s: no VRF read of %d lanes", c.Op, lanes)
					}
					if err := src.VRF.ReadFlit(o.VRF, t, flit[:4*lanes]); err != nil {
						return err
					}
					for l := 0; l < lanes; l++ {
						ov[j][l] = get32(flit[:], l)
					}
				case kernel.VeStash:
					for l := 0; l < lanes; l++ {
						p := base + l
						if o.Gather != nil {
							if p >= len(o.Gather) {
								return fmt.Errorf("vector: %s: stash gather of %d positions, the stream has %d", c.Op, len(o.Gather), n)
							}
							p = int(o.Gather[p])
						}
						switch {
						case p < 0:
							ov[j][l] = 0
						case 4*p+4 > len(src.Stash):
							return fmt.Errorf("vector: %s reads stash element %d of %d", c.Op, p, len(src.Stash)/4)
						default:
							ov[j][l] = get32(src.Stash, p)
						}
					}
				default:
					return fmt.Errorf("vector: %s: operand kind %q", c.Op, o.Kind)
				}
			}
			for l := 0; l < lanes; l++ {
				i := base + l
				if s.Guard != kernel.GuardAlways && (in.Tags == nil && s.Guard != 0 || in.Tags != nil && int(in.Tags[i]>>3&1) != s.Guard) {
					continue
				}
				v := [3]uint32{get32(in.Data, i), ov[0][l], ov[1][l]}
				put32(out, i, fn(v[sel[0]], v[sel[1]], v[sel[2]]))
			}
		}
	}
	return nil
}

// VectorConvertApply runs vector_fxp_to_fp or vector_fp_to_fxp on every
// element of data, in place.
func VectorConvertApply(c *kernel.VectorConvertConfig, data []byte) error {
	if c == nil {
		return errors.New("vector: nil conversion configuration")
	}
	if len(data)%4 != 0 {
		return fmt.Errorf("vector: %d bytes are not 32-bit elements", len(data))
	}
	if c.IntWidth < 0 || c.IntWidth > 31 {
		return fmt.Errorf("vector: int_width %d", c.IntWidth)
	}
	n := len(data) / 4
	if c.From.String() == "i32" {
		for i := 0; i < n; i++ {
			put32(data, i, FxpToFp(int32(get32(data, i)), c.IntWidth))
		}
		return nil
	}
	for i := 0; i < n; i++ {
		put32(data, i, uint32(FpToFxp(get32(data, i), c.IntWidth)))
	}
	return nil
}

// VectorWayApply runs a Narrow or Widen stage (002 L4842-4947): split and
// concat keep every element in place (flit t's lanes 0-3 and 4-7 are
// packets 2t and 2t+1), trim keeps lanes 0-3 of each flit, pad fills lanes
// 4-7 with 0. Tags follow their elements; valid counts split as
// (min(v, 4), max(v − 4, 0)), concat as the sum, trim and pad keep them
// (002 L6575-6582). out, tags and vc must be sized for the output (tags and
// vc only when the input has them); out may alias in.Data for split and
// concat.
func VectorWayApply(c *kernel.VectorWayConfig, in VEStream, out VEStream) error {
	if c == nil {
		return errors.New("vector: nil Narrow/Widen configuration")
	}
	if err := in.check(); err != nil {
		return err
	}
	if in.Lanes != c.InLanes || in.Packets() != c.InPackets || out.Lanes != c.OutLanes || len(out.Data) != 4*c.OutLanes*c.OutPackets {
		return fmt.Errorf("vector: %s of %d × %d lanes → %d × %d, the streams have %d × %d and %d bytes",
			c.Kind, c.InPackets, c.InLanes, c.OutPackets, c.OutLanes, in.Packets(), in.Lanes, len(out.Data))
	}
	if (in.Tags == nil) != (out.Tags == nil) || (in.VC == nil) != (out.VC == nil) {
		return errors.New("vector: the output's tags and valid counts follow the input's")
	}
	switch c.Kind {
	case kernel.WaySplit, kernel.WayConcat:
		if len(in.Data) != len(out.Data) {
			return errors.New("vector: split and concat keep the stream's bytes")
		}
		if &out.Data[0] != &in.Data[0] {
			copy(out.Data, in.Data)
		}
		if in.Tags != nil {
			copy(out.Tags, in.Tags)
		}
		if in.VC != nil {
			if c.Kind == kernel.WaySplit {
				for t := c.InPackets - 1; t >= 0; t-- {
					v := int(in.VC[t])
					out.VC[2*t], out.VC[2*t+1] = uint8(min(v, 4)), uint8(max(v-4, 0))
				}
			} else {
				for t := 0; t < c.OutPackets; t++ {
					out.VC[t] = in.VC[2*t] + in.VC[2*t+1]
				}
			}
		}
		return nil
	case kernel.WayTrim:
		for t := 0; t < c.InPackets; t++ {
			copy(out.Data[16*t:16*t+16], in.Data[32*t:32*t+16])
			if in.Tags != nil {
				copy(out.Tags[4*t:4*t+4], in.Tags[8*t:8*t+4])
			}
		}
		if in.VC != nil {
			for t, v := range in.VC {
				if v > 4 {
					return fmt.Errorf("vector: trim of packet %d with %d valid lanes (at most 4, 002 L6578)", t, v)
				}
				out.VC[t] = v
			}
		}
		return nil
	case kernel.WayPad:
		for t := c.InPackets - 1; t >= 0; t-- {
			copy(out.Data[32*t:32*t+16], in.Data[16*t:16*t+16])
			clear(out.Data[32*t+16 : 32*t+32])
			if in.Tags != nil {
				copy(out.Tags[8*t:8*t+4], in.Tags[4*t:4*t+4])
				clear(out.Tags[8*t+4 : 8*t+8])
			}
		}
		if in.VC != nil {
			copy(out.VC, in.VC)
		}
		return nil
	}
	return fmt.Errorf("vector: unknown Narrow/Widen kind %q", c.Kind)
}

// VectorReduceApply runs vector_intra_slice_reduce (002 L5362-5402): every
// output lane starts at the op's identity; each input packet, in time
// order, is folded into the accumulator of its output time step: in Packet
// reduce, the 2-level tree op(op(a, b), op(c, d)) of its lanes (lanes at
// or beyond the packet's valid count replaced by the identity) into lane 0,
// lanes 1-3 of the output holding 0; otherwise each lane into its own
// accumulator, a packet with valid count 0 skipped. out holds the output's
// OutPackets packets; outTags, when not nil, keeps the ExecutionId of the
// last element folded into each output element.
func VectorReduceApply(c *kernel.VectorReduceConfig, in VEStream, out []byte, outTags []uint8) error {
	if c == nil {
		return errors.New("vector: nil reduce configuration")
	}
	if err := in.check(); err != nil {
		return err
	}
	lanes := c.Lanes
	if in.Lanes != lanes || in.Packets() != c.InPackets || len(out) != 4*lanes*c.OutPackets {
		return fmt.Errorf("vector: reduce of %d × %d lanes → %d packets, the streams have %d × %d and %d bytes",
			c.InPackets, lanes, c.OutPackets, in.Packets(), in.Lanes, len(out))
	}
	if lanes != 4 {
		return fmt.Errorf("vector: the reduce tree takes 4 lanes, not %d", lanes)
	}
	f32 := c.DType.String() == "f32"
	fn, ok := veFns[veOpKey{"reduce", c.Op, f32}]
	if !ok {
		return fmt.Errorf("vector: no reduce op %q on %s", c.Op, c.DType)
	}
	id, err := reduceIdentity(c.Op, f32)
	if err != nil {
		return err
	}
	for i := 0; i < len(out)/4; i++ {
		put32(out, i, id)
		if outTags != nil {
			outTags[i] = 0
		}
	}
	if c.PacketReduce {
		for i := 0; i < len(out)/4; i++ {
			if i%lanes != 0 {
				put32(out, i, 0)
			}
		}
	}
	for t := 0; t < c.InPackets; t++ {
		o := c.OutStep(t)
		if o < 0 || o >= c.OutPackets {
			return fmt.Errorf("vector: input packet %d reduces into output %d of %d", t, o, c.OutPackets)
		}
		vc := lanes
		if in.VC != nil {
			vc = int(in.VC[t])
		}
		base := t * lanes
		if c.PacketReduce {
			var v [4]uint32
			for l := 0; l < 4; l++ {
				v[l] = id
				if l < vc {
					v[l] = get32(in.Data, base+l)
				}
			}
			r := fn(fn(v[0], v[1], 0), fn(v[2], v[3], 0), 0)
			put32(out, o*lanes, fn(get32(out, o*lanes), r, 0))
			if outTags != nil && in.Tags != nil && vc > 0 {
				outTags[o*lanes] = in.Tags[base+vc-1]
			}
			continue
		}
		if vc == 0 {
			continue
		}
		for l := 0; l < lanes; l++ {
			j := o*lanes + l
			put32(out, j, fn(get32(out, j), get32(in.Data, base+l), 0))
			if outTags != nil && in.Tags != nil {
				outTags[j] = in.Tags[base+l]
			}
		}
	}
	return nil
}

// VectorFilterApply runs vector_filter (docs/spec-decisions.md "Filter"):
// the elements whose ExecutionId group is c.Group, in stream order, fill
// out's positions from the first; the rest of out holds 0. It returns the
// number kept; more than out holds is an error. outVC, when not nil,
// receives each output packet's valid count.
func VectorFilterApply(c *kernel.VectorFilterConfig, in VEStream, out []byte, outVC []uint8) (int, error) {
	if c == nil {
		return 0, errors.New("vector: nil filter configuration")
	}
	if err := in.check(); err != nil {
		return 0, err
	}
	if in.Lanes != c.Lanes || in.Packets() != c.InPackets || len(out) != 4*c.Lanes*c.OutPackets {
		return 0, fmt.Errorf("vector: filter of %d packets → %d, the streams have %d and %d bytes", c.InPackets, c.OutPackets, in.Packets(), len(out))
	}
	if outVC != nil && len(outVC) != c.OutPackets {
		return 0, fmt.Errorf("vector: %d valid counts for %d packets", len(outVC), c.OutPackets)
	}
	cap := len(out) / 4
	k := 0
	for i := 0; i < len(in.Data)/4; i++ {
		g := 0
		if in.Tags != nil {
			g = int(in.Tags[i] >> 3 & 1)
		}
		if in.VC != nil && i%in.Lanes >= int(in.VC[i/in.Lanes]) {
			continue // a padding lane is no element
		}
		if g != c.Group {
			continue
		}
		if k == cap {
			return k, fmt.Errorf("vector: filter keeps more than the %d elements of its %d output packets", cap, c.OutPackets)
		}
		put32(out, k, get32(in.Data, i))
		k++
	}
	clear(out[4*k:])
	if outVC != nil {
		for t := range outVC {
			outVC[t] = uint8(min(max(k-t*c.Lanes, 0), c.Lanes))
		}
	}
	return k, nil
}

// VectorBranchApply runs vector_intra_slice_branch (002 L4794-4802),
// writing each element's ExecutionId into tags: Unconditional 0;
// Comparison bit i when comparison i holds (furiosa-visa-std branch.rs);
// AxisToggle group bit 3 = axis coordinate % 2 (slice is the slice's
// position in its cluster, for axes the Slice mapping holds).
func VectorBranchApply(c *kernel.VectorBranchConfig, in VEStream, slice int, tags []uint8) error {
	if c == nil {
		return errors.New("vector: nil branch configuration")
	}
	if err := in.check(); err != nil {
		return err
	}
	n := len(in.Data) / 4
	if len(tags) != n {
		return fmt.Errorf("vector: %d ExecutionIds for %d elements", len(tags), n)
	}
	switch c.Mode {
	case kernel.BranchUnconditional:
		clear(tags)
		return nil
	case kernel.BranchComparison:
		if len(c.Cmps) != 4 {
			return fmt.Errorf("vector: Comparison with %d comparisons", len(c.Cmps))
		}
		f32 := c.DType.String() == "f32"
		for i := 0; i < n; i++ {
			x := get32(in.Data, i)
			var id uint8
			for b, k := range c.Cmps {
				if cmpHolds(k.Op, f32, x, k.Bits) {
					id |= 1 << b
				}
			}
			tags[i] = id
		}
		return nil
	case kernel.BranchValidCount:
		// Lanes at or past the packet's valid count get group 1
		// (docs/spec-decisions.md "Valid Count Generator").
		for i := range tags {
			tags[i] = 0
			if in.VC != nil && i%in.Lanes >= int(in.VC[i/in.Lanes]) {
				tags[i] = 1 << 3
			}
		}
		return nil
	case kernel.BranchAxisToggle:
		t := c.Toggle
		if t == nil || len(t.Lanes) != in.Lanes {
			return errors.New("vector: AxisToggle without its lane parities")
		}
		sp := 0
		if t.Slice != nil {
			sp = seqParity(t.Slice, slice)
		}
		for p := 0; p*in.Lanes < n; p++ {
			tp := sp ^ seqParity(t.Time, p)
			for l := 0; l < in.Lanes; l++ {
				tags[p*in.Lanes+l] = uint8((tp^int(t.Lanes[l]))&1) << 3
			}
		}
		return nil
	}
	return fmt.Errorf("vector: BranchMode::%s: %w", c.Mode, ErrNotModelled)
}

// maxVectorElements bounds a pass's stream per slice (one slice's DM holds
// 512 KB, 002 L138; the simulator refuses streams beyond 2^26 elements).
const maxVectorElements = 1 << 26

// CheckVectorConfig checks that a Vector Engine stage's configuration is
// self-consistent (sizes positive and bounded, lanes 4 or 8, modes and
// ops known), so that running it cannot go out of bounds: the simulator
// calls it on configurations a kernel states.
func CheckVectorConfig(k kernel.StageKind, c *kernel.StageConfig) error {
	if c == nil {
		return errors.New("vector: no configuration")
	}
	lanesOK := func(l int) bool { return l == 4 || l == 8 }
	size := func(packets, lanes int) error {
		if packets < 0 || !lanesOK(lanes) || packets > maxVectorElements/lanes {
			return fmt.Errorf("vector: %d packets of %d lanes (lanes 4 or 8, at most %d elements)", packets, lanes, maxVectorElements)
		}
		return nil
	}
	switch {
	case k == kernel.StVectorInit:
		if c.VectorInit == nil {
			return errors.New("vector: no vector_init configuration")
		}
		if g := c.VectorInit.VCG; g != nil {
			if err := CheckVCG(g); err != nil {
				return err
			}
		}
		return size(c.VectorInit.Packets, c.VectorInit.Lanes)
	case k == kernel.StVectorFinal:
		if c.VectorFinal == nil {
			return errors.New("vector: no vector_final configuration")
		}
		return size(c.VectorFinal.Packets, c.VectorFinal.Lanes)
	case k.IsVectorOp():
		o := c.VectorOp
		if o == nil {
			return errors.New("vector: no op configuration")
		}
		if !lanesOK(o.Lanes) || o.Arity < 1 || o.Arity > 3 {
			return fmt.Errorf("vector: %s of arity %d on %d lanes", o.Op, o.Arity, o.Lanes)
		}
		if _, err := veSel(o.Mode, o.Arity); err != nil {
			return err
		}
		slots := o.Slots
		if o.Pair != nil {
			slots = append(append([]kernel.VeSlotConfig(nil), o.Pair.Slots[0]...), o.Pair.Slots[1]...)
		}
		for _, s := range slots {
			if len(s.Operands) != o.Arity-1 || s.Guard < kernel.GuardAlways || s.Guard > kernel.GuardGroup1 {
				return fmt.Errorf("vector: %s: a slot of %d operands for guard %d", o.Op, len(s.Operands), s.Guard)
			}
			for _, x := range s.Operands {
				if x.Kind == kernel.VeVRF && (x.VRF == nil || x.VRF.Lanes != o.Lanes || x.VRF.ElemBytes != 4) {
					return fmt.Errorf("vector: %s: a VRF read of other lanes than the op's %d", o.Op, o.Lanes)
				}
				for _, g := range x.Gather {
					if g < -1 || g >= maxVectorElements {
						return fmt.Errorf("vector: %s: stash gather index %d", o.Op, g)
					}
				}
			}
		}
		return nil
	case k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		if c.VectorConvert == nil || c.VectorConvert.IntWidth < 0 || c.VectorConvert.IntWidth > 31 {
			return errors.New("vector: a conversion without an int_width of 0..31")
		}
		return nil
	case k == kernel.StVectorSplit || k == kernel.StVectorTrim || k == kernel.StVectorConcat || k == kernel.StVectorPad:
		w := c.VectorWay
		if w == nil {
			return errors.New("vector: no Narrow/Widen configuration")
		}
		if err := size(w.InPackets, w.InLanes); err != nil {
			return err
		}
		if err := size(w.OutPackets, w.OutLanes); err != nil {
			return err
		}
		ok := false
		switch w.Kind {
		case kernel.WaySplit:
			ok = w.InLanes == 8 && w.OutLanes == 4 && w.OutPackets == 2*w.InPackets
		case kernel.WayConcat:
			ok = w.InLanes == 4 && w.OutLanes == 8 && w.InPackets == 2*w.OutPackets
		case kernel.WayTrim:
			ok = w.InLanes == 8 && w.OutLanes == 4 && w.OutPackets == w.InPackets
		case kernel.WayPad:
			ok = w.InLanes == 4 && w.OutLanes == 8 && w.OutPackets == w.InPackets
		}
		if !ok {
			return fmt.Errorf("vector: %s", w)
		}
		return nil
	case k == kernel.StVectorReduce:
		r := c.VectorReduce
		if r == nil {
			return errors.New("vector: no reduce configuration")
		}
		if r.Lanes != 4 || r.OutPackets < 1 {
			return fmt.Errorf("vector: reduce of %d lanes into %d packets", r.Lanes, r.OutPackets)
		}
		if err := size(r.InPackets, r.Lanes); err != nil {
			return err
		}
		if err := size(r.OutPackets, r.Lanes); err != nil {
			return err
		}
		n := 1
		for _, d := range r.Time {
			if d.Size < 1 || n > maxVectorElements/d.Size {
				return fmt.Errorf("vector: reduce loop of %d", d.Size)
			}
			n *= d.Size
		}
		if n != r.InPackets {
			return fmt.Errorf("vector: reduce loops of %d steps for %d packets", n, r.InPackets)
		}
		return nil
	case k == kernel.StVectorFilter:
		f := c.VectorFilter
		if f == nil {
			return errors.New("vector: no filter configuration")
		}
		if err := size(f.InPackets, f.Lanes); err != nil {
			return err
		}
		return size(f.OutPackets, f.Lanes)
	case k == kernel.StVectorBranch:
		if c.VectorBranch == nil {
			return errors.New("vector: no branch configuration")
		}
		if t := c.VectorBranch.Toggle; t != nil {
			for _, e := range append(append([]kernel.SeqEntry(nil), t.Slice...), t.Time...) {
				if e.Size < 1 {
					return fmt.Errorf("vector: AxisToggle loop of %d", e.Size)
				}
			}
		}
		return nil
	case k == kernel.StVectorStash:
		if c.VectorStash == nil {
			return errors.New("vector: no stash configuration")
		}
		return nil
	case k == kernel.StVectorUnzip:
		u := c.VectorUnzip
		if u == nil {
			return errors.New("vector: no unzip configuration")
		}
		if err := size(u.InPackets, u.Lanes); err != nil {
			return err
		}
		n, groups := 1, 0
		for _, d := range u.Time {
			if d.Size < 1 || n > maxVectorElements/d.Size {
				return fmt.Errorf("vector: unzip loop of %d", d.Size)
			}
			n *= d.Size
			if d.Reduce {
				groups++
				if d.Size != 2 {
					return fmt.Errorf("vector: unzip group loop of %d", d.Size)
				}
			}
		}
		if n != u.InPackets || groups != 1 {
			return fmt.Errorf("vector: unzip loops of %d steps (%d group loops) for %d packets", n, groups, u.InPackets)
		}
		return nil
	case kernel.ZipCluster(k) != "":
		o := c.VectorOp
		if o == nil || !o.Zip || o.Arity != 2 || !lanesOK(o.Lanes) {
			return errors.New("vector: a zip op without its binary configuration")
		}
		_, err := veSel(o.Mode, 2)
		return err
	}
	return fmt.Errorf("vector: %s: %w", k, ErrNotModelled)
}

// VectorUnzipApply runs vector_intra_slice_unzip: out holds group 0's
// packets (group digit 0), then group 1's, each in input order.
func VectorUnzipApply(c *kernel.VectorUnzipConfig, in VEStream, out []byte) error {
	if c == nil {
		return errors.New("vector: nil unzip configuration")
	}
	if err := in.check(); err != nil {
		return err
	}
	if in.Lanes != c.Lanes || in.Packets() != c.InPackets || len(out) != len(in.Data) || c.InPackets%2 != 0 {
		return fmt.Errorf("vector: unzip of %d × %d lanes, the stream has %d × %d", c.InPackets, c.Lanes, in.Packets(), in.Lanes)
	}
	pb := 4 * c.Lanes
	half := c.InPackets / 2
	for t := 0; t < c.InPackets; t++ {
		g, p := c.GroupOf(t)
		if g > 1 || p >= half {
			return fmt.Errorf("vector: unzip sends packet %d to group %d position %d", t, g, p)
		}
		o := (g*half + p) * pb
		copy(out[o:o+pb], in.Data[t*pb:(t+1)*pb])
	}
	return nil
}
