package engines

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// TestReducerManualExamples reproduces the Reducer configurations the
// manual states: tree depth, valid columns, accumulation iterations and the
// buffer-capacity arithmetic.
func TestReducerManualExamples(t *testing.T) {
	spec := Default()
	cases := []struct {
		chain               string
		cite                string
		depth, valid, iters int
		inner, capacity     int
		outLen              int
	}{
		// "Spatial reduction: tree depth 5 reduces 32 bf16 elements along B → f32";
		// nothing is reduced in time.
		{"RED-EX-1 matrix multiplication", "002 L4351-4352", 5, 1, 1, 1, 128, 8},
		// "tree depth 2 reduces groups of 4 bf16 -> 1 f32, leaving K % 16 / 4 (4)
		// columns"; "K / 16 (4) iterations"; "m = 4 valid columns"; "M and
		// K % 16 / 4, with a total size of 4 × 4 = 16 ... (≤ 128)".
		{"RED-EX-4 interleaved", "002 L4467-4481", 2, 4, 4, 16, 128, 8},
		// Same spatial stage; "Packet_inner = [K % 16 / 4 # 8]"; "M and N, with
		// a total size of 4 × 8 = 32 ... (≤ 32)".
		{"RED-EX-5 sequential", "002 L4509-4525", 2, 4, 4, 32, 32, 8},
		// contract::<m![L]>() on [L = 2, K = 16]: K (16 = 2^4) is reduced; the
		// output keeps Time [M, O, L] (002 L3866-3871).
		{"AL-EX-1 batched matmul", "002 L3866-3871", 4, 2, 1, 2, 128, 8},
		{"TRF-EX-1 basic weight broadcasting", "002 L4242-4246", 5, 1, 1, 1, 128, 8},
		{"TRF-EX-2 small reg_read_size", "002 L4289-4293", 4, 2, 1, 2, 128, 8},
		// The dot product reduces A % 32 in the tree and A / 32 (64 flit pairs)
		// in the accumulator into one value (002 L354-357).
		{"HELLO-EX-1 dot product", "002 L354-357", 5, 1, 64, 1, 128, 8},
		{"HELLO-EX-2 GEMV (one slice)", "002 L414-415, L457-459", 5, 1, 64, 1, 128, 8},
		// K % 32 in the tree, K / 32 in the accumulator, innermost in Time.
		{"HELLO-EX-3 GEMM, K = 1024 (one slice)", "002 L517-519", 5, 1, 32, 1, 128, 8},
	}
	chains := map[string]ceChain{}
	for _, ch := range ceChains {
		chains[ch.name] = ch
	}
	for _, tc := range cases {
		t.Run(tc.chain, func(t *testing.T) {
			ch, ok := chains[tc.chain]
			require.True(t, ok)
			ax := ceAx(t, ch.axes)
			c, err := DeriveReducer(spec, ReducerInput{DType: ch.d, Row: ceM(t, ax, ch.row), Time: ceM(t, ax, ch.outTime),
				Packet: ceM(t, ax, ch.outPacket), ContractPacket: ceM(t, ax, ch.contract), OutTime: ceM(t, ax, ch.accTime),
				OutPacket: ceM(t, ax, ch.accPacket), Kind: ch.kind})
			require.NoError(t, err, tc.cite)
			assert.Equal(t, tc.depth, c.Contract.Depth, "tree depth, %s", tc.cite)
			assert.Equal(t, tc.valid, c.Contract.Valid, "m, %s", tc.cite)
			assert.Equal(t, dtype.F32, c.Contract.Out, "widening, 002 L4391")
			assert.Equal(t, tc.iters, c.Accumulate.Iterations, "iterations, %s", tc.cite)
			assert.Equal(t, tc.inner, c.Accumulate.InnerAxes, "inner axes, %s", tc.cite)
			assert.Equal(t, tc.capacity, c.Accumulate.Capacity, "capacity, %s", tc.cite)
			assert.Equal(t, tc.outLen, c.Accumulate.OutLen)
		})
	}
}

