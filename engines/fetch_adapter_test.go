package engines

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// fetchValues runs FetchValue over values 0..n-1 of tensor.
func fetchValues(t *testing.T, cfg *kernel.FetchConfig, n, tensor int, table []float64) []float64 {
	t.Helper()
	out := make([]float64, n)
	for i := range out {
		v, err := FetchValue(cfg, float64(i), tensor, table)
		require.NoError(t, err)
		out[i] = v
	}
	return out
}

func simpleFetch(t *testing.T, in, out dtype.DType, mod func(*FetchRequest)) (*kernel.FetchConfig, error) {
	t.Helper()
	b, tm, p := parseSeq(t, "A=8, I=2", "A", "1", "A")
	req := FetchRequest{InType: in, OutType: out, Element: b, Time: tm, Packet: p, Context: kernel.CtxMain, ClusterSize: 2, SliceSize: 256}
	if mod != nil {
		mod(&req)
	}
	return ConfigFetch(Default(), req)
}

// MOV-EX-21: table[x] = 2x over [0..7] gives [0, 2, ..., 14] (002 L1942-1954).
func TestFetchTable(t *testing.T) {
	cfg, err := simpleFetch(t, dtype.I8, dtype.I8, func(r *FetchRequest) { r.Table = true })
	require.NoError(t, err)
	assert.True(t, cfg.Adapter.Table)
	table := make([]float64, 256)
	for i := range table {
		table[i] = float64(int8(2 * int8(i)))
	}
	assert.Equal(t, []float64{0, 2, 4, 6, 8, 10, 12, 14}, fetchValues(t, cfg, 8, 0, table))
	_, err = FetchValue(cfg, 1, 0, table[:1])
	assert.Error(t, err)
	// Table indexing is a main-context stage (002 L1870).
	_, err = simpleFetch(t, dtype.I8, dtype.I8, func(r *FetchRequest) { r.Table = true; r.Context = kernel.CtxSub })
	assertRule(t, err, "FA-R1")
}

// MOV-EX-22: i8 [0..7] cast to i32 [0..7] (002 L1980-1994).
func TestFetchCast(t *testing.T) {
	cfg, err := simpleFetch(t, dtype.I8, dtype.I32, nil)
	require.NoError(t, err)
	assert.True(t, cfg.Adapter.Cast)
	assert.Equal(t, []float64{0, 1, 2, 3, 4, 5, 6, 7}, fetchValues(t, cfg, 8, 0, nil))
	// Pairs outside the table (002 L1962-1979).
	_, err = simpleFetch(t, dtype.I8, dtype.BF16, nil)
	assertRule(t, err, "FA-R4")
	_, err = simpleFetch(t, dtype.F8E4M3, dtype.BF16, nil)
	assertRule(t, err, "FA-R4")
	_, err = simpleFetch(t, dtype.F8E4M3, dtype.BF16, func(r *FetchRequest) { r.RNGDS = true })
	assert.NoError(t, err)
}

// MOV-EX-23: the 32-byte cast output limit (002 L1999-2017).
func TestFetchCastLimit(t *testing.T) {
	spec := Default()
	assert.NoError(t, CheckFetchCast(spec, dtype.I4, dtype.I32, 4))
	assertRule(t, CheckFetchCast(spec, dtype.I4, dtype.I32, 8), "FA-R5")
	assertRule(t, CheckFetchCast(spec, dtype.I8, dtype.I32, 16), "FA-R5")
	assert.Equal(t, "fetch: casting i8 to i32 with a fetch_size of 16 bytes produces 64 bytes, exceeding the 32-byte limit (002 L1995-2021)",
		CheckFetchCast(spec, dtype.I8, dtype.I32, 16).Error())
	// The derivation caps fetch_size accordingly: 16 contiguous i4 read 4 bytes at a time.
	b, tm, p := parseSeq(t, "A=64", "A", "A / 8", "A % 8")
	cfg, err := ConfigFetch(spec, FetchRequest{InType: dtype.I4, OutType: dtype.I32, Element: b, Time: tm, Packet: p, Context: kernel.CtxMain, ClusterSize: 2, SliceSize: 256})
	require.NoError(t, err)
	assert.Equal(t, 4, cfg.FetchSize)
}

