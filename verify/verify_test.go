package verify

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// einsumMACs is the multiply-accumulates of a two-input einsum: the product
// of the sizes of every declared axis (each kernel below names all of its
// axes in its inputs).
func einsumMACs(p *kernel.Program) int64 {
	n := int64(1)
	for _, a := range p.Axes.List() {
		n *= int64(a.Size)
	}
	return n
}

// TestVerifyGoldenKernels: the manual's Hello kernels (002 L300-566, as
// workloads/kernels with the decisions of docs/spec-decisions.md), the
// GEMV with the manual's switch broadcast (002 L395-399, here over a
// vector split across the 256 slices), a GEMV whose matrix arrives in
// transposed slice order (Transpose, 002 L3255-3263) and the manual's GEMM
// size (002 L479) pass against the reference; the Reducers perform exactly
// the einsum's multiply-accumulates. The Hello Vector Engine kernels (002
// L158-298) pass exactly, and so do an i8 GEMV (i8 × i8 → i32 accumulation,
// 002 L4391, cast to i8) and an addition whose fetch casts i8 to i32
// (002 L1966). The update_slice kernel writes the new row into the
// cache's last S and leaves the rest as it was.
func TestVerifyGoldenKernels(t *testing.T) {
	for _, tc := range []struct {
		path   string
		sample int
	}{
		{"../workloads/kernels/hello-dot.json", 0},
		{"../workloads/kernels/hello-gemv.json", 0},
		{"../workloads/kernels/hello-gemm.json", 0},
		{"testdata/gemv-switch.json", 0},
		{"testdata/gemv-transpose.json", 0},
		{"../workloads/kernels/gemm-512x512x2048.json", 6},
		{"../workloads/kernels/hello-add.json", 0},
		{"../workloads/kernels/hello-mul.json", 0},
		{"testdata/gemv-i8.json", 0},
		{"testdata/add-i8.json", 0},
		// Lowering: a tensor on both clusters moves on each cluster's DMNs,
		// and HBM rows longer than a DMA packet (4096 bytes, 002 L2428-2429)
		// move in 4096-byte packets.
		{"testdata/add-two-clusters.json", 0},
		{"testdata/gemv-long-rows.json", 0},
		// The KV-cache update (search/opslice.go): one HBM-to-HBM DMA
		// into the cache's last row, in place; the whole cache compared.
		{"../workloads/kernels/update-slice.json", 0},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if raceEnabled && (tc.sample > 0 || tc.path == "../workloads/kernels/hello-gemm.json") {
				// The manual's GEMM sizes: the reference alone is 2^28 or
				// 2^29 float64 MACs (sampled slices or not), too slow under
				// the race detector; `make test` runs this test without it
				// too (unit-norace), which covers them.
				t.Skip("skipped under the race detector")
			}
			p := loadKernelT(t, tc.path)
			rep, err := Verify(engines.Default(), p, Options{Seed: 42, Sample: tc.sample})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "%s", rep)
			assert.Zero(t, rep.Comparison.Mismatches)
			out, _ := p.Tensor(p.Reference.Output)
			n := out.Element.Size()
			if p.Reference.Op != kernel.RefEinsum {
				assert.Equal(t, n, rep.Compared)
				assert.Zero(t, rep.MACs, "the Vector Engine's kernels use no Reducer")
				return
			}
			if tc.sample == 0 {
				assert.Equal(t, n, rep.Compared)
				assert.Equal(t, einsumMACs(p), rep.MACs)
				assert.Empty(t, rep.Simulated)
			} else {
				// Each sampled slice produces 1/256 of the output.
				assert.Equal(t, tc.sample*n/256, rep.Compared)
				assert.Equal(t, int64(tc.sample)*einsumMACs(p)/256, rep.MACs)
				assert.Len(t, rep.Simulated, tc.sample)
			}
		})
	}
}

