package engines

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// colCase is one collect derivation as the manual states it.
type colCase struct {
	name   string
	cite   string
	axes   string
	dtype  string
	time   string
	packet string
	dual   bool
	// The stated outputs; when outTime/outPacket are set they are also
	// passed to the derivation to be checked.
	outTime, outPacket string
	flits, padBytes    int
	wantRule           string
	// wantExp are the expected outputs the violation names (the corrected
	// collect), checked by equivalence.
	wantT, wantP string
}

var colCases = []colCase{
	{name: "COL-EX-1 identity", cite: "002 L3565-3576, L3620-3635",
		axes: "A=8, B=32", dtype: "i8", time: "A", packet: "B # 32",
		outTime: "A", outPacket: "B # 32", flits: 1},
	{name: "COL-EX-1 identity from the unpadded packet", cite: "002 L3565-3576",
		axes: "A=8, B=32", dtype: "i8", time: "A", packet: "B",
		outTime: "A", outPacket: "B # 32", flits: 1},
	{name: "COL-EX-2 sub-flit", cite: "002 L3577-3588, L3636-3652",
		axes: "A=8, B=16", dtype: "i8", time: "A", packet: "B",
		outTime: "A", outPacket: "B # 32", flits: 1, padBytes: 16},
	{name: "COL-EX-3 multi-flit", cite: "002 L3589-3603, L3653-3669",
		axes: "A=8, B=32", dtype: "bf16", time: "A", packet: "B",
		outTime: "A, B / 16", outPacket: "B % 16", flits: 2},
	{name: "COL-EX-4 direct collect from fetch", cite: "002 L3612-3618",
		axes: "A=8, B=64", dtype: "i8", time: "A", packet: "B",
		outTime: "A, B / 32", outPacket: "B % 32", flits: 2},
	{name: "COL-EX-5 dot product (Hello)", cite: "002 L370-375",
		axes: "A=2048", dtype: "bf16", time: "1", packet: "A",
		outTime: "A / 16", outPacket: "A % 16", flits: 128},
	{name: "COL-EX-5 dot product, sub context form", cite: "002 L344-346",
		axes: "A=2048", dtype: "bf16", time: "1", packet: "A",
		outTime: "1, A / 16", outPacket: "A % 16", flits: 128},
	{name: "COL-EX-6 40-byte packet", cite: "002 L2123-2124",
		axes: "A=4, X=40", dtype: "i8", time: "A", packet: "X",
		outTime: "A, X # 64 / 32", outPacket: "X # 64 % 32", flits: 2, padBytes: 24},
	{name: "COL-EX-7 constant addition (Hello)", cite: "002 L207-209",
		axes: "A=8", dtype: "i32", time: "1", packet: "A % 8",
		outTime: "1", outPacket: "A % 8", flits: 1},
	{name: "COL-EX-7 VRF load (Hello)", cite: "002 L284",
		axes: "A=8", dtype: "i32", time: "1", packet: "A % 8",
		outTime: "A % 8 / 8", outPacket: "A % 8 % 8", flits: 1},
	{name: "GEMV vector to TRF (Hello)", cite: "002 L452-454",
		axes: "I=256, J=2048", dtype: "bf16", time: "1", packet: "J",
		outTime: "J / 16", outPacket: "J % 16", flits: 128},
	{name: "GEMM B to TRF (Hello)", cite: "002 L535-537",
		axes: "I=512, J=512, K=2048", dtype: "bf16", time: "J % 8, J / 8 % 4", packet: "K",
		outTime: "J % 8, J / 8 % 4, K / 16", outPacket: "K % 16", flits: 128},
	{name: "GEMM A main path (Hello)", cite: "002 L544-546",
		axes: "I=512, J=512, K=2048", dtype: "bf16", time: "I % 32, J / 8 % 4", packet: "K",
		outTime: "I % 32, J / 8 % 4, K / 16", outPacket: "K % 16", flits: 128},
	{name: "i4 flit holds 64 elements", cite: "002 L4383, L2231",
		axes: "A=2, B=100", dtype: "i4", time: "A", packet: "B",
		outTime: "A, B # 128 / 64", outPacket: "B # 128 % 64", flits: 2, padBytes: 14},
	{name: "dual channel 64-byte flit", cite: "002 L1997, L2127",
		axes: "A=8, B=64", dtype: "i8", time: "A", packet: "B", dual: true,
		outTime: "A", outPacket: "B", flits: 1},
	{name: "dual channel multi-flit", cite: "002 L1997, L2127",
		axes: "A=8, B=64", dtype: "bf16", time: "A", packet: "B", dual: true,
		outTime: "A, B / 32", outPacket: "B % 32", flits: 2},

	// Examples whose collect keeps a packet that is not one flit
	// (spec-decisions "Collect examples that are not one flit").
	{name: "GEMV main path keeps a 64-byte packet", cite: "002 L414-415, L455-456",
		axes: "I=256, J=2048", dtype: "bf16", time: "J / 32", packet: "J % 32",
		outTime: "J / 32", outPacket: "J % 32", wantRule: "COL-R1",
		wantT: "J / 32, J % 32 / 16", wantP: "J % 16"},
	{name: "GEMV main path is one flit in dual channel mode", cite: "002 L455-456, L1997, L2127",
		axes: "I=256, J=2048", dtype: "bf16", time: "J / 32", packet: "J % 32", dual: true,
		outTime: "J / 32", outPacket: "J % 32", flits: 1},
	{name: "SW-EX-2 forwarding keeps a 128-byte packet", cite: "002 L3129-3135",
		axes: "A=256, B=64, C=32", dtype: "f32", time: "B", packet: "C",
		outTime: "B", outPacket: "C", wantRule: "COL-R1",
		wantT: "B, C / 8", wantP: "C % 8"},
	{name: "axis permutation collects 30 bytes", cite: "002 L7622-7624",
		axes: "A=3, B=5, C=2", dtype: "f8e4m3", time: "A, B", packet: "C # 6",
		outTime: "A, B", outPacket: "C # 30", wantRule: "COL-R1",
		wantT: "A, B", wantP: "C # 32"},
	{name: "full-flit commit collects 22 bytes", cite: "002 L7717-7719",
		axes: "A=3, B=5, C=2", dtype: "f8e4m3", time: "A", packet: "[B, C] # 22",
		outTime: "A", outPacket: "[B, C] # 22", wantRule: "COL-R1",
		wantT: "A", wantP: "[B, C] # 32"},
	{name: "wrong inner flit", cite: "002 L3550",
		axes: "A=8, B=64", dtype: "i8", time: "A", packet: "B",
		outTime: "A, B % 2", outPacket: "B / 2", wantRule: "COL-R2"},
	{name: "flit count not appended innermost", cite: "002 L3603",
		axes: "A=8, B=64", dtype: "i8", time: "A", packet: "B",
		outTime: "B / 32, A", outPacket: "B % 32", wantRule: "COL-R3"},
	{name: "odd i4 packet", cite: "002 L3037",
		axes: "A=8, B=63", dtype: "i4", time: "A", packet: "B", wantRule: "COL-R6"},
}

