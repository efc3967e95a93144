package verify

import (
	"fmt"
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
