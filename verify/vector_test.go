package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// vectorGolden are the shipped Vector Engine kernels: the manual's
// intra-slice examples (002 L4590-5473) and the decode and attention
// layers' softmax, rmsnorm and silu, with the slices to sample (0: all).
var vectorGolden = []struct {
	name   string
	sample int
	cite   string
}{
	{"ve-relu", 0, "002 L4590-4607"},
	{"ve-staged-pipeline", 0, "002 L4662-4676"},
	{"ve-add-constant", 0, "002 L4760-4771"},
	{"ve-sigmoid", 0, "002 L4779-4791"},
	{"ve-five-alu", 0, "002 L4905-4906"},
	{"ve-residual-max", 0, "002 L4996-5008"},
	{"ve-stash-fxp", 0, "002 L5018-5028"},
	{"ve-stash-narrow-widen", 0, "002 L5038-5050"},
	{"ve-vrf-add", 0, "002 L5066-5081"},
	{"ve-bias-minus-x", 0, "002 L5125-5133"},
	{"ve-full-pipeline", 0, "vector-and-kernels.md VEC-EX-22"},
	{"ve-branch-relu", 0, "002 L4801, L5060-5062"},
	{"ve-reduce-time", 0, "002 L5404-5426"},
	{"ve-reduce-packet", 0, "002 L5427-5449"},
	{"ve-reduce-time-packet", 0, "002 L5450-5473"},
	{"ve-vcg-time", 0, "002 L5816-5836"},
	{"ve-vcg-time-packet", 0, "002 L5976-6001"},
	{"ve-pair-sub-reverse", 0, "002 L5142-5152"},
	{"ve-pair-add", 0, "002 L5173-5181"},
	{"ve-pair-one-side", 0, "002 L5190-5199"},
	{"ve-pair-fp-mul", 0, "002 L5217-5227"},
	{"ve-pair-asymmetric", 0, "002 L5237-5248"},
	{"softmax-decode", 4, "llama3-70b-decode.yaml softmax"},
	{"softmax-attention", 3, "attention-head.yaml softmax"},
	{"rmsnorm-decode", 0, "llama3-70b-decode.yaml rmsnorm_in"},
	{"silu-decode", 3, "llama3-70b-decode.yaml gate activation"},
}

// TestVerifyVectorGolden runs every shipped Vector Engine kernel on the
// simulator and compares it with its expression reference: every element
// inside its interval bound, none unchecked.
func TestVerifyVectorGolden(t *testing.T) {
	files, err := filepath.Glob("../workloads/kernels/*.json")
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, g := range vectorGolden {
		listed[g.name] = true
	}
	for _, f := range files {
		p := loadKernelT(t, f)
		if p.Reference != nil && p.Reference.Op == kernel.RefExpr {
			assert.True(t, listed[p.Name], "%s: an expression kernel not in vectorGolden", f)
		}
	}
	for _, g := range vectorGolden {
		t.Run(g.name, func(t *testing.T) {
			if g.name == "softmax-attention" && testing.Short() {
				// 16 MB of scores through five chains: 20 s under the race
				// detector; `make test-long` runs it.
				t.Skip("the attention head's softmax runs in make test-long")
			}
			p := loadKernelT(t, "../workloads/kernels/"+g.name+".json")
			rep, err := Verify(engines.Default(), p, Options{Seed: 42, Sample: g.sample})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "%s (%s)", rep, g.cite)
			assert.Zero(t, rep.Comparison.Mismatches)
			assert.Zero(t, rep.Comparison.Unchecked, "every element bounded")
			assert.Positive(t, rep.Compared)
			assert.Zero(t, rep.MACs)
		})
	}
}

