// Package plan is the result of planning one workload: the workload it is
// for, the mapping the planner chose (in the words of the mapspace: which
// operand sits in the TRF, where each axis's factors go, the Time order,
// the tiles), the kernel program that mapping builds (lowered, with every
// engine's configuration), its predicted cost and how the search went.
//
// A plan is plain data with a deterministic JSON form: the same plan always
// marshals to the same bytes. `tcpmap plan --out PLAN.json` writes it;
// `tcpmap cost`, `verify` and `emit` read the kernel program back from it.
// The package knows nothing of the hardware: the cost is a summary the cost
// model filled in, the search statistics are counts.
package plan

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"tcpmap/internal/atomicfile"
	"tcpmap/model/kernel"
)

// Version is the plan file format's version: 2 adds the plans of non-einsum
// ops (Workload.Kind, OpMapping); a version-1 file (an einsum's plan)
// still reads.
const Version = 2

// Plan is a planned workload.
type Plan struct {
	// Version is the file format version (Version).
	Version int `json:"version"`
	// Workload names what was planned.
	Workload Workload `json:"workload"`
	// Mapping is the chosen point of a contraction's mapspace (zero, and
	// left out, for a non-einsum op's plan).
	Mapping Mapping `json:"mapping,omitzero"`
	// OpMapping is the chosen point of a non-einsum op's mapspace (nil for
	// an einsum's plan).
	OpMapping *OpMapping `json:"op_mapping,omitempty"`
	// Cost is the cost model's prediction for Program.
	Cost Cost `json:"cost"`
	// Search says how the plan was found.
	Search Search `json:"search"`
	// Program is the kernel program the mapping builds, lowered.
	Program *kernel.Program `json:"program"`
}

// Workload identifies the planned contraction.
type Workload struct {
	// File is the workload file as given; Name its name field.
	File string `json:"file,omitempty"`
	Name string `json:"name"`
	// Op names the einsum op of a graph workload ("" for the single-einsum
	// form).
	Op string `json:"op,omitempty"`
	// Kind is the op's kind when it is not an einsum (softmax, rmsnorm,
	// add, …; "" for an einsum).
	Kind string `json:"kind,omitempty"`
	// Einsum is the contraction in einsum notation ("" for a non-einsum
	// op), Axes its axis sizes (`I=512, J=512, K=2048`).
	Einsum string `json:"einsum,omitempty"`
	Axes   string `json:"axes"`
	// Epilogue names the graph's ops an einsum's kernel does after the
	// contraction, in order (workload.Fuse; the program's reference states
	// them as its epilogue).
	Epilogue []string `json:"epilogue,omitempty"`
	// Prologue names the graph's gathers an einsum's kernel does in its
	// own loads (search.GatherIntoLoads; the program holds each one's
	// output as a gathered argument).
	Prologue []string `json:"prologue,omitempty"`
}

// Mapping is a point of the mapspace of a binary contraction, spelled out.
type Mapping struct {
	// Stationary names the input loaded into the TRF (the weight path of
	// the Aligner); Streaming the input streamed through the main context.
	Stationary string `json:"stationary"`
	Streaming  string `json:"streaming"`
	// Axes gives each axis's factors, one entry per einsum axis.
	Axes []AxisMapping `json:"axes"`
	// TimeOrder lists the axes of the computation Time, outermost first
	// (axes with one Time step are left out).
	TimeOrder []string `json:"time_order"`
	// TileOrder lists the tiled axes, outermost loop first.
	TileOrder []string `json:"tile_order,omitempty"`
	// Content is what the 64-byte computation packet holds: "contracted"
	// axes reduced by the tree, or "columns" of the streamed operand's
	// output axes.
	Content string `json:"content"`
	// Packet is how the 64-byte computation packet is formed: "single"
	// (two 32-byte flits), "dual" (one 64-byte dual-channel flit) or "half"
	// (one 32-byte flit, zero-padded).
	Packet string `json:"packet"`
	// Broadcast is where the streamed operand is repeated along the
	// stationary operand's own axes: "fetch" (re-read from DM) or "align"
	// (the Stream Adapter's time broadcast).
	Broadcast string `json:"broadcast"`
	// Accumulate is the AccumulationKind.
	Accumulate string `json:"accumulate"`
	// Layouts gives the DM element order of each tensor: "hbm" (the HBM
	// layout's axis order), "compute" (the order the chain reads or
	// writes) or, for the output only, "copy" (committed in the compute
	// order, then rewritten in HBM order by a main-context chain before
	// the DMA).
	Layouts []TensorLayout `json:"layouts"`
	// DoubleBuffer is set when tiles are software-pipelined over two DM
	// buffers (and the two TRF halves when the stationary input moves).
	DoubleBuffer bool `json:"double_buffer,omitempty"`
	// Switch is set when the streamed input is distributed over the ring
	// of slices that share it and broadcast to them by the Switch Engine
	// (Broadcast01, 002 L3139-3165), instead of copied into each slice's
	// DM.
	Switch bool `json:"switch,omitempty"`
}

