package engines

// The Collect Engine (002 L3543-3669): normalization of every packet to
// exactly one flit. This file holds its derivation (output Time and Packet
// from the input's), its rules, and its functional semantics on packets
// (CollectApply).

import (
	"errors"
	"fmt"
	"math/bits"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Collect Engine's rules (computing.md §3.3; COL-R1..COL-R3 are the
// catalog's IDs).
var (
	ruleColFlit = NewRule(Rule{ID: "COL-R1", Engine: "collect", Name: "one flit",
		Cite: "002 L3039, L3544, L3549",
		Text: "the output packet is exactly one flit: 32 bytes (64 in dual channel mode)"})
	ruleColPacket = NewRule(Rule{ID: "COL-R2", Engine: "collect", Name: "inner flit",
		Cite: "002 L3550-3552, L3561-3564",
		Text: "the output Packet is the inner flit of the input packet padded to a flit boundary"})
	ruleColTime = NewRule(Rule{ID: "COL-R3", Engine: "collect", Name: "flits into time",
		Cite: "002 L3551, L3564, L3603",
		Text: "the output Time is the input Time with the outer flit count appended innermost; a packet of at most one flit keeps its Time"})
	ruleColBytes = NewRule(Rule{ID: "COL-R6", Engine: "collect", Name: "whole bytes",
		Cite: "002 L3037, L3561",
		Text: "the input packet (a fetch packet) holds whole bytes, so it can be padded to a flit boundary"})
)

// CollectRequest is what the Collect Engine derivation starts from
// (002 L3546-3559): the input stream's element type, Time and Packet, and
// optionally the output Time and Packet of `collect::<Time2, Packet2>` to
// check. Chip, Cluster and Slice pass through unchanged (002 L3555).
type CollectRequest struct {
	DType        dtype.DType
	Time, Packet *mapping.Expr
	// OutTime and OutPacket, when given, are checked against the derived
	// mappings.
	OutTime, OutPacket *mapping.Expr
	// DualChannel selects 64-byte flits (002 L1997, L2127); see
	// docs/spec-decisions.md "Dual channel flit".
	DualChannel bool
}

// CollectPlan is the result of DeriveCollect.
type CollectPlan struct {
	Collect kernel.Collect
	// OutTime and OutPacket are the derived output mappings, normalized.
	OutTime, OutPacket *mapping.Expr
}

// DeriveCollect derives the collect normalization (002 L3561-3564,
// computing.md §3.4): with n = |Packet| and F elements per flit, a packet of
// at most one flit becomes Packet # F with Time unchanged; a larger one is
// padded to Pp = Packet # (ceil(n/F)·F) and split into Packet2 = Pp % F and
// Time2 = [Time, Pp / F]. When the request gives output mappings they must
// match (COL-R1..COL-R3).
func DeriveCollect(spec *Spec, req CollectRequest) (*CollectPlan, error) {
	if spec == nil {
		return nil, errors.New("collect: no hardware spec")
	}
	for _, m := range []struct {
		name string
		e    *mapping.Expr
		need bool
	}{{"input Time", req.Time, true}, {"input Packet", req.Packet, true}, {"output Time", req.OutTime, false}, {"output Packet", req.OutPacket, false}} {
		if m.e == nil {
			if m.need {
				return nil, fmt.Errorf("collect: missing %s mapping", m.name)
			}
			continue
		}
		if err := m.e.Err(); err != nil {
			return nil, fmt.Errorf("collect: %s: %w", m.name, err)
		}
	}
	d := req.DType
	if !d.Valid() {
		return nil, errors.New("collect: missing or invalid dtype")
	}
	flit := spec.Collect.OutputPacketBytes.Value // 002 L3039, L3549
	if req.DualChannel {
		flit = spec.Stream.DualChannelFlitBytes.Value // 002 L1997, L2127
	}
	T, P := req.Time, req.Packet
	n := P.Size()
	pbytes, err := d.BytesFor(n)
	if err != nil {
		return nil, ruleColBytes.Violate("packet m![%s] of %d %s elements is not whole bytes", P, n, d).With("elements", n)
	}
	F, err := d.ElemsIn(flit)
	if err != nil {
		return nil, fmt.Errorf("collect: a %d-byte flit of %s: %w", flit, d, err)
	}
	flits := (pbytes + flit - 1) / flit
	if flits == 0 {
		flits = 1 // an empty packet cannot exist (sizes are ≥ 1); keep the arithmetic total
	}
	plan := &CollectPlan{Collect: kernel.Collect{
		InTime: T.Size(), PacketBytes: pbytes, FlitBytes: flit, FlitElems: F, Flits: flits,
		PadBytes: flits*flit - pbytes, // zeros, 002 L2122
	}}
	var p2, t2 *mapping.Expr
	if flits == 1 {
		// Only padding: 002 L3552 ("For packets already ≤ 32 bytes, only
		// padding is added"), L3577-3588.
		p2, t2 = P.Pad(F, mapping.Top), T
	} else {
		pp := P.Pad(flits*F, mapping.Top) // pad to the flit boundary, 002 L3561
		p2 = pp.Mod(F)                    // inner 32 bytes, 002 L3550
		t2 = mapping.Pair(T, pp.Div(F))   // outer flit count absorbed into Time, 002 L3551, L3603
	}
	if err := p2.Err(); err != nil {
		return nil, fmt.Errorf("collect: building the output Packet: %w", err)
	}
	if err := t2.Err(); err != nil {
		return nil, fmt.Errorf("collect: building the output Time: %w", err)
	}
	plan.OutTime, plan.OutPacket = switchNormalizePair(t2, p2)
	if req.OutPacket != nil {
		ob, err := d.BytesFor(req.OutPacket.Size())
		if err != nil || ob != flit {
			v := ruleColFlit.Violate("output Packet m![%s] is %d %s elements, not one %d-byte flit (expected m![%s])", req.OutPacket, req.OutPacket.Size(), d, flit, plan.OutPacket)
			if err == nil {
				v = v.With("packet_bytes", ob)
			}
			return nil, v
		}
		if !switchSame(req.OutPacket, p2) {
			return nil, ruleColPacket.Violate("output Packet m![%s] is not the inner flit m![%s] of input Packet m![%s]", req.OutPacket, plan.OutPacket, P)
		}
	}
	if req.OutTime != nil {
		op := p2
		if req.OutPacket != nil {
			op = req.OutPacket
		}
		// Time and Packet are compared together: the flit split of a
		// composite packet is one composite atom across both (002 L1023-1024).
		if !switchSamePair(req.OutTime, op, t2, p2) {
			if req.OutPacket != nil && req.OutTime.Size() == t2.Size() && switchSame(req.OutTime, t2) {
				return nil, ruleColPacket.Violate("output Packet m![%s] with Time m![%s] does not hold the inner flits of input Packet m![%s] (expected m![%s], m![%s])", req.OutPacket, req.OutTime, P, plan.OutTime, plan.OutPacket)
			}
			return nil, ruleColTime.Violate("output Time m![%s] is not m![%s] (input Time m![%s], %d flits per packet)", req.OutTime, plan.OutTime, T, flits).With("flits", flits)
		}
	}
	return plan, nil
}

// CollectApply runs a lowered collect on packets: src holds c.InTime packets
// of c.PacketBytes bytes, dst receives c.InTime · c.Flits flits of
// c.FlitBytes bytes. Flit k of the packet at time t is output at time
// (t, k) and holds bytes k·FlitBytes… of the packet (002 L3603); bytes past
// the packet are zero (002 L2122). Several slices are handled by calling it
// per slice. It does not allocate.
func CollectApply(c *kernel.Collect, dst, src []byte) error {
	if c == nil {
		return errors.New("collect: nil configuration")
	}
	t, p, f, k := c.InTime, c.PacketBytes, c.FlitBytes, c.Flits
	if t < 1 || p < 1 || f < 1 || k < 1 || k*f < p || (k-1)*f >= p {
		return fmt.Errorf("collect: malformed configuration (%d time steps, %d-byte packets, %d flits of %d bytes)", t, p, k, f)
	}
	if hi, lo := bits.Mul64(uint64(t), uint64(p)); hi != 0 || lo != uint64(len(src)) {
		return fmt.Errorf("collect: input holds %d bytes, want %d packets × %d bytes", len(src), t, p)
	}
	if hi, lo := bits.Mul64(uint64(t*k), uint64(f)); hi != 0 || lo != uint64(len(dst)) {
		return fmt.Errorf("collect: output holds %d bytes, want %d flits × %d bytes", len(dst), t*k, f)
	}
	for i := 0; i < t; i++ {
		out := dst[i*k*f : (i+1)*k*f]
		n := copy(out, src[i*p:(i+1)*p])
		clear(out[n:])
	}
	return nil
}

// ruleColStated: collect has nothing to choose.
var ruleColStated = NewRule(Rule{ID: "COL-R7", Engine: "collect", Name: "collect follows from its types",
	Cite: "002 L3543-3564, L3555",
	Text: "collect::<Time2, Packet2>() pads and splits each packet into 32-byte flits (one 64-byte flit in dual channel mode): its flits, padding and time follow from the stream's type and mappings"})