// TestAccumulatorSlots reproduces the buffer-slot table of 002 L4410-4431:
// Time = [B / 4, A % 8] reduced along B: flits 0-7 store into slots 0-7,
// flits 8-15 accumulate into them, and flit 15 outputs.
func TestAccumulatorSlots(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "A=2048, B=8")
	cc := kernel.ContractConfig{In: dtype.BF16, Out: dtype.F32, Op: kernel.ReduceAdd, Rows: 1, Width: 32, Depth: 5, Columns: 1, Valid: 1}
	c, err := DeriveAccumulate(spec, AccumulateInput{Contract: cc, Row: ceM(t, ax, "1"), Time: ceM(t, ax, "B / 4, A % 8"),
		Packet: ceM(t, ax, "1"), OutTime: ceM(t, ax, "A % 8"), OutPacket: ceM(t, ax, "1 # 8"), Kind: kernel.Interleaved})
	require.NoError(t, err)
	assert.Equal(t, 8, c.InnerTime, "8 buffer slots (one per A % 8 value), 002 L4412")
	assert.Equal(t, 2, c.Iterations, "the B / 4 (2) iterations, 002 L4412")
	for flit := 0; flit < 16; flit++ {
		slot, store, emit := AccumulateStep(&c, flit)
		assert.Equal(t, flit%8, slot, "flit %d, 002 L4415-4430", flit)
		assert.Equal(t, flit < 8, store, "flit %d stores (first 8) or accumulates", flit)
		assert.Equal(t, flit == 15, emit, "flit 15: 'Accumulate with flit #7, then output'")
	}
}

// TestReducerFullTensorReduction reproduces the in-slice part of 002
// L4360-4376: Packet = A % 32 reduced by the tree at depth 5, Time =
// A / 32 % 8 accumulated over 8 iterations (the cycle counts are the cost
// model's). The seed's mapping line is garbled (002 L4363); the table's
// "Axes Reduced" column gives it (002 L4367-4368).
func TestReducerFullTensorReduction(t *testing.T) {
	ax := ceAx(t, "A=65536")
	c, err := DeriveReducer(Default(), ReducerInput{DType: dtype.BF16, Row: ceM(t, ax, "1"), Time: ceM(t, ax, "A / 32 % 8"),
		Packet: ceM(t, ax, "A % 32"), ContractPacket: ceM(t, ax, "1"), OutTime: ceM(t, ax, "1"), OutPacket: ceM(t, ax, "1 # 8"),
		Kind: kernel.Interleaved})
	require.NoError(t, err)
	assert.Equal(t, 5, c.Contract.Depth, "Reducer tree (depth 5)")
	assert.Equal(t, 8, c.Accumulate.Iterations, "Reducer accumulator (8 iterations)")
	assert.Equal(t, 5, Default().Reducer.SpatialLatencyCycles.BF16.Value, "5 cycles")
}

// TestReducerInterleaveSteps reproduces 002 L4443 ("For m = 4 ... giving 8
// interleave steps") and L4489 ("With Row::SIZE = 4 ... rows 0–3, and, in
// the next cycle, ... rows 4–7"); see docs/spec-decisions.md "Interleave
// steps of RED-EX-4".
func TestReducerInterleaveSteps(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "M=4, N=8, K=64")
	c, err := DeriveReducer(spec, ReducerInput{DType: dtype.BF16, Row: ceM(t, ax, "N"), Time: ceM(t, ax, "K / 16, M"),
		Packet: ceM(t, ax, "K % 16 # 32"), ContractPacket: ceM(t, ax, "K % 16 / 4"), OutTime: ceM(t, ax, "M, K % 16 / 4"),
		OutPacket: ceM(t, ax, "N"), Kind: kernel.Interleaved})
	require.NoError(t, err)
	assert.Equal(t, 8, c.Accumulate.Groups)
	ax = ceAx(t, "M=4, N=4, K=32")
	c, err = DeriveReducer(spec, ReducerInput{DType: dtype.BF16, Row: ceM(t, ax, "N"), Time: ceM(t, ax, "M"),
		Packet: ceM(t, ax, "K"), ContractPacket: ceM(t, ax, "1"), OutTime: ceM(t, ax, "M, N"),
		OutPacket: ceM(t, ax, "1 # 8"), Kind: kernel.Sequential})
	require.NoError(t, err)
	assert.Equal(t, 2, c.Accumulate.Groups)
}

