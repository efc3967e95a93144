package search

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/model/workload"
)

// fieldTexts returns a conflict's field texts.
func fieldTexts(k Conflict) []string {
	var out []string
	for _, f := range k.Fields {
		out = append(out, f.Text)
	}
	return out
}

func ruleIDs(k Conflict) []string {
	var out []string
	for _, r := range k.Rules {
		out = append(out, r.Rule)
	}
	return out
}

// Structurally impossible mappings: the minimal core names the rule and the
// field that break it.
func TestExplainStructural(t *testing.T) {
	t.Parallel()
	gemm := workloadFile(t, "gemm.yaml") // I=512, J=512, K=2048 (002 L479)
	// K = 96: a 48-element packet divides it (3 · 16), but a packet holds
	// 64 bytes = 32 bf16 elements (002 L4099) or one 32-byte flit (002 L3011).
	k96 := loadWorkload(t, "name: k96\neinsum: IK,KJ->IJ\naxes: {I: 8, J: 32, K: 96}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n")
	for _, tc := range []struct {
		name     string
		w        *workload.Workload
		mapping  string
		rule     string
		cite     string
		field    string
		line     int
		noFields bool
	}{
		// 512 slices on I: a cluster has 256 (002 L131).
		{"512 slices", gemm, "slice: m![I]\n", "SPACE-SLICES", "002 L131, L318", "slice: I", 1, false},
		// Row on the contracted K: rows hold the stationary operand's own
		// output axes (002 L484, L4099-4105).
		{"row on a contracted axis", gemm, "stationary: in1\nrow: m![K % 8]\n", "SPACE-ROLES", "002 L104-120, L4099-4105, L4384-4392", "row: K % 8", 2, false},
		// A packet of 16 bf16 elements when a full 32-element packet
		// divides K: only the 64-byte packet (002 L4099).
		{"packet of 16", gemm, "packet: m![K % 16]\n", "SPACE-PACKET", "002 L4099, L3011, L3916-3927", "packet: K % 16", 1, false},
		{"packet of 48", k96, "content: contracted\npacket: m![K % 48]\n", "SPACE-PACKET", "002 L4099, L3011, L3916-3927", "packet: K % 48", 2, false},
		// Sequential accumulation needs a packet of columns (002 L4447-4492).
		{"sequential with contracted packet", gemm, "content: contracted\naccumulate: Sequential\n", "SPACE-ACCUMULATE", "002 L4447-4492", "accumulate: Sequential", 2, false},
		// No mapping at all for I = J = 3, K = 8: the 16 bytes of K fill
		// neither a packet nor a flit (002 L4099, L3011), and no output
		// columns with K innermost (3 × 8, 002 L4392) fill a packet either:
		// the workload itself is unsatisfiable.
		{"unsatisfiable workload", loadWorkload(t, "name: k8\neinsum: IK,KJ->IJ\naxes: {I: 3, J: 3, K: 8}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"),
			"", "SPACE-PACKET", "002 L4099, L3011, L3916-3927", "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSpace(t, tc.w)
			m, err := constraints.ParseMapSpec("map.yaml", []byte(tc.mapping), s.P)
			require.NoError(t, err)
			x, err := Explain(s, m, ExplainOptions{MaxTiles: 1})
			require.NoError(t, err)
			assert.False(t, x.Legal)
			assert.Nil(t, x.Completions)
			require.Len(t, x.Conflicts, 1)
			k := x.Conflicts[0]
			require.Contains(t, ruleIDs(k), tc.rule)
			for _, r := range k.Rules {
				if r.Rule == tc.rule {
					assert.Equal(t, tc.cite, r.Cite)
				}
			}
			assertMinimalCore(t, x, k)
			if tc.noFields {
				assert.Empty(t, k.Fields)
				return
			}
			require.Contains(t, fieldTexts(k), tc.field)
			for _, f := range k.Fields {
				if f.Text == tc.field {
					assert.Equal(t, tc.line, f.Line)
				}
			}
		})
	}
}

// Two independent mistakes give two conflicts, each minimal.
func TestExplainTwoConflicts(t *testing.T) {
	t.Parallel()
	s := newSpace(t, workloadFile(t, "gemm.yaml"))
	m, err := constraints.ParseMapSpec("map.yaml", []byte("slice: m![I]\nstationary: in1\nrow: m![K % 8]\n"), s.P)
	require.NoError(t, err)
	x, err := Explain(s, m, ExplainOptions{MaxTiles: 1})
	require.NoError(t, err)
	require.Len(t, x.Conflicts, 2)
	var rules, fields []string
	for _, k := range x.Conflicts {
		assertMinimalCore(t, x, k)
		rules = append(rules, ruleIDs(k)...)
		fields = append(fields, fieldTexts(k)...)
	}
	assert.Contains(t, rules, "SPACE-SLICES")
	assert.Contains(t, rules, "SPACE-ROLES")
	assert.Contains(t, fields, "slice: I")
	assert.Contains(t, fields, "row: K % 8")
}

