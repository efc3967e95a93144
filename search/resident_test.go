package search

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/cost"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/model/workload"
	"tcpmap/verify"
)

// residentHead is the attention head at a size the simulator runs in a
// second (the same graph: causal mask, then softmax over T).
func residentHead(t *testing.T) *workload.Workload {
	t.Helper()
	return headAt(t, "{S: 256, T: 256, D: 128}")
}

// headAt is workloads/attention-head.yaml with its axes line set to axes.
func headAt(t *testing.T, axes string) *workload.Workload {
	t.Helper()
	data, err := os.ReadFile("../workloads/attention-head.yaml")
	require.NoError(t, err)
	src := strings.Replace(string(data), "axes: {S: 2048, T: 2048, D: 128}", "axes: "+axes, 1)
	require.NotEqual(t, string(data), src, "the attention head's axes line moved")
	w, err := workload.Parse([]byte(src), "attention-head.yaml")
	require.NoError(t, err)
	return w
}

// moeAt is workloads/moe.yaml with its axes line set to axes.
func moeAt(t *testing.T, axes string) *workload.Workload {
	t.Helper()
	data, err := os.ReadFile("../workloads/moe.yaml")
	require.NoError(t, err)
	src := strings.Replace(string(data), "axes: {T: 1024, D: 2048, F: 768, E: 128, K: 8, BLK: 64, GRID: 256, NB: 16}", "axes: "+axes, 1)
	require.NotEqual(t, string(data), src, "the MoE's axes line moved")
	w, err := workload.Parse([]byte(src), "moe.yaml")
	require.NoError(t, err)
	return w
}

// handoffs returns the handoffs of kind that move tensor x of p, and
// whether any op of p still moves x between HBM and DM.
func handoffsOf(p *kernel.Program, x string, kind kernel.OpKind) (n int, moved bool) {
	base := func(name string) string {
		t, ok := p.Tensor(name)
		if !ok {
			return ""
		}
		return t.Base()
	}
	for _, op := range p.Handoff {
		if op.Kind == kind && (base(op.Src) == x || base(op.Dst) == x) {
			n++
		}
	}
	for _, op := range p.Ops {
		if op.Kind != kernel.OpChain && (base(op.Src) == x || base(op.Dst) == x) {
			moved = true
		}
	}
	return n, moved
}

// TestPlanResident: the best pair of kernels with a tensor left in DM
// between them. The producer stores nothing of it and the consumer loads
// nothing (their DMAs are handoffs: the roofline counts no HBM bytes of
// it); each kernel passes the simulator alone (the handoffs set and read
// the DM they hand over); and the two written as one program
// (kernel.Handover: the consumer's chains read the DM tensors the
// producer's commits wrote, at their addresses) pass against the composed
// reference — the bf16 intermediate rounded as the producer stores it.
// A consumer whose DM tensor sits elsewhere is refused.
func TestPlanResident(t *testing.T) {
	spec := engines.Default()
	for _, c := range []struct {
		name             string
		w                *workload.Workload
		prod, cons, x    string
		standaloneCycles float64 // the two ops' stored plans, each alone (results/plans)
		// noRace: its simulations (30 s under the race detector) run in
		// make test's unit-norace only; the decode pair runs the pair's
		// workers under it.
		noRace bool
	}{
		{"decode silu, swiglu", workloadFile(t, "llama3-70b-decode.yaml"), "silu", "swiglu", "gate_act", 2124 + 3297, false},
		{"head causal, softmax", residentHead(t), "causal", "softmax", "s_masked", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if raceDetector && c.noRace {
				t.Skip("run without the race detector (make test's unit-norace)")
			}
			pr, err := PlanResident(c.w, findOp(c.w, c.prod), findOp(c.w, c.cons), c.x, spec)
			require.NoError(t, err)
			require.Positive(t, pr.Pairs)
			pp, cp := pr.Prod.Program, pr.Cons.Program
			n, moved := handoffsOf(pp, c.x, kernel.OpToHBM)
			require.Positive(t, n, "the producer's stores of %s are handoffs", c.x)
			require.False(t, moved, "the producer moves %s itself", c.x)
			n, moved = handoffsOf(cp, c.x, kernel.OpToDM)
			require.Positive(t, n)
			require.False(t, moved, "the consumer loads %s itself", c.x)
			// The roofline counts no HBM bytes of x: the producer writes
			// nothing to HBM, and with its stores put back it does.
			back := cloneProgram(t, pp)
			back.Ops, back.Handoff = append(back.Ops, back.Handoff...), nil
			cm, err := cost.NewModel(spec)
			require.NoError(t, err)
			r, err := cm.Evaluate(back)
			require.NoError(t, err)
			require.Positive(t, r.Roofline.MinWriteBytes)
			r, err = cm.Evaluate(cloneProgram(t, pp))
			require.NoError(t, err)
			require.Zero(t, r.Roofline.MinWriteBytes)
			require.Contains(t, pr.Prod.Search.Resident, c.cons)
			require.Contains(t, pr.Cons.Search.Resident, c.prod)
			if c.standaloneCycles > 0 {
				require.Less(t, pr.Prod.Cost.Cycles+pr.Cons.Cost.Cycles, c.standaloneCycles)
			}
			if raceDetector {
				return // the pair's workers ran under the race detector; the simulations run without it (unit-norace)
			}
			q, m := verifyMerged(t, spec, pp, cp, c.cons+"_", true)
			require.Empty(t, m.Handoff)
			// A consumer reading another DM address is not the pair.
			bad := cloneProgram(t, q)
			for _, op := range bad.Handoff {
				d, _ := bad.Tensor(op.Dst)
				d.Addr += 256
			}
			_, err = kernel.Handover(cloneProgram(t, pp), bad, c.cons+"_")
			require.ErrorContains(t, err, "is not where")
		})
	}
}

