package emit

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit/rustread"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/verify"
)

var updateTiled = flag.Bool("update-tiled", false, "rewrite emit/testdata/tiled-*.rs from the emitter")

func loadTiled(t *testing.T, name string) (*kernel.Program, []byte) {
	t.Helper()
	p, err := rustread.ReadFile(filepath.Join("testdata", name+".json"))
	require.NoError(t, err)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	return p, b
}

// TestTiledLoopGolden: a tiled kernel prints as one loop over tiles (the
// golden .rs), twice the same bytes, and reads back as the same program,
// byte for byte in JSON.
func TestTiledLoopGolden(t *testing.T) {
	for _, name := range tiledKernels {
		t.Run(name, func(t *testing.T) {
			p, want := loadTiled(t, name)
			src, err := Rust(p, RustOptions{Version: "test"})
			require.NoError(t, err)
			again, err := Rust(p, RustOptions{Version: "test"})
			require.NoError(t, err)
			assert.Equal(t, string(src), string(again), "deterministic")
			golden := filepath.Join("testdata", name+".rs")
			if *updateTiled {
				require.NoError(t, os.WriteFile(golden, src, 0o644))
			}
			g, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.True(t, string(g) == string(src), "differs from %s (go test -update-tiled rewrites it)", golden)
			assert.True(t, strings.Contains(string(src), "for t in 0.."), "a loop")
			// The straight-line form would bind a view per tile.
			assert.False(t, strings.Contains(string(src), "_t1:"), "one view per body op")
			got, err := rustread.Read(name+".rs", src)
			require.NoError(t, err, "%s", src)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(b))
		})
	}
}

// TestTiledLoopShape: the loop's parts, from the programs' tilings: one
// index per tiled axis (J = 64 in 2 or 4 tiles: `J / 32`, `J / 16`; I = 128
// in 2 and J = 128 in 4: `I / 64`, `J / 32`), every tensor the body
// produces declared before the loop with a handle of its type (so that no
// Rust reads it uninitialized), an `if` for the load of an operand whose
// tile changes with an outer axis only or never, the double buffers indexed
// by the count of their loads (002 L4151-4158; a TrfAddress cloned out of
// its array), the result's tiles written through view_mut tiles (Bottom
// padding: `#{!}` under 0.6.0, `#` under 0.1.0, whose m! has no kinds) with
// to_hbm_view. Under furiosa-opt-std 0.6.0 the handles are new() and the
// placement, double buffers included, is in the header's place lines.
func TestTiledLoopShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		api  API
		want []string
	}{
		{"tiled-1axis-single", Visa01, []string{"for t in 0..2 {", "let j = t;", "if t == 0 {", "in0_dm = in0.to_dm(&mut ctx.tdma, 0);",
			"let mut in0_dm: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, K]> = unsafe { DmTensor::from_addr(0) };",
			"let mut out: HbmTensor<bf16, Chip, m![I, J]> = unsafe { HbmTensor::from_addr(2 << 28) };",
			"in1.view().tile::<m![J / 32], 1, m![K, 1 # 2, J % 32]>(j)", "out.view_mut().tile::<m![J / 32], 1, m![I, 1 # 2, J % 32]>(j)",
			"out_dm.view().to_hbm_view(&mut ctx.tdma, out_t);", ".to_trf(TrfAddress::Full)"}},
		{"tiled-1axis-single", Opt06, []string{"for t in 0..2 {", "in0_dm = in0.to_dm(&mut ctx.tdma);",
			"let mut in0_dm: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, K]> = DmTensor::new();",
			"let mut out: HbmTensor<bf16, Chip, m![I, J]> = HbmTensor::new();", "// tcpmap:place out 2 << 28", "// tcpmap:place in0_dm 0",
			"out.view_mut().tile::<m![J / 32], 1, m![I, 1 #{!} 2, J % 32]>(j)", ".to_trf()", "// tcpmap:place in1_trf TrfAddress::Full"}},
		{"tiled-1axis-double", Visa01, []string{"for t in 0..4 {", "let j = t;", "if t == 0 {", "[t / 4 % 2]",
			"in1.view().tile::<m![J / 16], 1, m![K, 1 # 4, J % 16]>(j)",
			".to_trf([TrfAddress::FirstHalf, TrfAddress::SecondHalf][t % 2].clone())"}},
		{"tiled-1axis-double", Opt06, []string{"for t in 0..4 {", "// tcpmap:place in1_trf [TrfAddress::FirstHalf, TrfAddress::SecondHalf]",
			"// tcpmap:place in0_dm [0, 1 << 16]"}},
		{"tiled-2axis-double", Visa01, []string{"for t in 0..8 {", "let i = t / 4;", "let j = t % 4;", "if t % 4 == 0 {",
			"in0.view().tile::<m![I / 64], 1, m![1 # 2, I % 64, K]>(i)",
			"out.view_mut().tile::<m![I / 64], 1, m![1 # 2, I % 64, J]>(i).tile::<m![J / 32], 1,",
			".to_trf([TrfAddress::FirstHalf, TrfAddress::SecondHalf][t / 4 % 2].clone())", "[t % 2]"}},
		{"tiled-2axis-double", Opt06, []string{"for t in 0..8 {", "let i = t / 4;", "if t % 4 == 0 {", "// tcpmap:place in1_dm [1 << 16, 3 << 16]",
			"out.view_mut().tile::<m![I / 64], 1, m![1 #{!} 2, I % 64, J]>(i).tile::<m![J / 32], 1,", "in1_dm = in1_t.to_dm(&mut ctx.tdma);"}},
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
		})
	}
}

