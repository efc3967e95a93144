package sweep

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/pos"
	"tcpmap/results/record"
)

// fakeSweep is a 3 × 4 × 2 = 24-point sweep of a small GEMM.
const fakeSweep = `name: fake
workload: {einsum: "MK,KN->MN", axes: {M: 64, N: 64, K: 64}, dtype: bf16}
grid:
  M: [64, 128, 256]
  K: {pow2: [64, 512]}
  N: [64, 128]
options: {max_evaluations: 100}
`

// fakePlanner prices a point without searching: cycles from its sizes, a
// deterministic plan; it counts its calls.
type fakePlanner struct {
	calls atomic.Int64
	delay time.Duration
}

func (f *fakePlanner) plan(ctx context.Context, p *Point) (*record.Record, error) {
	f.calls.Add(1)
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ErrInterrupted
		}
	}
	macs := 1.0
	for _, a := range p.Problem.Axes {
		macs *= float64(a.Size)
	}
	plan, err := record.Compress([]byte(fmt.Sprintf(`{"point": %q}`, p.Text())))
	if err != nil {
		return nil, err
	}
	bott := "dma/hbm"
	if macs > 1<<22 {
		bott = "main/switch"
	}
	return &record.Record{Workload: p.Workload.Name, Einsum: p.Problem.Einsum(), Axes: axesText(p), DType: "bf16",
		Status: record.StatusPlanned, Cycles: macs / 1000, MACs: macs, Bottleneck: bott, Optimal: "proven", Plan: plan,
		PeakMACsPerCycle: 131072, PeakHBMBytesPerCycle: 1500, MinHBMBytes: int64(macs / 10), Roofline: 0.5, WallSeconds: 0.01}, nil
}

func loadFake(t testing.TB) *Sweep {
	sw, err := Parse([]byte(fakeSweep), "fake.yaml", engines.Default())
	require.NoError(t, err)
	require.Len(t, sw.Points, 24)
	return sw
}

func TestRunSweepCacheAndForce(t *testing.T) {
	sw := loadFake(t)
	st := newMemStore(t)
	f := &fakePlanner{}
	var last Progress
	sum, err := Run(sw, Options{Store: st, Workers: 3, Planner: f.plan, Progress: func(p Progress) { last = p }})
	require.NoError(t, err)
	assert.Equal(t, 24, sum.Planned)
	assert.Equal(t, int64(24), f.calls.Load())
	assert.Equal(t, 24, last.Done)

	sum, err = Run(sw, Options{Store: st, Workers: 3, Planner: f.plan})
	require.NoError(t, err)
	assert.Equal(t, 24, sum.Cached)
	assert.Zero(t, sum.Planned)
	assert.Equal(t, int64(24), f.calls.Load(), "cache hits are not planned")

	sum, err = Run(sw, Options{Store: st, Workers: 2, Planner: f.plan, Force: true})
	require.NoError(t, err)
	assert.Equal(t, 24, sum.Planned)
	assert.Equal(t, int64(48), f.calls.Load())
	assert.Equal(t, 24, st.Count())
}

func TestRunSweepInterruptAndResume(t *testing.T) {
	sw := loadFake(t)
	st := newMemStore(t)
	f := &fakePlanner{delay: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	sum, err := Run(sw, Options{Store: st, Workers: 2, Planner: f.plan, Context: ctx,
		Progress: func(p Progress) {
			if p.Done == 5 {
				cancel()
			}
		}})
	require.NoError(t, err)
	assert.True(t, sum.Interrupted)
	assert.Positive(t, sum.Left)
	stored := st.Count()
	assert.Equal(t, sum.Planned, stored)
	assert.Less(t, stored, 24)

	sum, err = Run(sw, Options{Store: st, Workers: 2, Planner: f.plan})
	require.NoError(t, err)
	assert.Equal(t, stored, sum.Cached)
	assert.Equal(t, 24-stored, sum.Planned)
}

func TestRunSweepErrorsAreReported(t *testing.T) {
	sw := loadFake(t)
	st := newMemStore(t)
	f := &fakePlanner{}
	failing := func(ctx context.Context, p *Point) (*record.Record, error) {
		if p.Index == 3 {
			return nil, fmt.Errorf("boom")
		}
		return f.plan(ctx, p)
	}
	sum, err := Run(sw, Options{Store: st, Workers: 2, Planner: failing})
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Failed)
	require.Len(t, sum.Errors, 1)
	assert.Equal(t, "fake.yaml:4:3: fake K=128 M=64 N=128: boom", sum.Errors[0].Error(), "at the grid's first axis")
	var pe *pos.Error
	require.ErrorAs(t, sum.Errors[0], &pe)
	assert.EqualError(t, pe.Err, "boom")
}

// TestPlanPoint plans a real point with the planner, within an evaluation
// budget (the same result on any machine).
func TestPlanPoint(t *testing.T) {
	src := `name: dot
workload: {einsum: "A,A->", axes: {A: 1024}, dtype: bf16}
grid: {A: [1024]}
options: {max_evaluations: 300}
`
	sw, err := Parse([]byte(src), "dot.yaml", engines.Default())
	require.NoError(t, err)
	r, err := PlanPoint(context.Background(), sw.Points[0])
	require.NoError(t, err)
	require.Equal(t, record.StatusPlanned, r.Status, r.Message)
	assert.Positive(t, r.Cycles)
	assert.NotEmpty(t, r.Plan)
	assert.Equal(t, "A, A -> 1", r.Einsum)
	assert.Equal(t, float64(1024), r.MACs)
	// The point's search held the named digit orders (the default),
	// every order with digit_orders: all.
	pl, err := record.Decompress(r.Plan)
	require.NoError(t, err)
	assert.NotContains(t, string(pl), `digit_orders`)
	sw.Points[0].Options.DigitOrders = "all"
	r, err = PlanPoint(context.Background(), sw.Points[0])
	require.NoError(t, err)
	pl, err = record.Decompress(r.Plan)
	require.NoError(t, err)
	assert.Contains(t, string(pl), `"digit_orders": "all"`)
}

func TestParseShard(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		arg      string
		env      map[string]string
		i, n     int
		errMatch string
	}{
		{"1/4", nil, 1, 4, ""},
		{"0/1", nil, 0, 1, ""},
		{"4", map[string]string{"JOB_COMPLETION_INDEX": "3"}, 3, 4, ""},
		{"4", map[string]string{"SLURM_ARRAY_TASK_ID": "2"}, 2, 4, ""},
		{"4", map[string]string{"JOB_COMPLETION_INDEX": "0", "SLURM_ARRAY_TASK_ID": "2"}, 0, 4, ""},
		{"4", nil, 0, 0, "neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set"},
		{"4", map[string]string{"SLURM_ARRAY_TASK_ID": "4"}, 0, 0, `SLURM_ARRAY_TASK_ID="4" is not a shard index from 0 to 3`},
		{"4/4", nil, 0, 0, "the index must be from 0 to 3"},
		{"a/4", nil, 0, 0, "the index must be"},
		{"0/0", nil, 0, 0, "want I/N or N"},
		{"", nil, 0, 0, "want I/N or N"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			i, n, err := ParseShard(tc.arg, env(tc.env))
			if tc.errMatch != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.errMatch)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, [2]int{tc.i, tc.n}, [2]int{i, n})
		})
	}
}
