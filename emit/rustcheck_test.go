package emit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustapi"
	"tcpmap/emit/rustread"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
)

// The type check of emitted kernels against the stubs of the vendor's
// libraries in rust/ (rust/README.md). `make rust-check` runs it; it is
// part of `make test` when rustc is on PATH.

// stubCrates are the stub crates in build order: folder, crate name, crate
// type, and the crates it links.
var stubCrates = []struct {
	dir, name, kind string
	deps            []string
}{
	{"stub-macros", "tcpmap_stub_macros", "proc-macro", nil},
	{"stub-rand", "rand", "rlib", nil},
	{"stub-tokio", "tokio", "rlib", []string{"tcpmap_stub_macros"}},
	{"stub-visa-0.1", "furiosa_visa_std", "rlib", []string{"tcpmap_stub_macros", "rand"}},
	{"stub-opt-0.6", "furiosa_opt_std", "rlib", []string{"tcpmap_stub_macros", "rand"}},
}

// rustcEnv is the environment rustc runs in: RUSTC_BOOTSTRAP for
// `#![feature(register_tool)]`, which the libraries' #[device] needs
// (rust/README.md).
func rustcEnv() []string { return append(os.Environ(), "RUSTC_BOOTSTRAP=1") }

// artifact is the file a built stub crate is linked from.
func artifact(dir, name, kind string) string {
	if kind == "proc-macro" {
		return filepath.Join(dir, "lib"+name+".so")
	}
	return filepath.Join(dir, "lib"+name+".rmeta")
}

// buildStubs builds the stub crates into dir.
func buildStubs(t *testing.T, rustc, dir string) {
	t.Helper()
	kinds := map[string]string{}
	for _, c := range stubCrates {
		kinds[c.name] = c.kind
		args := []string{"--edition", "2024", "--crate-type", c.kind, "--crate-name", c.name, "-L", dir, "-A", "warnings",
			"-o", artifact(dir, c.name, c.kind), filepath.Join("..", "rust", c.dir, "lib.rs")}
		if c.kind != "proc-macro" {
			args = append(args, "--emit=metadata")
		}
		for _, d := range c.deps {
			args = append(args, "--extern", d+"="+artifact(dir, d, kinds[d]))
		}
		cmd := exec.Command(rustc, args...)
		cmd.Env = rustcEnv()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "building rust/%s: %s", c.dir, out)
	}
}

// checkJob is one file to type-check: against the stub of api, passing or,
// with wantErr, failing with that error.
type checkJob struct {
	name, file string
	api        API
	wantErr    string
}

