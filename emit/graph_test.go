package emit

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/plan"
)

// storedGraphs are the stored graph plans (results/graphs/NAME.graph.json.gz,
// not the NAME-ve ones with Vector Engine kernels, which do not emit yet)
// make rust-check type-checks as one file each, but for rustcHeavy. Those
// graphRefusals names do not emit at all.
func storedGraphs(t testing.TB) []string {
	return slices.DeleteFunc(storedGraphNames(t, false), func(n string) bool { return rustcHeavy[n] })
}

// storedGraphNames are the names of the stored graph plans: the NAME-ve
// ones when ve, the others when not.
func storedGraphNames(t testing.TB, ve bool) []string {
	m, err := filepath.Glob(filepath.Join("..", "results", "graphs", "*.graph.json.gz"))
	require.NoError(t, err)
	var out []string
	for _, f := range m {
		name := strings.TrimSuffix(filepath.Base(f), ".graph.json.gz")
		if strings.HasSuffix(name, "-ve") == ve {
			out = append(out, name)
		}
	}
	return out
}

// rustcHeavy are the stored graphs rust-check leaves out: the prefill
// layer (5 MB of plan) holds the tiled and large kernels rust-check
// already checks one by one (results/plans); as a file of its own it
// would take rustc about a minute more. Until session 34 the cut was a
// compressed size of 256 KB, which compact compressed plans (plan.Encode)
// no longer tell apart.
var rustcHeavy = map[string]bool{"llama3-70b-prefill": true}

// TestGraphRust: a graph plan is one Rust file: a module per kernel with
// its launch_at, the ops without a kernel named where run_layer runs, every
// tensor at its own HBM address (a view at its input's), each kernel's
// output where its consumers read it; the bytes are deterministic; under
// opt-0.6, which passes tensors by type, a layer with an op without a
// kernel is refused.
// TestGraphRustVectorRefused: the stored layers planned with their Vector
// Engine ops (results/graphs/NAME-ve.graph.json.gz) do not emit: a Vector
// Engine kernel's lane-broadcast VRF operand has no spelling in
// furiosa-visa-std 0.1.0 (issue 19); each is refused naming the op.
func TestGraphRustVectorRefused(t *testing.T) {
	names := storedGraphNames(t, true)
	require.NotEmpty(t, names)
	for _, n := range names {
		g, err := plan.ReadGraph(filepath.Join("..", "results", "graphs", n+".graph.json.gz"))
		require.NoError(t, err)
		_, err = GraphRust(g, RustOptions{Version: "test"})
		require.Error(t, err, n)
		// Refused at the first op it cannot spell: a Vector Engine
		// kernel's, or the einsum that refuses the layer of the einsums
		// alone (graphRefusals; the MoE's router comes first).
		msg := err.Error()
		r, ok := graphRefusals[strings.TrimSuffix(n, "-ve")]
		assert.True(t, strings.Contains(msg, "takes the number 1 only") || ok && strings.Contains(msg, r), "%s: %s", n, msg)
	}
}

func TestGraphRust(t *testing.T) {
	g, err := plan.ReadGraph(filepath.Join("..", "model", "plan", "testdata", "head-64.graph.json"))
	require.NoError(t, err)
	src, err := GraphRust(g, RustOptions{Version: "test"})
	require.NoError(t, err)
	s := string(src)
	assert.Equal(t, 1, strings.Count(s, "#![feature(register_tool)]"))
	assert.Equal(t, 2, strings.Count(s, "pub(crate) async fn launch_at("))
	assert.Contains(t, s, "pub mod op00_qk {")
	assert.Contains(t, s, "pub mod op04_pv {")
	assert.Contains(t, s, "// softmax (softmax): not yet plannable: no kernel; the layer expects p at 0x60000000.")
	// Each tensor in a 256 MiB region of its own (plan.GraphAlign): the
	// inputs q, k, v, then s_raw, s_scaled, s_masked, p, o.
	assert.Contains(t, s, "let at = op00_qk::launch_at(ctx, 0x0, 0x10000000).await; // q, k -> s_raw\n    assert_eq!(at, 0x30000000);")
	assert.Contains(t, s, "let at = op04_pv::launch_at(ctx, 0x60000000, 0x20000000).await; // p, v -> o")
	again, err := GraphRust(g, RustOptions{Version: "test"})
	require.NoError(t, err)
	assert.Equal(t, src, again)
	_, err = GraphRust(g, RustOptions{Version: "test", API: Opt06})
	assert.ErrorContains(t, err, "op scale (mul) has no kernel: under opt-0.6 a layer runs whole only when every op has one")
	// A relayout into a layout its consumer's kernel does not read is
	// refused, naming the tensor, not written as if the kernel read it.
	for i := range g.Tensors {
		if g.Tensors[i].Name == "p" {
			g.Tensors[i].Relayouts = []plan.Relayout{{Consumer: "pv", To: "m![T, S]", Kind: "dma"}}
		}
	}
	_, err = GraphRust(g, RustOptions{Version: "test"})
	assert.ErrorContains(t, err, "tensor p is relayouted for pv into m![T, S], but pv's kernel reads")
}

