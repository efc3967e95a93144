package engines

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

const (
	minI32 = math.MinInt32
	maxI32 = math.MaxInt32
)

// TestFxpApply: the Fxp ops' semantics at their edges (002 L4826-4833:
// wrapping vs saturating; reference-notes L874-876 for the bit-exact
// definitions; vector-and-kernels.md VEC-EX-1, -2, -20).
func TestFxpApply(t *testing.T) {
	for _, tc := range []struct {
		op   string
		a, b int32
		want int32
		cite string
	}{
		{"AddFxp", 41, 1, 42, "002 L214: AddFxp, 1"},
		{"AddFxp", maxI32, 1, minI32, "VEC-EX-1: wraps (002 L4826)"},
		{"AddFxp", -1, 1, 0, "VEC-EX-1"},
		{"AddFxp", minI32, -1, maxI32, "002 L4826 wrapping"},
		{"AddFxpSat", maxI32, 1, maxI32, "002 L4827 saturating"},
		{"AddFxpSat", minI32, -1, minI32, "002 L4827"},
		{"AddFxpSat", maxI32 - 1, 1, maxI32, "002 L4827: exactly MAX"},
		{"AddFxpSat", 5, -7, -2, "002 L4827"},
		{"SubFxp", 10, 3, 7, "VEC-EX-12 Mode01: 10 − 3"},
		{"SubFxp", minI32, 1, maxI32, "002 L4828 wrapping"},
		{"SubFxp", 0, minI32, minI32, "002 L4828: −MIN wraps to MIN"},
		{"SubFxpSat", minI32, 1, minI32, "002 L4829 saturating"},
		{"SubFxpSat", maxI32, -1, maxI32, "002 L4829"},
		{"SubFxpSat", 0, minI32, maxI32, "002 L4829: −MIN saturates to MAX"},
		{"MulInt", 3, -4, -12, "VEC-EX-2"},
		{"MulInt", 65536, 65536, 0, "VEC-EX-2: 2^32 wraps (002 L4833)"},
		{"MulInt", minI32, -1, minI32, "002 L4833: wraps"},
		{"MulInt", 46341, 46341, int32(46341*46341 - 1<<32), "002 L4833: wraps"},
		{"MulFxp", 0x40000000, 0x40000000, 0x20000000, "VEC-EX-20: 0.5 × 0.5 = 0.25"},
		{"MulFxp", 0x40000000, -0x40000000, -0x20000000, "VEC-EX-20: 0.5 × −0.5"},
		{"MulFxp", 1, 0x40000000, 1, "VEC-EX-20: half an ulp rounds up"},
		{"MulFxp", -1, 0x40000000, 0, "VEC-EX-20: −half an ulp rounds up to 0"},
		{"MulFxp", minI32, minI32, maxI32, "VEC-EX-20: MIN × MIN → MAX"},
		{"MulFxp", minI32, maxI32, minI32 + 1, "(−1)·(1 − 2^-31) exactly"},
	} {
		t.Run(fmt.Sprintf("%s(%d,%d)", tc.op, tc.a, tc.b), func(t *testing.T) {
			got, err := FxpApply(tc.op, tc.a, tc.b)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, tc.cite)
		})
	}
	_, err := FxpApply("Nope", 1, 1)
	require.Error(t, err)
}

