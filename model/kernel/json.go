package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// The JSON form of a program. Mappings are written as the text inside
// m![...] and read back against the program's axes, so a file reads like the
// kernel it describes:
//
//	{"name": "hello-dot", "axes": "A=2048", "chips": 1,
//	 "tensors": [{"name": "lhs", "mem": "hbm", "dtype": "bf16", "role": "input",
//	              "chip": "1", "element": "A", "addr": 0}, ...],
//	 "ops": [{"context": "dma", "kind": "to_dm", "src": "lhs", "dst": "lhs_dm"},
//	         {"context": "main", "kind": "chain", "stages": [
//	             {"kind": "begin", "tensor": "lhs_dm"},
//	             {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "A"}, ...]}]}
//
// Decoding is strict: unknown fields are errors, and every error names the
// JSON path of the offending field.

// ProgramText is a program in its JSON form's words: mappings, types and
// parameters as text. UnmarshalJSON decodes the JSON into it; a builder
// that writes programs as text (search's op kernels) fills it directly and
// calls Program, without the JSON in between.
type ProgramText struct {
	Name      string         `json:"name"`
	Axes      string         `json:"axes"`
	Chips     int            `json:"chips"`
	Tensors   []*TensorText  `json:"tensors"`
	Ops       []*OpText      `json:"ops"`
	Handoff   []*OpText      `json:"handoff,omitempty"`
	Reference *ReferenceText `json:"reference,omitempty"`
}

// ReferenceText is a Reference in text (ProgramText).
type ReferenceText struct {
	Op     RefOp    `json:"op"`
	Inputs []string `json:"inputs"`
	Output string   `json:"output"`
	Scalar float64  `json:"scalar,omitempty"`
	Expr   string   `json:"expr,omitempty"`
	// Epilogue is Reference.Epilogue.
	Epilogue string    `json:"epilogue,omitempty"`
	Range    []float64 `json:"range,omitempty"`
	// Valid is Reference.Valid (encoding/json writes map keys sorted).
	Valid map[string]int `json:"valid,omitempty"`
	// Axis is Reference.Axis.
	Axis string `json:"axis,omitempty"`
}

// TensorText is a Tensor in text (ProgramText).
type TensorText struct {
	Name       string     `json:"name"`
	Mem        Memory     `json:"mem"`
	DType      string     `json:"dtype"`
	Role       Role       `json:"role"`
	Chip       string     `json:"chip,omitempty"`
	Cluster    string     `json:"cluster,omitempty"`
	Slice      string     `json:"slice,omitempty"`
	Row        string     `json:"row,omitempty"`
	Element    string     `json:"element,omitempty"`
	Addr       int64      `json:"addr"`
	TrfAddress TrfAddress `json:"trf_address,omitempty"`
	View       string     `json:"view,omitempty"`
	// Gather is a gathered argument's table and index (Tensor.Gather).
	Gather *Gather `json:"gather,omitempty"`
}

// OpText is an Op in text (ProgramText).
type OpText struct {
	Context Context      `json:"context"`
	Kind    OpKind       `json:"kind"`
	Src     string       `json:"src,omitempty"`
	Dst     string       `json:"dst,omitempty"`
	Stages  []*StageText `json:"stages,omitempty"`
	DMA     *DMACommand  `json:"dma,omitempty"`
	Index   string       `json:"index,omitempty"`
	Scatter bool         `json:"scatter,omitempty"`
}

// StageText is a Stage in text (ProgramText).
type StageText struct {
	Kind   StageKind    `json:"kind"`
	Tensor string       `json:"tensor,omitempty"`
	DType  string       `json:"dtype,omitempty"`
	Time   string       `json:"time,omitempty"`
	Packet string       `json:"packet,omitempty"`
	Slice  string       `json:"slice,omitempty"`
	Axis   string       `json:"axis,omitempty"`
	Param  string       `json:"param,omitempty"`
	Config *StageConfig `json:"config,omitempty"`
}

func text(e *mapping.Expr) string {
	if e == nil {
		return ""
	}
	return e.String()
}

func dtypeText(d dtype.DType) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// MarshalJSON writes the program's JSON form.
func (p *Program) MarshalJSON() ([]byte, error) {
	w := ProgramText{Name: p.Name, Axes: p.Axes.String(), Chips: p.Chips}
	for _, t := range p.Tensors {
		w.Tensors = append(w.Tensors, &TensorText{
			Name: t.Name, Mem: t.Mem, DType: dtypeText(t.DType), Role: t.Role,
			Chip: text(t.Chip), Cluster: text(t.Cluster), Slice: text(t.Slice), Row: text(t.Row),
			Element: text(t.Element), Addr: t.Addr, TrfAddress: t.TrfAddress, View: t.View, Gather: t.Gather,
		})
	}
	for _, op := range p.Ops {
		w.Ops = append(w.Ops, opText(op))
	}
	for _, op := range p.Handoff {
		w.Handoff = append(w.Handoff, opText(op))
	}
	if r := p.Reference; r != nil {
		w.Reference = &ReferenceText{Op: r.Op, Inputs: r.Inputs, Output: r.Output, Scalar: r.Scalar, Expr: r.Expr, Epilogue: r.Epilogue, Range: r.Range, Valid: r.Valid, Axis: r.Axis}
	}
	return json.Marshal(w)
}

