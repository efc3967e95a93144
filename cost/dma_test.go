package cost

import (
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// loop is one DMA loop as the manual writes it: `A=8:(2048, 256)`, strides
// in bytes (the examples move i8).
type loop struct{ n, src, dst int }

// desc builds a descriptor from the manual's read and write configurations.
func desc(exec kernel.DmnIndex, src, dst kernel.DMAMedia, srcBase, dstBase, stride0 int, loops ...loop) kernel.DMADescriptor {
	d := kernel.DMADescriptor{Dmn: exec, Src: src, Dst: dst, SrcBase: srcBase, DstBase: dstBase, Stride0: stride0, ElemBits: 8}
	for _, l := range loops {
		d.Entries = append(d.Entries, kernel.DMAEntry{Size: l.n, SrcStride: l.src, DstStride: l.dst})
	}
	return d
}

func hbm(chip int) kernel.DMAMedia {
	return kernel.DMAMedia{Kind: kernel.MediaHBM, Dmn: kernel.DmnIndex{Chip: chip}}
}
func dm(chip, cluster, dmn int) kernel.DMAMedia {
	return kernel.DMAMedia{Kind: kernel.MediaDM, Dmn: kernel.DmnIndex{Chip: chip, Cluster: cluster, DMN: dmn}}
}
func dmn(chip, cluster, d int) kernel.DmnIndex {
	return kernel.DmnIndex{Chip: chip, Cluster: cluster, DMN: d}
}

var spec = engines.Default()

// slice_stride = 4 MB (002 L2541); DMN_stride = 32 slices
// (docs/spec-decisions.md "DMA: DM addresses, slice_stride and DMN_stride").
var (
	ss  = spec.DMA.SliceStrideBytes.Value
	dms = spec.Cluster.SlicesPerDMN.Value * ss
)

// Example 1: [A=8:2048, B=8:256, C=256:1]:256 HBM@0 → [A=8:256, B=8:2048,
// C=256:1]:256 HBM@16384 (002 L2619-2621).
func example1() []kernel.DMADescriptor {
	return []kernel.DMADescriptor{desc(dmn(0, 0, 0), hbm(0), hbm(0), 0, 16384, 256,
		loop{8, 2048, 256}, loop{8, 256, 2048}, loop{256, 1, 1})}
}

// Example 2 (002 L2650-2652).
func example2(hbmBase int) []kernel.DMADescriptor {
	return []kernel.DMADescriptor{desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), hbmBase, 0, 256,
		loop{256, 65536, 256}, loop{4, 256, 65536}, loop{32, 1024, ss}, loop{2, 32768, dms}, loop{256, 1, 1})}
}

// Example 3 with B = b and packet C = c bytes: In { slice: A / 4, element:
// [A % 4, B, C] }, Out { slice: A / 4, element: [B, A % 4, C] } (002
// L2668-2674; the read B stride is C, docs/spec-decisions.md "DMA Example
// typos").
func example3(b, c int) []kernel.DMADescriptor {
	return []kernel.DMADescriptor{desc(dmn(0, 0, 0), dm(0, 0, 0), dm(0, 0, 0), 0, 4*b*c, c,
		loop{b, c, 4 * c}, loop{4, b * c, c}, loop{32, ss, ss}, loop{2, dms, dms}, loop{c, 1, 1})}
}

// Example 4: 8 DMNs (cluster i, dmn j) (002 L2698-2702); dmn_j's DM is
// DMN 2j (docs/spec-decisions.md "DMA: DM addresses ...").
func example4() []kernel.DMADescriptor {
	var ds []kernel.DMADescriptor
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			ds = append(ds, desc(dmn(0, i, j), hbm(0), dm(0, i, 2*j), i*(1024*1024)+j*(256*1024), 2*j*dms, 256,
				loop{256, 1024, 1024}, loop{4, 256, 256}, loop{32, 1 << 21, ss}, loop{2, 1 << 26, dms}, loop{256, 1, 1}))
		}
	}
	return ds
}

// Example 5 (002 L2731-2736).
func example5() []kernel.DMADescriptor {
	var ds []kernel.DMADescriptor
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			ds = append(ds, desc(dmn(0, i, j), hbm(0), dm(0, i, 2*j), i<<20+j<<18, 2*j*dms, 256,
				loop{8, 512, 256}, loop{32, 4096, ss}, loop{2, 131072, dms}, loop{256, 1, 1}))
		}
	}
	return ds
}

// Example 6: 4 chips, (chip i, cluster j, dmn k); DMN 3 runs two segments
// (002 L2775-2790; docs/spec-decisions.md "DMA Example 6").
func example6() []kernel.DMADescriptor {
	var ds []kernel.DMADescriptor
	for i := 0; i < 4; i++ {
		for j := 0; j < 2; j++ {
			for k := 0; k < 4; k++ {
				rd, wr := 2*k*dms, j*(15*32*256)+k*(4*256)
				if k < 3 {
					ds = append(ds, desc(dmn(i, j, k), dm(i, j, 2*k), hbm(i), rd, wr, 256,
						loop{2, 256, 256}, loop{32, ss, 15 * 256}, loop{2, dms, 512}, loop{256, 1, 1}))
					continue
				}
				d0 := desc(dmn(i, j, k), dm(i, j, 2*k), hbm(i), rd, wr, 256,
					loop{2, 256, 256}, loop{32, ss, 15 * 256}, loop{1, dms, 512}, loop{256, 1, 1})
				d1 := desc(dmn(i, j, k), dm(i, j, 2*k+1), hbm(i), rd+dms, wr+512, 256,
					loop{1, 256, 256}, loop{32, ss, 15 * 256}, loop{1, dms, 512}, loop{256, 1, 1})
				d1.Exec = 1
				ds = append(ds, d0, d1)
			}
		}
	}
	return ds
}

func newModel(t testing.TB) *DMAModel {
	m, err := NewDMAModel(spec)
	require.NoError(t, err)
	return m
}

