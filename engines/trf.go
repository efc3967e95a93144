package engines

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Tensor Register File (002 L4035-4296): `to_trf` (SRAM-to-TRF), the
// TRF's banked layout, and the TRF Sequencer, the weight path of the
// Aligner.
//
// to_trf (002 L4052-4061): the collect stream [Time, Packet] is split into
// [Row, Element]: Row is the outermost Row::SIZE part of Time, Element the
// rest (reference-notes §5.4 C2).
//
// Layout (derived from the address bit-field `bank row | row in bank | bank
// col | offset`, 002 L4130-4140; see docs/spec-decisions.md "TRF byte
// layout"): byte b of a Row's Element sits in bank column (b / 32) mod 2,
// byte b mod 32 of its bank row, row-in-bank line b / 64 (plus 64 in
// SecondHalf). With rows < 8 the freed bank-row bits extend the row address
// (002 L4148): line k·L + l (L rows per bank in the mode) of Row r is in bank
// row r + k·rows.
//
// TRF Sequencer (002 L4098-4111, L4169-4177; computing.md §6.4):
//
//   - reg_read_size is the largest power of two r·e ≤ 64 bytes with
//     Element % r ≡ OutPacket % r (002 L4108): the contiguous innermost part
//     common to both; the rest of the 64-byte window repeats it (002 L4104);
//   - the packet part beyond reg_read_size must not carry a TRF axis, since
//     it only repeats the read;
//   - each OutTime digit, innermost first, is an entry: a digit of the
//     Element outside reg_read_size gives its byte stride, a digit of an axis
//     the TRF lacks gives stride 0 (broadcast, 002 L4177, L4239);
//   - entries merge only when there are more than 8 (003 L349-351).

var (
	ruleTRFInput = NewRule(Rule{ID: "TRF-R0", Engine: "trf", Name: "flit input",
		Cite: "002 L3544, L4072, L4113",
		Text: "to_trf stores the Collect Engine's output: 32-byte flits"})
	ruleTRFSplit = NewRule(Rule{ID: "TRF-R1", Engine: "trf", Name: "Row and Element split",
		Cite: "002 L4053-4055",
		Text: "the outermost axes of the collect stream become Row and the remaining inner axes Element: [Time, Packet] = [Row, Element]"})
	ruleTRFRows = NewRule(Rule{ID: "TRF-R2", Engine: "trf", Name: "rows",
		Cite: "002 L4162-4167, L4529-4530",
		Text: "a TRF tensor uses 1, 2, 4 or 8 bank rows (Row::SIZE)"})
	ruleTRFCapacity = NewRule(Rule{ID: "TRF-R3", Engine: "trf", Name: "capacity",
		Cite: "002 L3779, L4118, L4148, L4151-4155",
		Text: "each Row's Element fits its region: 128 (Full) or 64 (Half) rows × 2 bank columns × 32 bytes per bank row, times 8 / rows"})
	ruleTRFReadSize = NewRule(Rule{ID: "TRF-R4", Engine: "trf", Name: "reg_read_size",
		Cite: "002 L4104, L4108",
		Text: "reg_read_size is a power of two of 1-64 bytes: the contiguous innermost part common to the TRF and computation mappings"})
	ruleTRFAlign = NewRule(Rule{ID: "TRF-R5", Engine: "trf", Name: "64-byte alignment",
		Cite: "002 L4110-4111",
		Text: "with reg_read_size = 64 bytes the base address and all sequencer strides are multiples of 64 bytes"})
	ruleTRFEntries = NewRule(Rule{ID: "TRF-R6", Engine: "trf", Name: "sequencer entries",
		Cite: "002 L4171-4175",
		Text: "the TRF Sequencer has 1-8 entries, each of size 1-65536 and a signed 32-bit stride"})
	ruleTRFHalves = NewRule(Rule{ID: "TRF-R8", Engine: "trf", Name: "address regions",
		Cite: "002 L4156-4158",
		Text: "Full dedicates the whole TRF to one tensor; FirstHalf and SecondHalf hold up to two tensors that do not interfere"})
	ruleTRFWindow = NewRule(Rule{ID: "TRF-R10", Engine: "trf", Name: "mac_width window",
		Cite: "002 L4099-4104",
		Text: "every cycle the Reducer consumes exactly mac_width (64 bytes) of weights per Row"})
	ruleTRFPacketBroadcast = NewRule(Rule{ID: "TRF-R11", Engine: "trf", Name: "packet broadcast",
		Cite: "002 L4100-4105",
		Text: "the part of the 64-byte window beyond reg_read_size repeats the read, so it carries no TRF axis"})
	ruleTRFTimeRead = NewRule(Rule{ID: "TRF-R12", Engine: "trf", Name: "time reordering",
		Cite: "002 L4083-4085, L4106, L4177",
		Text: "each computation Time term is either a digit of the TRF Element outside reg_read_size (read with its stride) or an axis the TRF lacks (stride 0)"})
	ruleTRFAllRead = NewRule(Rule{ID: "TRF-R13", Engine: "trf", Name: "weights read",
		Cite: "002 L3676-3683, L3778",
		Text: "the computation mapping reads every weight of the TRF Element: each Element digit is in reg_read_size or iterated by Time"})
)

