package plan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// hello reads the golden Hello dot product kernel (workloads/kernels).
func hello(t *testing.T) *kernel.Program {
	t.Helper()
	data, err := os.ReadFile("../../workloads/kernels/hello-dot.json")
	require.NoError(t, err)
	var p kernel.Program
	require.NoError(t, p.UnmarshalJSON(data))
	return &p
}

func sample(t *testing.T) *Plan {
	return &Plan{Version: Version,
		Workload: Workload{File: "workloads/dot.yaml", Name: "dot", Einsum: "A, A -> 1", Axes: "A=2048"},
		Mapping: Mapping{Stationary: "rhs", Streaming: "lhs", Content: "contracted", Packet: "single", Broadcast: "fetch",
			Accumulate: "Interleaved", Axes: []AxisMapping{{Name: "A", Size: 2048, Class: "contracted", Tile: 1, Chip: 1, Cluster: 1, Slice: 1, Time: 64, Row: 1, Packet: 32}},
			TimeOrder: []string{"A"}, Layouts: []TensorLayout{{Tensor: "lhs", Order: "hbm"}, {Tensor: "rhs", Order: "hbm"}, {Tensor: "out", Order: "hbm"}}},
		Cost:    Cost{Model: "tcpmap/cost", Cycles: 1962, Seconds: 1.962e-6, Bottleneck: "dma/dma", Bound: "memory"},
		Search:  Search{Planner: "exhaustive", Optimal: "exhaustive", MaxTiles: 16, Candidates: 4, Legal: 4, CostEvaluations: 4, Illegal: []RuleCount{{Rule: "DMA-R1", Cite: "002 L2425-2427", Count: 2}}},
		Program: hello(t),
	}
}

func TestRoundTrip(t *testing.T) {
	p := sample(t)
	data, err := p.Marshal()
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(data), "}\n"))
	q, err := Unmarshal(data)
	require.NoError(t, err)
	again, err := q.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again))

	file := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, p.Write(file))
	r, err := Read(file)
	require.NoError(t, err)
	assert.Equal(t, p.Mapping, r.Mapping)
	assert.Equal(t, "hello-dot", r.Program.Name)
}

func TestUnmarshalErrors(t *testing.T) {
	p := sample(t)
	data, err := p.Marshal()
	require.NoError(t, err)
	src := string(data)
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", `"version": 2,`, `"version": 2, "extra": 2,`, "unknown field"},
		{"version", `"version": 2,`, `"version": 7,`, "version: 7, want 1 to 2"},
		{"bad program", `"name": "hello-dot"`, `"name": "hello-dot", "chips": 0, "x": 1`, "program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, src, tc.from)
			_, err := Unmarshal([]byte(strings.Replace(src, tc.from, tc.to, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err = Unmarshal([]byte(`{"version": 1}`))
	assert.ErrorContains(t, err, "program: missing")
	_, err = Unmarshal([]byte(src + src))
	assert.ErrorContains(t, err, "trailing data")
	_, err = Read(filepath.Join(t.TempDir(), "missing.json"))
	assert.Error(t, err)
	_, err = (&Plan{}).Marshal()
	assert.ErrorContains(t, err, "no kernel program")
}

// TestCompressed: a NAME.plan.json.gz is written gzip-compressed, reads
// back the same plan, and the same plan gives the same bytes; Read tells a
// compressed plan by its content; a corrupt one is an error naming the
// file.
func TestCompressed(t *testing.T) {
	p := sample(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "p.plan.json"+Compressed)
	require.NoError(t, p.Write(file))
	first, err := os.ReadFile(file)
	require.NoError(t, err)
	plain, err := p.Marshal()
	require.NoError(t, err)
	assert.Less(t, len(first), len(plain), "compressed")
	r, err := Read(file)
	require.NoError(t, err)
	again, err := r.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(plain), string(again))
	require.NoError(t, p.Write(file))
	second, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, first, second, "deterministic")
	// Compressed, the JSON is compact: Marshal's without the indentation.
	inflated, err := inflate(first)
	require.NoError(t, err)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, plain))
	compact.WriteByte('\n')
	assert.Equal(t, compact.String(), string(inflated))

	// The content decides, not the name: a plain plan named .gz reads,
	// and a compressed one named .json.
	named := filepath.Join(dir, "plain.plan.json"+Compressed)
	require.NoError(t, os.WriteFile(named, plain, 0o644))
	_, err = Read(named)
	require.NoError(t, err)
	renamed := filepath.Join(dir, "compressed.json")
	require.NoError(t, os.WriteFile(renamed, first, 0o644))
	_, err = Read(renamed)
	require.NoError(t, err)

	bad := filepath.Join(dir, "bad.plan.json"+Compressed)
	require.NoError(t, os.WriteFile(bad, append([]byte{0x1f, 0x8b}, plain...), 0o644))
	_, err = Read(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad)
}

// TestInflateHint: the size the gzip trailer states is a hint only: a
// stream of two members (the trailer the second's size) and one whose
// inflated size passes MaxInflated's bound on the hint inflate whole or
// fail as they should.
func TestInflateHint(t *testing.T) {
	a, err := Gzip(bytes.Repeat([]byte("a"), 100_000))
	require.NoError(t, err)
	b, err := Gzip([]byte("b\n"))
	require.NoError(t, err)
	out, err := inflate(append(slices.Clone(a), b...))
	require.NoError(t, err)
	assert.Equal(t, 100_002, len(out))
	assert.Equal(t, "ab\n", string(out[99_999:]))
	// A short stream whose trailer claims 4 GiB: the hint is bounded by
	// the stream's length, and the bytes are checked by gzip itself.
	bad := slices.Clone(b)
	binary.LittleEndian.PutUint32(bad[len(bad)-4:], 0xffffffff)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = inflate(bad)
	runtime.ReadMemStats(&after)
	assert.Error(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "the buffer the lying trailer asked for")
}

// TestUnmarshalLegacyLearned: the count older plan files wrote as
// "learned_clauses" (skeletons with no legal candidate; no clause was
// learned) reads as illegal_skeletons and is written under that name.
func TestUnmarshalLegacyLearned(t *testing.T) {
	data, err := sample(t).Marshal()
	require.NoError(t, err)
	old := strings.Replace(string(data), `"planner": "exhaustive",`, `"planner": "exhaustive", "learned_clauses": 7,`, 1)
	require.NotEqual(t, string(data), old)
	p, err := Unmarshal([]byte(old))
	require.NoError(t, err)
	assert.Equal(t, 7, p.Search.IllegalSkeletons)
	out, err := p.Marshal()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "learned_clauses")
	assert.Contains(t, string(out), `"illegal_skeletons": 7`)
}
