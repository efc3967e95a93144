package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestCompose: a pipeline takes its slowest stage plus the fill of the
// stages before it and the drain of those after it.
func TestCompose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stages []StageCost
		want   float64
		at     int
	}{
		{"one stage", []StageCost{{Cycles: 10, Span: 10}}, 10, 0},
		{"slowest stage alone", []StageCost{{Cycles: 10, Span: 10}, {Cycles: 30, Span: 30}, {Cycles: 20, Span: 20}}, 30, 1},
		{"first of equals", []StageCost{{Cycles: 30, Span: 30}, {Cycles: 30, Span: 30}}, 30, 0},
		// Hello Dot's main chain: fetch 128 cycles (002 L2060), then a
		// Reducer of 64 packets whose tree adds 5 cycles (002 L4543):
		// 128 + 5.
		{"drain after the bottleneck", []StageCost{{Cycles: 128, Span: 128}, {Cycles: 64, Span: 69, Fill: 69, Drain: 5}, {Cycles: 1, Span: 1}}, 133, 0},
		// A commit-bound chain waits for the Reducer's first block: fill
		// 5 + 32 (002 L4543-4548).
		{"fill before the bottleneck", []StageCost{{Cycles: 8, Span: 8}, {Cycles: 64, Span: 69, Fill: 37, Drain: 5}, {Cycles: 100, Span: 100}}, 137, 2},
		// The Transpose Engine's formula holds its own fill and drain
		// (002 L6899-6912); a fetch cast latency of 2 drains after it
		// (002 L2135).
		{"span of the bottleneck", []StageCost{{Cycles: 10, Span: 12, Fill: 2, Drain: 2}, {Cycles: 50, Span: 50, Fill: 8, Drain: 4}}, 52, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, at := compose(tc.stages)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.at, at)
		})
	}
}

// TestGoldenReports checks relations the manual implies on the golden
// kernels' reports.
func TestGoldenReports(t *testing.T) {
	spec := engines.Default()
	for _, name := range []string{"hello-dot", "hello-gemv", "hello-gemm", "hello-add", "hello-mul"} {
		t.Run(name, func(t *testing.T) {
			p := loadGolden(t, name)
			r := evaluate(t, p)
			m, err := NewModel(spec)
			require.NoError(t, err)
			assert.LessOrEqual(t, r.Utilization.MAC, 1.0)
			assert.GreaterOrEqual(t, r.Utilization.MAC, 0.0)
			assert.LessOrEqual(t, r.Roofline.HBM, 1.0)
			assert.GreaterOrEqual(t, r.Cycles, r.Roofline.ComputeCycles)
			assert.GreaterOrEqual(t, r.Cycles, r.Roofline.MemoryCycles)
			assert.InDelta(t, r.Cycles*1e-9/spec.Clock.GHz.Value, r.Seconds, 1e-15)
			assert.True(t, r.Clock.Assumption, "the clock is the manual's 1 GHz assumption")
			byCtx := map[kernel.Context][]OpReport{}
			for i, o := range r.Ops {
				assert.LessOrEqual(t, o.End, r.Cycles, "the total covers op %d", i)
				assert.GreaterOrEqual(t, o.End-o.Start, o.Cost.Cycles-1e-9, "op %d takes at least its own time", i)
				for _, s := range o.Cost.Stages {
					assert.GreaterOrEqual(t, o.Cost.Cycles, s.Cycles, "op %d outlasts its %s stage", i, s.Engine)
				}
				if i > 0 {
					assert.GreaterOrEqual(t, o.Start, r.Ops[i-1].Start, "program order")
				}
				for j := 0; j < i; j++ {
					m.report.reset("", false)
					require.NoError(t, m.footprints(p))
					if m.conflict(i, j) {
						assert.GreaterOrEqual(t, o.Start, r.Ops[j].End, "op %d waits for op %d (hazard)", i, j)
					}
				}
				if o.Context != kernel.CtxDMA {
					for _, q := range byCtx[o.Context] {
						assert.GreaterOrEqual(t, o.Start, q.End, "one op at a time in %s", o.Context)
					}
				}
				byCtx[o.Context] = append(byCtx[o.Context], o)
			}
			for _, c := range r.Contexts {
				assert.LessOrEqual(t, c.Busy, r.Cycles+1e-9)
			}
			for _, e := range r.Engines {
				assert.LessOrEqual(t, e.Busy, r.Cycles+1e-9, "%s/%s", e.Context, e.Engine)
			}
			assert.NotEmpty(t, r.Bottleneck.Path)
			assert.Equal(t, r.Cycles, r.Ops[r.Bottleneck.Path[len(r.Bottleneck.Path)-1]].End)
			assert.NoError(t, r.Err())
		})
	}
}

