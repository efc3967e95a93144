package engines

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Shared test material for the contraction-side engines: the manual's
// contraction examples as data, and semantic oracles that check a derived
// configuration by decoding mappings position by position (mapping.Map),
// independently of the derivation.

// ceChain is one contraction of the manual: the weight load (sub context),
// the aligned stream (main context) and the Reducer calls, with the einsum's
// operand and output axes for the reference.
type ceChain struct {
	name string
	cite string // the example's lines
	axes string
	d    dtype.DType
	// TRF load: collect::<trfTime, trfPacket>().to_trf::<row, element>(addr).
	trfTime, trfPacket string
	row, element       string
	addr               kernel.TrfAddress
	// Main: collect::<time, packet>().align::<outTime, outPacket>().
	time, packet       string
	outTime, outPacket string
	// contract::<contract>().accumulate::<accTime, accPacket>(kind).
	contract           string
	accTime, accPacket string
	kind               kernel.AccumulationKind
	// The einsum: stream operand axes, weight operand axes, output axes.
	aAxes, bAxes, outAxes []string
	// partial maps an axis of which only some digits survive to the mask of
	// its surviving coordinate bits (RED-EX-4: "K % 16 / 4 surviving",
	// 002 L4452).
	partial map[string]int
}

// ceChains are the manual's complete contraction examples (every one states
// both operands, the computation mapping and the Reducer calls).
var ceChains = []ceChain{
	{name: "AL-EX-1 batched matmul", cite: "002 L3816-3873", axes: "M=32, N=8, K=16, L=2, O=2", d: dtype.BF16,
		trfTime: "N, O, M", trfPacket: "K", row: "N", element: "O, M, K", addr: kernel.TrfFirstHalf,
		time: "M, O, L", packet: "K", outTime: "M, O", outPacket: "L, K",
		contract: "L", accTime: "M, O, L", accPacket: "N", kind: kernel.Interleaved,
		aAxes: []string{"M", "O", "L", "K"}, bAxes: []string{"N", "O", "M", "K"}, outAxes: []string{"M", "O", "L", "N"}},
	{name: "TRF-EX-1 basic weight broadcasting", cite: "002 L4201-4248", axes: "M=32, N=8, K=32", d: dtype.BF16,
		trfTime: "N, K / 16", trfPacket: "K % 16", row: "N", element: "K", addr: kernel.TrfFull,
		time: "M, K / 16", packet: "K % 16", outTime: "M", outPacket: "K",
		contract: "1", accTime: "M", accPacket: "N", kind: kernel.Interleaved,
		aAxes: []string{"M", "K"}, bAxes: []string{"N", "K"}, outAxes: []string{"M", "N"}},
	{name: "TRF-EX-2 small reg_read_size", cite: "002 L4249-4295", axes: "M=32, N=8, K=16, L=2, O=2", d: dtype.BF16,
		trfTime: "N, O", trfPacket: "K", row: "N", element: "O, K", addr: kernel.TrfFirstHalf,
		time: "O, M, L", packet: "K", outTime: "O, M", outPacket: "L, K",
		contract: "L", accTime: "O, M, L", accPacket: "N", kind: kernel.Interleaved,
		aAxes: []string{"O", "M", "L", "K"}, bAxes: []string{"N", "O", "K"}, outAxes: []string{"O", "M", "L", "N"}},
	{name: "RED-EX-1 matrix multiplication", cite: "002 L4333-4359", axes: "A=32, B=32, C=8", d: dtype.BF16,
		trfTime: "C, B / 16", trfPacket: "B % 16", row: "C", element: "B", addr: kernel.TrfFull,
		time: "A, B / 16", packet: "B % 16", outTime: "A", outPacket: "B",
		contract: "1", accTime: "A", accPacket: "C", kind: kernel.Interleaved,
		aAxes: []string{"A", "B"}, bAxes: []string{"C", "B"}, outAxes: []string{"A", "C"}},
	{name: "RED-EX-4 interleaved", cite: "002 L4451-4481", axes: "M=4, N=8, K=64", d: dtype.BF16,
		trfTime: "N, K / 16", trfPacket: "K % 16", row: "N", element: "K", addr: kernel.TrfFull,
		time: "K / 16, M", packet: "K % 16", outTime: "K / 16, M", outPacket: "K % 16 # 32",
		contract: "K % 16 / 4", accTime: "M, K % 16 / 4", accPacket: "N", kind: kernel.Interleaved,
		aAxes: []string{"M", "K"}, bAxes: []string{"N", "K"}, outAxes: []string{"M", "N"}, partial: map[string]int{"K": 0b1100}},
	{name: "RED-EX-5 sequential", cite: "002 L4493-4525", axes: "M=4, N=8, K=64", d: dtype.BF16,
		trfTime: "N, K / 16", trfPacket: "K % 16", row: "N", element: "K", addr: kernel.TrfFull,
		time: "K / 16, M", packet: "K % 16", outTime: "K / 16, M", outPacket: "K % 16 # 32",
		contract: "K % 16 / 4", accTime: "M, N", accPacket: "K % 16 / 4 # 8", kind: kernel.Sequential,
		aAxes: []string{"M", "K"}, bAxes: []string{"N", "K"}, outAxes: []string{"M", "N"}, partial: map[string]int{"K": 0b1100}},
	{name: "HELLO-EX-1 dot product", cite: "002 L315-362", axes: "A=2048", d: dtype.BF16,
		trfTime: "A / 16", trfPacket: "A % 16", row: "1", element: "A", addr: kernel.TrfFull,
		time: "A / 16", packet: "A % 16", outTime: "A / 32", outPacket: "A % 32",
		contract: "1", accTime: "1", accPacket: "1 # 8", kind: kernel.Interleaved,
		aAxes: []string{"A"}, bAxes: []string{"A"}, outAxes: nil},
	{name: "HELLO-EX-2 GEMV (one slice)", cite: "002 L410-464", axes: "J=2048", d: dtype.BF16,
		trfTime: "J / 16", trfPacket: "J % 16", row: "1", element: "J", addr: kernel.TrfFull,
		time: "J / 32", packet: "J % 32", outTime: "J / 32", outPacket: "J % 32",
		contract: "1", accTime: "1", accPacket: "1 # 8", kind: kernel.Interleaved,
		aAxes: []string{"J"}, bAxes: []string{"J"}, outAxes: nil},
	// The Hello GEMM with K = 1024 instead of 2048, the largest K whose TRF
	// tensor fits (docs/spec-decisions.md "Hello GEMM TRF over-capacity");
	// one slice (Slice = m![I / 32, J / 32] only selects the tile).
	{name: "HELLO-EX-3 GEMM, K = 1024 (one slice)", cite: "002 L479-524", axes: "I=512, J=512, K=1024", d: dtype.BF16,
		trfTime: "J % 8, J / 8 % 4, K / 16", trfPacket: "K % 16", row: "J % 8", element: "J / 8 % 4, K", addr: kernel.TrfFull,
		time: "I % 32, J / 8 % 4, K / 16", packet: "K % 16", outTime: "I % 32, J / 8 % 4, K / 32", outPacket: "K % 32",
		contract: "1", accTime: "I % 32, J / 8 % 4", accPacket: "J % 8", kind: kernel.Interleaved,
		aAxes: []string{"I", "K"}, bAxes: []string{"J", "K"}, outAxes: []string{"I", "J"}},
}