// TestDMAManualExamples reproduces the performance breakdowns of the DMA
// chapter's Examples 1-6 (MOV-EX-40..45) from the stated sequencer
// configurations.
func TestDMAManualExamples(t *testing.T) {
	m := newModel(t)
	type want struct {
		cycles     float64 // the manual's total
		tol        float64 // absolute; the manual rounds to whole cycles
		requests   int     // per side, summed over the descriptors
		channels   int     // HBM channels used, 0 = not stated
		maxPerChan int     // HBM units of the busiest channel, 0 = not stated
	}
	cases := []struct {
		name, cite string
		ds         []kernel.DMADescriptor
		want       want
	}{
		{"MOV-EX-40 Example 1: 64 + 64 requests + 500", "002 L2608-2623",
			example1(), want{cycles: 128 + 500, tol: 0.5, requests: 64, channels: 32, maxPerChan: 4}},
		{"MOV-EX-41 Example 2: max(65536, 65536) + 500 ≈ 66036", "002 L2637-2658",
			example2(0), want{cycles: 66036, tol: 0.5, requests: 65536, channels: 32}},
		{"MOV-EX-42 Example 3: 131072 + 500 (DM to DM in one cluster is sequential)", "002 L2659-2680",
			example3(256, 256), want{cycles: 131072 + 500, tol: 0.5, requests: 65536}},
		// Example 5's 256 × 5.3 leaves tCCD out; the model adds the slice
		// switches the two HBM slices per channel force (0.6 %,
		// docs/spec-decisions.md "HBM tCCD").
		{"MOV-EX-44 Example 5: 256 requests per channel × 5.3 + 500 ≈ 1857", "002 L2717-2750",
			example5(), want{cycles: 1857, tol: 0.01 * 1857, requests: 4096, channels: 16, maxPerChan: 256}},
		// Example 4's "≈ 655860" charges 40 cycles to all 16384 requests of a
		// channel, "a conservative estimate" that FR-FCFS may beat (002
		// L2710, L2716); the model hides the 32 first activations of a
		// channel's banks and batches 32 requests with another of their
		// row in the same queue window (docs/spec-decisions.md "HBM row
		// switches"): 0.4 % less.
		{"MOV-EX-43 Example 4: 16384 per channel × 40 + 500 ≈ 655860", "002 L2682-2715",
			example4(), want{cycles: 655860, tol: 0.005 * 655860, requests: 524288, channels: 32, maxPerChan: 16384}},
		// Example 6: the slowest DMN, #3, decides: two commands, 1192 cycles.
		{"MOV-EX-45 Example 6: ≈ 1192 (DMN #3, two commands)", "002 L2797-2807",
			example6(), want{cycles: 1192, tol: 0.5, requests: 4 * 2 * (3*128 + 64 + 32)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			est, err := m.EstimateDescriptors(c.ds)
			require.NoError(t, err, c.cite)
			assert.InDelta(t, c.want.cycles, est.Cycles, c.want.tol, "%s: %+v", c.cite, est)
			assert.Equal(t, c.want.requests, est.Requests, c.cite)
			if c.want.channels != 0 {
				assert.Equal(t, c.want.channels, est.HBM.Channels, c.cite)
			}
			if c.want.maxPerChan != 0 {
				assert.Equal(t, c.want.maxPerChan, est.HBM.MaxUnits, c.cite)
			}
		})
	}
}

// TestDMAExampleBreakdowns checks the parts of the examples' performance
// analyses.
func TestDMAExampleBreakdowns(t *testing.T) {
	m := newModel(t)

	// Example 1: "64 read requests + 64 write requests", every request on a
	// different channel pair; HBM to HBM does not overlap (002 L2622-2623).
	est, err := m.EstimateDescriptors(example1())
	require.NoError(t, err)
	d := m.Descriptors()[0]
	assert.True(t, d.Sequential)
	assert.Equal(t, 64.0, d.ReadCycles)
	assert.Equal(t, 64.0, d.WriteCycles)
	assert.Equal(t, 0, est.HBM.RowSwitches)

	// Example 2: both sides at one request per cycle; the DMN_stride loop
	// alternates the two DMNs (002 L2657).
	_, err = m.EstimateDescriptors(example2(0))
	require.NoError(t, err)
	d = m.Descriptors()[0]
	assert.False(t, d.Sequential)
	assert.Equal(t, 65536.0, d.ReadCycles, "HBM reads (002 L2656)")
	assert.Equal(t, 65536.0, d.WriteCycles, "DM writes at one request per cycle (002 L2657)")

	// Example 4: 65536 requests per DMN, 524288 over 32 channels, 16384 per
	// channel, about 40 cycles each; DM writes are not the bottleneck
	// (002 L2706-2714).
	est, err = m.EstimateDescriptors(example4())
	require.NoError(t, err)
	for _, d := range m.Descriptors() {
		assert.Equal(t, 65536, d.Requests, "per DMN (002 L2707)")
		assert.Equal(t, 65536.0, d.WriteCycles, "DM writes at one request per cycle (002 L2714)")
	}
	assert.Equal(t, 8, est.Engines)
	assert.Equal(t, 524288, est.HBM.Units, "002 L2708")
	// Every access of a channel switches rows except each bank's first
	// activation (32 banks per channel) and 32 that find another request
	// to their row in their queue window (the reference simulation in
	// TestHBMStatsOracle counts the same); the switches, one after the
	// other at 40 cycles, bind.
	assert.Equal(t, 32*(16384-64), est.HBM.RowSwitches)
	assert.Equal(t, 32*32, est.HBM.FirstOpens)
	wantHBM := float64(16384-64) * float64(spec.HBM.BankConflictCyclesPerRequest.Value)
	assert.InDelta(t, 500+wantHBM, est.HBMBound-est.HBM.TCCDPenalty, 1e-6)
	assert.Greater(t, est.HBMBound, 9*est.EngineBound, "\"approximately 10x slower\" (002 L2683)")

	// Example 5: 512 requests per DMN over 16 channels; DM writes hidden
	// (002 L2741-2749).
	est, err = m.EstimateDescriptors(example5())
	require.NoError(t, err)
	for _, d := range m.Descriptors() {
		assert.Equal(t, 512, d.Requests, "002 L2741")
		assert.Equal(t, 512.0, d.WriteCycles, "002 L2748")
	}
	assert.Equal(t, 0, est.HBM.RowSwitches)
	// The manual leaves tCCD out ("rarely affects performance", 002 L2992);
	// the model charges the busiest channel one slice switch per queue
	// window (docs/spec-decisions.md "HBM tCCD").
	assert.InDelta(t, 1357, est.HBM.Busiest-est.HBM.TCCDPenalty, 0.5, "256 × 5.3 (002 L2745)")
	assert.Less(t, est.HBM.TCCDPenalty, 0.01*est.HBM.Busiest)

	// Example 6: DMNs #0-#2 move 2·32·2 packets each (002 L2799); DMN #3
	// reads one DMN only at 2 cycles per request: 128 + 500 and 64 + 500
	// (002 L2803-2806, docs/spec-decisions.md "DMA Example 6 performance").
	est, err = m.EstimateDescriptors(example6())
	require.NoError(t, err)
	for _, d := range m.Descriptors() {
		switch {
		case d.Dmn.DMN < 3:
			assert.Equal(t, 128, d.Requests, "002 L2799")
			assert.Equal(t, 128.0, d.ReadCycles)
			assert.Equal(t, 128.0, d.WriteCycles, "002 L2800")
			assert.Equal(t, 628.0, d.Cycles, "max(128, 128) + 500, not the stated 756")
		case d.Exec == 0:
			assert.Equal(t, 64, d.Requests)
			assert.Equal(t, 128.0, d.ReadCycles, "64 requests on one DMN")
			assert.Equal(t, 628.0, d.Cycles)
		default:
			assert.Equal(t, 32, d.Requests)
			assert.Equal(t, 564.0, d.Cycles)
		}
	}
	assert.Equal(t, 1192.0, est.EngineBound, "002 L2806-2807")
	assert.Equal(t, 32, est.Engines)
}