// relayoutGraph is the stored attention head (results/graphs/
// attention-head.graph.json.gz) with its input q stored transposed
// (m![D, S]) and relayouted for qk, which reads m![S, D]: a graph whose
// layer runs a relayout. Its relayout is priced as graph planning prices
// one (the caller passes the cycles).
func relayoutGraph(t testing.TB, cycles float64) *plan.Graph {
	g, err := plan.ReadGraph(filepath.Join("..", "results", "graphs", "attention-head.graph.json.gz"))
	require.NoError(t, err)
	for i := range g.Tensors {
		if x := &g.Tensors[i]; x.Name == "q" {
			require.Equal(t, "m![S, D]", x.Layout)
			x.Layout = "m![D, S]"
			x.Relayouts = []plan.Relayout{{Consumer: "qk", To: "m![S, D]", Kind: "dma", Bytes: x.Bytes, Cycles: cycles}}
		}
	}
	g.Cost.RelayoutCycles += cycles
	g.Cost.Cycles += cycles
	g.Cost.RelayoutShare = g.Cost.RelayoutCycles / g.Cost.Cycles
	require.NoError(t, g.Validate())
	return g
}

// TestGraphRustRelayout: a relayout the graph states is a module of its
// own whose launch_at copies the tensor into the consumer's layout
// (HbmTensor::to_hbm, 002 L2608-2636) at the copy's address
// (plan.Graph.Addresses, `q@qk`), run just before the consumer, which
// reads the copy; the other kernels keep their addresses.
func TestGraphRustRelayout(t *testing.T) {
	g := relayoutGraph(t, 1000)
	addr, err := g.Addresses()
	require.NoError(t, err)
	cp, ok := addr[plan.RelayoutCopy("q", "qk")]
	require.True(t, ok)
	src, err := GraphRust(g, RustOptions{Version: "test"})
	require.NoError(t, err)
	text := string(src)
	assert.Contains(t, text, "pub mod rl00_q_qk {")
	assert.Contains(t, text, "let src: HbmTensor<bf16, Chip, m![D, S]> = unsafe { HbmTensor::from_addr(from) };")
	assert.Contains(t, text, "let dst: HbmTensor<bf16, Chip, m![S, D]> = src.to_hbm(&mut ctx.tdma, to);")
	call := strings.Index(text, fmt.Sprintf("rl00_q_qk::launch_at(ctx, %#x, %#x)", addr["q"], cp))
	qk := strings.Index(text, fmt.Sprintf("op00_qk::launch_at(ctx, %#x, %#x)", cp, addr["k"]))
	require.Positive(t, call)
	require.Positive(t, qk, "qk reads the copy")
	assert.Less(t, call, strings.Index(text, "op00_qk::launch_at(ctx,"), "the copy runs first")
	again, err := GraphRust(relayoutGraph(t, 1000), RustOptions{Version: "test"})
	require.NoError(t, err)
	assert.Equal(t, src, again, "deterministic")
}