// opText writes one op in text.
func opText(op *Op) *OpText {
	o := &OpText{Context: op.Context, Kind: op.Kind, Src: op.Src, Dst: op.Dst, DMA: op.DMA, Index: op.Index, Scatter: op.Scatter}
	for _, s := range op.Stages {
		o.Stages = append(o.Stages, &StageText{
			Kind: s.Kind, Tensor: s.Tensor, DType: dtypeText(s.DType),
			Time: text(s.Time), Packet: text(s.Packet), Slice: text(s.Slice),
			Axis: s.Axis, Param: s.Param, Config: s.Config,
		})
	}
	return o
}

// UnmarshalJSON reads the program's JSON form and validates it.
func (p *Program) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w ProgramText
	if err := dec.Decode(&w); err != nil {
		return err
	}
	q, err := w.Program()
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

// Program parses the text fields and returns the validated program, as
// UnmarshalJSON does; errors name the field's JSON path.
func (w *ProgramText) Program() (*Program, error) {
	axes, err := mapping.ParseAxes(w.Axes)
	if err != nil {
		return nil, fmt.Errorf("axes: %w", err)
	}
	q := Program{Name: w.Name, Axes: axes, Chips: w.Chips}
	r := reader{axes: axes}
	for i, tj := range w.Tensors {
		if tj == nil {
			return nil, fmt.Errorf("tensors[%d]: null", i)
		}
		at := fmt.Sprintf("tensors[%d]", i)
		t := &Tensor{Name: tj.Name, Mem: tj.Mem, Role: tj.Role, Addr: tj.Addr, TrfAddress: tj.TrfAddress, View: tj.View, Gather: tj.Gather}
		t.DType = r.dtype(at+".dtype", tj.DType)
		t.Chip = r.expr(at+".chip", tj.Chip)
		t.Cluster = r.expr(at+".cluster", tj.Cluster)
		t.Slice = r.expr(at+".slice", tj.Slice)
		t.Row = r.expr(at+".row", tj.Row)
		t.Element = r.expr(at+".element", tj.Element)
		q.Tensors = append(q.Tensors, t)
	}
	for _, list := range []struct {
		at  string
		in  []*OpText
		out *[]*Op
	}{{"ops", w.Ops, &q.Ops}, {"handoff", w.Handoff, &q.Handoff}} {
		for i, oj := range list.in {
			if oj == nil {
				return nil, fmt.Errorf("%s[%d]: null", list.at, i)
			}
			op := &Op{Context: oj.Context, Kind: oj.Kind, Src: oj.Src, Dst: oj.Dst, DMA: oj.DMA, Index: oj.Index, Scatter: oj.Scatter}
			for k, sj := range oj.Stages {
				if sj == nil {
					return nil, fmt.Errorf("%s[%d].stages[%d]: null", list.at, i, k)
				}
				at := fmt.Sprintf("%s[%d].stages[%d]", list.at, i, k)
				op.Stages = append(op.Stages, &Stage{
					Kind: sj.Kind, Tensor: sj.Tensor, Axis: sj.Axis, Param: sj.Param, Config: sj.Config,
					DType:  r.dtype(at+".dtype", sj.DType),
					Time:   r.expr(at+".time", sj.Time),
					Packet: r.expr(at+".packet", sj.Packet),
					Slice:  r.expr(at+".slice", sj.Slice),
				})
			}
			*list.out = append(*list.out, op)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if rj := w.Reference; rj != nil {
		q.Reference = &Reference{Op: rj.Op, Inputs: rj.Inputs, Output: rj.Output, Scalar: rj.Scalar, Expr: rj.Expr, Epilogue: rj.Epilogue, Range: rj.Range, Valid: rj.Valid, Axis: rj.Axis}
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return &q, nil
}

// reader parses the text fields of a program, keeping the first error.
type reader struct {
	axes mapping.Axes
	err  error
}

func (r *reader) expr(at, src string) *mapping.Expr {
	if src == "" || r.err != nil {
		return nil
	}
	e, err := mapping.Parse(src, r.axes, nil)
	if err != nil {
		r.err = fmt.Errorf("%s: %q: %w", at, src, err)
		return nil
	}
	return e
}

func (r *reader) dtype(at, src string) dtype.DType {
	if src == "" || r.err != nil {
		return 0
	}
	d, err := dtype.Parse(src)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", at, err)
	}
	return d
}
