package search

import (
	"testing"

	"tcpmap/model/workload"
)

func benchExhaustive(b *testing.B, w *workload.Workload, opts Options) {
	s := newSpace(b, w)
	b.ReportAllocs()
	var r *Result
	for b.Loop() {
		var err error
		if r, err = Exhaustive(s, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Stats.Candidates), "candidates")
	b.ReportMetric(float64(r.Stats.Legal), "legal")
	b.ReportMetric(float64(r.Stats.CostEvaluations), "priced")
}

// BenchmarkExhaustiveDot plans workloads/dot.yaml (the Hello dot product).
func BenchmarkExhaustiveDot(b *testing.B) {
	benchExhaustive(b, workloadFile(b, "dot.yaml"), Options{})
}

// BenchmarkExhaustiveGEMV plans workloads/gemv.yaml (the Hello GEMV).
func BenchmarkExhaustiveGEMV(b *testing.B) {
	benchExhaustive(b, workloadFile(b, "gemv.yaml"), Options{})
}

// BenchmarkExhaustiveReducedGEMM plans workloads/gemm.yaml's contraction
// (B as [K, J]) at I = J = 64, K = 128.
func BenchmarkExhaustiveReducedGEMM(b *testing.B) {
	benchExhaustive(b, loadWorkload(b, `name: reduced-gemm
einsum: IK,KJ->IJ
axes: {I: 64, J: 64, K: 128}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`), Options{})
}

// BenchmarkEnumerateGEMM enumerates workloads/gemm.yaml's mapspace without
// evaluating it.
func BenchmarkEnumerateGEMM(b *testing.B) {
	s := newSpace(b, workloadFile(b, "gemm.yaml"))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n = 0
		s.Enumerate(func(Candidate) bool { n++; return true })
	}
	b.ReportMetric(float64(n), "candidates")
}

// BenchmarkBuildGEMM builds the Hello GEMM's program from its candidate.
func BenchmarkBuildGEMM(b *testing.B) {
	s := newSpace(b, loadWorkload(b, helloGEMMWorkload))
	c := s.candidate(b, helloGEMM)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Build(&c); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSolve plans w as `tcpmap plan` does: the whole mapspace (split-K
// included) with tiled candidates of at most opts.MaxTiles tiles (the
// command's default 512 when unset).
func benchSolve(b *testing.B, w *workload.Workload, opts Options) {
	s := newSplitSpace(b, w)
	if opts.MaxTiles == 0 {
		opts.MaxTiles = 512
	}
	b.ReportAllocs()
	var r *Result
	for b.Loop() {
		var err error
		if r, err = Solve(s, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Stats.Candidates), "candidates")
	b.ReportMetric(float64(r.Stats.CostEvaluations), "priced")
	if r.Proof.Proven {
		b.ReportMetric(1, "proven")
	} else {
		b.ReportMetric(0, "proven")
	}
}

// BenchmarkSolveGEMM proves the optimum of workloads/gemm.yaml.
func BenchmarkSolveGEMM(b *testing.B) {
	benchSolve(b, workloadFile(b, "gemm.yaml"), Options{})
}

// BenchmarkSolveBMM proves the optimum of workloads/bmm.yaml.
func BenchmarkSolveBMM(b *testing.B) {
	benchSolve(b, workloadFile(b, "bmm.yaml"), Options{})
}

// BenchmarkSolveGEMM4K proves the optimum of workloads/gemm-4k.yaml.
func BenchmarkSolveGEMM4K(b *testing.B) {
	benchSolve(b, workloadFile(b, "gemm-4k.yaml"), Options{})
}

// BenchmarkSolveGEMM4KAllOrders proves it with every digit order (plan's
// default, --digit-orders all).
func BenchmarkSolveGEMM4KAllOrders(b *testing.B) {
	benchSolve(b, workloadFile(b, "gemm-4k.yaml"), Options{AllOrders: true})
}
