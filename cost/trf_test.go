package cost

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

func trfSeq(read int, entries ...kernel.TRFEntry) *kernel.TRFSequencerConfig {
	return &kernel.TRFSequencerConfig{RegReadSize: read, Broadcast: 64 / read, Entries: entries, Rows: 8}
}

// TestTRFCache: the direct-mapped cache of 4 rows × 2 bank columns of 32
// bytes per Row (002 L4183-4189) and the priority of reads over SRAM-to-TRF
// writes (002 L4191-4199).
func TestTRFCache(t *testing.T) {
	cases := []struct {
		name, cite           string
		seq                  *kernel.TRFSequencerConfig
		hits, misses, stalls int
	}{
		// Broadcast weights: the first read misses, the rest hit and leave
		// the bank to StoTRF (002 L4191-4192).
		{"weights broadcast over time: one miss", "002 L4191-4192",
			trfSeq(32, kernel.TRFEntry{Size: 100, Stride: 0}), 99, 1, 1},
		// 64-byte reads of new data: every miss blocks both columns
		// (002 L4199).
		{"64-byte reads of new lines: a stall per miss", "002 L4196-4199",
			trfSeq(64, kernel.TRFEntry{Size: 16, Stride: 64}), 0, 32, 16},
		// 32-byte reads alternating bank columns: misses do not stall
		// (002 L4198).
		{"32-byte reads alternating columns: no stall", "002 L4198",
			trfSeq(32, kernel.TRFEntry{Size: 16, Stride: 32}), 0, 16, 1},
		// 32-byte reads in one column: each miss stalls (002 L4198).
		{"32-byte reads in one column: a stall per miss", "002 L4198",
			trfSeq(32, kernel.TRFEntry{Size: 16, Stride: 64}), 0, 16, 16},
		// A working set of 4 lines stays cached: the second pass hits.
		{"a 256-byte working set fits the cache", "002 L4186-4189",
			trfSeq(64, kernel.TRFEntry{Size: 4, Stride: 64}, kernel.TRFEntry{Size: 3, Stride: 0}), 16, 8, 4},
		// Lines 4 apart share an entry and evict each other.
		{"conflicting lines evict each other", "002 L4183",
			trfSeq(32, kernel.TRFEntry{Size: 2, Stride: 256}, kernel.TRFEntry{Size: 4, Stride: 0}), 0, 8, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TRFRead(spec, c.seq)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.seq.Steps(), got.Cycles)
			assert.Equal(t, c.hits, got.Hits, c.cite)
			assert.Equal(t, c.misses, got.Misses, c.cite)
			assert.Equal(t, c.stalls, got.StoTRFStalls, c.cite)
		})
	}
	_, err := TRFRead(spec, trfSeq(128))
	assert.Error(t, err)
	_, err = TRFRead(spec, trfSeq(32, kernel.TRFEntry{Size: 0, Stride: 1}))
	assert.Error(t, err)
}

// TestTRFCacheOracle compares the cache walk with a map-based reference on
// random sequencer configurations.
func TestTRFCacheOracle(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 200; i++ {
		read := 1 << r.Intn(7)
		var es []kernel.TRFEntry
		for k := 0; k < 1+r.Intn(3); k++ {
			es = append(es, kernel.TRFEntry{Size: 1 + r.Intn(6), Stride: read * r.Intn(6)})
		}
		seq := trfSeq(read, es...)
		got, err := TRFRead(spec, seq)
		require.NoError(t, err)
		cache := map[int]int{} // (line % 4, column) → line / 4
		hits, misses := 0, 0
		for s := 0; s < seq.Steps(); s++ {
			a := seq.Addr(s)
			for b := a / 32; b <= (a+read-1)/32; b++ {
				line, col := b/2, b%2
				k := line%4*2 + col
				if tag, ok := cache[k]; ok && tag == line/4 {
					hits++
				} else {
					cache[k] = line / 4
					misses++
				}
			}
		}
		assert.Equal(t, hits, got.Hits, "%+v", seq)
		assert.Equal(t, misses, got.Misses, "%+v", seq)
	}
}

// TestTRFLoad: a completely contiguous SRAM-to-TRF load is a short command;
// otherwise it takes the full tensor unit path with an unpriced setup
// (002 L4112-4114).
func TestTRFLoad(t *testing.T) {
	// Hello dot product's sub-context load: 2048 bf16, 8-byte reads
	// (002 L342-347, L1759), 128 flits into one Row.
	f := configFetch(t, "A=2048", dtype.BF16, dtype.BF16, "A", "1", "A", kernel.CtxSub)
	got, err := TRFLoad(spec, f, &kernel.ToTRFConfig{Address: kernel.TrfFull, Rows: 1, FlitsPerRow: 128})
	require.NoError(t, err)
	assert.True(t, got.Short)
	assert.Equal(t, 2048*2/8, got.Cycles)
	assert.Empty(t, got.Findings)
	// MOV-EX-6's rearranging read is not contiguous.
	f = configFetch(t, "A=8, B=8, C=8", dtype.I8, dtype.I8, "A, B, C # 32", "B, A", "C # 16", kernel.CtxSub)
	got, err = TRFLoad(spec, f, &kernel.ToTRFConfig{Address: kernel.TrfFull, Rows: 8, FlitsPerRow: 8})
	require.NoError(t, err)
	assert.False(t, got.Short)
	require.Len(t, got.Findings, 1)
	assert.Equal(t, "TRF-P1", got.Findings[0].Rule.ID)
	assert.Equal(t, Unpriced, got.Findings[0].Effect)
	_, err = TRFLoad(spec, f, nil)
	assert.Error(t, err)
}

func BenchmarkTRFRead(b *testing.B) {
	// AL-EX-1's weight path: reg_read_size 32, O inner (stride 1024), M outer
	// (stride 32) (002 L3854, L3863-3864).
	seq := trfSeq(32, kernel.TRFEntry{Size: 2, Stride: 1024}, kernel.TRFEntry{Size: 32, Stride: 32})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TRFRead(spec, seq); err != nil {
			b.Fatal(err)
		}
	}
}
