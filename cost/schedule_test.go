package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// alone is the time of op i of p priced on its own: a chain's pipeline time
// or a DMA command's estimate.
func alone(t *testing.T, p *kernel.Program, i int) float64 {
	t.Helper()
	r := evaluate(t, p)
	return r.Ops[i].Cost.Cycles
}

// TestScheduleRules checks the scheduler's composition rules (002
// L7042-7070) on synthetic kernels: for each, which op each op waits for.
// Where the first op is a chain, the time the ops waiting for it start at
// is the manual's: #cycles = Time::SIZE × ceil(Packet::SIZE / fetch_size)
// (002 L2060) — a main copy fetches 4096 bytes as one packet 32 bytes a
// read, 128 cycles (002 L1757-1758); a sub copy 128 packets of 32 bytes 8
// bytes a read, 512 cycles (002 L1758-1759); the starving chain 64 packets
// of 32 bf16 one 2-byte element a read (its elements are 128 bytes
// apart, 002 L1761), 2048 cycles.
func TestScheduleRules(t *testing.T) {
	const mainCopy, subCopy, starve = 128.0, 512.0, 2048.0
	for _, tc := range []struct {
		name string
		ops  []string
		// start[i] is the op whose end op i starts at, -1 for 0, or -2-j
		// for the start of op j.
		start []int
		// first is op 0's cycles by the manual when it is a chain; 0 for
		// a DMA command (priced by the HBM and DMN model).
		first float64
	}{
		{"different contexts overlap: DMA and main (002 L7068)",
			[]string{dmaOp("to_dm", "x", "x_dm"), copyChain("main", "y_dm", "z_dm")}, []int{-1, -2}, 0},
		{"main and sub overlap (002 L151-152, L7065)",
			[]string{copyChain("main", "x_dm", "z_dm"), copyChain("sub", "y_dm", "v_dm")}, []int{-1, -2}, mainCopy},
		{"RAW: a chain waits for the DMA writing its input (002 L7069)",
			[]string{dmaOp("to_dm", "x", "x_dm"), copyChain("main", "x_dm", "z_dm")}, []int{-1, 0}, 0},
		{"RAW across contexts: main reads what sub wrote (002 L152-153)",
			[]string{copyChain("sub", "x_dm", "z_dm"), copyChain("main", "z_dm", "v_dm")}, []int{-1, 0}, subCopy},
		{"WAR: a DMA may not overwrite what a chain reads (002 L7069)",
			[]string{copyChain("main", "x_dm", "z_dm"), dmaOp("to_dm", "y", "x_dm")}, []int{-1, 0}, mainCopy},
		{"WAW: writes to one tensor in order (002 L7069)",
			[]string{copyChain("main", "x_dm", "z_dm"), copyChain("sub", "y_dm", "z_dm")}, []int{-1, 0}, mainCopy},
		{"one op at a time in the main context (002 L7063, L7068)",
			[]string{copyChain("main", "x_dm", "z_dm"), copyChain("main", "y_dm", "v_dm")}, []int{-1, 0}, mainCopy},
		{"one op at a time in the sub context",
			[]string{copyChain("sub", "x_dm", "z_dm"), copyChain("sub", "y_dm", "v_dm")}, []int{-1, 0}, subCopy},
		{"program order: no op starts before an earlier one (002 L7044)",
			[]string{dmaOp("to_dm", "x", "x_dm"), copyChain("main", "x_dm", "z_dm"), copyChain("sub", "y_dm", "v_dm")},
			[]int{-1, 0, -2 - 1}, 0},
		{"bank starvation: the op serializes with DMA before it (002 L2909)",
			[]string{dmaOp("to_dm", "w", "w_dm"), starveChain("main", "y_dm", "t_dm")}, []int{-1, 0}, 0},
		{"bank starvation: DMA after the op waits for it (002 L2909)",
			[]string{starveChain("main", "y_dm", "t_dm"), dmaOp("to_dm", "w", "w_dm")}, []int{-1, 0}, starve},
		{"MEM-P4: main hammering bank 0 starves the sub op reading it: main + sub (002 L2927-2932)",
			[]string{starveChain("main", "y_dm", "t_dm"), copyChain("sub", "x_dm", "z_dm")},
			[]int{-1, 0}, starve},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testKernel(t, 4096, tc.ops...)
			r := evaluate(t, p)
			require.Len(t, r.Ops, len(tc.start))
			for i, want := range tc.start {
				o := r.Ops[i]
				switch {
				case want == -1:
					assert.Equal(t, 0.0, o.Start, "op %d starts at once", i)
				case want >= 0:
					assert.Equal(t, r.Ops[want].End, o.Start, "op %d starts when op %d ends", i, want)
					assert.Equal(t, want, o.Waits, "op %d waits for op %d", i, want)
				default:
					assert.Equal(t, r.Ops[-2-want].Start, o.Start, "op %d starts with op %d", i, -2-want)
				}
				assert.Equal(t, o.Cost.Cycles, o.End-o.Start, "op %d takes its own time", i)
			}
			if tc.first > 0 {
				assert.Equal(t, tc.first, r.Ops[0].End, "op 0's cycles")
			}
		})
	}
}

