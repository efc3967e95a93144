package dtype

import (
	"math"
	"testing"
)

// FuzzConvert checks that no input panics and that rounding is idempotent:
// storing a stored value again changes nothing.
func FuzzConvert(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1.5, 448, 464, 57344, 61440, 65520,
		math.Ldexp(1, -130), math.MaxFloat32, math.Inf(1), math.NaN(), 300, 0.25} {
		for _, d := range All {
			f.Add(math.Float64bits(v), uint8(d), uint8(F32), 3)
		}
	}
	f.Add(uint64(0), uint8(0), uint8(255), -1)
	f.Fuzz(func(t *testing.T, bits uint64, to, from uint8, idx int) {
		v := math.Float64frombits(bits)
		d, src := DType(to), DType(from)

		r := Round(v, d)
		if rr := Round(r, d); !sameValue(rr, r) {
			t.Fatalf("Round(Round(%g, %s)) = %g, Round once = %g", v, d, rr, r)
		}
		if p, err := d.Encode(v); err == nil {
			back, err := d.Decode(p)
			if err != nil || !sameValue(back, r) {
				t.Fatalf("%s: Decode(Encode(%g)) = %g, %v; Round = %g", d, v, back, err, r)
			}
		} else if d.Valid() && !math.IsNaN(r) {
			t.Fatalf("%s: Encode(%g) failed but Round gave %g: %v", d, v, r, err)
		}
		if out, err := Convert(v, src, d); err == nil {
			if !sameValue(Round(out, d), out) {
				t.Fatalf("Convert(%g, %s, %s) = %g is not a %s value", v, src, d, out, d)
			}
		}
		if i, ok := intOf(v); ok {
			if w, err := RoundInt(i, d); err == nil {
				if w2, _ := RoundInt(w, d); w2 != w {
					t.Fatalf("RoundInt not idempotent: %d → %d → %d", i, w, w2)
				}
			}
		}

		buf := make([]byte, 8)
		if err := d.Store(buf, idx, v); err == nil {
			got, err := d.Load(buf, idx)
			if err != nil || !sameValue(got, r) {
				t.Fatalf("%s[%d]: stored %g, loaded %g (%v), want %g", d, idx, v, got, err, r)
			}
		}
		_ = d.StoreInt(buf, idx, int64(bits))
		_, _ = d.LoadInt(buf, idx)
		_ = d.StoreF32(buf, idx, float32(v))
		_, _ = d.LoadF32(buf, idx)
		_, _ = d.ElemsIn(idx)
		_, _ = d.BytesFor(idx)
		_, _ = d.BufLen(idx)
		_ = CanCast(Site(from), src, d)
		_, _ = AccType(d)
	})
}
