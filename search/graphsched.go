package search

import (
	"errors"
	"fmt"
	"slices"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
)

// The graph's overlapped schedule: every kernel of the graph in one
// program, in program order, each graph tensor at its own HBM address
// (plan.Graph.Addresses), priced by the cost model's scheduler. The
// scheduler keeps the written order and runs an op as soon as its context
// is free and no hazard on its addresses holds it back (002 L7042-L7075):
// a kernel's weight DMA starts while the kernel before it still computes,
// and a kernel's reads of its producer's output wait for that output's
// writes. This is the makespan of the graph on one chip with the manual's
// contexts overlapping across kernel boundaries; the sequential total
// (GraphCost.Cycles) runs each kernel alone after the one before.

// ErrPadded is GraphProgram's error for a padded kernel, whose axes are
// not the graph's.
var ErrPadded = errors.New("a padded kernel has no place in the graph's program")

// ErrRelayout is GraphProgram's error for a graph tensor a kernel reads in
// another layout than its producer writes when the graph plan states no
// relayout for that kernel.
var ErrRelayout = errors.New("a kernel reads a tensor in another layout than it is stored in, and the plan states no relayout")

// GraphProgram merges the kernels of g into one program: each kernel's
// tensors prefixed with its op's name, except its HBM arguments, which
// become the graph's tensors (a reshape's output is a tile view of the
// tensor whose bytes it shares); each at the graph's address. Ops that are
// not plannable leave their outputs as the program's inputs. A relayout
// the plan states (a consumer reading a tensor in another layout) is an
// HBM-to-HBM copy (kernel.OpHBMToHBM, 002 L2608-2636) into a tensor of its
// own, `TENSOR@CONSUMER` (plan.RelayoutCopy, at its plan.Graph.Addresses
// region), just before the consumer's ops. It fails for a padded kernel (its axes are
// not the graph's).
func GraphProgram(g *plan.Graph) (*kernel.Program, error) {
	addr, err := g.Addresses()
	if err != nil {
		return nil, err
	}
	byName := map[string]*plan.GraphTensor{}
	for i := range g.Tensors {
		byName[g.Tensors[i].Name] = &g.Tensors[i]
	}
	root := func(name string) string {
		for byName[name] != nil && byName[name].View != "" {
			name = byName[name].View
		}
		return name
	}
	m := &kernel.Program{Name: g.Workload.Name, Chips: g.Workload.Chips}
	all, err := mapping.ParseAxes(g.Workload.Axes)
	if err != nil {
		return nil, fmt.Errorf("graph %s: axes: %w", g.Workload.Name, err)
	}
	sizes := map[string]int{}
	for _, a := range all.List() {
		sizes[a.Name] = a.Size
	}
	declared := map[string]*kernel.Tensor{} // graph tensors already in m
	written := map[string]bool{}            // graph tensors a kernel of m writes
	// left[t]: the DM tensors (merged names) a kernel left graph tensor t
	// in (its to_hbm handoffs, kernel.Program.Handoff); the kernel that
	// takes t reads them under those names.
	left := map[string][]*kernel.Tensor{}
	for i := range g.Ops {
		o := &g.Ops[i]
		if o.Plan == nil {
			continue
		}
		p := o.Plan.Program
		if p.Reference != nil && len(p.Reference.Valid) > 0 {
			return nil, fmt.Errorf("op %s: %w", o.Name, ErrPadded)
		}
		for _, a := range p.Axes.List() {
			n, ok := sizes[a.Name]
			if !ok {
				// A kernel's own axis (a K-chunked kernel's interleave
				// axis): declared in the merged program, one size for
				// every kernel that declares it.
				sizes[a.Name] = a.Size
				grown, err := mapping.NewAxes(append(all.List(), a)...)
				for _, sk := range all.Skews() {
					if err == nil {
						grown, err = grown.WithSkew(sk)
					}
				}
				if err != nil {
					return nil, fmt.Errorf("op %s: axis %s: %w", o.Name, a.Name, err)
				}
				all = grown
				continue
			}
			if n != a.Size {
				return nil, fmt.Errorf("op %s: axis %s of size %d, the graph's is %d", o.Name, a.Name, a.Size, n)
			}
		}
		// The inputs this kernel reads through a relayout, and their
		// copies' addresses.
		relaid := map[string]int64{}
		for _, in := range g.KernelInputs(o) {
			if a, ok := addr[plan.RelayoutCopy(in, o.Name)]; ok {
				relaid[in] = a
			}
		}
		var pre []*kernel.Op // the relayouts' copies, before the kernel's ops
		graphArg := map[string]bool{}
		for _, t := range p.Tensors {
			if t.Mem == kernel.HBM && t.View == "" {
				if byName[t.Name] == nil {
					return nil, fmt.Errorf("op %s: HBM tensor %s is not a graph tensor", o.Name, t.Name)
				}
				graphArg[t.Name] = true
			}
		}
		// The DM tensors this kernel takes from its producer: the
		// producer's, same address and mappings.
		taken := map[string]string{}
		for _, h := range p.Handoff {
			if h.Kind != kernel.OpToDM {
				continue
			}
			src, _ := p.Tensor(h.Src)
			dst, _ := p.Tensor(h.Dst)
			k := slices.IndexFunc(left[src.Base()], func(l *kernel.Tensor) bool { return kernel.SameDM(l, dst) })
			if k < 0 {
				return nil, fmt.Errorf("op %s: DM tensor %s is not where a kernel before it left %s", o.Name, dst.Name, src.Base())
			}
			taken[dst.Name] = left[src.Base()][k].Name
		}
		name := func(s string) string {
			if n, ok := taken[s]; ok {
				return n
			}
			if _, ok := relaid[s]; ok && graphArg[s] {
				return plan.RelayoutCopy(s, o.Name)
			}
			if graphArg[s] {
				if r := root(s); r != s {
					return o.Name + "." + s // a reshape's view of r
				}
				return s
			}
			return o.Name + "." + s
		}
		q, err := p.Rename(name)
		if err != nil {
			return nil, fmt.Errorf("op %s: %w", o.Name, err)
		}
		delta := map[string]int64{}
		for _, t := range p.Tensors {
			if graphArg[t.Name] {
				delta[t.Name] = addr[t.Name] - t.Addr
				if a, ok := relaid[t.Name]; ok {
					delta[t.Name] = a - t.Addr
				}
			}
		}
		for _, h := range q.Handoff {
			if h.Kind == kernel.OpToHBM {
				dm, _ := q.Tensor(h.Src)
				out, _ := p.Tensor(p.Reference.Output)
				left[out.Base()] = append(left[out.Base()], dm)
			}
		}
		for k, t := range q.Tensors {
			src := p.Tensors[k]
			if _, ok := taken[src.Name]; ok {
				continue // declared by the kernel that left it
			}
			if src.Mem != kernel.HBM {
				m.Tensors = append(m.Tensors, t)
				continue
			}
			t.Addr += delta[src.Base()]
			switch {
			case src.View != "":
				// A tile view: of the graph tensor, or of the view the
				// kernel's argument is.
				t.View = root(src.View)
				if r := root(src.View); r == src.View {
					t.View = src.View
				}
				if _, ok := relaid[src.View]; ok && graphArg[src.View] {
					// A tile of an argument read through a relayout: of
					// the copy, whose bytes it reads.
					t.View = plan.RelayoutCopy(src.View, o.Name)
				}
				m.Tensors = append(m.Tensors, t)
			case root(src.Name) != src.Name:
				// A reshape's output: a view of its root's bytes, which
				// an op without a kernel produced when no kernel has
				// declared it (an input of the program, row-major).
				r := root(src.Name)
				if declared[r] == nil {
					rt, err := rootTensor(byName[r], sizes, addr[r])
					if err != nil {
						return nil, fmt.Errorf("op %s: %w", o.Name, err)
					}
					declared[r] = rt
					m.Tensors = append(m.Tensors, rt)
				}
				t.View, t.Role = r, kernel.Intermediate
				m.Tensors = append(m.Tensors, t)
			case relaid[src.Name] > 0: // a copy's region follows the graph's tensors
				// The copy this kernel reads, written by a relayout from
				// the tensor as stored (declared by its producer, or an
				// input of the program in its stored layout).
				gt := byName[src.Name]
				if declared[gt.Name] == nil {
					st, err := storedTensor(gt, all, addr[gt.Name])
					if err != nil {
						return nil, fmt.Errorf("op %s: %w", o.Name, err)
					}
					declared[gt.Name] = st
					m.Tensors = append(m.Tensors, st)
				}
				t.Role = kernel.Intermediate
				m.Tensors = append(m.Tensors, t)
				pre = append(pre, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpHBMToHBM, Src: gt.Name, Dst: t.Name})
			default:
				gt := byName[src.Name]
				if prev := declared[gt.Name]; prev != nil {
					// One layout in two spellings (m![B, D] and m![D]
					// when B = 1: an op kernel leaves out axes of size
					// one) is one tensor.
					if eq, _, err := mapping.EquivLimit(prev.Element, t.Element, false, 1<<22); err != nil || !eq {
						return nil, fmt.Errorf("op %s: tensor %s in layout %s, %s before: %w", o.Name, gt.Name, t.Element.Text(), prev.Element.Text(), ErrRelayout)
					}
					if src.Role == kernel.Output {
						written[gt.Name] = true
					}
					continue
				}
				switch {
				case gt.Producer == "" || src.Role == kernel.Input && !written[gt.Name]:
					t.Role = kernel.Input
				case gt.Role == "output":
					t.Role = kernel.Output
				default:
					t.Role = kernel.Output // written here, read by later kernels
				}
				if src.Role == kernel.Output {
					written[gt.Name] = true
				}
				declared[gt.Name] = t
				m.Tensors = append(m.Tensors, t)
			}
		}
		for _, op := range q.Ops {
			// The DMA commands hold the kernel's own HBM addresses:
			// engines.Lower derives them again at the graph's.
			op.DMA = nil
		}
		m.Ops = append(append(m.Ops, pre...), q.Ops...)
	}
	if len(m.Ops) == 0 {
		return nil, fmt.Errorf("graph %s has no kernel", g.Workload.Name)
	}
	m.Axes = all
	return m, nil
}

