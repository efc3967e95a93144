package verify

import (
	"math/rand/v2"
	"testing"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
)

// benchSetup lowers a kernel and stores random inputs on a fresh device.
func benchSetup(b *testing.B, path string) (*Device, *kernel.Program) {
	b.Helper()
	p, _, err := LoadKernel(path)
	if err != nil {
		b.Fatal(err)
	}
	spec := engines.Default()
	if err := engines.Lower(spec, p); err != nil {
		b.Fatal(err)
	}
	d, err := NewDevice(spec, p.Chips)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, t := range p.Tensors {
		if t.Role != kernel.Input {
			continue
		}
		l, err := NewLogical(p, t)
		if err == nil {
			err = RandomValues(rng, l)
		}
		if err == nil {
			err = WriteHBMTensor(d, p, t, l)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return d, p
}

// benchKernel runs a whole kernel program per iteration and reports the
// simulated multiply-accumulates per second.
func benchKernel(b *testing.B, path string) {
	d, p := benchSetup(b, path)
	b.ReportAllocs()
	var macs int64
	for b.Loop() {
		x, err := NewExecutor(d, p, ExecOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Run(); err != nil {
			b.Fatal(err)
		}
		macs += x.MACs()
	}
	b.ReportMetric(float64(macs)/b.Elapsed().Seconds(), "MAC/s")
}

// BenchmarkExecGEMM512x512x2048 simulates the manual's GEMM size (002 L479,
// 512 × 512 × 2048 bf16: 2^29 MACs on 256 slices) end to end: DMAs, the TRF
// load, the contraction and the commit.
func BenchmarkExecGEMM512x512x2048(b *testing.B) {
	benchKernel(b, "../workloads/kernels/gemm-512x512x2048.json")
}

// BenchmarkExecHelloGEMM simulates the Hello GEMM with K = 1024.
func BenchmarkExecHelloGEMM(b *testing.B) {
	benchKernel(b, "../workloads/kernels/hello-gemm.json")
}

// BenchmarkVerifyHelloGEMV is a whole Verify: lowering, inputs, simulation,
// reference and comparison.
func BenchmarkVerifyHelloGEMV(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p, _, err := LoadKernel("../workloads/kernels/hello-gemv.json")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Verify(engines.Default(), p, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifySampledPrefillPV verifies the stored Llama 3 70B prefill
// P·V plan (264 ops, 16.8 M outputs) on one sampled slice: the reference is
// computed only at that slice's outputs (ReferenceFor).
func BenchmarkVerifySampledPrefillPV(b *testing.B) {
	pl, err := plan.Read("../results/plans/llama3-70b-prefill-pv.plan.json.gz")
	if err != nil {
		b.Fatal(err)
	}
	spec := engines.Default()
	for b.Loop() {
		rep, err := Verify(spec, pl.Program, Options{Seed: 1, Sample: 1})
		if err != nil || !rep.Pass {
			b.Fatalf("%v %v", err, rep)
		}
	}
}
