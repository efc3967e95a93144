package verify

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// moveKernel moves a (I × K bf16) to DM over 256 slices and back to HBM
// twice: once by DMA only, once through fetch → commit (with and without a
// collect), so that every byte must survive each engine's configuration.
const moveKernel = `{
  "name": "move", "axes": "I=512, K=256", "chips": 1,
  "tensors": [
    {"name": "a", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "I, K", "addr": 0},
    {"name": "back", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "I, K", "addr": 268435456},
    {"name": "copied", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "I, K", "addr": 536870912},
    {"name": "collected", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "I, K", "addr": 805306368},
    {"name": "a_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I / 2", "element": "I % 2, K", "addr": 0},
    {"name": "c_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I / 2", "element": "I % 2, K", "addr": 4096},
    {"name": "d_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I / 2", "element": "I % 2, K", "addr": 8192}
  ],
  "ops": [
    {"context": "dma", "kind": "to_dm", "src": "a", "dst": "a_dm"},
    {"context": "dma", "kind": "to_hbm", "src": "a_dm", "dst": "back"},
    {"context": "main", "kind": "chain", "stages": [
      {"kind": "begin", "tensor": "a_dm"},
      {"kind": "fetch", "dtype": "bf16", "time": "I % 2, K / 16", "packet": "K % 16"},
      {"kind": "commit", "tensor": "c_dm"}]},
    {"context": "dma", "kind": "to_hbm", "src": "c_dm", "dst": "copied"},
    {"context": "main", "kind": "chain", "stages": [
      {"kind": "begin", "tensor": "a_dm"},
      {"kind": "fetch", "dtype": "bf16", "time": "I % 2", "packet": "K"},
      {"kind": "collect", "time": "I % 2, K / 16", "packet": "K % 16"},
      {"kind": "commit", "tensor": "d_dm"}]},
    {"context": "dma", "kind": "to_hbm", "src": "d_dm", "dst": "collected"}
  ]
}`

// runProgram lowers p, fills its inputs with random values and returns the
// executor before any op ran.
func runProgram(t *testing.T, p *kernel.Program, seed uint64, opts ExecOptions) (*Device, *Executor, map[string]*Logical) {
	t.Helper()
	spec := engines.Default()
	require.NoError(t, engines.Lower(spec, p))
	d, err := NewDevice(spec, p.Chips)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 1))
	ins := map[string]*Logical{}
	for _, tt := range p.Tensors {
		if tt.Role != kernel.Input {
			continue
		}
		l, err := NewLogical(p, tt)
		require.NoError(t, err)
		require.NoError(t, RandomValues(rng, l))
		require.NoError(t, WriteHBMTensor(d, p, tt, l))
		ins[tt.Name] = l
	}
	x, err := NewExecutor(d, p, opts)
	require.NoError(t, err)
	return d, x, ins
}

// elementBytes encodes value v of dtype d as its bytes.
func elementBytes(t *testing.T, d dtype.DType, v float64) []byte {
	t.Helper()
	b := make([]byte, 4)
	require.NoError(t, d.Store(b, 0, v))
	return b[:d.SizeBits()/8]
}

// TestExecMoves: HBM → DM → HBM by DMA reproduces the bytes; DM holds what
// the DM tensor's mappings say (position (slice, element) holds the index
// Slice.Map + Element.Map, 002 L1029-1200); fetch → commit and fetch →
// collect → commit copy a DM tensor exactly.
func TestExecMoves(t *testing.T) {
	p, _, err := ParseKernel("move.json", []byte(moveKernel))
	require.NoError(t, err)
	d, x, ins := runProgram(t, p, 5, ExecOptions{})
	require.NoError(t, x.Step()) // to_dm
	a := ins["a"]
	at, _ := p.Tensor("a_dm")
	bf := dtype.BF16
	for _, g := range []int{0, 1, 100, 255} {
		buf := make([]byte, at.Element.Size()*2)
		require.NoError(t, d.ReadDM(g, at.Addr, buf))
		sl := at.Slice.Map(g)
		require.Equal(t, mapping.Live, sl.Kind)
		for e := 0; e < at.Element.Size(); e++ {
			idx := mapping.IndexOf(append(sl.Index.Coords(), at.Element.Map(e).Index.Coords()...)...)
			off, ok := a.Offset(idx)
			require.True(t, ok)
			require.Equal(t, elementBytes(t, bf, a.Vals[off]), buf[2*e:2*e+2], "slice %d element %d %s", g, e, idx)
		}
	}
	require.NoError(t, x.Run())
	assert.Error(t, x.Step(), "every op has run")
	want := make([]byte, 512*256*2)
	require.NoError(t, d.ReadHBM(0, 0, want))
	for _, name := range []string{"back", "copied", "collected"} {
		tt, _ := p.Tensor(name)
		got := make([]byte, len(want))
		require.NoError(t, d.ReadHBM(0, tt.Addr, got))
		assert.Equal(t, want, got, name)
		l, err := ReadHBMTensor(d, p, tt)
		require.NoError(t, err)
		assert.Equal(t, a.Vals, l.Vals, name)
	}
	assert.Zero(t, x.MACs())
}

