package cost

import (
	"math/bits"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestDMBanks: "the address space distributes 128 consecutive bytes across
// all 16 banks (8 bytes per bank)" (002 L2874-2879).
func TestDMBanks(t *testing.T) {
	cases := []struct {
		addr int64
		n    int
		want uint32
	}{
		{0, 8, 1}, {8, 8, 1 << 1}, {120, 8, 1 << 15}, {128, 8, 1}, {4, 8, 0b11}, {0, 32, 0xf},
		{0, 128, 0xffff}, {64, 256, 0xffff}, {1 << 18, 1, 1},
	}
	for _, c := range cases {
		got, err := DMBanks(spec, c.addr, c.n)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%d bytes at %d", c.n, c.addr)
	}
	_, err := DMBanks(spec, -1, 8)
	assert.Error(t, err)
	_, err = DMBanks(spec, 0, 0)
	assert.Error(t, err)
}

// TestBankStarvation reproduces the 64-access rule's arithmetic and its
// scenarios (MOV-EX-47..49). The expected numbers are the manual's, not
// the spec's: the code under test reads the spec.
func TestBankStarvation(t *testing.T) {
	// MOV-EX-47: (TDMA_IO_BYTE / DMN_IO_BYTE) × Max_Consecutive_Access ×
	// DMN_SIZE < 4096 with TDMA_IO_BYTE = 256, DMN_IO_BYTE = 128, DMN_SIZE =
	// 32 yields Max_Consecutive_Access < 64 (002 L2907, L2938-2939): 63
	// accesses stall a DMA request 2 × 63 × 32 = 4032 cycles, within the
	// NoC's 4,096 (002 L2905, L2940); 64 reach it.
	assert.Equal(t, 4032, StarvationStall(spec, 63))
	assert.Equal(t, 4096, StarvationStall(spec, 64))
	assert.Nil(t, BankStarvation(spec, 63, 0))
	f := BankStarvation(spec, 64, 0)
	require.NotNil(t, f)
	assert.Equal(t, SerializeWithDMA, f.Effect, "scheduled as if it occupied DMA (002 L2909)")
	assert.Contains(t, f.Error(), "002 L2898")

	// MOV-EX-48: 30 + 20 + 1 = 51 is safe (002 L2921-2925). "If either main
	// or sub reaches 35+ accesses, the combined total exceeds 64" holds for
	// sub (30 + 35 + 1 = 66) but not main (35 + 20 + 1 = 56)
	// (docs/spec-decisions.md "Cumulative bank accesses example").
	total, f := CumulativeBankAccess(spec, 30, 20, 1)
	assert.Equal(t, 51, total)
	assert.Nil(t, f)
	total, f = CumulativeBankAccess(spec, 30, 35, 1)
	assert.Equal(t, 66, total)
	require.NotNil(t, f)
	assert.Equal(t, "MEM-R2", f.Rule.ID)
	total, f = CumulativeBankAccess(spec, 35, 20, 1)
	assert.Equal(t, 56, total)
	assert.Nil(t, f)

	// MOV-EX-49: a DMA request occupies bank 0 and 15 others (002 L2908,
	// L2929) while the main fetch keeps reading bank 0: 8-byte packets
	// 128 bytes apart.
	dma, err := DMBanks(spec, 0, spec.DMA.RequestBytes.Value)
	require.NoError(t, err)
	assert.Equal(t, uint32(0xffff), dma)
	fetch := configFetch(t, "M=64, W=8", dtype.I8, dtype.I8, "M, W # 128", "M", "W", kernel.CtxMain)
	r, f, err := FetchBanks(spec, fetch, 0)
	require.NoError(t, err)
	assert.Equal(t, 64, r.MaxRun)
	assert.Equal(t, 0, r.Bank)
	assert.NotZero(t, r.Banks&dma)
	require.NotNil(t, f)
	assert.Equal(t, "MEM-R1", f.Rule.ID)
	// Contiguous reads spread over the banks (002 L2880): no run.
	fetch = configFetch(t, "M=64, W=32", dtype.I8, dtype.I8, "M, W", "M", "W", kernel.CtxMain)
	r, f, err = FetchBanks(spec, fetch, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, r.MaxRun)
	assert.Equal(t, 64, r.Accesses)
	assert.Nil(t, f)
	// Broadcast re-reads one address (stride 0, 002 L1557).
	fetch = configFetch(t, "A=16, T=64", dtype.I8, dtype.I8, "A", "T", "A", kernel.CtxMain)
	r, f, err = FetchBanks(spec, fetch, 0)
	require.NoError(t, err)
	assert.Equal(t, 64, r.MaxRun)
	assert.NotNil(t, f)
}

// TestBankRun checks the run tracker against a direct count.
func TestBankRun(t *testing.T) {
	var r BankRun
	for _, m := range []uint32{0b011, 0b110, 0b100, 0b101, 0b001} {
		r.Observe(m)
	}
	run, bank := r.Max()
	assert.Equal(t, 3, run, "bank 2 in accesses 1-3")
	assert.Equal(t, 2, bank)
	assert.Equal(t, 5, r.Accesses())
}

// TestDMNSchedule reproduces the DMN interleaving table (MOV-EX-46,
// 002 L2885-2893): requests #0..#2n−1 alternate DMNs and the last ends in
// cycle 2n; on one DMN each 256-byte request takes 2 cycles (002 L2884), a
// 50 % bandwidth loss (002 L2857).
func TestDMNSchedule(t *testing.T) {
	for _, n := range []int{1, 2, 8, 100} {
		two, err := DMNSchedule(spec, 2*n, 256, 2)
		require.NoError(t, err)
		assert.Equal(t, 2*n+1, two, "2n = %d requests end in cycle %d", 2*n, 2*n)
		one, err := DMNSchedule(spec, 2*n, 256, 1)
		require.NoError(t, err)
		assert.Equal(t, 4*n, one)
	}
	_, err := DMNSchedule(spec, 1, 0, 2)
	assert.Error(t, err)
}

func BenchmarkFetchBanks(b *testing.B) {
	fetch := configFetch(b, "M=64, W=32", dtype.I8, dtype.I8, "M, W", "M", "W", kernel.CtxMain)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := FetchBanks(spec, fetch, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSeqBankRunOracle compares SeqBankRun with a direct computation from
// SeqConfig.Offset and DMBanks on random sequencers.
func TestSeqBankRunOracle(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 300; i++ {
		var seq kernel.SeqConfig
		for k := 0; k < 1+r.Intn(4); k++ {
			seq.Entries = append(seq.Entries, kernel.SeqEntry{Size: 1 + r.Intn(12), Stride: r.Intn(5) * (1 << r.Intn(8))})
		}
		inner := 1 << r.Intn(4)
		seq.Entries = append(seq.Entries, kernel.SeqEntry{Size: inner, Stride: 1})
		seq.PacketSize, seq.PacketEntries = inner, 1
		access := 1 << r.Intn(bits.Len(uint(inner)))
		bitsPer := []int{4, 8, 16, 32}[r.Intn(4)]
		base := int64(r.Intn(1024)) * 8
		got, err := SeqBankRun(spec, &seq, bitsPer, access, base, 0)
		require.NoError(t, err)
		var ref BankRun
		var union uint32
		max, bank := 0, 0
		runs := map[int]int{}
		for p := 0; p < seq.Size(); p += access {
			addr := base + int64(seq.Offset(p))*int64(bitsPer)/8
			m, err := DMBanks(spec, addr, (access*bitsPer+7)/8)
			require.NoError(t, err)
			union |= m
			ref.Observe(m)
			for b := 0; b < 16; b++ {
				if m&(1<<uint(b)) == 0 {
					runs[b] = 0
					continue
				}
				runs[b]++
				if runs[b] > max || runs[b] == max && b < bank {
					max, bank = runs[b], b
				}
			}
		}
		assert.Equal(t, seq.Size()/access, got.Accesses, "%v", seq)
		assert.Equal(t, max, got.MaxRun, "%v", seq)
		assert.Equal(t, bank, got.Bank, "%v", seq)
		assert.Equal(t, union, got.Banks, "%v", seq)
		// DMBanks' fast path against spec.DMBank unit by unit.
		a, n := int64(r.Intn(4096)), 1+r.Intn(140)
		want := uint32(0)
		for u := a / 8; u <= (a+int64(n)-1)/8; u++ {
			want |= 1 << uint(spec.DMBank(uint64(u*8)))
		}
		m, err := DMBanks(spec, a, n)
		require.NoError(t, err)
		assert.Equal(t, want, m, "%d bytes at %d", n, a)
	}
}