func colRequest(t *testing.T, c colCase) (CollectRequest, mapping.Axes) {
	t.Helper()
	axes, err := mapping.ParseAxes(c.axes)
	require.NoError(t, err)
	d, err := dtype.Parse(c.dtype)
	require.NoError(t, err)
	return CollectRequest{DType: d, Time: swParse(t, axes, c.time), Packet: swParse(t, axes, c.packet),
		OutTime: swParse(t, axes, c.outTime), OutPacket: swParse(t, axes, c.outPacket), DualChannel: c.dual}, axes
}

func TestCollectManualExamples(t *testing.T) {
	for _, c := range colCases {
		t.Run(c.name, func(t *testing.T) {
			req, axes := colRequest(t, c)
			plan, err := DeriveCollect(Default(), req)
			if c.wantRule != "" {
				var v *Violation
				require.True(t, errors.As(err, &v), "%s: want a violation, got %v", c.cite, err)
				assert.Equal(t, c.wantRule, v.Rule.ID, "%s: %v", c.cite, err)
				assert.True(t, strings.HasPrefix(err.Error(), "collect: "), err.Error())
				if c.wantT != "" {
					// The corrected collect: derive without the stated outputs.
					req.OutTime, req.OutPacket = nil, nil
					plan, err := DeriveCollect(Default(), req)
					require.NoError(t, err)
					assert.True(t, switchSame(plan.OutTime, swParse(t, axes, c.wantT)), "%s: Time %s, want %s", c.cite, plan.OutTime, c.wantT)
					assert.True(t, switchSame(plan.OutPacket, swParse(t, axes, c.wantP)), "%s: Packet %s, want %s", c.cite, plan.OutPacket, c.wantP)
					assert.Contains(t, err2str(DeriveCollect(Default(), CollectRequest{DType: req.DType, Time: req.Time, Packet: req.Packet,
						OutPacket: swParse(t, axes, c.outPacket)})), "expected m![")
				}
				return
			}
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.flits, plan.Collect.Flits, c.cite)
			assert.Equal(t, c.padBytes, plan.Collect.PadBytes, c.cite)
			assert.True(t, switchSame(plan.OutTime, req.OutTime), "%s: Time %s, want %s", c.cite, plan.OutTime, c.outTime)
			assert.True(t, switchSame(plan.OutPacket, req.OutPacket), "%s: Packet %s, want %s", c.cite, plan.OutPacket, c.outPacket)
			collectOracle(t, axes, req, plan)
		})
	}
}

