package search

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
	"tcpmap/verify"
)

// updateSliceYAML is a KV-cache update at reduced sizes (the decode
// layer's kv_update_k, workloads/llama3-70b-decode.yaml: the cache
// [B, Hkv, Sctx, Dk], its last Sctx written).
const updateSliceYAML = `name: kv
chips: 1
axes: {B: 1, Hkv: 2, Sctx: 64, Dk: 128}
tensors:
  cache:     {axes: [B, Hkv, Sctx, Dk], dtype: bf16}
  k_new:     {axes: [B, Hkv, Dk], dtype: bf16}
  cache_new: {axes: [B, Hkv, Sctx, Dk], dtype: bf16}
ops:
  - {name: update, kind: update_slice, inputs: [cache, k_new], outputs: [cache_new], axis: Sctx}
`

// TestPlanOpUpdateSlice: the update is one HBM-to-HBM DMA of the slice
// into the cache's last Sctx, in place; the simulator's cache equals the
// reference everywhere (the rows before it untouched), and there are no
// slices to sample; the roofline counts
// the slice read and written once, not the cache; a DMA into another row
// fails verification; a cache another op reads is not updated in place.
func TestPlanOpUpdateSlice(t *testing.T) {
	w, err := workload.Parse([]byte(updateSliceYAML), "kv.yaml")
	require.NoError(t, err)
	r, err := PlanOp(w, "update", Options{})
	require.NoError(t, err)
	pl := r.Plan
	require.NotNil(t, pl)
	assert.Equal(t, "exhaustive", pl.Search.Optimal)
	assert.Equal(t, 1, pl.Search.Candidates)
	p := pl.Program
	require.Len(t, p.Ops, 1)
	assert.Equal(t, kernel.OpHBMToHBM, p.Ops[0].Kind)
	out, _ := p.Tensor("cache_new")
	assert.True(t, out.InPlace())
	row, _ := p.Tensor(p.Ops[0].Dst)
	assert.Equal(t, "cache", row.View)
	// The last of 64 rows of 128 bf16: 63 · 256 bytes in.
	assert.Equal(t, int64(63*128*2), row.Addr)
	slice := int64(2 * 128 * 2)
	assert.Equal(t, slice, r.Report.Roofline.MinReadBytes)
	assert.Equal(t, slice, r.Report.Roofline.MinWriteBytes)
	assert.Equal(t, 2*slice, r.Report.Roofline.HBMBytes, "the DMA moves the slice once each way")

	rep, err := verify.Verify(engines.Default(), p, verify.Options{Seed: 3})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	assert.Equal(t, 2*64*128, rep.Compared, "the whole cache is compared")
	_, err = verify.Verify(engines.Default(), p, verify.Options{Seed: 3, Sample: 8})
	assert.ErrorContains(t, err, "on no slice: there are no slices to sample", "no slice computes: nothing to sample")

	// The slice written one row early: the cache's last row keeps its old
	// values and row 62 is overwritten.
	s, err := newOpSpace(w, w.Ops[0], engines.Default())
	require.NoError(t, err)
	bp, err := s.build(s.cands[0]) // not yet lowered
	require.NoError(t, err)
	dst, _ := bp.Tensor(bp.Ops[0].Dst)
	dst.Addr -= 128 * 2
	rep, err = verify.Verify(engines.Default(), bp, verify.Options{Seed: 3})
	require.NoError(t, err)
	assert.False(t, rep.Pass, "a DMA into another row must fail")

	// Another reader of the cache: not updated in place.
	two := strings.Replace(updateSliceYAML, "ops:\n", "  copy: {axes: [B, Hkv, Sctx, Dk], dtype: bf16}\nops:\n  - {name: keep, kind: copy, inputs: [cache], outputs: [copy]}\n", 1)
	w2, err := workload.Parse([]byte(two), "kv2.yaml")
	require.NoError(t, err)
	_, err = PlanOp(w2, "update", Options{})
	require.ErrorIs(t, err, ErrNoKernel)
	assert.ErrorContains(t, err, "kv2.yaml:")
	assert.ErrorContains(t, err, "is also read by op keep")
}

// opWorkersYAML is a small softmax whose space has a few dozen candidates.
const opWorkersYAML = `name: sm
chips: 1
axes: {R: 16, C: 64}
tensors:
  x: {axes: [R, C], dtype: f32}
  y: {axes: [R, C], dtype: f32}
ops:
  - {name: softmax, kind: softmax, inputs: [x], outputs: [y], axis: C}
`

// TestPlanOpWorkersDeterministic: an op's candidates priced by several
// workers give the plan and the statistics one worker gives, whole and
// stopped by an evaluation budget (the first candidates of the space).
func TestPlanOpWorkersDeterministic(t *testing.T) {
	w, err := workload.Parse([]byte(opWorkersYAML), "sm.yaml")
	require.NoError(t, err)
	for _, budget := range []int{0, 7} {
		var want []byte
		for _, n := range []int{1, 3} {
			r, err := PlanOp(w, "softmax", Options{Workers: n, MaxEvaluations: budget})
			require.NoError(t, err)
			require.NotNil(t, r.Plan)
			if budget > 0 {
				assert.Equal(t, budget, r.Plan.Search.Candidates)
				assert.Equal(t, StoppedBudget, r.Plan.Search.Stopped)
			}
			data, err := r.Plan.Marshal()
			require.NoError(t, err)
			if want == nil {
				want = data
				continue
			}
			assert.Equal(t, string(want), string(data), "budget %d, %d workers", budget, n)
		}
	}
}
