package constraints

import "strings"

// DigitOrder is how one axis's digits nest: the position of each level's
// digit among the axis's levels, outermost 0. The axis's coordinate is the
// mixed-radix number of its digits in that order (Candidate.Below). The
// zero value is the order tile > chip > cluster > slice > time > row >
// packet (the Hello GEMM's, 002 L483-484, L503); position p of level l is
// stored as p XOR l in bits 3l..3l+2.
//
// Only the relative order of the levels whose factors exceed 1 means
// anything: a candidate's orders are canonical (Space.Check), each unit
// level at its own place and the others in the slots their levels hold in
// the zero order (CanonicalOrder), so that one nesting has one value.
type DigitOrder uint32

// Pos returns the position of level l's digit, outermost 0.
func (d DigitOrder) Pos(l Level) int { return int((uint32(d)>>(3*uint(l)))&7) ^ int(l) }

// OrderOf returns the digit order that nests the levels seq, outermost
// first, in the slots their levels hold in the zero order, and every
// other level at its own place. seq must not repeat a level.
func OrderOf(seq ...Level) DigitOrder {
	var slots [NumLevels]bool
	for _, l := range seq {
		slots[l] = true
	}
	var d DigitOrder
	i := 0
	for slot := Level(0); slot < NumLevels; slot++ {
		if !slots[slot] {
			continue
		}
		l := seq[i]
		i++
		d |= DigitOrder((int(slot) ^ int(l)) << (3 * uint(l)))
	}
	return d
}

// Levels returns the levels in the order d nests them, outermost first.
func (d DigitOrder) Levels() [NumLevels]Level {
	var out [NumLevels]Level
	for l := Level(0); l < NumLevels; l++ {
		out[d.Pos(l)] = l
	}
	return out
}

// valid reports whether d's positions are a permutation of the levels.
func (d DigitOrder) valid() bool {
	if d>>(3*NumLevels) != 0 {
		return false
	}
	var seen [8]bool
	for l := Level(0); l < NumLevels; l++ {
		p := d.Pos(l)
		if p >= int(NumLevels) || seen[p] {
			return false
		}
		seen[p] = true
	}
	return true
}

// CanonicalOrder returns axis a's order as c's factors make it canonical:
// the relative order d gives the levels with factors above 1, in their
// slots (OrderOf).
func (c *Candidate) CanonicalOrder(a int, d DigitOrder) DigitOrder {
	if d == 0 {
		return 0
	}
	var seq [NumLevels]Level
	n := 0
	for _, l := range d.Levels() {
		if c.Factor(a, l) > 1 {
			seq[n] = l
			n++
		}
	}
	return OrderOf(seq[:n]...)
}

// below reports whether level l's digit of axis a sits below level m's.
func (c *Candidate) below(a int, l, m Level) bool { return c.Digits[a].Pos(l) > c.Digits[a].Pos(m) }

// OrderText prints axis a's digit order: the levels with factors above 1,
// outermost first, joined by '.' ("time.cluster.slice.packet").
func (c *Candidate) OrderText(a int) string {
	var b strings.Builder
	for _, l := range c.Digits[a].Levels() {
		if c.Factor(a, l) > 1 {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(levelNames[l])
		}
	}
	return b.String()
}

// legacyOrder is the order of the three named choices: the Row digit above
// the Time digit (RowAbove), the Cluster and Slice digits below the Time
// digit and above the Row and Packet digits (DealtOut), the Cluster digit
// below the Slice digit (ClusterBelow); the other levels in the zero
// order.
func legacyOrder(row, dealt, clusterInner bool) DigitOrder {
	return legacyOrders[b2i(row)<<2|b2i(dealt)<<1|b2i(clusterInner)]
}

// legacyOrders is legacyOrder by its flags (row, dealt, clusterInner as
// bits 2, 1, 0).
var legacyOrders = func() (t [8]DigitOrder) {
	for i := range t {
		t[i] = legacyOrderOf(i&4 != 0, i&2 != 0, i&1 != 0)
	}
	return t
}()

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// legacyOrderOf computes legacyOrder.
func legacyOrderOf(row, dealt, clusterInner bool) DigitOrder {
	cs := []Level{Cluster, Slice}
	if clusterInner {
		cs = []Level{Slice, Cluster}
	}
	seq := []Level{Tile, Chip}
	switch {
	case dealt && row:
		seq = append(append(append(seq, Row, Time), cs...), Packet)
	case dealt:
		seq = append(append(append(seq, Time), cs...), Row, Packet)
	case row:
		seq = append(append(seq, cs...), Row, Time, Packet)
	default:
		seq = append(append(seq, cs...), Time, Row, Packet)
	}
	return OrderOf(seq...)
}

// NamedOrder reports whether axis a's order is one of the three named
// choices' (Digits), and which: its Row digit above its Time digit (row),
// its Cluster and Slice digits dealt out (dealt), its Cluster digit below
// its Slice digit (clusterInner).
func (c *Candidate) NamedOrder(a int) (row, dealt, clusterInner, ok bool) {
	d := c.Digits[a]
	row = d.Pos(Row) < d.Pos(Time) && c.Factor(a, Row) > 1 && c.Factor(a, Time) > 1
	dealt = c.Factor(a, Time) > 1 && (c.Factor(a, Cluster) > 1 && d.Pos(Cluster) > d.Pos(Time) ||
		c.Factor(a, Slice) > 1 && d.Pos(Slice) > d.Pos(Time))
	clusterInner = c.Factor(a, Cluster) > 1 && c.Factor(a, Slice) > 1 && d.Pos(Cluster) > d.Pos(Slice)
	ok = c.CanonicalOrder(a, legacyOrder(row, dealt, clusterInner)) == d
	return row, dealt, clusterInner, ok
}
