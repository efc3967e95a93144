package verify

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestVerifyInterSliceGolden: the manual's f32 inter-slice examples as
// kernels (workloads/kernels/xsr-*.json) pass against the einsum that sums
// R: Broadcast Into a New Slice Axis (002 L6661-6672, the sum on every X)
// and Promotion from Time into SliceOut (002 L6681-6693, 128 slices as the
// example states); and the split-K GEMV (J over 4 slices, 002 L4580)
// against its einsum.
func TestVerifyInterSliceGolden(t *testing.T) {
	for _, path := range []string{"../workloads/kernels/xsr-broadcast.json", "../workloads/kernels/xsr-promotion.json", "../workloads/kernels/splitk-gemv.json"} {
		t.Run(path, func(t *testing.T) {
			p := loadKernelT(t, path)
			rep, err := Verify(engines.Default(), p, Options{Seed: 7})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "%s", rep)
			out, _ := p.Tensor(p.Reference.Output)
			assert.Equal(t, out.Element.Size(), rep.Compared)
		})
	}
}

// TestVerifyInterSliceWrongConfig: the simulator runs the Inter-Slice
// Block's configuration. A promotion reading the wrong Time digit, a
// reduction group of the wrong size or the wrong op fails verification.
func TestVerifyInterSliceWrongConfig(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		edit       func(c *kernel.InterSliceReduceConfig)
	}{
		{"promoted digit's stride", "../workloads/kernels/xsr-promotion.json", func(c *kernel.InterSliceReduceConfig) { c.Fill[0].Stride = 1 }},
		{"TimeOut strides swapped", "../workloads/kernels/xsr-promotion.json", func(c *kernel.InterSliceReduceConfig) {
			c.Time[0].Stride, c.Time[1].Stride = c.Time[1].Stride, c.Time[0].Stride
		}},
		{"group of 2", "../workloads/kernels/xsr-broadcast.json", func(c *kernel.InterSliceReduceConfig) {
			c.Ratio = 2
			c.Fill = []kernel.InterSliceDigit{{Size: 2, Live: 2}}
		}},
		{"Max for Add", "../workloads/kernels/xsr-broadcast.json", func(c *kernel.InterSliceReduceConfig) { c.Op = kernel.InterSliceMax }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadKernelT(t, tc.path)
			spec := engines.Default()
			require.NoError(t, engines.Lower(spec, p))
			st := interSliceStage(t, p)
			tc.edit(st.Config.VectorInterSlice)
			rep, err := Verify(spec, p, Options{Seed: 7})
			if err != nil {
				// A group that no longer matches SliceOut's live slices is
				// refused before any value is compared.
				assert.ErrorContains(t, err, "vector_inter_slice_reduce")
				return
			}
			assert.False(t, rep.Pass, "%s", rep)
			assert.NotNil(t, rep.Comparison.FirstBad)
		})
	}
}

// interSliceStage returns the program's vector_inter_slice_reduce stage.
func interSliceStage(t *testing.T, p *kernel.Program) *kernel.Stage {
	t.Helper()
	for _, op := range p.Ops {
		for _, st := range op.Stages {
			if st.Kind == kernel.StVectorInterSlice {
				return st
			}
		}
	}
	t.Fatal("no vector_inter_slice_reduce stage")
	return nil
}

// satSum is the saturating sum of vs in order, the Inter-Slice Block's
// AddSat over the slices of a group in ascending order
// (docs/spec-decisions.md "Inter-slice reduction order").
func satSum(vs ...int64) int64 {
	s := vs[0]
	for _, v := range vs[1:] {
		s = min(max(s+v, math.MinInt32), math.MaxInt32)
	}
	return s
}

// wrap32 wraps v to i32.
func wrap32(v int64) int64 { return int64(int32(v)) }

