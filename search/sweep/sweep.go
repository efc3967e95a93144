// Package sweep plans every point of a sweep file (`tcpmap sweep`,
// workloads/sweeps/*.yaml, docs/sweeps.md) with search's planners, in
// parallel and resumably, into a result store (Store: the SQLite store of
// package results is one), checks a store against the cost model
// (RegressStore), and prints a sweep's progress as plain lines (Lines).
// It is apart from package search so that the planners link neither the
// store's SQLite driver nor the plotting library: their tests, the longest
// under the race detector, start before those are compiled. And it imports
// only the store's records (package results/record), not the store: its
// own tests, under the race detector too, run the workers against a store
// in memory, and SQLite (a minute of CPU to build with -race) is not built
// for them. The tests that need SQLite (shards merged, a sweep killed) are
// in package results' tests.
package sweep

import (
	"strconv"
	"strings"
	"time"

	"tcpmap/constraints"
	"tcpmap/engines"
	"tcpmap/model/workload"
	"tcpmap/results/record"
)

// A sweep file (`tcpmap sweep SPEC.yaml`, workloads/sweeps/*.yaml) names
// one or more workloads and the parameters to vary over them:
//
//	name: gemm-shapes            # the sweep's name in the result store
//	workload:                    # or workloads: [ ... ] (each point is planned for each)
//	  file: ../gemm.yaml         # a workload file (relative to the sweep file), op: for a graph
//	  # or inline: einsum: MK,KN->MN, axes: {M: 256, ...}, dtype: bf16, chips: 1, name: gemm
//	grid:                        # every combination, the first parameter outermost
//	  M: {pow2: [256, 8192]}     # an axis: a list, a number, pow2: [lo, hi], range: [lo, hi, step]
//	  dtype: [bf16, i8]
//	  hw.dm.bytes_per_slice: [262144, 524288]   # any field of engines/rngd.yaml
//	  timeout: [10s, 60s]        # a planner option
//	points:                      # explicit points; with a grid, each is crossed with it
//	  - {hw.dm.bytes_per_slice: 131072, hw.dm.rows_per_bank: 1024}
//	exclude:                     # points matching every entry of one of these are left out
//	  - {M: 8192, N: 8192}
//	options: {timeout: 60s, max_evaluations: 0, max_tiles: 0, target: manual, planner: sat, pad: true, digit_orders: named}
//
// Parse reads such a file into its points; errors name the file, line
// and column (workload.Error).

// Sweep is a parsed sweep file: its points, in order.
type Sweep struct {
	// Name names the sweep in the result store; File is the sweep file.
	Name, File string
	// Points are the expanded points: workloads outermost, then the
	// explicit points, then the grid, first parameter outermost; the
	// excluded points and repeated ones (the same key) are left out.
	Points []*Point
	// Excluded counts the points exclude removed, Duplicates the points
	// that repeat an earlier point's key.
	Excluded, Duplicates int
}

// Point is one point of a sweep: a contraction, a hardware spec and
// the planner's options, with its content key.
type Point struct {
	// Index is the point's position in Sweep.Points.
	Index int
	// Params are the swept parameters' values by name, as the sweep file
	// spells them (record.Record.Params).
	Params map[string]string
	// Workload is the workload with the point's axis sizes and dtype; Op
	// the einsum op of a graph. Problem is its contraction.
	Workload *workload.Workload
	Op       string
	Problem  *constraints.Problem
	// Spec is the hardware spec with the point's hw.* overrides; SpecJSON
	// its canonical JSON (record.Key.HW hashes it).
	Spec     *engines.Spec
	SpecJSON []byte
	// Options are the planner options of the point.
	Options PointOptions
	// Key is the point's content key.
	Key record.Key
	// Line and Col locate the point in the sweep file (its explicit point,
	// or the grid).
	Line, Col int
}

// Text names the point: its workload and parameters (`gemm M=256 N=512`).
func (p *Point) Text() string {
	name := p.Workload.Name
	if p.Op != "" {
		name += "/" + p.Op
	}
	parts := []string{name}
	for _, k := range sortedParamNames(p.Params) {
		if k != "workload" {
			parts = append(parts, k+"="+p.Params[k])
		}
	}
	return strings.Join(parts, " ")
}

// Shard returns the shard of n that plans the point: its key's hash modulo
// n, so that the partition does not depend on the order of the sweep file.
func (p *Point) Shard(n int) int {
	id := p.Key.ID()
	v, _ := strconv.ParseUint(id[:15], 16, 64)
	return int(v % uint64(n))
}

// PointOptions are the planner options of a sweep point; every field
// enters the point's key (record.Key.Options).
type PointOptions struct {
	Planner        string        `json:"planner"`
	Target         string        `json:"target"`
	Timeout        time.Duration `json:"timeout"`
	MaxEvaluations int           `json:"max_evaluations"`
	MaxTiles       int           `json:"max_tiles"`
	Pad            bool          `json:"pad"`
	// DigitOrders is "all" (every order of each axis's digits,
	// search.Options.AllOrders) or empty (the named orders, the default:
	// digit_orders: named), so that the keys of the points planned before
	// the option still name their stored results.
	DigitOrders string `json:"digit_orders,omitempty"`
}

// AllOrders reports whether the point's search holds every digit order.
func (o *PointOptions) AllOrders() bool { return o.DigitOrders == "all" }

// Targets are the values of the target option (the `tcpmap plan
// --target` values): whether dual-channel collect packets are planned.
var Targets = []string{"manual", "visa-0.1", "opt-0.6"}
