package workload

import (
	"fmt"
	"slices"

	"tcpmap/model/dtype"
)

// Epilogues (issue 15 §2): elementwise work on a contraction's result done
// by the contraction's own kernel, in the main chain's Vector Engine pass
// between the accumulator and the commit (002 L4549-4560: the Vector
// Engine sits between the Contraction Engine's Reducer and the Commit
// Engine; the manual's prefill attention scales the scores by 1/sqrt(d_k)
// there, "constant multiplication" in the Vector Engine, 002 L8087-8089).
// A fused op's input is never written to memory.

// IsEpilogue reports whether op can run as an epilogue of the contraction
// that produces its first input: a float op of one tensor input (a
// constant for the other: add, sub, mul; or exp, sigmoid, silu; or a
// cast), or an add, sub, mul or causal mask of its first input and a
// second float tensor over some of the output's axes (EpilogueOperand,
// broadcast over the others: a mask over the heads), whose
// output has the first input's axes. The Vector Engine's Float cluster
// does each on f32 lanes (002 L4893-4900), the second tensor read from
// the VRF per position as an op kernel's second input is (002 L5066-5079);
// a cast is the main chain's own cast of the accumulator to the output
// type (002 L306), so it ends an epilogue.
func IsEpilogue(w *Workload, op *Op) bool {
	switch op.Kind {
	case KindAdd, KindSub, KindMul:
		if op.Scalar == nil && len(op.Inputs) != 2 || op.Scalar != nil && len(op.Inputs) != 1 {
			return false
		}
	case KindCausalMask:
		if len(op.Inputs) != 2 {
			return false // without its mask: no kernel
		}
	case KindExp, KindSigmoid, KindSiLU, KindCast:
		if len(op.Inputs) != 1 {
			return false
		}
	default:
		return false
	}
	if len(op.Outputs) != 1 {
		return false
	}
	in, out := w.Tensor(op.Inputs[0]), w.Tensor(op.Outputs[0])
	if in == nil || out == nil || !in.DType.IsFloat() || !out.DType.IsFloat() || !slices.Equal(in.Axes, out.Axes) {
		return false
	}
	if y := EpilogueOperand(op); y != "" {
		t := w.Tensor(y)
		if t == nil || y == op.Inputs[0] || !t.DType.IsFloat() || !isSubset(t.Axes, out.Axes) {
			return false
		}
	}
	return true
}

// isSubset reports whether every axis of a is one of b's.
func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// EpilogueOperand returns the tensor an epilogue op reads besides the
// value it transforms (its second input: a causal mask's mask, the other
// term of an add), or "" for an op of one tensor. A fused einsum lists
// each such tensor among its inputs, after the contraction's two (Fuse).
func EpilogueOperand(op *Op) string {
	if len(op.Inputs) == 2 && op.Scalar == nil {
		return op.Inputs[1]
	}
	return ""
}

// Fusion is one contraction with the ops fused into it, in order: each
// fused op reads the one before's output (the first reads the
// contraction's).
type Fusion struct {
	Einsum string
	Ops    []string
}

