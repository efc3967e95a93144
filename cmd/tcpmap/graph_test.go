package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// The attention head at S = T = D = 64 plans from the committed op plans
// (search/testdata/graph/cache; a cost model change renews their keys and
// the plan searches again: regenerate with the same command and --cache).
var smallHead = []string{"plan", "../../workloads/attention-head.yaml", "--axes", "S=64,T=64,D=64",
	"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only"}

// TestGraphPlanCostVerify plans the attention head whole at reduced sizes,
// prices the graph plan, writes its timeline and verifies it: both
// einsums simulated with device memory carried through the graph, the
// vector ops fed from the reference, every tensor within its composed
// bound.
func TestGraphPlanCostVerify(t *testing.T) {
	dir := t.TempDir()
	out, stdout := planCached(t, dir, "head.graph.json", smallHead)
	assert.Contains(t, stdout, "not yet plannable: scale (mul), causal (causal_mask), softmax (softmax)")
	assert.Contains(t, stdout, "optimal: proven")
	gp, err := plan.ReadGraph(out)
	require.NoError(t, err)
	assert.Equal(t, 2, gp.Cost.Planned)
	assert.Equal(t, 3, gp.Cost.NotPlannable)
	assert.LessOrEqual(t, gp.Cost.Cycles, gp.Cost.BaselineCycles)
	// A graph planned whole searches the named digit orders unless told
	// otherwise (the cache keys above are theirs; one einsum's default is
	// every order).
	for _, op := range gp.Ops {
		if op.Plan != nil {
			assert.Empty(t, op.Plan.Search.DigitOrders, op.Name)
		}
	}

	trace := filepath.Join(dir, "head.trace.json")
	code, stdout, stderr := runCLI(t, "cost", out, "--trace", trace)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "graph attention-head:")
	assert.NotContains(t, stdout, "drift")
	// One timeline: the graph's ops, and each kernel's contexts and engines
	// as processes of their own.
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	var tf struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(data, &tf))
	procs := map[string]bool{}
	for _, e := range tf.TraceEvents {
		if e["name"] == "process_name" {
			procs[e["args"].(map[string]any)["name"].(string)] = true
		}
	}
	assert.Equal(t, map[string]bool{"graph attention-head": true, "qk contexts": true, "qk engines": true,
		"pv contexts": true, "pv engines": true}, procs)

	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph attention-head, seed 1: 2 kernels simulated, 3 ops fed from the reference")
	assert.Equal(t, 2, strings.Count(stdout, "; graph: "))

	code, stdout, stderr = runCLI(t, "emit", out, "--out", filepath.Join(dir, "rs"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, filepath.Join(dir, "rs", "attention-head.graph.rs")+"\n", stdout)
}

// TestGraphFusedHead: with its Vector Engine ops the attention head's
// scale runs in qk's kernel, the manual's "constant multiplication" in the
// Vector Engine (002 L8087-8089), and its causal mask too, the mask loaded
// beside the scores into the VRF (an epilogue's tensor operand): two
// kernels fewer, the fused choice cheaper than every op alone (--no-fuse),
// the scores never stored, and the graph verifies with the fused kernel
// simulated against the graph's reference of qk, then scale, then causal.
func TestGraphFusedHead(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "head-ve.graph.json")
	// Without DM residency (TestGraphResidentHead).
	code, stdout, stderr := runCLI(t, append(smallHead, "--vector-ops", "--no-residency", "--out", out)...)
	failStale(t, stderr)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "then scale, causal")
	assert.Contains(t, stdout, "fused into qk")
	assert.Contains(t, stdout, "mask←hbm input")
	assert.Contains(t, stdout, "fusion: 3 choices")
	gp, err := plan.ReadGraph(out)
	require.NoError(t, err)
	assert.Equal(t, 2, gp.Cost.Fused)
	assert.Equal(t, 3, gp.Search.Fusions)
	assert.Equal(t, "proven", gp.Search.Optimal)
	assert.Equal(t, []string{"scale", "causal"}, gp.Ops[0].Epilogue)
	assert.Equal(t, []string{"q", "k"}, gp.Ops[0].Inputs)
	assert.Equal(t, []string{"q", "k", "mask"}, gp.KernelInputs(&gp.Ops[0]))
	assert.Equal(t, plan.PlaceFused, gp.Tensors[3].Place, "s_raw is stored nowhere")
	assert.Equal(t, plan.PlaceFused, gp.Tensors[4].Place, "s_scaled is stored nowhere")
	assert.Equal(t, []string{"causal"}, gp.Tensors[5].Consumers, "the mask is the causal mask's")

	unfused := filepath.Join(dir, "head-nofuse.graph.json")
	code, _, stderr = runCLI(t, append(smallHead, "--vector-ops", "--no-residency", "--no-fuse", "--out", unfused)...)
	failStale(t, stderr)
	require.Equal(t, exitOK, code, stderr)
	gu, err := plan.ReadGraph(unfused)
	require.NoError(t, err)
	assert.Zero(t, gu.Cost.Fused)
	assert.Less(t, gp.Cost.Cycles, gu.Cost.Cycles)
	assert.Equal(t, gu.Cost.BaselineCycles, gp.Cost.BaselineCycles, "the baseline is every op alone either way")

	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph attention-head, seed 1: 3 kernels simulated, 0 ops fed from the reference")
	assert.Contains(t, stdout, "fused into qk")
	// Every op a kernel, no view: the layer emits under furiosa-opt-std
	// 0.6.0 (not under 0.1.0, which cannot spell softmax's lane broadcast).
	rs := filepath.Join(dir, "rs")
	code, _, stderr = runCLI(t, "emit", out, "--api", "opt-0.6", "--out", rs)
	require.Equal(t, exitOK, code, stderr)
	layer, err := os.ReadFile(filepath.Join(rs, "attention-head.graph.rs"))
	require.NoError(t, err)
	assert.Contains(t, string(layer), "let s_masked = launch(op00_qk::kernel, (&mut *ctx, &q, &k, &mask)).await; // qk")
	code, _, stderr = runCLI(t, "emit", out, "--out", rs)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "takes the number 1 only")
	code, stdout, stderr = runCLI(t, "cost", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, fmt.Sprintf("graph attention-head: %.0f cycles (the plan states %.0f", gp.Cost.Cycles, gp.Cost.Cycles))
}