// TestBankStarvationFinding: the 64-access rule is a finding with its rule
// and citation, and forces DMA exclusion (002 L2898, L2909, L2938-2939).
func TestBankStarvationFinding(t *testing.T) {
	p := testKernel(t, 4096, starveChain("main", "y_dm", "t_dm"))
	r := evaluate(t, p)
	require.Len(t, r.Findings, 1)
	f := r.Findings[0]
	assert.Equal(t, 0, f.Op)
	assert.Equal(t, "MEM-R1", f.Rule.ID)
	assert.Equal(t, SerializeWithDMA, f.Effect)
	assert.Contains(t, f.Error(), "002 L2898")
	assert.True(t, r.Ops[0].Cost.SerializeWithDMA)
	// Every access of the 2048 reads one 2-byte element 128 bytes after the
	// previous (stride 64 elements): fetch_size 2, one read per cycle
	// (002 L2060): 2048 cycles, the starving pipeline's bottleneck.
	assert.Equal(t, 2048.0, r.Ops[0].Cost.Cycles)
	assert.Equal(t, EngineFetch, r.Ops[0].Cost.Bottleneck)
	assert.NoError(t, r.Err(), "starvation is scheduled around, not an invalid kernel")

	// The copy chain reads 32 consecutive bytes per access: 4 banks, never
	// the same twice in a row.
	q := testKernel(t, 4096, copyChain("main", "y_dm", "z_dm"))
	rq := evaluate(t, q)
	assert.Empty(t, rq.Findings)
	assert.Equal(t, 1, rq.Ops[0].Cost.BankRun)
	assert.False(t, rq.Ops[0].Cost.SerializeWithDMA)
}

// TestDMABatch: DMA commands issued together are priced together, each
// engine running its descriptors in order (002 L2404, L2565); a command
// issued later waits for its engine.
func TestDMABatch(t *testing.T) {
	spec := engines.Default()
	p := testKernel(t, 4096, dmaOp("to_dm", "x", "x_dm"), dmaOp("to_dm", "y", "y_dm"))
	r := evaluate(t, p)
	m, err := NewDMAModel(spec)
	require.NoError(t, err)
	e0, err := m.Estimate(p.Ops[0].DMA)
	require.NoError(t, err)
	e1, err := m.Estimate(p.Ops[1].DMA)
	require.NoError(t, err)
	both, err := m.EstimateDescriptors(append(append([]kernel.DMADescriptor(nil), p.Ops[0].DMA.Descriptors...), p.Ops[1].DMA.Descriptors...))
	require.NoError(t, err)
	assert.Equal(t, 0, r.Ops[0].Batch)
	assert.Equal(t, 0, r.Ops[1].Batch)
	assert.Equal(t, 0.0, r.Ops[1].Start)
	// Both on the DMA Engine of slice 0's DMN pair: one after the other.
	assert.Equal(t, e0.Cycles, r.Ops[0].End)
	assert.Equal(t, e0.EngineBound+e1.EngineBound, r.Ops[1].End)
	assert.Equal(t, both.Cycles, r.Ops[1].End, "the batch ends when the command pair priced together does")
	assert.Equal(t, r.Ops[1].End, r.Cycles)

	// A DMA after a chain it depends on starts a new batch.
	q := testKernel(t, 4096, dmaOp("to_dm", "x", "x_dm"), copyChain("main", "x_dm", "z_dm"), dmaOp("to_hbm", "z_dm", "out"))
	rq := evaluate(t, q)
	assert.Equal(t, 1, rq.Ops[2].Batch)
	assert.Equal(t, rq.Ops[1].End, rq.Ops[2].Start)
}

