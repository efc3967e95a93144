package engines

import (
	"errors"
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Transpose Engine (002 L6820-7041). Derivation (computing.md §9.4,
// reference-notes §3.8): with Time = [T_outer, R, C] and Packet = [V # (32 B)]
// where V, the first elements_per_packet elements, holds the data,
//
//   - in_rows = |R|, the live part of OutPacket = [R # output_alignment];
//   - packets_per_col = |C|, in_cols = |C| · elements_per_packet;
//   - the transposed rows are the columns [C, V]; Trim drops the padded rows
//     at their end, leaving out_rows rows, and OutTime = [T_outer, kept rows];
//   - n = OutTime::SIZE / out_rows; double buffering iff
//     in_cols ≤ num_buffer_cols (002 L6888-6891).
//
// The cycle formula (002 L6899-6912) belongs to the cost model.

var (
	ruleTrWidth = NewRule(Rule{ID: "TR-R0", Engine: "transpose", Name: "element width",
		Cite: "002 L6859-6871, L6877-6883",
		Text: "the Transpose Engine handles 4-, 8-, 16- and 32-bit elements"})
	ruleTrFlit = NewRule(Rule{ID: "TR-R1", Engine: "transpose", Name: "32-byte packets",
		Cite: "002 L6885",
		Text: "both the input and output packets must be 32 bytes"})
	ruleTrInRows = NewRule(Rule{ID: "TR-R2", Engine: "transpose", Name: "max in_rows",
		Cite: "002 L6877-6883",
		Text: "in_rows is at most 16 (4-bit), 8 (8-bit), 4 (16-bit) or 2 (32-bit)"})
	ruleTrInCols = NewRule(Rule{ID: "TR-R3", Engine: "transpose", Name: "valid in_cols",
		Cite: "002 L6877-6883",
		Text: "in_cols is 16 or 32 (4-bit) or 8, 16 or 32 (8-, 16-, 32-bit)"})
	ruleTrOutRows = NewRule(Rule{ID: "TR-R4", Engine: "transpose", Name: "out_rows",
		Cite: "002 L6845-6847, L6886",
		Text: "out_rows <= in_cols: Trim only removes rows"})
	ruleTrUnpack = NewRule(Rule{ID: "TR-R5", Engine: "transpose", Name: "unpack",
		Cite: "002 L6843-6844",
		Text: "only the first elements_per_packet elements of each input packet are kept; the rest must be padding"})
	ruleTrShape = NewRule(Rule{ID: "TR-R9", Engine: "transpose", Name: "transpose shape",
		Cite: "002 L6831, L6842-6848",
		Text: "Time = [T, in_rows, packets_per_col] and OutTime = [T, out_rows], OutPacket = [in_rows # output_alignment]: the innermost Time axes swap with the Packet"})
)

// TransposeInput is what `stream.transpose::<OutTime, OutPacket>()` derives
// from.
type TransposeInput struct {
	// DType is the element type.
	DType dtype.DType
	// Time and Packet are the input stream's mappings.
	Time, Packet *mapping.Expr
	// OutTime and OutPacket are the transposed stream's mappings.
	OutTime, OutPacket *mapping.Expr
}

// DeriveTranspose checks a transpose and derives its configuration.
func DeriveTranspose(spec *Spec, in TransposeInput) (kernel.TransposeConfig, error) {
	var c kernel.TransposeConfig
	if spec == nil {
		return c, errors.New("transpose: nil hardware spec")
	}
	if err := ceCheckExprs("transpose", []string{"time", "packet", "out time", "out packet"}, in.Time, in.Packet, in.OutTime, in.OutPacket); err != nil {
		return c, err
	}
	bits := in.DType.SizeBits()
	var ty *TransposeType
	for i := range spec.Transpose.Types.Value {
		if spec.Transpose.Types.Value[i].Bits == bits {
			ty = &spec.Transpose.Types.Value[i]
		}
	}
	if ty == nil {
		return c, ruleTrWidth.Violate("element type %s is %d bits, want 4, 8, 16 or 32", in.DType, bits).With("bits", bits)
	}
	bus := spec.Transpose.BusBytes.Value
	for _, p := range []struct {
		name string
		e    *mapping.Expr
	}{{"input packet", in.Packet}, {"OutPacket", in.OutPacket}} {
		b, err := ceBytes(in.DType, p.e.Size(), p.name)
		if err != nil {
			return c, err
		}
		if b != bus {
			return c, ruleTrFlit.Violate("%s %s is %d bytes, want %d", p.name, p.e.Text(), b, bus).With("bytes", b)
		}
	}
	epp := ty.ElementsPerPacket
	for i := epp; i < in.Packet.Size(); i++ {
		if in.Packet.Map(i).Kind != mapping.Pad {
			return c, ruleTrUnpack.Violate("input packet %s holds data at element %d, beyond elements_per_packet %d",
				in.Packet.Text(), i, epp).With("element", i)
		}
	}
	v, err := mapping.NewModulo(in.Packet, epp)
	if err != nil {
		return c, fmt.Errorf("transpose: %w", err)
	}
	rowsMap, err := ceStrip(in.OutPacket)
	if err != nil {
		return c, ruleTrShape.Violate("OutPacket %s: %v", in.OutPacket.Text(), err)
	}
	inRows := rowsMap.Size()
	if inRows > ty.MaxInRows {
		return c, ruleTrInRows.Violate("in_rows %d (OutPacket %s) exceeds %d for %d-bit elements", inRows, in.OutPacket.Text(), ty.MaxInRows, bits).
			With("in_rows", inRows)
	}
	// Find Time = [T_outer, R, C] with R ≡ the rows of OutPacket.
	ppc := 0
	var tOuter *mapping.Expr
	ts := in.Time.Size()
	for cand := 1; cand <= ts; cand++ {
		if ts%cand != 0 || (ts/cand)%inRows != 0 {
			continue
		}
		rest, _, err := ceSplit(in.Time, cand)
		if err != nil {
			continue
		}
		to, r, err := ceSplit(rest, inRows)
		if err != nil || !ceEquiv(r, rowsMap) {
			continue
		}
		ppc, tOuter = cand, to
		break
	}
	if ppc == 0 {
		return c, ruleTrShape.Violate("OutPacket rows %s are not a part [T, %s, packets_per_col] of Time %s",
			rowsMap.Text(), rowsMap.String(), in.Time.Text())
	}
	inCols := ppc * epp
	if !ceContains(ty.ValidInCols, inCols) {
		return c, ruleTrInCols.Violate("in_cols = %d × %d = %d, want one of %v for %d-bit elements", ppc, epp, inCols, ty.ValidInCols, bits).
			With("in_cols", inCols)
	}
	_, colsC, err := ceSplit(in.Time, ppc)
	if err != nil {
		return c, fmt.Errorf("transpose: %w", err)
	}
	kept, err := ceStrip(mapping.Pair(colsC, v))
	if err != nil {
		return c, ruleTrShape.Violate("columns [%s, %s]: %v", colsC.String(), v.String(), err)
	}
	outRows := kept.Size()
	if outRows > inCols {
		return c, ruleTrOutRows.Violate("out_rows %d > in_cols %d", outRows, inCols).With("out_rows", outRows)
	}
	if want := mapping.Pair(tOuter, kept); !ceEquiv(in.OutTime, want) {
		return c, ruleTrShape.Violate("OutTime %s must be m![%s]", in.OutTime.Text(), want.String())
	}
	return kernel.TransposeConfig{
		ElementBits:       bits,
		InRows:            inRows,
		PacketsPerCol:     ppc,
		ElementsPerPacket: epp,
		InCols:            inCols,
		OutRows:           outRows,
		OutputAlignment:   ty.OutputAlignment,
		Iterations:        in.OutTime.Size() / outRows,
		DoubleBuffer:      inCols <= spec.Transpose.BufferCols.Value,
	}, nil
}

// transposeInt is the integer type of a width, used to move elements
// bit-exactly.
func transposeInt(bits int) (dtype.DType, error) {
	switch bits {
	case 4:
		return dtype.I4, nil
	case 8:
		return dtype.I8, nil
	case 16:
		return dtype.I16, nil
	case 32:
		return dtype.I32, nil
	}
	return 0, fmt.Errorf("transpose: %d-bit elements", bits)
}

// TransposeBlock is one iteration of the Transpose Engine (002 L6842-6848):
// in holds in_rows × packets_per_col input flits in time order (row-major),
// out receives out_rows flits; output row c holds element c mod
// elements_per_packet of packet (r, c / elements_per_packet) at position r,
// then zeros up to output_alignment (docs/spec-decisions.md "Padding written
// by cast and transpose"). It does not allocate.
func TransposeBlock(c *kernel.TransposeConfig, in, out []byte) error {
	if c == nil || c.ElementsPerPacket < 1 || c.InRows < 1 || c.PacketsPerCol < 1 || c.OutRows > c.InCols || c.InRows > c.OutputAlignment ||
		c.ElementsPerPacket > c.OutputAlignment {
		return errors.New("transpose: invalid configuration")
	}
	d, err := transposeInt(c.ElementBits)
	if err != nil {
		return err
	}
	flit := c.OutputAlignment * c.ElementBits / 8 // one 32-byte packet, 002 L6885
	if len(in) != c.InRows*c.PacketsPerCol*flit || len(out) != c.OutRows*flit {
		return fmt.Errorf("transpose: %d input and %d output bytes, want %d and %d", len(in), len(out),
			c.InRows*c.PacketsPerCol*flit, c.OutRows*flit)
	}
	for o := 0; o < c.OutRows; o++ {
		pc, k := o/c.ElementsPerPacket, o%c.ElementsPerPacket
		dst := out[o*flit : (o+1)*flit]
		for r := 0; r < c.OutputAlignment; r++ {
			var v int64
			if r < c.InRows {
				src := in[(r*c.PacketsPerCol+pc)*flit : (r*c.PacketsPerCol+pc+1)*flit]
				if v, err = d.LoadInt(src, k); err != nil {
					return err
				}
			}
			if err := d.StoreInt(dst, r, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// ruleTrStated: transpose has nothing to choose.
var ruleTrStated = NewRule(Rule{ID: "TR-R10", Engine: "transpose", Name: "transpose follows from its mappings",
	Cite: "002 L6820-6886",
	Text: "transpose::<Time, Packet>() transposes blocks whose rows, columns and alignment follow from the stream's type and the in and out mappings"})