// ceM parses a mapping or fails the test.
func ceM(t testing.TB, axes mapping.Axes, src string) *mapping.Expr {
	t.Helper()
	e, err := mapping.Parse(src, axes, nil)
	require.NoError(t, err, "m![%s]", src)
	return e
}

func ceAx(t testing.TB, src string) mapping.Axes {
	t.Helper()
	a, err := mapping.ParseAxes(src)
	require.NoError(t, err)
	return a
}

// ceSum adds the indices of live cells; ok is false if any cell is not live.
func ceSum(cells ...mapping.Cell) (mapping.Index, bool) {
	var cs []mapping.Coord
	for _, c := range cells {
		if c.Kind != mapping.Live {
			return mapping.Index{}, false
		}
		cs = append(cs, c.Index.Coords()...)
	}
	return mapping.IndexOf(cs...), true
}

// ceRestrict keeps the coordinates of the given axes.
func ceRestrict(x mapping.Index, keep map[string]bool) mapping.Index {
	var cs []mapping.Coord
	for _, c := range x.Coords() {
		if keep[c.Axis] {
			cs = append(cs, c)
		}
	}
	return mapping.IndexOf(cs...)
}

// ceSample returns the positions 0..n-1, or an evenly strided subset of
// about limit of them (always including the last), to bound oracle cost.
func ceSample(n, limit int) []int {
	step := 1
	if n > limit {
		step = n/limit + 1
	}
	var out []int
	for i := 0; i < n; i += step {
		out = append(out, i)
	}
	if n > 0 && out[len(out)-1] != n-1 {
		out = append(out, n-1)
	}
	return out
}

