package search

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/workload"
)

// loadWorkload parses a workload file's text.
func loadWorkload(t testing.TB, src string) *workload.Workload {
	t.Helper()
	w, err := workload.Parse([]byte(src), "test.yaml")
	require.NoError(t, err)
	return w
}

// workloadFile loads a shipped workload.
func workloadFile(t testing.TB, name string) *workload.Workload {
	t.Helper()
	w, err := workload.Load("../workloads/" + name)
	require.NoError(t, err)
	return w
}

// newSpace returns w's mapspace without split-K candidates and without K
// chunks: the tests of other properties keep their spaces (and run times)
// as they were; the split-K tests (splitk_test.go) use newSplitSpace, the
// K-chunk tests (tilek_test.go) newTileKSpace.
func newSpace(t testing.TB, w *workload.Workload) *Space {
	t.Helper()
	return newSplitSpace(t, w).WithSplitK(false).WithTileK(false).WithClusterK(false).WithRowsOuter(false).WithDealsOut(false).WithClustersInner(false)
}

// newRowsOuterSpace is newSpace with both orders of a stationary free
// axis's Row and Time digits (Space.RowsOuter).
func newRowsOuterSpace(t testing.TB, w *workload.Workload) *Space {
	t.Helper()
	return newSplitSpace(t, w).WithSplitK(false).WithTileK(false).WithClusterK(false).WithDealsOut(false).WithClustersInner(false)
}

// newDealtOutSpace is newSpace with both orders of an output axis's
// Slice and Time digits (Space.DealsOut).
func newDealtOutSpace(t testing.TB, w *workload.Workload) *Space {
	t.Helper()
	return newSplitSpace(t, w).WithSplitK(false).WithTileK(false).WithClusterK(false).WithRowsOuter(false).WithClustersInner(false)
}

// newTileKSpace returns w's mapspace with K chunks (Space.TileK) and
// without split-K candidates across slices or clusters.
func newTileKSpace(t testing.TB, w *workload.Workload) *Space {
	t.Helper()
	return newSplitSpace(t, w).WithSplitK(false).WithClusterK(false).WithRowsOuter(false).WithDealsOut(false).WithClustersInner(false)
}

// newClusterKSpace returns w's mapspace with contracted axes split across
// the clusters (Space.ClusterK) and K chunks, without split-K across
// slices.
func newClusterKSpace(t testing.TB, w *workload.Workload) *Space {
	t.Helper()
	return newSplitSpace(t, w).WithSplitK(false).WithRowsOuter(false).WithDealsOut(false).WithClustersInner(false)
}

// newClustersInnerSpace is newSpace with both orders of an axis's Cluster
// and Slice digits (Space.ClustersInner).
func newClustersInnerSpace(t testing.TB, w *workload.Workload) *Space {
	t.Helper()
	return newSplitSpace(t, w).WithSplitK(false).WithTileK(false).WithClusterK(false).WithRowsOuter(false).WithDealsOut(false)
}

// newSplitSpace returns w's whole mapspace, split-K candidates (across
// slices and clusters) and K chunks included (Space.SplitK,
// Space.ClusterK, Space.TileK).
func newSplitSpace(t testing.TB, w *workload.Workload) *Space {
	t.Helper()
	p, err := constraints.NewProblem(w, "")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	return s
}

// spec writes a candidate by hand: factors per axis name and level, the
// time order by axis names.
type spec struct {
	stationary uint8
	content    PacketContent
	acc        Accumulation
	factors    map[string]map[Level]int
	order      []string
	tiles      []string
	mode       PacketMode
	bcast      Broadcast
	layout     [NumTensors]Layout
	double     bool
}

// named prints a candidate with its space's axis names. As a failure
// message's argument it costs nothing until a check fails: checks run on
// every candidate of a space format none.
type named struct {
	s *Space
	c *Candidate
}

func (n named) String() string { return n.c.String(n.s.P) }

