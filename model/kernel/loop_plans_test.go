package kernel_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/plan"
)

// TestRecognizeStoredPlans: every stored plan with tile views (the
// planner's tiled candidates) is a tile loop that unrolls back to its
// program exactly; the double-buffered chunk loops are software-pipelined
// (lead ops load tile t + 1 while tile t computes), and their flat program
// begins with the prologue, the lead ops for tile 0. Under -short the
// compressed plans are left out.
func TestRecognizeStoredPlans(t *testing.T) {
	files, err := filepath.Glob("../../results/plans/*.plan.json")
	require.NoError(t, err)
	if !testing.Short() {
		gz, err := filepath.Glob("../../results/plans/*.plan.json.gz")
		require.NoError(t, err)
		files = append(files, gz...)
	}
	tiled, piped := 0, 0
	for _, f := range files {
		pl, err := plan.Read(f)
		require.NoError(t, err)
		p := pl.Program
		// A tiled program has tile views; a program updating an argument
		// in place (an update_slice: one view of its destination, one
		// DMA) is straight-line.
		views, inPlace := false, false
		for _, x := range p.Tensors {
			views = views || x.View != ""
			inPlace = inPlace || x.InPlace()
		}
		if !views || inPlace {
			continue
		}
		// An op kernel (search/opspace.go) that loads a broadcast input
		// whole, once for every tile, may do so where no TileLoop puts a
		// first-iteration op (the prefill layer's causal mask, its mask
		// between two tiles' leading loads); the emitter refuses it
		// (emit's apiRefusals names which stored plans, and fails when one
		// emits). Where the loop form holds it (the MoE's one-hot
		// positions), the program is checked as any tiled one.
		if pl.OpMapping != nil {
			resident := false
			for _, op := range p.Ops {
				if src, ok := p.Tensor(op.Src); ok && op.Kind == kernel.OpToDM && src.Mem == kernel.HBM && src.View == "" && src.Role == kernel.Input {
					resident = true
				}
			}
			if _, ok := kernel.Recognize(p); resident && !ok {
				continue
			}
		}
		tiled++
		l, ok := kernel.Recognize(p)
		require.True(t, ok, f)
		if l.Pipelined() {
			piped++
			// The prologue: the flat program's first ops are the lead ops
			// for tile 0, in body order.
			k := 0
			for _, b := range l.Body {
				if b.Lead {
					assert.Equal(t, b.Op.Kind, p.Ops[k].Kind, "%s: prologue op %d", f, k)
					k++
				}
			}
		}
		var args []*kernel.Tensor
		for _, x := range p.Tensors {
			if x.Mem == kernel.HBM && x.Role != kernel.Intermediate {
				args = append(args, x)
			}
		}
		ts, ops, err := l.Unroll(args)
		require.NoError(t, err, f)
		want, err := json.Marshal(unlowered(p.Tensors, p.Ops))
		require.NoError(t, err)
		got, err := json.Marshal(unlowered(ts, ops))
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got), f)
	}
	assert.Positive(t, tiled)
	assert.Positive(t, piped, "the double-buffered decode loops are pipelined")
}

// unlowered is a program of the tensors and ops without their lowered
// configurations, which the steps of a loop do not share.
func unlowered(ts []*kernel.Tensor, ops []*kernel.Op) *kernel.Program {
	q := &kernel.Program{Tensors: ts}
	for _, op := range ops {
		o := *op
		o.DMA = nil
		o.Stages = nil
		for _, st := range op.Stages {
			c := *st
			c.Config = nil
			o.Stages = append(o.Stages, &c)
		}
		q.Ops = append(q.Ops, &o)
	}
	return q
}
