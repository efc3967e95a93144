package cost

import (
	"errors"
	"fmt"
	"math/bits"

	"tcpmap/engines"
)

// HBM effects on DMA: the channel an address falls in (with the channel XOR),
// row switches within a bank as the controller's FR-FCFS queue serves them,
// the column-to-column delay (tCCD) between requests of one channel,
// read-modify-write of partial 256-byte units (002 L2948-3009), and the
// read and write bandwidth, 0.75 TB/s each (002 L2602, L2636).

// hbmDecoder decodes chip addresses into a packed HBM location with one table
// lookup per address byte. spec.HBMLocate is linear over GF(2): every field
// is a list of address bits, each channel bit the XOR of some address bits,
// and the stack bit adds channels_per_stack, a power of two (002 L2961-2977).
// So the location of an address is the XOR of the locations of its bits.
type hbmDecoder struct {
	tab      [][256]uint64 // per address byte: XOR of the packed locations of its bits
	bytes    uint64        // the HBM size: addresses must be below it
	channels int           // stacks × channels per stack

	chanBits, sliceBits, bgBits, bankBits, rowBits uint
}

func newHBMDecoder(spec *engines.Spec) (*hbmDecoder, error) {
	h := &spec.HBM
	if h.Bytes.Value <= 0 {
		return nil, fmt.Errorf("cost: HBM size %d", h.Bytes.Value)
	}
	d := &hbmDecoder{bytes: uint64(h.Bytes.Value), channels: h.Stacks.Value * h.ChannelsPerStack.Value}
	ab := &h.AddressBits
	d.chanBits = uint(bits.Len(uint(d.channels - 1)))
	d.sliceBits = uint(len(ab.Slice.Value))
	d.bgBits = uint(len(ab.BankGroup.Value))
	d.bankBits = uint(len(ab.Bank.Value))
	d.rowBits = uint(len(ab.Row.Value))
	if d.chanBits+d.sliceBits+d.bgBits+d.bankBits+d.rowBits > 64 {
		return nil, errors.New("cost: HBM location fields exceed 64 bits")
	}
	nbits := bits.Len64(d.bytes - 1)
	d.tab = make([][256]uint64, (nbits+7)/8)
	var single [64]uint64
	for b := 0; b < nbits; b++ {
		single[b] = d.pack(spec.HBMLocate(1 << uint(b)))
	}
	for k := range d.tab {
		for v := 1; v < 256; v++ {
			var x uint64
			for i := 0; i < 8; i++ {
				if v&(1<<uint(i)) != 0 && 8*k+i < nbits {
					x ^= single[8*k+i]
				}
			}
			d.tab[k][v] = x
		}
	}
	// The construction relies on linearity; check it on a fixed set of
	// addresses so that a spec breaking it is an error, not a wrong price.
	a := uint64(0x9e3779b97f4a7c15)
	for i := 0; i < 64; i++ {
		a = a*6364136223846793005 + 1442695040888963407
		addr := (a >> 11) % d.bytes
		if d.decode(addr) != d.pack(spec.HBMLocate(addr)) {
			return nil, fmt.Errorf("cost: the HBM address mapping is not linear (address %#x); the table decoder cannot be used", addr)
		}
	}
	return d, nil
}

func (d *hbmDecoder) pack(l engines.HBMLocation) uint64 {
	x := uint64(l.Channel)
	s := d.chanBits
	x |= uint64(l.Slice) << s
	s += d.sliceBits
	x |= uint64(l.BankGroup) << s
	s += d.bgBits
	x |= uint64(l.Bank) << s
	s += d.bankBits
	x |= uint64(l.Row) << s
	return x
}

// decode returns the packed location of addr (< d.bytes).
func (d *hbmDecoder) decode(addr uint64) uint64 {
	var x uint64
	for k := range d.tab {
		x ^= d.tab[k][addr&0xff]
		addr >>= 8
	}
	return x
}

func (d *hbmDecoder) channel(loc uint64) int { return int(loc & (1<<d.chanBits - 1)) }

// bank returns the bank within its channel: slice, bank group and bank.
func (d *hbmDecoder) bank(loc uint64) int {
	return int(loc >> d.chanBits & (1<<(d.sliceBits+d.bgBits+d.bankBits) - 1))
}

// group returns the slice and bank group within the channel.
func (d *hbmDecoder) group(loc uint64) int {
	return int(loc >> d.chanBits & (1<<(d.sliceBits+d.bgBits) - 1))
}

