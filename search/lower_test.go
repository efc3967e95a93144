package search

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
)

// TestLowererMatchesLower: the op memo, relocation of tile views' DMA ops
// included, lowers every candidate of a tiled space exactly as
// engines.Lower does on its own: the same descriptors and stage
// configurations, or a failure at the same op under the same rule.
func TestLowererMatchesLower(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded: make test runs it without the race detector in unit-norace")
	}
	t.Parallel()
	s := tiledGEMM(t)
	l := newLowerer(s.Spec)
	require.NotZero(t, l.relocAlign, "the spec's DMA alignments divide the relocation block")
	// A memo bounded at 16 ops, emptied again and again, lowers alike.
	small := newLowerer(s.Spec)
	small.limit = 16
	n, legal := 0, 0
	// Every 7th candidate (every 35th under -short): the memo still sees
	// each op many times.
	every := 7 * sampleEvery()
	s.EnumerateWhere(nil, func(c Candidate) bool {
		if n++; n%every != 0 {
			return true
		}
		p1, err := s.Build(&c)
		if err != nil {
			return true
		}
		p2, err := s.Build(&c)
		require.NoError(t, err)
		p3, err := s.Build(&c)
		require.NoError(t, err)
		err1 := l.lower(p1)
		err2 := engines.Lower(s.Spec, p2)
		require.Equal(t, err1, small.lower(p3))
		require.LessOrEqual(t, len(small.memo), small.limit)
		require.Equal(t, err2 == nil, err1 == nil, "candidate %d: %v / %v", n, err1, err2)
		if err2 != nil {
			var le1, le2 *engines.LowerError
			require.True(t, errors.As(err1, &le1))
			require.True(t, errors.As(err2, &le2))
			assert.Equal(t, le2.Op, le1.Op)
			assert.Equal(t, le2.Stage, le1.Stage)
			var v1, v2 *engines.Violation
			if errors.As(err2, &v2) {
				require.True(t, errors.As(err1, &v1), "%v", err1)
				assert.Equal(t, v2.Rule.ID, v1.Rule.ID)
			}
			return true
		}
		legal++
		for i := range p2.Ops {
			if p2.Ops[i].DMA != nil {
				require.Equal(t, *p2.Ops[i].DMA, *p1.Ops[i].DMA, "candidate %d op %d", n, i)
				require.Equal(t, *p2.Ops[i].DMA, *p3.Ops[i].DMA, "candidate %d op %d", n, i)
			}
			for k := range p2.Ops[i].Stages {
				require.Equal(t, p2.Ops[i].Stages[k].Config, p1.Ops[i].Stages[k].Config, "candidate %d op %d stage %d", n, i, k)
				require.Equal(t, p2.Ops[i].Stages[k].Config, p3.Ops[i].Stages[k].Config, "candidate %d op %d stage %d", n, i, k)
			}
		}
		return true
	})
	require.Positive(t, legal)
	assert.Positive(t, l.relocs, "tile views' DMA ops are relocated")
	t.Logf("%d candidates, %d legal; memo %d hits (%d relocated), %d misses", n, legal, l.hits, l.relocs, l.misses)
}

// TestOpLowererMatchesLower: the op spaces' lowering (opSpace.lower, the
// lowerer with engines.Lower's validation, and engines.Lower itself for
// what the lowerer does not cover) gives every candidate the program
// engines.Lower gives it, or the same error: every op kernel of the decode
// layer, of the attention head (S = T = 256) and of the MoE block at
// reduced sizes (its K = 8 form, every op a kernel), one worker's lowerer
// carried from candidate to candidate as a search's is. Under -short it
// takes every 10th candidate of each space.
func TestOpLowererMatchesLower(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded: make test runs it without the race detector in unit-norace")
	}
	t.Parallel()
	head := residentHead(t)
	moe, _, err := workload.Expand(moeAt(t, "{T: 32, D: 32, F: 32, E: 8, K: 8, BLK: 64, GRID: 12, NB: 8}"))
	require.NoError(t, err)
	spec := engines.Default()
	every := sampleEvery()
	spaces, compared, covered, failed, handed := 0, 0, 0, 0, 0
	for _, w := range []*workload.Workload{workloadFile(t, "llama3-70b-decode.yaml"), head, moe} {
		for _, o := range w.Ops {
			if o.Kind == workload.KindEinsum || o.Kind == workload.KindReshape {
				continue
			}
			s, err := newOpSpace(w, o, spec)
			if err != nil {
				continue // no kernel of its kind at these sizes
			}
			spaces++
			m, err := cost.NewModel(spec)
			require.NoError(t, err)
			// Each candidate as built, and with its first input and its
			// output handed over in DM (their DMAs its handoffs, which the
			// lowerer lowers too).
			type variant struct {
				c      opCand
				handed bool
			}
			var vs []variant
			for i, c := range s.cands {
				if i%every == 0 {
					vs = append(vs, variant{c, false})
				}
				if i%sampleEveryN(3) == 0 {
					vs = append(vs, variant{c, true}) // under -short, every third sampled one
				}
			}
			for _, v := range vs {
				c := v.c
				build := func() (*kernel.Program, error) {
					d := c
					if v.handed && d.Tiles > 1 && len(s.ins) > 0 {
						d.KeepIn, d.KeepOut = s.ins[0].Name, s.out.Name
					}
					p, err := s.build(d)
					if err == nil && v.handed && len(s.ins) > 0 {
						takeHandoffs(p, s.ins[0].Name, kernel.OpToDM)
						takeHandoffs(p, s.out.Name, kernel.OpToHBM)
					}
					return p, err
				}
				p1, err1 := build()
				p2, err2 := build()
				require.Equal(t, err1 == nil, err2 == nil)
				if err1 != nil {
					continue
				}
				if len(p1.Handoff) > 0 {
					handed++
				}
				if err1 = engines.Check(spec, p1); err1 != nil {
					continue
				}
				if lowererCovers(p1) {
					covered++
				}
				err1 = s.lower(p1, m)
				err2 = engines.Lower(spec, p2)
				compared++
				require.Equal(t, err2 == nil, err1 == nil, "%s %s %+v: %v / %v", w.Name, o.Name, c, err1, err2)
				if err2 != nil {
					failed++
					var le1, le2 *engines.LowerError
					if errors.As(err2, &le2) {
						require.True(t, errors.As(err1, &le1), "%s %s: %v", w.Name, o.Name, err1)
						assert.Equal(t, le2.Op, le1.Op)
						assert.Equal(t, le2.Stage, le1.Stage)
					}
					assert.Equal(t, err2.Error(), err1.Error())
					continue
				}
				j1, err := p1.MarshalJSON()
				require.NoError(t, err)
				j2, err := p2.MarshalJSON()
				require.NoError(t, err)
				require.Equal(t, string(j2), string(j1), "%s %s %+v", w.Name, o.Name, c)
			}
		}
	}
	t.Logf("%d op spaces, %d candidates compared (%d refused alike, %d with handoffs), %d lowered by the lowerer", spaces, compared, failed, handed, covered)
	assert.Greater(t, covered, compared/2, "most op kernels are the lowerer's")
	assert.Positive(t, handed, "kernels with handoffs compared")
}
