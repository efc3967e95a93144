package record

import (
	"fmt"
	"maps"
	"math"
	"slices"
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

// IsNumericColumn reports whether name is one of the numeric columns a
// Cond may compare besides the parameters (cycles, roofline, …).
func IsNumericColumn(name string) bool { return numericColumns[name] != nil }

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
			parts = append(parts, b+"="+Field(r, b))
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

// Field returns a record's field or parameter by name, as text: the
// fields workload, op, einsum, axes, dtype, sweep, bottleneck and status
// (workload and dtype the swept parameter when there is one), the numeric
// columns a Cond compares, or else the parameter.
func Field(r *Record, name string) string {
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

// pointText names a point by its workload and parameters
// (`gemm M=256 N=512`).
func pointText(r *Record) string {
	parts := []string{r.Workload}
	if r.Op != "" {
		parts[0] += "/" + r.Op
	}
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
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