// typeCheck runs rustc on a kernel file against the stub of api: the file
// as a test crate (the host program's #[cfg(test)] module included),
// metadata only (type and borrow checks, no code).
func typeCheck(rustc, dir string, j checkJob, k int) (string, error) {
	lib := "furiosa_visa_std"
	if j.api == Opt06 {
		lib = "furiosa_opt_std"
	}
	cmd := exec.Command(rustc, "--edition", "2024", "--crate-type", "bin", "--test", "--emit=metadata",
		"-o", filepath.Join(dir, fmt.Sprintf("check%d.rmeta", k)), "-L", dir, "-A", "warnings",
		"--extern", lib+"="+artifact(dir, lib, "rlib"),
		"--extern", "tokio="+artifact(dir, "tokio", "rlib"),
		"--extern", "rand="+artifact(dir, "rand", "rlib"), j.file)
	cmd.Env = rustcEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// wrongCalls are calls the libraries refuse, each a one-place edit of a
// file that type-checks: the calibration that the stubs are strict where
// the libraries are. Several are the faults of the earlier emitter
// (issue 19): converting bf16 with f64::from, HostTensor::to_vec, a
// TrfAddress moved out of its array, a slot read before the loop assigns it,
// the store through `&mut view`, the result bound without mut.
var wrongCalls = []struct {
	name, base string // base: a calibration file, or API/NAME of an emitted file
	old, new   string
	want       string // rustc's error code or message
}{
	{"contract generics", "hello-dot", ".contract::<m![1]>()", ".contract::<m![1], m![1]>()", "E0107"},
	{"to_dm without address", "hello-dot", "lhs.to_dm(&mut ctx.tdma, 0)", "lhs.to_dm(&mut ctx.tdma)", "E0061"},
	{"align on a DM tensor", "hello-dot", ".align::<m![A / 32], m![A % 32], _, _>(&rhs)", ".align::<m![A / 32], m![A % 32], _, _>(&lhs)", "E0308"},
	{"0.6 method under 0.1", "hello-dot", ".contract::<m![1]>()", ".contract_packet::<m![1]>()", "E0599"},
	{"fetch type parameters", "hello-gemv", ".fetch::<bf16, Time, Packet>()", ".fetch::<Time, Packet>()", "E0107"},
	{"accumulate kind", "hello-gemv", "(AccumulationKind::Interleaved)", "(LaneMode::Interleaved)", "E0433"},
	{"f64 from bf16", "visa-0.1/hello-dot", "f64::from(f32::from(x))", "f64::from(x)", "E0277"},
	{"HostTensor::to_vec", "visa-0.1/hello-dot", "floats(&lhs.to_buf())", "floats(&lhs.to_vec())", "E0599"},
	{"TrfAddress moved out of its array", "visa-0.1/tiled-2axis-double", "[t / 4 % 2].clone()", "[t / 4 % 2]", "E0508"},
	{"slot read before it is assigned", "visa-0.1/tiled-2axis-double", " = unsafe { TrfTensor::from_addr(TrfAddress::FirstHalf) };", ";", "E0381"},
	{"store through &mut view", "visa-0.1/tiled-2axis-double", "out_dm.view().to_hbm_view(&mut ctx.tdma, out_t);", "out_dm.to_hbm(&mut ctx.tdma, &mut out_t);", "E0308"},
	{"result without mut", "visa-0.1/tiled-2axis-double", "let mut out: HbmTensor", "let out: HbmTensor", "E0596"},
	// begin_interleaved takes two DM tensors of one type (context.rs of
	// both libraries): the split reduce's f32 partial sums, not one of
	// them and the bf16 output tile.
	{"interleaved tensors of two types", "visa-0.1/tiledk-k2-single", "(out_ps0.view(), out_ps1.view())", "(out_ps0.view(), out_dm.view())", "E0308"},
	{"interleaved tensors of two types under 0.6", "opt-0.6/tiledk-k2-single", "(out_ps0.view(), out_ps1.view())", "(out_ps0.view(), out_dm.view())", "E0308"},
	{"graph: a kernel launched without its second input", "visa-0.1/graph-attention-head", "op04_pv::launch_at(ctx, 0x70000000, 0x20000000)", "op04_pv::launch_at(ctx, 0x70000000)", "E0061"},
	// Under 0.6 the layer passes tensors by type: one kernel's output is
	// the next one's input only if their types agree.
	{"graph under 0.6: a kernel given its inputs swapped", "opt-0.6/graph-attention-head-ve", "(&mut *ctx, &q, &k, &mask)", "(&mut *ctx, &q, &mask, &k)", "E0308"},
	{"graph under 0.6: the mask staged in another layout", "opt-0.6/graph-attention-head-ve", "to_hbm::<m![1], m![S, T]>(&mut ctx.pdma).await;\n    let s_masked", "to_hbm::<m![1], m![T, S]>(&mut ctx.pdma).await;\n    let s_masked", "E0308"},
	{"from_addr outside unsafe", "visa-0.1/tiled-2axis-double", "unsafe { HbmTensor::from_addr(2 << 28) }", "HbmTensor::from_addr(2 << 28)", "E0133"},
	{"Bottom padding under 0.1", "visa-0.1/tiled-2axis-double", "m![1 # 2, I % 64, J]>(i)", "m![1 #{!} 2, I % 64, J]>(i)", "is not in the furiosa-visa-std 0.1.0 grammar"},
	{"address under 0.6", "opt-0.6/hello-gemm", "b.to_dm(&mut ctx.tdma)", "b.to_dm(&mut ctx.tdma, 1 << 16)", "E0061"},
	{"TrfAddress under 0.6", "opt-0.6/hello-gemm", ".to_trf()", ".to_trf(TrfAddress::Full)", "E0433"},
	{"0.1 accumulate under 0.6", "opt-0.6/hello-gemm", ".contract_lane::<", ".accumulate::<", "E0599"},
	{"fetch type under 0.6", "opt-0.6/hello-gemm", ".fetch::<m![I % 32, J / 8 % 4], m![K]>()", ".fetch::<bf16, m![I % 32, J / 8 % 4], m![K]>()", "E0107"},
	{"host address under 0.6", "opt-0.6/hello-gemm", "let a_hbm = a.to_hbm(&mut ctx.pdma).await;", "let a_hbm = a.to_hbm(&mut ctx.pdma, 0).await;", "E0061"},
	// The Vector Engine (furiosa-visa-std vector_engine/): float ops run
	// Way4 only, the pair has no trim, an op's enum is the stream's type,
	// a comparison is an InputCmp, vector_final needs Way8.
	{"float op on Way8", "visa-0.1/ve-sigmoid", ".vector_trim_way4::<m![A % 2 # 4]>()\n", "\n", "E0599"},
	{"vector_final on Way4", "visa-0.1/ve-sigmoid", ".vector_pad_way8::<m![A % 2 # 8]>()\n", "\n", "E0599"},
	{"trim of the pair", "visa-0.1/ve-pair-add", ".vector_clip_zip(", ".vector_trim_way4::<m![A % 2 # 4]>().vector_clip_zip(", "E0599"},
	{"i32 inter-slice op on f32", "visa-0.1/xsr-promotion", "(InterSliceReduceOpF32::Add)", "(InterSliceReduceOpI32::Add)", "E0308"},
	{"bare comparison", "visa-0.1/ve-branch-relu", "InputCmp::I32(InputCmpI32::Less { boundary: 0 })", "Less(0)", "E0425"},
	{"VE calls under 0.6", "opt-0.6/xsr-promotion", ".vector_inter_slice_reduce::", ".vector_intra_slice_branch(BranchMode::Unconditional).vector_inter_slice_reduce::", "E0599"},
	// furiosa-opt-std 0.6.0's intra-slice typestate (vector_tensor.rs,
	// operand.rs, stash_slot.rs): the stash is read once and at the way it
	// was written, a Branched layout fills its rf port last, the narrow
	// layer is renamed, vector_fp_div takes no op, float ops run Way4 only,
	// the pair has no trim and its per-group operands read no stash.
	{"stash read twice under 0.6", "opt-0.6/ve-stash-fxp", ".vector_clip(ClipBinaryOpI32::Max, Stash)", ".vector_clip(ClipBinaryOpI32::Max, Stash).vector_clip(ClipBinaryOpI32::Min, Stash)", "E0277"},
	{"Way8 stash read at Way4 under 0.6", "opt-0.6/ve-residual-max", "(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32)", "(FpBinaryOp::MulF(FpMulAlu::Mul0), Stash)", "E0277"},
	{"imm after rf under 0.6", "opt-0.6/ve-branch-relu", "Branched::imm(TagGuard::group(GroupId::One), 0)", "Branched::rf(TagGuard::all(), Stash).imm(TagGuard::group(GroupId::One), 0)", "E0599"},
	{"0.1 split under 0.6", "opt-0.6/ve-vcg-time", ".vector_narrow_split::<", ".vector_split::<", "E0599"},
	{"fp_div op under 0.6", "opt-0.6/rmsnorm-decode", ".vector_fp_div(8192.0f32)", ".vector_fp_div(FpDivBinaryOp::DivF, 8192.0f32)", "E0061"},
	{"float op on Way8 under 0.6", "opt-0.6/ve-sigmoid", ".vector_narrow_trim::<m![A % 2 # 4]>()\n", "\n", "E0599"},
	{"bare comparison under 0.6", "opt-0.6/ve-branch-relu", "Cmp::Less(0)", "Less(0)", "E0425"},
	{"trim of the pair under 0.6", "opt-0.6/ve-pair-add", ".vector_clip_zip(", ".vector_narrow_trim::<m![1 # 4]>().vector_clip_zip(", "E0599"},
	{"stash as a group operand under 0.6", "opt-0.6/ve-pair-one-side", "(FxpBinaryOp::MulInt, 10, ())", "(FxpBinaryOp::MulInt, Stash, ())", "E0277"},
}

// TestRustCheck type-checks, with rustc, every golden kernel
// (workloads/kernels) and every stored plan (results/plans) as emitted in
// both APIs, the tiled test kernels, and the calibration (calibration():
// the manual's Hello kernels, faults fixed, against the 0.1.0 stub) and
// wrongCalls, which must fail. `make rust-check` sets TCPMAP_RUST_CHECK.
func TestRustCheck(t *testing.T) {
	if os.Getenv("TCPMAP_RUST_CHECK") == "" {
		t.Skip("make rust-check runs it (TCPMAP_RUST_CHECK=1)")
	}
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		t.Skip("SKIPPED: rustc is not on PATH, the emitted kernels are not type-checked")
	}
	start := time.Now()
	dir := t.TempDir()
	buildStubs(t, rustc, dir)

	var jobs []checkJob
	emitted := map[string]string{} // API/NAME → source
	add := func(name string, api API, src []byte) {
		// rustc names the crate after the file: a stored plan's name may
		// hold `+` (NAME-qk+scale, an epilogue).
		file := filepath.Join(dir, string(api), strings.ReplaceAll(name, "+", "_")+".rs")
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, src, 0o644))
		emitted[string(api)+"/"+name] = string(src)
		jobs = append(jobs, checkJob{name: string(api) + "/" + name, file: file, api: api})
	}
	progs := storedPrograms(t, false)
	for _, name := range append(append([]string(nil), tiledKernels...), clusterKLibrary) {
		p, err := rustread.ReadFile(filepath.Join("testdata", name+".json"))
		require.NoError(t, err)
		progs[name] = p
	}
	names := make([]string, 0, len(progs))
	for n := range progs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, api := range rustapi.APIs {
			if _, refused := apiRefusals[n+"/"+string(api)]; refused {
				continue // TestRoundTripAPIs checks the refusal
			}
			src, err := Rust(progs[n], RustOptions{API: api, Version: "check"})
			require.NoError(t, err, "%s in %s", n, api)
			add(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, ".gz"), ".json"), ".plan"), api, src)
		}
	}
	// The 0.6.0 forms no stored kernel holds (rust_opt06_vector_test.go).
	for i, c := range optVectorForms {
		if c.refused == "" {
			src, err := Rust(optFormProgram(t, c.kernel, c.kind, c.newKind, c.param), RustOptions{API: Opt06, Version: "check"})
			require.NoError(t, err, c.name)
			add(fmt.Sprintf("form-%d", i), Opt06, src)
		}
	}
	// The stored graph plans: one file per layer (graph.go).
	for _, name := range storedGraphs(t) {
		if src, ok := graphRust(t, name, RustOptions{Version: "check"}); ok {
			add("graph-"+name, Visa01, src)
		}
	}
	// The layers whose every op has a kernel and no view, written against
	// furiosa-opt-std 0.6.0 (graph_opt06.go): tensors passed by type.
	for _, name := range []string{"attention-head-ve"} {
		g, err := plan.ReadGraph(filepath.Join("..", "results", "graphs", name+".graph.json.gz"))
		require.NoError(t, err)
		src, err := GraphRust(g, RustOptions{Version: "check", API: Opt06})
		require.NoError(t, err, name)
		add("graph-"+name, Opt06, src)
	}
	// A graph with two epilogue ops fused into an einsum
	// (search/testdata/graph/scaled.yaml planned with --vector-ops).
	fg, err := plan.ReadGraph(filepath.Join("testdata", "scaled-fused.graph.json"))
	require.NoError(t, err)
	fsrc, err := GraphRust(fg, RustOptions{Version: "check"})
	require.NoError(t, err)
	add("graph-scaled-fused", Visa01, fsrc)
	// A layer whose chain of kernels hands two tensors over in DM (the
	// attention head at S = T = D = 64, planned with --vector-ops: scale,
	// causal and softmax in one device function).
	cg, err := plan.ReadGraph(filepath.Join("testdata", "head-chain.graph.json"))
	require.NoError(t, err)
	csrc, err := GraphRust(cg, RustOptions{Version: "check", API: Opt06})
	require.NoError(t, err)
	add("graph-head-chain", Opt06, csrc)
	// A layer whose input is relayouted for its consumer (graph_test.go).
	rsrc, err := GraphRust(relayoutGraph(t, 1000), RustOptions{Version: "check"})
	require.NoError(t, err)
	add("graph-relayout", Visa01, rsrc)
	// Kernels whose DMAs read or write bytes as another type (the top-k's
	// pack and unpack, TestEmitReinterpret).
	for _, name := range reinterpretKernels {
		pl, err := plan.Read(filepath.Join("testdata", name+".plan.json"))
		require.NoError(t, err)
		src, err := Rust(pl.Program, RustOptions{Version: "check", API: Visa01})
		require.NoError(t, err)
		add(name, Visa01, src)
	}
	calSrc := map[string]string{}
	for _, c := range manualCases {
		src := calibration(t, c.name)
		calSrc[c.name] = src
		file := filepath.Join(dir, "calibration", c.name+".rs")
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
		jobs = append(jobs, checkJob{name: "calibration/" + c.name, file: file, api: Visa01})
	}
	for k, w := range wrongCalls {
		src, api := calSrc[w.base], Visa01
		if s, ok := emitted[w.base]; ok {
			src, api = s, API(strings.Split(w.base, "/")[0])
		}
		require.NotEmpty(t, src, "%s: no file %s", w.name, w.base)
		require.Equal(t, 1, strings.Count(src, w.old), "%s: %q in %s", w.name, w.old, w.base)
		file := filepath.Join(dir, "wrong", fmt.Sprintf("%02d.rs", k))
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(strings.Replace(src, w.old, w.new, 1)), 0o644))
		jobs = append(jobs, checkJob{name: "wrong/" + w.name, file: file, api: api, wantErr: w.want})
	}

	type result struct {
		out string
		err error
	}
	results := make([]result, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				out, err := typeCheck(rustc, dir, jobs[k], k)
				results[k] = result{out, err}
			}
		}()
	}
	for k := range jobs {
		next <- k
	}
	close(next)
	wg.Wait()
	passed, refused := 0, 0
	for k, j := range jobs {
		r := results[k]
		if j.wantErr == "" {
			if assert.NoError(t, r.err, "%s does not type-check against the %s stub:\n%s", j.name, j.api.Library(), r.out) {
				passed++
			}
			continue
		}
		if assert.Error(t, r.err, "%s type-checks, and %s refuses it", j.name, j.api.Library()) &&
			assert.Contains(t, r.out, j.wantErr, j.name) {
			refused++
			first, _, _ := strings.Cut(r.out, "\n")
			t.Logf("%s: %s", j.name, first)
		}
	}
	t.Logf("rust-check: %d files type-check (%d emitted, %d calibration), %d wrong calls refused, in %s",
		passed, len(emitted), len(calSrc), refused, time.Since(start).Round(100*time.Millisecond))
}