func (d *hbmDecoder) row(loc uint64) int32 {
	return int32(loc >> (d.chanBits + d.sliceBits + d.bgBits + d.bankBits))
}

// HBMStats describes the HBM side of a priced DMA command.
type HBMStats struct {
	// Units is the number of 256-byte unit accesses the channels serve
	// (a request crossing a 256-byte boundary touches two, 002 L2984).
	Units int
	// ReadUnits and WriteUnits split Units by direction; a read-modify-write
	// counts in both (it reads the unit and writes it back, 002 L2985).
	ReadUnits, WriteUnits int
	// Channels is the number of channels touched (of one chip, or summed over
	// chips), MaxUnits the units of the busiest channel.
	Channels, MaxUnits int
	// RowSwitches counts row activations in a bank that had another row
	// open (002 L2987), after the controller has served each queue
	// window's open-row hits first and batched the accesses to each row
	// (FR-FCFS, 002 L2989); FirstOpens counts the activations of banks with
	// no row open.
	RowSwitches, FirstOpens int
	// RMW counts partially written 256-byte units: read-modify-write
	// (002 L2985).
	RMW int
	// UnalignedReads counts read requests that cross a 256-byte boundary
	// (002 L2984).
	UnalignedReads int
	// TCCDPenalty is the cycles the busiest channel loses to the
	// column-to-column delay (002 L2993-3003).
	TCCDPenalty float64
	// Busiest is the cycles of the busiest channel.
	Busiest float64
	// ReadCycles and WriteCycles are the cycles the busiest chip's read
	// (write) units take at the read (write) bandwidth, 0.75 TB/s each of
	// the 1.5 TB/s (002 L2602, L2636): ReadUnits at read_tb_per_s /
	// peak_tb_per_s of all the chip's channels' rate
	// (docs/spec-decisions.md "HBM read and write bandwidth").
	ReadCycles, WriteCycles float64
}

// hbmChannels accounts the load of every HBM channel of up to maxChips chips
// (docs/spec-decisions.md "HBM row switches" and "HBM tCCD"). Requests
// arrive in order and fill each channel's 64-entry command queue (002
// L2981); the controller serves each window of 64 as FR-FCFS does (002
// L2989): in each bank, the open row's hits first, then each other row it
// holds requests for, in order of their first arrival, all of that row's
// requests batched behind one activation. A window then takes the longest
// of
//
//   - its transfers on the data bus: each at the channel's request time,
//     issued in an order the controller picks (flush) so that the tCCD
//     penalty is only what the mix of bank groups and slices forces
//     (002 L2997-3003), a read-modify-write at unaligned_write_factor
//     request times (002 L2985);
//   - its row switches, one after the other at
//     bank_conflict_cycles_per_request each (≈40, 002 L2710): the manual's
//     per-switch price, which its Example 4 charges although the channel
//     interleaves eight banks (002 L2706-2715);
//   - its busiest bank: a bank's own switches and transfers cannot overlap.
//
// So a row switch is hidden behind other banks' transfers ("enabling
// useful transfers while other banks perform row switches", 002 L2989), but
// not behind another switch. Not safe for concurrent use.
type hbmChannels struct {
	d        *hbmDecoder
	perChan  int // bank keys per channel
	groups   int // slice × bank group keys per channel
	base     float64
	conflict float64
	rmw      float64
	sameBG   float64 // tCCD same slice same bank group / ideal
	otherSl  float64 // tCCD other slice / ideal
	classes  bool    // 1 < otherSl < sameBG: flush by issueByClass
	window   int
	// readUnit and writeUnit are the cycles one unit takes of a chip's read
	// and write bandwidth.
	readUnit, writeUnit float64

	gen     uint32
	open    []openRow // chip × channel × bank key
	cost    []float64 // chip × channel
	units   []int
	tccd    []float64
	winN    []int32
	winGrp  []uint16   // chip × channel × group: transfers in the current window
	winOrd  []uint8    // chip × channel × group: the window's groups in arrival order
	winLen  []uint8    // chip × channel: groups in winOrd
	winAcc  []winEntry // chip × channel × window: the window's accesses in arrival order
	prev    []int8     // chip × channel: group of the last command issued, -1 none
	touched []int32    // channels with units, for the final flush
	reads   []int      // per chip: read units
	writes  []int      // per chip: write units

	// Scratch of one flush, per bank key of the channel: bStamp marks the
	// banks of the current flush, bRows[b·window:] holds bank b's bN
	// distinct rows in order of first arrival, bBusy the bank's time;
	// banks lists the window's banks in order of first arrival.
	stamp  uint32
	bStamp []uint32
	bN     []int32
	bRows  []int32
	bBusy  []float64
	banks  []uint8

	stats HBMStats
}