// trfRegType is the reg_types value of a contraction input (002 L4141-4147;
// docs/spec-decisions.md "TRF reg_types").
func trfRegType(d dtype.DType) (int, error) {
	switch d {
	case dtype.I4, dtype.I5:
		return 0, nil // 5-bit "i4 extended"
	case dtype.I8, dtype.I9, dtype.F8E4M3, dtype.F8E5M2:
		return 2, nil // 10-bit
	case dtype.BF16:
		return 3, nil // 20-bit
	}
	return 0, ruleCEType.Violate("element type %s has no TRF reg_types (i4, i8, f8, bf16)", d)
}

// TRFRowCapacity is the bytes one Row may hold in address mode a with rows
// Rows in use (002 L4118, L4148, L4151-4155): rows per bank in the mode ×
// bank columns × 32 bytes, times the bank rows each Row owns (8 / rows).
func TRFRowCapacity(spec *Spec, a kernel.TrfAddress, rows int) (int, error) {
	if spec == nil {
		return 0, errors.New("trf: nil hardware spec")
	}
	t := &spec.TRF
	if !ceContains(t.Rows.Value, rows) {
		return 0, ruleTRFRows.Violate("Row::SIZE is %d, want one of %v", rows, t.Rows.Value).With("rows", rows)
	}
	lines := t.RowsPerBank.Value // 002 L4118
	switch {
	case a == kernel.TrfFull:
	case a.Half():
		lines = t.HalfRowsPerBank.Value
	default:
		return 0, fmt.Errorf("trf: unknown address mode %q", string(a))
	}
	return lines * t.BankColumns.Value * t.RowBytes.Value * (t.BankRows.Value / rows), nil
}

// ToTRFInput is what `collect.to_trf::<Row, Element>(address)` derives from.
type ToTRFInput struct {
	// DType is the element type.
	DType dtype.DType
	// Time and Packet are the collect stream's mappings.
	Time, Packet *mapping.Expr
	// Row and Element are the TRF tensor's mappings.
	Row, Element *mapping.Expr
	// Address is the TrfAddress mode.
	Address kernel.TrfAddress
}

