package search

import (
	"fmt"
	"strconv"
	"strings"

	"tcpmap/model/kernel"
)

// The kernel text of a Vector Engine op: the builder writes the program in
// model/kernel's JSON form (the form of workloads/kernels/*.json, whose
// softmax, rmsnorm and silu kernels are the hand-written instances of the
// templates below) and decodes it, so every program goes through the
// decoder's validation before engines.Lower judges it.

// kProg and the types below are the JSON form of a kernel program.
type kProg struct {
	Name      string     `json:"name"`
	Axes      string     `json:"axes"`
	Chips     int        `json:"chips"`
	Tensors   []kTensor  `json:"tensors"`
	Ops       []kOp      `json:"ops"`
	Reference kReference `json:"reference"`
}

type kTensor struct {
	Name    string `json:"name"`
	Mem     string `json:"mem"`
	DType   string `json:"dtype"`
	Role    string `json:"role"`
	Chip    string `json:"chip"`
	Cluster string `json:"cluster,omitempty"`
	Slice   string `json:"slice,omitempty"`
	Element string `json:"element"`
	Addr    int64  `json:"addr"`
	View    string `json:"view,omitempty"`
	// tile is a view's tile index.
	tile int
}

type kOp struct {
	Context string   `json:"context"`
	Kind    string   `json:"kind"`
	Src     string   `json:"src,omitempty"`
	Dst     string   `json:"dst,omitempty"`
	Index   string   `json:"index,omitempty"`
	Scatter bool     `json:"scatter,omitempty"`
	Stages  []kStage `json:"stages,omitempty"`
}

type kStage struct {
	Kind   string `json:"kind"`
	Tensor string `json:"tensor,omitempty"`
	DType  string `json:"dtype,omitempty"`
	Time   string `json:"time,omitempty"`
	Packet string `json:"packet,omitempty"`
	Axis   string `json:"axis,omitempty"`
	Param  string `json:"param,omitempty"`
}

type kReference struct {
	Op     string    `json:"op"`
	Inputs []string  `json:"inputs"`
	Output string    `json:"output"`
	Expr   string    `json:"expr"`
	Range  []float64 `json:"range,omitempty"`
	Axis   string    `json:"axis,omitempty"`
}

// program parses the text form into a kernel program, as the JSON form
// would be read (kernel.ProgramText), without the JSON in between.
func (k *kProg) program() (*kernel.Program, error) {
	w := kernel.ProgramText{Name: k.Name, Axes: k.Axes, Chips: k.Chips,
		Tensors: make([]*kernel.TensorText, 0, len(k.Tensors)), Ops: make([]*kernel.OpText, 0, len(k.Ops))}
	for _, t := range k.Tensors {
		w.Tensors = append(w.Tensors, &kernel.TensorText{Name: t.Name, Mem: kernel.Memory(t.Mem), DType: t.DType, Role: kernel.Role(t.Role),
			Chip: t.Chip, Cluster: t.Cluster, Slice: t.Slice, Element: t.Element, Addr: t.Addr, View: t.View})
	}
	for _, o := range k.Ops {
		op := &kernel.OpText{Context: kernel.Context(o.Context), Kind: kernel.OpKind(o.Kind), Src: o.Src, Dst: o.Dst, Index: o.Index, Scatter: o.Scatter}
		for _, st := range o.Stages {
			op.Stages = append(op.Stages, &kernel.StageText{Kind: kernel.StageKind(st.Kind), Tensor: st.Tensor, DType: st.DType,
				Time: st.Time, Packet: st.Packet, Axis: st.Axis, Param: st.Param})
		}
		w.Ops = append(w.Ops, op)
	}
	r := k.Reference
	w.Reference = &kernel.ReferenceText{Op: kernel.RefOp(r.Op), Inputs: r.Inputs, Output: r.Output, Expr: r.Expr, Range: r.Range, Axis: r.Axis}
	return w.Program()
}

// digit is one digit of a tensor's row-major index: (axis / div) % size
// of an axis of size full.
type digit struct {
	axis            string
	full, div, size int
}

// text spells the digit as a mapping expression term.
func (d digit) text() string {
	switch {
	case d.div == 1 && d.size == d.full:
		return d.axis
	case d.div*d.size == d.full:
		return fmt.Sprintf("%s / %d", d.axis, d.div)
	case d.div == 1:
		return fmt.Sprintf("%s %% %d", d.axis, d.size)
	}
	return fmt.Sprintf("%s / %d %% %d", d.axis, d.div, d.size)
}

// digitsText joins digits into an expression; none is "1".
func digitsText(ds []digit) string {
	if len(ds) == 0 {
		return "1"
	}
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.text()
	}
	return strings.Join(s, ", ")
}

// digitsSize is the product of the digits' sizes.
func digitsSize(ds []digit) int {
	n := 1
	for _, d := range ds {
		n *= d.size
	}
	return n
}

// peel splits the leading (most significant) factor f off the digits:
// outer holds f positions, rest the others. It fails when f does not
// divide the digits at a digit boundary or within one digit.
func peel(ds []digit, f int) (outer, rest []digit, ok bool) {
	rest = ds
	for f > 1 {
		if len(rest) == 0 {
			return nil, nil, false
		}
		d := rest[0]
		switch {
		case f%d.size == 0:
			outer = append(outer, d)
			rest = rest[1:]
			f /= d.size
		case d.size%f == 0:
			in := d.size / f
			outer = append(outer, digit{d.axis, d.full, d.div * in, f})
			rest = append([]digit{{d.axis, d.full, d.div, in}}, rest[1:]...)
			f = 1
		default:
			return nil, nil, false
		}
	}
	return outer, append([]digit(nil), rest...), true
}

// withPacket splits the innermost digit ds[len-1] (which must be an axis's
// innermost part) into a Time part of size/lanes and a Packet part of
// lanes: the fetch's `time` and `packet` of a stream over ds.
func withPacket(ds []digit, lanes int) (time, packet []digit, ok bool) {
	if len(ds) == 0 {
		return nil, nil, false
	}
	last := ds[len(ds)-1]
	if last.div != 1 || last.size%lanes != 0 {
		return nil, nil, false
	}
	time = append([]digit(nil), ds[:len(ds)-1]...)
	if last.size > lanes {
		time = append(time, digit{last.axis, last.full, lanes, last.size / lanes})
	}
	return time, []digit{{last.axis, last.full, 1, lanes}}, true
}

// f32Text spells a constant as the kernel's f32 immediate (`0.5f32`).
func f32Text(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 32)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s + "f32"
}

// alignUp rounds n up to a multiple of a.
func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
