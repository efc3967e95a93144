package engines

import (
	"testing"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// BenchmarkVectorOpApply: one Way4 FpFma op (AddF of a VRF operand
// broadcast over the lanes, softmax's x − max) over a row of 4096 f32, the
// simulator's inner loop of a Vector Engine stage.
func BenchmarkVectorOpApply(b *testing.B) {
	vrf, err := NewVRFMemory(Default())
	if err != nil {
		b.Fatal(err)
	}
	rd := &kernel.VRFReadConfig{Lanes: 4, ElemBytes: 4, Entries: []kernel.SeqEntry{{Size: 1024, Stride: 0}}}
	c := &kernel.VectorOpConfig{Op: "SubF", DType: dtype.F32, Arity: 2, Mode: "Mode01", Lanes: 4,
		Slots: []kernel.VeSlotConfig{{Guard: kernel.GuardAlways, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeVRF, VRF: rd}}}}}
	in := make([]byte, 4*4096)
	out := make([]byte, len(in))
	b.ReportAllocs()
	for b.Loop() {
		if err := VectorOpApply(kernel.StVectorFpBinary, c, VEStream{Data: in, Lanes: 4}, VeSources{VRF: vrf}, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(4096*b.N)/b.Elapsed().Seconds(), "elements/s")
}

// BenchmarkVectorReduceApply: softmax's row sum, 1024 Way4 packets reduced
// in Time and Packet into one value.
func BenchmarkVectorReduceApply(b *testing.B) {
	c := &kernel.VectorReduceConfig{Op: "Add", DType: dtype.F32, Axis: "C", PacketReduce: true,
		Time: []kernel.VeReduceDigit{{Size: 1024, Reduce: true}}, Lanes: 4, InPackets: 1024, OutPackets: 1, Slots: 1, Span: 1024}
	in := make([]byte, 4*4096)
	out := make([]byte, 16)
	b.ReportAllocs()
	for b.Loop() {
		if err := VectorReduceApply(c, VEStream{Data: in, Lanes: 4}, out, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(4096*b.N)/b.Elapsed().Seconds(), "elements/s")
}
