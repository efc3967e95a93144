package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeriveCollect(t *testing.T) {
	for _, c := range []struct {
		cite string
		args []string
		want string
	}{
		{"002 L3653-3669", []string{"--axes", "A=8,B=32", "--dtype", "bf16", "--time", "A", "--packet", "B"},
			"Time m![A, B / 16]  Packet m![B % 16]  (64 B packet → 2 flits × 32 B)\n"},
		{"002 L3636-3652", []string{"--axes", "A=8,B=16", "--dtype", "i8", "--time", "A", "--packet", "B"},
			"Time m![A]  Packet m![B # 32]  (16 B packet → 1 flit × 32 B (16 B zero padding))\n"},
		{"002 L2123-2124", []string{"--axes", "A=4,X=40", "--dtype", "i8", "--time", "A", "--packet", "X"},
			"Time m![A, X # 64 / 32]  Packet m![X = 32]  (40 B packet → 2 flits × 32 B (24 B zero padding))\n"},
		{"002 L3612-3618", []string{"--axes", "A=8,B=64", "--dtype", "i8", "--time", "A", "--packet", "B",
			"--out-time", "A, B / 32", "--out-packet", "B % 32"},
			"Time m![A, B / 32]  Packet m![B % 32]  (64 B packet → 2 flits × 32 B)\n"},
		{"002 L2127", []string{"--axes", "A=8,B=64", "--dtype", "i8", "--time", "A", "--packet", "B", "--dual"},
			"Time m![A]  Packet m![B]  (64 B packet → 1 flit × 64 B)\n"},
	} {
		code, out, errOut := runCLI(t, append([]string{"derive", "collect"}, c.args...)...)
		require.Equal(t, exitOK, code, "%s: %s", c.cite, errOut)
		assert.Equal(t, c.want, out, c.cite)
	}
}

func TestDeriveCollectJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "derive", "collect", "--axes", "A=2048", "--dtype", "bf16", "--time", "1", "--packet", "A", "--json")
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		Out     struct{ Time, Packet string }
		Collect struct {
			Flits     int `json:"flits"`
			FlitBytes int `json:"flit_bytes"`
			FlitElems int `json:"flit_elems"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	// The Hello dot product, 002 L370-375.
	assert.Equal(t, "m![A / 16]", got.Out.Time)
	assert.Equal(t, "m![A % 16]", got.Out.Packet)
	assert.Equal(t, 128, got.Collect.Flits)
	assert.Equal(t, 32, got.Collect.FlitBytes)
	assert.Equal(t, 16, got.Collect.FlitElems)
}

func TestDeriveCollectViolation(t *testing.T) {
	// The Hello GEMV main path keeps a 64-byte packet (002 L455-456).
	code, out, errOut := runCLI(t, "derive", "collect", "--axes", "I=256,J=2048", "--dtype", "bf16",
		"--time", "J / 32", "--packet", "J % 32", "--out-time", "J / 32", "--out-packet", "J % 32")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Equal(t, "tcpmap: collect: output Packet m![J % 32] is 32 bf16 elements, not one 32-byte flit (expected m![J % 16]) (002 L3039, L3544, L3549)\n", errOut)

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"derive", "collect"}, "--axes is required"},
		{[]string{"derive", "collect", "--axes", "A=8"}, "--dtype is required"},
		{[]string{"derive", "collect", "--axes", "A=8", "--dtype", "i8", "--time", "A"}, "--packet is required"},
		{[]string{"derive", "collect", "--axes", "A=8", "--dtype", "i8", "--time", "A", "--packet", "A %"}, "--packet"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, errOut, c.msg)
	}
}