// DeriveToTRF checks a to_trf call and derives its configuration.
func DeriveToTRF(spec *Spec, in ToTRFInput) (kernel.ToTRFConfig, error) {
	var c kernel.ToTRFConfig
	if spec == nil {
		return c, errors.New("trf: nil hardware spec")
	}
	if err := ceCheckExprs("trf", []string{"time", "packet", "row", "element"}, in.Time, in.Packet, in.Row, in.Element); err != nil {
		return c, err
	}
	if !in.Address.Valid() {
		return c, fmt.Errorf("trf: unknown address mode %q (want Full, FirstHalf or SecondHalf)", string(in.Address))
	}
	reg, err := trfRegType(in.DType)
	if err != nil {
		return c, err
	}
	flit := spec.Stream.FlitBytes.Value
	pb, err := ceBytes(in.DType, in.Packet.Size(), "packet")
	if err != nil {
		return c, err
	}
	if pb != flit {
		return c, ruleTRFInput.Violate("collect packet %s is %d bytes, want one %d-byte flit", in.Packet.Text(), pb, flit).
			With("packet_bytes", pb)
	}
	rows := in.Row.Size()
	capacity, err := TRFRowCapacity(spec, in.Address, rows)
	if err != nil {
		return c, err
	}
	if in.Time.Size()%rows != 0 {
		return c, ruleTRFSplit.Violate("Row::SIZE %d does not divide Time::SIZE %d of %s", rows, in.Time.Size(), in.Time.Text()).
			With("rows", rows).With("time", in.Time.Size())
	}
	perRow := in.Time.Size() / rows
	outer, inner, err := ceSplit(in.Time, perRow)
	if err != nil || !ceEquiv(outer, in.Row) {
		got := "?"
		if outer != nil {
			got = outer.Text()
		}
		return c, ruleTRFSplit.Violate("Row %s is not the outermost part %s of Time %s", in.Row.Text(), got, in.Time.Text())
	}
	if !ceEquiv(mapping.Pair(inner, in.Packet), in.Element) {
		return c, ruleTRFSplit.Violate("Element %s is not the rest [%s, %s] of the collect stream",
			in.Element.Text(), inner.String(), in.Packet.String())
	}
	eb, err := ceBytes(in.DType, in.Element.Size(), "element")
	if err != nil {
		return c, err
	}
	if eb > capacity {
		return c, ruleTRFCapacity.Violate("Element %s needs %d bytes per Row, TrfAddress::%s with %d rows holds %d",
			in.Element.Text(), eb, in.Address, rows, capacity).With("bytes", eb).With("capacity", capacity)
	}
	return kernel.ToTRFConfig{
		Address:       in.Address,
		Rows:          rows,
		FlitsPerRow:   perRow,
		ElementBytes:  eb,
		CapacityBytes: capacity,
		RegType:       reg,
		ElementBits:   in.DType.SizeBits(),
	}, nil
}

// CheckTRFRegions checks that TRF tensors live at the same time do not
// interfere (002 L4156-4158): a Full tensor excludes every other, and each
// half holds one tensor.
func CheckTRFRegions(modes ...kernel.TrfAddress) error {
	var full, first, second int
	for _, m := range modes {
		switch m {
		case kernel.TrfFull:
			full++
		case kernel.TrfFirstHalf:
			first++
		case kernel.TrfSecondHalf:
			second++
		default:
			return fmt.Errorf("trf: unknown address mode %q", string(m))
		}
	}
	if (full > 0 && len(modes) > 1) || first > 1 || second > 1 {
		return ruleTRFHalves.Violate("live TRF tensors %v overlap: Full is exclusive, each half holds one tensor", modes).
			With("tensors", len(modes))
	}
	return nil
}

// TRFLocate returns where byte b of Row row's Element sits in the register
// file (see the package-level layout notes; docs/spec-decisions.md "TRF byte
// layout").
func TRFLocate(spec *Spec, c *kernel.ToTRFConfig, row, b int) (kernel.TRFLocation, error) {
	var l kernel.TRFLocation
	if spec == nil || c == nil {
		return l, errors.New("trf: nil spec or configuration")
	}
	t := &spec.TRF
	if c.Rows < 1 || t.BankRows.Value%c.Rows != 0 {
		return l, fmt.Errorf("trf: configuration has %d rows", c.Rows)
	}
	if row < 0 || row >= c.Rows {
		return l, fmt.Errorf("trf: Row %d outside [0, %d)", row, c.Rows)
	}
	capacity, err := TRFRowCapacity(spec, c.Address, c.Rows)
	if err != nil {
		return l, err
	}
	if b < 0 || b >= capacity {
		return l, fmt.Errorf("trf: byte %d outside the Row's %d-byte region", b, capacity)
	}
	rb := t.RowBytes.Value // 32 logical bytes per bank row, 002 L4118
	cols := t.BankColumns.Value
	lines := t.RowsPerBank.Value
	base := 0
	if c.Address.Half() {
		lines = t.HalfRowsPerBank.Value
		if c.Address == kernel.TrfSecondHalf {
			base = t.HalfRowsPerBank.Value // rows 64-127, 002 L4138
		}
	}
	line := b / (rb * cols)
	l.Byte = b % rb
	l.Column = (b / rb) % cols
	l.Row = base + line%lines
	l.BankRow = row + (line/lines)*c.Rows
	slots, perRow, err := trfSlots(t, c.RegType)
	if err != nil {
		return l, err
	}
	l.Slot = l.Byte * perRow / rb * slots
	return l, nil
}

