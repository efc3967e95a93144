package plan

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"tcpmap/model/workload"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// head64 is the attention head planned whole at S = T = D = 64
// (`tcpmap plan workloads/attention-head.yaml --axes S=64,T=64,D=64`).
func head64(t testing.TB) []byte {
	data, err := os.ReadFile("testdata/head-64.graph.json")
	require.NoError(t, err)
	return data
}

// TestGraphRoundTrip: a graph plan reads back to the same bytes.
func TestGraphRoundTrip(t *testing.T) {
	data := head64(t)
	require.True(t, IsGraph(data))
	g, err := UnmarshalGraph(data)
	require.NoError(t, err)
	out, err := g.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(out))
	gz, err := g.Encode("x.graph.json.gz")
	require.NoError(t, err)
	back, err := DecodeGraph(gz)
	require.NoError(t, err)
	again, err := back.Marshal()
	require.NoError(t, err)
	assert.Equal(t, data, again)
	assert.False(t, IsGraph([]byte(`{"version": 1}`)))
}

// TestGraphValidate: each rule of Validate refuses a plan that breaks it,
// naming the field.
func TestGraphValidate(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		edit        func(g *Graph)
	}{
		{"version", "version", func(g *Graph) { g.Version = 2 }},
		{"kind", "kind", func(g *Graph) { g.Kind = "plan" }},
		{"chips", "workload.chips", func(g *Graph) { g.Workload.Chips = 0 }},
		{"op repeated", "ops[1].name", func(g *Graph) { g.Ops[1].Name = g.Ops[0].Name }},
		{"unknown input", "ops[0].inputs[0]", func(g *Graph) { g.Ops[0].Inputs[0] = "nope" }},
		{"read before produced", "ops[2].inputs[0]", func(g *Graph) { g.Ops[2], g.Ops[3] = g.Ops[3], g.Ops[2] }},
		{"layouts", "ops[0].layouts", func(g *Graph) { g.Ops[0].Layouts = g.Ops[0].Layouts[1:] }},
		{"status", "ops[1].status", func(g *Graph) { g.Ops[1].Status = "maybe" }},
		{"no reason", "ops[1].reason", func(g *Graph) { g.Ops[1].Reason = "" }},
		{"cost of unplanned", "ops[1].cycles", func(g *Graph) { g.Ops[1].Cycles = 5 }},
		{"planned without plan", "ops[0].plan", func(g *Graph) { g.Ops[0].Plan = nil }},
		{"plan of another op", "ops[0].plan.workload.op", func(g *Graph) { g.Ops[0].Plan.Workload.Op = "pv" }},
		{"cycles not the plan's", "ops[0].cycles", func(g *Graph) { g.Ops[0].Cycles++ }},
		{"producer", "tensors[7].producer", func(g *Graph) { g.Tensors[7].Producer = "qk" }},
		{"place", "tensors[0].place", func(g *Graph) { g.Tensors[0].Place = "sram" }},
		{"total", "cost.kernel_cycles", func(g *Graph) { g.Cost.KernelCycles++ }},
		{"counts", "cost.planned", func(g *Graph) { g.Cost.Planned++ }},
		{"relayout to own layout", "tensors[3].relayouts[0].to", func(g *Graph) {
			g.Tensors[3].Relayouts = []Relayout{{Consumer: "scale", To: g.Tensors[3].Layout, Kind: "dma", Bytes: 1, Cycles: 1}}
		}},
		{"method", "search.method", func(g *Graph) { g.Search.Method = "guess" }},
		{"gap", "search.gap", func(g *Graph) { g.Search.Gap = 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := UnmarshalGraph(head64(t))
			require.NoError(t, err)
			tc.edit(g)
			err = g.Validate()
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.field), "%v", err)
		})
	}
}

