package sweep

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/plan"
	"tcpmap/results/record"
)

// StoreDrift is one stored plan re-priced by the current cost model.
type StoreDrift struct {
	ID    string `json:"id"`
	Point string `json:"point"`
	// Old is the stored cycles, New the current model's; Change is
	// (New − Old) / Old.
	Old    float64 `json:"old_cycles"`
	New    float64 `json:"new_cycles"`
	Change float64 `json:"change"`
	// OldBottleneck and NewBottleneck are the stored and current
	// bottlenecks.
	OldBottleneck string `json:"old_bottleneck"`
	NewBottleneck string `json:"new_bottleneck"`
	// Drifted is set when |Change| exceeds the tolerance or the bottleneck
	// changed.
	Drifted bool `json:"drifted"`
}

// StoreRegression is a result store re-priced.
type StoreRegression struct {
	Store     string  `json:"store"`
	Tolerance float64 `json:"tolerance"`
	// Points are the re-priced results (those with a plan), in the store's
	// order; Drifted counts those that drifted.
	Points  []StoreDrift `json:"points"`
	Drifted int          `json:"drifted"`
	// Tau is Kendall's rank correlation of the old cycles against the new
	// over all points (gonum stat.Kendall): 1 when the model orders the
	// plans as it did; nil with fewer than two points.
	Tau *float64 `json:"kendall_tau"`
}

// RegressStore re-prices the plan of every result the filter selects with
// the current cost model, on the hardware spec the result was planned on
// (the store keeps it), and compares the cycles and bottleneck with the
// stored ones. A plan that no longer lowers or prices is an error naming
// the result.
func RegressStore(st StoreReader, f record.Filter, tolerance float64) (*StoreRegression, error) {
	rs, err := st.List(f, true)
	if err != nil {
		return nil, err
	}
	reg := &StoreRegression{Store: st.Path(), Tolerance: tolerance, Points: []StoreDrift{}}
	specs := map[string]*engines.Spec{}
	var olds, news []float64
	for _, r := range rs {
		if r.Status != record.StatusPlanned || r.Plan == nil {
			continue
		}
		id := r.Key.ID()
		where := fmt.Sprintf("%s: result %s (%s)", st.Path(), id[:12], r.PointText())
		spec := specs[r.Key.HW]
		if spec == nil {
			data, err := st.Hardware(r.Key.HW)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if spec, err = engines.Parse(data, "hardware "+r.Key.HW[:12]); err != nil {
				return nil, fmt.Errorf("%s: the stored hardware spec: %w", where, err)
			}
			specs[r.Key.HW] = spec
		}
		data, err := record.Decompress(r.Plan)
		if err != nil {
			return nil, fmt.Errorf("%s: the stored plan: %w", where, err)
		}
		pl, err := plan.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("%s: the stored plan: %w", where, err)
		}
		if err := engines.Check(spec, pl.Program); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if err := engines.Lower(spec, pl.Program); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		rep, err := cost.Estimate(spec, pl.Program)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		d := StoreDrift{ID: id, Point: r.PointText(), Old: r.Cycles, New: rep.Cycles,
			OldBottleneck: r.Bottleneck, NewBottleneck: rep.Bottleneck.String()}
		if r.Cycles != 0 {
			d.Change = (rep.Cycles - r.Cycles) / r.Cycles
		}
		d.Drifted = math.Abs(d.Change) > tolerance || d.OldBottleneck != d.NewBottleneck ||
			(r.Cycles == 0 && rep.Cycles != 0)
		if d.Drifted {
			reg.Drifted++
		}
		reg.Points = append(reg.Points, d)
		olds, news = append(olds, r.Cycles), append(news, rep.Cycles)
	}
	if len(olds) >= 2 {
		tau := stat.Kendall(olds, news, nil)
		if !math.IsNaN(tau) {
			reg.Tau = &tau
		}
	}
	return reg, nil
}
