package kernel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// TrfAddress is the TRF address mode of `to_trf(TrfAddress::...)`
// (002 L4043-4048, L4150-4159): which region of the register file a TRF
// tensor occupies. Its values are the manual's spellings, so it converts to
// and from Tensor.TrfAddress.
type TrfAddress string

// The TRF address modes (002 L4151-4155).
const (
	// TrfFull dedicates the entire TRF to one tensor (002 L4155, L4157).
	TrfFull TrfAddress = "Full"
	// TrfFirstHalf is rows 0-63 of every bank (002 L4138, L4153).
	TrfFirstHalf TrfAddress = "FirstHalf"
	// TrfSecondHalf is rows 64-127 of every bank (002 L4138, L4154).
	TrfSecondHalf TrfAddress = "SecondHalf"
)

// ParseTrfAddress reads a TRF address mode as the manual spells it
// (`Full`, `FirstHalf`, `SecondHalf`, optionally prefixed `TrfAddress::`).
func ParseTrfAddress(s string) (TrfAddress, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "TrfAddress::")
	switch a := TrfAddress(t); a {
	case TrfFull, TrfFirstHalf, TrfSecondHalf:
		return a, nil
	}
	return "", fmt.Errorf("unknown TRF address mode %q (want Full, FirstHalf or SecondHalf)", s)
}

// Valid reports whether a is one of the three address modes.
func (a TrfAddress) Valid() bool {
	return a == TrfFull || a == TrfFirstHalf || a == TrfSecondHalf
}

// Half reports whether a is FirstHalf or SecondHalf, the 6-bit row-in-bank
// modes (002 L4138).
func (a TrfAddress) Half() bool { return a == TrfFirstHalf || a == TrfSecondHalf }

// String is the manual's spelling.
func (a TrfAddress) String() string { return string(a) }

// UnmarshalJSON accepts only the three modes.
func (a *TrfAddress) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseTrfAddress(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// ToTRFConfig is the configuration of `to_trf::<Row, Element>(address)`
// (002 L4052-4061): the collect stream [Time, Packet] is split into
// [Row, Element], the Row part selecting the bank row and the Element part
// filling that Row's region of the register file (SRAM-to-TRF, 002
// L4112-4114).
type ToTRFConfig struct {
	// Address is the address mode.
	Address TrfAddress `json:"address"`
	// Rows is Row::SIZE: the bank rows the tensor uses, 1, 2, 4 or 8
	// (002 L4162-4167).
	Rows int `json:"rows"`
	// FlitsPerRow is the number of 32-byte collect flits that fill one Row:
	// Time::SIZE / Row::SIZE (002 L4053-4054).
	FlitsPerRow int `json:"flits_per_row"`
	// ElementBytes is the size of the Element mapping in bytes: what each
	// Row stores, padding included.
	ElementBytes int `json:"element_bytes"`
	// CapacityBytes is what one Row may hold in this address mode with this
	// many rows (002 L4118, L4148, L4151-4155).
	CapacityBytes int `json:"capacity_bytes"`
	// RegType is the reg_types value of the element type (002 L4141-4147).
	RegType int `json:"reg_type"`
	// ElementBits is the element width in a packet (4, 8 or 16).
	ElementBits int `json:"element_bits"`
}

// String prints the configuration as the manual describes a TRF tensor:
// `to_trf(TrfAddress::Full): rows = 8, 64 B of 8192 B per Row, reg_types = 3`.
func (c ToTRFConfig) String() string {
	return fmt.Sprintf("to_trf(TrfAddress::%s): rows = %d, %d B of %d B per Row, reg_types = %d",
		c.Address, c.Rows, c.ElementBytes, c.CapacityBytes, c.RegType)
}

// TRFEntry is one loop level of the TRF Sequencer (002 L4169-4177): Size
// iterations, each advancing the read address by Stride bytes; stride 0
// broadcasts the same weights across the loop (002 L4177).
type TRFEntry struct {
	// Size is the iteration count, 1-65536 (002 L4174).
	Size int `json:"size"`
	// Stride is the address increment in bytes, signed 32-bit (002 L4175,
	// and the byte strides of the worked examples, 002 L3863-3864).
	Stride int `json:"stride"`
	// Term names the computation-mapping term the entry iterates (`M`,
	// `O`), as the manual labels entries (002 L4239); documentation only.
	Term string `json:"term,omitempty"`
}

// TRFSequencerConfig is the TRF Sequencer's configuration (002 L4035-4177):
// every cycle each Row reads RegReadSize contiguous bytes of its own TRF
// region at Base + Σ digit_k·Stride_k and repeats them to fill the 64-byte
// mac_width window (002 L4099-4106).
type TRFSequencerConfig struct {
	// RegReadSize is reg_read_size in bytes: 1, 2, 4, 8, 16, 32 or 64
	// (002 L4104).
	RegReadSize int `json:"reg_read_size"`
	// Broadcast is how often the read repeats to fill mac_width:
	// 64 / RegReadSize (002 L4104).
	Broadcast int `json:"broadcast"`
	// Entries are the loop levels, Entry 0 the innermost loop, as the
	// manual numbers them ("Entry 0 (inner loop)", 002 L3822, L3863-3864).
	Entries []TRFEntry `json:"entries"`
	// Base is the byte address of the first read within the tensor's TRF
	// region; derived configurations start at 0.
	Base int `json:"base"`
	// Rows is the number of Rows reading in parallel, each from its own bank
	// row (002 L4161-4168).
	Rows int `json:"rows"`
}

// String prints the configuration as the manual's compiler dumps do:
// `reg_read_size = 32B; Entry 0: { size: 2, stride: 1024 }, Entry 1: { size: 32, stride: 32 }`
// (002 L3854, L3863-3864).
func (c TRFSequencerConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "reg_read_size = %dB", c.RegReadSize)
	if c.Broadcast > 1 {
		fmt.Fprintf(&b, " (broadcast %d×)", c.Broadcast)
	}
	b.WriteString(";")
	for i, e := range c.Entries {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " Entry %d: { size: %d, stride: %d }", i, e.Size, e.Stride)
		if e.Term != "" {
			fmt.Fprintf(&b, " — %s", e.Term)
		}
	}
	if c.Base != 0 {
		fmt.Fprintf(&b, " @ %d", c.Base)
	}
	return b.String()
}

