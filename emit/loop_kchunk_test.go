package emit

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustread"
)

// K-chunked tile loops (docs/spec-decisions.md "Emitted Rust: tile loops",
// "K chunks: the split reduce's spelling and buffers"): the planner's
// K-chunked kernels in emit/testdata (tiledk-*), which TestTiledLoopGolden,
// TestTiledLoopVerify, TestTiledLoopLowered and TestRustCheck also take.

// TestTiledKLoopShape: the chunks' chains sit in the blocks of their
// phases: chunk 0's main chain commits the running sum, the others' ps0;
// the split reduce's passes (begin_interleaved over ps0 and the running
// sum, unzip, clip_zip Add) write the running sum again, alternating its
// two buffers with the chunk (`t % 2` for an even chunk count, `t % 5 % 2`
// for 5 chunks per output tile, in the 0.6.0 place line too); the last
// pass casts into the output tile, stored once after the last chunk,
// through a view_mut tile or, when no axis of the result is tiled, the
// whole result's view_mut.
func TestTiledKLoopShape(t *testing.T) {
	reduce := ".begin_interleaved::<Kc, _, _, _, _, _>(out_ps0.view(), out_ps1.view())"
	for _, tc := range []struct {
		name string
		api  API
		want []string
	}{
		{"tiledk-k2-single", Visa01, []string{"for t in 0..2 {", "let k = t;",
			"        if t == 0 {\n            out_ps1 = ctx\n", ".commit::<m![J % 4, I]>(385 << 8);",
			"        if t == 1 {\n            out_ps0 = ctx\n", reduce, ".vector_intra_slice_unzip::<Kc, m![J % 4, 1 # 2], m![J % 4]>()",
			".vector_clip_zip(ClipBinaryOpF32::Add)", ".cast::<bf16, m![I # 16]>()",
			"            out_dm.view().to_hbm_view(&mut ctx.tdma, out.view_mut());\n        }\n    }\n    out\n"}},
		{"tiledk-k2-single", Opt06, []string{"// tcpmap:place out_ps1 385 << 8", "// tcpmap:place out_ps0 98432", reduce,
			"out_dm.view().to_hbm_view(&mut ctx.tdma, out.view_mut());"}},
		{"tiledk-k4-double", Visa01, []string{"for t in 0..=4 {", "        if t == 1 {\n            out_ps1 = ctx\n",
			"        if t >= 2 {\n            out_ps0 = ctx\n", "        if t >= 2 && t < 4 {\n            out_ps1 = ctx\n",
			"[98688, 193 << 9][(t - 1) % 2]", "        if t == 4 {\n", "[3 << 15, 98432][(t - 1) / 4 % 2]"}},
		{"tiledk-k4-double", Opt06, []string{"// tcpmap:place out_ps1 [98688, 193 << 9][t % 2]", "// tcpmap:place out_dm [3 << 15, 98432]\n"}},
		{"tiledk-k5-2tile-double", Visa01, []string{"for t in 0..=10 {", "let i = t / 5;", "let k = t % 5;",
			"if t >= 1 && (t - 1) % 5 == 0 {", "if t >= 1 && (t - 1) % 5 != 0 {", "if t >= 1 && (t - 1) % 5 != 0 && (t - 1) % 5 != 4 {",
			"if t >= 1 && (t - 1) % 5 == 4 {", "[131456, 257 << 9][(t - 1) % 5 % 2]", "[1 << 17, 131200][(t - 1) / 5 % 2]",
			"let i = (t - 1) / 5;", "out.view_mut().tile::<m![I / 8], 1, m![1 # 2, I % 8, J]>(i);", "out_dm.view().to_hbm_view(&mut ctx.tdma, out_t);"}},
		{"tiledk-k5-2tile-double", Opt06, []string{"// tcpmap:place out_ps1 [131456, 257 << 9][t % 5 % 2]",
			"if t >= 1 && (t - 1) % 5 != 0 && (t - 1) % 5 != 4 {", reduce}},
	} {
		t.Run(tc.name+"/"+string(tc.api), func(t *testing.T) {
			p, _ := loadTiled(t, tc.name)
			src, err := Rust(p, RustOptions{API: tc.api})
			require.NoError(t, err)
			for _, w := range tc.want {
				if !strings.Contains(string(src), w) {
					t.Errorf("the kernel lacks %q", w)
				}
			}
			// Every chain of the split reduce is in the loop once per
			// phase: the middle passes and the last.
			passes := 2
			if tc.name == "tiledk-k2-single" {
				passes = 1
			}
			assert.Equal(t, passes, strings.Count(string(src), reduce))
		})
	}
}

// replaceNth replaces the n-th (from 1) occurrence of old in s.
func replaceNth(s, old, new string, n int) string {
	at := 0
	for ; n > 0; n-- {
		k := strings.Index(s[at:], old)
		if k < 0 {
			return s
		}
		at += k
		if n > 1 {
			at += len(old)
		}
	}
	return s[:at] + new + s[at+len(old):]
}

