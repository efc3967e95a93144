package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"

	"tcpmap/model/pos"
)

// The cost model's regression baseline (results/cost-baseline.json): the
// predicted cycles and bottleneck of every golden kernel (and, once the
// planner writes plans, every workload plan). `tcpmap regress` recomputes
// them and reports every entry that drifted.

// DefaultTolerance is the relative change in cycles a regression accepts:
// 0.5 %.
const DefaultTolerance = 0.005

// Baseline is the stored predictions.
type Baseline struct {
	// Comment says what the file is and how to regenerate it.
	Comment string `json:"comment"`
	// Tolerance is the relative drift in cycles accepted.
	Tolerance float64 `json:"tolerance"`
	// Kernels are the golden kernel programs (workloads/kernels/*.json),
	// sorted by file.
	Kernels []BaselineEntry `json:"kernels"`
	// Plans are the workload plans priced by the planner (workloads/*.yaml),
	// sorted by file; empty until the planner exists.
	Plans []BaselineEntry `json:"plans"`
}

// BaselineEntry is the prediction for one file.
type BaselineEntry struct {
	// File is the input's path relative to the repository root, slash
	// separated; it identifies the entry.
	File string `json:"file"`
	// Name is the kernel's or plan's name.
	Name string `json:"name"`
	// Cycles is the predicted makespan; Bottleneck the report's bottleneck
	// (`context/engine`).
	Cycles     float64 `json:"cycles"`
	Bottleneck string  `json:"bottleneck"`
}

// Entry returns the baseline entry of a report.
func Entry(file string, r *Report) BaselineEntry {
	return BaselineEntry{File: file, Name: r.Kernel, Cycles: math.Round(r.Cycles*10) / 10, Bottleneck: r.Bottleneck.String()}
}

// ReadBaseline reads a baseline file. Errors are *pos.Error: the file, the
// line (and the column of a JSON syntax error) and, for a bad value, the
// field.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseBaseline(path, data)
}

