package emit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustapi"
	"tcpmap/emit/rustread"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
)

// TestRustNames: tensor names that are no snake_case Rust identifier (a
// keyword, upper case, a dash, a name the file uses itself, two names one
// identifier apart) become unique identifiers, the same ones every time,
// each recorded with its original in a tcpmap:name line; the file reads
// back with the original names, in both APIs.
func TestRustNames(t *testing.T) {
	p := mutated(t, "hello-dot", func(p *kernel.Program) {
		renameTensor(p, "lhs_dm", "fn")
		renameTensor(p, "rhs_dm", "ctx")
		renameTensor(p, "rhs_trf", "Rhs-TRF")
		renameTensor(p, "out_dm", "LHS")
		renameTensor(p, "out", "Out")
	})
	for _, api := range rustapi.APIs {
		t.Run(string(api), func(t *testing.T) {
			src, err := Rust(p, RustOptions{API: api})
			require.NoError(t, err)
			again, err := Rust(p, RustOptions{API: api})
			require.NoError(t, err)
			assert.Equal(t, string(src), string(again), "deterministic")
			for _, w := range []string{
				"// tcpmap:name out Out", "// tcpmap:name fn_ fn", "// tcpmap:name ctx_ ctx",
				"// tcpmap:name rhs_trf Rhs-TRF", "// tcpmap:name lhs_2 LHS",
				"// tcpmap:reference einsum(lhs, rhs) -> out",
				"let fn_: DmTensor<", "let rhs_trf: TrfTensor<", "let lhs_2: DmTensor<", "fn_.view()",
			} {
				assert.Contains(t, string(src), w)
			}
			got, err := rustread.Read("k.rs", src)
			require.NoError(t, err)
			assert.JSONEq(t, programJSON(t, p), programJSON(t, got))
		})
	}
	// The host's name for an input's device tensor stays taken.
	_, err := Rust(mutated(t, "hello-dot", func(p *kernel.Program) { renameTensor(p, "out", "lhs_hbm") }), RustOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "host program's name for input")
}

