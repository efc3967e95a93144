package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInfeasibleExplained: a space with no legal candidate is explained by
// the rules that empty it and the nearest paddings that do not.
func TestInfeasibleExplained(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		rules     []string // the minimal core
		relax     string   // the first relaxation
	}{
		// 24 bf16 elements fill neither a 64-byte packet nor divide into
		// 32-byte flits (002 L3011, L4099), and a dot product has no output
		// axis for a packet of columns: 32 elements make one 64-byte
		// packet.
		{"odd-dot", "name: odd-dot\neinsum: A,A->\naxes: {A: 24}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n",
			[]string{"SPACE-PACKET"}, "pad A from 24 to 32 (+33.3%)"},
		// Both sizes prime: no packet of 16 or 32 bf16 divides J (002
		// L4099, L3916-3927) and I, the only output axis, is prime, so no
		// packet of columns either; J padded to a multiple of 16 (64: the
		// first of 54, 56, 64 that 16 divides) gives packets.
		{"prime-gemv", "name: prime-gemv\neinsum: IJ,J->I\naxes: {I: 31, J: 53}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n",
			[]string{"SPACE-PACKET"}, "pad J from 53 to 64 (+20.8%)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSpace(t, loadWorkload(t, tc.src))
			r, err := Solve(s, Options{})
			require.NoError(t, err)
			require.Nil(t, r.Best)
			x, err := Infeasible(s, r, 0)
			require.NoError(t, err)
			var got []string
			for _, v := range x.Rules {
				got = append(got, v.Rule)
			}
			for _, want := range tc.rules {
				assert.Contains(t, got, want)
			}
			require.NotEmpty(t, x.Relaxations, x.String())
			if tc.relax != "" {
				assert.Equal(t, tc.relax, x.Relaxations[0].String())
			}
			// Each relaxation plans: its space has a legal candidate.
			for _, rl := range x.Relaxations {
				sizes := map[string]int{}
				for _, p := range rl.Pads {
					require.Greater(t, p.To, p.From)
					sizes[p.Axis] = p.To
				}
				rs, err := s.resized(sizes)
				require.NoError(t, err)
				res, err := Solve(rs, Options{})
				require.NoError(t, err)
				require.NotNil(t, res.Best, "%s plans", rl)
			}
			t.Log(x.String())
		})
	}
}

func TestPaddedSizes(t *testing.T) {
	assert.Equal(t, []int{32}, paddedSizes(24))
	assert.Equal(t, []int{1000, 1008, 1024}, paddedSizes(999))
	assert.Equal(t, []int{8192}, paddedSizes(8191))
	assert.Equal(t, []int{2054, 2056, 2064, 2080, 2112, 2176, 2304, 2560, 3072, 4096}, paddedSizes(2053))
	assert.Empty(t, paddedSizes(1))
}