func (s *Space) candidate(t testing.TB, sp spec) Candidate {
	t.Helper()
	var c Candidate
	c.Stationary, c.Mode, c.Bcast, c.Layout, c.DoubleBuffer = sp.stationary, sp.mode, sp.bcast, sp.layout, sp.double
	c.Content, c.Acc = sp.content, sp.acc
	for a := range MaxAxes {
		c.Order[a], c.TileOrder[a] = NoAxis, NoAxis
		if a < len(s.P.Axes) {
			for l := range NumLevels {
				c.Split[a][l] = 1
			}
		}
	}
	for name, fs := range sp.factors {
		a := s.P.AxisIndex(name)
		require.GreaterOrEqual(t, a, 0, name)
		for l, f := range fs {
			c.Split[a][l] = int32(f)
		}
	}
	for i, name := range sp.order {
		c.Order[i] = uint8(s.P.AxisIndex(name))
	}
	for i, name := range sp.tiles {
		c.TileOrder[i] = uint8(s.P.AxisIndex(name))
	}
	require.NoError(t, s.Check(&c))
	return c
}

// The manual's hand-written contractions as candidates (002 L307-525, with
// the decisions of docs/spec-decisions.md the golden kernels follow).
var (
	// Hello dot product, 002 L315-362: rhs in the TRF, A = [A / 32 Time,
	// A % 32 Packet], two 32-byte flits per packet.
	helloDot = spec{stationary: 1,
		factors: map[string]map[Level]int{"A": {Time: 64, Packet: 32}},
		order:   []string{"A"}, mode: Single}
	// Hello GEMV, 002 L410-463: the vector in the TRF, Slice = I (256),
	// J = [J / 32 Time, J % 32 Packet] in one 64-byte flit.
	helloGEMV = spec{stationary: 1,
		factors: map[string]map[Level]int{"I": {Slice: 256}, "J": {Time: 64, Packet: 32}},
		order:   []string{"J"}, mode: Dual}
	// Hello GEMM, 002 L479-521 with K = 1024 and B in HBM as [J, K]
	// (docs/spec-decisions.md "Hello GEMM TRF over-capacity", "Hello GEMM
	// golden kernel"): Slice = [I / 32, J / 32], Row = J % 8, Time =
	// [I % 32, J / 8 % 4, K / 32], Packet = K % 32, A re-fetched per J group.
	helloGEMM = spec{stationary: 1,
		factors: map[string]map[Level]int{
			"I": {Slice: 16, Time: 32},
			"J": {Slice: 16, Time: 4, Row: 8},
			"K": {Time: 32, Packet: 32}},
		order: []string{"I", "J", "K"}, mode: Single, bcast: BcastFetch}
)

const helloGEMMWorkload = `name: hello-gemm
einsum: IK,JK->IJ
axes: {I: 512, J: 512, K: 1024}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`

func loadKernelFile(t testing.TB, name string) *kernel.Program {
	t.Helper()
	data, err := os.ReadFile("../workloads/kernels/" + name + ".json")
	require.NoError(t, err)
	var p kernel.Program
	require.NoError(t, json.Unmarshal(data, &p))
	return &p
}

// renamer maps the builder's tensor names to a golden kernel's.
func renamer(names map[string]string) func(string) string {
	return func(s string) string {
		for from, to := range names {
			if s == from {
				return to
			}
			if strings.HasPrefix(s, from+"_") {
				return to + s[len(from):]
			}
		}
		return s
	}
}

func equivExpr(t *testing.T, what string, want, got *mapping.Expr) {
	t.Helper()
	if want == nil || got == nil {
		assert.True(t, want == nil && got == nil, "%s: want %v, got %v", what, want, got)
		return
	}
	ok, at := mapping.Equiv(want, got)
	assert.True(t, ok, "%s: want m![%s], got m![%s] (first difference at %d)", what, want, got, at)
}