// TestDMABatchEnd: the last-issued command of a batch ends with the batch
// when it runs on every engine port the batch uses (each port runs it
// last), in exact and in bound pricing; a command on an engine of its own,
// or on the other port of the engine, does not cover the batch
// (docs/spec-decisions.md "DMA batch end").
func TestDMABatchEnd(t *testing.T) {
	spec := engines.Default()
	p := testKernel(t, 4096, dmaOp("to_dm", "x", "x_dm"), dmaOp("to_dm", "y", "y_dm"))
	both := append(append([]kernel.DMADescriptor(nil), p.Ops[0].DMA.Descriptors...), p.Ops[1].DMA.Descriptors...)
	dm, err := NewDMAModel(spec)
	require.NoError(t, err)
	n0 := len(p.Ops[0].DMA.Descriptors)
	require.True(t, dm.covers(both, n0), "both on slice 0's DMA Engine")
	other := append([]kernel.DMADescriptor(nil), both...)
	for x := n0; x < len(other); x++ {
		other[x].Dst.Dmn.DMN += dm.dmnsPerEng // the next DMN pair's engine
	}
	require.False(t, dm.covers(other, n0))
	port := append([]kernel.DMADescriptor(nil), both...)
	for x := n0; x < len(port); x++ {
		port[x].Dmn.DMN ^= 1 // the same engine's other DMN port (002 L2565)
	}
	require.Equal(t, dm.engineKey(&port[0]), dm.engineKey(&port[len(port)-1]))
	require.False(t, dm.covers(port, n0), "the ports run in parallel: covering the engine is not enough")

	bound, err := dm.DMABound(both)
	require.NoError(t, err)
	m, err := NewModel(spec)
	require.NoError(t, err)
	m.DMABound = true
	r, err := m.Evaluate(p)
	require.NoError(t, err)
	assert.Equal(t, bound, r.Ops[1].End, "bound pricing gives the batch's bound to the covering command")
	assert.Equal(t, bound, r.Cycles)
	assert.LessOrEqual(t, r.Ops[1].End, evaluate(t, p).Ops[1].End)
}

// TestDualChannel: Hello GEMV's main chain streams 64-byte flits, taking the
// sub context's channel (002 L2127, L2142, L3052).
func TestDualChannel(t *testing.T) {
	p := loadGolden(t, "hello-gemv")
	r := evaluate(t, p)
	main := r.Ops[3]
	require.Equal(t, kernel.CtxMain, main.Context)
	assert.True(t, main.Cost.Dual)
	sub := r.Ops[2]
	// The sub context is busy with its own op and the dual-channel one.
	assert.InDelta(t, (sub.End-sub.Start)+(main.End-main.Start), r.Contexts[ctxSub].Busy, 1e-9)
	// Dual channel fetch: 64 packets of two 32-byte reads, two per cycle
	// (002 L2138-2141): 64 cycles.
	assert.Equal(t, 64.0, main.Cost.Stages[0].Cycles)
}

// reschedule prices p, lets mutate change the op costs, and schedules
// again: for the scheduler rules no small lowered kernel triggers.
func reschedule(t *testing.T, p *kernel.Program, mutate func(c []OpCost)) *Report {
	t.Helper()
	m, err := NewModel(engines.Default())
	require.NoError(t, err)
	_, err = m.Evaluate(p)
	require.NoError(t, err)
	mutate(m.costs)
	m.report.reset(p.Name, false)
	require.NoError(t, m.schedule(p))
	require.NoError(t, m.finish(p))
	return m.report.Clone()
}