// ceProg is a compiled mapping with its scratch space, for oracles.
type ceProg struct {
	p   *mapping.Program
	buf []int
}

func ceCompile(ax mapping.Axes, es ...*mapping.Expr) ([]ceProg, error) {
	var out []ceProg
	for _, e := range es {
		p, err := mapping.Compile(e, ax)
		if err != nil {
			return nil, err
		}
		out = append(out, ceProg{p, make([]int, p.Slots())})
	}
	return out, nil
}

// add evaluates position i and adds its coordinates to x; it reports
// whether the cell is live.
func (c ceProg) add(i int, x []int) bool {
	if k, _ := c.p.Eval(i, c.buf); k != mapping.Live {
		return false
	}
	for a := range x {
		x[a] += c.buf[a]
	}
	return true
}

// ceInRange reports whether every summed coordinate is inside its axis: a
// sum that overshoots holds no tensor element (docs/spec-decisions.md
// "Mapping: coordinate overshoot is Top padding").
func ceInRange(ax mapping.Axes, x []int) bool {
	for k, a := range ax.List() {
		if x[k] >= a.Size {
			return false
		}
	}
	return true
}

// ceKeep marks the axis slots of the symbols of es.
func ceKeep(ax mapping.Axes, es ...*mapping.Expr) []bool {
	keep := make([]bool, ax.Len())
	for _, e := range es {
		for _, s := range e.Symbols() {
			if k, ok := ax.Slot(s); ok {
				keep[k] = true
			}
		}
	}
	return keep
}

// ceSameRestricted reports whether x restricted to keep equals y.
func ceSameRestricted(x, y []int, keep []bool) bool {
	for a := range x {
		v := 0
		if keep[a] {
			v = x[a]
		}
		if v != y[a] {
			return false
		}
	}
	return true
}

// ceTRFOracle checks a TRF Sequencer configuration against the mappings:
// for computation cell (r, t, p) with tensor index X = Row(r) + OutTime(t) +
// OutPacket(p), the weight the sequencer reads, Row(r) + Element(q) with q
// the element at the sequencer's address, must be X restricted to the TRF's
// axes (002 L3778, L4099-4106). It returns a description of the first
// mismatch, "" if none.
func ceTRFOracle(ax mapping.Axes, d dtype.DType, row, element, outTime, outPacket *mapping.Expr, c kernel.TRFSequencerConfig, limit int) string {
	bits := d.SizeBits()
	rElems := c.RegReadSize * 8 / bits
	keep := ceKeep(ax, row, element)
	ps, err := ceCompile(ax, row, element, outTime, outPacket)
	if err != nil {
		return err.Error()
	}
	pr, pe, pt, pp := ps[0], ps[1], ps[2], ps[3]
	n := ax.Len()
	x, w := make([]int, n), make([]int, n)
	for r := 0; r < row.Size(); r++ {
		for _, t := range ceSample(outTime.Size(), limit) {
			base := c.Addr(t) * 8 / bits
			for p := 0; p < outPacket.Size(); p++ {
				clear(x)
				if !pr.add(r, x) || !pt.add(t, x) || !pp.add(p, x) || !ceInRange(ax, x) {
					continue
				}
				q := base + p%rElems
				clear(w)
				if q < 0 || q >= element.Size() || !pr.add(r, w) || !pe.add(q, w) || !ceInRange(ax, w) {
					return fmt.Sprintf("cell r=%d t=%d p=%d %v reads padding or outside the Element at %d", r, t, p, x, q)
				}
				if !ceSameRestricted(x, w, keep) {
					return fmt.Sprintf("cell r=%d t=%d p=%d: reads %v, want %v restricted to the TRF axes", r, t, p, w, x)
				}
			}
		}
	}
	return ""
}

