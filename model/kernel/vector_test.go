package kernel

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

func TestParseFxpParam(t *testing.T) {
	i := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		in    string
		op    FxpOp
		k     *int32
		err   string
		alu   VeALU
		cited string
	}{
		{in: "AddFxp, 1", op: FxpAddFxp, k: i(1), alu: ALUFxpAdd, cited: "002 L214"},
		{in: "FxpBinaryOp::AddFxp, 1", op: FxpAddFxp, k: i(1), alu: ALUFxpAdd, cited: "002 L214"},
		{in: "FxpBinaryOp::MulInt", op: FxpMulInt, alu: ALUFxpMul, cited: "002 L295"},
		{in: "MulInt, 2", op: FxpMulInt, k: i(2), alu: ALUFxpMul, cited: "002 L5265"},
		{in: "SubFxp, -5", op: FxpSubFxp, k: i(-5), alu: ALUFxpAdd, cited: "002 L4828"},
		{in: "AddFxpSat, 0x7fffffff", op: FxpAddFxpSat, k: i(2147483647), alu: ALUFxpAdd, cited: "002 L4827"},
		{in: "AddFxp, 100i32", op: FxpAddFxp, k: i(100), alu: ALUFxpAdd, cited: "002 L4668"},
		{in: "LeftShift, 3", op: FxpLeftShift, k: i(3), alu: ALUFxpLshift, cited: "002 L4830"},
		{in: "ArithRightShiftRound, 1", op: FxpArithRightShiftRound, k: i(1), alu: ALUFxpRshift, cited: "002 L4836"},
		{in: "AddF, 1", err: `column 1: unknown FxpBinaryOp "AddF"`},
		{in: "  Nope", err: `column 3: unknown FxpBinaryOp "Nope"`},
		{in: "AddFxp, 2147483648", err: `column 9: constant "2147483648" is not an i32`},
		{in: "AddFxp,x", err: `column 8: constant "x" is not an i32`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			op, k, err := ParseFxpParam(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.op, op, tc.cited)
			assert.Equal(t, tc.k, k)
			alu, ok := op.ALU()
			require.True(t, ok)
			assert.Equal(t, tc.alu, alu, "ALU column of 002 L4826-4836")
		})
	}
	_, ok := FxpOp("Nope").ALU()
	assert.False(t, ok)
}

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
	k := int32(1)
	cfg := &StageConfig{
		VectorInit:   &VectorInitConfig{DType: dtype.I32, Lanes: 8, Packets: 1},
		VectorBranch: &VectorBranchConfig{Mode: BranchUnconditional},
		VectorFxp:    &VectorFxpConfig{Op: FxpAddFxp, ALU: ALUFxpAdd, Const: &k},
		VectorFinal:  &VectorFinalConfig{DType: dtype.I32, Lanes: 8, Packets: 4},
		ToVRF:        &ToVRFConfig{Base: 64, Flits: 2, ElemBytes: 4, ElementBytes: 64, CapacityBytes: 8192},
	}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	var back StageConfig
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, cfg, &back)
	assert.JSONEq(t, `{"vector_init": {"dtype": "i32", "lanes": 8, "packets": 1},
		"vector_branch": {"mode": "Unconditional"},
		"vector_fxp": {"op": "AddFxp", "alu": "FxpAdd", "const": 1},
		"vector_final": {"dtype": "i32", "lanes": 8, "packets": 4},
		"to_vrf": {"base": 64, "flits": 2, "elem_bytes": 4, "element_bytes": 64, "capacity_bytes": 8192}}`, string(b))

	assert.Equal(t, "i32 × 8 lanes, 1 packet", cfg.VectorInit.String())
	assert.Equal(t, "i32 × 8 lanes, 4 packets", cfg.VectorFinal.String())
	assert.Equal(t, "BranchMode::Unconditional", cfg.VectorBranch.String())
	assert.Equal(t, "FxpBinaryOp::AddFxp (FxpAdd), 1", cfg.VectorFxp.String())
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
	m := VectorFxpConfig{Op: FxpMulInt, ALU: ALUFxpMul, VRF: &r}
	assert.Equal(t, "FxpBinaryOp::MulInt (FxpMul), vrf v @ 0 [3:0, 4:8]", m.String())
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