// TestReducerDecisions tests the choices recorded in docs/spec-decisions.md.
func TestReducerDecisions(t *testing.T) {
	spec := Default()
	t.Run("tree depth of padded packets", func(t *testing.T) {
		// [K # 32] with K = 16 and contract::<m![1]>: depths 4 and 5 both
		// leave m![1]; the smallest wins.
		ax := ceAx(t, "M=32, N=8, K=16")
		c, err := DeriveContract(spec, ContractInput{DType: dtype.BF16, Row: ceM(t, ax, "N"), Packet: ceM(t, ax, "K # 32"), OutPacket: ceM(t, ax, "1")})
		require.NoError(t, err)
		assert.Equal(t, 4, c.Depth)
		assert.Equal(t, 2, c.Columns)
	})
	t.Run("sequential capacity excludes Packet_outer", func(t *testing.T) {
		// i8, 64-element packet [K], contract to K / 4 (16 columns): Sequential
		// pads to 16 = 2 beats, Packet_outer = 2. InnerTime 4 × Row 8 = 32 fits
		// (the seed's literal product would count 4 × 8 × 2 = 64).
		ax := ceAx(t, "M=4, N=8, K=64, R=2")
		c, err := DeriveReducer(spec, ReducerInput{DType: dtype.I8, Row: ceM(t, ax, "N"), Time: ceM(t, ax, "R, M"), Packet: ceM(t, ax, "K"),
			ContractPacket: ceM(t, ax, "K / 4"), OutTime: ceM(t, ax, "M, N, K / 32"), OutPacket: ceM(t, ax, "K / 4 % 8"), Kind: kernel.Sequential})
		require.NoError(t, err)
		assert.Equal(t, 32, c.Accumulate.InnerAxes)
		assert.Equal(t, 16, c.Accumulate.OutLen)
		assert.Equal(t, dtype.I32, c.Contract.Out)
	})
	t.Run("more than 32 columns", func(t *testing.T) {
		// i8 at depth 0 would output 64 columns (002 L4531-4532).
		ax := ceAx(t, "N=8, K=64")
		_, err := DeriveContract(spec, ContractInput{DType: dtype.I8, Row: ceM(t, ax, "N"), Packet: ceM(t, ax, "K"), OutPacket: ceM(t, ax, "K")})
		ceRequireRule(t, err, "RED-R4")
		// i8 with half the packet padding keeps 32 live columns at depth 0.
		ax = ceAx(t, "N=8, K=32")
		c, err := DeriveContract(spec, ContractInput{DType: dtype.I8, Row: ceM(t, ax, "N"), Packet: ceM(t, ax, "K # 64"), OutPacket: ceM(t, ax, "K")})
		require.NoError(t, err)
		assert.Equal(t, 0, c.Depth)
		assert.Equal(t, 32, c.Valid)
	})
}

func ceRequireRule(t *testing.T, err error, id string) {
	t.Helper()
	var v *Violation
	require.True(t, errors.As(err, &v), "want violation %s, got %v", id, err)
	assert.Equal(t, id, v.Rule.ID, "%v", err)
}

