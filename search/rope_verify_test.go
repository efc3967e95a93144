package search_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/search"
	"tcpmap/verify"
)

// TestRoPEPlanVerifies plans the RoPE einsum of the decode layer,
// K_rope4 = einsum(K4, t_rope) (002 L8279-L8283; rope_k of
// workloads/llama3-70b-decode.yaml) at its real size — B 1, Hkv 8, Dkp 64,
// f 2 contracted, the pair 2 — over its whole mapspace, and runs the
// winner through its plan JSON on the functional simulator, which compares
// it with a reference computed from the einsum. f = 2 fills no packet
// (002 L4099): the plan's packet holds output columns with f innermost,
// summed by the tree at depth 1 (002 L4392), and its output, whose pair
// axis is innermost in HBM, is copied into HBM order in DM before the DMA
// (LayoutCopy). Under -short the layer has 2 KV heads (Hkv 2, Hq 16), a
// space of 7992 candidates instead of 58668.
func TestRoPEPlanVerifies(t *testing.T) {
	t.Parallel()
	spec := engines.Default()
	hkv, sizes := 8, map[string]int(nil)
	if testing.Short() {
		hkv, sizes = 2, map[string]int{"Hkv": 2, "Hq": 16}
	}
	w := reducedWorkload(t, "llama3-70b-decode.yaml", sizes)
	p, err := constraints.NewProblem(w, "rope_k")
	require.NoError(t, err)
	s, err := search.NewSpace(p, spec)
	require.NoError(t, err)
	require.True(t, s.PartialReduce())
	require.True(t, s.CopiesOutput())
	start := time.Now()
	res, err := search.Solve(s, search.Options{})
	require.NoError(t, err)
	require.NotNil(t, res.Best, "no legal plan among %d candidates: %+v", res.Stats.Candidates, res.Stats.Rules())
	assert.True(t, res.Proof.Proven, "not proven optimal (gap %.3g)", res.Proof.Gap)
	best := res.Best.Candidate
	fr := -1
	for a, ax := range p.Axes {
		if ax.Name == "Fr" {
			fr = a
		}
	}
	require.GreaterOrEqual(t, fr, 0)
	assert.Equal(t, search.PacketColumns, best.Content)
	assert.Equal(t, int32(2), best.Split[fr][search.Packet], "f summed by the tree")
	t.Logf("planned in %v: %d candidates, %d legal; best %s: %.0f cycles, proven %v",
		time.Since(start).Round(time.Millisecond), res.Stats.Candidates, res.Stats.Legal,
		best.String(p), res.Best.Report.Cycles, res.Proof.Proven)

	pl, err := res.Plan()
	require.NoError(t, err)
	data, err := pl.Marshal()
	require.NoError(t, err)
	back, err := plan.Unmarshal(data)
	require.NoError(t, err)
	require.NotNil(t, back.Program)
	rep, err := verify.Verify(spec, back.Program, verify.Options{Seed: 1})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	assert.Equal(t, hkv*64*2, rep.Compared, "every output element compared")
}
