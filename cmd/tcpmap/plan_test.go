package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/plan"
)

func TestPlanDot(t *testing.T) {
	code, out, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--top", "2")
	require.Equal(t, exitOK, code, out)
	for _, want := range []string{
		"plan dot: A, A -> 1  (A=2048)",
		"in the TRF",
		"TrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![1], m![A]> TrfAddress::Full",
		".align::<m![A / 32], m![A % 32], _, _>",
		".contract::<m![1]>()",
		"cost: ",
		"top 2:",
		"search: sat (tiles ≤ 512), 4 candidates, 4 legal",
		// dot has no output axis: one Cluster/Slice placement.
		"sat: 1 models (placements)",
		"optimal: proven",
	} {
		assert.Contains(t, out, want)
	}
}

func TestPlanJSONAndOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plan.json")
	code, out, _ := runCLI(t, "plan", "../../workloads/gemv.yaml", "--json", "--out", file, "--top", "3", "--planner", "exhaustive")
	require.Equal(t, exitOK, code, out)
	var o struct {
		Plan         *plan.Plan        `json:"plan"`
		Alternatives []json.RawMessage `json:"alternatives"`
		WallSeconds  float64           `json:"wall_seconds"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &o))
	require.NotNil(t, o.Plan)
	assert.Equal(t, "exhaustive", o.Plan.Search.Optimal)
	assert.Equal(t, "exhaustive", o.Plan.Search.Planner)
	assert.Len(t, o.Alternatives, 3)
	assert.Positive(t, o.Plan.Cost.Cycles)

	// The plan file holds the lowered program, which reads back and
	// lowers again without a violation.
	pl, err := plan.Read(file)
	require.NoError(t, err)
	assert.Equal(t, o.Plan.Cost.Cycles, pl.Cost.Cycles)
	require.NoError(t, engines.Lower(engines.Default(), pl.Program))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	again, err := pl.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again))
}

func TestPlanGraphOp(t *testing.T) {
	// A graph with several einsums needs --op.
	code, _, errOut := runCLI(t, "plan", "../../workloads/attention-head.yaml")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "name the einsum op to plan (one of qk, pv)")

	code, _, errOut = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--op", "softmax")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `op "softmax" is a softmax`)

	code, _, errOut = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--op", "nope")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `no op named "nope"`)
}

func TestPlanErrors(t *testing.T) {
	code, _, errOut := runCLI(t, "plan", "no-such-file.yaml")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "no-such-file.yaml")

	code, _, errOut = runCLI(t, "plan", "../../workloads/dot.yaml", "--top", "0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--top")

	code, _, _ = runCLI(t, "plan")
	assert.Equal(t, exitUsage, code)

	// A contraction no candidate maps: the statistics, then an error that
	// names the rules that empty the space and the nearest padding.
	dir := t.TempDir()
	file := filepath.Join(dir, "odd.yaml")
	require.NoError(t, os.WriteFile(file, []byte("name: odd\neinsum: A,A->\naxes: {A: 24}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"), 0o644))
	code, out, errOut := runCLI(t, "plan", file)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, "search: sat (tiles ≤ 512), 0 candidates")
	assert.Contains(t, errOut, "no legal mapping (0 candidates, none legal)")
	assert.Contains(t, errOut, "SPACE-PACKET (002 L4099, L3011, L3916-3927)")
	assert.Contains(t, errOut, "pad A from 24 to 32")

	code, _, errOut = runCLI(t, "plan", "../../workloads/dot.yaml", "--planner", "greedy")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--planner "greedy": want sat or exhaustive`)
}

func TestPlanTimeout(t *testing.T) {
	code, out, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--timeout", "1ns")
	// Stopped before the first candidate: no plan.
	assert.Equal(t, exitFail, code, out)
	assert.Contains(t, out, "optimal: no")
}

func TestPlanSATJSON(t *testing.T) {
	code, out, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--json")
	require.Equal(t, exitOK, code, out)
	var o struct {
		Plan *plan.Plan `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &o))
	assert.Equal(t, "sat", o.Plan.Search.Planner)
	assert.Equal(t, "proven", o.Plan.Search.Optimal)
	assert.Positive(t, o.Plan.Search.SATModels)
	assert.Positive(t, o.Plan.Search.Clauses)
	assert.Equal(t, o.Plan.Cost.Cycles, o.Plan.Search.LowerBound, "a proven plan's bound is its cycles")
	assert.Zero(t, o.Plan.Search.Gap)
}