// TestGraphValidateFused: a graph plan with the attention head's scale
// fused into qk (`tcpmap plan workloads/attention-head.yaml --axes
// S=64,T=64,D=64 --vector-ops`) reads back to its bytes, and each rule of
// a fused op, its kernel's epilogue and the tensor stored nowhere refuses
// a plan that breaks it.
func TestGraphValidateFused(t *testing.T) {
	data, err := os.ReadFile("testdata/head-64-fused.graph.json")
	require.NoError(t, err)
	g, err := UnmarshalGraph(data)
	require.NoError(t, err)
	out, err := g.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(out))
	assert.Equal(t, "s_scaled", g.KernelOutput(&g.Ops[0]))
	assert.Equal(t, "o", g.KernelOutput(&g.Ops[4]))
	addr, err := g.Addresses()
	require.NoError(t, err)
	assert.NotContains(t, addr, "s_raw", "a fused tensor has no HBM region")
	for _, tc := range []struct {
		name, field string
		edit        func(g *Graph)
	}{
		{"fused into nothing", "ops[1].fused_into", func(g *Graph) { g.Ops[1].FusedInto = "pv" }},
		{"epilogue not the plan's", "ops[0].plan.workload.epilogue", func(g *Graph) { g.Ops[0].Epilogue = nil }},
		{"fused op with cycles", "ops[1].cycles", func(g *Graph) { g.Ops[1].Cycles = 3 }},
		{"fused op with a plan", "ops[1].plan", func(g *Graph) { g.Ops[1].Plan = g.Ops[0].Plan }},
		{"fused_into on a planned op", "ops[3].fused_into", func(g *Graph) { g.Ops[3].FusedInto = "qk" }},
		{"epilogue of an unplanned op", "ops[2].epilogue", func(g *Graph) { g.Ops[2].Epilogue = []string{"scale"} }},
		{"fused tensor stored", "ops[0].epilogue[0]", func(g *Graph) { g.Tensors[3].Place = PlaceHBM }},
		{"fused tensor with a layout", "tensors[3].layout", func(g *Graph) { g.Tensors[3].Layout = "m![S, T]" }},
		{"stored tensor marked fused", "tensors[5].place", func(g *Graph) { g.Tensors[5].Place = PlaceFused }},
		{"count", "cost.planned", func(g *Graph) { g.Cost.Fused = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := UnmarshalGraph(data)
			require.NoError(t, err)
			tc.edit(g)
			err = g.Validate()
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.field), "%v", err)
		})
	}
}