// TestReducerRejects covers the Reducer's rules; the packet-reducer cases
// follow reference-notes §5.5 K5-K7.
func TestReducerRejects(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, axes         string
		d                  dtype.DType
		op                 kernel.ReduceOp
		row, time, packet  string
		contract           string
		outTime, outPacket string
		kind               kernel.AccumulationKind
		rule               string
	}{
		{"f32 input", "M=4, N=8, K=16", dtype.F32, "", "N", "M", "K", "1", "M", "N", kernel.Interleaved, "CE-R5"},
		{"three rows", "M=4, N=3, K=32", dtype.BF16, "", "N", "M", "K", "1", "M", "N # 8", kernel.Interleaved, "RED-R1"},
		{"reduce-max on 8 rows", "M=4, N=8, K=32", dtype.BF16, kernel.ReduceMax, "N", "M", "K", "1", "M", "N", kernel.Interleaved, "RED-R6"},
		{"32-byte packet", "M=4, N=8, K=16", dtype.BF16, "", "N", "M", "K", "1", "M", "N", kernel.Interleaved, "RED-R2"},
		{"not a reduction", "M=4, N=8, K=32", dtype.BF16, "", "N", "M", "K", "K / 2 % 2", "M", "N", kernel.Interleaved, "RED-R3"},
		{"keeps the inner part", "M=4, N=8, K=32", dtype.BF16, "", "N", "M", "K", "K % 4", "M, K % 4", "N", kernel.Interleaved, "RED-R3"},
		{"interleaved OutPacket", "M=4, N=8, K=32", dtype.BF16, "", "N", "M", "K", "1", "M", "N # 16", kernel.Interleaved, "RED-R10"},
		{"interleaved OutPacket not Row", "M=8, N=8, K=32", dtype.BF16, "", "N", "M", "K", "1", "N", "M", kernel.Interleaved, "RED-R10"},
		{"interleaved packet not last", "M=4, N=8, K=32", dtype.BF16, "", "N", "M", "K", "K / 8", "K / 8, M", "N", kernel.Interleaved, "RED-R10"},
		{"order not kept", "A=4, B=4, N=8, K=32, R=2", dtype.BF16, "", "N", "A, R, B", "K", "1", "B, A", "N", kernel.Interleaved, "RED-R12"},
		{"interleaved capacity", "A=256, N=8, K=32, R=2", dtype.BF16, "", "N", "R, A", "K", "1", "A", "N", kernel.Interleaved, "RED-R8"},
		{"sequential capacity", "A=8, N=8, K=32, R=2", dtype.BF16, "", "N", "R, A", "K", "1", "A, N", "1 # 8", kernel.Sequential, "RED-R9"},
		{"sequential OutPacket", "A=4, N=8, K=32, R=2", dtype.BF16, "", "N", "R, A", "K", "K / 4", "A, N", "1 # 8", kernel.Sequential, "RED-R11"},
		{"sequential time tail", "A=4, N=8, K=32, R=2", dtype.BF16, "", "N", "R, A", "K", "1", "N, A", "1 # 8", kernel.Sequential, "RED-R11"},
		{"reduced padding", "A=4, N=8, K=32, R=3", dtype.BF16, "", "N", "R # 4, A", "K", "1", "A", "N", kernel.Interleaved, "RED-R14"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			_, err := DeriveReducer(spec, ReducerInput{DType: tc.d, Op: tc.op, Row: ceM(t, ax, tc.row), Time: ceM(t, ax, tc.time),
				Packet: ceM(t, ax, tc.packet), ContractPacket: ceM(t, ax, tc.contract), OutTime: ceM(t, ax, tc.outTime),
				OutPacket: ceM(t, ax, tc.outPacket), Kind: tc.kind})
			ceRequireRule(t, err, tc.rule)
		})
	}
}