// TestTiledKLoopReadErrors: malformed K-chunked loops are errors with their
// line: a pass writing the running sum at other buffers, an index whose
// period is no level's, a phase that matches no level, a block of tile t -
// 1 whose residue is over t, `t - 1` before `t >= 1` (a usize underflow in
// Rust), the whole store into an input, and 0.6.0 place lines whose index
// is not over the op's tile or has another count.
func TestTiledKLoopReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		api        API
		old, new   string
		nth        int // 0: every occurrence
		want       string
	}{
		{"running sum buffers", "tiledk-k5-2tile-double", Visa01, "[131456, 257 << 9][(t - 1) % 5 % 2]", "[131456, 131712][(t - 1) % 5 % 2]", 2,
			"out_ps1 is produced again with another type, placement or buffer index"},
		{"running sum period", "tiledk-k5-2tile-double", Visa01, "% 5 % 2]", "% 3 % 2]", 0, "the buffer index of out_ps1 takes strides of the loop's levels (10, 5)"},
		{"phase", "tiledk-k5-2tile-double", Visa01, "(t - 1) % 5 != 4 {", "(t - 1) % 5 != 3 {", 1, "the condition of a loop level"},
		{"residue base", "tiledk-k5-2tile-double", Visa01, "if t >= 1 && (t - 1) % 5 != 0 {", "if t >= 1 && t % 5 != 1 {", 1,
			"the ops of this block work on tile t - 1"},
		{"underflow", "tiledk-k5-2tile-double", Visa01, "if t >= 1 && (t - 1) % 5 == 0 {", "if (t - 1) % 5 == 0 {", 1, "t - 1 underflows at t = 0"},
		{"store into an input", "tiledk-k2-single", Visa01, "out.view_mut());", "in0.view_mut());", 1, "in0.view_mut() is no view of the result"},
		{"place index tile", "tiledk-k5-2tile-double", Opt06, "[t % 5 % 2]", "[(t - 1) % 5 % 2]", 1, "a place line's buffer index is over the producing op's tile t"},
		{"place index count", "tiledk-k5-2tile-double", Opt06, "[t % 5 % 2]", "[t % 5 % 3]", 1, "the index takes 2 buffers modulo 3"},
		{"place index form", "tiledk-k5-2tile-double", Opt06, "[t % 5 % 2]", "[t / 5 / 2]", 1, "want the buffer index t [% P] [/ S] % 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := loadTiled(t, tc.file)
			src, err := Rust(p, RustOptions{API: tc.api})
			require.NoError(t, err)
			s := string(src)
			require.True(t, strings.Contains(s, tc.old), "the kernel lacks %q", tc.old)
			if tc.nth == 0 {
				s = strings.ReplaceAll(s, tc.old, tc.new)
			} else {
				s = replaceNth(s, tc.old, tc.new, tc.nth)
			}
			_, err = rustread.Read("k.rs", []byte(s))
			require.Error(t, err)
			var e *rustread.Error
			require.True(t, errors.As(err, &e), "%v", err)
			assert.Greater(t, e.Line, 0)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestTiledKLoopSpellings: a block's condition is read by the steps at
// which it holds, so another spelling of a phase's steps reads as that
// phase: the same program.
func TestTiledKLoopSpellings(t *testing.T) {
	for _, tc := range []struct{ file, old, new string }{
		{"tiledk-k5-2tile-double", "if t >= 1 && (t - 1) % 5 != 0 {", "if t >= 1 && (t - 1) % 5 >= 1 {"},
		{"tiledk-k5-2tile-double", "if t >= 1 && (t - 1) % 5 == 0 {", "if t < 10 && t >= 1 && (t - 1) % 5 < 1 {"},
		{"tiledk-k4-double", "if t >= 2 && t < 4 {", "if t != 4 && t >= 2 {"},
		{"tiledk-k2-single", "if t == 1 {", "if t >= 1 {"},
	} {
		t.Run(tc.new, func(t *testing.T) {
			p, _ := loadTiled(t, tc.file)
			src, err := Rust(p, RustOptions{})
			require.NoError(t, err)
			require.Contains(t, string(src), tc.old)
			q, err := rustread.Read("k.rs", []byte(strings.Replace(string(src), tc.old, tc.new, 1)))
			require.NoError(t, err)
			assert.JSONEq(t, programJSON(t, p), programJSON(t, q))
		})
	}
}

// BenchmarkTiledKLoop: emitting and reading back the 2-tile, 5-chunk
// double-buffered loop.
func BenchmarkTiledKLoop(b *testing.B) {
	p, err := rustread.ReadFile(filepath.Join("testdata", "tiledk-k5-2tile-double.json"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		src, err := Rust(p, RustOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rustread.Read("k.rs", src); err != nil {
			b.Fatal(err)
		}
	}
}