// TestGraphResidentHead: with DM residency and no fusion the small
// attention head keeps the scaled and the masked scores in DM along the
// chain scale → causal → softmax, verifies with both carried, and emits
// the chain as one device function. With fusion the scale and the causal
// mask run in qk's kernel, its mask loaded beside the scores (an
// epilogue's tensor operand), which is cheaper still.
func TestGraphResidentHead(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "head-ve.graph.json")
	code, stdout, stderr := runCLI(t, append(smallHead, "--vector-ops", "--no-fuse", "--out", out)...)
	failStale(t, stderr)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "kept there: s_scaled, s_masked (--no-residency: none)")
	assert.Contains(t, stdout, "s_masked←causal (in DM)")
	gp, err := plan.ReadGraph(out)
	require.NoError(t, err)
	assert.Zero(t, gp.Cost.Fused)
	assert.Equal(t, "proven", gp.Search.Optimal)
	fused := filepath.Join(dir, "head-fused.graph.json")
	code, _, stderr = runCLI(t, append(smallHead, "--vector-ops", "--out", fused)...)
	require.Equal(t, exitOK, code, stderr)
	gf, err := plan.ReadGraph(fused)
	require.NoError(t, err)
	assert.Equal(t, 2, gf.Cost.Fused, "scale and causal fused into qk")
	assert.Less(t, gf.Cost.Cycles, gp.Cost.Cycles)

	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph attention-head, seed 1: 5 kernels simulated, 0 ops fed from the reference")
	assert.Contains(t, stdout, "s_scaled taken in DM from scale)")
	assert.Contains(t, stdout, "s_masked taken in DM from causal)")
	rs := filepath.Join(dir, "rs")
	code, _, stderr = runCLI(t, "emit", out, "--api", "opt-0.6", "--out", rs)
	require.Equal(t, exitOK, code, stderr)
	layer, err := os.ReadFile(filepath.Join(rs, "attention-head.graph.rs"))
	require.NoError(t, err)
	assert.Contains(t, string(layer), "launch(op03_scale_causal_softmax::kernel, (&mut *ctx, &s_raw, &mask)).await; // scale+causal+softmax")
}

// TestGraphFusedChainEmit: two epilogue ops in a row (sigmoid, then a
// scale into bf16) fuse into the einsum before them; the graph verifies
// with both fused ops computed by that kernel, and its Rust launches two
// kernels and says where the fused ops went.
func TestGraphFusedChainEmit(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "scaled.graph.json")
	code, stdout, stderr := runCLI(t, "plan", "../../search/testdata/graph/scaled.yaml", "--vector-ops",
		"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only", "--out", out)
	failStale(t, stderr)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "then act, half")
	gp, err := plan.ReadGraph(out)
	require.NoError(t, err)
	assert.Equal(t, 2, gp.Cost.Fused)
	assert.Equal(t, []string{"act", "half"}, gp.Ops[0].Epilogue)
	assert.Less(t, gp.Cost.Cycles, gp.Cost.BaselineCycles)
	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph scaled, seed 1: 2 kernels simulated, 0 ops fed from the reference")
	code, stdout, stderr = runCLI(t, "emit", out, "--out", filepath.Join(dir, "rs"))
	require.Equal(t, exitOK, code, stderr)
	src, err := os.ReadFile(strings.TrimSpace(stdout))
	require.NoError(t, err)
	assert.Contains(t, string(src), "// act (sigmoid): fused into mm1's kernel.")
	assert.Contains(t, string(src), "// x, w1 -> h")
	assert.Equal(t, 2, strings.Count(string(src), "::launch_at(ctx"))
}

// TestFuseFlagErrors: --fuse names one einsum with an epilogue; anything
// else is refused with the reason.
func TestFuseFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"plan", "../../workloads/attention-head.yaml", "--fuse"}, exitUsage, "name it with --op"},
		{[]string{"plan", "../../workloads/attention-head.yaml", "--op", "softmax", "--fuse"}, exitUsage, `op "softmax" is a softmax`},
		{[]string{"plan", "../../workloads/attention-head.yaml", "--op", "pv", "--fuse"}, exitUsage, `op "pv" has no epilogue to fuse`},
		{[]string{"plan", "../../workloads/gemm.yaml", "--op", "x", "--fuse"}, exitFail, `no op named "x"`},
		{[]string{"explain", "../../workloads/attention-head.yaml", "--fuse"}, exitUsage, "name it with --op"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
}

// TestPlanFuseOp: plan --op E --fuse says what the kernel does after the
// contraction and writes a plan whose program states the epilogue, which
// verify simulates.
func TestPlanFuseOp(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mm1.plan.json")
	code, stdout, stderr := runCLI(t, "plan", "../../search/testdata/graph/scaled.yaml", "--op", "mm1", "--fuse",
		"--max-evaluations", "300", "--workers", "1", "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "plan scaled op mm1: I K, K J -> I J, then act, half in the kernel's Vector Engine pass")
	assert.Contains(t, stdout, "vector_fp_unary")
	p, err := plan.Read(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"act", "half"}, p.Workload.Epilogue)
	assert.Equal(t, "(sigmoid((acc))) * 0.5", p.Program.Reference.Epilogue)
	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS")
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
	code, _, stderr = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--axes", "S=32,T=32", "--stored", "", "--cache", t.TempDir(), "--cache-only")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "op qk: not in the plan cache (--cache-only)")
	code, _, stderr = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--axes", "S=32,T=32", "--stored", "no-such-dir", "--cache", t.TempDir(), "--cache-only")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--stored no-such-dir: not a directory of stored plans")
	// The default, results/plans, is not under cmd/tcpmap: said, not an error.
	code, _, stderr = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--axes", "S=32,T=32", "--cache", t.TempDir(), "--cache-only")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "plan: no stored plans (no results/plans here): every einsum op is searched")
	assert.Contains(t, stderr, "op qk: not in the plan cache (--cache-only)")
	code, _, stderr = runCLI(t, "plan", "../../workloads/attention-head.yaml", "--axes", "S=32")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "attention-head.yaml:30:78: tensors.mask.values.key: size mismatch: query S is 32, key T is 2048", "errors keep the file's positions")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, writeFile(bad, []byte(`{"version": 1, "kind": "graph", "workload": {"name": "x", "axes": "A=1", "chips": 1}, "ops": [], "tensors": [], "cost": {}, "search": {}}`), 0o644))
	code, _, stderr = runCLI(t, "cost", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "ops: no ops")
}