// FormInterleaved is the form of a float add of two tensors whose kernel
// fetches both from DM interleaved and adds the pair's groups; its
// program declares the interleave axis after the workload's.
const FormInterleaved = "interleaved"

// OpMapping is a point of a non-einsum op's mapspace (search/opspace.go).
type OpMapping struct {
	// Form is the kernel's form: the op's kind, or for an op with several
	// forms the one chosen (softmax: "recompute" or "stored"; a float add
	// of two tensors: FormInterleaved, or the kind's, its second input
	// through the VRF).
	Form string `json:"form"`
	// Spread lists the axes whose positions are split over the clusters
	// and slices, major first (row-major); Reduced names the axes a
	// reduction runs along within each slice, comma-separated ("" for an
	// elementwise op).
	Spread  []string `json:"spread"`
	Reduced string   `json:"reduced,omitempty"`
	// Tiles is the number of tiles Spread's positions are split into in
	// time (outermost first; two DM buffers alternate), Clusters and
	// Slices the spatial split of a tile's positions: clusters used, and
	// slices used in each.
	Tiles    int `json:"tiles"`
	Clusters int `json:"clusters"`
	// Stagger is how many bytes past its 256 MiB boundary the output
	// sits in HBM (0: on it).
	Stagger int64 `json:"hbm_stagger,omitempty"`
	// MainLoad is set when softmax's row sum is loaded into the VRF from
	// the main context rather than the sub one.
	MainLoad bool `json:"main_load,omitempty"`
	// Inner is, for a reduce, how many packets of the kept innermost axis
	// sit inside the reduced axis in DM (0 for other ops).
	Inner int `json:"inner,omitempty"`
	// Interleave, when set, is the run of positions (a chunk) each DMN
	// takes in turn: a tile's positions are dealt out to the clusters
	// and DMNs a chunk at a time, so that the DMNs' concurrent DMA
	// streams read neighbouring HBM addresses (0: each DMN a contiguous
	// block of the tile).
	Interleave int `json:"dmn_interleave,omitempty"`
	Slices     int `json:"slices"`
	// HBMOrder is set when a reduce's input tile lies in DM in its HBM
	// order, the fetch walking it in the stream's order (otherwise DM
	// holds it in the stream's order, the reduced axis among the packets
	// of the kept innermost axis).
	HBMOrder bool `json:"hbm_order,omitempty"`
	// Spread is set when a tile's slices, fewer than a cluster's, sit
	// evenly over the cluster's slices (every DMN's share) instead of on
	// the first ones.
	DMNSpread bool `json:"dmn_spread,omitempty"`
}

