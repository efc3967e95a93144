package search

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// TestStoredPlansInSpace: the mapping of every stored einsum plan
// (results/plans) is a candidate of the mapspace it was proven in — the
// named digit orders, or every order where the plan says so — so that the
// space cannot lose a stored optimum without a test saying so (it once
// lost the decode layer's qk, 15,427 cycles, to a narrower ring block and
// proved 15,491; docs/spec-decisions.md "Switch: the ring's block and the
// streamed operand's innermost axis"). The candidate is found among those
// with the plan's factors and digit orders; a padded plan's in the space
// of its padded sizes.
func TestStoredPlansInSpace(t *testing.T) {
	if raceDetector {
		t.Skip("single-threaded enumeration, slow under the race detector: make test runs it in unit-norace")
	}
	files, err := filepath.Glob("../results/plans/*.plan.json*")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		pl, err := plan.Read(f)
		require.NoError(t, err, f)
		if len(pl.Mapping.Axes) == 0 || pl.Workload.File == "" {
			continue // an op plan of the Vector Engine, or no workload file
		}
		pads := map[string]int{} // planned in a padded space (SolveAnyShape)
		for _, a := range pl.Mapping.Axes {
			if a.Valid != 0 && a.Valid != a.Size {
				pads[a.Name] = a.Size
			}
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			w, err := workload.Load("../" + pl.Workload.File)
			require.NoError(t, err)
			if len(pl.Workload.Epilogue) > 0 {
				w, err = workload.Fuse(w, []workload.Fusion{{Einsum: pl.Workload.Op, Ops: pl.Workload.Epilogue}}) // plan --fuse
				require.NoError(t, err)
			}
			p, err := constraints.NewProblem(w, pl.Workload.Op)
			require.NoError(t, err)
			s, err := NewSpace(p, engines.Default())
			require.NoError(t, err)
			if len(pads) > 0 {
				s, err = s.resized(pads)
				require.NoError(t, err)
			}
			if pl.Search.MaxTiles > 0 {
				s = s.WithMaxTiles(pl.Search.MaxTiles)
			}
			s = s.WithAllOrders(pl.Search.DigitOrders == "all")
			want := pl.Mapping
			factors := func(c *Candidate, levels ...Level) bool {
				for a, am := range want.Axes {
					got := [NumLevels]int{}
					wantF := [NumLevels]int{am.Tile, am.Chip, am.Cluster, am.Slice, am.Time, am.Row, am.Packet}
					for _, l := range levels {
						got[l] = c.Factor(a, l)
						if got[l] != wantF[l] {
							return false
						}
					}
				}
				return true
			}
			found := false
			s.EnumerateWhere(func(st Stage, c *Candidate) bool {
				switch st {
				case StageSlices:
					return factors(c, Cluster, Slice)
				case StagePacket:
					return factors(c, Packet)
				case StageRows:
					return factors(c, Row)
				case StageTiles:
					return factors(c, Tile, Time) && c.DoubleBuffer == want.DoubleBuffer
				case StageDigits:
					m := s.Mapping(c)
					for a := range m.Axes {
						if c.Digits[a] != 0 && m.Axes[a].Digits != want.Axes[a].Digits {
							return false
						}
					}
				}
				return true
			}, func(c Candidate) bool {
				found = reflect.DeepEqual(s.Mapping(&c), want)
				return !found
			})
			assert.True(t, found, "no candidate of the space has the stored mapping")
		})
		checked++
	}
	t.Logf("%d stored einsum plans checked", checked)
	assert.Positive(t, checked)
}
