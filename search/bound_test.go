package search

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/verify"
)

// TestLowerBoundsAdmissible: on every legal candidate of small spaces (a
// sample under -short, eachLegal) the bounds lie at or below the cost
// model's cycles, and for at least one candidate the compute bound is
// within a factor of the price (the bound is not vacuous).
func TestLowerBoundsAdmissible(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, w := range []struct {
		name, src string
		dm        int  // DM bytes per slice; 0: the spec's
		long      bool // without -short only (28174 candidates)
	}{
		{"dot", "", 0, false}, {"gemv", "", 0, false},
		{"reduced-gemm", reducedGEMM, 0, false},
		// J spans 512 bytes: slices splitting it shorten in1's HBM runs.
		{"wide-gemm", `name: wide-gemm
einsum: IK,KJ->IJ
axes: {I: 4, J: 256, K: 32}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`, 0, false},
		{"reduced-bmm", reducedBMM, 0, false},
		// A DM of 1 KB (512 bytes) a slice makes most candidates tile
		// (single- and double-buffered, one or two tiled axes): the serial
		// bound's steps are checked against the scheduler.
		{"tiled-gemm", `name: tiled-gemm
einsum: IK,KJ->IJ
axes: {I: 8, J: 64, K: 64}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`, 1024, true},
		{"tiled-bmm", `name: tiled-bmm
einsum: VMK,VNK->VMN
axes: {V: 2, M: 4, N: 8, K: 32}
dtype: {in: bf16, acc: f32, out: bf16}
chips: 1
`, 512, false},
	} {
		t.Run(w.name, func(t *testing.T) {
			if w.long {
				longOnly(t)
			}
			var s *Space
			if w.src == "" {
				s = newSpace(t, workloadFile(t, w.name+".yaml"))
			} else {
				s = newSpace(t, loadWorkload(t, w.src))
			}
			if w.dm > 0 {
				sp := *s.Spec
				sp.DM.BytesPerSlice.Value = w.dm
				s.Spec = &sp
			}
			legal, tiled, switched, tight, serial := 0, 0, 0, 0.0, 0.0
			eachLegal(t, s, func(c *Candidate, x *Evaluated) {
				legal++
				if c.Switch {
					switched++
				}
				requireBoundsBelow(t, s, c, x.Report.Cycles)
				b, cy := s.lowerBounds(c), x.Report.Cycles
				tight = max(tight, b.max()/cy)
				serial = max(serial, s.candidateBound(c)/cy)
				if c.TileOrder[0] != NoAxis {
					tiled++
				}
			})
			require.Positive(t, legal)
			assert.Greater(t, serial, 0.2, "the best bound/price ratio")
			if w.dm > 0 {
				assert.Positive(t, tiled, "tiled candidates")
			}
			if w.name != "dot" && w.name != "gemv" {
				// The stationary operand's free axes split slices: the
				// streamed one is switched over them in some candidates.
				assert.Positive(t, switched, "switched candidates")
			}
			t.Logf("%d legal candidates (%d tiled, %d switched), best bound/price %.3f, candidate bound %.3f", legal, tiled, switched, tight, serial)
		})
	}
}

// eachLegal evaluates every candidate of s (built, lowered, priced
// exactly), or under -short every sampleEvery-th, and calls f with each
// legal one.
func eachLegal(t *testing.T, s *Space, f func(c *Candidate, x *Evaluated)) {
	t.Helper()
	eachLegalEvery(t, s, sampleEvery(), f)
}

// eachLegalEvery is eachLegal at a stride of every candidates.
func eachLegalEvery(t *testing.T, s *Space, every int, f func(c *Candidate, x *Evaluated)) {
	t.Helper()
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	i := 0
	s.Enumerate(func(c Candidate) bool {
		if i%every == 0 {
			if x := ev.evaluate(i, &c, nil); x != nil {
				f(&c, x)
			}
		}
		i++
		return true
	})
}

// boundsBelowWhere checks every lower bound of every legal candidate of s
// that keep selects (a sample under -short, eachLegal) against its price,
// and returns how many it checked.
func boundsBelowWhere(t *testing.T, s *Space, keep func(*Candidate) bool) int {
	t.Helper()
	n := 0
	eachLegal(t, s, func(c *Candidate, x *Evaluated) {
		if keep(c) {
			n++
			requireBoundsBelow(t, s, c, x.Report.Cycles)
		}
	})
	return n
}

// verifyKinds runs on the simulator, against the reference, the first
// legal candidate of s of each kind (kind's value) among those keep
// selects, once per sample size (0: every slice), and returns the kinds
// verified.
func verifyKinds[K comparable](t *testing.T, s *Space, keep func(*Candidate) bool, kind func(*Candidate) K, samples ...int) map[K]bool {
	t.Helper()
	ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
	require.NoError(t, err)
	verified := map[K]bool{}
	s.Enumerate(func(c Candidate) bool {
		kd := kind(&c)
		if !keep(&c) || verified[kd] {
			return true
		}
		x := ev.evaluate(0, &c, nil)
		if x == nil {
			return true
		}
		verified[kd] = true
		for _, sample := range samples {
			rep, err := verify.Verify(engines.Default(), x.Program, verify.Options{Seed: 5, Sample: sample})
			require.NoError(t, err, c.String(s.P))
			assert.True(t, rep.Pass, "%s (sample %d): %s", c.String(s.P), sample, rep)
		}
		return true
	})
	return verified
}

