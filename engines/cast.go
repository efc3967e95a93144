package engines

import (
	"errors"
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Cast Engine (002 L6756-6819): precision lowering of 32-byte packets.
// Input Packet = [P # (32 / sizeof(D1))], output Packet =
// [P # (32 / sizeof(D2))], Time unchanged (002 L6780-6784); P is the input
// packet without its outermost padding.

var (
	ruleCastInput = NewRule(Rule{ID: "CAST-R1", Engine: "cast", Name: "input flit",
		Cite: "002 L6781",
		Text: "the input packet is exactly 32 bytes (one flit)"})
	ruleCastPair = NewRule(Rule{ID: "CAST-R2", Engine: "cast", Name: "precision lowering",
		Cite: "002 L6774-6779",
		Text: "i32 casts to i4, i8 or i16; f32 casts to f8e5m2, f8e4m3, f16 or bf16"})
	ruleCastOutput = NewRule(Rule{ID: "CAST-R3", Engine: "cast", Name: "packet transformation",
		Cite: "002 L6782-6784",
		Text: "the cast packet is padded back to 32 bytes: Packet = [P # (32 / sizeof(D2))]"})
)

// CastInput is what `stream.cast::<D2, OutPacket>()` derives from.
type CastInput struct {
	// From is the stream's element type (D1), To the cast's (D2).
	From, To dtype.DType
	// Packet is the stream's packet mapping, OutPacket the cast's.
	Packet, OutPacket *mapping.Expr
}

// DeriveCast checks a cast and derives its configuration.
func DeriveCast(spec *Spec, in CastInput) (kernel.CastConfig, error) {
	var c kernel.CastConfig
	if spec == nil {
		return c, errors.New("cast: nil hardware spec")
	}
	if err := ceCheckExprs("cast", []string{"packet", "out packet"}, in.Packet, in.OutPacket); err != nil {
		return c, err
	}
	if !dtype.CanCast(dtype.CastEngine, in.From, in.To) {
		return c, ruleCastPair.Violate("the Cast Engine cannot cast %s to %s", in.From, in.To)
	}
	flit := spec.Cast.InputPacketBytes.Value
	ib, err := ceBytes(in.From, in.Packet.Size(), "packet")
	if err != nil {
		return c, err
	}
	if ib != flit {
		return c, ruleCastInput.Violate("input packet %s is %d bytes of %s, want %d", in.Packet.Text(), ib, in.From, flit).
			With("packet_bytes", ib)
	}
	outElems, err := in.To.ElemsIn(spec.Cast.OutputPacketBytes.Value)
	if err != nil {
		return c, fmt.Errorf("cast: %w", err)
	}
	live, err := ceStrip(in.Packet)
	if err != nil {
		return c, ruleCastOutput.Violate("input packet %s: %v", in.Packet.Text(), err)
	}
	want, err := mapping.NewPadding(live, outElems, mapping.Top)
	if err != nil || !ceEquiv(in.OutPacket, want) {
		return c, ruleCastOutput.Violate("OutPacket %s must be m![%s # %d]", in.OutPacket.Text(), live.String(), outElems).
			With("out_elements", in.OutPacket.Size())
	}
	return kernel.CastConfig{From: in.From, To: in.To, Valid: live.Size(), InElems: in.Packet.Size(), OutElems: outElems}, nil
}

// CastPacket is the Cast Engine's semantics on one packet: the Valid leading
// elements of in are converted (f32 rounds per the target type's rule,
// integers wrap; see model/dtype), the rest of out is zero
// (docs/spec-decisions.md "Padding written by cast and transpose"). It does
// not allocate.
func CastPacket(c *kernel.CastConfig, in, out []byte) error {
	if c == nil || c.Valid > c.InElems || c.Valid > c.OutElems {
		return errors.New("cast: invalid configuration")
	}
	if n, err := c.From.BufLen(c.InElems); err != nil || len(in) < n {
		return fmt.Errorf("cast: input of %d bytes for %d %s elements", len(in), c.InElems, c.From)
	}
	if n, err := c.To.BufLen(c.OutElems); err != nil || len(out) < n {
		return fmt.Errorf("cast: output of %d bytes for %d %s elements", len(out), c.OutElems, c.To)
	}
	for i := 0; i < c.OutElems; i++ {
		var err error
		switch {
		case i >= c.Valid && c.To.IsFloat():
			err = c.To.StoreF32(out, i, 0)
		case i >= c.Valid:
			err = c.To.StoreInt(out, i, 0)
		case c.From.IsFloat():
			var v float32
			if v, err = c.From.LoadF32(in, i); err == nil {
				err = c.To.StoreF32(out, i, v)
			}
		default:
			var v int64
			if v, err = c.From.LoadInt(in, i); err == nil {
				err = c.To.StoreInt(out, i, v)
			}
		}
		if err != nil {
			return fmt.Errorf("cast: element %d: %w", i, err)
		}
	}
	return nil
}

// ruleCastStated: cast has nothing to choose.
var ruleCastStated = NewRule(Rule{ID: "CAST-R4", Engine: "cast", Name: "cast follows from its types",
	Cite: "002 L6756-6784",
	Text: "cast::<D, Packet>() converts the stream's type to D packet by packet: its element counts follow from the types and the Packet mappings"})
