package engines

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// xsrCase is one vector_inter_slice_reduce call on a stream.
type xsrCase struct {
	name, cite                   string
	axes                         string
	dt                           dtype.DType
	op                           kernel.InterSliceOp
	slice, time, packet          string
	sliceOut, timeOut            string
	ratio, inPackets, outPackets int
	fill, timeDigits             []kernel.InterSliceDigit
}

func (c xsrCase) input(t *testing.T) InterSliceInput {
	ax := ceAx(t, c.axes)
	return InterSliceInput{DType: c.dt, Op: c.op, Slice: ceM(t, ax, c.slice), Time: ceM(t, ax, c.time), Packet: ceM(t, ax, c.packet),
		SliceOut: ceM(t, ax, c.sliceOut), TimeOut: ceM(t, ax, c.timeOut)}
}

// xsrManual are the manual's inter-slice examples (vector-and-kernels.md
// §6.7, XSR-EX-1..3 and the last step of XSR-EX-6): the configuration each
// derives.
var xsrManual = []xsrCase{
	{name: "XSR-EX-1 dummy", cite: "002 L6643-6653 (and L4608-4623)", axes: "R=4, A=512", dt: dtype.I32, op: kernel.InterSliceAddSat,
		slice: "A / 8, R", time: "1", packet: "A % 8", sliceOut: "A / 8, 1 # 4", timeOut: "1",
		ratio: 4, inPackets: 1, outPackets: 1,
		fill: []kernel.InterSliceDigit{{Size: 4, Live: 1, Term: "1 # 4"}}, timeDigits: []kernel.InterSliceDigit{}},
	{name: "XSR-EX-2 broadcast", cite: "002 L6661-6672", axes: "W=64, R=4, X=4, P=8", dt: dtype.F32, op: kernel.InterSliceAdd,
		slice: "W, R", time: "1", packet: "P", sliceOut: "W, X", timeOut: "1",
		ratio: 4, inPackets: 1, outPackets: 1,
		fill: []kernel.InterSliceDigit{{Size: 4, Live: 4, Term: "X"}}, timeDigits: []kernel.InterSliceDigit{}},
	{name: "XSR-EX-3 promotion", cite: "002 L6681-6693", axes: "W=32, R=4, T0=2, T2=4, T1=2, P=8", dt: dtype.F32, op: kernel.InterSliceAdd,
		slice: "W, R", time: "T0, T2, T1", packet: "P", sliceOut: "W, T2", timeOut: "T0, T1",
		ratio: 4, inPackets: 16, outPackets: 4,
		// T2 sits 2 packets apart in Time (T1 inside it), T0 8 apart.
		fill:       []kernel.InterSliceDigit{{Size: 4, Live: 4, Stride: 2, Term: "T2"}},
		timeDigits: []kernel.InterSliceDigit{{Size: 2, Live: 2, Stride: 8, Term: "T0"}, {Size: 2, Live: 2, Stride: 1, Term: "T1"}}},
	{name: "XSR-EX-4 reduce then add", cite: "002 L6701-6712", axes: "R=4, A=512", dt: dtype.I32, op: kernel.InterSliceAddSat,
		slice: "A / 8, R", time: "1", packet: "A % 8", sliceOut: "A / 8, 1 # 4", timeOut: "1",
		ratio: 4, inPackets: 1, outPackets: 1,
		fill: []kernel.InterSliceDigit{{Size: 4, Live: 1, Term: "1 # 4"}}, timeDigits: []kernel.InterSliceDigit{}},
	{name: "XSR-EX-6 full sum, last step", cite: "mirror vector-engine/index.md (vector-and-kernels.md §6.7)", axes: "B=2, R=8192", dt: dtype.I32, op: kernel.InterSliceAddSat,
		slice: "R / 32", time: "1", packet: "1 # 8", sliceOut: "1 # 256", timeOut: "1",
		ratio: 256, inPackets: 1, outPackets: 1,
		fill: []kernel.InterSliceDigit{{Size: 256, Live: 1, Term: "1 # 256"}}, timeDigits: []kernel.InterSliceDigit{}},
}

