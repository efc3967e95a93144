package dtype

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		want DType
		cite string
	}{
		// The manual's DMA dtype grammar (002 L2525).
		{"i4", I4, "002 L2525"},
		{"i8", I8, "002 L2525"},
		{"f8e4m3", F8E4M3, "002 L2525"},
		{"f8e5m2", F8E5M2, "002 L2525"},
		{"i16", I16, "002 L2525"},
		{"fp16", F16, "002 L2525"},
		{"bf16", BF16, "002 L2525"},
		{"i32", I32, "002 L2525"},
		{"f32", F32, "002 L2525"},
		// The fetch cast table's spellings (002 L1965-L1971).
		{"i5", I5, "002 L1965"},
		{"i9", I9, "002 L1966"},
		{"f16", F16, "002 L1971"},
		{"f4e2m1", F4E2M1, "RN L894"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.name)
			require.NoError(t, err, tt.cite)
			assert.Equal(t, tt.want, got, tt.cite)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, name := range []string{"", "BF16", "f8", "float32", "i64", "bf16 ", "int8"} {
		_, err := Parse(name)
		require.Error(t, err, "%q", name)
		assert.Contains(t, err.Error(), "unknown dtype")
		assert.Contains(t, err.Error(), "f8e4m3", "the error lists the valid names")
		assert.Contains(t, err.Error(), "fp16")
	}
}

func TestStringParseRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All {
		require.True(t, d.Valid())
		s := d.String()
		assert.False(t, seen[s], "duplicate name %s", s)
		seen[s] = true
		got, err := Parse(s)
		require.NoError(t, err)
		assert.Equal(t, d, got)

		txt, err := d.MarshalText()
		require.NoError(t, err)
		var back DType
		require.NoError(t, back.UnmarshalText(txt))
		assert.Equal(t, d, back)
	}
	assert.Len(t, All, int(numDTypes)-1)
}

func TestInvalid(t *testing.T) {
	for _, d := range []DType{0, numDTypes, 255} {
		assert.False(t, d.Valid())
		assert.Contains(t, d.String(), "dtype(")
		assert.Zero(t, d.Bits())
		assert.Zero(t, d.SizeBits())
		assert.Zero(t, d.SlotBits())
		assert.False(t, d.IsFloat())
		assert.False(t, d.IsInt())
		assert.False(t, d.Signed())
		assert.False(t, d.IsStorage())
		_, err := d.ElemsIn(32)
		assert.Error(t, err)
		_, err = d.BytesFor(2)
		assert.Error(t, err)
		_, err = d.BufLen(2)
		assert.Error(t, err)
		_, err = d.MarshalText()
		assert.Error(t, err)
		_, err = d.MaxFinite()
		assert.Error(t, err)
		_, err = d.Encode(1)
		assert.Error(t, err)
		_, err = d.Decode(0)
		assert.Error(t, err)
		_, err = d.Load(make([]byte, 8), 0)
		assert.Error(t, err)
		assert.Error(t, d.Store(make([]byte, 8), 0, 1))
		assert.True(t, Round(1, d) != Round(1, d), "Round into an invalid type is NaN")
	}
	var d DType
	assert.Error(t, d.UnmarshalText([]byte("bogus")))
	assert.Equal(t, DType(0), d, "a failed UnmarshalText leaves the value alone")
}

func TestClasses(t *testing.T) {
	floats := map[DType]bool{BF16: true, F16: true, F32: true, F8E4M3: true, F8E5M2: true, F4E2M1: true}
	storage := map[DType]bool{I4: true, I8: true, F8E4M3: true, F8E5M2: true, I16: true, F16: true, BF16: true, I32: true, F32: true} // 002 L2525
	for _, d := range All {
		assert.Equal(t, floats[d], d.IsFloat(), "%s", d)
		assert.Equal(t, !floats[d], d.IsInt(), "%s", d)
		assert.True(t, d.Signed(), "%s", d)
		assert.Equal(t, storage[d], d.IsStorage(), "%s", d)
		assert.Equal(t, d == I5 || d == I9, d.IsStaging(), "%s", d)
	}
}

