package emit

import (
	"fmt"
	"strings"

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

// interSlice reads `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)`
// into st: the stream's Slice and Time become SliceOut and TimeOut (002
// L6584-6585), and the op's enum must be the stream's element type's.
func (r *reader) interSlice(m token, tf []typeArg, st *kernel.Stage, s *stream) bool {
	st.Kind = kernel.StVectorInterSlice
	if !r.nargs(m, tf, 2) {
		return false
	}
	st.Slice, st.Time = r.mapOf(tf[0]), r.mapOf(tf[1])
	a, ok := r.oneRaw(m)
	if !ok {
		return false
	}
	op, d, err := kernel.ParseInterSliceOp(a.text)
	if err != nil {
		r.fail(a.off, "%v", err)
		return false
	}
	if d == 0 {
		r.fail(a.off, "write the op with its enum, %s::%s (002 L6649)", kernel.InterSliceEnum(s.dt), op)
		return false
	}
	if d != s.dt {
		r.fail(a.off, "%s on a %s stream: the op's enum is %s", strings.TrimSpace(a.text), s.dt, kernel.InterSliceEnum(s.dt))
		return false
	}
	st.Param = kernel.InterSliceEnum(d) + "::" + string(op)
	s.slic, s.time = st.Slice, st.Time
	return true
}
