package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
)

// downProj is a moe.yaml down_proj mapping (F = 768 is not a power of
// two): up in the TRF, W_gathered_down streaming packets of D % 32, GRID
// on 127 slices of both clusters' 2 × 2 D slices, BLK tiled 16 times so
// that up's DM tensor [BLK % 4, F] (3072 elements) moves in packets of
// whole F digits; downProjBig the same with BLK tiled twice, whose up DM
// tensor [BLK % 32, F] is longer than a 4096-byte packet (002
// L2428-2429) and cut where 2048 elements would split F's digit.
var (
	downProj = spec{stationary: 0, content: PacketColumns, acc: AccSequential, mode: Dual,
		factors: map[string]map[Level]int{"D": {Tile: 2, Cluster: 2, Slice: 2, Time: 8, Packet: 32}, "F": {Time: 768},
			"BLK": {Tile: 16, Row: 4}, "GRID": {Tile: 2, Slice: 128}},
		order: []string{"D", "F"}, tiles: []string{"D", "GRID", "BLK"}}
	downProjBig = spec{stationary: 0, content: PacketColumns, acc: AccSequential, mode: Dual,
		factors: map[string]map[Level]int{"D": {Tile: 2, Cluster: 2, Slice: 2, Time: 8, Packet: 32}, "F": {Time: 768},
			"BLK": {Tile: 2, Time: 8, Row: 4}, "GRID": {Tile: 2, Slice: 128}},
		order: []string{"BLK", "D", "F"}, tiles: []string{"D", "GRID", "BLK"}}
)

func downProjSpace(t *testing.T) *Space {
	p, err := constraints.NewProblem(workloadFile(t, "moe.yaml"), "down_proj")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	return s
}

// TestDownProjPackets: the moe.yaml down_proj candidates whose up DM
// tensor moves in packets of whole digits and in packets cut from a run
// longer than 4096 bytes both lower and are priced: the lowering cuts
// [BLK % 32, F] at 1536 elements ([BLK % 2, F]), not at 2048 where the
// outer part would have no factorized form (002 L2428-2429, L1660-1683:
// SEQ-R6), and the cost model walks the descriptor's 4096-byte packets
// across BLK and F, contiguous on both sides (002 L2593).
func TestDownProjPackets(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := downProjSpace(t)
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	for _, sp := range []spec{downProj, downProjBig} {
		c := s.candidate(t, sp)
		require.True(t, s.Fits(&c, 1))
		x, why := ev.evaluateWhy(0, &c, nil)
		require.NotNil(t, x, "%s rejected by %s", c.String(s.P), why)
		assert.Positive(t, x.Report.Cycles)
	}
}

// TestDownProjPlan: the space of downProj's placements (untiled when it
// fits, else minimal tilings) holds downProjBig, whose up packets are cut
// from a longer run, and the planner finds a legal plan there no slower
// than downProj, whose 16 BLK tiles only add transfers. A whole-size
// search: it runs without -short (`make test-long`).
func TestDownProjPlan(t *testing.T) {
	t.Parallel()
	longOnly(t)
	s := downProjSpace(t)
	want := s.candidate(t, downProj)
	Where := func(st Stage, c *Candidate) bool {
		switch st {
		case StageSlices, StageStationary, StagePacket:
			for a := range s.P.Axes {
				for _, l := range []Level{Cluster, Slice, Packet} {
					if (l != Packet || st == StagePacket) && c.Factor(a, l) != want.Factor(a, l) {
						return false
					}
				}
			}
			return c.Stationary == want.Stationary && (st != StagePacket || c.Content == want.Content && c.Mode == want.Mode && c.Acc == want.Acc)
		}
		return true
	}
	big, found := s.candidate(t, downProjBig), false
	s.EnumerateWhere(Where, func(c Candidate) bool {
		found = found || c == big
		return !found
	})
	assert.True(t, found, "the space lacks %s", big.String(s.P))
	r, err := Solve(s, Options{Where: Where})
	require.NoError(t, err)
	require.NotNil(t, r.Best)
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	x, why := ev.evaluateWhy(0, &want, nil)
	require.NotNil(t, x, "rejected by %s", why)
	assert.LessOrEqual(t, r.Best.Report.Cycles, x.Report.Cycles)
	t.Logf("%s: %.0f cycles (downProj %.0f); %d candidates, %d legal", r.Best.Candidate.String(s.P),
		r.Best.Report.Cycles, x.Report.Cycles, r.Stats.Candidates, r.Stats.Legal)
}