// ceSAOracle checks a Stream Adapter configuration: computation cell (t, p)
// with index X = OutTime(t) + OutPacket(p) must be the collect cell the
// adapter copies, restricted to the stream's axes, or zero padding.
func ceSAOracle(ax mapping.Axes, d dtype.DType, time, packet, outTime, outPacket *mapping.Expr, c kernel.StreamAdapterConfig, limit int) string {
	bits := d.SizeBits()
	keep := ceKeep(ax, time, packet)
	perFlit := c.FlitBytes * 8 / bits
	ps, err := ceCompile(ax, time, packet, outTime, outPacket)
	if err != nil {
		return err.Error()
	}
	pt, pp, po, pq := ps[0], ps[1], ps[2], ps[3]
	n := ax.Len()
	x, s := make([]int, n), make([]int, n)
	for _, t := range ceSample(outTime.Size(), limit) {
		for p := 0; p < outPacket.Size(); p++ {
			clear(x)
			ok := po.add(t, x) && pq.add(p, x) && ceInRange(ax, x)
			f := p / perFlit
			if f >= c.CollectFlits { // the zero half (002 L3926)
				if ok {
					return fmt.Sprintf("cell t=%d p=%d %v falls in the zero padding", t, p, x)
				}
				continue
			}
			if !ok {
				continue
			}
			clear(s)
			if !pt.add((t/c.TimeBroadcast)*c.CollectFlits+f, s) || !pp.add(p%perFlit, s) || !ceInRange(ax, s) {
				return fmt.Sprintf("cell t=%d p=%d %v is collect padding", t, p, x)
			}
			if !ceSameRestricted(x, s, keep) {
				return fmt.Sprintf("cell t=%d p=%d: stream holds %v, want %v restricted to the stream's axes", t, p, s, x)
			}
		}
	}
	return ""
}

// ceValue is a deterministic tensor value of an operand at coordinates x
// (one per axis slot), reading only the operand's axes keep: a bf16-exact
// number with a 7-bit significand and small exponents, so sums round in f32.
func ceValue(seed uint64, x []int, keep []bool) float64 {
	h := seed*0x9e3779b97f4a7c15 + 1
	for a, v := range x {
		if keep[a] && v != 0 {
			h = (h ^ uint64(a+1)) * 0x100000001b3
			h = (h ^ uint64(v)) * 0xff51afd7ed558ccd
			h ^= h >> 29
		}
	}
	m := float64(64+int(h%64)) / 64 // [1, 2) in steps of 1/64
	e := float64(int((h>>8)%5) - 2)
	s := 1.0
	if (h>>16)&1 == 1 {
		s = -1
	}
	return s * m * math.Pow(2, e)
}

// ceAxisSet marks the slots of the named axes.
func ceAxisSet(ax mapping.Axes, names []string) []bool {
	keep := make([]bool, ax.Len())
	for _, n := range names {
		if k, ok := ax.Slot(n); ok {
			keep[k] = true
		}
	}
	return keep
}

// ceFill writes the flits of a stream [time, packet] whose cell with
// coordinates x holds f(x); padding cells hold zero (the Collect Engine pads
// with zeros, 002 L2122).
func ceFill(t testing.TB, ax mapping.Axes, d dtype.DType, time, packet *mapping.Expr, f func([]int) float64) []byte {
	t.Helper()
	ps, err := ceCompile(ax, time, packet)
	require.NoError(t, err)
	n := time.Size() * packet.Size()
	buf := make([]byte, n*d.SizeBits()/8)
	x := make([]int, ax.Len())
	for ti := 0; ti < time.Size(); ti++ {
		for p := 0; p < packet.Size(); p++ {
			clear(x)
			v := 0.0
			if ps[0].add(ti, x) && ps[1].add(p, x) {
				v = f(x)
			}
			require.NoError(t, d.Store(buf, ti*packet.Size()+p, v))
		}
	}
	return buf
}

