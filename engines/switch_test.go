package engines

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// swCase is one switch derivation: the input mappings, optionally the
// output mappings and/or the config, and what the manual states.
type swCase struct {
	name    string
	cite    string // the example's lines in 002
	slices  int    // 0: the spec's 256
	axes    string
	dtype   string
	inSlice string
	inTime  string
	inPkt   string
	outS    string // "" to derive
	outT    string
	config  string // "" to derive

	// Expected, as the manual states it.
	wantCfg    string // SwitchConfig literal
	wantS      string // output Slice (compared by equivalence)
	wantT      string // output Time
	slice2     int
	time1      int
	time2      int
	ring       int
	rings      int
	flits      int
	cycles     int           // ring_size × input_time × cycles_per_packet as the manual states (002 L3526)
	bitmaps    map[int][]int // output slice → sources, rows the manual prints
	wantRule   string        // rule ID of an expected violation
	noCoverage bool          // the output drops input data on purpose (partial extraction)
	perSlice   map[int][]int // packet ids per output slice for SW-EX-1
}

func swSpec(t *testing.T, slices int) *Spec {
	t.Helper()
	sp := *Default()
	if slices != 0 {
		sp.Switch.SlicesInOut.Value = slices
	}
	return &sp
}

func swParse(t *testing.T, axes mapping.Axes, src string) *mapping.Expr {
	t.Helper()
	if src == "" {
		return nil
	}
	e, err := mapping.Parse(src, axes, nil)
	require.NoError(t, err, "parse %q", src)
	return e
}

func swRequest(t *testing.T, c swCase) SwitchRequest {
	t.Helper()
	axes, err := mapping.ParseAxes(c.axes)
	require.NoError(t, err)
	d, err := dtype.Parse(c.dtype)
	require.NoError(t, err)
	req := SwitchRequest{Axes: axes, DType: d,
		InSlice: swParse(t, axes, c.inSlice), InTime: swParse(t, axes, c.inTime), InPacket: swParse(t, axes, c.inPkt),
		OutSlice: swParse(t, axes, c.outS), OutTime: swParse(t, axes, c.outT)}
	if c.config != "" {
		cfg, err := kernel.ParseSwitchConfig(c.config)
		require.NoError(t, err)
		req.Config = &cfg
	}
	return req
}

// The axes of the custom-topology examples, 002 L3346, L3385, L3424, with
// the broadcast axes of their code (X, Y: 002 L3407; X = 4 as Z: 002 L3450).
const swCustomAxes = "A=16, B=16, C=8, D=8, E=8, X=2, Y=2, Z=4"

