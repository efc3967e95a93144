package kernel

import (
	"fmt"
	"strconv"
	"strings"
)

// SeqEntry is one loop level of a DM sequencer (002 L1337-1353, 003
// L119-135): Size iterations, each advancing the address by Stride elements.
// Stride 0 re-reads the same address (broadcast, 002 L1557).
type SeqEntry struct {
	// Size is the number of iterations of this loop level (002 L1347-1348).
	Size int `json:"size"`
	// Stride is the address distance in elements of the buffer's type
	// between consecutive iterations (002 L1349-1350).
	Stride int `json:"stride"`
	// Term names the stream term(s) the entry iterates, as the manual labels
	// entries (`B -> 8 : 32`, 002 L1443-1447); empty for hand-written
	// configurations. It is documentation, not configuration.
	Term string `json:"term,omitempty"`
}

// SeqConfig is the configuration of a DM sequencer, shared by the fetch,
// commit and DMA engines (002 L1219-1353): nested loops, outermost first,
// whose innermost PacketEntries levels form one packet.
//
// The address of stream position p is Base + Σ digit_k·Stride_k with the
// digits of p in the mixed radix of the entry sizes, innermost entry fastest
// (002 L1390-1401): exactly the hardware nested loop.
type SeqConfig struct {
	// Entries are the loop levels, outermost first (002 L1338).
	Entries []SeqEntry `json:"entries"`
	// PacketSize is the number of elements per packet, the trailing `: n` of
	// the manual's notation (002 L1338, L1345); it is the product of the
	// sizes of the innermost PacketEntries entries.
	PacketSize int `json:"packet_size"`
	// PacketEntries is how many innermost entries iterate inside one packet;
	// the outer ones step time.
	PacketEntries int `json:"packet_entries"`
	// Base is the element offset of the first access relative to the
	// tensor's address (`@ base_addr = -2`, 002 L1908); usually 0.
	Base int `json:"base,omitempty"`
}

// String prints the configuration in the manual's notation
// `[8:32, 8:256, 16:1] : 16` (002 L1338, L1406), with ` @ base` appended when
// the base is not 0 (002 L1908).
func (c SeqConfig) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range c.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(e.Size))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Stride))
	}
	b.WriteString("] : ")
	b.WriteString(strconv.Itoa(c.PacketSize))
	if c.Base != 0 {
		b.WriteString(" @ ")
		b.WriteString(strconv.Itoa(c.Base))
	}
	return b.String()
}

// Labeled prints the configuration with each entry's term, as the manual's
// worked examples do: `[B -> 8:32, A -> 8:256, C # 16 -> 16:1] : 16`
// (002 L1443-1447). Entries without a term print as in String.
func (c SeqConfig) Labeled() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range c.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		if e.Term != "" {
			b.WriteString(e.Term)
			b.WriteString(" -> ")
		}
		fmt.Fprintf(&b, "%d:%d", e.Size, e.Stride)
	}
	fmt.Fprintf(&b, "] : %d", c.PacketSize)
	if c.Base != 0 {
		fmt.Fprintf(&b, " @ %d", c.Base)
	}
	return b.String()
}

// Size is the number of stream positions the configuration visits: the
// product of the entry sizes (1 with no entries). It is 0 if a size is not
// positive.
func (c SeqConfig) Size() int {
	n := 1
	for _, e := range c.Entries {
		if e.Size <= 0 {
			return 0
		}
		n *= e.Size
	}
	return n
}

// Steps is the number of packets (time steps): Size / PacketSize, 0 for an
// invalid packet size.
func (c SeqConfig) Steps() int {
	if c.PacketSize <= 0 {
		return 0
	}
	return c.Size() / c.PacketSize
}

// Offset returns the element address of stream position p (0 ≤ p < Size):
// Base + Σ digit_k·Stride_k, digits innermost first (002 L1390-1401). It does
// not allocate; p outside [0, Size) gives the address of p modulo Size.
func (c SeqConfig) Offset(p int) int {
	off := c.Base
	for k := len(c.Entries) - 1; k >= 0; k-- {
		e := c.Entries[k]
		if e.Size <= 0 {
			return off
		}
		off += (p % e.Size) * e.Stride
		p /= e.Size
	}
	return off
}

// ContiguousRun is the number of elements the innermost entries read
// without a stride discontinuity (002 L1762): the innermost entry's size,
// multiplied outward by each entry that is physically contiguous with the run
// below it (outer (n1 : s1), inner (n2 : s2) with s1 == n2·s2). It is 1 with
// no entries. contiguous_sram_access_size is this run times the element size.
func (c SeqConfig) ContiguousRun() int {
	k := len(c.Entries) - 1
	if k < 0 {
		return 1
	}
	run, stride := c.Entries[k].Size, c.Entries[k].Stride
	for k--; k >= 0; k-- {
		e := c.Entries[k]
		if e.Stride != run*stride {
			break
		}
		run *= e.Size
	}
	return run
}

// Mergeable reports whether the outer entry (n1 : s1) and the inner entry
// (n2 : s2) are physically contiguous, s1 == n2·s2 (002 L1569-1570), so that
// they can merge into (n1·n2 : s2).
func Mergeable(outer, inner SeqEntry) bool {
	return outer.Stride == inner.Size*inner.Stride
}

// MaxIterDepth bounds the entries SeqIter can walk. Hardware configurations
// have at most 8 (002 L1630); the bound only keeps the iterator free of
// allocation.
const MaxIterDepth = 32

// SeqIter walks a configuration's addresses in stream order without
// allocating: the hardware nested loop, innermost entry fastest.
//
//	it, err := cfg.Iter()
//	for it.Next() { addr := it.Addr(); ... }
type SeqIter struct {
	cfg   *SeqConfig
	idx   [MaxIterDepth]int
	pos   int
	size  int
	addr  int
	start bool
}

// Iter returns an iterator over c's addresses. It is an error if c has more
// than MaxIterDepth entries or an entry size is not positive.
func (c *SeqConfig) Iter() (SeqIter, error) {
	if len(c.Entries) > MaxIterDepth {
		return SeqIter{}, fmt.Errorf("sequencer iterator: %d entries, at most %d", len(c.Entries), MaxIterDepth)
	}
	for i, e := range c.Entries {
		if e.Size <= 0 {
			return SeqIter{}, fmt.Errorf("sequencer iterator: entry %d has size %d", i, e.Size)
		}
	}
	return SeqIter{cfg: c, size: c.Size(), addr: c.Base, pos: -1}, nil
}

// Next advances to the next stream position and reports whether there is
// one.
func (it *SeqIter) Next() bool {
	if it.cfg == nil {
		return false
	}
	if !it.start {
		it.start = true
		it.pos = 0
		return it.size > 0
	}
	if it.pos+1 >= it.size {
		it.pos = it.size
		return false
	}
	it.pos++
	es := it.cfg.Entries
	for k := len(es) - 1; k >= 0; k-- {
		it.idx[k]++
		it.addr += es[k].Stride
		if it.idx[k] < es[k].Size {
			break
		}
		it.addr -= es[k].Stride * es[k].Size
		it.idx[k] = 0
	}
	return true
}

// Pos is the current stream position (time step · PacketSize + element).
func (it *SeqIter) Pos() int { return it.pos }

// Addr is the element address of the current position.
func (it *SeqIter) Addr() int { return it.addr }
