package plan

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"tcpmap/model/workload"

	"tcpmap/internal/atomicfile"
	"tcpmap/model/kernel"
)

// GraphVersion is the graph plan file format's version.
const GraphVersion = 1

// GraphKind is the Kind field of a graph plan: it tells a graph plan from
// a single-op plan (which has no kind) by content.
const GraphKind = "graph"

// Op statuses of a graph plan (GraphOp.Status).
const (
	// StatusPlanned: the op has a kernel (GraphOp.Plan).
	StatusPlanned = "planned"
	// StatusView: the op moves no data (a reshape that regroups the axes
	// of a row-major tensor); no kernel runs.
	StatusView = "view"
	// StatusNotPlannable: no planner maps the op's kind yet; it has no
	// kernel and no cost, and the graph's totals leave it out (counted in
	// GraphCost.NotPlannable).
	StatusNotPlannable = "not yet plannable"
	// StatusFused: the op's work runs in another op's kernel (GraphOp.
	// FusedInto), as that kernel's epilogue (GraphOp.Epilogue) or, for a
	// gather, in its loads (GraphOp.Prologue): no kernel and no cost of
	// its own.
	StatusFused = "fused"
)

// Tensor places (GraphTensor.Place).
const (
	PlaceHBM = "hbm" // written to HBM by its producer, read from HBM by its consumers
	PlaceDM  = "dm"  // left in DM across the kernel boundary
	// PlaceFused: a tensor between a kernel's contraction and its
	// epilogue, or between two ops of one epilogue: never stored
	// anywhere (no layout, no HBM region); or a gather's output that its
	// consumer's loads read through the gather's index (GraphOp.Prologue):
	// stored nowhere either, but given an HBM region its kernel's loads
	// are derived at (no byte of it is written or read).
	PlaceFused = "fused"
)

// Graph is a planned graph workload: for every op its plan (a kernel, a
// view, or not yet plannable), for every tensor where it lives, its layout
// and the relayouts between its producer and its consumers, the totals,
// and how the layouts were chosen. Like Plan it is plain data with a
// deterministic JSON form.
type Graph struct {
	// Version is GraphVersion; Kind is GraphKind.
	Version int    `json:"version"`
	Kind    string `json:"kind"`
	// Workload names the graph planned.
	Workload GraphWorkload `json:"workload"`
	// Ops are the graph's ops in program order (the order they run).
	Ops []GraphOp `json:"ops"`
	// Expansions are the workload's ops that other ops compute in the
	// plan (workload.Expand), in the workload's order; none when every
	// op is planned as itself.
	Expansions []GraphExpansion `json:"expansions,omitempty"`
	// Tensors are the graph's tensors in declaration order.
	Tensors []GraphTensor `json:"tensors"`
	// Cost is the graph's total under the cost model.
	Cost GraphCost `json:"cost"`
	// Search says how the layouts were chosen.
	Search GraphSearch `json:"search"`
}

// GraphWorkload identifies the planned graph.
type GraphWorkload struct {
	File string `json:"file,omitempty"`
	Name string `json:"name"`
	// Axes are the graph's axis sizes (`B=1, D=8192`), declaration order.
	Axes  string `json:"axes"`
	Chips int    `json:"chips"`
}

// GraphOp is one op of a graph plan.
type GraphOp struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Status is StatusPlanned, StatusView or StatusNotPlannable; Reason
	// says why an op is not plannable.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Inputs and Outputs name the op's tensors (GraphTensor.Name).
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	// The op's parameters, as the workload states them (workload.Op): the
	// axis of softmax, rmsnorm, update_slice; the axes of gather; the two
	// axes of causal_mask; the constant standing for the last input.
	Axis   string   `json:"axis,omitempty"`
	Axes   []string `json:"axes,omitempty"`
	Query  string   `json:"query,omitempty"`
	Key    string   `json:"key,omitempty"`
	K      string   `json:"k,omitempty"`
	Reduce string   `json:"op,omitempty"`
	Scalar *float64 `json:"scalar,omitempty"`
	// Layouts gives the HBM layout the op's kernel reads each input in and
	// writes each output in (inputs first, then outputs; mapping
	// expressions, `m![S, D]`).
	Layouts []string `json:"layouts"`
	// Start is the op's first cycle in the graph's sequential schedule
	// (its relayouts run just before it), Cycles its kernel's cycles (0
	// for a view or an op that is not plannable).
	Start  float64 `json:"start"`
	Cycles float64 `json:"cycles"`
	// Plan is the op's kernel plan (StatusPlanned only).
	Plan *Plan `json:"plan,omitempty"`
	// Epilogue names the ops (status StatusFused) the op's kernel does
	// after its contraction, in order: the kernel writes the last one's
	// output (Plan.Workload.Epilogue is the same list).
	Epilogue []string `json:"epilogue,omitempty"`
	// FusedInto names the op whose kernel does this op's work
	// (StatusFused only).
	FusedInto string `json:"fused_into,omitempty"`
	// Prologue names the gathers (status StatusFused) whose outputs the
	// op's kernel reads through their indices in its own loads: the
	// kernel's program holds each output as a gathered argument
	// (kernel.Tensor.Gather) of the gather's table and index.
	Prologue []string `json:"prologue,omitempty"`
	// ExpandedFrom, on an op the planner put in place of one of the
	// workload's (Graph.Expansions), names that op.
	ExpandedFrom string `json:"expanded_from,omitempty"`
}

// GraphExpansion is an op of the workload that the plan computes with
// other ops (workload.Expand): the op as the workload states it and the
// parts that compute its outputs, in program order. verify checks that
// the parts' reference equals the op's.
type GraphExpansion struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	Axis    string   `json:"axis,omitempty"`
	Axes    []string `json:"axes,omitempty"`
	Query   string   `json:"query,omitempty"`
	Key     string   `json:"key,omitempty"`
	K       string   `json:"k,omitempty"`
	Reduce  string   `json:"op,omitempty"`
	Scalar  *float64 `json:"scalar,omitempty"`
	// Parts are the ops in its place (each with ExpandedFrom its name).
	Parts []string `json:"parts"`
}

