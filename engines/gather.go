package engines

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// A gather in one DMA command: the sequencer's IndirectLoop (002
// L1684-1688), an entry whose iterations move by "a different offset from
// the provided sequence" instead of a fixed stride, "enabling gather
// operations with data-dependent access patterns ... like embedding lookups
// where indices are determined at runtime". The manual states no more: not
// where the sequence lives nor how it is scaled (its Indirect Sequencing
// section is a TODO, 002 L1004-1006). The decision
// (docs/spec-decisions.md "Gather: the DMA's indirect loop"): the sequence
// is an integer HBM tensor's values, each a row number of the table, the
// offset the row number times the entry's source stride (the row's bytes);
// the write side walks its stride as any entry does.

var (
	ruleDMAIndirect = NewRule(Rule{ID: "DMA-R16", Engine: "dma", Name: "indirect loop",
		Cite: "002 L1684-1688",
		Text: "an IndirectLoop entry replaces the (limit, stride) pattern by (limit, [offset0, offset1, ...]): each iteration reads at the offset the sequence gives; here the sequence is an index tensor's values times the entry's source stride, each within the table's rows"})
)

// DeriveGather derives the command of a gather: the rows of table (an HBM
// tensor) that index's values name, copied in index order into out (an
// HBM tensor). The table's axes that out lacks are the gathered ones; they
// must be the table's major axes (a row is then the contiguous run of the
// others), out must hold the index's axes major and the table's other axes
// below them in the table's order, and the index must be row-major over its
// own axes. A row moves in packets of at most max_packet_bytes (002
// L2428-2429). The descriptors spread over the chip's clusters and DMNs (as
// a relayout's walk, 002 L2404, L2544): each row's packets dealt out to
// them, then the index positions, dealt out too (below).
func DeriveGather(spec *Spec, table, index, out *kernel.Tensor) (*kernel.DMACommand, error) {
	eb, tf, xf, of, err := indirectAxes(spec, "gather", "table", table, index, out)
	if err != nil {
		return nil, err
	}
	g, err := GatherLayout(table.Name, index.Name, out.Name, names(tf), names(xf), names(of))
	if err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	row := tf[g:]
	rows, n, rowElems := 1, 1, 1
	for _, a := range tf[:g] {
		rows *= a.Size
	}
	for _, a := range xf {
		n *= a.Size
	}
	for _, a := range row {
		rowElems *= a.Size
	}
	// The spread over the chip's DMNs (indirectRows.deal): parts of each row
	// first, dealt out a packet at a time (DMN j of kr takes packets j,
	// j + kr, …), so that the DMNs' concurrent streams read and write
	// neighbouring addresses of one row, in the same DRAM rows, where
	// blocks a part apart fall in different rows of the same banks (002
	// L2710-2716, L2987-2989; the op kernels' "DMNs dealt out a chunk at a
	// time"); then blocks of index positions. When index blocks first fill
	// more DMNs (a row's packet count with few divisors), they are taken
	// first, the parts still dealt out. The index positions are dealt out
	// too: DMN i of ki takes positions i, i + ki, … (DMAIndex.Step), so
	// that the DMNs write neighbouring rows.
	r := indirectRows{spec: spec, eb: eb, rowElems: rowElems}
	packets := r.packets()
	total := r.dmns()
	kr := largestDivisor(packets, total)
	ki := largestDivisor(n, total/kr)
	if ki2 := largestDivisor(n, total); ki2*largestDivisor(packets, total/ki2) > ki*kr {
		ki, kr = ki2, largestDivisor(packets, total/ki2)
	}
	rowBytes := rowElems * eb
	cmd := r.deal(ki, kr, func(i int) (kernel.DMAEntry, int, int) {
		ix := &kernel.DMAIndex{Tensor: index.Name, Offset: i, Rows: rows}
		if ki > 1 {
			ix.Step = ki
		}
		return kernel.DMAEntry{Size: n / ki, SrcStride: rowBytes, DstStride: ki * rowBytes, Term: index.Name, Index: ix},
			int(table.Addr), int(out.Addr) + i*rowBytes
	})
	if err := CheckDMACommand(spec, cmd); err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	return cmd, nil
}

