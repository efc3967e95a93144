package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goldenDot = "../../workloads/kernels/hello-dot.json"

func TestCostTable(t *testing.T) {
	code, out, errOut := runCLI(t, "cost", goldenDot)
	require.Equal(t, exitOK, code, errOut)
	for _, want := range []string{
		"kernel hello-dot:", "1 GHz, the manual's assumption (002 L2623, L2744)", "bottleneck: ",
		"context", "engine", "busy", "utilization", "main", "sub", "dma", "fetch", "reducer",
		"MAC utilization", "roofline:", "findings:", "MEM-P6",
	} {
		assert.Contains(t, out, want)
	}
}

func TestCostJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "cost", "--json", goldenDot)
	require.Equal(t, exitOK, code, errOut)
	var r struct {
		Kernel     string  `json:"kernel"`
		Cycles     float64 `json:"cycles"`
		Ops        []any   `json:"ops"`
		Bottleneck struct {
			Context string `json:"context"`
			Engine  string `json:"engine"`
		} `json:"bottleneck"`
		Utilization struct {
			MACs int64   `json:"macs"`
			MAC  float64 `json:"mac"`
		} `json:"utilization"`
		Findings []struct {
			Rule, Cite, Effect string
		} `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, "hello-dot", r.Kernel)
	assert.Len(t, r.Ops, 5)
	assert.Greater(t, r.Cycles, 0.0)
	assert.NotEmpty(t, r.Bottleneck.Engine)
	assert.Equal(t, int64(2048), r.Utilization.MACs)
	require.NotEmpty(t, r.Findings)
	assert.Equal(t, "MEM-P6", r.Findings[0].Rule)
	assert.Equal(t, "priced penalty", r.Findings[0].Effect)
}

func TestCostTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "dot.trace.json")
	code, _, errOut := runCLI(t, "cost", "--trace", trace, goldenDot)
	require.Equal(t, exitOK, code, errOut)
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	var f struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	assert.NotEmpty(t, f.TraceEvents)
	// Deterministic.
	trace2 := filepath.Join(dir, "again.json")
	code, _, _ = runCLI(t, "cost", "--trace", trace2, goldenDot)
	require.Equal(t, exitOK, code)
	b2, err := os.ReadFile(trace2)
	require.NoError(t, err)
	assert.Equal(t, string(b), string(b2))
}

func TestCostErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"name\": \"x\",\n  \"axes\": 5\n}\n"), 0o644))
	code, _, errOut := runCLI(t, "cost", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "bad.json:3:")

	code, _, errOut = runCLI(t, "cost", filepath.Join(dir, "kernel.txt"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "kernel.txt: no such file or directory")

	code, _, errOut = runCLI(t, "cost", filepath.Join(dir, "missing.json"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "missing.json")

	// An invalid kernel: refused (as verify and emit refuse it) with the
	// field, the rule and its citation.
	src, err := os.ReadFile(goldenDot)
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(src, &p))
	tensors := p["tensors"].([]any)
	tensors[3].(map[string]any)["addr"] = 4096 // lhs_dm onto rhs_dm, both live
	b, err := json.Marshal(p)
	require.NoError(t, err)
	overlap := filepath.Join(dir, "overlap.json")
	require.NoError(t, os.WriteFile(overlap, b, 0o644))
	code, out, errOut := runCLI(t, "cost", overlap)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "overlap.json:1: tensors[4].addr: SCH-R7 memory: dm tensors")
	assert.Contains(t, errOut, "002 L154-155")
}

// TestCostRustKernel: a kernel emitted as Rust prices the same as its JSON
// form (the .rs loader reads it back through rustread.ReadFile).
func TestCostRustKernel(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "emit", goldenDot, "--lang", "rust", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	code, fromJSON, errOut := runCLI(t, "cost", "--json", goldenDot)
	require.Equal(t, exitOK, code, errOut)
	code, fromRust, errOut := runCLI(t, "cost", "--json", filepath.Join(dir, "hello-dot.rs"))
	require.Equal(t, exitOK, code, errOut)
	assert.JSONEq(t, fromJSON, fromRust)
}

// TestCostPlan: a stored plan prices as the cost it records (the planner
// priced the same lowered program with the same model).
func TestCostPlan(t *testing.T) {
	const path = "../../results/plans/gemv.plan.json"
	code, out, errOut := runCLI(t, "cost", "--json", path)
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		Cycles float64 `json:"cycles"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var stored struct {
		Cost struct {
			Cycles float64 `json:"cycles"`
		} `json:"cost"`
	}
	require.NoError(t, json.Unmarshal(data, &stored))
	require.NotZero(t, stored.Cost.Cycles)
	assert.Equal(t, stored.Cost.Cycles, got.Cycles)
}

// TestPathText: a long critical path prints its ends and its length.
func TestPathText(t *testing.T) {
	assert.Equal(t, "[1 2 3]", pathText([]int{1, 2, 3}))
	long := make([]int, 100)
	for i := range long {
		long[i] = i
	}
	assert.Equal(t, "[0 1 2 3 4 5 6 7 8 9 10 11 … 88 89 90 91 92 93 94 95 96 97 98 99] (100 ops)", pathText(long))
}
