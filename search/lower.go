package search

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"tcpmap/model/dtype"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// lowerer lowers the programs of many candidates with engines.Lower, op by
// op, remembering each op's result: candidates share most of their ops
// (the DMA moves, the TRF load), so each distinct op is derived once. An op
// is lowered in a program of its own that holds only the tensors it names,
// which gives the same result as lowering it in place: engines.Lower
// derives a DMA command from its two tensors and a chain stage by stage
// from its begin tensor (002 L1704-1705), and keeps configurations a
// program states.
type lowerer struct {
	spec *engines.Spec
	memo map[string]*opLowered
	key  strings.Builder
	// moved memoizes DMA ops by their key with each HBM address taken
	// modulo relocAlign (relocation below); relocAlign 0 disables it.
	moved      map[string]*movedDMA
	relocAlign int64
	// tensors indexes the program being lowered by tensor name.
	tensors map[string]*kernel.Tensor
	// texts caches the printed form of the expressions keys name (a
	// program's tile views share their mappings).
	texts map[*mapping.Expr]string
	// hits and misses count memo lookups; relocs the hits found by
	// relocation.
	hits, misses, relocs int
	// limit is the memo's bound (maxLowered).
	limit int
}

// opLowered is the result of lowering one op.
type opLowered struct {
	dma     *kernel.DMACommand
	configs []*kernel.StageConfig
	err     *engines.LowerError
}

// movedDMA is a lowered DMA command and the HBM addresses of its source
// and destination when it was derived.
type movedDMA struct {
	dma              *kernel.DMACommand
	srcAddr, dstAddr int64
}

func newLowerer(spec *engines.Spec) *lowerer {
	l := &lowerer{spec: spec, memo: map[string]*opLowered{}, tensors: map[string]*kernel.Tensor{}, moved: map[string]*movedDMA{},
		texts: map[*mapping.Expr]string{}, limit: maxLowered}
	// The relocation block: the least common multiple of every DMA
	// address alignment (002 L2425-2427, L2837).
	l.relocAlign = 1
	d := &spec.DMA
	for _, a := range []int{d.HBMReadAlignBytes.Value, d.HBMWriteAlignBytes.Value, d.HBMPacketAlignBytes.Value,
		d.DMReadAlignBytes.Value, d.DMWriteAlignBytes.Value, d.DMPacketAlignBytes.Value, d.HBMToDMAlignBytes.Value} {
		if a <= 0 || a > 1<<20 {
			l.relocAlign = 0
			break
		}
		l.relocAlign = l.relocAlign / dtype.GCD(l.relocAlign, int64(a)) * int64(a)
	}
	return l
}

// lower lowers p in place, or returns the first op's error as
// engines.Lower would (a *engines.LowerError locating the op and stage).
func (l *lowerer) lower(p *kernel.Program) error {
	clear(l.tensors)
	for _, t := range p.Tensors {
		l.tensors[t.Name] = t
	}
	for i, op := range p.Ops {
		r := l.lowered(p, op)
		if r.err != nil {
			e := *r.err
			e.Op = i
			return &e
		}
		if op.Kind == kernel.OpChain {
			for s, st := range op.Stages {
				st.Config = r.configs[s]
			}
		} else {
			op.DMA = r.dma
		}
	}
	// The handoffs, DMA commands as engines.Lower lowers them (after the
	// ops, its error naming the handoff).
	for i, op := range p.Handoff {
		if op.DMA != nil {
			continue
		}
		r := l.lowered(p, op)
		if r.err != nil {
			return fmt.Errorf("handoff[%d] (%s): %w", i, op.Kind, r.err.Err)
		}
		op.DMA = r.dma
	}
	return nil
}

// lowered is op's lowering: memoized, relocated from an earlier one at
// other HBM addresses, or derived.
func (l *lowerer) lowered(p *kernel.Program, op *kernel.Op) *opLowered {
	k := l.opKey(p, op, false)
	if r, ok := l.memo[k]; ok {
		l.hits++
		return r
	}
	if r := l.relocated(p, op); r != nil {
		l.hits++
		l.relocs++
		l.store(k, r)
		return r
	}
	l.misses++
	r := l.lowerOne(p, op)
	l.store(k, r)
	l.remember(p, op, r)
	return r
}

