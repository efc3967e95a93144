package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/search"
)

func TestPlanDot(t *testing.T) {
	code, out, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--top", "2", "--digit-orders", "named")
	require.Equal(t, exitOK, code, out)
	// Every order of A's digits (one einsum's default): more candidates,
	// among them the named space's, and here the same optimum.
	code, all, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--top", "2")
	require.Equal(t, exitOK, code, all)
	code, all2, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--top", "2", "--digit-orders", "all")
	require.Equal(t, exitOK, code, all2)
	wall := regexp.MustCompile(`, [0-9.]+s\n`) // the search's wall time
	assert.Equal(t, wall.ReplaceAllString(all, "\n"), wall.ReplaceAllString(all2, "\n"), "the default for one einsum is every order")
	cost := regexp.MustCompile(`(?m)^cost: .*$`)
	assert.Equal(t, cost.FindString(out), cost.FindString(all))
	assert.Contains(t, all, "optimal: proven (every digit order)")
	assert.NotContains(t, out, "every digit order")
	assert.Regexp(t, `tilings bounded out \(and \d+ branches of digit orders\), \d+ clauses`, all)
	assert.NotContains(t, out, "branches of digit orders")
	n := regexp.MustCompile(`search: sat \(tiles ≤ 512\), (\d+) candidates`).FindStringSubmatch(all)
	require.Len(t, n, 2, all)
	assert.Greater(t, atoi(t, n[1]), 42)
	code, _, errOut := runCLI(t, "plan", "../../workloads/dot.yaml", "--digit-orders", "every")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--digit-orders "every": want all or named`)
	for _, want := range []string{
		"plan dot: A, A -> 1  (A=2048)",
		"in the TRF",
		// Split-K: the contracted A spreads over 8 slices (8 time steps of
		// 32-element packets on each), whose partial sums the Inter-Slice
		// Block adds (002 L6584-6598).
		"       A  2048  contracted     1     1        1      8     8    1      32",
		"TrfTensor<bf16, m![1], m![1 # 2], m![A / 256 # 256], m![1], m![A % 256]> TrfAddress::Full",
		".align::<m![A / 32 % 8], m![A % 32], _, _>",
		".contract::<m![1]>()",
		".vector_init(...).vector_inter_slice_reduce(...).vector_final(...)",
		"cost: ",
		"top 2:",
		// 30 unchunked candidates and 12 with software-pipelined K chunks
		// (TileK: 2, 4 or 8 chunks of the time steps A leaves a slice).
		"search: sat (tiles ≤ 512), 42 candidates, 42 legal",
		// dot has no output axis: its placements are the split's.
		"sat: 8 models (placements)",
		"optimal: proven",
	} {
		assert.Contains(t, out, want)
	}
}

func TestPlanJSONAndOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plan.json")
	code, out, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--json", "--out", file, "--top", "3", "--planner", "exhaustive")
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
	// Without --op a graph is planned whole (graph_test.go).
	// A Vector Engine op plans over its own space (search.PlanOp); an op
	// kind without a kernel is refused with its line; a reshape is free.
	out := filepath.Join(t.TempDir(), "rmsnorm.plan.json")
	code, stdout, errOut := runCLI(t, "plan", "../../workloads/llama3-70b-decode.yaml", "--op", "rmsnorm_in", "--out", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "plan llama3-70b-decode op rmsnorm_in: rmsnorm (D=8192)")
	assert.Contains(t, stdout, "optimal: exhaustive")
	code, stdout, errOut = runCLI(t, "verify", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "PASS rmsnorm_in")
	code, stdout, errOut = runCLI(t, "plan", "../../workloads/llama3-70b-decode.yaml", "--op", "rmsnorm_in", "--json")
	require.Equal(t, 0, code, errOut)
	var po struct {
		Plan *plan.Plan `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &po))
	require.NotNil(t, po.Plan)
	assert.Equal(t, "rmsnorm", po.Plan.Workload.Kind)
	assert.Equal(t, "D", po.Plan.OpMapping.Reduced)
	code, stdout, errOut = runCLI(t, "plan", "../../workloads/llama3-70b-decode.yaml", "--op", "silu", "--max-evaluations", "2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "stopped (evaluations): the best of the 2 candidates priced; gap")
	code, stdout, errOut = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--op", "causal")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "form causal_mask")
	code, stdout, errOut = runCLI(t, "plan", "../../workloads/llama3-70b-decode.yaml", "--op", "rope_lookup")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "form gather: the rows of w_rope that position names (gathered axes Smax) copied in index order into t_rope by one HBM-to-HBM DMA with an indirect loop")
	code, stdout, errOut = runCLI(t, "plan", "../../workloads/moe.yaml", "--op", "dispatch")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "form scatter: the rows of x_norm written at the rows of x_blocked that scatter_idx names (scattered axes GRID, BLK) by one HBM-to-HBM DMA with an indirect loop on its write side")
	code, stdout, _ = runCLI(t, "plan", "../../workloads/llama3-70b-decode.yaml", "--op", "q_split")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "reshape needs no kernel")

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

	code, _, errOut = runCLI(t, "plan", "../../workloads/dot.yaml", "--top", "1001")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--top must be between 1 and 1000")

	code, _, _ = runCLI(t, "plan")
	assert.Equal(t, exitUsage, code)

	// A contraction no candidate maps, with --no-pad: the statistics, then
	// an error that names the rules that empty the space and the nearest
	// padding.
	dir := t.TempDir()
	file := filepath.Join(dir, "odd.yaml")
	require.NoError(t, os.WriteFile(file, []byte("name: odd\neinsum: A,A->\naxes: {A: 24}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"), 0o644))
	for _, planner := range []string{"sat", "exhaustive"} {
		code, out, errOut := runCLI(t, "plan", file, "--planner", planner, "--no-pad")
		assert.Equal(t, exitFail, code)
		assert.Contains(t, out, "search: "+planner+" (tiles ≤ 512), 0 candidates")
		assert.Contains(t, out, "optimal: no legal mapping (the whole mapspace was searched)")
		assert.Contains(t, errOut, "odd.yaml: no legal mapping: the mapspace is empty under SPACE-PACKET (002 L4099")
		assert.Contains(t, errOut, "nearest legal relaxations:\n  pad A from 24 to 32")
	}
	code, out, errOut := runCLI(t, "plan", file, "--json", "--no-pad")
	assert.Equal(t, exitFail, code)
	var o noPlanOutput
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	assert.Equal(t, "no legal mapping", o.Verdict)
	require.NotEmpty(t, o.Rules)
	assert.Equal(t, "SPACE-PACKET", o.Rules[0].Rule)
	assert.Equal(t, []string{"pad A from 24 to 32 (+33.3%)"}, o.Relaxations)
	assert.Contains(t, errOut, "no legal mapping")

	// Without --no-pad the padding plans, and the plan verifies.
	planFile := filepath.Join(dir, "odd.plan.json")
	code, out, errOut = runCLI(t, "plan", file, "--out", planFile)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, errOut, "no legal mapping at the workload's sizes; planned padded: pad A from 24 to 32 (+33.3%)")
	assert.Contains(t, out, "padded: A from 24 to 32 (zeros in its padding); the kernel's tensors are stored padded; the output is not padded")
	code, out, errOut = runCLI(t, "verify", planFile)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "PASS odd")

	code, _, errOut = runCLI(t, "plan", "../../workloads/dot.yaml", "--planner", "greedy")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--planner "greedy": want sat or exhaustive`)
}

// TestPlanTimeout: a search stopped by --timeout before any legal
// candidate says so and exits 3; it never claims "no legal mapping".
func TestPlanTimeout(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "../../workloads/dot.yaml", "--timeout", "1ns"},
		{"plan", "../../workloads/gemm.yaml", "--timeout", "1ns"},
		{"plan", "../../workloads/gemv.yaml", "--timeout", "1ns", "--planner", "exhaustive"},
	} {
		code, out, errOut := runCLI(t, args...)
		assert.Equal(t, exitAborted, code, out)
		assert.Contains(t, out, "optimal: no plan (stopped at --timeout after ")
		assert.Contains(t, errOut, ": stopped at --timeout after ")
		assert.Contains(t, errOut, "before any legal candidate was found")
		assert.NotContains(t, out+errOut, "no legal mapping")
	}
	code, out, _ := runCLI(t, "plan", "../../workloads/dot.yaml", "--timeout", "1ns", "--json")
	assert.Equal(t, exitAborted, code)
	var o noPlanOutput
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	assert.Equal(t, "stopped", o.Verdict)
	assert.Equal(t, search.StoppedTimeout, o.Stopped)
	assert.Nil(t, o.Plan)
}

// TestPlanMemory: a search past its --memory budget stops as one past
// --timeout does (gemm.yaml's search takes seconds; the heap is past one
// MiB at the watcher's first sample), says so and exits 3.
func TestPlanMemory(t *testing.T) {
	code, out, errOut := runCLI(t, "plan", "../../workloads/gemm.yaml", "--memory", "1")
	assert.Equal(t, exitAborted, code, out)
	assert.Contains(t, out, "optimal: no plan (stopped at the --memory budget after ")
	assert.NotContains(t, out+errOut, "no legal mapping")
}

// TestPlanInterrupt: Ctrl-C during a search stops it as --timeout does:
// the best plan so far is printed with its gap and written, and the exit
// code is a timeout's (0 with a plan). The interrupt is a real SIGINT,
// sent once the search has priced a candidate; the search then sees it
// at its next check, so the test does not depend on the machine's speed.
func TestPlanInterrupt(t *testing.T) {
	for _, tc := range []struct {
		planner, workload, gap string
	}{
		{"sat", "../../workloads/gemm.yaml", "% to the proven lower bound of "},
		{"exhaustive", "../../workloads/gemv.yaml", "; the best of "},
	} {
		t.Run(tc.planner, func(t *testing.T) {
			interruptAfterFirstPrice(t)
			file := filepath.Join(t.TempDir(), "x.plan.json")
			code, out, errOut := runCLI(t, "plan", tc.workload, "--planner", tc.planner, "--out", file)
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "optimal: no (interrupted after ")
			assert.Contains(t, out, tc.gap)
			assert.Contains(t, out, "wrote "+file)
			pl, err := plan.Read(file)
			require.NoError(t, err)
			assert.Equal(t, search.StoppedInterrupt, pl.Search.Stopped)
			assert.Empty(t, pl.Search.Optimal)
			assert.Positive(t, pl.Cost.Cycles)
		})
	}
}

// interruptAfterFirstPrice sends the test process a SIGINT from the
// search's progress report once a candidate is legal and priced, and waits
// until the search's context has seen it.
func interruptAfterFirstPrice(t *testing.T) {
	t.Helper()
	every, hook := planProgressEvery, onPlanProgress
	t.Cleanup(func() { planProgressEvery, onPlanProgress = every, hook })
	planProgressEvery = time.Nanosecond
	sent := false
	onPlanProgress = func(ctx context.Context, st search.Stats) {
		if sent || st.Legal == 0 || st.CostEvaluations == 0 {
			return
		}
		sent = true
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			t.Error("SIGINT did not cancel the search's context")
		}
	}
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

// TestNoPlanRules: a finished search whose candidates all broke a rule
// says "no legal mapping" with those rules and their counts.
func TestNoPlanRules(t *testing.T) {
	var g globals
	s, err := loadSpace(&g, "../../workloads/dot.yaml", "")
	require.NoError(t, err)
	res := &search.Result{Space: s, Stats: search.Stats{Planner: "exhaustive", Complete: true, Candidates: 7,
		Illegal: map[string]*search.RuleStat{
			"FE-R5":  {Rule: "FE-R5", Cite: "002 L1757-1761", Count: 5, Example: "fetch_size"},
			"MEM-C1": {Rule: "MEM-C1", Cite: "002 L138", Count: 2, Example: "DM capacity"},
		}}}
	var out, errb bytes.Buffer
	c := newPlanCmd(&g)
	c.SetOut(&out)
	c.SetErr(&errb)
	err = noPlan(c, &g, s, res, nil, "dot.yaml", 0)
	assert.Equal(t, exitError{exitFail}, err)
	assert.Contains(t, out.String(), "optimal: no legal mapping")
	assert.Equal(t, "tcpmap: dot.yaml: no legal mapping: every one of the 7 candidates breaks a rule: FE-R5 (002 L1757-1761) ×5; MEM-C1 (002 L138) ×2\n"+
		search.NoRelaxation+"\n", errb.String(), "A = 2048 is a power of two: no padding to try")
}

// TestPlanTarget: --target visa-0.1 and opt-0.6 plan without 64-byte
// dual-channel collect packets, which the vendor's libraries refuse; the
// manual's target (the default) uses one for the GEMM. The target is in
// the output; an unknown one is a usage error.
func TestPlanTarget(t *testing.T) {
	dir := t.TempDir()
	collect64 := func(path string) int {
		pl, err := plan.Read(path)
		require.NoError(t, err)
		n := 0
		for _, op := range pl.Program.Ops {
			bits := 0
			for _, st := range op.Stages {
				switch st.Kind {
				case kernel.StBegin:
					x, _ := pl.Program.Tensor(st.Tensor)
					bits = x.DType.SizeBits()
				case kernel.StFetch:
					if st.DType != 0 {
						bits = st.DType.SizeBits()
					}
				case kernel.StCollect:
					if st.Packet.Size()*bits/8 > 32 {
						n++
					}
				}
			}
		}
		return n
	}
	for _, tc := range []struct {
		target string
		dual   bool
	}{{"manual", true}, {"visa-0.1", false}, {"opt-0.6", false}} {
		out := filepath.Join(dir, tc.target+".plan.json")
		code, stdout, errOut := runCLI(t, "plan", "../../workloads/dot.yaml", "--target", tc.target, "--out", out)
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, stdout, "target: "+tc.target+" (")
		assert.Equal(t, tc.dual, collect64(out) > 0, "%s: 64-byte collect packets", tc.target)
	}
	code, _, errOut := runCLI(t, "plan", "../../workloads/gemm.yaml", "--target", "visa-0.2")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--target "visa-0.2": want manual, visa-0.1 or opt-0.6`)
}

