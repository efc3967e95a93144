package engines

import (
	"testing"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemoryPositions: a tensor occupies the slices whose mapping holds
// data, not its padding (002 L1029-1200).
func TestMemoryPositions(t *testing.T) {
	p := loadKernel(t, "hello-add") // dm: Cluster 1 # 2, Slice A / 8 # 256
	var m MemoryMap
	require.NoError(t, m.Compute(Default(), p))
	count := func(set []uint64) (n int) {
		for _, w := range set {
			for ; w != 0; w &= w - 1 {
				n++
			}
		}
		return n
	}
	dm, in := tensorIndex(p, "dm"), tensorIndex(p, "input")
	require.GreaterOrEqual(t, dm, 0)
	require.GreaterOrEqual(t, in, 0)
	set := m.Footprints[dm].Positions
	assert.Equal(t, 256, count(set), "2048 / 8 slices of cluster 0")
	assert.Equal(t, uint64(1<<63|1<<62), set[3]&(1<<63|1<<62))
	assert.Zero(t, set[4], "cluster 1 is padding")
	assert.Equal(t, []uint64{1}, m.Footprints[in].Positions)
}

// TestCheckFootprint: Hello Dot's tensors (002 L306-380) and variations of
// their addresses: live tensors may not share bytes (002 L154-155), dead
// ones may, TRF Full excludes every other TRF tensor (002 L4156-4158), and
// each tensor fits its memory (002 L137-140).
func TestCheckFootprint(t *testing.T) {
	p := loadKernel(t, "hello-dot")
	var m MemoryMap
	require.NoError(t, m.Compute(Default(), p))
	assert.Empty(t, m.Issues)
	life := func(name string) [2]int {
		f := m.Footprints[tensorIndex(p, name)]
		return [2]int{f.First, f.Last}
	}
	// Ops: 0 lhs→lhs_dm, 1 rhs→rhs_dm, 2 rhs_dm→rhs_trf, 3 main chain
	// (lhs_dm, rhs_trf → out_dm), 4 out_dm→out (002 L330-375).
	assert.Equal(t, [2]int{-1, 5}, life("lhs"), "a kernel argument is live throughout")
	assert.Equal(t, [2]int{0, 3}, life("lhs_dm"))
	assert.Equal(t, [2]int{1, 2}, life("rhs_dm"))
	assert.Equal(t, [2]int{2, 3}, life("rhs_trf"))
	assert.Equal(t, [2]int{3, 4}, life("out_dm"))
	assert.Equal(t, [2]int{-1, 5}, life("out"), "the kernel's result is live throughout")
	lhs := m.Footprints[tensorIndex(p, "lhs_dm")]
	assert.Equal(t, [2]int64{0, 4096}, [2]int64{lhs.Lo, lhs.Hi}, "2048 bf16 at 0 (002 L340)")

	for _, c := range []struct {
		name   string
		f      func()
		rule   string // "" = legal
		a, b   string
		detail string
	}{
		{"golden", func() {}, "", "", "", ""},
		{"DMA into a live tensor", func() { tensorOf(p, "rhs_dm").Addr = 2048 }, "SCH-R7", "lhs_dm", "rhs_dm",
			`dm tensors "lhs_dm" (bytes 0..4096, live ops 0..3) and "rhs_dm" (bytes 2048..6144, live ops 1..2) overlap`},
		{"reuse after the last read", func() { tensorOf(p, "out_dm").Addr = 4096 }, "", "", "", ""},
		// out_dm (1 # 8 bf16, 16 bytes) is committed by the chain that
		// reads lhs_dm.
		{"commit over the chain's own input", func() { tensorOf(p, "out_dm").Addr = 4096 - 16 }, "SCH-R7", "lhs_dm", "out_dm",
			"(bytes 4080..4096, live ops 3..4)"},
		// The result may not land on an input even after the input was
		// read: the host still owns it.
		{"result over an input", func() { tensorOf(p, "out").Addr = 0 }, "SCH-R7", "lhs", "out", "live ops start..end"},
		{"beyond DM", func() { tensorOf(p, "out_dm").Addr = 524288 - 8 }, "MEM-C1", "out_dm", "",
			`occupies bytes 524280..524296, beyond the 524288 bytes`},
		// 16 Rows × 2048 bf16 = 65536 bytes; FirstHalf holds half of
		// 8 Rows × 8 KB (002 L139, L4151-4155).
		{"beyond the TRF half", func() {
			tensorOf(p, "rhs_trf").TrfAddress = "FirstHalf"
			tensorOf(p, "rhs_trf").Row = mustExpr(t, p, "16")
		}, "MEM-C2", "rhs_trf", "", "occupies bytes 0..65536, beyond the 32768 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p = loadKernel(t, "hello-dot")
			c.f()
			is, err := CheckFootprint(Default(), p)
			require.NoError(t, err)
			if c.rule == "" {
				assert.Empty(t, is)
				return
			}
			require.Len(t, is, 1)
			assert.Equal(t, c.rule, is[0].Violation.Rule.ID)
			assert.Equal(t, c.a, p.Tensors[is[0].A].Name)
			if c.b == "" {
				assert.Equal(t, -1, is[0].B)
			} else {
				assert.Equal(t, c.b, p.Tensors[is[0].B].Name)
			}
			assert.Contains(t, is[0].Violation.Error(), c.detail)
		})
	}
}