// planCached runs a graph plan command (args, planning from the committed
// cache) writing the plan to dir/file, requires it to succeed with no
// stale cache entry, and returns the plan's path and the command's output.
func planCached(t *testing.T, dir, file string, args []string) (out, stdout string) {
	t.Helper()
	out = filepath.Join(dir, file)
	code, stdout, stderr := runCLI(t, append(args, "--out", out)...)
	failStale(t, stderr)
	require.Equal(t, exitOK, code, stderr)
	return out, stdout
}

// failStale fails a test whose op plans are not in the committed cache
// (a cost model or spec change renews their keys): regenerate them with
// the test's plan command without --cache-only.
func failStale(t *testing.T, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "not in the plan cache") {
		t.Fatalf("stale search/testdata/graph/cache; regenerate it with the test's plan command without --cache-only: %s", stderr)
	}
}

// smallDecode is the decode layer at reduced sizes (the same graph: Hq =
// G·Hkv, Dk = Dkp·Fr), planned from the committed op plans.
var smallDecode = []string{"plan", "../../workloads/llama3-70b-decode.yaml",
	"--axes", "Sctx=64,Smax=128,D=256,F=512,Hq=8,Hkv=2,G=4,Dk=64,Dkp=32",
	"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only"}

// TestGraphDecodeReduced plans the decode layer whole at reduced sizes
// and verifies it: all eleven einsums simulated in order with device
// memory carried through the reshapes (views), the other ops fed from the
// reference.
func TestGraphDecodeReduced(t *testing.T) {
	out, stdout := planCached(t, t.TempDir(), "decode.graph.json", smallDecode)
	assert.Contains(t, stdout, "11 ops planned, 5 views, 11 not yet plannable")
	assert.Contains(t, stdout, "11 op plans cached or stored, 0 searched")
	code, stdout, stderr := runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph llama3-70b-decode, seed 1: 11 kernels simulated, 11 ops fed from the reference")

	// With its Vector Engine ops: every op a kernel, 22 of them (rmsnorm,
	// softmax, the residual adds, silu, the SwiGLU product, the two
	// KV-cache updates, in place, and the RoPE table lookup, a gather,
	// too). At these sizes the scale is not fused into qk's kernel: it
	// leaves the scores in DM for the softmax, as silu leaves its result
	// for the SwiGLU product, which the fusion choices compare (the kept
	// choice's layout classes whose search stopped at its evaluation
	// budget come from the cache as no plan, KEY.none, and are counted);
	// the kernels verify in order, none fed from the reference, the two
	// tensors carried in DM, B = 1 spelled m![B, D] by an einsum and m![D]
	// by an op.
	vout := filepath.Join(t.TempDir(), "decode-ve.graph.json")
	code, stdout, stderr = runCLI(t, append(smallDecode, "--vector-ops", "--out", vout)...)
	failStale(t, stderr)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "22 ops planned, 5 views, 0 not yet plannable")
	assert.Contains(t, stdout, "0 searched")
	assert.Contains(t, stdout, "6 layout classes stopped at --layout-evaluations before any legal candidate are not among them")
	assert.Contains(t, stdout, "26 op plans cached or stored, 0 searched", "each op plan counted once over the fusion choices")
	assert.Contains(t, stdout, "gate_act←silu (in DM)", "silu's result left in DM for the SwiGLU product")
	assert.Contains(t, stdout, "kept there: scores, gate_act (--no-residency: none)")
	gp, err := plan.ReadGraph(vout)
	require.NoError(t, err)
	assert.Equal(t, 6, gp.Search.Unplanned, "the layout classes stopped before a legal candidate (three of them planned wrong kernels before session 28: a tile of an input in another order)")
	assert.Less(t, gp.Cost.Cycles, gp.Cost.BaselineCycles, "the scores are never stored")
	code, stdout, stderr = runCLI(t, "verify", vout)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph llama3-70b-decode, seed 1: 22 kernels simulated, 0 ops fed from the reference")
	assert.Contains(t, stdout, "scores taken in DM from scale)")
	assert.Contains(t, stdout, "gate_act taken in DM from silu)")

	// Without DM residency the scale is fused into qk's kernel (21
	// kernels), and the layer costs more.
	nout := filepath.Join(t.TempDir(), "decode-nodm.graph.json")
	code, stdout, stderr = runCLI(t, append(smallDecode, "--vector-ops", "--no-residency", "--out", nout)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "21 ops planned, 1 fused into their producers' kernels, 5 views, 0 not yet plannable")
	np, err := plan.ReadGraph(nout)
	require.NoError(t, err)
	assert.Less(t, gp.Cost.Cycles, np.Cost.Cycles)
}

// smallPrefill is the prefill layer at reduced sizes (the same graph),
// planned from the committed op plans (search/testdata/graph/cache;
// regenerate with this command less --cache-only, from cmd/tcpmap).
var smallPrefill = []string{"plan", "../../workloads/llama3-70b-prefill.yaml",
	"--axes", "S=64,Smax=128,D=256,F=512,Hq=8,Hkv=2,G=4,Dk=64,Dkp=32", "--vector-ops",
	"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only"}

// TestGraphPrefillReduced plans the prefill layer whole at reduced sizes,
// every op a kernel, and verifies it: 21 kernels simulated in order, the
// scale and the causal mask fused into qk's kernel (the mask, one for
// every head, loaded beside the scores: a broadcast epilogue operand),
// and silu's result left in DM for the next kernel and carried there.
func TestGraphPrefillReduced(t *testing.T) {
	out, stdout := planCached(t, t.TempDir(), "prefill-ve.graph.json", smallPrefill)
	assert.Contains(t, stdout, "21 ops planned, 2 fused into their producers' kernels, 8 views, 0 not yet plannable")
	assert.Contains(t, stdout, "0 searched")
	assert.Contains(t, stdout, "then scale, causal")
	assert.Contains(t, stdout, "kept there: gate_act (--no-residency: none)")
	gp, err := plan.ReadGraph(out)
	require.NoError(t, err)
	assert.Less(t, gp.Cost.Cycles, gp.Cost.BaselineCycles)
	code, stdout, stderr := runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph llama3-70b-prefill, seed 1: 21 kernels simulated, 0 ops fed from the reference")
	assert.Contains(t, stdout, "fused into qk")
	assert.Contains(t, stdout, "gate_act taken in DM from silu)")
}