// MOV-EX-24: [0..7] with zero point 10 gives [-10..-3] (002 L2024-2035).
func TestFetchZeroPoint(t *testing.T) {
	cfg, err := simpleFetch(t, dtype.I8, dtype.I32, func(r *FetchRequest) { r.ZeroPoints = []int{10} })
	require.NoError(t, err)
	assert.Equal(t, []float64{-10, -9, -8, -7, -6, -5, -4, -3}, fetchValues(t, cfg, 8, 0, nil))
	// Zero points are i8 values (002 L2032, L2117) on integer data.
	_, err = simpleFetch(t, dtype.I8, dtype.I32, func(r *FetchRequest) { r.ZeroPoints = []int{200} })
	assertRule(t, err, "FE-R11")
	_, err = simpleFetch(t, dtype.BF16, dtype.F32, func(r *FetchRequest) { r.ZeroPoints = []int{1} })
	assertRule(t, err, "FE-R11")
	_, err = simpleFetch(t, dtype.I8, dtype.I32, func(r *FetchRequest) { r.ZeroPoints = []int{1, 2} })
	assertRule(t, err, "FE-R11")
	// The sub context supports zero-point subtraction (002 L1870).
	_, err = simpleFetch(t, dtype.I8, dtype.I32, func(r *FetchRequest) { r.ZeroPoints = []int{10}; r.Context = kernel.CtxSub })
	assert.NoError(t, err)
}

// MOV-EX-16 and MOV-EX-25: interleaving two tensors, with one zero point
// each (002 L1843-1868, L2037-2049).
func TestFetchInterleave(t *testing.T) {
	spec := Default()
	b, tm, p := parseSeq(t, "A=512, B=32, I=2", "A, B", "A, I", "B")
	req := FetchRequest{InType: dtype.I8, OutType: dtype.I8, Element: b, Time: tm, Packet: p, Context: kernel.CtxMain,
		ClusterSize: 2, SliceSize: 256, Interleave: &FetchInterleaveRequest{Axis: "I", OffsetBytes: 1 << 14}}
	cfg, err := ConfigFetch(spec, req)
	require.NoError(t, err)
	assert.Equal(t, "[512:32, 2:16384, 32:1] : 32", cfg.Seq.String())
	// lhs, rhs, lhs (next packet), ... (002 L1848-1849).
	for step, want := range []int{0, 1 << 14, 32, 1<<14 + 32} {
		assert.Equal(t, want, cfg.Seq.Offset(step*cfg.Seq.PacketSize), "step %d", step)
	}
	checkOracle(t, b, tm, p, SeqRead, cfg.Seq, map[string]int{"I": 1 << 14})

	b, tm, p = parseSeq(t, "A=8, I=2", "A", "I", "A")
	req = FetchRequest{InType: dtype.I8, OutType: dtype.I32, Element: b, Time: tm, Packet: p, Context: kernel.CtxMain,
		ClusterSize: 2, SliceSize: 256, Interleave: &FetchInterleaveRequest{Axis: "I", OffsetBytes: 64}, ZeroPoints: []int{100, -100}}
	cfg, err = ConfigFetch(spec, req)
	require.NoError(t, err)
	assert.Equal(t, []float64{-100, -99, -98, -97, -96, -95, -94, -93}, fetchValues(t, cfg, 8, 0, nil))
	assert.Equal(t, []float64{100, 101, 102, 103, 104, 105, 106, 107}, fetchValues(t, cfg, 8, 1, nil))
	_, err = FetchValue(cfg, 0, 2, nil)
	assert.Error(t, err)

	// At most two tensors (002 L1850).
	b, tm, p = parseSeq(t, "A=8, I=3", "A", "I", "A")
	req.Element, req.Time, req.Packet = b, tm, p
	_, err = ConfigFetch(spec, req)
	assertRule(t, err, "FE-R8")
	req.Interleave = &FetchInterleaveRequest{Axis: "J", OffsetBytes: 64}
	_, err = ConfigFetch(spec, req)
	assertRule(t, err, "FE-R8")
	req.Interleave = &FetchInterleaveRequest{Axis: "A", OffsetBytes: 64}
	_, err = ConfigFetch(spec, req)
	assertRule(t, err, "FE-R8")
}

// MOV-EX-26: 8-byte fetches, 5 per packet, make a 40-byte packet (002 L2054,
// L2123): 40 i8 spread over five non-contiguous 8-byte rows (002 L2059).
func TestFetchBatching(t *testing.T) {
	b, tm, p := parseSeq(t, "T=4, A=5, B=8", "T, A, B # 16", "T", "A, B")
	cfg, err := ConfigFetch(Default(), FetchRequest{InType: dtype.I8, OutType: dtype.I8, Element: b, Time: tm, Packet: p,
		Context: kernel.CtxMain, ClusterSize: 2, SliceSize: 256})
	require.NoError(t, err)
	assert.Equal(t, "[4:80, 5:16, 8:1] : 40", cfg.Seq.String())
	assert.Equal(t, 8, cfg.FetchSize)
	assert.Equal(t, 5, cfg.FetchesPerPacket)
	assert.Equal(t, 40, cfg.PacketBytes)
}