// TestReadNameLines: a name line must name a tensor of the kernel, once.
func TestReadNameLines(t *testing.T) {
	src, err := Rust(loadGolden(t, "hello-dot"), RustOptions{})
	require.NoError(t, err)
	for _, tc := range []struct{ name, line, want string }{
		{"unknown", "// tcpmap:name nope Nope\n", "no tensor of the kernel"},
		{"twice", "// tcpmap:name lhs_dm A\n// tcpmap:name lhs_dm B\n", "a second tcpmap:name line"},
		{"shape", "// tcpmap:name lhs_dm\n", "want // tcpmap:name IDENT ORIGINAL"},
		{"clash", "// tcpmap:name lhs_dm rhs\n", "two tensors are renamed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rustread.Read("k.rs", []byte(tc.line+string(src)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRustSkewedAxes: a skewed axis (B' = B - A, 002 L988) is refused:
// neither library's axes! declares one.
func TestRustSkewedAxes(t *testing.T) {
	p := mutated(t, "hello-dot", func(p *kernel.Program) {
		a, err := mapping.ParseAxes("A=2048, B=4, B'=B-A")
		require.NoError(t, err)
		p.Axes = a
	})
	for _, api := range rustapi.APIs {
		_, err := Rust(p, RustOptions{API: api})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "axes!: skewed axis B' = B - A")
		assert.Contains(t, err.Error(), api.Library())
	}
}

// TestRustAPIRefusals: what an API cannot spell is refused, naming the op
// (or tensor) and the library.
func TestRustAPIRefusals(t *testing.T) {
	for _, c := range []struct {
		name, base string
		api        API
		f          func(p *kernel.Program)
		want       string
	}{
		{"f16 under 0.6.0", "hello-dot", Opt06, func(p *kernel.Program) {
			for _, x := range p.Tensors {
				x.DType = dtype.F16
			}
			for _, op := range p.Ops {
				for _, s := range op.Stages {
					if s.DType != 0 {
						s.DType = dtype.F16
					}
				}
			}
		}, `tensor "lhs": furiosa-opt-std 0.6.0 has no scalar type f16`},
		{"branch mode under 0.6.0", "hello-add", Opt06, func(p *kernel.Program) { stageOf(lastChain(p), kernel.StVectorBranch).Param = "ValidCount" },
			"ops[1] (chain): stages[4] (vector_branch): branch mode ValidCount: furiosa-opt-std 0.6.0 withholds it"},
		{"Forwarding under 0.1.0", "hello-gemv", Visa01, func(p *kernel.Program) { addSwitch(p, "Forwarding") },
			"ops[2] (chain): stages[2] (switch): furiosa-visa-std 0.1.0's SwitchConfig has no Forwarding"},
		{"identity cast under 0.6.0", "hello-dot", Opt06, func(p *kernel.Program) {
			stageOf(lastChain(p), kernel.StCast).DType = dtype.F32
			tensor(p, "out_dm").DType, tensor(p, "out").DType = dtype.F32, dtype.F32
		}, "ops[3] (chain): stages[6] (cast): furiosa-opt-std 0.6.0's cast cannot convert f32 to f32"},
		{"broadcast under 0.1.0", "hello-dot", Visa01, func(p *kernel.Program) {
			tensor(p, "out_dm").Element = mapping.MustParse("4 # 8", p.Axes, nil)
		}, `ops[3] (chain): the type of out_dm: m![4 # 8]: broadcast 4: furiosa-visa-std 0.1.0's m! takes the number 1 only`},
		{"Bottom padding under 0.1.0", "hello-dot", Visa01, func(p *kernel.Program) {
			tensor(p, "out_dm").Element = mapping.MustParse("1 #{!} 8", p.Axes, nil)
		}, "ops[3] (chain): the type of out_dm: m![1 #{!} 8]: padding Bottom: furiosa-visa-std 0.1.0's m! has Top padding `#` only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Rust(mutated(t, c.base, c.f), RustOptions{API: c.api})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// A linear combination is in neither m! grammar.
	for _, api := range rustapi.APIs {
		w := &rustWriter{api: api}
		a, err := mapping.ParseAxes("N=5, F=3")
		require.NoError(t, err)
		w.mapSpelling(mapping.MustParse("$(N:1, F:2)", a, nil), false)
		require.Error(t, w.err)
		assert.Contains(t, w.err.Error(), "a linear combination $(...) is in neither library's m! grammar")
	}
	_, err := Rust(loadGolden(t, "hello-dot"), RustOptions{API: "visa-0.2"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown API "visa-0.2" (want visa-0.1 or opt-0.6)`)
}

// TestRustHostHarness: the host program uses each library's host API:
// HostTensor::to_buf (0.1.0, elements Opt<D>) or into_vec (0.6.0,
// elements D); floats convert through f32::from and integers through i32::from
// (the libraries implement From<bf16> for f32, not for f64); inputs go to
// HBM at their address (0.1.0) or where the library puts them (0.6.0,
// whose Context is bound to the kernel's device).
func TestRustHostHarness(t *testing.T) {
	for _, c := range []struct {
		name string
		api  API
		want []string
	}{
		{"hello-dot", Visa01, []string{"let lhs_hbm = lhs.to_hbm(&mut ctx.pdma, 0).await;", "let mut ctx = Context::acquire();",
			"floats(&lhs.to_buf())", "check_floats(&floats(&out.to_buf())", "Opt::Init(x) => f64::from(f32::from(x)),", "Opt::Uninit => f64::NAN,"}},
		{"hello-dot", Opt06, []string{"let lhs_hbm = lhs.to_hbm(&mut ctx.pdma).await;", "let mut ctx = Context::acquire().bind(kernel.device());",
			"floats(&lhs.into_vec())", "check_floats(&floats(&out.into_vec())", ".map(|&x| f64::from(f32::from(x)))"}},
		{"hello-add", Visa01, []string{"Opt::Init(x) => i64::from(i32::from(x)),", "check_ints(&ints(&out.to_buf())"}},
		{"hello-add", Opt06, []string{"check_ints(&ints(&out.into_vec())", ".map(|&x| i64::from(i32::from(x)))"}},
	} {
		t.Run(c.name+"/"+string(c.api), func(t *testing.T) {
			src, err := Rust(loadGolden(t, c.name), RustOptions{API: c.api})
			require.NoError(t, err)
			for _, w := range c.want {
				assert.Contains(t, string(src), w)
			}
			assert.NotContains(t, string(src), ".to_vec()")
		})
	}
}

// TestReadPlaceLines: under furiosa-opt-std 0.6.0 the placement comes from
// the place lines, which must cover every tensor the kernel binds, once;
// a furiosa-visa-std 0.1.0 file places its tensors in its text. A method
// of the other API is refused, and the calls 0.6.0 splits a stage into are
// checked against each other.
func TestReadPlaceLines(t *testing.T) {
	src06, err := Rust(loadGolden(t, "hello-gemm"), RustOptions{API: Opt06})
	require.NoError(t, err)
	src01, err := Rust(loadGolden(t, "hello-gemm"), RustOptions{})
	require.NoError(t, err)
	add06, err := Rust(loadGolden(t, "hello-add"), RustOptions{API: Opt06})
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		src      []byte
		old, new string
		want     string
	}{
		{"missing", src06, "// tcpmap:place b_dm 1 << 16\n", "", "no // tcpmap:place line for b_dm"},
		{"unused", src06, "// tcpmap:place b_dm 1 << 16\n", "// tcpmap:place b_dm 1 << 16\n// tcpmap:place c_dm 0\n", "tcpmap:place names c_dm, which the kernel does not bind"},
		{"twice", src06, "// tcpmap:place b_dm 1 << 16\n", "// tcpmap:place b_dm 1 << 16\n// tcpmap:place b_dm 0\n", "a second tcpmap:place line for b_dm"},
		{"list outside a loop", src06, "// tcpmap:place b_dm 1 << 16\n", "// tcpmap:place b_dm [1 << 16, 0]\n", "a list places a double buffer of the tile loop"},
		{"TRF address", src06, "// tcpmap:place b_trf TrfAddress::Full", "// tcpmap:place b_trf 0", "the placement of b_trf is a TrfAddress"},
		{"bad value", src06, "// tcpmap:place b_dm 1 << 16", "// tcpmap:place b_dm 1 <<", "want an integer address"},
		{"in a 0.1.0 file", src01, "#![feature", "// tcpmap:place a 0\n#![feature", "a tcpmap:place line in a furiosa-visa-std 0.1.0 file"},
		{"0.1.0 method", src06, ".contract_outer::<", ".align::<", "align is a method of furiosa-visa-std 0.1.0"},
		{"0.6.0 method", src01, ".accumulate::<m![I % 32, J / 8 % 4], m![J % 8]>(AccumulationKind::Interleaved)",
			".contract_time::<m![1]>().contract_lane::<m![I % 32, J / 8 % 4], m![J % 8]>(LaneMode::Interleaved)", "contract_time is a method of furiosa-opt-std 0.6.0"},
		{"both crates", src06, "extern crate tokio;", "extern crate furiosa_visa_std;", "the file names both"},
		{"contract_time", src06, ".contract_time::<m![I % 32, J / 8 % 4]>()", ".contract_time::<m![I % 32]>()", "contract_time keeps m![I % 32]: contract_lane::<m![I % 32, J / 8 % 4], _>(LaneMode::Interleaved) keeps m![I % 32, J / 8 % 4]"},
		{"no contract_time", src06, ".contract_time::<m![I % 32, J / 8 % 4]>()", "", "contract_lane follows contract_time"},
		{"commit_trim", src06, ".commit_trim::<m![J % 8]>()", ".commit_trim::<m![J % 16]>()", "commit_trim's packet is m![J % 16]; the commit writes m![J % 8]"},
		{"no commit_trim", src06, ".commit_trim::<m![J % 8]>()", "", "commit follows commit_trim"},
		{"fetch_cast", src06, ".fetch::<m![I % 32, J / 8 % 4], m![K]>()", ".fetch::<m![I % 32, J / 8 % 4], m![K]>().fetch_cast::<i8>()", "cannot convert bf16 to i8"},
		{"tag", add06, "TagMode::Zero", "TagMode::One", "vector_intra_slice_tag: tcpmap reads TagMode::Zero and TagMode::Comparison"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := string(tc.src)
			require.Contains(t, s, tc.old)
			s = strings.Replace(s, tc.old, tc.new, 1)
			_, err := rustread.Read("k.rs", []byte(s))
			require.Error(t, err)
			var e *rustread.Error
			require.ErrorAs(t, err, &e)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestPipelinedLoop: a software-pipelined plan (search.Build's
// double-buffered chunk loop: the next tile's loads are issued before this
// tile's compute) prints as `for t in 0..=N`, its lead ops on tile t under
// `if t < N`, the others on tile t - 1 under `if t >= 1`, each block
// computing the indices of its tile; it reads back as the plan's program,
// and a block whose index names the other tile is refused.
func TestPipelinedLoop(t *testing.T) {
	pl, err := plan.Read("../results/plans/llama3-70b-decode-qk.plan.json")
	require.NoError(t, err)
	l, ok := kernel.Recognize(pl.Program)
	require.True(t, ok)
	require.True(t, l.Pipelined())
	for _, api := range rustapi.APIs {
		t.Run(string(api), func(t *testing.T) {
			src, err := Rust(pl.Program, RustOptions{API: api})
			require.NoError(t, err)
			for _, w := range []string{"for t in 0..=2 {", "if t == 0 {", "if t < 2 {", "if t >= 1 {", "let sctx = t;", "let sctx = t - 1;"} {
				assert.Contains(t, string(src), w)
			}
			if api == Visa01 {
				assert.Contains(t, string(src), "[32896, 34944][(t - 1) % 2]")
				assert.Contains(t, string(src), "[TrfAddress::FirstHalf, TrfAddress::SecondHalf][t % 2].clone()")
			}
			got, err := rustread.Read("k.rs", src)
			require.NoError(t, err)
			assert.JSONEq(t, programJSON(t, byName(pl.Program)), programJSON(t, byName(got)))
			for _, bad := range []struct{ old, new, want string }{
				{"let sctx = t - 1;", "let sctx = t;", "the ops of this block work on tile t - 1"},
				{"if t < 2 {", "if t < 3 {", "the condition of a loop level"},
				{"if t >= 1 {", "if t != 1 {", "the condition of a loop level"},
				// The steps of another phase (the last tile's ops after
				// the lead ops), whose ops are then out of order.
				{"if t >= 1 {", "if t >= 2 {", ""},
				{"        if t == 0 {\n", "        {\n", "a statement of a pipelined loop is in a block"},
			} {
				require.Contains(t, string(src), bad.old)
				_, err := rustread.Read("k.rs", []byte(strings.Replace(string(src), bad.old, bad.new, 1)))
				require.Error(t, err, bad.old)
				assert.Contains(t, err.Error(), bad.want)
			}
		})
	}
}

// TestRustDualCollectNote: a kernel whose collect packet is one 64-byte
// dual-channel flit (the manual's GEMV) says in its header that the
// library's collect refuses it at run time, and which plan target avoids
// it; a kernel of 32-byte collects (the dot product) says nothing.
func TestRustDualCollectNote(t *testing.T) {
	for _, api := range rustapi.APIs {
		src, err := Rust(loadGolden(t, "hello-gemv"), RustOptions{API: api})
		require.NoError(t, err)
		assert.Contains(t, string(src), "// Note: the chains producing out_dm collect 64-byte packets\n")
		assert.Contains(t, string(src), "// "+api.Library()+" refuses when the kernel runs (it makes 32-byte flits);\n")
		assert.Contains(t, string(src), "// `tcpmap plan --target "+string(api)+"` plans without them.\n")
		src, err = Rust(loadGolden(t, "hello-dot"), RustOptions{API: api})
		require.NoError(t, err)
		assert.NotContains(t, string(src), "64-byte")
	}
}