func err2str(_ any, err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// collectOracle checks CollectApply against the mapping semantics: every
// output element (t2, p2) carries the bytes of the input element (t, p) that
// holds the same index, Time2(t2) + Packet2(p2) = Time(t) + Packet(p), and
// every padding element the Collect Engine adds is zero (002 L2122). Byte
// provenance is traced by running CollectApply on three byte planes of the
// input's byte numbers.
func collectOracle(t oracleTB, axes mapping.Axes, req CollectRequest, plan *CollectPlan) {
	t.Helper()
	c := &plan.Collect
	in := c.InTime * c.PacketBytes
	out := c.OutTime() * c.FlitBytes
	require.Less(t, in, 1<<24)
	prov := make([]int, out) // input byte number + 1; 0 for added padding
	for plane := 0; plane < 3; plane++ {
		src, dst := make([]byte, in), make([]byte, out)
		for i := range src {
			src[i] = byte((i + 1) >> (8 * plane))
		}
		require.NoError(t, CollectApply(c, dst, src))
		for i, b := range dst {
			prov[i] |= int(b) << (8 * plane)
		}
	}
	bits := req.DType.SizeBits()
	elems := c.FlitBytes * 8 / bits
	require.Equal(t, plan.OutPacket.Size(), elems)
	// Time and Packet decode jointly, as positions of the pair [Time,
	// Packet], so that the split of a composite packet decodes its summed
	// position (002 L1023-1024); padding and overshoot read "pad".
	// compile returns the coordinates of position i, nil for padding (the
	// slice is reused by the next call).
	compile := func(e *mapping.Expr) func(int) []int {
		p, err := mapping.Compile(e, axes)
		require.NoError(t, err)
		buf := make([]int, p.Slots())
		return func(i int) []int {
			if k, _ := p.Eval(i, buf); k == mapping.Live {
				return buf[:p.Coords()]
			}
			return nil
		}
	}
	inTP, outTP := compile(mapping.Pair(req.Time, req.Packet)), compile(mapping.Pair(plan.OutTime, plan.OutPacket))
	bad := 0
	for t2 := 0; t2 < c.OutTime(); t2++ {
		for p2 := 0; p2 < elems; p2++ {
			want := outTP(t2*elems + p2)
			bit := t2*c.FlitBytes*8 + p2*bits
			pv := prov[bit/8]
			if pv == 0 {
				// Added padding: the output element must be padding.
				if want != nil && bad < 5 {
					bad++
					t.Errorf("output (%d, %d) holds %s but reads added zero padding", t2, p2, switchIndex(axes, want))
				}
				continue
			}
			ib := (pv-1)*8 + bit%8 // input bit
			ti, pi := ib/(c.PacketBytes*8), ib%(c.PacketBytes*8)/bits
			got := inTP(ti*req.Packet.Size() + pi)
			if (got == nil) != (want == nil) || !slices.Equal(got, want) {
				if bad < 5 {
					bad++
					t.Errorf("output (%d, %d) holds %s but carries input (%d, %d) holding %s", t2, p2, switchIndex(axes, want), ti, pi, switchIndex(axes, got))
				}
			}
		}
	}
}

// TestCollectOracleCatchesWrongMappings: the oracle fails a collect whose
// mappings do not describe its flits.
func TestCollectOracleCatchesWrongMappings(t *testing.T) {
	c := colCases[3] // COL-EX-3, 002 L3589-3603
	require.Equal(t, "COL-EX-3 multi-flit", c.name)
	req, axes := colRequest(t, c)
	plan, err := DeriveCollect(Default(), req)
	require.NoError(t, err)
	assert.Empty(t, runOracle(func(tb oracleTB) { collectOracle(tb, axes, req, plan) }))
	for _, w := range [][2]string{{"B / 16, A", "B % 16"}, {"A, B % 2", "B / 2"}, {"A, B / 16", "B % 16 # 16"}} {
		wrong := *plan
		wrong.OutTime, wrong.OutPacket = swParse(t, axes, w[0]), swParse(t, axes, w[1])
		if w[1] == "B % 16 # 16" {
			// One element short: pad the last element instead.
			wrong.OutPacket = swParse(t, axes, "B % 16 = 15 # 16")
		}
		assert.NotEmpty(t, runOracle(func(tb oracleTB) { collectOracle(tb, axes, req, &wrong) }), "%v", w)
	}
}

// TestCollectProperty: random Time/Packet mappings and element types derive
// a collect whose semantics agree with the derived mappings.
func TestCollectProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	types := []dtype.DType{dtype.I4, dtype.I8, dtype.F8E4M3, dtype.BF16, dtype.I32, dtype.F32}
	for iter := 0; iter < 200; iter++ {
		d := types[rng.Intn(len(types))]
		a, b, c := 1+rng.Intn(4), 1+rng.Intn(40), 1+rng.Intn(5)
		axes, err := mapping.ParseAxes(fmt.Sprintf("A=%d, B=%d, C=%d", a, b, c))
		require.NoError(t, err)
		packets := []string{"B", "B, C", "C, B", fmt.Sprintf("B # %d", b+rng.Intn(9)), "[B, C] / 1"}
		pk := packets[rng.Intn(len(packets))]
		P := swParse(t, axes, pk)
		if d.SizeBits() == 4 && P.Size()%2 == 1 {
			continue
		}
		times := []string{"A", "1", "A, 1 # 2"}
		req := CollectRequest{DType: d, Time: swParse(t, axes, times[rng.Intn(len(times))]), Packet: P, DualChannel: rng.Intn(4) == 0}
		plan, err := DeriveCollect(Default(), req)
		require.NoError(t, err, "%s %s", d, pk)
		assert.Equal(t, plan.Collect.Flits*plan.Collect.FlitBytes-plan.Collect.PacketBytes, plan.Collect.PadBytes)
		t.Run(fmt.Sprintf("%d %s %s", iter, d, pk), func(t *testing.T) {
			collectOracle(t, axes, req, plan)
			// The derived mappings pass their own check.
			req2 := req
			req2.OutTime, req2.OutPacket = plan.OutTime, plan.OutPacket
			_, err := DeriveCollect(Default(), req2)
			assert.NoError(t, err)
		})
	}
}

