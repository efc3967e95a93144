package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The manual's padding_chunking (002 L2294-2312).
var commitChunking = []string{"derive", "commit", "--dtype", "i8", "--axes", "M=4,K=2,W=8",
	"--buf", "m![K, M, W # 16]", "--time", "m![K]", "--packet", "m![M, W]"}

func TestDeriveCommit(t *testing.T) {
	code, out, errs := runCLI(t, commitChunking...)
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "[2:64, 4:16, 8:1] : 32\n", out)

	code, out, errs = runCLI(t, append(commitChunking, "--json", "--slice", "1 # 256")...)
	require.Equal(t, exitOK, code, errs)
	var v struct {
		CommitIn    int    `json:"commit_in_size"`
		Contiguous  int    `json:"contiguous_sram_access_size"`
		CommitSize  int    `json:"commit_size"`
		Writes      int    `json:"writes_per_step"`
		SliceBitmap string `json:"slice_bitmap"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	// contiguous 8 B, commit_in_size 32 B, commit_size gcd(8, 32) = 8 (002 L2299-2301).
	assert.Equal(t, 32, v.CommitIn)
	assert.Equal(t, 8, v.Contiguous)
	assert.Equal(t, 8, v.CommitSize)
	assert.Equal(t, 4, v.Writes)
	// Only slice 0 holds data (002 L2318).
	assert.Equal(t, strings.Repeat("0", 255)+"1", v.SliceBitmap)

	// The sub context needs a commit straight after a fetch (002 L2337-2338).
	args := []string{"derive", "commit", "--dtype", "f32", "--axes", "M=4,K=2,W=8", "--buf", "K, M, W",
		"--time", "M, K", "--packet", "W", "--context", "sub"}
	code, _, errs = runCLI(t, args...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "(002 L2337-2338)")
	code, out, errs = runCLI(t, append(args, "--from-fetch")...)
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "[4:8, 2:32, 8:1] : 8\n", out)
}

func TestDeriveCommitErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"broadcast write", []string{"--axes", "A=8,T=4", "--buf", "A", "--time", "T", "--packet", "A # 32"}, exitFail, "(002 L7775)"},
		{"not one flit", []string{"--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A"}, exitFail, "(002 L2192, L2328)"},
		{"bad expression", []string{"--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A #"}, exitUsage, "--packet"},
		{"bad slice", []string{"--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A # 32", "--slice", "Z"}, exitUsage, "--slice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"derive", "commit", "--dtype", "i8"}, c.args...)...)
			assert.Equal(t, c.code, code, "%s%s", out, errs)
			assert.Contains(t, errs, c.want)
		})
	}
}