// TestDMARequestSplitting covers the 256-byte requests and their alignment
// effects.
func TestDMARequestSplitting(t *testing.T) {
	m := newModel(t)
	one := func(src, dst kernel.DMAMedia, srcBase, dstBase, n int) kernel.DMADescriptor {
		return desc(dmn(0, 0, 0), src, dst, srcBase, dstBase, n, loop{n, 1, 1})
	}

	t.Run("MOV-EX-35 a 4095-byte packet is 16 requests (002 L2470-2471)", func(t *testing.T) {
		est, err := m.EstimateDescriptors([]kernel.DMADescriptor{one(hbm(0), hbm(0), 0, 1<<20, 4095)})
		require.NoError(t, err)
		assert.Equal(t, 16, est.Requests)
	})
	t.Run("MOV-EX-35 4099 bytes one at a time vs two commands of 4096 and 3 (002 L2471-2472)", func(t *testing.T) {
		byte1 := desc(dmn(0, 0, 0), hbm(0), hbm(0), 0, 1<<20, 1, loop{4099, 1, 1})
		est1, err := m.EstimateDescriptors([]kernel.DMADescriptor{byte1})
		require.NoError(t, err)
		assert.Equal(t, 4099, est1.Requests, "a request per byte")
		a, b := one(hbm(0), hbm(0), 0, 1<<20, 4096), one(hbm(0), hbm(0), 4096, 1<<20+4096, 3)
		b.Exec = 1
		est2, err := m.EstimateDescriptors([]kernel.DMADescriptor{a, b})
		require.NoError(t, err)
		assert.Equal(t, 17, est2.Requests)
		assert.Equal(t, 2*est2.Startup+2*17, est2.Cycles, "each additional command adds ~500 cycles")
		assert.Less(t, est2.Cycles, est1.Cycles)
	})
	t.Run("packets of 1-255 bytes cost as much as 256; 256n+r costs n+1 times (002 L2681)", func(t *testing.T) {
		base, err := m.EstimateDescriptors(example3(128, 256))
		require.NoError(t, err)
		small, err := m.EstimateDescriptors(example3(128, 200))
		require.NoError(t, err)
		assert.Equal(t, base.Cycles, small.Cycles)
		big, err := m.EstimateDescriptors(example3(128, 264)) // 256·1 + 8
		require.NoError(t, err)
		assert.Equal(t, 2*(base.Cycles-base.Startup), big.Cycles-big.Startup)
	})
	t.Run("an unaligned HBM read takes two transfers, halving bandwidth (002 L2984)", func(t *testing.T) {
		est, err := m.EstimateDescriptors(example2(128))
		require.NoError(t, err)
		assert.Equal(t, 65536, est.HBM.UnalignedReads)
		assert.Equal(t, 2*65536.0, m.Descriptors()[0].ReadCycles)
		assert.Equal(t, 2*65536+500.0, est.Cycles)
	})
	t.Run("MOV-EX-50 a 2800-byte packet: ten 256-byte requests and one 240-byte RMW (002 L2985)", func(t *testing.T) {
		est, err := m.EstimateDescriptors([]kernel.DMADescriptor{one(dm(0, 0, 0), hbm(0), 0, 0, 2800)})
		require.NoError(t, err)
		assert.Equal(t, 11, est.Requests)
		assert.Equal(t, 11, est.HBM.Units)
		assert.Equal(t, 1, est.HBM.RMW)
		rmw := float64(spec.HBM.UnalignedWriteFactor.Value) * spec.HBM.CyclesPerRequest.Value
		assert.InDelta(t, rmw, est.HBM.Busiest, 1e-9, "the RMW unit's channel: ~50× a request")
		aligned, err := m.EstimateDescriptors([]kernel.DMADescriptor{one(dm(0, 0, 0), hbm(0), 0, 0, 2816)})
		require.NoError(t, err)
		assert.Equal(t, 0, aligned.HBM.RMW)
	})
	t.Run("a misaligned DM write triples its DMN time (002 L2414)", func(t *testing.T) {
		est, err := m.EstimateDescriptors([]kernel.DMADescriptor{
			desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 4, 256, loop{64, 256, 256}, loop{256, 1, 1})})
		require.NoError(t, err)
		assert.Equal(t, 64, est.MisalignedDMWrites)
		assert.Equal(t, 64*2*3.0, m.Descriptors()[0].WriteCycles, "one DMN, 2 cycles per request, tripled")
	})
	t.Run("a single DMN halves DM bandwidth (002 L2857, L2884)", func(t *testing.T) {
		est, err := m.EstimateDescriptors([]kernel.DMADescriptor{
			desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 256, loop{64, 256, 256}, loop{256, 1, 1})})
		require.NoError(t, err)
		assert.Equal(t, 128.0, m.Descriptors()[0].WriteCycles)
		assert.Equal(t, 628.0, est.Cycles)
	})
	t.Run("PCIe between chips: 30 B/cycle (002 L2596, L2605, L2845)", func(t *testing.T) {
		_, err := m.EstimateDescriptors([]kernel.DMADescriptor{
			desc(dmn(0, 0, 0), hbm(0), hbm(1), 0, 0, 256, loop{120, 256, 256}, loop{256, 1, 1})})
		require.NoError(t, err)
		d := m.Descriptors()[0]
		assert.Equal(t, float64(ceilDiv(120*256, 30)), d.PCIeCycles)
		assert.Equal(t, d.PCIeCycles, d.DataCycles, "the link is the slowest component")
		assert.False(t, d.Sequential)
	})
}

