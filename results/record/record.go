package record

import (
	"bytes"
	"compress/gzip"
	"io"

	"tcpmap/model/plan"
)

// The statuses of a result.
const (
	// StatusPlanned: the search found a plan (proven optimal, or the best
	// found before its limit, with its gap).
	StatusPlanned = "planned"
	// StatusNoPlan: the search stopped at its limit before any legal
	// candidate.
	StatusNoPlan = "no-plan"
	// StatusInfeasible: the whole mapspace (and its paddings) holds no
	// legal mapping.
	StatusInfeasible = "infeasible"
)

// Record is one planned sweep point as the store holds it. The numbers
// describe the plan (Status StatusPlanned); for the other statuses they
// are zero and Message says what happened.
type Record struct {
	// Key is the result's content key; ID() its primary key.
	Key Key `json:"key"`
	// Sweep names the sweep that planned it, Point its index in the
	// sweep's expansion (informational: ordering only).
	Sweep string `json:"sweep"`
	Point int    `json:"point"`
	// Workload, Op, Einsum, Axes and DType describe what was planned
	// (`I K, K J -> I J`, `I=512, J=512, K=2048`, `bf16`).
	Workload string `json:"workload"`
	Op       string `json:"op,omitempty"`
	Einsum   string `json:"einsum"`
	Axes     string `json:"axes"`
	DType    string `json:"dtype"`
	// Params are the point's swept parameters by name (an axis name,
	// `dtype`, `hw.<field path>`, a planner option, `workload`), in the
	// sweep file's spelling.
	Params map[string]string `json:"params"`
	Status string            `json:"status"`
	// Message is the planner's explanation when there is no plan, or the
	// padding a padded plan used.
	Message string `json:"message,omitempty"`
	// The cost model's prediction (plan.Cost).
	Cycles          float64 `json:"cycles"`
	Seconds         float64 `json:"seconds"`
	MACUtilization  float64 `json:"mac_utilization"`
	HBMUtilization  float64 `json:"hbm_utilization"`
	Roofline        float64 `json:"roofline"`
	RooflineCycles  float64 `json:"roofline_cycles"`
	Bound           string  `json:"bound"`
	Bottleneck      string  `json:"bottleneck"`
	BottleneckShare float64 `json:"bottleneck_share"`
	HBMBytes        int64   `json:"hbm_bytes"`
	// MACs is the contraction's multiply-accumulates, MinHBMBytes its
	// inputs read and output written once; PeakMACsPerCycle and
	// PeakHBMBytesPerCycle are the hardware's two roofs (cost.Roofline).
	MACs                 float64 `json:"macs"`
	MinHBMBytes          int64   `json:"min_hbm_bytes"`
	PeakMACsPerCycle     float64 `json:"peak_macs_per_cycle"`
	PeakHBMBytesPerCycle float64 `json:"peak_hbm_bytes_per_cycle"`
	// The search (plan.Search): Optimal "proven", "exhaustive" or "";
	// Stopped why it stopped early; Gap to the proven lower bound.
	Optimal    string  `json:"optimal"`
	Stopped    string  `json:"stopped,omitempty"`
	Gap        float64 `json:"gap"`
	Candidates int     `json:"candidates"`
	Legal      int     `json:"legal"`
	// WallSeconds is the point's planning time (not part of the result's
	// content: merges and comparisons ignore it).
	WallSeconds float64 `json:"wall_seconds"`
	// Plan is the plan file's JSON (model/plan), gzip-compressed; nil
	// without a plan. Export leaves it out.
	Plan []byte `json:"-"`
}

// Compress gzips data; the bytes depend only on data (plan.Gzip).
func Compress(data []byte) ([]byte, error) { return plan.Gzip(data) }

// Decompress reverses Compress.
func Decompress(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}
