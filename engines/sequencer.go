package engines

import (
	"errors"
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The DM sequencer shared by the Fetch, Commit and DMA engines (002
// L1219-1688; 003 is the same page, 003 line n = 002 line n+1218). A
// sequencer converts between a buffer in memory, laid out by a mapping
// expression Buf, and a stream of packets laid out by (Time, Packet): Read
// turns the buffer into the stream, Write does the reverse (002 L1221).
//
// DeriveSequencer is the compiler's derivation (002 L1337-1627): the term walk
// of SEQ-D1 over the factorized stream, matched digit by digit against the
// factorized buffer, then the merging of SEQ-D2 when more than 8 entries
// result. Its failures are Violations of the rules below.

// Sequencer rules (moving.md §2.3 IDs).
var (
	ruleSeqEntries = NewRule(Rule{ID: "SEQ-R1", Engine: "sequencer", Name: "entry limit",
		Cite: "002 L1630, L1568",
		Text: "at most 8 entries; the compiler merges adjacent physically contiguous entries to meet the limit"})
	ruleSeqEntrySize = NewRule(Rule{ID: "SEQ-R2", Engine: "sequencer", Name: "iteration limit",
		Cite: "002 L1631-1632",
		Text: "every entry has size <= 65,536"})
	ruleSeqBasePacket = NewRule(Rule{ID: "SEQ-R3", Engine: "sequencer", Name: "packet size",
		Cite: "002 L1632, L2118",
		Text: "the sequencer's base packet (one memory access, fetch_size) is 1, 2, 4, 8, 16 or 32 bytes"})
	ruleSeqPacketFetch = NewRule(Rule{ID: "SEQ-R4", Engine: "sequencer", Name: "packet fetch",
		Cite: "002 L1633-1637",
		Text: "the innermost entry n : s is contiguous ((s == 0 || s == 1) && n % packet_size == 0) or the access is discrete (packet_size == 1); n is read as the contiguous run and packet_size as the base packet (docs/spec-decisions.md)"})
	ruleSeqInsufficient = NewRule(Rule{ID: "SEQ-R5", Engine: "sequencer", Name: "insufficient input",
		Cite: "002 L1639-1659",
		Text: "the stream may not iterate over indices of an axis that the buffer does not hold"})
	ruleSeqIncompatible = NewRule(Rule{ID: "SEQ-R6", Engine: "sequencer", Name: "incompatible shapes",
		Cite: "002 L1660-1683",
		Text: "buffer and stream must decompose each shared axis into factors with a common refinement"})
	ruleSeqWriteBroadcast = NewRule(Rule{ID: "SEQ-R10", Engine: "sequencer", Name: "no broadcast write",
		Cite: "002 L7775",
		Text: "write sequencer configurations require non-zero stride for all entries: no broadcast during a write"})
	ruleSeqWriteOnce = NewRule(Rule{ID: "SEQ-R11", Engine: "sequencer", Name: "write coverage",
		Cite: "002 L7775, L1406",
		Text: "a write sequencer writes every live cell of the buffer exactly once: no selective writes beyond slicing, no cell written twice"})
	ruleSeqWriteBounds = NewRule(Rule{ID: "SEQ-R12", Engine: "sequencer", Name: "write within tensor",
		Cite: "002 L7896",
		Text: "a write sequencer must never write beyond the tensor boundary; padded stream positions may only land on the buffer's padding"})
)

// SeqMode is the direction of a sequencer (002 L1221).
type SeqMode uint8

// Sequencer directions.
const (
	// SeqRead turns a buffer into a stream (fetch, the DMA's read side).
	// A buffer cell may be read many times or not at all; padded stream
	// positions read whatever memory holds (002 L1841, L7896).
	SeqRead SeqMode = iota + 1
	// SeqWrite turns a stream into a buffer (commit, the DMA's write side):
	// every live buffer cell is written exactly once, with no broadcast
	// (002 L7775, L7896).
	SeqWrite
)

// String names the mode.
func (m SeqMode) String() string {
	switch m {
	case SeqRead:
		return "read"
	case SeqWrite:
		return "write"
	}
	return fmt.Sprintf("SeqMode(%d)", uint8(m))
}

// SeqExtraDim is an address dimension outside the buffer mapping: a stream
// axis that selects between buffers placed Stride elements apart. Fetch uses
// it for the interleave axis of begin_interleaved (002 L1843-1850), whose
// value 0 reads lhs and 1 reads rhs.
type SeqExtraDim struct {
	Axis   string // the stream axis, e.g. I
	Size   int    // its size (2 for interleaving)
	Stride int    // address distance in elements between consecutive values
}

// SeqRequest is the input of DeriveSequencer.
type SeqRequest struct {
	// Buf is the memory layout (the DM Element mapping for fetch and commit).
	Buf *mapping.Expr
	// Time and Packet are the stream's mappings; the stream is the pair
	// m![Time, Packet] (002 L1451).
	Time, Packet *mapping.Expr
	// Mode is SeqRead or SeqWrite.
	Mode SeqMode
	// Extra holds address dimensions outside Buf (interleaving).
	Extra []SeqExtraDim
}

// SeqDerivation is the result of DeriveSequencer.
type SeqDerivation struct {
	// Config is the final configuration, after merging.
	Config kernel.SeqConfig `json:"config"`
	// Initial lists the entries before merging, one or more per stream term
	// (002 L1589-1598, the manual's "initial entries").
	Initial []kernel.SeqEntry `json:"initial"`
	// Merged reports whether merging ran (more than the entry limit, 002
	// L1568).
	Merged bool `json:"merged"`

	// src describes each final entry's stream digit (for fetch masking);
	// zeroPad reports Zero padding in the stream.
	src     []seqEntry
	zeroPad bool
}

// DeriveSequencer derives a sequencer configuration from a buffer mapping and
// a stream (Time, Packet), as the compiler does (002 L1337-1627):
//
//  1. The stream m![Time, Packet] is walked term by term, outermost first
//     (002 L1451-1453): each top-level part of Time and of Packet is
//     factorized on its own, so `C / 2, C % 2` stays two entries as in
//     002 L1590-1591.
//  2. Each factor becomes entries: an axis term gets size = its extent and
//     stride = its position's volume inside Buf (002 L1452), splitting into
//     several entries when Buf splits the axis finer; an axis Buf does not
//     hold gets stride 0 (broadcast, 002 L1557); a sliced term (`A % 4 = 3`)
//     keeps the stride of the full digit (002 L1523-1528); a padded term
//     (`C # 16`) reads its padded extent contiguously (002 L1458), or
//     repeats its block when the padded size is a multiple of it.
//  3. When more than 8 entries result, every adjacent pair with s1 == n2·s2
//     merges into (n1·n2 : s2), across the time/packet boundary too (002
//     L1567-1627; docs/spec-decisions.md "Sequencer merging across the
//     packet boundary").
//  4. The limits SEQ-R1 and SEQ-R2 are checked; fetch and commit check the
//     base packet (SEQ-R3, SEQ-R4) once they know the element type.
//
// Failures are *Violation: insufficient input (SEQ-R5), incompatible shapes
// (SEQ-R6), and in Write mode broadcast (SEQ-R10), cells written zero or
// several times (SEQ-R11), padding written outside the buffer's padding
// (SEQ-R12). Invalid arguments are plain errors.
func DeriveSequencer(spec *Spec, req SeqRequest) (*SeqDerivation, error) {
	if spec == nil {
		return nil, errors.New("sequencer: no hardware spec")
	}
	if req.Mode != SeqRead && req.Mode != SeqWrite {
		return nil, fmt.Errorf("sequencer: invalid mode %d", req.Mode)
	}
	for _, x := range []struct {
		name string
		e    *mapping.Expr
	}{{"buffer", req.Buf}, {"time", req.Time}, {"packet", req.Packet}} {
		if x.e == nil {
			return nil, fmt.Errorf("sequencer: no %s mapping", x.name)
		}
		if err := x.e.Err(); err != nil {
			return nil, fmt.Errorf("sequencer: invalid %s mapping: %w", x.name, err)
		}
	}
	d := &seqDeriver{mode: req.Mode, bufExpr: req.Buf}
	if err := d.loadBuf(req.Buf, req.Extra); err != nil {
		return nil, err
	}
	for _, half := range []struct {
		e      *mapping.Expr
		packet bool
	}{{req.Time, false}, {req.Packet, true}} {
		for _, part := range half.e.Parts() {
			if err := d.walkPart(part, half.packet); err != nil {
				return nil, err
			}
		}
	}
	if err := d.checkCoverage(); err != nil {
		return nil, err
	}
	if req.Mode == SeqWrite {
		if err := d.checkWrite(req.Buf); err != nil {
			return nil, err
		}
		if d.padded {
			if err := d.checkPadWrites(req.Buf, mapping.Pair(req.Time, req.Packet)); err != nil {
				return nil, err
			}
		}
	}
	out := &SeqDerivation{Initial: make([]kernel.SeqEntry, len(d.entries))}
	for i, e := range d.entries {
		out.Initial[i] = e.SeqEntry
	}
	max := spec.Sequencer.MaxEntries.Value
	entries := d.entries
	if len(entries) > max {
		entries = mergeEntries(entries)
		out.Merged = true
	}
	if len(entries) > max {
		return nil, ruleSeqEntries.Violate("needs %d entries after merging, limit %d", len(entries), max).
			With("entries", len(entries)).With("limit", max)
	}
	cfg := kernel.SeqConfig{Entries: make([]kernel.SeqEntry, len(entries)), PacketSize: 1}
	for i, e := range entries {
		if e.Size > spec.Sequencer.MaxEntrySize.Value {
			return nil, ruleSeqEntrySize.Violate("entry %d (%s) has size %d, limit %d", i, e.Term, e.Size, spec.Sequencer.MaxEntrySize.Value).
				With("entry", i).With("size", e.Size).With("limit", spec.Sequencer.MaxEntrySize.Value)
		}
		cfg.Entries[i] = e.SeqEntry
		if e.packet {
			cfg.PacketEntries++
			cfg.PacketSize *= e.Size
		}
	}
	out.Config = cfg
	out.src = entries
	out.zeroPad = d.zeroPad
	return out, nil
}

// seqEntry is an entry under construction.
type seqEntry struct {
	kernel.SeqEntry
	packet bool          // iterates inside the packet
	expr   *mapping.Expr // the stream term, for labels of merged entries
	// axis, step and axisSize describe the stream digit the entry iterates
	// when it is one digit of one axis (coordinate step per iteration);
	// axis is "" otherwise.
	axis           string
	step, axisSize int
	// padData is, for a padded term read as one run, the number of data
	// positions before the padding (0 otherwise).
	padData int
}

// bufTerm is one axis digit of the buffer: coordinates v·t for v < r at
// addresses v·m.
type bufTerm struct {
	axis    string
	t, r, m int
	// slot is how many digit values fit in memory before the next outer
	// digit's stride (r, or more when padding follows); 0 when unbounded
	// (the outermost digit). end reports that the digit reaches the end of
	// its axis (t·r ≥ axis size): stream coordinates past r then lie past
	// the axis and are padding of the stream itself, so the read may run
	// into the slot (002 L1841, L7896).
	slot    int
	end     bool
	load    int      // Σ (n-1)·q of the stream pieces placed in it (no carry while ≤ r-1)
	pieces  [][2]int // Write mode: (q, n) of each piece, to check the tiling
	isExtra bool     // an extra dimension (interleave), not part of Buf
}

type seqDeriver struct {
	mode    SeqMode
	bufExpr *mapping.Expr
	buf     []bufTerm // sorted by axis, then coordinate stride
	bcast   int       // extent product of the buffer's broadcast digits
	entries []seqEntry
	padded  bool // a stream term is padded (Write mode checks where its padding lands)
	zeroPad bool // a stream term has Zero padding (fetch must mask it)
}

// loadBuf factorizes the buffer and records each axis digit with its memory
// stride: the volume of everything inner to it, padding included (002 L1452).
func (d *seqDeriver) loadBuf(buf *mapping.Expr, extra []SeqExtraDim) error {
	fs, err := mapping.FactorizeShared(buf)
	if err != nil {
		return ruleSeqIncompatible.Violate("buffer mapping %s has no factorized form: %v", buf.String(), err)
	}
	cum := 1
	d.bcast = 1
	last := -1 // the buffer term whose slot is still open
	for _, f := range fs {
		switch f.Kind {
		case mapping.FactorTerm, mapping.FactorBroadcast:
			if last >= 0 {
				d.buf[last].slot = cum / d.buf[last].m
				last = -1
			}
			if f.Kind == mapping.FactorTerm {
				d.buf = append(d.buf, bufTerm{axis: f.Axis, t: f.Stride, r: f.Extent, m: cum, end: f.Stride*f.Extent >= f.AxisSize})
				last = len(d.buf) - 1
			} else {
				d.bcast *= f.Extent
			}
			cum *= f.Extent
		case mapping.FactorPad:
			cum = f.Extent
		}
	}
	for _, x := range extra {
		if x.Size < 1 || x.Axis == "" {
			return fmt.Errorf("sequencer: invalid extra dimension %q of size %d", x.Axis, x.Size)
		}
		for _, b := range d.buf {
			if b.axis == x.Axis {
				return fmt.Errorf("sequencer: extra dimension %s is also an axis of the buffer", x.Axis)
			}
		}
		if x.Size > 1 {
			d.buf = append(d.buf, bufTerm{axis: x.Axis, t: 1, r: x.Size, m: x.Stride, isExtra: true})
		}
	}
	// Insertion sort by (axis, step): a handful of digits, no allocation.
	for i := 1; i < len(d.buf); i++ {
		for j := i; j > 0 && bufLess(&d.buf[j], &d.buf[j-1]); j-- {
			d.buf[j], d.buf[j-1] = d.buf[j-1], d.buf[j]
		}
	}
	// A buffer that holds one coordinate at several places (overlapping
	// digits of one axis) has no single address per element.
	for i := 1; i < len(d.buf); i++ {
		a, b := d.buf[i-1], d.buf[i]
		if a.axis == b.axis && b.t < a.t*a.r {
			return ruleSeqIncompatible.Violate("buffer %s holds axis %s in overlapping digits", buf.String(), a.axis)
		}
	}
	return nil
}

func bufLess(a, b *bufTerm) bool {
	if a.axis != b.axis {
		return a.axis < b.axis
	}
	return a.t < b.t
}

// find returns the buffer digit of axis that holds coordinate step t
// (b.t ≤ t < b.t·b.r), or -1.
func (d *seqDeriver) find(axis string, t int) int {
	for k := range d.buf {
		b := &d.buf[k]
		if b.axis == axis && b.t <= t && t < b.t*b.r {
			return k
		}
	}
	return -1
}

func (d *seqDeriver) hasAxis(axis string) bool {
	for k := range d.buf {
		if d.buf[k].axis == axis {
			return true
		}
	}
	return false
}

// walkPart turns one top-level stream term into entries and appends them
// (outermost first).
func (d *seqDeriver) walkPart(part *mapping.Expr, packet bool) error {
	fs, err := mapping.FactorizeShared(part)
	if err != nil {
		return ruleSeqIncompatible.Violate("stream term %s has no factorized form: %v", part.String(), err)
	}
	label := part.String()
	var inner []seqEntry // this part's entries, innermost first
	ext := 1             // cumulative extent of the factors walked so far
	for _, f := range fs {
		switch f.Kind {
		case mapping.FactorBroadcast:
			inner = append(inner, seqEntry{SeqEntry: kernel.SeqEntry{Size: f.Extent, Stride: 0, Term: label}, packet: packet, expr: part})
			ext *= f.Extent
		case mapping.FactorTerm:
			if !d.hasAxis(f.Axis) {
				// A buffer that names the axis in a term of extent 1
				// (A = 1, A / 9 of A = 9) holds one coordinate of it: a
				// stream walking more of them reads what it does not hold.
				if d.bufExpr.Uses(f.Axis) {
					return ruleSeqInsufficient.Violate("stream term %s iterates over %d coordinates of %s, of which the buffer %s holds one",
						label, f.Extent, f.Axis, d.bufExpr.String()).With("coordinate", f.Stride)
				}
				// Axes not present in Buf get stride 0 (002 L1557).
				inner = append(inner, seqEntry{SeqEntry: kernel.SeqEntry{Size: f.Extent, Stride: 0, Term: label}, packet: packet, expr: part})
				ext *= f.Extent
				continue
			}
			pcs, err := d.place(f.Axis, f.Stride, f.Extent, label)
			if err != nil {
				return err
			}
			for _, p := range pcs {
				inner = append(inner, seqEntry{SeqEntry: kernel.SeqEntry{Size: p.n, Stride: p.stride, Term: label}, packet: packet, expr: part,
					axis: f.Axis, step: p.ct, axisSize: f.AxisSize})
			}
			ext *= f.Extent
		case mapping.FactorPad:
			d.padded = true
			d.zeroPad = d.zeroPad || f.Pad == mapping.Zero
			// A padded term reads its padded extent: one contiguous run
			// overfetching past the data (002 L1458, L1841), or the block
			// repeated when the padded size is a multiple of it.
			if run, ok := collapse(inner); ok {
				pe := seqEntry{SeqEntry: kernel.SeqEntry{Size: f.Extent, Stride: run.Stride, Term: label}, packet: packet, expr: part, padData: ext}
				if len(inner) > 0 && inner[0].axis != "" {
					pe.axis, pe.step, pe.axisSize = inner[0].axis, inner[0].step, inner[0].axisSize
					for _, e := range inner[1:] {
						if e.axis != pe.axis {
							pe.axis = ""
						}
					}
				}
				inner = []seqEntry{pe}
			} else if f.Extent%ext == 0 {
				inner = append(inner, seqEntry{SeqEntry: kernel.SeqEntry{Size: f.Extent / ext, Stride: 0, Term: label}, packet: packet, expr: part})
			} else {
				return ruleSeqIncompatible.Violate("padded stream term %s: its %d data elements are not one contiguous run and %d is not a multiple of %d",
					label, ext, f.Extent, ext).With("extent", ext).With("padded", f.Extent)
			}
			ext = f.Extent
		}
	}
	for i := len(inner) - 1; i >= 0; i-- {
		if inner[i].Size > 1 {
			d.entries = append(d.entries, inner[i])
		}
	}
	return nil
}

// collapse merges a part's entries (innermost first) into one run (n : s) if
// every outer entry is physically contiguous with the run below it. An empty
// list is the run (1 : 1).
func collapse(inner []seqEntry) (kernel.SeqEntry, bool) {
	run := kernel.SeqEntry{Size: 1, Stride: 1}
	for i, e := range inner {
		if i == 0 {
			run = e.SeqEntry
			continue
		}
		if e.Size == 1 {
			continue
		}
		if run.Size == 1 {
			run = e.SeqEntry
			continue
		}
		if !kernel.Mergeable(e.SeqEntry, run) {
			return run, false
		}
		run.Size *= e.Size
	}
	return run, true
}

// piece is a stream digit placed inside one buffer digit: n values, each
// stepping the buffer digit by q, i.e. the address by stride = q·m.
type piece struct {
	k, q, n, stride int
	ct              int // the coordinate step of the piece
}

// place splits the stream digit (axis, t, r) over the buffer's digits of the
// axis, innermost first (the common refinement of 002 L1682-1683).
func (d *seqDeriver) place(axis string, t, r int, label string) ([]piece, error) {
	var out []piece
	ct, cr := t, r
	for cr > 1 {
		k := d.find(axis, ct)
		if k < 0 {
			return nil, ruleSeqInsufficient.Violate("stream term %s iterates over %s coordinates from %d on, which the buffer does not hold", label, axis, ct).
				With("coordinate", ct)
		}
		b := &d.buf[k]
		if ct%b.t != 0 {
			return nil, ruleSeqIncompatible.Violate("stream term %s steps %s by %d, which does not refine the buffer's digit of step %d and size %d", label, axis, ct, b.t, b.r).
				With("step", ct).With("buffer_step", b.t)
		}
		q := ct / b.t
		// The largest step (cr-1)·q, compared without overflow: it fits
		// below x iff cr-1 ≤ (x-1)/q.
		if cr-1 <= (b.r-1)/q || (d.mode == SeqRead && b.end && (b.slot == 0 || cr-1 <= (b.slot-1)/q)) {
			if cr-1 > mapping.MaxSize/q {
				return nil, ruleSeqInsufficient.Violate("stream term %s reads %s far past the buffer", label, axis)
			}
			out = append(out, piece{k, q, cr, q * b.m, ct})
			b.load += (cr - 1) * q
			break
		}
		next := b.t * b.r
		if d.find(axis, next) < 0 {
			return nil, ruleSeqInsufficient.Violate("stream term %s iterates over %s coordinates up to %d, which the buffer does not hold (it holds steps below %d)", label, axis, t*(r-1), next).
				With("coordinate", t*(r-1))
		}
		if b.r%q != 0 || cr%(b.r/q) != 0 {
			return nil, ruleSeqIncompatible.Violate("stream term %s (%s digit of step %d, size %d) and the buffer's %s digit (step %d, size %d) have no common refinement", label, axis, ct, cr, axis, b.t, b.r).
				With("step", ct).With("size", cr).With("buffer_step", b.t).With("buffer_size", b.r)
		}
		n := b.r / q
		out = append(out, piece{k, q, n, q * b.m, ct})
		b.load += (n - 1) * q
		ct, cr = next, cr/n
	}
	if d.mode == SeqWrite {
		for _, p := range out {
			d.buf[p.k].pieces = append(d.buf[p.k].pieces, [2]int{p.q, p.n})
		}
	}
	return out, nil
}

// checkCoverage verifies that the stream digits placed in each buffer digit
// never carry into the next one: their largest summed step stays below the
// digit's size, so the address is linear in the stream position.
func (d *seqDeriver) checkCoverage() error {
	for _, b := range d.buf {
		if d.mode == SeqRead && b.end && b.load > b.r-1 && (b.slot == 0 || b.load < b.slot) {
			// The read runs past the axis into the buffer's padding (or
			// past the buffer): stream positions there are padding too.
			continue
		}
		if b.load > b.r-1 {
			return ruleSeqIncompatible.Violate("stream digits of axis %s overflow the buffer's digit of step %d and size %d (largest summed step %d)", b.axis, b.t, b.r, b.load).
				With("buffer_step", b.t).With("buffer_size", b.r)
		}
	}
	return nil
}

// checkWrite enforces the Write-mode rules: no broadcast entry (SEQ-R10),
// every buffer digit tiled exactly once by stream digits (SEQ-R11), and
// padded stream positions landing on the buffer's padding (SEQ-R12).
func (d *seqDeriver) checkWrite(buf *mapping.Expr) error {
	for _, e := range d.entries {
		if e.Stride == 0 {
			return ruleSeqWriteBroadcast.Violate("entry %s (%d:0) has stride 0: a write cannot broadcast", e.Term, e.Size).With("size", e.Size)
		}
	}
	if d.bcast > 1 {
		return ruleSeqWriteOnce.Violate("buffer %s repeats its data %d times; a write fills one copy only", buf.String(), d.bcast).With("copies", d.bcast)
	}
	for i := range d.buf {
		b := &d.buf[i]
		ps := b.pieces
		for x := 1; x < len(ps); x++ {
			for y := x; y > 0 && ps[y][0] < ps[y-1][0]; y-- {
				ps[y], ps[y-1] = ps[y-1], ps[y]
			}
		}
		want := 1
		for _, p := range ps {
			if p[0] != want {
				return ruleSeqWriteOnce.Violate("buffer digit of %s (step %d, size %d) is not written exactly once by the stream", b.axis, b.t, b.r).
					With("buffer_step", b.t).With("buffer_size", b.r)
			}
			want *= p[1]
		}
		if want != b.r {
			return ruleSeqWriteOnce.Violate("buffer digit of %s (step %d, size %d) is not written exactly once by the stream (%d of %d values)", b.axis, b.t, b.r, want, b.r).
				With("buffer_step", b.t).With("buffer_size", b.r)
		}
	}
	return nil
}

// mergeEntries merges every adjacent physically contiguous pair (002
// L1569-1570), innermost first; a merged entry iterates inside the packet
// when either part does (002 L1619).
func mergeEntries(es []seqEntry) []seqEntry {
	out := make([]seqEntry, 0, len(es))
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		if n := len(out); n > 0 && kernel.Mergeable(e.SeqEntry, out[n-1].SeqEntry) {
			run := &out[n-1]
			if run.axis != e.axis || e.step != run.step*run.Size || run.padData != 0 || e.padData != 0 {
				run.axis = ""
			}
			run.Size *= e.Size
			run.packet = run.packet || e.packet
			if e.expr != nil && run.expr != nil {
				run.expr = mapping.Pair(e.expr, run.expr)
				run.Term = mapping.Normalize(run.expr).String()
			}
			continue
		}
		out = append(out, e)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// maxPadWriteCheck bounds the stream checkPadWrites enumerates: 2^22
// positions, eight times the elements of one slice's 512 KB DM (002 L138) even
// for 4-bit types, so every commit fits.
const maxPadWriteCheck = 1 << 22

// checkPadWrites walks the stream (Write mode, padded stream terms) and checks
// that every padded stream position writes a padding cell of the buffer,
// never a live cell or an address outside it (002 L7896).
func (d *seqDeriver) checkPadWrites(buf, stream *mapping.Expr) error {
	cfg := kernel.SeqConfig{Entries: make([]kernel.SeqEntry, len(d.entries))}
	for i, e := range d.entries {
		cfg.Entries[i] = e.SeqEntry
	}
	if n := stream.Size(); n > maxPadWriteCheck {
		return fmt.Errorf("sequencer: cannot check the padded writes of a %d-position stream (limit %d)", n, maxPadWriteCheck)
	}
	it, err := cfg.Iter()
	if err != nil {
		return err
	}
	// The walk visits every stream position: classify cells with compiled
	// programs (no allocation per position) where the mappings compile, and
	// with Map otherwise.
	kinds := cellKinds(stream, buf)
	streamKind, bufKind := kinds[0], kinds[1]
	size := buf.Size()
	for it.Next() {
		if streamKind(it.Pos()) == mapping.Live {
			continue
		}
		a := it.Addr()
		if a < 0 || a >= size {
			return ruleSeqWriteBounds.Violate("padded stream position %d writes address %d, outside the buffer of %d elements", it.Pos(), a, size).
				With("position", it.Pos()).With("address", a)
		}
		if bufKind(a) == mapping.Live {
			return ruleSeqWriteBounds.Violate("padded stream position %d overwrites the live cell %s at address %d", it.Pos(), buf.Map(a).Index, a).
				With("position", it.Pos()).With("address", a)
		}
	}
	return nil
}

// cellKinds returns, for each expression, a function classifying its
// positions (live, padding, out of bounds) as Map does: compiled programs
// over the axes the expressions name when they compile, else Map.
func cellKinds(es ...*mapping.Expr) (fs [2]func(int) mapping.CellKind) {
	axes, err := mapping.AxesOf(es...)
	for i, e := range es[:2] {
		e := e
		fs[i] = func(p int) mapping.CellKind { return e.Map(p).Kind }
		if err != nil {
			continue
		}
		prog, cerr := mapping.Compile(e, axes)
		if cerr != nil {
			continue
		}
		dst := make([]int, prog.Slots())
		fs[i] = func(p int) mapping.CellKind {
			k, _ := prog.Eval(p, dst)
			return k
		}
	}
	return fs
}

// CheckSeqConfig checks a sequencer configuration, derived or hand-written,
// against the limits every sequencer shares: at most MaxEntries entries
// (SEQ-R1), every size in [1, MaxEntrySize] (SEQ-R2), a packet made of whole
// innermost entries, and in Write mode no stride 0 (SEQ-R10).
func CheckSeqConfig(spec *Spec, cfg kernel.SeqConfig, mode SeqMode) error {
	if spec == nil {
		return errors.New("sequencer: no hardware spec")
	}
	if max := spec.Sequencer.MaxEntries.Value; len(cfg.Entries) > max {
		return ruleSeqEntries.Violate("needs %d entries, limit %d", len(cfg.Entries), max).
			With("entries", len(cfg.Entries)).With("limit", max)
	}
	for i, e := range cfg.Entries {
		if e.Size < 1 || e.Size > spec.Sequencer.MaxEntrySize.Value {
			return ruleSeqEntrySize.Violate("entry %d has size %d, allowed 1 to %d", i, e.Size, spec.Sequencer.MaxEntrySize.Value).
				With("entry", i).With("size", e.Size)
		}
		if mode == SeqWrite && e.Stride == 0 {
			return ruleSeqWriteBroadcast.Violate("entry %d (%d:0) has stride 0: a write cannot broadcast", i, e.Size).With("entry", i)
		}
	}
	if cfg.PacketEntries < 0 || cfg.PacketEntries > len(cfg.Entries) {
		return fmt.Errorf("sequencer: %d packet entries in a configuration of %d entries", cfg.PacketEntries, len(cfg.Entries))
	}
	p := 1
	for _, e := range cfg.Entries[len(cfg.Entries)-cfg.PacketEntries:] {
		p *= e.Size
	}
	if p != cfg.PacketSize {
		return fmt.Errorf("sequencer: packet size %d is not the product %d of the %d innermost entries", cfg.PacketSize, p, cfg.PacketEntries)
	}
	return nil
}

// CheckSeqPacketFetch checks SEQ-R4 (002 L1633-1637) for a configuration
// whose memory accesses (base packets) are basePacket elements: the
// innermost entry must be contiguous (stride 0 or 1) with basePacket dividing
// the contiguous run, or the access must be discrete (basePacket == 1). The
// run stands for the rule's n (docs/spec-decisions.md "SEQ-R4 (packet fetch)
// against the examples").
func CheckSeqPacketFetch(cfg kernel.SeqConfig, basePacket int) error {
	if basePacket < 1 {
		return fmt.Errorf("sequencer: base packet of %d elements", basePacket)
	}
	if basePacket == 1 || len(cfg.Entries) == 0 {
		return nil
	}
	in := cfg.Entries[len(cfg.Entries)-1]
	run := cfg.ContiguousRun()
	if (in.Stride == 0 || in.Stride == 1) && run%basePacket == 0 {
		return nil
	}
	return ruleSeqPacketFetch.Violate("innermost entry %d:%d with a contiguous run of %d elements cannot deliver accesses of %d elements", in.Size, in.Stride, run, basePacket).
		With("size", in.Size).With("stride", in.Stride).With("run", run).With("access", basePacket)
}

// contiguousRun is the physically contiguous run of a configuration in
// elements (002 L1762), with a strided innermost entry counting as a run of
// one element: its elements are not adjacent in memory.
func contiguousRun(cfg kernel.SeqConfig) int {
	if n := len(cfg.Entries); n > 0 && cfg.Entries[n-1].Stride != 0 && cfg.Entries[n-1].Stride != 1 {
		return 1
	}
	return cfg.ContiguousRun()
}
