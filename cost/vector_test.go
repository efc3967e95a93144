package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestVectorStageCycles: a Vector Engine pass streams one packet per cycle
// in each region, the busiest setting its cycles (Way8 at 8 elements,
// Way4 at 4: "effectively halving throughput" after a split, 002
// L5272-5273, L4847); each ALU adds a cycle of latency (exp(sqrt(x)) adds
// 2, 002 L5274-5277), the reduce holds its first output for the n flits of
// its span (002 L5569-5571). Figures: the golden kernels' chains.
func TestVectorStageCycles(t *testing.T) {
	chain := func(name string, op int) OpCost {
		t.Helper()
		r := evaluate(t, loadGolden(t, name))
		require.Equal(t, kernel.OpChain, r.Ops[op].Kind)
		return r.Ops[op].Cost
	}
	vectorOf := func(oc OpCost) StageCost {
		for _, s := range oc.Stages {
			if s.Engine == EngineVector {
				return s
			}
		}
		t.Fatalf("no vector stage")
		return StageCost{}
	}
	for _, tc := range []struct {
		name           string
		op             int
		cycles, fill   float64
		drain, opTotal float64
	}{
		// One flit: 1 cycle; FxpAdd, FpFpu, ClipMax: 3 cycles of latency.
		{"ve-staged-pipeline", 1, 1, 3, 3, 4},
		// AddF, MulF(Mul0), MulF(Mul1), Sqrt, Exp: 5 ALUs (002 L4905-4906).
		{"ve-five-alu", 1, 1, 5, 5, 6},
		// 512 flits split into 1024 Way4 packets; the reduce tree adds a
		// cycle and holds its output for the 1024 packets of a row.
		{"softmax-decode", 1, 1024, 1 + 1024, 1, 1026},
		// SubF, Exp, then the reduce: 1024 packets, 3 stages of latency.
		{"softmax-decode", 3, 1024, 3 + 1024, 3, 1028},
		// SubF, Exp, FpDiv: the last pass streams at the Way4 rate.
		{"softmax-decode", 5, 1024, 3, 3, 1027},
		// silu: 7 flits per slice, split into 14 Way4 packets, Sigmoid and
		// MulF.
		{"silu-decode", 1, 14, 2, 2, 18},
		// VEC-EX-24: 16 flits reduced in Time (002 L5404-5426).
		{"ve-reduce-time", 1, 16, 1 + 16, 1, 18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oc := chain(tc.name, tc.op)
			v := vectorOf(oc)
			assert.Equal(t, tc.cycles, v.Cycles, "packets")
			assert.Equal(t, tc.fill, v.Fill, "fill")
			assert.Equal(t, tc.drain, v.Drain, "drain")
			assert.Equal(t, tc.opTotal, oc.Cycles, "the chain")
		})
	}
	for _, tc := range []struct {
		k    kernel.StageKind
		c    *kernel.StageConfig
		want VectorStageCost
	}{
		{kernel.StVectorSplit, &kernel.StageConfig{VectorWay: &kernel.VectorWayConfig{Kind: kernel.WaySplit, InPackets: 4, InLanes: 8, OutPackets: 8, OutLanes: 4}}, VectorStageCost{Packets: 8, Out: 8}},
		{kernel.StVectorTrim, &kernel.StageConfig{VectorWay: &kernel.VectorWayConfig{Kind: kernel.WayTrim, InPackets: 4, InLanes: 8, OutPackets: 4, OutLanes: 4}}, VectorStageCost{Packets: 4, Out: 4}},
		{kernel.StVectorFpDiv, &kernel.StageConfig{VectorOp: &kernel.VectorOpConfig{Op: "DivF"}}, VectorStageCost{Latency: 1}},
		{kernel.StVectorStash, &kernel.StageConfig{}, VectorStageCost{}},
		{kernel.StVectorFilter, &kernel.StageConfig{VectorFilter: &kernel.VectorFilterConfig{InPackets: 6, OutPackets: 2}}, VectorStageCost{Packets: 6, Out: 2}},
	} {
		got, err := VectorStage(engines.Default(), tc.k, tc.c)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s", tc.k)
	}
	_, err := VectorStage(engines.Default(), kernel.StVectorReduce, &kernel.StageConfig{})
	assert.Error(t, err, "not lowered")
	_, err = VectorStage(engines.Default(), kernel.StCommit, &kernel.StageConfig{})
	assert.Error(t, err)
}
