package cost

import (
	"math/bits"

	"tcpmap/model/kernel"
)

// Translation-invariant DMA prices. A tiled program repeats one DMA move on
// many HBM tile views: the same descriptors at another HBM base. The price
// of such a batch is the same for every tile, and the DMA cache keys it once.
//
// Why the price does not move. The HBM address map is linear over GF(2):
// every location field is a list of address bits, each channel bit the XOR
// of some address bits (002 L2961-2977), so decode(a XOR δ) = decode(a) XOR
// decode(δ) (hbmDecoder is built that way and checks it against the spec).
// Let δ be a multiple of the 256-byte request (002 L2469) each of whose
// bits has one value over all the HBM byte addresses of one descriptor
// side (the value may differ between sides). Then a ↦ a XOR δ moves each
// HBM side by a constant, base ↦ base XOR δ, and the translated batch (DM
// and SPM sides unchanged) is again a batch of descriptors. Replacing every
// HBM address a by a XOR δ
//
//   - keeps every request's split into 256-byte units, which units are
//     partially written (RMW, 002 L2985) and which reads cross a unit
//     boundary (002 L2984): these depend on the address modulo 256 only;
//   - keeps the order in which requests reach the channels: the engine
//     ports' round robin depends on the descriptors' loops, executing
//     DMNs, Exec numbers and DM sides, never on HBM addresses;
//   - relabels channels, banks and rows by one fixed XOR for the whole
//     batch: a bijection that keeps "same channel", "same bank", "same
//     row". The model only compares these labels for equality (open-row
//     tags, per-channel tallies, the rows an FR-FCFS window batches per
//     bank), and goes over channels, and a window's banks, in the order
//     they were first touched (finish, flush), which the relabelling keeps;
//     each channel sees the same sequence of float additions, so its
//     cycles are bit-identical. The read and write caps count units per
//     chip.
//
// The one choice that orders labels, hbmChannels.flush's pick among the
// slice × bank-group keys of a window with as many commands, goes to the
// key whose first command arrived first (first-come, first-served), not to
// the lowest key; otherwise it compares keys and their slices for
// equality only. Arrival order does not move under the relabelling, so
// flush issues identically (TestIssueRelabelled).
//
// The DMN busy time, the misaligned DM writes and the PCIe bound read the DM
// side and the byte counts only; the alignment findings print counts and
// cycles, not addresses. So every number of DMAEstimate, of each
// DescriptorEstimate and of the batch's findings is invariant, and so are
// the batch's command ends computed from them.
//
// The cache key is canonical: the batch XOR δ where δ holds the first HBM
// side's values of the allowed bits fixed on every HBM side (one δ for the
// whole batch: its descriptors are never normalised separately). Every
// translation of a batch B by such bits has the same key; the entry holds
// the price of the batch that was priced, which equals that of every batch
// with its key that lies in HBM. Fixed bits are found cheaply from the loops
// (hbmFixedBits), conservatively: a bit missed only costs cache hits, never
// exactness.

// newShiftMask returns the address bits a cache translation may use: the
// bits at or above the request size, below the HBM size. Zero (no
// translation) when the request size is not a power of two.
func newShiftMask(d *hbmDecoder, reqBytes int) uint64 {
	if reqBytes <= 0 || reqBytes&(reqBytes-1) != 0 {
		return 0
	}
	var mask uint64
	for b := bits.TrailingZeros(uint(reqBytes)); b < 64; b++ {
		a := uint64(1) << uint(b)
		if a >= d.bytes {
			break
		}
		mask |= a
	}
	return mask
}

