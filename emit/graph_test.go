package emit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/plan"
)

// storedGraphs are the stored graph plans (results/graphs/NAME.graph.json.gz,
// not the NAME-ve ones with Vector Engine kernels, which do not emit yet)
// make rust-check type-checks as one file each: those under 256 KB
// compressed. The prefill and MoE layers (3.4 MB, 0.6 MB) hold the tiled
// and large kernels rust-check already checks one by one (results/plans);
// as files of their own they would take rustc about a minute more.
func storedGraphs(t testing.TB) []string {
	m, err := filepath.Glob(filepath.Join("..", "results", "graphs", "*.graph.json.gz"))
	require.NoError(t, err)
	var out []string
	for _, f := range m {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		name := strings.TrimSuffix(filepath.Base(f), ".graph.json.gz")
		if fi.Size() < 256<<10 && !strings.HasSuffix(name, "-ve") {
			out = append(out, name)
		}
	}
	return out
}

// TestGraphRust: a graph plan is one Rust file: a module per kernel with
// its launch_at, the ops without a kernel named where run_layer runs, every
// tensor at its own HBM address (a view at its input's), each kernel's
// output where its consumers read it; the bytes are deterministic; opt-0.6
// is refused.
// TestGraphRustVectorRefused: the stored layers planned with their Vector
// Engine ops (results/graphs/NAME-ve.graph.json.gz) do not emit: a Vector
// Engine kernel's lane-broadcast VRF operand has no spelling in
// furiosa-visa-std 0.1.0 (issue 19), a relayout between kernels has no
// kernel; each is refused naming the op or the tensor.
func TestGraphRustVectorRefused(t *testing.T) {
	m, err := filepath.Glob(filepath.Join("..", "results", "graphs", "*-ve.graph.json.gz"))
	require.NoError(t, err)
	require.NotEmpty(t, m)
	for _, f := range m {
		// The prefill and MoE plans (2 MB, 0.5 MB) take 20 s to read under
		// -race; the two smaller layers hold the same refusal.
		if fi, err := os.Stat(f); err != nil || fi.Size() >= 256<<10 {
			continue
		}
		g, err := plan.ReadGraph(f)
		require.NoError(t, err)
		_, err = GraphRust(g, RustOptions{Version: "test"})
		require.Error(t, err, f)
		msg := err.Error()
		assert.True(t, strings.Contains(msg, "takes the number 1 only") || strings.Contains(msg, "does not spell a relayout yet"),
			"%s: %v", f, err)
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
	assert.ErrorContains(t, err, "visa-0.1 only")
	// A relayout between two kernels has no kernel yet: refused, naming
	// the tensor, not written as if the consumer read the producer's bytes.
	for i := range g.Tensors {
		if g.Tensors[i].Name == "p" {
			g.Tensors[i].Relayouts = []plan.Relayout{{Consumer: "pv", To: "m![T, S]", Kind: "dma"}}
		}
	}
	_, err = GraphRust(g, RustOptions{Version: "test"})
	assert.ErrorContains(t, err, "tensor p is relayouted for pv (m![T, S])")
}
