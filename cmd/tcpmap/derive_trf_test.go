package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Aligner's batched matmul (002 L3816-3873).
var trfEx = []string{"derive", "trf", "--axes", "M=32,N=8,K=16,L=2,O=2", "--dtype", "bf16",
	"--trf", "O, M, K", "--row", "N", "--time", "M, O", "--packet", "L, K"}

func TestDeriveTRF(t *testing.T) {
	code, out, errs := runCLI(t, trfEx...)
	require.Equal(t, exitOK, code, errs)
	// "reg_read_size = 32B"; "Entry 0: { size: 2, stride: 1024 } — O";
	// "Entry 1: { size: 32, stride: 32 } — M" (002 L3854-3864).
	assert.Equal(t, "reg_read_size = 32B (broadcast 2×), rows = 8\n"+
		"Entry 0: { size: 2, stride: 1024 } — O\n"+
		"Entry 1: { size: 32, stride: 32 } — M\n", out)

	code, out, errs = runCLI(t, append(trfEx, "--json")...)
	require.Equal(t, exitOK, code, errs)
	var v struct {
		RegReadSize int `json:"reg_read_size"`
		Entries     []struct {
			Size   int `json:"size"`
			Stride int `json:"stride"`
		} `json:"entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, 32, v.RegReadSize)
	require.Len(t, v.Entries, 2)
	assert.Equal(t, 1024, v.Entries[0].Stride)

	// TRF-EX-1 (002 L4234-4239): reg_read_size = 64B, Entry 0 { 32, 0 } — M.
	code, out, errs = runCLI(t, "derive", "trf", "--axes", "M=32,N=8,K=32", "--dtype", "bf16",
		"--trf", "K", "--row", "N", "--time", "M", "--packet", "K")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "reg_read_size = 64B")
	assert.Contains(t, out, "Entry 0: { size: 32, stride: 0 } — M")
}

func TestDeriveTRFErrors(t *testing.T) {
	// A rule violation: the packet beyond reg_read_size carries the TRF axis O
	// (002 L4100-4105) exits 1 with the rule's citation.
	code, _, errs := runCLI(t, "derive", "trf", "--axes", "M=32,N=8,K=16,O=2", "--dtype", "bf16",
		"--trf", "O, M, K", "--row", "N", "--time", "M", "--packet", "O, K")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "trf: ")
	assert.Contains(t, errs, "002 L4100-4105")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no dtype", []string{"--dtype", ""}, "--dtype is required"},
		{"bad dtype", []string{"--dtype", "f64"}, "--dtype"},
		{"bad mapping", []string{"--time", "M, Q"}, "--time"},
		{"bad axes", []string{"--axes", "M=0"}, "--axes"},
		{"no packet", []string{"--packet", ""}, "--packet is required"},
		{"no trf", []string{"--trf", ""}, "--trf is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string(nil), trfEx...), tc.args...)
			code, _, errs := runCLI(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.True(t, strings.Contains(errs, tc.want), errs)
		})
	}
	// f32 is a dtype but not a contraction input: a rule violation.
	code, _, errs = runCLI(t, append(append([]string(nil), trfEx...), "--dtype", "f32")...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "002 L3782")
}