// TestContractPacketVectors checks the packet-reducer vectors of the newer
// library (reference-notes §5.5 K5): i8 [K = 64] → [1] and [K / 4];
// [A = 4, D = 32 / 2] → [A, D / 8]; [A # 16, C = 4] → [A].
func TestContractPacketVectors(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "A=4, C=4, D=32, K=64, N=8")
	cases := []struct {
		packet, out string
		depth       int
	}{
		{"K", "1", 6},
		{"K", "K / 4", 2},
		{"A, D / 2", "A, D / 8", 2},
		{"A # 16, C", "A", 2},
	}
	for _, tc := range cases {
		c, err := DeriveContract(spec, ContractInput{DType: dtype.I8, Row: ceM(t, ax, "N"), Packet: ceM(t, ax, tc.packet), OutPacket: ceM(t, ax, tc.out)})
		require.NoError(t, err, "%s → %s", tc.packet, tc.out)
		assert.Equal(t, tc.depth, c.Depth, "%s → %s", tc.packet, tc.out)
	}
}

// TestContractionChains runs every complete contraction example through the
// Stream Adapter, TRF, TRF Sequencer and Reducer semantics and compares the
// output with the einsum computed in float64 from the operands, within the
// f32 rounding bound of the additions (002 L4387-4391: products of bf16
// are exact in f32).
func TestContractionChains(t *testing.T) {
	spec := Default()
	for _, ch := range ceChains {
		t.Run(ch.name, func(t *testing.T) {
			ax := ceAx(t, ch.axes)
			m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
			aKeep, bKeep := ceAxisSet(ax, ch.aAxes), ceAxisSet(ax, ch.bAxes)
			a := func(x []int) float64 { return ceValue(1, x, aKeep) }
			b := func(x []int) float64 { return ceValue(2, x, bKeep) }
			stream := ceFill(t, ax, ch.d, m(ch.time), m(ch.packet), a)
			trf := ceFill(t, ax, ch.d, m(ch.trfTime), m(ch.trfPacket), b)
			out, rc := ceSimulate(t, spec, ch, ax, stream, trf)
			accT, accP := m(ch.accTime), m(ch.accPacket)
			require.Equal(t, accT.Size()*accP.Size()*4, len(out), "one 32-byte beat per OutTime position")
			n := float64(rc.Contract.Depth + rc.Accumulate.Iterations)
			u := math.Ldexp(1, -24)
			gamma := n * u / (1 - n*u)
			ps, err := ceCompile(ax, accT, accP)
			require.NoError(t, err)
			o := make([]int, ax.Len())
			checked := 0
			for _, ot := range ceSample(accT.Size(), 256) {
				for op := 0; op < accP.Size(); op++ {
					clear(o)
					if !ps[0].add(ot, o) || !ps[1].add(op, o) {
						if ch.kind == kernel.Interleaved && op >= rc.Accumulate.Rows {
							// Row # 8 dummies read 0 (docs/spec-decisions.md "Reducer dummy rows").
							require.Zero(t, ceF32(out, ot*accP.Size()+op), "dummy row %d", op)
						}
						continue
					}
					want, abs := ceReference(ax, ch, o, a, b)
					got := ceF32(out, ot*accP.Size()+op)
					require.LessOrEqual(t, math.Abs(got-want), gamma*abs+1e-30,
						"output %v: got %v, want %v (bound %g)", o, got, want, gamma*abs)
					checked++
				}
			}
			assert.Positive(t, checked)
		})
	}
}

