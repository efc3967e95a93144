package search

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/engines"
)

// Every order of each axis's digits (Space.AllOrders, plan
// --digit-orders all): the builder reads any order through the digits'
// strides (Candidate.Below) and pairs the digits of a level range that do
// not nest together (build.part); the bounds read the order through the
// runs (Space.run). docs/spec-decisions.md "Digit order: every order".

// newAllOrdersSpace is newSpace with every digit order.
func newAllOrdersSpace(t testing.TB, src string) *Space {
	t.Helper()
	return newSpace(t, loadWorkload(t, src)).WithAllOrders(true)
}

// namedOrders reports whether every axis of c has the zero order or a named one.
func namedOrders(c *Candidate) bool {
	for a := range MaxAxes {
		if _, _, _, ok := c.NamedOrder(a); !ok {
			return false
		}
	}
	return true
}

// TestAllOrdersHoldNamed: the space with every digit order holds every
// candidate of the named space, and more.
func TestAllOrdersHoldNamed(t *testing.T) {
	t.Parallel()
	nm := newSplitSpace(t, loadWorkload(t, tinyBMM))
	all := nm.WithAllOrders(true)
	seen := map[string]bool{}
	n, other := 0, 0
	all.Enumerate(func(c Candidate) bool {
		require.NoError(t, all.Check(&c), c.String(all.P))
		seen[c.String(all.P)] = true
		n++
		if !namedOrders(&c) {
			other++
		}
		return true
	})
	m := 0
	nm.Enumerate(func(c Candidate) bool {
		m++
		require.True(t, seen[c.String(nm.P)], "named candidate %s not among all orders", c.String(nm.P))
		return true
	})
	assert.Greater(t, n, m)
	assert.Positive(t, other)
	t.Logf("%d candidates with every order, %d named, %d of other orders", n, m, other)
}

// TestAllOrdersBoundsBelow: every lower bound of a candidate (the skeleton
// bounds, the candidate bound from its fields) is below its exact cost,
// on every 40th candidate of another order than the named ones of three
// small spaces, where legal.
func TestAllOrdersBoundsBelow(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, src := range []string{tinyGEMV, rowsOuterGEMM, tinyQK} {
		s := newAllOrdersSpace(t, src)
		t.Run(s.P.Workload, func(t *testing.T) {
			ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
			require.NoError(t, err)
			i, n, every := 0, 0, 40
			s.Enumerate(func(c Candidate) bool {
				if namedOrders(&c) {
					return true
				}
				if i++; i%every != 0 {
					return true
				}
				if x := ev.evaluate(i, &c, nil); x != nil {
					requireBoundsBelow(t, s, &c, x.Report.Cycles)
					n++
				}
				return true
			})
			assert.Positive(t, n)
			t.Logf("%d of %d candidates of other orders checked legal", n, i)
		})
	}
}

// TestAllOrdersSolveMatchesExhaustive: with every digit order the branch
// and bound proves the exhaustive optimum.
func TestAllOrdersSolveMatchesExhaustive(t *testing.T) {
	if raceDetector {
		t.Skip("the exhaustive searches run without the race detector (make test's unit-norace)")
	}
	t.Parallel()
	s := newAllOrdersSpace(t, tinyBMM)
	requireSolveMatchesExhaustive(t, s)
}

// kind is a candidate's stationary input and its axes' orders that are
// none of the named ones.
type kind struct {
	stationary uint8
	orders     string
}

func kindOf(s *Space, c *Candidate) kind {
	k := kind{stationary: c.Stationary}
	for a, ax := range s.P.Axes {
		if _, _, _, ok := c.NamedOrder(a); !ok {
			k.orders += ax.Name + ":" + c.OrderText(a) + " "
		}
	}
	return k
}

// TestAllOrdersPlansVerify: plans of other orders than the named ones run
// on the simulator and match the reference, every slice simulated: the
// first legal one of each stationary input and axis order (of every 25th
// under -short), the tile digit's orders included.
func TestAllOrdersPlansVerify(t *testing.T) {
	t.Parallel()
	if raceDetector {
		t.Skip("the simulator runs without the race detector (make test's unit-norace)")
	}
	for _, src := range []string{rowsOuterGEMM, tinyQK} {
		s := newAllOrdersSpace(t, src)
		t.Run(s.P.Workload, func(t *testing.T) {
			// Under -short, the candidates of every 25th kind.
			index := map[kind]int{}
			verified := verifyKinds(t, s, func(c *Candidate) bool {
				if namedOrders(c) {
					return false
				}
				k := kindOf(s, c)
				i, ok := index[k]
				if !ok {
					i = len(index)
					index[k] = i
				}
				return !testing.Short() || i%25 == 0
			}, func(c *Candidate) kind { return kindOf(s, c) }, 0)
			assert.GreaterOrEqual(t, len(verified), 4, "kinds verified: %v", verified)
			t.Logf("verified %d kinds", len(verified))
		})
	}
}

