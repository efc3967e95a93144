package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/workload"
	"tcpmap/verify"
)

// TestBroadcastOps plans the binary elementwise ops of
// testdata/ops/broadcast.yaml, whose inputs lack some of the output's axes,
// and verifies each plan on the simulator: the fetches read the missing
// axes with stride 0 (002 L1533-1566), so a wrong stride or VRF index
// fails the comparison with the float64 reference, which broadcasts by axis
// name.
func TestBroadcastOps(t *testing.T) {
	if raceDetector {
		t.Skip("the simulator under -race: make test runs it in unit-norace")
	}
	w, err := workload.Load("testdata/ops/broadcast.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		op, kind string
	}{
		{"bias_add", "add"}, // bias [D] over T: a Time broadcast
		{"diff", "sub"},     // [E] − [G]: both inputs broadcast, i32
		{"weight", "mul"},   // einsum T K D, T K -> T K D: a lane broadcast
	} {
		t.Run(tc.op, func(t *testing.T) {
			r, err := PlanOp(w, tc.op, Options{MaxEvaluations: 300})
			require.NoError(t, err)
			require.NotNil(t, r.Plan)
			assert.Equal(t, tc.kind, r.Plan.Workload.Kind)
			assert.Equal(t, tc.op, r.Plan.Workload.Op)
			require.NoError(t, r.Plan.Validate())
			rep, err := verify.Verify(engines.Default(), r.Plan.Program, verify.Options{Seed: 3})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "%s", rep)
		})
	}
}

// TestBroadcastVRF: a broadcast input whose axes hold the stream's packet
// sits in the VRF once per position of its own axes (the bias add's bias:
// D only, not T × D), the VRF operand reading it again along the axis it
// lacks; one that lacks the packet's axis (the MoE weights lack D) is
// held in every lane, a VRF operand not broadcasting over lanes (VE-R15).
func TestBroadcastVRF(t *testing.T) {
	w, err := workload.Load("testdata/ops/broadcast.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		op, vrf string
		compact bool
	}{
		{"bias_add", "bias_vrf", true},
		{"weight", "r_vrf", false},
	} {
		o := findOp(w, tc.op)
		if p := workload.ProductOp(w, o); p != nil {
			o = p
		}
		s, err := newOpSpace(w, o, engines.Default())
		require.NoError(t, err, tc.op)
		c := opCand{Tiles: 1, Clusters: 1, Slices: 64, Form: string(o.Kind)} // T % 4 in a slice
		p, err := s.build(c)
		require.NoError(t, err, tc.op)
		vrf, ok := p.Tensor(tc.vrf)
		require.True(t, ok, tc.op)
		out, ok := p.Tensor(s.out.Name + "_dm")
		require.True(t, ok, tc.op)
		assert.Equal(t, tc.compact, vrf.Element.Size() < out.Element.Size(), "%s: VRF %s against the output's %s", tc.op, vrf.Element, out.Element)
	}
}
