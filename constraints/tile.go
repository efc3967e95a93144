package constraints

import (
	"sort"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Tiling (issue §1): when one tile's tensors do not fit, an outer loop over
// output axes repeats the program on tiles of them. The DM holds 512 KB per
// slice (002 L138), the TRF 8 KB per Row, halved for a tensor in one of the
// two halves that double buffering alternates between (002 L139,
// L4151-4158; engines.TRFRowCapacity). Contracted axes are tiled only
// where the space tiles them (TileK): the partial sums of two K chunks go
// through DM and the Vector Engine adds them.
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
	// buffer, each aligned as the builder places them; tensor is each
	// tensor's share of it.
	dm     int64
	tensor [NumTensors]int64
	// partial is the bytes of the K chunks' partial-sum buffers (TileK),
	// one set whatever the buffering: two for two chunks (the first
	// chunk's sums and the second's), three for more (the new chunk's and
	// two running sums the split-reduce passes alternate between); and
	// a cluster reduce's (ClusterK): the two partial sums of the
	// cluster's half of the output, and the cluster's partial sums unless
	// they are the K chunks' last running sum.
	partial int64
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
			n *= c.Factor(a, Time) * c.Factor(a, Packet)
			if !trf {
				n *= c.Factor(a, Row)
			}
		}
		return n
	}
	f.rows = 1
	outTime := 1
	for a := range p.Axes {
		f.rows *= c.Factor(a, Row)
		if s.Role(a, c.Stationary) != RoleC {
			outTime *= c.Factor(a, Time)
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
		m = s.PacketElems(c.Mode)
		for a, ax := range p.Axes {
			if ax.Class == Contracted {
				m /= c.Factor(a, Packet)
			}
		}
	}
	out := outTime * m * max(f.rows, bus)
	if c.Acc == AccSequential {
		out = outTime * f.rows * ((m + bus - 1) / bus * bus)
	}
	// A cluster reduce (ClusterK): each cluster's DM holds its partial
	// sums of the whole output and the two of its half, and one half of
	// the output.
	nc := s.ClusterSplit(c)
	for i, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		n := 0
		switch {
		case i == 2:
			n = out / nc
		case c.Switch && i != w:
			// The ring shares the streamed tile (Candidate.Switch).
			n = elems(o, false) / s.Ring(c)
		default:
			n = elems(o, false)
		}
		b, err := tensorBytes(o, n)
		if err != nil {
			return f, err
		}
		f.tensor[i] = AlignUp(b, DMAlign)
		f.dm += f.tensor[i]
	}
	if k := s.KTiles(c); k > 1 {
		b, err := s.P.Acc.BytesFor(out)
		if err != nil {
			return f, err
		}
		f.partial = int64(PartialBuffers(k)) * AlignUp(int64(b), DMAlign)
		f.dm += f.partial
	}
	if nc > 1 {
		// Q, and P unless it is the K chunks' last running sum.
		b, err := s.P.Acc.BytesFor(out)
		if err != nil {
			return f, err
		}
		n := int64(2)
		if s.KTiles(c) > 1 {
			n = 1
		}
		f.partial += n * AlignUp(int64(b), DMAlign)
		f.dm += n * AlignUp(int64(b), DMAlign)
	}
	t, err := tensorBytes(&p.In[w], elems(&p.In[w], true))
	if err != nil {
		return f, err
	}
	f.trf = t
	return f, nil
}

// Fits reports whether c's tiles fit with nbuf buffers of each tensor.
// With two buffers only the tensors a tile loop moves (those holding a
// tiled axis, and the output) take two DM buffers, and the stationary
// operand a TRF half only when it is moved (build.go).
func (s *Space) Fits(c *Candidate, nbuf int) bool {
	f, err := s.footprint(c)
	if err != nil {
		return false
	}
	var moved [NumTensors]bool
	moved[TensorOut] = true
	for t, o := range []*Operand{&s.P.In[0], &s.P.In[1]} {
		for a, ax := range s.P.Axes {
			moved[t] = moved[t] || o.Has(ax.Name) && c.Factor(a, Tile) > 1
		}
	}
	mode := kernel.TrfFull
	if nbuf > 1 && moved[c.Stationary] {
		mode = kernel.TrfFirstHalf
	}
	capacity, err := engines.TRFRowCapacity(s.Spec, mode, f.rows)
	if err != nil {
		return false
	}
	dm := f.partial
	for t, b := range f.tensor {
		if moved[t] {
			b *= int64(nbuf)
		}
		dm += b
	}
	return dm <= int64(s.Spec.DM.BytesPerSlice.Value) && f.trf <= int64(capacity)
}

// PartialBuffers returns the partial-sum DM buffers of k K chunks
// (footprint.partial): none untiled, two for two chunks, three for more.
func PartialBuffers(k int) int {
	switch {
	case k <= 1:
		return 0
	case k == 2:
		return 2
	}
	return 3
}

// maxChunks bounds the steps of a software-pipelined chunk loop the space
// adds to a candidate that fits untiled (pipelinedChunks).
const maxChunks = 64