// TestExecTRF: after Hello GEMM's sub chain (002 L503-508), every byte of
// the TRF holds the element the TRF tensor's mappings name: Row r, Element
// byte b of slice s is the index Slice.Map(s) + Row.Map(r) +
// Element.Map(b / 2) of b, at the place TRFLocate gives.
func TestExecTRF(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/hello-gemm.json")
	d, x, ins := runProgram(t, p, 9, ExecOptions{})
	for i := 0; i < 3; i++ {
		require.NoError(t, x.Step())
	}
	tt, _ := p.Tensor("b_trf")
	cfg := p.Ops[2].Stages[3].Config.ToTRF
	b := ins["b"]
	spec := engines.Default()
	for _, g := range []int{0, 17, 255} {
		m, err := d.TRF(g)
		require.NoError(t, err)
		sl := tt.Slice.Map(g)
		for r := 0; r < tt.Row.Size(); r++ {
			for e := 0; e < tt.Element.Size(); e++ {
				coords := append(append(sl.Index.Coords(), tt.Row.Map(r).Index.Coords()...), tt.Element.Map(e).Index.Coords()...)
				off, ok := b.Offset(mapping.IndexOf(coords...))
				require.True(t, ok)
				want := elementBytes(t, dtype.BF16, b.Vals[off])
				for k := 0; k < 2; k++ {
					l, err := engines.TRFLocate(spec, cfg, r, 2*e+k)
					require.NoError(t, err)
					require.Equal(t, want[k], m.At(l), "slice %d Row %d element %d byte %d", g, r, e, k)
				}
			}
		}
	}
}

// TestExecErrors: a program must be lowered, and execution errors name the
// op, the stage and the slice.
func TestExecErrors(t *testing.T) {
	d, err := NewDevice(engines.Default(), 1)
	require.NoError(t, err)
	p := loadKernelT(t, "../workloads/kernels/hello-dot.json")
	_, err = NewExecutor(d, p, ExecOptions{})
	assert.ErrorContains(t, err, "ops[0] (to_dm): no DMA command: lower the program first")
	_, err = NewExecutor(nil, p, ExecOptions{})
	assert.Error(t, err)
	_, err = NewExecutor(d, p, ExecOptions{Run: make([]bool, 3)})
	assert.Error(t, err)

	// A commit whose sequencer writes past the slice's DM.
	q := loadKernelT(t, "../workloads/kernels/hello-dot.json")
	require.NoError(t, engines.Lower(engines.Default(), q))
	c := *q.Ops[3].Stages[7].Config.Commit
	c.Seq.Base = 1 << 20
	q.Ops[3].Stages[7].Config = &kernel.StageConfig{Commit: &c}
	_, err = Verify(engines.Default(), q, Options{})
	assert.ErrorContains(t, err, "ops[3].stages[7] (commit) on chip 0 cluster 0 slice 0: commit: DM access of 8 bytes at address")
	var xe *ExecError
	require.ErrorAs(t, err, &xe)
	assert.Equal(t, 3, xe.Op)
	assert.Equal(t, 7, xe.Stage)
}

// TestExecDMAInterpretation: a DMA descriptor's DM address is the cluster's
// virtual address slice·slice_stride + byte (002 L2541): one past the
// cluster's last slice names no slice.
func TestExecDMAInterpretation(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/hello-dot.json")
	require.NoError(t, engines.Lower(engines.Default(), p))
	d := p.Ops[0].DMA.Descriptors[0]
	d.DstBase += 256 * p.Ops[0].DMA.SliceStride
	p.Ops[0].DMA = &kernel.DMACommand{Descriptors: []kernel.DMADescriptor{d}, SliceStride: p.Ops[0].DMA.SliceStride, DMNStride: p.Ops[0].DMA.DMNStride, Homogeneous: true}
	// The validator rejects it (DMA-R6: a write outside the destination);
	// the executor, run on it regardless, names the slice it cannot find.
	_, err := Verify(engines.Default(), p, Options{})
	var v *engines.Violation
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "DMA-R6", v.Rule.ID)
	dev, err := NewDevice(engines.Default(), 1)
	require.NoError(t, err)
	x, err := NewExecutor(dev, p, ExecOptions{})
	require.NoError(t, err)
	err = x.Run()
	assert.ErrorContains(t, err, "ops[0] (to_dm): ")
	assert.ErrorContains(t, err, "names no slice of the device")
}

// TestDMAPacketOracle cross-checks the executor's DMA against the
// descriptor table of 002 L2570-2577 on a byte pattern.
func TestDMAPacketOracle(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/hello-gemv.json")
	d, x, _ := runProgram(t, p, 2, ExecOptions{})
	require.NoError(t, x.Step())
	src, _ := p.Tensor("matrix")
	dst, _ := p.Tensor("matrix_dm")
	row := make([]byte, 2048*2)
	got := make([]byte, len(row))
	for _, i := range []int{0, 1, 128, 255} {
		require.NoError(t, d.ReadHBM(0, src.Addr+int64(i*len(row)), row))
		require.NoError(t, d.ReadDM(i, dst.Addr, got))
		assert.Equal(t, row, got, "row %d is slice %d's matrix_dm (Slice = m![I], 002 L436)", i, i)
	}
}

// TestExecNoAllocation: once a worker's buffers have grown, running a
// slice's whole chain — fetch, collect, align and Reducer, cast, commit —
// allocates nothing, however many elements it moves.
func TestExecNoAllocation(t *testing.T) {
	p := loadKernelT(t, "../workloads/kernels/hello-gemm.json")
	_, x, _ := runProgram(t, p, 3, ExecOptions{Workers: 1})
	for i := 0; i < 3; i++ {
		require.NoError(t, x.Step())
	}
	cp := x.plans[3]
	r := x.runs[0]
	g := cp.segs[0].slices[5]
	_, err := r.runStages(cp, cp.segs[0], g, nil)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := r.runStages(cp, cp.segs[0], g, nil); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}
