package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/results/digest"
	"tcpmap/results/record"
)

// storeOfPlans stores the given stored plans (results/plans) as results
// planned on the embedded hardware spec, with their own cycles times
// scale[i] (1: as planned).
func storeOfPlans(t *testing.T, names []string, scale []float64) *memStore {
	st := newMemStore(t)
	specJSON, err := json.Marshal(engines.Default())
	require.NoError(t, err)
	hw := digest.Bytes(specJSON)
	require.NoError(t, st.PutHardware(hw, specJSON))
	for i, name := range names {
		data, err := os.ReadFile(filepath.Join("..", "..", "results", "plans", name+".plan.json"))
		require.NoError(t, err)
		pl, err := plan.Unmarshal(data)
		require.NoError(t, err)
		z, err := record.Compress(data)
		require.NoError(t, err)
		require.NoError(t, st.Put(&record.Record{
			Key:   record.Key{Workload: digest.Bytes([]byte(name)), HW: hw, Options: "o", Cost: "c"},
			Sweep: "plans", Point: i, Workload: name, Params: map[string]string{"plan": name},
			Status: record.StatusPlanned, Cycles: pl.Cost.Cycles * scale[i], Bottleneck: pl.Cost.Bottleneck, Plan: z,
		}))
	}
	return st
}

func TestRegressStore(t *testing.T) {
	names := []string{"dot", "gemv", "bmm", "gemm"}
	st := storeOfPlans(t, names, []float64{1, 1, 1, 1})
	reg, err := RegressStore(st, record.Filter{}, 0.005)
	require.NoError(t, err)
	require.Len(t, reg.Points, 4)
	assert.Zero(t, reg.Drifted)
	require.NotNil(t, reg.Tau)
	assert.Equal(t, 1.0, *reg.Tau)

	// Stored cycles that the model now orders otherwise: every point
	// drifts and tau falls.
	st = storeOfPlans(t, names, []float64{20, 1, 0.5, 0.1})
	reg, err = RegressStore(st, record.Filter{}, 0.005)
	require.NoError(t, err)
	assert.Equal(t, 3, reg.Drifted)
	require.NotNil(t, reg.Tau)
	assert.Less(t, *reg.Tau, 1.0)
	assert.InDelta(t, -0.95, reg.Points[0].Change, 1e-9)

	one, err := RegressStore(st, record.Filter{Workload: "gemv"}, 0.005)
	require.NoError(t, err)
	assert.Len(t, one.Points, 1)
	assert.Nil(t, one.Tau)
}