// TestFxpApplyOracle: every modelled op against exact big-integer
// arithmetic, wrapped or clamped as the manual's note says (002
// L4826-4833), and MulFxp against round-half-up of a·b / 2^31 (Q31).
func TestFxpApplyOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	edges := []int32{0, 1, -1, 2, -2, minI32, maxI32, minI32 + 1, maxI32 - 1, 0x40000000, -0x40000000, 65536}
	pick := func() int32 {
		if rng.Intn(3) == 0 {
			return edges[rng.Intn(len(edges))]
		}
		return int32(rng.Uint32())
	}
	two32 := new(big.Int).Lsh(big.NewInt(1), 32)
	wrap := func(v *big.Int) int32 {
		m := new(big.Int).Mod(v, two32)
		return int32(uint32(m.Uint64()))
	}
	clamp := func(v *big.Int) int32 {
		if v.Cmp(big.NewInt(maxI32)) > 0 {
			return maxI32
		}
		if v.Cmp(big.NewInt(minI32)) < 0 {
			return minI32
		}
		return int32(v.Int64())
	}
	for i := 0; i < 20000; i++ {
		a, b := pick(), pick()
		A, B := big.NewInt(int64(a)), big.NewInt(int64(b))
		want := map[string]int32{
			"AddFxp":    wrap(new(big.Int).Add(A, B)),
			"AddFxpSat": clamp(new(big.Int).Add(A, B)),
			"SubFxp":    wrap(new(big.Int).Sub(A, B)),
			"SubFxpSat": clamp(new(big.Int).Sub(A, B)),
			"MulInt":    wrap(new(big.Int).Mul(A, B)),
		}
		// Q31: floor(a·b / 2^31 + 1/2) = floor((a·b + 2^30) / 2^31).
		q := new(big.Int).Mul(A, B)
		q.Add(q, big.NewInt(1<<30))
		q.Div(q, big.NewInt(1<<31)) // Euclidean division: floor for a positive divisor
		want["MulFxp"] = clamp(q)
		for _, op := range []string{"AddFxp", "AddFxpSat", "SubFxp", "SubFxpSat", "MulInt", "MulFxp"} {
			got, err := FxpApply(op, a, b)
			require.NoError(t, err)
			require.Equal(t, want[op], got, "%s(%d, %d)", op, a, b)
		}
	}
}

func i32Packet(vs ...int32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

func TestVectorFxpPacket(t *testing.T) {
	add := &kernel.VectorOpConfig{Op: "AddFxp", ALU: kernel.ALUFxpAdd, DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8,
		Slots: []kernel.VeSlotConfig{{Guard: kernel.GuardAlways, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeConst, Bits: 1}}}}}
	in := i32Packet(0, 1, -1, maxI32, 5, 6, 7, minI32)
	out := make([]byte, 32)
	require.NoError(t, VectorOpApply(kernel.StVectorFxp, add, VEStream{Data: in, Lanes: 8}, VeSources{}, out))
	assert.Equal(t, i32Packet(1, 2, 0, minI32, 6, 7, 8, minI32+1), out)

	rd := &kernel.VRFReadConfig{Lanes: 8, ElemBytes: 4, Entries: []kernel.SeqEntry{{Size: 1}}}
	mul := &kernel.VectorOpConfig{Op: "MulInt", ALU: kernel.ALUFxpMul, DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8,
		Slots: []kernel.VeSlotConfig{{Guard: kernel.GuardAlways, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeVRF, VRF: rd}}}}}
	vrf, err := NewVRFMemory(Default())
	require.NoError(t, err)
	copy(vrf.Bytes(), i32Packet(2, 3, 4, 5, -1, 65536, 0, 2))
	src := VeSources{VRF: vrf}
	require.NoError(t, VectorOpApply(kernel.StVectorFxp, mul, VEStream{Data: in, Lanes: 8}, src, in), "out may alias in")
	assert.Equal(t, i32Packet(0, 3, -4, maxI32-4, -5, 6*65536, 0, 0), in)

	for _, tc := range []struct {
		name    string
		c       *kernel.VectorOpConfig
		in, out []byte
		src     VeSources
	}{
		{"nil config", nil, make([]byte, 32), make([]byte, 32), VeSources{}},
		{"short packet", add, make([]byte, 16), make([]byte, 32), VeSources{}},
		{"no VRF", mul, make([]byte, 32), make([]byte, 32), VeSources{}},
		{"no such op", &kernel.VectorOpConfig{Op: "AddF", DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8}, make([]byte, 32), make([]byte, 32), VeSources{}},
	} {
		assert.Error(t, VectorOpApply(kernel.StVectorFxp, tc.c, VEStream{Data: tc.in, Lanes: 8}, tc.src, tc.out), tc.name)
	}
	allocs := testing.AllocsPerRun(100, func() { _ = VectorOpApply(kernel.StVectorFxp, mul, VEStream{Data: in, Lanes: 8}, src, out) })
	assert.Zero(t, allocs)
}

