package verify

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// mutateNumber replaces the which-th number (in sorted JSON path order) of
// the JSON form of v with val and decodes the result into out. It reports
// false when v has no numbers or the mutated form does not decode.
func mutateNumber(v any, which int, val float64, out any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var tree any
	if json.Unmarshal(b, &tree) != nil {
		return false
	}
	var paths []string
	var walk func(x any, path string, set *float64) any
	walk = func(x any, path string, set *float64) any {
		switch t := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				t[k] = walk(t[k], path+"."+k, set)
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i], fmt.Sprintf("%s[%d]", path, i), set)
			}
		case float64:
			if set != nil && len(paths) == which {
				paths = append(paths, path)
				return *set
			}
			paths = append(paths, path)
		}
		return x
	}
	walk(tree, "", nil)
	if len(paths) == 0 {
		return false
	}
	which %= len(paths)
	paths = paths[:0]
	walk(tree, "", &val)
	b, err = json.Marshal(tree)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, out) == nil
}

// runMutated lowers kernel path, replaces one number of one op's DMA
// command or one stage's configuration and verifies the result: it must
// pass, fail or return an error, never panic.
func runMutated(t testing.TB, path string, op, stage, which int, val float64) {
	p := loadKernelT(t, path)
	require.NoError(t, engines.Lower(engines.Default(), p))
	o := p.Ops[op%len(p.Ops)]
	if o.Kind != kernel.OpChain {
		var cmd kernel.DMACommand
		if !mutateNumber(o.DMA, which, val, &cmd) {
			return
		}
		o.DMA = &cmd
	} else {
		st := o.Stages[1+stage%(len(o.Stages)-1)]
		var c kernel.StageConfig
		if !mutateNumber(st.Config, which, val, &c) {
			return
		}
		st.Config = &c
	}
	rep, err := Verify(engines.Default(), p, Options{Seed: 1})
	if err == nil {
		_ = rep.String()
		_, _ = json.Marshal(rep)
	}
}

// fuzzKernels are the kernels whose configurations the robustness tests
// mutate: the contraction chain, a switch, the Vector Engine with a VRF
// operand.
var fuzzKernels = []string{"../workloads/kernels/hello-dot.json", "testdata/gemv-transpose.json", "../workloads/kernels/hello-mul.json"}

var mutationValues = []float64{-1, 0, 1, 2, 3, 7, 31, 64, 1 << 16, 1 << 31, 1 << 40, -1 << 40}

// TestVerifyMutatedConfigs: hand-written configurations with any value in
// any field give a verdict or an error, never a panic (house rule).
func TestVerifyMutatedConfigs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 150
	if raceEnabled || testing.Short() {
		n = 25
	}
	for i := 0; i < n; i++ {
		op, stage, which := rng.IntN(5), rng.IntN(8), rng.IntN(64)
		val := mutationValues[rng.IntN(len(mutationValues))]
		path := fuzzKernels[i%len(fuzzKernels)]
		t.Run(fmt.Sprintf("%s_op%d_stage%d_num%d_%g", path[strings.LastIndexByte(path, '/')+1:], op, stage, which, val), func(t *testing.T) {
			runMutated(t, path, op, stage, which, val)
		})
	}
}

// FuzzVerifyConfig: as TestVerifyMutatedConfigs, with the fuzzer choosing
// the field and the value.
func FuzzVerifyConfig(f *testing.F) {
	f.Add(uint8(0), uint8(3), uint8(1), uint8(0), int64(2))
	f.Add(uint8(0), uint8(0), uint8(0), uint8(3), int64(1<<40))
	f.Add(uint8(1), uint8(3), uint8(2), uint8(5), int64(-1))
	f.Add(uint8(2), uint8(3), uint8(5), uint8(2), int64(32))
	f.Fuzz(func(t *testing.T, k, op, stage, which uint8, val int64) {
		runMutated(t, fuzzKernels[int(k)%len(fuzzKernels)], int(op), int(stage), int(which), float64(val))
	})
}
