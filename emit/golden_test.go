package emit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustread"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The manual's Hello kernels as kernel programs, exactly as the manual
// writes them (sizes, addresses, mappings, names), for text comparison:
// they are not all legal (see the fixes below), and they are not lowered.

// manualAdd is the constant addition, 002 L175-220 (input at HBM 0, L193).
const manualAdd = `{"name": "hello-add", "axes": "A=2048", "chips": 1,
 "tensors": [
  {"name": "input", "mem": "hbm", "dtype": "i32", "role": "input", "chip": "1", "element": "A", "addr": 0},
  {"name": "out", "mem": "hbm", "dtype": "i32", "role": "output", "chip": "1", "element": "A", "addr": 268435456},
  {"name": "dm", "mem": "dm", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 8 # 256", "element": "A % 8", "addr": 0},
  {"name": "result", "mem": "dm", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 8 # 256", "element": "A % 8", "addr": 4096}],
 "ops": [
  {"context": "dma", "kind": "to_dm", "src": "input", "dst": "dm"},
  {"context": "main", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "dm"},
   {"kind": "fetch", "dtype": "i32", "time": "1", "packet": "A % 8"},
   {"kind": "collect", "time": "1", "packet": "A % 8"},
   {"kind": "vector_init"},
   {"kind": "vector_branch", "param": "Unconditional"},
   {"kind": "vector_fxp", "param": "AddFxp, 1"},
   {"kind": "vector_final"},
   {"kind": "commit", "tensor": "result"}]},
  {"context": "dma", "kind": "to_hbm", "src": "result", "dst": "out"}]}`

// manualMul is the elementwise multiplication, 002 L246-299 (lhs at HBM 0,
// rhs at 1 << 28, L264-265; the result also at 1 << 28, L298).
const manualMul = `{"name": "hello-mul", "axes": "A=2048", "chips": 1,
 "tensors": [
  {"name": "lhs", "mem": "hbm", "dtype": "i32", "role": "input", "chip": "1", "element": "A", "addr": 0},
  {"name": "rhs", "mem": "hbm", "dtype": "i32", "role": "input", "chip": "1", "element": "A", "addr": 268435456},
  {"name": "out", "mem": "hbm", "dtype": "i32", "role": "output", "chip": "1", "element": "A", "addr": 268435456},
  {"name": "lhs_dm", "mem": "dm", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 8 # 256", "element": "A % 8", "addr": 0},
  {"name": "rhs_dm", "mem": "dm", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 8 # 256", "element": "A % 8", "addr": 4096},
  {"name": "rhs_vrf", "mem": "vrf", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 8 # 256", "element": "A % 8", "addr": 0},
  {"name": "result", "mem": "dm", "dtype": "i32", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "A / 8 # 256", "element": "A % 8", "addr": 8192}],
 "ops": [
  {"context": "dma", "kind": "to_dm", "src": "lhs", "dst": "lhs_dm"},
  {"context": "dma", "kind": "to_dm", "src": "rhs", "dst": "rhs_dm"},
  {"context": "sub", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "rhs_dm"},
   {"kind": "fetch", "dtype": "i32", "time": "1", "packet": "A % 8"},
   {"kind": "collect", "time": "A % 8 / 8", "packet": "A % 8 % 8"},
   {"kind": "to_vrf", "tensor": "rhs_vrf"}]},
  {"context": "main", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "lhs_dm"},
   {"kind": "fetch", "dtype": "i32", "time": "1", "packet": "A % 8"},
   {"kind": "collect", "time": "1", "packet": "A % 8"},
   {"kind": "vector_init"},
   {"kind": "vector_branch", "param": "Unconditional"},
   {"kind": "vector_fxp", "param": "MulInt", "tensor": "rhs_vrf"},
   {"kind": "vector_final"},
   {"kind": "commit", "tensor": "result"}]},
  {"context": "dma", "kind": "to_hbm", "src": "result", "dst": "out"}]}`

