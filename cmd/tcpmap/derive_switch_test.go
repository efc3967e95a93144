package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The manual's Broadcast01 example, 002 L3160-3209.
var swEx3 = []string{"derive", "switch", "--axes", "A=256,B=64,C=63,D=8,X=4", "--dtype", "i8",
	"--in-slice", "A", "--in-time", "B", "--in-packet", "C # 64"}

func TestDeriveSwitchFromMappings(t *testing.T) {
	code, out, errOut := runCLI(t, append(swEx3, "--out-slice", "A / 4, X", "--out-time", "B / 4, A / 2 % 2, B % 4, A % 2")...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }
  slice2 = 64, time1 = 16
  in:  Slice m![A]  Time m![B]  Packet m![C # 64]
  out: Slice m![A / 4, X]  Time m![B / 4, A / 2 % 2, B % 4, A % 2]  Packet m![C # 64]
  broadcast axes: X
  ring_size = 4 (64 rings), input_time = 64, packet = 64 B = 2 flits of 32 B
  snoop bitmaps (output slices: source slices):
    0-3: {0, 1, 2, 3}
    4-7: {4, 5, 6, 7}
    8-11: {8, 9, 10, 11}
    … (64 rows; --bitmaps prints all)
    252-255: {252, 253, 254, 255}
`, out)

	code, out, _ = runCLI(t, append(swEx3, "--out-slice", "A / 4, X", "--out-time", "B / 4, A / 2 % 2, B % 4, A % 2", "--bitmaps")...)
	require.Equal(t, exitOK, code)
	assert.Equal(t, 64, strings.Count(out, ": {"))
}

func TestDeriveSwitchFromTopology(t *testing.T) {
	for _, topo := range [][]string{
		{"--topology", "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }"},
		{"--topology", "Broadcast01", "--slice1", "2", "--slice0", "2", "--time0", "4"},
	} {
		code, out, errOut := runCLI(t, append(append([]string{}, swEx3...), topo...)...)
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "out: Slice m![A / 4, 4]  Time m![B / 4, A / 2 % 2, B % 4, A % 2]  Packet m![C # 64]\n")
	}
}

func TestDeriveSwitchJSON(t *testing.T) {
	// The Hello GEMV broadcast, 002 L389-399.
	code, out, errOut := runCLI(t, "derive", "switch", "--axes", "I=256,J=2048", "--dtype", "bf16",
		"--in-slice", "1 # 256", "--in-time", "1", "--in-packet", "J", "--out-slice", "I", "--out-time", "1 # 256", "--json")
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		Config string `json:"config"`
		Out    struct{ Slice, Time, Packet string }
		Switch struct {
			RingSize int      `json:"ring_size"`
			Bitmaps  []string `json:"-"`
			Route    struct {
				Bitmaps []string `json:"bitmaps"`
			} `json:"route"`
		} `json:"switch"`
		Rows []struct {
			First, Last int
			Sources     []int
		} `json:"bitmap_rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, "SwitchConfig::Broadcast01 { slice1: 256, slice0: 1, time0: 1 }", got.Config)
	assert.Equal(t, "m![I]", got.Out.Slice)
	assert.Equal(t, 256, got.Switch.RingSize)
	require.Len(t, got.Switch.Route.Bitmaps, 256)
	assert.Equal(t, "0-255", got.Switch.Route.Bitmaps[7])
	require.Len(t, got.Rows, 1)
	assert.Equal(t, 255, got.Rows[0].Last)
}

func TestDeriveSwitchViolation(t *testing.T) {
	// The manual's invalid innermost-position example, 002 L3475-3480.
	code, out, errOut := runCLI(t, "derive", "switch", "--axes", "A=16,B=16,C=8,D=8,E=8", "--dtype", "i8",
		"--in-slice", "A, B", "--in-time", "C", "--in-packet", "D, E",
		"--out-slice", "A / 2, 2, B / 2, 2", "--out-time", "A % 2, C, B % 2")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Equal(t, "tcpmap: switch: output Time m![A % 2, C, B % 2]: moved axis A % 2 sits outside input Time axis C (002 L3472, L3511-3516)\n", errOut)
}

func TestDeriveSwitchUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"derive", "switch"}, "--axes is required"},
		{append(swEx3[:6:6], "--in-time", "B"), "--in-slice is required"},
		{swEx3, "give the output mappings"},
		{append(swEx3, "--out-slice", "A"), "give both --out-slice and --out-time"},
		{append(swEx3, "--out-slice", "A / 4, Q", "--out-time", "B"), `--out-slice "A / 4, Q": col 8: unknown axis "Q"`},
		{append(swEx3, "--topology", "Broadcast01 { slice1: 2 }"), "missing field slice0"},
		{append(swEx3, "--topology", "Broadcast01 { slice1: 2, slice0: 2, time0: 4 }", "--slice1", "2"), "already states its parameters"},
		{append(swEx3, "--slice1", "2"), "need a bare --topology"},
		{append(swEx3, "--topology", "Ring", "--slice1", "2"), "unknown switch topology"},
		{[]string{"derive", "switch", "--axes", "A=256", "--dtype", "q7"}, "--dtype"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.msg, "%v", c.args)
	}
}