// winEntry is one access of a channel's queue window.
type winEntry struct {
	row     int32
	bank    uint8
	partial bool
}

type openRow struct {
	gen uint32
	row int32
}

func newHBMChannels(spec *engines.Spec, d *hbmDecoder, chips int) (*hbmChannels, error) {
	h := &spec.HBM
	ideal := float64(h.TCCDSameSliceOtherBankGroup.Value)
	if ideal <= 0 || h.CyclesPerRequest.Value <= 0 || h.CommandQueueEntries.Value <= 0 {
		return nil, errors.New("cost: HBM tCCD, cycles per request and command queue must be positive")
	}
	if h.ReadTBPerS.Value <= 0 || h.WriteTBPerS.Value <= 0 || h.PeakTBPerS.Value <= 0 {
		return nil, errors.New("cost: HBM read, write and peak bandwidths must be positive")
	}
	if h.CommandQueueEntries.Value > 127 {
		return nil, errors.New("cost: HBM command queue of more than 127 entries")
	}
	c := &hbmChannels{
		d:        d,
		perChan:  1 << (d.sliceBits + d.bgBits + d.bankBits),
		groups:   1 << (d.sliceBits + d.bgBits),
		base:     h.CyclesPerRequest.Value,                                         // ≈5.3 cycles per 256 B per channel (002 L2744)
		conflict: float64(h.BankConflictCyclesPerRequest.Value),                    // ≈40 cycles with a row switch (002 L2710)
		rmw:      float64(h.UnalignedWriteFactor.Value) * h.CyclesPerRequest.Value, // ≈50× (002 L2985)
		sameBG:   float64(h.TCCDSameSliceSameBankGroup.Value) / ideal,              // 4 / 2 (002 L3001)
		otherSl:  float64(h.TCCDOtherSlice.Value) / ideal,                          // 3 / 2 (002 L3000)
		window:   h.CommandQueueEntries.Value,                                      // 64 entries (002 L2981)
		// 0.75 TB/s read and 0.75 TB/s write of the 1.5 TB/s (002 L2602,
		// L2636): a unit takes peak / read times a channel's request time,
		// spread over the chip's channels.
		readUnit:  h.CyclesPerRequest.Value * h.PeakTBPerS.Value / h.ReadTBPerS.Value / float64(d.channels),
		writeUnit: h.CyclesPerRequest.Value * h.PeakTBPerS.Value / h.WriteTBPerS.Value / float64(d.channels),
	}
	c.classes = 1 < c.otherSl && c.otherSl < c.sameBG
	if c.groups > 127 {
		return nil, errors.New("cost: more than 127 HBM slice and bank-group combinations")
	}
	if c.perChan > 256 {
		return nil, errors.New("cost: more than 256 HBM banks per channel")
	}
	nch := chips * d.channels
	c.open = make([]openRow, nch*c.perChan)
	c.cost = make([]float64, nch)
	c.units = make([]int, nch)
	c.tccd = make([]float64, nch)
	c.winN = make([]int32, nch)
	c.winGrp = make([]uint16, nch*c.groups)
	c.winOrd = make([]uint8, nch*c.groups)
	c.winLen = make([]uint8, nch)
	c.winAcc = make([]winEntry, nch*c.window)
	c.prev = make([]int8, nch)
	for i := range c.prev {
		c.prev[i] = -1
	}
	c.touched = make([]int32, 0, nch)
	c.reads = make([]int, chips)
	c.writes = make([]int, chips)
	c.bStamp = make([]uint32, c.perChan)
	c.bN = make([]int32, c.perChan)
	c.bRows = make([]int32, c.perChan*c.window)
	c.bBusy = make([]float64, c.perChan)
	c.banks = make([]uint8, 0, c.perChan)
	return c, nil
}

// reset starts a new command: all rows closed, all channels idle.
func (c *hbmChannels) reset() {
	c.gen++
	if c.gen == 0 { // wrapped: clear the tags for real
		clear(c.open)
		c.gen = 1
	}
	for _, k := range c.touched {
		c.cost[k], c.units[k], c.tccd[k], c.winN[k], c.prev[k], c.winLen[k] = 0, 0, 0, 0, -1, 0
		clear(c.winGrp[int(k)*c.groups : (int(k)+1)*c.groups])
	}
	c.touched = c.touched[:0]
	clear(c.reads)
	clear(c.writes)
	c.stats = HBMStats{}
}