// verifyMerged requires the pair written as one program (kernel.Handover,
// its reference composed; the consumer's HBM arguments moved clear of the
// producer's, 4 GiB up, as the graph's addresses would) to pass the
// simulator, and with alone each of the kernels too (its handoffs set and
// read the DM it hands over). It returns the consumer as moved and the
// merged program.
func verifyMerged(t *testing.T, spec *engines.Spec, p, c *kernel.Program, prefix string, alone bool) (q, m *kernel.Program) {
	t.Helper()
	for _, k := range []*kernel.Program{p, c} {
		if !alone {
			break
		}
		rep, err := verify.Verify(spec, cloneProgram(t, k), verify.Options{Seed: 3})
		require.NoError(t, err)
		require.True(t, rep.Pass, "%s: %s", k.Name, rep.Comparison.String())
	}
	q = cloneProgram(t, c)
	for _, x := range q.Tensors {
		if x.Mem == kernel.HBM {
			x.Addr += 4 << 30
		}
	}
	unlower(q)
	m, err := kernel.Handover(cloneProgram(t, p), q, prefix)
	require.NoError(t, err)
	rep, err := verify.Verify(spec, m, verify.Options{Seed: 5})
	require.NoError(t, err)
	require.True(t, rep.Pass, "merged %s: %s", m.Name, rep.Comparison.String())
	return q, m
}

// unlower drops p's engine configurations, which engines.Lower derives
// again (after its tensors moved).
func unlower(p *kernel.Program) {
	for _, op := range slices.Concat(p.Ops, p.Handoff) {
		op.DMA = nil
		for _, st := range op.Stages {
			st.Config = nil
		}
	}
}

// cloneProgram is a deep copy of p, through its JSON form.
func cloneProgram(t *testing.T, p *kernel.Program) *kernel.Program {
	t.Helper()
	data, err := p.MarshalJSON()
	require.NoError(t, err)
	var q kernel.Program
	require.NoError(t, q.UnmarshalJSON(data))
	return &q
}