// TestFootprintViews: a tile view (`tile::<dim, n, _>(t)`, 002 L813-831)
// addresses its argument's bytes; it collides neither with the argument nor
// with another view of it, but still with any other live tensor.
func TestFootprintViews(t *testing.T) {
	for _, c := range []struct {
		name  string
		view  string // the View of the added tensors
		addr  int64
		issue string // "" = legal, else the colliding pair
	}{
		{"view of the argument", "lhs", 0, ""},
		{"the same bytes without the view mark", "", 0, "lhs/lhs_t0"},
		{"a view over another argument's bytes", "lhs", 268435456, "rhs/lhs_t0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := loadKernel(t, "hello-dot")
			lhs := tensorOf(p, "lhs")
			// Two views of the same tile, each read by its own DMA.
			for _, n := range []string{"lhs_t0", "lhs_t1"} {
				v := *lhs
				v.Name, v.Role, v.View, v.Addr = n, kernel.Intermediate, c.view, c.addr
				p.Tensors = append(p.Tensors, &v)
			}
			p.Ops[0].Src = "lhs_t0"
			second := *p.Ops[0]
			second.Src = "lhs_t1"
			p.Ops = append([]*kernel.Op{&second}, p.Ops...)
			require.NoError(t, p.Validate())
			is, err := CheckFootprint(Default(), p)
			require.NoError(t, err)
			var got []string
			for _, x := range is {
				got = append(got, p.Tensors[x.A].Name+"/"+p.Tensors[x.B].Name)
			}
			if c.issue == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, c.issue)
		})
	}
}

func tensorOf(p *kernel.Program, name string) *kernel.Tensor {
	t, _ := p.Tensor(name)
	return t
}

func mustExpr(t *testing.T, p *kernel.Program, src string) *mapping.Expr {
	e, err := mapping.Parse(src, p.Axes, nil)
	require.NoError(t, err)
	return e
}