func vax(t *testing.T, src string) mapping.Axes { return ceAx(t, src) }

// TestDeriveToVRF: the Hello multiplication's `collect::<m![A % 8 / 8],
// m![A % 8 % 8]>().to_vrf(0)` into `VrfTensor<i32, …, m![A % 8]>`
// (002 L280-285), the capacity fixture of reference-notes §5.4 C3 (2048 i32
// fit exactly, 4096 do not; 002 L1090), and the rules.
func TestDeriveToVRF(t *testing.T) {
	ax := vax(t, "A=2048")
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	c, err := DeriveToVRF(Default(), ToVRFInput{DType: dtype.I32, Time: m("A % 8 / 8"), Packet: m("A % 8 % 8"), Element: m("A % 8"), Base: 0})
	require.NoError(t, err)
	assert.Equal(t, kernel.ToVRFConfig{Base: 0, Flits: 1, ElemBytes: 4, ElementBytes: 32, CapacityBytes: 8192}, c)
	assert.Equal(t, "to_vrf(0): 1 flit, 32 of 8192 bytes", c.String())

	full, err := DeriveToVRF(Default(), ToVRFInput{DType: dtype.I32, Time: m("A / 8"), Packet: m("A % 8"), Element: m("A"), Base: 0})
	require.NoError(t, err, "2048 × i32 = 8 KB fits exactly (reference-notes C3)")
	assert.Equal(t, 256, full.Flits)
	assert.Equal(t, 8192, full.ElementBytes)
	assert.Equal(t, 4*2047, full.Offset(2047))

	for _, tc := range []struct {
		name string
		in   ToVRFInput
		rule string
	}{
		{"over capacity", ToVRFInput{DType: dtype.I32, Time: m("A / 8"), Packet: m("A % 8"), Element: m("A"), Base: 32}, "VRF-R3"},
		{"4096 elements", ToVRFInput{DType: dtype.I32, Time: m("A / 8 # 512"), Packet: m("A % 8"), Element: m("A / 8 # 512, A % 8"), Base: 0}, "VRF-R3"},
		{"misaligned", ToVRFInput{DType: dtype.I32, Time: m("1"), Packet: m("A % 8"), Element: m("A % 8"), Base: 2}, "VRF-R4"},
		{"half flit", ToVRFInput{DType: dtype.I32, Time: m("1"), Packet: m("A % 4"), Element: m("A % 4"), Base: 0}, "VRF-R1"},
		{"element not the stream", ToVRFInput{DType: dtype.I32, Time: m("A / 8 % 2"), Packet: m("A % 8"), Element: m("A % 8, A / 8 % 2"), Base: 0}, "VRF-R2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DeriveToVRF(Default(), tc.in)
			var v *Violation
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, tc.rule, v.Rule.ID)
		})
	}
}