// TestTiledLoopVerify: the emitted loop, read through the loader the CLI
// uses (ReadFile), simulates to the reference on every slice. (verify's
// slice sample, Options.Sample, does not follow the tiles of the output:
// "no to_hbm op writes the output".) Under -short the one-axis
// double-buffered kernel is left out: the two others cover one and two
// tiled axes, single and double buffers.
func TestTiledLoopVerify(t *testing.T) {
	dir := t.TempDir()
	for _, name := range tiledKernels {
		t.Run(name, func(t *testing.T) {
			if name == "tiled-1axis-double" && testing.Short() {
				t.Skip("long: `make test-long` runs it (go test without -short)")
			}
			p, _ := loadTiled(t, name)
			src, err := Rust(p, RustOptions{})
			require.NoError(t, err)
			file := filepath.Join(dir, name+".rs")
			require.NoError(t, os.WriteFile(file, src, 0o644))
			q, err := rustread.ReadFile(file)
			require.NoError(t, err)
			rep, err := verify.Verify(engines.Default(), q, verify.Options{Seed: 1})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "%s", rep)
		})
	}
}

// TestTiledLoopFallback: a program with tile views that is no regular loop
// (one view moved off its tile) has no loop form and is refused in
// straight line, which binds a view only when it tiles one axis (its tiles
// here pin two).
func TestTiledLoopFallback(t *testing.T) {
	p, _ := loadTiled(t, "tiled-2axis-double")
	for _, x := range p.Tensors {
		if x.Name == "in1_t2" {
			x.Addr += 128
		}
	}
	_, ok := kernel.Recognize(p)
	require.False(t, ok)
	_, err := Rust(p, RustOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is no tile of one axis")
}

// TestTiledLoopReadErrors: malformed loops are errors with their line.
func TestTiledLoopReadErrors(t *testing.T) {
	p, _ := loadTiled(t, "tiled-2axis-double")
	src, err := Rust(p, RustOptions{})
	require.NoError(t, err)
	for _, tc := range []struct{ name, old, new, want string }{
		{"level", "if t % 4 == 0 {", "if t % 3 == 0 {", "the condition of a loop level"},
		{"condition", "if t % 4 == 0 {", "if t < 4 {", "the condition of a loop level"},
		{"parity stride", "[t / 4 % 2]", "[t % 2]", "fires every 4 steps"},
		{"parity modulus", "[1 << 16, 3 << 16][t % 2]", "[1 << 16, 3 << 16][t % 3]", "modulo"},
		{"index", "let j = t % 4;", "let j = t % 3;", "outermost index is t / 3"},
		{"tile dim", ".tile::<m![J / 32], 1, m![K, 1 # 4, J % 32]>(j)", ".tile::<m![J / 16], 1, m![K, 1 # 4, J % 32]>(j)", "dimension"},
		{"undeclared", "let mut in0_trf: ", "let mut in0_trfx: ", "not declared"},
		{"unknown view", "ctx.tdma, out_t)", "ctx.tdma, out_x)", "no tile view"},
		{"store of an input's view", "ctx.tdma, out_t)", "ctx.tdma, in1_t)", "the loop stores tiles of the result"},
		{"view mapping", "m![1 # 2, I % 64, J]>(i)", "m![1 # 2, I % 32, J]>(i)", "the tile of"},
		{"view scope", ".tile::<m![J / 32], 1, m![K, 1 # 4, J % 32]>(j)", ".tile::<m![J / 32], 1, m![K, 1 # 4, J % 32]>(k)", "no index of the loop in scope"},
		{"let in the loop", "        in1_dm = in1_t", "        let in1_dm: DmTensor<bf16, Chip, Cluster, Slice, m![K, J % 32]> = in1_t", "declared before it"},
		{"uninitialized", "= unsafe { DmTensor::from_addr(0) };", ";", `want "="`},
		{"not zero", "for t in 0..8", "for t in 1..8", "runs from 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := string(src)
			require.True(t, strings.Contains(s, tc.old), "the kernel lacks %q", tc.old)
			s = strings.Replace(s, tc.old, tc.new, 1)
			_, err := rustread.Read("k.rs", []byte(s))
			require.Error(t, err)
			var e *rustread.Error
			require.True(t, errors.As(err, &e), "%v", err)
			assert.Greater(t, e.Line, 0)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// BenchmarkTiledLoop: emitting and reading back the two-axis tile loop.
func BenchmarkTiledLoop(b *testing.B) {
	p, err := rustread.ReadFile(filepath.Join("testdata", "tiled-2axis-double.json"))
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

// TestTiledLoopLowered: a lowered tiled program (engines.Lower states each
// step's DMA and stage configurations, which differ from step to step)
// still prints as the loop, and reads back as the program without them.
func TestTiledLoopLowered(t *testing.T) {
	for _, name := range tiledKernels {
		t.Run(name, func(t *testing.T) {
			p, _ := loadTiled(t, name)
			orig, _ := loadTiled(t, name)
			require.NoError(t, engines.Lower(engines.Default(), p))
			src, err := Rust(p, RustOptions{Version: "test"})
			require.NoError(t, err)
			g, err := os.ReadFile(filepath.Join("testdata", name+".rs"))
			require.NoError(t, err)
			assert.True(t, string(g) == string(src), "the lowered program prints as the unlowered one")
			q, err := rustread.Read("k.rs", src)
			require.NoError(t, err)
			assert.Equal(t, programJSON(t, orig), programJSON(t, q))
		})
	}
}
