package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Example 1 (002 L2608-2636).
var dmaEx1 = []string{"derive", "dma", "--axes", "A=8,B=8,C=256", "--dtype", "i8",
	"--src-media", "hbm", "--src-element", "[A, B, C]",
	"--dst-media", "hbm", "--dst-element", "[B, A, C]", "--dst-addr", "16384",
	"--time", "[A, B]", "--packet", "C"}

func TestDeriveDMA(t *testing.T) {
	code, out, errs := runCLI(t, dmaEx1...)
	require.Equal(t, exitOK, code, errs)
	// The manual's read and write configurations (002 L2629-2630).
	assert.Contains(t, out, "read:  [A=8:2048, B=8:256, C=256:1]:256 HBM@0")
	assert.Contains(t, out, "write: [A=8:256, B=8:2048, C=256:1]:256 HBM@16384")
	assert.Contains(t, out, "homogeneous")

	code, out, errs = runCLI(t, append(dmaEx1, "--json")...)
	require.Equal(t, exitOK, code, errs)
	var v struct {
		Descriptors []struct {
			Stride0  int `json:"stride0"`
			Requests int `json:"requests"`
			Entries  []struct {
				Size      int `json:"size"`
				SrcStride int `json:"src_stride"`
				DstStride int `json:"dst_stride"`
			} `json:"entries"`
		} `json:"descriptors"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Len(t, v.Descriptors, 1)
	assert.Equal(t, 256, v.Descriptors[0].Stride0)
	assert.Equal(t, 64, v.Descriptors[0].Requests) // 002 L2623
	assert.Equal(t, 2048, v.Descriptors[0].Entries[0].SrcStride)
}

func TestDeriveDMAErrors(t *testing.T) {
	// A rule violation: transposed element axes into DM (8-byte alignment,
	// 002 L2425-2427) exits 1 with the rule's citation.
	code, _, errs := runCLI(t, "derive", "dma", "--axes", "A=8,B=64", "--dtype", "i8",
		"--src-media", "hbm", "--src-element", "[A, B]",
		"--dst-media", "dm", "--dst-slice", "B / 4", "--dst-element", "[B % 4, A]",
		"--time", "B", "--packet", "A")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "dma: ")
	assert.Contains(t, errs, "002 L2425-2427")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no dtype", []string{"--dtype", ""}, "--dtype is required"},
		{"bad media", []string{"--src-media", "ram"}, "--src-media"},
		{"bad mapping", []string{"--time", "[A, Q]"}, "--time"},
		{"bad axes", []string{"--axes", "A=0"}, "--axes"},
		{"no packet", []string{"--packet", ""}, "--packet is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string(nil), dmaEx1...), tc.args...)
			code, _, errs := runCLI(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.True(t, strings.Contains(errs, tc.want), errs)
		})
	}
}
