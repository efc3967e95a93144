package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The manual's "Rearranging Axes" example (002 L1426-1460, 003 L208-242).
var fetchEx6 = []string{"derive", "fetch", "--dtype", "i8", "--axes", "A=8,B=8,C=8",
	"--buf", "m![A, B, C # 32]", "--time", "m![B, A]", "--packet", "m![C # 16]"}

func TestDeriveFetch(t *testing.T) {
	code, out, errs := runCLI(t, fetchEx6...)
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "[8:32, 8:256, 16:1] : 16\n", out)

	code, out, errs = runCLI(t, append(fetchEx6, "--json")...)
	require.Equal(t, exitOK, code, errs)
	var v struct {
		Seq struct {
			Entries []struct {
				Size   int `json:"size"`
				Stride int `json:"stride"`
			} `json:"entries"`
			PacketSize int `json:"packet_size"`
		} `json:"sequencer"`
		FetchSize  int    `json:"fetch_size"`
		Contiguous int    `json:"contiguous_sram_access_size"`
		InType     string `json:"in_dtype"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Len(t, v.Seq.Entries, 3)
	assert.Equal(t, 256, v.Seq.Entries[1].Stride)
	assert.Equal(t, 16, v.Seq.PacketSize)
	// "The maximum fetch_size is 16" (002 L1459).
	assert.Equal(t, 16, v.FetchSize)
	assert.Equal(t, 16, v.Contiguous)
	assert.Equal(t, "i8", v.InType)

	// Options: a cast in the sub context (8-byte fetches of i8 become 32 bytes of i32).
	code, out, errs = runCLI(t, "derive", "fetch", "--dtype", "i8", "--cast-to", "i32", "--context", "sub",
		"--axes", "A=512,B=32", "--buf", "A, B", "--time", "A", "--packet", "B", "--json")
	require.Equal(t, exitOK, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, 8, v.FetchSize)

	// Interleaving and left padding (002 L1866, L1905-1911).
	code, out, errs = runCLI(t, "derive", "fetch", "--dtype", "i8", "--axes", "A=512,B=32,I=2",
		"--buf", "A, B", "--time", "A, I", "--packet", "B", "--interleave", "I", "--interleave-offset", "16384")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "[512:32, 2:16384, 32:1] : 32\n", out)
	code, out, errs = runCLI(t, "derive", "fetch", "--dtype", "i8", "--axes", "A=32,B=90",
		"--buf", "A, B # 96", "--time", "A, [B # 96] / 32", "--packet", "[B # 96] % 32", "--left-pad", "B=2")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "[32:96, 3:32, 32:1] : 32 @ -2\n", out)
}

func TestDeriveFetchErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		// MOV-EX-11 (002 L1639-1659).
		{"insufficient input", []string{"--axes", "N=2048", "--buf", "N % 512", "--time", "N / 512", "--packet", "N % 512"},
			exitFail, "tcpmap: sequencer: stream term N / 512 iterates over N coordinates from 512 on, which the buffer does not hold (002 L1639-1659)\n"},
		// MOV-EX-12 (002 L1660-1683).
		{"incompatible shapes", []string{"--axes", "A=15", "--buf", "A % 5, A / 5", "--time", "1", "--packet", "A % 3, A / 3"},
			exitFail, "(002 L1660-1683)\n"},
		{"alignment", []string{"--axes", "A=3,B=5,C=2", "--buf", "A, B, C", "--time", "A, B", "--packet", "C"},
			exitFail, "tcpmap: fetch: output packet of 2 i8 elements is 2 bytes, not a multiple of 8 (002 L1711-1716, L1723, L2114)\n"},
		{"bad expression", []string{"--axes", "A=8", "--buf", "A, Q", "--time", "1", "--packet", "A"},
			exitUsage, `tcpmap: --buf "A, Q": col 4: unknown axis "Q"` + "\n"},
		{"bad axes", []string{"--axes", "A=", "--buf", "A", "--time", "1", "--packet", "A"}, exitUsage, "--axes"},
		{"missing packet", []string{"--axes", "A=8", "--buf", "A", "--time", "1"}, exitUsage, "--packet is required"},
		{"bad context", []string{"--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A", "--context", "dma"}, exitUsage, "--context"},
		{"bad cast", []string{"--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A", "--cast-to", "i7"}, exitUsage, "--cast-to"},
		{"bad left pad", []string{"--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A", "--left-pad", "A"}, exitUsage, "--left-pad"},
		{"cast pair", []string{"--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A", "--cast-to", "bf16"}, exitFail, "(002 L1960-1979, L2116)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"derive", "fetch", "--dtype", "i8"}, c.args...)
			code, out, errs := runCLI(t, args...)
			assert.Equal(t, c.code, code, "%s%s", out, errs)
			assert.Contains(t, errs, c.want)
		})
	}
	code, _, errs := runCLI(t, "derive", "fetch", "--axes", "A=8", "--buf", "A", "--time", "1", "--packet", "A")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "--dtype is required")
}
