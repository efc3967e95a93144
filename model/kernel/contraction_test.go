package kernel

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

// Tests of the contraction-side configuration data: the manual's spellings,
// JSON round trips and the TRF Sequencer's address arithmetic.

func TestParseTrfAddress(t *testing.T) {
	for _, s := range []string{"Full", "FirstHalf", "SecondHalf", "TrfAddress::FirstHalf", " Full "} {
		a, err := ParseTrfAddress(s)
		require.NoError(t, err, s)
		assert.True(t, a.Valid())
	}
	a, _ := ParseTrfAddress("TrfAddress::SecondHalf")
	assert.True(t, a.Half())
	for _, s := range []string{"", "full", "Quarter", "TrfAddress::"} {
		_, err := ParseTrfAddress(s)
		assert.Error(t, err, s)
	}
	var x TrfAddress
	assert.Error(t, json.Unmarshal([]byte(`"Half"`), &x))
	assert.Error(t, json.Unmarshal([]byte(`3`), &x))
	require.NoError(t, json.Unmarshal([]byte(`"FirstHalf"`), &x))
	assert.Equal(t, TrfFirstHalf, x)
}

func TestParseAccumulationKind(t *testing.T) {
	k, err := ParseAccumulationKind("AccumulationKind::Interleaved")
	require.NoError(t, err)
	assert.Equal(t, Interleaved, k)
	_, err = ParseAccumulationKind("Sequential")
	assert.NoError(t, err)
	_, err = ParseAccumulationKind("interleaved")
	assert.Error(t, err)
	var x AccumulationKind
	assert.Error(t, json.Unmarshal([]byte(`"Parallel"`), &x))
	require.NoError(t, json.Unmarshal([]byte(`"Sequential"`), &x))
	assert.Equal(t, Sequential, x)
}

// TestTRFSequencerAddr walks AL-EX-1's configuration (002 L3863-3864):
// Entry 0 { 2, 1024 } (O) is the fastest digit.
func TestTRFSequencerAddr(t *testing.T) {
	c := TRFSequencerConfig{RegReadSize: 32, Broadcast: 2, Entries: []TRFEntry{{Size: 2, Stride: 1024}, {Size: 32, Stride: 32}}, Rows: 8}
	assert.Equal(t, 64, c.Steps())
	for step := 0; step < 64; step++ {
		assert.Equal(t, (step%2)*1024+(step/2)*32, c.Addr(step), "step %d", step)
	}
	assert.Equal(t, 1, TRFSequencerConfig{}.Steps())
	assert.Equal(t, 0, TRFSequencerConfig{Entries: []TRFEntry{{Size: 0}}}.Steps())
}

func TestContractionConfigJSON(t *testing.T) {
	cfgs := []any{
		&AlignConfig{StreamAdapter: StreamAdapterConfig{CollectFlits: 2, FlitBytes: 32, DataBytes: 64, Rows: 8, TimeBroadcast: 1, InSteps: 128, OutSteps: 64},
			TRFSequencer: TRFSequencerConfig{RegReadSize: 32, Broadcast: 2, Entries: []TRFEntry{{Size: 2, Stride: 1024, Term: "O"}}, Rows: 8}},
		&ToTRFConfig{Address: TrfSecondHalf, Rows: 8, FlitsPerRow: 4, ElementBytes: 128, CapacityBytes: 4096, RegType: 3, ElementBits: 16},
		&ReducerConfig{Contract: ContractConfig{In: dtype.BF16, Out: dtype.F32, Op: ReduceAdd, Rows: 8, Width: 32, Depth: 2, Columns: 8, Valid: 4},
			Accumulate: AccumulateConfig{Kind: Sequential, Rows: 8, Valid: 4, Columns: 8, OutLen: 8, Loops: []AccLoop{{Size: 4}, {Size: 4, Reduced: true}},
				Iterations: 4, InnerTime: 4, InnerAxes: 32, Capacity: 32, Groups: 1, Beats: 32}},
		&CastConfig{From: dtype.F32, To: dtype.BF16, Valid: 8, InElems: 8, OutElems: 16},
		&TransposeConfig{ElementBits: 8, InRows: 8, PacketsPerCol: 4, ElementsPerPacket: 8, InCols: 32, OutRows: 32, OutputAlignment: 32, Iterations: 2},
	}
	for _, c := range cfgs {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		back := newLike(c)
		require.NoError(t, json.Unmarshal(b, back), string(b))
		assert.Equal(t, c, back, string(b))
	}
}

func newLike(v any) any {
	switch v.(type) {
	case *AlignConfig:
		return &AlignConfig{}
	case *ToTRFConfig:
		return &ToTRFConfig{}
	case *ReducerConfig:
		return &ReducerConfig{}
	case *CastConfig:
		return &CastConfig{}
	case *TransposeConfig:
		return &TransposeConfig{}
	}
	return nil
}

// TestContractionConfigStrings checks the manual's wording.
func TestContractionConfigStrings(t *testing.T) {
	// 002 L3854, L3863-3864.
	assert.Equal(t, "reg_read_size = 32B (broadcast 2×); Entry 0: { size: 2, stride: 1024 } — O, Entry 1: { size: 32, stride: 32 } — M",
		TRFSequencerConfig{RegReadSize: 32, Broadcast: 2, Entries: []TRFEntry{{Size: 2, Stride: 1024, Term: "O"}, {Size: 32, Stride: 32, Term: "M"}}}.String())
	// 002 L3847-3852.
	assert.Equal(t, "collect_flits = 2, rows = 8", StreamAdapterConfig{CollectFlits: 2, FlitBytes: 32, DataBytes: 64, Rows: 8, TimeBroadcast: 1}.String())
	// 002 L6925-6940.
	assert.Equal(t, "in_rows = 8, packets_per_col = 1, elements_per_packet = 8, in_cols = 8, out_rows = 8, output_alignment = 32, n = 8, double buffering",
		TransposeConfig{InRows: 8, PacketsPerCol: 1, ElementsPerPacket: 8, InCols: 8, OutRows: 8, OutputAlignment: 32, Iterations: 8, DoubleBuffer: true}.String())
	assert.Equal(t, "tree depth 5 (bf16 → f32), 1 of 1 columns", ContractConfig{In: dtype.BF16, Out: dtype.F32, Depth: 5, Columns: 1, Valid: 1}.String())
	assert.Equal(t, "i32 → i8: 8 of 8 elements → 8 of 32", CastConfig{From: dtype.I32, To: dtype.I8, Valid: 8, InElems: 8, OutElems: 32}.String())
	assert.Equal(t, "bank row 3, row 1, col 0, byte 6 (slot 12)", TRFLocation{BankRow: 3, Row: 1, Byte: 6, Slot: 12}.String())
	assert.Contains(t, ToTRFConfig{Address: TrfFull, Rows: 8, ElementBytes: 64, CapacityBytes: 8192, RegType: 3}.String(), "TrfAddress::Full")
	assert.Contains(t, AccumulateConfig{Kind: Interleaved, Iterations: 4, InnerAxes: 16, Capacity: 128, Valid: 4}.String(), "inner 16 ≤ 128")
}