// AxisMapping is where one axis's factors go. The product of the factors is
// the axis size; within the axis the levels nest major to minor as Tile,
// Chip, Cluster, Slice, Time, Row, Packet.
type AxisMapping struct {
	Name string `json:"name"`
	Size int    `json:"size"`
	// Valid is the workload's size of an axis padded to Size (the kernel
	// stores its tensors padded; kernel.Reference.Valid), 0 when the axis
	// is not padded.
	Valid int `json:"valid,omitempty"`
	// Class is "contracted", "batch", "free" (of the streamed operand) or
	// "stationary-free" (of the stationary operand).
	Class   string `json:"class"`
	Tile    int    `json:"tile"`
	Chip    int    `json:"chip"`
	Cluster int    `json:"cluster"`
	Slice   int    `json:"slice"`
	Time    int    `json:"time"`
	Row     int    `json:"row"`
	Packet  int    `json:"packet"`
	// RowOuter is set when the axis's Row digit sits above its Time digit
	// (`J / 4 % 8` on Row, `J % 4` in Time) rather than below it (the
	// Hello GEMM's `J % 8` on Row, 002 L483-484): only a stationary-free
	// axis with Row and Time factors above 1.
	RowOuter bool `json:"row_outer,omitempty"`
	// DealtOut is set when the axis's Cluster and Slice digits sit below
	// its Time digit (`I / 4 % 8` in Time, `I % 4` on Slice: the slices
	// dealt the axis a position at a time) rather than above it (`I / 8`
	// on Slice): only a free or batch axis with Time and Cluster or Slice
	// factors above 1.
	DealtOut bool `json:"dealt_out,omitempty"`
	// ClusterInner is set when the axis's Cluster digit sits below its
	// Slice digit (`I % 2` on Cluster, `I / 2` on Slice: the clusters take
	// the slices' blocks in turn) rather than above it (`I / 8` on
	// Cluster): only an axis that is not contracted, with Cluster and
	// Slice factors above 1.
	ClusterInner bool `json:"cluster_inner,omitempty"`
	// Digits is the axis's digit order when it is none of the three
	// above (or their combinations): its levels with factors above 1,
	// outermost first, joined by '.' ("tile.slice.time.cluster.row": the
	// Cluster digit between the Time and Row digits; "time.tile.packet":
	// each tile a strided share of the axis); empty otherwise.
	Digits string `json:"digits,omitempty"`
}

// TensorLayout is the DM element order chosen for one tensor.
type TensorLayout struct {
	Tensor string `json:"tensor"`
	Order  string `json:"order"`
}

// Cost is the cost model's prediction for the plan's program.
type Cost struct {
	// Model names the cost model that priced the plan.
	Model string `json:"model"`
	// Cycles is the predicted makespan in core cycles, Seconds the same at
	// the clock of the hardware spec.
	Cycles  float64 `json:"cycles"`
	Seconds float64 `json:"seconds"`
	// MACUtilization is the MACs over the chip's peak over Cycles;
	// HBMUtilization the HBM bandwidth share.
	MACUtilization float64 `json:"mac_utilization"`
	HBMUtilization float64 `json:"hbm_utilization"`
	// Bottleneck names the context and engine the critical path spends most
	// of its time on, BottleneckShare that share of Cycles.
	Bottleneck      string  `json:"bottleneck"`
	BottleneckShare float64 `json:"bottleneck_share"`
	// Bound is the roofline's "compute" or "memory", or "none" for a
	// kernel with neither MACs nor HBM bytes of its own (one that takes
	// its input in DM from the kernel before it and leaves its output in
	// DM for the next, kernel.Program.Handoff).
	Bound string `json:"bound"`
	// HBMBytes is the traffic to and from HBM.
	HBMBytes int64 `json:"hbm_bytes"`
	// Findings counts the hazards and penalties the cost model found.
	Findings int `json:"findings"`
	// RooflineCycles is the workload's roofline: the larger of its MACs
	// at the peak rate and its inputs read and outputs written once at
	// the HBM bandwidths; Roofline is RooflineCycles / Cycles, the share
	// of the roofline the plan reaches (cost.Roofline.Attained).
	RooflineCycles float64 `json:"roofline_cycles,omitempty"`
	Roofline       float64 `json:"roofline,omitempty"`
}

