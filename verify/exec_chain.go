package verify

import (
	"fmt"
	"sync"
	"sync/atomic"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The executor's chains run slice by slice.

// runChain runs a chain's segments, slices in parallel, with the switches
// between them.
func (x *Executor) runChain(cp *chainPlan) error {
	var streams [][]byte // per global slice, between segments
	for i, seg := range cp.segs {
		in := streams
		var out [][]byte
		if seg.sw != nil || seg.xsr != nil {
			out = make([][]byte, x.dev.TotalSlices())
		}
		err := x.parallel(seg.slices, func(r *sliceRun, g int) error {
			var src []byte
			if in != nil {
				src = in[g]
			}
			res, err := r.runStages(cp, seg, g, src)
			if err != nil {
				return err
			}
			if out != nil {
				out[g] = append([]byte(nil), res...)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if seg.sw != nil {
			var next []int // the slices the switch's output feeds
			if i+1 < len(cp.segs) {
				next = cp.segs[i+1].slices
			}
			if streams, err = x.runSwitch(cp, seg, out, next); err != nil {
				return x.stageErr(cp.op, seg.swAt, kernel.StSwitch, err)
			}
		} else if seg.xsr != nil {
			var next []int
			if i+1 < len(cp.segs) {
				next = cp.segs[i+1].slices
			}
			if streams, err = x.runInterSlice(seg, out, next); err != nil {
				return x.stageErr(cp.op, seg.swAt, kernel.StVectorInterSlice, err)
			}
		}
	}
	x.taintChain(cp)
	return nil
}

// taintChain records where the chain's output holds data computed from
// slices that did not run (sampling): everywhere the tensor lives but the
// last segment did not run, and where an input was tainted.
func (x *Executor) taintChain(cp *chainPlan) {
	if cp.out == nil {
		return
	}
	out := x.taint(cp.out.Name)
	last := cp.segs[len(cp.segs)-1]
	ran := make(map[int]bool, len(last.slices))
	for _, g := range last.slices {
		ran[g] = true
	}
	// Across a switch or an inter-slice reduction every slice of a ring
	// feeds every other: a tensor read before it and tainted on one slice
	// of the ring taints the ring.
	ringTaint := map[int]bool{}
	lastSeg := len(cp.segs) - 1
	for i, name := range cp.reads {
		if cp.readSeg[i] == lastSeg {
			continue
		}
		tt := x.taint(name)
		for _, g := range cp.segs[cp.readSeg[i]].slices {
			if tt[g] {
				ringTaint[g-g%x.dev.slices] = true
			}
		}
	}
	if a := x.allocs[cp.out.Name]; a != nil {
		for _, g := range a.Slices {
			if !ran[g] {
				out[g] = true
			}
		}
	}
	for g := range ran {
		t := ringTaint[g-g%x.dev.slices]
		for i, name := range cp.reads {
			if cp.readSeg[i] == lastSeg {
				t = t || x.taint(name)[g]
			}
		}
		out[g] = t
	}
}

// runSwitch gathers the streams of each ring the switch is fed, routes them
// (engines.SwitchApply) and returns the routed streams per global slice.
//
// Only the output of the slices in next (those the following segment
// runs) is routed: each slice's stream is its own allocation, so a ring's
// output is never held whole.
func (x *Executor) runSwitch(cp *chainPlan, seg *segment, in [][]byte, next []int) ([][]byte, error) {
	sw := seg.sw
	n, pb := sw.Slices, sw.PacketBytes
	inBytes, outBytes := sw.InTime*pb, sw.Route.OutTime()*pb
	out := make([][]byte, x.dev.TotalSlices())
	want := map[int]bool{}
	for _, g := range next {
		want[g] = true
	}
	for _, r := range seg.groups {
		src := make([]byte, n*inBytes)
		for s := 0; s < n; s++ {
			b := in[r+s]
			if b == nil {
				continue // a slice holding no data feeds zeros
			}
			if len(b) != inBytes {
				return nil, fmt.Errorf("%s: the stream holds %d bytes, the switch routes %d time steps of %d bytes", x.dev.SliceName(r+s), len(b), sw.InTime, pb)
			}
			copy(src[s*inBytes:], b)
		}
		for s := 0; s < n; s++ {
			if !want[r+s] {
				continue
			}
			dst := make([]byte, outBytes)
			if err := engines.SwitchApplySlice(sw, dst, src, s); err != nil {
				return nil, fmt.Errorf("ring of %s: %w", x.dev.SliceName(r), err)
			}
			out[r+s] = dst
		}
	}
	return out, nil
}

// parallel runs fn on every slice of slices, on the executor's workers. On
// failure it returns the error of the lowest failing slice: every slice
// below it has run, so the error does not depend on scheduling.
func (x *Executor) parallel(slices []int, fn func(r *sliceRun, g int) error) error {
	if len(slices) == 0 {
		return nil
	}
	var next atomic.Int64
	var fail atomic.Int64
	fail.Store(int64(len(slices)))
	errs := make([]error, len(slices))
	var wg sync.WaitGroup
	for w := 0; w < min(len(x.runs), len(slices)); w++ {
		wg.Add(1)
		go func(r *sliceRun) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(slices) || int64(i) > fail.Load() {
					return
				}
				if err := fn(r, slices[i]); err != nil {
					errs[i] = err
					for {
						f := fail.Load()
						if int64(i) >= f || fail.CompareAndSwap(f, int64(i)) {
							break
						}
					}
				}
			}
		}(x.runs[w])
	}
	wg.Wait()
	if f := fail.Load(); f < int64(len(slices)) {
		return errs[f]
	}
	return nil
}

// sliceRun is one worker's state: stream buffers and Reducers, reused from
// slice to slice so that the hot loops do not allocate.
type sliceRun struct {
	x        *Executor
	bufs     [2][]byte
	reducers map[*stagePlan]*engines.Reducer
	packet   [64]byte
	weights  []byte
	// trfCache maps a TRF Sequencer address to the Rows × 64-byte windows
	// read there, kept in trfSlab (align).
	trfCache map[int]int
	trfSlab  []byte
	scratch  [8]byte
	// ve is the Vector Engine pass's per-slice state (exec_vector.go).
	ve veSlice
}

// buffer returns a buffer of n bytes that is not buffer avoid (-1: none),
// and its index.
func (r *sliceRun) buffer(avoid, n int) ([]byte, int) {
	k := 0
	if avoid == 0 {
		k = 1
	}
	if cap(r.bufs[k]) < n {
		r.bufs[k] = make([]byte, n)
	}
	return r.bufs[k][:n], k
}

// runStages runs a segment's stages on global slice g. in is the segment's
// input stream (nil for the first segment, which starts with fetch); the
// result is the stream after the last stage (nil after a terminal stage).
func (r *sliceRun) runStages(cp *chainPlan, seg *segment, g int, in []byte) ([]byte, error) {
	cur := -1 // the buffer holding in; -1 when in is not one of ours
	if seg.veLanes > 0 {
		r.ve.reset(seg.veLanes)
	}
	for _, sp := range seg.stages {
		out, k, err := r.stage(cp, sp, g, in, cur)
		if err != nil {
			return nil, &ExecError{Op: cp.op, Stage: sp.at, Kind: string(sp.kind), Slice: r.x.dev.SliceName(g), Err: err}
		}
		in, cur = out, k
	}
	return in, nil
}

// stage runs one stage on slice g; cur is the buffer holding in.
func (r *sliceRun) stage(cp *chainPlan, sp *stagePlan, g int, in []byte, cur int) ([]byte, int, error) {
	c := sp.cfg
	switch sp.kind {
	case kernel.StFetch:
		return r.fetch(cp.begin, c.Fetch, g)
	case kernel.StCollect:
		cc := c.Collect
		out, k := r.buffer(cur, cc.OutTime()*cc.FlitBytes)
		return out, k, engines.CollectApply(cc, out, in)
	case kernel.StToTRF:
		return nil, -1, r.toTRF(c.ToTRF, g, in)
	case kernel.StAlign:
		return r.align(sp, g, in, cur)
	case kernel.StCast:
		return r.cast(c.Cast, in, cur)
	case kernel.StTranspose:
		return r.transpose(c.Transpose, in, cur)
	case kernel.StCommit:
		return nil, -1, r.commit(sp.tensor, c.Commit, g, in)
	}
	return r.vectorStage(sp, g, in, cur)
}

// fetch runs the Fetch Sequencer over the DM bytes of tensor t on slice g
// and the Fetch Adapter on every element (002 L1689-2118): position p of
// the stream reads the element at the sequencer's address p (in elements of
// InType from the tensor's address); masked positions take the pad value.
func (r *sliceRun) fetch(t *kernel.Tensor, cfg *kernel.FetchConfig, g int) ([]byte, int, error) {
	inBits, outBits := cfg.InType.SizeBits(), cfg.OutType.SizeBits()
	if inBits == 0 || outBits == 0 {
		return nil, -1, fmt.Errorf("fetch: invalid element types %s -> %s", cfg.InType, cfg.OutType)
	}
	elems := 1
	for _, e := range cfg.Seq.Entries {
		n, err := streamSize(elems, e.Size)
		if err != nil {
			return nil, -1, fmt.Errorf("fetch: sequencer %s: %w", cfg.Seq, err)
		}
		elems = n
	}
	if elems == 0 || elems*outBits%8 != 0 || elems*outBits/8 > maxStreamBytes {
		return nil, -1, fmt.Errorf("fetch: sequencer %s visits %d elements of %s: not whole bytes, or beyond the simulator's stream limit", cfg.Seq, elems, cfg.OutType)
	}
	out, k := r.buffer(-1, elems*outBits/8)
	a := &cfg.Adapter
	if cfg.InType == cfg.OutType && !a.Table && !a.Cast && len(a.ZeroPoints) == 0 && a.Mask == nil && inBits%8 == 0 {
		return out, k, r.fetchRaw(t, &cfg.Seq, g, inBits/8, out)
	}
	return out, k, r.fetchAdapted(t, cfg, g, out)
}

// fetchRaw is fetch without adapter stages on whole-byte elements: the
// elements' bytes are copied, a contiguous innermost entry (stride 1) as one
// run.
func (r *sliceRun) fetchRaw(t *kernel.Tensor, seq *kernel.SeqConfig, g, eb int, out []byte) error {
	es := seq.Entries
	if len(es) > kernel.MaxIterDepth {
		return fmt.Errorf("fetch: %d sequencer entries, at most %d", len(es), kernel.MaxIterDepth)
	}
	for i, e := range es {
		if e.Size < 1 {
			return fmt.Errorf("fetch: sequencer entry %d has size %d", i, e.Size)
		}
	}
	inner := kernel.SeqEntry{Size: 1, Stride: 1}
	outer := es
	if len(es) > 0 {
		inner, outer = es[len(es)-1], es[:len(es)-1]
	}
	var idx [kernel.MaxIterDepth]int
	off := seq.Base // element address of the current outer position
	run := inner.Size * eb
	dev := r.x.dev
	for pos := 0; pos < len(out); pos += run {
		dst := out[pos : pos+run]
		switch inner.Stride {
		case 1:
			if err := dev.ReadDM(g, t.Addr+int64(off)*int64(eb), dst); err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
		case 0:
			if err := dev.ReadDM(g, t.Addr+int64(off)*int64(eb), dst[:eb]); err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			for j := eb; j < run; j += eb {
				copy(dst[j:j+eb], dst[:eb])
			}
		default:
			for j := 0; j < inner.Size; j++ {
				a := t.Addr + int64(off+j*inner.Stride)*int64(eb)
				if err := dev.ReadDM(g, a, dst[j*eb:(j+1)*eb]); err != nil {
					return fmt.Errorf("fetch: %w", err)
				}
			}
		}
		for k := len(outer) - 1; k >= 0; k-- { // the odometer of 002 L1390-1401
			idx[k]++
			off += outer[k].Stride
			if idx[k] < outer[k].Size {
				break
			}
			off -= outer[k].Stride * outer[k].Size
			idx[k] = 0
		}
	}
	return nil
}

// fetchAdapted is fetch with the adapter's element-wise stages (masking,
// table, cast, zero points; 002 L1870) or sub-byte elements: element by
// element.
func (r *sliceRun) fetchAdapted(t *kernel.Tensor, cfg *kernel.FetchConfig, g int, out []byte) error {
	if cfg.Adapter.Table {
		return fmt.Errorf("fetch: table indexing reads a table the kernel program does not carry: %w", engines.ErrNotModelled)
	}
	inter := -1 // the entry of the interleave axis, for per-tensor zero points
	if it := cfg.Interleave; it != nil && len(cfg.Adapter.ZeroPoints) > 1 {
		for k, e := range cfg.Seq.Entries {
			if e.Term == it.Axis && e.Size == it.Tensors {
				inter = k
			}
		}
		if inter < 0 {
			return fmt.Errorf("fetch: no sequencer entry iterates the interleave axis %s", it.Axis)
		}
	}
	it, err := cfg.Seq.Iter()
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	inBits := int64(cfg.InType.SizeBits())
	nb := (inBits + 7) / 8
	for it.Next() {
		p := it.Pos()
		var v float64
		if cfg.Adapter.Mask != nil && engines.MaskedAt(cfg.Adapter.Mask, &cfg.Seq, p) {
			v = float64(cfg.Adapter.Mask.PadValue) // 002 L1906
		} else {
			bit := (t.Addr*8 + int64(it.Addr())*inBits)
			if bit < 0 {
				return fmt.Errorf("fetch: position %d reads DM before address 0", p)
			}
			b := r.scratch[:nb]
			if err := r.x.dev.ReadDM(g, bit/8, b); err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			raw, err := cfg.InType.Load(r.scratch[:], int(bit%8/inBits))
			if err != nil {
				return fmt.Errorf("fetch: %w", err)
			}
			tensor := 0
			if inter >= 0 {
				q := p
				for k := len(cfg.Seq.Entries) - 1; k > inter; k-- {
					q /= cfg.Seq.Entries[k].Size
				}
				tensor = q % cfg.Seq.Entries[inter].Size
			}
			if v, err = engines.FetchValue(cfg, raw, tensor, nil); err != nil {
				return fmt.Errorf("fetch: position %d: %w", p, err)
			}
		}
		if err := cfg.OutType.Store(out, p, v); err != nil {
			return fmt.Errorf("fetch: position %d: %w", p, err)
		}
	}
	return nil
}

// toTRF stores the collect flits in the TRF of slice g (002 L4052-4061).
func (r *sliceRun) toTRF(c *kernel.ToTRFConfig, g int, in []byte) error {
	fb := r.x.spec.Stream.FlitBytes.Value // 32-byte flits, 002 L3544
	if want := c.Rows * c.FlitsPerRow * fb; len(in) != want {
		return fmt.Errorf("to_trf: the stream holds %d bytes, the configuration stores %d Rows × %d flits of %d bytes", len(in), c.Rows, c.FlitsPerRow, fb)
	}
	trf, err := r.x.dev.TRF(g)
	if err != nil {
		return err
	}
	for t := 0; t*fb < len(in); t++ {
		if err := trf.StoreFlit(c, t, in[t*fb:(t+1)*fb]); err != nil {
			return err
		}
	}
	return nil
}

// align runs the Aligner and the Reducer for every computation time step:
// the Stream Adapter's packet, each Row's TRF window, then the Reducer's
// step, whose completed blocks form the output stream of 32-byte beats
// (002 L3878-4177, L4384-4492).
func (r *sliceRun) align(sp *stagePlan, g int, in []byte, cur int) ([]byte, int, error) {
	c := sp.cfg.Align
	sa, ts := &c.StreamAdapter, &c.TRFSequencer
	if want := sa.InSteps * sa.FlitBytes; len(in) != want {
		return nil, -1, fmt.Errorf("align: the stream holds %d bytes, the Stream Adapter reads %d flits of %d bytes", len(in), sa.InSteps, sa.FlitBytes)
	}
	red := r.reducers[sp]
	if red == nil {
		var err error
		if red, err = engines.NewReducer(r.x.spec, sp.red); err != nil {
			return nil, -1, err
		}
		r.reducers[sp] = red
	}
	trf, err := r.x.dev.TRF(g)
	if err != nil {
		return nil, -1, err
	}
	mac := r.x.spec.Stream.MACWidthBytes.Value // 64 bytes per Row per cycle, 002 L4099
	rows := sp.red.Accumulate.Rows
	if cap(r.weights) < rows*mac {
		r.weights = make([]byte, rows*mac)
	}
	if sa.OutSteps > ts.Steps() {
		return nil, -1, fmt.Errorf("align: the Stream Adapter produces %d computation steps, the TRF Sequencer reads %d", sa.OutSteps, ts.Steps())
	}
	// A TRF Sequencer entry of stride 0 re-reads the same weights (002
	// L4177): the TRF does not change during the chain, so the windows read
	// at an address are kept and reused, as the same read would return them.
	reuse := false
	for _, e := range ts.Entries {
		reuse = reuse || (e.Stride == 0 && e.Size > 1)
	}
	if r.trfCache == nil {
		r.trfCache = map[int]int{}
	}
	clear(r.trfCache)
	r.trfSlab = r.trfSlab[:0]
	x := r.packet[:mac]
	k := 0
	if cur == 0 {
		k = 1
	}
	out := r.bufs[k][:0]
	for t := 0; t < sa.OutSteps; t++ {
		if err := engines.StreamAdapterPacket(sa, in, t, x); err != nil {
			return nil, -1, err
		}
		w := r.weights[:rows*mac]
		if off, ok := r.trfCache[ts.Addr(t)]; reuse && ok {
			w = r.trfSlab[off : off+rows*mac]
		} else {
			for row := 0; row < rows; row++ {
				if err := trf.ReadPacket(sp.toTRF, ts, row, t, w[row*mac:(row+1)*mac]); err != nil {
					return nil, -1, err
				}
			}
			if reuse {
				r.trfCache[ts.Addr(t)] = len(r.trfSlab)
				r.trfSlab = append(r.trfSlab, w...)
			}
		}
		beats, err := red.Step(t, x, w)
		if err != nil {
			return nil, -1, err
		}
		out = append(out, beats...)
	}
	r.bufs[k] = out
	r.x.macs.Add(int64(sa.OutSteps) * int64(rows) * int64(sp.red.Contract.Width))
	return out, k, nil
}

// cast converts every packet (002 L6756-6784).
func (r *sliceRun) cast(c *kernel.CastConfig, in []byte, cur int) ([]byte, int, error) {
	ib, err1 := c.From.BytesFor(c.InElems)
	ob, err2 := c.To.BytesFor(c.OutElems)
	if err1 != nil || err2 != nil || ib < 1 || ob < 1 || len(in)%ib != 0 {
		return nil, -1, fmt.Errorf("cast: the stream holds %d bytes, not whole packets of %d %s", len(in), c.InElems, c.From)
	}
	n := len(in) / ib
	if _, err := streamSize(n, ob); err != nil {
		return nil, -1, fmt.Errorf("cast: %w", err)
	}
	out, k := r.buffer(cur, n*ob)
	for t := 0; t < n; t++ {
		if err := engines.CastPacket(c, in[t*ib:(t+1)*ib], out[t*ob:(t+1)*ob]); err != nil {
			return nil, -1, err
		}
	}
	return out, k, nil
}

// transpose transposes every block of in_rows × packets_per_col flits
// (002 L6842-6848).
func (r *sliceRun) transpose(c *kernel.TransposeConfig, in []byte, cur int) ([]byte, int, error) {
	flit := c.OutputAlignment * c.ElementBits / 8
	ib, err1 := streamSize(c.InRows, c.PacketsPerCol, flit)
	ob, err2 := streamSize(c.OutRows, flit)
	if err1 != nil || err2 != nil || ib < 1 || ob < 1 || len(in)%ib != 0 {
		return nil, -1, fmt.Errorf("transpose: the stream holds %d bytes, not whole blocks of %d", len(in), ib)
	}
	n := len(in) / ib
	if _, err := streamSize(n, ob); err != nil {
		return nil, -1, fmt.Errorf("transpose: %w", err)
	}
	out, k := r.buffer(cur, n*ob)
	for t := 0; t < n; t++ {
		if err := engines.TransposeBlock(c, in[t*ib:(t+1)*ib], out[t*ob:(t+1)*ob]); err != nil {
			return nil, -1, err
		}
	}
	return out, k, nil
}

// commit truncates every packet and writes it to tensor t's DM on slice g
// through the commit sequencer (002 L2190-2313); a slice the bitmap does not
// enable receives nothing (002 L2314-2319).
func (r *sliceRun) commit(t *kernel.Tensor, c *kernel.CommitConfig, g int, in []byte) error {
	_, _, s := r.x.dev.SliceCoords(g)
	if c.SliceBitmap != nil && !c.SliceBitmap.Has(s) {
		return nil
	}
	pb := c.InPacketBytes
	if pb < 1 || len(in) != c.Steps*pb {
		return fmt.Errorf("commit: the stream holds %d bytes, the commit writes %d packets of %d bytes", len(in), c.Steps, pb)
	}
	if c.CommitSize < 1 || c.CommitSize*c.WritesPerStep > c.CommitInSize {
		return fmt.Errorf("commit: %d writes of %d bytes from a %d-byte packet", c.WritesPerStep, c.CommitSize, c.CommitInSize)
	}
	for step := 0; step < c.Steps; step++ {
		p, err := engines.CommitTruncate(c, in[step*pb:(step+1)*pb])
		if err != nil {
			return err
		}
		for w := 0; w < c.WritesPerStep; w++ {
			off, addr, err := engines.CommitWrite(c, step, w)
			if err != nil {
				return err
			}
			if err := r.x.dev.WriteDM(g, t.Addr+int64(addr), p[off:off+c.CommitSize]); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
	}
	return nil
}
