package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"tcpmap/results/record"
	"tcpmap/search/sweep"
)

// cliSweep is a 12-point sweep of a small GEMM.
const cliSweep = `name: cli
workload: {einsum: "MK,KN->MN", axes: {M: 64, N: 64, K: 64}, dtype: bf16}
grid:
  M: [64, 128, 256]
  K: [64, 128]
  dtype: [bf16, i8]
options: {max_evaluations: 100}
`

// fakePointPlanner prices a point from its sizes without searching.
func fakePointPlanner(_ context.Context, p *sweep.Point) (*record.Record, error) {
	macs := 1.0
	var axes []string
	for _, a := range p.Problem.Axes {
		macs *= float64(a.Size)
		axes = append(axes, fmt.Sprintf("%s=%d", a.Name, a.Size))
	}
	plan, err := record.Compress([]byte(`{"fake": true}`))
	if err != nil {
		return nil, err
	}
	bott := "dma/hbm"
	if p.Params["dtype"] == "i8" {
		bott = "main/switch"
	}
	return &record.Record{Workload: p.Workload.Name, Einsum: p.Problem.Einsum(), Axes: strings.Join(axes, ", "),
		DType: p.Problem.In[0].DType.String(), Status: record.StatusPlanned, Cycles: macs / 100, MACs: macs,
		MACUtilization: 0.1, Roofline: 0.4, RooflineCycles: macs / 250, Bottleneck: bott, Bound: "memory",
		Optimal: "proven", Plan: plan, PeakMACsPerCycle: 131072, PeakHBMBytesPerCycle: 1500, MinHBMBytes: int64(macs / 20)}, nil
}

// withFakePlanner makes sweep plan with fakePointPlanner for one test.
func withFakePlanner(t *testing.T) {
	sweepPlanner = fakePointPlanner
	t.Cleanup(func() { sweepPlanner = nil; onSweepProgress = nil })
}

func writeSweep(t *testing.T, dir, src string) string {
	path := filepath.Join(dir, "sweep.yaml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

func TestSweepCLIResumeAndForce(t *testing.T) {
	withFakePlanner(t)
	dir := t.TempDir()
	spec, db := writeSweep(t, dir, cliSweep), filepath.Join(dir, "r.db")

	// Ctrl-C after 4 points: exit 3, the 4 points stay.
	onSweepProgress = func(ctx context.Context, p sweep.Progress) {
		if p.Done == 4 {
			cancelSweep(t, ctx)
		}
	}
	code, out, errOut := runCLI(t, "sweep", spec, "--db", db, "--workers", "1")
	assert.Equal(t, exitAborted, code, out+errOut)
	assert.Contains(t, errOut, "run the same command again to resume")
	onSweepProgress = nil

	code, out, errOut = runCLI(t, "sweep", spec, "--db", db, "--workers", "2", "--json")
	require.Equal(t, exitOK, code, errOut)
	var o sweepOutput
	require.NoError(t, json.Unmarshal([]byte(out), &o))
	assert.Equal(t, 12, o.Points)
	assert.Equal(t, 4, o.Cached)
	assert.Equal(t, 8, o.Planned)

	code, out, _ = runCLI(t, "sweep", spec, "--db", db)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "sweep cli: 12 points; 12 from the store, 0 planned")

	code, out, _ = runCLI(t, "sweep", spec, "--db", db, "--force")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "0 from the store, 12 planned (12 with a plan")
}

// cancelSweep stops the sweep as Ctrl-C does.
func cancelSweep(t *testing.T, ctx context.Context) {
	p, err := os.FindProcess(os.Getpid())
	require.NoError(t, err)
	require.NoError(t, p.Signal(os.Interrupt))
	<-ctx.Done()
}