// hbmShift returns the translation δ by which the batch ds is keyed: the
// batch with every HBM byte address a replaced by a XOR δ. δ is made of
// allowed bits (m.shiftMask) each of which is constant over every HBM side
// of the batch (though not necessarily of the same value on every side), so
// that XOR by δ moves each side by a constant: a XOR δ = a + (base XOR δ)
// − base. δ takes those bits' values on the batch's first HBM side, so
// every translation B XOR δ' (δ' of such bits) of a batch B yields the same
// key. It is 0 when the batch has no HBM side, when an HBM side reaches
// outside HBM or a descriptor is malformed (pricing reports the error), or
// when no allowed bit is constant. It does not allocate.
func (m *DMAModel) hbmShift(ds []kernel.DMADescriptor) uint64 {
	if m.shiftMask == 0 {
		return 0
	}
	fixed, first := m.shiftMask, uint64(0)
	hbmSides := 0
	var w walker
	side := func(base int, strides []int, stride0 int) bool {
		f, ok := m.hbmFixedBits(&w, base, strides, stride0)
		if !ok {
			return false
		}
		if hbmSides == 0 {
			first = uint64(base)
		}
		fixed &= f
		hbmSides++
		return true
	}
	for i := range ds {
		d := &ds[i]
		if d.Src.Kind != kernel.MediaHBM && d.Dst.Kind != kernel.MediaHBM {
			continue
		}
		if m.check(d) != nil || w.init(d, m.reqBytes) != nil {
			return 0
		}
		if d.Src.Kind == kernel.MediaHBM && !side(w.src, w.sstride[:w.n], d.Stride0) {
			return 0
		}
		if d.Dst.Kind == kernel.MediaHBM && !side(w.dst, w.dstride[:w.n], d.Stride0) {
			return 0
		}
	}
	if hbmSides == 0 {
		return 0
	}
	return first & fixed
}

// hbmFixedBits returns bits that have the same value (base's) in every byte
// address of one HBM side of a descriptor: packets at base + Σ
// idx_i·strides_i (0 ≤ idx_i < w.size[i]), each of stride0 bytes, base
// itself among them. ok is false when the side reaches outside HBM.
//
// When the packet bytes and every loop's offsets occupy disjoint bit ranges
// none of which base has set, every address is base | offset: the bits
// outside those ranges are fixed. Otherwise every address lies in
// [lo, hi], and the bits above the highest bit where lo and hi differ are
// fixed. The result depends on base only through the bits it returns, so a
// translated side gets the same mask.
func (m *DMAModel) hbmFixedBits(w *walker, base int, strides []int, stride0 int) (uint64, bool) {
	limit := int(m.dec.bytes)
	if base < 0 || base >= limit || stride0 <= 0 || stride0 > limit {
		return 0, false
	}
	lo, hi := base, base+stride0-1
	used := uint64(1)<<uint(bits.Len(uint(stride0-1))) - 1
	disjoint := true
	for i, s := range strides {
		n := w.size[i]
		if n <= 1 || s == 0 {
			continue
		}
		a := s
		if a < 0 {
			a = -a
			disjoint = false
		}
		if n-1 > limit/a {
			return 0, false
		}
		span := (n - 1) * a
		if s > 0 {
			hi += span
		} else {
			lo -= span
		}
		r := (uint64(1)<<uint(bits.Len(uint(span))) - 1) &^ (uint64(1)<<uint(bits.TrailingZeros(uint(a))) - 1)
		if used&r != 0 {
			disjoint = false
		}
		used |= r
	}
	if lo < 0 || hi >= limit {
		return 0, false
	}
	if disjoint && uint64(base)&used == 0 {
		return ^used, true
	}
	return ^(uint64(1)<<uint(bits.Len(uint(lo^hi))) - 1), true
}

// shiftHBM returns ds with every HBM base XORed with delta, in m's scratch
// slice (the loops are shared with ds).
func (m *Model) shiftHBM(ds []kernel.DMADescriptor, delta uint64) []kernel.DMADescriptor {
	m.canon = append(m.canon[:0], ds...)
	for i := range m.canon {
		d := &m.canon[i]
		if d.Src.Kind == kernel.MediaHBM {
			d.SrcBase ^= int(delta)
		}
		if d.Dst.Kind == kernel.MediaHBM {
			d.DstBase ^= int(delta)
		}
	}
	return m.canon
}

// zeroHBM returns ds with every HBM base 0, in m's scratch slice (the
// loops are shared with ds).
func (m *Model) zeroHBM(ds []kernel.DMADescriptor) []kernel.DMADescriptor {
	m.canon = append(m.canon[:0], ds...)
	for i := range m.canon {
		d := &m.canon[i]
		if d.Src.Kind == kernel.MediaHBM {
			d.SrcBase = 0
		}
		if d.Dst.Kind == kernel.MediaHBM {
			d.DstBase = 0
		}
	}
	return m.canon
}
