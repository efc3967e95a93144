package search

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
)

// TestSplitsAt: a DMA packet of n elements is a digit boundary of the DM
// tensor's digits (mapping.SplitAt's canonical case), or the outer part
// has no factorized form and the sequencer rejects it (002 L1660-1683).
// The extents are the moe.yaml down_proj's (F = 768 = 3 · 256, BLK = 64);
// n is the largest divisor of the elements within 4096 bytes of bf16
// (002 L2428-2429), computed independently here.
func TestSplitsAt(t *testing.T) {
	largest := func(size int) int { // bf16: 2 bytes an element
		n := size
		for size%n != 0 || 2*n > 4096 {
			n--
		}
		return n
	}
	for _, tc := range []struct {
		ext  []int // major first
		n    int
		want bool
	}{
		{[]int{64, 768}, largest(64 * 768), false},  // [BLK, F] / 2048
		{[]int{32, 768}, largest(32 * 768), false},  // [BLK % 32, F] / 2048
		{[]int{4, 768}, largest(4 * 768), true},     // 1536 = [BLK % 2, F]
		{[]int{2, 768}, largest(2 * 768), true},     // one packet
		{[]int{768, 256}, largest(768 * 256), true}, // [F, D % 256]: F % 8 cut
		{[]int{3, 256}, 512, false},
		{[]int{3, 256}, 256, true},
		{nil, 1, true},
		{[]int{8, 4}, 32, true},
		{[]int{8, 4}, 16, true},
		{[]int{6, 4}, 12, true}, // cuts the 6 into 2 × 3
		{[]int{4, 6}, 4, false},
	} {
		t.Run(fmt.Sprint(tc.ext, tc.n), func(t *testing.T) {
			assert.Equal(t, tc.want, splitsAt(tc.ext, tc.n))
		})
	}
}

// downProj is the moe.yaml down_proj plan the planner proves optimal (F =
// 768 is not a power of two): up in the TRF, W_gathered_down streaming
// packets of D % 32, GRID on 127 slices of both clusters' 2 × 2 D slices,
// BLK tiled 16 times so that up's DM tensor [BLK % 4, F] moves in whole
// digits; downProjBig the same with BLK tiled twice, whose
// up DM tensor [BLK % 32, F] moves in packets of 2048 elements that split
// F's digit (002 L2428-2429, L1660-1683).
var (
	downProj = spec{stationary: 0, content: PacketColumns, acc: AccSequential, mode: Dual,
		factors: map[string]map[Level]int{"D": {Tile: 2, Cluster: 2, Slice: 2, Time: 8, Packet: 32}, "F": {Time: 768},
			"BLK": {Tile: 16, Row: 4}, "GRID": {Tile: 2, Slice: 127}},
		order: []string{"D", "F"}, tiles: []string{"D", "GRID", "BLK"}}
	downProjBig = spec{stationary: 0, content: PacketColumns, acc: AccSequential, mode: Dual,
		factors: map[string]map[Level]int{"D": {Tile: 2, Cluster: 2, Slice: 2, Time: 8, Packet: 32}, "F": {Time: 768},
			"BLK": {Tile: 2, Time: 8, Row: 4}, "GRID": {Tile: 2, Slice: 127}},
		order: []string{"BLK", "D", "F"}, tiles: []string{"D", "GRID", "BLK"}}
)

func downProjSpace(t *testing.T) *Space {
	p, err := NewProblem(workloadFile(t, "moe.yaml"), "down_proj")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	return s
}

// TestPacketsSplitAgreesWithLowering: packetsSplit predicts what the
// lowering does with the moe.yaml down_proj: the candidate whose DM
// tensors move in whole digits lowers and is priced; the one whose up
// tensor does not fails the sequencer's SEQ-R6 (002 L1660-1683).
func TestPacketsSplitAgreesWithLowering(t *testing.T) {
	s := downProjSpace(t)
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)

	good := s.candidate(t, downProj)
	assert.True(t, s.fits(&good, 1))
	assert.True(t, s.packetsSplit(&good))
	x, why := ev.evaluateWhy(0, &good, nil)
	require.NotNil(t, x, "rejected by %s", why)
	assert.Positive(t, x.Report.Cycles)

	big := s.candidate(t, downProjBig)
	assert.True(t, s.fits(&big, 1))
	assert.False(t, s.packetsSplit(&big))
	prog, err := s.Build(&big)
	require.NoError(t, err)
	err = ev.low.lower(prog)
	var v *engines.Violation
	require.True(t, errors.As(err, &v), "lowering error %v", err)
	assert.Equal(t, "SEQ-R6", v.Rule.ID, "%v", err)
}

// TestDownProjTilings: the space holds, for a placement of the moe.yaml
// down_proj whose minimal tilings all move up's DM tensor in packets that
// split F = 768 (the planner found no legal mapping among them), the
// tilings with smaller BLK tiles whose packets are whole digits; among
// them the proven optimum downProj, which is legal.
func TestDownProjTilings(t *testing.T) {
	s := downProjSpace(t)
	want := s.candidate(t, downProj)
	where := func(st Stage, c *Candidate) bool {
		switch st {
		case StageSlices, StageStationary, StagePacket:
			for a := range s.P.Axes {
				for _, l := range []Level{Cluster, Slice, Packet} {
					if (l != Packet || st == StagePacket) && c.factor(a, l) != want.factor(a, l) {
						return false
					}
				}
			}
			return c.Stationary == want.Stationary && (st != StagePacket || c.Content == want.Content && c.Mode == want.Mode && c.Acc == want.Acc)
		case StageRows:
			return c.factor(s.P.axis("BLK"), Row) == 4
		}
		return true
	}
	found, split, unsplit := false, 0, 0
	s.EnumerateWhere(where, func(c Candidate) bool {
		if s.packetsSplit(&c) {
			split++
		} else {
			unsplit++
		}
		found = found || c == want
		return true
	})
	t.Logf("%d candidates whose DMA packets split on digits, %d that do not", split, unsplit)
	assert.True(t, found, "the space lacks %s", want.String(s.P))
	assert.Positive(t, split)
}
