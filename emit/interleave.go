package emit

import (
	"tcpmap/model/kernel"
)

// Interleaved fetch in Rust (002 L1866):
// `ctx.main.begin_interleaved::<I, _, _, _, _, _>(lhs.view(), rhs.view())`.

// beginCall prints a begin stage: begin(dm.view()) (002 L205), or
// begin_interleaved for an interleaved one.
func beginCall(st *kernel.Stage) (string, error) {
	b, err := kernel.ParseBeginInterleave(st.Param)
	if err != nil {
		return "", err
	}
	if b == nil {
		return "begin(" + st.Tensor + ".view())", nil
	}
	return "begin_interleaved::<" + b.Axis + ", _, _, _, _, _>(" + st.Tensor + ".view(), " + b.Tensor + ".view())", nil
}
