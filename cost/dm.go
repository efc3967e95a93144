package cost

import (
	"errors"
	"fmt"
	"math/bits"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// DM (data memory) effects: which banks an access touches, runs of
// consecutive same-bank accesses and the bank-starvation hazard they raise,
// and the DMN interleaving of DMA requests (002 L2862-2941).

// maxBanks bounds the banks of a slice this package can track in a mask.
const maxBanks = 32

// DMBanks returns the set of DM banks, bit b for bank b, that an n-byte
// access at slice address addr touches. Consecutive 8-byte units fall in
// consecutive banks (address bits 3–6, 002 L2874-2879), so an access of 128
// bytes or more touches all 16 (MEM-D1).
func DMBanks(spec *engines.Spec, addr int64, n int) (uint32, error) {
	if spec == nil {
		return 0, errors.New("cost: DMBanks: nil spec")
	}
	if addr < 0 || n <= 0 {
		return 0, fmt.Errorf("cost: DMBanks: access of %d bytes at address %d", n, addr)
	}
	banks, width := spec.DM.Banks.Value, spec.DM.BankWidthBytes.Value
	if banks > maxBanks {
		return 0, fmt.Errorf("cost: DMBanks: %d banks per slice, at most %d supported", banks, maxBanks)
	}
	return dmBanks(spec, addr, n, banks, width), nil
}

func dmBanks(spec *engines.Spec, addr int64, n, banks, width int) uint32 {
	first, last := addr/int64(width), (addr+int64(n)-1)/int64(width)
	if last-first+1 >= int64(banks) {
		return 1<<uint(banks) - 1
	}
	if b := spec.DM.AddressBits.Bank.Value; len(b) > 0 && 1<<uint(b[0]) == width && b[len(b)-1]-b[0] == len(b)-1 {
		// Bank bits directly above the byte bits (002 L2877-2878): the
		// units' banks are consecutive modulo the bank count.
		k := uint(first % int64(banks))
		run := uint32(1)<<uint(last-first+1) - 1
		all := uint32(1)<<uint(banks) - 1
		return (run<<k | run>>(uint(banks)-k)) & all
	}
	var m uint32
	for u := first; u <= last; u++ {
		m |= 1 << uint(spec.DMBank(uint64(u*int64(width))))
	}
	return m
}

// BankRun tracks, over a stream of DM accesses in issue order, the longest run
// of consecutive accesses that all touch one bank (MEM-D2). The zero value is
// ready; it does not allocate.
type BankRun struct {
	run      [maxBanks]int32
	active   uint32 // banks with a run in progress
	max      int
	bank     int
	accesses int
}

// Observe adds the next access, given the banks it touches (a mask as
// DMBanks returns).
func (r *BankRun) Observe(mask uint32) {
	r.accesses++
	for ended := r.active &^ mask; ended != 0; ended &= ended - 1 {
		r.run[bits.TrailingZeros32(ended)] = 0
	}
	r.active = mask
	for m := mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros32(m)
		r.run[b]++
		if v := int(r.run[b]); v > r.max || v == r.max && b < r.bank {
			r.max, r.bank = v, b
		}
	}
}

// Max returns the longest same-bank run so far and the bank it is on (the
// lowest-numbered bank among equals); 0 and 0 before any access.
func (r *BankRun) Max() (run, bank int) { return r.max, r.bank }

// Accesses returns the number of accesses observed.
func (r *BankRun) Accesses() int { return r.accesses }

// BankRunResult is the bank behaviour of one fetch or commit sequencer.
type BankRunResult struct {
	// Accesses is the number of DM accesses the sequencer issues per slice.
	Accesses int
	// MaxRun is the longest run of consecutive accesses touching one bank,
	// Bank that bank.
	MaxRun, Bank int
	// Banks is the set of banks any access touches.
	Banks uint32
}

