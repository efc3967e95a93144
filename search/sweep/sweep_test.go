package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
)

func TestShippedSweeps(t *testing.T) {
	for _, tc := range []struct {
		file   string
		points int
	}{
		{"../../workloads/sweeps/gemm-shapes.yaml", 200},
		{"../../workloads/sweeps/hw-dm-size.yaml", 8},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			sw, err := Load(tc.file, engines.Default())
			require.NoError(t, err)
			assert.Len(t, sw.Points, tc.points)
			assert.Zero(t, sw.Duplicates)
		})
	}
	sw, err := Load("../../workloads/sweeps/gemm-shapes.yaml", engines.Default())
	require.NoError(t, err)
	assert.Equal(t, 16, sw.Excluded)
	assert.Equal(t, "gemm M=256 N=256 K=256", strings.Replace(sw.Points[0].Text(), "K=256 M=256 N=256", "M=256 N=256 K=256", 1))
	dm, err := Load("../../workloads/sweeps/hw-dm-size.yaml", engines.Default())
	require.NoError(t, err)
	assert.Equal(t, 131072, dm.Points[0].Spec.DM.BytesPerSlice.Value)
	assert.Equal(t, 1048576, dm.Points[7].Spec.DM.BytesPerSlice.Value)
	assert.Equal(t, "llama3-70b-decode/k_proj", dm.Points[0].Params["workload"])
	// The embedded spec's own DM size gives the embedded spec's hash.
	assert.Equal(t, dm.Points[2].Spec.DM, engines.Default().DM)
}

const gemmSweep = `name: s
workload: {einsum: "MK,KN->MN", axes: {M: 64, N: 64, K: 64}, dtype: bf16}
grid:
  M: [64, 128]
  K: {range: [64, 192, 64]}
  dtype: [bf16, i8]
options: {timeout: 2s}
`

func TestParseSweepExpansion(t *testing.T) {
	sw, err := Parse([]byte(gemmSweep), "s.yaml", engines.Default())
	require.NoError(t, err)
	require.Len(t, sw.Points, 12)
	p := sw.Points[11]
	assert.Equal(t, map[string]string{"M": "128", "K": "192", "dtype": "i8"}, p.Params)
	assert.Equal(t, "M K, K N -> M N", p.Problem.Einsum())
	assert.Equal(t, "i32", p.Problem.Acc.String())
	// The grid's last parameter varies fastest.
	assert.Equal(t, "bf16", sw.Points[0].Params["dtype"])
	assert.Equal(t, "i8", sw.Points[1].Params["dtype"])
	ids := map[string]bool{}
	for _, p := range sw.Points {
		ids[p.Key.ID()] = true
	}
	assert.Len(t, ids, 12)

	// Keys are content: the same points in another order, with the
	// workload spelled otherwise, have the same keys.
	other := `# the same sweep, reordered
name: other
options: {timeout: 2s}
grid:
  dtype: [i8, bf16]
  K: [192, 128, 64]
  M: [128, 64]
workload:
  einsum: MK,KN->MN
  dtype: {in: bf16, acc: f32, out: bf16}
  axes: {M: 64, N: 64, K: 64}
  chips: 1
`
	sw2, err := Parse([]byte(other), "o.yaml", engines.Default())
	require.NoError(t, err)
	require.Len(t, sw2.Points, 12)
	for _, p := range sw2.Points {
		assert.True(t, ids[p.Key.ID()], p.Text())
	}
	// Another timeout is another key.
	sw3, err := Parse([]byte(strings.Replace(gemmSweep, "timeout: 2s", "timeout: 3s", 1)), "s.yaml", engines.Default())
	require.NoError(t, err)
	assert.NotEqual(t, sw.Points[0].Key.ID(), sw3.Points[0].Key.ID())
	assert.Equal(t, sw.Points[0].Key.Workload, sw3.Points[0].Key.Workload)
	// The named digit orders are the default, and the key of a point
	// planned before the option; every order is another key.
	assert.False(t, sw.Points[0].Options.AllOrders())
	sw4, err := Parse([]byte(strings.Replace(gemmSweep, "timeout: 2s", "timeout: 2s, digit_orders: named", 1)), "s.yaml", engines.Default())
	require.NoError(t, err)
	assert.Equal(t, sw.Points[0].Key.ID(), sw4.Points[0].Key.ID())
	sw5, err := Parse([]byte(strings.Replace(gemmSweep, "timeout: 2s", "timeout: 2s, digit_orders: all", 1)), "s.yaml", engines.Default())
	require.NoError(t, err)
	assert.True(t, sw5.Points[0].Options.AllOrders())
	assert.NotEqual(t, sw.Points[0].Key.ID(), sw5.Points[0].Key.ID())
}

