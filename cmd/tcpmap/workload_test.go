package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkloadCheckShipped(t *testing.T) {
	files, err := filepath.Glob("../../workloads/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	code, out, errOut := runCLI(t, append([]string{"workload", "check"}, files...)...)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, len(files), strings.Count(out, ": ok\n"), out)
	assert.Empty(t, errOut)
}

func TestWorkloadCheckText(t *testing.T) {
	code, out, _ := runCLI(t, "workload", "check", "../../workloads/gemm.yaml")
	assert.Equal(t, exitOK, code)
	// The manual's GEMM, axes![I = 512, J = 512, K = 2048] (002 L479):
	// 2·512·512·2048 FLOPs; (512·2048 + 2048·512 + 512·512) bf16 values moved.
	assert.Equal(t, `../../workloads/gemm.yaml: ok
  name       gemm
  kind       einsum IK,KJ->IJ
  ops        1 (einsum 1)
  chips      1
  axes       I=512 J=512 K=2048
  dtypes     in bf16, acc f32, out bf16
  flops      1073741824 (1.07 GFLOP; 2 per MAC, 1 per vector-op element)
  min bytes  4718592 (4.72 MB; inputs read once, outputs written once)
  inputs     in0, in1
  outputs    out
`, out)
}

func TestWorkloadCheckInvalidContinues(t *testing.T) {
	code, out, _ := runCLI(t, "workload", "check",
		"../../model/workload/testdata/graph_cycle.yaml",
		"../../workloads/dot.yaml",
		"../../model/workload/testdata/wrong_acc.yaml",
		"no/such/file.yaml")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, "../../model/workload/testdata/graph_cycle.yaml: invalid (1 error)\n"+
		"../../model/workload/testdata/graph_cycle.yaml:9:42: ops[0].inputs[1]: cycle: ops [first, second]")
	assert.Contains(t, out, "../../workloads/dot.yaml: ok\n")
	assert.Contains(t, out, "../../model/workload/testdata/wrong_acc.yaml:4:22: dtype.acc: a i8 contraction accumulates in i32, not f32")
	assert.Contains(t, out, "no/such/file.yaml: file: open no/such/file.yaml")
	// Files are reported in the order given.
	assert.Less(t, strings.Index(out, "graph_cycle"), strings.Index(out, "dot.yaml"))
	assert.Less(t, strings.Index(out, "dot.yaml"), strings.Index(out, "wrong_acc"))
}

func TestWorkloadCheckJSON(t *testing.T) {
	code, out, _ := runCLI(t, "workload", "check", "--json",
		"../../workloads/attention-head.yaml", "../../model/workload/testdata/unknown_axis.yaml")
	assert.Equal(t, exitFail, code)
	var res []struct {
		File    string `json:"file"`
		Valid   bool   `json:"valid"`
		Summary *struct {
			Name     string `json:"name"`
			Kind     string `json:"kind"`
			Ops      int    `json:"ops"`
			FLOPs    int64  `json:"flops"`
			MinBytes int64  `json:"min_bytes"`
			Axes     []struct {
				Name string `json:"name"`
				Size int64  `json:"size"`
			} `json:"axes"`
		} `json:"summary"`
		Errors []struct {
			Line  int    `json:"line"`
			Col   int    `json:"col"`
			Field string `json:"field"`
			Msg   string `json:"msg"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res, 2)
	assert.True(t, res[0].Valid)
	require.NotNil(t, res[0].Summary)
	assert.Equal(t, "graph", res[0].Summary.Kind)
	assert.Equal(t, 5, res[0].Summary.Ops)
	// One head, S = T = 2048, D = 128: two einsums of 2·S·T·D FLOPs, three
	// vector ops of S·T; q, k, v read and o written in bf16, the causal
	// mask read in f32.
	S, T, D := int64(2048), int64(2048), int64(128)
	assert.Equal(t, 2*2*S*T*D+3*S*T, res[0].Summary.FLOPs)
	assert.Equal(t, (S*D+2*T*D+S*D)*2+S*T*4, res[0].Summary.MinBytes)
	assert.False(t, res[1].Valid)
	require.Len(t, res[1].Errors, 1)
	assert.Equal(t, 2, res[1].Errors[0].Line)
	assert.Equal(t, 13, res[1].Errors[0].Col)
	assert.Equal(t, "einsum", res[1].Errors[0].Field)
}

func TestWorkloadCheckUsage(t *testing.T) {
	code, _, errOut := runCLI(t, "workload", "check")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "tcpmap: ")
}
