package search

import (
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/workload"
)

// planVectorOp plans a non-einsum op over its mapspace.
func planVectorOp(w *workload.Workload, o *workload.Op, spec *engines.Spec, opts Options) (*OpResult, error) {
	return nil, fmt.Errorf("%s:%d: op %s: kind %s is not planned yet", w.File, o.Line, o.Name, o.Kind)
}
