package kernel

import "fmt"

// TransposeConfig is the configuration of `transpose::<OutTime, OutPacket>()`
// (002 L6820-6886): in_rows time steps of packets_per_col packets each form
// an [in_rows × in_cols] matrix (Unpack), which is transposed, trimmed to
// out_rows rows and aligned to 32-byte output packets (002 L6842-6848).
type TransposeConfig struct {
	// ElementBits is the element width: 4, 8, 16 or 32 (002 L6877-6883).
	ElementBits int `json:"element_bits"`
	// InRows is in_rows: the elements of each output row (002 L6844).
	InRows int `json:"in_rows"`
	// PacketsPerCol is packets_per_col: packets per input row
	// (002 L6844, L6901).
	PacketsPerCol int `json:"packets_per_col"`
	// ElementsPerPacket is elements_per_packet: the elements of each input
	// packet the buffer keeps, 16 (4-bit) or 8 (002 L6859-6863).
	ElementsPerPacket int `json:"elements_per_packet"`
	// InCols is in_cols = packets_per_col · elements_per_packet (002 L6844).
	InCols int `json:"in_cols"`
	// OutRows is out_rows ≤ in_cols: the rows kept by Trim (002 L6845-6847,
	// L6886).
	OutRows int `json:"out_rows"`
	// OutputAlignment is output_alignment: elements per 32-byte output
	// packet (002 L6848, L6877-6883).
	OutputAlignment int `json:"output_alignment"`
	// Iterations is n = OutTime::SIZE / out_rows (002 L6901).
	Iterations int `json:"iterations"`
	// DoubleBuffer is true when in_cols ≤ num_buffer_cols (002 L6888-6898).
	DoubleBuffer bool `json:"double_buffer"`
}

// String prints the parameters as the manual's examples list them
// (002 L6925-6930, L6940).
func (c TransposeConfig) String() string {
	buf := "single buffering"
	if c.DoubleBuffer {
		buf = "double buffering"
	}
	return fmt.Sprintf("in_rows = %d, packets_per_col = %d, elements_per_packet = %d, in_cols = %d, out_rows = %d, output_alignment = %d, n = %d, %s",
		c.InRows, c.PacketsPerCol, c.ElementsPerPacket, c.InCols, c.OutRows, c.OutputAlignment, c.Iterations, buf)
}
