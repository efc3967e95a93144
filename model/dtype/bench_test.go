package dtype

import (
	"math"
	"math/rand/v2"
	"testing"
)

var sinkF32 float32
var sinkU16 uint16
var sinkU8 uint8

func randF32s(n int) []float32 {
	rng := rand.New(rand.NewPCG(9, 9))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.NormFloat64() * 100)
	}
	return out
}

func BenchmarkBF16FromF32(b *testing.B) {
	in := randF32s(1024)
	b.ReportAllocs()
	var s uint16
	for i := 0; b.Loop(); i++ {
		s += BF16FromF32(in[i&1023])
	}
	sinkU16 = s
}

func BenchmarkF32FromBF16(b *testing.B) {
	b.ReportAllocs()
	var s float32
	for i := 0; b.Loop(); i++ {
		s += F32FromBF16(uint16(i))
	}
	sinkF32 = s
}

func BenchmarkF8E4M3FromF32(b *testing.B) {
	in := randF32s(1024)
	b.ReportAllocs()
	var s uint8
	for i := 0; b.Loop(); i++ {
		s += F8E4M3FromF32(in[i&1023])
	}
	sinkU8 = s
}

func BenchmarkF8E5M2FromF32(b *testing.B) {
	in := randF32s(1024)
	b.ReportAllocs()
	var s uint8
	for i := 0; b.Loop(); i++ {
		s += F8E5M2FromF32(in[i&1023])
	}
	sinkU8 = s
}

// BenchmarkLoadStore copies a 1024-element buffer through Load and Store.
func BenchmarkLoadStore(b *testing.B) {
	for _, d := range []DType{BF16, F32, F8E4M3, I4, I8, I32} {
		b.Run(d.String(), func(b *testing.B) {
			n := 1024
			size, _ := d.BufLen(n)
			src, dst := make([]byte, size), make([]byte, size)
			for i := range n {
				_ = d.Store(src, i, float64(i%7-3))
			}
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				for i := range n {
					v, err := d.Load(src, i)
					if err != nil {
						b.Fatal(err)
					}
					if err := d.Store(dst, i, v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkLoadStoreF32 is the simulator's float path: f32 in, f32 out.
func BenchmarkLoadStoreF32(b *testing.B) {
	for _, d := range []DType{BF16, F8E4M3} {
		b.Run(d.String(), func(b *testing.B) {
			n := 1024
			size, _ := d.BufLen(n)
			buf := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				for i := range n {
					v, _ := d.LoadF32(buf, i)
					_ = d.StoreF32(buf, i, v+1)
				}
			}
		})
	}
}

func BenchmarkLoadStoreInt(b *testing.B) {
	for _, d := range []DType{I4, I8, I32} {
		b.Run(d.String(), func(b *testing.B) {
			n := 1024
			size, _ := d.BufLen(n)
			buf := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				for i := range n {
					v, _ := d.LoadInt(buf, i)
					_ = d.StoreInt(buf, i, v+1)
				}
			}
		})
	}
}

func BenchmarkRound(b *testing.B) {
	in := randF32s(1024)
	for _, d := range []DType{BF16, F8E5M2, I8} {
		b.Run(d.String(), func(b *testing.B) {
			b.ReportAllocs()
			s := 0.0
			for i := 0; b.Loop(); i++ {
				s += Round(math.Round(float64(in[i&1023])), d)
			}
			sinkF32 = float32(s)
		})
	}
}