// samePrograms compares two kernel programs modulo tensor names: the same
// tensors in the same order with equivalent mappings (mapping.Equiv), the
// same ops and stages.
func samePrograms(t *testing.T, want, got *kernel.Program, rename func(string) string) {
	t.Helper()
	assert.Equal(t, want.Axes.String(), got.Axes.String(), "axes")
	assert.Equal(t, want.Chips, got.Chips, "chips")
	require.Len(t, got.Tensors, len(want.Tensors), "tensors")
	for i, w := range want.Tensors {
		g := got.Tensors[i]
		at := "tensor " + w.Name
		assert.Equal(t, w.Name, rename(g.Name), at)
		assert.Equal(t, w.Mem, g.Mem, at)
		assert.Equal(t, w.DType, g.DType, at)
		assert.Equal(t, w.Role, g.Role, at)
		assert.Equal(t, w.Addr, g.Addr, at+" addr")
		assert.Equal(t, w.TrfAddress, g.TrfAddress, at)
		equivExpr(t, at+" chip", w.Chip, g.Chip)
		equivExpr(t, at+" cluster", w.Cluster, g.Cluster)
		equivExpr(t, at+" slice", w.Slice, g.Slice)
		equivExpr(t, at+" row", w.Row, g.Row)
		equivExpr(t, at+" element", w.Element, g.Element)
	}
	require.Len(t, got.Ops, len(want.Ops), "ops")
	for i, w := range want.Ops {
		g := got.Ops[i]
		assert.Equal(t, w.Kind, g.Kind, "ops[%d]", i)
		assert.Equal(t, w.Context, g.Context, "ops[%d]", i)
		assert.Equal(t, w.Src, rename(g.Src), "ops[%d] src", i)
		assert.Equal(t, w.Dst, rename(g.Dst), "ops[%d] dst", i)
		require.Len(t, g.Stages, len(w.Stages), "ops[%d] stages", i)
		for k, ws := range w.Stages {
			gs := g.Stages[k]
			at := "ops[" + string(rune('0'+i)) + "].stages[" + string(rune('0'+k)) + "] " + string(ws.Kind)
			assert.Equal(t, ws.Kind, gs.Kind, at)
			assert.Equal(t, ws.Tensor, rename(gs.Tensor), at)
			assert.Equal(t, ws.DType, gs.DType, at)
			assert.Equal(t, ws.Param, gs.Param, at)
			equivExpr(t, at+" time", ws.Time, gs.Time)
			equivExpr(t, at+" packet", ws.Packet, gs.Packet)
			equivExpr(t, at+" slice", ws.Slice, gs.Slice)
		}
	}
	require.NotNil(t, got.Reference)
	assert.Equal(t, want.Reference.Op, got.Reference.Op)
	var ins []string
	for _, n := range got.Reference.Inputs {
		ins = append(ins, rename(n))
	}
	assert.Equal(t, want.Reference.Inputs, ins)
	assert.Equal(t, want.Reference.Output, rename(got.Reference.Output))
}

// TestBuildHelloKernels: the manual's own mappings, written as candidates,
// build the golden kernel programs (workloads/kernels/hello-*.json) modulo
// tensor names, and those programs lower.
func TestBuildHelloKernels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		workload *workload.Workload
		sp       spec
		rename   map[string]string
	}{
		{"hello-dot", workloadFile(t, "dot.yaml"), helloDot, map[string]string{"in0": "lhs", "in1": "rhs"}},
		{"hello-gemv", workloadFile(t, "gemv.yaml"), helloGEMV, map[string]string{"in0": "matrix", "in1": "vector"}},
		{"hello-gemm", loadWorkload(t, helloGEMMWorkload), helloGEMM, map[string]string{"in0": "a", "in1": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSpace(t, tc.workload)
			c := s.candidate(t, tc.sp)
			got, err := s.Build(&c)
			require.NoError(t, err)
			want := loadKernelFile(t, tc.name)
			samePrograms(t, want, got, renamer(tc.rename))
			require.NoError(t, engines.Lower(engines.Default(), got))
		})
	}
}

