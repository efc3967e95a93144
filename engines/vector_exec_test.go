package engines

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

func f32Packet(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func i32s(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func constSlot(guard int, bits ...uint32) kernel.VeSlotConfig {
	s := kernel.VeSlotConfig{Guard: guard}
	for _, b := range bits {
		s.Operands = append(s.Operands, kernel.VeOperandConfig{Kind: kernel.VeConst, Bits: b})
	}
	return s
}

// TestVectorExecOperands: the argument modes (002 L5082-5106; VEC-EX-11,
// -12, -13), guarded operand slots (002 L5060-5062), and VRF and stash
// operands on a Way4 stream.
func TestVectorExecOperands(t *testing.T) {
	run := func(k kernel.StageKind, c *kernel.VectorOpConfig, in VEStream, src VeSources) []byte {
		t.Helper()
		out := make([]byte, len(in.Data))
		require.NoError(t, VectorOpApply(k, c, in, src, out))
		return out
	}
	// VEC-EX-12: SubFxp with stream 10 and operand 3.
	for mode, want := range map[string]int32{"Mode00": 0, "Mode01": 7, "Mode10": -7, "Mode11": 0} {
		c := &kernel.VectorOpConfig{Op: "SubFxp", DType: dtype.I32, Arity: 2, Mode: mode, Lanes: 8, Slots: []kernel.VeSlotConfig{constSlot(-1, 3)}}
		got := run(kernel.StVectorFxp, c, VEStream{Data: i32Packet(10, 10, 10, 10, 10, 10, 10, 10), Lanes: 8}, VeSources{})
		assert.Equal(t, want, i32s(got)[0], "VEC-EX-12 %s", mode)
	}
	// VEC-EX-11: 7 − x (002 L5131), wrapping (7 − (MIN + 8) = 2^31 − 1).
	c := &kernel.VectorOpConfig{Op: "SubFxp", DType: dtype.I32, Arity: 2, Mode: "Mode10", Lanes: 8, Slots: []kernel.VeSlotConfig{constSlot(-1, 7)}}
	assert.Equal(t, []int32{-3, 7, 8, maxI32, 0, 0, 0, 0}, i32s(run(kernel.StVectorFxp, c, VEStream{Data: i32Packet(10, 0, -1, minI32+8, 7, 7, 7, 7), Lanes: 8}, VeSources{})))
	// VEC-EX-13: FmaF(a, b, c) = a·b + c with stream 2, operands 3 and 5.
	for mode, want := range map[string]float32{"Mode012": 11, "Mode002": 9, "Mode102": 11, "Mode112": 14, "Mode020": 12, "Mode021": 13, "Mode120": 17} {
		c := &kernel.VectorOpConfig{Op: "FmaF", DType: dtype.F32, Arity: 3, Mode: mode, Lanes: 4, Slots: []kernel.VeSlotConfig{constSlot(-1, fb(3), fb(5))}}
		got := run(kernel.StVectorFpTernary, c, VEStream{Data: f32Packet(2, 2, 2, 2), Lanes: 4}, VeSources{})
		assert.Equal(t, want, f32s(got)[0], "VEC-EX-13 %s", mode)
	}
	// Guards: group 0 gets +100, group 1 (ExecutionId bit 3) +200; an
	// element no slot admits keeps its value.
	in := VEStream{Data: i32Packet(1, 2, 3, 4, 5, 6, 7, 8), Lanes: 8, Tags: []uint8{0, 8, 1, 9, 7, 15, 0, 8}}
	c = &kernel.VectorOpConfig{Op: "AddFxp", DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8,
		Slots: []kernel.VeSlotConfig{constSlot(kernel.GuardGroup0, 100), constSlot(kernel.GuardGroup1, 200)}}
	assert.Equal(t, []int32{101, 202, 103, 204, 105, 206, 107, 208}, i32s(run(kernel.StVectorFxp, c, in, VeSources{})))
	c.Slots = c.Slots[1:]
	assert.Equal(t, []int32{1, 202, 3, 204, 5, 206, 7, 208}, i32s(run(kernel.StVectorFxp, c, in, VeSources{})), "group 0 passes through")
	c.Slots = []kernel.VeSlotConfig{constSlot(kernel.GuardGroup1, 200)}
	assert.Equal(t, []int32{1, 2, 3, 4, 5, 6, 7, 8}, i32s(run(kernel.StVectorFxp, c, VEStream{Data: in.Data, Lanes: 8}, VeSources{})), "no tags: every element is group 0")
	// A unary op maps every element.
	u := &kernel.VectorOpConfig{Op: "Sqrt", DType: dtype.F32, Arity: 1, Mode: "Mode0", Lanes: 4}
	assert.Equal(t, []float32{3, 0.5, 0, float32(math.NaN())}[:3], f32s(run(kernel.StVectorFpUnary, u, VEStream{Data: f32Packet(9, 0.25, 0, -1), Lanes: 4}, VeSources{}))[:3])

	// A Way4 VRF read: lane l of step t reads element e(t) + l.
	vrf, err := NewVRFMemory(Default())
	require.NoError(t, err)
	copy(vrf.Bytes(), f32Packet(1, 2, 3, 4, 5, 6, 7, 8))
	rd := &kernel.VRFReadConfig{Lanes: 4, ElemBytes: 4, Entries: []kernel.SeqEntry{{Size: 2, Stride: 4}}}
	add := &kernel.VectorOpConfig{Op: "AddF", DType: dtype.F32, Arity: 2, Mode: "Mode01", Lanes: 4,
		Slots: []kernel.VeSlotConfig{{Guard: -1, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeVRF, VRF: rd}}}}}
	got := run(kernel.StVectorFpBinary, add, VEStream{Data: f32Packet(10, 10, 10, 10, 20, 20, 20, 20), Lanes: 4}, VeSources{VRF: vrf})
	assert.Equal(t, []float32{11, 12, 13, 14, 25, 26, 27, 28}, f32s(got))

	// The stash read through a gather (a Way8 snapshot read in Way4 after
	// a trim: positions 0-3 of each flit; docs/spec-decisions.md "Stash").
	stash := f32Packet(1, 2, 3, 4, 50, 60, 70, 80)
	mul := &kernel.VectorOpConfig{Op: "MulF(Mul0)", DType: dtype.F32, Arity: 2, Mode: "Mode01", Lanes: 4,
		Slots: []kernel.VeSlotConfig{{Guard: -1, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeStash, Gather: []int32{0, 1, 2, -1}}}}}}
	assert.Equal(t, []float32{2, 4, 6, 0}, f32s(run(kernel.StVectorFpBinary, mul, VEStream{Data: f32Packet(2, 2, 2, 2), Lanes: 4}, VeSources{Stash: stash})))

	// Errors: a mode of the wrong arity, a missing VRF, a short stash.
	for _, bad := range []struct {
		k   kernel.StageKind
		c   *kernel.VectorOpConfig
		src VeSources
	}{
		{kernel.StVectorFxp, &kernel.VectorOpConfig{Op: "AddFxp", DType: dtype.I32, Arity: 2, Mode: "Mode012", Lanes: 4, Slots: []kernel.VeSlotConfig{constSlot(-1, 1)}}, VeSources{}},
		{kernel.StVectorFpBinary, add, VeSources{}},
		{kernel.StVectorFpBinary, &kernel.VectorOpConfig{Op: "MulF(Mul0)", DType: dtype.F32, Arity: 2, Mode: "Mode01", Lanes: 4,
			Slots: []kernel.VeSlotConfig{{Guard: -1, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeStash}}}}}, VeSources{Stash: make([]byte, 8)}},
	} {
		assert.Error(t, VectorOpApply(bad.k, bad.c, VEStream{Data: make([]byte, 16), Lanes: 4}, bad.src, make([]byte, 16)))
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = VectorOpApply(kernel.StVectorFpBinary, add, VEStream{Data: f32Packet(1, 2, 3, 4, 5, 6, 7, 8), Lanes: 4}, VeSources{VRF: vrf}, got)
	})
	assert.LessOrEqual(t, allocs, 1.0, "only the test's packet")
}