// TestGraphRustOpt06: under furiosa-opt-std 0.6.0 the attention head
// planned with its Vector Engine ops (every op a kernel, the causal mask's
// mask an input by rule) is one file: the layer's axes declared once at the
// root and used by every kernel's module (a K chunk's own axis declared in
// its module), the inputs staged in HBM (the mask built from its rule,
// 0 where T <= S), each kernel launched on its producers' outputs, the
// output read back; the bytes are deterministic. rust-check type-checks it
// against the 0.6.0 stub (rustcheck_test.go). A layer with a view, whose
// tensor would change type without a kernel, is refused naming the op.
func TestGraphRustOpt06(t *testing.T) {
	// The head as session 35 planned it (testdata): the mask's kernel
	// separate, its output and the softmax's in DM, pv's K chunks.
	g, err := plan.ReadGraph(filepath.Join("testdata", "attention-head-ve-resident.graph.json.gz"))
	require.NoError(t, err)
	src, err := GraphRust(g, RustOptions{Version: "test", API: Opt06})
	require.NoError(t, err)
	s := string(src)
	assert.Equal(t, 1, strings.Count(s, "#![register_tool(furiosa_opt)]"))
	assert.Contains(t, s, "\naxes![S = 2048, T = 2048, D = 128];\n")
	// The causal mask leaves s_masked in DM for the softmax, the softmax
	// p for pv's einsum: one module, one device function running the
	// three (kernel.Handover), its reference pv's sum over the softmax's
	// expression.
	assert.Contains(t, s, "pub mod op04_causal_softmax_pv {\n")
	assert.Contains(t, s, "// tcpmap:reference expr(s_scaled, mask, v) -> o = reduce_sum((bf16((exp(")
	assert.Contains(t, s, "let s_scaled_dm: DmTensor<f32, Chip, Cluster, Slice, m![S % 8, T]> = s_scaled.to_dm(&mut ctx.tdma);")
	assert.Contains(t, s, ".sub\n        .begin(p_dm.view())")
	assert.Contains(t, s, "o_dm.to_hbm(&mut ctx.tdma)\n}")
	assert.NotContains(t, s, "s_masked_dm.view().to_hbm", "s_masked is not stored")
	assert.NotContains(t, s, "p_dm.view().to_hbm", "p is not stored")
	assert.NotContains(t, s, "p_dm.to_hbm", "p is not stored")
	assert.Contains(t, s, "use super::{S, T, D};\naxes![Ilv = 2];\n")
	assert.Contains(t, s, "let mask = HostTensor::<f32, m![S, T]>::from_vec((0..4194304usize).map(|i| if i / 1 % 2048 <= i / 2048 % 2048 { 0.0 } else { f32::NEG_INFINITY })).to_hbm::<m![1], m![S, T]>(&mut ctx.pdma).await;")
	assert.Contains(t, s, "let s_scaled = launch(op00_qk::kernel, (&mut *ctx, &q, &k)).await; // qk\n    // scale (mul): fused into qk's kernel.")
	assert.Contains(t, s, "    // causal (causal_mask): fused into causal+softmax+pv's kernel.\n    // softmax (softmax): fused into causal+softmax+pv's kernel.\n    let o = launch(op04_causal_softmax_pv::kernel, (&mut *ctx, &s_scaled, &mask, &v)).await; // causal+softmax+pv")
	assert.Contains(t, s, "let _o = o.to_host::<m![S, D]>(&mut ctx.pdma).await;")
	assert.NotContains(t, s, "from_addr", "0.6.0 places the tensors")
	again, err := GraphRust(g, RustOptions{Version: "test", API: Opt06})
	require.NoError(t, err)
	assert.Equal(t, src, again)

	// The stored head: the scale and the causal mask fused into qk's
	// kernel, the mask its argument after q and k, loaded tile by tile
	// and moved into the VRF for the Vector Engine's add.
	g, err = plan.ReadGraph(filepath.Join("..", "results", "graphs", "attention-head-ve.graph.json.gz"))
	require.NoError(t, err)
	src, err = GraphRust(g, RustOptions{Version: "test", API: Opt06})
	require.NoError(t, err)
	s = string(src)
	assert.Contains(t, s, "    mask: &HbmTensor<f32, Chip, m![S, T]>,\n) -> HbmTensor<f32, Chip, m![S, T]> {")
	assert.Contains(t, s, "mask_dm = mask_t.to_dm(&mut ctx.tdma);")
	assert.Contains(t, s, ".begin(mask_dm.view())")
	assert.Contains(t, s, ".to_vrf();\n            s_masked_dm = ctx\n                .main")
	assert.Contains(t, s, ".vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 0.088388346f32)\n                .vector_fp_binary(FpBinaryOp::AddF, &mask_vrf)")
	assert.Contains(t, s, "let s_masked = launch(op00_qk::kernel, (&mut *ctx, &q, &k, &mask)).await; // qk\n    // scale (mul): fused into qk's kernel.\n    // causal (causal_mask): fused into qk's kernel.")
	assert.Contains(t, s, "let o = launch(op04_softmax_pv::kernel, (&mut *ctx, &s_masked, &v)).await; // softmax+pv")

	d, err := plan.ReadGraph(filepath.Join("..", "results", "graphs", "llama3-70b-decode-ve.graph.json.gz"))
	require.NoError(t, err)
	// Every op of the decode layer is a kernel (the RoPE lookup a gather
	// since session 18); the first reshape is refused: a view has no
	// spelling in 0.6.0.
	_, err = GraphRust(d, RustOptions{Version: "test", API: Opt06})
	assert.ErrorContains(t, err, "op q_split (reshape) is a view of Q: furiosa-opt-std 0.6.0 passes tensors by type")
}

// TestHandoffKernelRefused: one kernel of a pair that hands a tensor over
// in DM is not written alone (no launch passes DM on); the layer writes
// the pair as one device function.
func TestHandoffKernelRefused(t *testing.T) {
	g, err := plan.ReadGraph(filepath.Join("testdata", "attention-head-ve-resident.graph.json.gz"))
	require.NoError(t, err)
	for _, o := range g.Ops {
		x := map[string]string{"causal": "s_masked", "softmax": "s_masked", "pv": "p"}[o.Name]
		if x == "" {
			continue
		}
		require.NotEmpty(t, o.Plan.Program.Handoff, o.Name)
		_, err := Rust(o.Plan.Program, RustOptions{Version: "test", API: Opt06})
		assert.ErrorContains(t, err, "hands "+x+" over in DM", o.Name)
	}
}