func TestParseSweepPointsAndHW(t *testing.T) {
	src := `name: hw
workload: {einsum: "MK,KN->MN", axes: {M: 64, N: 64, K: 64}, dtype: bf16}
points:
  - {hw.dm.misaligned_write_factor: 4}
  - {hw.dm.misaligned_write_factor: 3, max_tiles: 4}
grid:
  M: [64, 128]
exclude:
  - {hw.dm.misaligned_write_factor: 3, M: 128}
`
	sw, err := Parse([]byte(src), "hw.yaml", engines.Default())
	require.NoError(t, err)
	require.Len(t, sw.Points, 3)
	assert.Equal(t, 1, sw.Excluded)
	assert.Equal(t, 4.0, float64(sw.Points[0].Spec.DM.MisalignedWriteFactor.Value))
	assert.Equal(t, 4, sw.Points[2].Options.MaxTiles)
	assert.Equal(t, sw.Points[2].Key.HW, sw.Points[2].Key.HW)
	assert.NotEqual(t, sw.Points[0].Key.HW, sw.Points[2].Key.HW)
}

func TestParseSweepErrors(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("name: x\neinsum: IK,KJ->IJ\naxes: {I: 4}\n"), 0o644))
	moe, err := filepath.Abs("../../workloads/moe.yaml")
	require.NoError(t, err)
	const wl = "workload: {einsum: \"MK,KN->MN\", axes: {M: 64, N: 64, K: 64}, dtype: bf16}\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		{"empty", "", "s.yaml: empty file"},
		{"syntax", "name: [x\n", "s.yaml:2"},
		{"scanner error on line 1", "name: a: b\n", "s.yaml:1: yaml: mapping values are not allowed in this context"},
		{"two documents", "name: s\n---\nname: t\n", "s.yaml:2:1: more than one YAML document"},
		{"broken second document", "name: s\n" + wl + "grid: {M: [64]}\n---\nname: [x\n", "s.yaml:5: yaml: did not find expected ',' or ']'"},
		{"not a mapping", "- 1\n", "s.yaml:1:1: want a mapping"},
		{"unknown field", "name: s\n" + wl + "grid: {M: [64]}\nsize: 3\n", "s.yaml:4:1: size: unknown field"},
		{"no name", wl + "grid: {M: [64]}\n", "name: missing"},
		{"no workload", "name: s\ngrid: {M: [64]}\n", "workload: missing"},
		{"nothing varies", "name: s\n" + wl, "grid: missing"},
		{"unknown axis", "name: s\n" + wl + "grid:\n  Q: [1]\n", "s.yaml:4:3: grid.Q: Q is not an axis of the workload (its axes: K, M, N)"},
		{"bad size", "name: s\n" + wl + "grid:\n  M: [64, -1]\n", "s.yaml:4:11: grid.M[1]: want an axis size"},
		{"bad pow2", "name: s\n" + wl + "grid:\n  M: {pow2: [3, 64]}\n", "s.yaml:4:13: grid.M.pow2: lo and hi must be powers of two"},
		{"bad range", "name: s\n" + wl + "grid:\n  M: {range: [64, 32, 1]}\n", "grid.M.range: lo 64 is above hi 32"},
		{"bad form", "name: s\n" + wl + "grid:\n  M: {steps: [1]}\n", "want a list of values, pow2"},
		{"bad dtype", "name: s\n" + wl + "grid:\n  dtype: [bf16, q7]\n", "s.yaml:4:17: grid.dtype[1]"},
		{"bad option", "name: s\n" + wl + "grid: {M: [64]}\noptions: {timeout: soon}\n", "s.yaml:4:20: options.timeout: want a duration"},
		{"unknown option", "name: s\n" + wl + "grid: {M: [64]}\noptions: {speed: 3}\n", "options.speed: unknown option"},
		{"bad target", "name: s\n" + wl + "grid:\n  target: [manual, cuda]\n", "grid.target[1]: want one of manual"},
		{"bad digit orders", "name: s\n" + wl + "grid: {M: [64]}\noptions: {digit_orders: some}\n", "s.yaml:4:25: options.digit_orders: want all or named, got \"some\""},
		{"unknown param", "name: s\n" + wl + "grid:\n  size: [1]\n", "grid.size: unknown parameter"},
		{"hw field", "name: s\n" + wl + "grid:\n  hw.dm.size: [1]\n", "s.yaml:4:16: point hw.dm.size=1: hw.dm.size: the hardware spec has no field \"size\" under dm"},
		{"hw group", "name: s\n" + wl + "grid:\n  hw.dm: [1]\n", "a group of fields"},
		{"hw invalid", "name: s\n" + wl + "grid:\n  hw.dm.bytes_per_slice: [1024]\n", "s.yaml:4:3: point hw.dm.bytes_per_slice=1024: the hardware spec with these overrides is invalid: chip.sram_bytes"},
		{"both", "name: s\n" + wl + "workloads: []\ngrid: {M: [64]}\n", "workload or workloads, not both"},
		{"file missing", "name: s\nworkload: {file: nothere.yaml}\ngrid: {M: [64]}\n", "s.yaml:2:18: workload.file: open"},
		{"file invalid", "name: s\nworkload: {file: bad.yaml}\ngrid: {M: [64]}\n", "bad.yaml:1:1"},
		{"inline invalid", "name: s\nworkload: {einsum: \"MK,KN->MN\", axes: {M: 64, N: 64}, dtype: bf16}\ngrid: {M: [64]}\n", "s.yaml:2:11: workload.einsum"},
		{"shape invalid", "name: s\n" + wl + "grid:\n  M: [64]\nexclude: 3\n", "exclude: want a list"},
		{"both places", "name: s\n" + wl + "grid:\n  M: [64]\npoints:\n  - {M: 128}\n", "grid.M: M is set by points"},
		{"alias", "name: s\n" + wl + "grid:\n  M: &a [64]\n  K: *a\n", "aliases are not supported"},
		{"repeat", "name: s\n" + wl + "grid:\n  M: [64]\n  M: [128]\n", "s.yaml:5:3: grid.M: repeated key"},
		{"dtype graph", "name: s\nworkload: {file: " + moe + ", op: router}\ngrid:\n  dtype: [i8]\n", "dtype varies an einsum workload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), filepath.Join(dir, "s.yaml"), engines.Default())
			require.Error(t, err)
			assert.Contains(t, strings.ReplaceAll(err.Error(), dir+"/", ""), tc.want)
		})
	}
}

