package kernel

import (
	"fmt"

	"tcpmap/model/dtype"
)

// CastConfig is the configuration of `cast::<D2, OutPacket>()`, the Cast
// Engine's precision lowering (002 L6756-6784): each of the Valid leading
// elements of the 32-byte input packet is converted from From to To, and the
// result is padded back to 32 bytes; Time passes through (002 L6782).
type CastConfig struct {
	// From is the input type, f32 or i32 (002 L6776-6779).
	From dtype.DType `json:"from"`
	// To is the output type.
	To dtype.DType `json:"to"`
	// Valid is the number of data elements per packet (P in
	// `[P # (32 / sizeof(D1))]`, 002 L6783).
	Valid int `json:"valid"`
	// InElems is the input packet size in elements, 32 / sizeof(From).
	InElems int `json:"in_elems"`
	// OutElems is the output packet size in elements, 32 / sizeof(To).
	OutElems int `json:"out_elems"`
}

// String prints `i32 → i8: 8 of 8 elements → 8 of 32`.
func (c CastConfig) String() string {
	return fmt.Sprintf("%s → %s: %d of %d elements → %d of %d", c.From, c.To, c.Valid, c.InElems, c.Valid, c.OutElems)
}
