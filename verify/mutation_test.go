package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
)

// The mutation study (issue 18 §4): every single-field corruption of a fully
// configured kernel (a golden kernel or a stored plan's program, lowered so
// that every engine configuration is stated) must be rejected by the
// validator (engines.Check, engines.Lower) or make the simulation FAIL.
// A mutant that does neither is a survivor, unless it is equivalent:
// its field is one documentedRedundant names AND the simulated output is bit
// for bit the unmutated kernel's. `make mutation` runs the whole study
// (TCPMAP_MUTATION=1); the default run takes a fixed sample of it.

// documentedRedundant lists the fields whose value the function does not
// depend on, by a pattern of their JSON path (list indices as []), with
// the reason: a mutant of one of them that leaves the output bit-identical
// is equivalent, not a survivor.
var documentedRedundant = map[*regexp.Regexp]string{
	// Labels: the manual labels sequencer entries with their terms (002
	// L2629, L4239); the hardware's registers hold only sizes and strides.
	regexp.MustCompile(`\.term$`):                 "an entry's label (002 L2629, L4239): documentation only",
	regexp.MustCompile(`\.time_broadcast_terms$`): "the tiling axes' names, printed only (002 L3954)",
	// The DMA Engine that executes a descriptor: "Any DMA Engine among the
	// 8 can handle any transfer ... any DMA Engine works" (002 L2547-2548);
	// the media say which memory is read and written. The cost model reads
	// it (which engine is busy), the function does not.
	regexp.MustCompile(`^ops\[\]\.dma\.descriptors\[\]\.dmn\.(chip|cluster|dmn)$`): "the executing DMA Engine: any engine works (002 L2547-2548)",
}

// mutant is one single-field corruption of a subject.
type mutant struct {
	path string // the JSON path of the field (`ops[2].stages[1].config.fetch.fetch_size`)
	desc string // what was done (`16 -> 17`, `deleted`)
	// build returns the mutated program's JSON (built on demand: a study
	// that samples its mutants builds only those it runs).
	build func() ([]byte, error)
	// inert, when set, says why the field cannot change the function: the
	// stride of a loop of one iteration.
	inert string
}

// mutationSubject is one fully configured kernel.
type mutationSubject struct {
	name string
	prog []byte          // the lowered program's JSON
	orig *kernel.Program // the lowered program
	out  *Logical
}

// mutationOutcome classifies a mutant.
type mutationOutcome int

const (
	killed mutationOutcome = iota
	survived
	equivalent
)

// mutationSubjects are the study's kernels: every golden kernel, the
// verify testdata kernels and the stored plans small enough to simulate in
// well under a second (the others are covered by the same engines).
func mutationSubjects(t testing.TB) []string {
	var out []string
	for _, pat := range []string{"../workloads/kernels/*.json", "testdata/*.json"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		out = append(out, m...)
	}
	for _, p := range []string{"dot", "gemv", "llama3-70b-decode-k_proj", "llama3-70b-decode-rope_k"} {
		out = append(out, "../results/plans/"+p+".plan.json")
	}
	return out
}

// heavyKernels take more than a second to simulate whole: the study takes
// a sample of their mutants.
var heavyKernels = map[string]bool{"gemm-512x512x2048.json": true, "hello-gemm.json": true, "softmax-attention.json": true}

func loadSubject(t testing.TB, path string) *mutationSubject {
	var p *kernel.Program
	if strings.HasSuffix(path, ".plan.json") {
		pl, err := plan.Read(path)
		require.NoError(t, err)
		p = pl.Program
	} else {
		p = loadKernelT(t, path)
	}
	spec := engines.Default()
	if p.Reference == nil {
		return nil // nothing to verify against
	}
	require.NoError(t, engines.Check(spec, p), path)
	require.NoError(t, engines.Lower(spec, p), path)
	rep, out, err := verifyOutput(spec, p, Options{Seed: 1})
	require.NoError(t, err, path)
	require.True(t, rep.Pass, "%s: the unmutated kernel must pass:\n%s", path, rep)
	data, err := json.Marshal(p)
	require.NoError(t, err)
	return &mutationSubject{name: filepath.Base(path), prog: data, orig: p, out: out}
}

// otherDTypes are the replacements of a dtype field.
var otherDTypes = []string{"i8", "bf16", "f32", "i32", "i4"}