// TestHBMBandwidthSharing: "For DRAM ↔ DRAM operations, read bandwidth is
// 0.75 TB/s. If 4 DMA Engines perform DRAM ↔ DRAM operations, each gets
// ~0.1875 TB/s" (002 L2636), i.e. 0.75 TB/s / k. In the model each engine
// reads and writes HBM one after the other (Example 1's 64 + 64, 002 L2623),
// so one engine reads at most 128 GB/s and the channels bind only from six
// engines on; with eight, each gets the channels' read half over eight. The
// manual divides the rounded 0.75 TB/s; the channels give 32 × 256 B per 5.3
// cycles, 3 % more (docs/spec-decisions.md "HBM bandwidth sharing").
func TestHBMBandwidthSharing(t *testing.T) {
	m := newModel(t)
	const packets = 512 // 128 KB per side and engine, in banks of its own
	share := func(k int) float64 {
		var ds []kernel.DMADescriptor
		for e := 0; e < k; e++ {
			ds = append(ds, desc(dmn(0, e/4, 2*(e%4)), hbm(0), hbm(0), e<<18, e<<18+1<<17, 256,
				loop{packets, 256, 256}, loop{256, 1, 1}))
		}
		est, err := m.EstimateDescriptors(ds)
		require.NoError(t, err)
		require.Equal(t, 0, est.HBM.RowSwitches)
		return float64(packets*256) / ((est.Cycles - est.Startup) * spec.CycleTime()) / 1e12
	}
	read := spec.HBM.ReadTBPerS.Value
	assert.InDelta(t, 0.128, share(4), 1e-9, "4 engines: each engine's read + write, 256 B per 2 cycles")
	assert.InDelta(t, read/8, share(8), 0.035*read/8, "8 engines share the channels")
}

// TestHBMTCCD: requests of one channel issue one 64-byte command per
// controller cycle when consecutive commands go to other bank groups of one
// slice (tCCD 2 at 1.5 GHz, 002 L2999, L3002); a stream confined to one bank
// group runs at 1/2 (tCCD 4, 002 L3001), one alternating between two slices
// of one bank group each at 2/3 (tCCD 3, 002 L3000). The controller reorders
// its queue, so mixing bank groups restores the full rate
// (docs/spec-decisions.md "HBM tCCD").
func TestHBMTCCD(t *testing.T) {
	m := newModel(t)
	base := spec.HBM.CyclesPerRequest.Value
	// 64 × 4 reads of four addresses that differ only in two of the bits
	// 17-20 (bank, bank group, slice, none of them in the channel XOR), all
	// in row 0 of one channel, written to DM over both DMNs.
	run := func(b1, b2 int) HBMStats {
		est, err := m.EstimateDescriptors([]kernel.DMADescriptor{desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 256,
			loop{64, 0, 4 * 256}, loop{2, 1 << b1, 256}, loop{2, 1 << b2, dms}, loop{256, 1, 1})})
		require.NoError(t, err)
		require.Equal(t, 1, est.HBM.Channels)
		require.Equal(t, 0, est.HBM.RowSwitches)
		require.Equal(t, 256, est.HBM.Units)
		return est.HBM
	}
	twoGroups := run(17, 19) // bank bit 17, bank group bit 19
	assert.InDelta(t, 256*base, twoGroups.Busiest, 1e-9, "ideal")
	assert.Equal(t, 0.0, twoGroups.TCCDPenalty)
	sameGroup := run(17, 18) // four banks of one bank group
	assert.InDelta(t, (1+255*2)*base, sameGroup.Busiest, 1e-9, "relative performance 1/2")
	twoSlices := run(17, 20) // slice bit 20, one bank group in each
	assert.InDelta(t, (1+255*1.5)*base, twoSlices.Busiest, 1e-9, "relative performance 2/3")
}

