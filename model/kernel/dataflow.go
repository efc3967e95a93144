package kernel

import (
	"fmt"
	"strings"
)

// FieldError is an error at one field of a program, named by its path in
// the program's JSON form: `tensors[3].addr`, `ops[2].stages[1]`. Readers
// of a file turn the path into the line of the field.
type FieldError struct {
	// Path is the field's JSON path (`ops[2].stages[1].tensor`).
	Path string
	Err  error
}

// Error prints `path: error`.
func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the error at the field.
func (e *FieldError) Unwrap() error { return e.Err }

// FieldPath returns Path; a reader locating errors in a file asks for it.
func (e *FieldError) FieldPath() string { return e.Path }

// Access is one read or write of a tensor by an op, in program order.
type Access struct {
	// Op and Stage locate the access: the op's index, and the stage's
	// index within a chain (-1 for a DMA op's source or destination).
	Op, Stage int
	// Tensor names the tensor; Write is set when the access writes it.
	Tensor string
	Write  bool
}

// Path is the access's JSON path: `ops[2].stages[1].tensor`, or
// `ops[0].src` / `ops[0].dst` for a DMA op.
func (a Access) Path() string {
	switch {
	case a.Stage >= 0:
		return fmt.Sprintf("ops[%d].stages[%d].tensor", a.Op, a.Stage)
	case a.Write:
		return fmt.Sprintf("ops[%d].dst", a.Op)
	}
	return fmt.Sprintf("ops[%d].src", a.Op)
}

// Accesses lists the tensor reads and writes of every op in program order:
// a DMA op reads its source and writes its destination; a chain reads the
// tensors of begin, align and the Vector Engine's VRF operands and writes those of to_trf, to_vrf
// and commit (its terminal stage).
func (p *Program) Accesses() []Access {
	var out []Access
	for i, op := range p.Ops {
		if op == nil {
			continue
		}
		switch op.Kind {
		case OpToDM, OpToHBM, OpDMToDM, OpHBMToHBM:
			out = append(out, Access{Op: i, Stage: -1, Tensor: op.Src})
			if op.Index != "" {
				out = append(out, Access{Op: i, Stage: -1, Tensor: op.Index})
			}
			out = append(out, Access{Op: i, Stage: -1, Tensor: op.Dst, Write: true})
		case OpChain:
			for k, st := range op.Stages {
				if st == nil {
					continue
				}
				if st.Kind.ReadsVRF() && st.Tensor != "" {
					out = append(out, Access{Op: i, Stage: k, Tensor: st.Tensor})
				}
				switch st.Kind {
				case StBegin, StAlign:
					out = append(out, Access{Op: i, Stage: k, Tensor: st.Tensor})
					if rhs := st.InterleavedTensor(); rhs != "" {
						out = append(out, Access{Op: i, Stage: k, Tensor: rhs})
					}
				case StToTRF, StToVRF, StCommit:
					out = append(out, Access{Op: i, Stage: k, Tensor: st.Tensor, Write: true})
				}
			}
		}
	}
	return out
}

// CheckDataflow checks that the program reads no tensor before it holds
// data: every DM, TRF and VRF tensor, and every intermediate HBM tensor
// that is not a tile view of an argument, is written by an earlier op than
// the first op that reads it. (The kernel's HBM arguments hold the host's
// data from the start, and so does a DM tensor a to_dm handoff names; a
// chain reads its inputs before it writes its
// result, so a chain reading and writing one tensor reads it unwritten.)
// The error is a *FieldError at the first offending read.
func (p *Program) CheckDataflow() error {
	mem := map[string]*Tensor{}
	for _, t := range p.Tensors {
		if t != nil {
			mem[t.Name] = t
		}
	}
	written := map[string]int{} // tensor → first op writing it
	for _, op := range p.Handoff {
		if op.Kind == OpToDM {
			written[op.Dst] = -1 // the previous kernel left it (Handoff)
		}
	}
	for _, a := range p.Accesses() {
		t, ok := mem[a.Tensor]
		if !ok {
			continue // Validate reports unknown tensors
		}
		if a.Write {
			if _, ok := written[a.Tensor]; !ok {
				written[a.Tensor] = a.Op
			}
			continue
		}
		if t.Mem == HBM && (t.Role != Intermediate || t.View != "") {
			continue
		}
		if _, ok := written[a.Tensor]; ok {
			continue
		}
		if later := p.firstWrite(a.Tensor, a.Op); later >= 0 {
			return &FieldError{Path: a.Path(), Err: fmt.Errorf("reads %s tensor %q before ops[%d] writes it", memName(t.Mem), t.Name, later)}
		}
		return &FieldError{Path: a.Path(), Err: fmt.Errorf("reads %s tensor %q, which no op writes", memName(t.Mem), t.Name)}
	}
	return nil
}

// firstWrite returns the first op at or after op that writes tensor, or -1.
func (p *Program) firstWrite(tensor string, op int) int {
	for _, a := range p.Accesses() {
		if a.Write && a.Tensor == tensor && a.Op >= op {
			return a.Op
		}
	}
	return -1
}

// memName is a memory's name as the manual writes it: DM, TRF, VRF, HBM.
func memName(m Memory) string { return strings.ToUpper(string(m)) }
