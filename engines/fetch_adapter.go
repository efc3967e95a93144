package engines

import (
	"fmt"
	"math"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// The Fetch Adapter (002 L1869-2118): masking, table indexing, type
// casting, zero-point subtraction and batching, in this order (002 L1870).
// deriveFetchAdapter fills kernel.FetchAdapterConfig from a FetchRequest;
// MaskedAt and FetchValue are the element-wise semantics the simulator
// applies to each fetched element.

// Fetch adapter rules (moving.md §4.3 IDs).
var (
	ruleFetchMaskScope = NewRule(Rule{ID: "FA-R2", Engine: "fetch", Name: "masking scope",
		Cite: "002 L1898-1902",
		Text: "masking covers the innermost axis with padding on both sides, (# n + A + # m), over the innermost entry (dim0) and at most one outer entry (last_dim)"})
	ruleFetchMaskLimit = NewRule(Rule{ID: "FA-R3", Engine: "fetch", Name: "masking limits",
		Cite: "002 L1902, L1924-1927",
		Text: "last_dim_rightmost_valid_count is 0-255 for 4-bit types and 0-31 for f32 (128 bytes of data); per-index counts (case 3) need last_dim of size 8 or less"})
)

// deriveFetchAdapter derives the adapter stages of a fetch.
func deriveFetchAdapter(spec *Spec, req FetchRequest, cfg *kernel.FetchConfig, src []seqEntry, zero bool) error {
	a := &cfg.Adapter
	a.Table = req.Table
	a.Cast = req.InType != req.OutType
	a.FetchesPerPacket = cfg.FetchesPerPacket
	if len(req.ZeroPoints) > 0 {
		want := 1
		if cfg.Interleave != nil {
			want = cfg.Interleave.Tensors
		}
		if len(req.ZeroPoints) != 1 && len(req.ZeroPoints) != want {
			return ruleFetchZeroPoint.Violate("%d zero points for %d tensors", len(req.ZeroPoints), want).With("zero_points", len(req.ZeroPoints))
		}
		if !req.InType.IsInt() || !req.OutType.IsInt() {
			return ruleFetchZeroPoint.Violate("zero-point subtraction needs integer data, got %s -> %s", req.InType, req.OutType)
		}
		lo, hi, _ := req.OutType.IntRange()
		for _, zp := range req.ZeroPoints {
			// zero_point: i8 (002 L2032, L2046) fitting the target type (002 L2117).
			if zp < math.MinInt8 || zp > math.MaxInt8 || int64(zp) < lo || int64(zp) > hi {
				return ruleFetchZeroPoint.Violate("zero point %d does not fit i8 and %s", zp, req.OutType).With("zero_point", zp)
			}
		}
		a.ZeroPoints = append([]int(nil), req.ZeroPoints...)
	}
	m, err := deriveMask(spec, req, cfg, src, zero)
	if err != nil {
		return err
	}
	a.Mask = m
	return nil
}

// deriveMask derives the masking of the stream's padding (002 L1877-1935).
// The hardware masks the innermost axis: dim0 is the innermost entry, which
// steps that axis by 1, and last_dim the entry iterating its blocks of dim0
// (the outer digit of the same axis), or the innermost entry itself when a
// padded term is read as one run (`A # 64`, 002 L1894). With data elements
// after lpad left-padding positions, block i keeps clamp(lpad + data -
// i·dim0, 0, dim0) elements. Stream padding of another shape is left
// unmasked (its values are arbitrary, 002 L1880) unless it is Zero padding or
// a left padding, which must be masked.
func deriveMask(spec *Spec, req FetchRequest, cfg *kernel.FetchConfig, src []seqEntry, zero bool) (*kernel.MaskConfig, error) {
	lpad, lpadAxis := 0, ""
	if req.LeftPad != nil {
		lpad, lpadAxis = req.LeftPad.N, req.LeftPad.Axis
	}
	must := zero || lpad > 0
	fail := func(format string, args ...any) (*kernel.MaskConfig, error) {
		if must {
			return nil, ruleFetchMaskScope.Violate(format, args...)
		}
		return nil, nil
	}
	if len(src) == 0 {
		return fail("no sequencer entry to mask")
	}
	last := len(src) - 1
	e0 := src[last]
	dim0 := e0.Size
	data, blocks, lastDim := 0, 1, last
	switch {
	case e0.padData > 0:
		data = e0.padData
		if lpad > 0 && e0.axis != lpadAxis {
			return fail("left padding of %s, but the innermost entry %s reads %q", lpadAxis, e0.Term, e0.axis)
		}
	case e0.axis != "" && e0.step == 1:
		data = e0.axisSize
		for k := 0; k < last; k++ {
			if src[k].axis != e0.axis {
				continue
			}
			if src[k].step != dim0 || blocks > 1 {
				return fail("axis %s is split over more than the innermost entry and one outer entry", e0.axis)
			}
			blocks, lastDim = src[k].Size, k
		}
		if lpad > 0 && e0.axis != lpadAxis {
			return fail("left padding of %s, but the innermost entry reads %s", lpadAxis, e0.axis)
		}
	default:
		return fail("the innermost entry %s does not step one axis by 1", e0.Term)
	}
	if lpad+data > dim0*blocks || lpad >= dim0 {
		return fail("left padding %d and %d data elements do not fit %d blocks of %d", lpad, data, blocks, dim0)
	}
	counts := make([]int, blocks)
	partial, masked := 0, lpad > 0
	for i := range counts {
		v := max(0, min(lpad+data-i*dim0, dim0))
		counts[i] = v
		masked = masked || v < dim0
		if i < blocks-1 && v < dim0 {
			partial++
		}
	}
	if !masked {
		if zero {
			return fail("Zero padding outside the innermost axis %s cannot be masked", e0.Term)
		}
		return nil, nil
	}
	if req.Context != kernel.CtxMain {
		if must {
			return nil, ruleFetchSubStages.Violate("masking is not available in the sub context")
		}
		return nil, nil
	}
	m := &kernel.MaskConfig{LastDim: lastDim, LeftPad: lpad, Dim0: dim0, ValidCountDim: -1, PadValue: 0}
	if partial == 0 {
		m.ValidCounts = []int{counts[blocks-1]}
	} else {
		if lim := spec.Fetch.MaskPerIndexMaxAxis.Value; blocks > lim {
			return nil, ruleFetchMaskLimit.Violate("per-index masking over %d blocks, at most %d", blocks, lim).With("blocks", blocks).With("limit", lim)
		}
		m.ValidCountDim = lastDim
		m.ValidCounts = counts
	}
	// The count limits, 255 for 4-bit types and 31 for f32, are both 128
	// bytes of data (002 L1902; docs/spec-decisions.md "Fetch masking
	// parameters").
	maxCount := (spec.Fetch.MaskValidCountMax4Bit.Value+1)*4/req.InType.SizeBits() - 1
	for _, c := range m.ValidCounts {
		if c > maxCount {
			return nil, ruleFetchMaskLimit.Violate("valid count %d exceeds %d for %s", c, maxCount, req.InType).With("count", c).With("limit", maxCount)
		}
	}
	return m, nil
}

// MaskedAt reports whether the adapter masks stream position p of a fetch
// configured by seq (002 L1902): the element index j inside the innermost
// entry (dim0) and the index i of LastDim decide; the first LeftPad elements
// of block 0 and the elements from the valid count on are masked. It does
// not allocate.
func MaskedAt(m *kernel.MaskConfig, seq *kernel.SeqConfig, p int) bool {
	if m == nil || len(seq.Entries) == 0 || m.Dim0 <= 0 {
		return false
	}
	last := len(seq.Entries) - 1
	j := p % m.Dim0
	i, n := 0, 1
	if m.LastDim != last && m.LastDim >= 0 && m.LastDim < last {
		q := p
		for k := last; k > m.LastDim; k-- {
			q /= seq.Entries[k].Size
		}
		n = seq.Entries[m.LastDim].Size
		i = q % n
	}
	if i == 0 && j < m.LeftPad {
		return true
	}
	if m.ValidCountDim >= 0 {
		return i < len(m.ValidCounts) && j >= m.ValidCounts[i]
	}
	return i == n-1 && len(m.ValidCounts) == 1 && j >= m.ValidCounts[0]
}

// FetchValue applies the adapter's element-wise stages to one fetched value
// v of cfg.InType from interleaved tensor `tensor` (0 without
// interleaving): table indexing (table[bit pattern of v], 002 L1938), type
// casting (002 L1960-1994) and zero-point subtraction in the output type
// (002 L2022-2049). Masking is positional (MaskedAt): a masked element is
// the mask's pad value. table may be nil when cfg.Adapter.Table is false.
func FetchValue(cfg *kernel.FetchConfig, v float64, tensor int, table []float64) (float64, error) {
	a := &cfg.Adapter
	if a.Table {
		bits, err := cfg.InType.Encode(v)
		if err != nil {
			return 0, err
		}
		key := int(bits & (1<<cfg.InType.Bits() - 1))
		if key >= len(table) {
			return 0, fmt.Errorf("fetch: table of %d entries has no entry %d", len(table), key)
		}
		v = table[key]
	}
	out, err := dtype.Convert(v, cfg.InType, cfg.OutType)
	if err != nil {
		return 0, err
	}
	if len(a.ZeroPoints) > 0 {
		zp := a.ZeroPoints[0]
		if len(a.ZeroPoints) > 1 {
			if tensor < 0 || tensor >= len(a.ZeroPoints) {
				return 0, fmt.Errorf("fetch: no zero point for tensor %d", tensor)
			}
			zp = a.ZeroPoints[tensor]
		}
		r, err := dtype.RoundInt(int64(out)-int64(zp), cfg.OutType)
		if err != nil {
			return 0, err
		}
		out = float64(r)
	}
	return out, nil
}
