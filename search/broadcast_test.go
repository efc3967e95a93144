package search

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/plan"
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
		{"grid", "where"},   // where(hb, ids [E], -1): a select by branch groups
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

// TestWhereGroups: the where kernel's constant lands where the condition
// is zero (the branch's group One) and its tensor elsewhere (group Zero):
// a kernel adding another constant, or ORing its tensor into the other
// group, fails the comparison with the reference (whose inputs in [−3, 3]
// make a fifth of the conditions zero).
func TestWhereGroups(t *testing.T) {
	if raceDetector {
		t.Skip("the simulator under -race: make test runs it in unit-norace")
	}
	w, err := workload.Load("testdata/ops/broadcast.yaml")
	require.NoError(t, err)
	r, err := PlanOp(w, "grid", Options{})
	require.NoError(t, err)
	for _, mut := range []struct{ from, to string }{
		{"AddFxp, group(-1, GroupId::One)", "AddFxp, group(-2, GroupId::One)"},
		{"GroupId::Zero)", "GroupId::One)"},
	} {
		data, err := r.Plan.Marshal()
		require.NoError(t, err)
		back, err := plan.Unmarshal(data)
		require.NoError(t, err)
		n := 0
		for _, op := range back.Program.Ops {
			for _, st := range op.Stages {
				if strings.Contains(st.Param, mut.from) {
					st.Param, st.Config = strings.Replace(st.Param, mut.from, mut.to, 1), nil
					n++
				}
			}
		}
		require.Positive(t, n, mut.from)
		rep, err := verify.Verify(engines.Default(), back.Program, verify.Options{Seed: 3})
		require.NoError(t, err)
		assert.False(t, rep.Pass, "%s → %s passed", mut.from, mut.to)
	}
}