// TestHBMDecoder checks the table decoder against spec.HBMLocate.
func TestHBMDecoder(t *testing.T) {
	d, err := newHBMDecoder(spec)
	require.NoError(t, err)
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		a := uint64(r.Int63n(spec.HBM.Bytes.Value))
		l := spec.HBMLocate(a)
		x := d.decode(a)
		require.Equal(t, l.Channel, d.channel(x), "%#x", a)
		require.Equal(t, int32(l.Row), d.row(x), "%#x", a)
		require.Equal(t, d.pack(l), x, "%#x", a)
	}
}

// refHBM is a reference simulation of the HBM side, independent of the fast
// model: recursive loops, maps and spec.HBMLocate.
type refHBM struct {
	units, switches, first, unaligned int
	perChan                           map[int]int
	// ideal is the busiest channel's cycles without tCCD: per queue window
	// of 64 accesses, the longest of its transfers, its row switches at
	// 40 cycles each and its busiest bank (docs/spec-decisions.md "HBM row
	// switches").
	ideal float64
}

func refSimulate(ds []kernel.DMADescriptor) refHBM {
	type bankKey struct{ chip, ch, sl, bg, bk int }
	ref := refHBM{perChan: map[int]int{}}
	// Each descriptor's unit accesses in order.
	type acc struct {
		chip int
		addr int
	}
	// The engines' ports (lanes), in order of first appearance.
	lanes := map[[4]int][][]acc{}
	var keys [][4]int
	for _, d := range ds {
		var list []acc
		var rec func(i, s, w int)
		pp := d.Stride0
		rec = func(i, s, w int) {
			// Loops down to the packet: the positions of one packet are
			// the innermost Stride0 bytes.
			size := 1
			for _, e := range d.Entries[i:] {
				size *= e.Size
			}
			if size == pp {
				for off := 0; off < pp; off += 256 {
					n := min(256, pp-off)
					for _, side := range []struct {
						m    kernel.DMAMedia
						a    int
						read bool
					}{{d.Src, s + off, true}, {d.Dst, w + off, false}} {
						if side.m.Kind != kernel.MediaHBM {
							continue
						}
						u0, u1 := side.a/256, (side.a+n-1)/256
						if side.read && u1 > u0 {
							ref.unaligned++
						}
						for u := u0; u <= u1; u++ {
							list = append(list, acc{side.m.Dmn.Chip, u * 256})
						}
					}
				}
				return
			}
			e := d.Entries[i]
			for k := 0; k < e.Size; k++ {
				rec(i+1, s+k*e.SrcStride, w+k*e.DstStride)
			}
		}
		rec(0, d.SrcBase, d.DstBase)
		x := d.Dmn
		if d.Src.Kind != kernel.MediaHBM {
			x = d.Src.Dmn
		} else if d.Dst.Kind != kernel.MediaHBM {
			x = d.Dst.Dmn
		}
		k := [4]int{x.Chip, x.Cluster, x.DMN / 2, d.Dmn.DMN % 2}
		if _, ok := lanes[k]; !ok {
			keys = append(keys, k)
		}
		lanes[k] = append(lanes[k], list)
	}
	// Lanes by engine (first appearance), then port.
	engineOf := map[[3]int]int{}
	for _, k := range keys {
		if _, ok := engineOf[[3]int{k[0], k[1], k[2]}]; !ok {
			engineOf[[3]int{k[0], k[1], k[2]}] = len(engineOf)
		}
	}
	sort.SliceStable(keys, func(a, b int) bool {
		ea, eb := engineOf[[3]int{keys[a][0], keys[a][1], keys[a][2]}], engineOf[[3]int{keys[b][0], keys[b][1], keys[b][2]}]
		if ea != eb {
			return ea < eb
		}
		return keys[a][3] < keys[b][3]
	})
	// Round-robin by request: the model alternates lanes per request, i.e.
	// per group of a request's accesses; for the streams tested here every
	// request has exactly one HBM access.
	streams := make([][]acc, len(keys))
	for i, k := range keys {
		for _, l := range lanes[k] {
			streams[i] = append(streams[i], l...)
		}
	}
	type access struct {
		bank bankKey
		row  int
	}
	queue := map[int][]access{} // per channel, in arrival order
	var chans []int
	for i := 0; ; i++ {
		any := false
		for _, s := range streams {
			if i >= len(s) {
				continue
			}
			any = true
			l := spec.HBMLocate(uint64(s[i].addr))
			ch := s[i].chip*32 + l.Channel
			ref.units++
			ref.perChan[ch]++
			if len(queue[ch]) == 0 {
				chans = append(chans, ch)
			}
			queue[ch] = append(queue[ch], access{bankKey{s[i].chip, l.Channel, l.Slice, l.BankGroup, l.Bank}, l.Row})
		}
		if !any {
			break
		}
	}
	// Each channel's windows of 64, FR-FCFS in each bank: the open row's
	// hits, then each other row once, in order of first arrival.
	base, conflict := spec.HBM.CyclesPerRequest.Value, float64(spec.HBM.BankConflictCyclesPerRequest.Value)
	open := map[bankKey]int{}
	for _, ch := range chans {
		q := queue[ch]
		t := 0.0
		for lo := 0; lo < len(q); lo += 64 {
			w := q[lo:min(lo+64, len(q))]
			var banks []bankKey
			rows := map[bankKey][]int{}
			count := map[bankKey]int{}
			for _, a := range w {
				if _, ok := rows[a.bank]; !ok {
					banks = append(banks, a.bank)
				}
				count[a.bank]++
				if !slices.Contains(rows[a.bank], a.row) {
					rows[a.bank] = append(rows[a.bank], a.row)
				}
			}
			switches, busiest := 0, 0.0
			for _, b := range banks {
				r, was := open[b]
				sw := 0
				for _, row := range rows[b] {
					switch {
					case was && row == r:
						continue
					case !was:
						ref.first++
						was, r = true, -1 // the first activation; later rows switch
					default:
						sw++
					}
					open[b] = row
				}
				switches += sw
				busiest = max(busiest, float64(count[b])*base+float64(sw)*(conflict-base))
			}
			ref.switches += switches
			t += max(float64(len(w))*base, float64(switches)*conflict, busiest)
		}
		ref.ideal = max(ref.ideal, t)
	}
	return ref
}