// TestVerifyWrongConfigs: the simulator runs the configurations, not the
// einsum. A kernel that states one wrong configuration in Stage.Config —
// a fetch stride, a switch route, a TRF Sequencer address, a VRF operand's
// address — fails
// verification and names the first wrong element.
func TestVerifyWrongConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		op, stage  int
		wrong      func(c *kernel.StageConfig) *kernel.StageConfig
	}{
		{"fetch stride", "../workloads/kernels/hello-gemv.json", 3, 1, func(c *kernel.StageConfig) *kernel.StageConfig {
			f := *c.Fetch
			f.Seq.Entries = append([]kernel.SeqEntry(nil), f.Seq.Entries...)
			f.Seq.Entries[0].Stride = 33 // J / 32 steps 32 elements
			// The fields that follow from the sequencer follow it (FE-R5).
			f.ContiguousRun = f.Seq.ContiguousRun()
			f.ContiguousBytes = f.ContiguousRun * f.InType.SizeBits() / 8
			return &kernel.StageConfig{Fetch: &f}
		}},
		{"switch route", "testdata/gemv-transpose.json", 3, 2, func(c *kernel.StageConfig) *kernel.StageConfig {
			s := *c.Switch
			s.Route.Bitmaps = append([]kernel.SnoopBitmap(nil), s.Route.Bitmaps...)
			b := &s.Route.Bitmaps
			(*b)[1], (*b)[2] = (*b)[2], (*b)[1] // two output slices snoop each other's source
			return &kernel.StageConfig{Switch: &s}
		}},
		{"TRF address", "../workloads/kernels/hello-gemv.json", 3, 3, func(c *kernel.StageConfig) *kernel.StageConfig {
			a := *c.Align
			a.TRFSequencer.Entries = append([]kernel.TRFEntry(nil), a.TRFSequencer.Entries...)
			a.TRFSequencer.Entries[0].Stride = 0 // every step reads the first 64 bytes
			return &kernel.StageConfig{Align: &a}
		}},
		{"VRF operand address", "../workloads/kernels/hello-mul.json", 3, 5, func(c *kernel.StageConfig) *kernel.StageConfig {
			f := *c.VectorOp
			r := *f.VRF()
			r.Base += 32 // the flit after the operand
			f.Slots = []kernel.VeSlotConfig{{Guard: kernel.GuardAlways, Operands: []kernel.VeOperandConfig{{Kind: kernel.VeVRF, VRF: &r}}}}
			return &kernel.StageConfig{VectorOp: &f}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := loadKernelT(t, tc.path)
			require.NoError(t, engines.Lower(engines.Default(), good))
			p := loadKernelT(t, tc.path)
			p.Ops[tc.op].Stages[tc.stage].Config = tc.wrong(good.Ops[tc.op].Stages[tc.stage].Config)
			rep, err := Verify(engines.Default(), p, Options{Seed: 1})
			require.NoError(t, err)
			assert.False(t, rep.Pass)
			assert.Positive(t, rep.Comparison.Mismatches)
			require.NotNil(t, rep.Comparison.FirstBad)
			assert.Contains(t, rep.String(), "FAIL "+p.Name)
			assert.Contains(t, rep.String(), "first "+rep.Comparison.FirstBad.Index)

			// The same kernel with its derived configuration passes.
			ok, err := Verify(engines.Default(), loadKernelT(t, tc.path), Options{Seed: 1})
			require.NoError(t, err)
			assert.True(t, ok.Pass, "%s", ok)
		})
	}
}

// TestVerifySample: a sample simulates only the chosen slices, compares
// the output elements they produce, and is reproducible from the seed.
func TestVerifySample(t *testing.T) {
	run := func(seed uint64, k int) *Report {
		rep, err := Verify(engines.Default(), loadKernelT(t, "../workloads/kernels/hello-gemv.json"), Options{Seed: seed, Sample: k})
		require.NoError(t, err)
		return rep
	}
	a, b := run(7, 5), run(7, 5)
	assert.Equal(t, a.Simulated, b.Simulated)
	assert.Equal(t, a.Comparison, b.Comparison)
	assert.True(t, a.Pass)
	assert.Equal(t, 5, a.Compared, "one output element per slice (Slice = m![I], 002 L436)")
	assert.Equal(t, int64(5*2048), a.MACs)
	assert.Equal(t, "sample:5", a.Slices)
	c := run(8, 5)
	assert.NotEqual(t, a.Simulated, c.Simulated, "another seed, another sample")
	all := run(7, 1000)
	assert.Len(t, all.Simulated, 256, "a sample larger than the slices holding the output takes them all")
	assert.Equal(t, 256, all.Compared)

	// A sample whose slices did not compute the TRF would compare nothing
	// exact: the hello-dot output comes from one slice only.
	dot, err := Verify(engines.Default(), loadKernelT(t, "../workloads/kernels/hello-dot.json"), Options{Seed: 1, Sample: 3})
	require.NoError(t, err)
	assert.Equal(t, 1, dot.Compared)
	assert.Equal(t, []string{"chip 0 cluster 0 slice 0"}, dot.Simulated)
}