func TestFlitElements(t *testing.T) {
	// A 32-byte flit (002 L4551: "32-byte units called flits, each containing
	// eight 32-bit values"); 320b/640b ↔ 64/128 elements for i4/i5, 32/64 for
	// i8/f8/i9, 16/32 for bf16, 8/16 for f32/i32 (002 L4383).
	tests := []struct {
		d          DType
		flit, dual int
	}{
		{I4, 64, 128}, {I5, 64, 128},
		{I8, 32, 64}, {F8E4M3, 32, 64}, {F8E5M2, 32, 64}, {I9, 32, 64},
		{BF16, 16, 32},
		{F32, 8, 16}, {I32, 8, 16},
		{F16, 16, 32}, {I16, 16, 32}, // 16-bit like bf16
	}
	for _, tt := range tests {
		n, err := tt.d.ElemsIn(32)
		require.NoError(t, err)
		assert.Equal(t, tt.flit, n, "%s per 32 B", tt.d)
		n, err = tt.d.ElemsIn(64)
		require.NoError(t, err)
		assert.Equal(t, tt.dual, n, "%s per 64 B", tt.d)
		b, err := tt.d.BytesFor(tt.flit)
		require.NoError(t, err)
		assert.Equal(t, 32, b, "%s", tt.d)
	}
}

func TestManualByteCounts(t *testing.T) {
	tests := []struct {
		d     DType
		elems int
		bytes int
		cite  string
	}{
		{I4, 64, 32, "002 L2229-L2231: 64 i4 elements × 0.5 bytes = 32 bytes"},
		{BF16, 8, 16, "002 L2220-L2222: 8 bf16 elements × 2 bytes = 16 bytes"},
		{I8, 8, 8, "002 L2204-L2206: 8 i8 elements × 1 byte = 8 bytes"},
		{F32, 4, 16, "002 L2212-L2214: 4 f32 elements × 4 bytes = 16 bytes"},
		{I4, 8, 4, "002 L2002-L2003: fetches 4 bytes (8 elements of i4)"},
		{I32, 8, 32, "002 L2003-L2004: produces 32 bytes (8 elements of i32)"},
		{BF16, 32, 64, "002 L3590: bf16, B = 32: 32 elements × 2 bytes = 64 bytes"},
	}
	for _, tt := range tests {
		b, err := tt.d.BytesFor(tt.elems)
		require.NoError(t, err, tt.cite)
		assert.Equal(t, tt.bytes, b, tt.cite)
		n, err := tt.d.ElemsIn(tt.bytes)
		require.NoError(t, err, tt.cite)
		assert.Equal(t, tt.elems, n, tt.cite)
	}
}

func TestSizeErrors(t *testing.T) {
	// RN L923-L924: an odd number of i4s is not whole bytes.
	for _, d := range []DType{I4, I5, F4E2M1} {
		_, err := d.BytesFor(3)
		assert.Error(t, err, "%s", d)
	}
	_, err := BF16.ElemsIn(3)
	assert.Error(t, err)
	_, err = F32.ElemsIn(6)
	assert.Error(t, err)
	_, err = I8.ElemsIn(-1)
	assert.Error(t, err)
	_, err = I8.BytesFor(-1)
	assert.Error(t, err)
	_, err = I8.BufLen(-1)
	assert.Error(t, err)
}

func TestByteSize(t *testing.T) {
	for _, d := range All {
		num, den := d.ByteSize()
		assert.Equal(t, 1, GCD(num, den), "%s reduced", d)
		assert.Equal(t, d.SizeBits()*den, 8*num, "%s: num/den = SizeBits/8", d)
	}
	num, den := I4.ByteSize()
	assert.Equal(t, [2]int{1, 2}, [2]int{num, den}, "002 L2231: i4 = 0.5 bytes")
	num, den = BF16.ByteSize()
	assert.Equal(t, [2]int{2, 1}, [2]int{num, den})
	num, den = DType(0).ByteSize()
	assert.Equal(t, [2]int{0, 1}, [2]int{num, den})
}

func TestBufLen(t *testing.T) {
	tests := []struct {
		d     DType
		n     int
		bytes int
	}{
		{I4, 3, 2}, {I4, 4, 2}, {F4E2M1, 1, 1},
		{I5, 3, 3}, // i8 slot (RN L779)
		{I9, 3, 6}, // i16 slot (RN L779)
		{BF16, 5, 10}, {F32, 2, 8}, {I8, 0, 0},
	}
	for _, tt := range tests {
		got, err := tt.d.BufLen(tt.n)
		require.NoError(t, err)
		assert.Equal(t, tt.bytes, got, "%s × %d", tt.d, tt.n)
	}
}

func TestGCD(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{12, 18, 6}, {18, 12, 6}, {7, 0, 7}, {0, 7, 7}, {0, 0, 0}, {-12, 18, 6}, {12, -18, 6}, {-4, -6, 2},
	} {
		assert.Equal(t, tc.want, GCD(tc.a, tc.b), "GCD(%d, %d)", tc.a, tc.b)
	}
	assert.Equal(t, int64(1<<20), GCD(int64(1)<<40, int64(1)<<20))
}
