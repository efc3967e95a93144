package search

import (
	"fmt"

	"tcpmap/cost"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// Mapping spells a candidate out in the plan's words.
func (s *Space) Mapping(c *Candidate) plan.Mapping {
	p := s.P
	w, x := int(c.Stationary), 1-int(c.Stationary)
	m := plan.Mapping{
		Stationary:   p.In[w].Name,
		Streaming:    p.In[x].Name,
		Packet:       c.Mode.String(),
		Content:      c.Content.String(),
		Broadcast:    c.Bcast.String(),
		Accumulate:   string(c.Acc.Kind()),
		DoubleBuffer: c.DoubleBuffer,
		Switch:       c.Switch,
	}
	for a, ax := range p.Axes {
		class := "contracted"
		switch s.Role(a, c.Stationary) {
		case RoleB:
			class = "batch"
		case RoleFX:
			class = "free"
		case RoleFW:
			class = "stationary-free"
		}
		am := plan.AxisMapping{Name: ax.Name, Size: ax.Size, Valid: ax.Valid, Class: class,
			Tile: c.Factor(a, Tile), Chip: c.Factor(a, Chip), Cluster: c.Factor(a, Cluster), Slice: c.Factor(a, Slice),
			Time: c.Factor(a, Time), Row: c.Factor(a, Row), Packet: c.Factor(a, Packet)}
		if row, dealt, inner, ok := c.NamedOrder(a); ok {
			am.RowOuter, am.DealtOut, am.ClusterInner = row, dealt, inner
		} else {
			am.Digits = c.OrderText(a)
		}
		m.Axes = append(m.Axes, am)
	}
	for _, a := range c.TimeOrder() {
		m.TimeOrder = append(m.TimeOrder, p.Axes[a].Name)
	}
	for _, a := range c.Tiles() {
		m.TileOrder = append(m.TileOrder, p.Axes[a].Name)
	}
	for t, o := range []*Operand{&p.In[0], &p.In[1], &p.Out} {
		m.Layouts = append(m.Layouts, plan.TensorLayout{Tensor: o.Name, Order: c.Layout[t].String()})
	}
	return m
}

// Cost summarizes a cost report for a plan.
func Cost(r *cost.Report) plan.Cost {
	return plan.Cost{
		Model:           "tcpmap/cost",
		Cycles:          r.Cycles,
		Seconds:         r.Seconds,
		MACUtilization:  r.Utilization.MAC,
		HBMUtilization:  r.Roofline.HBM,
		Bottleneck:      r.Bottleneck.String(),
		BottleneckShare: r.Bottleneck.Share,
		Bound:           r.Roofline.Bound,
		HBMBytes:        r.Roofline.HBMBytes,
		Findings:        len(r.Findings),
		RooflineCycles:  r.Roofline.IdealCycles,
		Roofline:        r.Roofline.Attained,
	}
}

// Plan assembles the plan of the result's winner. It fails when no
// candidate was legal.
func (r *Result) Plan() (*plan.Plan, error) {
	return r.PlanOf(r.Best)
}

// PlanOf assembles the plan of one evaluated candidate of the result. Only
// the winner's plan claims optimality; a runner-up's carries the search's
// proven lower bound and its own gap to it.
func (r *Result) PlanOf(x *Evaluated) (*plan.Plan, error) {
	s := r.Space
	if x == nil {
		return nil, fmt.Errorf("%s: no legal mapping among %d candidates", s.P.File, r.Stats.Candidates)
	}
	optimal := ""
	planner := r.Stats.Planner
	if planner == "" {
		planner = "exhaustive"
	}
	switch {
	case x != r.Best:
		// A runner-up (Top) is not the optimum, whatever the search proved.
	case planner == "sat" && r.Proof.Proven:
		optimal = "proven"
	case planner == "exhaustive" && r.Stats.Complete && !r.Stats.Restricted:
		optimal = "exhaustive"
	}
	pl := &plan.Plan{
		Version: plan.Version,
		Workload: plan.Workload{File: s.P.File, Name: s.P.Workload, Op: s.P.Op, Einsum: s.P.Einsum(),
			Axes: s.P.Decl.String(), Epilogue: epilogueNames(s.P.Epilogue)},
		Mapping: s.Mapping(&x.Candidate),
		Cost:    Cost(x.Report),
		Search: plan.Search{Planner: planner, Optimal: optimal, Stopped: r.Stats.Stopped, Candidates: r.Stats.Candidates,
			Legal: r.Stats.Legal, CostEvaluations: r.Stats.CostEvaluations, Pruned: r.Stats.Pruned, Skipped: r.Stats.Skipped, MaxTiles: s.MaxTiles()},
		Program: x.Program,
	}
	if s.AllOrders() {
		pl.Search.DigitOrders = "all"
	}
	if planner == "sat" {
		pl.Search.SATModels, pl.Search.IllegalSkeletons, pl.Search.Clauses = r.Stats.SAT.Models, r.Stats.SAT.IllegalSkeletons, r.Stats.SAT.Clauses
		pl.Search.Placements, pl.Search.BoundSkips, pl.Search.TilingSkips = r.Stats.SAT.Placements, r.Stats.SAT.BoundSkips, r.Stats.SAT.TilingSkips
		pl.Search.OrderSkips = r.Stats.SAT.OrderSkips
		pl.Search.LowerBound, pl.Search.Gap = r.Proof.LowerBound, r.Proof.Gap
		if x != r.Best && r.Proof.LowerBound > 0 {
			// The bound holds for every candidate; the gap is this one's.
			pl.Search.Gap = (x.Report.Cycles - r.Proof.LowerBound) / x.Report.Cycles
		}
	}
	for _, rs := range r.Stats.Rules() {
		pl.Search.Illegal = append(pl.Search.Illegal, plan.RuleCount{Rule: rs.Rule, Cite: rs.Cite, Count: rs.Count})
	}
	return pl, nil
}

// epilogueNames names an epilogue's ops (nil for none).
func epilogueNames(ops []*workload.Op) []string {
	var out []string
	for _, o := range ops {
		out = append(out, o.Name)
	}
	return out
}