// trfSlots returns the slots per element and elements per bank row of a
// reg_types value (002 L4141-4147).
func trfSlots(t *TRFSpec, reg int) (slots, perRow int, err error) {
	for _, r := range t.RegTypes.Value {
		if r.RegType == reg {
			return r.Slots, r.ElementsPerRow, nil
		}
	}
	return 0, 0, fmt.Errorf("trf: unknown reg_types %d", reg)
}

// TRFSequencerInput is what the TRF Sequencer's configuration derives from:
// the TRF tensor and the computation mapping.
type TRFSequencerInput struct {
	// DType is the element type.
	DType dtype.DType
	// Row and Element are the TRF tensor's mappings.
	Row, Element *mapping.Expr
	// OutTime and OutPacket are the computation mapping's Time and Packet.
	OutTime, OutPacket *mapping.Expr
}

// DeriveTRFSequencer derives reg_read_size and the sequencer entries that
// make the TRF tensor produce the computation mapping.
func DeriveTRFSequencer(spec *Spec, in TRFSequencerInput) (kernel.TRFSequencerConfig, error) {
	var c kernel.TRFSequencerConfig
	if spec == nil {
		return c, errors.New("trf: nil hardware spec")
	}
	if err := ceCheckExprs("trf", []string{"row", "element", "out time", "out packet"}, in.Row, in.Element, in.OutTime, in.OutPacket); err != nil {
		return c, err
	}
	if err := ceCheckType(in.DType); err != nil {
		return c, err
	}
	t := &spec.TRF
	rows := in.Row.Size()
	if !ceContains(t.Rows.Value, rows) {
		return c, ruleTRFRows.Violate("Row %s has size %d, want one of %v", in.Row.Text(), rows, t.Rows.Value).With("rows", rows)
	}
	mac := spec.Stream.MACWidthBytes.Value // 002 L4099
	bits := in.DType.SizeBits()
	ob, err := ceBytes(in.DType, in.OutPacket.Size(), "out packet")
	if err != nil {
		return c, err
	}
	if ob != mac {
		return c, ruleTRFWindow.Violate("OutPacket %s is %d bytes, want %d (mac_width)", in.OutPacket.Text(), ob, mac).
			With("out_packet_bytes", ob)
	}
	if _, err := ceBytes(in.DType, in.Element.Size(), "element"); err != nil {
		return c, err
	}

	// reg_read_size (002 L4104, L4108): the largest common contiguous part.
	sizes := append([]int(nil), t.RegReadSizes.Value...)
	readBytes := 0
	var eOuter, eInner, pOuter *mapping.Expr
	for i := len(sizes) - 1; i >= 0; i-- {
		rb := sizes[i]
		if rb*8%bits != 0 || rb > mac {
			continue
		}
		n := rb * 8 / bits
		if in.Element.Size()%n != 0 || in.OutPacket.Size()%n != 0 {
			continue
		}
		eo, ei, err1 := ceSplit(in.Element, n)
		po, pi, err2 := ceSplit(in.OutPacket, n)
		if err1 != nil || err2 != nil || !ceEquiv(ei, pi) {
			continue
		}
		readBytes, eOuter, eInner, pOuter = rb, eo, ei, po
		break
	}
	if readBytes == 0 {
		return c, ruleTRFReadSize.Violate("TRF Element %s and OutPacket %s share no contiguous innermost part of %v bytes",
			in.Element.Text(), in.OutPacket.Text(), sizes)
	}
	if shared := ceShared(pOuter.Symbols(), in.Element.Symbols(), in.Row.Symbols()); len(shared) > 0 {
		return c, ruleTRFPacketBroadcast.Violate("OutPacket %s beyond reg_read_size = %dB is %s, which carries TRF axes %s",
			in.OutPacket.Text(), readBytes, pOuter.Text(), strings.Join(shared, ", ")).With("reg_read_size", readBytes)
	}

	// Entries (002 L4106, L4169-4177).
	ot, err := ceDigits(in.OutTime)
	if err != nil {
		return c, ruleTRFTimeRead.Violate("OutTime cannot be sequenced: %v", err)
	}
	eo, err := ceDigits(eOuter)
	if err != nil {
		return c, ruleTRFTimeRead.Violate("TRF Element %s outside reg_read_size cannot be sequenced: %v", in.Element.Text(), err)
	}
	ei, err := ceDigits(eInner)
	if err != nil {
		return c, ruleTRFTimeRead.Violate("TRF Element %s inside reg_read_size cannot be sequenced: %v", in.Element.Text(), err)
	}
	rw, err := ceDigits(in.Row)
	if err != nil {
		return c, ruleTRFTimeRead.Violate("Row %s cannot be sequenced: %v", in.Row.Text(), err)
	}
	if err := ceRefine(&ot, &eo, &ei, &rw); err != nil {
		return c, ruleTRFTimeRead.Violate("OutTime %s against TRF Element %s: %v", in.OutTime.Text(), in.Element.Text(), err)
	}
	trfAxes := ceAxes(append(append(append([]ceDigit(nil), eo...), ei...), rw...))
	used := make([]bool, len(eo))
	var entries []kernel.TRFEntry
	for _, d := range ot {
		e := kernel.TRFEntry{Size: d.size, Term: d.text()}
		if d.kind == ceTerm {
			found := false
			for j, x := range eo {
				if !used[j] && d.sameRange(x) {
					used[j], found = true, true
					e.Stride = x.pos * readBytes
					break
				}
			}
			if !found {
				for _, x := range ei {
					if d.sameRange(x) {
						return c, ruleTRFTimeRead.Violate("OutTime term %s is inside reg_read_size = %dB of the TRF Element %s",
							d.text(), readBytes, in.Element.Text())
					}
				}
				for _, x := range rw {
					if d.sameRange(x) {
						return c, ruleTRFTimeRead.Violate("OutTime term %s is the TRF Row %s; each Row holds one index of it",
							d.text(), in.Row.Text())
					}
				}
				if trfAxes[d.axis] {
					return c, ruleTRFTimeRead.Violate("OutTime term %s steps axis %s, which the TRF tensor [%s | %s] holds only in other digits",
						d.text(), d.axis, in.Row.String(), in.Element.String())
				}
			}
		}
		entries = append(entries, e)
	}
	for j, x := range eo {
		if !used[j] && x.kind == ceTerm && x.live > 1 {
			return c, ruleTRFAllRead.Violate("TRF Element digit %s of %s is never read by OutTime %s",
				x.text(), in.Element.Text(), in.OutTime.Text())
		}
	}
	if len(entries) == 0 {
		entries = []kernel.TRFEntry{{Size: 1, Stride: 0}}
	}
	maxEntries, maxSize := t.Sequencer.MaxEntries.Value, t.Sequencer.MaxEntrySize.Value
	if len(entries) > maxEntries {
		entries = trfMerge(entries, maxSize)
	}
	if len(entries) > maxEntries {
		return c, ruleTRFEntries.Violate("TRF Sequencer needs %d entries after merging, limit %d", len(entries), maxEntries).
			With("entries", len(entries))
	}
	limit := int64(1) << (t.Sequencer.StrideBits.Value - 1)
	for i, e := range entries {
		if e.Size < 1 || e.Size > maxSize {
			return c, ruleTRFEntries.Violate("entry %d (%s) has size %d, limit %d", i, e.Term, e.Size, maxSize).With("size", e.Size)
		}
		if int64(e.Stride) >= limit || int64(e.Stride) < -limit {
			return c, ruleTRFEntries.Violate("entry %d (%s) has stride %d, beyond signed %d-bit", i, e.Term, e.Stride, t.Sequencer.StrideBits.Value).
				With("stride", e.Stride)
		}
	}
	c = kernel.TRFSequencerConfig{RegReadSize: readBytes, Broadcast: mac / readBytes, Entries: entries, Rows: rows}
	if err := CheckTRFSequencer(spec, &c); err != nil {
		return kernel.TRFSequencerConfig{}, err
	}
	return c, nil
}