// TestHBMStatsOracle compares the model's HBM accounting with the reference
// simulation on the manual's examples and on random descriptors.
func TestHBMStatsOracle(t *testing.T) {
	m := newModel(t)
	check := func(t *testing.T, ds []kernel.DMADescriptor) {
		t.Helper()
		est, err := m.EstimateDescriptors(ds)
		require.NoError(t, err)
		ref := refSimulate(ds)
		assert.Equal(t, ref.units, est.HBM.Units)
		assert.Equal(t, ref.switches, est.HBM.RowSwitches)
		assert.Equal(t, ref.first, est.HBM.FirstOpens)
		assert.Equal(t, ref.unaligned, est.HBM.UnalignedReads)
		assert.Equal(t, len(ref.perChan), est.HBM.Channels)
		mx := 0
		for _, n := range ref.perChan {
			mx = max(mx, n)
		}
		assert.Equal(t, mx, est.HBM.MaxUnits)
		// The busiest channel with tCCD is at least the busiest without,
		// and without its own tCCD at most that.
		assert.GreaterOrEqual(t, est.HBM.Busiest, ref.ideal-1e-6)
		assert.LessOrEqual(t, est.HBM.Busiest-est.HBM.TCCDPenalty, ref.ideal+1e-6)
	}
	t.Run("Example 2", func(t *testing.T) { check(t, example2(0)) })
	t.Run("Example 4", func(t *testing.T) { check(t, example4()) })
	t.Run("Example 5", func(t *testing.T) { check(t, example5()) })
	t.Run("two ports of one engine", func(t *testing.T) { check(t, twoPorts(0, 1<<21)) })
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 40; i++ {
		// HBM to DM, packets of at most 256 bytes so that every request
		// has one HBM access, random power-of-two strides, on the two
		// ports of up to two engines.
		n := 1 + r.Intn(4)
		var ds []kernel.DMADescriptor
		for e := 0; e < n; e++ {
			pk := 8 << r.Intn(6) // 8..256
			loops := []loop{}
			for k := 0; k < 1+r.Intn(3); k++ {
				loops = append(loops, loop{1 + r.Intn(8), pk << r.Intn(20), pk * (1 << k)})
			}
			loops = append(loops, loop{pk, 1, 1})
			base := r.Intn(1<<30) &^ 7
			ds = append(ds, desc(dmn(0, 0, e), hbm(0), dm(0, 0, e), base, e*dms, pk, loops...))
		}
		check(t, ds)
	}
}

// TestDMAErrors: bad descriptors are errors with their location, never a
// panic or a silent default.
func TestDMAErrors(t *testing.T) {
	m := newModel(t)
	ok := example1()[0]
	cases := []struct {
		name string
		edit func(d *kernel.DMADescriptor)
		msg  string
	}{
		{"stride0 too large", func(d *kernel.DMADescriptor) { d.Stride0 = 8192 }, "stride0 8192"},
		{"packet not tiling", func(d *kernel.DMADescriptor) { d.Stride0 = 384 }, "does not tile"},
		{"packet not contiguous", func(d *kernel.DMADescriptor) { d.Entries[2].SrcStride = 2 }, "not contiguous"},
		{"zero loop", func(d *kernel.DMADescriptor) { d.Entries[0].Size = 0 }, "size 0"},
		{"bad media", func(d *kernel.DMADescriptor) { d.Src.Kind = "XYZ" }, "not HBM, DM or SPM"},
		{"chip", func(d *kernel.DMADescriptor) { d.Dst.Dmn.Chip = 9 }, "chip 9"},
		{"beyond HBM", func(d *kernel.DMADescriptor) { d.SrcBase = int(spec.HBM.Bytes.Value) - 100 }, "beyond"},
		{"elem bits", func(d *kernel.DMADescriptor) { d.ElemBits = 4 }, "loop positions"},
		{"DM outside slice", func(d *kernel.DMADescriptor) {
			d.Dst = dm(0, 0, 0)
			d.DstBase = spec.DM.BytesPerSlice.Value - 8
		}, "outside its"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := ok
			d.Entries = append([]kernel.DMAEntry(nil), ok.Entries...)
			c.edit(&d)
			_, err := m.EstimateDescriptors([]kernel.DMADescriptor{d})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
			assert.Contains(t, err.Error(), "DMN (0, 0, 0) #0")
		})
	}
	_, err := m.EstimateDescriptors(nil)
	assert.Error(t, err)
	_, err = m.Estimate(nil)
	assert.Error(t, err)
	_, err = NewDMAModel(nil)
	assert.Error(t, err)
	// The model is reusable after an error.
	est, err := m.EstimateDescriptors(example1())
	require.NoError(t, err)
	assert.Equal(t, 628.0, est.Cycles)
}

