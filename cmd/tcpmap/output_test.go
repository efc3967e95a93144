package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/internal/atomicfile"
)

// onFullDisk makes every output file write fail half way with "no space
// left on device", through the real atomic writer.
func onFullDisk(t *testing.T) {
	t.Helper()
	old := writeFile
	t.Cleanup(func() { writeFile = old })
	writeFile = func(path string, data []byte, perm os.FileMode) error {
		return atomicfile.Write(path, perm, func(w io.Writer) error {
			if _, err := w.Write(data[:len(data)/2]); err != nil {
				return err
			}
			return &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		})
	}
}

// TestWritersKeepOldFile: each of the four writers, failing on a full
// disk, exits 1 with the error and leaves the file it was replacing whole
// (and no temporary file beside it).
func TestWritersKeepOldFile(t *testing.T) {
	const old = "old content, still valid\n"
	for _, tc := range []struct {
		name string
		file string // the output file, relative to the test's folder
		args func(dir string) []string
	}{
		{"plan --out", "dot.plan.json", func(dir string) []string {
			return []string{"plan", "../../workloads/dot.yaml", "--out", filepath.Join(dir, "dot.plan.json")}
		}},
		{"emit --out", "hello-dot.rs", func(dir string) []string {
			return []string{"emit", goldenDot, "--out", dir}
		}},
		{"cost --trace", "dot.trace.json", func(dir string) []string {
			return []string{"cost", goldenDot, "--trace", filepath.Join(dir, "dot.trace.json")}
		}},
		{"regress --update", "baseline.json", func(dir string) []string {
			kernels, _ := regressDir(t)
			return []string{"regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", filepath.Join(dir, "baseline.json"), "--update"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tc.file)
			require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
			onFullDisk(t)
			code, _, errOut := runCLI(t, tc.args(dir)...)
			assert.Equal(t, exitFail, code)
			assert.Contains(t, errOut, "no space left on device")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, old, string(got), "the old file survives")
			es, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, es, 1, "no temporary file is left")
		})
	}
}

// TestOutputsCheckedFirst: a bad output path or a missing input is an
// error before any search or pricing (no search statistics printed, no
// kernel priced).
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o644))
	// A kernels folder holding a kernel that does not parse: pricing it
	// would fail with its name.
	kernels, baseline := regressDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(kernels, "broken.json"), []byte("{"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"plan --out in a missing folder", []string{"plan", "../../workloads/gemm.yaml", "--out", "/nonexistent/x.plan.json"}, "--out: /nonexistent/x.plan.json: cannot write"},
		{"plan --out a folder", []string{"plan", "../../workloads/gemm.yaml", "--out", dir}, "is a directory"},
		{"cost --trace in a missing folder", []string{"cost", goldenDot, "--trace", "/nonexistent/t.json"}, "--trace: /nonexistent/t.json: cannot write"},
		{"emit --out a file", []string{"emit", goldenDot, "--out", notDir}, "--out " + notDir + ": not a directory"},
		{"emit --out under a file", []string{"emit", goldenDot, "--out", filepath.Join(notDir, "sub")}, "not a directory"},
		{"regress --baseline missing", []string{"regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", filepath.Join(dir, "none.json")}, "none.json"},
		{"regress --update into a missing folder", []string{"regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", "/nonexistent/b.json", "--update"}, "--baseline: /nonexistent/b.json: cannot write"},
		{"regress --kernels missing", []string{"regress", "--kernels", "/nonexistent", "--plans", plansOf(kernels), "--baseline", baseline}, "--kernels: stat /nonexistent: no such file or directory"},
		{"regress --kernels a file", []string{"regress", "--kernels", notDir, "--plans", plansOf(kernels), "--baseline", baseline}, "--kernels " + notDir + ": not a directory"},
		{"regress --plans missing", []string{"regress", "--kernels", kernels, "--plans", "/nonexistent", "--baseline", baseline}, "--plans: stat /nonexistent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			assert.Equal(t, exitFail, code, errOut)
			assert.Empty(t, out, "nothing was searched or priced")
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "broken.json")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
		})
	}
}
