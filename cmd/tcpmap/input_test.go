package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goldenGEMV = "../../workloads/kernels/hello-gemv.json"
const storedGEMVPlan = "../../results/plans/gemv.plan.json"

// editJSON applies edit to the JSON file at path, decoded as maps and
// slices, and returns it indented.
func editJSON(t *testing.T, path string, edit func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, path), &doc))
	edit(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	return out
}

// tensorOf returns the named tensor of a program decoded by editJSON.
func tensorOf(prog map[string]any, name string) map[string]any {
	for _, x := range prog["tensors"].([]any) {
		if t := x.(map[string]any); t["name"] == name {
			return t
		}
	}
	return nil
}

// TestOneValidator: cost, verify, emit and regress refuse the same invalid
// kernels and plans with the same error, located at the field (file:line),
// and exit 1; none prices, runs or prints it.
func TestOneValidator(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan bool // a plan rather than a kernel
		data func(t *testing.T) []byte
		want string // a regular expression for the error after the file name
	}{
		{"buffer read before written", false, func(t *testing.T) []byte {
			return editJSON(t, goldenGEMV, func(k map[string]any) {
				ops := k["ops"].([]any)
				k["ops"] = append(ops[1:4:4], ops[0], ops[4]) // the matrix's DMA after the chain reading it
			})
		}, `:\d+: ops\[2\]\.stages\[0\]\.tensor: reads DM tensor "matrix_dm" before ops\[3\] writes it`},
		{"TRF tensor at address 1e9", false, func(t *testing.T) []byte {
			return editJSON(t, goldenGEMV, func(k map[string]any) { tensorOf(k, "vector_trf")["addr"] = 1e9 })
		}, `:\d+: tensors\[5\]\.addr: MEM-A1 memory: TRF tensor "vector_trf" has byte address 1000000000`},
		{"HBM address 2^62", false, func(t *testing.T) []byte {
			return editJSON(t, goldenGEMV, func(k map[string]any) { tensorOf(k, "out")["addr"] = 1 << 62 })
		}, `:\d+: tensors\[2\]\.addr: MEM-C4 memory: hbm tensor "out" at address 4611686018427387904, beyond the 51539607552 bytes available \(002 L137, L2949\)`},
		{"plan with negative cycles", true, func(t *testing.T) []byte {
			return editJSON(t, storedGEMVPlan, func(p map[string]any) { p["cost"].(map[string]any)["cycles"] = -5 })
		}, `:\d+: cost\.cycles: -5 is negative`},
		{"plan whose workload contradicts the program", true, func(t *testing.T) []byte {
			return editJSON(t, storedGEMVPlan, func(p map[string]any) { p["workload"].(map[string]any)["axes"] = "I=256, J=4096" })
		}, `:\d+: workload\.axes: "I=256, J=4096", but the program's axes are "I=256, J=2048"`},
		{"plan whose mapping contradicts the program", true, func(t *testing.T) []byte {
			return editJSON(t, storedGEMVPlan, func(p map[string]any) { p["mapping"].(map[string]any)["stationary"] = "out" })
		}, `:\d+: mapping\.stationary: "out": want one of the program's inputs`},
		{"plan whose program has a TRF tensor at 1e9", true, func(t *testing.T) []byte {
			return editJSON(t, storedGEMVPlan, func(p map[string]any) {
				tensorOf(p["program"].(map[string]any), "in0_trf")["addr"] = 1e9
			})
		}, `:\d+: program: tensors\[5\]\.addr: MEM-A1 memory: TRF tensor "in0_trf"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			kernels, plans := filepath.Join(dir, "kernels"), filepath.Join(dir, "plans")
			require.NoError(t, os.Mkdir(kernels, 0o755))
			require.NoError(t, os.Mkdir(plans, 0o755))
			file := filepath.Join(kernels, "bad.json")
			if tc.plan {
				file = filepath.Join(plans, "bad.plan.json")
			}
			require.NoError(t, os.WriteFile(file, tc.data(t), 0o644))
			want := regexp.MustCompile("^tcpmap: " + regexp.QuoteMeta(file) + tc.want)
			out := filepath.Join(dir, "out")
			for _, args := range [][]string{
				{"cost", file},
				{"verify", file},
				{"emit", file, "--out", out},
				{"emit", file, "--out", out, "--lang", "json"},
				{"regress", "--kernels", kernels, "--plans", plans, "--baseline", filepath.Join(dir, "b.json"), "--update"},
			} {
				code, stdout, errOut := runCLI(t, args...)
				assert.Equal(t, exitFail, code, "%v", args)
				assert.Empty(t, stdout, "%v", args)
				assert.Regexp(t, want, errOut, "%v", args)
			}
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "emit wrote nothing")
		})
	}
}

// gzipped compresses data.
func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestInputByContent: cost, verify and emit tell a plan from a kernel, JSON
// from Rust and gzip from plain text by the content, whatever the file's
// name.
func TestInputByContent(t *testing.T) {
	dir := t.TempDir()
	// A plan written under a plain .json name (issue: "unknown field
	// version").
	planFile := filepath.Join(dir, "g.json")
	code, _, errOut := runCLI(t, "plan", "../../workloads/dot.yaml", "--out", planFile)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := runCLI(t, "verify", planFile)
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "PASS dot "), out)
	code, out, errOut = runCLI(t, "emit", planFile, "--lang", "json", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, filepath.Join(dir, "dot.plan.json")+"\n", out, "emitted as the plan it is")
	assert.Equal(t, mustRead(t, planFile), mustRead(t, filepath.Join(dir, "dot.plan.json")))

	// A Rust kernel emitted, then renamed.
	code, _, errOut = runCLI(t, "emit", goldenDot, "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	rust := filepath.Join(dir, "kernel.txt")
	require.NoError(t, os.Rename(filepath.Join(dir, "hello-dot.rs"), rust))

	files := map[string][]byte{
		"kernel named as a plan.plan.json": mustRead(t, goldenDot),
		"gzipped kernel.json":              gzipped(t, mustRead(t, goldenDot)),
		"gzipped plan.rs":                  gzipped(t, mustRead(t, "../../results/plans/dot.plan.json")),
		"kernel.txt":                       mustRead(t, rust),
	}
	_, want, errOut := runCLI(t, "cost", "--json", goldenDot)
	require.NotEmpty(t, want, errOut)
	for name, data := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		for _, cmd := range []string{"cost", "verify"} {
			code, _, errOut := runCLI(t, cmd, path)
			assert.Equal(t, exitOK, code, "%s %s: %s", cmd, name, errOut)
		}
		if !strings.Contains(name, "plan") {
			_, got, _ := runCLI(t, "cost", "--json", path)
			assert.JSONEq(t, want, got, name)
		}
	}

	for _, tc := range []struct{ name, data, want string }{
		{"empty.json", " \n", "empty file: want a kernel program (JSON or Rust) or a plan"},
		{"array.json", "[1, 2]", "array.json:1: json: cannot unmarshal array"},
		{"broken.plan.json", "{\n \"version\": 1,\n \"program\": {\"name\": 5}\n}\n", "broken.plan.json:3: program: json: cannot unmarshal number"},
		{"text.json", "hello\n", "text.json:1:1: "},
		{"bad.gz", "\x1f\x8bnot gzip", "bad.gz: gzip: invalid header"},
	} {
		path := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(path, []byte(tc.data), 0o644))
		code, _, errOut := runCLI(t, "cost", path)
		assert.Equal(t, exitFail, code, tc.name)
		assert.Contains(t, errOut, "tcpmap: "+path, tc.name)
		assert.Contains(t, errOut, tc.want, tc.name)
	}
}