func TestDMAEstimateAllocs(t *testing.T) {
	m := newModel(t)
	ds := example6()
	_, err := m.EstimateDescriptors(ds)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := m.EstimateDescriptors(ds); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func BenchmarkDMAExample2(b *testing.B) { benchDMA(b, example2(0)) } // 65536 requests
func BenchmarkDMAExample6(b *testing.B) { benchDMA(b, example6()) }  // 40 descriptors, 3840 requests

// BenchmarkDMAExample4: 524288 requests, nearly every one a row switch: the
// FR-FCFS windows' longest row lists.
func BenchmarkDMAExample4(b *testing.B) { benchDMA(b, example4()) }

func benchDMA(b *testing.B, ds []kernel.DMADescriptor) {
	m := newModel(b)
	var req int
	b.ReportAllocs()
	for b.Loop() {
		est, err := m.EstimateDescriptors(ds)
		if err != nil {
			b.Fatal(err)
		}
		req = est.Requests
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(req), "ns/request")
}

// TestDMABound: the cheap bound never exceeds the estimate, and is tight
// where the engines bind.
func TestDMABound(t *testing.T) {
	m := newModel(t)
	for name, ds := range map[string][]kernel.DMADescriptor{
		"Example 1": example1(), "Example 2": example2(0), "Example 3": example3(256, 256), "Example 4": example4(),
		"Example 5": example5(), "Example 6": example6(), "unaligned": example2(128),
	} {
		est, err := m.EstimateDescriptors(ds)
		require.NoError(t, err)
		b, err := m.DMABound(ds)
		require.NoError(t, err)
		assert.LessOrEqual(t, b, est.Cycles+1e-9, name)
		switch name {
		case "Example 1", "Example 2", "Example 3":
			assert.Equal(t, est.Cycles, b, name)
		}
	}
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 50; i++ {
		pk := 8 << r.Intn(7)
		loops := []loop{}
		for k := 0; k < 1+r.Intn(3); k++ {
			loops = append(loops, loop{1 + r.Intn(8), pk << r.Intn(12), pk << k})
		}
		loops = append(loops, loop{pk, 1, 1})
		ds := []kernel.DMADescriptor{desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), r.Intn(1<<24)&^7, 0, pk, loops...)}
		est, err := m.EstimateDescriptors(ds)
		require.NoError(t, err)
		b, err := m.DMABound(ds)
		require.NoError(t, err)
		assert.LessOrEqual(t, b, est.Cycles+1e-9, "%+v", ds[0])
	}
	ds := example6()
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := m.DMABound(ds); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func BenchmarkDMABound(b *testing.B) {
	m := newModel(b)
	ds := example4()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.DMABound(ds); err != nil {
			b.Fatal(err)
		}
	}
}

// twoPorts returns two HBM to DM descriptors on the two ports of DMA Engine
// 0 (DMNs 0 and 1): each reads 128 KB from HBM at its base into the 32
// slices of its DMN, 4 KB a slice.
func twoPorts(base0, base1 int) []kernel.DMADescriptor {
	var ds []kernel.DMADescriptor
	for p, base := range []int{base0, base1} {
		ds = append(ds, desc(dmn(0, 0, p), hbm(0), dm(0, 0, p), base, p*dms, 4096,
			loop{32, 4096, ss}, loop{4096, 1, 1}))
	}
	return ds
}

// TestDMAEnginePorts: a DMA Engine serves a pair of DMNs (002 L2404, L2831)
// and runs the descriptors of its two DMNs in parallel, "potentially in
// parallel when resources permit" (002 L2565): interleaving both DMNs gives
// the engine its 256 B/cycle where one DMN gives 128 (002 L2553, L2603,
// L2884). One DMN's segments (Exec #0, #1) run in sequence, each paying
// its startup (002 L2796-2807), and the two ports share the engine's one
// request per cycle (002 L2596) (docs/spec-decisions.md "DMA Engine ports
// run in parallel").
func TestDMAEnginePorts(t *testing.T) {
	m := newModel(t)
	startup := float64(spec.DMA.StartupCycles.Value)
	segments := twoPorts(0, 1<<20)
	segments[1].Dmn, segments[1].Exec = segments[0].Dmn, 1
	hbmPorts := example1()
	second := example1()[0]
	second.Dmn, second.SrcBase, second.DstBase = dmn(0, 0, 1), 1<<20, 1<<20+16384
	hbmPorts = append(hbmPorts, second)
	cases := []struct {
		name, cite string
		ds         []kernel.DMADescriptor
		want       float64
	}{
		// Each descriptor writes 32 × 4 KB into one DMN at 128 B/cycle:
		// 500 + 1024 each, in parallel (one after the other: 3048).
		{"the two DMNs of an engine run in parallel", "002 L2565, L2603, L2884",
			twoPorts(0, 1<<20), startup + 32*4096/128},
		{"one DMN's segments run in sequence", "002 L2796-2807",
			segments, 2 * (startup + 32*4096/128)},
		// Example 1 twice, HBM to HBM, on DMNs 0 and 1: each port 128 +
		// 500 alone, but the engine moves one request a cycle: 256 + 500.
		{"the ports share the engine's request per cycle", "002 L2596, L2623",
			hbmPorts, startup + 2*128},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			est, err := m.EstimateDescriptors(c.ds)
			require.NoError(t, err, c.cite)
			assert.InDelta(t, c.want, est.Cycles, 1e-9, c.cite)
			assert.InDelta(t, c.want, est.EngineBound, 1e-9, "%s: engine-bound", c.cite)
			assert.Equal(t, 1, est.Engines)
			b, err := m.DMABound(c.ds)
			require.NoError(t, err)
			assert.InDelta(t, est.Cycles, b, 1e-9, "the bound is exact where the engine binds")
		})
	}
	// The ports in the descriptor prices.
	_, err := m.EstimateDescriptors(twoPorts(0, 1<<20))
	require.NoError(t, err)
	ps := m.Descriptors()
	assert.Equal(t, [2]int{0, 1}, [2]int{ps[0].Port, ps[1].Port})
	assert.Equal(t, ps[0].Engine, ps[1].Engine)
	assert.Equal(t, 32*4096/256.0, ps[0].Transfers, "a request a cycle")
}

// lanes16 returns 16 descriptors, one on each port of the 8 DMA Engines of
// chip 0, each moving 128 KB between HBM (contiguous, at lane × 128 KB: 2
// MB in all, one row of every bank, 002 L2961-2977) and the 32 slices of
// its DMN; read tells per lane whether it reads HBM (HBM to DM) or writes
// it (DM to HBM).
func lanes16(read func(lane int) bool) []kernel.DMADescriptor {
	var ds []kernel.DMADescriptor
	for l := 0; l < 16; l++ {
		c, d := l/8, l%8
		h, x := hbm(0), dm(0, c, d)
		src, dst, sb, db := h, x, l<<17, d*dms
		s1, d1 := 4096, ss
		if !read(l) {
			src, dst, sb, db, s1, d1 = x, h, d*dms, l<<17, ss, 4096
		}
		ds = append(ds, desc(dmn(0, c, d), src, dst, sb, db, 4096, loop{32, s1, d1}, loop{4096, 1, 1}))
	}
	return ds
}