// TestVerifyVectorWrongConfigs: the simulator runs the Vector Engine's
// configurations. A kernel that states one wrong configuration — another
// op, another constant, another argument mode, a VRF read of the wrong
// flit, a reduce that drops a time step — fails against the reference.
func TestVerifyVectorWrongConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		op, stage  int
		wrong      func(c *kernel.StageConfig)
	}{
		{"clip Min for Max", "ve-relu", 1, 5, func(c *kernel.StageConfig) { c.VectorOp.Op = "Min" }},
		{"constant", "ve-add-constant", 1, 5, func(c *kernel.StageConfig) { c.VectorOp.Slots[0].Operands[0].Bits = 101 }},
		{"Mode01 for Mode10", "ve-bias-minus-x", 1, 5, func(c *kernel.StageConfig) { c.VectorOp.Mode = "Mode01" }},
		{"int_width", "ve-staged-pipeline", 1, 10, func(c *kernel.StageConfig) { c.VectorConvert.IntWidth = 30 }},
		{"VRF flit", "ve-vrf-add", 3, 5, func(c *kernel.StageConfig) {
			r := *c.VectorOp.Slots[0].Operands[0].VRF
			r.Entries = []kernel.SeqEntry{{Size: 256, Stride: 8}} // steps through the VRF instead of re-reading
			c.VectorOp.Slots[0].Operands[0].VRF = &r
		}},
		{"reduce op", "ve-reduce-packet", 1, 6, func(c *kernel.StageConfig) { c.VectorReduce.Op = "Max" }},
		{"reduce digits", "ve-reduce-time", 1, 6, func(c *kernel.StageConfig) {
			c.VectorReduce.Time = []kernel.VeReduceDigit{{Size: 2, Reduce: true}, {Size: 8}}
			c.VectorReduce.OutPackets = 8
		}},
		{"no Valid Count Generator (time)", "ve-vcg-time", 1, 3, func(c *kernel.StageConfig) { c.VectorInit.VCG = nil }},
		{"no Valid Count Generator (packet)", "ve-vcg-time-packet", 1, 3, func(c *kernel.StageConfig) { c.VectorInit.VCG = nil }},
		{"VCG threshold", "ve-vcg-time", 1, 3, func(c *kernel.StageConfig) { c.VectorInit.VCG.Gates[0].V = 13 }},
		{"guard dropped", "ve-branch-relu", 1, 5, func(c *kernel.StageConfig) { c.VectorOp.Slots[0].Guard = kernel.GuardAlways }},
		{"comparison bit", "ve-branch-relu", 1, 4, func(c *kernel.StageConfig) { c.VectorBranch.Cmps[3].Op = "Greater" }},
		{"stash not read", "ve-residual-max", 1, 9, func(c *kernel.StageConfig) {
			c.VectorOp.Slots[0].Operands[0] = kernel.VeOperandConfig{Kind: kernel.VeConst}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "../workloads/kernels/" + tc.file + ".json"
			good := loadKernelT(t, path)
			require.NoError(t, engines.Lower(engines.Default(), good))
			st := good.Ops[tc.op].Stages[tc.stage]
			require.NotNil(t, st.Config, "%s", st.Kind)
			tc.wrong(st.Config)
			p := loadKernelT(t, path)
			p.Ops[tc.op].Stages[tc.stage].Config = st.Config
			rep, err := Verify(engines.Default(), p, Options{Seed: 1})
			if err != nil {
				// A configuration the executor refuses is caught too.
				assert.True(t, strings.Contains(err.Error(), "reduce") || strings.Contains(err.Error(), "vector"), "%v", err)
				return
			}
			assert.False(t, rep.Pass, "%s", rep)
			assert.Positive(t, rep.Comparison.Mismatches)
		})
	}
}

// vectorFuzzKernels are Vector Engine kernels whose configurations
// TestVerifyVectorMutatedConfigs mutates: every stage kind of the block.
var vectorFuzzKernels = []string{"ve-staged-pipeline", "ve-residual-max", "ve-vrf-add", "ve-reduce-time", "ve-reduce-packet", "ve-five-alu", "silu-decode", "ve-pair-one-side", "ve-pair-asymmetric", "ve-vcg-time", "ve-vcg-time-packet"}

// TestVerifyVectorMutatedConfigs: hand-written Vector Engine
// configurations with any value in any field give a verdict or an error,
// never a panic (house rule).
func TestVerifyVectorMutatedConfigs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	n := 400
	if testing.Short() {
		n = 60
	}
	for i := 0; i < n; i++ {
		stage, which := 3+rng.IntN(12), rng.IntN(40)
		val := mutationValues[rng.IntN(len(mutationValues))]
		name := vectorFuzzKernels[i%len(vectorFuzzKernels)]
		t.Run(fmt.Sprintf("%s_stage%d_num%d_%g", name, stage, which, val), func(t *testing.T) {
			p := loadKernelT(t, "../workloads/kernels/"+name+".json")
			op := 0
			for k, o := range p.Ops {
				if o.Kind == kernel.OpChain && o.Context == kernel.CtxMain {
					op = k
				}
			}
			runMutated(t, "../workloads/kernels/"+name+".json", op, stage, which, val)
		})
	}
}

// runWith runs a golden kernel on the given input values (the rest of
// each input 0) and returns its output's values.
func runWith(t *testing.T, name string, inputs map[string]map[int]float64) []float64 {
	t.Helper()
	p := loadKernelT(t, "../workloads/kernels/"+name+".json")
	require.NoError(t, engines.Lower(engines.Default(), p))
	d, err := NewDevice(engines.Default(), p.Chips)
	require.NoError(t, err)
	for _, tn := range p.Tensors {
		if tn.Role != kernel.Input {
			continue
		}
		l, err := NewLogical(p, tn)
		require.NoError(t, err)
		for i, v := range inputs[tn.Name] {
			l.Vals[i] = v
		}
		require.NoError(t, WriteHBMTensor(d, p, tn, l))
	}
	x, err := NewExecutor(d, p, ExecOptions{})
	require.NoError(t, err)
	require.NoError(t, x.Run())
	out, _ := p.Tensor(p.Reference.Output)
	got, err := ReadHBMTensor(d, p, out)
	require.NoError(t, err)
	return got.Vals
}