func TestSweepCLIErrors(t *testing.T) {
	withFakePlanner(t)
	dir := t.TempDir()
	spec := writeSweep(t, dir, cliSweep)
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(cliSweep, "K: [64, 128]", "K: [64, x]", 1)), 0o644))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sweep", bad, "--db", filepath.Join(dir, "a.db")}, exitFail, "bad.yaml:5:11: grid.K[1]: want an axis size"},
		{[]string{"sweep", spec, "--shard", "5/4", "--db", filepath.Join(dir, "a.db")}, exitUsage, "the index must be from 0 to 3"},
		{[]string{"sweep", spec, "--workers", "-1"}, exitUsage, "--workers must not be negative"},
		{[]string{"sweep", spec, "--db", filepath.Join(dir, "no", "a.db")}, exitFail, "is not a directory"},
		{[]string{"results", "list", "--db", filepath.Join(dir, "missing.db")}, exitFail, "no such file"},
		{[]string{"results", "list", "--db", filepath.Join(dir, "a.db"), "--where", "M"}, exitUsage, "want NAME=VALUE"},
		{[]string{"results", "list", "--db", filepath.Join(dir, "a.db"), "--status", "done"}, exitUsage, "--status"},
		{[]string{"results", "export", "--db", filepath.Join(dir, "a.db")}, exitUsage, "exactly one of --csv and --json"},
		{[]string{"results", "merge", filepath.Join(dir, "a.db")}, exitUsage, "--out ALL.db is required"},
		{[]string{"results", "show", "zz", "--db", filepath.Join(dir, "a.db")}, exitUsage, "at least 6 hex digits"},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			if tc.args[0] == "results" {
				// A store to query.
				code, _, errOut := runCLI(t, "sweep", spec, "--db", filepath.Join(dir, "a.db"))
				require.Equal(t, exitOK, code, errOut)
			}
			code, out, errOut := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

func TestResultsCLI(t *testing.T) {
	withFakePlanner(t)
	dir := t.TempDir()
	spec, db := writeSweep(t, dir, cliSweep), filepath.Join(dir, "r.db")
	code, _, errOut := runCLI(t, "sweep", spec, "--db", db)
	require.Equal(t, exitOK, code, errOut)

	code, out, _ := runCLI(t, "results", "list", "--db", db, "--where", "M>=128", "--where", "dtype=i8")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "cli K=64 M=128 dtype=i8")
	assert.Contains(t, out, "4 results\n")

	code, out, _ = runCLI(t, "results", "best", "--db", db, "--by", "M", "--bottleneck", "hbm")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "3 results\n")
	assert.Contains(t, out, "cli K=64 M=256 dtype=bf16")

	code, out, _ = runCLI(t, "results", "export", "--csv", "--db", db, "--workload", "cli")
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Len(t, lines, 13)
	assert.True(t, strings.HasSuffix(lines[0], "param:K,param:M,param:dtype"), lines[0])

	code, out, _ = runCLI(t, "results", "export", "--json", "--db", db)
	require.Equal(t, exitOK, code)
	var recs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &recs))
	require.Len(t, recs, 12)
	id := recs[0]["id"].(string)

	planFile := filepath.Join(dir, "p.json")
	code, out, errOut = runCLI(t, "results", "show", id[:8], "--db", db, "--plan", planFile)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "result "+id)
	assert.Contains(t, out, "optimal: proven")
	data, err := os.ReadFile(planFile)
	require.NoError(t, err)
	assert.Equal(t, `{"fake": true}`, string(data))
}

