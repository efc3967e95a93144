package verify

import "testing"

// benchVector runs a whole kernel program per iteration and reports the
// elements its Vector Engine passes take in per second of simulation.
func benchVector(b *testing.B, path string) {
	d, p := benchSetup(b, path)
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		x, err := NewExecutor(d, p, ExecOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Run(); err != nil {
			b.Fatal(err)
		}
		n += x.VectorElements()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "VE-elements/s")
}

// BenchmarkExecSoftmaxAttention simulates one attention head's softmax,
// 2048 rows of 2048 f32 on 256 slices (workloads/kernels/softmax-attention):
// five chains, three of them Vector Engine passes over the 4 Mi scores
// (12 Mi elements), with their DMAs.
func BenchmarkExecSoftmaxAttention(b *testing.B) {
	benchVector(b, "../workloads/kernels/softmax-attention.json")
}

// BenchmarkExecSiluDecode simulates the decode layer's silu over 28672
// bf16 (one pass on 512 slices).
func BenchmarkExecSiluDecode(b *testing.B) {
	benchVector(b, "../workloads/kernels/silu-decode.json")
}
