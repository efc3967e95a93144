package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TRF cost: the TRF Sequencer's reads through the TRF cache, the priority of
// those reads over concurrent SRAM-to-TRF writes, and the two paths of a TRF
// load (002 L4035-4199).

// ruleStoTRFPath is the unpriced setup of a TRF load through the full Tensor
// Unit path.
var ruleStoTRFPath = engines.NewRule(engines.Rule{ID: "TRF-P1", Engine: "trf", Name: "SRAM-to-TRF path setup",
	Cite: "002 L4112-4114",
	Text: "a TRF load whose fetch is not completely contiguous goes through the full tensor unit path, with higher setup overhead than the short command; the overhead is not stated"})

// maxTRFCache bounds the cache entries per Row this package simulates.
const maxTRFCache = 64

// TRFReadCost is the price of the TRF Sequencer's reads.
type TRFReadCost struct {
	// Cycles is the number of reads: every cycle each Row reads
	// reg_read_size bytes for one 64-byte computation packet (002 L4099,
	// L4104), all Rows in parallel from their own bank rows (002 L4129).
	Cycles int
	// Hits and Misses count the 32-byte cache entries the reads of one Row
	// touch: the direct-mapped cache holds 4 rows × 2 bank columns per Row
	// (002 L4183-4189); a miss loads the entry and occupies its bank column
	// for that cycle (002 L4191-4192).
	Hits, Misses int
	// StoTRFStalls counts the cycles a concurrent SRAM-to-TRF write loses:
	// a miss beats the write to its bank column (002 L4194). A 64-byte read
	// occupies both columns; a narrower one blocks the write unless
	// successive reads alternate bank columns (002 L4196-4199).
	StoTRFStalls int
}

// TRFRead simulates the TRF cache over a TRF Sequencer configuration. Every
// Row reads the same offsets in its own region, so one Row is simulated.
// It does not allocate.
func TRFRead(spec *engines.Spec, c *kernel.TRFSequencerConfig) (TRFReadCost, error) {
	var r TRFReadCost
	if spec == nil || c == nil {
		return r, errors.New("cost: TRFRead: nil spec or configuration")
	}
	cs := &spec.TRF.Cache
	entry, cols, lines := cs.EntryBytes.Value, cs.Columns.Value, cs.RowsPerLane.Value
	if entry <= 0 || cols <= 0 || lines <= 0 || cols*lines > maxTRFCache {
		return r, fmt.Errorf("cost: TRFRead: cache of %d × %d entries of %d bytes", lines, cols, entry)
	}
	if c.RegReadSize <= 0 || c.RegReadSize > spec.Stream.MACWidthBytes.Value {
		return r, fmt.Errorf("cost: TRFRead: reg_read_size %d outside 1..%d (002 L4104)", c.RegReadSize, spec.Stream.MACWidthBytes.Value)
	}
	steps := c.Steps()
	if steps == 0 && len(c.Entries) > 0 {
		return r, errors.New("cost: TRFRead: an entry has a size below 1")
	}
	var tags [maxTRFCache]int
	for i := range tags {
		tags[i] = -1
	}
	line := entry * cols // one row of a bank across both columns: 64 bytes
	prevCol := -1
	for t := 0; t < steps; t++ {
		a := c.Addr(t)
		if a < 0 {
			return r, fmt.Errorf("cost: TRFRead: step %d reads at negative address %d", t, a)
		}
		missCols := 0
		col := -1
		for e := a / entry; e <= (a+c.RegReadSize-1)/entry; e++ {
			ln, cl := e*entry/line, e%cols
			k := ln%lines*cols + cl
			tag := ln / lines
			if tags[k] == tag {
				r.Hits++
			} else {
				tags[k] = tag
				r.Misses++
				missCols |= 1 << uint(cl)
			}
			col = cl
		}
		switch {
		case missCols == 0:
		case missCols == 1<<uint(cols)-1 && cols > 1:
			r.StoTRFStalls++ // both columns occupied
		case col == prevCol || prevCol < 0:
			r.StoTRFStalls++ // the write cannot take the other column this cycle
		}
		if (a+c.RegReadSize-1)/entry != a/entry {
			col = -1 // a read across both columns leaves no column to alternate with
		}
		prevCol = col
	}
	r.Cycles = steps
	return r, nil
}

// TRFLoadCost is the price of loading a TRF tensor (SRAM-to-TRF).
type TRFLoadCost struct {
	// Cycles is the load's occupancy: its fetch (sub context, 8-byte reads,
	// 002 L1759) or the flits the TRF receives, one per cycle, whichever is
	// longer.
	Cycles int
	// Short reports the short command: a completely contiguous fetch
	// bypasses the full tensor unit pipeline (002 L4113).
	Short bool
	// Findings holds the unpriced setup of the full path (002 L4114).
	Findings []Finding
}

// TRFLoad prices `fetch → collect → to_trf` from the lowered fetch and
// to_trf configurations. Concurrent TRF reads that miss the cache stall the
// load (TRFReadCost.StoTRFStalls).
func TRFLoad(spec *engines.Spec, fetch *kernel.FetchConfig, to *kernel.ToTRFConfig) (TRFLoadCost, error) {
	var r TRFLoadCost
	if spec == nil || fetch == nil || to == nil {
		return r, errors.New("cost: TRFLoad: nil spec or configuration")
	}
	f, err := Fetch(spec, fetch, Single)
	if err != nil {
		return r, err
	}
	if to.Rows <= 0 || to.FlitsPerRow < 0 {
		return r, fmt.Errorf("cost: TRFLoad: %d rows of %d flits", to.Rows, to.FlitsPerRow)
	}
	r.Cycles = max(f.Cycles, to.Rows*to.FlitsPerRow)
	size := fetch.Seq.Size()
	r.Short = size > 0 && fetch.Seq.ContiguousRun() == size
	if !r.Short {
		v := ruleStoTRFPath.Violate("to_trf of a fetch with contiguous run %d of %d elements takes the full tensor unit path; its setup is not priced",
			fetch.Seq.ContiguousRun(), size).With("contiguous_run", fetch.Seq.ContiguousRun())
		r.Findings = append(r.Findings, Finding{Violation: v, Effect: Unpriced})
	}
	r.Findings = append(r.Findings, f.Findings...)
	return r, nil
}
