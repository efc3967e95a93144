package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The manual's Hello GEMV mapping (002 L410-416) is legal: its cycles, the
// optimum's and the distance are printed.
func TestExplainLegal(t *testing.T) {
	if raceEnabled {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	code, out, errOut := runCLI(t, "explain", "../../workloads/gemv.yaml", "--mapping", "../../search/testdata/explain/hello-gemv.yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "hello-gemv.yaml on ../../workloads/gemv.yaml: legal\n")
	assert.Contains(t, out, "cycles:   ")
	assert.Contains(t, out, "I[sl256] J[tm64 pk32]")
	assert.Contains(t, out, "optimum:  ")
	assert.Contains(t, out, "(proven: ")
	assert.Contains(t, out, "distance: ")
}

// 512 slices on one axis break SPACE-SLICES (002 L131): the rule and the
// field are printed, exit 1; --json carries the same.
func TestExplainIllegal(t *testing.T) {
	args := []string{"explain", "../../workloads/gemm.yaml", "--mapping", "testdata/explain/slices-512.yaml"}
	code, out, _ := runCLI(t, args...)
	require.Equal(t, exitFail, code)
	assert.Contains(t, out, "illegal: 1 conflict(s), each a minimal set of mapping fields and rules that cannot hold together")
	assert.Contains(t, out, "  SPACE-SLICES (002 L131, L318): a cluster has 256 slices")
	assert.Contains(t, out, "  testdata/explain/slices-512.yaml:2:8: slice: I\n")

	code, out, _ = runCLI(t, append(args, "--json")...)
	require.Equal(t, exitFail, code)
	var o explainOutput
	require.NoError(t, json.Unmarshal([]byte(out), &o))
	assert.False(t, o.Legal)
	assert.Equal(t, "structural", o.Verdict)
	require.Len(t, o.Conflicts, 1)
	k := o.Conflicts[0]
	require.Len(t, k.Rules, 1)
	assert.Equal(t, "SPACE-SLICES", k.Rules[0].Rule)
	assert.Equal(t, "002 L131, L318", k.Rules[0].Cite)
	require.Len(t, k.Fields, 1)
	assert.Equal(t, "slice: I", k.Fields[0].Text)
	assert.Equal(t, 2, k.Fields[0].Line)
}

// Every completion rejected by an engine rule: the rule, its citation and
// an example are printed.
func TestExplainEngineRule(t *testing.T) {
	code, out, _ := runCLI(t, "explain", "../../workloads/gemm.yaml", "--max-tiles", "1",
		"--mapping", "../../search/testdata/explain/dma-r1.yaml")
	require.Equal(t, exitFail, code)
	assert.Contains(t, out, "illegal: every completion is rejected by the engines")
	assert.Contains(t, out, "  DMA-R1 (002 L2425-2427, L2836-2837): ")
}

func TestExplainErrors(t *testing.T) {
	code, _, errOut := runCLI(t, "explain", "../../workloads/gemm.yaml", "--mapping", "testdata/explain/bad-expr.yaml")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "tcpmap: testdata/explain/bad-expr.yaml:1:18: slice: ")

	code, _, errOut = runCLI(t, "explain", "../../workloads/gemm.yaml", "--mapping", "testdata/explain/missing.yaml")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "missing.yaml")

	// Undecided at --timeout: exit 3.
	code, _, _ = runCLI(t, "explain", "../../workloads/gemm.yaml", "--timeout", "1ns")
	assert.Equal(t, exitAborted, code)

	code, _, _ = runCLI(t, "explain")
	assert.Equal(t, exitUsage, code)
	code, _, _ = runCLI(t, "explain", "../../workloads/gemm.yaml", "--max-tiles", "-1")
	assert.Equal(t, exitUsage, code)
}

// A mapping of another digit order than the named ones (K's Packet digit
// above its Time digit): over every order (the default, as plan's for one
// einsum) the engines refuse it (each lane's element is a 2-byte run of
// HBM, DMA-R1); the named space has no candidate of it and says where
// every order is.
func TestExplainDigitOrders(t *testing.T) {
	args := []string{"explain", "testdata/explain/small-qk.yaml", "--mapping", "testdata/explain/packet-above-time.yaml"}
	code, out, _ := runCLI(t, append(args, "--digit-orders", "named")...)
	require.Equal(t, exitFail, code, out)
	assert.Contains(t, out, "no candidate of the mapspace agrees with the mapping")
	assert.Contains(t, out, "--digit-orders all holds every order")
	for _, flags := range [][]string{nil, {"--digit-orders", "all"}} {
		code, out, _ = runCLI(t, append(args, flags...)...)
		require.Equal(t, exitFail, code, out)
		assert.Contains(t, out, "every completion is rejected by the engines")
		assert.Contains(t, out, "DMA-R1")
	}
	code, _, errOut := runCLI(t, append(args, "--digit-orders", "some")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--digit-orders "some": want all or named`)
}
