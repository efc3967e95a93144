package results

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Cond is one condition of a filter: a swept parameter (an axis name,
// `dtype`, `hw.…`, a planner option) or a numeric column (cycles,
// roofline, mac_utilization, …) compared with a value, or within a range
// `NAME=LO..HI` (inclusive).
type Cond struct {
	Name string
	// Op is one of = != < <= > >= or ".." (a range, Lo to Hi).
	Op     string
	Value  string
	Lo, Hi float64
}

// numericColumns are the columns a Cond may compare besides parameters.
var numericColumns = map[string]func(*Record) float64{
	"cycles":          func(r *Record) float64 { return r.Cycles },
	"seconds":         func(r *Record) float64 { return r.Seconds },
	"mac_utilization": func(r *Record) float64 { return r.MACUtilization },
	"hbm_utilization": func(r *Record) float64 { return r.HBMUtilization },
	"roofline":        func(r *Record) float64 { return r.Roofline },
	"gap":             func(r *Record) float64 { return r.Gap },
	"macs":            func(r *Record) float64 { return r.MACs },
	"wall_seconds":    func(r *Record) float64 { return r.WallSeconds },
}

// ParseCond reads a condition: `M=1024`, `M>=1024`, `M=256..2048`,
// `dtype=bf16`, `hw.dm.bytes_per_slice<524288`, `roofline>0.5`.
func ParseCond(s string) (Cond, error) {
	for _, op := range []string{"<=", ">=", "!=", "=", "<", ">"} {
		i := strings.Index(s, op)
		if i <= 0 {
			continue
		}
		c := Cond{Name: strings.TrimSpace(s[:i]), Op: op, Value: strings.TrimSpace(s[i+len(op):])}
		if c.Name == "" || c.Value == "" {
			break
		}
		if op == "=" {
			if lo, hi, ok := strings.Cut(c.Value, ".."); ok {
				var err1, err2 error
				c.Lo, err1 = strconv.ParseFloat(lo, 64)
				c.Hi, err2 = strconv.ParseFloat(hi, 64)
				if err1 != nil || err2 != nil || c.Lo > c.Hi {
					return Cond{}, fmt.Errorf("--where %q: a range is LO..HI with numbers LO ≤ HI", s)
				}
				c.Op = ".."
				return c, nil
			}
		}
		if op != "=" && op != "!=" {
			if _, err := strconv.ParseFloat(c.Value, 64); err != nil {
				return Cond{}, fmt.Errorf("--where %q: %s compares numbers, %q is not one", s, op, c.Value)
			}
		}
		return c, nil
	}
	return Cond{}, fmt.Errorf("--where %q: want NAME=VALUE, NAME<op>NUMBER (op: = != < <= > >=) or NAME=LO..HI", s)
}

// value returns the condition's subject in r: a column or a parameter.
func (c *Cond) value(r *Record) (string, float64, bool) {
	if f := numericColumns[c.Name]; f != nil {
		v := f(r)
		return strconv.FormatFloat(v, 'g', -1, 64), v, true
	}
	v, ok := r.Params[c.Name]
	if !ok {
		return "", 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		f = math.NaN()
	}
	return v, f, true
}

// Match reports whether r satisfies the condition; a record without the
// parameter does not.
func (c *Cond) Match(r *Record) bool {
	s, f, ok := c.value(r)
	if !ok {
		return false
	}
	want, werr := strconv.ParseFloat(c.Value, 64)
	switch c.Op {
	case "=":
		return s == c.Value || (werr == nil && f == want)
	case "!=":
		return !(s == c.Value || (werr == nil && f == want))
	case "..":
		return f >= c.Lo && f <= c.Hi
	case "<":
		return f < want
	case "<=":
		return f <= want
	case ">":
		return f > want
	case ">=":
		return f >= want
	}
	return false
}

// Filter selects results. Empty fields select everything.
type Filter struct {
	// Workload matches the workload's name, or `NAME/OP` for an op of a
	// graph.
	Workload   string
	Sweep      string
	Bottleneck string
	Status     string
	Where      []Cond
}

// Match reports whether r passes every field of f.
func (f *Filter) Match(r *Record) bool {
	if f.Workload != "" && f.Workload != r.Workload && f.Workload != r.Workload+"/"+r.Op {
		return false
	}
	if f.Sweep != "" && f.Sweep != r.Sweep {
		return false
	}
	if f.Bottleneck != "" && !strings.Contains(r.Bottleneck, f.Bottleneck) {
		return false
	}
	if f.Status != "" && f.Status != r.Status {
		return false
	}
	for i := range f.Where {
		if !f.Where[i].Match(r) {
			return false
		}
	}
	return true
}

// List returns the results that pass f, in the sweep's order (sweep name,
// point index, ID). With plans false the records' Plan is left nil.
func (s *Store) List(f Filter, plans bool) ([]*Record, error) {
	cols := columns
	if !plans {
		cols = strings.Replace(columns, "wall_seconds, plan", "wall_seconds, NULL", 1)
	}
	rows, err := s.db.Query(`SELECT ` + cols + ` FROM results ORDER BY sweep, point, id`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	var all []*Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	if err := s.loadParams(all); err != nil {
		return nil, err
	}
	out := all[:0]
	for _, r := range all {
		if f.Match(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Best returns, for each group of the planned results in rs, the one with
// the fewest cycles (ties: the smaller ID). by names what a group shares:
// parameters or the fields workload, op, einsum, axes, dtype, sweep; no
// names make one group. Groups come in the order of their first record.
func Best(rs []*Record, by []string) []*Record {
	var order []string
	best := map[string]*Record{}
	for _, r := range rs {
		if r.Status != StatusPlanned {
			continue
		}
		var parts []string
		for _, b := range by {
			parts = append(parts, b+"="+field(r, b))
		}
		g := strings.Join(parts, "\x00")
		cur, ok := best[g]
		if !ok {
			order = append(order, g)
		}
		if !ok || r.Cycles < cur.Cycles || (r.Cycles == cur.Cycles && r.Key.ID() < cur.Key.ID()) {
			best[g] = r
		}
	}
	out := make([]*Record, len(order))
	for i, g := range order {
		out[i] = best[g]
	}
	return out
}

// field returns a record's field or parameter by name, as text.
func field(r *Record, name string) string {
	switch name {
	case "workload":
		if p, ok := r.Params["workload"]; ok {
			return p
		}
		return r.Workload
	case "op":
		return r.Op
	case "einsum":
		return r.Einsum
	case "axes":
		return r.Axes
	case "dtype":
		if p, ok := r.Params["dtype"]; ok {
			return p
		}
		return r.DType
	case "sweep":
		return r.Sweep
	case "bottleneck":
		return r.Bottleneck
	case "status":
		return r.Status
	}
	if f := numericColumns[name]; f != nil {
		return strconv.FormatFloat(f(r), 'g', -1, 64)
	}
	return r.Params[name]
}

// sameResult reports whether two records with the same key hold the same
// result: everything but the wall time and where they were planned from
// (sweep, point).
func sameResult(a, b *Record) bool {
	return a.Status == b.Status && a.Message == b.Message && a.Cycles == b.Cycles &&
		a.Bottleneck == b.Bottleneck && a.Bound == b.Bound && a.Optimal == b.Optimal &&
		a.Gap == b.Gap && a.Roofline == b.Roofline && bytes.Equal(a.Plan, b.Plan)
}

// Conflict is a key two stores hold with different results.
type Conflict struct {
	ID     string `json:"id"`
	File   string `json:"file"`
	Point  string `json:"point"`
	Kept   string `json:"kept"`
	Other  string `json:"other"`
	Reason string `json:"reason"`
}

// MergeReport counts what a merge did.
type MergeReport struct {
	// Added results were new to the output, Same ones it already held
	// with the same result; Conflicts the ones it held with another
	// result (the output keeps its own).
	Added     int        `json:"added"`
	Same      int        `json:"same"`
	Conflicts []Conflict `json:"conflicts"`
}

func summary(r *Record) string {
	if r.Status != StatusPlanned {
		return r.Status
	}
	return fmt.Sprintf("%.0f cycles, %s, optimal %q, gap %.3g", r.Cycles, r.Bottleneck, r.Optimal, r.Gap)
}

// Merge copies every result (and hardware spec) of the store at path into
// s. A result s already holds is kept: counted as Same when the other
// store's is equal, reported as a Conflict when it differs. Merging the
// same store twice changes nothing.
func (s *Store) Merge(path string) (*MergeReport, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	src, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	rows, err := src.db.Query(`SELECT hash, spec FROM hardware ORDER BY hash`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	type hw struct {
		hash string
		z    []byte
	}
	var hws []hw
	for rows.Next() {
		var h hw
		if err := rows.Scan(&h.hash, &h.z); err != nil {
			rows.Close()
			return nil, err
		}
		hws = append(hws, h)
	}
	rows.Close()
	for _, h := range hws {
		if _, err := s.db.Exec(`INSERT OR IGNORE INTO hardware(hash, spec) VALUES(?, ?)`, h.hash, h.z); err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
	}
	theirs, err := src.List(Filter{}, true)
	if err != nil {
		return nil, err
	}
	ours, err := s.List(Filter{}, true)
	if err != nil {
		return nil, err
	}
	have := make(map[string]*Record, len(ours))
	for _, r := range ours {
		have[r.Key.ID()] = r
	}
	rep := &MergeReport{Conflicts: []Conflict{}}
	for _, r := range theirs {
		id := r.Key.ID()
		cur, ok := have[id]
		switch {
		case !ok:
			if err := s.Put(r); err != nil {
				return nil, err
			}
			have[id] = r
			rep.Added++
		case sameResult(cur, r):
			rep.Same++
		default:
			rep.Conflicts = append(rep.Conflicts, Conflict{ID: id, File: path, Point: pointText(r),
				Kept: summary(cur), Other: summary(r), Reason: differs(cur, r)})
		}
	}
	return rep, nil
}

// differs names the first field in which two results differ.
func differs(a, b *Record) string {
	switch {
	case a.Status != b.Status:
		return "status"
	case a.Cycles != b.Cycles:
		return "cycles"
	case a.Bottleneck != b.Bottleneck:
		return "bottleneck"
	case a.Optimal != b.Optimal || a.Gap != b.Gap:
		return "optimality"
	case !bytes.Equal(a.Plan, b.Plan):
		return "plan"
	}
	return "message"
}

// pointText names a point by its workload and parameters
// (`gemm M=256 N=512`).
func pointText(r *Record) string {
	parts := []string{r.Workload}
	if r.Op != "" {
		parts[0] += "/" + r.Op
	}
	for _, k := range sortedKeys(r.Params) {
		if k == "workload" {
			continue
		}
		parts = append(parts, k+"="+r.Params[k])
	}
	return strings.Join(parts, " ")
}

// PointText names the record's point by its workload and swept parameters.
func (r *Record) PointText() string { return pointText(r) }

// ParamNames lists the parameter names that occur in rs, sorted.
func ParamNames(rs []*Record) []string {
	seen := map[string]bool{}
	for _, r := range rs {
		for k := range r.Params {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
