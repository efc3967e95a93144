package kernel

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nchw is MOV-EX-5: [8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1 (002 L1375-1401).
var nchw = SeqConfig{Entries: []SeqEntry{{8, 1, "W"}, {8, 8, "H"}, {3, 64, "C"}, {4, 192, "N"}}, PacketSize: 1, PacketEntries: 0}

func TestSeqConfigString(t *testing.T) {
	assert.Equal(t, "[8:1, 8:8, 3:64, 4:192] : 1", nchw.String())
	assert.Equal(t, "[W -> 8:1, H -> 8:8, C -> 3:64, N -> 4:192] : 1", nchw.Labeled())
	// The masking example's base offset (002 L1908).
	c := SeqConfig{Entries: []SeqEntry{{32, 96, ""}, {3, 32, ""}, {32, 1, ""}}, PacketSize: 32, PacketEntries: 1, Base: -2}
	assert.Equal(t, "[32:96, 3:32, 32:1] : 32 @ -2", c.String())
	assert.Equal(t, "[] : 1", SeqConfig{PacketSize: 1}.String())
}

// TestSeqConfigOffset reproduces the manual's nested loop: addr = 1·w + 8·h +
// 64·c + 192·n with w outermost and n innermost (002 L1390-1401).
func TestSeqConfigOffset(t *testing.T) {
	p := 0
	it, err := nchw.Iter()
	require.NoError(t, err)
	for w := 0; w < 8; w++ {
		for h := 0; h < 8; h++ {
			for c := 0; c < 3; c++ {
				for n := 0; n < 4; n++ {
					want := 1*w + 8*h + 64*c + 192*n
					require.Equal(t, want, nchw.Offset(p), "position %d", p)
					require.True(t, it.Next())
					require.Equal(t, p, it.Pos())
					require.Equal(t, want, it.Addr(), "position %d", p)
					p++
				}
			}
		}
	}
	assert.False(t, it.Next())
	assert.False(t, it.Next())
	assert.Equal(t, 768, nchw.Size())
	assert.Equal(t, 768, nchw.Steps())
}

func TestSeqConfigContiguousRun(t *testing.T) {
	for _, c := range []struct {
		cite    string
		entries []SeqEntry
		want    int
	}{
		// MOV-EX-14 (002 L1769-1799): 384, 32, 8.
		{"002 L1769-1775", []SeqEntry{{4, 96, ""}, {3, 32, ""}, {4, 8, ""}, {8, 1, ""}}, 384},
		{"002 L1781-1787", []SeqEntry{{3, 32, ""}, {4, 96, ""}, {4, 8, ""}, {8, 1, ""}}, 32},
		{"002 L1793-1799", []SeqEntry{{4, 96, ""}, {4, 8, ""}, {3, 32, ""}, {8, 1, ""}}, 8},
		// MOV-EX-31 commit configs (002 L2255-2301): 64, 8, 8, 8 elements.
		{"002 L2255-2260", []SeqEntry{{4, 16, ""}, {2, 8, ""}, {8, 1, ""}}, 64},
		{"002 L2268-2273", []SeqEntry{{4, 8, ""}, {2, 32, ""}, {8, 1, ""}}, 8},
		{"002 L2294-2299", []SeqEntry{{2, 64, ""}, {4, 16, ""}, {8, 1, ""}}, 8},
		{"empty", nil, 1},
	} {
		cfg := SeqConfig{Entries: c.entries, PacketSize: 1}
		assert.Equal(t, c.want, cfg.ContiguousRun(), c.cite)
	}
}

func TestSeqIterErrors(t *testing.T) {
	_, err := (&SeqConfig{Entries: []SeqEntry{{0, 1, ""}}}).Iter()
	assert.Error(t, err)
	_, err = (&SeqConfig{Entries: make([]SeqEntry, MaxIterDepth+1)}).Iter()
	assert.Error(t, err)
	var it SeqIter
	assert.False(t, it.Next())
	// No entries: one position at the base.
	it, err = (&SeqConfig{Base: 5, PacketSize: 1}).Iter()
	require.NoError(t, err)
	assert.True(t, it.Next())
	assert.Equal(t, 5, it.Addr())
	assert.False(t, it.Next())
}

func TestSeqAllocationFree(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		it, _ := nchw.Iter()
		s := 0
		for it.Next() {
			s += it.Addr() + nchw.Offset(it.Pos())
		}
		_ = nchw.ContiguousRun()
	})
	assert.Zero(t, allocs)
}

func TestSeqJSON(t *testing.T) {
	b, err := json.Marshal(nchw)
	require.NoError(t, err)
	assert.JSONEq(t, `{"entries":[{"size":8,"stride":1,"term":"W"},{"size":8,"stride":8,"term":"H"},{"size":3,"stride":64,"term":"C"},{"size":4,"stride":192,"term":"N"}],"packet_size":1,"packet_entries":0}`, string(b))
	var back SeqConfig
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, nchw, back)
}

func BenchmarkSeqIter(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		it, _ := nchw.Iter()
		for it.Next() {
		}
	}
}