// FuzzUnmarshalGraph: any bytes are refused with an error or read into a
// graph plan that validates and marshals back to bytes that read the same.
func FuzzUnmarshalGraph(f *testing.F) {
	f.Add(head64(f))
	if fused, err := os.ReadFile("testdata/head-64-fused.graph.json"); err == nil {
		f.Add(fused)
	}
	// An input with values by rule (a causal mask's, workload.Values).
	f.Add(bytes.Replace(head64(f), []byte(`"layout": "m![S, D]"
    },`), []byte(`"layout": "m![S, D]",
      "values": {"kind": "causal", "query": "S", "key": "D"}
    },`), 1))
	f.Add([]byte(`{"version": 1, "kind": "graph"}`))
	f.Add([]byte(`{"version": 1, "kind": "graph", "ops": [{"plan": {}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := UnmarshalGraph(data)
		if err != nil {
			return
		}
		require.NoError(t, g.Validate())
		out, err := g.Marshal()
		require.NoError(t, err)
		back, err := UnmarshalGraph(out)
		require.NoError(t, err)
		again, err := back.Marshal()
		require.NoError(t, err)
		assert.Equal(t, out, again)
	})
}

// TestAddressesStagger: a kernel whose plan staggers its output has it at
// that offset past its region in the graph's address map, as it was
// priced: 1 MiB inside its region (grown to hold it when needed), 16 GiB
// (HBM address bit 34, 002 L2966-2975) above the regions, which go on
// below; the other tensors keep their regions.
func TestAddressesStagger(t *testing.T) {
	data, err := os.ReadFile("testdata/head-64.graph.json")
	require.NoError(t, err)
	base, err := UnmarshalGraph(data)
	require.NoError(t, err)
	plain, err := base.Addresses()
	require.NoError(t, err)
	qk := slices.IndexFunc(base.Ops, func(o GraphOp) bool { return o.Name == "qk" })
	require.GreaterOrEqual(t, qk, 0)
	out := base.Ops[qk].Outputs[0]
	for _, st := range []int64{1 << 20, 1 << 34} {
		g, err := UnmarshalGraph(data)
		require.NoError(t, err)
		g.Ops[qk].Plan.OpMapping = &OpMapping{Form: "test", Stagger: st}
		addr, err := g.Addresses()
		require.NoError(t, err)
		assert.Equal(t, plain[out]+st, addr[out], "stagger %d", st)
		for name, a := range addr {
			if name != out {
				assert.Equal(t, plain[name], a, "%s moved (stagger %d): its tensors are small, their regions unchanged", name, st)
			}
		}
	}
}

// TestGraphValidateValues: an input's values rule is of a known kind
// and names two of its axes (a causal mask) or its one axis (an iota),
// and no op produces it.
func TestGraphValidateValues(t *testing.T) {
	for _, c := range []struct {
		name string
		v    workload.Values
		prod string
		want string
	}{
		{"ok", workload.Values{Kind: "causal", Query: "S", Key: "D"}, "", ""},
		{"kind", workload.Values{Kind: "triangle", Query: "S", Key: "D"}, "", `tensors[0].values.kind: unknown values kind "triangle"`},
		{"iota over two axes", workload.Values{Kind: "iota", Axis: "S"}, "", `tensors[0].values.axis: an iota over "S" is a tensor over it alone`},
		{"axis", workload.Values{Kind: "causal", Query: "S", Key: "T"}, "", `query "S" and key "T" must be two axes of q`},
		{"same", workload.Values{Kind: "causal", Query: "S", Key: "S"}, "", `query "S" and key "S" must be two axes of q`},
		{"produced", workload.Values{Kind: "causal", Query: "S", Key: "D"}, "qk", "tensor q has values: an input, not produced by qk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := UnmarshalGraph(head64(t))
			require.NoError(t, err)
			v := c.v
			g.Tensors[0].Values = &v
			if c.prod != "" {
				g.Tensors[0].Producer = c.prod
			}
			err = g.Validate()
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, c.want)
		})
	}
}

// TestGraphEpilogueOperandRelayout: an epilogue's tensor (the head's
// causal mask, fused into qk) is an argument of the einsum's kernel
// (KernelInputs), so a relayout of it is that kernel's copy: it validates
// and gets its region; a relayout for a kernel that does not read it is
// refused.
func TestGraphEpilogueOperandRelayout(t *testing.T) {
	g, err := ReadGraph("../../results/graphs/attention-head-ve.graph.json.gz")
	require.NoError(t, err)
	assert.Equal(t, []string{"q", "k", "mask"}, g.KernelInputs(&g.Ops[0]))
	assert.Equal(t, []string{"q", "k"}, g.Ops[0].Inputs)
	k := slices.IndexFunc(g.Tensors, func(x GraphTensor) bool { return x.Name == "mask" })
	require.GreaterOrEqual(t, k, 0)
	for _, c := range []struct {
		consumer string
		ok       bool
	}{{"qk", true}, {"pv", false}} {
		g.Tensors[k].Relayouts = []Relayout{{Consumer: c.consumer, To: "m![T, S]", Kind: "dma", Bytes: g.Tensors[k].Bytes, Cycles: 1}}
		g.Cost.RelayoutCycles = 1
		err := g.Validate()
		if !c.ok {
			assert.ErrorContains(t, err, `op "pv" does not read "mask"`)
			continue
		}
		if err != nil {
			assert.NotContains(t, err.Error(), "does not read", "the kernel reads its epilogue's tensor")
		}
		addr, err := g.Addresses()
		require.NoError(t, err)
		assert.Contains(t, addr, RelayoutCopy("mask", "qk"))
	}
}