// trfMerge merges adjacent entries (inner e[k], outer e[k+1]) that are
// physically contiguous, outer stride = inner size × inner stride
// (003 L349-351), as long as the merged size stays within maxSize.
func trfMerge(es []kernel.TRFEntry, maxSize int) []kernel.TRFEntry {
	out := []kernel.TRFEntry{es[0]}
	for _, e := range es[1:] {
		last := &out[len(out)-1]
		if e.Stride == last.Size*last.Stride && last.Size*e.Size <= maxSize {
			last.Size *= e.Size
			last.Term = e.Term + ", " + last.Term
			continue
		}
		out = append(out, e)
	}
	return out
}

// CheckTRFSequencer checks a TRF Sequencer configuration, derived or written
// by hand, against the register-level rules (002 L4104, L4110-4111,
// L4171-4175).
func CheckTRFSequencer(spec *Spec, c *kernel.TRFSequencerConfig) error {
	if spec == nil || c == nil {
		return errors.New("trf: nil spec or configuration")
	}
	t := &spec.TRF
	if !ceContains(t.RegReadSizes.Value, c.RegReadSize) {
		return ruleTRFReadSize.Violate("reg_read_size %d is not one of %v bytes", c.RegReadSize, t.RegReadSizes.Value).
			With("reg_read_size", c.RegReadSize)
	}
	mac := spec.Stream.MACWidthBytes.Value
	if c.Broadcast*c.RegReadSize != mac {
		return ruleTRFReadSize.Violate("broadcast %d × reg_read_size %d is not mac_width %d", c.Broadcast, c.RegReadSize, mac)
	}
	if n := len(c.Entries); n < 1 || n > t.Sequencer.MaxEntries.Value {
		return ruleTRFEntries.Violate("TRF Sequencer has %d entries, want 1-%d", n, t.Sequencer.MaxEntries.Value).With("entries", n)
	}
	for i, e := range c.Entries {
		if e.Size < 1 || e.Size > t.Sequencer.MaxEntrySize.Value {
			return ruleTRFEntries.Violate("entry %d has size %d, want 1-%d", i, e.Size, t.Sequencer.MaxEntrySize.Value).With("size", e.Size)
		}
		if e.Stride > math.MaxInt32 || e.Stride < math.MinInt32 {
			return ruleTRFEntries.Violate("entry %d has stride %d, beyond signed 32-bit", i, e.Stride).With("stride", e.Stride)
		}
	}
	if al := t.FullReadAlignBytes.Value; c.RegReadSize == al {
		if c.Base%al != 0 {
			return ruleTRFAlign.Violate("base %d is not a multiple of %d with reg_read_size = %dB", c.Base, al, c.RegReadSize).With("base", c.Base)
		}
		for i, e := range c.Entries {
			if e.Stride%al != 0 {
				return ruleTRFAlign.Violate("entry %d stride %d is not a multiple of %d with reg_read_size = %dB", i, e.Stride, al, c.RegReadSize).
					With("stride", e.Stride)
			}
		}
	}
	return nil
}