// Expansion is op (its name, kind, operands and parameters) computed by
// parts.
func Expansion(op GraphOp, parts []string) GraphExpansion {
	return GraphExpansion{Name: op.Name, Kind: op.Kind, Inputs: op.Inputs, Outputs: op.Outputs, Axis: op.Axis, Axes: op.Axes,
		Query: op.Query, Key: op.Key, K: op.K, Reduce: op.Reduce, Scalar: op.Scalar, Parts: parts}
}

// Op is the expansion's op as a GraphOp (its kind and parameters), for
// the reference.
func (x *GraphExpansion) Op() *GraphOp {
	return &GraphOp{Name: x.Name, Kind: x.Kind, Inputs: x.Inputs, Outputs: x.Outputs, Axis: x.Axis, Axes: x.Axes,
		Query: x.Query, Key: x.Key, K: x.K, Reduce: x.Reduce, Scalar: x.Scalar}
}

// Prologued reports whether t is a gather's output read through its
// index by its consumer's loads (GraphOp.Prologue).
func (g *Graph) Prologued(t *GraphTensor) bool {
	if t.Producer == "" || len(t.Consumers) != 1 {
		return false
	}
	for i := range g.Ops {
		if g.Ops[i].Name == t.Consumers[0] {
			return slices.Contains(g.Ops[i].Prologue, t.Producer)
		}
	}
	return false
}

// KernelOutput names the tensor o's kernel writes: its output, or with an
// epilogue the last fused op's output.
func (g *Graph) KernelOutput(o *GraphOp) string {
	out := ""
	if len(o.Outputs) > 0 {
		out = o.Outputs[0]
	}
	if len(o.Epilogue) > 0 {
		last := o.Epilogue[len(o.Epilogue)-1]
		for i := range g.Ops {
			if g.Ops[i].Name == last && len(g.Ops[i].Outputs) > 0 {
				out = g.Ops[i].Outputs[0]
			}
		}
	}
	return out
}

// KernelInputs returns the tensors op o's kernel reads, in its arguments'
// order: o's inputs, then each of its epilogue's ops' tensor operand (the
// second input of a fused add or causal mask, workload.EpilogueOperand).
func (g *Graph) KernelInputs(o *GraphOp) []string {
	if len(o.Epilogue) == 0 {
		return o.Inputs
	}
	ins := slices.Clone(o.Inputs)
	for _, name := range o.Epilogue {
		for i := range g.Ops {
			if x := &g.Ops[i]; x.Name == name && len(x.Inputs) == 2 {
				ins = append(ins, x.Inputs[1])
			}
		}
	}
	return ins
}

// GraphTensor is one tensor of a graph plan: an input, an output or an
// edge between ops.
type GraphTensor struct {
	Name  string   `json:"name"`
	Axes  []string `json:"axes"`
	DType string   `json:"dtype"`
	// Role is "input", "output" or "intermediate" (workload.Role).
	Role  string `json:"role"`
	Bytes int64  `json:"bytes"`
	// Producer names the op that writes it ("" for an input); Consumers
	// the ops that read it, in program order.
	Producer  string   `json:"producer,omitempty"`
	Consumers []string `json:"consumers,omitempty"`
	// Place is PlaceHBM or PlaceDM; Layout is the HBM layout it is stored
	// in (the producer's output layout, or its declared layout for an
	// input).
	Place  string `json:"place"`
	Layout string `json:"layout"`
	// View, when set, names the tensor this one shares its bytes with (the
	// input of a reshape that is a view).
	View string `json:"view,omitempty"`
	// Relayouts are the copies into the layouts consumers read that differ
	// from Layout.
	Relayouts []Relayout `json:"relayouts,omitempty"`
	// Values, for an input whose values are known before the graph runs
	// (workload.Values: a causal mask), is their rule; verify fills the
	// input by it.
	Values *workload.Values `json:"values,omitempty"`
}

// Relayout is one copy of a tensor into another HBM layout before a
// consumer runs.
type Relayout struct {
	// Consumer names the op that reads the copy.
	Consumer string `json:"consumer"`
	// To is the layout the consumer reads.
	To string `json:"to"`
	// Kind is "dma" (an HBM-to-HBM DMA copy through the layouts).
	Kind string `json:"kind"`
	// Bytes moved (read and written once each), Cycles their cost.
	Bytes  int64   `json:"bytes"`
	Cycles float64 `json:"cycles"`
}