// vrfOracle checks a VRF read: lane p of time step t (index X = Time(t) +
// Packet(p)) must read the VRF Element position holding X restricted to
// the VRF's axes.
func vrfOracle(ax mapping.Axes, element, time, packet *mapping.Expr, c kernel.VRFReadConfig) string {
	keep := ceKeep(ax, element)
	ps, err := ceCompile(ax, element, time, packet)
	if err != nil {
		return err.Error()
	}
	pe, pt, pp := ps[0], ps[1], ps[2]
	x, w := make([]int, ax.Len()), make([]int, ax.Len())
	if c.Steps() != time.Size() {
		return fmt.Sprintf("read covers %d steps, Time has %d", c.Steps(), time.Size())
	}
	for ti := 0; ti < time.Size(); ti++ {
		for p := 0; p < packet.Size(); p++ {
			clear(x)
			if !pt.add(ti, x) || !pp.add(p, x) || !ceInRange(ax, x) {
				continue
			}
			q := c.Element(ti) + p
			clear(w)
			if q < 0 || q >= element.Size() || !pe.add(q, w) || !ceInRange(ax, w) {
				return fmt.Sprintf("t=%d lane %d %v reads padding or outside the Element at %d", ti, p, x, q)
			}
			if !ceSameRestricted(x, w, keep) {
				return fmt.Sprintf("t=%d lane %d reads %v, want %v restricted to the VRF axes", ti, p, w, x)
			}
		}
	}
	return ""
}

// TestDeriveVRFRead: the manual's VRF operand (002 L5066-5079: stream
// Time m![B], Packet m![A % 2 # 8]; VRF Element m![A % 2 # 8], no B) re-reads
// one flit for every B; the Hello multiplication reads its single flit
// (002 L280-295); the rule's failures.
func TestDeriveVRFRead(t *testing.T) {
	ax := vax(t, "A=512, B=256")
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	in := VRFReadInput{Tensor: "vrf", DType: dtype.I32, Element: m("A % 2 # 8"), Base: 64, Time: m("B"), Packet: m("A % 2 # 8")}
	c, err := DeriveVRFRead(Default(), in)
	require.NoError(t, err)
	assert.Equal(t, []kernel.SeqEntry{{Size: 256, Stride: 0, Term: "B"}}, c.Entries)
	assert.Equal(t, "vrf vrf @ 64 [256:0]", c.String())
	assert.Empty(t, vrfOracle(ax, in.Element, in.Time, in.Packet, c))

	ax2 := vax(t, "A=2048")
	h := VRFReadInput{Tensor: "rhs_vrf", DType: dtype.I32, Element: ceM(t, ax2, "A % 8"), Time: ceM(t, ax2, "1"), Packet: ceM(t, ax2, "A % 8")}
	c, err = DeriveVRFRead(Default(), h)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Steps())
	assert.Equal(t, 0, c.Element(0))
	assert.Empty(t, vrfOracle(ax2, h.Element, h.Time, h.Packet, c))

	ax3 := vax(t, "A=8, B=4, C=3")
	m3 := func(s string) *mapping.Expr { return ceM(t, ax3, s) }
	for _, tc := range []struct {
		name                  string
		element, time, packet string
		dt                    dtype.DType
		rule                  string
	}{
		{"lanes are not the innermost VRF elements", "A, B", "B", "A", dtype.I32, "VE-R15"},
		{"VRF digit never read", "B, A", "C", "A", dtype.I32, "VE-R15"},
		{"Time steps a VRF axis in another digit", "B % 2, A", "B", "A", dtype.I32, "VE-R15"},
		{"bf16 operand", "A", "1", "A", dtype.BF16, "VE-R1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DeriveVRFRead(Default(), VRFReadInput{Tensor: "v", DType: tc.dt, Element: m3(tc.element), Time: m3(tc.time), Packet: m3(tc.packet)})
			var v *Violation
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, tc.rule, v.Rule.ID)
		})
	}
}

