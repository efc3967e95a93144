package workload

import "tcpmap/model/pos"

// Error is one problem found in a workload file (a pos.Error): the file,
// the position (1-based line and column of the offending YAML node, or of
// the offending character inside an einsum string) and the field, written
// as a path such as "ops[2].inputs[1]" or "tensors.q.dtype". It formats as
// "file:line:col: field: msg".
type Error = pos.Error

// ErrorList is every problem found in one workload file, in the order the
// validator met them (document order for field errors, op order for graph
// errors). Parse and Load return it as their error when the file is invalid.
type ErrorList = pos.ErrorList
