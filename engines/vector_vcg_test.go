package engines

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

var off = kernel.DisabledVCGGate

func ctr(limit, dim, stride int) kernel.VCGCounter {
	return kernel.VCGCounter{Limit: limit, Dim: dim, Stride: stride}
}

// vcgRow is vc(s, t) over t for one slice.
func vcgRow(c *kernel.VCGConfig, s, n int) []int {
	out := make([]int, n)
	for t := range out {
		out[t] = VCGValidCount(c, s, t)
	}
	return out
}

// TestVCGHardware: the VCG's formula on the manual's hardware examples
// (002 L6166-6519; vector-and-kernels.md VCG-EX-1-6, -20-22).
func TestVCGHardware(t *testing.T) {
	// VCG-EX-1 (002 L6217-6231): limits [3, 2, 2], c_0 fastest; counter i
	// is made visible as gate i's index against V = its value + 1.
	seq := [][3]int{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {0, 0, 1}, {1, 0, 1}, {2, 0, 1}, {0, 1, 1}, {1, 1, 1}, {2, 1, 1}}
	for tt, want := range seq {
		for i := 0; i < 3; i++ {
			for v := 0; v < 3; v++ {
				c := &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{{Limit: 3, Dim: kernel.VCGNone}, {Limit: 2, Dim: kernel.VCGNone}, {Limit: 2, Dim: kernel.VCGNone}},
					Gates: [3]kernel.VCGGate{off, off, off}}
				c.Counters[i].Dim, c.Counters[i].Stride = kernel.VCGGate0, 1
				c.Gates[0] = kernel.VCGGate{Mask: 0, Match: 0, V: v}
				assert.Equal(t, want[i] < v, VCGValidCount(c, 0, tt) == 8, "VCG-EX-1 t=%d c_%d=%d against %d", tt, i, want[i], v)
			}
		}
	}
	// VCG-EX-2 (002 L6241-6248): t = 4 → idx_p = 8, idx_g0 = 1, idx_g1 = 0.
	c := &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(3, kernel.VCGPacket, 8), ctr(2, kernel.VCGGate0, 1), ctr(2, kernel.VCGGate0+1, 1)},
		StrideP: 8, VP: 9, Gates: [3]kernel.VCGGate{{Mask: 0, Match: 0, V: 2}, {Mask: 0, Match: 0, V: 1}, off}}
	assert.Equal(t, 1, VCGValidCount(c, 0, 4), "9 − idx_p 8 = 1, idx_g0 1 < 2, idx_g1 0 < 1")
	c.Gates[0].V = 1
	assert.Equal(t, 0, VCGValidCount(c, 0, 4), "idx_g0 = 1 is not below 1")

	// VCG-EX-3 (002 L6291-6299): the packet sawtooth.
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(3, kernel.VCGPacket, 8)}, StrideP: 8, VP: 19, Gates: [3]kernel.VCGGate{off, off, off}}
	assert.Equal(t, []int{8, 8, 3}, vcgRow(c, 5, 3))
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(3, kernel.VCGPacket, 4)}, StrideP: 4, VP: 11, Gates: [3]kernel.VCGGate{off, off, off}}
	assert.Equal(t, []int{4, 4, 3}, vcgRow(c, 0, 3))

	// VCG-EX-4 (002 L6332-6344): standard gate, H = 5 as Ho 4 (slice bits
	// 2-3) × Hi 2; match 2 in Ho's bits (0b1000, ambiguity A-11: the
	// formula's unshifted s & mask).
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(2, kernel.VCGGate0, 1)}, Gates: [3]kernel.VCGGate{{Mask: 0b1100, Match: 0b1000, V: 1}, off, off}}
	for s := 0; s < 16; s++ {
		want := map[int][]int{0: {8, 8}, 1: {8, 8}, 2: {8, 0}, 3: {0, 0}}[s>>2]
		assert.Equal(t, want, vcgRow(c, s, 2), "VCG-EX-4 slice %d (Ho %d)", s, s>>2)
	}
	// VCG-EX-5 (002 L6345-6356): transposed, Ho inner.
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(2, kernel.VCGGate0, 1)}, Gates: [3]kernel.VCGGate{{Mask: 0b11, Match: 1, V: 1, Transposed: true}, off, off}}
	for ho, want := range [][]int{{8, 8}, {8, 0}, {8, 0}, {8, 0}} {
		assert.Equal(t, want, vcgRow(c, ho, 2), "VCG-EX-5 Ho %d", ho)
	}

	// VCG-EX-6 (002 L6357-6441): [H = 5, C = 5, W = 19], the heatmap.
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(3, kernel.VCGPacket, 8), ctr(2, kernel.VCGGate0, 1), ctr(2, kernel.VCGGate0+1, 1)},
		StrideP: 8, VP: 19, Gates: [3]kernel.VCGGate{{Mask: 0b0011, Match: 2, V: 1}, {Mask: 0b1100, Match: 0b1000, V: 1}, off}}
	heat := [][]int{ // rows t, columns slices 0..15 (002 L6418-6432)
		{8, 8, 8, 0, 8, 8, 8, 0, 8, 8, 8, 0, 0, 0, 0, 0},
		{8, 8, 8, 0, 8, 8, 8, 0, 8, 8, 8, 0, 0, 0, 0, 0},
		{3, 3, 3, 0, 3, 3, 3, 0, 3, 3, 3, 0, 0, 0, 0, 0},
		{8, 8, 0, 0, 8, 8, 0, 0, 8, 8, 0, 0, 0, 0, 0, 0},
		{8, 8, 0, 0, 8, 8, 0, 0, 8, 8, 0, 0, 0, 0, 0, 0},
		{3, 3, 0, 0, 3, 3, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0},
		{8, 8, 8, 0, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{8, 8, 8, 0, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{3, 3, 3, 0, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{8, 8, 0, 0, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{8, 8, 0, 0, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{3, 3, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for tt, row := range heat {
		for s, want := range row {
			assert.Equal(t, want, VCGValidCount(c, s, tt), "VCG-EX-6 t=%d slice %d", tt, s)
		}
	}
	// Step 2 of the build-up (002 L6386-6392): W and C only, 6 flits.
	c2 := *c
	c2.Counters = c.Counters[:2]
	c2.Gates[1] = off
	for co, want := range [][]int{{8, 8, 3, 8, 8, 3}, {8, 8, 3, 8, 8, 3}, {8, 8, 3, 0, 0, 0}, {0, 0, 0, 0, 0, 0}} {
		assert.Equal(t, want, vcgRow(&c2, co, 6), "VCG-EX-6 step 2, Co %d", co)
	}

	// VCG-EX-20 (002 L6471-6484): standard H = 14, Ho 8 × Hi 3.
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(3, kernel.VCGGate0, 1)}, Gates: [3]kernel.VCGGate{{Mask: 0b111, Match: 4, V: 2}, off, off}}
	for ho := 0; ho < 8; ho++ {
		want := map[bool][]int{true: {8, 8, 8}}[ho < 4]
		switch {
		case ho == 4:
			want = []int{8, 8, 0}
		case ho > 4:
			want = []int{0, 0, 0}
		}
		assert.Equal(t, want, vcgRow(c, ho, 3), "VCG-EX-20 Ho %d", ho)
	}
	// VCG-EX-21 (002 L6486-6505): transposed H = 19, Ho 8 inner × Hi 3.
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(3, kernel.VCGGate0, 1)}, Gates: [3]kernel.VCGGate{{Mask: 0b111, Match: 3, V: 2, Transposed: true}, off, off}}
	for ho := 0; ho < 8; ho++ {
		want := []int{8, 8, 0}
		if ho < 3 {
			want = []int{8, 8, 8}
		}
		assert.Equal(t, want, vcgRow(c, ho, 3), "VCG-EX-21 Ho %d", ho)
	}
	// VCG-EX-22 (002 L6508-6519): n = 50 in Packet + Time, two packet
	// counters.
	c = &kernel.VCGConfig{Lanes: 8, Counters: []kernel.VCGCounter{ctr(3, kernel.VCGPacket, 8), ctr(3, kernel.VCGPacket, 24)}, StrideP: 8, VP: 50, Gates: [3]kernel.VCGGate{off, off, off}}
	assert.Equal(t, []int{8, 8, 8, 8, 8, 8, 2, 0, 0}, vcgRow(c, 0, 9))
}

// vcgOracle is vc(s, t) from the mappings themselves: the lanes of flit
// (s, t) whose coordinate of axis r, summed over the Slice, Time and
// Packet loops of r, lies in the axis (a prefix, when it does); a flit
// whose r loops are past their live range holds none.
func vcgOracle(t *testing.T, r string, n int, s VectorStream, sl, tt int) int {
	t.Helper()
	coord := func(e *mapping.Expr, i int) (int, bool) {
		ds, err := veDigits(e)
		require.NoError(t, err)
		c := 0
		for _, d := range ds {
			v := i / d.pos % d.size
			if d.kind == ceTerm && d.axis == r {
				if v >= d.live {
					return 0, false
				}
				c += v * d.stride
			}
		}
		return c, true
	}
	cs, ok1 := coord(s.Slice, sl)
	ct, ok2 := coord(s.Time, tt)
	if !ok1 || !ok2 {
		return 0
	}
	inPacket := false
	ds, _ := veDigits(s.Packet)
	for _, d := range ds {
		inPacket = inPacket || d.kind == ceTerm && d.axis == r
	}
	if !inPacket {
		if cs+ct < n {
			return s.Packet.Size()
		}
		return 0
	}
	vc := 0
	for l := 0; l < s.Packet.Size(); l++ {
		cp, ok := coord(s.Packet, l)
		if ok && cs+ct+cp < n {
			require.Equal(t, vc, l, "valid lanes are a prefix")
			vc++
		}
	}
	return vc
}

// TestDeriveVCG: the VCG configurations the placements of the interface
// examples derive (002 L5574-6165; VCG-EX-7-19, -23), each checked against
// the mappings' own valid counts on every slice and flit, and the
// placements the hardware cannot express, with their rules.
func TestDeriveVCG(t *testing.T) {
	for _, tc := range []struct {
		name, axes, slice, time, packet string
		gate                            kernel.VCGGate
		stride, vp                      int
		rule                            string
	}{
		{"VCG-EX-7 Slice + Time R = 17 (002 L5649-5688)", "R=17, X=32, A=4", "X, R # 24 / 3", "R # 24 % 3", "A # 8", kernel.VCGGate{Mask: 0b111, Match: 5, V: 2}, 0, 0, ""},
		{"VCG-EX-8 multi-level Slice R = 13 (002 L5695-5729)", "R=13, X=32, A=8", "R # 16 / 8, X, R # 16 / 2 % 4", "R # 16 % 2", "A", kernel.VCGGate{Mask: 0b10000011, Match: 0b10000010, V: 1}, 0, 0, ""},
		{"VCG-EX-9 transposed R = 5 (002 L5746-5777)", "R=5, X=64, A=8", "X, R # 8 % 4", "R # 8 / 4", "A", kernel.VCGGate{Mask: 0b11, Match: 1, V: 1, Transposed: true}, 0, 0, ""},
		{"VCG-EX-11 Time only R = 12 (002 L5816-5836)", "R=12, A=8", "1 # 256", "R # 16", "A", kernel.VCGGate{Mask: 0, Match: 0, V: 12}, 0, 0, ""},
		// The manual's Packet m![A # 8] leaves R % 8 out of the stream (its
		// six positions are all data); with R's own packet part the flexible
		// Time order is the point: both Time parts feed the packet dim.
		{"VCG-EX-14 Time, flexible order R = 45 (002 L5910-5939)", "R=45, X=2, Y=256", "Y", "R # 48 / 8 % 2, X, R # 48 / 8 / 2", "R # 48 % 8", off, 8, 45, ""},
		{"VCG-EX-15 Packet only R = 3 (002 L5949-5969)", "R=3", "1 # 256", "1", "R # 8", off, 3, 3, ""},
		{"VCG-EX-16 Time + Packet R = 19 (002 L5976-6001)", "R=19", "1 # 256", "R # 24 / 8", "R # 24 % 8", off, 8, 19, ""},
		{"VCG-EX-17 R = 7 fills 4 lanes (002 L6045-6070)", "R=7", "1 # 256", "R # 8 / 4", "R # 8 % 4 # 8", off, 4, 7, ""},
		{"Slice only R = 5", "R=5, X=32, A=8", "X, R # 8", "1", "A", kernel.VCGGate{Mask: 0b111, Match: 5, V: 0}, 0, 0, ""},
		{"Slice + Packet, n a multiple of the lanes (002 L6539-6547)", "R=40", "R # 256 / 8", "1", "R # 256 % 8", kernel.VCGGate{Mask: 31, Match: 5, V: 0}, 8, 8, ""},
		{"VCG-EX-10 transposed R = 14 over R # 20 (002 L5784-5809)", "R=14, X=64, A=8", "X, R # 20 % 4", "R # 20 / 4", "A", off, 0, 0, "VCG-R5"},
		{"VCG-EX-12 non-outer ordering (002 L5843-5870)", "R=13, X=32, A=8", "X, R # 16 / 2 % 4, R # 16 / 8", "R # 16 % 2", "A", off, 0, 0, "VCG-R3"},
		{"VCG-EX-13 Time-Slice-Time (002 L5876-5902)", "R=13, X=64, A=8", "X, R # 16 / 2 % 4", "R # 16 / 8, R # 16 % 2", "A", off, 0, 0, "VCG-R4"},
		{"VCG-EX-19 Slice + Packet R = 2045 (002 L6137-6165)", "R=2045", "R # 2048 / 8", "1", "R # 2048 % 8", off, 0, 0, "VCG-R6"},
		{"VCG-EX-23 Slice + Packet n = 10 (002 L6524-6538)", "R=10, X=128", "X, R # 16 / 8", "1", "R # 16 % 8", off, 0, 0, "VCG-R6"},
		{"VEC-EX-27 Slice + Time + Packet R = 13 (002 L5474-5497, A-10)", "R=13, X=64", "X, R # 32 / 8", "R # 32 / 4 % 2", "R # 32 % 4 # 8", off, 0, 0, "VCG-R6"},
		{"packet outer part (002 L6002-6035)", "R=21", "1 # 256", "R # 24 % 8", "R # 24 / 8 # 8", off, 0, 0, "VCG-R2"},
		{"mixed packet axes (002 L6078-6103)", "R=7, A=2", "1 # 256", "R # 8 / 4", "R # 8 % 4, A", off, 0, 0, "VCG-R2"},
		{"a slice part of 3", "R=20, X=64", "X, R # 24 / 8", "R # 24 % 8", "1 # 8", off, 0, 0, "VCG-R9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ax := vax(t, tc.axes)
			m := func(s string) *mapping.Expr { return ceM(t, ax, s) }
			s := VectorStream{DType: dtype.F32, Slice: m(tc.slice), Time: m(tc.time), Packet: m(tc.packet)}
			c, err := DeriveVCG(Default(), "R", s)
			if tc.rule != "" {
				var v *Violation
				require.True(t, errors.As(err, &v), "%v", err)
				assert.Equal(t, tc.rule, v.Rule.ID, "%v", err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, c)
			assert.Equal(t, tc.gate, c.Gates[0], "gate 0")
			assert.Equal(t, tc.stride, c.StrideP, "stride_p")
			assert.Equal(t, tc.vp, c.VP, "V_p")
			n, _ := ax.Size("R")
			for sl := 0; sl < s.Slice.Size(); sl++ {
				for tt := 0; tt < s.Time.Size(); tt++ {
					require.Equal(t, vcgOracle(t, "R", n, s, sl, tt), VCGValidCount(c, sl, tt), "slice %d flit %d (%s)", sl, tt, c)
				}
			}
		})
	}
	// An unpadded axis needs no VCG (002 L6110-6130, VCG-EX-18).
	ax := vax(t, "R=24")
	c, err := DeriveVCG(Default(), "R", VectorStream{Slice: ceM(t, ax, "1 # 256"), Time: ceM(t, ax, "R / 8"), Packet: ceM(t, ax, "R % 8")})
	require.NoError(t, err)
	assert.Nil(t, c, "VCG-EX-18: aligned R = 24")
	assert.Contains(t, fmt.Sprint(kernel.VCGConfig{Axis: "R", StrideP: 8, VP: 19, Gates: [3]kernel.VCGGate{{Mask: 7, Match: 5, V: 2}, off, off}}), "gate 0 mask 0x7 match 5 V 2 standard")
}