// FuzzResizeAxes: any --axes text and workload bytes give an error or a
// workload text that the workload parser reads without panicking.
func FuzzResizeAxes(f *testing.F) {
	head, err := os.ReadFile("../../workloads/attention-head.yaml")
	require.NoError(f, err)
	f.Add(head, "S=64,T=64,D=64")
	f.Add(head, "S=0")
	f.Add(head, "S=64,S=32")
	f.Add([]byte("axes: {A: 4}\n"), "A=2")
	f.Add([]byte("axes: {A: B}\n"), "A=2")
	f.Fuzz(func(t *testing.T, data []byte, spec string) {
		out, err := resizeAxes(data, "w.yaml", spec)
		if err != nil {
			return
		}
		_, _ = workload.Parse(out, "w.yaml")
	})
}

// TestGraphCostCompressed: a stored (gzip-compressed) graph plan is told
// by its content and re-priced to the totals it states.
func TestGraphCostCompressed(t *testing.T) {
	const file = "../../results/graphs/attention-head.graph.json.gz"
	gp, err := plan.ReadGraph(file)
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, "cost", file)
	require.Equal(t, exitOK, code, stderr)
	// The stored plan re-priced states its own totals (regress keeps them
	// against results/cost-baseline.json).
	assert.Contains(t, stdout, fmt.Sprintf("graph attention-head: %.0f cycles (the plan states %.0f; relayouts 0; %d ops not yet plannable, not counted)",
		gp.Cost.Cycles, gp.Cost.Cycles, gp.Cost.NotPlannable))
	assert.Contains(t, stdout, fmt.Sprintf("overlapped: %.0f cycles with every kernel in one program (the plan states %.0f)",
		gp.Cost.OverlapCycles, gp.Cost.OverlapCycles))
}

// gatherShiftYAML gathers the rows of a table at positions shifted by a
// constant: by 10 every row is in the table, by 100 the last 36 are not.
const gatherShiftYAML = `name: gather-shift
chips: 1
axes: {S: 64, R: 128, A: 64}
tensors:
  pos:   {axes: [S], dtype: i32}
  idx:   {axes: [S], dtype: i32}
  table: {axes: [R, A], dtype: f32}
  rows:  {axes: [S, A], dtype: f32}
ops:
  - {name: shift,  kind: add,    inputs: [pos], outputs: [idx], scalar: SHIFT}
  - {name: lookup, kind: gather, inputs: [table, idx], outputs: [rows], axes: [R]}
`

// TestGraphGatherIndex: a gather planned in a graph is simulated on the
// index its producer computed (positions 0, 1, … shifted by 10); an index
// outside its table (shifted by 100: row 128 of 128 at position 28) is
// not a row the gather's DMA reads, so verify feeds the gather from the
// graph's reference and says why, instead of failing the layer
// (docs/spec-decisions.md "Gather: the DMA's indirect loop").
func TestGraphGatherIndex(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		shift string
		want  []string
	}{
		{"10", []string{"PASS: graph gather-shift, seed 1: 2 kernels simulated, 0 ops fed from the reference (not yet plannable)\n"}},
		{"100", []string{"lookup         gather        fed from the reference: its index idx holds 128 at position 28, outside the table's 128 rows, which its DMA cannot read (DMA-R16)",
			"PASS: graph gather-shift, seed 1: 1 kernels simulated, 0 ops fed from the reference (not yet plannable), 1 kernels fed from the reference (an index naming a row their DMA cannot move)"}},
	} {
		t.Run(tc.shift, func(t *testing.T) {
			planVerifyTwoOps(t, dir, "g"+tc.shift, strings.Replace(gatherShiftYAML, "SHIFT", tc.shift, 1), tc.want)
		})
	}
}

// planVerifyTwoOps writes the two-op graph y as dir/name.yaml, plans it
// whole (both ops planned, the cache in dir), verifies the plan and
// checks that verify's output holds each of want.
func planVerifyTwoOps(t *testing.T, dir, name, y string, want []string) {
	t.Helper()
	src := filepath.Join(dir, name+".yaml")
	require.NoError(t, os.WriteFile(src, []byte(y), 0o644))
	out := filepath.Join(dir, name+".graph.json")
	code, stdout, stderr := runCLI(t, "plan", src, "--vector-ops", "--stored", "", "--cache", filepath.Join(dir, "cache"), "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "2 ops planned")
	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	for _, w := range want {
		assert.Contains(t, stdout, w)
	}
}

// scatterShiftYAML writes one row at the 64 rows of xb its index names:
// positions 0, 1, … (verify's values along one axis) shifted by SHIFT, or,
// over two axes (INDEX: [Q, R]), random values in 0..7.
const scatterShiftYAML = `name: scatter-shift
chips: 1
axes: {IAXES, D: 64, G: 8, B: 8}
tensors:
  x:   {axes: [D], dtype: f32}
  pos: {axes: INDEX, dtype: i32}
  idx: {axes: INDEX, dtype: i32}
  xb:  {axes: [G, B, D], dtype: f32}
ops:
  - {name: shift, kind: add,     inputs: [pos], outputs: [idx], scalar: SHIFT}
  - {name: place, kind: scatter, inputs: [x, idx], outputs: [xb], axes: [G, B]}
`

// TestGraphScatterIndex: a scatter planned in a graph is simulated on the
// index its producer computed (positions 0, 1, … shifted by 10: distinct
// rows of its output); an index naming a row outside its output (shifted
// by 50: row 64 of 64 at position 14) or one row twice (random values in
// 0..7 over 16 positions) is not what its DMA writes (DMA-R16, DMA-R17),
// so verify feeds the scatter from the graph's reference, saying why.
func TestGraphScatterIndex(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, index, shift string
		want               []string
	}{
		{"distinct", "[P]", "10", []string{"PASS: graph scatter-shift, seed 1: 2 kernels simulated, 0 ops fed from the reference (not yet plannable)\n",
			"unchecked (rows no index names: the scatter does not write them)"}},
		{"outside", "[P]", "50", []string{"place          scatter       fed from the reference: its index idx holds 64 at position 14, outside the output's 64 rows, which its DMA cannot write (DMA-R16)",
			"1 kernels fed from the reference (an index naming a row their DMA cannot move)"}},
		{"twice", "[Q, R]", "0", []string{"which its DMA writes in no stated order (DMA-R17)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iaxes := map[string]string{"[P]": "P: 16", "[Q, R]": "Q: 4, R: 4"}[tc.index]
			y := strings.NewReplacer("SHIFT", tc.shift, "INDEX", tc.index, "IAXES", iaxes).Replace(scatterShiftYAML)
			planVerifyTwoOps(t, dir, tc.name, y, tc.want)
		})
	}
}

