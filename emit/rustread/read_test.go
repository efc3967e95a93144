package rustread

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit"
	"tcpmap/emit/rustapi"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
	"tcpmap/model/pos"
)

// vary changes a golden program at random in ways the Rust text must carry:
// tensor names, contexts, addresses (scaled, so they stay disjoint), a DM
// to DM copy, an HBM intermediate (the result is then returned by name),
// a switch, a transpose, no reference, no result.
func vary(t testing.TB, rng *rand.Rand, base string) *kernel.Program {
	t.Helper()
	p := loadGolden(t, base)
	k := int64(1 + rng.Intn(3))
	for _, x := range p.Tensors {
		if x.Mem != kernel.TRF {
			x.Addr *= k
		}
	}
	for _, x := range append([]*kernel.Tensor(nil), p.Tensors...) {
		if x.Role == kernel.Intermediate && rng.Intn(2) == 0 {
			renameTensor(p, x.Name, fmt.Sprintf("t%d_%s", rng.Intn(100), x.Name))
		}
	}
	for _, op := range p.Ops {
		if op.Kind == kernel.OpChain && rng.Intn(3) == 0 {
			if op.Context == kernel.CtxMain {
				op.Context = kernel.CtxSub
			} else {
				op.Context = kernel.CtxMain
			}
		}
	}
	// The copy goes after every DM tensor, inside the slice's 512 KB of DM
	// (002 L138); a kernel with no room left keeps its shape.
	high := int64(0)
	for _, x := range p.Tensors {
		if x.Mem == kernel.DM {
			n, err := x.DType.BytesFor(x.Element.Size())
			require.NoError(t, err)
			high = max(high, (x.Addr+int64(n)+63)/64*64)
		}
	}
	first := p.Ops[len(p.Ops)-2]
	room := false
	if src := tensor(p, first.Stages[0].Tensor); src != nil {
		n, err := src.DType.BytesFor(src.Element.Size())
		require.NoError(t, err)
		room = high+int64(n) <= 512<<10
	}
	if room && rng.Intn(2) == 0 {
		// Copy the first chain's input DM tensor and begin from the copy.
		src := tensor(p, first.Stages[0].Tensor)
		c := *src
		c.Name, c.Addr = "copy", high
		p.Tensors = append(p.Tensors, &c)
		i := len(p.Ops) - 2
		p.Ops = append(p.Ops[:i], append([]*kernel.Op{{Context: kernel.CtxDMA, Kind: kernel.OpDMToDM, Src: src.Name, Dst: "copy"}}, p.Ops[i:]...)...)
		first.Stages[0].Tensor = "copy"
	}
	if rng.Intn(2) == 0 {
		// Also keep the result's DM tensor in an HBM intermediate, after
		// the result: the kernel then returns its result by name.
		last := p.Ops[len(p.Ops)-1]
		out := tensor(p, last.Dst)
		h := *out
		h.Name, h.Role, h.Addr = "spill", kernel.Intermediate, 7<<28
		p.Tensors = append(p.Tensors, &h)
		p.Ops = append(p.Ops, &kernel.Op{Context: kernel.CtxDMA, Kind: kernel.OpToHBM, Src: last.Src, Dst: "spill"})
	}
	if base == "hello-gemv" && rng.Intn(2) == 0 {
		addSwitch(p, "Broadcast01 { slice1: 256, slice0: 1, time0: 1 }")
	}
	if rng.Intn(3) == 0 {
		ch := lastChain(p)
		col := stageOf(ch, kernel.StCollect)
		for i, st := range ch.Stages {
			if st == col {
				tr := &kernel.Stage{Kind: kernel.StTranspose, Time: col.Time, Packet: col.Packet}
				ch.Stages = append(ch.Stages[:i+1], append([]*kernel.Stage{tr}, ch.Stages[i+1:]...)...)
				break
			}
		}
	}
	switch rng.Intn(4) {
	case 0:
		p.Reference = nil
	case 1:
		// No result at all: drop the output and its to_hbm.
		last := p.Ops[len(p.Ops)-1]
		if last.Kind == kernel.OpToHBM && tensor(p, last.Dst).Role == kernel.Output {
			p.Reference = nil
			out := last.Dst
			p.Ops = p.Ops[:len(p.Ops)-1]
			for i, x := range p.Tensors {
				if x.Name == out {
					p.Tensors = append(p.Tensors[:i], p.Tensors[i+1:]...)
					break
				}
			}
		}
	}
	return p
}

