package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/plan"
)

// The attention head at S = T = D = 64 plans from the committed op plans
// (search/testdata/graph/cache; a cost model change renews their keys and
// the plan searches again: regenerate with the same command and --cache).
var smallHead = []string{"plan", "../../workloads/attention-head.yaml", "--axes", "S=64,T=64,D=64",
	"--cache", "../../search/testdata/graph/cache", "--stored", ""}

// TestGraphPlanCostVerify plans the attention head whole at reduced sizes,
// prices the graph plan, writes its timeline and verifies it: both
// einsums simulated with device memory carried through the graph, the
// vector ops fed from the reference, every tensor within its composed
// bound.
func TestGraphPlanCostVerify(t *testing.T) {
	if testing.Short() && !cacheHolds(t) {
		t.Skip("the op plans of the reduced attention head are not in search/testdata/graph/cache")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "head.graph.json")
	code, stdout, stderr := runCLI(t, append(smallHead, "--out", out)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "not yet plannable: scale (mul), causal (causal_mask), softmax (softmax)")
	assert.Contains(t, stdout, "optimal: proven")
	gp, err := plan.ReadGraph(out)
	require.NoError(t, err)
	assert.Equal(t, 2, gp.Cost.Planned)
	assert.Equal(t, 3, gp.Cost.NotPlannable)
	assert.LessOrEqual(t, gp.Cost.Cycles, gp.Cost.BaselineCycles)

	trace := filepath.Join(dir, "head.trace.json")
	code, stdout, stderr = runCLI(t, "cost", out, "--trace", trace)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "graph attention-head:")
	assert.NotContains(t, stdout, "drift")

	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph attention-head, seed 1: 2 kernels simulated, 3 ops fed from the reference")
	assert.Equal(t, 2, strings.Count(stdout, "; graph: "))

	code, stdout, stderr = runCLI(t, "emit", out, "--out", filepath.Join(dir, "rs"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, filepath.Join(dir, "rs", "attention-head.graph.rs")+"\n", stdout)
}

// TestGraphPlanErrors: bad --axes and a broken graph plan are refused
// with their location.
func TestGraphPlanErrors(t *testing.T) {
	code, _, stderr := runCLI(t, "plan", "../../workloads/attention-head.yaml", "--axes", "S=0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "want NAME=SIZE")
	code, _, stderr = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--axes", "Q=4")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "no axis Q")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, writeFile(bad, []byte(`{"version": 1, "kind": "graph", "workload": {"name": "x", "axes": "A=1", "chips": 1}, "ops": [], "tensors": [], "cost": {}, "search": {}}`), 0o644))
	code, _, stderr = runCLI(t, "cost", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "ops: no ops")
}

// cacheHolds reports whether the committed cache holds plans (a quick
// proxy: the reduced head's two einsums are searched in about 30 s).
func cacheHolds(t *testing.T) bool {
	m, err := filepath.Glob("../../search/testdata/graph/cache/*.plan.json.gz")
	require.NoError(t, err)
	return len(m) >= 16
}