// TestCollectApplyRejects: CollectApply checks its buffers and
// configuration instead of panicking.
func TestCollectApplyRejects(t *testing.T) {
	axes, err := mapping.ParseAxes("A=4, X=40")
	require.NoError(t, err)
	plan, err := DeriveCollect(Default(), CollectRequest{DType: dtype.I8, Time: swParse(t, axes, "A"), Packet: swParse(t, axes, "X")})
	require.NoError(t, err)
	c := plan.Collect
	src, dst := make([]byte, 4*40), make([]byte, 4*64)
	require.NoError(t, CollectApply(&c, dst, src))
	assert.Error(t, CollectApply(nil, dst, src))
	assert.Error(t, CollectApply(&c, dst[1:], src))
	assert.Error(t, CollectApply(&c, dst, src[1:]))
	bad := c
	bad.Flits = 3
	assert.Error(t, CollectApply(&bad, make([]byte, 4*96), src))
	bad = c
	bad.FlitBytes = 0
	assert.Error(t, CollectApply(&bad, dst, src))
	assert.Equal(t, "40 B packet → 2 flits × 32 B (24 B zero padding)", c.String())
}

// TestCollectMissingInputs: bad requests are errors, not panics.
func TestCollectMissingInputs(t *testing.T) {
	axes, err := mapping.ParseAxes("A=4, X=40")
	require.NoError(t, err)
	a, x := swParse(t, axes, "A"), swParse(t, axes, "X")
	for _, req := range []CollectRequest{
		{DType: dtype.I8, Time: a},
		{DType: dtype.I8, Packet: x},
		{Time: a, Packet: x},
		{DType: dtype.I8, Time: a, Packet: mapping.Sym("X", -1)},
		{DType: dtype.I8, Time: a, Packet: x, OutTime: mapping.Sym("", 3)},
	} {
		_, err := DeriveCollect(Default(), req)
		assert.Error(t, err)
	}
	_, err = DeriveCollect(nil, CollectRequest{})
	assert.Error(t, err)
}