// GraphCost is a graph plan's total.
type GraphCost struct {
	// Model names the cost model.
	Model string `json:"model"`
	// Cycles is the sequential schedule's makespan: every kernel and
	// relayout in program order, one after another; Seconds the same at
	// the spec's clock. Ops that are not plannable count nothing.
	Cycles  float64 `json:"cycles"`
	Seconds float64 `json:"seconds"`
	// KernelCycles and RelayoutCycles split Cycles; RelayoutShare is
	// RelayoutCycles / Cycles.
	KernelCycles   float64 `json:"kernel_cycles"`
	RelayoutCycles float64 `json:"relayout_cycles"`
	RelayoutShare  float64 `json:"relayout_share"`
	// CriticalPath is the longest chain of dependent ops (by their kernel
	// and relayout cycles), CriticalCycles its length: the makespan of a
	// schedule that overlapped independent kernels completely.
	CriticalPath   []string `json:"critical_path"`
	CriticalCycles float64  `json:"critical_cycles"`
	// Planned, Views, NotPlannable and Fused count the ops by status.
	Planned      int `json:"planned"`
	Views        int `json:"views"`
	NotPlannable int `json:"not_plannable"`
	Fused        int `json:"fused,omitempty"`
	// OverlapCycles is the makespan of every kernel in one program at
	// the graph's addresses, as the scheduler runs it (contexts and DMA
	// overlapping across kernel boundaries where no hazard holds them,
	// 002 L7042-L7075; search.GraphSchedule); 0 when not computed (a
	// padded kernel or a relayout between kernels has no place in that
	// program). It is not the
	// objective: the layouts are chosen on Cycles.
	OverlapCycles float64 `json:"overlap_cycles,omitempty"`
	// BaselineCycles is the same graph with every op planned alone and
	// every tensor row-major in HBM between ops; Saving is
	// (BaselineCycles − Cycles) / BaselineCycles.
	BaselineCycles float64 `json:"baseline_cycles"`
	Saving         float64 `json:"saving"`
	// RooflineCycles is the layer's roofline: the larger of its einsums'
	// MACs at the chip's peak and the least HBM traffic any plan of the
	// layer has (its inputs read and its outputs written once, a
	// gather's table at the rows it gathers, an update in place at the
	// rows it writes) at the HBM read and write bandwidths
	// (search.LayerRoofline); Roofline is RooflineCycles / Cycles, the
	// share of it the plan reaches. The ops without a kernel count in the
	// roofline and not in Cycles: compare where not_plannable is 0.
	RooflineCycles float64 `json:"roofline_cycles,omitempty"`
	Roofline       float64 `json:"roofline,omitempty"`
}

// GraphSearch says how a graph plan's layouts were chosen.
type GraphSearch struct {
	// Method is "dp" (a dynamic program over a chain of choices),
	// "elimination" (variable elimination over the interaction graph,
	// while its tables stay small), "ilp" (an integer linear program,
	// branch and bound over its LP relaxation) or "exact" (branch and
	// bound over every choice, when the simplex fails numerically).
	Method string `json:"method"`
	// Optimal is "proven" when the search finished (optimal under the
	// model), "" when it stopped at its node budget with the best found.
	Optimal string `json:"optimal"`
	// Choices is the number of (op, layout class) plans considered,
	// Nodes the search nodes explored.
	Choices int `json:"choices"`
	Nodes   int `json:"nodes"`
	// LowerBound is a proven lower bound on the model's optimum, Gap
	// (Cycles − LowerBound) / Cycles.
	LowerBound float64 `json:"lower_bound_cycles"`
	Gap        float64 `json:"gap"`
	// Cached counts the op plans taken from the plan cache or the stored
	// plans, Searched those planned by a search; with Fusions each once
	// over the run (the choices share their plans in memory).
	Cached   int `json:"cached"`
	Searched int `json:"searched"`
	// Unplanned counts the layout classes (an op in layouts other than
	// the declared ones) whose search stopped at its budget before any
	// legal candidate: they are not choices, and Optimal "proven" covers
	// the classes that have a plan. With Fusions it is the kept choice's.
	Unplanned int `json:"unplanned,omitempty"`
	// Fusions counts the fusion choices compared: each a graph planned
	// whole with some of its epilogues fused (workload.Fusions), the
	// cheapest kept; Optimal "proven" then covers every one. Omitted when
	// there is one (none fused).
	Fusions int `json:"fusions,omitempty"`
	// Resident counts the tensors given the choice of staying in DM
	// between their producer's and their one consumer's kernels
	// (place "dm"; search.PlanResident); Optimal "proven" covers those
	// choices too. Omitted when 0.
	Resident int `json:"resident,omitempty"`
	// NotExpanded names the ops with an exact form in ops of other kinds
	// (workload.Expand) kept as they are because a part of that form had
	// no kernel at the graph's sizes (Expansions lists those expanded).
	NotExpanded []string `json:"not_expanded,omitempty"`
}

// Marshal writes g as indented JSON followed by a newline; the bytes depend
// only on g.
func (g *Graph) Marshal() ([]byte, error) {
	return g.Encode("")
}

// Encode returns the bytes WriteGraph writes to path: Marshal's, or, when
// path ends in Compressed, compact and compressed (encodeFor).
func (g *Graph) Encode(path string) ([]byte, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return encodeFor(path, raw)
}

