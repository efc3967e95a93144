package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit"
	"tcpmap/emit/rustread"
)

func TestEmitRust(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "emit", "../../workloads/kernels/hello-gemv.json", "--lang", "rust", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	path := filepath.Join(dir, "hello-gemv.rs")
	assert.Equal(t, path+"\n", out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "// tcpmap:version "+Version+"\n")
	assert.Contains(t, string(b), "#[device(chip = 1)]")

	// The emitted kernel reads back, and emits to the same JSON as the
	// program it came from.
	code, out, errOut = runCLI(t, "emit", path, "--lang", "json", "--out", dir, "--json")
	require.Equal(t, exitOK, code, errOut)
	var res struct {
		Files []struct {
			Path  string `json:"path"`
			Lang  string `json:"lang"`
			Bytes int    `json:"bytes"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Files, 1)
	assert.Equal(t, filepath.Join(dir, "hello-gemv.json"), res.Files[0].Path)
	assert.Equal(t, "json", res.Files[0].Lang)
	got, err := os.ReadFile(res.Files[0].Path)
	require.NoError(t, err)
	assert.Len(t, got, res.Files[0].Bytes)
	p, err := rustread.ReadFile("../../workloads/kernels/hello-gemv.json")
	require.NoError(t, err)
	want, err := emit.JSON(p)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestEmitErrors(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "emit", "../../workloads/kernels/hello-dot.json", "--lang", "cobol", "--out", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--lang")

	code, _, errOut = runCLI(t, "emit", "--out", dir)
	assert.Equal(t, exitUsage, code, errOut)

	bad := filepath.Join(dir, "bad.rs")
	require.NoError(t, os.WriteFile(bad, []byte("axes![A = 8];\nfn x( {\n"), 0o644))
	code, _, errOut = runCLI(t, "emit", bad, "--out", dir)
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.HasPrefix(errOut, "tcpmap: "+bad+":"), errOut)

	// A kernel whose live DM tensors overlap is refused.
	src, err := os.ReadFile("../../workloads/kernels/hello-dot.json")
	require.NoError(t, err)
	overlap := filepath.Join(dir, "overlap.json")
	require.NoError(t, os.WriteFile(overlap, []byte(strings.Replace(string(src), `"addr": 4096`, `"addr": 2048`, 1)), 0o644))
	code, _, errOut = runCLI(t, "emit", overlap, "--out", dir)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "overlap.json:8: tensors[4].addr: SCH-R7 memory: dm tensors")
}

// TestEmitPlan: a plan emits its kernel as Rust with the plan's predicted
// cost in the header, and as JSON the plan itself, byte for byte.
func TestEmitPlan(t *testing.T) {
	const path = "../../results/plans/gemv.plan.json"
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "emit", path, "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	rs, err := os.ReadFile(strings.TrimSpace(out))
	require.NoError(t, err)
	assert.Contains(t, string(rs), "// tcpmap:cost ")
	assert.Contains(t, string(rs), " cycles (")

	code, out, errOut = runCLI(t, "emit", path, "--lang", "json", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	got, err := os.ReadFile(strings.TrimSpace(out))
	require.NoError(t, err)
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// TestEmitAPI: --api picks the library the Rust file is written against;
// the file reads back (its crate tells the API) as the same program; an
// unknown API is a usage error.
func TestEmitAPI(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "emit", "../../workloads/kernels/hello-gemm.json", "--api", "opt-0.6", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	path := strings.TrimSpace(out)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "extern crate furiosa_opt_std;")
	assert.Contains(t, string(b), "// tcpmap:place b_dm 1 << 16")
	code, _, errOut = runCLI(t, "emit", path, "--lang", "json", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	got, err := os.ReadFile(filepath.Join(dir, "hello-gemm.json"))
	require.NoError(t, err)
	p, err := rustread.ReadFile("../../workloads/kernels/hello-gemm.json")
	require.NoError(t, err)
	want, err := emit.JSON(p)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))

	code, _, errOut = runCLI(t, "emit", "../../workloads/kernels/hello-gemm.json", "--api", "opt-0.5", "--out", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--api: unknown API "opt-0.5" (want visa-0.1 or opt-0.6)`)
}