// Search says how a plan was found.
type Search struct {
	// Planner is "exhaustive" or "sat" (branch and bound over the SAT
	// encoding of the mapspace).
	Planner string `json:"planner"`
	// Optimal is "exhaustive" when every candidate of the mapspace was
	// priced, "proven" when a bound proved the optimum, "" when the search
	// stopped early (a timeout) with the best found so far.
	Optimal string `json:"optimal"`
	// Stopped says why a search that did not finish stopped: "timeout"
	// (its time limit), "evaluations" (its evaluation budget), "memory"
	// (its heap budget, plan --memory) or "interrupted" (the user); ""
	// when it finished.
	Stopped string `json:"stopped,omitempty"`
	// Candidates is the number of candidates enumerated; Legal those that
	// built and lowered; CostEvaluations those priced.
	Candidates      int `json:"candidates"`
	Legal           int `json:"legal"`
	CostEvaluations int `json:"cost_evaluations"`
	// Pruned counts legal candidates ruled out by a lower bound of their
	// price before being priced exactly.
	Pruned int `json:"pruned"`
	// Skipped counts candidates never built: a lower bound computed from
	// their mapping alone could not beat the incumbent (planner "sat").
	Skipped int `json:"skipped,omitempty"`
	// MaxTiles is the bound on a candidate's tiles the mapspace was
	// enumerated with.
	MaxTiles int `json:"max_tiles"`
	// Resident, for a kernel that hands a tensor over in DM to the next
	// kernel of a graph or takes one from the previous
	// (kernel.Program.Handoff), says which and with whom; the search was
	// then over the pair's space, every candidate of both ops with the
	// tensor's tiles each in a DM buffer of its own (search.PlanResident).
	Resident string `json:"resident,omitempty"`
	// DigitOrders is "all" when the mapspace held every order of each
	// axis's digits (search.Options.AllOrders), empty when it held the
	// zero order and the named ones (row_outer, dealt_out,
	// cluster_inner).
	DigitOrders string `json:"digit_orders,omitempty"`
	// Illegal counts the rejected candidates by the rule they broke, sorted
	// by count (descending) then rule.
	Illegal []RuleCount `json:"illegal"`
	// SATModels is the number of placements the SAT solver proposed,
	// IllegalSkeletons the skeletons none of whose candidates was legal
	// (each is dropped; no clause is learned from it), Placements the
	// Cluster/Slice placements excluded whole by a bound nogood,
	// BoundSkips the proposed skeletons whose bounds could not beat the
	// incumbent, TilingSkips the tilings of listed skeletons whose tiling
	// bounds could not, Clauses the clauses of the encoding (planner
	// "sat").
	SATModels        int `json:"sat_models,omitempty"`
	IllegalSkeletons int `json:"illegal_skeletons,omitempty"`
	Placements       int `json:"placement_cuts,omitempty"`
	BoundSkips       int `json:"bound_skips,omitempty"`
	TilingSkips      int `json:"tiling_skips,omitempty"`
	// OrderSkips counts the branches of digit orders (digit_orders
	// "all") whose bound could not beat the incumbent when their tiling
	// was listed; their candidates are not counted in Candidates.
	OrderSkips int `json:"order_skips,omitempty"`
	Clauses    int `json:"clauses,omitempty"`
	// LegacyLearned reads the field IllegalSkeletons had in earlier plan
	// files ("learned_clauses", which counted no clause); Unmarshal moves
	// it into IllegalSkeletons, so it is never written.
	LegacyLearned int `json:"learned_clauses,omitempty"`
	// LowerBound is a proven lower bound of every candidate's cycles, Gap
	// (cycles − LowerBound) / cycles; LowerBound equals the cycles when
	// Optimal is "proven".
	LowerBound float64 `json:"lower_bound_cycles,omitempty"`
	Gap        float64 `json:"gap,omitempty"`
}

// RuleCount is how many candidates a rule rejected.
type RuleCount struct {
	Rule  string `json:"rule"`
	Cite  string `json:"cite,omitempty"`
	Count int    `json:"count"`
}