// TestGraphResidency: planning the (reduced) attention head whole leaves
// the causal mask's result in DM for the softmax, the choice the graph
// model proves optimal; the plan validates, costs less than with every
// tensor in HBM (--no-residency), and verifies on the simulator with the
// DM bytes the causal kernel left carried into the softmax's device.
// Corrupting what the consumer takes fails the verification.
func TestGraphResidency(t *testing.T) {
	if raceDetector {
		t.Skip("two graph plannings and two simulations: make test runs it without -race in unit-norace")
	}
	spec := engines.Default()
	w := residentHead(t)
	// The op plans and chains from the committed test cache (planned
	// afresh, and stored there, when their keys change).
	o := GraphOptions{Spec: spec, Planner: PlanOpPlanner(spec), VectorOps: true, Layouts: 1, NoFuse: true,
		Cache: &DirCache{Dir: "testdata/graph/cache"}}
	g, err := PlanGraph(w, o)
	require.NoError(t, err)
	require.Equal(t, "proven", g.Search.Optimal)
	require.Positive(t, g.Search.Resident)
	k := slices.IndexFunc(g.Tensors, func(t plan.GraphTensor) bool { return t.Name == "s_masked" })
	require.Equal(t, plan.PlaceDM, g.Tensors[k].Place)
	// p too: softmax hands it to the einsum pv (einsumres.go).
	kp := slices.IndexFunc(g.Tensors, func(t plan.GraphTensor) bool { return t.Name == "p" })
	require.Equal(t, plan.PlaceDM, g.Tensors[kp].Place)
	require.NoError(t, g.Validate())
	// An intermediate its kernels store in HBM.
	stored := slices.IndexFunc(g.Tensors, func(t plan.GraphTensor) bool {
		return t.Place == plan.PlaceHBM && t.Producer != "" && len(t.Consumers) == 1
	})
	require.GreaterOrEqual(t, stored, 0)
	for _, c := range []struct {
		name string
		f    func(g *plan.Graph)
		want string
	}{
		{"a tensor its kernels store", func(g *plan.Graph) {
			g.Tensors[stored].Place, g.Tensors[stored].Layout = plan.PlaceDM, ""
		}, "kernel has no to_hbm handoff of it"},
		{"with a layout", func(g *plan.Graph) { g.Tensors[k].Layout = "m![S, T]" }, "no HBM layout, view or relayout"},
		{"read from HBM", func(g *plan.Graph) {
			s := slices.IndexFunc(g.Ops, func(o plan.GraphOp) bool { return o.Name == "softmax" })
			g.Ops[s].Layouts = slices.Clone(g.Ops[s].Layouts)
			g.Ops[s].Layouts[0] = "m![S, T]"
		}, `reads or writes it in layout "m![S, T]", not "dm"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := *g
			b.Ops, b.Tensors = slices.Clone(g.Ops), slices.Clone(g.Tensors)
			c.f(&b)
			require.ErrorContains(t, b.Validate(), c.want)
		})
	}
	o.NoResidency = true
	h, err := PlanGraph(w, o)
	require.NoError(t, err)
	require.Less(t, g.Cost.Cycles, h.Cost.Cycles)
	for _, x := range h.Tensors {
		require.Equal(t, plan.PlaceHBM, x.Place)
	}
	rep, err := verify.VerifyGraph(spec, g, verify.GraphOptions{Seed: 1})
	require.NoError(t, err)
	require.True(t, rep.Pass, rep.String())
	k = slices.IndexFunc(rep.Ops, func(o verify.GraphOpReport) bool { return o.Op == "softmax" })
	require.Contains(t, rep.Ops[k].How, "s_masked taken in DM from causal)")
	k = slices.IndexFunc(rep.Ops, func(o verify.GraphOpReport) bool { return o.Op == "pv" })
	require.Contains(t, rep.Ops[k].How, "p taken in DM from softmax)")

	// The softmax's DM tensor one byte off where the causal mask left it.
	s := slices.IndexFunc(g.Ops, func(o plan.GraphOp) bool { return o.Name == "softmax" })
	bad := *g.Ops[s].Plan
	bad.Program = cloneProgram(t, bad.Program)
	d, _ := bad.Program.Tensor(bad.Program.Handoff[0].Dst)
	d.Addr += 8
	unlower(bad.Program) // lowered again at the new address
	g.Ops[s].Plan = &bad
	_, err = verify.VerifyGraph(spec, g, verify.GraphOptions{Seed: 1})
	require.ErrorContains(t, err, "not where its producer left it")
}

// BenchmarkPlanResident: the attention head's mask and softmax planned as
// a pair that leaves the masked scores in DM (every candidate of both,
// paired tile for tile).
func BenchmarkPlanResident(b *testing.B) {
	w, err := workload.Load("../workloads/attention-head.yaml")
	require.NoError(b, err)
	spec := engines.Default()
	for b.Loop() {
		if _, err := PlanResident(w, findOp(w, "causal"), findOp(w, "softmax"), "s_masked", spec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlanChain: three kernels in a chain, the middle one taking its input
// in DM from the first and leaving its output in DM for the last (the
// MoE's block arithmetic at reduced sizes: diff, has_block, grid). The
// middle kernel moves nothing through HBM (its roofline bound "none"),
// each kernel passes the simulator alone, and the three written as one
// program (two handovers) pass against the composed reference, integer
// results carried without rounding.
func TestPlanChain(t *testing.T) {
	spec := engines.Default()
	w := moeAt(t, "{T: 32, D: 32, F: 32, E: 8, K: 2, BLK: 64, GRID: 8, NB: 8}")
	ops := []*workload.Op{findOp(w, "diff"), findOp(w, "has_block"), findOp(w, "grid")}
	ch, err := PlanChain(w, ops, []string{"diff", "has_block"}, spec)
	require.NoError(t, err)
	require.Len(t, ch.Plans, 3)
	mid := ch.Plans[1]
	n, moved := handoffsOf(mid.Program, "diff", kernel.OpToDM)
	require.Positive(t, n)
	require.False(t, moved)
	n, moved = handoffsOf(mid.Program, "has_block", kernel.OpToHBM)
	require.Positive(t, n)
	require.False(t, moved)
	require.Equal(t, "none", mid.Cost.Bound)
	require.Equal(t, "diff taken in DM from diff; has_block left in DM for grid", mid.Search.Resident)
	if raceDetector {
		return // the simulations run without it (unit-norace)
	}
	for _, pl := range ch.Plans {
		rep, err := verify.Verify(spec, cloneProgram(t, pl.Program), verify.Options{Seed: 7})
		require.NoError(t, err)
		require.True(t, rep.Pass, "%s: %s", pl.Program.Name, rep.Comparison.String())
	}
	// One program: each kernel's HBM arguments moved clear of the others'.
	progs := make([]*kernel.Program, 3)
	for k, pl := range ch.Plans {
		progs[k] = cloneProgram(t, pl.Program)
		for _, x := range progs[k].Tensors {
			if x.Mem == kernel.HBM {
				x.Addr += int64(k) << 32
			}
		}
		unlower(progs[k])
	}
	m, err := kernel.Handover(progs[0], progs[1], "has_block_")
	require.NoError(t, err)
	m, err = kernel.Handover(m, progs[2], "grid_")
	require.NoError(t, err)
	require.Empty(t, m.Handoff)
	rep, err := verify.Verify(spec, m, verify.Options{Seed: 7})
	require.NoError(t, err)
	require.True(t, rep.Pass, "merged: %s", rep.Comparison.String())
}

// TestResidentChainCache: a resident chain planned once is kept by a
// DirCache (its plans in order, KEY-k.plan.json.gz) and served again
// without PlanChain, the same plans; a chain that no kernels agree on is
// kept as its error (KEY.nochain).
func TestResidentChainCache(t *testing.T) {
	spec := engines.Default()
	w := moeAt(t, "{T: 32, D: 32, F: 32, E: 8, K: 2, BLK: 64, GRID: 8, NB: 8}")
	ops := []*workload.Op{findOp(w, "diff"), findOp(w, "has_block")}
	dir := t.TempDir()
	first := &residentMemo{pairs: map[string]residentResult{}, cache: &DirCache{Dir: dir}}
	ch, err := first.plan(w, ops, []string{"diff"}, spec)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "*-[01].plan.json.gz"))
	require.NoError(t, err)
	assert.Len(t, files, 2)
	again := &residentMemo{pairs: map[string]residentResult{}, cache: &DirCache{Dir: dir}}
	ch2, err := again.plan(w, ops, []string{"diff"}, spec)
	require.NoError(t, err)
	require.Len(t, ch2.Plans, 2)
	for k := range ch.Plans {
		a, err := ch.Plans[k].Marshal()
		require.NoError(t, err)
		b, err := ch2.Plans[k].Marshal()
		require.NoError(t, err)
		assert.Equal(t, string(a), string(b), "plan %d", k)
	}
	// The error of a chain no kernels agree on.
	c := &DirCache{Dir: dir}
	require.NoError(t, c.PutChain("k", nil, errors.New("no kernels of a, b agree")))
	ps, perr, ok := c.GetChain("k", 2)
	assert.True(t, ok)
	assert.Nil(t, ps)
	assert.EqualError(t, perr, "no kernels of a, b agree (cached)")
	_, _, ok = c.GetChain("missing", 2)
	assert.False(t, ok)
}