var swCases = []swCase{
	{
		name: "SW-EX-3 Broadcast01 from config", cite: "002 L3160-3209",
		axes: "A=256, B=64, C=63, D=8, X=4", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		config:  "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
		wantS:   "A / 4, 4", wantT: "B / 4, A / 2 % 2, B % 4, A % 2",
		slice2: 64, time1: 16, ring: 4, rings: 64, flits: 2, cycles: 512,
		bitmaps: map[int][]int{0: {0, 1, 2, 3}, 1: {0, 1, 2, 3}, 2: {0, 1, 2, 3}, 3: {0, 1, 2, 3}, 4: {4, 5, 6, 7}, 255: {252, 253, 254, 255}},
	},
	{
		name: "SW-EX-3 Broadcast01 from the code's mappings", cite: "002 L3187-3203",
		axes: "A=256, B=64, C=63, D=8, X=4", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		outS: "A / 4, X", outT: "B / 4, A / 2 % 2, B % 4, A % 2",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
		slice2:  64, time1: 16, ring: 4, rings: 64, flits: 2, cycles: 512,
		bitmaps: map[int][]int{0: {0, 1, 2, 3}, 3: {0, 1, 2, 3}, 4: {4, 5, 6, 7}, 255: {252, 253, 254, 255}},
	},
	{
		name: "SW-EX-3 Broadcast01 from the text's mappings", cite: "002 L3163-3165",
		axes: "A=256, B=64, C=63, D=8", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		outS: "A / 4, 4", outT: "B / 4, A / 2 % 2, B % 4, A % 2",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
		slice2:  64, time1: 16, ring: 4, rings: 64,
	},
	{
		name: "SW-EX-4 Broadcast01 as a mapping expression (64-slice illustration)", cite: "002 L3214-3217",
		slices: 64, axes: "A=64, B=64", dtype: "i8",
		inSlice: "A", inTime: "B / 2", inPkt: "B % 32",
		config:  "Broadcast01 { slice1: 8, slice0: 8, time0: 2 }",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 8, slice0: 8, time0: 2 }",
		wantS:   "A / 64, 64", wantT: "B / 4, A / 8 % 8, B / 2 % 2, A % 8",
		slice2: 1, time1: 16, ring: 64, rings: 1,
	},
	{
		name: "SW-EX-4 derived back from its output", cite: "002 L3214-3217",
		slices: 64, axes: "A=64, B=64", dtype: "i8",
		inSlice: "A", inTime: "B / 2", inPkt: "B % 32",
		outS: "A / 64, 64", outT: "B / 4, A / 8 % 8, B / 2 % 2, A % 8",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 8, slice0: 8, time0: 2 }",
		ring:    64,
	},
	{
		name: "SW-EX-5 Broadcast1", cite: "002 L3235-3254",
		axes: "A=256, B=64, C=63, X=4", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		outS: "A / 32, X, A % 8", outT: "B, A / 8 % 4",
		config:  "SwitchConfig::Broadcast1 { slice1: 4, slice0: 8 }",
		wantCfg: "SwitchConfig::Broadcast1 { slice1: 4, slice0: 8 }",
		slice2:  8, ring: 32, rings: 8, flits: 2,
		bitmaps: map[int][]int{0: {0, 8, 16, 24}, 7: {7, 15, 23, 31}, 8: {0, 8, 16, 24}, 255: {231, 239, 247, 255}},
	},
	{
		name: "SW-EX-5 Broadcast1 derived", cite: "002 L3235-3254",
		axes: "A=256, B=64, C=63, X=4", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		outS: "A / 32, X, A % 8", outT: "B, A / 8 % 4",
		wantCfg: "SwitchConfig::Broadcast1 { slice1: 4, slice0: 8 }",
		slice2:  8, ring: 32,
	},
	{
		name: "SW-EX-6 Transpose", cite: "002 L3264-3284",
		axes: "A=256, B=64, C=63", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		config:  "Transpose { slice1: 32, slice0: 2 }",
		wantCfg: "SwitchConfig::Transpose { slice1: 32, slice0: 2 }",
		wantS:   "A / 64, A % 2, A / 2 % 32", wantT: "B",
		slice2: 4, ring: 64, rings: 4,
		// Output slice (s2, a, b) = s2·64 + a·32 + b reads input (s2, b, a) = s2·64 + b·2 + a.
		bitmaps: map[int][]int{0: {0}, 1: {2}, 31: {62}, 32: {1}, 33: {3}, 64: {64}, 255: {255}},
	},
	{
		name: "SW-EX-6 Transpose derived", cite: "002 L3264-3284",
		axes: "A=256, B=64, C=63", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		outS: "A / 64, A % 2, A / 2 % 32", outT: "B",
		wantCfg: "SwitchConfig::Transpose { slice1: 32, slice0: 2 }",
		slice2:  4, ring: 64,
	},
	{
		name: "SW-EX-7 InterTranspose", cite: "002 L3304-3331",
		axes: "A=8, B=32, C=256", dtype: "i8",
		inSlice: "C", inTime: "A", inPkt: "B # 32",
		config:  "InterTranspose { slice1: 2, slice0: 16, time0: 2 }",
		wantCfg: "SwitchConfig::InterTranspose { slice1: 2, slice0: 16, time0: 2 }",
		wantS:   "C / 32, A / 2 % 2, C % 16", wantT: "A / 4, A % 2, C / 16 % 2",
		slice2: 8, time2: 2, time1: 2, ring: 32, rings: 8, flits: 1,
		bitmaps: map[int][]int{0: {0, 16}, 15: {15, 31}, 16: {0, 16}, 255: {239, 255}},
	},
	{
		name: "SW-EX-7 InterTranspose derived", cite: "002 L3304-3331",
		axes: "A=8, B=32, C=256", dtype: "i8",
		inSlice: "C", inTime: "A", inPkt: "B # 32",
		outS: "C / 32, A / 2 % 2, C % 16", outT: "A / 4, A % 2, C / 16 % 2",
		wantCfg: "SwitchConfig::InterTranspose { slice1: 2, slice0: 16, time0: 2 }",
		slice2:  8, time2: 2, ring: 32,
	},
	{
		name: "SW-EX-8 custom arbitrary permutation", cite: "002 L3342-3380",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "B % 4, B / 4, A % 4, A / 4", outT: "C",
		config:  "SwitchConfig::CustomBroadcast { ring_size: 256 }",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 256 }",
		ring:    256, rings: 1, flits: 2, cycles: 4096,
		// Rows 0-3 and 255 as printed; rows 4 and 5 follow the mapping
		// (A = 1 → 16, A = 5 → 80), not the printed (0,1)→1 and (4,1)→65: see
		// spec-decisions "Switch custom permutation bitmap rows".
		bitmaps: map[int][]int{0: {0}, 1: {64}, 2: {128}, 3: {192}, 4: {16}, 5: {80}, 255: {255}},
	},
	{
		name: "SW-EX-8 derived", cite: "002 L3342-3380",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "B % 4, B / 4, A % 4, A / 4", outT: "C",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 256 }",
		ring:    256,
	},
	{
		name: "SW-EX-9 custom multi-axis broadcast", cite: "002 L3381-3415",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A / 2, X, B / 2, Y", outT: "C, A % 2, B % 2",
		config:  "CustomBroadcast { ring_size: 32 }",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 32 }",
		ring:    32, rings: 8, flits: 2, cycles: 512,
		bitmaps: map[int][]int{0: {0, 1, 16, 17}, 1: {0, 1, 16, 17}, 2: {2, 3, 18, 19}, 3: {2, 3, 18, 19}, 255: {238, 239, 254, 255}},
	},
	{
		name: "SW-EX-9 derived from the text's mappings", cite: "002 L3384-3386",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A / 2, 2, B / 2, 2", outT: "C, A % 2, B % 2",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 32 }",
		ring:    32,
		bitmaps: map[int][]int{0: {0, 1, 16, 17}, 255: {238, 239, 254, 255}},
	},
	{
		name: "SW-EX-10 custom partial axis extraction", cite: "002 L3420-3458",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 4, Z", outT: "C, B % 4 = 3",
		config:  "CustomBroadcast { ring_size: 4 }",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 4 }",
		// The manual prints "4 × 8 × 2 = 128 cycles" (002 L3439); the
		// product is 64: see spec-decisions "Switch partial extraction cycle count".
		ring: 4, rings: 64, flits: 2, cycles: 64, noCoverage: true,
		bitmaps: map[int][]int{0: {0, 1, 2}, 1: {0, 1, 2}, 2: {0, 1, 2}, 4: {4, 5, 6}, 255: {252, 253, 254}},
	},
	{
		name: "SW-EX-10 derived", cite: "002 L3420-3458",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 4, 4", outT: "C, B % 4 = 3",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 4 }",
		ring:    4, noCoverage: true,
	},
	{
		name: "SW-EX-11 order preservation violated", cite: "002 L3463-3470, L3505-3510",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 4, 4", outT: "C, B % 2, B / 2",
		wantRule: "SW-R4",
	},
	{
		name: "SW-EX-11 order preservation violated (within B % 4)", cite: "002 L3463-3470",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 4, 4", outT: "C, B % 2, B % 4 / 2",
		wantRule: "SW-R4",
	},
	{
		name: "SW-EX-11 corrected order is valid", cite: "002 L3469-3470",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 4, 4", outT: "C, B % 4 / 2, B % 2",
		config:  "CustomBroadcast { ring_size: 4 }",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 4 }",
		ring:    4,
		bitmaps: map[int][]int{0: {0, 1, 2, 3}, 255: {252, 253, 254, 255}},
	},
	{
		name: "SW-EX-11 corrected order is also a regular Broadcast01", cite: "002 L3469-3470",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 4, 4", outT: "C, B % 4 / 2, B % 2",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 1, slice0: 4, time0: 8 }",
		ring:    4,
		bitmaps: map[int][]int{0: {0, 1, 2, 3}, 255: {252, 253, 254, 255}},
	},
	{
		// Read literally, B / 2 overlaps the B / 4 kept in Slice; see
		// spec-decisions "Switch order-preservation example".
		name: "SW-EX-11 literal 'valid' form (B / 2, B % 2) overlaps B / 4", cite: "002 L3469-3470, L3509",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 4, 4", outT: "C, B / 2, B % 2",
		wantRule: "SW-R17",
	},
	{
		name: "SW-EX-12 innermost position violated", cite: "002 L3475-3480, L3511-3516",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A / 2, 2, B / 2, 2", outT: "A % 2, C, B % 2",
		wantRule: "SW-R5",
	},
	{
		name: "SW-EX-12 with a given ring violated too", cite: "002 L3475-3480",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A / 2, 2, B / 2, 2", outT: "A % 2, C, B % 2",
		config:   "CustomBroadcast { ring_size: 32 }",
		wantRule: "SW-R5",
	},
	{
		name: "SW-EX-14 GEMV broadcast from config", cite: "002 L389-399",
		axes: "I=256, J=2048", dtype: "bf16",
		inSlice: "1 # 256", inTime: "1", inPkt: "J",
		outS: "I", outT: "1 # 256",
		config:  "Broadcast01 { slice1: 256, slice0: 1, time0: 1 }",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 256, slice0: 1, time0: 1 }",
		slice2:  1, time1: 1, ring: 256, rings: 1, flits: 128,
		bitmaps: map[int][]int{0: span(0, 256), 255: span(0, 256)},
	},
	{
		name: "SW-EX-14 GEMV broadcast derived", cite: "002 L389-399",
		axes: "I=256, J=2048", dtype: "bf16",
		inSlice: "1 # 256", inTime: "1", inPkt: "J",
		outS: "I", outT: "1 # 256",
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 256, slice0: 1, time0: 1 }",
		ring:    256,
	},
	{
		// Padding positions of the moved part take free source slices in
		// order (spec-decisions "Switch padding positions").
		name: "SW-EX-14 GEMV as a CustomBroadcast", cite: "002 L389-399",
		axes: "I=256, J=2048", dtype: "bf16",
		inSlice: "1 # 256", inTime: "1", inPkt: "J",
		outS: "I", outT: "1 # 256",
		config:  "CustomBroadcast { ring_size: 256 }",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 256 }",
		ring:    256,
		bitmaps: map[int][]int{0: span(0, 256), 255: span(0, 256)},
	},
	{
		name: "SW-EX-14 GEMV output from config", cite: "002 L389-399",
		axes: "I=256, J=2048", dtype: "bf16",
		inSlice: "1 # 256", inTime: "1", inPkt: "J",
		config: "Broadcast01 { slice1: 256, slice0: 1, time0: 1 }",
		wantS:  "256", wantT: "1 # 256", ring: 256,
	},
	{
		name: "SW-EX-2 forwarding", cite: "002 L3129-3138",
		axes: "A=256, B=64, C=32", dtype: "f32",
		inSlice: "A", inTime: "B", inPkt: "C",
		outS: "A", outT: "B",
		wantCfg: "SwitchConfig::Forwarding",
		ring:    1, rings: 256, flits: 4,
		bitmaps: map[int][]int{0: {0}, 17: {17}, 255: {255}},
	},
	{
		name: "SW-EX-1 router walk (2 slices)", cite: "002 L3105-3119",
		slices: 2, axes: "A=2, B=2, C=64", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C",
		outS: "A / 2, 2", outT: "B / 2, B % 2, A % 2",
		// "like Broadcast01 with slice0 = 2, slice1 = 1" (002 L3119).
		wantCfg: "SwitchConfig::Broadcast01 { slice1: 1, slice0: 2, time0: 2 }",
		ring:    2, rings: 1,
		bitmaps: map[int][]int{0: {0, 1}, 1: {0, 1}},
		// Input slice0 = [0, 1], slice1 = [2, 3] (002 L3110). The mapping
		// orders each output [0, 2, 1, 3], not the table's [0, 1, 2, 3]:
		// see spec-decisions "Switch router walk order".
		perSlice: map[int][]int{0: {0, 2, 1, 3}, 1: {0, 2, 1, 3}},
	},
	{
		name: "mismatched output for a given topology", cite: "002 L3499-3500",
		axes: "A=256, B=64, C=63, X=4", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C # 64",
		outS: "A / 4, X", outT: "B, A % 4",
		config:   "Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
		wantRule: "SW-R3",
	},
	{
		name: "partial cluster", cite: "002 L3501-3502",
		axes: "A=128, B=64, C=64", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C",
		config:   "Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
		wantRule: "SW-R2",
	},
	{
		name: "slice split", cite: "002 L3143",
		axes: "A=256, B=64, C=64", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C",
		config:   "Broadcast01 { slice1: 3, slice0: 2, time0: 4 }",
		wantRule: "SW-R11",
	},
	{
		name: "time split", cite: "002 L3143",
		axes: "A=256, B=64, C=64", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C",
		config:   "Broadcast01 { slice1: 2, slice0: 2, time0: 5 }",
		wantRule: "SW-R12",
	},
	{
		name: "InterTranspose time split needs slice1 · time0", cite: "002 L3288-3290",
		axes: "A=8, B=32, C=256", dtype: "i8",
		inSlice: "C", inTime: "A", inPkt: "B # 32",
		config:   "InterTranspose { slice1: 4, slice0: 16, time0: 4 }",
		wantRule: "SW-R12",
	},
	{
		name: "zero parameter", cite: "002 L3142",
		axes: "A=256, B=64, C=64", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C",
		config:   "Broadcast01 { slice1: 0, slice0: 2, time0: 4 }",
		wantRule: "SW-R10",
	},
	{
		name: "ring not a power of two", cite: "002 L3364",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A / 2, X, B / 2, Y", outT: "C, A % 2, B % 2",
		config:   "CustomBroadcast { ring_size: 48 }",
		wantRule: "SW-R6",
	},
	{
		name: "ring too small for the dependencies", cite: "002 L3364-3365",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A / 2, X, B / 2, Y", outT: "C, A % 2, B % 2",
		config:   "CustomBroadcast { ring_size: 16 }",
		wantRule: "SW-R14",
	},
	{
		name: "larger ring than needed is accepted", cite: "002 L3364-3365",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A / 2, X, B / 2, Y", outT: "C, A % 2, B % 2",
		config:  "CustomBroadcast { ring_size: 64 }",
		wantCfg: "SwitchConfig::CustomBroadcast { ring_size: 64 }",
		ring:    64, rings: 4,
		bitmaps: map[int][]int{0: {0, 1, 16, 17}},
	},
	{
		name: "new axis in output Time", cite: "002 L3192",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B", outT: "C, X",
		wantRule: "SW-R8",
	},
	{
		name: "a Time axis into Slice is an InterTranspose", cite: "002 L3289-3303",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 8, C", outT: "B % 8",
		wantCfg: "SwitchConfig::InterTranspose { slice1: 8, slice0: 1, time0: 1 }",
		ring:    8, slice2: 32, time2: 1,
	},
	{
		name: "no topology moves a Time axis outermost", cite: "002 L3092, L3499-3500",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "C, A, B / 8", outT: "B % 8",
		wantRule: "SW-R13",
	},
	{
		name: "no topology duplicates a Time axis into Slice", cite: "002 L3092, L3086",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 8, C", outT: "C",
		wantRule: "SW-R13",
	},
	{
		name: "custom output Slice from input Time", cite: "002 L3086, L3340-3341",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 8, C", outT: "C",
		config:   "CustomBroadcast { ring_size: 256 }",
		wantRule: "SW-R7",
	},
	{
		name: "repeated source", cite: "002 L3095",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B / 2, X", outT: "C, B % 2, 2",
		wantRule: "SW-R16",
	},
	{
		name: "packet changed", cite: "002 L3087-3088",
		axes: swCustomAxes, dtype: "i8",
		inSlice: "A, B", inTime: "C", inPkt: "D, E",
		outS: "A, B", outT: "C",
		wantRule: "SW-R1",
	},
	{
		name: "packet not 8-byte aligned", cite: "002 L3037",
		axes: "A=256, B=64, C=63", dtype: "i8",
		inSlice: "A", inTime: "B", inPkt: "C",
		outS: "A", outT: "B",
		wantRule: "SW-R9",
	},
}