// TestVectorExecWay: Narrow and Widen move the elements, their tags and
// valid counts (002 L4842-4947; VEC-EX-19's counts, 002 L6575-6582).
func TestVectorExecWay(t *testing.T) {
	in := VEStream{Data: i32Packet(0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17), Lanes: 8,
		Tags: []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, VC: []uint8{6, 3}}
	split := &kernel.VectorWayConfig{Kind: kernel.WaySplit, InPackets: 2, InLanes: 8, OutPackets: 4, OutLanes: 4}
	out := VEStream{Data: make([]byte, 64), Lanes: 4, Tags: make([]uint8, 16), VC: make([]uint8, 4)}
	require.NoError(t, VectorWayApply(split, in, out))
	assert.Equal(t, i32s(in.Data), i32s(out.Data), "split moves no data")
	assert.Equal(t, []uint8{4, 2, 3, 0}, out.VC, "VEC-EX-19: v = 6 → (4, 2); v = 3 → (3, 0)")
	concat := &kernel.VectorWayConfig{Kind: kernel.WayConcat, InPackets: 4, InLanes: 4, OutPackets: 2, OutLanes: 8}
	back := VEStream{Data: make([]byte, 64), Lanes: 8, Tags: make([]uint8, 16), VC: make([]uint8, 2)}
	require.NoError(t, VectorWayApply(concat, out, back))
	assert.Equal(t, []uint8{6, 3}, back.VC, "VEC-EX-19: concat sums back to 6")
	assert.Equal(t, in.Tags, back.Tags)

	trim := &kernel.VectorWayConfig{Kind: kernel.WayTrim, InPackets: 2, InLanes: 8, OutPackets: 2, OutLanes: 4}
	tr := VEStream{Data: make([]byte, 32), Lanes: 4, Tags: make([]uint8, 8), VC: make([]uint8, 2)}
	require.Error(t, VectorWayApply(trim, in, tr), "VEC-EX-19: trim with v = 6 loses data")
	in.VC = []uint8{3, 4}
	require.NoError(t, VectorWayApply(trim, in, tr))
	assert.Equal(t, []int32{0, 1, 2, 3, 10, 11, 12, 13}, i32s(tr.Data))
	assert.Equal(t, []uint8{0, 1, 2, 3, 8, 9, 10, 11}, tr.Tags)
	assert.Equal(t, []uint8{3, 4}, tr.VC, "VEC-EX-19: trim keeps v = 3")
	pad := &kernel.VectorWayConfig{Kind: kernel.WayPad, InPackets: 2, InLanes: 4, OutPackets: 2, OutLanes: 8}
	pd := VEStream{Data: make([]byte, 64), Lanes: 8, Tags: make([]uint8, 16), VC: make([]uint8, 2)}
	require.NoError(t, VectorWayApply(pad, tr, pd))
	assert.Equal(t, []int32{0, 1, 2, 3, 0, 0, 0, 0, 10, 11, 12, 13, 0, 0, 0, 0}, i32s(pd.Data), "padding lanes hold 0")
	assert.Equal(t, []uint8{3, 4}, pd.VC, "VEC-EX-19: pad keeps v")
	assert.Error(t, VectorWayApply(pad, in, pd), "pad takes Way4")
}