// TestPlanProductOp: `plan --op` of an einsum that contracts no axis
// plans it as a contraction and as a Vector Engine multiply and says
// which it kept and why; the multiply's plan writes and verifies, and its
// claim is no stronger than the contraction search's budget allows.
func TestPlanProductOp(t *testing.T) {
	if raceEnabled {
		t.Skip("one worker planning, single-threaded: make test runs it in unit-norace")
	}
	out := filepath.Join(t.TempDir(), "weight.plan.json")
	// The named digit orders: the contraction search stops at its
	// evaluation budget either way, and over every order it lists some 100
	// times the candidates first (0.5 s against 5.6 s).
	code, stdout, errOut := runCLI(t, "plan", "../../search/testdata/ops/broadcast.yaml", "--op", "weight", "--max-evaluations", "300", "--workers", "1", "--digit-orders", "named", "--out", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "contracts no axis: planned as a contraction and as a Vector Engine multiply")
	assert.Contains(t, stdout, "kept the multiply: the contraction search found no plan (evaluations)")
	assert.Contains(t, stdout, "plan broadcast op weight: mul (T=256, K=8, D=256)")
	assert.Contains(t, stdout, "the contraction's search stopped (evaluations); gap")
	code, stdout, errOut = runCLI(t, "verify", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "PASS weight")
}

// TestPlanProductOpNoMultiply: at the MoE's size the weighting has no
// multiply kernel (its weights lack the packet's axis: the VRF overflows
// or a slice's share is one 2-byte element, docs/spec-decisions.md
// "Broadcast inputs and einsums that contract nothing"); plan says so, with
// the rules, beside the contraction search's outcome.
func TestPlanProductOpNoMultiply(t *testing.T) {
	if raceEnabled {
		t.Skip("one worker planning, single-threaded: make test runs it in unit-norace")
	}
	code, _, errOut := runCLI(t, "plan", "../../workloads/moe.yaml", "--op", "weight", "--max-evaluations", "400", "--workers", "1", "--digit-orders", "named")
	assert.Equal(t, 3, code, "stopped before any legal candidate")
	assert.Contains(t, errOut, "op weight contracts no axis; as a Vector Engine multiply: no kernel:")
	assert.Contains(t, errOut, "MEM-C3")
	assert.Contains(t, errOut, "DMA-R1")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