func span(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestSwitchManualExamples(t *testing.T) {
	for _, c := range swCases {
		t.Run(c.name, func(t *testing.T) {
			req := swRequest(t, c)
			if c.name == "packet changed" {
				req.OutPacket = swParse(t, req.Axes, "E, D")
			}
			plan, err := DeriveSwitch(swSpec(t, c.slices), req)
			if c.wantRule != "" {
				var v *Violation
				require.Error(t, err, c.cite)
				require.True(t, errors.As(err, &v), "want a rule violation, got %v", err)
				assert.Equal(t, c.wantRule, v.Rule.ID, "%s: %v", c.cite, err)
				assert.True(t, strings.HasPrefix(err.Error(), "switch: "), err.Error())
				return
			}
			require.NoError(t, err, c.cite)
			sw := &plan.Switch
			if c.wantCfg != "" {
				assert.Equal(t, c.wantCfg, sw.Config.String(), c.cite)
			}
			axes := req.Axes
			if c.wantS != "" {
				assert.True(t, switchSame(plan.OutSlice, swParse(t, axes, c.wantS)), "%s: out Slice %s, want %s", c.cite, plan.OutSlice, c.wantS)
				assert.True(t, switchSame(plan.OutTime, swParse(t, axes, c.wantT)), "%s: out Time %s, want %s", c.cite, plan.OutTime, c.wantT)
			}
			for _, f := range []struct {
				name      string
				want, got int
			}{{"slice2", c.slice2, sw.Slice2}, {"time1", c.time1, sw.Time1}, {"time2", c.time2, sw.Time2},
				{"ring_size", c.ring, sw.RingSize}, {"rings", c.rings, sw.Rings}, {"flits", c.flits, sw.FlitsPerPacket}} {
				if f.want != 0 {
					assert.Equal(t, f.want, f.got, "%s: %s", c.cite, f.name)
				}
			}
			if c.cycles != 0 {
				// The manual's formula, 002 L3526: ring_size × input_time × cycles_per_packet.
				assert.Equal(t, c.cycles, sw.RingSize*sw.InTime*sw.FlitsPerPacket, c.cite)
			}
			for o, want := range c.bitmaps {
				assert.Equal(t, want, sw.Route.Bitmaps[o].Slices(), "%s: bitmap[%d]", c.cite, o)
			}
			switchOracle(t, req, plan, !c.noCoverage)
			if c.perSlice != nil {
				got := switchRun(t, plan)
				assert.Equal(t, c.perSlice, got, c.cite)
			}
		})
	}
}

// switchRun applies the switch to packets numbered slice·InTime + time and
// returns the numbers each output slice receives, in output time order.
func switchRun(t *testing.T, plan *SwitchPlan) map[int][]int {
	t.Helper()
	sw := &plan.Switch
	src, dst := switchBuffers(sw)
	require.NoError(t, SwitchApply(sw, dst, src))
	out := map[int][]int{}
	u := sw.Route.OutTime()
	for o := 0; o < sw.Slices; o++ {
		for tp := 0; tp < u; tp++ {
			out[o] = append(out[o], int(binary.LittleEndian.Uint32(dst[(o*u+tp)*sw.PacketBytes:])))
		}
		// One output slice alone receives the same packets.
		one := make([]byte, u*sw.PacketBytes)
		require.NoError(t, SwitchApplySlice(sw, one, src, o))
		require.Equal(t, dst[o*u*sw.PacketBytes:(o+1)*u*sw.PacketBytes], one, "slice %d alone", o)
	}
	require.Error(t, SwitchApplySlice(sw, make([]byte, u*sw.PacketBytes), src, sw.Slices))
	return out
}

// switchBuffers returns an input stream whose packet (s, t) starts with the
// little-endian number s·InTime + t, and an output buffer.
func switchBuffers(sw *kernel.Switch) (src, dst []byte) {
	p := sw.PacketBytes
	src = make([]byte, sw.Slices*sw.InTime*p)
	for i := 0; i < sw.Slices*sw.InTime; i++ {
		binary.LittleEndian.PutUint32(src[i*p:], uint32(i))
	}
	return src, make([]byte, sw.Slices*sw.Route.OutTime()*p)
}

// oracleTB is what the oracles need of a *testing.T, so that a recorder
// can run them on deliberately wrong configurations.
type oracleTB interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

// oracleRecorder records an oracle's complaints.
type oracleRecorder struct {
	errs []string
}

func (r *oracleRecorder) Helper() {}
func (r *oracleRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *oracleRecorder) FailNow() { r.errs = append(r.errs, "FailNow"); runtime.Goexit() }

// runOracle runs check against a recorder and returns its complaints.
func runOracle(check func(oracleTB)) []string {
	r := &oracleRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.errs
}

// switchOracle checks a derived switch against the mapping semantics
// (computing.md §2.5): running SwitchApply on numbered packets, every live
// output position (o, t') must carry the packet of an input position (s, t)
// that holds the same tensor index, OutSlice(o) + OutTime(t') =
// InSlice(s) + InTime(t), broadcast axes ignored (002 L3086). With coverage,
// every live input element must also reach some output. The indices come
// from the mapping package's compiled position semantics (Expr.Map's
// function), independent of the switch derivation.
func switchOracle(t oracleTB, req SwitchRequest, plan *SwitchPlan, coverage bool) {
	t.Helper()
	// The switch copies packets whole whatever their size (002 L3088): the
	// oracle runs it on 4-byte packets that carry their input position.
	swc := plan.Switch
	swc.PacketBytes = 4
	sw := &swc
	axes := req.Axes
	nc := axes.Len()
	bcast := make([]bool, nc)
	for _, a := range plan.Broadcast {
		i, ok := axes.Slot(a)
		require.True(t, ok)
		bcast[i] = true
	}
	// Slice and Time decode jointly, as positions of the pair [Slice,
	// Time], so that a composite atom split between them decodes its summed
	// position (002 L1023-1024); padding and overshoot are not live.
	pos := func(sl, tm *mapping.Expr) (*mapping.Program, []int) {
		p, err := mapping.Compile(mapping.Pair(sl, tm), axes)
		require.NoError(t, err, "[%s], [%s]", sl, tm)
		return p, make([]int, p.Slots())
	}
	pIn, bIn := pos(req.InSlice, req.InTime)
	pOut, bOut := pos(plan.OutSlice, plan.OutTime)
	tIn, u := req.InTime.Size(), plan.OutTime.Size()
	require.Equal(t, u, sw.Route.OutTime(), "route output time vs the output Time mapping")

	src, dst := switchBuffers(sw)
	require.NoError(t, SwitchApply(sw, dst, src))
	var kb []byte
	key := func(c []int) []byte {
		kb = kb[:0]
		for _, v := range c[:nc] {
			kb = binary.AppendUvarint(kb, uint64(v))
		}
		return kb
	}
	// The input positions' indices, nil for padding.
	inCells := make([][]int, sw.Slices*tIn)
	for i := range inCells {
		if k, _ := pIn.Eval(i, bIn); k == mapping.Live {
			inCells[i] = append([]int(nil), bIn[:nc]...)
		}
	}
	reached := map[string]bool{}
	p := sw.PacketBytes
	bad := 0
	for o := 0; o < sw.Slices; o++ {
		for tp := 0; tp < u; tp++ {
			if k, _ := pOut.Eval(o*u+tp, bOut); k != mapping.Live {
				continue
			}
			for a := range bcast {
				if bcast[a] {
					bOut[a] = 0
				}
			}
			id := int(binary.LittleEndian.Uint32(dst[(o*u+tp)*p:]))
			got := inCells[id]
			if got == nil || !slices.Equal(got, bOut[:nc]) {
				if bad++; bad <= 5 {
					t.Errorf("output slice %d time %d holds %s, but receives input slice %d time %d holding %s (live %v)",
						o, tp, switchIndex(axes, bOut[:nc]), id/tIn, id%tIn, switchIndex(axes, got), got != nil)
				}
				continue
			}
			if k := key(got); coverage && !reached[string(k)] {
				reached[string(k)] = true
			}
		}
	}
	if coverage {
		for i, c := range inCells {
			if c != nil && !reached[string(key(c))] {
				if bad++; bad <= 5 {
					t.Errorf("input slice %d time %d (%s) reaches no output", i/tIn, i%tIn, switchIndex(axes, c))
				}
			}
		}
	}
}

// TestSwitchOracleCatchesWrongRoutes: the oracle fails a switch whose
// routes do not match its mappings.
func TestSwitchOracleCatchesWrongRoutes(t *testing.T) {
	var c swCase
	for _, sc := range swCases {
		if sc.name == "SW-EX-3 Broadcast01 from config" {
			c = sc
		}
	}
	req := swRequest(t, c)
	plan, err := DeriveSwitch(Default(), req)
	require.NoError(t, err)
	assert.Empty(t, runOracle(func(tb oracleTB) { switchOracle(tb, req, plan, true) }))

	swapped := *plan
	swapped.Switch.Route.Bitmaps = append([]kernel.SnoopBitmap(nil), plan.Switch.Route.Bitmaps...)
	b := swapped.Switch.Route.Bitmaps
	b[0], b[4] = b[4], b[0]
	assert.NotEmpty(t, runOracle(func(tb oracleTB) { switchOracle(tb, req, &swapped, true) }), "swapped bitmaps")

	interleave := *plan
	r := &interleave.Switch.Route
	r.OuterTime, r.InnerTime, r.OuterTimeStride = r.InnerTime, r.OuterTime, r.OuterTime // time0 ↔ time1
	assert.NotEmpty(t, runOracle(func(tb oracleTB) { switchOracle(tb, req, &interleave, true) }), "time digits swapped")

	wrongMap := *plan
	wrongMap.OutTime = swParse(t, req.Axes, "B / 4, A % 2, B % 4, A / 2 % 2")
	assert.NotEmpty(t, runOracle(func(tb oracleTB) { switchOracle(tb, req, &wrongMap, true) }), "slice digits swapped in the mapping")
}

// TestSwitchDTypeOfExamples: the Broadcast01 and custom examples say
// "dtype = i8" in the text and f32 in the code (002 L3162 vs L3190; L3346,
// L3385, L3424 vs L3374, L3409, L3452); only i8 reproduces the stated cycle
// counts. See spec-decisions
// "Switch example dtypes".
func TestSwitchDTypeOfExamples(t *testing.T) {
	for _, c := range []struct {
		cite           string
		base           string // name of the swCases entry
		cycles         int    // as the manual states
		i8Flits, f32Fl int
	}{
		{"002 L3162, L3190, L3209", "SW-EX-3 Broadcast01 from config", 512, 2, 8},
		{"002 L3346, L3374, L3363", "SW-EX-8 custom arbitrary permutation", 4096, 2, 8},
		{"002 L3385, L3409, L3400", "SW-EX-9 custom multi-axis broadcast", 512, 2, 8},
		// Stated 128; 4 × 8 × 2 is 64 (spec-decisions "Switch partial
		// extraction cycle count").
		{"002 L3424, L3452, L3440", "SW-EX-10 custom partial axis extraction", 64, 2, 8},
	} {
		var base swCase
		for _, sc := range swCases {
			if sc.name == c.base {
				base = sc
			}
		}
		require.NotEmpty(t, base.name)
		for _, d := range []struct {
			dtype string
			flits int
		}{{"i8", c.i8Flits}, {"f32", c.f32Fl}} {
			base.dtype = d.dtype
			plan, err := DeriveSwitch(Default(), swRequest(t, base))
			require.NoError(t, err)
			sw := &plan.Switch
			assert.Equal(t, d.flits, sw.FlitsPerPacket, "%s %s", c.cite, d.dtype)
			cycles := sw.RingSize * sw.InTime * sw.FlitsPerPacket // 002 L3526
			if d.dtype == "i8" {
				assert.Equal(t, c.cycles, cycles, "%s: the text's dtype reproduces the stated count", c.cite)
			} else {
				assert.Equal(t, c.cycles*4, cycles, "%s: f32 packets are 4× as many flits", c.cite)
			}
		}
	}
}

// TestSwitchFlitsPerPacket: cycles_per_packet = packet_size / 32
// (002 L3526), rounded up for a packet that is not a whole number of flits
// (spec-decisions "Switch flits per packet"), and 64-byte flits in dual
// channel mode (002 L2127).
func TestSwitchFlitsPerPacket(t *testing.T) {
	for _, c := range []struct {
		pkt   string
		dt    string
		dual  bool
		bytes int
		flits int
	}{
		{"C", "i8", false, 8, 1},
		{"C # 32", "i8", false, 32, 1},
		{"C # 40", "i8", false, 40, 2}, // the Fetch chapter's 40-byte packet, 002 L2123
		{"C # 64", "i8", false, 64, 2}, // 002 L3527-3529
		{"C # 64", "i8", true, 64, 1},
		{"C # 40", "i8", true, 40, 1},
		{"C # 64", "f32", false, 256, 8},
		{"C # 64", "i4", false, 32, 1},
	} {
		axes, err := mapping.ParseAxes("A=256, B=4, C=8")
		require.NoError(t, err)
		d, err := dtype.Parse(c.dt)
		require.NoError(t, err)
		plan, err := DeriveSwitch(Default(), SwitchRequest{Axes: axes, DType: d,
			InSlice: swParse(t, axes, "A"), InTime: swParse(t, axes, "B"), InPacket: swParse(t, axes, c.pkt),
			Config: &kernel.SwitchConfig{Topology: kernel.SwitchForwarding}, DualChannel: c.dual})
		require.NoError(t, err)
		assert.Equal(t, c.bytes, plan.Switch.PacketBytes, c.pkt)
		assert.Equal(t, c.flits, plan.Switch.FlitsPerPacket, "%s %s dual=%v", c.pkt, c.dt, c.dual)
	}
}

// TestSwitchViolationMessage: a violation names the engine, the values and
// the manual's line.
func TestSwitchViolationMessage(t *testing.T) {
	var c swCase
	for _, sc := range swCases {
		if sc.name == "SW-EX-12 innermost position violated" {
			c = sc
		}
	}
	_, err := DeriveSwitch(Default(), swRequest(t, c))
	require.Error(t, err)
	assert.Equal(t, "switch: output Time m![A % 2, C, B % 2]: moved axis A % 2 sits outside input Time axis C (002 L3472, L3511-3516)", err.Error())

	for _, sc := range swCases {
		if sc.name == "SW-EX-11 order preservation violated" {
			c = sc
		}
	}
	_, err = DeriveSwitch(Default(), swRequest(t, c))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reorder input Slice m![A, B]")
	assert.Contains(t, err.Error(), "(002 L3460, L3505-3510)")
}

// TestSwitchRouteSource checks SwitchRoute.Source against the Broadcast01
// layout of 002 L3150-3157 computed directly: output time
// (t1, s1, t0, s0) of slice (s2, x1, x0) reads input slice (s2, s1, s0) at
// time (t1, t0).
func TestSwitchRouteSource(t *testing.T) {
	var c swCase
	for _, sc := range swCases {
		if sc.name == "SW-EX-3 Broadcast01 from config" {
			c = sc
		}
	}
	plan, err := DeriveSwitch(Default(), swRequest(t, c))
	require.NoError(t, err)
	r := &plan.Switch.Route
	const s1, s0, t0, time1 = 2, 2, 4, 16
	for o := 0; o < 256; o++ {
		for tp := 0; tp < r.OutTime(); tp++ {
			x0 := tp % s0
			y0 := tp / s0 % t0
			x1 := tp / (s0 * t0) % s1
			y1 := tp / (s0 * t0 * s1)
			require.Less(t, y1, time1)
			s, ti, ok := r.Source(o, tp)
			require.True(t, ok)
			assert.Equal(t, o/4*4+x1*s0+x0, s)
			assert.Equal(t, y1*t0+y0, ti)
		}
	}
	_, _, ok := r.Source(0, r.OutTime())
	assert.False(t, ok)
	_, _, ok = r.Source(-1, 0)
	assert.False(t, ok)
}

// TestSwitchApplyRejects: SwitchApply checks buffer sizes and the
// configuration instead of panicking.
func TestSwitchApplyRejects(t *testing.T) {
	var c swCase
	for _, sc := range swCases {
		if sc.name == "SW-EX-9 custom multi-axis broadcast" {
			c = sc
		}
	}
	plan, err := DeriveSwitch(Default(), swRequest(t, c))
	require.NoError(t, err)
	sw := plan.Switch
	src, dst := switchBuffers(&sw)
	assert.Error(t, SwitchApply(nil, dst, src))
	assert.Error(t, SwitchApply(&sw, dst[1:], src))
	assert.Error(t, SwitchApply(&sw, dst, src[1:]))
	bad := sw
	bad.Route.Bitmaps = append([]kernel.SnoopBitmap(nil), sw.Route.Bitmaps...)
	bad.Route.Bitmaps[3] = kernel.SnoopBitmap{}
	assert.Error(t, SwitchApply(&bad, dst, src))
	bad.Route.Bitmaps = sw.Route.Bitmaps[:3]
	assert.Error(t, SwitchApply(&bad, dst, src))
	bad = sw
	bad.Route.InnerTime = 0
	assert.Error(t, SwitchApply(&bad, dst, src))
}

// TestSwitchMissingInputs: bad requests are errors, not panics.
func TestSwitchMissingInputs(t *testing.T) {
	axes, err := mapping.ParseAxes("A=256, B=4, C=8")
	require.NoError(t, err)
	a, b, cc := swParse(t, axes, "A"), swParse(t, axes, "B"), swParse(t, axes, "C")
	for _, req := range []SwitchRequest{
		{Axes: axes, DType: dtype.I8, InSlice: a, InTime: b},
		{Axes: axes, InSlice: a, InTime: b, InPacket: cc, OutSlice: a, OutTime: b},
		{Axes: axes, DType: dtype.I8, InSlice: a, InTime: b, InPacket: cc, OutSlice: a},
		{Axes: axes, DType: dtype.I8, InSlice: a, InTime: b, InPacket: cc},
		{Axes: axes, DType: dtype.I8, InSlice: a, InTime: b, InPacket: mapping.Sym("Q", 0)},
		{Axes: axes, DType: dtype.I8, InSlice: a, InTime: b, InPacket: cc, Config: &kernel.SwitchConfig{Topology: kernel.SwitchCustomBroadcast, RingSize: 4}},
		{Axes: axes, DType: dtype.I8, InSlice: a, InTime: b, InPacket: cc, Config: &kernel.SwitchConfig{}},
		{Axes: axes, DType: dtype.I8, InSlice: a, InTime: b, InPacket: cc, Config: &kernel.SwitchConfig{Topology: kernel.SwitchTranspose, Slice1: 2, Slice0: 2, Time0: 3}},
	} {
		_, err := DeriveSwitch(Default(), req)
		assert.Error(t, err)
	}
	_, err = DeriveSwitch(nil, SwitchRequest{})
	assert.Error(t, err)
}

// TestSwitchDerivationTieBreak: where several topologies produce the
// output, the derivation picks the one the manual uses (spec-decisions
// "Switch topology derivation"), and every candidate is correct.
func TestSwitchDerivationTieBreak(t *testing.T) {
	// Broadcast1 { slice1: s, slice0: 1 } and Broadcast01 { slice1: 1,
	// slice0: s, time0: InTime } produce the same output.
	axes, err := mapping.ParseAxes("A=256, B=8, C=32, X=4")
	require.NoError(t, err)
	req := SwitchRequest{Axes: axes, DType: dtype.I8, InSlice: swParse(t, axes, "A"), InTime: swParse(t, axes, "B"),
		InPacket: swParse(t, axes, "C"), OutSlice: swParse(t, axes, "A / 4, X"), OutTime: swParse(t, axes, "B, A % 4")}
	plan, err := DeriveSwitch(Default(), req)
	require.NoError(t, err)
	assert.Equal(t, "SwitchConfig::Broadcast01 { slice1: 1, slice0: 4, time0: 8 }", plan.Switch.Config.String())
	switchOracle(t, req, plan, true)
	for _, lit := range []string{"Broadcast1 { slice1: 4, slice0: 1 }", "Broadcast01 { slice1: 1, slice0: 4, time0: 8 }", "CustomBroadcast { ring_size: 4 }"} {
		cfg, err := kernel.ParseSwitchConfig(lit)
		require.NoError(t, err)
		r := req
		r.Config = &cfg
		p, err := DeriveSwitch(Default(), r)
		require.NoError(t, err, lit)
		assert.Equal(t, plan.Switch.Route.Bitmaps, p.Switch.Route.Bitmaps, lit)
		switchOracle(t, r, p, true)
	}
}

// TestSwitchGEMMDistribution: the GEMM's comment says the Switch Engine
// distributes each tile of B to the matching slice (002 L500, L510) without
// stating a configuration; with B's 16 tiles J / 32 on slices 0..15, the
// derivation finds a regular broadcast whose output the oracle confirms.
func TestSwitchGEMMDistribution(t *testing.T) {
	axes, err := mapping.ParseAxes("I=512, J=512, K=2048")
	require.NoError(t, err)
	req := SwitchRequest{Axes: axes, DType: dtype.BF16,
		InSlice: swParse(t, axes, "1 # 16, J / 32"), InTime: swParse(t, axes, "J % 8, J / 8 % 4"), InPacket: swParse(t, axes, "K"),
		OutSlice: swParse(t, axes, "I / 32, J / 32"), OutTime: swParse(t, axes, "J % 8, J / 8 % 4, 1 # 16")}
	plan, err := DeriveSwitch(Default(), req)
	require.NoError(t, err)
	assert.Equal(t, kernel.SwitchBroadcast1, plan.Switch.Config.Topology, plan.Switch.Config.String())
	assert.Equal(t, []string{"I"}, plan.Broadcast)
	switchOracle(t, req, plan, true)
}

// swRandomSplit returns parts random power-of-two sizes whose product is
// total (a power of two).
func swRandomSplit(rng *rand.Rand, total, parts int) []int {
	out := make([]int, parts)
	for i := range out {
		out[i] = 1
	}
	for total > 1 {
		out[rng.Intn(parts)] *= 2
		total /= 2
	}
	return out
}

// TestSwitchRegularProperty: for random input mappings and random regular
// configurations, the derived output mappings and routes agree with the
// mapping semantics, and deriving back from the output mappings finds a
// configuration whose routes agree too. 120 cases (40 under -short,
// shortTrials).
func TestSwitchRegularProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	topos := []kernel.SwitchTopology{kernel.SwitchBroadcast01, kernel.SwitchBroadcast1, kernel.SwitchTranspose, kernel.SwitchInterTranspose}
	for iter := 0; iter < shortTrials(120); iter++ {
		// A 64-slice cluster keeps the oracle fast; every 8th case uses the
		// real 256 slices.
		slices := 64
		if iter%8 == 0 {
			slices = 256
		}
		spec := swSpec(t, slices)
		// Input Slice: three axes P, Q, R with sizes multiplying to the slice
		// count (one maybe padded); input Time: two axes S, T.
		sz := swRandomSplit(rng, slices, 3)
		ts := []int{1 + rng.Intn(4), 1 << rng.Intn(3)}
		decl := fmt.Sprintf("P=%d, Q=%d, R=%d, S=%d, T=%d, W=8", sz[0], sz[1], sz[2], ts[0], ts[1])
		slice := "P, Q, R"
		if sz[0] >= 4 && rng.Intn(3) == 0 {
			decl = fmt.Sprintf("P=%d, Q=%d, R=%d, S=%d, T=%d, W=8", sz[0]-1, sz[1], sz[2], ts[0], ts[1])
			slice = fmt.Sprintf("P # %d, Q, R", sz[0])
		}
		perm := rng.Perm(2)
		timeParts := []string{"S", "T"}
		time := timeParts[perm[0]] + ", " + timeParts[perm[1]]
		axes, err := mapping.ParseAxes(decl)
		require.NoError(t, err)
		S, T := swParse(t, axes, slice), swParse(t, axes, time)
		var cfg kernel.SwitchConfig
		for {
			topo := topos[rng.Intn(len(topos))]
			split := swRandomSplit(rng, slices, 3)
			cfg = kernel.SwitchConfig{Topology: topo, Slice1: split[1], Slice0: split[0]}
			if topo == kernel.SwitchBroadcast01 || topo == kernel.SwitchInterTranspose {
				divs := switchDivisors(T.Size(), T.Size())
				cfg.Time0 = divs[rng.Intn(len(divs))]
			}
			if topo != kernel.SwitchInterTranspose || T.Size()%(cfg.Slice1*cfg.Time0) == 0 {
				break
			}
		}
		req := SwitchRequest{Axes: axes, DType: dtype.I8, InSlice: S, InTime: T, InPacket: swParse(t, axes, "W"), Config: &cfg}
		plan, err := DeriveSwitch(spec, req)
		require.NoError(t, err, "%s: %s over Slice %s Time %s", decl, cfg, slice, time)
		ok := t.Run(fmt.Sprintf("%d %s", iter, cfg.Variant()), func(t *testing.T) {
			switchOracle(t, req, plan, true)
			back := req
			back.Config, back.OutSlice, back.OutTime = nil, plan.OutSlice, plan.OutTime
			p2, err := DeriveSwitch(spec, back)
			require.NoError(t, err, "derive back from Slice %s Time %s", plan.OutSlice, plan.OutTime)
			assert.LessOrEqual(t, p2.Switch.RingSize, max(plan.Switch.RingSize, 1), "the derivation picks the smallest ring")
			switchOracle(t, back, p2, true)
		})
		if !ok {
			t.Logf("%s; Slice %s, Time %s; %s", decl, slice, time, cfg)
		}
	}
}

