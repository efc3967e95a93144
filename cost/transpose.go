package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Transpose Engine cost (002 L6887-6912).

// TransposeCycles is the manual's cycle calculation (002 L6899-6912):
// input_flits_per_iter = in_rows × packets_per_col, output_flits_per_iter =
// out_rows, over n iterations. Double buffering overlaps input and output,
// max(in, out) per iteration, after filling the first buffer and before
// draining the last: in + (n − 1)·max(in, out) + out. Single buffering
// alternates them: n·(in + out).
func TransposeCycles(inRows, packetsPerCol, outRows, n int, double bool) (int, error) {
	if inRows <= 0 || packetsPerCol <= 0 || outRows <= 0 || n < 0 {
		return 0, fmt.Errorf("cost: transpose with in_rows %d, packets_per_col %d, out_rows %d, n %d", inRows, packetsPerCol, outRows, n)
	}
	if n == 0 {
		return 0, nil
	}
	in, out := inRows*packetsPerCol, outRows
	if double {
		return in + (n-1)*max(in, out) + out, nil
	}
	return n * (in + out), nil
}

// TransposeDoubleBuffered reports the buffering mode: double buffering when
// in_cols ≤ num_buffer_cols (16), single otherwise (002 L6888-6896).
func TransposeDoubleBuffered(spec *engines.Spec, inCols int) bool {
	return inCols <= spec.Transpose.BufferCols.Value
}

// Transpose prices a lowered transpose.
func Transpose(spec *engines.Spec, c *kernel.TransposeConfig) (int, error) {
	if spec == nil || c == nil {
		return 0, errors.New("cost: Transpose: nil spec or configuration")
	}
	if c.DoubleBuffer != TransposeDoubleBuffered(spec, c.InCols) {
		return 0, fmt.Errorf("cost: Transpose: in_cols %d with num_buffer_cols %d means double buffering %v, the configuration says %v (002 L6888-6891)",
			c.InCols, spec.Transpose.BufferCols.Value, !c.DoubleBuffer, c.DoubleBuffer)
	}
	return TransposeCycles(c.InRows, c.PacketsPerCol, c.OutRows, c.Iterations, c.DoubleBuffer)
}
