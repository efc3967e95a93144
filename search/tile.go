package search

import (
	"slices"
	"sort"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Tiling (issue §1): when one tile's tensors do not fit, an outer loop over
// output axes repeats the program on tiles of them. The DM holds 512 KB per
// slice (002 L138), the TRF 8 KB per Row, halved for a tensor in one of the
// two halves that double buffering alternates between (002 L139,
// L4151-4158; engines.TRFRowCapacity). Contracted axes are never tiled: the
// partial sums of two tiles would need the Vector Engine to add them.
//
// The space holds, for a candidate that does not fit untiled, every
// minimal tiling that fits (no fitting tiling has componentwise fewer
// tiles), single- and double-buffered, with every order of the tile loops.
// A candidate that fits untiled is not tiled: more tiles only add
// transfers and ops, except by overlapping DMA with compute, which the
// double-buffered tilings of the candidates that need tiles already cover.

// footprint is what one tile of a candidate occupies.
type footprint struct {
	// dm is the bytes per slice of the input and output DM tensors of one
	// buffer, each aligned as the builder places them.
	dm int64
	// trf is the bytes of one Row's TRF Element.
	trf int64
	// rows is Row::SIZE.
	rows int
}

// footprint computes c's footprint from its factors, as Build would lay
// out its tensors. The staging tensor of a copied output (LayoutCopy) is
// not counted: the layouts are chosen after the tilings, and Build
// rejects a copy whose tensors overflow the DM (PLAN-DM).
func (s *Space) footprint(c *Candidate) (footprint, error) {
	var f footprint
	p := s.P
	w := int(c.Stationary)
	elems := func(o *Operand, trf bool) int {
		n := 1
		for _, name := range o.Axes {
			a := p.axis(name)
			n *= c.factor(a, Time) * c.factor(a, Packet)
			if !trf {
				n *= c.factor(a, Row)
			}
		}
		return n
	}
	f.rows = 1
	outTime := 1
	for a := range p.Axes {
		f.rows *= c.factor(a, Row)
		if s.role(a, c.Stationary) != roleC {
			outTime *= c.factor(a, Time)
		}
	}
	// The output: Time' × the columns × Row # 8 (Interleaved) or
	// Time' × Row × the columns padded to a multiple of 8 (Sequential),
	// as accumulate writes them.
	bus := s.Spec.Reducer.OutputBusElements.Value
	m := 1
	if c.Content == PacketColumns {
		// The columns the tree keeps: the packet without the contracted
		// digits it sums (002 L4392).
		m = s.packetElems(c.Mode)
		for a, ax := range p.Axes {
			if ax.Class == Contracted {
				m /= c.factor(a, Packet)
			}
		}
	}
	out := outTime * m * max(f.rows, bus)
	if c.Acc == AccSequential {
		out = outTime * f.rows * ((m + bus - 1) / bus * bus)
	}
	for i, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		n := 0
		if i == 2 {
			n = out
		} else {
			n = elems(o, false)
		}
		b, err := tensorBytes(o, n)
		if err != nil {
			return f, err
		}
		f.dm += alignUp(b, dmAlign)
	}
	t, err := tensorBytes(&p.In[w], elems(&p.In[w], true))
	if err != nil {
		return f, err
	}
	f.trf = t
	return f, nil
}

// fits reports whether c's tiles fit with nbuf buffers of each tensor.
func (s *Space) fits(c *Candidate, nbuf int) bool {
	f, err := s.footprint(c)
	if err != nil {
		return false
	}
	mode := kernel.TrfFull
	if nbuf > 1 {
		mode = kernel.TrfFirstHalf
	}
	capacity, err := engines.TRFRowCapacity(s.Spec, mode, f.rows)
	if err != nil {
		return false
	}
	return int64(nbuf)*f.dm <= int64(s.Spec.DM.BytesPerSlice.Value) && f.trf <= int64(capacity)
}

// packetsSplit reports whether every DM tensor of c, laid out in its HBM
// order (LayoutHBM), moves in DMA packets that are digits of its element
// mapping. The lowering moves a DM tensor's live element digits in
// packets of the largest divisor of their count that fits 4096 bytes
// (max_packet_bytes, 002 L2428-2429, L2512), its outer part walking in
// time; that outer part is a stream term, and the sequencer derives
// entries only from a term with a factorized form (002 L1660-1683: SEQ-R6),
// so the packet must fall on a digit boundary: `[BLK, F] / 2048` with
// F = 768 does not. With power-of-two axes every split does; a candidate
// that fails needs smaller tiles (see tilings). Arithmetic on the factors,
// without building: an axis's digit in a slice's DM tensor has the extent
// Time × Row × Packet (Build's part(a, Time, Packet)).
func (s *Space) packetsSplit(c *Candidate) bool {
	p := s.P
	max := s.Spec.DMA.MaxPacketBytes.Value
	for t, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		var ext [MaxAxes]int
		k, size := 0, 1
		for _, a := range s.hbm[t] { // major first
			if n := c.factor(a, Time) * c.factor(a, Row) * c.factor(a, Packet); n > 1 {
				ext[k] = n
				k++
				size *= n
			}
		}
		// The lowering's packet: the largest divisor of size that fits.
		n := size
		if b := o.DType.SizeBits(); b > 0 {
			if c := max * 8 / b; c >= 1 {
				n = min(n, c)
			} // no more elements than fit max bytes
		}
		for ; n > 1; n-- {
			if size%n != 0 {
				continue
			}
			if b, err := tensorBytes(o, n); err == nil && b <= int64(max) {
				break
			}
		}
		if !splitsAt(ext[:k], n) {
			return false
		}
	}
	return true
}