// TestInterSliceManual derives the manual's inter-slice examples.
func TestInterSliceManual(t *testing.T) {
	for _, tc := range xsrManual {
		t.Run(tc.name, func(t *testing.T) {
			c, err := DeriveInterSliceReduce(Default(), tc.input(t))
			require.NoError(t, err, tc.cite)
			assert.Equal(t, tc.ratio, c.Ratio, tc.cite)
			assert.Equal(t, tc.inPackets, c.InPackets, tc.cite)
			assert.Equal(t, tc.outPackets, c.OutPackets, tc.cite)
			assert.Equal(t, 8, c.Lanes, "Way8 (002 L4551)")
			assert.Equal(t, tc.fill, c.Fill, tc.cite)
			assert.Equal(t, tc.timeDigits, c.Time, tc.cite)
			assert.Equal(t, tc.dt, c.DType)
			assert.Equal(t, tc.op, c.Op)
		})
	}
}

// TestInterSliceSource: where each output position reads in the promotion
// example (002 L6681-6693): slice j of a group takes T2 = j, output time
// t' = (T0, T1) reads input time (T0, T2, T1) = 8·T0 + 2·T2 + T1.
func TestInterSliceSource(t *testing.T) {
	c, err := DeriveInterSliceReduce(Default(), xsrManual[2].input(t))
	require.NoError(t, err)
	for j := 0; j < 4; j++ {
		for t0 := 0; t0 < 2; t0++ {
			for t1 := 0; t1 < 2; t1++ {
				src, ok := c.Source(j, t0*2+t1)
				require.True(t, ok)
				assert.Equal(t, 8*t0+2*j+t1, src, "j=%d t0=%d t1=%d", j, t0, t1)
			}
		}
		assert.True(t, c.LiveSlot(j))
	}
	// Dummy: only slot 0 holds the value (002 L6653).
	d, err := DeriveInterSliceReduce(Default(), xsrManual[0].input(t))
	require.NoError(t, err)
	for j := 0; j < 4; j++ {
		_, ok := d.Source(j, 0)
		assert.Equal(t, j == 0, ok, "slot %d", j)
		assert.Equal(t, j == 0, d.LiveSlot(j), "slot %d", j)
	}
}

// TestInterSliceMixedFill: the freed slots may mix the rules (the table of
// 002 L6626-6634 per digit): R = 8 frees 8 slots, filled by a promoted T
// (2), a broadcast X (2) and a dummy (2), the rest of T staying in Time.
func TestInterSliceMixedFill(t *testing.T) {
	tc := xsrCase{axes: "A=32, R=8, T=8, X=2, P=8", dt: dtype.F32, op: kernel.InterSliceMax,
		slice: "A, R", time: "T", packet: "P", sliceOut: "A, T % 2, X, 1 # 2", timeOut: "T / 2"}
	c, err := DeriveInterSliceReduce(Default(), tc.input(t))
	require.NoError(t, err)
	assert.Equal(t, 8, c.Ratio)
	assert.Equal(t, []kernel.InterSliceDigit{{Size: 2, Live: 2, Stride: 1, Term: "T % 2"}, {Size: 2, Live: 2, Term: "X"}, {Size: 2, Live: 1, Term: "1 # 2"}}, c.Fill)
	assert.Equal(t, []kernel.InterSliceDigit{{Size: 4, Live: 4, Stride: 2, Term: "T / 2"}}, c.Time)
	for j := 0; j < 8; j++ {
		for tt := 0; tt < 4; tt++ {
			src, ok := c.Source(j, tt)
			if j%2 == 1 {
				assert.False(t, ok, "dummy slot %d", j)
				continue
			}
			require.True(t, ok)
			assert.Equal(t, 2*tt+j/4, src, "slot %d time %d", j, tt)
		}
	}
}