// TestSwitchCustomProperty: random custom topologies (slice digits
// permuted, some moved to Time in input order, broadcast tiles in their
// place) derive routes that agree with the mapping semantics, with a ring
// exactly as large as the live dependencies need (002 L3364-3365); reversing
// two moved digits breaks order preservation (SW-R4) and putting the input
// Time inside the moved digits breaks the innermost rule (SW-R5).
func TestSwitchCustomProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	names := []string{"P", "Q", "R", "S"}
	for iter := 0; iter < 150; iter++ {
		slices := 64
		if iter%8 == 0 {
			slices = 256
		}
		spec := swSpec(t, slices)
		sz := swRandomSplit(rng, slices, 4)
		xs := []int{1, 1, 1, 1}
		// Input Slice: the four axes in a random order.
		order := rng.Perm(4)
		var in []string
		for _, i := range order {
			in = append(in, names[i])
		}
		// Move a random subset to Time (in input order), replace them by
		// broadcast tiles, and shuffle what stays.
		var stay, moved []string
		tiles := 0
		for _, i := range order {
			if sz[i] > 1 && rng.Intn(3) == 0 {
				moved = append(moved, names[i])
				xs[tiles] = sz[i]
				tiles++
				stay = append(stay, fmt.Sprintf("X%d", tiles))
			} else {
				stay = append(stay, names[i])
			}
		}
		rng.Shuffle(len(stay), func(i, j int) { stay[i], stay[j] = stay[j], stay[i] })
		var decl []string
		for i, n := range names {
			decl = append(decl, fmt.Sprintf("%s=%d", n, sz[i]))
		}
		decl = append(decl, "T=3", "W=8")
		for i, x := range xs {
			decl = append(decl, fmt.Sprintf("X%d=%d", i+1, x))
		}
		axes, err := mapping.ParseAxes(strings.Join(decl, ", "))
		require.NoError(t, err)
		outT := strings.Join(append([]string{"T"}, moved...), ", ")
		req := SwitchRequest{Axes: axes, DType: dtype.I8, InSlice: swParse(t, axes, strings.Join(in, ", ")),
			InTime: swParse(t, axes, "T"), InPacket: swParse(t, axes, "W"),
			OutSlice: swParse(t, axes, strings.Join(stay, ", ")), OutTime: swParse(t, axes, outT)}
		plan, err := DeriveSwitch(spec, req)
		require.NoError(t, err, "Slice %v → %v, Time %s", in, stay, outT)
		t.Run(fmt.Sprintf("%d %v→%v/%s", iter, in, stay, outT), func(t *testing.T) {
			switchOracle(t, req, plan, true)
			// The ring is the smallest aligned block holding every source.
			need := 1
			for o, b := range plan.Switch.Route.Bitmaps {
				for _, s := range b.Slices() {
					for o/need != s/need {
						need *= 2
					}
				}
			}
			assert.Equal(t, need, plan.Switch.RingSize)
		})
		if len(moved) >= 2 {
			rev := append([]string{"T"}, moved...)
			rev[1], rev[2] = rev[2], rev[1]
			bad := req
			bad.OutTime = swParse(t, axes, strings.Join(rev, ", "))
			_, err := DeriveSwitch(spec, bad)
			var v *Violation
			require.True(t, errors.As(err, &v), "reversed %v: %v", rev, err)
			assert.Equal(t, "SW-R4", v.Rule.ID, err.Error())
		}
		if len(moved) >= 1 {
			inside := append(append([]string{}, moved[0], "T"), moved[1:]...)
			bad := req
			bad.OutTime = swParse(t, axes, strings.Join(inside, ", "))
			p, err := DeriveSwitch(spec, bad)
			if err == nil {
				// Broadcast01's time0 can place a moved axis outside the input
				// Time (002 L3481-3482, L3517-3519).
				assert.Equal(t, kernel.SwitchBroadcast01, p.Switch.Config.Topology, "%v", inside)
				switchOracle(t, bad, p, true)
				continue
			}
			var v *Violation
			require.True(t, errors.As(err, &v), "%v: %v", inside, err)
			assert.Equal(t, "SW-R5", v.Rule.ID, err.Error())
		}
	}
}