// pipelinedChunks enumerates, for a candidate that fits untiled, its
// software-pipelined chunk loops: one output axis's Time split into
// 2..maxChunks (a power of two) double-buffered chunks, so that the DMA moves chunk k+1 and
// k-1 while the main context computes chunk k (build.go's issue order,
// 002 L7058-7068, L7087). The first chunk's load and the last one's store
// stay exposed, the rest of the transfers hide under the compute.
func (e *enumerator) pipelinedChunks(c Candidate, axes []int) { e.pipelined(c, axes, maxChunks) }

// pipelined enumerates c with one of the axes' Time split into 2..limit
// double-buffered chunks, a power of two (chunk counts between them add
// steps without changing what overlaps: a canonical subset).
func (e *enumerator) pipelined(c Candidate, axes []int, limit int) {
	for _, a := range axes {
		for _, n := range divisors(c.Factor(a, Time)) {
			if e.stop {
				return
			}
			if n < 2 || n > limit || n > e.s.maxTiles || !isPow2(n) {
				continue
			}
			d := c
			d.Split[a][Tile] = int32(n)
			d.Split[a][Time] /= int32(n)
			d.DoubleBuffer = true
			SetOrder(&d.TileOrder, []int{a})
			if e.s.Fits(&d, 2) {
				e.orders(d)
			}
		}
	}
}

// pipelinedKChunks enumerates, for a candidate that fits untiled, its
// software-pipelined K chunks (TileK): one contracted axis's Time split
// into 2..MaxKTiles (a power of two) double-buffered chunks, so that the
// DMA and the sub context move chunk k+1 of both inputs (each holds the
// contracted axes) while the main context computes chunk k; the split
// reduce adds the chunks' partial sums.
func (e *enumerator) pipelinedKChunks(c Candidate) {
	s := e.s
	if !s.tileK || s.Split(&c) > 1 {
		return
	}
	var axes []int
	for a := range s.P.Axes {
		if s.Role(a, c.Stationary) == RoleC {
			axes = append(axes, a)
		}
	}
	e.pipelined(c, axes, MaxKTiles)
}

// tilings enumerates c untiled when it fits, and otherwise its minimal
// fitting tilings; each goes on to the time orders. The DMA packets of a
// DM tensor need no tiles of their own: the lowering cuts a tensor longer
// than max_packet_bytes on a digit boundary (engines' capPacket, 002
// L2428-2429, L1660-1683), whatever its extents.
func (e *enumerator) tilings(c Candidate) {
	s := e.s
	var axes []int
	for a := range s.P.Axes {
		if s.Role(a, c.Stationary) != RoleC && c.Factor(a, Time) > 1 {
			axes = append(axes, a)
		}
	}
	if s.Fits(&c, 1) {
		if e.tiled == 0 {
			e.orders(c)
		} else {
			e.pipelinedChunks(c, axes)
			e.pipelinedKChunks(c)
		}
		return
	}
	// K chunks (TileK), after the output axes: the innermost tile loops.
	nOut := len(axes)
	if s.tileK && s.Split(&c) == 1 {
		for a := range s.P.Axes {
			if s.Role(a, c.Stationary) == RoleC && c.Factor(a, Time) > 1 {
				axes = append(axes, a)
			}
		}
	}
	if e.tiled == 0 || len(axes) == 0 {
		return
	}
	for _, nbuf := range []int{1, 2} {
		vs, capped := s.minimalTilings(c, axes, nbuf)
		if capped && len(vs) == 0 {
			s.capped.Add(1)
		}
		for _, v := range vs {
			d := c
			var tiled, kTiled []int
			for i, a := range axes {
				if v[i] > 1 {
					d.Split[a][Tile] = int32(v[i])
					d.Split[a][Time] /= int32(v[i])
					if i < nOut {
						tiled = append(tiled, a)
					} else {
						kTiled = append(kTiled, a)
					}
				}
			}
			d.DoubleBuffer = nbuf == 2
			permute(tiled, func(ord []int) bool {
				x := d
				SetOrder(&x.TileOrder, append(append([]int(nil), ord...), kTiled...))
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
// the axis's time factor) with which c fits nbuf buffers and that no other
// fitting vector undercuts componentwise, ordered by total tiles, then
// lexicographically; capped reports that the tile bound (maxTiles) left
// some vectors out.
func (s *Space) minimalTilings(c Candidate, axes []int, nbuf int) (out [][]int, capped bool) {
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
			if s.Fits(&d, nbuf) {
				fitting = append(fitting, append([]int(nil), cur...))
			}
			return
		}
		used := product(cur[:i])
		contracted := s.P.Axes[axes[i]].Class == Contracted
		for _, t := range divisors(c.Factor(axes[i], Time)) {
			if used*t > s.maxTiles {
				capped = true
				break
			}
			if contracted && s.kTiles(axes, cur[:i])*t > MaxKTiles {
				break
			}
			cur[i] = t
			rec(i + 1)
		}
	}
	rec(0)
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
	return out, capped
}

// kTiles is the product of the contracted axes' entries of a tile-count
// vector over axes (prefix cur).
func (s *Space) kTiles(axes, cur []int) int {
	n := 1
	for k, t := range cur {
		if s.P.Axes[axes[k]].Class == Contracted {
			n *= t
		}
	}
	return n
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