// TestBuildDMCapacity: tensors that overflow one slice's DM are the
// builder's PLAN-DM violation (002 L138).
func TestBuildDMCapacity(t *testing.T) {
	t.Parallel()
	s := newSpace(t, workloadFile(t, "gemm.yaml"))
	// Everything on one slice: A alone is 512 × 2048 × 2 = 2 MB.
	c := s.candidate(t, spec{stationary: 1,
		factors: map[string]map[Level]int{"I": {Time: 512}, "J": {Time: 64, Row: 8}, "K": {Time: 64, Packet: 32}},
		order:   []string{"I", "J", "K"}})
	_, err := s.Build(&c)
	var v *engines.Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "PLAN-DM", v.Rule.ID)
}

// TestBuildTiled: a tiled candidate repeats the program per tile over HBM
// tile views (`tile::<m![I / 32], 1, _>(t)`, 002 L813-831): the streamed
// matrix moves once per tile into alternating DM buffers, the vector (which
// lacks the tiled axis) moves and loads the TRF once into one buffer and
// the whole TRF, each tile's result goes back through its own view, and
// the program lowers. Double-buffered, the tiles are software-pipelined:
// the second tile's load is issued before the first tile's main chain,
// the first tile's store after it (002 L7058-7068, L7087).
func TestBuildTiled(t *testing.T) {
	t.Parallel()
	s := newSpace(t, loadWorkload(t, tinyGEMV))
	c := s.candidate(t, spec{stationary: 1,
		factors: map[string]map[Level]int{"I": {Tile: 2, Slice: 32}, "J": {Time: 8, Packet: 32}},
		order:   []string{"J"}, tiles: []string{"I"}, mode: Dual, double: true})
	p, err := s.Build(&c)
	require.NoError(t, err)
	var kinds []string
	for _, op := range p.Ops {
		kinds = append(kinds, string(op.Kind)+" "+op.Src+">"+op.Dst)
	}
	assert.Equal(t, []string{
		"to_dm in0_t0>in0_dm0", "to_dm in1>in1_dm", "chain >", "to_dm in0_t1>in0_dm1", "chain >",
		"to_hbm out_dm0>out_t0", "chain >", "to_hbm out_dm1>out_t1",
	}, kinds)
	// The second tile's views sit one tile further: 32 rows of 256 bf16.
	t0, _ := p.Tensor("in0_t0")
	t1, _ := p.Tensor("in0_t1")
	assert.Equal(t, int64(32*256*2), t1.Addr-t0.Addr)
	want, err := mapping.TileView(s.P.In[0].Layout, mapping.MustParse("I / 32", s.P.Decl, nil), 1, mapping.Top)
	require.NoError(t, err)
	equivExpr(t, "view", want, t1.Element)
	o1, _ := p.Tensor("out_t1")
	assert.Equal(t, int64(536870912+32*2), o1.Addr)
	// Double buffering: the two DM buffers apart; the vector, loaded once,
	// has the whole TRF.
	d0, _ := p.Tensor("in0_dm0")
	d1, _ := p.Tensor("in0_dm1")
	assert.NotEqual(t, d0.Addr, d1.Addr)
	trf, _ := p.Tensor("in1_trf")
	require.NotNil(t, trf)
	assert.Equal(t, kernel.TrfFull, trf.TrfAddress)
	assert.Equal(t, "in1_trf", p.Ops[6].Stages[3].Tensor, "the second tile aligns with the TRF loaded once")
	assert.Equal(t, "in0_dm1", p.Ops[6].Stages[0].Tensor, "the second tile streams the second buffer")
	require.NoError(t, engines.Lower(engines.Default(), p))
}