// store memoizes r under key k, emptying full memos (maxLowered).
func (l *lowerer) store(k string, r *opLowered) {
	if len(l.memo) >= l.limit {
		clear(l.memo)
		clear(l.moved)
	}
	l.memo[k] = r
}

// lowerOne lowers op alone.
func (l *lowerer) lowerOne(p *kernel.Program, op *kernel.Op) *opLowered {
	q := &kernel.Program{Name: p.Name, Axes: p.Axes, Chips: p.Chips}
	seen := map[string]bool{}
	add := func(name string) {
		if name == "" || seen[name] {
			return
		}
		if t, ok := l.tensors[name]; ok {
			seen[name] = true
			q.Tensors = append(q.Tensors, t)
			if t.View != "" && !seen[t.View] {
				// A view is checked against the tensor it views.
				if b, ok := l.tensors[t.View]; ok {
					seen[t.View] = true
					q.Tensors = append(q.Tensors, b)
				}
			}
		}
	}
	o := *op
	o.Stages = nil
	add(op.Src)
	add(op.Dst)
	for _, st := range op.Stages {
		s := *st
		o.Stages = append(o.Stages, &s)
		add(st.Tensor)
		add(st.InterleavedTensor())
	}
	q.Ops = []*kernel.Op{&o}
	err := engines.Lower(l.spec, q)
	if err != nil {
		var le *engines.LowerError
		if !errors.As(err, &le) {
			le = &engines.LowerError{Stage: -1, Kind: string(op.Kind), Err: err}
		}
		return &opLowered{err: le}
	}
	r := &opLowered{dma: o.DMA}
	for _, st := range o.Stages {
		r.configs = append(r.configs, st.Config)
	}
	return r
}

// Relocation. A tiled program moves one tile view after another: the same
// DMA op at other HBM addresses. engines.Lower uses an HBM tensor's address
// only as the base of its descriptors' HBM side (an offset added to each
// base), in the alignment checks of those bases (DMA-R1: every alignment
// divides relocAlign, their least common multiple, so an address modulo
// relocAlign decides them) and in the capacity check (DMA-R10: the
// element part ends within HBM). So a DMA
// op whose HBM addresses agree with an earlier lowering's modulo
// relocAlign, and whose HBM tensors end within HBM, lowers to that
// lowering's descriptors with each HBM base moved by its tensor's address
// difference. Only successful lowerings are relocated; an op that fails is
// lowered itself, so its error names its own addresses.

// relocated returns op's lowering moved from an earlier lowering of the op
// at other HBM addresses, or nil.
func (l *lowerer) relocated(p *kernel.Program, op *kernel.Op) *opLowered {
	if l.relocAlign == 0 || op.Kind == kernel.OpChain {
		return nil
	}
	src, dst := l.tensors[op.Src], l.tensors[op.Dst]
	if src == nil || dst == nil || !l.inHBM(src) || !l.inHBM(dst) {
		return nil
	}
	m, ok := l.moved[l.opKey(p, op, true)]
	if !ok {
		return nil
	}
	ds := src.Addr - m.srcAddr
	dd := dst.Addr - m.dstAddr
	c := *m.dma
	c.Descriptors = append([]kernel.DMADescriptor(nil), m.dma.Descriptors...)
	for i := range c.Descriptors {
		d := &c.Descriptors[i]
		if d.Src.Kind == kernel.MediaHBM {
			d.SrcBase += int(ds)
		}
		if d.Dst.Kind == kernel.MediaHBM {
			d.DstBase += int(dd)
		}
	}
	return &opLowered{dma: &c}
}

