package search

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/model/workload"
)

// TestMaxListedIllegal: the decode layer's qk with its scores stored with
// Hkv innermost, a layout class graph planning tries, lists candidates
// that all break FE-R5 (the stationary operand's TRF fetch); with
// MaxListedIllegal the search stops once that many are listed without a
// legal one, says it stopped at its budget (so that graph planning counts
// the class as no choice), and stops at the same count whatever the
// workers, before its evaluation budget would.
func TestMaxListedIllegal(t *testing.T) {
	data, err := os.ReadFile("../workloads/llama3-70b-decode.yaml")
	require.NoError(t, err)
	src := strings.Replace(string(data), "  scores_raw:     {axes: [B, G, Hkv, Sctx], dtype: f32}",
		`  scores_raw:     {axes: [B, G, Hkv, Sctx], dtype: f32, layout: "B, G, Sctx, Hkv"}`, 1)
	require.NotEqual(t, string(data), src, "the scores' line moved")
	w, err := workload.Parse([]byte(src), "llama3-70b-decode.yaml")
	require.NoError(t, err)
	listed := 50_000
	if raceDetector {
		listed = 5_000 // the same stop, a tenth of the listing (12 s of CPU under the detector)
	}
	var counts []int
	for _, workers := range []int{1, 2} {
		res, err := PlanOp(w, "qk", Options{MaxEvaluations: 10_000, MaxListedIllegal: listed, Workers: workers})
		require.NoError(t, err)
		require.Nil(t, res.Plan)
		st := res.Stats
		require.Zero(t, st.Legal)
		require.Equal(t, StoppedBudget, st.Stopped)
		require.GreaterOrEqual(t, st.Candidates, listed)
		require.Less(t, st.Evaluated, 10_000, "stopped by the listing, not the evaluations")
		counts = append(counts, st.Candidates)
	}
	require.Equal(t, counts[0], counts[1], "the same stop for any number of workers")
}