// TestHelloDot checks Hello Dot's main chain against the manual's formulas:
// its fetch reads 4096 bytes 32 at a time, 128 cycles (002 L1757-1758,
// L2060), collect and the Stream Adapter move the same 128 flits, and the
// Reducer's bf16 tree drains 5 cycles after the last packet (002 L4543):
// bound by the fetch/align path, 133 cycles.
func TestHelloDot(t *testing.T) {
	r := evaluate(t, loadGolden(t, "hello-dot"))
	main := r.Ops[3]
	require.Equal(t, kernel.CtxMain, main.Context)
	assert.Equal(t, EngineFetch, main.Cost.Bottleneck)
	assert.Equal(t, 4096.0/32+5, main.Cost.Cycles)
	for _, s := range main.Cost.Stages {
		if s.Engine == EngineCollect || s.Engine == EngineAligner {
			assert.Equal(t, 128.0, s.Cycles, "%s", s.Engine)
		}
	}
	// The einsum sums over A = 2048: 2048 MACs; bf16 peak 2 × 256 × 8 ×
	// 32 per cycle (002 L130-132, L4388).
	assert.Equal(t, int64(2048), r.Utilization.MACs)
	assert.Equal(t, int64(2*256*8*32), r.Utilization.PeakMACsPerCycle)
	// The 2-byte result is a partial 256-byte HBM write: a priced
	// read-modify-write (002 L2985).
	require.NotEmpty(t, r.Findings)
	f := r.Findings[len(r.Findings)-1]
	assert.Equal(t, "MEM-P6", f.Rule.ID)
	assert.Equal(t, Penalty, f.Effect)
	assert.Equal(t, 4, f.Op)
}

// TestHelloGEMMUtilization: 512 × 512 × 1024 MACs (002 L380-520).
func TestHelloGEMMUtilization(t *testing.T) {
	r := evaluate(t, loadGolden(t, "hello-gemm"))
	assert.Equal(t, int64(512*512*1024), r.Utilization.MACs)
	assert.InDelta(t, float64(512*512*1024)/float64(2*256*8*32)/r.Cycles, r.Utilization.MAC, 1e-12)
	assert.Equal(t, "memory", r.Roofline.Bound)
}

// TestFootprintFindings: capacity and overlapping live tensors are Invalid
// findings; their absence is not (002 L137-140, L154-155, L7056).
func TestFootprintFindings(t *testing.T) {
	extra := func(tensor string, ops ...string) *kernel.Program {
		src := fmt.Sprintf(`{"name": "test", "axes": "A=2048, B=40000", "chips": 1, "tensors": [%s, %s], "ops": [%s]}`,
			fmt.Sprintf(testTensors, 4096), tensor, strings.Join(ops, ",\n"))
		var p kernel.Program
		require.NoError(t, json.Unmarshal([]byte(src), &p), src)
		require.NoError(t, engines.Lower(engines.Default(), &p))
		return &p
	}
	for _, tc := range []struct {
		name, tensor, rule string
		ops                []string
	}{
		{"DM beyond 512 KB", `{"name": "big", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 522240}`,
			"MEM-C1", nil},
		{"VRF beyond 8 KB", `{"name": "big", "mem": "vrf", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 1024}`,
			"MEM-C3", nil},
		{"TRF beyond 64 KB", `{"name": "big", "mem": "trf", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "row": "1", "element": "B", "addr": 0, "trf_address": "Full"}`,
			"MEM-C2", nil},
		{"TRF half beyond 32 KB", `{"name": "big", "mem": "trf", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "row": "1", "element": "A # 20000", "addr": 0, "trf_address": "SecondHalf"}`,
			"MEM-C2", nil},
		{"HBM beyond 48 GB", `{"name": "big", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 51539607000}`,
			"MEM-C4", nil},
		{"live DM tensors overlap", `{"name": "alias", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 2048}`,
			"SCH-R7", []string{dmaOp("to_dm", "x", "x_dm"), dmaOp("to_dm", "y", "alias"), copyChain("main", "x_dm", "z_dm"), copyChain("main", "alias", "v_dm")}},
		{"dead tensor's bytes reused: no finding", `{"name": "alias", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 2048}`,
			"", []string{dmaOp("to_dm", "x", "x_dm"), copyChain("main", "x_dm", "z_dm"), dmaOp("to_dm", "y", "alias"), copyChain("main", "alias", "v_dm")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := evaluate(t, extra(tc.tensor, append([]string{dmaOp("to_dm", "w", "w_dm")}, tc.ops...)...))
			var got []string
			for _, f := range r.Findings {
				if f.Effect == Invalid {
					got = append(got, f.Rule.ID)
					assert.Equal(t, -1, f.Op)
					assert.Contains(t, f.Error(), "(002 L")
				}
			}
			if tc.rule == "" {
				assert.Empty(t, got)
				assert.NoError(t, r.Err())
				return
			}
			assert.Equal(t, []string{tc.rule}, got)
			assert.Error(t, r.Err())
		})
	}
}