// TestGraphRustChain: a chain of three kernels handing two tensors over
// in DM (scale → causal → softmax of the small attention head,
// testdata/head-chain.graph.json) is one module, one device function: the
// scale's and the mask's results are never stored, the layer launches the
// function once on the chain's HBM inputs.
func TestGraphRustChain(t *testing.T) {
	g, err := plan.ReadGraph(filepath.Join("testdata", "head-chain.graph.json"))
	require.NoError(t, err)
	src, err := GraphRust(g, RustOptions{Version: "test", API: Opt06})
	require.NoError(t, err)
	s := string(src)
	assert.Contains(t, s, "pub mod op03_scale_causal_softmax {\n")
	assert.Contains(t, s, "// scale (mul): fused into scale+causal+softmax's kernel.\n    // causal (causal_mask): fused into scale+causal+softmax's kernel.\n")
	assert.Contains(t, s, "let p = launch(op03_scale_causal_softmax::kernel, (&mut *ctx, &s_raw, &mask)).await; // scale+causal+softmax")
	assert.NotContains(t, s, "s_scaled_dm.to_hbm", "the scaled scores stay in DM")
	assert.NotContains(t, s, "s_masked_dm.to_hbm", "the masked scores stay in DM")
}

// TestGraphRustChainRelayoutRefused: a pair that hands a tensor over in DM
// and reads another input through a relayout is refused (the copy is made
// for one op's kernel; the pair's one function would read the tensor as
// stored).
func TestGraphRustChainRelayoutRefused(t *testing.T) {
	g, err := plan.ReadGraph(filepath.Join("testdata", "attention-head-ve-resident.graph.json.gz"))
	require.NoError(t, err)
	k := slices.IndexFunc(g.Tensors, func(x plan.GraphTensor) bool { return x.Name == "mask" })
	require.GreaterOrEqual(t, k, 0)
	g.Tensors[k].Relayouts = []plan.Relayout{{Consumer: "causal", To: "m![T, S]", Kind: "dma", Bytes: g.Tensors[k].Bytes, Cycles: 1}}
	_, err = GraphRust(g, RustOptions{Version: "test", API: Opt06})
	assert.ErrorContains(t, err, "causal and softmax hand s_masked over in DM and causal reads mask through a relayout")
}

// graphRefusals are the stored graphs of the einsums alone the emitter
// refuses, with the start of the reason: the MoE layer planned for the
// manual's hardware takes the stored router plan, and the prefill layer
// its stored down_proj plan (F split over the two clusters), whose
// cluster reduces exchange their partial sums DM to DM
// (docs/spec-decisions.md "Cluster reduce"; the plans are refused alone
// too, apiRefusals). The prefill layer's refusal went unseen until session
// 34: its graph was left out by size.
var graphRefusals = map[string]string{
	"moe":                `op router: emit "moe-router": loop body[6] (dm_to_dm): op scores_ps1 -> scores_cq: ` + clusterDMA,
	"llama3-70b-prefill": `op down_proj: emit "llama3-70b-prefill-down_proj": loop body[5] (dm_to_dm): op ffn_out_ps1 -> ffn_out_cq: ` + clusterDMA,
}

// graphRust emits stored graph name for rust-check, or checks that the
// emitter refuses it as graphRefusals says and returns false.
func graphRust(t *testing.T, name string, opts RustOptions) ([]byte, bool) {
	t.Helper()
	g, err := plan.ReadGraph(filepath.Join("..", "results", "graphs", name+".graph.json.gz"))
	require.NoError(t, err)
	src, err := GraphRust(g, opts)
	if want, ok := graphRefusals[name]; ok {
		require.Error(t, err, "%s: the emitter should refuse it", name)
		assert.Contains(t, err.Error(), want, name)
		return nil, false
	}
	require.NoError(t, err, name)
	return src, true
}

// TestStoredGraphsEmit: every stored graph of the einsums alone emits but
// those graphRefusals names, refused for its reason; every name there is
// such a graph.
func TestStoredGraphsEmit(t *testing.T) {
	names := storedGraphNames(t, false)
	for n := range graphRefusals {
		assert.Contains(t, names, n, "graphRefusals names %s, not a stored graph of the einsums alone", n)
	}
	for _, n := range names {
		if rustcHeavy[n] && testing.Short() {
			// Its emission runs through the layer's tiled kernels to
			// its down_proj (3 s); that plan's refusal alone is
			// apiRefusals'. make test-long emits it whole.
			continue
		}
		graphRust(t, n, RustOptions{Version: "check"})
	}
}