// gatherEinsumYAML is gatherShiftYAML with a contraction reading the
// gathered rows.
const gatherEinsumYAML = `name: gather-einsum
chips: 1
axes: {S: SIZE, R: 128, A: 64}
tensors:
  pos:   {axes: [S], dtype: i32}
  idx:   {axes: [S], dtype: i32}
  table: {axes: [R, A], dtype: bf16}
  rows:  {axes: [S, A], dtype: bf16}
  vec:   {axes: [A], dtype: bf16}
  out:   {axes: [S], dtype: f32}
ops:
  - {name: shift,  kind: add,    inputs: [pos], outputs: [idx], scalar: SHIFT}
  - {name: lookup, kind: gather, inputs: [table, idx], outputs: [rows], axes: [R]}
  - {name: mv,     kind: einsum, inputs: [rows, vec], outputs: [out]}
`

// TestGraphGatherFusedIndex: over 8 rows the contraction's loads walk the
// gathered rows in one loop, and the gather is fused into them, proven,
// and simulated through the index its producer computed; an index outside
// the table (row 128 of 128 at position 7) is not a row those loads can
// read, so verify feeds the contraction from the graph's reference and
// says why. Over 64 rows the loads walk them in two loops (rows 8 apart to
// other slices), which one indirect loop cannot follow: no class of the
// contraction can do the gather, which keeps its kernel, the optimum still
// proven (docs/spec-decisions.md "Gather fused into its einsum's loads").
func TestGraphGatherFusedIndex(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		size, shift string
		plan, want  []string
	}{
		{"8", "10", []string{"2 ops planned, 1 gathers fused into their consumers' loads", "optimal: proven (under the graph model: per-op plans, HBM layouts, DMA relayouts, gathers fused into loads)"},
			[]string{"lookup         gather        fused into mv's loads", "PASS: graph gather-einsum, seed 1: 2 kernels simulated, 0 ops fed from the reference (not yet plannable)\n"}},
		{"8", "121", []string{"2 ops planned, 1 gathers fused into their consumers' loads"},
			[]string{"mv             einsum        fed from the reference: its index idx holds 128 at position 7, outside the table's 128 rows, which its DMA cannot read (DMA-R16)",
				"PASS: graph gather-einsum, seed 1: 1 kernels simulated, 0 ops fed from the reference (not yet plannable), 1 kernels fed from the reference (an index naming a row their DMA cannot move)"}},
		{"64", "10", []string{"3 ops planned, 0 views", "optimal: proven (under the graph model: per-op plans, HBM layouts, DMA relayouts)\n"},
			[]string{"lookup         gather        simulated", "PASS: graph gather-einsum, seed 1: 3 kernels simulated"}},
	} {
		t.Run(tc.size+"/"+tc.shift, func(t *testing.T) {
			src := filepath.Join(dir, "g"+tc.size+"-"+tc.shift+".yaml")
			text := strings.Replace(strings.Replace(gatherEinsumYAML, "SHIFT", tc.shift, 1), "SIZE", tc.size, 1)
			require.NoError(t, os.WriteFile(src, []byte(text), 0o644))
			out := filepath.Join(dir, "g"+tc.size+"-"+tc.shift+".graph.json")
			code, stdout, stderr := runCLI(t, "plan", src, "--vector-ops", "--stored", "", "--cache", filepath.Join(dir, "cache"), "--out", out)
			require.Equal(t, exitOK, code, stderr)
			for _, w := range tc.plan {
				assert.Contains(t, stdout, w)
			}
			code, stdout, stderr = runCLI(t, "verify", out)
			require.Equal(t, exitOK, code, stderr)
			for _, w := range tc.want {
				assert.Contains(t, stdout, w)
			}
		})
	}
}

// TestPlanOpFuseGather: `plan --op EINSUM --fuse` has the einsum's loads
// do the gather whose output it alone reads; the kernel verifies with
// random indices (rows read through the index, each row's packets cut at
// its end). Over 64 rows the loads walk the rows in two loops, and the
// gather stays a kernel of its own, said on stderr; an einsum with
// neither an epilogue nor a gather is refused.
func TestPlanOpFuseGather(t *testing.T) {
	dir := t.TempDir()
	write := func(size string) string {
		src := filepath.Join(dir, "g"+size+".yaml")
		text := strings.Replace(strings.Replace(gatherEinsumYAML, "SHIFT", "10", 1), "SIZE", size, 1)
		require.NoError(t, os.WriteFile(src, []byte(text), 0o644))
		return src
	}
	out := filepath.Join(dir, "mv.plan.json")
	code, stdout, stderr := runCLI(t, "plan", write("8"), "--op", "mv", "--fuse", "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "plan gather-einsum op mv: S A, A -> S; lookup done in its loads, which read the table's rows through the index")
	pl, err := plan.Read(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"lookup"}, pl.Workload.Prologue)
	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS gather-einsum-mv")

	code, stdout, _ = runCLI(t, "plan", write("8"), "--op", "mv")
	require.Equal(t, exitOK, code)
	assert.NotContains(t, stdout, "done in its loads")

	code, stdout, stderr = runCLI(t, "plan", write("64"), "--op", "mv", "--fuse")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "done in its loads")
	assert.Contains(t, stderr, "plan: the gather lookup is not done in mv's loads: ")
	assert.Contains(t, stderr, "walks the rows of \"rows\" in more than one loop")

	code, _, stderr = runCLI(t, "plan", "../../workloads/moe.yaml", "--op", "router", "--fuse")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "nor does a gather feed it alone")
}