// storedTensor declares graph tensor gt as an HBM input of the graph's
// program at addr, in the layout it is stored in.
func storedTensor(gt *plan.GraphTensor, axes mapping.Axes, addr int64) (*kernel.Tensor, error) {
	d, err := dtype.Parse(gt.DType)
	if err != nil {
		return nil, err
	}
	el, err := mapping.Parse(gt.Layout, axes, nil)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: layout %s: %w", gt.Name, gt.Layout, err)
	}
	return &kernel.Tensor{Name: gt.Name, Mem: kernel.HBM, DType: d, Role: kernel.Input, Chip: mapping.Identity(), Element: el, Addr: addr}, nil
}

// rootTensor declares graph tensor gt as a row-major HBM input of the
// graph's program at addr.
func rootTensor(gt *plan.GraphTensor, sizes map[string]int, addr int64) (*kernel.Tensor, error) {
	d, err := dtype.Parse(gt.DType)
	if err != nil {
		return nil, err
	}
	parts := make([]*mapping.Expr, len(gt.Axes))
	for i, a := range gt.Axes {
		n, ok := sizes[a]
		if !ok {
			return nil, fmt.Errorf("tensor %s: axis %s is no kernel's", gt.Name, a)
		}
		parts[i] = mapping.Sym(a, n)
	}
	el := mapping.Identity()
	if len(parts) > 0 {
		el = mapping.Pair(parts...)
	}
	return &kernel.Tensor{Name: gt.Name, Mem: kernel.HBM, DType: d, Role: kernel.Input, Chip: mapping.Identity(), Element: el, Addr: addr}, nil
}

// GraphSchedule prices the graph's program (GraphProgram) with the cost
// model: its makespan with kernels overlapping where the contexts and the
// hazards allow.
func GraphSchedule(spec *engines.Spec, g *plan.Graph) (*cost.Report, error) {
	p, err := GraphProgram(g)
	if err != nil {
		return nil, err
	}
	if err := engines.Check(spec, p); err != nil {
		return nil, fmt.Errorf("graph %s: the merged program: %w", g.Workload.Name, err)
	}
	if err := engines.Lower(spec, p); err != nil {
		return nil, fmt.Errorf("graph %s: the merged program: %w", g.Workload.Name, err)
	}
	return cost.Estimate(spec, p)
}