// Write writes the graph plan to path atomically (Encode).
func (g *Graph) Write(path string) error {
	data, err := g.Encode(path)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// IsGraph reports whether data (a plan file's bytes, gunzipped) is a graph
// plan: a JSON object whose "kind" is GraphKind.
func IsGraph(data []byte) bool {
	var k struct {
		Kind json.RawMessage `json:"kind"`
	}
	if json.Unmarshal(data, &k) != nil {
		return false
	}
	return string(k.Kind) == `"`+GraphKind+`"`
}

// ReadGraph reads a graph plan file (gunzipping it when compressed); errors
// name the file.
func ReadGraph(path string) (*Graph, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g, err := DecodeGraph(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// DecodeGraph decodes a graph plan file's bytes, gunzipping compressed ones
// up to MaxInflated bytes.
func DecodeGraph(data []byte) (*Graph, error) {
	data, err := inflate(data)
	if err != nil {
		return nil, err
	}
	return UnmarshalGraph(data)
}

// inflate gunzips data when it starts with gzip's magic bytes, up to
// MaxInflated bytes.
func inflate(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	// The trailer's ISIZE (RFC 1952 §2.3.1) is the last member's size
	// inflated, modulo 2^32: the buffer starts at that size, bounded by
	// what deflate can inflate to (1032:1) and by MaxInflated, so that
	// reading a 41 MB plan does not grow it twenty times over. It is a
	// hint only: a wrong one costs a regrowth, not a wrong byte.
	var out bytes.Buffer
	if n := len(data); n >= 18 {
		hint := min(int64(binary.LittleEndian.Uint32(data[n-4:])), 1032*int64(n), MaxInflated)
		out.Grow(int(hint) + bytes.MinRead)
	}
	if _, err := out.ReadFrom(io.LimitReader(zr, MaxInflated+1)); err != nil {
		return nil, err
	}
	if out.Len() > MaxInflated {
		return nil, fmt.Errorf("inflates beyond %d bytes", MaxInflated)
	}
	return out.Bytes(), nil
}

// UnmarshalGraph reads a graph plan strictly: unknown fields are errors,
// each op's plan is read as Unmarshal reads a plan (its errors are under
// `ops[i].plan`), and the whole graph is checked by Validate.
func UnmarshalGraph(data []byte) (*Graph, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	type op GraphOp
	type rawOp struct {
		*op
		Plan json.RawMessage `json:"plan,omitempty"`
	}
	type fields Graph
	var g Graph
	w := struct {
		*fields
		Ops []json.RawMessage `json:"ops"`
	}{fields: (*fields)(&g)}
	if err := dec.Decode(&w); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the graph plan")
	}
	if g.Version != GraphVersion {
		return nil, fieldErr("version", "%d, want %d", g.Version, GraphVersion)
	}
	g.Ops = make([]GraphOp, len(w.Ops))
	for i, raw := range w.Ops {
		r := rawOp{op: (*op)(&g.Ops[i])}
		od := json.NewDecoder(bytes.NewReader(raw))
		od.DisallowUnknownFields()
		if err := od.Decode(&r); err != nil {
			return nil, &kernel.FieldError{Path: fmt.Sprintf("ops[%d]", i), Err: err}
		}
		if len(r.Plan) > 0 && string(r.Plan) != "null" {
			p, err := Unmarshal(r.Plan)
			if err != nil {
				return nil, &kernel.FieldError{Path: fmt.Sprintf("ops[%d].plan", i), Err: err}
			}
			g.Ops[i].Plan = p
		}
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &g, nil
}

// graphTolerance is the relative slack of the totals' consistency checks
// (sums of float64 cycles rounded in JSON).
const graphTolerance = 1e-9

// Validate checks a graph plan: the version and kind; op and tensor names
// unique and non-empty; every op's tensors declared, each input produced by
// an earlier op or by none, with one layout per operand; statuses known, a
// plan exactly for the planned ops (each valid,
// Plan.Validate, and for this op: its workload's op is the op's name) and
// no cycles for the others; every tensor's producer and consumers ops that
// name it, its place known, its relayouts for consumers that read it; the
// cost finite and non-negative, its cycles the sum of the ops' and the
// relayouts' cycles, the counts those of the statuses; the search's
// method and optimality known, its gap within [0, 1].
func (g *Graph) Validate() error {
	if g.Version != GraphVersion {
		return fieldErr("version", "%d, want %d", g.Version, GraphVersion)
	}
	if g.Kind != GraphKind {
		return fieldErr("kind", "%q, want %q", g.Kind, GraphKind)
	}
	if g.Workload.Name == "" {
		return fieldErr("workload.name", "empty")
	}
	if g.Workload.Chips < 1 {
		return fieldErr("workload.chips", "%d, want at least 1", g.Workload.Chips)
	}
	if len(g.Ops) == 0 {
		return fieldErr("ops", "no ops")
	}
	tensors := map[string]int{}
	for i, t := range g.Tensors {
		f := fmt.Sprintf("tensors[%d]", i)
		if t.Name == "" {
			return fieldErr(f+".name", "empty")
		}
		if _, dup := tensors[t.Name]; dup {
			return fieldErr(f+".name", "tensor %q repeated", t.Name)
		}
		tensors[t.Name] = i
		if v := t.Values; v != nil {
			switch {
			case v.Kind != workload.ValuesCausal && v.Kind != workload.ValuesIota && v.Kind != workload.ValuesPrefix:
				return fieldErr(f+".values.kind", "unknown values kind %q (causal, prefix, iota)", v.Kind)
			case v.Kind == workload.ValuesIota && (len(t.Axes) != 1 || t.Axes[0] != v.Axis):
				return fieldErr(f+".values.axis", "an iota over %q is a tensor over it alone, not %s %v", v.Axis, t.Name, t.Axes)
			case v.Kind != workload.ValuesIota && (!slices.Contains(t.Axes, v.Query) || !slices.Contains(t.Axes, v.Key) || v.Query == v.Key):
				return fieldErr(f+".values", "query %q and key %q must be two axes of %s %v", v.Query, v.Key, t.Name, t.Axes)
			case t.Producer != "":
				return fieldErr(f+".values", "tensor %s has values: an input, not produced by %s", t.Name, t.Producer)
			}
		}
	}
	ops := map[string]int{}
	reads := map[string]map[string]bool{} // tensor → consumer ops
	writes := map[string]string{}         // tensor → producer op
	var kernels, planned, views, unplanned, fused int
	var kernelCycles float64
	for i := range g.Ops {
		o := &g.Ops[i]
		f := fmt.Sprintf("ops[%d]", i)
		if o.Name == "" {
			return fieldErr(f+".name", "empty")
		}
		if _, dup := ops[o.Name]; dup {
			return fieldErr(f+".name", "op %q repeated", o.Name)
		}
		ops[o.Name] = i
		if o.Kind == "" {
			return fieldErr(f+".kind", "empty")
		}
		for j, t := range o.Inputs {
			if _, ok := tensors[t]; !ok {
				return fieldErr(fmt.Sprintf("%s.inputs[%d]", f, j), "unknown tensor %q", t)
			}
			if p := g.Tensors[tensors[t]].Producer; p != "" {
				if _, ran := ops[p]; !ran || p == o.Name {
					return fieldErr(fmt.Sprintf("%s.inputs[%d]", f, j), "tensor %q is read before its producer %q runs (ops run in program order)", t, p)
				}
			}
			if reads[t] == nil {
				reads[t] = map[string]bool{}
			}
			reads[t][o.Name] = true
		}
		for j, t := range o.Outputs {
			if _, ok := tensors[t]; !ok {
				return fieldErr(fmt.Sprintf("%s.outputs[%d]", f, j), "unknown tensor %q", t)
			}
			if p, dup := writes[t]; dup {
				return fieldErr(fmt.Sprintf("%s.outputs[%d]", f, j), "tensor %q also written by op %q", t, p)
			}
			writes[t] = o.Name
		}
		if len(o.Layouts) != len(o.Inputs)+len(o.Outputs) {
			return fieldErr(f+".layouts", "%d layouts for %d operands", len(o.Layouts), len(o.Inputs)+len(o.Outputs))
		}
		if len(o.Epilogue) > 0 && o.Status != StatusPlanned {
			return fieldErr(f+".epilogue", "an op with status %q runs no kernel to fuse into", o.Status)
		}
		if len(o.Prologue) > 0 && o.Status != StatusPlanned {
			return fieldErr(f+".prologue", "an op with status %q runs no kernel to fuse into", o.Status)
		}
		if o.FusedInto != "" && o.Status != StatusFused {
			return fieldErr(f+".fused_into", "set on an op with status %q", o.Status)
		}
		if err := finite(f+".start", o.Start); err != nil {
			return err
		}
		if err := finite(f+".cycles", o.Cycles); err != nil {
			return err
		}
		switch o.Status {
		case StatusPlanned:
			planned++
			if o.Plan == nil {
				return fieldErr(f+".plan", "missing for a planned op")
			}
			if err := o.Plan.Validate(); err != nil {
				return &kernel.FieldError{Path: f + ".plan", Err: err}
			}
			if o.Plan.Workload.Op != o.Name {
				return fieldErr(f+".plan.workload.op", "%q, want the op's name %q", o.Plan.Workload.Op, o.Name)
			}
			if o.Cycles != o.Plan.Cost.Cycles {
				return fieldErr(f+".cycles", "%v, want the plan's %v", o.Cycles, o.Plan.Cost.Cycles)
			}
			if !slices.Equal(o.Plan.Workload.Epilogue, o.Epilogue) {
				return fieldErr(f+".plan.workload.epilogue", "%q, want the op's epilogue %q", o.Plan.Workload.Epilogue, o.Epilogue)
			}
			if !slices.Equal(o.Plan.Workload.Prologue, o.Prologue) {
				return fieldErr(f+".plan.workload.prologue", "%q, want the op's prologue %q", o.Plan.Workload.Prologue, o.Prologue)
			}
			kernels++
			kernelCycles += o.Cycles
		case StatusView, StatusNotPlannable:
			if o.Status == StatusView {
				views++
			} else {
				unplanned++
				if o.Reason == "" {
					return fieldErr(f+".reason", "empty: say why the op is not plannable")
				}
			}
			if o.Plan != nil {
				return fieldErr(f+".plan", "an op with status %q has no plan", o.Status)
			}
			if o.Cycles != 0 {
				return fieldErr(f+".cycles", "%v for an op with status %q, want 0", o.Cycles, o.Status)
			}
		case StatusFused:
			fused++
			// An epilogue's kernel runs before it, a prologue's after.
			k, ok := ops[o.FusedInto]
			if !ok {
				k = slices.IndexFunc(g.Ops[i+1:], func(x GraphOp) bool { return x.Name == o.FusedInto && slices.Contains(x.Prologue, o.Name) })
				if k < 0 {
					return fieldErr(f+".fused_into", "%q: want an op that runs before it, or one after it whose prologue names it", o.FusedInto)
				}
				k += i + 1
			}
			if !slices.Contains(g.Ops[k].Epilogue, o.Name) && !slices.Contains(g.Ops[k].Prologue, o.Name) {
				return fieldErr(f+".fused_into", "op %q's epilogue %q and prologue %q do not name %q", o.FusedInto, g.Ops[k].Epilogue, g.Ops[k].Prologue, o.Name)
			}
			if o.Plan != nil {
				return fieldErr(f+".plan", "a fused op has no plan")
			}
			if o.Cycles != 0 {
				return fieldErr(f+".cycles", "%v for a fused op, want 0", o.Cycles)
			}
		default:
			return fieldErr(f+".status", "%q: want %q, %q, %q or %q", o.Status, StatusPlanned, StatusView, StatusNotPlannable, StatusFused)
		}
	}
	// An epilogue's ops follow in order, each fused into the op, the
	// first reading the op's output and each the one before's (and a
	// tensor operand the kernel reads, workload.EpilogueOperand); the
	// kernel writes the last one's output.
	for i := range g.Ops {
		o := &g.Ops[i]
		if len(o.Epilogue) == 0 {
			continue
		}
		f := fmt.Sprintf("ops[%d].epilogue", i)
		if len(o.Outputs) != 1 {
			return fieldErr(f, "an op of %d outputs", len(o.Outputs))
		}
		prev := o.Outputs[0]
		for j, name := range o.Epilogue {
			k, ok := ops[name]
			if !ok || k <= i || g.Ops[k].Status != StatusFused || g.Ops[k].FusedInto != o.Name {
				return fieldErr(fmt.Sprintf("%s[%d]", f, j), "%q: want a later op fused into %q", name, o.Name)
			}
			x := &g.Ops[k]
			if len(x.Inputs) < 1 || len(x.Inputs) > 2 || x.Inputs[0] != prev || len(x.Outputs) != 1 {
				return fieldErr(fmt.Sprintf("%s[%d]", f, j), "op %q does not read %q first (and at most one tensor more)", name, prev)
			}
			if len(x.Inputs) == 2 && !slices.Contains(o.Plan.Program.Reference.EpilogueOperands(), x.Inputs[1]) {
				// A tensor operand: the kernel reads it for the epilogue.
				return fieldErr(fmt.Sprintf("%s[%d]", f, j), "op %q's tensor %q is not one the kernel's epilogue reads (%q)", name, x.Inputs[1], o.Plan.Program.Reference.EpilogueOperands())
			}
			if t := g.Tensors[tensors[prev]]; t.Place != PlaceFused {
				return fieldErr(fmt.Sprintf("%s[%d]", f, j), "tensor %q between a contraction and its epilogue has place %q, want %q", prev, t.Place, PlaceFused)
			}
			prev = x.Outputs[0]
		}
		if ref := o.Plan.Program.Reference; ref.Output != prev {
			return fieldErr(f, "the kernel writes %q, want the epilogue's output %q", ref.Output, prev)
		}
	}
	// A prologue's gathers come before the op, each fused into it, its
	// output read by the op alone and stored nowhere, and the op's kernel
	// reads it through the gather's index.
	for i := range g.Ops {
		o := &g.Ops[i]
		for j, name := range o.Prologue {
			f := fmt.Sprintf("ops[%d].prologue[%d]", i, j)
			k, ok := ops[name]
			if !ok || k >= i || g.Ops[k].Status != StatusFused || g.Ops[k].FusedInto != o.Name || g.Ops[k].Kind != "gather" {
				return fieldErr(f, "%q: want an earlier gather fused into %q", name, o.Name)
			}
			x := &g.Ops[k]
			if len(x.Inputs) != 2 || len(x.Outputs) != 1 || !slices.Contains(o.Inputs, x.Outputs[0]) {
				return fieldErr(f, "gather %q's output is not an input of %q", name, o.Name)
			}
			if t := g.Tensors[tensors[x.Outputs[0]]]; t.Place != PlaceFused {
				return fieldErr(f, "tensor %q a prologue reads has place %q, want %q", t.Name, t.Place, PlaceFused)
			}
			v, ok := o.Plan.Program.Tensor(x.Outputs[0])
			if !ok || v.Gather == nil || v.Gather.Table != x.Inputs[0] || v.Gather.Index != x.Inputs[1] {
				return fieldErr(f, "op %q's kernel does not read %q as the rows of %s at %s", o.Name, x.Outputs[0], x.Inputs[0], x.Inputs[1])
			}
		}
	}
	// An expansion's parts are ops of the plan, in order, each naming it,
	// and write its outputs; its inputs are the graph's tensors.
	parts := map[string]string{}
	for i := range g.Expansions {
		x := &g.Expansions[i]
		f := fmt.Sprintf("expansions[%d]", i)
		if x.Name == "" || x.Kind == "" {
			return fieldErr(f, "an expansion names its op and kind")
		}
		if _, dup := ops[x.Name]; dup {
			return fieldErr(f+".name", "op %q is in the plan: an expanded op is not", x.Name)
		}
		if len(x.Parts) == 0 {
			return fieldErr(f+".parts", "none")
		}
		last := -1
		for j, p := range x.Parts {
			k, ok := ops[p]
			if !ok || k <= last || g.Ops[k].ExpandedFrom != x.Name {
				return fieldErr(fmt.Sprintf("%s.parts[%d]", f, j), "%q: want a later op of the plan expanded from %q", p, x.Name)
			}
			if _, dup := parts[p]; dup {
				return fieldErr(fmt.Sprintf("%s.parts[%d]", f, j), "%q is also a part of %q", p, parts[p])
			}
			parts[p], last = x.Name, k
		}
		for j, t := range x.Inputs {
			if _, ok := tensors[t]; !ok {
				return fieldErr(fmt.Sprintf("%s.inputs[%d]", f, j), "unknown tensor %q", t)
			}
		}
		for j, t := range x.Outputs {
			if _, ok := tensors[t]; !ok || parts[writes[t]] != x.Name {
				return fieldErr(fmt.Sprintf("%s.outputs[%d]", f, j), "tensor %q is not written by a part of %q", t, x.Name)
			}
		}
	}
	for i := range g.Ops {
		if n := g.Ops[i].ExpandedFrom; n != "" && parts[g.Ops[i].Name] != n {
			return fieldErr(fmt.Sprintf("ops[%d].expanded_from", i), "%q lists no part %q", n, g.Ops[i].Name)
		}
	}
	var relayoutCycles float64
	for i, t := range g.Tensors {
		f := fmt.Sprintf("tensors[%d]", i)
		if t.Producer != writes[t.Name] {
			return fieldErr(f+".producer", "%q, but the op writing it is %q", t.Producer, writes[t.Name])
		}
		if len(t.Consumers) != len(reads[t.Name]) {
			return fieldErr(f+".consumers", "%d consumers, but %d ops read it", len(t.Consumers), len(reads[t.Name]))
		}
		for j, c := range t.Consumers {
			if !reads[t.Name][c] {
				return fieldErr(fmt.Sprintf("%s.consumers[%d]", f, j), "op %q does not read %q", c, t.Name)
			}
		}
		switch t.Place {
		case PlaceHBM:
		case PlaceDM:
			if err := g.validateResident(&t, ops); err != nil {
				return fieldErr(f+".place", "%v", err)
			}
		case PlaceFused:
			if (t.Producer == "" || len(t.Consumers) != 1 || g.Ops[ops[t.Consumers[0]]].Status != StatusFused) && !g.Prologued(&t) {
				return fieldErr(f+".place", "%q for a tensor that no fused op alone reads and no prologue's gather writes", t.Place)
			}
			if t.Layout != "" || len(t.Relayouts) > 0 || t.View != "" {
				return fieldErr(f+".layout", "a fused tensor is stored nowhere: no layout, view or relayout")
			}
		default:
			return fieldErr(f+".place", "%q: want %q, %q or %q", t.Place, PlaceHBM, PlaceDM, PlaceFused)
		}
		if t.Bytes < 0 {
			return fieldErr(f+".bytes", "%d, negative", t.Bytes)
		}
		if t.View != "" {
			if _, ok := tensors[t.View]; !ok {
				return fieldErr(f+".view", "unknown tensor %q", t.View)
			}
		}
		for j, r := range t.Relayouts {
			rf := fmt.Sprintf("%s.relayouts[%d]", f, j)
			// The copy is the kernel's that reads it (an epilogue's tensor:
			// its einsum's kernel, plan.Graph.KernelInputs).
			if k, ok := ops[r.Consumer]; !ok || !slices.Contains(g.KernelInputs(&g.Ops[k]), t.Name) {
				return fieldErr(rf+".consumer", "op %q does not read %q", r.Consumer, t.Name)
			}
			if r.Kind != "dma" {
				return fieldErr(rf+".kind", "%q, want dma", r.Kind)
			}
			if r.To == t.Layout {
				return fieldErr(rf+".to", "%q is the tensor's own layout: no relayout", r.To)
			}
			if err := finite(rf+".cycles", r.Cycles); err != nil {
				return err
			}
			relayoutCycles += r.Cycles
		}
	}
	c := g.Cost
	for _, v := range []struct {
		f string
		x float64
	}{{"cost.cycles", c.Cycles}, {"cost.seconds", c.Seconds}, {"cost.kernel_cycles", c.KernelCycles},
		{"cost.relayout_cycles", c.RelayoutCycles}, {"cost.critical_cycles", c.CriticalCycles}, {"cost.baseline_cycles", c.BaselineCycles},
		{"cost.overlap_cycles", c.OverlapCycles}, {"cost.roofline_cycles", c.RooflineCycles}, {"cost.roofline", c.Roofline}} {
		if err := finite(v.f, v.x); err != nil {
			return err
		}
	}
	if !near(c.KernelCycles, kernelCycles) {
		return fieldErr("cost.kernel_cycles", "%v, but the ops' cycles sum to %v", c.KernelCycles, kernelCycles)
	}
	if !near(c.RelayoutCycles, relayoutCycles) {
		return fieldErr("cost.relayout_cycles", "%v, but the relayouts' cycles sum to %v", c.RelayoutCycles, relayoutCycles)
	}
	if !near(c.Cycles, kernelCycles+relayoutCycles) {
		return fieldErr("cost.cycles", "%v, want kernel_cycles + relayout_cycles = %v", c.Cycles, kernelCycles+relayoutCycles)
	}
	if c.CriticalCycles > c.Cycles*(1+graphTolerance) {
		return fieldErr("cost.critical_cycles", "%v exceeds the sequential makespan %v", c.CriticalCycles, c.Cycles)
	}
	for j, n := range c.CriticalPath {
		if _, ok := ops[n]; !ok {
			return fieldErr(fmt.Sprintf("cost.critical_path[%d]", j), "unknown op %q", n)
		}
	}
	if c.Planned != planned || c.Views != views || c.NotPlannable != unplanned || c.Fused != fused {
		return fieldErr("cost.planned", "counts %d/%d/%d/%d, but the ops' statuses give %d planned, %d views, %d not plannable, %d fused",
			c.Planned, c.Views, c.NotPlannable, c.Fused, planned, views, unplanned, fused)
	}
	if c.RelayoutShare < 0 || c.RelayoutShare > 1 || math.IsNaN(c.RelayoutShare) {
		return fieldErr("cost.relayout_share", "%v outside [0, 1]", c.RelayoutShare)
	}
	if math.IsNaN(c.Saving) || c.Saving > 1 {
		return fieldErr("cost.saving", "%v above 1", c.Saving)
	}
	s := g.Search
	if s.Method != "dp" && s.Method != "elimination" && s.Method != "ilp" && s.Method != "exact" {
		return fieldErr("search.method", "%q: want dp, elimination, ilp or exact", s.Method)
	}
	if s.Optimal != "" && s.Optimal != "proven" {
		return fieldErr("search.optimal", "%q: want proven or empty", s.Optimal)
	}
	if math.IsNaN(s.Gap) || s.Gap < 0 || s.Gap > 1 {
		return fieldErr("search.gap", "%v outside [0, 1]", s.Gap)
	}
	if s.Choices < 0 || s.Nodes < 0 || s.Cached < 0 || s.Searched < 0 || s.Fusions < 0 {
		return fieldErr("search", "negative count")
	}
	if err := finite("search.lower_bound_cycles", s.LowerBound); err != nil {
		return err
	}
	if s.LowerBound > c.Cycles*(1+graphTolerance) {
		return fieldErr("search.lower_bound_cycles", "%v above the plan's %v cycles", s.LowerBound, c.Cycles)
	}
	return nil
}

// finite checks a non-negative finite number.
func finite(path string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return fieldErr(path, "%v: want a finite number ≥ 0", x)
	}
	return nil
}

// near reports a ≈ b within graphTolerance (relative) or 1e-6 cycles.
func near(a, b float64) bool {
	return math.Abs(a-b) <= max(1e-6, graphTolerance*max(math.Abs(a), math.Abs(b)))
}

// GraphAlign aligns every graph tensor's HBM region: 256 MiB, the stride
// at which the planner places a kernel's arguments (0, 1 << 28, 2 << 28,
// as the manual's Hello kernels do, 002 L362-L364), so that a kernel at
// the graph's addresses meets the same HBM channels and banks as the
// kernel planned alone (the address bits below 28 select them, 002
// L2963-L2977), and costs what its plan says. 48 GB of HBM hold 192 such
// regions (002 L137).
const GraphAlign = 1 << 28

// Addresses assigns each graph tensor an HBM region of its own, aligned to
// GraphAlign: inputs in declaration order, then the ops' outputs in
// program order; a reshape's output (GraphTensor.View) shares its input's.
// A Vector Engine kernel whose plan staggers its output
// (OpMapping.Stagger: 1 MiB, or 16 GiB into every channel's third HBM
// slice, address bit 34, 002 L2966-2975) has it at that offset past its
// region, as it was priced; a 16 GiB offset leaves the region's low part
// to the next tensor, and every tensor below 16 GiB is checked to stay
// clear of the offset ones. The emitted layer (emit.GraphRust) and the
// graph's schedule place the kernels' HBM tensors there.
func (g *Graph) Addresses() (map[string]int64, error) {
	addr := map[string]int64{}
	next := int64(0)
	var high []string // tensors placed 16 GiB past their region
	stagger := int64(0)
	place := func(t *GraphTensor) error {
		if t.View != "" {
			a, ok := addr[t.View]
			if !ok {
				return fmt.Errorf("emit graph %q: view %s of %s placed before it", g.Workload.Name, t.Name, t.View)
			}
			addr[t.Name] = a
			return nil
		}
		if t.Place == PlaceFused && !g.Prologued(t) {
			return nil // stored nowhere
		}
		addr[t.Name] = next + stagger
		switch {
		case stagger >= highStagger:
			high = append(high, t.Name)
			next += (max(t.Bytes, 1) + GraphAlign - 1) / GraphAlign * GraphAlign
		default:
			next += (max(t.Bytes, 1) + stagger + GraphAlign - 1) / GraphAlign * GraphAlign
		}
		return nil
	}
	byName := map[string]*GraphTensor{}
	for i := range g.Tensors {
		byName[g.Tensors[i].Name] = &g.Tensors[i]
	}
	for i := range g.Tensors {
		if g.Tensors[i].Producer == "" {
			if err := place(&g.Tensors[i]); err != nil {
				return nil, err
			}
		}
	}
	for i := range g.Ops {
		o := &g.Ops[i]
		kout := g.KernelOutput(o)
		for _, name := range o.Outputs {
			stagger = 0
			if name == kout && o.Plan != nil && o.Plan.OpMapping != nil {
				stagger = o.Plan.OpMapping.Stagger
			}
			if err := place(byName[name]); err != nil {
				return nil, err
			}
		}
	}
	stagger = 0
	// A relayout's copy, `TENSOR@CONSUMER`, in a region of its own after
	// every tensor, in program order.
	for i := range g.Ops {
		o := &g.Ops[i]
		for _, in := range g.KernelInputs(o) {
			t := byName[in]
			if t == nil {
				continue
			}
			for _, r := range t.Relayouts {
				if r.Consumer == o.Name {
					addr[RelayoutCopy(in, o.Name)] = next
					next += (max(t.Bytes, 1) + GraphAlign - 1) / GraphAlign * GraphAlign
				}
			}
		}
	}
	for _, name := range high {
		if next > highStagger {
			return nil, fmt.Errorf("graph %q: %d bytes of regions below its 16 GiB-staggered output %s; the offset would overlap them", g.Workload.Name, next, name)
		}
	}
	return addr, nil
}

// highStagger is the output offset of a Vector Engine kernel that puts its
// output in every channel's third HBM slice (address bit 34, 002
// L2966-2975).
const highStagger = 1 << 34

// RelayoutCopy names the copy of tensor t that consumer reads through a
// relayout (Addresses places it; search.GraphProgram and the layer's Rust
// write it).
func RelayoutCopy(t, consumer string) string { return t + "@" + consumer }

// validateResident checks a tensor left in DM between two kernels
// (PlaceDM): an intermediate with one consumer, no HBM layout nor
// relayout, its producer's kernel handing it over (a to_hbm handoff,
// kernel.Program.Handoff) and its consumer's taking it (a to_dm one); the
// ops' layouts of it read "dm".
func (g *Graph) validateResident(t *GraphTensor, ops map[string]int) error {
	if t.Producer == "" || len(t.Consumers) != 1 {
		return fmt.Errorf("%q for a tensor without one producer and one consumer", t.Place)
	}
	if t.Layout != "" || len(t.Relayouts) > 0 || t.View != "" {
		return fmt.Errorf("a tensor left in DM has no HBM layout, view or relayout")
	}
	for _, side := range []struct {
		op   string
		kind kernel.OpKind
	}{{t.Producer, kernel.OpToHBM}, {t.Consumers[0], kernel.OpToDM}} {
		o := &g.Ops[ops[side.op]]
		if o.Plan == nil || o.Plan.Program == nil {
			return fmt.Errorf("op %q hands it over in DM without a kernel", o.Name)
		}
		p := o.Plan.Program
		name := ""
		switch side.kind {
		case kernel.OpToHBM:
			name = p.Reference.Output
		default:
			if k := slices.Index(o.Inputs, t.Name); k >= 0 && k < len(p.Reference.Inputs) {
				name = p.Reference.Inputs[k]
			}
		}
		handed := slices.ContainsFunc(p.Handoff, func(op *kernel.Op) bool {
			hbm := op.Src
			if op.Kind == kernel.OpToHBM {
				hbm = op.Dst
			}
			h, ok := p.Tensor(hbm)
			return op.Kind == side.kind && ok && h.Base() == name
		})
		if !handed {
			return fmt.Errorf("op %q's kernel has no %s handoff of it", o.Name, side.kind)
		}
		for j, x := range slices.Concat(o.Inputs, o.Outputs) {
			if x == t.Name && o.Layouts[j] != PlaceDM {
				return fmt.Errorf("op %q reads or writes it in layout %q, not %q", o.Name, o.Layouts[j], PlaceDM)
			}
		}
	}
	return nil
}