// TestSweepCLIShardsMerge runs the sweep as 4 shards (the index from
// JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it), merges the
// stores, and checks the merged store lists what a single run's does.
func TestSweepCLIShardsMerge(t *testing.T) {
	withFakePlanner(t)
	dir := t.TempDir()
	spec := writeSweep(t, dir, cliSweep)
	single := filepath.Join(dir, "single.db")
	code, _, errOut := runCLI(t, "sweep", spec, "--db", single)
	require.Equal(t, exitOK, code, errOut)
	var shards []string
	total := 0
	for i := 0; i < 4; i++ {
		t.Setenv("JOB_COMPLETION_INDEX", fmt.Sprint(i))
		db := filepath.Join(dir, fmt.Sprintf("shard-%d.db", i))
		code, out, errOut := runCLI(t, "sweep", spec, "--db", db, "--shard", "4", "--json")
		require.Equal(t, exitOK, code, errOut)
		var o sweepOutput
		require.NoError(t, json.Unmarshal([]byte(out), &o))
		assert.Equal(t, fmt.Sprintf("%d/4", i), o.Shard)
		total += o.InShard
		shards = append(shards, db)
	}
	assert.Equal(t, 12, total)
	all := filepath.Join(dir, "all.db")
	code, out, errOut := runCLI(t, append([]string{"results", "merge", "--out", all}, shards...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "merged 4 stores into "+all+": 12 added, 0 already there, 0 conflicts; 12 results")
	code, out, _ = runCLI(t, append([]string{"results", "merge", "--out", all}, shards...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "0 added, 12 already there, 0 conflicts")

	for _, q := range [][]string{{"list"}, {"best", "--by", "dtype"}, {"export", "--csv"}, {"list", "--where", "K=128"}} {
		_, a, _ := runCLI(t, append([]string{"results", "--db", single}, q...)...)
		_, b, _ := runCLI(t, append([]string{"results", "--db", all}, q...)...)
		assert.Equal(t, a, b, q)
	}
}

func TestResultsPlotCLI(t *testing.T) {
	withFakePlanner(t)
	dir := t.TempDir()
	spec, db := writeSweep(t, dir, cliSweep), filepath.Join(dir, "r.db")
	code, _, errOut := runCLI(t, "sweep", spec, "--db", db)
	require.Equal(t, exitOK, code, errOut)
	prefix := filepath.Join(dir, "plots", "cli")
	require.NoError(t, os.Mkdir(filepath.Dir(prefix), 0o755))

	code, _, errOut = runCLI(t, "results", "plot", "--db", db, "--x", "M", "--series", "K", "--out", prefix)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "dtype (2 values) vary too: fix each with --where NAME=VALUE or add it to --series")

	code, out, errOut := runCLI(t, "results", "plot", "--db", db, "--x", "M", "--series", "K,dtype", "--out", prefix, "--pareto", "cycles,M")
	require.Equal(t, exitOK, code, errOut)
	for _, name := range []string{"cycles", "peak", "roofline", "bottleneck", "pareto"} {
		for _, ext := range []string{".svg", ".png"} {
			file := prefix + "-" + name + ext
			assert.Contains(t, out, "wrote "+file)
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Greater(t, len(data), 1000, file)
		}
	}
	svg, err := os.ReadFile(prefix + "-cycles.svg")
	require.NoError(t, err)
	assert.Contains(t, string(svg), "K=128 dtype=i8")
	assert.Contains(t, string(svg), "M (elements)")

	// The same plots again: byte-identical files.
	first, err := os.ReadFile(prefix + "-roofline.png")
	require.NoError(t, err)
	code, _, _ = runCLI(t, "results", "plot", "--db", db, "--x", "M", "--series", "K,dtype", "--out", prefix, "--pareto", "cycles,M")
	require.Equal(t, exitOK, code)
	again, err := os.ReadFile(prefix + "-roofline.png")
	require.NoError(t, err)
	assert.Equal(t, first, again)

	// The roofline and bottleneck plots take points that overlap on --x.
	code, out, errOut = runCLI(t, "results", "plot", "--db", db, "--x", "M", "--plots", "roofline,bottleneck", "--out", prefix+"-all")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 4, strings.Count(out, "wrote "))
	code, _, errOut = runCLI(t, "results", "plot", "--db", db, "--x", "M", "--plots", "pie", "--out", prefix)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `no plot "pie"`)

	code, _, errOut = runCLI(t, "results", "plot", "--db", db, "--x", "Q", "--out", prefix)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "--x Q is not a parameter of the results (they have K, M, dtype)")
}