// manualDot is the dot product, 002 L307-362 (lhs at HBM 0, rhs at 1 << 28,
// L327-328). The manual binds lhs, rhs again for the DM and TRF tensors
// (L339-342); a program names each tensor once: lhs_dm, rhs_dm, rhs_trf.
const manualDot = `{"name": "hello-dot", "axes": "A=2048", "chips": 1,
 "tensors": [
  {"name": "lhs", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 0},
  {"name": "rhs", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 268435456},
  {"name": "out", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "1", "addr": 536870912},
  {"name": "lhs_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 0},
  {"name": "rhs_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 4096},
  {"name": "rhs_trf", "mem": "trf", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "row": "1", "element": "A", "addr": 0, "trf_address": "Full"},
  {"name": "result", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "1 # 8", "addr": 8192}],
 "ops": [
  {"context": "dma", "kind": "to_dm", "src": "lhs", "dst": "lhs_dm"},
  {"context": "dma", "kind": "to_dm", "src": "rhs", "dst": "rhs_dm"},
  {"context": "sub", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "rhs_dm"},
   {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "A"},
   {"kind": "collect", "time": "1, A / 16", "packet": "A % 16"},
   {"kind": "to_trf", "tensor": "rhs_trf"}]},
  {"context": "main", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "lhs_dm"},
   {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "A"},
   {"kind": "collect", "time": "A / 16", "packet": "A % 16"},
   {"kind": "align", "tensor": "rhs_trf", "time": "A / 32", "packet": "A % 32"},
   {"kind": "contract", "packet": "1"},
   {"kind": "accumulate", "time": "1", "packet": "1 # 8", "param": "Interleaved"},
   {"kind": "cast", "dtype": "bf16", "packet": "1 # 16"},
   {"kind": "commit", "tensor": "result"}]},
  {"context": "dma", "kind": "to_hbm", "src": "result", "dst": "out"}]}`

// manualGEMV is the GEMV, 002 L401-465 (matrix at HBM 0, vector at 1 << 28,
// L424-425; the result committed at DM 0, L461, where the matrix is).
const manualGEMV = `{"name": "hello-gemv", "axes": "I=256, J=2048", "chips": 1,
 "tensors": [
  {"name": "matrix", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "I, J", "addr": 0},
  {"name": "vector", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "J", "addr": 268435456},
  {"name": "out", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "I", "addr": 536870912},
  {"name": "matrix_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I", "element": "J", "addr": 0},
  {"name": "vector_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I", "element": "J", "addr": 4096},
  {"name": "vector_trf", "mem": "trf", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I", "row": "1", "element": "J", "addr": 0, "trf_address": "Full"},
  {"name": "result", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I", "element": "1", "addr": 0}],
 "ops": [
  {"context": "dma", "kind": "to_dm", "src": "matrix", "dst": "matrix_dm"},
  {"context": "dma", "kind": "to_dm", "src": "vector", "dst": "vector_dm"},
  {"context": "sub", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "vector_dm"},
   {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "J"},
   {"kind": "collect", "time": "J / 16", "packet": "J % 16"},
   {"kind": "to_trf", "tensor": "vector_trf"}]},
  {"context": "main", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "matrix_dm"},
   {"kind": "fetch", "dtype": "bf16", "time": "J / 32", "packet": "J % 32"},
   {"kind": "collect", "time": "J / 32", "packet": "J % 32"},
   {"kind": "align", "tensor": "vector_trf", "time": "J / 32", "packet": "J % 32"},
   {"kind": "contract", "packet": "1"},
   {"kind": "accumulate", "time": "1", "packet": "1 # 8", "param": "Interleaved"},
   {"kind": "cast", "dtype": "bf16", "packet": "1 # 16"},
   {"kind": "commit", "tensor": "result"}]},
  {"context": "dma", "kind": "to_hbm", "src": "result", "dst": "out"}]}`

