package kernel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// K-chunked tile loops (docs/spec-decisions.md "K chunks: the split
// reduce's spelling and buffers", "Emitted Rust: tile loops"): the
// contracted tile loop is the innermost; chunk 0's main chain commits the
// running sum ps1, chunk k ≥ 1's commits ps0 and the split reduce adds it
// into the other running sum (ps2, ps1, ...) or, at the last chunk, casts
// and commits the output tile, which is stored once, after its last chunk.

// bodyText is a body op as the tests name it: context, kind, what it
// produces or stores, level, phase and lead.
func bodyText(b *LoopOp) string {
	out := b.Op.Dst
	if b.Op.Kind == OpChain {
		out = b.Op.Stages[len(b.Op.Stages)-1].Tensor
	}
	s := fmt.Sprintf("%s %s %s L%d %s", b.Op.Context, b.Op.Kind, out, b.Level, b.Phase)
	if b.Lead {
		s += " lead"
	}
	return s
}

// TestRecognizeKChunked: the planner's K-chunked kernels (emit/testdata
// tiledk-*: search.Build of long-k-gemm, IK,KJ->IJ) are tile loops whose
// chains fire at the chunks' phases, with the running sum a slot that
// alternates with the chunk, and they unroll back to their programs.
func TestRecognizeKChunked(t *testing.T) {
	for _, tc := range []struct {
		file   string
		axes   []string
		counts []int
		body   []string
		slots  []string // name: tensors / stride / period
	}{
		// K = 8192 in 2 chunks, one buffer: level 0 is the chunk (the
		// output is one tile). Chunk 0 commits ps1; chunk 1 (the last: at
		// two chunks the rest is the last) commits ps0, the split reduce
		// adds ps0 and ps1, casts and commits out_dm, which is stored
		// whole.
		{"tiledk-k2-single", []string{"K"}, []int{2}, []string{
			"dma to_dm in0_dm L1 first", "dma to_dm in1_dm L1 first", "sub chain in0_trf L1 first",
			"main chain out_ps1 L0 first", "main chain out_ps0 L0 last", "main chain out_dm L0 last", "dma to_hbm out L0 last",
		}, []string{"in0_dm: [in0_dm] / 1 / 0", "in1_dm: [in1_dm] / 1 / 0", "in0_trf: [in0_trf] / 1 / 0",
			"out_dm: [out_dm] / 2 / 0", "out_ps0: [out_ps0] / 2 / 0", "out_ps1: [out_ps1] / 2 / 0"}},
		// 4 chunks, double-buffered (pipelined: the loads and the TRF load
		// of the next chunk lead). The middle chunks' passes alternate the
		// running sum ps1, ps2: with an even chunk count t % 2 is the
		// chunk's parity.
		{"tiledk-k4-double", []string{"K"}, []int{4}, []string{
			"dma to_dm in0_dm L1 first lead", "dma to_dm in1_dm L1 first lead",
			"main chain out_ps1 L0 first", "main chain out_ps0 L0 rest", "main chain out_ps1 L0 middle",
			"sub chain in0_trf L1 first lead", "main chain out_dm L0 last", "dma to_hbm out L0 last",
		}, []string{"in0_dm: [in0_dm0 in0_dm1] / 1 / 0", "in1_dm: [in1_dm0 in1_dm1] / 1 / 0",
			"in0_trf: [in0_trf0 in0_trf1] / 1 / 0", "out_dm: [out_dm0 out_dm1] / 4 / 0", "out_ps0: [out_ps0] / 4 / 0",
			"out_ps1: [out_ps1 out_ps2] / 1 / 0"}},
		// I in 2 output tiles, K in 5 chunks each: the chunks are level 1;
		// with an odd chunk count the running sum's buffer is the chunk's
		// parity within its output tile, t % 5 % 2; each output tile is
		// stored after its last chunk.
		{"tiledk-k5-2tile-double", []string{"I", "K"}, []int{2, 5}, []string{
			"dma to_dm in0_dm L2 first lead", "dma to_dm in1_dm L2 first lead",
			"main chain out_ps1 L1 first", "main chain out_ps0 L1 rest", "main chain out_ps1 L1 middle",
			"main chain out_dm L1 last", "sub chain in0_trf L2 first lead", "dma to_hbm out_t L1 last",
		}, []string{"in0_dm: [in0_dm0 in0_dm1] / 1 / 0", "in1_dm: [in1_dm0 in1_dm1] / 1 / 0",
			"in0_trf: [in0_trf0 in0_trf1] / 1 / 0", "out_dm: [out_dm0 out_dm1] / 5 / 0", "out_ps0: [out_ps0] / 5 / 0",
			"out_ps1: [out_ps1 out_ps2] / 1 / 5"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := loadProgram(t, "../../emit/testdata/"+tc.file+".json")
			l, ok := Recognize(p)
			require.True(t, ok)
			var names []string
			var counts []int
			for _, a := range l.Axes {
				names = append(names, a.Name)
				counts = append(counts, a.Count)
			}
			assert.Equal(t, tc.axes, names)
			assert.Equal(t, tc.counts, counts)
			var body []string
			for _, b := range l.Body {
				body = append(body, bodyText(b))
			}
			assert.Equal(t, tc.body, body)
			var slots []string
			for _, s := range l.Slots {
				var ts []string
				for _, x := range s.Tensors {
					ts = append(ts, x.Name)
				}
				slots = append(slots, fmt.Sprintf("%s: [%s] / %d / %d", s.Name, strings.Join(ts, " "), s.Stride, s.Period))
			}
			assert.Equal(t, tc.slots, slots)
			// The split reduce reads the chunk's ps0 and the running sum.
			for _, b := range l.Body {
				if st := b.Op.Stages; len(st) > 0 && st[0].Kind == StBegin && st[0].Param != "" {
					assert.Equal(t, "out_ps0", st[0].Tensor)
					assert.Equal(t, "Kc, out_ps1", st[0].Param)
				}
			}
			var args []*Tensor
			for _, x := range p.Tensors {
				if x.Mem == HBM && x.Role != Intermediate {
					args = append(args, x)
				}
			}
			ts, ops, err := l.Unroll(args)
			require.NoError(t, err)
			want, err := flatJSON(p.Tensors, p.Ops)
			require.NoError(t, err)
			got, err := flatJSON(ts, ops)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

// TestRecognizeKChunkedNotALoop: a K-chunked program whose chunks break
// the pattern has no loop form.
func TestRecognizeKChunkedNotALoop(t *testing.T) {
	for name, mutate := range map[string]func(p *Program){
		// The third chunk's pass writes the running sum the second's did.
		"running sum": func(p *Program) {
			n := 0
			for _, op := range p.Ops {
				if op.Kind == OpChain && len(op.Stages) > 0 && op.Stages[0].InterleavedTensor() != "" {
					if n++; n == 2 {
						op.Stages[len(op.Stages)-1].Tensor = "out_ps2"
					}
				}
			}
		},
		// A pass reads the running sum before the previous one.
		"interleaved operand": func(p *Program) {
			for _, op := range p.Ops {
				if op.Kind == OpChain && op.Stages[0].InterleavedTensor() == "out_ps2" {
					op.Stages[0].Param = "Kc, out_ps1"
					return
				}
			}
		},
		// The first output tile is stored before its last chunk's pass
		// (the second after it).
		"early store": func(p *Program) {
			last := -1
			for i, op := range p.Ops {
				if op.Kind == OpChain && strings.HasPrefix(op.Stages[len(op.Stages)-1].Tensor, "out_dm") {
					last = i
				}
				if op.Kind == OpToHBM {
					st := op
					copy(p.Ops[last+1:i+1], p.Ops[last:i])
					p.Ops[last] = st
					return
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := loadProgram(t, "../../emit/testdata/tiledk-k5-2tile-double.json")
			mutate(p)
			_, ok := Recognize(p)
			assert.False(t, ok)
		})
	}
}

// TestLoopFires: the tiles each phase of each level fires at, in a loop of
// 2 × 4 tiles (strides 8, 4, 1).
func TestLoopFires(t *testing.T) {
	l := &TileLoop{Axes: []LoopAxis{{Name: "I", Count: 2}, {Name: "K", Count: 4}}}
	for _, tc := range []struct {
		level int
		phase Phase
		want  []int
	}{
		{2, PhaseFirst, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{1, PhaseFirst, []int{0, 4}},
		{1, PhaseRest, []int{1, 2, 3, 5, 6, 7}},
		{1, PhaseMiddle, []int{1, 2, 5, 6}},
		{1, PhaseLast, []int{3, 7}},
		{0, PhaseFirst, []int{0}},
		{0, PhaseLast, []int{7}},
		{0, PhaseMiddle, []int{1, 2, 3, 4, 5, 6}},
	} {
		var got []int
		for tile := range l.Steps() {
			if l.Fires(&LoopOp{Level: tc.level, Phase: tc.phase}, tile) {
				got = append(got, tile)
			}
		}
		assert.Equal(t, tc.want, got, "level %d %s", tc.level, tc.phase)
	}
	assert.Equal(t, "middle", PhaseMiddle.String())
	assert.Equal(t, "phase(9)", Phase(9).String())
}

// TestSlotIndex: a slot's buffer for each tile: a double buffer alternating
// every 4 tiles (t / 4 % 2), and a running sum over 5 chunks per output
// tile (t % 5 % 2: chunks 0, 2, 4 in the first buffer, whatever the tile).
func TestSlotIndex(t *testing.T) {
	two := []*Tensor{{Name: "a"}, {Name: "b"}}
	for _, tc := range []struct {
		slot LoopSlot
		want []int
	}{
		{LoopSlot{Tensors: two, Stride: 4}, []int{0, 0, 0, 0, 1, 1, 1, 1, 0, 0}},
		{LoopSlot{Tensors: two, Stride: 1, Period: 5}, []int{0, 1, 0, 1, 0, 0, 1, 0, 1, 0}},
		{LoopSlot{Tensors: two[:1], Stride: 1}, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		var got []int
		for tile := range 10 {
			got = append(got, tc.slot.Index(tile))
		}
		assert.Equal(t, tc.want, got, "stride %d period %d", tc.slot.Stride, tc.slot.Period)
	}
}

// TestUnrollPhaseErrors: a phase needs tiles inside its level (the last of
// two at least; the middle of three), and a slot of buffers a stride.
func TestUnrollPhaseErrors(t *testing.T) {
	p := loadProgram(t, "../../emit/testdata/tiledk-k5-2tile-double.json")
	var args []*Tensor
	for _, x := range p.Tensors {
		if x.Mem == HBM && x.Role != Intermediate {
			args = append(args, x)
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(l *TileLoop)
		want   string
	}{
		{"last at the innermost level", func(l *TileLoop) { l.Body[5].Level = 2 }, "phase last at level 2, whose tiles are 1"},
		{"unknown phase", func(l *TileLoop) { l.Body[5].Phase = 7 }, "phase phase(7)"},
		{"no stride", func(l *TileLoop) { l.Slots[0].Stride = 0 }, "slot in0_dm: buffer index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := Recognize(p)
			require.True(t, ok)
			tc.mutate(l)
			_, _, err := l.Unroll(args)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSlotTensorName: a slot's buffers' names (the Rust reader's) and the
// slot named after its buffers (Recognize's) are inverse.
func TestSlotTensorName(t *testing.T) {
	for _, tc := range []struct {
		slot  string
		names []string
	}{
		{"in0_dm", []string{"in0_dm0", "in0_dm1"}},
		{"out_ps1", []string{"out_ps1", "out_ps2"}},
		{"out_ps0", []string{"out_ps0"}},
		{"x", []string{"x0", "x1", "x2"}},
		{"a10", []string{"a10", "a11"}},
	} {
		for k, nm := range tc.names {
			assert.Equal(t, nm, SlotTensorName(tc.slot, k, len(tc.names)), "%s %d", tc.slot, k)
		}
		got, ok := slotName(tc.names)
		assert.True(t, ok, tc.slot)
		assert.Equal(t, tc.slot, got)
	}
	for _, bad := range [][]string{{"x1", "x3"}, {"x01", "x02"}, {"0", "1"}, {"x", "y"}, {"a1", "b2"}} {
		_, ok := slotName(bad)
		assert.False(t, ok, "%v", bad)
	}
}

// TestRenameInterleaved: renaming a program renames an interleaved begin's
// second tensor (002 L1866) with the others.
func TestRenameInterleaved(t *testing.T) {
	p := loadProgram(t, "../../emit/testdata/tiledk-k2-single.json")
	q, err := p.Rename(strings.ToUpper)
	require.NoError(t, err)
	n := 0
	for _, op := range q.Ops {
		if op.Kind == OpChain && op.Stages[0].InterleavedTensor() != "" {
			assert.Equal(t, "OUT_PS0", op.Stages[0].Tensor)
			assert.Equal(t, "Kc, OUT_PS1", op.Stages[0].Param)
			n++
		}
	}
	assert.Equal(t, 1, n)
	require.NoError(t, q.Validate())
}

// BenchmarkRecognizeKChunked: finding the loop of the 2-tile, 5-chunk
// double-buffered kernel (50 ops).
func BenchmarkRecognizeKChunked(b *testing.B) {
	p := loadProgram(&testing.T{}, "../../emit/testdata/tiledk-k5-2tile-double.json")
	for b.Loop() {
		if _, ok := Recognize(p); !ok {
			b.Fatal("no loop")
		}
	}
}