// SeqBankRun walks the DM accesses of a fetch or commit sequencer in issue
// order and measures their longest same-bank run. Each access reads or writes
// accessElems consecutive stream positions (fetch_size or commit_size in
// elements, 002 L1761, L2243) of elemBits-bit elements; base is the tensor's
// byte address in the slice, to which the sequencer's element offsets are
// added. The walk stops early once a run reaches stopAt (> 0), which is
// enough to report the starvation hazard; stopAt ≤ 0 walks every access. It
// does not allocate.
func SeqBankRun(spec *engines.Spec, seq *kernel.SeqConfig, elemBits, accessElems int, base int64, stopAt int) (BankRunResult, error) {
	var res BankRunResult
	if spec == nil || seq == nil {
		return res, errors.New("cost: SeqBankRun: nil spec or sequencer")
	}
	if elemBits <= 0 || accessElems <= 0 || base < 0 {
		return res, fmt.Errorf("cost: SeqBankRun: element bits %d, access of %d elements, base %d", elemBits, accessElems, base)
	}
	banks, width := spec.DM.Banks.Value, spec.DM.BankWidthBytes.Value
	if banks > maxBanks {
		return res, fmt.Errorf("cost: SeqBankRun: %d banks per slice, at most %d supported", banks, maxBanks)
	}
	nbytes := (accessElems*elemBits + 7) / 8
	var w accessWalker
	if err := w.init(seq, accessElems); err != nil {
		return res, fmt.Errorf("cost: SeqBankRun: %w", err)
	}
	var run BankRun
	for k := 0; k < w.count; k++ {
		off := int64(w.off) * int64(elemBits)
		if off < 0 {
			// Padding before the tensor (`@ base_addr = -2`, 002 L1908)
			// reads below the base: round toward the lower byte.
			off -= 7
		}
		addr := base + off/8
		if addr < 0 {
			return res, fmt.Errorf("cost: SeqBankRun: access %d at byte %d lies below the slice's address 0", k, addr)
		}
		m := dmBanks(spec, addr, nbytes, banks, width)
		res.Banks |= m
		run.Observe(m)
		if stopAt > 0 && run.max >= stopAt {
			break
		}
		w.next()
	}
	res.Accesses = run.accesses
	res.MaxRun, res.Bank = run.Max()
	return res, nil
}

// StarvationStall returns the cycles a DMA request can wait behind a run of
// the given length of higher-priority accesses to its bank: (TDMA_IO_BYTE /
// DMN_IO_BYTE) × run × DMN_SIZE (002 L2907, L2938-2939). The NoC times out at
// dm.bank_starvation.noc_timeout_cycles.
func StarvationStall(spec *engines.Spec, run int) int {
	b := &spec.DM.BankStarvation
	return b.TDMAIOBytes.Value / b.DMNIOBytes.Value * run * b.DMNSize.Value
}

// BankStarvation returns the hazard of a single command whose longest
// same-bank run is run accesses on bank, or nil when the run is below the
// 64-access limit (002 L2898, L2906, L2938-2939; a run of 64 is a violation,
// docs/spec-decisions.md "Bank starvation threshold"). The command must then
// not run concurrently with DMA (002 L2909).
func BankStarvation(spec *engines.Spec, run, bank int) *Finding {
	limit := spec.DM.BankStarvation.ConsecutiveAccessLimit.Value
	if run < limit {
		return nil
	}
	v := ruleBankRun.Violate("%d consecutive accesses to DM bank %d, limit %d: a DMA request could wait %d cycles (NoC timeout %d)",
		run, bank, limit-1, StarvationStall(spec, run), spec.DM.BankStarvation.NoCTimeoutCycles.Value).
		With("run", run).With("bank", bank).With("limit", limit)
	return &Finding{Violation: v, Effect: SerializeWithDMA}
}