// TestVectorExampleValues: the values the manual's examples produce
// (vector-and-kernels.md §3, §4.8: the catalog's derived values), run
// through the golden kernels' configurations on the simulator.
func TestVectorExampleValues(t *testing.T) {
	at := func(vals ...float64) map[int]float64 {
		m := map[int]float64{}
		for i, v := range vals {
			m[i] = v
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		cite   string
		inputs map[string]map[int]float64
		want   map[int]float64
	}{
		// VEC-EX-4: 0 → sigmoid(100) = 1 → 1; −300 → sigmoid(−200) → 0;
		// −100 → sigmoid(0) = 0.5 → 1 (round half away, "FxpToFp and FpToFxp").
		{"ve-staged-pipeline", "002 L4662-4676", map[string]map[int]float64{"x": at(0, -300, -100)}, at(1, 0, 1)},
		// VEC-EX-3: ReLU.
		{"ve-relu", "002 L4590-4607", map[string]map[int]float64{"x": at(-1.5, 0, 2)}, at(0, 0, 2)},
		// VEC-EX-5: exp(sqrt(((5 + 1)·2)·3)) = e^6.
		{"ve-five-alu", "002 L4905-4906", map[string]map[int]float64{"x": at(5)}, at(float64(float32(403.4288024902344)))},
		// VEC-EX-8: max(2x, x).
		{"ve-residual-max", "002 L4996-5008", map[string]map[int]float64{"x": at(-3, 4)}, at(-3, 8)},
		// VEC-EX-9: max(x + 100, x), the sum wrapping.
		{"ve-stash-fxp", "002 L5018-5028", map[string]map[int]float64{"x": at(5, 2147483600)}, at(105, 2147483600)},
		// VEC-EX-10: max(sigmoid(x), x).
		{"ve-stash-narrow-widen", "002 L5038-5050", map[string]map[int]float64{"x": at(-2, 3)}, at(float64(float32(0.11920292)), 3)},
		// VEC-EX-11: 7 − x.
		{"ve-bias-minus-x", "002 L5125-5133", map[string]map[int]float64{"x": at(10)}, at(-3)},
		// VEC-EX-14, -15: x[a, i] at 2a + i (axes A, I): group 0 is I = 0.
		{"ve-pair-add", "002 L5173-5181", map[string]map[int]float64{"x": {0: 2, 1: 5}}, at(7)},
		{"ve-pair-one-side", "002 L5190-5199", map[string]map[int]float64{"x": {0: 2, 1: 5}}, at(25)},
		// VEC-EX-17: exp(0)·3; VEC-EX-18: g1 − g0.
		{"ve-pair-asymmetric", "002 L5237-5248", map[string]map[int]float64{"x": {0: 0, 1: 3}}, at(3)},
		{"ve-pair-sub-reverse", "002 L5142-5152", map[string]map[int]float64{"x": {0: 1.5, 1: 4}}, at(2.5)},
		// Comparison sets the group bit of negative values; MulInt by 0 on
		// group 1 only (002 L4801, L5062).
		{"ve-branch-relu", "002 L4801, L5060-5062", map[string]map[int]float64{"x": at(-5, 7, 0, math.MinInt32)}, at(0, 7, 0, 0)},
		// VEC-EX-22 (the vendor's full pipeline): clamp(round((x + 100)·2.5), 0, 1000).
		{"ve-full-pipeline", "vector-and-kernels.md VEC-EX-22", map[string]map[int]float64{"x": at(0, -101, 400)}, at(250, 0, 1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runWith(t, tc.name, tc.inputs)
			for i, w := range tc.want {
				assert.Equal(t, w, got[i], "%s: output %d (%s)", tc.name, i, tc.cite)
			}
		})
	}
	// VEC-EX-24: x[a, r] = r (at 16a + r) → 0 + … + 15 = 120.
	x := map[int]float64{}
	for r := 0; r < 16; r++ {
		for a := 0; a < 8; a++ {
			x[a*16+r] = float64(r)
		}
	}
	assert.Equal(t, []float64{120, 120, 120, 120, 120, 120, 120, 120}, runWith(t, "ve-reduce-time", map[string]map[int]float64{"x": x}), "002 L5404-5426")
	// VEC-EX-25: lanes [1, 2, 3, 4] → (1 + 2) + (3 + 4); [1e8, 1, −1e8, 1] → 0 by the tree (a left fold gives 1).
	got := runWith(t, "ve-reduce-packet", map[string]map[int]float64{"x": {0: 1, 1: 2, 2: 3, 3: 4, 4: 1e8, 5: 1, 6: -1e8, 7: 1}})
	assert.Equal(t, []float64{10, 0}, got[:2], "002 L5427-5449")
	// VEC-EX-26: x[r] = r → 15.
	x = map[int]float64{}
	for r := 0; r < 16; r++ {
		x[r] = float64(r)
	}
	assert.Equal(t, 15.0, runWith(t, "ve-reduce-time-packet", map[string]map[int]float64{"x": x})[0], "002 L5450-5473")
}
