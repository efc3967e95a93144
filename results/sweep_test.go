package results_test

// The sweep's tests that need the SQLite store: search/sweep tests Run
// with a store in memory, and a test file there, even an external one,
// would link SQLite into its race-tested test binary.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/results"
	"tcpmap/results/record"
	"tcpmap/search/sweep"
)

// fakeSweep is a 3 × 4 × 2 = 24-point sweep of a small GEMM (search/sweep's
// tests sweep the same).
const fakeSweep = `name: fake
workload: {einsum: "MK,KN->MN", axes: {M: 64, N: 64, K: 64}, dtype: bf16}
grid:
  M: [64, 128, 256]
  K: {pow2: [64, 512]}
  N: [64, 128]
options: {max_evaluations: 100}
`

// fakePlanner prices a point without searching: cycles from its sizes, a
// deterministic plan; it counts its calls (as search/sweep's tests'
// fakePlanner does).
type fakePlanner struct {
	calls atomic.Int64
	delay time.Duration
}

func (f *fakePlanner) plan(ctx context.Context, p *sweep.Point) (*record.Record, error) {
	f.calls.Add(1)
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, sweep.ErrInterrupted
		}
	}
	macs := 1.0
	var axes []string
	for _, a := range p.Problem.Axes {
		macs *= float64(a.Size)
		axes = append(axes, fmt.Sprintf("%s=%d", a.Name, a.Size))
	}
	plan, err := record.Compress([]byte(fmt.Sprintf(`{"point": %q}`, p.Text())))
	if err != nil {
		return nil, err
	}
	bott := "dma/hbm"
	if macs > 1<<22 {
		bott = "main/switch"
	}
	return &record.Record{Workload: p.Workload.Name, Einsum: p.Problem.Einsum(), Axes: strings.Join(axes, ", "), DType: "bf16",
		Status: record.StatusPlanned, Cycles: macs / 1000, MACs: macs, Bottleneck: bott, Optimal: "proven", Plan: plan,
		PeakMACsPerCycle: 131072, PeakHBMBytesPerCycle: 1500, MinHBMBytes: int64(macs / 10), Roofline: 0.5, WallSeconds: 0.01}, nil
}

func loadFake(t testing.TB) *sweep.Sweep {
	sw, err := sweep.Parse([]byte(fakeSweep), "fake.yaml", engines.Default())
	require.NoError(t, err)
	require.Len(t, sw.Points, 24)
	return sw
}

