package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
)

// Vector Engine costs that the kernel-level examples state: binary
// operations across an interleave axis, split reduce and the inter-slice
// reduction tail (002 L7151-7381, L6738-6754, L4360-4376).

// VectorBinaryCycles prices a Vector Engine binary operation over packets
// packets: "1 cycle per packet" (002 L7247), eight 32-bit lanes per cycle
// (002 L5272).
func VectorBinaryCycles(packets int) (int, error) {
	if packets < 0 {
		return 0, fmt.Errorf("cost: vector binary op over %d packets", packets)
	}
	return packets, nil
}

// SplitReduceCycles is the split-reduce total: N_splits × fetch_cycles +
// max(0, VE_cycles − pipeline_overlap) (002 L7349-7354), with fetch the
// fetch cycles of one tensor instance and overlap the VE cycles hidden
// behind the fetch.
func SplitReduceCycles(splits, fetch, ve, overlap int) (int, error) {
	if splits <= 0 || fetch < 0 || ve < 0 || overlap < 0 {
		return 0, fmt.Errorf("cost: split reduce of %d splits, fetch %d, VE %d, overlap %d", splits, fetch, ve, overlap)
	}
	return splits*fetch + max(0, ve-overlap), nil
}

// InterSliceReduceCycles prices an inter-slice reduction of group size r
// after stream cycles of input: "input streaming time + that ring-sized
// tail", O(r) (002 L6739-6749), one cycle per slice as in the manual's
// example of 256 cycles for 256 slices (002 L4369, L4375).
func InterSliceReduceCycles(spec *engines.Spec, stream, r int) (int, error) {
	if spec == nil {
		return 0, errors.New("cost: InterSliceReduceCycles: nil spec")
	}
	v := &spec.Vector
	if stream < 0 || r <= 0 || r > v.InterSliceSlices.Value {
		return 0, fmt.Errorf("cost: inter-slice reduce of %d slices (at most %d) after %d cycles", r, v.InterSliceSlices.Value, stream)
	}
	return stream + ceilDiv(r*v.InterSliceCycles256Slices.Value, v.InterSliceSlices.Value), nil
}