// mutants enumerates the single-field corruptions of a program's JSON: each
// integer becomes v+1, v-1, 2v and 0; each boolean flips; each dtype
// becomes another; each enumerated string (context, TRF address, DMA media)
// another of its values; each chain stage after begin is deleted; and each
// element of a configuration's list (sequencer entries, DMA descriptors) is
// deleted. Mapping expressions and names are not mutated: a kernel with
// another mapping is another kernel, which may be right.
func mutants(data []byte) ([]mutant, error) {
	var out []mutant
	var set func(path []any, val any, del bool) (any, error)
	emit := func(path []any, val any, del bool, at, desc string) {
		out = append(out, mutant{path: at, desc: desc, build: func() ([]byte, error) {
			root, err := set(path, val, del)
			if err != nil {
				return nil, err
			}
			return json.Marshal(root)
		}})
	}
	decode := func() (any, error) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var tree any
		return tree, d.Decode(&tree)
	}
	base, err := decode()
	if err != nil {
		return nil, err
	}
	// Collect the sites on one tree, then mutate a fresh copy for each.
	type site struct {
		path  []any // keys (string) and indices (int)
		key   string
		value any
		inert string
	}
	var sites []site
	var walk func(x any, path []any, key string)
	walk = func(x any, path []any, key string) {
		switch v := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				n := len(sites)
				walk(v[k], append(slices.Clip(path), k), k)
				// A loop of one iteration never adds its stride (002
				// L1390-1401, L2570-2577, L4169-4177).
				if size, ok := v["size"].(json.Number); ok && size == "1" && strings.HasSuffix(k, "stride") && len(sites) == n+1 {
					sites[n].inert = "the stride of a loop of one iteration (002 L1390-1401, L2570-2577, L4169-4177)"
				}
			}
		case []any:
			sites = append(sites, site{path: path, key: key, value: v})
			for i := range v {
				walk(v[i], append(slices.Clip(path), i), key)
			}
		default:
			sites = append(sites, site{path: path, key: key, value: v})
		}
	}
	walk(base, nil, "")
	pathString := func(p []any) string {
		var b strings.Builder
		for _, s := range p {
			switch s := s.(type) {
			case string:
				b.WriteString("." + s)
			case int:
				fmt.Fprintf(&b, "[%d]", s)
			}
		}
		return strings.TrimPrefix(b.String(), ".")
	}
	// set replaces the value at path in a fresh tree (nil value: delete the
	// list element the path ends in).
	set = func(path []any, val any, del bool) (any, error) {
		root, err := decode()
		if err != nil {
			return nil, err
		}
		var parent any = root
		for i, s := range path {
			last := i == len(path)-1
			switch s := s.(type) {
			case string:
				m := parent.(map[string]any)
				if last {
					m[s] = val
				} else {
					parent = m[s]
				}
			case int:
				l := parent.([]any)
				if last {
					if del {
						// Replace the list in its parent.
						nl := append(slices.Clip(l[:s]), l[s+1:]...)
						return root, setList(root, path[:len(path)-1], nl)
					}
					l[s] = val
				} else {
					parent = l[s]
				}
			}
		}
		return root, nil
	}
	for _, s := range sites {
		p := pathString(s.path)
		if len(s.path) == 0 {
			continue
		}
		switch v := s.value.(type) {
		case json.Number:
			n, err := v.Int64()
			if err != nil {
				continue // a float (reference range, scalar): the reference's, not the kernel's
			}
			if strings.HasPrefix(p, "reference") {
				continue
			}
			var vals []int64
			for _, w := range []int64{n + 1, n - 1, 2 * n, 0} {
				if w != n && !slices.Contains(vals, w) {
					vals = append(vals, w)
				}
			}
			for _, w := range vals {
				emit(s.path, json.Number(strconv.FormatInt(w, 10)), false, p, fmt.Sprintf("%d -> %d", n, w))
				out[len(out)-1].inert = s.inert
			}
		case bool:
			emit(s.path, !v, false, p, fmt.Sprintf("%v -> %v", v, !v))
		case string:
			for _, w := range stringMutations(s.key, v) {
				emit(s.path, w, false, p, fmt.Sprintf("%q -> %q", v, w))
			}
		case []any:
			del := false
			switch s.key {
			case "stages":
				del = true
			case "entries", "descriptors", "zero_points":
				del = strings.Contains(p, ".config.") || strings.Contains(p, ".dma.")
			}
			if !del {
				continue
			}
			for i := range v {
				if s.key == "stages" && i == 0 {
					continue // begin: Validate's first rule
				}
				emit(append(slices.Clip(s.path), i), nil, true, fmt.Sprintf("%s[%d]", p, i), "deleted")
				if m, ok := v[i].(map[string]any); ok && m["size"] == json.Number("1") {
					out[len(out)-1].inert = "a loop of one iteration deleted (002 L1390-1401, L2570-2577, L4169-4177)"
				}
			}
		}
	}
	return out, nil
}