// TestExecInterSliceAddSat runs the manual's i32 AddSat examples
// (verify/testdata/xsr-*.json) on inputs chosen to saturate, and compares
// with the saturating sums computed here from the inputs:
// XSR-EX-1 Dummy Replacement (002 L6643-6653): out[a] = sat Σ_r in[r, a];
// XSR-EX-4 reduce then add (002 L6701-6712): sat Σ_r in[r, a] + 100,
// wrapping (AddFxp, 002 L4826); XSR-EX-5 add then reduce (002 L6720-6731):
// sat Σ_r (in[r, a] + 100 wrapping).
func TestExecInterSliceAddSat(t *testing.T) {
	for _, tc := range []struct {
		name string
		want func(in [4]int64) int64
	}{
		{"xsr-dummy", func(in [4]int64) int64 { return satSum(in[:]...) }},
		{"xsr-reduce-then-add", func(in [4]int64) int64 { return wrap32(satSum(in[:]...) + 100) }},
		{"xsr-add-then-reduce", func(in [4]int64) int64 {
			return satSum(wrap32(in[0]+100), wrap32(in[1]+100), wrap32(in[2]+100), wrap32(in[3]+100))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadKernelT(t, "testdata/"+tc.name+".json")
			spec := engines.Default()
			require.NoError(t, engines.Lower(spec, p))
			d, err := NewDevice(spec, p.Chips)
			require.NoError(t, err)
			inT, _ := p.Tensor("input")
			in, err := NewLogical(p, inT)
			require.NoError(t, err)
			// in[r, a]: rows of A per R. Columns cycle through patterns that
			// saturate up, saturate down, saturate then come back, wrap under
			// AddFxp, and stay small.
			edge := [][4]int64{
				{math.MaxInt32, 1, -1, 0},
				{math.MinInt32, -5, 3, 2},
				{math.MaxInt32 - 50, 10, 20, 30},
				{math.MaxInt32 - 99, -200, 7, -9},
				{1, 2, 3, 4},
				{-1 << 30, -1 << 30, -1 << 30, 1 << 30},
			}
			for a := 0; a < 512; a++ {
				e := edge[a%len(edge)]
				for r := 0; r < 4; r++ {
					in.Vals[r*512+a] = float64(wrap32(e[r] + int64(a/len(edge))*int64(1-2*(r%2))))
				}
			}
			require.NoError(t, WriteHBMTensor(d, p, inT, in))
			x, err := NewExecutor(d, p, ExecOptions{})
			require.NoError(t, err)
			require.NoError(t, x.Run())
			outT, _ := p.Tensor("out")
			got, err := ReadHBMTensor(d, p, outT)
			require.NoError(t, err)
			for a := 0; a < 512; a++ {
				var col [4]int64
				for r := range col {
					col[r] = int64(in.Vals[r*512+a])
				}
				require.Equal(t, float64(tc.want(col)), got.Vals[a], "a = %d, in %v", a, col)
			}
		})
	}
}

// TestExecInterSliceRejects: a chain breaking the Inter-Slice Block's
// rules is refused when lowered, naming the stage.
func TestExecInterSliceRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(p *kernel.Program)
		want string
	}{
		{"branch after IntraFirst", func(p *kernel.Program) {
			st := p.Ops[1].Stages
			// begin fetch collect init branch fxp reduce final commit →
			// ... reduce branch final commit.
			p.Ops[1].Stages = append(append(append([]*kernel.Stage(nil), st[:7]...), &kernel.Stage{Kind: kernel.StVectorBranch, Param: "Unconditional"}), st[7:]...)
		}, "XSR-R4"},
		{"two reductions", func(p *kernel.Program) {
			st := p.Ops[1].Stages
			p.Ops[1].Stages = append(append(append([]*kernel.Stage(nil), st[:7]...), st[6]), st[7:]...)
		}, "a second vector_inter_slice_reduce"},
		{"commit keeps Slice", func(p *kernel.Program) {
			r, _ := p.Tensor("result")
			dm, _ := p.Tensor("dm")
			r.Slice = dm.Slice
		}, "CHAIN-R1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadKernelT(t, "testdata/xsr-add-then-reduce.json")
			tc.edit(p)
			err := engines.Lower(engines.Default(), p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "ops[1].stages[")
			if r, ok := engines.RuleByID(tc.want); ok {
				var v *engines.Violation
				require.ErrorAs(t, err, &v)
				assert.Equal(t, r, v.Rule)
			} else {
				assert.ErrorContains(t, err, tc.want)
			}
		})
	}
}