// TestBuildSpreadsSlices: the builder spreads a cluster's live slices over
// its DMNs (placeSlices): S / d at the start of each of d blocks of 256 / d
// slices, d the largest power of two up to the 8 DMNs dividing S (002
// L2867-2868), padding at the top when S is odd; a switched candidate's
// ring stays whole in a group. The streamed operand's DM tensor of a
// switched candidate is spread alike, and every program lowers.
func TestBuildSpreadsSlices(t *testing.T) {
	gemv := workloadFile(t, "gemv.yaml")
	for _, tc := range []struct {
		name     string
		workload *workload.Workload
		sp       spec
		slice    string
	}{
		{"16 slices, 2 a DMN", gemv, spec{stationary: 0, mode: Dual,
			factors: map[string]map[Level]int{"I": {Cluster: 2, Slice: 16, Row: 8}, "J": {Time: 64, Packet: 32}},
			order:   []string{"J"}}, "I / 16 % 8, I / 8 % 2 # 32"},
		{"4 slices, 1 an engine", loadWorkload(t, tinyGEMV), spec{stationary: 0, mode: Dual,
			factors: map[string]map[Level]int{"I": {Cluster: 2, Slice: 4, Row: 8}, "J": {Time: 8, Packet: 32}},
			order:   []string{"J"}}, "I / 8 % 4, 1 # 64"},
		{"all 256", gemv, helloGEMV, "I"},
		{"one slice", workloadFile(t, "dot.yaml"), helloDot, "1 # 256"},
		{"12 slices, 3 an engine", loadWorkload(t, "name: bmm12\neinsum: VMK,VNK->VMN\naxes: {V: 2, M: 2, N: 12, K: 32}\n"+
			"dtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"), spec{stationary: 1, mode: Single,
			factors: map[string]map[Level]int{"V": {Slice: 2}, "M": {Slice: 2}, "N": {Slice: 3, Row: 4}, "K": {Packet: 32}}},
			"V, M, N / 4 # 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSpace(t, tc.workload)
			c := s.candidate(t, tc.sp)
			p, err := s.Build(&c)
			require.NoError(t, err)
			want := mapping.MustParse(tc.slice, s.P.Decl, nil)
			for _, tt := range p.Tensors {
				if tt.Mem != kernel.HBM {
					equivExpr(t, tt.Name, want, tt.Slice)
				}
			}
			require.NoError(t, engines.Lower(engines.Default(), p))
		})
	}
}

// TestSlicesServed: the busiest DMN and DMA Engine under the builder's
// placement (placeSlices), one engine per pair of 32-slice DMNs (002
// L2404, L2868), the bound.go counts.
func TestSlicesServed(t *testing.T) {
	s := newSpace(t, workloadFile(t, "gemv.yaml"))
	for _, tc := range []struct{ live, Ring, groups, dmn, engine int }{
		{256, 1, 8, 32, 64},
		{64, 1, 8, 8, 16},
		{16, 1, 8, 2, 4},
		{8, 1, 8, 1, 2},
		{4, 1, 4, 1, 1},
		{12, 1, 4, 3, 3},
		{200, 1, 8, 25, 50},
		{100, 1, 4, 25, 25},
		{3, 1, 1, 3, 3},
		{96, 1, 8, 12, 24},
		{32, 16, 2, 16, 16}, // two rings of 16: DMNs 0 and 4
		{256, 32, 8, 32, 64},
		{1, 1, 1, 1, 1},
	} {
		assert.Equal(t, tc.groups, s.dmnGroups(tc.live, tc.Ring), "dmnGroups(%d, %d)", tc.live, tc.Ring)
		dmn, engine := s.slicesServed(tc.live, tc.Ring)
		assert.Equal(t, [2]int{tc.dmn, tc.engine}, [2]int{dmn, engine}, "slicesServed(%d, %d)", tc.live, tc.Ring)
	}
}