// TestDoubleBuffering: a DM ping-pong (the next tile's DMA into the other
// buffer while the main context computes on this one, 002 L7065-7066,
// L7100) overlaps DMA and compute; with both tiles in one buffer the WAR
// hazard serializes them.
func TestDoubleBuffering(t *testing.T) {
	ops := []string{
		dmaOp("to_dm", "x", "x_dm"), copyChain("main", "x_dm", "z_dm"),
		dmaOp("to_dm", "y", "y_dm"), copyChain("main", "y_dm", "v_dm"),
	}
	ping := evaluate(t, testKernel(t, 4096, ops...))
	// y_dm's DMA starts with the chain on x_dm (program order), not after.
	assert.Equal(t, ping.Ops[1].Start, ping.Ops[2].Start)
	one := evaluate(t, testKernel(t, 0, ops...)) // y_dm on x_dm's bytes
	assert.Equal(t, one.Ops[1].End, one.Ops[2].Start, "WAR on the shared buffer")
	assert.Greater(t, one.Cycles, ping.Cycles)
}

// TestCacheTransparent: the caches change speed, not results.
func TestCacheTransparent(t *testing.T) {
	spec := engines.Default()
	for _, name := range []string{"hello-dot", "hello-gemv", "hello-gemm"} {
		p := loadGolden(t, name)
		m, err := NewModel(spec)
		require.NoError(t, err)
		first, err := m.Evaluate(p)
		require.NoError(t, err)
		a := first.Clone()
		second, err := m.Evaluate(p) // from the caches
		require.NoError(t, err)
		n, err := NewModel(spec)
		require.NoError(t, err)
		n.NoCache = true
		fresh, err := n.Evaluate(p)
		require.NoError(t, err)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(second)
		jc, _ := json.Marshal(fresh)
		assert.JSONEq(t, string(ja), string(jb), name)
		assert.JSONEq(t, string(ja), string(jc), name)
	}
	// The cached bank walks agree with FetchBanks and CommitBanks.
	p := loadGolden(t, "hello-gemm")
	m, err := NewModel(spec)
	require.NoError(t, err)
	for _, op := range p.Ops {
		for _, st := range op.Stages {
			if c := st.Config; c != nil && c.Fetch != nil {
				want, wf, err := FetchBanks(spec, c.Fetch, 0)
				require.NoError(t, err)
				got, gf, err := m.bankRun(&c.Fetch.Seq, c.Fetch.InType.SizeBits(), c.Fetch.FetchElems, 0)
				require.NoError(t, err)
				assert.Equal(t, want, got)
				assert.Equal(t, wf == nil, gf == nil)
			}
			if c := st.Config; c != nil && c.Commit != nil {
				want, _, err := CommitBanks(spec, c.Commit, 64)
				require.NoError(t, err)
				got, _, err := m.bankRun(&c.Commit.Seq, c.Commit.DType.SizeBits(), c.Commit.CommitSize*8/c.Commit.DType.SizeBits(), 64)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			}
		}
	}
}

// TestDMABoundMode: pricing DMA commands by their lower bound never exceeds
// the full estimate on the golden kernels.
func TestDMABoundMode(t *testing.T) {
	for _, name := range []string{"hello-dot", "hello-gemv", "hello-gemm"} {
		p := loadGolden(t, name)
		full := evaluate(t, p)
		m, err := NewModel(engines.Default())
		require.NoError(t, err)
		m.DMABound = true
		b, err := m.Evaluate(p)
		require.NoError(t, err)
		assert.True(t, b.DMABound)
		assert.LessOrEqual(t, b.Cycles, full.Cycles, name)
		assert.Greater(t, b.Cycles, 0.0)
	}
}