// splitsAt reports whether n positions of digits with the extents ext
// (major first) fall on a digit boundary, possibly cutting one digit: the
// digits inner to the cut multiply to below, and n / below divides the
// digit it cuts (mapping.SplitAt's canonical case).
func splitsAt(ext []int, n int) bool {
	below := 1
	for i := len(ext) - 1; i >= 0 && below != n; i-- {
		if n%below != 0 {
			return false
		}
		if d := n / below; d%ext[i] == 0 {
			below *= ext[i]
		} else {
			return ext[i]%d == 0
		}
	}
	return below == n
}

// tilings enumerates c untiled when it fits, and otherwise its minimal
// fitting tilings; each goes on to the time orders. Where the tensors of
// c, or of a minimal tiling, fit but move in DMA packets that split a
// digit (packetsSplit), the minimal tilings whose packets split on digit
// boundaries are enumerated too: more tiles shrink the DM tensors until
// one packet holds whole digits.
func (e *enumerator) tilings(c Candidate) {
	s := e.s
	fit := s.fits(&c, 1)
	if fit && e.tiled == 0 {
		e.orders(c)
	}
	if e.tiled == 0 || (fit && s.packetsSplit(&c)) {
		return
	}
	var axes []int
	for a := range s.P.Axes {
		if s.role(a, c.Stationary) != roleC && c.factor(a, Time) > 1 {
			axes = append(axes, a)
		}
	}
	if len(axes) == 0 {
		return
	}
	for _, nbuf := range []int{1, 2} {
		var vs [][]int
		if !fit {
			vs = s.minimalTilings(c, axes, nbuf, false)
		}
		for _, v := range s.minimalTilings(c, axes, nbuf, true) {
			if !containsVec(vs, v) {
				vs = append(vs, v)
			}
		}
		for _, v := range vs {
			d := c
			var tiled []int
			for i, a := range axes {
				if v[i] > 1 {
					d.Split[a][Tile] = int32(v[i])
					d.Split[a][Time] /= int32(v[i])
					tiled = append(tiled, a)
				}
			}
			d.DoubleBuffer = nbuf == 2
			permute(tiled, func(ord []int) bool {
				x := d
				setOrder(&x.TileOrder, ord)
				e.orders(x)
				return !e.stop
			})
			if e.stop {
				return
			}
		}
	}
}

// minimalTilings returns the tile-count vectors over axes (each dividing
// the axis's time factor) with which c fits nbuf buffers, and with split
// also moves in packets of whole digits (packetsSplit), and that no other
// such vector undercuts componentwise, ordered by total tiles, then
// lexicographically.
func (s *Space) minimalTilings(c Candidate, axes []int, nbuf int, split bool) [][]int {
	var fitting [][]int
	cur := make([]int, len(axes))
	var rec func(i int)
	rec = func(i int) {
		if i == len(axes) {
			d := c
			for k, a := range axes {
				d.Split[a][Tile] = int32(cur[k])
				d.Split[a][Time] /= int32(cur[k])
			}
			if s.fits(&d, nbuf) && (!split || s.packetsSplit(&d)) {
				fitting = append(fitting, append([]int(nil), cur...))
			}
			return
		}
		used := product(cur[:i])
		for _, t := range divisors(c.factor(axes[i], Time)) {
			if used*t > s.maxTiles {
				break
			}
			cur[i] = t
			rec(i + 1)
		}
	}
	rec(0)
	var out [][]int
	for i, v := range fitting {
		minimal := true
		for j, u := range fitting {
			if i != j && dominates(u, v) {
				minimal = false
				break
			}
		}
		if minimal {
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := product(out[i]), product(out[j])
		if pi != pj {
			return pi < pj
		}
		for k := range out[i] {
			if out[i][k] != out[j][k] {
				return out[i][k] < out[j][k]
			}
		}
		return false
	})
	return out
}

// containsVec reports whether vs holds v.
func containsVec(vs [][]int, v []int) bool {
	for _, u := range vs {
		if slices.Equal(u, v) {
			return true
		}
	}
	return false
}

// dominates reports u ≤ v componentwise with u ≠ v.
func dominates(u, v []int) bool {
	less := false
	for k := range u {
		if u[k] > v[k] {
			return false
		}
		if u[k] < v[k] {
			less = true
		}
	}
	return less
}

func product(v []int) int {
	n := 1
	for _, x := range v {
		n *= x
	}
	return n
}
