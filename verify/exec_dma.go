package verify

import (
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The executor's DMA commands: descriptors moved packet by packet.

// runDMA executes a DMA command's descriptors, packet by packet.
func (x *Executor) runDMA(op *kernel.Op) error {
	cmd := op.DMA
	stride := cmd.SliceStride
	if stride <= 0 {
		stride = x.spec.DMA.SliceStrideBytes.Value // slice_stride, 002 L2541
	}
	src, _ := x.prog.Tensor(op.Src)
	dst, _ := x.prog.Tensor(op.Dst)
	var srcTaint, dstTaint []bool
	if src.Mem != kernel.HBM {
		srcTaint = x.taint(src.Name)
	}
	if dst.Mem != kernel.HBM {
		dstTaint = x.taint(dst.Name)
	}
	var origin []int32
	var elemBits int64
	// The output's origins are kept by its own element positions, also
	// when a tile view of it (Tensor.View) is written.
	out := dst
	if dst.View != "" {
		if b, ok := x.prog.Tensor(dst.View); ok {
			out = b
		}
	}
	if out.Mem == kernel.HBM && x.prog.Reference != nil && out.Name == x.prog.Reference.Output {
		n := out.Chip.Size() * out.Element.Size()
		if origin = x.origin[out.Name]; origin == nil {
			origin = make([]int32, n)
			x.origin[out.Name] = origin
			srcs := make([]int64, n)
			for i := range srcs {
				srcs[i] = -1
			}
			x.originSrc[out.Name] = srcs
		}
		elemBits = int64(out.DType.SizeBits())
	}
	// Data read from slices that did not run taints what it is written to;
	// a destination slice is clean again once a clean packet lands there
	// and no tainted one does.
	written := map[int]bool{}
	index, indexTainted, err := x.gatherIndex(op)
	if err != nil {
		return err
	}
	var buf []byte
	for di := range cmd.Descriptors {
		d := &cmd.Descriptors[di]
		if cap(buf) < d.Stride0 {
			buf = make([]byte, d.Stride0)
		}
		b := buf[:d.Stride0]
		for q := 0; q < d.Packets; q++ {
			sa, da, err := engines.DMAPacketIndexed(d, q, index)
			if err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
			sg, err := x.dmaRead(d.Src, int64(sa), stride, b)
			if err != nil {
				return fmt.Errorf("%s: packet %d: read: %w", d, q, err)
			}
			tainted := (srcTaint != nil && sg >= 0 && srcTaint[sg]) || (src.Mem == kernel.HBM && x.hbmTainted[src.Name]) || indexTainted
			if bs, lo := x.hbmOwnBytes(src, d.Src, int64(sa)); bs != nil {
				tainted = tainted || bs.any(lo, int64(d.Stride0))
			}
			dg, err := x.dmaWrite(d.Dst, int64(da), stride, b)
			if err != nil {
				return fmt.Errorf("%s: packet %d: write: %w", d, q, err)
			}
			bs, lo := x.hbmOwnBytes(dst, d.Dst, int64(da))
			switch {
			case dstTaint != nil && dg >= 0:
				if !written[dg] {
					written[dg] = true
					dstTaint[dg] = false
				}
				dstTaint[dg] = dstTaint[dg] || tainted
			case bs != nil:
				bs.set(lo, int64(d.Stride0), tainted)
			case tainted:
				x.hbmTainted[dst.Name] = true
				x.hbmTainted[out.Name] = true
			}
			if origin != nil {
				o := originHBM
				switch {
				case tainted:
					o = originTainted
				case src.Mem != kernel.HBM:
					o = int32(sg + 1)
				}
				per := int64(out.Element.Size())
				lo := (int64(da) - out.Addr) * 8 / elemBits
				hi := (int64(da)+int64(d.Stride0)-out.Addr)*8 + elemBits - 1
				hi /= elemBits
				base := int64(d.Dst.Dmn.Chip) * per
				srcs := x.originSrc[out.Name]
				for e := max(lo, 0); e < min(hi, per); e++ {
					origin[base+e] = o
					srcs[base+e] = -1
					if src.Mem != kernel.HBM && elemBits >= 8 {
						b := int64(sa)%int64(stride) + out.Addr + e*elemBits/8 - int64(da)
						srcs[base+e] = int64(sg)<<32 | b
					}
				}
			}
		}
	}
	return nil
}

// gatherIndex returns the lookup of a gather's index tensor (op.Index,
// engines.DMAPacketIndexed): position p is the tensor's p-th element in
// HBM, read when the command runs (docs/spec-decisions.md "Gather: the
// DMA's indirect loop"); nil for a plain copy. tainted is set when the
// index holds data from slices that did not run.
func (x *Executor) gatherIndex(op *kernel.Op) (engines.IndexLookup, bool, error) {
	if op.Index == "" {
		return nil, false, nil
	}
	t, ok := x.prog.Tensor(op.Index)
	if !ok || t.Mem != kernel.HBM || !t.DType.IsInt() {
		return nil, false, fmt.Errorf("gather index %q: not an integer HBM tensor", op.Index)
	}
	bits := t.DType.SizeBits()
	if bits%8 != 0 || bits > 32 {
		return nil, false, fmt.Errorf("gather index %q: %s elements are not whole bytes of at most 4", op.Index, t.DType)
	}
	n := t.Element.Size()
	raw := make([]byte, n*bits/8)
	if err := x.dev.ReadHBM(0, t.Addr, raw); err != nil {
		return nil, false, fmt.Errorf("gather index %q: %w", op.Index, err)
	}
	vals := make([]int, n)
	for i := range vals {
		var p uint32
		for b := bits/8 - 1; b >= 0; b-- {
			p = p<<8 | uint32(raw[i*bits/8+b])
		}
		v, err := t.DType.Decode(p)
		if err != nil {
			return nil, false, fmt.Errorf("gather index %q: %w", op.Index, err)
		}
		vals[i] = int(v)
	}
	if rows := op.ScatterRows(); rows > 0 {
		// Each destination row written once (DMA-R17).
		if err := engines.ScatterOnce(op.Index, vals, rows); err != nil {
			return nil, false, err
		}
	}
	look := func(ix *kernel.DMAIndex, pos int) (int, error) {
		if pos < 0 || pos >= len(vals) {
			return 0, fmt.Errorf("gather index %q has %d values, position %d asked", ix.Tensor, len(vals), pos)
		}
		return vals[pos], nil
	}
	return look, x.hbmTainted[t.Name], nil
}

// hbmOwnBytes returns, while sampling, the byte taint of t when it is an
// HBM tensor of the kernel's own (Executor.hbmBytes) and the index of the
// byte at HBM address addr of media m's chip in it; nil otherwise.
func (x *Executor) hbmOwnBytes(t *kernel.Tensor, m kernel.DMAMedia, addr int64) (byteTaint, int64) {
	if x.run == nil || t.Mem != kernel.HBM || t.Role != kernel.Intermediate || t.View != "" {
		return nil, 0
	}
	per, err := t.DType.BytesFor(t.Element.Size())
	if err != nil {
		return nil, 0
	}
	bs := x.hbmBytes[t.Name]
	if bs == nil {
		bs = make(byteTaint, (int64(per)*int64(t.Chip.Size())+63)/64)
		x.hbmBytes[t.Name] = bs
	}
	return bs, int64(m.Dmn.Chip)*int64(per) + addr - t.Addr
}

// byteTaint holds a bit a byte, set where the byte holds tainted data.
type byteTaint []uint64

// any reports whether a byte of [lo, lo+n) is tainted.
func (b byteTaint) any(lo, n int64) bool {
	for i := max(lo, 0); i < min(lo+n, int64(len(b))*64); i++ {
		if b[i/64]&(1<<uint(i%64)) != 0 {
			return true
		}
	}
	return false
}

// set marks the bytes of [lo, lo+n) tainted or clean.
func (b byteTaint) set(lo, n int64, tainted bool) {
	for i := max(lo, 0); i < min(lo+n, int64(len(b))*64); i++ {
		if tainted {
			b[i/64] |= 1 << uint(i%64)
		} else {
			b[i/64] &^= 1 << uint(i%64)
		}
	}
}

// dmaMedia resolves a DMA media and address to a device memory: HBM(chip)
// addresses are the chip's; DM(chip, cluster, dmn) addresses are the
// cluster's virtual address slice·slice_stride + byte (002 L2541). It
// returns the global slice for DM (-1 for HBM) and the address within it.
func (x *Executor) dmaMedia(m kernel.DMAMedia, addr int64, stride int) (int, int64, error) {
	switch m.Kind {
	case kernel.MediaHBM:
		return -1, addr, nil
	case kernel.MediaDM:
		if addr < 0 {
			return 0, 0, fmt.Errorf("DM address %d", addr)
		}
		g, ok := x.dev.SliceIndex(m.Dmn.Chip, m.Dmn.Cluster, int(addr/int64(stride)))
		if !ok {
			return 0, 0, fmt.Errorf("DM address %d of %s names no slice of the device", addr, m)
		}
		return g, addr % int64(stride), nil
	}
	return 0, 0, fmt.Errorf("%s media: %w", m.Kind, engines.ErrNotModelled)
}

func (x *Executor) dmaRead(m kernel.DMAMedia, addr int64, stride int, b []byte) (int, error) {
	g, a, err := x.dmaMedia(m, addr, stride)
	if err != nil {
		return 0, err
	}
	if g < 0 {
		return g, x.dev.ReadHBM(m.Dmn.Chip, a, b)
	}
	return g, x.dev.ReadDM(g, a, b)
}

func (x *Executor) dmaWrite(m kernel.DMAMedia, addr int64, stride int, b []byte) (int, error) {
	g, a, err := x.dmaMedia(m, addr, stride)
	if err != nil {
		return 0, err
	}
	if g < 0 {
		return g, x.dev.WriteHBM(m.Dmn.Chip, a, b)
	}
	return g, x.dev.WriteDM(g, a, b)
}

// maxStreamBytes bounds one slice's stream between two stages. It is a
// limit of the simulator, not of the hardware, far above what the 512 KB of
// a slice's DM feeds through any real chain; a malformed configuration
// beyond it is an error, not an attempt to allocate.
const maxStreamBytes = 1 << 28

// streamSize is the product of factors, or an error when a factor is
// negative or the product exceeds maxStreamBytes.
func streamSize(factors ...int) (int, error) {
	n := 1
	for _, f := range factors {
		if f < 0 {
			return 0, fmt.Errorf("negative stream dimension %d", f)
		}
		if f != 0 && n > maxStreamBytes/f {
			return 0, fmt.Errorf("a stream beyond the simulator's limit of %d bytes per slice", maxStreamBytes)
		}
		n *= f
	}
	return n, nil
}