// TestVerifySampleTiled: a tiled kernel writes its output through tile
// views (Tensor.View); the sample is drawn from the slices those writes
// read.
func TestVerifySampleTiled(t *testing.T) {
	p := loadKernelT(t, "../emit/testdata/tiled-1axis-single.json")
	rep, err := Verify(engines.Default(), p, Options{Seed: 3, Sample: 4})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%+v", rep.Comparison)
	assert.NotEmpty(t, rep.Simulated)
	assert.LessOrEqual(t, len(rep.Simulated), 4)
	assert.Positive(t, rep.Compared)
}

// TestVerifyTaint: with a sample, data from slices that did not run never
// reaches a compared element. A to_trf on other slices than the sampled
// ones leaves the TRF of the sampled slices tainted when they did not run
// its chain.
func TestVerifyTaint(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/hello-gemv.json")
	spec := engines.Default()
	require.NoError(t, engines.Lower(spec, p))
	d, err := NewDevice(spec, 1)
	require.NoError(t, err)
	run := make([]bool, d.TotalSlices())
	run[3] = true
	x, err := NewExecutor(d, p, ExecOptions{Run: run})
	require.NoError(t, err)
	require.NoError(t, x.Run())
	trf := x.tainted["vector_trf"]
	require.NotNil(t, trf)
	assert.False(t, trf[3])
	assert.True(t, trf[4])
	out := x.origin["out"]
	assert.Equal(t, int32(3+1), out[3], "element I = 3 comes from slice 3")
	assert.Equal(t, originTainted, out[4])
}

// TestVerifyErrors: kernels that cannot be verified say why.
func TestVerifyErrors(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/hello-dot.json")
	p.Reference = nil
	_, err := Verify(engines.Default(), p, Options{})
	assert.ErrorContains(t, err, `kernel "hello-dot" states no reference`)
	_, err = Verify(nil, p, Options{})
	assert.Error(t, err)

	// The manual's GEMM as written exceeds the TRF (TRF-R3): a lowering
	// error, located in the program.
	q := kernelFromT(t, "../workloads/kernels/hello-gemm.json", `"I=512, J=512, K=1024"`, `"I=512, J=512, K=2048"`)
	_, err = Verify(engines.Default(), q, Options{})
	var le *engines.LowerError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 2, le.Op)
}

func TestParseSlices(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"all", 0, ""},
		{"sample:1", 1, ""},
		{"sample:64", 64, ""},
		{"sample:0", 0, "col 8"},
		{"sample:x", 0, "col 8"},
		{"some", 0, "want all or sample:K"},
	} {
		k, err := ParseSlices(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, k)
		assert.Equal(t, tc.in, SlicesString(k))
	}
}

// TestRandomValues: values are exactly representable in the dtype.
func TestRandomValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []dtype.DType{dtype.BF16, dtype.F8E4M3, dtype.F32, dtype.I8, dtype.I4, dtype.I32} {
		l := &Logical{Name: "x", DType: d, Vals: make([]float64, 1000)}
		require.NoError(t, RandomValues(rng, l))
		lo, hi := 0.0, 0.0
		for _, v := range l.Vals {
			assert.Equal(t, v, dtype.Round(v, d), "%s value %v", d, v)
			lo, hi = min(lo, v), max(hi, v)
		}
		if d.IsFloat() {
			assert.GreaterOrEqual(t, lo, -2.0)
			assert.LessOrEqual(t, hi, 2.0)
		} else {
			r0, r1, _ := d.IntRange()
			assert.GreaterOrEqual(t, lo, float64(r0))
			assert.LessOrEqual(t, hi, float64(r1))
		}
	}
}

// TestReportJSON: the report's JSON holds the verdict and statistics, with
// non-finite errors as strings.
func TestReportJSON(t *testing.T) {
	rep, err := Verify(engines.Default(), loadKernelT(t, "../workloads/kernels/hello-dot.json"), Options{Seed: 4})
	require.NoError(t, err)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	assert.Equal(t, true, v["pass"])
	assert.Equal(t, "hello-dot", v["kernel"])
	assert.Equal(t, "out", v["output"])
	assert.Equal(t, "bf16", v["dtype"])
	assert.EqualValues(t, 2048, v["macs"])

	rep.Comparison.MaxAbs = math.Inf(1)
	b, err = json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"max_abs_error":"+Inf"`)
}