// TestFootprintOverlap: each slice has its own DM, TRF and VRF (002
// L138-140), so tensors collide only on a position both hold, on common
// bytes, while both are live (002 L154-155).
func TestFootprintOverlap(t *testing.T) {
	base := Footprint{Mem: "dm", Lo: 0, Hi: 4096, Positions: []uint64{0, 1 << 3}, First: 0, Last: 3}
	for _, c := range []struct {
		name     string
		g        Footprint
		overlaps bool // common bytes on a common position
		together bool // live ranges meet
		pos      int  // first common position, -1 for none
	}{
		{"same bytes and slice", base, true, true, 67},
		{"other slice", Footprint{Mem: "dm", Lo: 0, Hi: 4096, Positions: []uint64{1 << 3, 0}, First: 0, Last: 3}, false, true, -1},
		{"adjacent bytes", Footprint{Mem: "dm", Lo: 4096, Hi: 8192, Positions: []uint64{0, 1 << 3}, First: 0, Last: 3}, false, true, 67},
		{"one byte", Footprint{Mem: "dm", Lo: 4095, Hi: 8191, Positions: []uint64{0, 1 << 3}, First: 0, Last: 3}, true, true, 67},
		{"other memory", Footprint{Mem: "vrf", Lo: 0, Hi: 4096, Positions: []uint64{0, 1 << 3}, First: 0, Last: 3}, false, true, 67},
		{"born at the last read", Footprint{Mem: "dm", Lo: 0, Hi: 16, Positions: []uint64{0, 1 << 3}, First: 3, Last: 4}, true, true, 67},
		{"born after the last read", Footprint{Mem: "dm", Lo: 0, Hi: 16, Positions: []uint64{0, 1 << 3}, First: 4, Last: 5}, true, false, 67},
		{"never live", Footprint{Mem: "dm", Lo: 0, Hi: 16, Positions: []uint64{0, 1 << 3}, First: 6, Last: -1}, true, false, 67},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.overlaps, base.Overlaps(&c.g))
			assert.Equal(t, c.overlaps, c.g.Overlaps(&base), "symmetric")
			assert.Equal(t, c.together, base.LiveTogether(&c.g))
			assert.Equal(t, c.together, c.g.LiveTogether(&base), "symmetric")
			g, ok := base.SharePosition(&c.g)
			assert.Equal(t, c.pos >= 0, ok)
			if ok {
				assert.Equal(t, c.pos, g)
			}
		})
	}
}

// TestFootprintHandoff: a DM tensor the previous kernel left
// (kernel.Program.Handoff, to_dm) is live from before the first op, one
// left to the next kernel (to_hbm) until after the last, so a tensor that
// would reuse its bytes before its first read or after its last collides.
func TestFootprintHandoff(t *testing.T) {
	// Ops once lhs and out are handed over: 0 rhs→rhs_dm, 1 rhs_dm→rhs_trf,
	// 2 main chain (lhs_dm, rhs_trf → out_dm).
	handed := func() *kernel.Program {
		p := loadKernel(t, "hello-dot")
		p.Handoff = []*kernel.Op{p.Ops[0], p.Ops[4]}
		p.Ops = p.Ops[1:4]
		return p
	}
	p := handed()
	var m MemoryMap
	require.NoError(t, m.Compute(Default(), p))
	assert.Empty(t, m.Issues)
	life := func(name string) [2]int {
		f := m.Footprints[tensorIndex(p, name)]
		return [2]int{f.First, f.Last}
	}
	assert.Equal(t, [2]int{-1, 2}, life("lhs_dm"), "left by the previous kernel")
	assert.Equal(t, [2]int{2, 3}, life("out_dm"), "taken by the next kernel")

	for _, c := range []struct {
		name   string
		f      func(p *kernel.Program)
		handed bool // with the handoffs (else lhs is loaded after rhs is in TRF)
		rule   string
	}{
		{"rhs_dm over lhs_dm, loaded just before the chain", func(p *kernel.Program) { tensorOf(p, "rhs_dm").Addr = 0 }, false, ""},
		{"rhs_dm over lhs_dm, left by the previous kernel", func(p *kernel.Program) { tensorOf(p, "rhs_dm").Addr = 0 }, true, "SCH-R7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := handed()
			if !c.handed {
				// lhs loaded by an op after rhs_dm's last read, out stored
				// by the last op.
				p.Ops = []*kernel.Op{p.Ops[0], p.Ops[1], p.Handoff[0], p.Ops[2], p.Handoff[1]}
				p.Handoff = nil
			}
			c.f(p)
			is, err := CheckFootprint(Default(), p)
			require.NoError(t, err)
			if c.rule == "" {
				assert.Empty(t, is)
				return
			}
			require.Len(t, is, 1)
			assert.Equal(t, c.rule, is[0].Violation.Rule.ID)
		})
	}
}
