package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// TestCommitManual: writes = Time::SIZE × commit_in_size / commit_size, one
// per cycle (002 L2243-2246, L7695, L7755-7756).
func TestCommitManual(t *testing.T) {
	cases := []struct {
		name, cite                  string
		steps, commitIn, size, want int
	}{
		{"axis permutation: 15 writes of 8 bytes", "002 L7667-7677, L7695", 15, 8, 8, 15},
		{"full-flit commit: 3 cycles vs 15", "002 L7751-7756, L7763", 3, 32, 32, 3},
		{"MOV-EX-31 padding_chunking: each 32-byte packet in 4 × 8-byte writes", "002 L2294-2312", 2, 32, 8, 8},
		{"tail padding dummy = 7: commit_in_size 24", "002 L7817-7823", 6, 24, 24, 6},
		{"segmentation: 1024 full-flit writes per execution", "002 L7944-7950", 1024, 32, 32, 1024},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CommitCycles(c.steps, c.commitIn, c.size)
			require.NoError(t, err, c.cite)
			assert.Equal(t, c.want, got, c.cite)
		})
	}
	// "Only 3 write cycles vs 15 in Example 1 (5× faster)" (002 L7763).
	a, _ := CommitCycles(15, 8, 8)
	b, _ := CommitCycles(3, 32, 32)
	assert.Equal(t, 5, a/b)
	_, err := CommitCycles(1, 24, 16)
	assert.Error(t, err)
}

func configCommit(t testing.TB, axes string, d dtype.DType, time, pkt, elem string) *kernel.CommitConfig {
	t.Helper()
	ax, err := mapping.ParseAxes(axes)
	require.NoError(t, err)
	cfg, err := engines.ConfigCommit(spec, engines.CommitRequest{DType: d, Time: mapping.MustParse(time, ax, nil),
		Packet: mapping.MustParse(pkt, ax, nil), Element: mapping.MustParse(elem, ax, nil), Context: kernel.CtxMain})
	require.NoError(t, err)
	return cfg
}

// TestCommitLowered prices commits lowered by the engines' derivation and
// measures their bank runs.
func TestCommitLowered(t *testing.T) {
	cfg := configCommit(t, "M=4, K=2, W=8, N=16", dtype.I8, "K", "M, W", "K, M, W # 16")
	got, err := Commit(cfg)
	require.NoError(t, err)
	assert.Equal(t, 8, got, "MOV-EX-31 padding_chunking: 2 packets × 4 writes (002 L2294-2312)")
	r, f, err := CommitBanks(spec, cfg, 0)
	require.NoError(t, err)
	assert.Nil(t, f)
	assert.Equal(t, 8, r.Accesses)
	// Writes at 0, 16, 32, 48, 64, ...: 8-byte units in banks 0, 2, 4, ...
	// (002 L2878): no bank twice in a row.
	assert.Equal(t, 1, r.MaxRun)

	// A commit whose rows are 128 bytes apart writes bank 0 every time
	// (002 L2874-2879): 64 rows of 8 bytes is a starvation hazard.
	cfg = configCommit(t, "M=64, W=8", dtype.I8, "M", "W # 32", "M, W # 128")
	r, f, err = CommitBanks(spec, cfg, 0)
	require.NoError(t, err)
	assert.Equal(t, 64, r.MaxRun)
	require.NotNil(t, f)
	assert.Equal(t, "MEM-R1", f.Rule.ID)
	assert.Equal(t, SerializeWithDMA, f.Effect)
	// 63 rows stay below the limit (docs/spec-decisions.md "Bank starvation
	// threshold").
	cfg = configCommit(t, "M=63, W=8", dtype.I8, "M", "W # 32", "M, W # 128")
	r, f, err = CommitBanks(spec, cfg, 0)
	require.NoError(t, err)
	assert.Equal(t, 63, r.MaxRun)
	assert.Nil(t, f)
}