// TestDeriveVRFReadOracle: random VRF layouts and stream orders (split
// axes, an axis the VRF lacks, padding) checked by vrfOracle.
func TestDeriveVRFReadOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for iter := 0; iter < 300; iter++ {
		b, c, d := 2*(1+rng.Intn(3)), 1+rng.Intn(3), 1+rng.Intn(3)
		ax := vax(t, fmt.Sprintf("A=8, B=%d, C=%d, D=%d", b, c, d))
		outer := []string{"B / 2", "B % 2", "C"}
		rng.Shuffle(len(outer), func(i, j int) { outer[i], outer[j] = outer[j], outer[i] })
		tm := append([]string{"D"}, outer...)
		rng.Shuffle(len(tm), func(i, j int) { tm[i], tm[j] = tm[j], tm[i] })
		if rng.Intn(3) == 0 {
			tm = append([]string{"1 # 2"}, tm...)
		}
		packet := "A"
		if rng.Intn(2) == 0 {
			packet = "A % 4 # 8"
			ax = vax(t, fmt.Sprintf("A=4, B=%d, C=%d, D=%d", b, c, d))
		}
		elem := strings.Join(append(outer, packet), ", ")
		in := VRFReadInput{Tensor: "v", DType: dtype.I32, Element: ceM(t, ax, elem), Time: ceM(t, ax, strings.Join(tm, ", ")), Packet: ceM(t, ax, packet)}
		cfg, err := DeriveVRFRead(Default(), in)
		require.NoError(t, err, "iter %d: Element %s, Time %s", iter, elem, strings.Join(tm, ", "))
		require.Empty(t, vrfOracle(ax, in.Element, in.Time, in.Packet, cfg), "iter %d: Element %s, Time %s: %v", iter, elem, strings.Join(tm, ", "), cfg.Entries)
	}
}

func TestDeriveVectorInitAndBranch(t *testing.T) {
	ax := vax(t, "A=2048")
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	c, err := DeriveVectorInit(Default(), VectorInitInput{DType: dtype.I32, Time: m("1"), Packet: m("A % 8")})
	require.NoError(t, err)
	assert.Equal(t, kernel.VectorInitConfig{DType: dtype.I32, Lanes: 8, Packets: 1}, c)
	for _, tc := range []struct {
		name   string
		dt     dtype.DType
		packet string
		rule   string
	}{
		{"bf16 (002 L4551)", dtype.BF16, "A % 16", "VE-R1"},
		{"i8", dtype.I8, "A % 32", "VE-R1"},
		{"half flit", dtype.F32, "A % 4", "VE-R19"},
	} {
		_, err := DeriveVectorInit(Default(), VectorInitInput{DType: tc.dt, Time: m("1"), Packet: m(tc.packet)})
		var v *Violation
		require.True(t, errors.As(err, &v), "%s: %v", tc.name, err)
		assert.Equal(t, tc.rule, v.Rule.ID, tc.name)
	}
	b, err := DeriveVectorBranchSpec(Default(), kernel.BranchSpec{Mode: kernel.BranchUnconditional}, VectorStream{DType: dtype.I32, Time: m("1"), Packet: m("A % 8")})
	require.NoError(t, err)
	assert.Equal(t, kernel.BranchUnconditional, b.Mode)
	_, err = DeriveVectorBranchSpec(Default(), kernel.BranchSpec{Mode: kernel.BranchVrf}, VectorStream{DType: dtype.I32, Time: m("1"), Packet: m("A % 8")})
	assert.ErrorIs(t, err, ErrNotModelled)
}

// vectorEngineOf names the StageConfig field each stage kind sets.
var vectorEngineOf = map[kernel.StageKind]string{
	kernel.StFetch: "fetch", kernel.StCollect: "collect", kernel.StCommit: "commit",
	kernel.StVectorInit: "vector_init", kernel.StVectorBranch: "vector_branch", kernel.StVectorFxp: "vector_op",
	kernel.StVectorFinal: "vector_final", kernel.StToVRF: "to_vrf",
}