// TestVectorExecReduce: the intra-slice reduce examples' values (002
// L5404-5473, vector-and-kernels.md VEC-EX-24-26), the tree order, the
// slots of 002 L5502-5517 and the valid counts.
func TestVectorExecReduce(t *testing.T) {
	// VEC-EX-24: x[a, r] = r over R = 16 in Time, lanes A % 2 # 4.
	c := &kernel.VectorReduceConfig{Op: "AddSat", DType: dtype.I32, Axis: "R", Time: []kernel.VeReduceDigit{{Size: 16, Reduce: true}}, Lanes: 4, InPackets: 16, OutPackets: 1, Slots: 1, Span: 16}
	var data []int32
	for r := int32(0); r < 16; r++ {
		data = append(data, r, r, 0, 0)
	}
	out := make([]byte, 16)
	require.NoError(t, VectorReduceApply(c, VEStream{Data: i32Packet(data...), Lanes: 4}, out, nil))
	assert.Equal(t, []int32{120, 120, 0, 0}, i32s(out), "0 + 1 + … + 15")
	data = data[:0]
	for r := 0; r < 16; r++ {
		data = append(data, 1<<30, -1<<30, 0, 0)
	}
	require.NoError(t, VectorReduceApply(c, VEStream{Data: i32Packet(data...), Lanes: 4}, out, nil))
	assert.Equal(t, []int32{maxI32, minI32, 0, 0}, i32s(out), "AddSat saturates (002 L5394)")

	// VEC-EX-25: R in Packet, f32 Add: the tree, not a left fold.
	p := &kernel.VectorReduceConfig{Op: "Add", DType: dtype.F32, Axis: "R", PacketReduce: true, Time: []kernel.VeReduceDigit{{Size: 2}}, Lanes: 4, InPackets: 2, OutPackets: 2, Slots: 1, Span: 1}
	out = make([]byte, 32)
	require.NoError(t, VectorReduceApply(p, VEStream{Data: f32Packet(1, 2, 3, 4, 1e8, 1, -1e8, 1), Lanes: 4}, out, nil))
	assert.Equal(t, []float32{10, 0, 0, 0, 0, 0, 0, 0}, f32s(out), "(1+2)+(3+4) = 10; (1e8+1)+(−1e8+1) = 0 (a left fold gives 1)")
	// A packet's valid count replaces its tail by the identity (002 L5376-5377).
	require.NoError(t, VectorReduceApply(p, VEStream{Data: f32Packet(1, 2, 3, 4, 5, 6, 7, 8), Lanes: 4, VC: []uint8{3, 0}}, out, nil))
	assert.Equal(t, float32(6), f32s(out)[0])
	assert.Equal(t, float32(0), f32s(out)[4], "an empty packet adds the identity")

	// VEC-EX-26: R / 4 in Time, R % 4 in Packet, f32 Max; x[r] = r.
	mx := &kernel.VectorReduceConfig{Op: "Max", DType: dtype.F32, Axis: "R", PacketReduce: true, Time: []kernel.VeReduceDigit{{Size: 4, Reduce: true}}, Lanes: 4, InPackets: 4, OutPackets: 1, Slots: 1, Span: 4}
	var rs []float32
	for r := 0; r < 16; r++ {
		rs = append(rs, float32(r))
	}
	out = make([]byte, 16)
	require.NoError(t, VectorReduceApply(mx, VEStream{Data: f32Packet(rs...), Lanes: 4}, out, nil))
	assert.Equal(t, float32(15), f32s(out)[0])

	// Slots (002 L5502-5517): Time = [R / 2, A % 2, R % 2]: flits #0, #1,
	// #4, #5 accumulate into A % 2 = 0; #2, #3, #6, #7 into A % 2 = 1. A
	// flit with valid count 0 is skipped (Time Reduce mode, 002 L5603).
	sl := &kernel.VectorReduceConfig{Op: "AddSat", DType: dtype.I32, Axis: "R", Time: []kernel.VeReduceDigit{{Size: 2, Reduce: true}, {Size: 2}, {Size: 2, Reduce: true}}, Lanes: 4, InPackets: 8, OutPackets: 2, Slots: 2, Span: 4}
	data = data[:0]
	for f := int32(0); f < 8; f++ {
		data = append(data, 1<<f, 0, 0, 0)
	}
	out = make([]byte, 32)
	tags := make([]uint8, 8)
	in := VEStream{Data: i32Packet(data...), Lanes: 4, Tags: make([]uint8, 32), VC: []uint8{4, 4, 4, 4, 4, 0, 4, 4}}
	for f := range 8 {
		in.Tags[4*f] = uint8(f)
	}
	require.NoError(t, VectorReduceApply(sl, in, out, tags))
	assert.Equal(t, int32(1+2+16), i32s(out)[0], "slot 0: flits 0, 1, 4 (5 gated off)")
	assert.Equal(t, int32(4+8+64+128), i32s(out)[4], "slot 1: flits 2, 3, 6, 7")
	assert.Equal(t, uint8(4), tags[0], "the last flit folded in")
	assert.Equal(t, uint8(7), tags[4])
	allocs := testing.AllocsPerRun(100, func() { _ = VectorReduceApply(sl, in, out, tags) })
	assert.Zero(t, allocs)
}