// TestEvaluateErrors: programs that cannot be priced are errors naming the
// op, never a panic.
func TestEvaluateErrors(t *testing.T) {
	m, err := NewModel(engines.Default())
	require.NoError(t, err)
	_, err = m.Evaluate(nil)
	assert.Error(t, err)
	// Not lowered.
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(fmt.Sprintf(`{"name": "t", "axes": "A=2048", "chips": 1, "tensors": [%s], "ops": [%s]}`,
		fmt.Sprintf(testTensors, 4096), copyChain("main", "x_dm", "z_dm"))), &p))
	_, err = m.Evaluate(&p)
	assert.ErrorContains(t, err, "ops[0].stages[1] (fetch): no lowered configuration")
	q := testKernel(t, 4096, dmaOp("to_dm", "x", "x_dm"))
	q.Ops[0].DMA = nil
	_, err = m.Evaluate(q)
	assert.ErrorContains(t, err, "ops[0] (to_dm)")
	q = testKernel(t, 4096, dmaOp("to_dm", "x", "x_dm"))
	q.Ops[0].Context = kernel.CtxMain
	_, err = m.Evaluate(q)
	assert.ErrorContains(t, err, "cannot run in the main context")
	q = testKernel(t, 4096, copyChain("main", "x_dm", "z_dm"))
	q.Ops[0].Stages[1] = nil
	_, err = m.Evaluate(q)
	assert.Error(t, err)
}

