package engines

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Property tests and the fuzz target of the contraction-side derivations:
// whenever a derivation succeeds, the oracles of contraction_test.go must
// accept its configuration; whatever the input, nothing panics.

// ceBits are the contraction input types the properties draw from.
var ceTypes = []dtype.DType{dtype.BF16, dtype.I8, dtype.F8E4M3, dtype.I4}

func cePerm[T any](r *rand.Rand, xs []T) []T {
	out := append([]T(nil), xs...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestTRFSequencerProperty derives the TRF Sequencer of random valid
// weight/computation pairs (Element digits permuted and split, broadcast
// axes in the packet and in time) and checks each with the oracle; then
// breaks each pair and expects a rule violation, never another error.
// 300 trials (100 under -short, shortTrials).
func TestTRFSequencerProperty(t *testing.T) {
	spec := Default()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < shortTrials(300); trial++ {
		d := ceTypes[r.IntN(len(ceTypes))]
		p := 64 * 8 / d.SizeBits()
		read := p >> r.IntN(4) // elements read per cycle
		if d == dtype.I4 && read < 2 {
			read = 2
		}
		k := read << (1 + r.IntN(2))
		x, y, m := 4+2*r.IntN(2), 2+r.IntN(3), 1+r.IntN(5)
		rows := 1 << r.IntN(4)
		axes := fmt.Sprintf("X=%d, Y=%d, K=%d, M=%d, N=%d, L=%d", x, y, k, m, rows, p/read)
		elem := append(cePerm(r, []string{"X", "Y", fmt.Sprintf("K / %d", read)}), fmt.Sprintf("K %% %d", read))
		var pkt string
		switch {
		case read == p:
			pkt = fmt.Sprintf("K %% %d", read)
		case r.IntN(2) == 0:
			pkt = fmt.Sprintf("L, K %% %d", read)
		default:
			pkt = fmt.Sprintf("K %% %d # %d", read, p)
		}
		tparts := []string{"Y", fmt.Sprintf("K / %d", read), "M"}
		if r.IntN(2) == 0 {
			tparts = append(tparts, "X / 2", "X % 2") // split X apart
		} else {
			tparts = append(tparts, "X")
		}
		tparts = cePerm(r, tparts)
		row := "N"
		ax := ceAx(t, axes)
		in := TRFSequencerInput{DType: d, Row: ceM(t, ax, row), Element: ceM(t, ax, strings.Join(elem, ", ")),
			OutTime: ceM(t, ax, strings.Join(tparts, ", ")), OutPacket: ceM(t, ax, pkt)}
		name := fmt.Sprintf("%s axes %s Element %s Time %s Packet %s", d, axes, in.Element, in.OutTime, in.OutPacket)
		c, err := DeriveTRFSequencer(spec, in)
		require.NoError(t, err, name)
		require.LessOrEqual(t, c.RegReadSize, 64)
		require.GreaterOrEqual(t, c.RegReadSize*8/d.SizeBits(), read, name)
		require.Empty(t, ceTRFOracle(ax, d, in.Row, in.Element, in.OutTime, in.OutPacket, c, 48), name)

		// Break it: drop a TRF digit from time.
		broken := tparts[1:]
		if tparts[0] == "M" {
			broken = append([]string{"M"}, tparts[2:]...)
		}
		in.OutTime = ceM(t, ax, strings.Join(broken, ", "))
		_, err = DeriveTRFSequencer(spec, in)
		var v *Violation
		require.True(t, errors.As(err, &v), "%s with Time %s: want a violation, got %v", name, in.OutTime, err)
	}
}

// TestStreamAdapterProperty derives the Stream Adapter of random valid
// collect/computation pairs (collect_flits 1 or 2, tiling axes) and checks
// each with the oracle. 300 trials (100 under -short, shortTrials).
func TestStreamAdapterProperty(t *testing.T) {
	spec := Default()
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < shortTrials(300); trial++ {
		d := ceTypes[r.IntN(len(ceTypes))]
		f := 32 * 8 / d.SizeBits() // elements per flit
		a, b, tl := 1+r.IntN(4), 1+r.IntN(3), 1+r.IntN(4)
		axes := fmt.Sprintf("A=%d, B=%d, K=%d, T=%d, U=2, N=%d", a, b, 2*f, tl, 1<<r.IntN(4))
		ax := ceAx(t, axes)
		outer := cePerm(r, []string{"A", "B"})
		var time, pkt, otime, opkt string
		if r.IntN(2) == 0 { // collect_flits = 2: K / f is the innermost time factor
			time = strings.Join(append(outer, fmt.Sprintf("K / %d", f)), ", ")
			pkt = fmt.Sprintf("K %% %d", f)
			otime = strings.Join(outer, ", ")
			opkt = "K"
		} else { // collect_flits = 1
			time = strings.Join(append(outer, "U"), ", ")
			pkt = fmt.Sprintf("K %% %d", f)
			otime = time
			opkt = fmt.Sprintf("K %% %d # %d", f, 2*f)
		}
		if r.IntN(2) == 0 {
			otime += ", T"
		}
		in := StreamAdapterInput{DType: d, Time: ceM(t, ax, time), Packet: ceM(t, ax, pkt), Row: ceM(t, ax, "N"),
			OutTime: ceM(t, ax, otime), OutPacket: ceM(t, ax, opkt)}
		name := fmt.Sprintf("%s axes %s: %s / %s → %s / %s", d, axes, time, pkt, otime, opkt)
		c, err := DeriveStreamAdapter(spec, in)
		require.NoError(t, err, name)
		require.Empty(t, ceSAOracle(ax, d, in.Time, in.Packet, in.OutTime, in.OutPacket, c, 1<<20), name)
	}
}

// TestContractionRandomChains builds random batched matmuls (batch and
// output axes permuted in time, rows 1-8, tiling, Interleaved or
// Sequential), runs them through every engine's semantics and compares with
// the float64 einsum within the f32 rounding bound.
func TestContractionRandomChains(t *testing.T) {
	spec := Default()
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 40; trial++ {
		rows := 1 << r.IntN(4)
		kk := 32 << r.IntN(3)
		m, v := 1+r.IntN(3), 1+r.IntN(3)
		ch := ceChain{d: dtype.BF16, axes: fmt.Sprintf("M=%d, V=%d, N=%d, K=%d, T=3", m, v, rows, kk), addr: kernel.TrfFull,
			row: "N", element: "V, K", trfTime: "N, V, K / 16", trfPacket: "K % 16", packet: "K % 16", outPacket: "K % 32",
			contract: "1", aAxes: []string{"M", "V", "K"}, bAxes: []string{"N", "V", "K"}, outAxes: []string{"M", "V", "N"}}
		outer := cePerm(r, []string{"M", "V"})
		tiling := r.IntN(2) == 0
		ch.time = strings.Join(append(append([]string(nil), outer...), "K / 16"), ", ")
		surv := append([]string(nil), outer...)
		ch.outTime = strings.Join(append(append([]string(nil), outer...), "K / 32"), ", ")
		if tiling {
			ch.outTime += ", T"
			surv = append(surv, "T")
			ch.outAxes = append(ch.outAxes, "T")
		}
		if r.IntN(2) == 0 {
			ch.kind, ch.accTime, ch.accPacket = kernel.Interleaved, strings.Join(surv, ", "), "N # 8"
		} else {
			ch.kind, ch.accTime, ch.accPacket = kernel.Sequential, strings.Join(append(surv, "N"), ", "), "1 # 8"
		}
		ch.name = fmt.Sprintf("%s: time %s, out %s / %s %s", ch.axes, ch.outTime, ch.accTime, ch.accPacket, ch.kind)
		ax := ceAx(t, ch.axes)
		mm := func(s string) *mapping.Expr { return ceM(t, ax, s) }
		aKeep, bKeep := ceAxisSet(ax, ch.aAxes), ceAxisSet(ax, ch.bAxes)
		a := func(x []int) float64 { return ceValue(uint64(trial), x, aKeep) }
		b := func(x []int) float64 { return ceValue(uint64(trial)+100, x, bKeep) }
		out, rc := ceSimulate(t, spec, ch, ax, ceFill(t, ax, ch.d, mm(ch.time), mm(ch.packet), a), ceFill(t, ax, ch.d, mm(ch.trfTime), mm(ch.trfPacket), b))
		accT, accP := mm(ch.accTime), mm(ch.accPacket)
		require.Equal(t, accT.Size()*accP.Size()*4, len(out), ch.name)
		n := float64(rc.Contract.Depth + rc.Accumulate.Iterations)
		u := math.Ldexp(1, -24)
		gamma := n * u / (1 - n*u)
		ps, err := ceCompile(ax, accT, accP)
		require.NoError(t, err)
		o := make([]int, ax.Len())
		for ot := 0; ot < accT.Size(); ot++ {
			for op := 0; op < accP.Size(); op++ {
				clear(o)
				if !ps[0].add(ot, o) || !ps[1].add(op, o) {
					continue
				}
				want, abs := ceReference(ax, ch, o, a, b)
				got := ceF32(out, ot*accP.Size()+op)
				require.LessOrEqual(t, math.Abs(got-want), gamma*abs+1e-30, "%s output %v: got %v want %v", ch.name, o, got, want)
			}
		}
	}
}

// ceFuzzAxes are the axes the fuzz target's mappings draw from.
const ceFuzzAxes = "A=2, B=3, C=4, D=8, E=16, F=32, N=8, R=2"

// ceFuzzTerms are the mapping terms the fuzz target combines.
var ceFuzzTerms = []string{"A", "B", "C", "D", "E", "F", "N", "R", "1", "4", "C / 2", "C % 2", "D / 4", "D % 4",
	"E / 8", "E % 8", "F / 16", "F % 16", "F # 64", "E # 32", "B # 4", "D % 4 # 8", "1 # 8", "1 # 2", "N / 2", "F / 2 % 4"}

// ceFuzzMapping reads a mapping of 1-3 terms from data.
func ceFuzzMapping(data []byte, i *int) string {
	next := func() int {
		if *i >= len(data) {
			return 0
		}
		b := int(data[*i])
		*i++
		return b
	}
	n := 1 + next()%3
	parts := make([]string, n)
	for k := range parts {
		parts[k] = ceFuzzTerms[next()%len(ceFuzzTerms)]
	}
	return strings.Join(parts, ", ")
}

// FuzzDeriveAlign feeds random mappings to every contraction-side
// derivation: none may panic, and a derived Stream Adapter or TRF Sequencer
// must pass its oracle.
func FuzzDeriveAlign(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21})
	f.Add([]byte{1, 5, 0, 0, 17, 1, 6, 2, 4, 3, 0, 5, 1, 6, 0, 6, 1, 9, 2, 1, 2, 3})
	f.Add([]byte{2, 0, 15, 0, 6, 0, 6, 0, 16, 0, 5, 1, 5, 15, 0, 22, 2, 2, 1, 0, 0, 0})
	spec := Default()
	ax, err := mapping.ParseAxes(ceFuzzAxes)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		i := 0
		pick := func() int {
			if i >= len(data) {
				return 0
			}
			i++
			return int(data[i-1])
		}
		d := append(ceTypes, dtype.F32, dtype.I32)[pick()%6]
		var es [8]*mapping.Expr
		for k := range es {
			e, err := mapping.Parse(ceFuzzMapping(data, &i), ax, nil)
			if err != nil {
				return
			}
			es[k] = e
		}
		time, packet, row, elem, otime, opacket, cpacket, atime := es[0], es[1], es[2], es[3], es[4], es[5], es[6], es[7]
		if sa, err := DeriveStreamAdapter(spec, StreamAdapterInput{DType: d, Time: time, Packet: packet, Row: row, OutTime: otime, OutPacket: opacket}); err == nil {
			if msg := ceSAOracle(ax, d, time, packet, otime, opacket, sa, 256); msg != "" {
				t.Fatalf("stream adapter %v: %s", sa, msg)
			}
		}
		if ts, err := DeriveTRFSequencer(spec, TRFSequencerInput{DType: d, Row: row, Element: elem, OutTime: otime, OutPacket: opacket}); err == nil {
			if msg := ceTRFOracle(ax, d, row, elem, otime, opacket, ts, 256); msg != "" {
				t.Fatalf("TRF sequencer %v: %s", ts, msg)
			}
		}
		_, _ = DeriveToTRF(spec, ToTRFInput{DType: d, Time: time, Packet: packet, Row: row, Element: elem, Address: kernel.TrfFull})
		kind := []kernel.AccumulationKind{kernel.Interleaved, kernel.Sequential}[pick()%2]
		if rc, err := DeriveReducer(spec, ReducerInput{DType: d, Row: row, Time: otime, Packet: opacket, ContractPacket: cpacket,
			OutTime: atime, OutPacket: packet, Kind: kind}); err == nil {
			if _, err := NewReducer(spec, rc); err != nil {
				t.Fatalf("derived reducer %v rejected: %v", rc, err)
			}
		}
		_, _ = DeriveCast(spec, CastInput{From: d, To: dtype.BF16, Packet: packet, OutPacket: opacket})
		_, _ = DeriveTranspose(spec, TransposeInput{DType: d, Time: time, Packet: packet, OutTime: otime, OutPacket: opacket})
	})
}

// TestRulesOfContractionEngines checks that each rule of these engines is
// registered under its engine.
func TestRulesOfContractionEngines(t *testing.T) {
	for _, id := range []string{"SA-R0", "SA-R1", "SA-R3", "SA-R5", "SA-R6", "SA-R8", "CE-R1", "CE-R5",
		"TRF-R0", "TRF-R1", "TRF-R2", "TRF-R3", "TRF-R4", "TRF-R5", "TRF-R6", "TRF-R8", "TRF-R10", "TRF-R11", "TRF-R12", "TRF-R13",
		"RED-R1", "RED-R2", "RED-R3", "RED-R4", "RED-R6", "RED-R8", "RED-R9", "RED-R10", "RED-R11", "RED-R12", "RED-R14",
		"CAST-R1", "CAST-R2", "CAST-R3", "TR-R0", "TR-R1", "TR-R2", "TR-R3", "TR-R4", "TR-R5", "TR-R9"} {
		r, ok := RuleByID(id)
		if assert.True(t, ok, id) {
			assert.Empty(t, r.wellFormed(), id)
		}
	}
}
