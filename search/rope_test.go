package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// reducedRoPE is the RoPE einsum of workloads/llama3-70b-decode.yaml
// (002 L8279-L8283: K_rope = einsum(K_new, t_rope), f = 2 contracted, the
// pair axis 2 of the output innermost) at reduced sizes: H for h_kv, D for
// d_k_prime, F for f, T for the rotated pair.
const reducedRoPE = `name: reduced-rope
einsum: HDF,DFT->HDT
axes: {H: 4, D: 16, F: 2, T: 2}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`

// TestBoundsAdmissibleRoPE: on every legal candidate of the reduced RoPE
// space, which holds packets that mix columns with the contracted axis
// and copied outputs, the skeleton bounds and the candidate bound lie at
// or below the cost model's cycles.
func TestBoundsAdmissibleRoPE(t *testing.T) {
	t.Parallel()
	s := newSpace(t, loadWorkload(t, reducedRoPE))
	require.True(t, s.PartialReduce())
	require.True(t, s.CopiesOutput())
	legal, partial, copied := 0, 0, 0
	eachLegal(t, s, func(c *Candidate, x *Evaluated) {
		legal++
		if c.Content == PacketColumns && c.Factor(s.P.AxisIndex("F"), Packet) > 1 {
			partial++
		}
		if c.Layout[TensorOut] == LayoutCopy {
			copied++
		}
		requireBoundsBelow(t, s, c, x.Report.Cycles)
	})
	t.Logf("%d legal candidates, %d with a partly contracted packet, %d with a copied output", legal, partial, copied)
	assert.Positive(t, partial)
	assert.Positive(t, copied)
}

// TestSpacePartialAndCopy: the mixed packets and the output copy are
// enumerated only where they are needed — the RoPE einsums of the Llama
// layers, whose f = 2 fills no packet (002 L4099, L8279-L8283) and whose
// output ends in the pair axis 2 (002 L8283) — and not in the workloads
// whose contracted axes fill a 64-byte packet and whose output's innermost
// axis fills the accumulator's 8-element packet.
func TestSpacePartialAndCopy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, op        string
		partial, copies bool
	}{
		{"llama3-70b-decode.yaml", "rope_k", true, true},
		{"llama3-70b-decode.yaml", "rope_q", true, true},
		{"llama3-70b-prefill.yaml", "rope_k", true, true},
		{"llama3-70b-prefill.yaml", "rope_q", true, true},
		{"llama3-70b-decode.yaml", "q_proj", false, false},
		{"dot.yaml", "", false, false},
		{"gemv.yaml", "", false, false},
		{"gemm.yaml", "", false, false},
		{"bmm.yaml", "", false, false},
		{"attention-head.yaml", "qk", false, false},
		{"attention-head.yaml", "pv", false, false},
	} {
		t.Run(tc.file+"/"+tc.op, func(t *testing.T) {
			p, err := constraints.NewProblem(workloadFile(t, tc.file), tc.op)
			require.NoError(t, err)
			s, err := NewSpace(p, engines.Default())
			require.NoError(t, err)
			assert.Equal(t, tc.partial, s.PartialReduce(), "partial reduction")
			assert.Equal(t, tc.copies, s.CopiesOutput(), "output copy")
		})
	}
}

// ropeK is the plan of rope_k the planner proves optimal: K4 in the TRF
// with h_kv on the clusters and slices, t_rope streaming packets of
// [Dkp % 16, Fr] that the tree sums pairwise, the output copied in HBM
// order.
var ropeK = spec{stationary: 0, content: PacketColumns, acc: AccSequential, mode: Dual,
	factors: map[string]map[Level]int{"Hkv": {Cluster: 2, Slice: 4}, "Dkp": {Time: 4, Packet: 16}, "Fr": {Packet: 2}, "Two": {Time: 2}},
	order:   []string{"Dkp", "Two"}, layout: [NumTensors]Layout{LayoutHBM, LayoutHBM, LayoutCopy}}