// TestLowerHelloVector lowers the manual's constant addition (002
// L158-219) and elementwise multiplication (002 L221-298): every stage gets
// exactly its engine's configuration, the lowered JSON round-trips, and the
// HBM and DM tensors do not overlap (002 L154-155; docs/spec-decisions.md
// "Hello elementwise multiplication output address").
func TestLowerHelloVector(t *testing.T) {
	for _, name := range []string{"hello-add", "hello-mul"} {
		t.Run(name, func(t *testing.T) {
			p := loadKernel(t, name)
			require.NoError(t, Lower(Default(), p))
			for i, op := range p.Ops {
				if op.Kind != kernel.OpChain {
					require.NotNil(t, op.DMA, "ops[%d]", i)
					continue
				}
				for k, st := range op.Stages {
					if st.Kind == kernel.StBegin {
						continue
					}
					require.NotNil(t, st.Config, "ops[%d].stages[%d]", i, k)
					fields := map[string]any{}
					b, err := json.Marshal(st.Config)
					require.NoError(t, err)
					require.NoError(t, json.Unmarshal(b, &fields))
					assert.Len(t, fields, 1, "ops[%d].stages[%d] %s: %s", i, k, st.Kind, b)
					assert.Contains(t, fields, vectorEngineOf[st.Kind], "ops[%d].stages[%d]", i, k)
				}
			}
			out, err := json.Marshal(p)
			require.NoError(t, err)
			again, err := json.Marshal(parseKernel(t, string(out)))
			require.NoError(t, err)
			assert.Equal(t, string(out), string(again))

			// Disjoint addresses per memory (HBM per chip, DM per slice).
			type span struct {
				name   string
				lo, hi int64
			}
			byMem := map[kernel.Memory][]span{}
			for _, tn := range p.Tensors {
				n := tn.Element.Size()
				bytes, err := tn.DType.BytesFor(n)
				require.NoError(t, err)
				byMem[tn.Mem] = append(byMem[tn.Mem], span{tn.Name, tn.Addr, tn.Addr + int64(bytes)})
			}
			for mem, ss := range byMem {
				for i := range ss {
					for j := i + 1; j < len(ss); j++ {
						assert.False(t, ss[i].lo < ss[j].hi && ss[j].lo < ss[i].hi, "%s: %s and %s overlap", mem, ss[i].name, ss[j].name)
					}
				}
			}
		})
	}
	p := loadKernel(t, "hello-add")
	require.NoError(t, Lower(Default(), p))
	fxp := p.Ops[1].Stages[5].Config.VectorOp
	require.NotNil(t, fxp)
	assert.Equal(t, "AddFxp (FxpAdd) Mode01, 0x1", fxp.String())
	q := loadKernel(t, "hello-mul")
	require.NoError(t, Lower(Default(), q))
	mul := q.Ops[3].Stages[5].Config.VectorOp
	require.NotNil(t, mul)
	assert.Equal(t, "MulInt (FxpMul) Mode01, vrf rhs_vrf @ 0 [1:0]", mul.String())
}

// TestHelloMulSlice runs one slice of the lowered Hello multiplication's
// vector path with the engine semantics: to_vrf stores the rhs flit, the
// VRF read returns it, MulInt multiplies lane by lane; compared with int64
// products truncated to 32 bits.
func TestHelloMulSlice(t *testing.T) {
	p := loadKernel(t, "hello-mul")
	require.NoError(t, Lower(Default(), p))
	toVRF := p.Ops[2].Stages[3].Config.ToVRF
	fxp := p.Ops[3].Stages[5].Config.VectorOp
	require.NotNil(t, toVRF)
	require.NotNil(t, fxp)
	vrf, err := NewVRFMemory(Default())
	require.NoError(t, err)
	lhs := []int32{1, -2, 3, maxI32, minI32, 65536, 7, -8}
	rhs := []int32{5, 6, -7, 2, -1, 65536, 0, -8}
	require.NoError(t, vrf.StoreFlit(toVRF, 0, i32Packet(rhs...)))
	flit := make([]byte, 32)
	require.NoError(t, vrf.ReadFlit(fxp.VRF(), 0, flit))
	out := make([]byte, 32)
	require.NoError(t, VectorOpApply(kernel.StVectorFxp, fxp, VEStream{Data: i32Packet(lhs...), Lanes: 8}, VeSources{VRF: vrf}, out))
	for i := range lhs {
		want := int32(uint32(int64(lhs[i]) * int64(rhs[i])))
		assert.Equal(t, want, int32(binary.LittleEndian.Uint32(out[4*i:])), "lane %d", i)
	}
	assert.Error(t, vrf.StoreFlit(toVRF, 1, flit), "one flit only")
	assert.Error(t, vrf.ReadFlit(fxp.VRF(), 1, flit), "one step only")
	allocs := testing.AllocsPerRun(100, func() {
		_ = vrf.StoreFlit(toVRF, 0, flit)
		_ = vrf.ReadFlit(fxp.VRF(), 0, flit)
	})
	assert.Zero(t, allocs)
}