// smallMoE is the MoE block at reduced sizes (the same graph; BLK stays
// the 64 its block arithmetic multiplies by, GRID the 8 blocks its 8
// experts take at most), planned from the committed op plans.
var smallMoE = []string{"plan", "../../workloads/moe.yaml", "--axes", "T=32,D=32,F=32,E=8,K=2,GRID=8", "--vector-ops",
	"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only"}

// smallMoEK8 is the reduced MoE block at the full size's K = 8 (each of
// the 8 experts chosen by every token; GRID = 12 ≥ (T·K − E) / BLK + E,
// 002 L8617): every op has a kernel at these sizes, the top-k in its
// branchless form too (at K = 2 its unpack commits 2 bf16 lanes, less than
// a DM write: TestGraphMoEReduced).
var smallMoEK8 = []string{"plan", "../../workloads/moe.yaml", "--axes", "T=32,D=32,F=32,E=8,K=8,GRID=12", "--vector-ops",
	"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only"}

// TestGraphMoEReducedWhole plans the reduced MoE block at K = 8 with every
// op a kernel (the top-k's ten parts, the compaction's, the dispatch's
// scatter among them) and verifies it: every kernel simulated in order on
// its producers' values, none fed from the graph's reference for want of a
// kernel; the two fused weight gathers read the empty grids' expert id −1,
// outside the table, and are fed from the reference as the decision
// "Gather: the DMA's indirect loop" says.
func TestGraphMoEReducedWhole(t *testing.T) {
	out, stdout := planCached(t, t.TempDir(), "moe.graph.json", smallMoEK8)
	assert.Contains(t, stdout, "55 ops planned, 2 gathers fused into their consumers' loads, 6 views, 0 not yet plannable")
	assert.Contains(t, stdout, "expanded: topk (topk) computed by 10 ops of kinds with kernels: topk_pack, topk_key, topk_keyr, topk_above, topk_rank, topk_onehot, topk_placed, topk_selected, topk_scores, topk_indices")
	assert.NotContains(t, stdout, "\nnot yet plannable:")
	assert.Regexp(t, `(?m)^  dispatch +scatter +planned +scatter, one DMA, an indirect loop `, stdout)
	code, stdout, stderr := runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph moe, seed 1: 53 kernels simulated, 0 ops fed from the reference (not yet plannable), 2 kernels fed from the reference (an index naming a row their DMA cannot move); 5 ops computed by other ops, their parts' reference equal to the op's\n")
	for _, op := range []string{"topk_pack", "topk_unpack", "topk_above", "route_softmax", "expert_ids_fill", "dispatch", "combine"} {
		if op == "topk_unpack" {
			op = "topk_scores"
		}
		assert.Regexp(t, `(?m)^  `+op+` +[a-z_]+ +simulated`, stdout, op)
	}
}