// indirectAxes checks the three tensors of an indirect copy (a gather's
// table, a scatter's data: src; the index; the output) and returns the
// element's bytes and their row-major axes.
func indirectAxes(spec *Spec, what, srcRole string, src, index, out *kernel.Tensor) (eb int, sf, xf, of []gAxis, err error) {
	if spec == nil {
		return 0, nil, nil, nil, fmt.Errorf("%s: no hardware spec", what)
	}
	if src.DType != out.DType {
		return 0, nil, nil, nil, fmt.Errorf("%s: a DMA moves bytes: %s %s %q, output %s %q", what, srcRole, src.DType, src.Name, out.DType, out.Name)
	}
	bits := src.DType.SizeBits()
	if bits < 8 || bits%8 != 0 {
		return 0, nil, nil, nil, fmt.Errorf("%s: %s elements are not whole bytes", what, src.DType)
	}
	for _, t := range []struct {
		role string
		t    *kernel.Tensor
		to   *[]gAxis
	}{{srcRole, src, &sf}, {"output", out, &of}, {"index", index, &xf}} {
		if *t.to, err = plainAxes(t.t.Element); err != nil {
			return 0, nil, nil, nil, fmt.Errorf("%s: the %s %q: %w", what, t.role, t.t.Name, err)
		}
	}
	return bits / 8, sf, xf, of, nil
}

// indirectRows is the row of an indirect copy (a gather or a scatter):
// rowElems elements of eb bytes, moved in packets of the largest divisor
// of the row within max_packet_bytes (002 L2428-2429).
type indirectRows struct {
	spec         *Spec
	eb, rowElems int
}

// packet is the row's packet, in elements.
func (r indirectRows) packet() int {
	p := r.rowElems
	for p*r.eb > r.spec.DMA.MaxPacketBytes.Value || r.rowElems%p != 0 {
		p--
	}
	return p
}

// packets is the row's packet count.
func (r indirectRows) packets() int { return r.rowElems / r.packet() }

// dmns is the chip's DMN count, the descriptors' most.
func (r indirectRows) dmns() int { return r.spec.Chip.Clusters.Value * r.spec.Cluster.DMNs.Value }

// deal writes the command of ki × kr descriptors, each on its own DMN, the
// DMA Engines (one per DMN pair, 002 L2404) taken before their second
// ports: descriptor (i, j) moves part j of kr of each row (its packets j,
// j + kr, …) at the index positions first(i) walks in its indirect entry,
// from the bases first gives (part j's offset added).
func (r indirectRows) deal(ki, kr int, first func(i int) (e kernel.DMAEntry, src, dst int)) *kernel.DMACommand {
	spec, eb := r.spec, r.eb
	dmns := spec.Cluster.DMNs.Value
	ports := max(spec.DMA.DMNsPerEngine.Value, 1)
	p, packets := r.packet(), r.packets()
	engines := r.dmns() / ports
	req := spec.DMA.RequestBytes.Value
	rowBytes := r.rowElems * eb
	cmd := &kernel.DMACommand{SliceStride: spec.DMA.SliceStrideBytes.Value,
		DMNStride: spec.DMA.SliceStrideBytes.Value * spec.Cluster.SlicesPerDMN.Value}
	for d := range ki * kr {
		i, j := d/kr, d%kr
		e, port := d%engines, d/engines
		x := kernel.DmnIndex{Cluster: e / (dmns / ports), DMN: e%(dmns/ports)*ports + port}
		head, src, dst := first(i)
		entries := []kernel.DMAEntry{head}
		if packets/kr > 1 {
			entries = append(entries, kernel.DMAEntry{Size: packets / kr, SrcStride: kr * p * eb, DstStride: kr * p * eb})
		}
		if p > 1 {
			entries = append(entries, kernel.DMAEntry{Size: p, SrcStride: eb, DstStride: eb})
		}
		bytes := head.Size * rowBytes / kr
		rpp := (p*eb + req - 1) / req
		cmd.Descriptors = append(cmd.Descriptors, kernel.DMADescriptor{
			Dmn: x, Src: kernel.DMAMedia{Kind: kernel.MediaHBM}, Dst: kernel.DMAMedia{Kind: kernel.MediaHBM},
			Entries: entries, SrcBase: src + j*p*eb, DstBase: dst + j*p*eb,
			Stride0: p * eb, ElemBits: eb * 8, Bytes: bytes, Packets: bytes / (p * eb),
			RequestsPerPacket: rpp, Requests: bytes / (p * eb) * rpp,
		})
	}
	// Descriptors in DMN order (kernel.DMACommand).
	slices.SortStableFunc(cmd.Descriptors, func(a, b kernel.DMADescriptor) int {
		return cmp.Or(cmp.Compare(a.Dmn.Cluster, b.Dmn.Cluster), cmp.Compare(a.Dmn.DMN, b.Dmn.DMN))
	})
	cmd.Homogeneous = homogeneous(cmd.Descriptors)
	return cmd
}

