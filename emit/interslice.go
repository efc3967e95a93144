package emit

import (
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// The Inter-Slice Block's call in Rust (002 L6586-6598, L6649, L6667):
// `vector_inter_slice_reduce::<SliceOut, TimeOut>(InterSliceReduceOpI32::AddSat)`,
// the op's enum named by the stream's element type.

// interSliceCall prints the call of stage st on a stream of type dt; tps
// is its printed type parameters.
func interSliceCall(st *kernel.Stage, dt dtype.DType, tps string) (string, error) {
	op, d, err := kernel.ParseInterSliceOp(st.Param)
	if err != nil {
		return "", err
	}
	if d == 0 {
		d = dt
	}
	if !kernel.InterSliceOpFor(d, op) {
		return "", fmt.Errorf("%s is not an op of %s (the stream is %s)", op, kernel.InterSliceEnum(d), dt)
	}
	if st.Slice == nil || st.Time == nil {
		return "", fmt.Errorf("vector_inter_slice_reduce states SliceOut and TimeOut")
	}
	return "vector_inter_slice_reduce" + tps + "(" + kernel.InterSliceEnum(d) + "::" + string(op) + ")", nil
}