// TestInterSliceRejects: each rule of the Inter-Slice Block refuses what
// it forbids.
func TestInterSliceRejects(t *testing.T) {
	ex1 := xsrManual[0]
	for _, tc := range []struct {
		name string
		edit func(*xsrCase)
		rule string
	}{
		{"i32 Mul", func(c *xsrCase) { c.op = kernel.InterSliceMul }, "XSR-R1"},
		{"f32 AddSat", func(c *xsrCase) { c.dt, c.op = dtype.F32, kernel.InterSliceAddSat }, "XSR-R1"},
		{"bf16 stream", func(c *xsrCase) { c.dt, c.op = dtype.BF16, kernel.InterSliceAdd }, "XSR-R1"},
		{"two clusters of slices", func(c *xsrCase) {
			c.axes, c.slice, c.sliceOut = "R=4, A=1024", "A / 8, R", "A / 8, 1 # 4"
		}, "XSR-R2"},
		{"SliceOut smaller", func(c *xsrCase) { c.sliceOut = "A / 8" }, "XSR-R5"},
		{"reduced factor outermost", func(c *xsrCase) { c.slice, c.sliceOut = "R, A / 8", "1 # 4, A / 8" }, "XSR-R6"},
		{"fill names a kept axis", func(c *xsrCase) { c.sliceOut = "A / 8, A % 4" }, "XSR-R5"},
		{"fill keeps the reduced axis", func(c *xsrCase) { c.sliceOut = "A / 8, R" }, "XSR-R6"},
		{"packet not one flit", func(c *xsrCase) { c.axes, c.packet = "R=4, A=1024", "A % 16" }, "VE-R19"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ex1
			tc.edit(&c)
			_, err := DeriveInterSliceReduce(Default(), c.input(t))
			var v *Violation
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
		})
	}
	ex3 := xsrManual[2]
	for _, tc := range []struct {
		name, sliceOut, timeOut string
	}{
		{"TimeOut reorders Time", "W, T2", "T1, T0"},
		{"Time digit dropped", "W, T2", "T0"},
		{"TimeOut names a promoted digit", "W, T2", "T0, T2, T1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ex3
			c.sliceOut, c.timeOut = tc.sliceOut, tc.timeOut
			_, err := DeriveInterSliceReduce(Default(), c.input(t))
			var v *Violation
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, "XSR-R5", v.Rule.ID, "%v", err)
		})
	}
	t.Run("padding slices reduced", func(t *testing.T) {
		c := xsrCase{axes: "R=3, A=512", dt: dtype.I32, op: kernel.InterSliceAdd,
			slice: "A / 8, R # 4", time: "1", packet: "A % 8", sliceOut: "A / 8, 1 # 4", timeOut: "1"}
		_, err := DeriveInterSliceReduce(Default(), c.input(t))
		var v *Violation
		require.True(t, errors.As(err, &v), "%v", err)
		assert.Equal(t, "XSR-R6", v.Rule.ID)
	})
}

