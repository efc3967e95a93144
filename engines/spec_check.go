package engines

import (
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The spec's checks: each field against the manual and the ties between fields.

// seedLines is the line count of each seed file, for checking citations.
var seedLines = map[string]int{"000": 260, "001": 88, "002": 8720, "003": 469, "004": 154}

var citeRE = regexp.MustCompile(`^(00[0-4]) (L\d+(?:-\d+)?(?:, L\d+(?:-\d+)?)*)$`)

// checkCite validates a citation such as "002 L1757-1758, L2018".
func checkCite(cite string) string {
	m := citeRE.FindStringSubmatch(cite)
	if m == nil {
		return fmt.Sprintf("citation %q is not of the form \"002 L1234[-1240][, L1300]\"", cite)
	}
	limit := seedLines[m[1]]
	for _, part := range strings.Split(m[2], ", ") {
		lo, hi, isRange := strings.Cut(strings.TrimPrefix(part, "L"), "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if isRange {
			b, _ = strconv.Atoi(hi)
		}
		if a < 1 || b > limit || b < a {
			return fmt.Sprintf("citation %q: line range %s outside seed %s (1-%d) or reversed", cite, part, m[1], limit)
		}
	}
	return ""
}

// at returns the path and line of a Value.
func (p *parser) at(field cited) fieldPos { return p.pos[field] }

// fail reports a problem with a Value.
func (p *parser) fail(field cited, format string, args ...any) {
	fp := p.at(field)
	p.add(fp.line, fp.path+".value", format, args...)
}

// eq reports field ≠ want, explaining want.
func (p *parser) eq(field *Int, want int, why string, args ...any) {
	if field.Value != want {
		p.fail(field, "%d, want %s = %d", field.Value, fmt.Sprintf(why, args...), want)
	}
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

func log2(n int) int { return bits.Len(uint(n)) - 1 }

func (p *parser) pow2(fields ...*Int) {
	for _, f := range fields {
		if !isPow2(f.Value) {
			p.fail(f, "%d is not a power of two", f.Value)
		}
	}
}

func (p *parser) pow2List(f *Ints) {
	for _, x := range f.Value {
		if !isPow2(x) {
			p.fail(f, "%d is not a power of two", x)
			return
		}
	}
}

// increasing checks that a list is non-empty and strictly increasing.
func (p *parser) increasing(f *Ints) bool {
	if len(f.Value) == 0 {
		p.fail(f, "empty list")
		return false
	}
	for i := 1; i < len(f.Value); i++ {
		if f.Value[i] <= f.Value[i-1] {
			p.fail(f, "list must be strictly increasing, got %v", f.Value)
			return false
		}
	}
	return true
}

func last(l []int) int {
	if len(l) == 0 {
		return 0
	}
	return l[len(l)-1]
}

// check runs every per-value and cross-value check.
func (p *parser) check(s *Spec) {
	// Generic: citations, notes on assumptions, positive numbers.
	zeroOK := map[any]bool{&s.Collect.PadValue: true}
	var entries []cited
	for c := range p.pos {
		entries = append(entries, c)
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := p.pos[entries[i]], p.pos[entries[j]]
		return a.line < b.line || (a.line == b.line && a.path < b.path)
	})
	for _, c := range entries {
		fp := p.pos[c]
		cite, _, assumption, note := c.citation()
		if msg := checkCite(cite); msg != "" {
			p.add(fp.line, fp.path+".cite", "%s", msg)
		}
		if assumption && strings.TrimSpace(note) == "" {
			p.add(fp.line, fp.path+".note", "an assumption needs a note saying why")
		}
		switch x := c.raw().(type) {
		case int:
			if x < 0 || (x == 0 && !zeroOK[c]) {
				p.add(fp.line, fp.path+".value", "%d must be positive", x)
			}
		case int64:
			if x <= 0 {
				p.add(fp.line, fp.path+".value", "%d must be positive", x)
			}
		case float64:
			if !(x > 0) || math.IsInf(x, 0) {
				p.add(fp.line, fp.path+".value", "%v must be positive and finite", x)
			}
		case []int:
			if len(x) == 0 {
				p.add(fp.line, fp.path+".value", "empty list")
			}
			for _, y := range x {
				if y < 0 {
					p.add(fp.line, fp.path+".value", "%d must not be negative", y)
					break
				}
			}
		case []string:
			if len(x) == 0 {
				p.add(fp.line, fp.path+".value", "empty list")
			}
		case string:
			if x == "" {
				p.add(fp.line, fp.path+".value", "empty name")
			}
		}
	}
	if len(p.errs) > 0 {
		return // the cross checks below assume sane numbers
	}
	p.checkCounts(s)
	p.checkStream(s)
	p.checkTRF(s)
	p.checkReducer(s)
	p.checkVector(s)
	p.checkDM(s)
	p.checkHBM(s)
	p.checkDMA(s)
}

func (p *parser) checkCounts(s *Spec) {
	c := &s.Cluster
	p.pow2(&c.Slices, &c.DMNs, &c.SlicesPerDMN, &c.SlicesPerPE, &s.Chip.Clusters, &s.Slice.Rows)
	p.eq(&c.Slices, c.DMNs.Value*c.SlicesPerDMN.Value, "dmns × slices_per_dmn (%d × %d)", c.DMNs.Value, c.SlicesPerDMN.Value)
	if c.Slices.Value%c.SlicesPerPE.Value != 0 {
		p.fail(&c.SlicesPerPE, "%d does not divide cluster.slices %d", c.SlicesPerPE.Value, c.Slices.Value)
	}
	p.eq(&s.Chip.SRAMBytes, s.Chip.Clusters.Value*c.Slices.Value*s.DM.BytesPerSlice.Value,
		"clusters × slices × dm.bytes_per_slice (%d × %d × %d)", s.Chip.Clusters.Value, c.Slices.Value, s.DM.BytesPerSlice.Value)
	p.eq(&s.Commit.SliceBitmapBits, c.Slices.Value, "cluster.slices")
	sw := &s.Switch
	p.eq(&sw.RingSlices, c.Slices.Value, "cluster.slices")
	p.eq(&sw.RouterEntries, sw.RingSlices.Value, "ring_slices")
	p.eq(&sw.MaxRingSize, sw.RingSlices.Value, "ring_slices")
	p.eq(&sw.SlicesInOut, c.Slices.Value, "cluster.slices")
	p.pow2(&sw.MaxRingSize)
	p.eq(&s.Vector.InterSliceSlices, c.Slices.Value, "cluster.slices")
}

func (p *parser) checkStream(s *Spec) {
	flit := s.Stream.FlitBytes.Value
	p.pow2(&s.Stream.FlitBytes, &s.Stream.MACWidthBytes)
	p.eq(&s.Stream.DualChannelFlitBytes, s.Switch.Contexts.Value*s.Switch.ChannelBytes.Value, "switch.contexts × switch.channel_bytes")
	p.eq(&s.Switch.ChannelBytes, flit, "stream.flit_bytes")
	p.eq(&s.Collect.OutputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Cast.InputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Cast.OutputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Commit.InputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Transpose.BusBytes, flit, "stream.flit_bytes")
	p.eq(&s.Fetch.MaxCastOutputBytes, flit, "stream.flit_bytes")

	// Sequencer and fetch sizes.
	sq := &s.Sequencer
	if p.increasing(&sq.PacketBytes) {
		p.pow2List(&sq.PacketBytes)
		if last(sq.PacketBytes.Value) != flit {
			p.fail(&sq.PacketBytes, "largest base packet %d, want stream.flit_bytes = %d", last(sq.PacketBytes.Value), flit)
		}
	}
	p.pow2(&sq.MaxEntrySize, &s.Fetch.PacketAlignBytes)
	f := &s.Fetch
	if p.increasing(&f.MainFetchSizes) {
		for _, x := range f.MainFetchSizes.Value {
			if !slices.Contains(sq.PacketBytes.Value, x) {
				p.fail(&f.MainFetchSizes, "fetch size %d is not a sequencer base packet size %v", x, sq.PacketBytes.Value)
			}
		}
	}
	for _, v := range []*Int{&f.SubFetchSize, &f.SubFetchSizeI4ToI32} {
		if !slices.Contains(sq.PacketBytes.Value, v.Value) {
			p.fail(v, "fetch size %d is not a sequencer base packet size %v", v.Value, sq.PacketBytes.Value)
		}
	}
	if len(f.CastLatencyCycles.Value) != 2 || f.CastLatencyCycles.Value[0] > f.CastLatencyCycles.Value[1] {
		p.fail(&f.CastLatencyCycles, "want [min, max], got %v", f.CastLatencyCycles.Value)
	}
	p.eq(&f.PeakDMBytesPerCycle, s.DM.InterleavedBytesPerCycle.Value, "dm.interleaved_bytes_per_cycle")

	// Commit sizes: multiples of the commit stride unit, at most one flit.
	cm := &s.Commit
	for _, l := range []*Ints{&cm.CommitInSizes, &cm.MainCommitSizes} {
		if !p.increasing(l) {
			continue
		}
		for _, x := range l.Value {
			if x%cm.StrideMultipleBytes.Value != 0 {
				p.fail(l, "%d is not a multiple of commit.stride_multiple_bytes %d", x, cm.StrideMultipleBytes.Value)
				break
			}
		}
		if last(l.Value) != flit {
			p.fail(l, "largest size %d, want stream.flit_bytes = %d", last(l.Value), flit)
		}
	}
	if !slices.Contains(cm.MainCommitSizes.Value, cm.SubCommitSize.Value) {
		p.fail(&cm.SubCommitSize, "%d is not one of commit.main_commit_sizes %v", cm.SubCommitSize.Value, cm.MainCommitSizes.Value)
	}
	p.eq(&cm.StrideMultipleBytes, s.DM.BankWidthBytes.Value, "dm.bank_width_bytes (writes are whole bank words, 002 L2414)")

	// Stream adapter.
	sa := &s.StreamAdapter
	p.eq(&s.Stream.MACWidthBytes, sa.DefaultCollectFlits.Value*flit, "stream_adapter.default_collect_flits × stream.flit_bytes")
	p.eq(&sa.OutPacketBytes, s.Stream.MACWidthBytes.Value, "stream.mac_width_bytes")
	if p.increasing(&sa.CollectFlits) {
		p.eq(&sa.FlitBufferBytes, last(sa.CollectFlits.Value)*flit, "max collect_flits × stream.flit_bytes")
		if !slices.Contains(sa.CollectFlits.Value, sa.DefaultCollectFlits.Value) {
			p.fail(&sa.DefaultCollectFlits, "%d is not one of collect_flits %v", sa.DefaultCollectFlits.Value, sa.CollectFlits.Value)
		}
	}
	for _, l := range []*Ints{&sa.Rows, &s.Contraction.Rows, &s.TRF.Rows} {
		if p.increasing(l) {
			p.pow2List(l)
			if last(l.Value) != s.Slice.Rows.Value {
				p.fail(l, "largest row count %d, want slice.rows = %d", last(l.Value), s.Slice.Rows.Value)
			}
		}
	}

	// Transpose table: one row per element width, each filling the 32-byte bus.
	tr := &s.Transpose
	prev := 0
	for _, t := range tr.Types.Value {
		switch {
		case t.Bits <= prev:
			p.fail(&tr.Types, "rows must have increasing bits, got %d after %d", t.Bits, prev)
		case t.OutputAlignment*t.Bits != tr.BusBytes.Value*8:
			p.fail(&tr.Types, "%d-bit row: output_alignment %d × %d bits != bus %d bytes", t.Bits, t.OutputAlignment, t.Bits, tr.BusBytes.Value)
		case t.ElementsPerPacket <= 0 || t.ElementsPerPacket*t.Bits > tr.BusBytes.Value*8:
			p.fail(&tr.Types, "%d-bit row: elements_per_packet %d does not fit the %d-byte bus", t.Bits, t.ElementsPerPacket, tr.BusBytes.Value)
		case t.MaxInRows <= 0 || len(t.ValidInCols) == 0:
			p.fail(&tr.Types, "%d-bit row: max_in_rows and valid_in_cols must be positive", t.Bits)
		}
		for _, c := range t.ValidInCols {
			if t.ElementsPerPacket > 0 && (c <= 0 || c%t.ElementsPerPacket != 0) {
				p.fail(&tr.Types, "%d-bit row: in_cols %d is not a multiple of elements_per_packet %d", t.Bits, c, t.ElementsPerPacket)
				break
			}
		}
		prev = t.Bits
	}
	if len(tr.Types.Value) == 0 {
		p.fail(&tr.Types, "empty table")
	}
}

func (p *parser) checkTRF(s *Spec) {
	t := &s.TRF
	a := &t.AddressBits
	p.pow2(&t.BankRows, &t.BankColumns, &t.RowsPerBank, &t.HalfRowsPerBank, &t.RowBytes)
	p.eq(&t.BankRows, 1<<a.BankRow.Value, "2^address_bits.bank_row")
	p.eq(&t.BankRows, s.Slice.Rows.Value, "slice.rows (one bank row per Row, 002 L4117)")
	p.eq(&t.RowsPerBank, 1<<a.RowInBankFull.Value, "2^address_bits.row_in_bank_full")
	p.eq(&t.HalfRowsPerBank, 1<<a.RowInBankHalf.Value, "2^address_bits.row_in_bank_half")
	p.eq(&t.HalfRowsPerBank, t.RowsPerBank.Value/2, "rows_per_bank / 2")
	p.eq(&t.BankColumns, 1<<a.BankCol.Value, "2^address_bits.bank_col")
	p.eq(&t.RowBits, t.SlotBits.Value<<a.Offset.Value, "slot_bits × 2^address_bits.offset")
	p.eq(&t.BytesPerRowLane, t.BankColumns.Value*t.RowsPerBank.Value*t.RowBytes.Value,
		"bank_columns × rows_per_bank × row_bytes (%d × %d × %d)", t.BankColumns.Value, t.RowsPerBank.Value, t.RowBytes.Value)
	if t.RowBytes.Value*8 > t.RowBits.Value {
		p.fail(&t.RowBytes, "%d bytes do not fit a %d-bit row", t.RowBytes.Value, t.RowBits.Value)
	}
	if p.increasing(&t.RegReadSizes) {
		p.pow2List(&t.RegReadSizes)
		if last(t.RegReadSizes.Value) != s.Stream.MACWidthBytes.Value {
			p.fail(&t.RegReadSizes, "largest %d, want stream.mac_width_bytes = %d", last(t.RegReadSizes.Value), s.Stream.MACWidthBytes.Value)
		}
	}
	p.eq(&t.FullReadAlignBytes, s.Stream.MACWidthBytes.Value, "stream.mac_width_bytes")
	for i, r := range t.RegTypes.Value {
		switch {
		case r.RegType != i:
			p.fail(&t.RegTypes, "row %d has reg_type %d, want %d", i, r.RegType, i)
		case r.ElementBits != r.Slots*t.SlotBits.Value:
			p.fail(&t.RegTypes, "reg_type %d: element_bits %d != slots %d × slot_bits %d", i, r.ElementBits, r.Slots, t.SlotBits.Value)
		case r.Slots <= 0 || r.ElementsPerRow*r.Slots != 1<<a.Offset.Value:
			p.fail(&t.RegTypes, "reg_type %d: elements_per_row %d × slots %d != 2^offset = %d", i, r.ElementsPerRow, r.Slots, 1<<a.Offset.Value)
		}
	}
	if len(t.RegTypes.Value) == 0 {
		p.fail(&t.RegTypes, "empty table")
	}
	want := []string{"FirstHalf", "SecondHalf", "Full"}
	if !reflect.DeepEqual(t.AddressModes.Value, want) {
		p.fail(&t.AddressModes, "%v, want %v (the TRF address modes tcpmap implements)", t.AddressModes.Value, want)
	}
	p.eq(&t.Sequencer.MaxEntries, s.Sequencer.MaxEntries.Value, "sequencer.max_entries (002 L4170)")
	p.eq(&t.Sequencer.MaxEntrySize, s.Sequencer.MaxEntrySize.Value, "sequencer.max_entry_size (002 L4170)")
	if t.Sequencer.StrideBits.Value > 64 {
		p.fail(&t.Sequencer.StrideBits, "%d bits exceed 64", t.Sequencer.StrideBits.Value)
	}
	c := &t.Cache
	p.eq(&c.TotalBytes, c.Lanes.Value*c.RowsPerLane.Value*c.Columns.Value*c.EntryBytes.Value,
		"lanes × rows_per_lane × columns × entry_bytes (%d × %d × %d × %d)", c.Lanes.Value, c.RowsPerLane.Value, c.Columns.Value, c.EntryBytes.Value)
	p.eq(&c.Lanes, t.BankRows.Value, "trf.bank_rows")
	p.eq(&c.Columns, t.BankColumns.Value, "trf.bank_columns")
	p.eq(&c.EntryBytes, t.RowBytes.Value, "trf.row_bytes")
}

func (p *parser) checkReducer(s *Spec) {
	r := &s.Reducer
	p.eq(&r.Rows, s.Slice.Rows.Value, "slice.rows")
	p.eq(&r.AccumulatorRows, r.Rows.Value, "reducer.rows")
	macBits := s.Stream.MACWidthBytes.Value * 8
	lat := r.SpatialLatencyCycles.types()
	for i, t := range r.TreeDepth.types() {
		// A tree of depth d reduces 2^d elements: the whole mac_width
		// (002 L4387-4388).
		if t.v.Value >= 31 || (1<<t.v.Value)*t.bits != macBits {
			p.fail(t.v, "%s: 2^%d elements × %d bits != mac_width %d bits", t.name, t.v.Value, t.bits, macBits)
		}
		p.eq(lat[i].v, t.v.Value, "reducer.tree_depth.%s (one cycle per level, 002 L4543)", t.name)
	}
	for _, name := range s.Contraction.InputTypes.Value {
		if !slices.Contains([]string{"i4", "i8", "f8", "bf16"}, name) {
			p.fail(&s.Contraction.InputTypes, "input type %q has no reducer.tree_depth entry", name)
		}
	}
	p.eq(&r.AccumulatorSlots, r.AccumulatorRows.Value*r.AccumulatorColumns.Value*r.AccumulatorRegistersPerColumn.Value,
		"accumulator_rows × accumulator_columns × accumulator_registers_per_column")
	p.eq(&r.ResizeColumns, r.AccumulatorColumns.Value, "accumulator_columns")
	p.eq(&r.SpatialOutputLimitElements, r.ResizeColumns.Value, "resize_columns")
	p.eq(&r.InterleavedInnerCapacity, r.AccumulatorSlots.Value/r.AccumulatorRows.Value, "accumulator_slots / accumulator_rows (002 L4536)")
	p.eq(&r.SequentialInnerCapacity, r.AccumulatorSlots.Value/r.ResizeColumns.Value, "accumulator_slots / resize_columns (002 L4538)")
	p.eq(&r.OutputBusElements, s.Stream.FlitBytes.Value/4, "stream.flit_bytes / 4 (32-bit elements)")
	if p.increasing(&r.SequentialOutputElements) {
		for _, x := range r.SequentialOutputElements.Value {
			if x%r.OutputBusElements.Value != 0 {
				p.fail(&r.SequentialOutputElements, "%d is not a multiple of output_bus_elements %d", x, r.OutputBusElements.Value)
				break
			}
		}
		if last(r.SequentialOutputElements.Value) != r.ResizeColumns.Value {
			p.fail(&r.SequentialOutputElements, "largest %d, want resize_columns = %d", last(r.SequentialOutputElements.Value), r.ResizeColumns.Value)
		}
	}
	if r.ReduceMaxRows.Value > r.Rows.Value {
		p.fail(&r.ReduceMaxRows, "%d exceeds reducer.rows %d", r.ReduceMaxRows.Value, r.Rows.Value)
	}
}

func (p *parser) checkVector(s *Spec) {
	v := &s.Vector
	p.eq(&v.Way8ElementsPerCycle, s.Stream.FlitBytes.Value/4, "stream.flit_bytes / 4 (eight 32-bit values per flit, 002 L4551)")
	p.eq(&v.Way4ElementsPerCycle, v.Way8ElementsPerCycle.Value/2, "way8_elements_per_cycle / 2")
	p.eq(&v.IntraReduceTreeWidth, v.Way4ElementsPerCycle.Value, "way4_elements_per_cycle (002 L5386)")
	p.eq(&v.IntraReduceTreeWidth, 1<<v.IntraReduceTreeDepth.Value, "2^intra_reduce_tree_depth")
	p.eq(&v.VCGMaxValidCount, v.Way8ElementsPerCycle.Value, "way8_elements_per_cycle (elements per flit)")
}

func (p *parser) checkDM(s *Spec) {
	d := &s.DM
	p.pow2(&d.BytesPerSlice, &d.Banks, &d.BankWidthBytes, &d.RowsPerBank)
	p.eq(&d.BytesPerSlice, d.Banks.Value*d.BankWidthBytes.Value*d.RowsPerBank.Value,
		"banks × bank_width_bytes × rows_per_bank (%d × %d × %d)", d.Banks.Value, d.BankWidthBytes.Value, d.RowsPerBank.Value)
	p.eq(&d.BytesPerCyclePerSlice, d.Banks.Value*d.BankWidthBytes.Value, "banks × bank_width_bytes")
	ab := &d.AddressBits
	p.bitField(&ab.Byte, d.BankWidthBytes.Value, "dm.bank_width_bytes")
	p.bitField(&ab.Bank, d.Banks.Value, "dm.banks")
	p.bitField(&ab.Row, d.RowsPerBank.Value, "dm.rows_per_bank")
	p.coverBits(log2(d.BytesPerSlice.Value), "dm.bytes_per_slice", &ab.Byte, &ab.Bank, &ab.Row)
	p.eq(&d.WriteAlignBytes, d.BankWidthBytes.Value, "dm.bank_width_bytes (002 L2414)")
	want := []string{"main_fetch", "main_commit", "sub_fetch", "sub_commit", "dma"}
	got := append([]string(nil), d.ControllerPriority.Value...)
	sort.Strings(got)
	w := append([]string(nil), want...)
	sort.Strings(w)
	if !reflect.DeepEqual(got, w) {
		p.fail(&d.ControllerPriority, "%v, want an order of %v", d.ControllerPriority.Value, want)
	}
	p.eq(&d.InterleavedBytesPerCycle, s.DMA.DMNsPerEngine.Value*d.DMNBytesPerCycle.Value, "dma.dmns_per_engine × dmn_bytes_per_cycle")
	p.eq(&d.DMAUnitCyclesPerDMN, s.DMA.RequestBytes.Value/d.DMNBytesPerCycle.Value, "dma.request_bytes / dmn_bytes_per_cycle")
	if s.DMA.RequestBytes.Value%d.DMNBytesPerCycle.Value != 0 {
		p.fail(&d.DMNBytesPerCycle, "%d does not divide dma.request_bytes %d", d.DMNBytesPerCycle.Value, s.DMA.RequestBytes.Value)
	}

	// The 64-access rule: (TDMA_IO_BYTE / DMN_IO_BYTE) × accesses × DMN_SIZE
	// must stay below the NoC timeout (002 L2938-2939); the limit is the
	// first run length that reaches it.
	b := &d.BankStarvation
	p.eq(&b.TDMAIOBytes, s.DMA.RequestBytes.Value, "dma.request_bytes")
	p.eq(&b.DMNIOBytes, d.DMNBytesPerCycle.Value, "dm.dmn_bytes_per_cycle")
	p.eq(&b.DMNSize, s.Cluster.SlicesPerDMN.Value, "cluster.slices_per_dmn")
	p.eq(&b.DMABanksPerRequest, d.Banks.Value, "dm.banks (a DMA request occupies every bank, 002 L2929)")
	if b.TDMAIOBytes.Value%b.DMNIOBytes.Value == 0 {
		k := b.TDMAIOBytes.Value / b.DMNIOBytes.Value * b.DMNSize.Value
		want := (b.NoCTimeoutCycles.Value + k - 1) / k // smallest n with k·n ≥ timeout
		p.eq(&b.ConsecutiveAccessLimit, want, "ceil(noc_timeout_cycles / ((tdma_io_bytes / dmn_io_bytes) × dmn_size)) = ceil(%d / %d)", b.NoCTimeoutCycles.Value, k)
	} else {
		p.fail(&b.DMNIOBytes, "%d does not divide tdma_io_bytes %d", b.DMNIOBytes.Value, b.TDMAIOBytes.Value)
	}
	if b.SubBanksPerAccess.Value > d.Banks.Value {
		p.fail(&b.SubBanksPerAccess, "%d exceeds dm.banks %d", b.SubBanksPerAccess.Value, d.Banks.Value)
	}
	p.pow2(&s.VRF.BytesPerSlice)
}

// bitField checks that a bit list addresses exactly count units.
func (p *parser) bitField(f *Ints, count int, what string) {
	if p.increasing(f) && 1<<len(f.Value) != count {
		p.fail(f, "%d bits address %d units, want %s = %d", len(f.Value), 1<<len(f.Value), what, count)
	}
}

// coverBits checks that the fields together use each bit 0 … n−1 exactly once.
func (p *parser) coverBits(n int, what string, fields ...*Ints) {
	seen := make([]bool, n)
	for _, f := range fields {
		for _, b := range f.Value {
			switch {
			case b >= n:
				p.fail(f, "bit %d is outside the %d address bits of %s", b, n, what)
				return
			case seen[b]:
				p.fail(f, "bit %d is assigned twice", b)
				return
			}
			seen[b] = true
		}
	}
	for b, ok := range seen {
		if !ok {
			p.fail(fields[0], "address bit %d of %s (%d bits) is in no field", b, what, n)
			return
		}
	}
}

func (p *parser) checkHBM(s *Spec) {
	h := &s.HBM
	ab := &h.AddressBits
	n0 := len(p.errs)
	p.pow2(&h.Stacks, &h.ChannelsPerStack, &h.BankGroupsPerSlice, &h.BanksPerBankGroup, &h.RowsPerBank, &h.BytesPerRow, &h.AccessUnitBytes)
	geometry := int64(h.Stacks.Value) * int64(h.ChannelsPerStack.Value) * int64(h.SlicesPerChannel.Value) *
		int64(h.BankGroupsPerSlice.Value) * int64(h.BanksPerBankGroup.Value) * int64(h.RowsPerBank.Value) * int64(h.BytesPerRow.Value)
	if h.Bytes.Value != geometry {
		p.fail(&h.Bytes, "%d, want stacks × channels × slices × bank groups × banks × rows × bytes per row = %d", h.Bytes.Value, geometry)
	}
	p.bitField(&ab.Byte, h.BytesPerRow.Value, "hbm.bytes_per_row")
	p.bitField(&ab.Stack, h.Stacks.Value, "hbm.stacks")
	p.bitField(&ab.Channel, h.ChannelsPerStack.Value, "hbm.channels_per_stack")
	p.bitField(&ab.BankGroup, h.BankGroupsPerSlice.Value, "hbm.bank_groups_per_slice")
	p.bitField(&ab.Bank, h.BanksPerBankGroup.Value, "hbm.banks_per_bank_group")
	p.bitField(&ab.Row, h.RowsPerBank.Value, "hbm.rows_per_bank")
	if p.increasing(&ab.Slice) && 1<<len(ab.Slice.Value) < h.SlicesPerChannel.Value {
		p.fail(&ab.Slice, "%d bits cannot name %d slices", len(ab.Slice.Value), h.SlicesPerChannel.Value)
	}
	if len(p.errs) > n0 {
		return // the bit-level checks below need a sane geometry
	}
	nbits := bits.Len64(uint64(h.Bytes.Value - 1))
	p.coverBits(nbits, "hbm.bytes", &ab.Byte, &ab.Stack, &ab.Channel, &ab.BankGroup, &ab.Bank, &ab.Slice, &ab.Row)
	if len(ab.Stack.Value) != 1 {
		p.fail(&ab.Stack, "want one stack bit, got %v", ab.Stack.Value)
	}

	// Channel XOR: one entry per channel bit, led by that bit, drawing only on
	// the channel-select range (002 L2738, L2977), each bit used once.
	sel := &h.ChannelSelectBits
	if len(sel.Value) != 2 || sel.Value[0] > sel.Value[1] || sel.Value[1] >= nbits {
		p.fail(sel, "want [lowest, highest] within the %d address bits, got %v", nbits, sel.Value)
		return
	}
	if len(h.ChannelXOR) != len(ab.Channel.Value) {
		p.add(p.at(&ab.Channel).line, "hbm.channel_xor", "%d entries, want one per channel bit (%d)", len(h.ChannelXOR), len(ab.Channel.Value))
		return
	}
	used := map[int]bool{}
	for i := range h.ChannelXOR {
		x := &h.ChannelXOR[i]
		if len(x.Value) == 0 || x.Value[0] != ab.Channel.Value[i] {
			p.fail(x, "%v must start with channel bit %d", x.Value, ab.Channel.Value[i])
			continue
		}
		for _, b := range x.Value {
			if b < sel.Value[0] || b > sel.Value[1] {
				p.fail(x, "bit %d is outside channel_select_bits %v", b, sel.Value)
				break
			}
			if used[b] {
				p.fail(x, "bit %d is XORed into two channel bits", b)
				break
			}
			used[b] = true
		}
	}
	if sel.Value[0] != ab.Channel.Value[0] {
		p.fail(sel, "lowest %d, want the first channel bit %d", sel.Value[0], ab.Channel.Value[0])
	}

	// Bandwidth arithmetic (002 L2980, L2987, L2602).
	const eps = 1e-9
	chGB := h.ControllerGHz.Value * float64(h.ControllerBytesPerCycle.Value)
	if math.Abs(h.ChannelGBPerS.Value-chGB) > eps {
		p.fail(&h.ChannelGBPerS, "%v, want controller_ghz × controller_bytes_per_cycle = %v", h.ChannelGBPerS.Value, chGB)
	}
	peak := float64(h.Stacks.Value*h.ChannelsPerStack.Value) * h.ChannelGBPerS.Value / 1000
	if math.Abs(h.PeakTBPerS.Value-math.Round(peak*10)/10) > eps {
		p.fail(&h.PeakTBPerS, "%v, want channels × channel_gb_per_s = %v TB/s rounded to 0.1", h.PeakTBPerS.Value, peak)
	}
	if math.Abs(h.ReadTBPerS.Value+h.WriteTBPerS.Value-h.PeakTBPerS.Value) > eps {
		p.fail(&h.ReadTBPerS, "read %v + write %v != peak_tb_per_s %v", h.ReadTBPerS.Value, h.WriteTBPerS.Value, h.PeakTBPerS.Value)
	}
	p.eq(&h.CyclesPerAccessUnit, h.AccessUnitBytes.Value/h.ControllerBytesPerCycle.Value, "access_unit_bytes / controller_bytes_per_cycle")
	req := float64(h.CyclesPerAccessUnit.Value) / h.ControllerGHz.Value * s.Clock.GHz.Value
	if math.Abs(h.CyclesPerRequest.Value-math.Round(req*10)/10) > eps {
		p.fail(&h.CyclesPerRequest, "%v, want cycles_per_access_unit / controller_ghz × clock.ghz = %.4f rounded to 0.1", h.CyclesPerRequest.Value, req)
	}
	for _, l := range []*Ints{&h.RowConflictFactor, &h.RowSwitchNs, &h.RowSwitchCyclesTCCDClock} {
		if len(l.Value) != 2 || l.Value[0] > l.Value[1] {
			p.fail(l, "want [min, max], got %v", l.Value)
			return
		}
	}
	for i := range 2 {
		c := float64(h.RowSwitchNs.Value[i]) * h.TCCDGHz.Value
		if math.Abs(float64(h.RowSwitchCyclesTCCDClock.Value[i])-c) > eps {
			p.fail(&h.RowSwitchCyclesTCCDClock, "%v, want row_switch_ns × tccd_ghz = %v", h.RowSwitchCyclesTCCDClock.Value, c)
			break
		}
	}
	if !(h.TCCDSameSliceOtherBankGroup.Value <= h.TCCDOtherSlice.Value && h.TCCDOtherSlice.Value <= h.TCCDSameSliceSameBankGroup.Value) {
		p.fail(&h.TCCDOtherSlice, "tCCD values must grow: other bank group ≤ other slice ≤ same bank group")
	}
}

func (p *parser) checkDMA(s *Spec) {
	d := &s.DMA
	p.eq(&d.EnginesPerChip, s.Chip.Clusters.Value*s.Cluster.DMNs.Value/d.DMNsPerEngine.Value,
		"chip.clusters × cluster.dmns / dmns_per_engine (one engine per pair of DMNs, 002 L2404)")
	if s.Chip.Clusters.Value*s.Cluster.DMNs.Value%d.DMNsPerEngine.Value != 0 {
		p.fail(&d.DMNsPerEngine, "%d does not divide the chip's DMNs", d.DMNsPerEngine.Value)
	}
	p.eq(&d.MaxPacketBytes, d.AXIMaxBeats.Value*d.AXIDataBytes.Value, "axi_max_beats × axi_data_bytes (002 L2414)")
	p.eq(&d.RequestBytes, s.HBM.AccessUnitBytes.Value, "hbm.access_unit_bytes")
	p.eq(&d.BytesPerCycle, d.RequestBytes.Value, "request_bytes (one request per cycle)")
	agg := float64(d.EnginesPerChip.Value*d.GBPerSPerEngine.Value) / 1000
	if math.Abs(d.AggregateTBPerS.Value-math.Round(agg*10)/10) > 1e-9 {
		p.fail(&d.AggregateTBPerS, "%v, want engines_per_chip × gb_per_s_per_engine = %v TB/s rounded to 0.1", d.AggregateTBPerS.Value, agg)
	}
	p.eq(&d.MaxEnginesPerCommand, s.Chip.MaxChipsPerDMACommand.Value*d.EnginesPerChip.Value, "chip.max_chips_per_dma_command × engines_per_chip")
	p.eq(&d.DMWriteAlignBytes, s.DM.WriteAlignBytes.Value, "dm.write_align_bytes")
	p.eq(&d.DMReadAlignBytes, s.DM.ReadAlignBytes.Value, "dm.read_align_bytes")
	for _, a := range []*Int{&d.HBMReadAlignBytes, &d.HBMWriteAlignBytes, &d.HBMPacketAlignBytes, &d.DMReadAlignBytes, &d.DMWriteAlignBytes, &d.DMPacketAlignBytes, &d.HBMToDMAlignBytes} {
		p.pow2(a)
		if d.MaxPacketBytes.Value%a.Value != 0 {
			p.fail(a, "%d does not divide max_packet_bytes %d", a.Value, d.MaxPacketBytes.Value)
		}
	}
	p.pow2(&d.SliceStrideBytes)
	if d.SliceStrideBytes.Value < s.DM.BytesPerSlice.Value {
		p.fail(&d.SliceStrideBytes, "%d is smaller than dm.bytes_per_slice %d", d.SliceStrideBytes.Value, s.DM.BytesPerSlice.Value)
	}
	if s.Chip.ChipsPerSystem.Value > s.Chip.MaxChipsPerDMACommand.Value {
		// Not an error in the hardware, but DMA commands name at most this many
		// chips (002 L2515); planners rely on it.
		p.fail(&s.Chip.ChipsPerSystem, "%d exceeds chip.max_chips_per_dma_command %d", s.Chip.ChipsPerSystem.Value, s.Chip.MaxChipsPerDMACommand.Value)
	}
}