// Steps is the number of cycles (computation time steps) the configuration
// reads: the product of the entry sizes, 1 with no entries, 0 if a size is
// not positive.
func (c TRFSequencerConfig) Steps() int {
	n := 1
	for _, e := range c.Entries {
		if e.Size <= 0 {
			return 0
		}
		n *= e.Size
	}
	return n
}

// Addr returns the byte address read at computation time step t
// (0 ≤ t < Steps): Base + Σ digit_k·Stride_k with Entry 0 the fastest
// digit. It does not allocate.
func (c TRFSequencerConfig) Addr(t int) int {
	a := c.Base
	for _, e := range c.Entries {
		if e.Size <= 0 {
			return a
		}
		a += (t % e.Size) * e.Stride
		t /= e.Size
	}
	return a
}

// TRFLocation is where one byte of a TRF tensor sits in the banked register
// file (002 L4115-4148): the fields of the TRF address bit-field
// `bank row | row in bank | bank col | offset` (002 L4130-4140).
type TRFLocation struct {
	// BankRow selects the bank row, 0-7 (002 L4137).
	BankRow int `json:"bank_row"`
	// Row is the row within the bank, 0-127; FirstHalf uses 0-63 and
	// SecondHalf 64-127 (002 L4138).
	Row int `json:"row"`
	// Column is the bank column, 0 or 1 (002 L4139).
	Column int `json:"column"`
	// Byte is the logical byte within the 32-byte bank row (002 L4118).
	Byte int `json:"byte"`
	// Slot is the 5-bit slot offset of the element holding Byte (002 L4140):
	// the element index in the row times its slots per element
	// (002 L4141-4147).
	Slot int `json:"slot"`
}

// String prints the location as `bank row 3, row 64, col 1, byte 8 (slot 16)`.
func (l TRFLocation) String() string {
	return fmt.Sprintf("bank row %d, row %d, col %d, byte %d (slot %d)", l.BankRow, l.Row, l.Column, l.Byte, l.Slot)
}