// GatherLayout checks the layouts a gather's one DMA reads and writes
// (DeriveGather), each given as its axes in row-major order, major first,
// axes of size 1 left out, and returns how many of the table's major axes
// are gathered (those the output lacks). A row, the table's other axes, is
// then one contiguous run the indirect loop moves whole; the output holds
// the index's axes, then the row. An index sharing an axis with its table
// (a batched gather) would need each row's offset to depend on its position
// as well as on the index's value, which one indirect loop (002
// L1684-1688) does not give.
func GatherLayout(tableName, indexName, outName string, table, index, out []string) (int, error) {
	for _, a := range index {
		if slices.Contains(table, a) {
			return 0, fmt.Errorf("the index %s shares axis %s with the table %s, a batched gather: each row's offset would depend on its position as well as on the index, which one indirect loop does not give", indexName, a, tableName)
		}
	}
	g := 0
	for g < len(table) && !slices.Contains(out, table[g]) {
		g++
	}
	for _, a := range table[g:] {
		if !slices.Contains(out, a) {
			return 0, fmt.Errorf("the table %s's axis %s, absent from the output, lies inside a row (%s): the gathered axes must be the table's major ones, a row one contiguous run for the DMA to move", tableName, a, strings.Join(table[g:], ", "))
		}
	}
	if g == 0 {
		return 0, fmt.Errorf("the output %s holds every axis of the table %s: nothing is gathered", outName, tableName)
	}
	if want := append(slices.Clone(index), table[g:]...); !slices.Equal(out, want) {
		return 0, fmt.Errorf("the output %s is laid out m![%s]; a gather writes the index's axes, then the table's row: m![%s]", outName, strings.Join(out, ", "), strings.Join(want, ", "))
	}
	return g, nil
}

// largestDivisor is the largest divisor of n no larger than limit (1 at
// least).
func largestDivisor(n, limit int) int {
	for k := min(n, limit); k > 1; k-- {
		if n%k == 0 {
			return k
		}
	}
	return 1
}

// gAxis is an axis of a row-major layout.
type gAxis struct {
	Name string
	Size int
}

// plainAxes returns the axes of a row-major element mapping, major first:
// every digit a whole axis, live (no padding, broadcast or split).
func plainAxes(e *mapping.Expr) ([]gAxis, error) {
	if e == nil {
		return nil, nil
	}
	fs, err := mapping.Factorize(e)
	if err != nil {
		return nil, err
	}
	var out []gAxis
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		if f.Kind != mapping.FactorTerm || f.Stride != 1 || f.Extent != f.AxisSize {
			return nil, fmt.Errorf("the layout m![%s] is not its axes whole, row-major", e)
		}
		out = append(out, gAxis{f.Axis, f.AxisSize})
	}
	return out, nil
}

