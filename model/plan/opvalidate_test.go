package plan

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpPlan: a non-einsum op's plan (format version 2, written by tcpmap
// plan --op silu) reads back and marshals to the same bytes; a version-1
// einsum plan still reads; the op plan's own fields are checked.
func TestOpPlan(t *testing.T) {
	data, err := os.ReadFile("testdata/decode-silu.plan.json")
	require.NoError(t, err)
	p, err := Unmarshal(data)
	require.NoError(t, err)
	assert.Equal(t, 2, p.Version)
	assert.Equal(t, "silu", p.Workload.Kind)
	require.NotNil(t, p.OpMapping)
	out, err := p.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(out))

	// An einsum plan written as version 1 (the format before op plans).
	cur, err := os.ReadFile("../../results/plans/gemv.plan.json")
	require.NoError(t, err)
	old := []byte(strings.Replace(string(cur), `"version": 2`, `"version": 1`, 1))
	require.Contains(t, string(old), `"version": 1`)
	_, err = Unmarshal(old)
	require.NoError(t, err, "a version-1 plan still reads")

	src := string(data)
	for _, c := range []edit{
		{`"version": 2`, `"version": 1`, "workload.kind"},
		{`"version": 2`, `"version": 3`, "version"},
		{`"kind": "silu"`, `"kind": "einsum"`, "workload.kind"},
		{`"kind": "silu"`, `"kind": "frobnicate"`, "workload.kind"},
		{`"form": "silu"`, `"form": ""`, "op_mapping.form"},
		{`"tiles": 1`, `"tiles": 0`, "op_mapping.tiles"},
		{`"clusters": 1`, `"clusters": 0`, "op_mapping.clusters"},
		{`"spread": [`, `"spread": ["Q", `, "op_mapping.spread[0]"},
		{`"axes": "F=28672"`, `"axes": "F=28672", "einsum": "F -> F"`, "workload.einsum"},
		{`"axes": "F=28672"`, `"axes": "F=1024"`, "workload.axes"},
	} {
		requireRefused(t, src, c)
	}
	// Without its op mapping an op plan is invalid; with a contraction
	// mapping as well, too.
	q := *p
	q.OpMapping = nil
	require.ErrorContains(t, q.Validate(), "op_mapping")
	q = *p
	q.Mapping.Stationary = "x"
	require.ErrorContains(t, q.Validate(), "mapping")
}

// TestOpPlanInterleaveAxis: the interleaved add's program declares its
// interleave axis after the workload's (FormInterleaved); no other form's
// may, nor may that one declare two or put it first.
func TestOpPlanInterleaveAxis(t *testing.T) {
	data, err := os.ReadFile("../../results/plans/llama3-70b-prefill-causal.plan.json.gz")
	require.NoError(t, err)
	p, err := Decode(data)
	require.NoError(t, err)
	require.Equal(t, FormInterleaved, p.OpMapping.Form)
	require.NoError(t, p.Validate())
	assert.Equal(t, p.Workload.Axes+", Ilv=2", p.Program.Axes.String())
	q := *p
	m := *p.OpMapping
	m.Form = "causal_mask"
	q.OpMapping = &m
	assert.ErrorContains(t, q.Validate(), `workload.axes: "G=8, Hkv=8, Sq=2048, Sk=2048", but the program's axes are "G=8, Hkv=8, Sq=2048, Sk=2048, Ilv=2"`)
	q = *p
	q.Workload.Axes = "G=8, Hkv=8, Sq=2048"
	assert.ErrorContains(t, q.Validate(), "workload.axes")
}

// TestOpPlanOneDMA: an op of one DMA (the MoE's dispatch, a scatter,
// results/plans/moe-dispatch.plan.json) computes on no slice and states
// its own reference: a scatter plan claiming slices, or stating another
// reference, is refused.
func TestOpPlanOneDMA(t *testing.T) {
	data, err := os.ReadFile("../../results/plans/moe-dispatch.plan.json")
	require.NoError(t, err)
	p, err := Unmarshal(data)
	require.NoError(t, err)
	assert.Equal(t, "scatter", p.Workload.Kind)
	require.True(t, p.Program.Ops[0].Scatter)
	src := string(data)
	for _, c := range []edit{
		{`"slices": 0`, `"slices": 4`, "op_mapping: a scatter is one DMA"},
		{`"op": "scatter"`, `"op": "gather"`, "program.reference: a scatter's program states its scatter reference"},
	} {
		requireRefused(t, src, c)
	}
}

// edit is a change of a stored plan's text (from → to) and the path its
// refusal names.
type edit struct{ from, to, path string }

// requireRefused fails unless src with e's change made is refused by
// Unmarshal at e's path.
func requireRefused(t *testing.T, src string, e edit) {
	t.Helper()
	bad := strings.Replace(src, e.from, e.to, 1)
	require.NotEqual(t, src, bad, e.from)
	_, err := Unmarshal([]byte(bad))
	require.Error(t, err, "%s → %s", e.from, e.to)
	assert.Contains(t, err.Error(), e.path, "%s → %s", e.from, e.to)
}