func BenchmarkCollectApply(b *testing.B) {
	axes, _ := mapping.ParseAxes("A=256, X=40")
	plan, err := DeriveCollect(Default(), CollectRequest{DType: dtype.I8, Time: mapping.MustParse("A", axes, nil), Packet: mapping.MustParse("X", axes, nil)})
	if err != nil {
		b.Fatal(err)
	}
	src, dst := make([]byte, 256*40), make([]byte, 256*64)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		if err := CollectApply(&plan.Collect, dst, src); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDeriveCollect: DeriveCollect never panics, and whatever it derives
// runs and agrees with the mapping semantics.
func FuzzDeriveCollect(f *testing.F) {
	for _, c := range colCases {
		f.Add(c.axes, c.dtype, c.time, c.packet, c.outTime, c.outPacket, c.dual)
	}
	f.Fuzz(func(t *testing.T, axesSrc, dt, tm, pk, outT, outP string, dual bool) {
		axes, err := mapping.ParseAxes(axesSrc)
		if err != nil {
			return
		}
		d, err := dtype.Parse(dt)
		if err != nil {
			return
		}
		parse := func(src string) *mapping.Expr {
			if src == "" {
				return nil
			}
			e, err := mapping.Parse(src, axes, nil)
			if err != nil {
				return nil
			}
			return e
		}
		req := CollectRequest{DType: d, Time: parse(tm), Packet: parse(pk), OutTime: parse(outT), OutPacket: parse(outP), DualChannel: dual}
		plan, err := DeriveCollect(Default(), req)
		if err != nil {
			return
		}
		c := &plan.Collect
		if c.InTime*c.PacketBytes > 1<<14 || c.OutTime()*c.FlitElems > 1<<14 {
			return
		}
		if errs := runOracle(func(tb oracleTB) { collectOracle(tb, axes, req, plan) }); len(errs) > 0 {
			t.Fatalf("oracle: %v", errs)
		}
	})
}