// setList replaces the list at path in root with l.
func setList(root any, path []any, l []any) error {
	var parent any = root
	for i, s := range path {
		last := i == len(path)-1
		switch s := s.(type) {
		case string:
			m := parent.(map[string]any)
			if last {
				m[s] = l
				return nil
			}
			parent = m[s]
		case int:
			ll := parent.([]any)
			if last {
				ll[s] = l
				return nil
			}
			parent = ll[s]
		}
	}
	return fmt.Errorf("empty path")
}

// stringMutations are the replacements of a string field: dtypes and the
// enumerations the engines read. Names, mappings and parameters are left.
func stringMutations(key, v string) []string {
	if _, err := dtype.Parse(v); err == nil && (key == "dtype" || strings.HasSuffix(key, "dtype") || key == "in" || key == "out" || key == "from" || key == "to") {
		var out []string
		for _, d := range otherDTypes {
			if d != v {
				out = append(out, d)
			}
		}
		return out
	}
	enums := [][]string{
		{"main", "sub"},
		{"Full", "FirstHalf", "SecondHalf"},
		{"HBM", "DM"},
	}
	for _, e := range enums {
		if slices.Contains(e, v) && (key == "context" || key == "address" || key == "trf_address" || key == "kind") {
			var out []string
			for _, w := range e {
				if w != v {
					out = append(out, w)
				}
			}
			return out
		}
	}
	return nil
}

// runMutant classifies one mutant of subject s, with the reason.
func runMutant(spec *engines.Spec, s *mutationSubject, m mutant) (o mutationOutcome, why string) {
	defer func() {
		if r := recover(); r != nil {
			o, why = survived, fmt.Sprintf("PANIC: %v", r)
		}
	}()
	data, err := m.build()
	if err != nil {
		return survived, "PANIC: cannot build the mutant: " + err.Error()
	}
	var p kernel.Program
	if err := json.Unmarshal(data, &p); err != nil {
		return killed, "decode: " + err.Error()
	}
	if err := engines.Check(spec, &p); err != nil {
		return killed, "check: " + err.Error()
	}
	rep, out, err := verifyOutput(spec, &p, Options{Seed: 1})
	if err != nil {
		return killed, "verify: " + err.Error()
	}
	if !rep.Pass {
		return killed, "FAIL"
	}
	if sameBits(out, s.out) {
		if m.inert != "" {
			return equivalent, m.inert + "; output bit-identical"
		}
		if why := relocatable(s.orig, m.path); why != "" {
			return equivalent, why + "; output bit-identical"
		}
		for re, why := range documentedRedundant {
			if re.MatchString(indexRE.ReplaceAllString(m.path, "[]")) {
				return equivalent, why + "; output bit-identical"
			}
		}
	}
	if sameBits(out, s.out) {
		return survived, "PASS, output bit-identical"
	}
	return survived, "PASS"
}

// relocatable says why the address at path (`tensors[3].addr`) cannot
// change the function, or "": a DM intermediate that only chains access.
// Fetch and commit address it relative to its address (their sequencers'
// offsets are in the tensor, 002 L1704-1705, L2154), so any address the
// validator accepts (inside the memory, aligned, colliding with no live
// tensor) computes the same; a DMA's descriptors hold absolute addresses,
// so a tensor a DMA moves is not relocatable.
func relocatable(p *kernel.Program, path string) string {
	var i int
	if _, err := fmt.Sscanf(path, "tensors[%d].addr", &i); err != nil || fmt.Sprintf("tensors[%d].addr", i) != path || i < 0 || i >= len(p.Tensors) {
		return ""
	}
	t := p.Tensors[i]
	if t.Mem != kernel.DM || t.Role != kernel.Intermediate {
		return ""
	}
	for _, op := range p.Ops {
		if op.Kind != kernel.OpChain && (op.Src == t.Name || op.Dst == t.Name) {
			return ""
		}
	}
	return "the address of a DM intermediate only chains access, relative to it (002 L1704-1705, L2154)"
}