// TestSchedulerFindings: the rules of concurrent main and sub ops and of a
// custom switch topology's setup.
//
// The numbers are the manual's (the 64-access limit, 002 L2920; the fetch
// formula, 002 L2060), not read from the spec the code under test reads.
func TestSchedulerFindings(t *testing.T) {
	ops := []string{dmaOp("to_dm", "w", "w_dm"), copyChain("main", "x_dm", "z_dm"), copyChain("sub", "y_dm", "v_dm")}

	t.Run("MEM-R2: cumulative runs serialize main and sub (002 L2913-2926)", func(t *testing.T) {
		p := testKernel(t, 4096, ops...)
		// "the TOTAL across all concurrent main/sub/DMA commands to the
		// SAME bank must be less than 64" (002 L2920): 35 + 28 + 1 DMA
		// request = 64 starves.
		r := reschedule(t, p, func(c []OpCost) {
			c[1].BankRun, c[1].Bank = 35, 3
			c[2].BankRun, c[2].Bank = 28, 3
		})
		assert.Equal(t, r.Ops[1].End, r.Ops[2].Start)
		require.NotEmpty(t, r.Findings)
		assert.Equal(t, "MEM-R2", r.Findings[0].Rule.ID)
		// A main op that does not hammer the bank (run 1, no MEM-P4):
		// 1 + 62 + 1 = 64 in all starves, one access fewer (63) is safe
		// (002 L2920-2926).
		r = reschedule(t, p, func(c []OpCost) {
			c[1].BankRun, c[1].Bank = 1, 3
			c[2].BankRun, c[2].Bank = 62, 3
		})
		assert.Equal(t, r.Ops[1].End, r.Ops[2].Start)
		r = reschedule(t, p, func(c []OpCost) {
			c[1].BankRun, c[1].Bank = 1, 3
			c[2].BankRun, c[2].Bank = 61, 3
		})
		assert.Equal(t, 0.0, r.Ops[2].Start)
		assert.Empty(t, r.Findings)
	})
	t.Run("MEM-P4: main hammering a bank the sub op uses: main + sub (002 L2931)", func(t *testing.T) {
		p := testKernel(t, 4096, ops...)
		r := reschedule(t, p, func(c []OpCost) {
			c[1].BankRun, c[1].Bank = 2, 5
			c[2].BankRun, c[2].Banks = 1, 1<<5
		})
		assert.Equal(t, r.Ops[1].End, r.Ops[2].Start)
		require.Len(t, r.Findings, 1)
		assert.Equal(t, "MEM-P4", r.Findings[0].Rule.ID)
		assert.Equal(t, Penalty, r.Findings[0].Effect)
		// Different banks: max(main, sub) (002 L2931).
		r = reschedule(t, p, func(c []OpCost) {
			c[1].BankRun, c[1].Bank = 2, 5
			c[2].BankRun, c[2].Banks = 1, 1<<6
		})
		assert.Equal(t, 0.0, r.Ops[2].Start)
	})
	t.Run("SW-P1: a custom topology's setup waits for DMA and sub (002 L3533-3537)", func(t *testing.T) {
		p := testKernel(t, 4096, dmaOp("to_dm", "w", "w_dm"), copyChain("sub", "y_dm", "v_dm"), copyChain("main", "x_dm", "z_dm"))
		r := reschedule(t, p, func(c []OpCost) { c[2].PreemptDMAAndSub = true })
		assert.Equal(t, max(r.Ops[0].End, r.Ops[1].End), r.Ops[2].Start)
		r = reschedule(t, p, func(c []OpCost) {})
		assert.Equal(t, 0.0, r.Ops[2].Start)
	})
	t.Run("TRF-P2: TRF misses stall a concurrent TRF load (002 L4194-4199)", func(t *testing.T) {
		p := testKernel(t, 4096, copyChain("main", "x_dm", "z_dm"), copyChain("sub", "y_dm", "v_dm"))
		r := reschedule(t, p, func(c []OpCost) {
			c[0].TRFMissStalls = 40
			c[1].TRFLoad = true
		})
		// #cycles = Time::SIZE × ceil(Packet::SIZE / fetch_size) (002
		// L2060): the main op fetches its 2048 bf16 (4096 bytes) as one
		// packet, 32 bytes a read: 1 × 4096 / 32 = 128 cycles (002
		// L1757-1758); the sub op 128 packets of 16 bf16 (32 bytes), 8
		// bytes a read: 128 × 32 / 8 = 512 cycles (002 L1758-1759). The
		// sub op overlaps the main op from start to end: it loses all 40
		// stalls.
		assert.Equal(t, 0.0, r.Ops[0].Start)
		assert.Equal(t, 128.0, r.Ops[0].End)
		assert.Equal(t, 0.0, r.Ops[1].Start)
		assert.Equal(t, 512.0+40, r.Ops[1].End)
		require.Len(t, r.Findings, 1)
		assert.Equal(t, "TRF-P2", r.Findings[0].Rule.ID)
	})
}
