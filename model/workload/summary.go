package workload

import "tcpmap/model/dtype"

// FLOPs is the workload's arithmetic count: the sum of its ops' FLOPs (an
// einsum counts 2 per multiply-accumulate, a vector op 1 per point of its
// iteration space, a data op 0; see Op.FLOPs).
func (w *Workload) FLOPs() int64 {
	var n int64
	for _, op := range w.Ops {
		n += op.FLOPs()
	}
	return n
}

// MinBytes is the least HBM traffic the workload needs: every input tensor
// read once and every output tensor written once, at its dtype's width
// (i4 is half a byte, 002 L2231); intermediates may stay on chip. An
// update_slice writes only its slice (its output is its destination
// updated in place), whether or not a later op reads the result.
func (w *Workload) MinBytes() int64 {
	var n int64
	for _, t := range w.Tensors {
		if t.Role == RoleInput || t.Role == RoleOutput && !w.updatedInPlace(t.Name) {
			n += bytesOf(t)
		}
	}
	for _, op := range w.Ops {
		if op.Kind == KindUpdateSlice {
			n += bytesOf(w.Tensor(op.Inputs[1]))
		}
	}
	return n
}

func (w *Workload) updatedInPlace(name string) bool {
	for _, op := range w.Ops {
		if op.Kind == KindUpdateSlice && op.Outputs[0] == name {
			return true
		}
	}
	return false
}

// bytesOf is the tensor's size in bytes; validation guarantees whole bytes.
func bytesOf(t *Tensor) int64 {
	return t.Elems * int64(t.DType.SizeBits()) / 8
}

// Summary is what `tcpmap workload check` prints for a valid workload.
type Summary struct {
	File     string      `json:"file"`
	Name     string      `json:"name"`
	Form     Form        `json:"kind"`
	Chips    int         `json:"chips"`
	Ops      int         `json:"ops"`
	OpKinds  []KindCount `json:"op_kinds"`
	Einsum   string      `json:"einsum,omitempty"` // single-einsum form
	Axes     []AxisSize  `json:"axes"`
	FLOPs    int64       `json:"flops"`
	MinBytes int64       `json:"min_bytes"`
	DTypes   []DTypeUse  `json:"dtypes"`
	Inputs   []string    `json:"inputs"`
	Outputs  []string    `json:"outputs"`
}

// KindCount is how many ops of one kind a workload has.
type KindCount struct {
	Kind  Kind `json:"kind"`
	Count int  `json:"count"`
}

// DTypeUse is one element type and what uses it: for a single einsum the
// roles "in", "acc", "out"; for a graph the tensors of that type.
type DTypeUse struct {
	DType dtype.DType `json:"dtype"`
	Role  string      `json:"role,omitempty"`
	Used  []string    `json:"tensors,omitempty"`
}

// Summary collects the facts `workload check` reports, in a deterministic
// order (declaration order, kinds by first appearance).
func (w *Workload) Summary() Summary {
	s := Summary{File: w.File, Name: w.Name, Form: w.Form, Chips: w.Chips, Ops: len(w.Ops),
		Axes: []AxisSize{}, FLOPs: w.FLOPs(), MinBytes: w.MinBytes(),
		Inputs: []string{}, Outputs: []string{}}
	for _, a := range w.Axes.List() {
		s.Axes = append(s.Axes, AxisSize{Name: a.Name, Size: int64(a.Size)})
	}
	for _, op := range w.Ops {
		found := false
		for i := range s.OpKinds {
			if s.OpKinds[i].Kind == op.Kind {
				s.OpKinds[i].Count++
				found = true
			}
		}
		if !found {
			s.OpKinds = append(s.OpKinds, KindCount{op.Kind, 1})
		}
	}
	if w.Form == FormEinsum && len(w.Ops) == 1 {
		s.Einsum = w.Ops[0].Einsum.String()
	}
	if w.DTypes != nil {
		s.DTypes = []DTypeUse{{DType: w.DTypes.In, Role: "in"}, {DType: w.DTypes.Acc, Role: "acc"}, {DType: w.DTypes.Out, Role: "out"}}
	} else {
		for _, t := range w.Tensors {
			found := false
			for i := range s.DTypes {
				if s.DTypes[i].DType == t.DType {
					s.DTypes[i].Used = append(s.DTypes[i].Used, t.Name)
					found = true
				}
			}
			if !found {
				s.DTypes = append(s.DTypes, DTypeUse{DType: t.DType, Used: []string{t.Name}})
			}
		}
	}
	for _, t := range w.Tensors {
		switch t.Role {
		case RoleInput:
			s.Inputs = append(s.Inputs, t.Name)
		case RoleOutput:
			s.Outputs = append(s.Outputs, t.Name)
		}
	}
	return s
}
