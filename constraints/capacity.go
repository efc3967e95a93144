package constraints

import (
	mbits "math/bits"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// DMAlign is the alignment of DM tensor addresses: one row of the 16 DM
// banks of 8 bytes (002 L2874-2879), a multiple of the 8-byte DM write
// alignment (002 L2426).
const DMAlign = 128

// tensorBytes is the bytes of n elements of the tensor's type.
func tensorBytes(o *Operand, n int) (int64, error) {
	v, err := o.DType.BytesFor(n)
	return int64(v), err
}

// AlignUp rounds n up to a multiple of a.
func AlignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// MaxRows returns the most Rows any candidate can use: a TRF Row holds
// TRFRowCapacity bytes (8 KB × 8 / rows single-buffered, 002 L4118,
// L4151-4155), and every Row holds the stationary operand's contracted
// axes whole, or one K chunk of them where the space tiles them (TileK:
// at best the axes over the most chunks, kChunks). 0 when no Row count
// fits.
func (s *Space) MaxRows() int {
	bits := int64(s.ebits)
	for _, ax := range s.P.Axes {
		if ax.Class == Contracted {
			bits *= int64(ax.Size)
		}
	}
	bits = (bits + int64(s.kChunks()) - 1) / int64(s.kChunks())
	best := 0
	for _, r := range s.rows {
		capacity, err := engines.TRFRowCapacity(s.Spec, kernel.TrfFull, r)
		if err == nil && 8*int64(capacity) >= bits {
			best = max(best, r)
		}
	}
	return best
}

// DMFloor returns the fewest bytes one tile of tensor t occupies in a
// slice's DM under c, whatever the tiling of its output axes: those tiles
// split only Time factors (tile.go), so a tile holds the slice's share of
// the contracted axes (whole unless split across slices, SplitK, or
// clusters, ClusterK, or chunked by c's contracted Tile factors, TileK) and the Row and Packet
// factors of the others (footprint).
func (s *Space) DMFloor(c *Candidate, t int) int64 {
	o := s.OperandOf(t)
	n := int64(o.DType.SizeBits())
	for a, ax := range s.P.Axes {
		if !o.Has(ax.Name) {
			continue
		}
		if ax.Class == Contracted {
			n *= int64(ax.Size / (c.Factor(a, Cluster) * c.Factor(a, Slice) * c.Factor(a, Tile)))
		} else {
			n *= int64(c.Factor(a, Row) * c.Factor(a, Packet))
		}
	}
	return (n + 7) / 8
}

// DMUnits returns the most 2-units of Row and Packet the output axes of
// tensor t may carry for its dmFloor to fit a slice's DM (002 L138) beside
// the smallest tiles of the other two tensors (their contracted axes, each
// placed at a dmAlign boundary as the builder places them); -1 when not
// even t's contracted axes fit.
func (s *Space) DMUnits(t int) int { return s.DMUnitsOf(t, 1) }

// DMUnitsOf is dmUnits when a ring of up to ring slices may share either
// input (a switched candidate's streamed operand, Candidate.Switch): the
// inputs' floors divided by ring.
func (s *Space) DMUnitsOf(t, ring int) int {
	var c Candidate
	for a := range s.P.Axes {
		for l := range NumLevels {
			c.Split[a][l] = 1
		}
	}
	s.chunkK(&c)
	floorOf := func(u int) int64 {
		f := s.DMFloor(&c, u)
		if u < 2 {
			f /= int64(ring)
		}
		return f
	}
	limit := int64(s.Spec.DM.BytesPerSlice.Value)
	for u := range NumTensors {
		if u != t {
			limit -= AlignUp(floorOf(u), DMAlign)
		}
	}
	floor := max(floorOf(t), 1)
	if floor > limit {
		return -1
	}
	k := 0
	for floor<<(k+1) <= limit {
		k++
	}
	return k
}

// OperandOf returns tensor t's operand.
func (s *Space) OperandOf(t int) *Operand {
	if t < 2 {
		return &s.P.In[t]
	}
	return &s.P.Out
}

// ElemBytes returns input t's element size in bytes.
func (s *Space) ElemBytes(t int) float64 { return float64(s.P.In[t].DType.SizeBits()) / 8 }

// ShortRun returns the innermost axis of input t's HBM layout, and whether
// the slices splitting it can shorten a run below one request: only when
// the whole axis spans more than a request (else the run may go on into the
// next axis, and no bound is claimed).
func (s *Space) ShortRun(t int) (int, bool) {
	order := s.hbm[t]
	if len(order) == 0 {
		return 0, false
	}
	in := order[len(order)-1]
	return in, float64(s.P.Axes[in].Size)*s.ElemBytes(t) > float64(s.Spec.DMA.RequestBytes.Value)
}

// DMUnitsSplit is DMUnitsOf for a space that splits contracted axes
// across slices or clusters (SplitK, ClusterK), as the SAT encoding's DM clause reads it: the 2-units of Row
// and Packet tensor t's output axes may carry when its contracted axes are
// whole, against the other tensors' floors with their contracted axes
// split as far as the slices allow; negative when t's whole contracted
// axes exceed that room by 2^-k. The encoding adds, for each contracted
// unit at Slice, ⌈log2 p⌉ units of room: a floor divided by p needs at
// most that many fewer, so the clause never excludes a skeleton that fits.
func (s *Space) DMUnitsSplit(t, ring int) int {
	var whole, split Candidate
	for a, ax := range s.P.Axes {
		for l := range NumLevels {
			whole.Split[a][l], split.Split[a][l] = 1, 1
		}
		if ax.Class == Contracted {
			// The most slices (and clusters, ClusterK) the axis splits
			// over: its largest divisors within a cluster (and the chip).
			if s.splitK {
				for _, d := range divisors(ax.Size) {
					if d <= s.slices {
						split.Split[a][Slice] = int32(d)
					}
				}
			}
			if s.clusterK {
				for _, d := range divisors(ax.Size / split.Factor(a, Slice)) {
					if d <= s.clusters {
						split.Split[a][Cluster] = int32(d)
					}
				}
			}
		}
	}
	s.chunkK(&whole)
	s.chunkK(&split)
	floorOf := func(c *Candidate, u int) int64 {
		f := s.DMFloor(c, u)
		if u < 2 {
			f /= int64(ring)
		}
		return max(f, 1)
	}
	limit := int64(s.Spec.DM.BytesPerSlice.Value)
	for u := range NumTensors {
		if u != t {
			limit -= AlignUp(floorOf(&split, u), DMAlign)
		}
	}
	return log2Ratio(limit, floorOf(&whole, t))
}

// kChunks is the most K chunks any candidate of the space has: the
// largest divisor of the contracted axes' sizes within MaxKTiles where the
// space tiles them (TileK), else 1.
func (s *Space) kChunks() int {
	if !s.tileK {
		return 1
	}
	var c Candidate
	for a := range s.P.Axes {
		for l := range NumLevels {
			c.Split[a][l] = 1
		}
	}
	s.chunkK(&c)
	return s.KTiles(&c)
}

// chunkK gives c's contracted axes the largest Tile factors within
// MaxKTiles, in total, where the space tiles them (TileK): the candidate
// whose floors (DMFloor) are the smallest any K chunking gives. A tile
// factor divides what the axis's Cluster and Slice factors leave.
func (s *Space) chunkK(c *Candidate) {
	if !s.tileK {
		return
	}
	left := MaxKTiles
	for a, ax := range s.P.Axes {
		if ax.Class != Contracted {
			continue
		}
		best := 1
		for _, d := range divisors(ax.Size / (c.Factor(a, Cluster) * c.Factor(a, Slice))) {
			if d <= left {
				best = d
			}
		}
		c.Split[a][Tile] = int32(best)
		left /= best
	}
}

// TRFUnitsSplit is the TRF clause's room for a space that splits
// contracted axes across slices or clusters (SplitK, ClusterK): the most 2-units of Row (log2 Row::SIZE) for
// which a TRF Row holds the stationary operand's contracted axes whole
// (8 KB × 8 / Row::SIZE, 002 L4118, L4151-4155); negative when not even
// one Row does. As with DMUnitsSplit, each contracted unit at Slice or
// Cluster adds ⌈log2 p⌉ to it.
func (s *Space) TRFUnitsSplit() int {
	bits := int64(s.ebits)
	for _, ax := range s.P.Axes {
		if ax.Class == Contracted {
			bits *= int64(ax.Size)
		}
	}
	capacity, err := engines.TRFRowCapacity(s.Spec, kernel.TrfFull, 1)
	if err != nil {
		return -64
	}
	// A Row holds one K chunk where the space tiles K (TileK).
	bits = (bits + int64(s.kChunks()) - 1) / int64(s.kChunks())
	return log2Ratio(8*int64(capacity), bits)
}

// log2Ratio returns ⌊log2(limit / need)⌋ (negative below 1; -64 when
// limit is not positive).
func log2Ratio(limit, need int64) int {
	if limit <= 0 {
		return -64
	}
	need = max(need, 1)
	k := 0
	if need <= limit {
		for need <= limit/2 {
			need *= 2
			k++
		}
		return k
	}
	for need > limit && k > -62 {
		limit *= 2
		k--
	}
	return k
}

// innerAxis returns input t's innermost HBM axis with more than one
// coordinate, and whether its layout is plain (PlainLayout).
func (s *Space) innerAxis(t int) (int, bool) {
	if !s.PlainLayout(t) {
		return 0, false
	}
	order := s.HBMOrder(t)
	for i := len(order) - 1; i >= 0; i-- {
		if s.P.Axes[order[i]].Size > 1 {
			return order[i], true
		}
	}
	return 0, false
}

// runUnits returns how many 2-units of Cluster and Slice input t's
// innermost HBM axis may take, and that axis: a slice's share of it is a
// contiguous HBM run that reaches that slice's DM alone, so its bytes must
// be a multiple of an HBM → DM packet (8 bytes, 002 L2425-2427,
// L2836-2837; DMA-R1 rejects the rest): 2^v2(size · bits / 8) / packet.
// ok is false when no such limit applies (a stated layout).
func (s *Space) runUnits(t int) (axis, units int, ok bool) {
	a, ok := s.innerAxis(t)
	if !ok {
		return 0, 0, false
	}
	bits := s.P.In[t].DType.SizeBits() * s.P.Axes[a].Size
	pa := engines.HBMToDMPacketBytes(s.Spec) * 8
	if pa <= 0 || pa&(pa-1) != 0 {
		return 0, 0, false
	}
	return a, mbits.TrailingZeros(uint(bits)) - mbits.TrailingZeros(uint(pa)), true
}

// RunsFit reports whether every input's slice share of its innermost HBM
// axis is a whole number of HBM → DM packets (runUnits), the streamed
// input of a switched candidate aside (its DM tensor is the ring's share,
// Candidate.Switch).
func (s *Space) RunsFit(c *Candidate) bool {
	for t := range 2 {
		if c.Switch && t != int(c.Stationary) {
			continue
		}
		a, units, ok := s.runUnits(t)
		if !ok {
			continue
		}
		// Unsplit, the run goes on into the outer axes.
		if f := c.Factor(a, Cluster) * c.Factor(a, Slice); f > 1 && mbits.TrailingZeros(uint(f)) > units {
			return false
		}
	}
	return true
}
