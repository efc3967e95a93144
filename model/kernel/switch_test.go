package kernel

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseSwitchConfig reads every SwitchConfig literal of the manual and
// prints it back in the manual's notation.
func TestParseSwitchConfig(t *testing.T) {
	for _, c := range []struct {
		cite, src string
		want      SwitchConfig
		text      string
	}{
		{"002 L395-399", "SwitchConfig::Broadcast01 { slice1: 256, slice0: 1, time0: 1, }",
			SwitchConfig{Topology: SwitchBroadcast01, Slice1: 256, Slice0: 1, Time0: 1},
			"SwitchConfig::Broadcast01 { slice1: 256, slice0: 1, time0: 1 }"},
		{"002 L3197-3201", "SwitchConfig::Broadcast01 {\n slice1: 2,\n slice0: 2,\n time0: 4\n }",
			SwitchConfig{Topology: SwitchBroadcast01, Slice1: 2, Slice0: 2, Time0: 4},
			"SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }"},
		{"002 L3248-3251", "SwitchConfig::Broadcast1 { slice1: 4, slice0: 8, }",
			SwitchConfig{Topology: SwitchBroadcast1, Slice1: 4, Slice0: 8},
			"SwitchConfig::Broadcast1 { slice1: 4, slice0: 8 }"},
		{"002 L3277-3280", "SwitchConfig::Transpose { slice1: 32, slice0: 2, }",
			SwitchConfig{Topology: SwitchTranspose, Slice1: 32, Slice0: 2},
			"SwitchConfig::Transpose { slice1: 32, slice0: 2 }"},
		{"002 L3321-3325", "SwitchConfig::InterTranspose { slice1: 2, slice0: 16, time0: 2, }",
			SwitchConfig{Topology: SwitchInterTranspose, Slice1: 2, Slice0: 16, Time0: 2},
			"SwitchConfig::InterTranspose { slice1: 2, slice0: 16, time0: 2 }"},
		{"002 L3377", "SwitchConfig::CustomBroadcast { ring_size: 256 }",
			SwitchConfig{Topology: SwitchCustomBroadcast, RingSize: 256},
			"SwitchConfig::CustomBroadcast { ring_size: 256 }"},
		{"002 L3412", "CustomBroadcast { ring_size: 32 }",
			SwitchConfig{Topology: SwitchCustomBroadcast, RingSize: 32},
			"SwitchConfig::CustomBroadcast { ring_size: 32 }"},
		{"002 L3455", "Custom { ring_size: 4 }",
			SwitchConfig{Topology: SwitchCustomBroadcast, RingSize: 4},
			"SwitchConfig::CustomBroadcast { ring_size: 4 }"},
		{"002 L3120-3122", "Forwarding", SwitchConfig{Topology: SwitchForwarding}, "SwitchConfig::Forwarding"},
		{"002 L3120-3122", " SwitchConfig::Forwarding {} ", SwitchConfig{Topology: SwitchForwarding}, "SwitchConfig::Forwarding"},
	} {
		got, err := ParseSwitchConfig(c.src)
		require.NoError(t, err, c.cite)
		assert.Equal(t, c.want, got, c.cite)
		assert.Equal(t, c.text, got.String(), c.cite)
		back, err := ParseSwitchConfig(got.Variant())
		require.NoError(t, err)
		assert.Equal(t, got, back)
	}
}

func TestParseSwitchConfigErrors(t *testing.T) {
	for _, c := range []struct {
		src string
		col int
		msg string
	}{
		{"", 1, "want a switch topology name"},
		{"Broadcast2 { slice1: 1 }", 1, `unknown switch topology "Broadcast2" (want Forwarding, Broadcast01, Broadcast1, Transpose, InterTranspose, CustomBroadcast)`},
		{"Broadcast01", 12, "Broadcast01 needs { slice1, slice0, time0 }"},
		{"Broadcast01 { slice1: 2, slice0: 2 }", 37, "Broadcast01 is missing field time0"},
		{"Transpose { slice1: 2, slice2: 2 }", 24, `unknown field "slice2" of Transpose (want slice1, slice0)`},
		{"Transpose { slice1: 2, slice1: 2 }", 24, `field "slice1" given twice`},
		{"Transpose { slice1 2 }", 20, "want ':' after slice1"},
		{"Transpose { slice1: -2 }", 21, "want a non-negative integer for slice1"},
		{"Transpose { slice1: 2 slice0: 1 }", 23, "want ',' or '}'"},
		{"Transpose { slice1: 2, slice0: 1 } x", 36, `unexpected "x" after the configuration`},
		{"Forwarding { ring_size: 2 }", 14, `unknown field "ring_size" of Forwarding (want no fields)`},
		{"Transpose ( slice1: 2 )", 11, `unexpected "(" after Transpose`},
		{"Transpose { slice1: 99999999999999999999, slice0: 1 }", 21, "slice1 value 99999999999999999999 is too large"},
		{"Transpose { slice1: 2, slice0: 1", 33, "want ',' or '}'"},
	} {
		_, err := ParseSwitchConfig(c.src)
		var se *SwitchConfigError
		require.True(t, errors.As(err, &se), "%q: %v", c.src, err)
		assert.Equal(t, c.col, se.Col, "%q: %v", c.src, err)
		assert.Equal(t, c.msg, se.Msg, c.src)
	}
}

