package constraints

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/workload"
)

func levelSpace(t *testing.T, src string) *Space {
	t.Helper()
	w, err := workload.Parse([]byte(src), "test.yaml")
	require.NoError(t, err)
	p, err := NewProblem(w, "")
	require.NoError(t, err)
	s, err := NewSpace(p, engines.Default())
	require.NoError(t, err)
	return s
}

// TestLevelTable: the enumerator and Check read one table. Over a small
// batched matmul (every role: batch V, contracted K, the free axes M and
// N; an f32 accumulator, so K may split across slices), every candidate
// enumerated passes Check and uses only the levels the table opens to its
// axes' roles; every level the table opens (Tile and Chip aside: tiles
// only where a tile does not fit, one chip) is used by some candidate; and
// a factor at a level the table closes is rejected by Check with the role
// named.
func TestLevelTable(t *testing.T) {
	s := levelSpace(t, `name: levels
einsum: VMK,VKN->VMN
axes: {V: 2, M: 8, N: 32, K: 32}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`)
	used := map[[2]int]bool{} // (role, level) with a factor > 1
	n := 0
	s.Enumerate(func(c Candidate) bool {
		n++
		require.NoError(t, s.Check(&c))
		for a := range s.P.Axes {
			r := s.Role(a, c.Stationary)
			for l := range NumLevels {
				if c.Factor(a, l) > 1 {
					require.True(t, s.opens(r, l, c.Content), "%s at %s", RoleName(r), l)
					used[[2]int{int(r), int(l)}] = true
				}
			}
		}
		return true
	})
	require.Positive(t, n)
	for r := range NumRoles {
		for l := range NumLevels {
			if l == Tile || l == Chip || roleLevels[r][l] == never {
				continue
			}
			assert.True(t, used[[2]int{int(r), int(l)}], "no candidate puts a %s axis at %s", RoleName(r), l)
		}
	}
	// A closed level: the contracted K on Cluster where the space does not
	// split K across clusters, the batch V on Row.
	var base Candidate
	found := false
	k, v := s.P.AxisIndex("K"), s.P.AxisIndex("V")
	s.Enumerate(func(c Candidate) bool {
		base, found = c, c.Factor(k, Packet)%2 == 0 && c.Factor(v, Time) == 2
		return !found
	})
	require.True(t, found)
	for _, tc := range []struct {
		axis  string
		level Level
		role  string
	}{{"K", Cluster, "contracted"}, {"V", Row, "batch"}} {
		c := base
		a := s.P.AxisIndex(tc.axis)
		// Move a factor 2 from Time (V) or Packet (K) to the closed level.
		from := Time
		if tc.axis == "K" {
			from = Packet
		}
		c.Split[a][from] /= 2
		c.Split[a][tc.level] *= 2
		err := s.WithClusterK(false).Check(&c)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "a "+tc.role+" axis takes no "+tc.level.String())
	}
}