// TestVerifyInterSliceSample: with a sample, the stages before the
// reduction run on every slice (their partial sums all reach the sampled
// outputs), and so does the sub chain that loads the TRF they read
// (runEverywhere): the sampled split-K GEMV compares its sampled outputs
// exactly.
func TestVerifyInterSliceSample(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/splitk-gemv.json")
	assert.Equal(t, []bool{false, false, true, false, false}, runEverywhere(p), "the TRF load feeds the reduction's contraction")
	rep, err := Verify(engines.Default(), p, Options{Seed: 3, Sample: 4})
	require.NoError(t, err)
	assert.True(t, rep.Pass, "%s", rep)
	assert.Equal(t, 4, rep.Compared, "one output per sampled slice (SliceOut = m![I, 1 # 4])")
	assert.Equal(t, int64(64*2048), rep.MACs, "every slice contracts its chunk")
}

// TestExecInterSliceTaint: were a slice feeding the reduction left
// without its TRF, its whole ring would be tainted and nothing compared.
func TestExecInterSliceTaint(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/splitk-gemv.json")
	spec := engines.Default()
	require.NoError(t, engines.Lower(spec, p))
	d, err := NewDevice(spec, 1)
	require.NoError(t, err)
	run := make([]bool, d.TotalSlices())
	run[8] = true
	x, err := NewExecutor(d, p, ExecOptions{Run: run})
	require.NoError(t, err)
	x.everywhere[2] = false
	x.plans[2], err = x.planChain(2, p.Ops[2])
	require.NoError(t, err)
	require.NoError(t, x.Run())
	assert.True(t, x.tainted["vector_trf"][9], "slice 9 did not load its TRF")
	assert.True(t, x.tainted["out_dm"][8], "slice 8's sum folds slice 9's partial sum")
	assert.Equal(t, originTainted, x.origin["out"][2])
}

// TestExecInterSliceFreshWorker: the stages after an inter-slice reduction
// run on whichever worker takes the slice, so their segment starts the
// pass's state anew (Way8 packets of the reduction's lanes, 002
// L6603-6610): a worker that never ran the chain's vector_init runs
// xsr-reduce-then-add's vector_intra_slice_branch and vector_fxp on one
// reduced flit (before, it read a pass of 0 lanes and failed now and then
// under the scheduler).
func TestExecInterSliceFreshWorker(t *testing.T) {
	p := loadKernelT(t, "testdata/xsr-reduce-then-add.json")
	spec := engines.Default()
	require.NoError(t, engines.Lower(spec, p))
	d, err := NewDevice(spec, p.Chips)
	require.NoError(t, err)
	x, err := NewExecutor(d, p, ExecOptions{})
	require.NoError(t, err)
	cp := x.plans[1]
	require.Len(t, cp.segs, 2)
	seg := cp.segs[1]
	assert.Equal(t, 8, seg.veLanes)
	r := &sliceRun{x: x}
	out, err := r.runStages(cp, &segment{stages: seg.stages[:2], veLanes: seg.veLanes}, 0, flitOf32(7))
	require.NoError(t, err)
	assert.Equal(t, int32(107), int32(binary.LittleEndian.Uint32(out)))
}

// flitOf32 is a flit of eight i32 lanes, lane 0 = v and the others 0.
func flitOf32(v uint32) []byte {
	b := make([]byte, 32)
	binary.LittleEndian.PutUint32(b, v)
	return b
}