// FuzzParseSweep: no input makes the parser panic, and every error names
// the file.
func FuzzParseSweep(f *testing.F) {
	for _, s := range []string{gemmSweep, "", "name: x\n", "name: s\nworkload: {einsum: \"A,A->\", axes: {A: 8}, dtype: i8}\ngrid: {A: {pow2: [1, 64]}}\n",
		"name: s\nworkload: {einsum: \"MK,KN->MN\", axes: {M: 64, N: 64, K: 64}, dtype: bf16}\npoints:\n  - {hw.dm.misaligned_write_factor: 4, timeout: 1s}\nexclude: [{M: 64}]\n"} {
		f.Add([]byte(s))
	}
	spec := engines.Default()
	maxSweepPoints = 500
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		sw, err := Parse(data, "fuzz.yaml", spec)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, p := range sw.Points {
			if p.Problem == nil || p.Spec == nil {
				t.Fatalf("point %d incomplete", p.Index)
			}
		}
	})
}

// TestDocsSweepExample: the sweep file docs/sweeps.md shows is valid.
func TestDocsSweepExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/sweeps.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	require.True(t, ok)
	src, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	sw, err := Parse([]byte(src), "../../docs/sweeps.md", engines.Default())
	require.NoError(t, err)
	assert.Len(t, sw.Points, 288)
}