// calibrationFixes are the faults docs/spec-decisions.md records in the
// manual's Hello kernels, as one-place edits of testdata/manual (the
// manual's lines verbatim, TestManualCopies): the calibration kernels are
// those files, unwrapped, with these applied.
var calibrationFixes = map[string][]struct{ old, new, why string }{
	"hello-mul": {
		{"result.to_hbm(&mut ctx.tdma, 1 << 28)", "result.to_hbm(&mut ctx.tdma, 2 << 28)", "Hello elementwise multiplication output address"},
	},
	"hello-gemv": {
		{"let result: DmTensor<bf16, Chip, Cluster, Slice, m![1]> = ctx", "let result: DmTensor<bf16, Chip, Cluster, Slice, m![1 # 8]> = ctx", "Hello GEMV result tensor"},
		{".commit(0);", ".commit(1 << 13);", "Hello GEMV result tensor"},
	},
	"hello-gemm": {
		{"axes![I = 512, J = 512, K = 2048];", "axes![I = 512, J = 512, K = 1024];", "Hello GEMM TRF over-capacity"},
		{"b: &HbmTensor<bf16, Chip, m![K, J]>,", "b: &HbmTensor<bf16, Chip, m![J, K]>,", "Hello GEMM golden kernel: B's HBM layout and DM addresses"},
		{"b.to_dm(&mut ctx.tdma, 1 << 12)", "b.to_dm(&mut ctx.tdma, 1 << 16)", "Hello GEMM golden kernel: B's HBM layout and DM addresses"},
		{".commit(0);", ".commit(1 << 17);", "Hello GEMM golden kernel: B's HBM layout and DM addresses"},
	},
}

