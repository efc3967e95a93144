package verify

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// hbm is one HBM tensor of a test program: name, role, dtype, element
// mapping ("1" for a scalar).
type hbm struct{ name, role, dt, elem string }

// refProgram builds a program with only HBM tensors and a reference.
func refProgram(t testing.TB, axes string, ref string, ts ...hbm) *kernel.Program {
	t.Helper()
	var parts []string
	for i, x := range ts {
		parts = append(parts, fmt.Sprintf(`{"name": %q, "mem": "hbm", "dtype": %q, "role": %q, "chip": "1", "element": %q, "addr": %d}`,
			x.name, x.dt, x.role, x.elem, i<<20))
	}
	src := fmt.Sprintf(`{"name": "t", "axes": %q, "chips": 1, "tensors": [%s], "ops": [], "reference": %s}`,
		axes, strings.Join(parts, ", "), ref)
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(src), &p), src)
	return &p
}

// logical returns tensor name of p holding vals.
func logical(t testing.TB, p *kernel.Program, name string, vals ...float64) *Logical {
	t.Helper()
	tt, ok := p.Tensor(name)
	require.True(t, ok, name)
	l, err := NewLogical(p, tt)
	require.NoError(t, err)
	if vals != nil {
		require.Len(t, vals, l.Len(), name)
		copy(l.Vals, vals)
	}
	return l
}

