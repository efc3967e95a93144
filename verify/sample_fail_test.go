package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestSampleNeverPassesAFailure (issue 18 §4): a to_hbm descriptor that
// reads the other cluster's DM (a live cluster of the source, so the
// validator cannot tell; DMA-R15 only ties the DMN to the address) FAILs
// with every slice simulated, and with --slices sample:K it must FAIL too,
// whichever slices the seed samples: the output elements a sampled slice
// holds but the kernel copied from elsewhere are flagged, not dropped.
func TestSampleNeverPassesAFailure(t *testing.T) {
	wrong := func(t *testing.T) *kernel.Program {
		p := loadKernelT(t, "testdata/add-two-clusters.json")
		require.NoError(t, engines.Lower(engines.Default(), p))
		op := p.Ops[2]
		require.Equal(t, kernel.OpToHBM, op.Kind)
		for i := range op.DMA.Descriptors {
			if d := &op.DMA.Descriptors[i]; d.Src.Dmn.Cluster == 0 {
				d.Src.Dmn.Cluster = 1 // reads cluster 1's result for cluster 0's elements
				return p
			}
		}
		t.Fatal("no descriptor reads cluster 0")
		return nil
	}
	rep, err := Verify(engines.Default(), wrong(t), Options{Seed: 1})
	require.NoError(t, err)
	require.False(t, rep.Pass, "every slice: %s", rep)

	flagged := 0
	for seed := uint64(1); seed <= 12; seed++ {
		rep, err := Verify(engines.Default(), wrong(t), Options{Seed: seed, Sample: 4})
		if err != nil {
			continue // no element from the sampled slices alone: not a PASS either
		}
		assert.False(t, rep.Pass, "seed %d: sampling turned a FAIL into a PASS:\n%s", seed, rep)
		if rep.Unverified > 0 {
			flagged++
		}
	}
	// Some seed samples a slice of cluster 0 whose elements came from
	// cluster 1: exactly the elements sampling used to drop.
	assert.Positive(t, flagged)

	// The same kernel without the fault passes sampled (no false flag).
	p := loadKernelT(t, "testdata/add-two-clusters.json")
	for seed := uint64(1); seed <= 4; seed++ {
		rep, err := Verify(engines.Default(), p, Options{Seed: seed, Sample: 4})
		require.NoError(t, err)
		assert.True(t, rep.Pass, "seed %d: %s", seed, rep)
		assert.Zero(t, rep.Unverified)
	}
}
