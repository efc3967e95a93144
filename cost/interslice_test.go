package cost

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestInterSliceTail: the ring tail is one cycle per slice of the group,
// 256 for a whole cluster as the full tensor reduction states (002 L4369,
// L4375; docs/spec-decisions.md "Inter-slice reduction tail").
func TestInterSliceTail(t *testing.T) {
	spec := engines.Default()
	for _, tc := range []struct {
		ratio int
		want  float64
	}{{256, 256}, {4, 4}, {2, 2}} {
		got, err := interSliceTail(spec, &kernel.InterSliceReduceConfig{Ratio: tc.ratio})
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "r = %d", tc.ratio)
	}
	_, err := interSliceTail(spec, &kernel.InterSliceReduceConfig{Ratio: 512})
	assert.Error(t, err, "beyond a cluster (002 L6736)")
	_, err = interSliceTail(spec, nil)
	assert.Error(t, err)
}

// vectorStage returns the Vector Engine's stage cost of an op.
func vectorStage(t *testing.T, o OpReport) StageCost {
	t.Helper()
	for _, s := range o.Cost.Stages {
		if s.Engine == EngineVector {
			return s
		}
	}
	t.Fatal("no vector stage")
	return StageCost{}
}

// TestInterSliceChainCost prices the inter-slice kernels: the Vector
// Engine streams one packet per cycle (002 L7247) and pays the group's
// ring tail before its first output and after its last input ("input
// streaming time + that ring-sized tail", 002 L6741-6742): the chain
// takes the tail longer than the same stream without it.
func TestInterSliceChainCost(t *testing.T) {
	for _, tc := range []struct {
		name         string
		op           int
		packets, r   float64
		bottleneckVE bool
	}{
		// XSR-EX-2: one packet per slice, groups of 4 (002 L6661-6672).
		{"xsr-broadcast", 1, 1, 4, true},
		// XSR-EX-3: 16 packets in (T0, T2, T1), groups of 4 (002 L6681-6693).
		{"xsr-promotion", 1, 16, 4, true},
		// The split-K GEMV: the Reducer's one beat per slice, groups of 4.
		{"splitk-gemv", 3, 1, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadGolden(t, tc.name)
			r := evaluate(t, p)
			o := r.Ops[tc.op]
			require.Equal(t, kernel.CtxMain, o.Context)
			v := vectorStage(t, o)
			assert.Equal(t, tc.packets, v.Cycles, "one packet per cycle")
			assert.Equal(t, tc.packets+tc.r, v.Span, "stream + tail")
			assert.Equal(t, tc.r, v.Fill, "first output after the tail")
			assert.Equal(t, tc.r, v.Drain, "last output the tail after the last input")
			// The same chain without the tail.
			stages := append([]StageCost(nil), o.Cost.Stages...)
			for i := range stages {
				if stages[i].Engine == EngineVector {
					stages[i].Span -= tc.r
					stages[i].Fill -= tc.r
					stages[i].Drain -= tc.r
				}
			}
			without, _ := compose(stages)
			assert.Equal(t, without+tc.r, o.Cost.Cycles)
		})
	}
}

// TestSplitKReducerDominates: when the contraction streams longer than
// the Vector Engine, the chain is the contraction's span plus the tail
// after it ("Contraction -> Inter-Slice: if contraction takes longer to
// produce partial sums, contraction can dominate", 002 L6751): the
// split-K GEMV's fetch of 16 packets per slice sets the pace, the tail of
// 4 drains after.
func TestSplitKReducerDominates(t *testing.T) {
	r := evaluate(t, loadGolden(t, "splitk-gemv"))
	o := r.Ops[3]
	var fetch StageCost
	for _, s := range o.Cost.Stages {
		if s.Engine == EngineFetch {
			fetch = s
		}
	}
	assert.Equal(t, 16.0, fetch.Cycles, "512 bf16 per slice, 64 bytes a cycle in dual channel mode (002 L2127)")
	assert.Greater(t, o.Cost.Cycles, fetch.Span+4-1e-9, "the tail drains after the fetch-bound stream")
}

// TestInterleavedFetchCost: an interleaved fetch reads both tensors, "~1
// cycle per 32-byte flit" each (002 L7242-7245): the manual's
// fetch_interleaved (002 L1858-1867) of two 512 × 32 i8 tensors takes
// 2 × 512 cycles.
func TestInterleavedFetchCost(t *testing.T) {
	b, err := os.ReadFile("../verify/testdata/interleaved-fetch.json")
	require.NoError(t, err)
	var p kernel.Program
	require.NoError(t, json.Unmarshal(b, &p))
	require.NoError(t, engines.Lower(engines.Default(), &p))
	r := evaluate(t, &p)
	var fetch StageCost
	for _, s := range r.Ops[2].Cost.Stages {
		if s.Engine == EngineFetch {
			fetch = s
		}
	}
	assert.Equal(t, 2*512.0, fetch.Cycles)
}