// TestReferenceHand: small cases computed by hand.
func TestReferenceHand(t *testing.T) {
	t.Run("matmul", func(t *testing.T) {
		// out[i,j] = Σ_k a[i,k]·b[k,j], a = [[1,2],[3,4]], b = [[5,6,7],[8,9,10]]
		p := refProgram(t, "I=2, J=3, K=2", `{"op": "einsum", "inputs": ["a", "b"], "output": "o"}`,
			hbm{"a", "input", "f32", "I, K"}, hbm{"b", "input", "f32", "K, J"}, hbm{"o", "output", "f32", "I, J"})
		// b's logical axes are in program order (J, K): b[j,k].
		e, err := Reference(p, map[string]*Logical{
			"a": logical(t, p, "a", 1, 2, 3, 4),
			"b": logical(t, p, "b", 5, 8, 6, 9, 7, 10),
		})
		require.NoError(t, err)
		assert.Equal(t, []float64{1*5 + 2*8, 1*6 + 2*9, 1*7 + 2*10, 3*5 + 4*8, 3*6 + 4*9, 3*7 + 4*10}, e.Out.Vals)
		assert.Equal(t, e.Out.Vals, e.Abs.Vals, "all terms positive")
		assert.Equal(t, 2, e.Depth)
		assert.Equal(t, 3, e.Ops)
	})
	t.Run("signed magnitudes", func(t *testing.T) {
		// dot of [1, -2, 3] and [4, 5, -6]: 4 - 10 - 18 = -24, Σ|ab| = 32.
		p := refProgram(t, "K=3", `{"op": "einsum", "inputs": ["a", "b"], "output": "o"}`,
			hbm{"a", "input", "bf16", "K"}, hbm{"b", "input", "bf16", "K"}, hbm{"o", "output", "bf16", "1"})
		e, err := Reference(p, map[string]*Logical{"a": logical(t, p, "a", 1, -2, 3), "b": logical(t, p, "b", 4, 5, -6)})
		require.NoError(t, err)
		assert.Equal(t, []float64{-24}, e.Out.Vals)
		assert.Equal(t, []float64{32}, e.Abs.Vals)
	})
	t.Run("broadcast", func(t *testing.T) {
		// out[i,j] = a[i]·b[j] (outer product, no contraction).
		p := refProgram(t, "I=2, J=2", `{"op": "einsum", "inputs": ["a", "b"], "output": "o"}`,
			hbm{"a", "input", "f32", "I"}, hbm{"b", "input", "f32", "J"}, hbm{"o", "output", "f32", "I, J"})
		e, err := Reference(p, map[string]*Logical{"a": logical(t, p, "a", 2, 3), "b": logical(t, p, "b", 5, 7)})
		require.NoError(t, err)
		assert.Equal(t, []float64{10, 14, 15, 21}, e.Out.Vals)
		assert.Equal(t, 1, e.Depth)
	})
	t.Run("one-input reduction", func(t *testing.T) {
		p := refProgram(t, "I=2, K=3", `{"op": "einsum", "inputs": ["a"], "output": "o"}`,
			hbm{"a", "input", "f32", "I, K"}, hbm{"o", "output", "f32", "I"})
		e, err := Reference(p, map[string]*Logical{"a": logical(t, p, "a", 1, 2, 3, 4, -5, 6)})
		require.NoError(t, err)
		assert.Equal(t, []float64{6, 5}, e.Out.Vals)
		assert.Equal(t, []float64{6, 15}, e.Abs.Vals)
		assert.Equal(t, 2, e.Depth)
	})
	t.Run("add scalar i32 wraps", func(t *testing.T) {
		// VEC-EX-1 (002 L158-219, AddFxp wraps: 002 L4826): 2^31-1 + 1 wraps to -2^31, -1 + 1 = 0.
		p := refProgram(t, "A=3", `{"op": "add", "inputs": ["x"], "output": "y", "scalar": 1}`,
			hbm{"x", "input", "i32", "A"}, hbm{"y", "output", "i32", "A"})
		e, err := Reference(p, map[string]*Logical{"x": logical(t, p, "x", 2147483647, -1, 41)})
		require.NoError(t, err)
		assert.Equal(t, []float64{-2147483648, 0, 42}, e.Out.Vals)
		assert.Nil(t, e.Abs)
	})
	t.Run("mul i32 wraps", func(t *testing.T) {
		// VEC-EX-2 (002 L221-298, MulInt: 002 L4833): 3·-4 = -12; 65536·65536 = 2^32 wraps to 0;
		// 46341·46341 = 2147488281 wraps to 2147488281 - 2^32.
		p := refProgram(t, "A=3", `{"op": "mul", "inputs": ["l", "r"], "output": "y"}`,
			hbm{"l", "input", "i32", "A"}, hbm{"r", "input", "i32", "A"}, hbm{"y", "output", "i32", "A"})
		e, err := Reference(p, map[string]*Logical{"l": logical(t, p, "l", 3, 65536, 46341), "r": logical(t, p, "r", -4, 65536, 46341)})
		require.NoError(t, err)
		assert.Equal(t, []float64{-12, 0, 2147488281 - 4294967296}, e.Out.Vals)
	})
	t.Run("i8 dot accumulates and wraps to i8", func(t *testing.T) {
		// 127·127·2 = 32258 = 126·256 + 2 → 2 as an i8.
		p := refProgram(t, "K=2", `{"op": "einsum", "inputs": ["a", "b"], "output": "o"}`,
			hbm{"a", "input", "i8", "K"}, hbm{"b", "input", "i8", "K"}, hbm{"o", "output", "i8", "1"})
		e, err := Reference(p, map[string]*Logical{"a": logical(t, p, "a", 127, 127), "b": logical(t, p, "b", 127, 127)})
		require.NoError(t, err)
		assert.Equal(t, []float64{2}, e.Out.Vals)
	})
	t.Run("add of inputs, f32", func(t *testing.T) {
		p := refProgram(t, "A=2, B=2", `{"op": "add", "inputs": ["x", "y"], "output": "z"}`,
			hbm{"x", "input", "f32", "A, B"}, hbm{"y", "input", "f32", "B"}, hbm{"z", "output", "f32", "A, B"})
		e, err := Reference(p, map[string]*Logical{"x": logical(t, p, "x", 1, 2, 3, 4), "y": logical(t, p, "y", 10, -20)})
		require.NoError(t, err)
		assert.Equal(t, []float64{11, -18, 13, -16}, e.Out.Vals)
		assert.Equal(t, []float64{11, 22, 13, 24}, e.Abs.Vals)
		assert.Equal(t, 1, e.Depth)
	})
}

