package sweep

import (
	"context"
	"fmt"
	"strings"

	"tcpmap/results/record"
	"tcpmap/search"
)

// PlanPoint plans a sweep point as `tcpmap plan` plans a workload: the SAT
// branch and bound (or the exhaustive planner) over the point's mapspace
// on the point's hardware, padded when no mapping is legal at its sizes
// (unless the point's pad option is off), within its timeout and
// evaluation budget. Each point's search evaluates candidates on one core
// (the sweep plans points in parallel instead); plans do not depend on it.
func PlanPoint(ctx context.Context, p *Point) (*record.Record, error) {
	s, err := search.NewSpace(p.Problem, p.Spec)
	if err != nil {
		return nil, err
	}
	s.Library = p.Options.Target != "manual"
	run := search.Solve
	if p.Options.Planner == "exhaustive" {
		run = search.Exhaustive
	}
	opts := search.Options{Top: 1, Timeout: p.Options.Timeout, MaxEvaluations: p.Options.MaxEvaluations,
		MaxTiles: p.Options.MaxTiles, Workers: 1, Context: ctx, MemoryBudget: search.DefaultMemoryBudget,
		AllOrders: p.Options.AllOrders()}
	res, relax, why, err := search.SolveAnyShape(s, run, opts, p.Options.Pad)
	if err != nil {
		return nil, err
	}
	if res.Stats.Stopped == search.StoppedInterrupt {
		return nil, ErrInterrupted
	}
	r := &record.Record{
		Workload: p.Workload.Name, Op: p.Op, Einsum: p.Problem.Einsum(), Axes: axesText(p),
		DType: p.Problem.In[0].DType.String(), Params: p.Params,
		Candidates: res.Stats.Candidates, Legal: res.Stats.Legal, Stopped: res.Stats.Stopped,
		WallSeconds: res.Stats.Wall.Seconds(),
	}
	if res.Best == nil {
		if !res.Stats.Complete {
			r.Status = record.StatusNoPlan
			r.Message = fmt.Sprintf("stopped (%s) after %.1fs before any legal candidate (%d candidates)", res.Stats.Stopped, res.Stats.Wall.Seconds(), res.Stats.Candidates)
			return r, nil
		}
		r.Status = record.StatusInfeasible
		r.Message = fmt.Sprintf("no legal mapping among %d candidates", res.Stats.Candidates)
		if why != nil && len(why.Rules) > 0 {
			var rules []string
			for _, x := range why.Rules {
				rules = append(rules, x.Rule)
			}
			r.Message += ": the mapspace is empty under " + strings.Join(rules, ", ")
		}
		return r, nil
	}
	pl, err := res.Plan()
	if err != nil {
		return nil, err
	}
	data, err := pl.Marshal()
	if err != nil {
		return nil, err
	}
	if r.Plan, err = record.Compress(data); err != nil {
		return nil, err
	}
	if relax != nil {
		r.Message = "planned padded: " + relax.String()
	}
	c, rep := pl.Cost, res.Best.Report
	r.Status = record.StatusPlanned
	r.Cycles, r.Seconds, r.MACUtilization, r.HBMUtilization = c.Cycles, c.Seconds, c.MACUtilization, c.HBMUtilization
	r.Roofline, r.RooflineCycles, r.Bound = c.Roofline, c.RooflineCycles, c.Bound
	r.Bottleneck, r.BottleneckShare, r.HBMBytes = c.Bottleneck, c.BottleneckShare, c.HBMBytes
	r.MACs = float64(rep.Utilization.MACs)
	r.MinHBMBytes = rep.Roofline.MinReadBytes + rep.Roofline.MinWriteBytes
	r.PeakMACsPerCycle = float64(rep.Utilization.PeakMACsPerCycle)
	r.PeakHBMBytesPerCycle = rep.Roofline.PeakHBMBytesPerCycle
	r.Optimal, r.Gap = pl.Search.Optimal, pl.Search.Gap
	return r, nil
}

// axesText writes the point's axis sizes as plans do (`M=256, N=512`).
func axesText(p *Point) string {
	var parts []string
	for _, a := range p.Problem.Axes {
		size := a.Size
		if a.Valid > 0 {
			size = a.Valid
		}
		parts = append(parts, fmt.Sprintf("%s=%d", a.Name, size))
	}
	return strings.Join(parts, ", ")
}