// access serves one 256-byte unit access at chip address addr of chip, a
// write when write is set; partial marks a partial write
// (read-modify-write).
func (c *hbmChannels) access(chip int, addr uint64, write, partial bool) {
	loc := c.d.decode(addr)
	k := chip*c.d.channels + c.d.channel(loc)
	if c.units[k] == 0 {
		c.touched = append(c.touched, int32(k))
	}
	c.units[k]++
	c.stats.Units++
	if !write || partial {
		c.reads[chip]++
	}
	if write {
		c.writes[chip]++
	}
	n := int(c.winN[k])
	c.winAcc[k*c.window+n] = winEntry{row: c.d.row(loc), bank: uint8(c.d.bank(loc)), partial: partial}
	if partial {
		c.stats.RMW++
	} else {
		g := c.d.group(loc)
		if i := k*c.groups + g; c.winGrp[i] == 0 {
			c.winOrd[k*c.groups+int(c.winLen[k])] = uint8(g)
			c.winLen[k]++
			c.winGrp[i] = 1
		} else {
			c.winGrp[i]++
		}
	}
	c.winN[k]++
	if n+1 == c.window {
		c.flush(k)
	}
}

// flush prices channel k's current window (hbmChannels): its transfers
// on the data bus, its row switches after FR-FCFS batching, and its
// busiest bank, whichever is longest.
//
// The bus order is found greedily, as the controller reorders its queue
// (FR-FCFS, 002 L2989): each next command is one with the smallest
// column-to-column delay after the previous command (same slice, other
// bank group: tCCD 2; other slice: 3; same bank group: 4, at 1.5 GHz, 002
// L2997-3001), the most numerous first among equals, the group whose first
// command came first among those (first-come, first-served). A transfer at
// the ideal delay takes the channel's request time (002 L3002); the others
// take proportionally longer. The choice never looks at group numbers
// beyond equality and slice equality, and the row batching compares banks
// and rows for equality only and goes by arrival order, so relabelling
// them (translate.go) prices the same way.
func (c *hbmChannels) flush(k int) {
	n := int(c.winN[k])
	if n == 0 {
		return
	}
	grp := c.winGrp[k*c.groups : (k+1)*c.groups]
	ord := c.winOrd[k*c.groups : k*c.groups+int(c.winLen[k])]
	var prev, issued int
	var units float64
	if c.classes {
		prev, units, issued = c.issueByClass(grp, ord, int(c.prev[k]))
	} else {
		prev, units, issued = c.issueGreedy(grp, ord, int(c.prev[k]))
	}
	c.winLen[k] = 0
	c.prev[k] = int8(prev)
	rmw := float64(n-issued) * c.rmw
	bus, ideal := units*c.base+rmw, float64(issued)*c.base+rmw

	// Banks: each bank's distinct rows in order of first arrival.
	c.stamp++
	if c.stamp == 0 { // wrapped: clear the stamps for real
		clear(c.bStamp)
		c.stamp = 1
	}
	acc := c.winAcc[k*c.window : k*c.window+n]
	c.banks = c.banks[:0]
	for i := range acc {
		e := &acc[i]
		b := int(e.bank)
		t := c.base
		if e.partial {
			t = c.rmw
		}
		rows := c.bRows[b*c.window : (b+1)*c.window]
		if c.bStamp[b] != c.stamp {
			c.bStamp[b] = c.stamp
			rows[0], c.bN[b] = e.row, 1
			c.bBusy[b] = t
			c.banks = append(c.banks, uint8(b))
			continue
		}
		c.bBusy[b] += t
		n := int(c.bN[b])
		if rows[n-1] == e.row { // the common case: the row just seen
			continue
		}
		found := false
		for _, r := range rows[:n-1] {
			if r == e.row {
				found = true
				break
			}
		}
		if !found {
			rows[n], c.bN[b] = e.row, int32(n+1)
		}
	}
	// FR-FCFS in each bank: the open row's hits first, then one activation
	// per other row. The first activation of a bank with no row open
	// overlaps transfers of other banks (002 L2989) and costs nothing
	// more; the others are row switches (002 L2987).
	switches := 0
	busiest := 0.0
	for _, b := range c.banks {
		o := &c.open[k*c.perChan+int(b)]
		wasOpen := o.gen == c.gen
		opened := wasOpen
		cur := o.row
		sw := 0
		for _, r := range c.bRows[int(b)*c.window : int(b)*c.window+int(c.bN[b])] {
			if wasOpen && r == o.row {
				continue
			}
			if opened {
				sw++
			} else {
				c.stats.FirstOpens++
				opened = true
			}
			cur = r
		}
		o.gen, o.row = c.gen, cur
		switches += sw
		busiest = max(busiest, c.bBusy[b]+float64(sw)*(c.conflict-c.base))
	}
	c.stats.RowSwitches += switches
	chain := float64(switches) * c.conflict
	t := max(bus, chain, busiest)
	c.cost[k] += t
	c.tccd[k] += t - max(ideal, chain, busiest)
	c.winN[k] = 0
}

