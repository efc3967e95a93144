package constraints

import (
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
// axes whole, which are never tiled (tile.go). 0 when no Row count fits.
func (s *Space) MaxRows() int {
	bits := int64(s.ebits)
	for _, ax := range s.P.Axes {
		if ax.Class == Contracted {
			bits *= int64(ax.Size)
		}
	}
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
// slice's DM under c, whatever the tiling: tiles split only the Time
// factors of output axes (tile.go), so a tile holds the contracted axes
// whole and the Row and Packet factors of the others (footprint).
func (s *Space) DMFloor(c *Candidate, t int) int64 {
	o := s.OperandOf(t)
	n := int64(o.DType.SizeBits())
	for a, ax := range s.P.Axes {
		if !o.Has(ax.Name) {
			continue
		}
		if ax.Class == Contracted {
			n *= int64(ax.Size)
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
func (s *Space) DMUnitsOf(t, Ring int) int {
	var c Candidate
	for a := range s.P.Axes {
		for l := range NumLevels {
			c.Split[a][l] = 1
		}
	}
	floorOf := func(u int) int64 {
		f := s.DMFloor(&c, u)
		if u < 2 {
			f /= int64(Ring)
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

// operand returns tensor t's operand.
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