// indexRE matches a list index of a JSON path.
var indexRE = regexp.MustCompile(`\[[0-9]+\]`)

func sameBits(a, b *Logical) bool {
	if a == nil || b == nil || len(a.Vals) != len(b.Vals) {
		return false
	}
	for i := range a.Vals {
		if math.Float64bits(a.Vals[i]) != math.Float64bits(b.Vals[i]) {
			return false
		}
	}
	return true
}

// mutationScoreMin is issue 18's bar: at least 97 % of the non-equivalent
// mutants killed.
const mutationScoreMin = 0.97

// TestMutation runs the mutation study: in full under TCPMAP_MUTATION=1
// (`make mutation`), otherwise a fixed sample of 1 in 300 mutants of the
// light kernels and the stored plans (seeded, so the same mutants every
// run; about 250, a few seconds). Either way the score must reach 97 %.
// The simulations run one after another: the race detector, which slows
// them 5-10x, skips it (make test runs it in unit-norace).
func TestMutation(t *testing.T) {
	if raceEnabled {
		t.Skip("single-threaded simulations: make test runs it without the race detector (unit-norace)")
	}
	full := os.Getenv("TCPMAP_MUTATION") != ""
	spec := engines.Default()
	rng := rand.New(rand.NewPCG(18, 4))
	start := time.Now()
	var nKilled, nSurvived, nEquiv int
	var survivors []string
	equivWhy := map[string]int{}
	for _, path := range mutationSubjects(t) {
		name := filepath.Base(path)
		if only := os.Getenv("TCPMAP_MUTATION_ONLY"); only != "" && !strings.Contains(name, only) {
			continue
		}
		if (!full || os.Getenv("TCPMAP_MUTATION_LIGHT") != "") && heavyKernels[name] {
			continue
		}
		s := loadSubject(t, path)
		if s == nil {
			continue
		}
		ms, err := mutants(s.prog)
		require.NoError(t, err)
		t0, ran := time.Now(), 0
		keep := 1.0
		switch {
		case !full:
			keep = 1.0 / 300
		case heavyKernels[name]:
			keep = 1.0 / 200
		case strings.HasSuffix(path, ".plan.json") && name != "dot.plan.json" && name != "gemv.plan.json":
			keep = 1.0 / 10
		}
		for _, m := range ms {
			if keep < 1 && rng.Float64() >= keep {
				continue
			}
			ran++
			tm := time.Now()
			o, why := runMutant(spec, s, m)
			if d := time.Since(tm); d > 2*time.Second {
				t.Logf("slow mutant: %s %s: %s: %s (%s)", name, m.path, m.desc, d.Round(time.Millisecond), why)
			}
			if strings.HasPrefix(why, "PANIC") {
				t.Errorf("%s %s: %s: %s", name, m.path, m.desc, why)
			}
			switch o {
			case killed:
				nKilled++
			case equivalent:
				nEquiv++
				equivWhy[why]++
			case survived:
				nSurvived++
				survivors = append(survivors, fmt.Sprintf("%s %s: %s (%s)", name, m.path, m.desc, why))
			}
		}
		t.Logf("%s: %d of %d mutants in %s", name, ran, len(ms), time.Since(t0).Round(time.Millisecond))
	}
	total := nKilled + nSurvived
	require.Positive(t, total)
	score := float64(nKilled) / float64(total)
	t.Logf("mutation score: %d killed of %d non-equivalent mutants (%.1f %%); %d equivalent; %s", nKilled, total, 100*score, nEquiv, time.Since(start).Round(time.Second))
	for _, why := range slices.Sorted(maps.Keys(equivWhy)) {
		t.Logf("equivalent: %d × %s", equivWhy[why], why)
	}
	for _, s := range survivors {
		t.Logf("survived: %s", s)
	}
	require.GreaterOrEqual(t, score, mutationScoreMin, "mutation score below issue 18's 97 %%")
}
