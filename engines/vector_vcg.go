package engines

import (
	"errors"
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Valid Count Generator (002 L5574-6582): it tags each 8-element flit
// entering the Vector Engine with the number of its lanes that hold data,
// so that the intra-slice reduce leaves a padded reduce axis's padding out
// (002 L5376-5377). The compiler configures it from the reduce axis's
// placement across Slice, Time and Packet (002 L5582); DeriveVCG does, for
// the placements the hardware can express (002 L6520-6571), and refuses
// the others with the manual's reasons.

var (
	ruleVCGPacket = NewRule(Rule{ID: "VCG-R2", Engine: "vector", Name: "reduce axis in Packet",
		Cite: "002 L5613, L6002-6103",
		Text: "a padded reduce axis in Packet occurs once, as the innermost part occupying the packet's first lanes, alone (the rest padding): the valid count is a prefix of the flit"})
	ruleVCGSliceOrder = NewRule(Rule{ID: "VCG-R3", Engine: "vector", Name: "slice strides ascending",
		Cite: "002 L5611, L5709-5712, L5837-5870",
		Text: "several parts of a padded reduce axis in Slice have strides ascending from inner to outer, so that each slice's range of the axis is contiguous and validity is monotonic in the slice"})
	ruleVCGSliceTime = NewRule(Rule{ID: "VCG-R4", Engine: "vector", Name: "slice and time nest",
		Cite: "002 L5845, L5871-5902",
		Text: "the Slice and Time parts of a padded reduce axis form one outer and one inner part; a Time-Slice-Time interleave needs per-slice thresholds the VCG does not have"})
	ruleVCGTransposed = NewRule(Rule{ID: "VCG-R5", Engine: "vector", Name: "transposed time count",
		Cite: "002 L5734-5739, L5778-5809, L6485-6505",
		Text: "with the inner part of the reduce axis in Slice and the outer in Time, the Time part's size is ceil(n / slice count)"})
	ruleVCGSlicePacket = NewRule(Rule{ID: "VCG-R6", Engine: "vector", Name: "slice and packet",
		Cite: "002 L6131-6165, L6520-6547",
		Text: "a padded reduce axis split across Slice and Packet is unsupported unless its size is a multiple of its lanes per packet: the packet's valid count cannot vary by slice"})
	ruleVCGCounters = NewRule(Rule{ID: "VCG-R7", Engine: "vector", Name: "counters",
		Cite: "002 L6202, L6213, L6548-6555",
		Text: "the VCG's sequencer has at most 8 counters"})
	ruleVCGGate = NewRule(Rule{ID: "VCG-R9", Engine: "vector", Name: "one threshold per gate",
		Cite: "002 L6300-6312, L6454-6458",
		Text: "a gate classifies slices by one threshold on slice & mask: the reduce axis's Slice parts are power-of-two bit fields of the slice number"})
)

// VCGValidCount is vc(s, t), the valid lanes of flit t on slice s (002
// L6182-6196, L6279, L6312, L6326-6331): the counters decompose t (c_0
// fastest), each dimension's index is Σ c_i·σ_i over its counters, the
// packet dimension gives min(stride_p, max(0, V_p − idx_p)) (all lanes
// without one), and each gate multiplies in 0 or 1.
func VCGValidCount(c *kernel.VCGConfig, s, t int) int {
	var idx [4]int
	for _, k := range c.Counters {
		if k.Limit < 1 {
			return 0
		}
		v := t % k.Limit
		t /= k.Limit
		if k.Dim >= 0 && k.Dim < 4 {
			idx[k.Dim] += v * k.Stride
		}
	}
	vc := c.Lanes
	if c.StrideP > 0 {
		vc = min(c.StrideP, max(0, c.VP-idx[kernel.VCGPacket]))
	}
	for g, x := range c.Gates {
		m := s & x.Mask
		switch {
		case m < x.Match:
		case m == x.Match || x.Transposed:
			if idx[kernel.VCGGate0+g] >= x.V {
				return 0
			}
		default:
			return 0
		}
	}
	return vc
}

// VCGValidCounts writes vc(s, t) for the slice's flits into vc.
func VCGValidCounts(c *kernel.VCGConfig, s int, vc []uint8) error {
	if c == nil {
		return errors.New("vector: nil VCG configuration")
	}
	if err := CheckVCG(c); err != nil {
		return err
	}
	for t := range vc {
		vc[t] = uint8(VCGValidCount(c, s, t))
	}
	return nil
}

// CheckVCG checks a stated VCG configuration: at most 8 counters with
// positive limits, dimensions known, counts within a flit.
func CheckVCG(c *kernel.VCGConfig) error {
	if c.Lanes < 1 || c.Lanes > 8 || c.StrideP < 0 || c.StrideP > c.Lanes {
		return fmt.Errorf("vector: VCG of %d lanes with packet width %d", c.Lanes, c.StrideP)
	}
	if len(c.Counters) > 8 {
		return ruleVCGCounters.Violate("%d counters", len(c.Counters))
	}
	for _, k := range c.Counters {
		if k.Limit < 1 || k.Limit > maxVectorElements || k.Dim < kernel.VCGNone || k.Dim > 3 {
			return fmt.Errorf("vector: VCG counter of limit %d on dimension %d", k.Limit, k.Dim)
		}
	}
	return nil
}

// DeriveVCG derives the Valid Count Generator's configuration for a
// reduce over axis, from the stream entering the Vector Engine (002
// L6169): nil when the axis is not padded (no VCG is needed, 002
// L6111-6118); a violation when its placement is not expressible.
//
// Supported, as 002 L6562-6571 lists: Packet only and Packet + Time (the
// packet dimension, its Time counters' strides the axis's); Time only (a
// gate with mask 0, match 0: every slice is the boundary); Slice only and
// Slice + Time, standard (Slice outer: match = ⌊n / time count⌋, V = n mod
// time count) or transposed (Slice inner: match = n mod slice count, V =
// ⌊n / slice count⌋, time count = ⌈n / slice count⌉); Slice + Packet and
// Slice + Time + Packet only when n is a multiple of the packet's lanes of
// the axis (then the packet part is always whole, 002 L6539-6547).
func DeriveVCG(spec *Spec, axis string, s VectorStream) (*kernel.VCGConfig, error) {
	if spec == nil {
		return nil, errors.New("vector: nil hardware spec")
	}
	var sd []ceDigit
	if s.Slice != nil {
		var err error
		if sd, err = veDigits(s.Slice); err != nil {
			return nil, ruleVCGGate.Violate("Slice %s: %v", s.Slice.Text(), err)
		}
	}
	td, err := veDigits(s.Time)
	if err != nil {
		return nil, ruleVCGCounters.Violate("Time %s: %v", s.Time.Text(), err)
	}
	pd, err := veDigits(s.Packet)
	if err != nil {
		return nil, ruleVCGPacket.Violate("Packet %s: %v", s.Packet.Text(), err)
	}
	isR := func(d ceDigit) bool { return d.kind == ceTerm && d.axis == axis }
	n, cover := 0, 1
	padded := false
	var rS, rT, rP []ceDigit
	for _, d := range sd {
		if isR(d) {
			rS, n, cover, padded = append(rS, d), d.axisSize, cover*d.size, padded || d.size > d.live
		}
	}
	tIdx := map[int]int{} // Time digit → counter
	for i, d := range td {
		tIdx[i] = i
		if isR(d) {
			rT, n, cover, padded = append(rT, d), d.axisSize, cover*d.size, padded || d.size > d.live
		}
	}
	for _, d := range pd {
		if isR(d) {
			// The axis's lanes of a packet are its live ones; the others
			// are padding the valid count must exclude.
			rP, n, cover = append(rP, d), d.axisSize, cover*d.live
			padded = padded || d.live < s.Packet.Size()
		}
	}
	if !padded && cover <= n {
		return nil, nil // no padding of the axis: every flit is whole (002 L6111-6118)
	}
	c := &kernel.VCGConfig{Axis: axis, Lanes: s.Packet.Size(), Gates: [3]kernel.VCGGate{kernel.DisabledVCGGate, kernel.DisabledVCGGate, kernel.DisabledVCGGate}}
	if len(td) > spec.Vector.VCGMaxCounters.Value {
		return nil, ruleVCGCounters.Violate("Time %s has %d loops, the sequencer %d counters", s.Time.Text(), len(td), spec.Vector.VCGMaxCounters.Value).With("counters", len(td))
	}
	// The sequencer walks Time's loops, innermost first (c_0 fastest).
	for _, d := range td {
		c.Counters = append(c.Counters, kernel.VCGCounter{Limit: d.size, Dim: kernel.VCGNone})
	}
	counter := func(d ceDigit) int {
		for i, x := range td {
			if x == d {
				return tIdx[i]
			}
		}
		return -1
	}
	unit := 1
	if len(rP) > 0 {
		p := rP[0]
		if len(rP) > 1 || p.pos != 1 || p.stride != 1 {
			return nil, ruleVCGPacket.Violate("Packet %s: the reduce axis %s must be one innermost part (R %% k) at the packet's first lanes", s.Packet.Text(), axis)
		}
		for _, d := range pd[1:] {
			if d.kind == ceTerm && d.live > 1 || d.kind == ceBcast {
				return nil, ruleVCGPacket.Violate("Packet %s: lanes past the reduce axis %s hold %s, which the prefix valid count would drop", s.Packet.Text(), axis, d.text())
			}
		}
		k := p.live
		c.StrideP, c.VP = k, n
		if len(rS) == 0 {
			// Packet (+ Time): the Time parts count positions of the axis.
			for _, d := range rT {
				if d.stride%k != 0 {
					return nil, ruleVCGPacket.Violate("Time part %s of %s is inside the packet's %d lanes", d.text(), axis, k)
				}
				i := counter(d)
				c.Counters[i].Dim, c.Counters[i].Stride = kernel.VCGPacket, d.stride
			}
			return c, nil
		}
		if n%k != 0 {
			return nil, ruleVCGSlicePacket.Violate("%s = %d is split across Slice and Packet with %d per packet: slices would need different packet counts", axis, n, k).With("n", n).With("lanes", k)
		}
		// Every packet is whole or empty: gate the Slice (and Time) parts on
		// the axis in units of k (002 L6539-6547).
		c.VP, unit = k, k
	}
	if err := vcgGate(c, axis, sd, rS, rT, n, unit, counter); err != nil {
		return nil, err
	}
	return c, nil
}

// vcgGate configures gate 0 for the Slice and Time parts of the axis, its
// coordinates counted in units (the packet's lanes when it also fills the
// packet).
func vcgGate(c *kernel.VCGConfig, axis string, sd, rS, rT []ceDigit, n, unit int, counter func(ceDigit) int) error {
	g := &c.Gates[0]
	nu := (n + unit - 1) / unit
	if len(rS) == 0 {
		// Time only: every slice is the boundary (mask 0, match 0).
		*g = kernel.VCGGate{Mask: 0, Match: 0, V: nu}
		for _, d := range rT {
			i := counter(d)
			c.Counters[i].Dim, c.Counters[i].Stride = kernel.VCGGate0, d.stride/unit
		}
		return nil
	}
	// The axis's Slice parts must be power-of-two bit fields of the slice
	// number, in ascending order with their strides.
	mask := 0
	for _, d := range rS {
		if d.pos&(d.pos-1) != 0 || d.size&(d.size-1) != 0 {
			return ruleVCGGate.Violate("the Slice part %s of %s is no power-of-two bit field of the slice number (size %d at %d)", d.text(), axis, d.size, d.pos)
		}
		mask |= (d.size - 1) * d.pos
	}
	for i := 1; i < len(rS); i++ {
		if rS[i].stride < rS[i-1].stride {
			return ruleVCGSliceOrder.Violate("%s's Slice parts %s and %s: strides must ascend from inner to outer", axis, rS[i-1].text(), rS[i].text())
		}
	}
	minS, maxT := rS[0].stride, 0
	sc := 1
	for _, d := range rS {
		minS = min(minS, d.stride)
		sc *= d.size
	}
	tc, minT := 1, 0
	for i, d := range rT {
		maxT = max(maxT, d.stride*d.size)
		if i == 0 || d.stride < minT {
			minT = d.stride
		}
		tc *= d.size
	}
	// encode places a value of the Slice part in the slice number's bits.
	encode := func(v int) int {
		m := 0
		for _, d := range rS {
			m |= (v / (d.stride / rS[0].stride) % d.size) * d.pos
		}
		return m
	}
	switch {
	case len(rT) == 0 || maxT <= minS:
		// Standard: Slice outer, Time inner; index = Ho·tc + Hi (002
		// L6470-6484), Slice only when tc = 1.
		if len(rT) > 0 && minS != tc*unit {
			return ruleVCGSliceTime.Violate("%s's Time parts span %d positions, its Slice parts step %d", axis, tc*unit, minS)
		}
		*g = kernel.VCGGate{Mask: mask, Match: encode(nu / tc), V: nu % tc}
		for _, d := range rT {
			i := counter(d)
			c.Counters[i].Dim, c.Counters[i].Stride = kernel.VCGGate0+0, d.stride/unit
		}
	case minT >= sc*minS:
		// Transposed: Slice inner, Time outer; index = Hi·sc + Ho (002
		// L6485-6505).
		if minS != unit {
			return ruleVCGSliceTime.Violate("%s's Slice parts start at stride %d", axis, minS)
		}
		if want := (nu + sc - 1) / sc; tc != want {
			return ruleVCGTransposed.Violate("%s = %d over %d slices needs %d time steps, Time has %d: the VCG would over-count valid steps", axis, n, sc, want, tc).With("time", tc).With("want", want)
		}
		*g = kernel.VCGGate{Mask: mask, Match: encode(nu % sc), V: nu / sc, Transposed: true}
		for _, d := range rT {
			i := counter(d)
			c.Counters[i].Dim, c.Counters[i].Stride = kernel.VCGGate0, d.stride/(sc*unit)
		}
	default:
		return ruleVCGSliceTime.Violate("%s interleaves Time and Slice parts: per-slice thresholds needed", axis)
	}
	return nil
}

// veDigits is ceDigits, falling back to each part of a pair when the whole
// does not factorize (`R # 16 / 8, X, R # 16 / 2 % 4` with R = 13: two
// digits of a padded axis): a pair's parts are independent loops, the
// outer parts' positions scaled by the inner parts' sizes.
func veDigits(e *mapping.Expr) ([]ceDigit, error) {
	ds, err := ceDigits(e)
	if err == nil || e.Kind() != mapping.KindPair {
		return ds, err
	}
	parts := e.Parts()
	var out []ceDigit
	pos := 1
	for i := len(parts) - 1; i >= 0; i-- {
		pd, err := veDigits(parts[i])
		if err != nil {
			return nil, err
		}
		for _, d := range pd {
			d.pos *= pos
			out = append(out, d)
		}
		pos *= parts[i].Size()
	}
	return out, nil
}
