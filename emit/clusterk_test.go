package emit

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustread"
	"tcpmap/model/kernel"
)

// clusterKLibrary is a cluster-split kernel planned for the libraries
// (search TestClusterKLibraryRoute writes it): its cluster reduce
// exchanges the partial sums through HBM.
const clusterKLibrary = "clusterk-library"

// TestRustClusterReduceLibrary: the libraries' route of the cluster reduce
// emits in both APIs (DmTensor::to_hbm into the HBM tensor, then
// HbmTensor::to_dm under the other Cluster mapping) and reads back as the
// same program; the manual's route, one DM-to-DM DMA between the
// clusters, is refused in both with the reason (docs/spec-decisions.md
// "Cluster reduce").
func TestRustClusterReduceLibrary(t *testing.T) {
	p, err := rustread.ReadFile(filepath.Join("testdata", clusterKLibrary+".json"))
	require.NoError(t, err)
	for _, api := range []API{Visa01, Opt06} {
		src, err := Rust(p, RustOptions{API: api, Version: "test"})
		require.NoError(t, err, api)
		assert.Contains(t, string(src), "out_cp.to_hbm(", api)
		assert.Contains(t, string(src), "out_cx.to_dm(", api)
		back, err := rustread.Read("clusterk.rs", src)
		require.NoError(t, err, api)
		assert.Len(t, back.Ops, len(p.Ops), api)
	}
	// The same exchange as one DMA between the clusters' DMs.
	q := *p
	q.Ops, q.Tensors = nil, nil
	for _, t := range p.Tensors {
		if t.Name != "out_cx" {
			q.Tensors = append(q.Tensors, t)
		}
	}
	for _, op := range p.Ops {
		switch {
		case op.Kind == kernel.OpToHBM && op.Dst == "out_cx":
			q.Ops = append(q.Ops, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpDMToDM, Src: op.Src, Dst: "out_cq"})
		case op.Kind == kernel.OpToDM && op.Src == "out_cx":
		default:
			q.Ops = append(q.Ops, op)
		}
	}
	for _, api := range []API{Visa01, Opt06} {
		_, err := Rust(&q, RustOptions{API: api, Version: "test"})
		require.Error(t, err, api)
		assert.True(t, strings.Contains(err.Error(), clusterDMA), "%s: %v", api, err)
	}
}
