package cost

import (
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Content-keyed caches of the prices that walk an access stream (DMA
// requests, DM bank runs, TRF cache reads). A planner prices many candidate
// programs that share most of their commands; each walk is done once per
// distinct configuration, found again by a hash of its content and an exact
// comparison, so a stale or colliding entry can never be returned. Lookups
// do not allocate. The caches only make evaluation faster: results are the
// same with or without them. A DMA batch is keyed in its HBM translation
// class (translate.go): tile views of one move share an entry, which is
// exact because the HBM address map is GF(2)-linear.

// maxCacheEntries bounds each cache; a full cache is emptied.
const maxCacheEntries = 1 << 14

// hasher is 64-bit FNV-1a over machine words.
type hasher uint64

const (
	fnvOffset hasher = 14695981039346656037
	fnvPrime  hasher = 1099511628211
)

func (h *hasher) add(v int) { *h = (*h ^ hasher(uint64(v))) * fnvPrime }

// bankKey identifies a DM bank walk: a sequencer, its access and the
// tensor's base address.
type bankKey struct {
	elemBits, access int
	base             int64
	packetSize       int
	packetEntries    int
	seqBase          int
}

type bankEntry struct {
	key     bankKey
	entries []kernel.SeqEntry
	res     BankRunResult
	finding *Finding
}

func hashSeq(h *hasher, seq *kernel.SeqConfig) {
	h.add(len(seq.Entries))
	for _, e := range seq.Entries {
		h.add(e.Size)
		h.add(e.Stride)
	}
}

func sameSeqEntries(a, b []kernel.SeqEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Size != b[i].Size || a[i].Stride != b[i].Stride {
			return false
		}
	}
	return true
}

// bankRun returns the cached SeqBankRun of seq (with the 64-access stop)
// and its bank-starvation finding.
func (m *Model) bankRun(seq *kernel.SeqConfig, elemBits, access int, base int64) (BankRunResult, *Finding, error) {
	k := bankKey{elemBits: elemBits, access: access, base: base, packetSize: seq.PacketSize, packetEntries: seq.PacketEntries, seqBase: seq.Base}
	h := fnvOffset
	h.add(elemBits)
	h.add(access)
	h.add(int(base))
	h.add(seq.PacketSize)
	h.add(seq.PacketEntries)
	h.add(seq.Base)
	hashSeq(&h, seq)
	for _, e := range m.banks[uint64(h)] {
		if e.key == k && sameSeqEntries(e.entries, seq.Entries) {
			return e.res, e.finding, nil
		}
	}
	limit := m.spec.DM.BankStarvation.ConsecutiveAccessLimit.Value
	r, err := SeqBankRun(m.spec, seq, elemBits, access, base, limit)
	if err != nil {
		return r, nil, err
	}
	f := BankStarvation(m.spec, r.MaxRun, r.Bank)
	if m.NoCache {
		return r, f, nil
	}
	if len(m.banks) >= maxCacheEntries {
		clear(m.banks)
	}
	m.banks[uint64(h)] = append(m.banks[uint64(h)], bankEntry{key: k, entries: append([]kernel.SeqEntry(nil), seq.Entries...), res: r, finding: f})
	return r, f, nil
}

type trfEntry struct {
	regRead, base, rows int
	entries             []kernel.TRFEntry
	res                 TRFReadCost
}

// trfRead returns the cached TRFRead of c.
func (m *Model) trfRead(c *kernel.TRFSequencerConfig) (TRFReadCost, error) {
	h := fnvOffset
	h.add(c.RegReadSize)
	h.add(c.Base)
	h.add(c.Rows)
	h.add(len(c.Entries))
	for _, e := range c.Entries {
		h.add(e.Size)
		h.add(e.Stride)
	}
	for _, e := range m.trfs[uint64(h)] {
		if e.regRead == c.RegReadSize && e.base == c.Base && e.rows == c.Rows && sameTRFEntries(e.entries, c.Entries) {
			return e.res, nil
		}
	}
	r, err := TRFRead(m.spec, c)
	if err != nil || m.NoCache {
		return r, err
	}
	if len(m.trfs) >= maxCacheEntries {
		clear(m.trfs)
	}
	m.trfs[uint64(h)] = append(m.trfs[uint64(h)], trfEntry{regRead: c.RegReadSize, base: c.Base, rows: c.Rows,
		entries: append([]kernel.TRFEntry(nil), c.Entries...), res: r})
	return r, nil
}

func sameTRFEntries(a, b []kernel.TRFEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Size != b[i].Size || a[i].Stride != b[i].Stride {
			return false
		}
	}
	return true
}