func names(as []gAxis) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

// checkGather checks a gather op's indirect entries against its index
// tensor (DMA-R16): every descriptor reads its positions within the index's
// values, and an indirect entry is a read-side loop of an HBM-to-HBM copy.
func checkGather(p *kernel.Program, op *kernel.Op) error {
	if op.Index == "" {
		for x, d := range op.DMA.Descriptors {
			for _, e := range d.Entries {
				if e.Index != nil {
					return ruleDMAIndirect.Violate("descriptor %d has an indirect entry, and the op names no index tensor", x)
				}
			}
		}
		return nil
	}
	idx, _ := p.Tensor(op.Index)
	n := idx.Element.Size()
	for x, d := range op.DMA.Descriptors {
		found := false
		for _, e := range d.Entries {
			if e.Index == nil {
				continue
			}
			switch {
			case found:
				return ruleDMAIndirect.Violate("descriptor %d has two indirect entries", x)
			case e.Index.Tensor != op.Index:
				return ruleDMAIndirect.Violate("descriptor %d reads its offsets from %q; the op's index is %q", x, e.Index.Tensor, op.Index)
			case e.Index.Step < 0:
				return ruleDMAIndirect.Violate("descriptor %d steps %d index positions an iteration", x, e.Index.Step)
			case e.Index.Offset < 0 || e.Index.Position(e.Size-1) >= n:
				return ruleDMAIndirect.Violate("descriptor %d reads index positions %d to %d; %q holds %d", x, e.Index.Offset, e.Index.Position(e.Size-1), op.Index, n)
			case e.Index.Rows < 1:
				return ruleDMAIndirect.Violate("descriptor %d: an indirect entry over %d rows", x, e.Index.Rows)
			case e.Index.Write != op.Scatter:
				return ruleDMAIndirect.Violate("descriptor %d's indirect entry moves the %s side; the op is a %s", x, map[bool]string{false: "read", true: "write"}[e.Index.Write], map[bool]string{false: "gather", true: "scatter"}[op.Scatter])
			case d.Stride0 > rowStride(e):
				return ruleDMAIndirect.Violate("descriptor %d moves packets of %d bytes across rows of %d: a packet is one contiguous run (002 L2593), a row's next wherever the index says", x, d.Stride0, rowStride(e))
			}
			found = true
		}
		if !found {
			return ruleDMAIndirect.Violate("descriptor %d of a %s has no indirect entry", x, map[bool]string{false: "gather", true: "scatter"}[op.Scatter])
		}
	}
	return nil
}

// rowStride is an indirect entry's row: its stride on the side the index
// moves.
func rowStride(e kernel.DMAEntry) int {
	if e.Index.Write {
		return e.DstStride
	}
	return e.SrcStride
}