// TestContractionChainInt8 runs RED-EX-4's mappings with i8 operands: the
// result must be exact (i8 products and i32 sums, 002 L4390-4391).
func TestContractionChainInt8(t *testing.T) {
	spec := Default()
	ch := ceChain{name: "i8 GEMM", axes: "M=4, N=8, K=128", d: dtype.I8,
		trfTime: "N, K / 32", trfPacket: "K % 32", row: "N", element: "K", addr: kernel.TrfFull,
		time: "M, K / 32", packet: "K % 32", outTime: "M, K / 64", outPacket: "K % 64",
		contract: "K % 64 / 8", accTime: "M, K % 64 / 8", accPacket: "N", kind: kernel.Interleaved,
		aAxes: []string{"M", "K"}, bAxes: []string{"N", "K"}, outAxes: []string{"M", "N"}, partial: map[string]int{"K": 0b111000}}
	ax := ceAx(t, ch.axes)
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	val := func(seed uint64, keep []bool) func([]int) float64 {
		return func(x []int) float64 { return float64(int(ceValue(seed, x, keep)*37) % 128) }
	}
	a, b := val(3, ceAxisSet(ax, ch.aAxes)), val(4, ceAxisSet(ax, ch.bAxes))
	out, rc := ceSimulate(t, spec, ch, ax, ceFill(t, ax, ch.d, m(ch.time), m(ch.packet), a), ceFill(t, ax, ch.d, m(ch.trfTime), m(ch.trfPacket), b))
	assert.Equal(t, 3, rc.Contract.Depth)
	assert.Equal(t, dtype.I32, rc.Contract.Out)
	accT, accP := m(ch.accTime), m(ch.accPacket)
	ps, err := ceCompile(ax, accT, accP)
	require.NoError(t, err)
	o := make([]int, ax.Len())
	for ot := 0; ot < accT.Size(); ot++ {
		for op := 0; op < accP.Size(); op++ {
			clear(o)
			if !ps[0].add(ot, o) || !ps[1].add(op, o) {
				continue
			}
			want, _ := ceReference(ax, ch, o, a, b)
			got := int32(binary.LittleEndian.Uint32(out[4*(ot*accP.Size()+op):]))
			require.Equal(t, int32(want), got, "output %v", o)
		}
	}
}

// TestSpatialReduceTreeOrder checks the adjacent-pair order of the tree
// (002 L4387): products 1, 2^24, 1, −2^24 sum to 1 pairwise in f32,
// ((1 + 2^24) + (1 − 2^24)), but to 0 left to right.
func TestSpatialReduceTreeOrder(t *testing.T) {
	c := kernel.ContractConfig{In: dtype.BF16, Out: dtype.F32, Op: kernel.ReduceAdd, Rows: 1, Width: 32, Depth: 5, Columns: 1, Valid: 1}
	x, w := make([]byte, 64), make([]byte, 64)
	vals := []float32{1, 1 << 24, 1, -(1 << 24)}
	for i := 0; i < 32; i++ {
		require.NoError(t, dtype.BF16.StoreF32(w, i, 1))
	}
	for i, v := range vals {
		require.NoError(t, dtype.BF16.StoreF32(x, 8+i, v))
	}
	seq := float32(0)
	for _, v := range vals {
		seq += v
	}
	require.Equal(t, float32(0), seq, "left to right")
	var out [1]float32
	require.NoError(t, SpatialReduce(&c, x, w, out[:], nil))
	assert.Equal(t, float32(1), out[0])
	var outs [4]float32
	c.Depth, c.Columns = 3, 4
	require.NoError(t, SpatialReduce(&c, x, w, outs[:], nil))
	assert.Equal(t, [4]float32{0, 1, 0, 0}, outs, "depth 3 sums groups of 8; the values sit in elements 8-11")
	c.Op = kernel.ReduceMax
	require.NoError(t, SpatialReduce(&c, x, w, outs[:], nil))
	assert.Equal(t, [4]float32{0, 1 << 24, 0, 0}, outs, "reduce-max")
	assert.Error(t, SpatialReduce(&c, x, w, outs[:2], nil))
}

// TestReducerStepNoAlloc checks that the simulator's hot loop does not
// allocate.
func TestReducerStepNoAlloc(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "M=4, N=8, K=64")
	rc, err := DeriveReducer(spec, ReducerInput{DType: dtype.BF16, Row: ceM(t, ax, "N"), Time: ceM(t, ax, "K / 16, M"),
		Packet: ceM(t, ax, "K % 16 # 32"), ContractPacket: ceM(t, ax, "K % 16 / 4"), OutTime: ceM(t, ax, "M, K % 16 / 4"),
		OutPacket: ceM(t, ax, "N"), Kind: kernel.Interleaved})
	require.NoError(t, err)
	r, err := NewReducer(spec, rc)
	require.NoError(t, err)
	x, w := make([]byte, 64), make([]byte, 8*64)
	step := 0
	allocs := testing.AllocsPerRun(200, func() {
		_, _ = r.Step(step%16, x, w)
		step++
	})
	assert.Zero(t, allocs)
	_, err = r.Step(0, x[:32], w)
	assert.Error(t, err)
}

