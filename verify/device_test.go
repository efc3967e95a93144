package verify

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// loadKernelT reads a kernel program file.
func loadKernelT(t testing.TB, path string) *kernel.Program {
	t.Helper()
	p, _, err := LoadKernel(path)
	require.NoError(t, err)
	return p
}

// kernelFromT parses a kernel program file after applying string
// replacements (old, new pairs), each of which must apply.
func kernelFromT(t testing.TB, path string, repl ...string) *kernel.Program {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	src := string(data)
	for i := 0; i+1 < len(repl); i += 2 {
		require.Contains(t, src, repl[i])
		src = strings.Replace(src, repl[i], repl[i+1], 1)
	}
	p, _, err := ParseKernel(path, []byte(src))
	require.NoError(t, err)
	return p
}

const gib = int64(1) << 30

// TestDeviceMemory: the memories have the manual's sizes — HBM 48 GB per
// chip (002 L137), DM 512 KB per slice (002 L138), VRF 8 KB per slice
// (002 L140) — and cost only what is written.
func TestDeviceMemory(t *testing.T) {
	d, err := NewDevice(engines.Default(), 2)
	require.NoError(t, err)
	assert.Zero(t, d.Allocated())
	assert.Equal(t, 2*2*256, d.TotalSlices(), "2 clusters of 256 slices per chip (002 L130-131)")

	// HBM: the last bytes of 48 GB exist, the byte after does not.
	last := 48*gib - 8
	require.NoError(t, d.WriteHBM(1, last, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	got := make([]byte, 8)
	require.NoError(t, d.ReadHBM(1, last, got))
	assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, got)
	assert.Error(t, d.WriteHBM(1, last, make([]byte, 9)))
	assert.Error(t, d.ReadHBM(0, -1, got))
	assert.Error(t, d.ReadHBM(2, 0, got), "a third chip")
	// One page is allocated; reading elsewhere gives zeros without
	// allocating.
	n := d.Allocated()
	assert.Equal(t, int64(1)<<hbmPageBits, n)
	require.NoError(t, d.ReadHBM(0, 7*gib, got))
	assert.Equal(t, make([]byte, 8), got)
	assert.Equal(t, n, d.Allocated())

	// A write across a page boundary reads back whole.
	span := bytes.Repeat([]byte{0xab}, 3<<dmPageBits)
	g, ok := d.SliceIndex(1, 1, 255)
	require.True(t, ok)
	assert.Equal(t, d.TotalSlices()-1, g)
	require.NoError(t, d.WriteDM(g, 100, span))
	back := make([]byte, len(span))
	require.NoError(t, d.ReadDM(g, 100, back))
	assert.Equal(t, span, back)
	assert.Equal(t, "chip 1 cluster 1 slice 255", d.SliceName(g))

	// DM is 512 KB, VRF 8 KB.
	require.NoError(t, d.WriteDM(0, 512<<10-1, []byte{1}))
	assert.Error(t, d.WriteDM(0, 512<<10, []byte{1}))
	require.NoError(t, d.WriteVRF(0, 8<<10-1, []byte{1}))
	assert.Error(t, d.WriteVRF(0, 8<<10, []byte{1}))
	assert.Error(t, d.ReadDM(d.TotalSlices(), 0, got))
	_, ok = d.SliceIndex(0, 2, 0)
	assert.False(t, ok)

	// A whole device of DM written once per slice costs a page per slice.
	before := d.Allocated()
	for g := 0; g < d.TotalSlices(); g++ {
		require.NoError(t, d.WriteDM(g, 0, []byte{1}))
	}
	assert.LessOrEqual(t, d.Allocated()-before, int64(d.TotalSlices())<<dmPageBits)

	trf, err := d.TRF(3)
	require.NoError(t, err)
	again, err := d.TRF(3)
	require.NoError(t, err)
	assert.Same(t, trf, again)
	_, err = d.TRF(-1)
	assert.Error(t, err)

	_, err = NewDevice(nil, 1)
	assert.Error(t, err)
	_, err = NewDevice(engines.Default(), 0)
	assert.Error(t, err)
}

// TestAllocate: live DM tensors may not share bytes on a slice; tensors
// whose lifetimes do not meet may.
func TestAllocate(t *testing.T) {
	d, err := NewDevice(engines.Default(), 1)
	require.NoError(t, err)
	p := loadKernelT(t, "../workloads/kernels/hello-dot.json")
	as, err := Allocate(d, p)
	require.NoError(t, err)
	byName := map[string]Allocation{}
	for _, a := range as {
		byName[a.Tensor.Name] = a
	}
	// lhs_dm: 2048 bf16 at 0 (002 L340), on the one live slice of
	// `1 # 2`, `1 # 256` (002 L317-318), from its DMA (op 0) to the main
	// chain (op 3).
	lhs := byName["lhs_dm"]
	assert.Equal(t, Extent{0, 4096}, lhs.Extent)
	assert.Equal(t, []int{0}, lhs.Slices)
	assert.Equal(t, Lifetime{0, 3}, lhs.Life)
	assert.Equal(t, Lifetime{1, 2}, byName["rhs_dm"].Life)
	assert.Equal(t, Lifetime{2, 3}, byName["rhs_trf"].Life)
	assert.Equal(t, Lifetime{3, 4}, byName["out_dm"].Life)

	const rhs = `"name": "rhs_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 4096`
	const out = `"element": "1 # 8", "addr": 8192`
	for _, tc := range []struct {
		name     string
		old, new string
		want     string // "" = allowed
	}{
		{"DMA into a live tensor", rhs, strings.Replace(rhs, "4096", "2048", 1),
			`DM tensors "lhs_dm" (bytes 0..4096, ops 0..3) and "rhs_dm" (bytes 2048..6144, ops 1..2) overlap on chip 0 cluster 0 slice 0 while both are live`},
		{"commit into a live tensor", out, `"element": "1 # 8", "addr": 4088`, `"lhs_dm" (bytes 0..4096, ops 0..3) and "out_dm" (bytes 4088..4104, ops 3..4) overlap`},
		{"reuse after the last read", out, `"element": "1 # 8", "addr": 4096`, ""},
		{"beyond DM", out, `"element": "1 # 8", "addr": 524280`, `DM tensor "out_dm" occupies bytes 524280..524296, beyond the 524288 bytes of a slice's DM`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := kernelFromT(t, "../workloads/kernels/hello-dot.json", tc.old, tc.new)
			_, err := Allocate(d, q)
			if tc.want == "" {
				require.NoError(t, err)
				rep, err := Verify(engines.Default(), q, Options{Seed: 3})
				require.NoError(t, err)
				assert.True(t, rep.Pass, "%s", rep)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.name != "beyond DM" { // there the DMA's lowering fails first
				_, err = Verify(engines.Default(), q, Options{Seed: 3})
				assert.ErrorContains(t, err, tc.want, "Verify reports it too")
			}
		})
	}

	// A chain reading a tensor no op writes.
	q := kernelFromT(t, "../workloads/kernels/hello-dot.json",
		`{"context": "dma", "kind": "to_dm", "src": "rhs", "dst": "rhs_dm"},`, ``)
	_, err = Allocate(d, q)
	assert.ErrorContains(t, err, `ops[1].stages[0].tensor: reads DM tensor "rhs_dm", which no op writes`)

	// Two Full TRF tensors live together (002 L4156-4158).
	q = kernelFromT(t, "../workloads/kernels/hello-dot.json",
		`{"name": "out_dm"`, `{"name": "rhs_trf2", "mem": "trf", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "row": "1", "element": "A", "addr": 0, "trf_address": "Full"},
    {"name": "out_dm"`,
		`{"kind": "to_trf", "tensor": "rhs_trf"}]},`, `{"kind": "to_trf", "tensor": "rhs_trf"}]},
    {"context": "sub", "kind": "chain", "stages": [{"kind": "begin", "tensor": "rhs_dm"}, {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "A"},
      {"kind": "collect", "time": "A / 16", "packet": "A % 16"}, {"kind": "to_trf", "tensor": "rhs_trf2"}]},`)
	_, err = Allocate(d, q)
	assert.ErrorContains(t, err, `TRF tensors "rhs_trf" (ops 2..4) and "rhs_trf2" (ops 3..3) are live together`)
	assert.ErrorContains(t, err, "002 L4156-4158")
}
