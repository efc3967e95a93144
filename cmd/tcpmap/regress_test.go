package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regressDir copies two golden kernels into a temporary kernels directory,
// beside an empty plans directory (plansOf).
func regressDir(t *testing.T) (kernels, baseline string) {
	t.Helper()
	dir := t.TempDir()
	kernels = filepath.Join(dir, "kernels")
	require.NoError(t, os.Mkdir(kernels, 0o755))
	require.NoError(t, os.Mkdir(plansOf(kernels), 0o755))
	for _, name := range []string{"hello-dot.json", "hello-gemv.json"} {
		b, err := os.ReadFile(filepath.Join("../../workloads/kernels", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(kernels, name), b, 0o644))
	}
	return kernels, filepath.Join(dir, "baseline.json")
}

func TestRegressUpdateAndPass(t *testing.T) {
	kernels, baseline := regressDir(t)
	code, out, errOut := runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline, "--update")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "wrote")
	var b struct {
		Tolerance float64 `json:"tolerance"`
		Kernels   []struct {
			File       string  `json:"file"`
			Name       string  `json:"name"`
			Cycles     float64 `json:"cycles"`
			Bottleneck string  `json:"bottleneck"`
		} `json:"kernels"`
		Plans []any `json:"plans"`
	}
	data, err := os.ReadFile(baseline)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &b))
	assert.Equal(t, 0.005, b.Tolerance)
	require.Len(t, b.Kernels, 2)
	assert.Equal(t, "hello-dot", b.Kernels[0].Name)
	assert.NotNil(t, b.Plans)

	code, out, errOut = runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "PASS")
}

func TestRegressDrift(t *testing.T) {
	kernels, baseline := regressDir(t)
	code, _, _ := runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline, "--update")
	require.Equal(t, exitOK, code)
	data, err := os.ReadFile(baseline)
	require.NoError(t, err)
	var b map[string]any
	require.NoError(t, json.Unmarshal(data, &b))
	ks := b["kernels"].([]any)
	dot := ks[0].(map[string]any)
	gemv := ks[1].(map[string]any)
	// Within 0.5 %: accepted. Beyond: a drift.
	dot["cycles"] = dot["cycles"].(float64) * 1.004
	gemv["cycles"] = gemv["cycles"].(float64) * 1.01
	write := func() {
		out, err := json.Marshal(b)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(baseline, out, 0o644))
	}
	write()
	code, out, _ := runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, "DRIFT kernels "+filepath.ToSlash(filepath.Join(kernels, "hello-gemv.json")))
	assert.NotContains(t, out, "DRIFT kernels "+filepath.ToSlash(filepath.Join(kernels, "hello-dot.json")))

	// A changed bottleneck, a missing and a new entry.
	gemv["cycles"] = gemv["cycles"].(float64) / 1.01
	dot["bottleneck"] = "main/cast"
	b["kernels"] = append(ks, map[string]any{"file": "gone.json", "name": "gone", "cycles": 1.0, "bottleneck": "dma/dma"})
	write()
	require.NoError(t, os.WriteFile(filepath.Join(kernels, "hello-gemm.json"), mustRead(t, "../../workloads/kernels/hello-gemm.json"), 0o644))
	code, out, _ = runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline, "--json")
	assert.Equal(t, exitFail, code)
	var res struct {
		Pass   bool `json:"pass"`
		Drifts []struct {
			File, Problem string
		} `json:"drifts"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.False(t, res.Pass)
	var problems []string
	for _, d := range res.Drifts {
		problems = append(problems, filepath.Base(d.File)+":"+d.Problem)
	}
	assert.ElementsMatch(t, []string{"gone.json:missing", "hello-dot.json:bottleneck", "hello-gemm.json:new"}, problems)

	// --update makes it pass again.
	code, _, _ = runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline, "--update")
	require.Equal(t, exitOK, code)
	code, _, _ = runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline)
	assert.Equal(t, exitOK, code)
}

func TestRegressBadBaseline(t *testing.T) {
	kernels, baseline := regressDir(t)
	require.NoError(t, os.WriteFile(baseline, []byte("{\n \"tolerance\": 0.005,\n \"kernels\": [1]\n}\n"), 0o644))
	code, _, errOut := runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "baseline.json:3:")
	code, _, errOut = runCLI(t, "regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "none.json")
}

// TestRegressRepoBaseline: the committed baseline matches the model.
func TestRegressRepoBaseline(t *testing.T) {
	if raceEnabled {
		// Re-pricing every stored plan takes minutes under the race
		// detector; `make test` runs `tcpmap regress` itself.
		t.Skip("make test runs tcpmap regress without the race detector")
	}
	t.Chdir("../..")
	code, out, errOut := runCLI(t, "regress")
	if code != exitOK {
		t.Fatalf("results/cost-baseline.json drifted; if deliberate, run `go run ./cmd/tcpmap regress --update`:\n%s%s", out, errOut)
	}
}

// plansOf is the plans directory regressDir makes beside kernels.
func plansOf(kernels string) string { return filepath.Join(filepath.Dir(kernels), "plans") }

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