// dmaEntry is a priced batch of DMA commands: the descriptors as priced
// (with the batch's Exec numbering), how many belong to each command, and
// the result.
type dmaEntry struct {
	bound  bool
	descs  []kernel.DMADescriptor
	counts []int
	res    dmaBatch
}

// dmaBatch is the price of DMA commands run together.
type dmaBatch struct {
	est DMAEstimate
	// ends are the cycles after the batch's start at which each command
	// finishes.
	ends []float64
	// findings are the HBM and DM alignment penalties of the batch.
	findings []Finding
}

func hashDescs(h *hasher, ds []kernel.DMADescriptor) {
	for i := range ds {
		d := &ds[i]
		h.add(d.Exec)
		h.add(d.SrcBase)
		h.add(d.DstBase)
		h.add(d.Stride0)
		h.add(d.ElemBits)
		for _, md := range [3]kernel.DMAMedia{d.Src, d.Dst, {Dmn: d.Dmn}} {
			h.add(len(md.Kind))
			h.add(md.Dmn.Chip)
			h.add(md.Dmn.Cluster)
			h.add(md.Dmn.DMN)
		}
		h.add(len(d.Entries))
		for _, e := range d.Entries {
			h.add(e.Size)
			h.add(e.SrcStride)
			h.add(e.DstStride)
			if x := e.Index; x != nil {
				h.add(x.Offset)
				h.add(x.Step)
				if x.Write {
					h.add(1)
				}
			}
		}
	}
}

func sameDesc(a, b *kernel.DMADescriptor) bool {
	if a.Dmn != b.Dmn || a.Exec != b.Exec || a.Src != b.Src || a.Dst != b.Dst || a.SrcBase != b.SrcBase ||
		a.DstBase != b.DstBase || a.Stride0 != b.Stride0 || a.ElemBits != b.ElemBits || len(a.Entries) != len(b.Entries) {
		return false
	}
	for i := range a.Entries {
		x, y := a.Entries[i], b.Entries[i]
		if x.Size != y.Size || x.SrcStride != y.SrcStride || x.DstStride != y.DstStride || (x.Index == nil) != (y.Index == nil) {
			return false
		}
		if x.Index != nil && (x.Index.Offset != y.Index.Offset || x.Index.Step != y.Index.Step || x.Index.Write != y.Index.Write) {
			return false
		}
	}
	return true
}

func (e *dmaEntry) matches(bound bool, ds []kernel.DMADescriptor, counts []int) bool {
	if e.bound != bound || len(e.descs) != len(ds) || len(e.counts) != len(counts) {
		return false
	}
	for i := range counts {
		if e.counts[i] != counts[i] {
			return false
		}
	}
	for i := range ds {
		if !sameDesc(&e.descs[i], &ds[i]) {
			return false
		}
	}
	return true
}

// symbols returns the cached axis names of e.
func (m *Model) symbols(e *mapping.Expr) []string {
	if s, ok := m.syms[e]; ok {
		return s
	}
	s := e.Symbols()
	if m.NoCache {
		return s
	}
	if len(m.syms) >= maxCacheEntries {
		clear(m.syms)
	}
	m.syms[e] = s
	return s
}

// trfLoadFindings returns the findings of TRFLoad that belong to the TRF
// load itself (the full tensor unit path, TRF-P1), cached by the fetch's
// contiguous run and size, which alone decide them; the fetch's own findings
// come with its stage.
func (m *Model) trfLoadFindings(fetch *kernel.FetchConfig, to *kernel.ToTRFConfig) ([]Finding, error) {
	key := [2]int{fetch.Seq.ContiguousRun(), fetch.Seq.Size()}
	if fs, ok := m.loads[key]; ok {
		return fs, nil
	}
	l, err := TRFLoad(m.spec, fetch, to)
	if err != nil {
		return nil, err
	}
	var fs []Finding
	for _, f := range l.Findings {
		if f.Violation != nil && f.Rule == ruleStoTRFPath {
			fs = append(fs, f)
		}
	}
	if !m.NoCache {
		if len(m.loads) >= maxCacheEntries {
			clear(m.loads)
		}
		m.loads[key] = fs
	}
	return fs, nil
}