// ceSimulate runs a chain through the Stream Adapter, TRF, TRF Sequencer and
// Reducer semantics and returns the accumulate output beats in order.
func ceSimulate(t testing.TB, spec *Spec, ch ceChain, ax mapping.Axes, stream []byte, trfFlits []byte) ([]byte, kernel.ReducerConfig) {
	t.Helper()
	m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
	tt, err := DeriveToTRF(spec, ToTRFInput{DType: ch.d, Time: m(ch.trfTime), Packet: m(ch.trfPacket), Row: m(ch.row), Element: m(ch.element), Address: ch.addr})
	require.NoError(t, err)
	al, err := DeriveAlign(spec, AlignInput{DType: ch.d, Time: m(ch.time), Packet: m(ch.packet), Row: m(ch.row), Element: m(ch.element),
		OutTime: m(ch.outTime), OutPacket: m(ch.outPacket)})
	require.NoError(t, err)
	rc, err := DeriveReducer(spec, ReducerInput{DType: ch.d, Row: m(ch.row), Time: m(ch.outTime), Packet: m(ch.outPacket),
		ContractPacket: m(ch.contract), OutTime: m(ch.accTime), OutPacket: m(ch.accPacket), Kind: ch.kind})
	require.NoError(t, err)

	mem, err := NewTRFMemory(spec)
	require.NoError(t, err)
	for f := 0; f < len(trfFlits)/32; f++ {
		require.NoError(t, mem.StoreFlit(&tt, f, trfFlits[f*32:(f+1)*32]))
	}
	red, err := NewReducer(spec, rc)
	require.NoError(t, err)
	x := make([]byte, 64)
	w := make([]byte, 64*al.TRFSequencer.Rows)
	var out []byte
	for step := 0; step < al.StreamAdapter.OutSteps; step++ {
		require.NoError(t, StreamAdapterPacket(&al.StreamAdapter, stream, step, x))
		for r := 0; r < al.TRFSequencer.Rows; r++ {
			require.NoError(t, mem.ReadPacket(&tt, &al.TRFSequencer, r, step, w[r*64:(r+1)*64]))
		}
		beats, err := red.Step(step, x, w)
		require.NoError(t, err)
		out = append(out, beats...)
	}
	return out, rc
}

// ceReference computes the einsum of a chain from the operand value
// functions, independently of every mapping but the output's: out[o] =
// Σ a(x)·b(x) over the operand coordinates x that agree with o on the output
// axes and on the surviving bits of the partially reduced axes, in float64,
// with the sum of |products| for the error bound.
func ceReference(ax mapping.Axes, ch ceChain, o []int, a, b func([]int) float64) (sum, abs float64) {
	fixed := ceAxisSet(ax, ch.outAxes)
	operand := ceAxisSet(ax, append(append([]string(nil), ch.aAxes...), ch.bAxes...))
	type free struct{ slot, size, mask int }
	var fs []free
	for _, a := range ax.List() {
		k, _ := ax.Slot(a.Name)
		if operand[k] && !fixed[k] {
			mask, ok := ch.partial[a.Name]
			if !ok {
				mask = 0
			}
			fs = append(fs, free{k, a.Size, mask})
		}
	}
	x := make([]int, len(o))
	for k := range o {
		if fixed[k] {
			x[k] = o[k]
		}
	}
	for {
		match := true
		for _, f := range fs {
			if x[f.slot]&f.mask != o[f.slot] {
				match = false
			}
		}
		if match {
			p := a(x) * b(x)
			sum += p
			abs += math.Abs(p)
		}
		i := 0
		for ; i < len(fs); i++ {
			x[fs[i].slot]++
			if x[fs[i].slot] < fs[i].size {
				break
			}
			x[fs[i].slot] = 0
		}
		if i == len(fs) {
			return sum, abs
		}
	}
}

// ceF32 reads little-endian f32 value i of beats.
func ceF32(beats []byte, i int) float64 {
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(beats[4*i:])))
}