// TestGraphMoEReduced plans the MoE block whole at reduced sizes and
// verifies it: its 45 kernels (the router, the one-hot and the routing
// arithmetic, the two cumsums, the token rank and the compaction computed
// by ops of kinds with kernels, the gathers of the combine and of
// the block offsets, the dispatch's scatter, the sparse MLP reading the
// experts' weights through the expert ids in its own loads, the weighting
// and the combine) simulated in order on the values their producers
// computed, the 2 ops without a kernel (top-k and the route softmax at
// these sizes) fed from the graph's reference; each
// expansion's reference equals its op's. With --no-fuse the weight gathers
// are kernels of their own, simulated too, and the layer costs exactly
// their cycles more; with --no-expand the four ops are not plannable.
func TestGraphMoEReduced(t *testing.T) {
	out, stdout := planCached(t, t.TempDir(), "moe.graph.json", smallMoE)
	assert.Contains(t, stdout, "45 ops planned, 2 gathers fused into their consumers' loads, 5 views, 2 not yet plannable")
	assert.Contains(t, stdout, "expanded: mask_scan (cumsum) computed by 9 ops of kinds with kernels: mask_scan_in, mask_scan_prod, ")
	// At K = 2 the token rank's sum streams K's 2 lanes padded to 8
	// (docs/spec-decisions.md "Reduce: a kept axis of fewer than 8
	// lanes"); the top-k's unpack has no kernel (a bf16 commit of 2 lanes
	// writes padding over its neighbours, SEQ-R12): the top-k stays one
	// op without a kernel, the part named.
	assert.Contains(t, stdout, "expanded: token_rank (gather) computed by 2 ops of kinds with kernels: token_rank_masked, token_rank_sum")
	assert.Contains(t, stdout, "not expanded: topk (a part of its form in other ops has no kernel at these sizes: the op stays one op without a kernel)\n  topk: topk_scores (unpack) has no kernel")
	assert.Regexp(t, `(?m)^  expert_ids_fill +sub +planned \(expert_ids\) `, stdout)
	assert.Contains(t, stdout, "search: elimination, ")
	assert.Contains(t, stdout, "gathers read in their consumers' loads, through their index (the gather's kernel gone): gather_up → up_proj, gather_down → down_proj")
	assert.Regexp(t, `(?m)^  gather_up +gather +fused into up_proj's loads `, stdout)
	assert.Contains(t, stdout, "optimal: proven (under the graph model: per-op plans, HBM layouts, DMA relayouts, gathers fused into loads, DM residency of 23 tensors)")
	assert.Contains(t, stdout, "0 searched")
	fusedTotal := totalCycles(t, stdout)
	// The plan states the fusion, and Validate refuses it broken.
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, field string
		edit        func(g *plan.Graph, op func(string) *plan.GraphOp, tensor func(string) *plan.GraphTensor)
	}{
		{"prologue of a non-gather", "ops[%up].prologue[1]: \"dispatch\": want an earlier gather fused into \"up_proj\"", func(g *plan.Graph, op func(string) *plan.GraphOp, _ func(string) *plan.GraphTensor) {
			op("up_proj").Prologue = []string{"gather_up", "dispatch"}
			op("up_proj").Plan.Workload.Prologue = []string{"gather_up", "dispatch"}
		}},
		{"plan not stating the prologue", "ops[%up].plan.workload.prologue", func(g *plan.Graph, op func(string) *plan.GraphOp, _ func(string) *plan.GraphTensor) {
			op("up_proj").Plan.Workload.Prologue = nil
		}},
		{"gathered output stored", "ops[%up].prologue[0]: tensor \"W_gathered_up\" a prologue reads has place \"hbm\"", func(g *plan.Graph, _ func(string) *plan.GraphOp, tensor func(string) *plan.GraphTensor) {
			tensor("W_gathered_up").Place = plan.PlaceHBM
		}},
		{"kernel not reading through the index", "ops[%up].prologue[0]: op \"up_proj\"'s kernel does not read", func(g *plan.Graph, op func(string) *plan.GraphOp, _ func(string) *plan.GraphTensor) {
			v, _ := op("up_proj").Plan.Program.Tensor("W_gathered_up")
			v.Gather = &kernel.Gather{Table: "W_up", Index: "W_up"}
		}},
		{"prologue gather not fused into it", "ops[%gather].fused_into", func(g *plan.Graph, op func(string) *plan.GraphOp, _ func(string) *plan.GraphTensor) {
			op("gather_up").FusedInto = "down_proj"
		}},
		{"expansion part not naming it", "expansions[1].parts[0]: \"mask_scan_in\": want a later op of the plan expanded from \"mask_scan\"", func(g *plan.Graph, op func(string) *plan.GraphOp, _ func(string) *plan.GraphTensor) {
			op("mask_scan_in").ExpandedFrom = ""
		}},
		{"expanded op still planned", "expansions[2].name: op \"expert_ids_fill\" is in the plan", func(g *plan.Graph, _ func(string) *plan.GraphOp, _ func(string) *plan.GraphTensor) {
			g.Expansions[2].Name = "expert_ids_fill"
		}},
		{"expansion output not its parts'", "expansions[0].outputs[0]: tensor \"num_blocks\" is not written by a part of \"blocks_scan\"", func(g *plan.Graph, _ func(string) *plan.GraphOp, _ func(string) *plan.GraphTensor) {
			g.Expansions[0].Outputs = []string{"num_blocks"}
		}},
	} {
		g, err := plan.UnmarshalGraph(data)
		require.NoError(t, err)
		require.NoError(t, g.Validate())
		tc.edit(g, func(n string) *plan.GraphOp {
			for i := range g.Ops {
				if g.Ops[i].Name == n {
					return &g.Ops[i]
				}
			}
			return nil
		}, func(n string) *plan.GraphTensor {
			for i := range g.Tensors {
				if g.Tensors[i].Name == n {
					return &g.Tensors[i]
				}
			}
			return nil
		})
		err = g.Validate()
		require.Error(t, err, tc.name)
		at := func(name string) string {
			return strconv.Itoa(slices.IndexFunc(g.Ops, func(o plan.GraphOp) bool { return o.Name == name }))
		}
		field := strings.NewReplacer("%up", at("up_proj"), "%gather", at("gather_up")).Replace(tc.field)
		assert.True(t, strings.HasPrefix(err.Error(), field), "%s: %v", tc.name, err)
	}
	// Tensors stay in DM from their producer's kernel to the next one's,
	// has_block's kernel taking diff and leaving its own result (a chain);
	// local_offset, read by scatter_idx two kernels later, is not offered
	// (block_base's kernel runs between them).
	assert.Contains(t, stdout, "residency: 23 tensors could stay in DM")
	assert.Contains(t, stdout, "kept there: count, blocks_cumsum, cumsum_mask, token_rank, diff, has_block, block_base, ")
	assert.Contains(t, stdout, "has_block←has_block (in DM)")
	assert.Contains(t, stdout, "block_base←block_base (in DM), local_offset←local_off  ")
	code, stdout, stderr := runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph moe, seed 1: 45 kernels simulated, 2 ops fed from the reference (not yet plannable); 4 ops computed by other ops, their parts' reference equal to the op's\n")
	assert.Regexp(t, `(?m)^  expert_ids_fill +sub +simulated`, stdout)
	assert.Contains(t, stdout, "block_base taken in DM from block_base)")
	for _, op := range []string{"gather_back", "token_block"} {
		assert.Regexp(t, `(?m)^  `+op+` +gather +simulated`, stdout)
	}
	assert.Regexp(t, `(?m)^  dispatch +scatter +simulated; graph distance measured kernel: x_blocked .*: pass; .* unchecked \(rows no index names: the scatter does not write them\)`, stdout)
	assert.Regexp(t, `(?m)^  gather_up +gather +fused into up_proj's loads$`, stdout)
	assert.Regexp(t, `(?m)^  up_proj +einsum +simulated .*graph: up \(bf16, 16384 elements\): pass`, stdout)
	assert.Regexp(t, `(?m)^  one_hot +one_hot +simulated`, stdout)

	// A wrong expansion is caught: the prefix of the blocks' scan
	// transposed sums the blocks after each expert's, not before.
	code, stderr = verifyEdited(t, data, func(g *plan.Graph) {
		for i := range g.Tensors {
			if v := g.Tensors[i].Values; g.Tensors[i].Name == "blocks_scan_prefix" {
				v.Query, v.Key = v.Key, v.Query
			}
		}
	})
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, stderr, "expansion blocks_scan (cumsum): its parts compute blocks_cumsum[")

	code, stdout, stderr = runCLI(t, append(smallMoE, "--no-expand")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "19 ops planned, 2 gathers fused into their consumers' loads, 0 views, 6 not yet plannable")
	assert.NotContains(t, stdout, "expanded:")

	unfused := filepath.Join(t.TempDir(), "moe-unfused.graph.json")
	code, stdout, stderr = runCLI(t, append(smallMoE, "--no-fuse", "--out", unfused)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "47 ops planned, 5 views, 2 not yet plannable")
	gathers := 0.0
	for _, op := range []string{"gather_up", "gather_down"} {
		m := regexp.MustCompile(`(?m)^  ` + op + ` +gather +planned +gather, one DMA, an indirect loop +([0-9]+) `).FindStringSubmatch(stdout)
		require.NotNil(t, m, op)
		c, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		gathers += c
	}
	assert.Equal(t, totalCycles(t, stdout)-gathers, fusedTotal, "the fused layer saves the two gathers' cycles exactly")
	code, stdout, stderr = runCLI(t, "verify", unfused)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph moe, seed 1: 47 kernels simulated")
	for _, op := range []string{"gather_up", "gather_down", "gather_back", "token_block"} {
		assert.Regexp(t, `(?m)^  `+op+` +gather +simulated`, stdout)
	}
}