// TRFMemory is the register file of one slice for the simulator: 8 bank rows
// × 128 rows × 2 bank columns × 32 logical bytes (002 L4116-4118). Elements
// are kept as their bytes; the 5-bit slot encoding (002 L4140-4147) is not
// stated bit by bit and is not modelled.
type TRFMemory struct {
	spec *Spec
	buf  []byte
}

// NewTRFMemory returns a zeroed register file.
func NewTRFMemory(spec *Spec) (*TRFMemory, error) {
	if spec == nil {
		return nil, errors.New("trf: nil hardware spec")
	}
	t := &spec.TRF
	n := t.BankRows.Value * t.RowsPerBank.Value * t.BankColumns.Value * t.RowBytes.Value
	return &TRFMemory{spec: spec, buf: make([]byte, n)}, nil
}

func (m *TRFMemory) index(l kernel.TRFLocation) int {
	t := &m.spec.TRF
	return ((l.BankRow*t.RowsPerBank.Value+l.Row)*t.BankColumns.Value+l.Column)*t.RowBytes.Value + l.Byte
}

// At returns the byte at a location.
func (m *TRFMemory) At(l kernel.TRFLocation) byte { return m.buf[m.index(l)] }

// StoreFlit is to_trf's semantics: it writes collect flit t (32 bytes) to
// Row t / FlitsPerRow, Element bytes from (t mod FlitsPerRow)·32
// (002 L4053-4055). It does not allocate.
func (m *TRFMemory) StoreFlit(c *kernel.ToTRFConfig, t int, flit []byte) error {
	if c == nil || c.FlitsPerRow < 1 {
		return errors.New("trf: invalid to_trf configuration")
	}
	fb := m.spec.Stream.FlitBytes.Value
	if len(flit) != fb {
		return fmt.Errorf("trf: flit of %d bytes, want %d", len(flit), fb)
	}
	row, off := t/c.FlitsPerRow, (t%c.FlitsPerRow)*fb
	if t < 0 || row >= c.Rows {
		return fmt.Errorf("trf: flit %d outside the %d flits of the tensor", t, c.Rows*c.FlitsPerRow)
	}
	rb := m.spec.TRF.RowBytes.Value
	for k := 0; k < fb; k += rb {
		l, err := TRFLocate(m.spec, c, row, off+k)
		if err != nil {
			return err
		}
		i := m.index(l)
		copy(m.buf[i:i+rb], flit[k:k+rb])
	}
	return nil
}