// TestTrace: the timeline is JSON with traceEvents, complete events for
// every op and stage, and the same bytes every time.
func TestTrace(t *testing.T) {
	r := evaluate(t, loadGolden(t, "hello-gemv"))
	var a, b bytes.Buffer
	require.NoError(t, WriteTrace(&a, r))
	require.NoError(t, WriteTrace(&b, evaluate(t, loadGolden(t, "hello-gemv"))))
	assert.Equal(t, a.String(), b.String(), "deterministic")
	var f struct {
		TraceEvents []struct {
			Name string   `json:"name"`
			Ph   string   `json:"ph"`
			Ts   float64  `json:"ts"`
			Dur  *float64 `json:"dur"`
			Pid  int      `json:"pid"`
			Tid  int      `json:"tid"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(a.Bytes(), &f))
	ops, stages := 0, 0
	for _, e := range f.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		require.NotNil(t, e.Dur)
		assert.GreaterOrEqual(t, *e.Dur, 0.0)
		assert.LessOrEqual(t, e.Ts+*e.Dur, r.Cycles/1000+1e-9, e.Name)
		if e.Pid == 1 {
			ops++
		} else {
			stages++
		}
	}
	nst := 0
	for _, o := range r.Ops {
		nst += len(o.Cost.Stages)
	}
	assert.Equal(t, len(r.Ops)+1, ops, "every op, and the dual-channel main op on sub too")
	assert.Equal(t, nst, stages)
	assert.Error(t, WriteTrace(&a, nil))
}

// TestRulesOfComposition: every rule this layer declares is well formed.
func TestRulesOfComposition(t *testing.T) {
	for _, r := range []*engines.Rule{ruleContention, ruleTRFStall, ruleHBMAlign, ruleDMWriteAlign} {
		assert.NotEmpty(t, r.ID)
		assert.NotContains(t, r.ID, "#duplicate")
		assert.Regexp(t, `^002 L\d+`, r.Cite)
		assert.NotEmpty(t, r.Text)
	}
	for e := Engine(0); e < NumEngines; e++ {
		b, err := e.MarshalText()
		require.NoError(t, err)
		var back Engine
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, e, back)
	}
	assert.Error(t, new(Engine).UnmarshalText([]byte("warp")))
}

// BenchmarkEvaluateGEMM prices the lowered Hello GEMM program, as the
// planner's inner loop does.
func BenchmarkEvaluateGEMM(b *testing.B) {
	p := loadGolden(b, "hello-gemm")
	for _, bound := range []bool{false, true} {
		b.Run(fmt.Sprintf("dma_bound=%v", bound), func(b *testing.B) {
			m, err := NewModel(engines.Default())
			require.NoError(b, err)
			m.DMABound = bound
			_, err = m.Evaluate(p)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Evaluate(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEvaluateAllocationFree: pricing a program whose commands the model has
// seen does not allocate (the planner's inner loop).
func TestEvaluateAllocationFree(t *testing.T) {
	p := loadGolden(t, "hello-gemm")
	m, err := NewModel(engines.Default())
	require.NoError(t, err)
	_, err = m.Evaluate(p)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := m.Evaluate(p); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

// TestAlignFindings: the alignment penalties the DMA model prices are
// reported with their rules (002 L2414, L2983-2985).
func TestAlignFindings(t *testing.T) {
	m, err := NewModel(engines.Default())
	require.NoError(t, err)
	assert.Empty(t, m.alignFindings(&DMAEstimate{}))
	fs := m.alignFindings(&DMAEstimate{MisalignedDMWrites: 3, HBM: HBMStats{UnalignedReads: 2}})
	require.Len(t, fs, 2)
	assert.Equal(t, "MEM-P6", fs[0].Rule.ID)
	assert.Equal(t, "DMA-P1", fs[1].Rule.ID)
	for _, f := range fs {
		assert.Equal(t, Penalty, f.Effect)
	}
	assert.Contains(t, fs[1].Error(), "3 DM write requests not aligned to 8 bytes, each taking 3×")
	// An empty program: no ops, no bottleneck, lists that print as [].
	r := evaluate(t, testKernel(t, 4096))
	assert.Equal(t, 0.0, r.Cycles)
	assert.Equal(t, "none", r.Bottleneck.String())
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"findings":[]`)
	assert.Contains(t, string(b), `"ops":[]`)
}

// TestEvaluateBrokenConfigs: removing or corrupting any lowered
// configuration is an error naming the op, never a panic.
func TestEvaluateBrokenConfigs(t *testing.T) {
	m, err := NewModel(engines.Default())
	require.NoError(t, err)
	m.NoCache = true
	for _, name := range []string{"hello-dot", "hello-gemv", "hello-gemm", "hello-mul"} {
		p := loadGolden(t, name)
		for i, op := range p.Ops {
			if op.DMA != nil {
				keep := op.DMA.Descriptors[0].Stride0
				op.DMA.Descriptors[0].Stride0 = 0
				_, err := m.Evaluate(p)
				assert.ErrorContains(t, err, fmt.Sprintf("ops[%d]", i), name)
				op.DMA.Descriptors[0].Stride0 = keep
				continue
			}
			for k, st := range op.Stages {
				if st.Config == nil || st.Kind == kernel.StBegin {
					continue
				}
				keep := st.Config
				st.Config = nil
				_, err := m.Evaluate(p)
				if st.Kind != kernel.StVectorInit && st.Kind != kernel.StVectorBranch && st.Kind != kernel.StVectorFxp && st.Kind != kernel.StVectorFinal {
					assert.ErrorContains(t, err, fmt.Sprintf("ops[%d]", i), "%s stage %d", name, k)
				}
				st.Config = keep
			}
		}
		_, err := m.Evaluate(p)
		assert.NoError(t, err, "restored %s", name)
	}
}

// TestWorkloadRoofline: the Hello GEMV's roofline (002 L410-463): the
// 256 × 2048 bf16 matrix and the 2048 bf16 vector read once, the 256 bf16
// results written once, at the read half (0.75 of 1.5 TB/s, 002 L2602,
// L2636) of the channels' rate, 32 channels × 256 B / 5.3 cycles (002
// L2980, L2744; decision "Roofline rates") = 772.8 bytes a cycle, and
// 256 × 2048 MACs at the chip's peak: the reads bound it.
func TestWorkloadRoofline(t *testing.T) {
	r := evaluate(t, loadGolden(t, "hello-gemv"))
	rf := r.Roofline
	reads, writes := int64(256*2048*2+2048*2), int64(256*2)
	assert.Equal(t, reads, rf.MinReadBytes)
	assert.Equal(t, writes, rf.MinWriteBytes)
	read := 32 * 256 / 5.3 * 0.75 / 1.5
	assert.InDelta(t, float64(reads)/read, rf.MinMemoryCycles, 1e-6)
	assert.InDelta(t, float64(reads)/read, rf.IdealCycles, 1e-6)
	assert.InDelta(t, rf.IdealCycles/r.Cycles, rf.Attained, 1e-12)
	assert.Less(t, rf.Attained, 1.0)
}
