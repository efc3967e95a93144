package kernel

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

func TestParseBranchMode(t *testing.T) {
	for in, want := range map[string]BranchMode{
		"Unconditional":                           BranchUnconditional,
		"BranchMode::Unconditional":               BranchUnconditional,
		"AxisToggle { axis: A }":                  BranchAxisToggle,
		"Comparison([Less(0), True, True, True])": BranchComparison,
		"ValidCount":                              BranchValidCount,
		"Vrf":                                     BranchVrf,
	} {
		got, err := ParseBranchMode(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"Always", "Unconditional(1)", ""} {
		_, err := ParseBranchMode(in)
		assert.Error(t, err, in)
	}
}

func TestVectorConfigs(t *testing.T) {
	cfg := &StageConfig{
		VectorInit:   &VectorInitConfig{DType: dtype.I32, Lanes: 8, Packets: 1},
		VectorBranch: &VectorBranchConfig{Mode: BranchUnconditional},
		VectorOp: &VectorOpConfig{Op: "AddFxp", ALU: ALUFxpAdd, DType: dtype.I32, Arity: 2, Mode: "Mode01", Lanes: 8,
			Slots: []VeSlotConfig{{Guard: GuardAlways, Operands: []VeOperandConfig{{Kind: VeConst, Bits: 1}}}}},
		VectorFinal: &VectorFinalConfig{DType: dtype.I32, Lanes: 8, Packets: 4},
		ToVRF:       &ToVRFConfig{Base: 64, Flits: 2, ElemBytes: 4, ElementBytes: 64, CapacityBytes: 8192},
	}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	var back StageConfig
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, cfg, &back)
	assert.JSONEq(t, `{"vector_init": {"dtype": "i32", "lanes": 8, "packets": 1},
		"vector_branch": {"mode": "Unconditional"},
		"vector_op": {"op": "AddFxp", "alu": "FxpAdd", "dtype": "i32", "arity": 2, "mode": "Mode01", "lanes": 8,
			"slots": [{"guard": -1, "operands": [{"kind": "const", "bits": 1}]}]},
		"vector_final": {"dtype": "i32", "lanes": 8, "packets": 4},
		"to_vrf": {"base": 64, "flits": 2, "elem_bytes": 4, "element_bytes": 64, "capacity_bytes": 8192}}`, string(b))

	assert.Equal(t, "i32 × 8 lanes, 1 packet", cfg.VectorInit.String())
	assert.Equal(t, "i32 × 8 lanes, 4 packets", cfg.VectorFinal.String())
	assert.Equal(t, "BranchMode::Unconditional", cfg.VectorBranch.String())
	assert.Equal(t, "AddFxp (FxpAdd) Mode01, 0x1", cfg.VectorOp.String())
	assert.Equal(t, "to_vrf(64): 2 flits, 64 of 8192 bytes", cfg.ToVRF.String())
	assert.Equal(t, 64+4*5, cfg.ToVRF.Offset(5))

	// A read that steps 8 elements per B (inner, size 4) and re-reads for D
	// (outer, size 3): e(t) = (t mod 4)·8.
	r := VRFReadConfig{Tensor: "v", Base: 0, ElemBytes: 4, Lanes: 8, Entries: []SeqEntry{{Size: 3, Stride: 0}, {Size: 4, Stride: 8}}}
	assert.Equal(t, 12, r.Steps())
	for tt := 0; tt < 12; tt++ {
		assert.Equal(t, (tt%4)*8, r.Element(tt), "t=%d", tt)
	}
	assert.Equal(t, "vrf v @ 0 [3:0, 4:8]", r.String())
	m := VectorOpConfig{Op: "MulInt", ALU: ALUFxpMul, Mode: "Mode01", Slots: []VeSlotConfig{{Guard: GuardGroup0, Operands: []VeOperandConfig{{Kind: VeVRF, VRF: &r}}}}}
	assert.Equal(t, "MulInt (FxpMul) Mode01, group 0: vrf v @ 0 [3:0, 4:8]", m.String())
	assert.Equal(t, &r, m.VRF())

	// The reduce's output step drops the reduce digits: Time = [R / 2, A % 2,
	// R % 2] (002 L5502-5517), flits 0, 1, 4, 5 → slot 0; 2, 3, 6, 7 → 1.
	rc := VectorReduceConfig{Time: []VeReduceDigit{{Size: 2, Reduce: true}, {Size: 2}, {Size: 2, Reduce: true}}}
	for tt, want := range []int{0, 0, 1, 1, 0, 0, 1, 1} {
		assert.Equal(t, want, rc.OutStep(tt), "flit #%d (002 L5506-5515)", tt)
	}
}

// TestHelloVectorKernelsParse: the golden vector kernels are valid programs
// in the JSON form, and their encoding (mappings printed normalized, e.g.
// `A / 8 # 256` as `A / 8`) reads back to the same program.
func TestHelloVectorKernelsParse(t *testing.T) {
	for _, name := range []string{"hello-add", "hello-mul"} {
		var p Program
		data := readKernelFile(t, name)
		require.NoError(t, json.Unmarshal(data, &p), name)
		out, err := json.Marshal(&p)
		require.NoError(t, err)
		var q Program
		require.NoError(t, json.Unmarshal(out, &q), name)
		again, err := json.Marshal(&q)
		require.NoError(t, err)
		assert.Equal(t, string(out), string(again), name)
	}
}

func readKernelFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../workloads/kernels/" + name + ".json")
	require.NoError(t, err)
	return data
}