// canonicalOrder puts a program's tensors in the reader's order: inputs,
// the output, then the others in the order ops produce them.
func canonicalOrder(p *kernel.Program) {
	var in, out, rest []*kernel.Tensor
	rank := map[string]int{}
	n := 0
	for _, op := range p.Ops {
		for _, name := range []string{op.Dst} {
			if _, ok := rank[name]; !ok && name != "" {
				rank[name] = n
				n++
			}
		}
		if op.Kind == kernel.OpChain {
			name := op.Stages[len(op.Stages)-1].Tensor
			if _, ok := rank[name]; !ok {
				rank[name] = n
				n++
			}
		}
	}
	for _, x := range p.Tensors {
		switch x.Role {
		case kernel.Input:
			in = append(in, x)
		case kernel.Output:
			out = append(out, x)
		default:
			rest = append(rest, x)
		}
	}
	for i := 1; i < len(rest); i++ {
		for j := i; j > 0 && rank[rest[j].Name] < rank[rest[j-1].Name]; j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
	p.Tensors = append(append(in, out...), rest...)
}

// TestRoundTripVariations: emit → read gives the same program for random
// variations of every golden kernel.
func TestRoundTripVariations(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		base := goldenKernels[i%len(goldenKernels)]
		p := vary(t, rng, base)
		canonicalOrder(p)
		src, err := emit.Rust(p, emit.RustOptions{Version: "t"})
		require.NoError(t, err, "variation %d of %s", i, base)
		q, err := Read("v.rs", src)
		require.NoError(t, err, "variation %d of %s:\n%s", i, base, src)
		require.JSONEq(t, programJSON(t, p), programJSON(t, q), "variation %d of %s:\n%s", i, base, src)
	}
}

// TestReadErrors: errors name the line and column of the offending text.
func TestReadErrors(t *testing.T) {
	good, err := emit.Rust(loadGolden(t, "hello-dot"), emit.RustOptions{})
	require.NoError(t, err)
	src := string(good)
	for _, c := range []struct {
		name      string
		old, new  string
		at        string // the text the error points at, in the changed source
		atOffset  int    // offset within at
		wantInMsg string
	}{
		{"bad mapping", "m![A / 32]", "m![A / 3]", "m![A / 3]", 5, "does not divide"},
		{"unknown axis", "m![A % 32], _, _", "m![B % 32], _, _", "m![B % 32], _, _", 3, "B"},
		{"unknown alias", "DmTensor<bf16, Chip, Cluster, Slice, m![A]> = lhs", "DmTensor<bf16, Chip, Clustr, Slice, m![A]> = lhs", "Clustr", 0, "unknown type alias Clustr"},
		{"unknown stage", ".contract::<m![1]>()", ".contrakt::<m![1]>()", "contrakt", 0, "unknown chain stage contrakt"},
		{"unknown dtype", ".cast::<bf16, m![1 # 16]>()", ".cast::<bf17, m![1 # 16]>()", "bf17", 0, "bf17"},
		{"accumulation kind", "AccumulationKind::Interleaved", "AccumulationKind::Sideways", "AccumulationKind::Sideways", 0, "unknown accumulation kind"},
		{"trf address", "TrfAddress::Full", "TrfAddress::Most", "TrfAddress::Most", 0, "unknown TRF address mode"},
		{"address", "(&mut ctx.tdma, 1 << 12)", "(&mut ctx.tdma, 1 << x)", "1 << x)", 5, "want an integer address"},
		{"address range", "(&mut ctx.tdma, 1 << 12)", "(&mut ctx.tdma, 1 << 70)", "<< 70", 0, "out of range"},
		{"missing semicolon", "to_dm(&mut ctx.tdma, 0);", "to_dm(&mut ctx.tdma, 0)", "let rhs_dm", 0, `want ";"`},
		{"begin on TRF", ".begin(lhs_dm.view())", ".begin(rhs_trf.view())", "rhs_trf.view", 0, "begin needs a DM tensor"},
		{"chain without end", ".commit::<m![1 # 8]>(1 << 13);", ";", ";\n    out_dm.to_hbm", 0, "the chain ends without"},
		{"stage after the end", ".commit::<m![1 # 8]>(1 << 13);", ".commit::<m![1 # 8]>(1 << 13).vector_init();", "vector_init();", 0, "after the chain's terminal stage"},
		{"annotation disagrees", "let out_dm: DmTensor<bf16, Chip, Cluster, Slice, m![1 # 8]>", "let out_dm: DmTensor<bf16, Chip, Cluster, Slice, m![1 # 16]>", "DmTensor<bf16, Chip, Cluster, Slice, m![1 # 16]>", 0, "annotation disagrees"},
		{"unterminated comment", "#[device", "/* #[device", "/* #[device", 0, "unterminated block comment"},
		{"stray character", "axes![A = 2048];", "axes![A = 2048]; ¤", "¤", 0, "unexpected character"},
		{"reference", "// tcpmap:reference einsum(lhs, rhs) -> out", "// tcpmap:reference einsum lhs, rhs", "einsum lhs", 0, "want OP(INPUT, ...) -> OUTPUT"},
		{"launch arity", "launch(kernel, (&mut ctx, &lhs_hbm, &rhs_hbm))", "launch(kernel, (&mut ctx, &lhs_hbm))", "launch(kernel", 0, "launch passes 1 tensors, the kernel takes 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(src, c.old), "the edit must apply once")
			bad := strings.Replace(src, c.old, c.new, 1)
			_, err := Read("dot.rs", []byte(bad))
			require.Error(t, err)
			var re *Error
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Contains(t, re.Msg, c.wantInMsg)
			off := strings.Index(bad, c.at)
			require.GreaterOrEqual(t, off, 0)
			line, col := pos.Offset([]byte(bad), off+c.atOffset)
			assert.Equal(t, fmt.Sprintf("dot.rs:%d:%d", line, col), fmt.Sprintf("%s:%d:%d", re.File, re.Line, re.Col), "%v", err)
		})
	}
}