// Marshal writes p as indented JSON followed by a newline. The bytes depend
// only on p.
func (p *Plan) Marshal() ([]byte, error) {
	return p.Encode("")
}

// Encode returns the bytes Write writes to path: the plan's JSON as
// Marshal writes it, or, when path ends in Compressed, without the
// indentation and gzip-compressed (encodeFor). The same plan gives the
// same bytes.
func (p *Plan) Encode(path string) ([]byte, error) {
	if p.Program == nil {
		return nil, fmt.Errorf("plan: no kernel program")
	}
	// The program marshals compactly; indent the whole document once.
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return encodeFor(path, raw)
}

// Unmarshal reads a plan. Decoding is strict: unknown fields are errors,
// the kernel program is validated as kernel.Program's decoder does, and the
// whole plan as Validate does. A field's error is a *kernel.FieldError
// naming its JSON path (`cost.cycles`; `program` for the program's own
// errors, which name their path within it); a JSON syntax or type error
// keeps its byte offset in data.
func Unmarshal(data []byte) (*Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	type fields Plan
	var p Plan
	w := struct {
		*fields
		Program json.RawMessage `json:"program"`
	}{fields: (*fields)(&p)}
	if err := dec.Decode(&w); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the plan")
	}
	if p.Version < 1 || p.Version > Version {
		return nil, fieldErr("version", "%d, want 1 to %d", p.Version, Version)
	}
	if len(w.Program) == 0 || string(w.Program) == "null" {
		return nil, fieldErr("program", "missing")
	}
	if p.Search.LegacyLearned != 0 {
		if p.Search.IllegalSkeletons == 0 {
			p.Search.IllegalSkeletons = p.Search.LegacyLearned
		}
		p.Search.LegacyLearned = 0
	}
	p.Program = &kernel.Program{}
	if err := p.Program.UnmarshalJSON(w.Program); err != nil {
		// The program's offsets count from its first byte.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if at := bytes.Index(data, w.Program); at >= 0 {
				te.Offset += int64(at)
			}
		}
		return nil, &kernel.FieldError{Path: "program", Err: err}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Compressed is the suffix of a gzip-compressed plan file
// (NAME.plan.json.gz): a tiled plan's program repeats its ops once per
// tile, which gzip stores compactly.
const Compressed = ".gz"

// MaxInflated bounds the bytes a compressed plan may inflate to (a tiled
// prefill plan is about 20 MB).
const MaxInflated = 1 << 30

// Read reads a plan file, gunzipping a compressed one (told by its gzip
// magic bytes, whatever its name); errors name the file.
func Read(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Decode decodes a plan file's bytes, gunzipping compressed ones (told by
// the gzip magic bytes) up to MaxInflated bytes.
func Decode(data []byte) (*Plan, error) {
	data, err := inflate(data)
	if err != nil {
		return nil, err
	}
	return Unmarshal(data)
}

// encodeFor returns a document's compact JSON as a file at path holds it,
// newline-terminated: indented by two spaces in a plain file (read and
// diffed by people); compact and gzip-compressed (Gzip) when path ends in
// Compressed. A compressed file is read by tools: the indentation was two
// thirds of a tiled layer's 41 MB, every byte of which a reader inflates
// and scans (the prefill layer's graph plan read in 2.3 s; session 34).
func encodeFor(path string, raw []byte) ([]byte, error) {
	if strings.HasSuffix(path, Compressed) {
		return Gzip(append(raw, '\n'))
	}
	var out bytes.Buffer
	out.Grow(2 * len(raw))
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Gzip compresses data at gzip's best compression with no header time,
// so that the bytes depend only on data: the one encoding of every stored
// plan, graph plan and result-store blob.
func Gzip(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write writes the plan to path (Encode), atomically: on a failure the
// file keeps its old content (internal/atomicfile).
func (p *Plan) Write(path string) error {
	data, err := p.Encode(path)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o644)
}
