package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerifyCmd(t *testing.T) {
	code, out, errs := runCLI(t, "verify", "../../workloads/kernels/hello-dot.json")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "PASS hello-dot (seed 1, slices all)\n"), out)
	assert.Contains(t, out, "out (bf16, 1 elements): pass; max abs error ")
	assert.Contains(t, out, "compared 1 of 1 output elements; 2048 MACs simulated")

	code, out, errs = runCLI(t, "verify", "../../workloads/kernels/hello-gemv.json", "--seed", "7", "--slices", "sample:3", "--json")
	require.Equal(t, exitOK, code, errs)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Equal(t, true, v["pass"])
	assert.EqualValues(t, 7, v["seed"])
	assert.Equal(t, "sample:3", v["slices"])
	assert.EqualValues(t, 3, v["compared"])
	assert.Len(t, v["simulated_slices"], 3)

	// The same seed gives the same output.
	_, again, _ := runCLI(t, "verify", "../../workloads/kernels/hello-gemv.json", "--seed", "7", "--slices", "sample:3", "--json")
	assert.Equal(t, out, again)
}

// TestVerifyCmdFail: a kernel with a wrong configuration prints FAIL with
// the first mismatching element and exits 1.
func TestVerifyCmdFail(t *testing.T) {
	data, err := os.ReadFile("../../workloads/kernels/hello-gemv.json")
	require.NoError(t, err)
	// The main fetch reads every other element (stride 2 instead of 1).
	wrong := strings.Replace(string(data), `{"kind": "fetch", "dtype": "bf16", "time": "J / 32", "packet": "J % 32"},`,
		`{"kind": "fetch", "dtype": "bf16", "time": "J / 32", "packet": "J % 32", "config": {"fetch": {"context": "main", "in_dtype": "bf16", "out_dtype": "bf16",
         "sequencer": {"entries": [{"size": 64, "stride": 32}, {"size": 32, "stride": 2}], "packet_size": 32, "packet_entries": 1},
         "steps": 64, "packet_elems": 32, "packet_bytes": 64, "contiguous_run": 1, "contiguous_sram_access_size": 2, "fetch_size": 2, "fetch_elems": 1,
         "fetches_per_packet": 32, "adapter": {"fetches_per_packet": 32}}}},`, 1)
	require.NotEqual(t, string(data), wrong)
	path := filepath.Join(t.TempDir(), "wrong.json")
	require.NoError(t, os.WriteFile(path, []byte(wrong), 0o644))
	code, out, _ := runCLI(t, "verify", path)
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.HasPrefix(out, "FAIL hello-gemv"), out)
	assert.Contains(t, out, "elements outside the bound; first {I: ")

	code, out, _ = runCLI(t, "verify", path, "--json")
	assert.Equal(t, exitFail, code)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Equal(t, false, v["pass"])
	assert.NotNil(t, v["first_mismatch"])
}

func TestVerifyCmdErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		return p
	}
	data, err := os.ReadFile("../../workloads/kernels/hello-dot.json")
	require.NoError(t, err)
	src := string(data)
	for _, tc := range []struct {
		name, src, want string
	}{
		{"syntax.json", "{\n  \"name\": \"x\",\n  \"axes\": ,\n}", "syntax.json:3:11: invalid character ','"},
		{"dtype.json", strings.Replace(src, `"dtype": "bf16", "role": "output"`, `"dtype": "bf17", "role": "output"`, 1), "dtype.json:6: tensors[2].dtype: "},
		{"field.json", strings.Replace(src, `"chips": 1,`, `"chips": 1, "chipz": 2,`, 1), `field.json:2: json: unknown field "chipz"`},
		{"lower.json", strings.Replace(src, `"time": "A / 32", "packet": "A % 32"`, `"time": "A / 16", "packet": "A % 16"`, 1),
			"lower.json:24: ops[3].stages[3] (align): aligner: "},
		{"overlap.json", strings.Replace(src, `"element": "A", "addr": 4096`, `"element": "A", "addr": 2048`, 1),
			`overlap.json:8: tensors[4].addr: SCH-R7 memory: dm tensors "lhs_dm" (bytes 0..4096, live ops 0..3) and "rhs_dm" (bytes 2048..6144, live ops 1..2) overlap (002 L154-155, L7056)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "verify", write(tc.name, tc.src))
			assert.Equal(t, exitFail, code)
			assert.Contains(t, errs, "tcpmap: "+filepath.Join(dir, tc.want))
		})
	}
	code, _, errs := runCLI(t, "verify", filepath.Join(dir, "missing.json"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "missing.json")

	code, _, errs = runCLI(t, "verify", "../../workloads/kernels/hello-dot.json", "--slices", "some")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "--slices: ")
	code, _, _ = runCLI(t, "verify")
	assert.Equal(t, exitUsage, code)

	// --hw: a spec file is honoured (an unreadable one is an error).
	code, _, errs = runCLI(t, "verify", "../../workloads/kernels/hello-dot.json", "--hw", filepath.Join(dir, "nohw.yaml"))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errs, "nohw.yaml")
	code, _, errs = runCLI(t, "verify", "../../workloads/kernels/hello-dot.json", "--hw", "../../engines/rngd.yaml")
	assert.Equal(t, exitOK, code, errs)
}

// TestVerifyRustKernel: a kernel emitted as Rust verifies like its JSON
// form (read back through rustread.ReadFile).
func TestVerifyRustKernel(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, "emit", "../../workloads/kernels/hello-gemv.json", "--lang", "rust", "--out", dir)
	require.Equal(t, exitOK, code, errs)
	code, out, errs := runCLI(t, "verify", filepath.Join(dir, "hello-gemv.rs"))
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "PASS hello-gemv "), out)
}

// TestVerifyPlan: a stored plan verifies through its kernel program.
func TestVerifyPlan(t *testing.T) {
	code, out, errs := runCLI(t, "verify", "../../results/plans/gemv.plan.json")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "PASS gemv "), out)
}