// TestReadForms reads the forms the manual uses besides the emitted one.
func TestReadForms(t *testing.T) {
	good, err := emit.Rust(loadGolden(t, "hello-gemm"), emit.RustOptions{})
	require.NoError(t, err)
	want := programJSON(t, loadGolden(t, "hello-gemm"))
	for _, c := range []struct{ name, old, new string }{
		// 002 L202: to_dm with type arguments, no annotation.
		{"to_dm turbofish", "let a_dm: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, K]> = a.to_dm(",
			"let a_dm = a.to_dm::<Cluster, Slice, m![I % 32, K]>("},
		// Both, agreeing.
		{"to_dm both", "a.to_dm(", "a.to_dm::<Cluster, Slice, m![I % 32, K]>("},
		// 002 L203-217: an unannotated chain committing with a type argument.
		{"unannotated chain", "let out_dm: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, J % 32]> = ctx", "let out_dm = ctx"},
		// 002 L4056: to_trf::<Row, Element>.
		{"to_trf turbofish", "let b_trf: TrfTensor<bf16, Chip, Cluster, Slice, Row, m![J / 8 % 4, K]> = ctx", "let b_trf = ctx"},
		// Hex and underscores in addresses, a comment inside a chain.
		{"literals", "(&mut ctx.tdma, 1 << 16)", "(&mut ctx.tdma, 0x1_0000 /* 64 KiB */)"},
		// align with two type arguments.
		{"align", "m![K % 32], _, _>(&b_trf)", "m![K % 32]>(&b_trf)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(string(good), c.old, c.new, 1)
			require.NotEqual(t, string(good), src)
			if c.name == "to_trf turbofish" {
				src = strings.Replace(src, ".to_trf(TrfAddress::Full)", ".to_trf::<Row, m![J / 8 % 4, K]>(TrfAddress::Full)", 1)
			}
			q, err := Read("gemm.rs", []byte(src))
			require.NoError(t, err)
			assert.JSONEq(t, want, programJSON(t, q))
		})
	}
}

// TestReadFile reads .rs and .json files; JSON syntax errors get the line
// and column of the offending byte.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	src, err := emit.Rust(loadGolden(t, "hello-dot"), emit.RustOptions{})
	require.NoError(t, err)
	rs := filepath.Join(dir, "k.rs")
	require.NoError(t, os.WriteFile(rs, src, 0o644))
	p, err := ReadFile(rs)
	require.NoError(t, err)
	assert.Equal(t, "hello-dot", p.Name)

	bad := filepath.Join(dir, "k.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"name\": \"x\",\n  \"axes\": }"), 0o644))
	_, err = ReadFile(bad)
	var re *Error
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 3, re.Line)
	assert.Equal(t, 11, re.Col, "the column of the offending '}'")
	assert.Contains(t, err.Error(), "k.json:3:11: invalid character '}'")
	var se *json.SyntaxError
	assert.ErrorAs(t, err, &se, "the JSON error stays reachable")

	_, err = ReadFile(filepath.Join(dir, "k.txt"))
	assert.ErrorContains(t, err, "want .rs or .json")
	_, err = ReadFile(filepath.Join(dir, "missing.rs"))
	assert.Error(t, err)
}

// TestReadSkewedAxes: axes! with a skewed axis (002 L986-1003) reads back.
func TestReadSkewedAxes(t *testing.T) {
	a, err := mapping.ParseAxes("A=4, B=4, B'=B-A")
	require.NoError(t, err)
	r := &reader{file: "s.rs"}
	p, err := r.readAxesOnly("axes![A = 4, B = 4, B' = B - A];")
	require.NoError(t, err)
	assert.Equal(t, a.String(), p.String())
}