func TestSwitchTopologyText(t *testing.T) {
	for _, top := range []SwitchTopology{SwitchForwarding, SwitchBroadcast01, SwitchBroadcast1, SwitchTranspose, SwitchInterTranspose, SwitchCustomBroadcast} {
		b, err := top.MarshalText()
		require.NoError(t, err)
		var back SwitchTopology
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, top, back)
	}
	_, err := SwitchTopology(0).MarshalText()
	assert.Error(t, err)
	assert.Equal(t, "SwitchTopology(9)", SwitchTopology(9).String())
	assert.Nil(t, SwitchTopology(9).Fields())
	var x SwitchTopology
	assert.Error(t, x.UnmarshalText([]byte("Ring")))
}

// TestSnoopBitmap checks the bitmap operations against the manual's
// multi-axis broadcast row bitmap[0] = {0, 1, 16, 17} (002 L3393, L3417-3419).
func TestSnoopBitmap(t *testing.T) {
	var b SnoopBitmap
	for _, s := range []int{17, 0, 16, 1, -1, 256} {
		b.Set(s)
	}
	assert.Equal(t, []int{0, 1, 16, 17}, b.Slices())
	assert.Equal(t, 4, b.Len())
	assert.Equal(t, "{0, 1, 16, 17}", b.String())
	for k, want := range []int{0, 1, 16, 17, -1} {
		assert.Equal(t, want, b.Select(k), "select %d", k)
	}
	assert.Equal(t, -1, b.Select(-1))
	assert.True(t, b.Has(16))
	assert.False(t, b.Has(2))
	assert.False(t, b.Has(300))

	var full SnoopBitmap
	for s := 0; s < SnoopSlices; s++ {
		full.Set(s)
	}
	assert.Equal(t, "{0..255}", full.String())
	assert.Equal(t, 200, full.Select(200))
	txt, err := full.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "0-255", string(txt))

	for _, bm := range []SnoopBitmap{b, full, {}} {
		txt, err := bm.MarshalText()
		require.NoError(t, err)
		var back SnoopBitmap
		require.NoError(t, back.UnmarshalText(txt))
		assert.Equal(t, bm, back)
	}
	txt, _ = b.MarshalText()
	assert.Equal(t, "0-1,16-17", string(txt))
	for _, bad := range []string{"x", "3-1", "0-256", "-1", "300"} {
		var back SnoopBitmap
		assert.Error(t, back.UnmarshalText([]byte(bad)), bad)
	}
}

// TestSwitchJSON round-trips a lowered switch through JSON.
func TestSwitchJSON(t *testing.T) {
	sw := Switch{Config: SwitchConfig{Topology: SwitchBroadcast01, Slice1: 2, Slice0: 2, Time0: 4},
		Slices: 4, Slice2: 1, Time1: 16, RingSize: 4, Rings: 1, InTime: 64, PacketBytes: 64, FlitBytes: 32, FlitsPerPacket: 2,
		Route: SwitchRoute{OuterTime: 16, OuterMoved: 2, InnerTime: 4, InnerMoved: 2, OuterTimeStride: 4,
			Bitmaps: make([]SnoopBitmap, 4)}}
	for o := range sw.Route.Bitmaps {
		for s := 0; s < 4; s++ {
			sw.Route.Bitmaps[o].Set(s)
		}
	}
	b, err := json.Marshal(&sw)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"config":{"topology":"Broadcast01","slice1":2,"slice0":2,"time0":4}`)
	assert.Contains(t, string(b), `"bitmaps":["0-3","0-3","0-3","0-3"]`)
	var back Switch
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, sw, back)
	assert.Equal(t, "SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 } (slice2 = 1, time1 = 16, ring_size = 4)", sw.String())
	assert.Equal(t, []BitmapRow{{0, 3, sw.Route.Bitmaps[0]}}, sw.Route.Rows())
	assert.Equal(t, "0-3: {0, 1, 2, 3}", sw.Route.Rows()[0].String())
	// Route.Source: output time (t1, s1, t0, s0) = (1, 1, 2, 1) → source
	// slice 1·2 + 1 = 3, input time 1·4 + 2 = 6.
	s, ti, ok := sw.Route.Source(0, ((1*2+1)*4+2)*2+1)
	assert.True(t, ok)
	assert.Equal(t, 3, s)
	assert.Equal(t, 6, ti)
}

func TestCollectString(t *testing.T) {
	c := Collect{InTime: 8, PacketBytes: 32, FlitBytes: 32, FlitElems: 32, Flits: 1}
	assert.Equal(t, "32 B packet → 1 flit × 32 B", c.String())
	assert.Equal(t, 8, c.OutTime())
}

// FuzzParseSwitchConfig: the parser never panics, errors carry a column
// inside the input (or just past it), and what it accepts prints back to
// an equal configuration.
func FuzzParseSwitchConfig(f *testing.F) {
	for _, s := range []string{"SwitchConfig::Broadcast01 { slice1: 256, slice0: 1, time0: 1 }", "Transpose { slice1: 32, slice0: 2, }",
		"CustomBroadcast { ring_size: 4 }", "Forwarding", "Custom {ring_size:1}", "Broadcast1 { slice1: 4 slice0: 8 }"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c, err := ParseSwitchConfig(src)
		if err != nil {
			var se *SwitchConfigError
			if !errors.As(err, &se) || se.Col < 1 || se.Col > len(src)+1 {
				t.Fatalf("%q: bad error %v", src, err)
			}
			return
		}
		back, err := ParseSwitchConfig(c.String())
		if err != nil || back != c {
			t.Fatalf("%q → %s → %v, %v", src, c, back, err)
		}
	})
}