// gatherLoad turns the derived command of a load of a gathered argument
// (kernel.Tensor.Gather: a gather fused into its consumer's loads) into
// reads of the table through the index: it was derived as a load of the
// gathered tensor at that tensor's address, each descriptor reading rows
// of it — a row is the table's (GatherLayout: the index's axes, then the
// row) — at a fixed stride. Each descriptor then starts at its first row's
// index position, and its one loop over rows becomes an IndirectLoop
// (DMA-R16, 002 L1684-1688) stepping that many positions an iteration; a
// descriptor within one row gets an indirect loop of one iteration. The
// loops inside a row keep their strides, so every packet reads the bytes
// the gathered tensor would have held there; a packet that spanned rows
// is cut at each row's end. A descriptor that walks the rows in two
// loops, or crosses a row inside its loops' walk, is refused.
func gatherLoad(spec *Spec, p *kernel.Program, op *kernel.Op) error {
	src, ok := p.Tensor(op.Src)
	if !ok || op.DMA == nil {
		return nil
	}
	g := p.Gathered(src)
	if g == nil {
		return nil
	}
	v := src
	if src.View != "" {
		v, _ = p.Tensor(src.View)
	}
	table, _ := p.Tensor(g.Table)
	index, _ := p.Tensor(g.Index)
	if table == nil || index == nil {
		return fmt.Errorf("gathered load: no table %q or index %q", g.Table, g.Index)
	}
	bits := table.DType.SizeBits()
	if bits < 8 || bits%8 != 0 {
		return fmt.Errorf("gathered load: %s elements are not whole bytes", table.DType)
	}
	tf, err := plainAxes(table.Element)
	if err != nil {
		return fmt.Errorf("gathered load: the table %q: %w", table.Name, err)
	}
	vf, err := plainAxes(v.Element)
	if err != nil {
		return fmt.Errorf("gathered load: %q: %w", v.Name, err)
	}
	xf, err := plainAxes(index.Element)
	if err != nil {
		return fmt.Errorf("gathered load: the index %q: %w", index.Name, err)
	}
	k, err := GatherLayout(table.Name, index.Name, v.Name, names(tf), names(xf), names(vf))
	if err != nil {
		return ruleDMAIndirect.Violate("gathered load: %v", err)
	}
	rows, rowBytes := 1, bits/8
	for _, a := range tf[:k] {
		rows *= a.Size
	}
	for _, a := range tf[k:] {
		rowBytes *= a.Size
	}
	for x := range op.DMA.Descriptors {
		d := &op.DMA.Descriptors[x]
		off := d.SrcBase - int(v.Addr)
		if off < 0 {
			return ruleDMAIndirect.Violate("gathered load: descriptor %d starts %d bytes before %q", x, -off, v.Name)
		}
		at := -1
		last := off%rowBytes + d.ElemBits/8 - 1
		for i, e := range d.Entries {
			switch {
			case e.Index != nil:
				return ruleDMAIndirect.Violate("gathered load: descriptor %d has an indirect entry already", x)
			case e.SrcStride >= rowBytes && e.Size > 1:
				if at >= 0 || e.SrcStride%rowBytes != 0 {
					return ruleDMAIndirect.Violate("gathered load: descriptor %d walks the rows of %q in more than one loop, or off their starts (stride %d, rows of %d bytes): one indirect loop reads them", x, v.Name, e.SrcStride, rowBytes)
				}
				at = i
			case e.SrcStride < 0:
				return ruleDMAIndirect.Violate("gathered load: descriptor %d walks %q backwards", x, v.Name)
			default:
				last += (e.Size - 1) * e.SrcStride
			}
		}
		if last >= rowBytes {
			return ruleDMAIndirect.Violate("gathered load: descriptor %d reads across a row of %q (%d bytes) inside its loops: an indirect loop moves whole rows", x, v.Name, rowBytes)
		}
		ix := &kernel.DMAIndex{Tensor: index.Name, Offset: off / rowBytes, Rows: rows}
		if at >= 0 {
			e := &d.Entries[at]
			if s := e.SrcStride / rowBytes; s > 1 {
				ix.Step = s
			}
			e.SrcStride, e.Index = rowBytes, ix
		} else {
			if len(d.Entries) >= kernel.MaxIterDepth {
				return ruleDMAIndirect.Violate("gathered load: descriptor %d has %d loops, no room for the indirect one", x, len(d.Entries))
			}
			d.Entries = append([]kernel.DMAEntry{{Size: 1, SrcStride: rowBytes, Term: index.Name, Index: ix}}, d.Entries...)
		}
		d.SrcBase = int(table.Addr) + off%rowBytes
		if d.Stride0 > rowBytes {
			// A packet is one contiguous run of the table (002 L2593):
			// it ends with its row, the next row being wherever the
			// index says.
			s0 := dtype.GCD(d.Stride0, rowBytes)
			req := spec.DMA.RequestBytes.Value
			d.Stride0, d.Packets = s0, d.Bytes/s0
			d.RequestsPerPacket = (s0 + req - 1) / req
			d.Requests = d.Packets * d.RequestsPerPacket
		}
	}
	return nil
}