// manualGEMM is the GEMM, 002 L473-525 (K = 2048; b at DM 1 << 12, inside
// a; the result at DM 0, L521). The example has no host program (L485-489):
// a and b sit at HBM 0 and 1 << 28 as in the GEMV's (L424-425).
const manualGEMM = `{"name": "hello-gemm", "axes": "I=512, J=512, K=2048", "chips": 1,
 "tensors": [
  {"name": "a", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "I, K", "addr": 0},
  {"name": "b", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "K, J", "addr": 268435456},
  {"name": "out", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "I, J", "addr": 536870912},
  {"name": "a_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I / 32, J / 32", "element": "I % 32, K", "addr": 0},
  {"name": "b_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I / 32, J / 32", "element": "J % 32, K", "addr": 4096},
  {"name": "b_trf", "mem": "trf", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I / 32, J / 32", "row": "J % 8", "element": "J / 8 % 4, K", "addr": 0, "trf_address": "Full"},
  {"name": "result", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "I / 32, J / 32", "element": "I % 32, J % 32", "addr": 0}],
 "ops": [
  {"context": "dma", "kind": "to_dm", "src": "a", "dst": "a_dm"},
  {"context": "dma", "kind": "to_dm", "src": "b", "dst": "b_dm"},
  {"context": "sub", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "b_dm"},
   {"kind": "fetch", "dtype": "bf16", "time": "J % 8, J / 8 % 4", "packet": "K"},
   {"kind": "collect", "time": "J % 8, J / 8 % 4, K / 16", "packet": "K % 16"},
   {"kind": "to_trf", "tensor": "b_trf"}]},
  {"context": "main", "kind": "chain", "stages": [
   {"kind": "begin", "tensor": "a_dm"},
   {"kind": "fetch", "dtype": "bf16", "time": "I % 32, J / 8 % 4", "packet": "K"},
   {"kind": "collect", "time": "I % 32, J / 8 % 4, K / 16", "packet": "K % 16"},
   {"kind": "align", "tensor": "b_trf", "time": "I % 32, J / 8 % 4, K / 32", "packet": "K % 32"},
   {"kind": "contract", "packet": "1"},
   {"kind": "accumulate", "time": "I % 32, J / 8 % 4", "packet": "J % 8", "param": "Interleaved"},
   {"kind": "cast", "dtype": "bf16", "packet": "J % 8 # 16"},
   {"kind": "commit", "tensor": "result"}]},
  {"context": "dma", "kind": "to_hbm", "src": "result", "dst": "out"}]}`

// edit is one documented difference between the manual's text and the
// emitter's: old is replaced by new in the manual's text, and must occur
// exactly n times.
type edit struct {
	old, new string
	n        int
	why      string // the docs/spec-decisions.md entry
}

const (
	whyForm    = "Emitted Rust: one statement form"
	whyNames   = "Emitted Rust: one name per tensor"
	whyAliases = "Emitted Rust: type aliases"
	whyOverlap = "Emitted Rust: overlapping addresses are refused"
	whyMul     = "Hello elementwise multiplication output address"
)

// manualCase is one Hello kernel: its text in the manual, the program that
// states it, the fix that makes the emitter accept it (if the manual's
// addresses collide) and the edits that turn the manual's text into the
// emitter's.
type manualCase struct {
	name     string
	from, to int    // the manual's lines (seed 002), copied to testdata/manual/<name>.rs
	program  string // the program as the manual writes it
	overlap  string // the collision the emitter refuses, "" if none
	fix      func(p *kernel.Program)
	edits    []edit
	hostless bool // the example has no host program
}

func setAddr(name string, addr int64) func(p *kernel.Program) {
	return func(p *kernel.Program) {
		t, _ := p.Tensor(name)
		t.Addr = addr
	}
}