// TestHBMReadWriteBandwidth: of the HBM's 1.5 TB/s, reads get 0.75 TB/s and
// writes 0.75 TB/s (002 L2602, L2636): a command that only reads is capped
// at half the channels' rate however well it spreads, one that reads and
// writes as much gets them all (docs/spec-decisions.md "HBM read and write
// bandwidth"). The manual's 0.75 is rounded: the channels' half is 16 ×
// 48 GB/s = 0.768 TB/s (002 L2980).
func TestHBMReadWriteBandwidth(t *testing.T) {
	m := newModel(t)
	base, startup := spec.HBM.CyclesPerRequest.Value, float64(spec.DMA.StartupCycles.Value)
	const units = 8 << 10 // 2 MB
	half := units * base * 2 / 32
	tbps := func(cycles float64) float64 { return units * 256 / (cycles * spec.CycleTime()) / 1e12 }
	cases := []struct {
		name       string
		read       func(int) bool
		reads, hbm float64 // ReadCycles, HBMBound - startup
		tbps       float64 // the whole transfer's, within 3.5 % (the rounding)
	}{
		{"reads only: 0.75 TB/s", func(int) bool { return true }, half, half, spec.HBM.ReadTBPerS.Value},
		{"writes only: 0.75 TB/s", func(int) bool { return false }, 0, half, spec.HBM.WriteTBPerS.Value},
		{"as much read as written: 1.5 TB/s", func(l int) bool { return l%2 == 0 }, half / 2, half / 2, spec.HBM.PeakTBPerS.Value},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			est, err := m.EstimateDescriptors(lanes16(c.read))
			require.NoError(t, err)
			require.Equal(t, units, est.HBM.Units)
			assert.InDelta(t, c.reads, est.HBM.ReadCycles, 1e-6)
			assert.InDelta(t, c.hbm, est.HBMBound-startup, 0.01*c.hbm)
			assert.GreaterOrEqual(t, est.HBMBound-startup, est.HBM.Busiest)
			assert.InDelta(t, c.tbps, tbps(est.HBMBound-startup), 0.035*c.tbps)
			b, err := m.DMABound(lanes16(c.read))
			require.NoError(t, err)
			assert.LessOrEqual(t, b, est.Cycles+1e-9)
			assert.GreaterOrEqual(t, b, startup+max(est.HBM.ReadCycles, est.HBM.WriteCycles)-1e-9, "the bound knows the caps")
		})
	}
}

// TestHBMRowSwitches: the controller serves each bank's open-row hits first
// and batches the requests to a row behind one activation within its
// 64-entry queue (FR-FCFS, 002 L2981, L2989), and hides a row switch behind
// other banks' transfers (002 L2989), so the 40 cycles of a switch (002
// L2710, "a conservative estimate", L2716) are paid only where switches
// crowd a channel (docs/spec-decisions.md "HBM row switches").
func TestHBMRowSwitches(t *testing.T) {
	m := newModel(t)
	base, conflict := spec.HBM.CyclesPerRequest.Value, float64(spec.HBM.BankConflictCyclesPerRequest.Value)
	t.Run("a sequential stream runs at the channels' rate", func(t *testing.T) {
		// 8 MB read in address order: each bank's 2 KB row holds 8 units
		// of its channel (002 L2958, L2974), and 8 MB opens 4 rows in each.
		est, err := m.EstimateDescriptors([]kernel.DMADescriptor{desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 4096,
			loop{32, 1 << 18, ss}, loop{64, 4096, 4096}, loop{4096, 1, 1})})
		require.NoError(t, err)
		require.Equal(t, 32, est.HBM.Channels)
		require.Equal(t, 1024, est.HBM.MaxUnits)
		assert.Equal(t, 32*32*3, est.HBM.RowSwitches, "3 switches in each of 32 banks of 32 channels")
		assert.InDelta(t, 1024*base, est.HBM.Busiest-est.HBM.TCCDPenalty, 1e-6, "every switch hidden")
	})
	t.Run("requests to two rows of one bank are batched", func(t *testing.T) {
		// Rows 0 and 17 of one bank (address bits 21 and 25 flip the
		// row, and cancel in the channel XOR, 002 L2977), alternating:
		// 128 requests, 2 windows, one switch each (the first
		// activation is free); arrival order would switch 127 times.
		est, err := m.EstimateDescriptors([]kernel.DMADescriptor{desc(dmn(0, 0, 0), hbm(0), dm(0, 0, 0), 0, 0, 256,
			loop{64, 0, 512}, loop{2, 1<<21 | 1<<25, 256}, loop{256, 1, 1})})
		require.NoError(t, err)
		require.Equal(t, 1, est.HBM.Channels)
		assert.Equal(t, 2, est.HBM.RowSwitches)
		assert.Equal(t, 1, est.HBM.FirstOpens)
		assert.InDelta(t, 2*(64*base+conflict-base), est.HBM.Busiest-est.HBM.TCCDPenalty, 1e-6,
			"the bank's transfers and its one switch per window")
	})
	t.Run("switches crowding a channel take 40 cycles each", func(t *testing.T) {
		// Example 4 (002 L2706-2715): see TestDMAExampleBreakdowns.
		est, err := m.EstimateDescriptors(example4())
		require.NoError(t, err)
		perChan := est.HBM.RowSwitches / est.HBM.Channels
		assert.InDelta(t, float64(perChan)*conflict, est.HBM.Busiest-est.HBM.TCCDPenalty, 1e-6)
	})
}
