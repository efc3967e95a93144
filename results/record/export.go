package record

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
)

// exportRecord is a record as export --json writes it: the columns, the
// ID, and the parameters (the plan is left out: `results show --plan`
// prints it).
type exportRecord struct {
	ID string `json:"id"`
	*Record
}

// WriteJSON writes rs as a JSON array, one object per result, in order.
func WriteJSON(w io.Writer, rs []*Record) error {
	out := make([]exportRecord, len(rs))
	for i, r := range rs {
		out[i] = exportRecord{ID: r.Key.ID(), Record: r}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// csvColumns are export --csv's fixed columns; a column per parameter
// follows them (ParamNames' order, each headed `param:NAME`).
var csvColumns = []string{"id", "sweep", "point", "workload", "op", "einsum", "axes", "dtype",
	"status", "cycles", "seconds", "mac_utilization", "hbm_utilization", "roofline", "roofline_cycles",
	"bound", "bottleneck", "bottleneck_share", "hbm_bytes", "macs", "optimal", "stopped", "gap",
	"candidates", "legal", "wall_seconds", "workload_hash", "hw_hash", "options_hash", "cost_version", "message"}

// WriteCSV writes rs as CSV with a header row.
func WriteCSV(w io.Writer, rs []*Record) error {
	cw := csv.NewWriter(w)
	params := ParamNames(rs)
	head := append([]string(nil), csvColumns...)
	for _, p := range params {
		head = append(head, "param:"+p)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	for _, r := range rs {
		row := []string{r.Key.ID(), r.Sweep, strconv.Itoa(r.Point), r.Workload, r.Op, r.Einsum, r.Axes, r.DType,
			r.Status, g(r.Cycles), g(r.Seconds), g(r.MACUtilization), g(r.HBMUtilization), g(r.Roofline), g(r.RooflineCycles),
			r.Bound, r.Bottleneck, g(r.BottleneckShare), strconv.FormatInt(r.HBMBytes, 10), g(r.MACs), r.Optimal, r.Stopped, g(r.Gap),
			strconv.Itoa(r.Candidates), strconv.Itoa(r.Legal), g(r.WallSeconds),
			r.Key.Workload, r.Key.HW, r.Key.Options, r.Key.Cost, r.Message}
		for _, p := range params {
			row = append(row, r.Params[p])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