// TestBuildPartialReduceAndCopy: the builder writes the mixed packet as
// the manual's partial reduction (the packet's contracted digits
// innermost, contract keeping Packet / 2, 002 L4392, L4455-4470; the TRF
// holding K4 as HBM does, read whole, 002 L4100-4108) and the output copy
// as a fetch → collect → commit chain from the staging tensor into the
// output's HBM order, before the DMA to HBM; the program lowers. Without
// the copy the output's DMA moves one 2-byte element a packet (the pair
// axis is a time digit of the accumulator's output, 002 L4490-4492).
func TestBuildPartialReduceAndCopy(t *testing.T) {
	t.Parallel()
	p, err := constraints.NewProblem(workloadFile(t, "llama3-70b-decode.yaml"), "rope_k")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	c := s.candidate(t, ropeK)
	prog, err := s.Build(&c)
	require.NoError(t, err)
	ex := func(src string) *mapping.Expr { return mapping.MustParse(src, p.Decl, nil) }
	var kinds []string
	for _, op := range prog.Ops {
		kinds = append(kinds, string(op.Context)+" "+string(op.Kind))
	}
	assert.Equal(t, []string{"dma to_dm", "dma to_dm", "sub chain", "main chain", "main chain", "dma to_hbm"}, kinds)
	trf, ok := prog.Tensor("K4_trf")
	require.True(t, ok)
	equivExpr(t, "TRF element", ex("[Dkp, Fr]"), trf.Element)
	main := prog.Ops[3].Stages
	equivExpr(t, "align packet", ex("[Dkp % 16, Fr]"), main[3].Packet)
	require.Equal(t, kernel.StContract, main[4].Kind)
	equivExpr(t, "contract", ex("Dkp % 16"), main[4].Packet)
	assert.Equal(t, "K_rope4_acc", main[len(main)-1].Tensor, "the chain commits to the staging tensor")
	cp := prog.Ops[4].Stages
	assert.Equal(t, "K_rope4_acc", cp[0].Tensor)
	equivExpr(t, "copy fetch time", ex("Dkp / 8"), cp[1].Time)
	equivExpr(t, "copy fetch packet", ex("[Dkp % 8, Two]"), cp[1].Packet)
	assert.Equal(t, "K_rope4_dm", cp[3].Tensor)
	out, ok := prog.Tensor("K_rope4_dm")
	require.True(t, ok)
	equivExpr(t, "output element", ex("[Dkp, Two]"), out.Element)
	assert.Equal(t, "K_rope4_dm", prog.Ops[5].Src)
	require.NoError(t, engines.Lower(engines.Default(), prog))
	run := func(prog *kernel.Program) int {
		d := prog.Ops[len(prog.Ops)-1].DMA
		require.NotNil(t, d)
		require.NotEmpty(t, d.Descriptors)
		return d.Descriptors[0].Stride0
	}
	assert.Equal(t, 64*2*2, run(prog), "the copied output moves a slice's Dkp × Two run")

	c.Layout[TensorOut] = LayoutCompute
	direct, err := s.Build(&c)
	require.NoError(t, err)
	require.Len(t, direct.Ops, 5)
	require.NoError(t, engines.Lower(engines.Default(), direct))
	assert.Equal(t, 2, run(direct), "without the copy the output moves one element a packet")
}

// TestCheckPartialAndCopy: Check takes a contracted axis in a packet of
// columns only where the space reduces partially, and the copy layout only
// for the output.
func TestCheckPartialAndCopy(t *testing.T) {
	t.Parallel()
	p, err := constraints.NewProblem(workloadFile(t, "llama3-70b-decode.yaml"), "rope_k")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	c := s.candidate(t, ropeK)
	c.Layout[TensorIn0] = LayoutCopy
	assert.ErrorContains(t, s.Check(&c), "only the output is copied")

	g := newSpace(t, loadWorkload(t, `name: small-gemm
einsum: IK,KJ->IJ
axes: {I: 4, J: 16, K: 64}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`))
	require.False(t, g.PartialReduce())
	var d Candidate
	for a := range MaxAxes {
		d.Order[a], d.TileOrder[a] = NoAxis, NoAxis
		for l := range NumLevels {
			d.Split[a][l] = 1
		}
	}
	// in0 = IK streams a packet [I % 2, K % 16]: K in a packet of columns.
	d.Stationary, d.Content, d.Mode = 1, PacketColumns, Single
	i, j, k := g.P.AxisIndex("I"), g.P.AxisIndex("J"), g.P.AxisIndex("K")
	d.Split[i][Packet], d.Split[i][Time] = 2, 2
	d.Split[j][Row], d.Split[j][Time] = 8, 2
	d.Split[k][Packet], d.Split[k][Time] = 16, 4
	constraints.SetOrder(&d.Order, []int{i, j, k})
	assert.ErrorContains(t, g.Check(&d), "takes no packet factor")
}

// TestSolveMatchesExhaustiveRoPE: on the reduced RoPE space the SAT
// branch and bound, whose skeletons now place the contracted axis in a
// packet of columns, proves the optimum the exhaustive enumeration finds.
func TestSolveMatchesExhaustiveRoPE(t *testing.T) {
	t.Parallel()
	s := newSpace(t, loadWorkload(t, reducedRoPE))
	ex, _ := requireSolveMatchesExhaustive(t, s)
	assert.Equal(t, LayoutCopy, ex.Best.Candidate.Layout[TensorOut], "the copy wins: %s", ex.Best.Candidate.String(s.P))
}