// assertMinimalCore checks that the core is unsatisfiable and that every
// proper subset left by dropping one element is satisfiable.
func assertMinimalCore(t *testing.T, x *Explanation, k Conflict) {
	t.Helper()
	c := x.e.Formula()
	isRule := map[constraints.Lit]bool{}
	for _, r := range c.Rules() {
		isRule[r] = true
	}
	solve := func(skip int) constraints.Status {
		var rules, assume []constraints.Lit
		for i, l := range k.Lits() {
			switch {
			case i == skip:
			case isRule[l]:
				rules = append(rules, l)
			default:
				assume = append(assume, l)
			}
		}
		return c.SolveRules(rules, 0, assume...)
	}
	require.Equal(t, constraints.Unsat, solve(-1))
	for i := range k.Lits() {
		assert.Equal(t, constraints.Sat, solve(i), "core element %d of %v %v", i, k.Rules, k.Fields)
	}
	assert.Len(t, k.Lits(), len(k.Rules)+len(k.Fields))
}

// The manual's Hello GEMV mapping (002 L410-416) is legal; its completion is
// the manual's kernel, priced as the planner prices it, and no cheaper than
// the proven optimum.
func TestExplainHelloGEMV(t *testing.T) {
	t.Parallel()
	s := newSpace(t, workloadFile(t, "gemv.yaml"))
	m, err := constraints.LoadMapSpec("testdata/explain/hello-gemv.yaml", s.P)
	require.NoError(t, err)
	x, err := Explain(s, m, ExplainOptions{})
	require.NoError(t, err)
	require.True(t, x.Legal)
	best := x.Completions.Best
	want := s.candidate(t, helloGEMV)
	assert.Equal(t, want.Split, best.Candidate.Split)
	assert.Equal(t, want.Stationary, best.Candidate.Stationary)
	assert.Equal(t, want.Mode, best.Candidate.Mode)
	var st Stats
	st.Illegal = map[string]*RuleStat{}
	ev, err := newEvaluator(s, &st)
	require.NoError(t, err)
	direct := ev.evaluate(0, &want, nil)
	require.NotNil(t, direct)
	assert.Equal(t, direct.Report.Cycles, best.Report.Cycles)
	require.NotNil(t, x.Optimum.Best, "%+v", x.Optimum.Stats)
	assert.True(t, x.Optimum.Proof.Proven)
	assert.GreaterOrEqual(t, best.Report.Cycles, x.Optimum.Best.Report.Cycles)
	assert.Equal(t, x.Optimum.Best.Report.Cycles, x.OptimumCycles())
	assert.InDelta(t, best.Report.Cycles/x.Optimum.Best.Report.Cycles, x.Distance(), 1e-12)
}

// The manual's Hello GEMM mapping (002 L480-484, L503-518) is legal and
// completes to the manual's kernel; the optimum search is cut short after
// 600 candidate evaluations (not a wall-clock budget: the same search on
// any machine), so the mapping is compared with its proven lower bound.
func TestExplainHelloGEMM(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newSplitSpace(t, loadWorkload(t, helloGEMMWorkload))
	m, err := constraints.LoadMapSpec("testdata/explain/hello-gemm.yaml", s.P)
	require.NoError(t, err)
	x, err := Explain(s, m, ExplainOptions{MaxTiles: 1, MaxEvaluations: 600})
	require.NoError(t, err)
	require.True(t, x.Legal)
	assert.True(t, x.Completions.Stats.Complete, "the mapping's completions, all evaluated")
	require.NotNil(t, x.Optimum.Best, "%+v", x.Optimum.Stats)
	assert.False(t, x.Optimum.Proof.Proven, "the optimum search was cut short")
	assert.Equal(t, 600, x.Optimum.Stats.Evaluated)
	best := x.Completions.Best
	want := s.candidate(t, helloGEMM)
	assert.Equal(t, want.Split, best.Candidate.Split)
	assert.Equal(t, want.Order, best.Candidate.Order)
	assert.Equal(t, want.Stationary, best.Candidate.Stationary)
	assert.GreaterOrEqual(t, best.Report.Cycles, x.Optimum.Proof.LowerBound)
	assert.GreaterOrEqual(t, x.Distance(), 1.0)
}

// A partial mapping (only the stationary input) gets its best completion:
// the exhaustive planner over the same restriction agrees.
func TestExplainPartial(t *testing.T) {
	if raceDetector {
		t.Skip("slow under the race detector: make test runs it in unit-norace")
	}
	t.Parallel()
	s := newSpace(t, workloadFile(t, "gemv.yaml"))
	m, err := constraints.ParseMapSpec("map.yaml", []byte("stationary: in0\n"), s.P)
	require.NoError(t, err)
	x, err := Explain(s, m, ExplainOptions{})
	require.NoError(t, err)
	require.True(t, x.Legal)
	assert.Equal(t, uint8(0), x.Completions.Best.Candidate.Stationary)
	ex, err := Exhaustive(s, Options{Where: func(st Stage, c *Candidate) bool {
		return st != StageStationary || c.Stationary == 0
	}})
	require.NoError(t, err)
	require.NotNil(t, ex.Best)
	assert.Equal(t, ex.Best.Report.Cycles, x.Completions.Best.Report.Cycles)
	assert.GreaterOrEqual(t, x.Completions.Best.Report.Cycles, x.OptimumCycles())
}