// Fusions lists the epilogues a graph offers: for each einsum whose f32
// output is read by exactly one op that IsEpilogue and is not a graph
// output, the longest such chain (an einsum → scale; gate_proj → silu),
// which ends at a cast (the Vector Engine computes in f32: a value
// rounded to a narrower type in the chain's middle would not be).
// Program order.
func Fusions(w *Workload) []Fusion {
	consumers := map[string][]*Op{}
	for _, o := range w.Ops {
		for _, t := range o.Inputs {
			consumers[t] = append(consumers[t], o)
		}
	}
	var out []Fusion
	for k, o := range w.Ops {
		if o.Kind != KindEinsum || len(o.Outputs) != 1 || len(o.Epilogue) > 0 {
			continue
		}
		f := Fusion{Einsum: o.Name}
		t := o.Outputs[0]
		reads := slices.Clone(o.Inputs) // the kernel's arguments: distinct tensors
		for {
			tt := w.Tensor(t)
			cs := consumers[t]
			if tt == nil || tt.Role == RoleOutput || tt.DType != dtype.F32 || len(cs) != 1 || !IsEpilogue(w, cs[0]) ||
				cs[0].Inputs[0] != t || !producedBefore(w, EpilogueOperand(cs[0]), k) {
				break
			}
			if y := EpilogueOperand(cs[0]); y != "" {
				if slices.Contains(reads, y) {
					break
				}
				reads = append(reads, y)
			}
			f.Ops = append(f.Ops, cs[0].Name)
			t = cs[0].Outputs[0]
			if cs[0].Kind == KindCast {
				break
			}
		}
		if len(f.Ops) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// producedBefore reports whether tensor t ("" for none) is ready before
// op k runs: no op, or one before k, writes it. A fused einsum reads its
// epilogue's operand where the einsum stands.
func producedBefore(w *Workload, t string, k int) bool {
	if t == "" {
		return true
	}
	for i, o := range w.Ops {
		if slices.Contains(o.Outputs, t) {
			return i < k
		}
	}
	return true
}

// FuseOp returns w with the epilogue Fusions offers for the einsum op
// fused into it (Fuse), or an error saying why there is none.
func FuseOp(w *Workload, einsum string) (*Workload, error) {
	for _, f := range Fusions(w) {
		if f.Einsum == einsum {
			return Fuse(w, []Fusion{f})
		}
	}
	return nil, fmt.Errorf("op %q has no epilogue to fuse (an einsum whose f32 output only one float add, sub or mul by a constant or by a tensor over its axes, causal mask, exp, sigmoid, silu or cast reads)", einsum)
}

// Fuse returns a copy of w in which each fusion's einsum carries its ops as
// its Epilogue and writes the last one's output, and reads, after the
// contraction's two inputs, each epilogue op's tensor operand
// (EpilogueOperand); the fused ops and the tensors between them are gone.
// w is not changed.
func Fuse(w *Workload, fs []Fusion) (*Workload, error) {
	c := *w
	c.Ops = slices.Clone(w.Ops)
	c.Tensors = slices.Clone(w.Tensors)
	drop := map[string]bool{}
	dropT := map[string]bool{}
	for _, f := range fs {
		k := slices.IndexFunc(c.Ops, func(o *Op) bool { return o.Name == f.Einsum })
		if k < 0 || c.Ops[k].Kind != KindEinsum || len(c.Ops[k].Outputs) != 1 {
			return nil, fmt.Errorf("%s: fuse: no einsum op %q", w.File, f.Einsum)
		}
		e := *c.Ops[k]
		e.Epilogue = nil
		for _, name := range f.Ops {
			o := findOp(w, name)
			if o == nil || !IsEpilogue(w, o) {
				return nil, fmt.Errorf("%s: fuse: op %q is not an epilogue (a float add, sub or mul by a constant or by a tensor over its axes, causal mask, exp, sigmoid, silu or cast)", w.File, name)
			}
			if o.Inputs[0] != e.Outputs[0] {
				return nil, fmt.Errorf("%s: fuse: op %q reads %s, not %s", w.File, name, o.Inputs[0], e.Outputs[0])
			}
			if y := EpilogueOperand(o); !producedBefore(w, y, k) {
				return nil, fmt.Errorf("%s: fuse: op %q reads %s, written after %s", w.File, name, y, f.Einsum)
			}
			if y := EpilogueOperand(o); y != "" && slices.Contains(e.Inputs, y) {
				return nil, fmt.Errorf("%s: fuse: op %q reads %s, which the kernel reads already", w.File, name, y)
			}
			if n := len(e.Epilogue); n > 0 && e.Epilogue[n-1].Kind == KindCast {
				return nil, fmt.Errorf("%s: fuse: op %q follows the cast %s: a cast ends an epilogue", w.File, name, e.Epilogue[n-1].Name)
			}
			for _, x := range w.Ops {
				if x != o && slices.Contains(x.Inputs, e.Outputs[0]) {
					return nil, fmt.Errorf("%s: fuse: %s is read by %s too", w.File, e.Outputs[0], x.Name)
				}
			}
			if t := w.Tensor(e.Outputs[0]); t == nil || t.Role == RoleOutput {
				return nil, fmt.Errorf("%s: fuse: %s is a graph output", w.File, e.Outputs[0])
			}
			dropT[e.Outputs[0]] = true
			drop[name] = true
			e.Epilogue = append(e.Epilogue, o)
			e.Outputs = []string{o.Outputs[0]}
			if y := EpilogueOperand(o); y != "" {
				e.Inputs = append(slices.Clone(e.Inputs), y)
			}
		}
		c.Ops[k] = &e
	}
	c.Ops = slices.DeleteFunc(c.Ops, func(o *Op) bool { return drop[o.Name] })
	c.Tensors = slices.DeleteFunc(c.Tensors, func(t *Tensor) bool { return dropT[t.Name] })
	return &c, nil
}

func findOp(w *Workload, name string) *Op {
	for _, o := range w.Ops {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// ProductOp returns, for an einsum op that contracts no axis — every axis
// of its two inputs is an output axis, as the MoE block's weighting
// `T K D, T K -> T K D` (002 L8705) — the same op as an elementwise
// multiply of float tensors (kind mul, one input broadcast over the axes
// it lacks), which the Vector Engine computes at one multiply a lane
// where the Contraction Engine's reduction would sum one term. It returns
// nil for any other op (a contraction, an einsum with an epilogue, an
// integer tensor, an output axis neither input holds).
func ProductOp(w *Workload, o *Op) *Op {
	if o.Kind != KindEinsum || o.Einsum == nil || len(o.Inputs) != EinsumArity || len(o.Outputs) != 1 || len(o.Epilogue) > 0 {
		return nil
	}
	out := w.Tensor(o.Outputs[0])
	if out == nil || !out.DType.IsFloat() {
		return nil
	}
	seen := map[string]bool{}
	for _, name := range o.Inputs {
		t := w.Tensor(name)
		if t == nil || !t.DType.IsFloat() {
			return nil
		}
		for _, a := range t.Axes {
			if !slices.Contains(out.Axes, a) {
				return nil
			}
			seen[a] = true
		}
	}
	for _, a := range out.Axes {
		if !seen[a] {
			return nil
		}
	}
	m := *o
	m.Kind = KindMul
	m.Einsum = nil
	return &m
}
