package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/verify"
)

// K chunks (Space.TileK): a contracted axis tiled, each chunk's partial
// sums committed to DM and added by the split reduce (interleaved fetch,
// pair-mode add, 002 L7151-7177).

// tileKSpaces need K chunks for 8 Rows: a Row of 8 KB (002 L4118,
// L4151-4155) holds 4096 bf16, K = 8192 is two chunks of it.
var tileKSpaces = []struct {
	name, src string
	long      bool
}{
	{"long-k-gemm", "name: long-k-gemm\neinsum: IK,KJ->IJ\naxes: {I: 16, J: 8, K: 8192}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", false},
}

func TestTileKExperiment(t *testing.T) {
	for _, w := range tileKSpaces {
		s := newSpace(t, loadWorkload(t, w.src))
		require.True(t, s.TileK())
		n, legal := 0, 0
		eachLegal(t, s, func(c *Candidate, x *Evaluated) {
			legal++
			if s.KTiles(c) == 1 {
				return
			}
			n++
			if n <= 3 {
				rep, err := verify.Verify(engines.Default(), x.Program, verify.Options{Seed: 3, Sample: 2})
				require.NoError(t, err, c.String(s.P))
				assert.True(t, rep.Pass, "%s: %s", c.String(s.P), rep)
				t.Logf("%s: %.0f cycles", c.String(s.P), x.Report.Cycles)
			}
		})
		t.Logf("%d legal, %d K-chunked", legal, n)
	}
}

func TestTileKDebug(t *testing.T) {
	s := newSpace(t, loadWorkload(t, tileKSpaces[0].src))
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	n, legal := 0, 0
	errs := map[string]int{}
	s.Enumerate(func(c Candidate) bool {
		if s.KTiles(&c) == 1 {
			return true
		}
		n++
		prog, err := ev.build(&c)
		if err == nil {
			err = engines.Lower(engines.Default(), prog)
		}
		if err == nil {
			legal++
			if legal <= 4 {
				lp, _ := ev.build(&c)
				require.NoError(t, ev.low.lower(lp))
				r, cerr := ev.model.Evaluate(lp)
				if cerr == nil {
					cerr = r.Err()
				}
				require.NoError(t, cerr, c.String(s.P))
				x, why := ev.evaluateWhy(0, &c, nil)
				require.NotNil(t, x, "%s: %s", c.String(s.P), why)
				rep, err := verify.Verify(engines.Default(), x.Program, verify.Options{Seed: 3, Sample: 2})
				require.NoError(t, err, c.String(s.P))
				assert.True(t, rep.Pass, "%s: %s", c.String(s.P), rep)
				t.Logf("LEGAL %s: %.0f cycles", c.String(s.P), x.Report.Cycles)
			}
		}
		if err != nil {
			msg := err.Error()
			key := msg
			if len(key) > 60 {
				key = key[:60]
			}
			if errs[key] == 0 {
				t.Logf("%s: %s", c.String(s.P), msg)
			}
			errs[key]++
		}
		return true
	})
	t.Logf("%d K-chunked enumerated, %d distinct errors: %v", n, len(errs), errs)
}