func TestReferenceErrors(t *testing.T) {
	dot := func() *kernel.Program {
		return refProgram(t, "K=3", `{"op": "einsum", "inputs": ["a", "b"], "output": "o"}`,
			hbm{"a", "input", "bf16", "K"}, hbm{"b", "input", "bf16", "K"}, hbm{"o", "output", "bf16", "1"})
	}
	p := dot()
	good := func() map[string]*Logical {
		return map[string]*Logical{"a": logical(t, p, "a", 1, 2, 3), "b": logical(t, p, "b", 1, 2, 3)}
	}
	for _, tc := range []struct {
		name string
		edit func(map[string]*Logical)
		want string
	}{
		{"missing input", func(m map[string]*Logical) { delete(m, "b") }, `no values for input "b"`},
		{"wrong dtype", func(m map[string]*Logical) { m["a"].DType = dtype.F32 }, `input "a": values are f32, the tensor is bf16`},
		{"wrong shape", func(m map[string]*Logical) { m["a"].Vals = m["a"].Vals[:2] }, `input "a": values have axes [K=3] and 2 elements`},
		{"not a bf16", func(m map[string]*Logical) { m["b"].Vals[1] = 1.001 }, `input "b" at {K: 1}: 1.001 is not a bf16 value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.edit(m)
			_, err := Reference(p, m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("elementwise with a reduced axis", func(t *testing.T) {
		q := refProgram(t, "A=2, B=2", `{"op": "mul", "inputs": ["x", "y"], "output": "z"}`,
			hbm{"x", "input", "i32", "A, B"}, hbm{"y", "input", "i32", "A, B"}, hbm{"z", "output", "i32", "A"})
		_, err := Reference(q, map[string]*Logical{"x": logical(t, q, "x"), "y": logical(t, q, "y")})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `input "x" has axis B, which the output "z" lacks`)
	})
	t.Run("mixed families", func(t *testing.T) {
		q := refProgram(t, "A=2", `{"op": "mul", "inputs": ["x", "y"], "output": "z"}`,
			hbm{"x", "input", "i32", "A"}, hbm{"y", "input", "f32", "A"}, hbm{"z", "output", "i32", "A"})
		_, err := Reference(q, map[string]*Logical{"x": logical(t, q, "x"), "y": logical(t, q, "y")})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "all be floats or all integers")
	})
	t.Run("three inputs", func(t *testing.T) {
		q := refProgram(t, "A=2", `{"op": "einsum", "inputs": ["x", "y", "w"], "output": "z"}`,
			hbm{"x", "input", "f32", "A"}, hbm{"y", "input", "f32", "A"}, hbm{"w", "input", "f32", "A"}, hbm{"z", "output", "f32", "1"})
		_, err := Reference(q, map[string]*Logical{"x": logical(t, q, "x"), "y": logical(t, q, "y"), "w": logical(t, q, "w")})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "want 1 or 2")
	})
	t.Run("no reference", func(t *testing.T) {
		q := dot()
		q.Reference = nil
		_, err := Reference(q, good())
		require.Error(t, err)
	})
}

// naiveEinsum computes an einsum the slow, obvious way: for every output
// element, walk every assignment of the contracted axes and look the inputs
// up by tensor index. Integers are summed exactly in big.Int and wrapped at
// the end.
func naiveEinsum(p *kernel.Program, out *Logical, ins []*Logical) (vals, abs []float64) {
	var contracted []mapping.Axis
	for _, ax := range p.Axes.List() {
		inOut := false
		for _, a := range out.Axes {
			inOut = inOut || a.Name == ax.Name
		}
		inIn := false
		for _, in := range ins {
			for _, a := range in.Axes {
				inIn = inIn || a.Name == ax.Name
			}
		}
		if inIn && !inOut {
			contracted = append(contracted, ax)
		}
	}
	vals, abs = make([]float64, out.Len()), make([]float64, out.Len())
	isInt := out.DType.IsInt()
	for o := range out.Vals {
		oc := out.Coords(o, nil)
		cc := make([]int, len(contracted))
		sum, mag := 0.0, 0.0
		bsum := new(big.Int)
		for {
			var coords []mapping.Coord
			for k, a := range out.Axes {
				coords = append(coords, mapping.Coord{Axis: a.Name, Value: oc[k]})
			}
			for k, a := range contracted {
				coords = append(coords, mapping.Coord{Axis: a.Name, Value: cc[k]})
			}
			idx := mapping.IndexOf(coords...)
			prod, bprod := 1.0, big.NewInt(1)
			for _, in := range ins {
				off, ok := in.Offset(idx)
				if !ok {
					panic("bad index")
				}
				prod *= in.Vals[off]
				bprod.Mul(bprod, big.NewInt(int64(in.Vals[off])))
			}
			sum += prod
			mag += math.Abs(prod)
			bsum.Add(bsum, bprod)
			k := len(cc) - 1
			for ; k >= 0; k-- {
				cc[k]++
				if cc[k] < contracted[k].Size {
					break
				}
				cc[k] = 0
			}
			if k < 0 {
				break
			}
		}
		if isInt {
			bits := uint(out.DType.Bits())
			m := new(big.Int).Lsh(big.NewInt(1), bits)
			bsum.Mod(bsum, m)
			if bsum.Cmp(new(big.Int).Rsh(m, 1)) >= 0 {
				bsum.Sub(bsum, m)
			}
			vals[o] = float64(bsum.Int64())
		} else {
			vals[o], abs[o] = sum, mag
		}
	}
	return vals, abs
}

// TestReferenceRandomEinsums: random einsums with batch (in both inputs and
// the output), broadcast (an output axis an input lacks) and contracted
// axes, against naiveEinsum. Float values are small integers times powers of
// two, so float64 sums are exact in both and must agree exactly.
func TestReferenceRandomEinsums(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"A", "B", "C", "D", "E"}
	for iter := 0; iter < 150; iter++ {
		var decl []string
		for _, n := range names {
			decl = append(decl, fmt.Sprintf("%s=%d", n, 1+rng.Intn(5)))
		}
		pick := func(p float64) []string {
			var out []string
			for _, i := range rng.Perm(len(names)) {
				if rng.Float64() < p {
					out = append(out, names[i])
				}
			}
			return out
		}
		elem := func(axes []string) string {
			if len(axes) == 0 {
				return "1"
			}
			return strings.Join(axes, ", ")
		}
		a, b, o := pick(0.6), pick(0.6), pick(0.5)
		nIn := 1 + rng.Intn(2)
		dt := []string{"bf16", "f32", "i8", "i32"}[rng.Intn(4)]
		outDT := dt
		if dt == "i8" {
			outDT = "i32"
		}
		ts := []hbm{{"a", "input", dt, elem(a)}}
		inputs := `["a"]`
		if nIn == 2 {
			ts = append(ts, hbm{"b", "input", dt, elem(b)})
			inputs = `["a", "b"]`
		}
		ts = append(ts, hbm{"o", "output", outDT, elem(o)})
		p := refProgram(t, strings.Join(decl, ", "), `{"op": "einsum", "inputs": `+inputs+`, "output": "o"}`, ts...)
		m := map[string]*Logical{}
		var ins []*Logical
		for _, x := range ts[:nIn] {
			l := logical(t, p, x.name)
			for i := range l.Vals {
				switch dt {
				case "i8":
					l.Vals[i] = float64(rng.Intn(256) - 128)
				case "i32":
					l.Vals[i] = float64(int32(rng.Uint32()))
				default:
					l.Vals[i] = float64(rng.Intn(33)-16) * math.Ldexp(1, rng.Intn(9)-4)
				}
			}
			m[x.name] = l
			ins = append(ins, l)
		}
		e, err := Reference(p, m)
		require.NoError(t, err, "iter %d", iter)
		vals, abs := naiveEinsum(p, logical(t, p, "o"), ins)
		require.Equal(t, vals, e.Out.Vals, "iter %d: %s %v", iter, p.Axes, ts)
		if e.Abs != nil {
			require.Equal(t, abs, e.Abs.Vals, "iter %d", iter)
		}
		// ReferenceFor (Verify with sampled slices): the same values at
		// the marked elements, zero elsewhere, the same rounding depth.
		need := make([]bool, len(vals))
		for i := range need {
			need[i] = rng.Intn(2) == 0
		}
		ef, err := ReferenceFor(p, m, need)
		require.NoError(t, err, "iter %d", iter)
		assert.Equal(t, e.Depth, ef.Depth, "iter %d", iter)
		assert.Equal(t, e.Ops, ef.Ops, "iter %d", iter)
		for i := range need {
			want, wantAbs := 0.0, 0.0
			if need[i] {
				want, wantAbs = vals[i], abs[i]
			}
			require.Equal(t, want, ef.Out.Vals[i], "iter %d element %d", iter, i)
			if ef.Abs != nil {
				require.Equal(t, wantAbs, ef.Abs.Vals[i], "iter %d element %d", iter, i)
			}
		}
	}
}

// TestReferenceHelloKernels: the golden kernels' references run and have the
// output's shape.
func TestReferenceHelloKernels(t *testing.T) {
	for _, name := range []string{"hello-dot", "hello-gemv", "hello-add", "hello-mul"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile("../workloads/kernels/" + name + ".json")
			require.NoError(t, err)
			var p kernel.Program
			require.NoError(t, json.Unmarshal(data, &p))
			m := map[string]*Logical{}
			for _, in := range p.Reference.Inputs {
				l := logical(t, &p, in)
				for i := range l.Vals {
					l.Vals[i] = float64(i%7 - 3)
				}
				m[in] = l
			}
			e, err := Reference(&p, m)
			require.NoError(t, err)
			assert.Equal(t, logical(t, &p, p.Reference.Output).Len(), e.Out.Len())
		})
	}
}

// BenchmarkReferenceGEMM: the Hello GEMM reference (512×512×1024 bf16).
func BenchmarkReferenceGEMM(b *testing.B) {
	data, err := os.ReadFile("../workloads/kernels/hello-gemm.json")
	require.NoError(b, err)
	var p kernel.Program
	require.NoError(b, json.Unmarshal(data, &p))
	rng := rand.New(rand.NewSource(1))
	m := map[string]*Logical{}
	for _, in := range p.Reference.Inputs {
		l := logical(b, &p, in)
		for i := range l.Vals {
			l.Vals[i] = dtype.Round(rng.NormFloat64(), dtype.BF16)
		}
		m[in] = l
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Reference(&p, m); err != nil {
			b.Fatal(err)
		}
	}
}