// Structurally fine mappings that no completion makes legal.
func TestExplainEngines(t *testing.T) {
	t.Parallel()
	s := newSpace(t, workloadFile(t, "gemm.yaml"))
	m, err := constraints.LoadMapSpec("testdata/explain/dma-r1.yaml", s.P)
	require.NoError(t, err)
	x, err := Explain(s, m, ExplainOptions{MaxTiles: 1})
	require.NoError(t, err)
	assert.False(t, x.Legal)
	require.NotNil(t, x.Completions)
	assert.Positive(t, x.Completions.Stats.Candidates)
	assert.Zero(t, x.Completions.Stats.Legal)
	require.Contains(t, x.Completions.Stats.Illegal, "DMA-R1")
	assert.Equal(t, "002 L2425-2427, L2836-2837", x.Completions.Stats.Illegal["DMA-R1"].Cite)

	// I % 16 on Slice and no tile loop: the slice digit of I would be its
	// innermost, but the levels of an axis nest slice above time and row
	// (002 L483-484), and only a tile loop (major to the slice) could take
	// the rest of I: no candidate has the mapping.
	g := newSpace(t, workloadFile(t, "gemv.yaml"))
	m, err = constraints.ParseMapSpec("map.yaml", []byte("slice: m![I % 16]\ntile: m![1]\n"), g.P)
	require.NoError(t, err)
	x, err = Explain(g, m, ExplainOptions{})
	require.NoError(t, err)
	assert.False(t, x.Legal)
	require.NotNil(t, x.Completions)
	assert.Zero(t, x.Completions.Stats.Candidates)
}

func TestParseMapSpecErrors(t *testing.T) {
	t.Parallel()
	s := newSpace(t, workloadFile(t, "gemm.yaml"))
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown field", "stationary: in1\nslices: m![I]\n", "map.yaml:2:1: slices: unknown field"},
		{"syntax", "slice: m![I / 32,, J]\n", "map.yaml:1:18: slice: "},
		{"stride does not divide", "time: m![I / 3]\n", "map.yaml:1:"},
		{"unknown axis", "row: m![Z % 8]\n", "map.yaml:1:9: row: unknown axis \"Z\""},
		{"yaml", "slice: [\n", "map.yaml:2: yaml: did not find expected node content"},
		{"yaml scanner", "slice: m![I]\n\tx: 1\n", "map.yaml:2: yaml: found a tab character that violates indentation"},
		{"unquoted padding", "cluster: m![1 # 2]\n", "quote the expression"},
		{"bad choice", "packet_mode: quad\n", "map.yaml:1:14: packet_mode: \"quad\": want one of single, dual, half"},
		{"bad tensor", "stationary: c\n", "map.yaml:1:13: stationary: \"c\": want one of in0, in1"},
		{"repeated", "row: m![1]\nrow: m![J % 8]\n", "map.yaml:2:1: row: repeated field (first at line 1)"},
		{"broadcast", "slice: m![2, I / 2]\n", "map.yaml:1:8: slice: broadcast digit"},
		{"not a mapping", "- slice\n", "map.yaml:1:1: a mapping file is a YAML mapping"},
		{"list value", "slice: [I]\n", "map.yaml:1:8: slice: want a scalar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := constraints.ParseMapSpec("map.yaml", []byte(tc.src), s.P)
			require.Error(t, err)
			var we *workload.Error
			assert.True(t, errors.As(err, &we))
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// FuzzParseMapSpec: any input parses or fails with an error, never panics;
// a parsed mapping's factors divide the axis sizes.
func FuzzParseMapSpec(f *testing.F) {
	for _, s := range []string{"slice: m![I / 32, J / 32]\nrow: m![J % 8]\n", "cluster: \"m![1 # 2]\"\n",
		"time: m![I % 32, J / 8 % 4, K / 32]\ntile: m![I / 256]\n", "stationary: in0\n", "slice: [\n", "- a\n", ""} {
		f.Add(s)
	}
	w, err := workload.Parse([]byte("name: g\neinsum: IK,KJ->IJ\naxes: {I: 512, J: 512, K: 2048}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n"), "w.yaml")
	require.NoError(f, err)
	p, err := constraints.NewProblem(w, "")
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, src string) {
		m, err := constraints.ParseMapSpec("map.yaml", []byte(src), p)
		if err != nil {
			return
		}
		for _, d := range m.Dims {
			if d == nil {
				continue
			}
			for a, ax := range p.Axes {
				if ax.Size%d.Factor[a] != 0 {
					t.Fatalf("%s: axis %s factor %d", d.Name, ax.Name, d.Factor[a])
				}
			}
		}
	})
}