func openStore(t testing.TB, path string) *results.Store {
	s, err := results.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestShardsPartitionAndMerge runs the sweep as 4 shards into 4 stores,
// merges them and checks the merged store answers as a single run's does.
func TestShardsPartitionAndMerge(t *testing.T) {
	sw := loadFake(t)
	dir := t.TempDir()
	single := openStore(t, filepath.Join(dir, "single.db"))
	_, err := sweep.Run(sw, sweep.Options{Store: single, Workers: 2, Planner: (&fakePlanner{}).plan})
	require.NoError(t, err)

	merged := openStore(t, filepath.Join(dir, "all.db"))
	total := 0
	for i := 0; i < 4; i++ {
		path := filepath.Join(dir, fmt.Sprintf("shard%d.db", i))
		st, err := results.Open(path)
		require.NoError(t, err)
		sum, err := sweep.Run(sw, sweep.Options{Store: st, Workers: 2, Planner: (&fakePlanner{}).plan, Shard: i, Shards: 4})
		require.NoError(t, err)
		total += sum.InShard
		assert.Equal(t, sum.InShard, sum.Planned)
		require.NoError(t, st.Close())
		rep, err := merged.Merge(path)
		require.NoError(t, err)
		assert.Empty(t, rep.Conflicts)
		// Merging again changes nothing.
		rep, err = merged.Merge(path)
		require.NoError(t, err)
		assert.Zero(t, rep.Added)
	}
	assert.Equal(t, 24, total, "the shards partition the points")

	for _, f := range []record.Filter{{}, {Bottleneck: "switch"}, {Where: []record.Cond{{Name: "M", Op: "..", Lo: 128, Hi: 256}}}} {
		a, err := single.List(f, true)
		require.NoError(t, err)
		b, err := merged.List(f, true)
		require.NoError(t, err)
		assert.Equal(t, a, b)
		assert.Equal(t, record.Best(a, []string{"M"}), record.Best(b, []string{"M"}))
	}

	// The partition does not depend on the sweep file's order.
	reordered := `name: fake
options: {max_evaluations: 100}
grid:
  N: [128, 64]
  K: {pow2: [64, 512]}
  M: [256, 64, 128]
workload: {einsum: "MK,KN->MN", axes: {M: 64, N: 64, K: 64}, dtype: bf16}
`
	sw2, err := sweep.Parse([]byte(reordered), "r.yaml", engines.Default())
	require.NoError(t, err)
	shard := map[string]int{}
	for _, p := range sw.Points {
		shard[p.Key.ID()] = p.Shard(4)
	}
	for _, p := range sw2.Points {
		assert.Equal(t, shard[p.Key.ID()], p.Shard(4))
	}
}

// sweepKillEnv makes the test binary a sweeping process (TestSweepKill9).
const sweepKillEnv = "TCPMAP_SWEEP_KILL_HELPER"

// sweepUntilKilled sweeps the fake sweep slowly into the store at path;
// it ends the process if the sweep ends before it is killed.
func sweepUntilKilled(path string) {
	sw, err := sweep.Parse([]byte(fakeSweep), "fake.yaml", engines.Default())
	if err == nil {
		var st *results.Store
		if st, err = results.Open(path); err == nil {
			_, err = sweep.Run(sw, sweep.Options{Store: st, Workers: 2, Planner: (&fakePlanner{delay: 100 * time.Millisecond}).plan})
		}
	}
	fmt.Fprintln(os.Stderr, "the sweep ended before it was killed:", err)
	os.Exit(1)
}

// TestSweepKill9 kills a sweeping process with SIGKILL: the store passes
// the integrity check, and the rerun plans only the missing points.
func TestSweepKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), sweepKillEnv+"="+path)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	var n int
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if _, err := os.Stat(path); err != nil {
			continue // the helper has not created it yet
		}
		if st, err := results.Open(path); err == nil {
			n, _ = st.Count()
			st.Close()
			if n >= 6 {
				break
			}
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait())
	require.GreaterOrEqual(t, n, 6)

	st := openStore(t, path)
	require.NoError(t, st.Check())
	stored, err := st.Count()
	require.NoError(t, err)
	require.Less(t, stored, 24, "killed before the end")
	f := &fakePlanner{}
	sum, err := sweep.Run(loadFake(t), sweep.Options{Store: st, Workers: 2, Planner: f.plan})
	require.NoError(t, err)
	assert.Equal(t, stored, sum.Cached)
	assert.Equal(t, int64(24-stored), f.calls.Load())
	require.NoError(t, st.Check())
}

// BenchmarkSweepRerunFromStore is the rerun of the shipped 200-point
// gemm-shapes sweep when the store holds every point: read and expand the
// sweep file, open the store, find every key, plan nothing.
func BenchmarkSweepRerunFromStore(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.db")
	sw, err := sweep.Load("../workloads/sweeps/gemm-shapes.yaml", engines.Default())
	require.NoError(b, err)
	st, err := results.Open(path)
	require.NoError(b, err)
	_, err = sweep.Run(sw, sweep.Options{Store: st, Workers: 2, Planner: (&fakePlanner{}).plan})
	require.NoError(b, err)
	require.NoError(b, st.Close())
	b.ResetTimer()
	for b.Loop() {
		sw, err := sweep.Load("../workloads/sweeps/gemm-shapes.yaml", engines.Default())
		require.NoError(b, err)
		st, err := results.Open(path)
		require.NoError(b, err)
		sum, err := sweep.Run(sw, sweep.Options{Store: st, Workers: 1, Planner: (&fakePlanner{}).plan})
		require.NoError(b, err)
		require.Equal(b, 200, sum.Cached)
		require.NoError(b, st.Close())
	}
}