func BenchmarkReducerStep(b *testing.B) {
	spec := Default()
	ax, _ := mapping.ParseAxes("M=4, N=8, K=64")
	p := func(s string) *mapping.Expr { e, _ := mapping.Parse(s, ax, nil); return e }
	rc, err := DeriveReducer(spec, ReducerInput{DType: dtype.BF16, Row: p("N"), Time: p("K / 16, M"), Packet: p("K % 16 # 32"),
		ContractPacket: p("K % 16 / 4"), OutTime: p("M, K % 16 / 4"), OutPacket: p("N"), Kind: kernel.Interleaved})
	if err != nil {
		b.Fatal(err)
	}
	r, _ := NewReducer(spec, rc)
	x, w := make([]byte, 64), make([]byte, 8*64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := r.Step(i%16, x, w); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeriveAlign(b *testing.B) {
	spec := Default()
	ax, _ := mapping.ParseAxes("I=512, J=512, K=2048")
	p := func(s string) *mapping.Expr { e, _ := mapping.Parse(s, ax, nil); return e }
	in := AlignInput{DType: dtype.BF16, Time: p("I % 32, J / 8 % 4, K / 16"), Packet: p("K % 16"), Row: p("J % 8"),
		Element: p("J / 8 % 4, K"), OutTime: p("I % 32, J / 8 % 4, K / 32"), OutPacket: p("K % 32")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DeriveAlign(spec, in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRetainedTime: contract_time's Time' (furiosa-opt-std 0.6.0 spells
// accumulate as contract_time::<Time'>() then contract_lane) is OutTime
// without what the kind appends: the contract packet for Interleaved
// (002 L4448), [Row, Packet_outer] for Sequential (002 L4491); an OutTime
// that does not end so is refused.
func TestRetainedTime(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "M=4, N=4, K=64")
	for _, tc := range []struct {
		kind                       kernel.AccumulationKind
		row, packet, outTime, want string
	}{
		{kernel.Interleaved, "N", "K % 16 / 4", "M, K % 16 / 4", "M"},
		{kernel.Interleaved, "1", "1", "K / 8", "K / 8"},
		{kernel.Sequential, "N", "1", "M, N", "M"},
		{kernel.Sequential, "1", "K % 16", "K / 16, K % 16 / 8", "K / 16"},
	} {
		got, err := RetainedTime(spec, tc.kind, ceM(t, ax, tc.row), ceM(t, ax, tc.packet), ceM(t, ax, tc.outTime))
		require.NoError(t, err, "%s %s", tc.kind, tc.outTime)
		assert.True(t, got.Equal(ceM(t, ax, tc.want)), "%s OutTime %s: Time' %s, want %s", tc.kind, tc.outTime, got, tc.want)
	}
	_, err := RetainedTime(spec, kernel.Interleaved, ceM(t, ax, "1"), ceM(t, ax, "K % 4"), ceM(t, ax, "M, N"))
	assert.ErrorContains(t, err, "must end with the contract packet")
	_, err = RetainedTime(spec, kernel.Sequential, ceM(t, ax, "N"), ceM(t, ax, "1"), ceM(t, ax, "N, M"))
	assert.ErrorContains(t, err, "must end with [Row, Packet_outer]")
	_, err = RetainedTime(nil, kernel.Sequential, ceM(t, ax, "N"), ceM(t, ax, "1"), ceM(t, ax, "N, M"))
	assert.Error(t, err)
}