var manualCases = []manualCase{
	{name: "hello-add", from: 175, to: 220, program: manualAdd, edits: []edit{
		// 002 L202, L203.
		{"let dm = input.to_dm::<Cluster, Slice, m![A % 8]>(&mut ctx.tdma, 0);",
			"let dm: DmTensor<i32, Chip, Cluster, Slice, m![A % 8]> = input.to_dm(&mut ctx.tdma, 0);", 1, whyForm},
		{"let result = ctx", "let result: DmTensor<i32, Chip, Cluster, Slice, m![A % 8]> = ctx", 1, whyForm},
	}},
	{name: "hello-mul", from: 246, to: 299, program: manualMul,
		overlap: `HBM tensors "rhs" [268435456, 268443648) and "out" [268435456, 268443648) overlap`,
		fix:     setAddr("out", 2<<28),
		edits: []edit{
			// 002 L276-277, L287, L298.
			{"let lhs_dm = lhs.to_dm::<Cluster, Slice, m![A % 8]>(&mut ctx.tdma, 0);",
				"let lhs_dm: DmTensor<i32, Chip, Cluster, Slice, m![A % 8]> = lhs.to_dm(&mut ctx.tdma, 0);", 1, whyForm},
			{"let rhs_dm = rhs.to_dm::<Cluster, Slice, m![A % 8]>(&mut ctx.tdma, 1 << 12);",
				"let rhs_dm: DmTensor<i32, Chip, Cluster, Slice, m![A % 8]> = rhs.to_dm(&mut ctx.tdma, 1 << 12);", 1, whyForm},
			{"let result = ctx", "let result: DmTensor<i32, Chip, Cluster, Slice, m![A % 8]> = ctx", 1, whyForm},
			{"result.to_hbm(&mut ctx.tdma, 1 << 28)", "result.to_hbm(&mut ctx.tdma, 2 << 28)", 1, whyMul},
		}},
	{name: "hello-dot", from: 307, to: 362, program: manualDot, edits: []edit{
		// 002 L319, L339-355.
		{"type Time = m![1]; // No temporal iteration\n", "", 1, whyAliases},
		{".fetch::<bf16, Time, m![A]>()", ".fetch::<bf16, m![1], m![A]>()", 2, whyAliases},
		{"m![{Time}, A / 16]", "m![A / 16]", 1, whyAliases},
		{"let lhs: DmTensor", "let lhs_dm: DmTensor", 1, whyNames},
		{"let rhs: DmTensor", "let rhs_dm: DmTensor", 1, whyNames},
		{"let rhs: TrfTensor", "let rhs_trf: TrfTensor", 1, whyNames},
		{".begin(rhs.view())", ".begin(rhs_dm.view())", 1, whyNames},
		{".begin(lhs.view())", ".begin(lhs_dm.view())", 1, whyNames},
		{"(&rhs)", "(&rhs_trf)", 1, whyNames},
	}},
	{name: "hello-gemv", from: 401, to: 465, program: manualGEMV,
		overlap: `DM tensors "matrix_dm" [0, 4096) and "result" [0, 2) overlap`,
		fix:     setAddr("result", 1<<13),
		edits: []edit{
			// 002 L439-461.
			{"let matrix: DmTensor", "let matrix_dm: DmTensor", 1, whyNames},
			{"let vector: DmTensor", "let vector_dm: DmTensor", 1, whyNames},
			{".begin(vector.view())", ".begin(vector_dm.view())", 1, whyNames},
			{".begin(matrix.view())", ".begin(matrix_dm.view())", 1, whyNames},
			{".commit(0);", ".commit::<m![1]>(1 << 13);", 1, whyForm + "; " + whyOverlap},
		}},
	{name: "hello-gemm", from: 473, to: 525, program: manualGEMM, hostless: true,
		overlap: `DM tensors "a_dm" [0, 131072) and "b_dm" [4096, 135168) overlap`,
		fix: func(p *kernel.Program) {
			setAddr("b_dm", 1<<17)(p)
			setAddr("result", 1<<18)(p)
		},
		edits: []edit{
			// 002 L497-521.
			{"let a: DmTensor", "let a_dm: DmTensor", 1, whyNames},
			{"let b: DmTensor", "let b_dm: DmTensor", 1, whyNames},
			{"b.to_dm(&mut ctx.tdma, 1 << 12)", "b.to_dm(&mut ctx.tdma, 1 << 17)", 1, whyOverlap},
			{".begin(b.view())", ".begin(b_dm.view())", 1, whyNames},
			{".begin(a.view())", ".begin(a_dm.view())", 1, whyNames},
			{".commit(0);", ".commit::<m![I % 32, J % 32]>(1 << 18);", 1, whyForm + "; " + whyOverlap},
		}},
}

func parseProgram(t testing.TB, src string) *kernel.Program {
	t.Helper()
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(src), &p))
	return &p
}

func manualText(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "manual", name+".rs"))
	require.NoError(t, err)
	return string(b)
}

// TestManualCopies checks that testdata/manual holds the manual's lines
// verbatim (when the seed is beside the repository, as in CI).
func TestManualCopies(t *testing.T) {
	seed, err := os.ReadFile(filepath.Join("..", "..", "shared", "seeds", "002_bc6a636c23286756.txt"))
	if err != nil {
		t.Skip("the manual (shared/seeds) is not beside the repository")
	}
	lines := strings.SplitAfter(string(seed), "\n")
	for _, c := range manualCases {
		want := strings.Join(lines[c.from-1:c.to], "")
		assert.Equal(t, want, manualText(t, c.name), "%s: 002 L%d-%d", c.name, c.from, c.to)
	}
}