// readAxesOnly parses a file holding only an axes! declaration.
func (r *reader) readAxesOnly(src string) (mapping.Axes, error) {
	r.src = src
	toks, _, off, err := lex(src)
	if err != nil {
		r.fail(off, "%v", err)
		return mapping.Axes{}, r.err
	}
	r.toks = toks
	r.axesDecl()
	return r.axes, r.err
}

// FuzzRead: Read never panics; what it accepts is a valid program that, if
// it can be emitted, reads back the same.
func FuzzRead(f *testing.F) {
	for _, name := range goldenKernels {
		src, err := emit.Rust(loadGolden(f, name), emit.RustOptions{Version: "f", Cost: "1"})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "manual", name+".rs")); err == nil {
			f.Add([]byte(unwrap(string(b))))
		}
	}
	// The tile loops (emit/loop.go), a pipelined one, and furiosa-opt-std
	// 0.6.0's spellings (emit/rustapi).
	for _, name := range tiledKernels {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", name+".rs")); err == nil {
			f.Add(b)
		}
	}
	for _, name := range []string{"hello-add", "hello-gemm"} {
		src, err := emit.Rust(loadGolden(f, name), emit.RustOptions{API: emit.Opt06})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	// A K-chunked loop under 0.6.0: its running sum's place line carries
	// its index.
	if p, err := ReadFile(filepath.Join("..", "testdata", "tiledk-k5-2tile-double.json")); err == nil {
		if src, err := emit.Rust(p, emit.RustOptions{API: emit.Opt06}); err == nil {
			f.Add(src)
		}
	}
	// A kernel updating an argument in place (&mut, a view, to_hbm_view),
	// in both APIs.
	for _, api := range rustapi.APIs {
		if src, err := emit.Rust(loadGolden(f, "update-slice"), emit.RustOptions{API: api}); err == nil {
			f.Add(src)
		}
	}
	// An einsum with its epilogue (the reference directive's `then`).
	if pl, err := plan.Read("../../results/plans/attention-head-qk+scale.plan.json"); err == nil {
		if src, err := emit.Rust(pl.Program, emit.RustOptions{}); err == nil {
			f.Add(src)
		}
	}
	if pl, err := plan.Read("../../results/plans/llama3-70b-decode-qk.plan.json"); err == nil {
		for _, api := range rustapi.APIs {
			if src, err := emit.Rust(pl.Program, emit.RustOptions{API: api}); err == nil {
				f.Add(src)
			}
		}
	}
	f.Add([]byte("axes![A = 8];\n#[device(chip = 1)]\nfn kernel(ctx: &mut Context) {}\n"))
	f.Add([]byte("'a' '\\'' r#\"x\"# b\"y\" 1e-3 0x_1 /* /* */ */ m![{T}]"))
	f.Fuzz(fuzzRoundTrip)
}

// fuzzRoundTrip: src reads to a valid program or to an error with its
// position, never a panic, and a program read emits text that reads back
// to the same program (FuzzRead, FuzzReadVector).
func fuzzRoundTrip(t *testing.T, src []byte) {
	p, err := Read("fuzz.rs", src)
	if err != nil {
		var re *Error
		if !errors.As(err, &re) {
			t.Fatalf("error without a position: %v", err)
		}
		return
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Read accepted an invalid program: %v", err)
	}
	out, err := emit.Rust(p, emit.RustOptions{})
	if err != nil {
		return
	}
	q, err := Read("fuzz.rs", out)
	if err != nil {
		t.Fatalf("emitted text does not read back: %v\n%s", err, out)
	}
	if a, b := programJSON(t, p), programJSON(t, q); a != b {
		t.Fatalf("round trip differs:\n%s\n%s", a, b)
	}
}

// TestReadDeepNesting: deeply nested constants are an error, not a stack
// overflow.
func TestReadDeepNesting(t *testing.T) {
	good, err := emit.Rust(loadGolden(t, "hello-dot"), emit.RustOptions{})
	require.NoError(t, err)
	deep := strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000)
	src := strings.Replace(string(good), "(&mut ctx.tdma, 1 << 12)", "(&mut ctx.tdma, "+deep+")", 1)
	_, err = Read("deep.rs", []byte(src))
	assert.ErrorContains(t, err, "nested more than 64 deep")
	ok := strings.Replace(string(good), "(&mut ctx.tdma, 1 << 12)", "(&mut ctx.tdma, ((1) << (6 * 2)))", 1)
	p, err := Read("ok.rs", []byte(ok))
	require.NoError(t, err)
	assert.Equal(t, int64(4096), tensor(p, "rhs_dm").Addr)
}