// issueGreedy issues the window's commands grp (counts per group; ord
// lists the groups with commands in arrival order) after a command of
// group prev, as flush says: each next command of a group with the
// smallest delay after the previous, the most numerous among equals, the
// first in ord among those. It returns the last group, the delays' sum
// (relative to the ideal) and the commands issued, and empties grp.
func (c *hbmChannels) issueGreedy(grp []uint16, ord []uint8, prev int) (int, float64, int) {
	units := 0.0
	n := 0
	for {
		best, bestGap, bestN := -1, 0.0, uint16(0)
		for _, g8 := range ord {
			g := int(g8)
			v := grp[g]
			if v == 0 {
				continue
			}
			gap := c.gap(prev, g)
			if best < 0 || gap < bestGap || gap == bestGap && v > bestN {
				best, bestGap, bestN = g, gap, v
			}
		}
		if best < 0 {
			break
		}
		grp[best]--
		units += bestGap
		n++
		prev = best
	}
	return prev, units, n
}

// issueByClass is issueGreedy when the delays order as the manual's do,
// ideal < other slice < same bank group (2 < 3 < 4, 002 L2999-3001): the
// next command is the best of the same slice's other bank groups if any,
// else of the other slices, else of prev's group; within a class, the most
// numerous, then the first in ord, as issueGreedy's scan picks it. The
// delays are added in the same order, so the sum is bit-identical.
func (c *hbmChannels) issueByClass(grp []uint16, ord []uint8, prev int) (int, float64, int) {
	left := 0
	for _, g := range ord {
		left += int(grp[g])
	}
	sliceMask := 1<<c.d.sliceBits - 1
	units := 0.0
	for n := 0; n < left; n++ {
		best, bestN, gap := -1, uint16(0), 1.0
		if prev < 0 {
			for _, g8 := range ord {
				if g := int(g8); grp[g] > bestN {
					best, bestN = g, grp[g]
				}
			}
		} else {
			s := prev & sliceMask
			for _, g8 := range ord {
				if g := int(g8); g&sliceMask == s && g != prev && grp[g] > bestN {
					best, bestN = g, grp[g]
				}
			}
			if best < 0 {
				gap = c.otherSl
				for _, g8 := range ord {
					if g := int(g8); g&sliceMask != s && grp[g] > bestN {
						best, bestN = g, grp[g]
					}
				}
			}
			if best < 0 {
				best, gap = prev, c.sameBG
			}
		}
		grp[best]--
		units += gap
		prev = best
	}
	return prev, units, left
}

// gap returns the delay before a command of group g after one of group prev
// (-1: none), relative to the ideal delay.
func (c *hbmChannels) gap(prev, g int) float64 {
	switch {
	case prev < 0:
		return 1
	case prev == g:
		return c.sameBG
	case prev&(1<<c.d.sliceBits-1) != g&(1<<c.d.sliceBits-1):
		return c.otherSl
	}
	return 1
}

// finish flushes every channel and returns the HBM side's time: the
// busiest channel's cycles, or the busiest chip's read or write units at
// the read or write bandwidth if longer (002 L2602, L2636).
func (c *hbmChannels) finish() float64 {
	for _, k := range c.touched {
		c.flush(int(k))
	}
	busiest := 0.0
	for _, k := range c.touched {
		if c.cost[k] > busiest {
			busiest = c.cost[k]
			c.stats.TCCDPenalty = c.tccd[k]
		}
		c.stats.MaxUnits = max(c.stats.MaxUnits, c.units[k])
	}
	for chip := range c.reads {
		c.stats.ReadUnits += c.reads[chip]
		c.stats.WriteUnits += c.writes[chip]
		c.stats.ReadCycles = max(c.stats.ReadCycles, float64(c.reads[chip])*c.readUnit)
		c.stats.WriteCycles = max(c.stats.WriteCycles, float64(c.writes[chip])*c.writeUnit)
	}
	c.stats.Channels = len(c.touched)
	c.stats.Busiest = busiest
	return max(busiest, c.stats.ReadCycles, c.stats.WriteCycles)
}