// ParseBaseline parses a baseline file's bytes; path is the name errors
// carry.
func ParseBaseline(path string, data []byte) (*Baseline, error) {
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		e := pos.JSON(path, data, err)
		if m := unknownField.FindStringSubmatch(err.Error()); e.Line == 0 && m != nil {
			e.Line = pos.JSONKeyLine(data, m[1])
		}
		return nil, e
	}
	// fieldErr is a problem at the field's line.
	fieldErr := func(field, format string, args ...any) error {
		return &pos.Error{File: path, Line: pos.JSONLine(data, field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if b.Tolerance < 0 || b.Tolerance >= 1 || math.IsNaN(b.Tolerance) {
		return nil, fieldErr("tolerance", "%v outside [0, 1)", b.Tolerance)
	}
	for k, list := range [2][]BaselineEntry{b.Kernels, b.Plans} {
		field := [2]string{"kernels", "plans"}[k]
		seen := map[string]bool{}
		for i, e := range list {
			if e.File == "" {
				return nil, fieldErr(fmt.Sprintf("%s[%d].file", field, i), "missing")
			}
			if seen[e.File] {
				return nil, fieldErr(fmt.Sprintf("%s[%d].file", field, i), "duplicate %q", e.File)
			}
			seen[e.File] = true
			if e.Cycles < 0 || math.IsNaN(e.Cycles) || math.IsInf(e.Cycles, 0) {
				return nil, fieldErr(fmt.Sprintf("%s[%d].cycles", field, i), "%v", e.Cycles)
			}
		}
	}
	return &b, nil
}

// unknownField is the name in encoding/json's unknown-field error, which
// carries no offset.
var unknownField = regexp.MustCompile(`^json: unknown field "([^"]+)"`)

// Write writes the baseline as indented JSON, entries sorted by file.
func (b *Baseline) Write(w io.Writer) error {
	c := *b
	c.Kernels = sortedEntries(b.Kernels)
	c.Plans = sortedEntries(b.Plans)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

func sortedEntries(es []BaselineEntry) []BaselineEntry {
	out := append([]BaselineEntry{}, es...)
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// Drift is one entry that changed.
type Drift struct {
	// Section is "kernels" or "plans".
	Section string `json:"section"`
	File    string `json:"file"`
	// Problem is "cycles" (drifted beyond the tolerance), "bottleneck"
	// (changed), "missing" (in the baseline, not computed) or "new"
	// (computed, not in the baseline).
	Problem string `json:"problem"`
	// Old and New are the baseline's and the current entry (nil when
	// missing or new).
	Old *BaselineEntry `json:"old,omitempty"`
	New *BaselineEntry `json:"new,omitempty"`
	// Change is the relative change in cycles, (new − old) / old (1 when
	// old is 0 and new is not).
	Change float64 `json:"change"`
}

// String prints the drift on one line.
func (d Drift) String() string {
	switch d.Problem {
	case "missing":
		return fmt.Sprintf("%s %s: in the baseline (%.1f cycles, %s) but not computed", d.Section, d.File, d.Old.Cycles, d.Old.Bottleneck)
	case "new":
		return fmt.Sprintf("%s %s: not in the baseline (now %.1f cycles, %s)", d.Section, d.File, d.New.Cycles, d.New.Bottleneck)
	case "bottleneck":
		return fmt.Sprintf("%s %s: bottleneck %s → %s (cycles %.1f → %.1f, %+.2f%%)", d.Section, d.File, d.Old.Bottleneck, d.New.Bottleneck,
			d.Old.Cycles, d.New.Cycles, 100*d.Change)
	}
	return fmt.Sprintf("%s %s: cycles %.1f → %.1f (%+.2f%%, tolerance ±%.2f%%)", d.Section, d.File, d.Old.Cycles, d.New.Cycles,
		100*d.Change, 100*DefaultTolerance)
}

// Compare returns every entry of cur that drifted from old: cycles changed
// by more than old's tolerance (relative), a changed bottleneck, and entries
// missing from either side, sorted by section and file.
func Compare(old, cur *Baseline) []Drift {
	tol := old.Tolerance
	var out []Drift
	for k, pair := range [2][2][]BaselineEntry{{old.Kernels, cur.Kernels}, {old.Plans, cur.Plans}} {
		section := [2]string{"kernels", "plans"}[k]
		was := map[string]*BaselineEntry{}
		for i := range pair[0] {
			was[pair[0][i].File] = &pair[0][i]
		}
		now := map[string]*BaselineEntry{}
		for i := range pair[1] {
			now[pair[1][i].File] = &pair[1][i]
		}
		for _, e := range sortedEntries(pair[0]) {
			if _, ok := now[e.File]; !ok {
				e := e
				out = append(out, Drift{Section: section, File: e.File, Problem: "missing", Old: &e})
			}
		}
		for _, e := range sortedEntries(pair[1]) {
			e := e
			o, ok := was[e.File]
			if !ok {
				out = append(out, Drift{Section: section, File: e.File, Problem: "new", New: &e})
				continue
			}
			change := 0.0
			switch {
			case o.Cycles != 0:
				change = (e.Cycles - o.Cycles) / o.Cycles
			case e.Cycles != 0:
				change = 1 // from nothing: count it as a 100 % change
			}
			o2 := *o
			switch {
			case o.Bottleneck != e.Bottleneck:
				out = append(out, Drift{Section: section, File: e.File, Problem: "bottleneck", Old: &o2, New: &e, Change: change})
			case math.Abs(change) > tol:
				out = append(out, Drift{Section: section, File: e.File, Problem: "cycles", Old: &o2, New: &e, Change: change})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Section != out[j].Section {
			return out[i].Section < out[j].Section
		}
		return out[i].File < out[j].File
	})
	return out
}
