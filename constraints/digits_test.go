package constraints

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allPerms calls f with every permutation of the levels.
func allPerms(f func([]Level)) {
	xs := make([]int, NumLevels)
	for i := range xs {
		xs[i] = i
	}
	permute(xs, func(p []int) bool {
		seq := make([]Level, len(p))
		for i, l := range p {
			seq[i] = Level(l)
		}
		f(seq)
		return true
	})
}

// TestDigitOrderRoundTrip: every order of the seven levels encodes to a
// distinct valid DigitOrder that reads back as itself; the zero order is
// the zero value.
func TestDigitOrderRoundTrip(t *testing.T) {
	seen := map[DigitOrder]bool{}
	allPerms(func(seq []Level) {
		d := OrderOf(seq...)
		require.True(t, d.valid(), "%v", seq)
		lv := d.Levels()
		require.Equal(t, seq, lv[:], "%v", seq)
		for i, l := range seq {
			require.Equal(t, i, d.Pos(l))
		}
		require.False(t, seen[d], "%v encodes like another order", seq)
		seen[d] = true
	})
	assert.Len(t, seen, 5040)
	assert.Equal(t, DigitOrder(0), OrderOf(Tile, Chip, Cluster, Slice, Time, Row, Packet))
	assert.False(t, DigitOrder(1).valid(), "Tile and Chip at one place")
	assert.False(t, DigitOrder(1<<(3*NumLevels)).valid())
}

// oldBelow is Candidate.Below as it was written before digit orders were
// general (session 21): the zero order, then the Row digit above Time,
// Cluster and Slice dealt out below Time, the Cluster digit below Slice,
// each a correction of the strides.
func oldBelow(c *Candidate, a int, l Level, row, dealt, inner bool) int {
	n := 1
	for k := l + 1; k < NumLevels; k++ {
		n *= c.Factor(a, k)
	}
	if row {
		switch l {
		case Time:
			n /= c.Factor(a, Row)
		case Row:
			n *= c.Factor(a, Time)
		}
	}
	if dealt {
		switch l {
		case Cluster, Slice:
			n /= c.Factor(a, Time)
		case Time:
			n *= c.Factor(a, Cluster) * c.Factor(a, Slice)
		}
	}
	if inner {
		switch l {
		case Cluster:
			n /= c.Factor(a, Slice)
		case Slice:
			n *= c.Factor(a, Cluster)
		}
	}
	return n
}

// TestNamedOrdersBelow: the named choices' orders (legacyOrder) give
// every digit of a factor above 1 the stride the old corrections gave it, over random factors
// of the levels (1 to 8 each, a unit level often), and NamedOrder reads
// the flags back where they mean something; any other order is not named.
func TestNamedOrdersBelow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var c Candidate
		for l := Level(0); l < NumLevels; l++ {
			f := int32(1)
			if l != Chip && r.IntN(3) > 0 {
				f = int32(1 + r.IntN(8))
			}
			c.Split[0][l] = f
		}
		for flags := range 8 {
			row, dealt, inner := flags&4 != 0, flags&2 != 0, flags&1 != 0
			if row && dealt {
				continue // never both on one axis (the roles differ)
			}
			c.SetNamedOrder(0, row, dealt, inner)
			require.Equal(t, c.Digits[0], c.CanonicalOrder(0, c.Digits[0]))
			for l := Level(0); l < NumLevels; l++ {
				if c.Factor(0, l) == 1 {
					continue // a unit digit's stride means nothing
				}
				require.Equal(t, oldBelow(&c, 0, l, row, dealt, inner), c.Below(0, l),
					"level %s, factors %v, row %v dealt %v inner %v", l, c.Split[0], row, dealt, inner)
			}
			r2, d2, i2, ok := c.NamedOrder(0)
			require.True(t, ok)
			assert.Equal(t, row && c.Factor(0, Row) > 1 && c.Factor(0, Time) > 1, r2)
			assert.Equal(t, dealt && c.Factor(0, Time) > 1 && c.Factor(0, Cluster)*c.Factor(0, Slice) > 1, d2)
			assert.Equal(t, inner && c.Factor(0, Cluster) > 1 && c.Factor(0, Slice) > 1, i2)
		}
	}
	var c Candidate
	for l := Level(0); l < NumLevels; l++ {
		c.Split[0][l] = 2
	}
	c.Split[0][Chip] = 1
	c.Digits[0] = c.CanonicalOrder(0, OrderOf(Tile, Slice, Time, Cluster, Row, Packet))
	_, _, _, ok := c.NamedOrder(0)
	assert.False(t, ok, "the Cluster digit alone below Time is no named order")
}