func TestFetchPreChecks(t *testing.T) {
	for _, c := range []struct {
		cluster, slice int
		rule           string
	}{
		{2, 256, ""}, {1, 256, ""}, {2, 64, ""}, {1, 128, ""},
		{3, 256, "FE-R1"}, {0, 256, "FE-R1"}, {2, 32, "FE-R2"}, {2, 192, "FE-R2"}, {2, 512, "FE-R2"},
	} {
		_, err := simpleFetch(t, dtype.I8, dtype.I8, func(r *FetchRequest) { r.ClusterSize, r.SliceSize = c.cluster, c.slice })
		if c.rule == "" {
			assert.NoError(t, err, "%d/%d", c.cluster, c.slice)
		} else {
			assertRule(t, err, c.rule)
		}
	}
	_, err := simpleFetch(t, dtype.I8, dtype.I8, func(r *FetchRequest) { r.Context = "dma" })
	assert.Error(t, err)
	_, err = simpleFetch(t, 0, dtype.I8, nil)
	assert.Error(t, err)
	_, err = simpleFetch(t, dtype.I8, dtype.I8, func(r *FetchRequest) { r.Packet = nil })
	assert.Error(t, err)
	_, err = ConfigFetch(nil, FetchRequest{})
	assert.Error(t, err)
	// Sub-context fetch_size is 8 bytes: a 4-byte contiguous run cannot be read.
	b, tm, p := parseSeq(t, "A=4, B=4", "A, B # 8", "A", "B")
	_, err = ConfigFetch(Default(), FetchRequest{InType: dtype.I8, OutType: dtype.I8, Element: b, Time: tm, Packet: p, Context: kernel.CtxSub, ClusterSize: 2, SliceSize: 256})
	assertRule(t, err, "FE-R5")
	// A left padding must be masked, which the sub context cannot do.
	_, err = simpleFetch(t, dtype.I8, dtype.I8, func(r *FetchRequest) {
		r.Context = kernel.CtxSub
		r.LeftPad = &FetchLeftPad{Axis: "A", N: 0}
	})
	assert.NoError(t, err)
}

// Masking the 64th element of A # 64 to zero (MOV-EX-17, 002 L1890-1891).
func TestMaskedAt(t *testing.T) {
	b, tm, p := parseSeq(t, "A=63", "A", "1", "A # 64")
	cfg, err := ConfigFetch(Default(), FetchRequest{InType: dtype.I8, OutType: dtype.I8, Element: b, Time: tm, Packet: p, Context: kernel.CtxMain, ClusterSize: 2, SliceSize: 256})
	require.NoError(t, err)
	for i := 0; i < 64; i++ {
		assert.Equal(t, i == 63, MaskedAt(cfg.Adapter.Mask, &cfg.Seq, i), "element %d", i)
	}
	assert.False(t, MaskedAt(nil, &cfg.Seq, 63))
	allocs := testing.AllocsPerRun(10, func() { MaskedAt(cfg.Adapter.Mask, &cfg.Seq, 63) })
	assert.Zero(t, allocs)
	// Zero padding that does not have the masking shape is rejected.
	b, tm, p = parseSeq(t, "A=6, B=8", "A, B", "A #{0} 8", "B")
	_, err = ConfigFetch(Default(), FetchRequest{InType: dtype.I8, OutType: dtype.I8, Element: b, Time: tm, Packet: p, Context: kernel.CtxMain, ClusterSize: 2, SliceSize: 256})
	assertRule(t, err, "FA-R2")
	// Per-index masking needs last_dim of at most 8 (002 L1927).
	b, tm, p = parseSeq(t, "B=97", "B # 160", "[B # 160] / 16", "[B # 160] % 16")
	_, err = ConfigFetch(Default(), FetchRequest{InType: dtype.I8, OutType: dtype.I8, Element: b, Time: tm, Packet: p, Context: kernel.CtxMain, ClusterSize: 2, SliceSize: 256})
	assertRule(t, err, "FA-R3")
}

func assertRule(t *testing.T, err error, id string) {
	t.Helper()
	var v *Violation
	if assert.True(t, errors.As(err, &v), "want a %s violation, got %v", id, err) {
		assert.Equal(t, id, v.Rule.ID, "%v", err)
	}
}
