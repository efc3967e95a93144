package dtype

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestI4PackingAllPairs(t *testing.T) {
	// Two i4 per byte, element 0 in the low nibble (RN L778; decision
	// "i4 nibble order"), sign-extended on load (RN L895).
	for a := int64(-8); a < 8; a++ {
		for b := int64(-8); b < 8; b++ {
			buf := []byte{0xa5}
			require.NoError(t, I4.StoreInt(buf, 0, a))
			require.NoError(t, I4.StoreInt(buf, 1, b))
			assert.Equal(t, byte(a&0xf)|byte(b&0xf)<<4, buf[0], "(%d, %d)", a, b)
			ga, err := I4.LoadInt(buf, 0)
			require.NoError(t, err)
			gb, err := I4.LoadInt(buf, 1)
			require.NoError(t, err)
			require.Equal(t, [2]int64{a, b}, [2]int64{ga, gb})
			fa, err := I4.Load(buf, 0)
			require.NoError(t, err)
			assert.Equal(t, float64(a), fa)
		}
	}
	// Writing one nibble leaves the other alone.
	buf := []byte{0x00, 0x00}
	require.NoError(t, I4.StoreInt(buf, 3, -1))
	assert.Equal(t, []byte{0x00, 0xf0}, buf)
}

func TestF4E2M1Packing(t *testing.T) {
	buf := make([]byte, 8)
	for c := range 16 {
		v := float64(F32FromF4E2M1(uint8(c)))
		require.NoError(t, F4E2M1.Store(buf, c, v))
	}
	for i, b := range buf {
		assert.Equal(t, byte(2*i)|byte(2*i+1)<<4, b, "byte %d", i)
	}
}

func TestLittleEndian(t *testing.T) {
	// RN L776-L777: packed little-endian.
	buf := make([]byte, 8)
	require.NoError(t, BF16.Store(buf, 1, -2))
	p := uint16(BF16FromF32(-2))
	assert.Equal(t, []byte{0, 0, byte(p), byte(p >> 8), 0, 0, 0, 0}, buf)

	buf = make([]byte, 8)
	require.NoError(t, F32.Store(buf, 1, 1.5))
	assert.Equal(t, math.Float32bits(1.5), binary.LittleEndian.Uint32(buf[4:]))
	assert.Equal(t, []byte{0, 0, 0, 0}, buf[:4])

	buf = make([]byte, 4)
	require.NoError(t, I16.StoreInt(buf, 1, -2))
	assert.Equal(t, []byte{0, 0, 0xfe, 0xff}, buf)
}

func TestLoadStoreRoundTrip(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, -3, 6, 7, 100, -100, 448, 1000, 65504, 1e10, -1e-3, math.Inf(1), math.NaN(), 2.5}
	for _, d := range All {
		n := len(vals)
		size, err := d.BufLen(n)
		require.NoError(t, err)
		buf := make([]byte, size)
		var want []float64
		for i, v := range vals {
			err := d.Store(buf, i, v)
			r := Round(v, d)
			if math.IsNaN(r) && !math.IsNaN(v) || math.IsNaN(v) && !canNaN(d) {
				require.Error(t, err, "%s Store(%g)", d, v)
				want = append(want, math.NaN()) // slot untouched: zero
				continue
			}
			require.NoError(t, err, "%s Store(%g)", d, v)
			want = append(want, r)
		}
		for i, w := range want {
			got, err := d.Load(buf, i)
			require.NoError(t, err)
			if math.IsNaN(w) && !canNaN(d) {
				assert.Equal(t, 0.0, got, "%s[%d] untouched", d, i)
				continue
			}
			assert.True(t, sameValue(w, got), "%s[%d]: stored %g, want %g, got %g", d, i, vals[i], w, got)
		}
	}
}

func TestStagingSlots(t *testing.T) {
	// i5 in an i8 slot, i9 in an i16 slot (RN L779), sign-extended.
	buf := make([]byte, 2)
	require.NoError(t, I5.StoreInt(buf, 1, -1))
	assert.Equal(t, []byte{0, 0xff}, buf)
	require.NoError(t, I5.StoreInt(buf, 0, 16)) // wraps to −16
	v, err := I5.LoadInt(buf, 0)
	require.NoError(t, err)
	assert.Equal(t, refWrap(16, 5), v)

	buf = make([]byte, 4)
	require.NoError(t, I9.StoreInt(buf, 1, -256))
	assert.Equal(t, []byte{0, 0, 0x00, 0xff}, buf)
	v, err = I9.LoadInt(buf, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(-256), v)
}

func TestLoadStoreF32(t *testing.T) {
	buf := make([]byte, 8)
	for _, d := range []DType{BF16, F16, F8E4M3, F8E5M2, F4E2M1, F32} {
		for _, v := range []float32{1.0625, -300, 3e-3, 5} {
			require.NoError(t, d.StoreF32(buf, 1, v))
			got, err := d.LoadF32(buf, 1)
			require.NoError(t, err)
			assert.Equal(t, float32(Round(float64(v), d)), got, "%s %g", d, v)
		}
	}
	assert.Error(t, F4E2M1.StoreF32(buf, 0, float32(math.NaN())))
	assert.Error(t, I8.StoreF32(buf, 0, 1))
	_, err := I8.LoadF32(buf, 0)
	assert.Error(t, err)
}

func TestBufErrors(t *testing.T) {
	buf := make([]byte, 4)
	for _, d := range All {
		n := len(buf) * 8 / d.SlotBits()
		for _, i := range []int{-1, n, n + 100, math.MaxInt, math.MinInt} {
			_, err := d.Load(buf, i)
			assert.Error(t, err, "%s Load %d", d, i)
			assert.Error(t, d.Store(buf, i, 0), "%s Store %d", d, i)
			if d.IsInt() {
				_, err = d.LoadInt(buf, i)
				assert.Error(t, err)
				assert.Error(t, d.StoreInt(buf, i, 0))
			} else {
				_, err = d.LoadF32(buf, i)
				assert.Error(t, err)
				assert.Error(t, d.StoreF32(buf, i, 0))
			}
		}
		_, err := d.Load(nil, 0)
		assert.Error(t, err)
		_, err = d.Load(buf, n-1)
		assert.NoError(t, err, "%s last index", d)
	}
	assert.Error(t, I8.Store(buf, 0, 0.5))
	assert.Error(t, I8.Store(buf, 0, math.NaN()))
	_, err := F32.LoadInt(buf, 0)
	assert.Error(t, err)
	assert.Error(t, BF16.StoreInt(buf, 0, 1))
	assert.Error(t, F32.Store(make([]byte, 3), 0, 1), "3 bytes hold no f32")
}

func TestNoAllocs(t *testing.T) {
	buf := make([]byte, 64)
	for _, d := range All {
		allocs := testing.AllocsPerRun(100, func() {
			for i := range 8 {
				v, _ := d.Load(buf, i)
				_ = d.Store(buf, i, v+1)
				if d.IsInt() {
					x, _ := d.LoadInt(buf, i)
					_ = d.StoreInt(buf, i, x+1)
				} else {
					f, _ := d.LoadF32(buf, i)
					_ = d.StoreF32(buf, i, f*2)
				}
			}
		})
		assert.Zero(t, allocs, "%s", d)
	}
}
