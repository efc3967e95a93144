package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHWRefused: a command that does not read the hardware spec refuses
// --hw (a usage error) rather than ignore it, whether the file exists or
// not.
func TestHWRefused(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	for _, args := range [][]string{
		{"map", "eval", "--axes", "A=8", "m![A]", "3"},
		{"map", "norm", "--axes", "A=8", "m![A]"},
		{"map", "equiv", "--axes", "A=8", "m![A]", "m![A]"},
		{"workload", "check", "../../workloads/dot.yaml"},
		{"version"},
		{"hw", "check", rngdPath},
		{"results", "list"},
		{"results", "merge", "a.db", "--out", "b.db"},
	} {
		for _, hw := range []string{rngdPath, missing} {
			code, out, errOut := runCLI(t, append(args, "--hw", hw)...)
			assert.Equal(t, exitUsage, code, "%v", args)
			assert.Empty(t, out, "%v", args)
			assert.Contains(t, errOut, "--hw: tcpmap "+strings.Join(args[:min(2, len(args))], " "), "%v", args)
			assert.Contains(t, errOut, "does not read the hardware spec", "%v", args)
		}
	}
}

// TestHWHonoured: every command that reads the hardware spec takes --hw: a
// missing file is an error before any work, and the spec given is the one
// the command checks against (emit refuses a VRF address the smaller VRF
// does not have).
func TestHWHonoured(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	kernels, baseline := regressDir(t)
	for _, args := range [][]string{
		{"plan", "../../workloads/gemm.yaml"},
		{"explain", "../../workloads/gemm.yaml"},
		{"cost", goldenDot},
		{"verify", goldenDot},
		{"emit", goldenDot, "--out", dir},
		{"regress", "--kernels", kernels, "--plans", plansOf(kernels), "--baseline", baseline, "--update"},
		{"hw", "show"},
		{"sweep", "../../workloads/sweeps/hw-dm-size.yaml", "--db", filepath.Join(dir, "s.db")},
		{"derive", "commit", "--dtype", "i8", "--axes", "M=4,K=2,W=8", "--buf", "m![K, M, W # 16]", "--time", "m![K]", "--packet", "m![M, W]"},
	} {
		code, out, errOut := runCLI(t, append(args, "--hw", missing)...)
		assert.Equal(t, exitFail, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Contains(t, errOut, "missing.yaml", "%v", args)
	}

	small := writeSpecFile(t, `bytes_per_slice: {value: 8192,`, `bytes_per_slice: {value: 4096,`)
	src := strings.Replace(string(mustRead(t, "../../workloads/kernels/hello-mul.json")),
		`"element": "A % 8", "addr": 0},
    {"name": "result"`, `"element": "A % 8", "addr": 4096},
    {"name": "result"`, 1)
	mul := filepath.Join(dir, "mul.json")
	require.NoError(t, os.WriteFile(mul, []byte(src), 0o644))
	require.NotEqual(t, string(mustRead(t, "../../workloads/kernels/hello-mul.json")), src)
	code, _, errOut := runCLI(t, "emit", mul, "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	for _, args := range [][]string{{"emit", mul, "--out", dir}, {"cost", mul}, {"verify", mul}} {
		code, _, errOut = runCLI(t, append(args, "--hw", small)...)
		assert.Equal(t, exitFail, code, args[0])
		assert.Contains(t, errOut, `addr: MEM-C3 memory: vrf tensor "rhs_vrf" at address 4096, beyond the 4096 bytes available`, args[0])
	}
}