// remember records a successful DMA lowering for relocation.
func (l *lowerer) remember(p *kernel.Program, op *kernel.Op, r *opLowered) {
	if l.relocAlign == 0 || op.Kind == kernel.OpChain || r.err != nil || r.dma == nil {
		return
	}
	src, dst := l.tensors[op.Src], l.tensors[op.Dst]
	if src == nil || dst == nil {
		return
	}
	k := l.opKey(p, op, true)
	if _, ok := l.moved[k]; !ok {
		l.moved[k] = &movedDMA{dma: r.dma, srcAddr: src.Addr, dstAddr: dst.Addr}
	}
}

// inHBM reports whether t is not in HBM, or lies in HBM (nonnegative
// address, its element part ending within HBM): the checks the lowering
// makes of an HBM address beyond its alignment.
func (l *lowerer) inHBM(t *kernel.Tensor) bool {
	if t.Mem != kernel.HBM {
		return true
	}
	if t.Addr < 0 || t.Element == nil {
		return false
	}
	n, err := t.DType.BytesFor(t.Element.Size())
	return err == nil && t.Addr+int64(n) <= l.spec.HBM.Bytes.Value
}

// maxLowered bounds the memo of lowered ops (and the relocation memo): a
// full memo is emptied. A lowered op holds its configurations or DMA
// descriptors, tens of kilobytes: unbounded, the memos of a search over
// every digit order of the decode layer's qk held gigabytes.
const maxLowered = 1 << 13

// maxTexts bounds the printed-expression cache; a full cache is emptied.
const maxTexts = 1 << 16

// text returns e.String(), cached by the expression (expressions are
// immutable).
func (l *lowerer) text(e *mapping.Expr) string {
	if t, ok := l.texts[e]; ok {
		return t
	}
	if len(l.texts) >= maxTexts {
		clear(l.texts)
	}
	t := e.String()
	l.texts[e] = t
	return t
}

// opKey is a string that determines an op's lowering: its kind, context,
// stages and every property of the tensors it names; with reloc, an HBM
// tensor's address only modulo relocAlign (relocation).
func (l *lowerer) opKey(p *kernel.Program, op *kernel.Op, reloc bool) string {
	b := &l.key
	b.Reset()
	b.WriteString(string(op.Context))
	b.WriteByte('|')
	b.WriteString(string(op.Kind))
	tensor := func(name string) {
		b.WriteString("|T")
		t, ok := l.tensors[name]
		if !ok {
			b.WriteString("?" + name)
			return
		}
		b.WriteString(string(t.Mem))
		b.WriteByte(',')
		b.WriteString(t.DType.String())
		for _, e := range []*mapping.Expr{t.Chip, t.Cluster, t.Slice, t.Row, t.Element} {
			b.WriteByte(',')
			if e != nil {
				b.WriteString(l.text(e))
			}
		}
		b.WriteByte(',')
		if reloc && t.Mem == kernel.HBM {
			b.WriteString("~")
			b.WriteString(strconv.FormatInt(t.Addr%l.relocAlign, 10))
		} else {
			b.WriteString(strconv.FormatInt(t.Addr, 10))
		}
		b.WriteByte(',')
		b.WriteString(string(t.TrfAddress))
		b.WriteByte(',')
		b.WriteString(t.View)
	}
	if op.Kind != kernel.OpChain {
		tensor(op.Src)
		tensor(op.Dst)
		return b.String()
	}
	for _, st := range op.Stages {
		b.WriteString("|S")
		b.WriteString(string(st.Kind))
		if st.Tensor != "" {
			tensor(st.Tensor)
		}
		if it := st.InterleavedTensor(); it != "" {
			// An interleaved begin's second tensor (its address sets the
			// sequencer's interleave step).
			tensor(it)
		}
		b.WriteByte(',')
		if st.DType != 0 {
			b.WriteString(st.DType.String())
		}
		for _, e := range []*mapping.Expr{st.Time, st.Packet, st.Slice} {
			b.WriteByte(',')
			if e != nil {
				b.WriteString(l.text(e))
			}
		}
		b.WriteByte(',')
		b.WriteString(st.Param)
		b.WriteByte(',')
		b.WriteString(st.Axis)
	}
	return b.String()
}