// TestAllOrdersMapSpec: a mapping file's expressions state an order none
// of the named choices holds (K's Packet digit above its Time digit: the
// packet's lanes 4 positions apart, `m![K / 4]`); the candidates that
// agree with it have it, and the named orders hold none.
func TestAllOrdersMapSpec(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newAllOrdersSpace(t, dealtOutGEMM).WithMaxTiles(1)
	k := s.P.AxisIndex("K")
	m, err := constraints.ParseMapSpec("map.yaml", []byte("stationary: in1\npacket: 'm![K / 4]'\n"), s.P)
	require.NoError(t, err)
	n := 0
	s.EnumerateWhere(m.Where(s.P), func(c Candidate) bool {
		n++
		assert.Equal(t, 4, c.Below(k, Packet), c.String(s.P))
		assert.Equal(t, 1, c.Below(k, Time), c.String(s.P))
		return true
	})
	assert.Positive(t, n)
	n = 0
	s.WithAllOrders(false).EnumerateWhere(m.Where(s.P), func(Candidate) bool { n++; return true })
	assert.Zero(t, n, "the named orders do not hold it")
}

// TestAllOrdersWinGEMM4K: on GEMM 4096³ every digit order finds a plan the
// named ones do not hold (the stationary I's Cluster digit below its Slice
// digit under the switch: the two clusters' TRF loads read neighbouring
// blocks of in0), 585,858 cycles against 621,288; both proven.
func TestAllOrdersWinGEMM4K(t *testing.T) {
	if raceDetector {
		t.Skip("two whole GEMM 4096³ searches: make test runs it in unit-norace")
	}
	s := newSplitSpace(t, workloadFile(t, "gemm-4k.yaml"))
	nm, err := Solve(s, Options{})
	require.NoError(t, err)
	all, err := Solve(s, Options{AllOrders: true})
	require.NoError(t, err)
	require.True(t, nm.Proof.Proven)
	require.True(t, all.Proof.Proven)
	assert.Less(t, all.Best.Report.Cycles, nm.Best.Report.Cycles)
	c := &all.Best.Candidate
	assert.Error(t, s.Check(c), "not in the named space: %s", c.String(s.P))
	t.Logf("every order %.0f cycles (%s); named %.0f (%s)", all.Best.Report.Cycles, c.String(s.P),
		nm.Best.Report.Cycles, nm.Best.Candidate.String(s.P))
}

// accCapGEMM's J takes more Time steps than the accumulator holds inner
// to K (RED-R8, RED-R9) in some time orders.
const accCapGEMM = `name: acc-cap-gemm
einsum: IK,KJ->IJ
axes: {I: 4, J: 256, K: 64}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`

// TestOrderFreeRefusals: a candidate the engines refuse by one of
// orderFreeRules is refused in every digit order and DM layout (by that
// rule, or by another the engines check before it), and the refusal cache,
// told of its zero-order form's refusal in HBM layouts (refusals.put), answers
// for the others with that rule without building them.
func TestOrderFreeRefusals(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newAllOrdersSpace(t, accCapGEMM).WithMaxTiles(1) // untiled: the tile digit's orders are the others' times a few
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	ev.refused = newRefusals()
	rule := func(err error) string {
		var v *engines.Violation
		if errors.As(err, &v) {
			return v.Rule.ID
		}
		return ""
	}
	plain := map[Candidate]string{} // rule of each candidate's zero-order, HBM-layout form
	checked, same, every, i := 0, 0, 4*sampleEvery(), 0
	s.Enumerate(func(c Candidate) bool {
		if refusalKey(&c) == c {
			return true
		}
		if i++; i%every != 0 {
			return true
		}
		k := refusalKey(&c)
		r, ok := plain[k]
		if !ok {
			o := ev.tryBound(&k, math.Inf(1))
			if o.lowered {
				ev.refused.put(&k, o.err)
			}
			r = rule(o.err)
			plain[k] = r
		}
		if !orderFreeRules[r] {
			return true
		}
		p, err := ev.build(&c)
		if err == nil {
			err = ev.low.lower(p)
		}
		// Refused: by the same rule, or by a rule of an earlier stage the
		// engines check first (the order-free one still holds).
		require.NotEmpty(t, rule(err), "%s: refused by %s in the zero order, legal here", c.String(s.P), r)
		if rule(err) == r {
			same++
		}
		got, ok := ev.refused.get(&c)
		require.True(t, ok, "the memo knows %s", c.String(s.P))
		require.Equal(t, r, rule(got))
		checked++
		return true
	})
	assert.Positive(t, checked)
	t.Logf("%d candidates of other orders refused as their zero-order forms, %d by the same rule first", checked, same)
}