// TestCanonicalOrder: orders that nest the levels with factors above 1
// alike are one canonical order, whatever they do with the unit levels,
// and the canonical order keeps the relative order of the others.
func TestCanonicalOrder(t *testing.T) {
	var c Candidate
	for l := Level(0); l < NumLevels; l++ {
		c.Split[0][l] = 1
	}
	c.Split[0][Slice], c.Split[0][Time], c.Split[0][Packet] = 4, 8, 2
	canon := map[DigitOrder][]Level{}
	allPerms(func(seq []Level) {
		d := c.CanonicalOrder(0, OrderOf(seq...))
		var live []Level
		for _, l := range seq {
			if c.Factor(0, l) > 1 {
				live = append(live, l)
			}
		}
		if prev, ok := canon[d]; ok {
			require.Equal(t, prev, live)
		}
		canon[d] = live
		lv := d.Levels()
		got := slices.DeleteFunc(lv[:], func(l Level) bool { return c.Factor(0, l) == 1 })
		require.Equal(t, live, got)
	})
	assert.Len(t, canon, 6, "3! orders of Slice, Time and Packet")
}

// TestCheckDigits: Check takes the named orders in the named space and
// any order below the tile digit with all orders, and names what is
// wrong otherwise.
func TestCheckDigits(t *testing.T) {
	s := levelSpace(t, `name: digits
einsum: IK,KJ->IJ
axes: {I: 64, J: 256, K: 64}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`)
	var base Candidate
	found := false
	s.Enumerate(func(c Candidate) bool {
		for a := range s.P.Axes {
			if c.Factor(a, Slice) > 1 && c.Factor(a, Time) > 1 && c.Factor(a, Packet) > 1 && c.Digits[a] == 0 {
				base, found = c, true
				return false
			}
		}
		return true
	})
	require.True(t, found)
	require.NoError(t, s.Check(&base))
	a := 0
	for ; a < len(s.P.Axes); a++ {
		if base.Factor(a, Slice) > 1 && base.Factor(a, Time) > 1 && base.Factor(a, Packet) > 1 {
			break
		}
	}
	var live []Level
	for l := Level(0); l < NumLevels; l++ {
		if base.Factor(a, l) > 1 {
			live = append(live, l)
		}
	}
	// Reverse the axis's levels: the Packet digit on top, which no named
	// order does.
	slices.Reverse(live)
	c := base
	c.Digits[a] = OrderOf(live...)
	all := s.WithAllOrders(true)
	require.NoError(t, all.Check(&c), c.String(s.P))
	_, _, _, named := c.NamedOrder(a)
	require.False(t, named, c.String(s.P))
	assert.ErrorContains(t, s.Check(&c), "none of the named choices")
	bad := base
	bad.Digits[a] = 1 // Tile and Chip at one place
	assert.ErrorContains(t, all.Check(&bad), "is not an order of the levels")
	unit := base
	var unitLevel Level
	for l := Level(0); l < NumLevels; l++ {
		if base.Factor(a, l) == 1 && l != Tile && l != Chip {
			unitLevel = l
			break
		}
	}
	require.NotZero(t, unitLevel)
	unit.Digits[a] = OrderOf(unitLevel, Tile, Chip)
	assert.ErrorContains(t, all.Check(&unit), "not canonical")
	spare := base
	spare.Digits[len(s.P.Axes)] = OrderOf(Chip, Tile)
	assert.ErrorContains(t, all.Check(&spare), "unused axis slot")
}