// TestLowerVectorRules: the pass structure and the VE/VRF rules, located in
// the program.
func TestLowerVectorRules(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile("../workloads/kernels/" + name + ".json")
		require.NoError(t, err)
		return string(data)
	}
	for _, tc := range []struct {
		name, file, old, new, rule string
		notModelled                bool
	}{
		{"ALU conflict (002 L5260-5269)", "hello-add",
			`{"kind": "vector_fxp", "param": "AddFxp, 1"},`,
			`{"kind": "vector_fxp", "param": "AddFxp, 10"}, {"kind": "vector_fxp", "param": "MulInt, 2"}, {"kind": "vector_fxp", "param": "SubFxp, 5"},`,
			"VE-R5", false},
		{"fxp before branch", "hello-add",
			`{"kind": "vector_branch", "param": "Unconditional"},
      {"kind": "vector_fxp", "param": "AddFxp, 1"},`,
			`{"kind": "vector_fxp", "param": "AddFxp, 1"},
      {"kind": "vector_branch", "param": "Unconditional"},`,
			"VE-R3", false},
		{"commit inside the pass", "hello-add", `{"kind": "vector_final"},`, ``, "VE-R20", false},
		{"fxp outside a pass", "hello-add", `{"kind": "vector_init"},`, ``, "VE-R3", false},
		{"vector_init after fetch", "hello-add", `{"kind": "collect", "time": "1", "packet": "A % 8"},`, ``, "VE-R3", false},
		{"Fxp on f32", "hello-add", `"i32"`, `"f32"`, "VE-R7", false},
		{"VRF over capacity", "hello-mul", `"element": "A % 8", "addr": 0},
    {"name": "result"`, `"element": "A % 8", "addr": 8176},
    {"name": "result"`, "VRF-R3", false},
		{"VRF on other slices", "hello-mul", `{"name": "rhs_vrf", "mem": "vrf", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 8 # 256"`,
			`{"name": "rhs_vrf", "mem": "vrf", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256, A / 8"`, "VRF-R5", false},
		{"branch mode Vrf", "hello-add", `"param": "Unconditional"`, `"param": "Vrf"`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := read(tc.file)
			require.Contains(t, src, tc.old)
			n := 1
			if tc.old == `"i32"` {
				n = -1
			}
			p := parseKernel(t, strings.Replace(src, tc.old, tc.new, n))
			err := Lower(Default(), p)
			require.Error(t, err)
			var le *LowerError
			require.True(t, errors.As(err, &le), "%v", err)
			if tc.notModelled {
				assert.ErrorIs(t, err, ErrNotModelled)
				return
			}
			var v *Violation
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
		})
	}
	// The ALU conflict's message is the manual's panic text (002 L5262).
	p := parseKernel(t, strings.Replace(read("hello-add"), `{"kind": "vector_fxp", "param": "AddFxp, 1"},`,
		`{"kind": "vector_fxp", "param": "AddFxp, 10"}, {"kind": "vector_fxp", "param": "MulInt, 2"}, {"kind": "vector_fxp", "param": "SubFxp, 5"},`, 1))
	err := Lower(Default(), p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ops[1].stages[7] (vector_fxp): vector: FxpAdd is already in use (002 L4750")
}
