package kernel

import (
	"fmt"
	"math/bits"
	"strings"

	"tcpmap/model/dtype"
)

// CommitConfig is the configuration of `commit::<Element>(addr)` (002
// L2145-2353): the Commit Adapter truncates each 32-byte input packet to its
// leading CommitInSize bytes, and the Commit Sequencer writes them to DM in
// CommitSize chunks.
type CommitConfig struct {
	// Context is main or sub (002 L2247-2248).
	Context Context `json:"context"`
	// DType is the element type of the stream and of the DM tensor.
	DType dtype.DType `json:"dtype"`
	// InPacketBytes is the input packet: always one 32-byte flit (002 L2192).
	InPacketBytes int `json:"in_packet_bytes"`
	// CommitInSize is the bytes of each packet written to DM, the adapter's
	// truncation: 8, 16, 24 or 32 (002 L2193); CommitInElems the same in
	// elements.
	CommitInSize  int `json:"commit_in_size"`
	CommitInElems int `json:"commit_in_elems"`
	// Seq is the Commit Sequencer over the DM Element mapping, strides in
	// elements; its packet is the truncated packet (002 L2239-2313).
	Seq SeqConfig `json:"sequencer"`
	// Steps is the number of input packets (Time::SIZE).
	Steps int `json:"steps"`
	// ContiguousRun is the physically contiguous run in elements;
	// ContiguousBytes is contiguous_sram_access_size (002 L2242, L1762).
	ContiguousRun   int `json:"contiguous_run"`
	ContiguousBytes int `json:"contiguous_sram_access_size"`
	// CommitSize is the bytes per DM write, gcd(contiguous, commit_in_size)
	// (002 L2243); WritesPerStep = CommitInSize / CommitSize (002 L2244-2246).
	CommitSize    int `json:"commit_size"`
	WritesPerStep int `json:"writes_per_step"`
	// SliceBitmap selects the slices that receive the commit (002
	// L2314-2319); nil when not derived.
	SliceBitmap *SliceBitmap `json:"slice_bitmap,omitempty"`
	// ValidCountPacking commits only a runtime count of leading elements of
	// each packet (sub context only, 002 L2324).
	ValidCountPacking bool `json:"valid_count_packing,omitempty"`
}

// String prints the sequencer in the manual's notation followed by the
// derived sizes.
func (c CommitConfig) String() string {
	return fmt.Sprintf("%s (commit_in_size %d B, commit_size %d B, %d writes per packet)", c.Seq, c.CommitInSize, c.CommitSize, c.WritesPerStep)
}

// SliceBitmapBits is the width of the commit slice bitmap: 256 bits, one per
// slice (002 L2316, L2343).
const SliceBitmapBits = 256

// SliceBitmap is the commit slice bitmap: bit k enables the commit to slice
// k (002 L2316-2318). The zero value enables no slice.
type SliceBitmap [SliceBitmapBits / 64]uint64

// Set enables slice k; it reports false if k is out of range.
func (b *SliceBitmap) Set(k int) bool {
	if k < 0 || k >= SliceBitmapBits {
		return false
	}
	b[k/64] |= 1 << (k % 64)
	return true
}

// Has reports whether slice k is enabled.
func (b *SliceBitmap) Has(k int) bool {
	return k >= 0 && k < SliceBitmapBits && b[k/64]&(1<<(k%64)) != 0
}

// Count is the number of enabled slices.
func (b *SliceBitmap) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// String prints the bitmap as the manual does, slice 255 first and slice 0
// last: `00…01` enables only slice 0 (002 L2318).
func (b SliceBitmap) String() string {
	var s strings.Builder
	s.Grow(SliceBitmapBits)
	for k := SliceBitmapBits - 1; k >= 0; k-- {
		if b.Has(k) {
			s.WriteByte('1')
		} else {
			s.WriteByte('0')
		}
	}
	return s.String()
}

// MarshalText writes String.
func (b SliceBitmap) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads the form String writes: exactly 256 binary digits,
// slice 255 first.
func (b *SliceBitmap) UnmarshalText(text []byte) error {
	if len(text) != SliceBitmapBits {
		return fmt.Errorf("slice bitmap: %d digits, want %d", len(text), SliceBitmapBits)
	}
	var out SliceBitmap
	for i, c := range text {
		switch c {
		case '1':
			out.Set(SliceBitmapBits - 1 - i)
		case '0':
		default:
			return fmt.Errorf("slice bitmap: column %d: %q is not 0 or 1", i+1, c)
		}
	}
	*b = out
	return nil
}