// requireBoundsBelow checks every lower bound of candidate c against its
// price cy, and the placement bound against the skeleton bounds.
func requireBoundsBelow(t *testing.T, s *Space, c *Candidate, cy float64) {
	t.Helper()
	b := s.lowerBounds(c)
	require.LessOrEqual(t, b.compute, cy, "compute bound of %s", named{s, c})
	require.LessOrEqual(t, b.input[0], cy, "input 0 bound of %s", named{s, c})
	require.LessOrEqual(t, b.input[1], cy, "input 1 bound of %s", named{s, c})
	require.LessOrEqual(t, b.dma, cy, "DMN and engine bound of %s", named{s, c})
	require.LessOrEqual(t, b.hbm, cy, "HBM bound of %s", named{s, c})
	require.LessOrEqual(t, b.sub, cy, "sub-context bound of %s", named{s, c})
	require.LessOrEqual(t, s.placementBound(c), b.max(), "placement bound of %s", named{s, c})
	require.LessOrEqual(t, s.candidateBound(c), cy, "candidate bound of %s", named{s, c})
}

// TestLayoutRun: where layoutRun claims that a tensor's DMA runs one
// element at a time, the lowered program's DMA commands of that tensor
// move packets of at most that many bytes; the claim is made on some
// legal candidates of each space (the bound check of
// TestLowerBoundsAdmissible then covers it).
func TestLayoutRun(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, src := range []string{reducedGEMM, reducedBMM} {
		s := newSpace(t, loadWorkload(t, src))
		names := [NumTensors]string{s.P.In[0].Name, s.P.In[1].Name, s.P.Out.Name}
		claims := 0
		eachLegal(t, s, func(c *Candidate, x *Evaluated) {
			for tn := range NumTensors {
				run := s.layoutRun(c, tn)
				if run > 1e18 {
					continue
				}
				claims++
				moved := 0
				for _, op := range x.Program.Ops {
					if op.DMA == nil {
						continue
					}
					hbm := op.Src
					if tn == TensorOut {
						hbm = op.Dst
					}
					if tt, ok := x.Program.Tensor(hbm); !ok || (tt.Name != names[tn] && tt.View != names[tn]) {
						continue
					}
					moved++
					for _, d := range op.DMA.Descriptors {
						require.LessOrEqual(t, float64(d.Stride0), run, "%s tensor %d", named{s, c}, tn)
					}
				}
				require.Positive(t, moved, "%s: tensor %d's DMA ops", named{s, c}, tn)
			}
		})
		assert.Positive(t, claims, src)
		t.Logf("%d claims", claims)
	}
}

// TestFullPacketOutputRun: with Interleaved accumulation on 8 Rows, where
// another axis holds some of the Row factors and the output's innermost HBM
// axis is not whole in the packet, run claims the output's DMA runs no
// longer than that axis's Row factor (the prefill layer's qk: Sq in Row,
// Sk innermost in HBM, its scores written 4 bytes at a time); the lowered
// programs' output DMA commands move runs of at most that many bytes, the
// claim binds on some legal candidates, and their bounds stay under their
// prices.
func TestFullPacketOutputRun(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newSpace(t, loadWorkload(t, `name: scores
einsum: SD,TD->ST
axes: {S: 16, T: 32, D: 32}
dtype: {in: bf16, acc: f32, out: f32}
chips: 1
`))
	n, err := s.P.Out.Bytes()
	require.NoError(t, err)
	claims := 0
	eachLegal(t, s, func(c *Candidate, x *Evaluated) {
		rows := 1
		for a := range s.P.Axes {
			rows *= c.Factor(a, Row)
		}
		run, free := s.run(c, TensorOut, float64(n), true), s.run(c, TensorOut, float64(n), false)
		if rows != s.Spec.Reducer.OutputBusElements.Value || run >= free {
			return
		}
		claims++
		requireBoundsBelow(t, s, c, x.Report.Cycles)
		for _, op := range x.Program.Ops {
			if op.DMA == nil {
				continue
			}
			if tt, ok := x.Program.Tensor(op.Dst); !ok || (tt.Name != s.P.Out.Name && tt.View != s.P.Out.Name) {
				continue
			}
			for _, d := range op.DMA.Descriptors {
				require.LessOrEqual(t, float64(d.Stride0), run, "%s", named{s, c})
			}
		}
	})
	assert.Positive(t, claims, "candidates whose full packet ends the output's runs")
	t.Logf("%d claims", claims)
}

// TestRunRefused: a candidate whose input is loaded into DM in runs under
// an HBM-to-DM packet's 8 bytes (runRefused, bounded at +Inf and never
// built by the search) is illegal when built; some are, in each space.
func TestRunRefused(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	for _, tc := range []struct{ name, src string }{
		{"reduced-gemm", reducedGEMM},
		{"scores", `name: scores
einsum: SD,TD->ST
axes: {S: 16, T: 32, D: 32}
dtype: {in: bf16, acc: f32, out: f32}
chips: 1
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSpace(t, loadWorkload(t, tc.src))
			ev, err := newEvaluator(s, &Stats{Illegal: map[string]*RuleStat{}})
			require.NoError(t, err)
			refused, dma, i, every := 0, 0, 0, sampleEvery()
			s.Enumerate(func(c Candidate) bool {
				if i++; i%every != 0 || !s.runRefused(&c, 0) && !s.runRefused(&c, 1) {
					return true
				}
				refused++
				require.Equal(t, math.Inf(1), s.candidateBound(&c))
				x, why := ev.evaluateWhy(i, &c, nil)
				require.Nil(t, x, "%s: refused by its runs, yet legal", named{s, &c})
				require.NotEmpty(t, why, named{s, &c})
				if why == "DMA-R1" {
					dma++
				}
				return true
			})
			assert.Positive(t, refused, "candidates refused by their runs")
			t.Logf("%d candidates refused by their runs, %d of them by DMA-R1 first", refused, dma)
		})
	}
}