// CumulativeBankAccess adds the consecutive same-bank accesses of concurrent
// commands (main and sub fetch or commit, and DMA) to one bank, and returns
// the total with the MEM-R2 hazard when it reaches the 64-access limit
// (002 L2913-2926): the commands must then not run concurrently.
func CumulativeBankAccess(spec *engines.Spec, runs ...int) (int, *Finding) {
	total := 0
	for _, r := range runs {
		total += r
	}
	limit := spec.DM.BankStarvation.ConsecutiveAccessLimit.Value
	if total < limit {
		return total, nil
	}
	v := ruleBankCumulative.Violate("concurrent commands make %d consecutive accesses to one DM bank (%v), limit %d", total, runs, limit-1).
		With("total", total).With("limit", limit)
	return total, &Finding{Violation: v, Effect: SerializeWithDMA}
}

// DMNSchedule returns the cycles n DMA requests of reqBytes bytes take when
// they are issued in order, at most one per cycle, request i going to DMN
// i mod dmns, and each DMN moves dm.dmn_bytes_per_cycle (128 B, 002 L2884).
// With two DMNs, 2n 256-byte requests end in cycle 2n, i.e. take 2n + 1
// cycles (the pipeline table of 002 L2885-2893); with one DMN they take
// 2 cycles each (002 L2657, L2884).
func DMNSchedule(spec *engines.Spec, n, reqBytes, dmns int) (int, error) {
	if spec == nil {
		return 0, errors.New("cost: DMNSchedule: nil spec")
	}
	if n < 0 || reqBytes <= 0 || dmns <= 0 || dmns > 64 {
		return 0, fmt.Errorf("cost: DMNSchedule: %d requests of %d bytes over %d DMNs", n, reqBytes, dmns)
	}
	per := ceilDiv(reqBytes, spec.DM.DMNBytesPerCycle.Value)
	var free [64]int // cycle at which each DMN is next free
	issue, end := 0, 0
	for i := 0; i < n; i++ {
		d := i % dmns
		start := max(issue, free[d])
		free[d] = start + per
		end = max(end, free[d])
		issue = start + 1
	}
	return end, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// accessWalker iterates the first positions of a sequencer's accesses of a
// fixed number of positions: the loops above the access as an odometer,
// offsets updated incrementally, without allocating.
type accessWalker struct {
	n      int
	size   [kernel.MaxIterDepth]int
	stride [kernel.MaxIterDepth]int
	idx    [kernel.MaxIterDepth]int
	off    int // element offset of the current access
	count  int // accesses
}

func (w *accessWalker) init(seq *kernel.SeqConfig, access int) error {
	*w = accessWalker{off: seq.Base}
	n := len(seq.Entries)
	if n > kernel.MaxIterDepth {
		return fmt.Errorf("%d sequencer entries, at most %d", n, kernel.MaxIterDepth)
	}
	for i, e := range seq.Entries {
		if e.Size <= 0 {
			return fmt.Errorf("sequencer entry %d has size %d", i, e.Size)
		}
		w.size[i], w.stride[i] = e.Size, e.Stride
	}
	for rem := access; rem > 1; {
		if n == 0 {
			return fmt.Errorf("accesses of %d positions exceed the sequencer's %d", access, seq.Size())
		}
		i := n - 1
		switch {
		case rem%w.size[i] == 0:
			rem /= w.size[i]
			n--
		case w.size[i]%rem == 0:
			w.size[i] /= rem
			w.stride[i] *= rem
			rem = 1
		default:
			return fmt.Errorf("accesses of %d positions do not tile sequencer entry %d of size %d", access, i, w.size[i])
		}
	}
	w.n = n
	w.count = 1
	for i := 0; i < n; i++ {
		w.count *= w.size[i]
	}
	return nil
}

func (w *accessWalker) next() {
	for i := w.n - 1; i >= 0; i-- {
		w.idx[i]++
		w.off += w.stride[i]
		if w.idx[i] < w.size[i] {
			return
		}
		w.off -= w.size[i] * w.stride[i]
		w.idx[i] = 0
	}
}