// TestVectorExecFilter: the filter keeps one group's elements, packed in
// stream order (docs/spec-decisions.md "Filter").
func TestVectorExecFilter(t *testing.T) {
	c := &kernel.VectorFilterConfig{Group: 0, Lanes: 8, InPackets: 2, OutPackets: 1}
	in := VEStream{Data: i32Packet(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), Lanes: 8,
		Tags: []uint8{8, 0, 8, 0, 8, 8, 8, 0, 0, 8, 8, 8, 8, 8, 0, 0}}
	out := make([]byte, 32)
	vc := make([]uint8, 1)
	n, err := VectorFilterApply(c, in, out, vc)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	assert.Equal(t, []int32{2, 4, 8, 9, 15, 16, 0, 0}, i32s(out))
	assert.Equal(t, []uint8{6}, vc)
	in.Tags[0] = 0
	in.Tags[2] = 0
	in.Tags[4] = 0
	_, err = VectorFilterApply(c, in, out, vc)
	assert.Error(t, err, "9 kept elements overflow one packet")
	in.VC = []uint8{8, 2}
	n, err = VectorFilterApply(c, in, out, vc)
	require.NoError(t, err, "padding lanes are no elements")
	assert.Equal(t, 7, n)
}

// TestVectorExecBranchToggle: AxisToggle's group bit is the axis
// coordinate's parity, here of A over Slice m![A / 2], Packet m![A % 2 #
// 8] (002 L4799): slice s holds A = 2s and 2s + 1.
func TestVectorExecBranchToggle(t *testing.T) {
	ax := vax(t, "A=512")
	s := VectorStream{DType: dtype.I32, Slice: ceM(t, ax, "A / 2"), Time: ceM(t, ax, "1"), Packet: ceM(t, ax, "A % 2 # 8")}
	c, err := DeriveVectorBranchSpec(Default(), kernel.BranchSpec{Mode: kernel.BranchAxisToggle, Axis: "A"}, s)
	require.NoError(t, err)
	tags := make([]uint8, 8)
	require.NoError(t, VectorBranchApply(&c, VEStream{Data: make([]byte, 32), Lanes: 8}, 5, tags))
	assert.Equal(t, []uint8{0, 8}, tags[:2], "A = 10 even, A = 11 odd (padding lanes hold no A)")
	s.Packet = ceM(t, ax, "A % 8")
	s.Slice = ceM(t, ax, "A / 8")
	c, err = DeriveVectorBranchSpec(Default(), kernel.BranchSpec{Mode: kernel.BranchAxisToggle, Axis: "A"}, s)
	require.NoError(t, err)
	require.NoError(t, VectorBranchApply(&c, VEStream{Data: make([]byte, 32), Lanes: 8}, 3, tags))
	assert.Equal(t, []uint8{0, 8, 0, 8, 0, 8, 0, 8}, tags)
	_, err = DeriveVectorBranchSpec(Default(), kernel.BranchSpec{Mode: kernel.BranchAxisToggle, Axis: "B"}, s)
	assert.Error(t, err, "the stream has no B")
}
