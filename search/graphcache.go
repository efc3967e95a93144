package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tcpmap/internal/atomicfile"

	"tcpmap/model/plan"
	"tcpmap/model/workload"
)

// DirCache is the PlanCache of graph planning: op plans stored in a folder
// under their content key (GraphKey; KEY.plan.json.gz), and, read only,
// the workloads' stored einsum plans (results/plans/NAME-OP.plan.json or
// .plan.json.gz, planned by `tcpmap plan --op` with the workload's
// declared layouts on the embedded hardware spec).
type DirCache struct {
	// Dir holds the cache's own plans ("": none are kept).
	Dir string
	// Stored is the folder of the stored plans ("": not used). A stored
	// plan serves an op whose operands are all in their declared layouts
	// when its einsum, axes and HBM layouts are the op's; use it only with
	// the hardware spec the plans were made on.
	Stored string
}

// Get returns the plan stored under key, or the stored plan of op.
func (c *DirCache) Get(key string, w *workload.Workload, op string) (*plan.Plan, bool) {
	if c.Dir != "" {
		if p, err := plan.Read(filepath.Join(c.Dir, key+".plan.json.gz")); err == nil && p.Workload.Op == op {
			return p, true
		}
	}
	if c.Stored == "" {
		return nil, false
	}
	base := StoredPlanName(w, op)
	for _, name := range []string{base + ".plan.json", base + ".plan.json.gz"} {
		p, err := plan.Read(filepath.Join(c.Stored, name))
		if err != nil {
			continue
		}
		if storedMatches(w, op, p) {
			return p, true
		}
	}
	return nil, false
}

// StoredPlanName is the base name (without .plan.json[.gz]) of op's
// stored plan: NAME-OP, or with an epilogue (workload.Fuse) NAME-OP+E1+…
// (llama3-70b-decode-qk+scale), so that a fused and an unfused plan of one
// einsum are kept side by side.
func StoredPlanName(w *workload.Workload, op string) string {
	name := w.Name + "-" + op
	if o := findOp(w, op); o != nil {
		for _, e := range o.Epilogue {
			name += "+" + e.Name
		}
	}
	return name
}

// storedMatches reports whether stored plan p is the plan of op as w
// states it: the same op, einsum and axes, and every operand's HBM
// tensor in the program laid out as w lays it out.
func storedMatches(w *workload.Workload, op string, p *plan.Plan) bool {
	o := findOp(w, op)
	if o == nil || o.Kind != workload.KindEinsum || p.Workload.Op != op || p.Workload.Name != w.Name {
		return false
	}
	if p.Program == nil || p.Program.Reference == nil || !slices.Equal(p.Workload.Epilogue, epilogueNames(o.Epilogue)) {
		return false
	}
	// The plan's einsum spelling must be the op's (ProblemHash of the
	// op's contraction is not recomputable from the plan alone).
	ein := ""
	for i, in := range o.Inputs[:min(len(o.Inputs), workload.EinsumArity)] { // the contraction's, not its epilogue's tensors
		if i > 0 {
			ein += ", "
		}
		ein += einsumSide(w.Tensor(in).Axes)
	}
	ein += " -> " + einsumSide(w.Tensor(o.Outputs[0]).Axes)
	if p.Workload.Einsum != ein {
		return false
	}
	for _, name := range operands(o) {
		t := w.Tensor(name)
		pt, ok := p.Program.Tensor(name)
		if !ok || pt.Element == nil {
			return false
		}
		want := orderExpr(w, t.Axes)
		if t.LayoutExpr != nil {
			want = t.LayoutExpr
		}
		if pt.Element.Text() != want.Text() {
			return false
		}
	}
	// The axes sizes: every axis of the plan's at the workload's size.
	for _, a := range p.Mapping.Axes {
		n, ok := w.AxisSize(a.Name)
		size := a.Size
		if a.Valid > 0 {
			size = a.Valid
		}
		if !ok || int64(size) != n {
			return false
		}
	}
	return true
}

func einsumSide(axes []string) string {
	if len(axes) == 0 {
		return "1"
	}
	s := ""
	for i, a := range axes {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}

// Put stores p under key (atomically; nothing when Dir is ""). A plan
// whose search a timeout, the memory budget or an interrupt stopped is
// not kept: the key (GraphKey) names the evaluation budget, not the
// machine's speed, so another run would take it for the search's result.
func (c *DirCache) Put(key string, p *plan.Plan) error {
	if c.Dir == "" {
		return nil
	}
	switch p.Search.Stopped {
	case StoppedTimeout, StoppedMemory, StoppedInterrupt:
		return nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	return p.Write(filepath.Join(c.Dir, key+".plan.json.gz"))
}

// GetNone returns the error of a search that gave no plan within the
// evaluation budget key names (KEY.none holds its message).
func (c *DirCache) GetNone(key string) (error, bool) {
	if c.Dir == "" {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(c.Dir, key+".none"))
	if err != nil {
		return nil, false
	}
	return &StoppedError{Stopped: StoppedBudget, Why: strings.TrimSpace(string(data)) + " (cached)"}, true
}

// PutNone records that the search under key stopped at its evaluation
// budget before any legal candidate (only that: a timeout depends on the
// machine). Written atomically.
func (c *DirCache) PutNone(key string, err error) error {
	var se *StoppedError
	if c.Dir == "" || !errors.As(err, &se) || se.Stopped != StoppedBudget {
		return nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(c.Dir, key+".none"), []byte(se.Why+"\n"), 0o644)
}

// GetChain returns the resident chain of n plans stored under key
// (KEY-0.plan.json.gz, …), or the error that no chain agreed
// (KEY.nochain holds its message).
func (c *DirCache) GetChain(key string, n int) ([]*plan.Plan, error, bool) {
	if c.Dir == "" {
		return nil, nil, false
	}
	if data, err := os.ReadFile(filepath.Join(c.Dir, key+".nochain")); err == nil {
		return nil, errors.New(strings.TrimSpace(string(data)) + " (cached)"), true
	}
	ps := make([]*plan.Plan, n)
	for k := range ps {
		p, err := plan.Read(filepath.Join(c.Dir, fmt.Sprintf("%s-%d.plan.json.gz", key, k)))
		if err != nil {
			return nil, nil, false
		}
		ps[k] = p
	}
	return ps, nil, true
}

// PutChain stores a resident chain's plans under key, or the error that
// no chain agreed (PlanChain pairs every candidate: the answer depends on
// no budget or machine).
func (c *DirCache) PutChain(key string, ps []*plan.Plan, err error) error {
	if c.Dir == "" {
		return nil
	}
	if mkerr := os.MkdirAll(c.Dir, 0o755); mkerr != nil {
		return mkerr
	}
	if err != nil {
		return atomicfile.WriteFile(filepath.Join(c.Dir, key+".nochain"), []byte(err.Error()+"\n"), 0o644)
	}
	for k, p := range ps {
		if werr := p.Write(filepath.Join(c.Dir, fmt.Sprintf("%s-%d.plan.json.gz", key, k))); werr != nil {
			return werr
		}
	}
	return nil
}