// canonical tokens: the file's tokens without comments, each m![...]
// replaced by the mapping's canonical text (mapping.Expr.String of its
// parse), so that texts compare modulo whitespace, comments and the
// mapping library's spelling (`A / 8 # 256` is `A / 8` when A / 8 has 256
// positions).
func canonicalTokens(t testing.TB, src string) []string {
	t.Helper()
	toks, off, err := rustread.Tokens(src)
	require.NoError(t, err, "offset %d", off)
	var axes mapping.Axes
	env := mapping.Env{}
	var out []string
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		if tk.Text == "axes" && i+2 < len(toks) && toks[i+1].Text == "!" {
			end := strings.IndexByte(src[toks[i+2].Off:], ']') + toks[i+2].Off
			a, err := mapping.ParseAxes(src[toks[i+2].Off+1 : end])
			require.NoError(t, err)
			axes = a
		}
		if tk.Text == "m" && i+2 < len(toks) && toks[i+1].Text == "!" && toks[i+2].Text == "[" {
			depth, j := 0, i+2
			for ; j < len(toks); j++ {
				if toks[j].Text == "[" {
					depth++
				} else if toks[j].Text == "]" {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			text := src[toks[i+2].Off+1 : toks[j].Off]
			e, err := mapping.Parse(text, axes, env)
			require.NoError(t, err, "m![%s]", text)
			out = append(out, "m!["+e.String()+"]")
			// A type alias joins the escape environment.
			if n := len(out); n >= 4 && out[n-4] == "type" && out[n-2] == "=" {
				env[out[n-3]] = e
			}
			i = j
			continue
		}
		out = append(out, tk.Text)
	}
	return out
}

// deviceParts extracts the parts the golden test compares: the axes! and
// type alias declarations, and the #[device] kernel function.
func deviceParts(t testing.TB, src string) (decls, kernelFn []string) {
	t.Helper()
	toks := canonicalTokens(t, src)
	for i := 0; i < len(toks); i++ {
		switch {
		case toks[i] == "axes" || toks[i] == "type" && i+3 < len(toks) && toks[i+2] == "=" && strings.HasPrefix(toks[i+3], "m!["):
			for ; i < len(toks) && toks[i] != ";"; i++ {
				decls = append(decls, toks[i])
			}
			decls = append(decls, ";")
		case toks[i] == "#" && i+2 < len(toks) && toks[i+2] == "device":
			depth := 0
			for ; i < len(toks); i++ {
				kernelFn = append(kernelFn, toks[i])
				if toks[i] == "{" {
					depth++
				} else if toks[i] == "}" {
					depth--
					if depth == 0 {
						return decls, kernelFn
					}
				}
			}
		}
	}
	return decls, kernelFn
}

// TestGoldenManualKernels emits the manual's Hello kernels and compares the
// device code (axes!, type aliases, the #[device] kernel) with the manual's
// text, modulo whitespace, comments, mapping spelling and the documented
// differences (docs/spec-decisions.md, "Emitted Rust: ..."): each edit must
// apply exactly as often as stated, so a changed manual or emitter fails.
func TestGoldenManualKernels(t *testing.T) {
	for _, c := range manualCases {
		t.Run(c.name, func(t *testing.T) {
			p := parseProgram(t, c.program)
			_, err := Rust(p, RustOptions{})
			if c.overlap != "" {
				// The manual's addresses collide: the emitter refuses.
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.overlap)
				c.fix(p)
			}
			src, err := Rust(p, RustOptions{Version: "test"})
			require.NoError(t, err)

			manual := manualText(t, c.name)
			for _, e := range c.edits {
				require.Equal(t, e.n, strings.Count(manual, e.old), "edit %q (%s)", e.old, e.why)
				manual = strings.ReplaceAll(manual, e.old, e.new)
			}
			wantDecls, wantFn := deviceParts(t, manual)
			gotDecls, gotFn := deviceParts(t, string(src))
			require.NotEmpty(t, wantFn)
			assert.Equal(t, strings.Join(wantDecls, " "), strings.Join(gotDecls, " "), "axes and type aliases (002 L%d-%d)", c.from, c.to)
			assert.Equal(t, strings.Join(wantFn, " "), strings.Join(gotFn, " "), "the #[device] kernel (002 L%d-%d)", c.from, c.to)
		})
	}
}

// TestReadManualKernels reads the manual's own kernel files back into the
// programs the manual states.
func TestReadManualKernels(t *testing.T) {
	for _, c := range manualCases {
		t.Run(c.name, func(t *testing.T) {
			want := parseProgram(t, c.program)
			got, err := rustread.Read(c.name+".rs", []byte(unwrap(manualText(t, c.name))))
			if c.hostless {
				// Without a host program the inputs' HBM addresses are
				// unknown; Read refuses rather than guessing.
				require.Error(t, err)
				assert.Contains(t, err.Error(), "no host program launches the kernel")
				var re *rustread.Error
				require.ErrorAs(t, err, &re)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, programJSON(t, want), programJSON(t, got))
		})
	}
}