// ReadPacket is the TRF Sequencer's semantics: it writes Row row's 64-byte
// weight window of computation time step t into dst: reg_read_size bytes at
// the sequencer address, repeated Broadcast times (002 L4099-4106,
// L4168). It does not allocate.
func (m *TRFMemory) ReadPacket(c *kernel.ToTRFConfig, s *kernel.TRFSequencerConfig, row, t int, dst []byte) error {
	if c == nil || s == nil {
		return errors.New("trf: nil configuration")
	}
	mac := m.spec.Stream.MACWidthBytes.Value
	if len(dst) != mac || s.RegReadSize < 1 || s.RegReadSize*s.Broadcast != mac {
		return fmt.Errorf("trf: window of %d bytes for reg_read_size %d × %d, want %d", len(dst), s.RegReadSize, s.Broadcast, mac)
	}
	if t < 0 || t >= s.Steps() {
		return fmt.Errorf("trf: time step %d outside [0, %d)", t, s.Steps())
	}
	a := s.Addr(t)
	rb := m.spec.TRF.RowBytes.Value
	for k := 0; k < s.RegReadSize; {
		l, err := TRFLocate(m.spec, c, row, a+k)
		if err != nil {
			return err
		}
		n := min(rb-l.Byte, s.RegReadSize-k)
		i := m.index(l)
		copy(dst[k:k+n], m.buf[i:i+n])
		k += n
	}
	for k := s.RegReadSize; k < mac; k += s.RegReadSize {
		copy(dst[k:k+s.RegReadSize], dst[:s.RegReadSize])
	}
	return nil
}

// ruleTRFStated: to_trf has nothing to choose.
var ruleTRFStated = NewRule(Rule{ID: "TRF-R14", Engine: "trf", Name: "to_trf follows from its types",
	Cite: "002 L4052-4061, L4141-4147, L4151-4167",
	Text: "to_trf::<Row, Element>(address) splits the collect stream into Row and Element: its rows, bytes per Row, capacity and reg_types follow from the stream's type, the TRF tensor's mappings and the address mode"})