// TestSweepRealPlannerAndRegressDB plans a small sweep with the planner
// (within an evaluation budget) and re-prices its store.
func TestSweepRealPlannerAndRegressDB(t *testing.T) {
	dir := t.TempDir()
	spec := writeSweep(t, dir, `name: dots
workload: {einsum: "A,A->", axes: {A: 1024}, dtype: bf16}
grid: {A: [1024, 2048, 4096]}
options: {max_evaluations: 300}
`)
	db := filepath.Join(dir, "r.db")
	code, out, errOut := runCLI(t, "sweep", spec, "--db", db, "--workers", "2")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "3 planned (3 with a plan")

	code, out, errOut = runCLI(t, "regress", "--db", db)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "dots A=2048")
	assert.Contains(t, out, "+0.00%")
	assert.Contains(t, out, "3 points re-priced, 0 drifted (over 0.5% or another bottleneck); Kendall's tau of stored vs current cycles: 1.0000")

	code, out, _ = runCLI(t, "regress", "--db", db, "--where", "A=1024", "--json")
	require.Equal(t, exitOK, code)
	var reg sweep.StoreRegression
	require.NoError(t, json.Unmarshal([]byte(out), &reg))
	assert.Len(t, reg.Points, 1)
	assert.Nil(t, reg.Tau)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"regress", "--db", db, "--update"}, "--update does not apply"},
		{[]string{"regress", "--where", "A=1"}, "the result filters apply with --db only"},
		{[]string{"regress", "--db", db, "--plans", dir}, "--plans does not apply"},
		{[]string{"regress", "--db", db, "--hw", rngdPath}, "--hw does not apply"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, errOut, tc.want)
	}
}

// TestBatchManifests checks that the shipped Kubernetes and Slurm manifests
// (docs/batch) run the sweep with as many shards as they start tasks, and
// name a sweep file that parses.
func TestBatchManifests(t *testing.T) {
	withFakePlanner(t)
	job, err := os.ReadFile("../../docs/batch/sweep-indexed-job.yaml")
	require.NoError(t, err)
	var j struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(job, &j))
	assert.Equal(t, "Indexed", j.Spec.CompletionMode)
	args := strings.Join(j.Spec.Template.Spec.Containers[0].Args, " ")
	assert.Contains(t, args, fmt.Sprintf("--shard %d ", j.Spec.Completions))
	assert.Contains(t, args, "${JOB_COMPLETION_INDEX}")

	sb, err := os.ReadFile("../../docs/batch/sweep-array.sbatch")
	require.NoError(t, err)
	assert.Contains(t, string(sb), "#SBATCH --array=0-7\n")
	assert.Contains(t, string(sb), "--shard 8 ")
	assert.Contains(t, string(sb), "${SLURM_ARRAY_TASK_ID}")

	for _, s := range []string{args, string(sb)} {
		i := strings.Index(s, "workloads/sweeps/")
		require.GreaterOrEqual(t, i, 0)
		file := strings.Fields(s[i:])[0]
		code, _, errOut := runCLI(t, "sweep", "../../"+file, "--shard", "0/1000000", "--db", filepath.Join(t.TempDir(), "x.db"))
		assert.Equal(t, exitOK, code, errOut)
	}
}

// TestSweepProgressBar drives the terminal's progress bar (into a buffer).
func TestSweepProgressBar(t *testing.T) {
	withFakePlanner(t)
	var bar strings.Builder
	old := stderrTerminal
	stderrTerminal = func() (io.Writer, bool) { return &bar, true }
	t.Cleanup(func() { stderrTerminal = old })
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "sweep", writeSweep(t, dir, strings.Replace(cliSweep, "name: cli", "name: \"cli\\e[31m\"", 1)), "--db", filepath.Join(dir, "r.db"))
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, bar.String(), "/12, ")
	assert.Contains(t, bar.String(), `sweep cli\x1b[31m`, "the name is escaped")
	assert.NotContains(t, errOut, "sweep: ", "no plain progress lines on a terminal")
}

// TestSweepProgressLines: off a terminal, a line every period.
func TestSweepProgressLines(t *testing.T) {
	sweepPlanner = func(ctx context.Context, p *sweep.Point) (*record.Record, error) {
		time.Sleep(15 * time.Millisecond)
		return fakePointPlanner(ctx, p)
	}
	old := sweepProgressEvery
	sweepProgressEvery = 20 * time.Millisecond
	t.Cleanup(func() { sweepPlanner, sweepProgressEvery = nil, old })
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "sweep", writeSweep(t, dir, cliSweep), "--db", filepath.Join(dir, "r.db"), "--workers", "1")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `sweep: \d+/12 points \(0 from the store\), [0-9.]+ points/s, ETA \S+\n`, errOut)
}
