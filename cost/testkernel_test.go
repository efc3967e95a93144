package cost

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// loadGolden reads and lowers a golden kernel of workloads/kernels.
func loadGolden(t testing.TB, name string) *kernel.Program {
	t.Helper()
	b, err := os.ReadFile("../workloads/kernels/" + name + ".json")
	require.NoError(t, err)
	var p kernel.Program
	require.NoError(t, json.Unmarshal(b, &p))
	require.NoError(t, engines.Lower(engines.Default(), &p))
	return &p
}

// The tensors of the synthetic test kernels: bf16 vectors of A = 2048 on one
// slice (as Hello Dot's, 002 L306-380), in HBM and in DM.
const testTensors = `
    {"name": "x", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 0},
    {"name": "y", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 268435456},
    {"name": "w", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 402653184},
    {"name": "out", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "A", "addr": 536870912},
    {"name": "x_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 0},
    {"name": "y_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": %d},
    {"name": "w_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 16384},
    {"name": "z_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 32768},
    {"name": "v_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 49152},
    {"name": "t_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A %% 64, A / 64", "addr": 65536}`

// Ops of the synthetic kernels.
func dmaOp(kind, src, dst string) string {
	return fmt.Sprintf(`{"context": "dma", "kind": %q, "src": %q, "dst": %q}`, kind, src, dst)
}

// copyChain is a DM-to-DM copy through the Tensor Unit: fetch, collect into
// 32-byte flits, commit (002 L2145-2353); in the sub context the commit
// follows the fetch directly (002 L2337-2338), a 32-byte packet per step.
func copyChain(ctx, src, dst string) string {
	if ctx == "sub" {
		return fmt.Sprintf(`{"context": "sub", "kind": "chain", "stages": [
      {"kind": "begin", "tensor": %q},
      {"kind": "fetch", "dtype": "bf16", "time": "A / 16", "packet": "A %% 16"},
      {"kind": "commit", "tensor": %q}]}`, src, dst)
	}
	return fmt.Sprintf(`{"context": %q, "kind": "chain", "stages": [
      {"kind": "begin", "tensor": %q},
      {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "A"},
      {"kind": "collect", "time": "A / 16", "packet": "A %% 16"},
      {"kind": "commit", "tensor": %q}]}`, ctx, src, dst)
}

// starveChain fetches src one element at a time with a 128-byte stride:
// every access falls in the same DM bank (002 L2874-2879), 128 in a row.
func starveChain(ctx, src, dst string) string {
	return fmt.Sprintf(`{"context": %q, "kind": "chain", "stages": [
      {"kind": "begin", "tensor": %q},
      {"kind": "fetch", "dtype": "bf16", "time": "A %% 64", "packet": "A / 64"},
      {"kind": "collect", "time": "A %% 64, A / 64 / 16", "packet": "A / 64 %% 16"},
      {"kind": "commit", "tensor": %q}]}`, ctx, src, dst)
}

// testKernel builds and lowers a synthetic kernel from ops; yAddr places
// y_dm.
func testKernel(t testing.TB, yAddr int, ops ...string) *kernel.Program {
	t.Helper()
	src := fmt.Sprintf(`{"name": "test", "axes": "A=2048", "chips": 1, "tensors": [%s], "ops": [%s]}`,
		fmt.Sprintf(testTensors, yAddr), strings.Join(ops, ",\n"))
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(src), &p), src)
	require.NoError(t, engines.Lower(engines.Default(), &p))
	return &p
}

func evaluate(t testing.TB, p *kernel.Program) *Report {
	t.Helper()
	r, err := Estimate(engines.Default(), p)
	require.NoError(t, err)
	return r
}
