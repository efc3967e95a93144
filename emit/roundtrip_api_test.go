package emit

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustapi"
	"tcpmap/emit/rustread"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
)

// storedPrograms are the shipped kernel programs (workloads/kernels) and
// the programs of the stored plans (results/plans), by file; under -short
// the compressed plans (the tiled prefill and large GEMM ones) are left out.
func storedPrograms(t testing.TB, short bool) map[string]*kernel.Program {
	t.Helper()
	out := map[string]*kernel.Program{}
	kernels, err := filepath.Glob("../workloads/kernels/*.json")
	require.NoError(t, err)
	for _, f := range kernels {
		p, err := rustread.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = p
	}
	plans, err := filepath.Glob("../results/plans/*")
	require.NoError(t, err)
	for _, f := range plans {
		if short && strings.HasSuffix(f, ".gz") {
			continue
		}
		pl, err := plan.Read(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = pl.Program
	}
	return out
}

// byName is p with its tensors in the order of their names. The Rust text
// declares a straight-line kernel's tensors in the order its ops produce
// them, which need not be the order of the program's list (a plan lists a
// commit's accumulator after the tensor it feeds); the list's order means
// nothing else.
func byName(p *kernel.Program) *kernel.Program {
	q := *p
	q.Tensors = append([]*kernel.Tensor(nil), p.Tensors...)
	sort.SliceStable(q.Tensors, func(a, b int) bool { return q.Tensors[a].Name < q.Tensors[b].Name })
	return &q
}

// The refusals of apiRefusals, by reason (docs/spec-decisions.md
// "Emitted Rust: the Vector Engine in the two APIs").
const (
	// furiosa-visa-std 0.1.0's m! has no broadcast other than 1, so a VRF
	// tensor holding a row's value for the packet's lanes (Element m![8],
	// loaded by a fetch with Packet m![8]) has no type there.
	visaLaneBroadcast = "broadcast 8: furiosa-visa-std 0.1.0's m! takes the number 1 only"
	// furiosa-visa-std 0.1.0's VectorTensorPair has no vector_trim_way4
	// (vector_tensor_pair.rs), which the manual's pair examples call.
	visaPairTrim = "vector_trim_way4 of the two-group pair: furiosa-visa-std 0.1.0's VectorTensorPair has no vector_trim_way4"
	// furiosa-opt-std 0.6.0's VectorTensorPair has no vector_narrow_trim
	// either (vector_tensor_pair.rs leaves it out on purpose).
	optPairTrim = "vector_trim_way4 of the two-group pair: furiosa-opt-std 0.6.0's VectorTensorPair has no vector_narrow_trim"
	// Neither library's DmTensor::to_dm changes the Cluster mapping, which
	// the cluster reduce's exchange on the manual's hardware does
	// (docs/spec-decisions.md "Cluster reduce").
	clusterDMA = "a DM-to-DM DMA between the clusters"
)

// apiRefusals are the stored programs an API cannot spell, or tcpmap does
// not spell in it yet, by file and API ("NAME/API"), with the start of the
// error the emitter refuses them with (the op, then the reason). Every
// other stored program must emit in both APIs.
var apiRefusals = map[string]string{
	"softmax-decode.json/visa-0.1":    `ops[2] (chain): the type of m_vrf: m![8]: ` + visaLaneBroadcast,
	"softmax-attention.json/visa-0.1": `ops[2] (chain): the type of m_vrf: m![S % 8, 8]: ` + visaLaneBroadcast,
	"rmsnorm-decode.json/visa-0.1":    `ops[3] (chain): the type of q_vrf: m![8]: ` + visaLaneBroadcast,
	// The planned Vector Engine ops (results/plans, tcpmap plan --op) with
	// a lane-broadcast VRF operand, as the golden kernels above.
	"llama3-70b-decode-rmsnorm_in.plan.json/visa-0.1": `ops[3] (chain): the type of q_vrf: m![8]: ` + visaLaneBroadcast,
	"llama3-70b-decode-softmax.plan.json/visa-0.1":    `ops[2] (chain): the type of m_vrf: m![8]: ` + visaLaneBroadcast,
	"moe-route_softmax.plan.json/visa-0.1":            `ops[2] (chain): the type of m_vrf: m![T % 16, 8]: ` + visaLaneBroadcast,
	"attention-head-softmax.plan.json.gz/visa-0.1":    `tensor m_vrf: m![8]: ` + visaLaneBroadcast,
	"ve-pair-asymmetric.json/opt-0.6":                 `ops[1] (chain): stages[5] (vector_trim_way4): ` + optPairTrim,
	"ve-pair-asymmetric.json/visa-0.1":                `ops[1] (chain): stages[5] (vector_trim_way4): ` + visaPairTrim,
	"ve-pair-fp-mul.json/opt-0.6":                     `ops[1] (chain): stages[5] (vector_trim_way4): ` + optPairTrim,
	"ve-pair-fp-mul.json/visa-0.1":                    `ops[1] (chain): stages[5] (vector_trim_way4): ` + visaPairTrim,
	"ve-pair-sub-reverse.json/opt-0.6":                `ops[1] (chain): stages[5] (vector_trim_way4): ` + optPairTrim,
	"ve-pair-sub-reverse.json/visa-0.1":               `ops[1] (chain): stages[5] (vector_trim_way4): ` + visaPairTrim,
	// The stored plans whose cluster reduce exchanges DM to DM (planned
	// for the manual's hardware; --target visa-0.1 or opt-0.6 plans the
	// exchange through HBM, TestRustClusterReduceLibrary).
	"gemm.plan.json/visa-0.1":                            clusterDMA,
	"gemm.plan.json/opt-0.6":                             clusterDMA,
	"moe-router.plan.json/visa-0.1":                      clusterDMA,
	"moe-router.plan.json/opt-0.6":                       clusterDMA,
	"llama3-70b-prefill-down_proj.plan.json.gz/visa-0.1": clusterDMA,
	"llama3-70b-prefill-down_proj.plan.json.gz/opt-0.6":  clusterDMA,
	// The prefill layer's causal mask (the interleaved add, 64 tiles, one a
	// head): its tiles step the heads G × Hkv as one, a tile view over two
	// axes, which neither API's tile views bind.
	"llama3-70b-prefill-causal.plan.json.gz/visa-0.1": tileOfTwoAxes,
	"llama3-70b-prefill-causal.plan.json.gz/opt-0.6":  tileOfTwoAxes,
	// The gathers: one DMA with an indirect loop, which neither API
	// spells (docs/spec-decisions.md "Gather: the DMA's indirect loop").
	"llama3-70b-decode-rope_lookup.plan.json/visa-0.1":  gatherRefusal,
	"llama3-70b-decode-rope_lookup.plan.json/opt-0.6":   gatherRefusal,
	"llama3-70b-prefill-rope_lookup.plan.json/visa-0.1": gatherRefusal,
	"llama3-70b-prefill-rope_lookup.plan.json/opt-0.6":  gatherRefusal,
	"moe-token_block.plan.json/visa-0.1":                gatherRefusal,
	"moe-token_block.plan.json/opt-0.6":                 gatherRefusal,
	"moe-gather_back.plan.json/visa-0.1":                gatherRefusal,
	"moe-gather_back.plan.json/opt-0.6":                 gatherRefusal,
	"moe-gather_up.plan.json/visa-0.1":                  gatherRefusal,
	"moe-gather_up.plan.json/opt-0.6":                   gatherRefusal,
	"moe-gather_down.plan.json/visa-0.1":                gatherRefusal,
	"moe-gather_down.plan.json/opt-0.6":                 gatherRefusal,
	"moe-dispatch.plan.json/visa-0.1":                   scatterRefusal,
	"moe-dispatch.plan.json/opt-0.6":                    scatterRefusal,
}

// gatherRefusal is the refusal of a gather's kernel, scatterRefusal a
// scatter's.
const (
	gatherRefusal  = `ops[0] (hbm_to_hbm): ` + gatherUnspelled
	scatterRefusal = `ops[0] (hbm_to_hbm): ` + scatterUnspelled
)

// tileOfTwoAxes is the refusal of a kernel whose tile view spans two axes
// (emit/loop.go; TestTiledLoopFallback's "is no tile of one axis").
const tileOfTwoAxes = `ops[0] (to_dm): view scores_t0 m![1 # 64, Sq, Sk] of scores m![G, Hkv, Sq, Sk] is no tile of one axis`

// emitStored emits the stored program name in api: the Rust text, or nil
// after checking that the emitter refuses it as apiRefusals says.
func emitStored(t *testing.T, name string, p *kernel.Program, api API) []byte {
	t.Helper()
	src, err := Rust(p, RustOptions{API: api, Version: "test"})
	if want, ok := apiRefusals[name+"/"+string(api)]; ok {
		require.Error(t, err, "%s in %s: the emitter should refuse it", name, api)
		assert.Contains(t, err.Error(), want)
		return nil
	}
	require.NoError(t, err, "%s in %s", name, api)
	return src
}

// refusedByBoth are the stored programs neither API emits: the manual's
// pair examples that trim the pair, which neither library's
// VectorTensorPair can (vector_tensor_pair.rs of both leaves out the trim),
// the plans whose cluster reduce moves DM to DM between the clusters, and
// the prefill layer's causal mask (tileOfTwoAxes), the gathers
// (gatherRefusal) and the scatter (scatterRefusal).
var refusedByBoth = []string{"ve-pair-asymmetric.json", "ve-pair-fp-mul.json", "ve-pair-sub-reverse.json",
	"gemm.plan.json", "moe-router.plan.json", "llama3-70b-prefill-down_proj.plan.json.gz", "llama3-70b-prefill-causal.plan.json.gz",
	"llama3-70b-decode-rope_lookup.plan.json", "llama3-70b-prefill-rope_lookup.plan.json", "moe-token_block.plan.json",
	"moe-gather_back.plan.json", "moe-gather_up.plan.json", "moe-gather_down.plan.json", "moe-dispatch.plan.json"}

// TestAPIRefusalsStored: every entry of apiRefusals names a stored program,
// and the programs refused by both APIs are exactly refusedByBoth (the
// simulator and the cost model still take them: tcpmap verify, tcpmap
// cost).
func TestAPIRefusalsStored(t *testing.T) {
	progs := storedPrograms(t, false)
	count := map[string]int{}
	for key := range apiRefusals {
		name, api, ok := strings.Cut(key, "/")
		require.True(t, ok, key)
		_, ok = progs[name]
		require.True(t, ok, "%s: no stored program %s", key, name)
		require.Contains(t, rustapi.APIs, API(api), key)
		count[name]++
	}
	var both []string
	for name, n := range count {
		if n == len(rustapi.APIs) {
			both = append(both, name)
		}
	}
	assert.ElementsMatch(t, refusedByBoth, both)
}

// TestRoundTripAPIs: every stored kernel program and plan emits in both
// APIs (but for apiRefusals, which are refused with their error), the same
// bytes every time, a tiled one as a loop, and reads back as the same
// program, up to the order of its tensor list.
func TestRoundTripAPIs(t *testing.T) {
	for name, p := range storedPrograms(t, testing.Short()) {
		for _, api := range rustapi.APIs {
			t.Run(name+"/"+string(api), func(t *testing.T) {
				src := emitStored(t, name, p, api)
				if src == nil {
					return
				}
				again, err := Rust(p, RustOptions{API: api, Version: "test"})
				require.NoError(t, err)
				assert.True(t, string(src) == string(again), "the same bytes for the same program")
				if _, ok := kernel.Recognize(p); ok {
					assert.Contains(t, string(src), "    for t in 0..", "a tiled program prints as a loop")
				}
				got, err := rustread.Read("k.rs", src)
				require.NoError(t, err)
				assert.JSONEq(t, programJSON(t, byName(p)), programJSON(t, byName(got)))
			})
		}
	}
}