// TestSwitchDivisors checks the divisor helper against trial division.
func TestSwitchDivisors(t *testing.T) {
	for _, n := range []int{1, 2, 12, 64, 97, 360, 1 << 20, 65537 * 3} {
		var want []int
		for d := n; d >= 1; d-- {
			if n%d == 0 && d <= 100000 {
				want = append(want, d)
			}
		}
		assert.Equal(t, want, switchDivisors(n, 100000), "n=%d", n)
	}
}

func BenchmarkSwitchApply(b *testing.B) {
	axes, _ := mapping.ParseAxes("A=256, B=64, C=64")
	cfg := kernel.SwitchConfig{Topology: kernel.SwitchBroadcast01, Slice1: 2, Slice0: 2, Time0: 4}
	plan, err := DeriveSwitch(Default(), SwitchRequest{Axes: axes, DType: dtype.I8,
		InSlice: mapping.Sym("A", 256), InTime: mapping.Sym("B", 64), InPacket: mapping.Sym("C", 64), Config: &cfg})
	if err != nil {
		b.Fatal(err)
	}
	src, dst := switchBuffers(&plan.Switch)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		if err := SwitchApply(&plan.Switch, dst, src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeriveSwitchCustom(b *testing.B) {
	axes, _ := mapping.ParseAxes(swCustomAxes)
	p := func(s string) *mapping.Expr { return mapping.MustParse(s, axes, nil) }
	req := SwitchRequest{Axes: axes, DType: dtype.I8, InSlice: p("A, B"), InTime: p("C"), InPacket: p("D, E"),
		OutSlice: p("A / 2, X, B / 2, Y"), OutTime: p("C, A % 2, B % 2")}
	for b.Loop() {
		if _, err := DeriveSwitch(Default(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDeriveSwitch: DeriveSwitch never panics, and whatever it accepts is
// a configuration SwitchApply can run whose routes agree with the output
// mappings (checked on small streams).
func FuzzDeriveSwitch(f *testing.F) {
	for _, c := range swCases {
		if c.slices != 0 {
			continue
		}
		f.Add(c.axes, c.dtype, c.inSlice, c.inTime, c.inPkt, c.outS, c.outT, c.config, false)
	}
	f.Add("A=256, B=3, C=8", "i8", "A", "B", "C", "", "", "Broadcast01 { slice1: 4, slice0: 4, time0: 3 }", true)
	f.Fuzz(func(t *testing.T, axesSrc, dt, inS, inT, inP, outS, outT, cfgSrc string, dual bool) {
		axes, err := mapping.ParseAxes(axesSrc)
		if err != nil {
			return
		}
		d, err := dtype.Parse(dt)
		if err != nil {
			return
		}
		parse := func(src string) *mapping.Expr {
			if src == "" {
				return nil
			}
			e, err := mapping.Parse(src, axes, nil)
			if err != nil {
				return nil
			}
			return e
		}
		req := SwitchRequest{Axes: axes, DType: d, InSlice: parse(inS), InTime: parse(inT), InPacket: parse(inP),
			OutSlice: parse(outS), OutTime: parse(outT), DualChannel: dual}
		if cfgSrc != "" {
			cfg, err := kernel.ParseSwitchConfig(cfgSrc)
			if err != nil {
				return
			}
			req.Config = &cfg
		}
		for _, e := range []*mapping.Expr{req.InTime, req.OutTime} {
			if e != nil && e.Size() > 1<<12 {
				return // keep each input fast; sizes do not change the code paths
			}
		}
		plan, err := DeriveSwitch(Default(), req)
		if err != nil {
			return
		}
		sw := plan.Switch
		if sw.InTime*sw.Route.OutTime() > 1<<14 {
			return
		}
		sw.PacketBytes = 4
		src, dst := switchBuffers(&sw)
		if err := SwitchApply(&sw, dst, src); err != nil {
			t.Fatalf("derived switch does not run: %v (%s)", err, sw.Config)
		}
		if errs := runOracle(func(tb oracleTB) { switchOracle(tb, req, plan, false) }); len(errs) > 0 {
			t.Fatalf("%s: oracle: %v", sw.Config, errs)
		}
	})
}