// totalCycles is the total a graph plan's output states.
func totalCycles(t *testing.T, stdout string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^total: ([0-9]+) cycles`).FindStringSubmatch(stdout)
	require.NotNil(t, m, "no total in %s", stdout)
	c, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return c
}

// TestPlanOpExpanded: `plan --op` of an op with no kernel of its own but
// an exact form in ops that have kernels (the MoE's token rank, a batched
// gather) plans the graph of those ops, which verifies with the form
// checked against the op's reference; the compaction's form needs its
// mask to be a comparison's output, so the expert ids come with the
// comparison that writes it (and are refused when no comparison does).
func TestPlanOpExpanded(t *testing.T) {
	cache := []string{"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only"}
	for _, c := range []struct {
		op   string
		want []string
		pass string
	}{
		{"token_rank", []string{
			"plan moe op token_rank: gather has no kernel of its own: planned as the graph of the 3 ops of kinds with kernels that compute it",
			"3 ops planned, 0 views, 0 not yet plannable",
			"expanded: token_rank (gather) computed by 3 ops of kinds with kernels: token_rank_onehot, token_rank_masked, token_rank_sum",
		}, "PASS: graph moe-token_rank, seed 1: 3 kernels simulated, 0 ops fed from the reference (not yet plannable); 1 ops computed by other ops"},
		// The compaction alone comes with the comparison that writes its
		// mask (its form holds for a mask of 0s and 1s), at full size.
		{"expert_ids", []string{
			"plan moe op expert_ids: compact has no kernel of its own: planned as the graph of the 17 ops of kinds with kernels that compute it, with grid_valid (ge), which writes its mask",
			"graph moe-expert_ids: 18 ops (E=128, GRID=256, NB=16",
			"16 ops planned, 2 views, 0 not yet plannable",
		}, "PASS: graph moe-expert_ids, seed 1: 16 kernels simulated, 0 ops fed from the reference (not yet plannable); 1 ops computed by other ops"},
	} {
		out, stdout := planCached(t, t.TempDir(), c.op+".graph.json", append([]string{"plan", "../../workloads/moe.yaml", "--op", c.op}, cache...))
		for _, w := range c.want {
			assert.Contains(t, stdout, w, c.op)
		}
		code, stdout, stderr := runCLI(t, "verify", out)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, c.pass, c.op)
	}

	// A mask no comparison writes may hold other values than 0 and 1:
	// the compaction has no exact form then.
	data, err := os.ReadFile("../../workloads/moe.yaml")
	require.NoError(t, err)
	src := strings.Replace(string(data), "inputs: [grid, grid_valid], outputs: [expert_ids]", "inputs: [grid, grid], outputs: [expert_ids]", 1)
	require.NotEqual(t, string(data), src)
	file := filepath.Join(t.TempDir(), "moe.yaml")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	code, _, stderr := runCLI(t, "plan", file, "--op", "expert_ids")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr, "moe.yaml:91: op expert_ids (compact): no kernel for this kind yet\n")
}

// TestGraphTopK: a top-k planned whole in the manual's branchless form
// (docs/spec-decisions.md "Top-k: the manual's branchless form"): its ten
// parts, nine kernels and a view, from the committed plans; verify runs
// them and requires their reference to equal the top-k's; a part changed
// (the index's mask) fails, naming the expansion.
func TestGraphTopK(t *testing.T) {
	out := filepath.Join(t.TempDir(), "topk.graph.json")
	code, stdout, stderr := runCLI(t, "plan", "../../search/testdata/graph/topk.yaml", "--vector-ops",
		"--cache", "../../search/testdata/graph/cache", "--stored", "", "--cache-only", "--out", out)
	failStale(t, stderr)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "9 ops planned, 1 views, 0 not yet plannable")
	assert.Contains(t, stdout, "expanded: topk (topk) computed by 10 ops of kinds with kernels: topk_pack, topk_key, topk_keyr, topk_above, topk_rank, topk_onehot, topk_placed, topk_selected, topk_scores, topk_indices")
	for _, part := range []string{"topk_pack +pack", "topk_key +sort_key", "topk_above +gt", "topk_scores +unpack", "topk_indices +bit_and"} {
		assert.Regexp(t, `(?m)^  `+part+` +planned \(topk\) `, stdout)
	}
	code, stdout, stderr = runCLI(t, "verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "PASS: graph topk-small, seed 1: 9 kernels simulated, 0 ops fed from the reference (not yet plannable); 1 ops computed by other ops, their parts' reference equal to the op's")

	// The index's mask narrowed to 3 bits in the graph: the parts'
	// reference no longer computes the top-k's indices.
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	code, stderr = verifyEdited(t, data, func(g *plan.Graph) {
		ix := slices.IndexFunc(g.Ops, func(o plan.GraphOp) bool { return o.Name == "topk_indices" })
		require.GreaterOrEqual(t, ix, 0)
		seven := 7.0
		g.Ops[ix].Scalar = &seven
	})
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, stderr, "expansion topk (topk): its parts compute idx[")
}

// verifyEdited runs verify on the graph plan data after edit: its exit
// code and stderr.
func verifyEdited(t *testing.T, data []byte, edit func(g *plan.Graph)) (int, string) {
	t.Helper()
	g, err := plan.UnmarshalGraph(data)
	require.NoError(t, err)
	edit(g)
	bad := filepath.Join(t.TempDir(), "edited.graph.json")
	enc, err := g.Encode(bad)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bad, enc, 0o644))
	code, _, stderr := runCLI(t, "verify", bad)
	return code, stderr
}