// TestInterSliceEntry: the pass order around vector_inter_slice_reduce
// (002 L6599-6610): InterFirst from vector_init, IntraFirst from the Way8
// stages only, once per pass; after IntraFirst only vector_final.
func TestInterSliceEntry(t *testing.T) {
	for pos := 1; pos <= 12; pos++ {
		v := &vePass{stage: pos}
		err := v.enterInterSlice(kernel.StVectorFxp)
		_, eligible := xsrEligible[pos]
		if eligible {
			assert.NoError(t, err, "stage %d", pos)
			assert.Equal(t, xsrIntraFirst, v.inter)
			continue
		}
		var vi *Violation
		require.True(t, errors.As(err, &vi), "stage %d (Narrow 5, Float 6, IntraSliceReduce 7, FpDiv 8, Filter 12): %v", pos, err)
		assert.Equal(t, "XSR-R4", vi.Rule.ID)
	}
	v := &vePass{stage: veStageInit}
	require.NoError(t, v.enterInterSlice(kernel.StVectorInit))
	assert.Equal(t, xsrInterFirst, v.inter)
	assert.Error(t, v.enterInterSlice(kernel.StVectorInterSlice), "once per pass")
	require.NoError(t, v.enter(veStageBranch, kernel.StVectorBranch, kernel.StVectorInterSlice), "InterFirst → branch (002 L6610)")
	v = &vePass{stage: veStageInit, inter: xsrInterFirst}
	require.NoError(t, v.enter(veStageOutput, kernel.StVectorFinal, kernel.StVectorInterSlice), "InterFirst → vector_final (002 L6653)")
	v = &vePass{stage: veStageFxp, way: 8, inter: xsrIntraFirst}
	assert.Error(t, v.enter(veStageFxp, kernel.StVectorFxp, kernel.StVectorInterSlice), "IntraFirst → intra again")
	require.NoError(t, v.enter(veStageOutput, kernel.StVectorFinal, kernel.StVectorInterSlice), "IntraFirst → vector_final (002 L6729)")
}