// TestBuildTRFLoadOverlapsCompute: double-buffered tiles whose stationary
// operand changes from tile to tile load the next tile's TRF half in the
// sub context while the main context computes the current tile (002
// L3052: "While the main context computes, the sub context prefetches
// the next operand batch into TRF/VRF"; the halves alternate, 002
// L4151-4158): in single channel mode each TRF load after the first starts
// before the main chain of the tile before it ends. A dual channel chain
// takes the sub context's Switch channel (002 L2127, L2142), so there the
// load waits for the chain.
func TestBuildTRFLoadOverlapsCompute(t *testing.T) {
	s := newSpace(t, workloadFile(t, "gemv.yaml"))
	for _, mode := range []PacketMode{Single, Dual} {
		c := s.candidate(t, spec{stationary: 0, mode: mode, double: true, tiles: []string{"I"},
			factors: map[string]map[Level]int{"I": {Tile: 4, Cluster: 2, Slice: 4, Row: 8}, "J": {Time: 64, Packet: 32}},
			order:   []string{"J"}})
		p, err := s.Build(&c)
		require.NoError(t, err)
		require.NoError(t, engines.Lower(engines.Default(), p))
		r, err := cost.Estimate(engines.Default(), p)
		require.NoError(t, err)
		var mains, subs []cost.OpReport
		for _, op := range r.Ops {
			switch op.Context {
			case kernel.CtxMain:
				mains = append(mains, op)
			case kernel.CtxSub:
				subs = append(subs, op)
			}
		}
		require.Len(t, subs, 4, "%v: a TRF load per tile", mode)
		require.Len(t, mains, 4, "%v: a main chain per tile", mode)
		for k := 1; k < len(subs); k++ {
			if mode == Single {
				assert.Less(t, subs[k].Start, mains[k-1].End, "%v: tile %d's TRF load overlaps tile %d's chain", mode, k, k-1)
			} else {
				assert.GreaterOrEqual(t, subs[k].Start, mains[k-1].End, "%v: tile %d's TRF load waits for the dual chain", mode, k)
			}
		}
	}
}

// TestLayoutsDifferKey: LayoutsDiffer's and computeRun's memo key
// (elementKey) leaves out what no DM element reads (the broadcast, the order of other tensors' axes, the tile
// order, the buffering, the layouts): on every candidate of small whole
// spaces (split K, K chunks, the cluster reduce, the named digit orders and
// the switch included; in three, every digit order without the split K), each tensor's memoized answer is the one built
// afresh. A key too narrow would answer for one candidate what another
// computed, and drop or keep a layout variant wrongly.
func TestLayoutsDifferKey(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded checks, slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range []struct {
		src string
		all bool // every digit order (Space.AllOrders)
	}{{tinyGEMM, false}, {tinyBMM, false}, {tinyQK, false}, {tinyGEMV, false}, {rowsOuterGEMM, false},
		{tinyGEMM, true}, {tinyGEMV, true}, {rowsOuterGEMM, true}} {
		w := loadWorkload(t, tc.src)
		name := w.Name
		if tc.all {
			name += "-all-orders"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, stride := newSplitSpace(t, w), 7 // -short's sample
			if tc.all {
				// Every order, without the split K: the orders
				// multiply the space.
				s, stride = newSpace(t, w).WithAllOrders(true), 11
			}
			require.NotNil(t, s.memo, "a memo to check")
			n, differ, i, runs := 0, 0, 0, 0
			s.Enumerate(func(c Candidate) bool {
				i++
				if testing.Short() && i%stride != 0 {
					return true
				}
				for ts := range NumTensors {
					got := s.LayoutsDiffer(&c, ts)
					require.Equal(t, s.layoutsDifferOf(&c, ts), got, "tensor %d of %s", ts, c.String(s.P))
					if run := s.computeRun(&c, ts); !math.IsInf(run, 1) {
						require.Equal(t, s.computeRunOf(&c, ts), run, "run of tensor %d of %s", ts, c.String(s.P))
						runs++
					}
					n++
					if got {
						differ++
					}
				}
				return true
			})
			require.Positive(t, differ, "some layouts differ")
			require.Less(t, differ, n, "some do not")
			require.Positive(t, runs, "computation-order runs checked")
			t.Logf("%d answers checked, %d differ, %d runs", n, differ, runs)
		})
	}
}
