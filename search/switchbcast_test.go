package search

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/plan"
)

// TestSwitchFetchBroadcastIllegal: the enumerator leaves out a fetch
// broadcast under the switch when the stationary operand's free axes have
// time steps (constraints enumerator.orders), because the engines refuse
// every such candidate. Each switched candidate with its broadcast in the
// Stream Adapter is turned into its fetch form, in its own order and in
// the reverse one, built and lowered: both are refused (some by an
// earlier op's rule first), by the switch
// stage (SW-R3: a digit of an axis the switch's input holds cannot come
// out of the ring as a broadcast) or, where a free axis's time steps sit
// inside the ring's block, by the builder (no block of the fetch Time for
// the ring).
func TestSwitchFetchBroadcastIllegal(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newSpace(t, workloadFile(t, "gemm.yaml"))
	low := newLowerer(s.Spec)
	n, every := 0, sampleEvery()
	if testing.Short() {
		every *= 5
	}
	sw3, noBlock, other := 0, 0, 0
	s.Enumerate(func(c Candidate) bool {
		if !c.Switch || !fwTimed(s, &c) {
			return true
		}
		require.NotEqual(t, constraints.BcastFetch, c.Bcast, "%s: a fetch broadcast under the switch", c.String(s.P))
		if n++; n%every != 0 {
			return true
		}
		ord := c.TimeOrder()
		rev := make([]int, len(ord))
		for i, a := range ord {
			rev[len(ord)-1-i] = a
		}
		for _, o := range [][]int{ord, rev} {
			d := c
			d.Bcast = constraints.BcastFetch
			constraints.SetOrder(&d.Order, o)
			require.NoError(t, s.Check(&d), d.String(s.P))
			p, err := s.Build(&d)
			if err == nil {
				err = low.lower(p)
			}
			require.Error(t, err, d.String(s.P))
			var v *engines.Violation
			switch {
			case errors.As(err, &v) && v.Rule.ID == "SW-R3":
				sw3++
			case strings.Contains(err.Error(), "takes no block of the streamed operand's fetch Time"):
				noBlock++
			default:
				other++ // refused before its switch stage
			}
		}
		return true
	})
	assert.Positive(t, sw3, "no fetch form broke SW-R3")
	assert.Positive(t, noBlock, "no fetch form left the ring without a block")
	t.Logf("fetch forms refused: %d at the switch (SW-R3), %d without a ring block, %d before the switch", sw3, noBlock, other)
}

// fwTimed reports whether one of the stationary operand's free axes has
// time steps under c.
func fwTimed(s *Space, c *Candidate) bool {
	for a := range s.P.Axes {
		if s.Role(a, c.Stationary) == constraints.RoleFW && c.Factor(a, constraints.Time) > 1 {
			return true
		}
	}
	return false
}

// TestSwitchBlockPacketTime: a switched candidate whose ring block cannot
// sit above the streamed operand's innermost HBM axis takes that axis's
// Time digit when its Packet digit stays whole in each slice (runs of the
// packet). The decode layer's qk over the time order G, Dk, Sctx: Q_g's
// ring of 32 slices is G's 8 time steps and Dk's 4 (`Hkv, G, Dk / 32`
// over `Dk % 32`), the plan stored before the block kept Dk's digits
// whole (results/plans/llama3-70b-decode-qk.plan.json); it lowers and
// prices as stored. Without a Packet digit Dk's Time digit stays whole
// and the ring has no block.
func TestSwitchBlockPacketTime(t *testing.T) {
	t.Parallel()
	p, err := constraints.NewProblem(workloadFile(t, "llama3-70b-decode.yaml"), "qk")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	factors := map[string]map[Level]int{"Sctx": {Tile: 2, Slice: 32, Time: 8, Row: 8}, "Hkv": {Slice: 8}, "G": {Time: 8}, "Dk": {Time: 4, Packet: 32}}
	c := s.candidate(t, spec{stationary: 1, factors: factors, order: []string{"G", "Dk", "Sctx"}, tiles: []string{"Sctx"},
		mode: Dual, bcast: constraints.BcastAlign, double: true})
	c.Switch = true
	blk, time0, ok := s.SwitchBlock(&c)
	require.True(t, ok)
	assert.Equal(t, int32(8), blk[p.AxisIndex("G")])
	assert.Equal(t, int32(4), blk[p.AxisIndex("Dk")])
	assert.Equal(t, 1, time0)
	require.NoError(t, s.Check(&c), c.String(s.P))
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	x, why := ev.evaluateWhy(0, &c, nil)
	require.NotNil(t, x, why)
	stored, err := plan.Read("../results/plans/llama3-70b-decode-qk.plan.json")
	require.NoError(t, err)
	assert.InDelta(t, stored.Cost.Cycles, x.Report.Cycles, 0.5)

	d := c
	dk := p.AxisIndex("Dk")
	d.Split[dk][Time], d.Split[dk][Packet] = 128, 1
	_, _, ok = s.SwitchBlock(&d)
	assert.False(t, ok)
}