func le32(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// flitOf makes a packet of eight lanes, lane 0 = v and the others 0.
func flitOf(v uint32) []byte { return le32(v, 0, 0, 0, 0, 0, 0, 0) }

// TestInterSliceOrder tests docs/spec-decisions.md "Inter-slice reduction
// order": a left fold in ascending slice order, ((x0 ∘ x1) ∘ x2) ∘ x3. The
// values are chosen so that every other order gives another result.
func TestInterSliceOrder(t *testing.T) {
	f := math.Float32bits
	i := func(v int32) uint32 { return uint32(v) }
	for _, tc := range []struct {
		name string
		dt   dtype.DType
		op   kernel.InterSliceOp
		in   [4]uint32
		want uint32
	}{
		// (1e8 + 1) rounds to 1e8; 1e8 − 1e8 = 0; 0 + 1 = 1. A tree
		// ((1e8+1) + (−1e8+1)) or the descending fold gives 0.
		{"f32 Add", dtype.F32, kernel.InterSliceAdd, [4]uint32{f(1e8), f(1), f(-1e8), f(1)}, f(1)},
		// sat(MAX + 1) = MAX, MAX − 1, then + 0; descending gives MAX.
		{"i32 AddSat", dtype.I32, kernel.InterSliceAddSat, [4]uint32{i(math.MaxInt32), i(1), i(-1), i(0)}, i(math.MaxInt32 - 1)},
		// (1e30 · 1e30) overflows to +Inf, · 0 = NaN; descending
		// (0 · 1e-30) · 1e30 · 1e30 = 0.
		{"f32 Mul", dtype.F32, kernel.InterSliceMul, [4]uint32{f(1e30), f(1e30), f(0), f(1e-30)}, math.Float32bits(float32(math.NaN()))},
		{"i32 Add wraps", dtype.I32, kernel.InterSliceAdd, [4]uint32{i(math.MaxInt32), i(1), i(5), i(-2)}, i(math.MinInt32 + 3)},
		{"i32 Max", dtype.I32, kernel.InterSliceMax, [4]uint32{i(-7), i(3), i(math.MinInt32), i(2)}, i(3)},
		{"i32 Min", dtype.I32, kernel.InterSliceMin, [4]uint32{i(-7), i(3), i(math.MinInt32), i(2)}, i(math.MinInt32)},
		{"f32 Max of zeros", dtype.F32, kernel.InterSliceMax, [4]uint32{f(float32(math.Copysign(0, -1))), f(0), f(-1), f(-2)}, f(0)},
		{"f32 Min of zeros", dtype.F32, kernel.InterSliceMin, [4]uint32{f(0), f(float32(math.Copysign(0, -1))), f(1), f(2)}, f(float32(math.Copysign(0, -1)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &kernel.InterSliceReduceConfig{DType: tc.dt, Op: tc.op, Lanes: 8, Slices: 4, Ratio: 4, InPackets: 1, OutPackets: 1,
				Fill: []kernel.InterSliceDigit{{Size: 4, Live: 4}}}
			require.NoError(t, CheckInterSliceConfig(Default(), c))
			in := [][]byte{flitOf(tc.in[0]), flitOf(tc.in[1]), flitOf(tc.in[2]), flitOf(tc.in[3])}
			acc := make([]byte, 32)
			require.NoError(t, InterSliceFold(c, in, acc))
			got := binary.LittleEndian.Uint32(acc)
			if tc.dt == dtype.F32 && math.IsNaN(float64(math.Float32frombits(tc.want))) {
				assert.True(t, math.IsNaN(float64(math.Float32frombits(got))), "got %v", math.Float32frombits(got))
			} else {
				assert.Equal(t, tc.want, got)
			}
			assert.Equal(t, make([]byte, 28), acc[4:], "zero lanes fold to zero")
			// Broadcast: every slot receives the folded packet.
			out := make([]byte, 32)
			for j := 0; j < 4; j++ {
				ok, err := InterSliceOutput(c, acc, j, out)
				require.NoError(t, err)
				assert.True(t, ok)
				assert.Equal(t, acc, out)
			}
		})
	}
}

// TestInterSliceDummyExample runs XSR-EX-1's configuration on the data of
// vector-and-kernels.md §6.7 ([derived] in[a, r] = a + r, out[a] = 4a + 6):
// slot 0 of each group holds the sum, slots 1-3 are padding.
func TestInterSliceDummyExample(t *testing.T) {
	c, err := DeriveInterSliceReduce(Default(), xsrManual[0].input(t))
	require.NoError(t, err)
	for a := 0; a < 64; a++ {
		in := make([][]byte, 4)
		for r := range in {
			in[r] = make([]byte, 32)
			for lane := 0; lane < 8; lane++ {
				binary.LittleEndian.PutUint32(in[r][4*lane:], uint32(8*a+lane+r))
			}
		}
		acc := make([]byte, 32)
		require.NoError(t, InterSliceFold(&c, in, acc))
		out := make([]byte, 32)
		ok, err := InterSliceOutput(&c, acc, 0, out)
		require.NoError(t, err)
		require.True(t, ok)
		for lane := 0; lane < 8; lane++ {
			assert.Equal(t, uint32(4*(8*a+lane)+6), binary.LittleEndian.Uint32(out[4*lane:]))
		}
		for j := 1; j < 4; j++ {
			ok, err := InterSliceOutput(&c, acc, j, out)
			require.NoError(t, err)
			assert.False(t, ok, "slot %d is the dummy's padding", j)
		}
	}
}

// TestInterSliceCheckConfig: a stated configuration the hardware cannot
// run is refused.
func TestInterSliceCheckConfig(t *testing.T) {
	ok := kernel.InterSliceReduceConfig{DType: dtype.I32, Op: kernel.InterSliceAdd, Lanes: 8, Slices: 256, Ratio: 4, InPackets: 2, OutPackets: 2,
		Fill: []kernel.InterSliceDigit{{Size: 4, Live: 1}}, Time: []kernel.InterSliceDigit{{Size: 2, Live: 2, Stride: 1}}}
	require.NoError(t, CheckInterSliceConfig(Default(), &ok))
	for name, edit := range map[string]func(c *kernel.InterSliceReduceConfig){
		"f32 AddSat":         func(c *kernel.InterSliceReduceConfig) { c.DType, c.Op = dtype.F32, kernel.InterSliceAddSat },
		"lanes":              func(c *kernel.InterSliceReduceConfig) { c.Lanes = 4 },
		"beyond a cluster":   func(c *kernel.InterSliceReduceConfig) { c.Slices = 512 },
		"ratio not dividing": func(c *kernel.InterSliceReduceConfig) { c.Ratio = 3 },
		"fill short":         func(c *kernel.InterSliceReduceConfig) { c.Fill = []kernel.InterSliceDigit{{Size: 2, Live: 1}} },
		"time past input": func(c *kernel.InterSliceReduceConfig) {
			c.Time = []kernel.InterSliceDigit{{Size: 2, Live: 2, Stride: 2}}
		},
		"live above size": func(c *kernel.InterSliceReduceConfig) { c.Fill = []kernel.InterSliceDigit{{Size: 4, Live: 5}} },
		"no packets":      func(c *kernel.InterSliceReduceConfig) { c.InPackets = 0 },
	} {
		c := ok
		c.Fill = append([]kernel.InterSliceDigit(nil), ok.Fill...)
		c.Time = append([]kernel.InterSliceDigit(nil), ok.Time...)
		edit(&c)
		assert.Error(t, CheckInterSliceConfig(Default(), &c), name)
	}
}

// TestInterSliceFoldNoAllocation: the fold and the scatter do not allocate.
func TestInterSliceFoldNoAllocation(t *testing.T) {
	c, err := DeriveInterSliceReduce(Default(), xsrManual[2].input(t))
	require.NoError(t, err)
	in := make([][]byte, 4)
	for i := range in {
		in[i] = make([]byte, 16*32)
	}
	acc, out := make([]byte, 16*32), make([]byte, 4*32)
	n := testing.AllocsPerRun(10, func() {
		_ = InterSliceFold(&c, in, acc)
		_, _ = InterSliceOutput(&c, acc, 1, out)
	})
	assert.Zero(t, n)
}

// BenchmarkInterSliceFold folds a 256-slice group of 16 packets each.
func BenchmarkInterSliceFold(b *testing.B) {
	c := &kernel.InterSliceReduceConfig{DType: dtype.F32, Op: kernel.InterSliceAdd, Lanes: 8, Slices: 256, Ratio: 256, InPackets: 16, OutPackets: 16,
		Fill: []kernel.InterSliceDigit{{Size: 256, Live: 1}}, Time: []kernel.InterSliceDigit{{Size: 16, Live: 16, Stride: 1}}}
	in := make([][]byte, 256)
	for i := range in {
		in[i] = make([]byte, 16*32)
	}
	acc := make([]byte, 16*32)
	b.SetBytes(256 * 16 * 32)
	b.ReportAllocs()
	for b.Loop() {
		if err := InterSliceFold(c, in, acc); err != nil {
			b.Fatal(err)
		}
	}
}

// xsrOracle checks a derived configuration against the mappings: every
// live output position (slice g·r + j of SliceOut, time t' of TimeOut)
// reads input time Source(j, t') on every slice of its group, and those
// input positions hold the output's coordinates on every axis the input
// keeps (all but the reduced digits' axes), and distinct reduced
// coordinates on the group's slices. A dummy slot is padding in SliceOut.
func xsrOracle(t testing.TB, in InterSliceInput, c *kernel.InterSliceReduceConfig) {
	t.Helper()
	_, inner, err := mapping.SplitAt(in.Slice, c.Ratio)
	require.NoError(t, err)
	reduced := map[string]bool{}
	for _, s := range inner.Symbols() {
		reduced[s] = true
	}
	named := func(es ...*mapping.Expr) map[string]bool {
		m := map[string]bool{}
		for _, e := range es {
			for _, s := range e.Symbols() {
				m[s] = true
			}
		}
		return m
	}
	// An axis the output lacks reads coordinate 0 there (Index.Get): the
	// input must hold 0 too, i.e. the axis is reduced or of size 1.
	inAxes := named(in.Slice, in.Time)
	out := mapping.Pair(in.SliceOut, in.TimeOut)
	inp := mapping.Pair(in.Slice, in.Time)
	for g := 0; g < c.Slices; g += c.Ratio {
		for j := 0; j < c.Ratio; j++ {
			for tt := 0; tt < c.OutPackets; tt++ {
				oc := out.Map((g+j)*c.OutPackets + tt)
				src, ok := c.Source(j, tt)
				if !ok {
					require.NotEqual(t, mapping.Live, oc.Kind, "slot %d time %d is padding in the configuration, live in SliceOut/TimeOut", j, tt)
					continue
				}
				if oc.Kind != mapping.Live {
					continue // padding outside the group (Slice's own padding)
				}
				seen := map[string]bool{}
				for k := 0; k < c.Ratio; k++ {
					ic := inp.Map((g+k)*c.InPackets + src)
					require.Equal(t, mapping.Live, ic.Kind, "input slice %d time %d", g+k, src)
					var key []int
					for a := range inAxes {
						if reduced[a] {
							key = append(key, ic.Index.Get(a))
							continue
						}
						require.Equal(t, oc.Index.Get(a), ic.Index.Get(a), "axis %s: output slice %d time %d reads slice %d time %d", a, g+j, tt, g+k, src)
					}
					seen[fmt.Sprint(key)] = true
				}
				if len(reduced) > 0 {
					require.Len(t, seen, c.Ratio, "the group's slices hold distinct reduced coordinates")
				}
			}
		}
	}
}

// TestInterSliceOracle: the manual's examples and the mixed fill agree
// with the mapping semantics.
func TestInterSliceOracle(t *testing.T) {
	cases := append([]xsrCase(nil), xsrManual...)
	cases = append(cases, xsrCase{name: "mixed", axes: "A=32, R=8, T=8, X=2, P=8", dt: dtype.F32, op: kernel.InterSliceMax,
		slice: "A, R", time: "T", packet: "P", sliceOut: "A, T % 2, X, 1 # 2", timeOut: "T / 2"})
	for _, tc := range cases {
		in := tc.input(t)
		c, err := DeriveInterSliceReduce(Default(), in)
		require.NoError(t, err, tc.name)
		xsrOracle(t, in, &c)
	}
}

// FuzzDeriveInterSliceReduce: DeriveInterSliceReduce never panics, and
// what it derives passes CheckInterSliceConfig and the mapping oracle.
func FuzzDeriveInterSliceReduce(f *testing.F) {
	for _, c := range xsrManual {
		f.Add(c.axes, c.dt.String(), string(c.op), c.slice, c.time, c.sliceOut, c.timeOut)
	}
	f.Add("A=32, R=8, T=8, X=2", "f32", "Max", "A, R", "T", "A, T % 2, X, 1 # 2", "T / 2")
	f.Add("I=64, J=2048", "f32", "Add", "I, J / 512", "1", "I, 1 # 4", "1")
	f.Fuzz(func(t *testing.T, axesSrc, dt, op, slice, tm, sliceOut, timeOut string) {
		axes, err := mapping.ParseAxes(axesSrc)
		if err != nil {
			return
		}
		d, err := dtype.Parse(dt)
		if err != nil {
			return
		}
		parse := func(src string) *mapping.Expr {
			e, err := mapping.Parse(src, axes, nil)
			if err != nil {
				return nil
			}
			return e
		}
		in := InterSliceInput{DType: d, Op: kernel.InterSliceOp(op), Slice: parse(slice), Time: parse(tm),
			Packet: mapping.Identity().Pad(8, mapping.Top), SliceOut: parse(sliceOut), TimeOut: parse(timeOut)}
		c, err := DeriveInterSliceReduce(Default(), in)
		if err != nil {
			return
		}
		require.NoError(t, CheckInterSliceConfig(Default(), &c))
		if c.Slices*max(c.InPackets, c.OutPackets)*c.Ratio > 1<<16 {
			return
		}
		xsrOracle(t, in, &c)
	})
}