// calibration returns the calibration kernel of the manual's Hello kernel
// name: testdata/manual's copy without the book's `fn main() { ... }`
// wrapper (unwrap), the recorded faults fixed (calibrationFixes).
func calibration(t testing.TB, name string) string {
	t.Helper()
	src := unwrap(manualText(t, name))
	for _, f := range calibrationFixes[name] {
		require.Equal(t, 1, strings.Count(src, f.old), "%s: %q (%s)", name, f.old, f.why)
		src = strings.Replace(src, f.old, f.new, 1)
	}
	return src
}

// TestCalibrationFiles: the calibration kernels are the manual's Hello
// kernels with the recorded faults fixed: each that has a host program
// reads back as the program the manual states (manualCases) with the fixes
// of docs/spec-decisions.md applied (the multiplication's output at 2 <<
// 28, the GEMV's result m![1 # 8] at DM 8192), and the hostless GEMM reads
// as far as its host program.
func TestCalibrationFiles(t *testing.T) {
	// Each fix names its entry of docs/spec-decisions.md.
	decisions, err := os.ReadFile(filepath.Join("..", "docs", "spec-decisions.md"))
	require.NoError(t, err)
	for name, fs := range calibrationFixes {
		for _, f := range fs {
			assert.Contains(t, string(decisions), "\n## "+f.why+"\n", "%s: %q", name, f.old)
		}
	}
	for _, c := range manualCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := rustread.Read(c.name+".rs", []byte(calibration(t, c.name)))
			if c.hostless {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "no host program launches the kernel")
				return
			}
			require.NoError(t, err)
			want := parseProgram(t, c.program)
			if c.fix != nil {
				c.fix(want)
			}
			if c.name == "hello-gemv" {
				tensor(want, "result").Element = mapping.MustParse("1 # 8", want.Axes, nil)
			}
			assert.JSONEq(t, programJSON(t, want), programJSON(t, got))
		})
	}
}
