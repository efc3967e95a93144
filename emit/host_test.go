package emit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// oracleProgram is a small kernel program around a reference whose HBM
// layouts pad, split and transpose axes: its kernel part is only text (it
// is not lowered), its host oracle is what the tests run.
func oracleProgram(t testing.TB, axes, dt string, ins []string, layouts []string, outLayout string, ref string) *kernel.Program {
	t.Helper()
	var ts, ops []string
	for i, name := range ins {
		ts = append(ts, fmt.Sprintf(`{"name": %q, "mem": "hbm", "dtype": %q, "role": "input", "chip": "1", "element": %q, "addr": %d}`,
			name, dt, layouts[i], int64(i)<<28))
		ts = append(ts, fmt.Sprintf(`{"name": "%s_dm", "mem": "dm", "dtype": %q, "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": %q, "addr": %d}`,
			name, dt, layouts[i], int64(i)<<16))
		ops = append(ops, fmt.Sprintf(`{"context": "dma", "kind": "to_dm", "src": %q, "dst": "%s_dm"}`, name, name))
	}
	ts = append(ts, fmt.Sprintf(`{"name": "out", "mem": "hbm", "dtype": %q, "role": "output", "chip": "1", "element": %q, "addr": %d}`, dt, outLayout, int64(len(ins))<<28),
		fmt.Sprintf(`{"name": "res", "mem": "dm", "dtype": %q, "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": %q, "addr": %d}`, dt, outLayout, int64(len(ins))<<16))
	ops = append(ops, fmt.Sprintf(`{"context": "main", "kind": "chain", "stages": [
		{"kind": "begin", "tensor": "%s_dm"}, {"kind": "fetch", "dtype": %q, "time": "1", "packet": "1 # 8"},
		{"kind": "collect", "time": "1", "packet": "1 # 8"}, {"kind": "commit", "tensor": "res"}]}`, ins[0], dt),
		`{"context": "dma", "kind": "to_hbm", "src": "res", "dst": "out"}`)
	src := fmt.Sprintf(`{"name": "oracle-test", "axes": %q, "chips": 1, "tensors": [%s], "ops": [%s], "reference": %s}`,
		axes, strings.Join(ts, ",\n"), strings.Join(ops, ",\n"), ref)
	return parseProgram(t, src)
}

// oracleSource extracts the host oracle and its helpers from an emitted
// file: plain Rust over std and the library's Opt (memory_tensor.rs), which
// a stand-in of the same shape replaces.
func oracleSource(t testing.TB, src string) string {
	t.Helper()
	i := strings.Index(src, "/// The host oracle")
	j := strings.Index(src, "#[device")
	require.True(t, i >= 0 && j > i, "oracle section")
	return "#![allow(dead_code)]\n#[derive(Clone, Copy)]\nenum Opt<T> { Init(T), Uninit }\n" + src[i:j]
}

// buffer lays values out in a tensor's host layout: position p holds
// value(index) for a live cell and pad for padding.
func buffer(t testing.TB, p *kernel.Program, name string, value func(mapping.Index) string, pad string) []string {
	t.Helper()
	tt, ok := p.Tensor(name)
	require.True(t, ok)
	e := hostMap(tt)
	out := make([]string, e.Size())
	for i := range out {
		c := e.Map(i)
		if c.Kind == mapping.Live {
			out[i] = value(c.Index)
		} else {
			out[i] = pad
		}
	}
	return out
}

// runRust compiles a Rust program with rustc and returns its output lines.
func runRust(t *testing.T, src string) []string {
	t.Helper()
	rustc, err := exec.LookPath("rustc")
	if err != nil {
		t.Skip("rustc is not installed")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "oracle.rs")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	bin := filepath.Join(dir, "oracle")
	out, err := exec.Command(rustc, "--edition", "2021", "-o", bin, file).CombinedOutput()
	require.NoError(t, err, "rustc: %s\n%s", out, src)
	out, err = exec.Command(bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.Fields(string(out))
}

// TestHostOracleFloat runs the emitted float oracle of an einsum whose
// layouts pad (`K, I # 4`), split (`J / 2, K, J % 2`) and transpose
// (`J, I`), and compares it with the einsum computed here from the
// definition; padding must never be read (it holds a NaN).
func TestHostOracleFloat(t *testing.T) {
	p := oracleProgram(t, "I=3, J=4, K=5", "bf16", []string{"a", "b"}, []string{"K, I # 4", "J / 2, K, J % 2"}, "J, I # 4",
		`{"op": "einsum", "inputs": ["a", "b"], "output": "out"}`)
	src, err := Rust(p, RustOptions{})
	require.NoError(t, err)
	av := func(x mapping.Index) float64 { return float64(x.Get("I")*10 + x.Get("K") + 1) }
	bv := func(x mapping.Index) float64 { return float64(x.Get("J") - 2*x.Get("K")) }
	f := func(g func(mapping.Index) float64) func(mapping.Index) string {
		return func(x mapping.Index) string { return strconv.FormatFloat(g(x), 'f', 1, 64) }
	}
	a := buffer(t, p, "a", f(av), "f64::NAN")
	b := buffer(t, p, "b", f(bv), "f64::NAN")
	main := fmt.Sprintf(`
fn main() {
    let a: Vec<f64> = vec![%s];
    let b: Vec<f64> = vec![%s];
    for w in oracle(&a, &b) {
        match w {
            Some((v, abs)) => println!("{:?}/{:?}", v, abs),
            None => println!("pad"),
        }
    }
}
`, strings.Join(a, ", "), strings.Join(b, ", "))
	got := runRust(t, oracleSource(t, string(src))+main)
	want := buffer(t, p, "out", func(x mapping.Index) string {
		var s, abs float64
		for k := 0; k < 5; k++ {
			idx := mapping.IndexOf(mapping.Coord{Axis: "I", Value: x.Get("I")}, mapping.Coord{Axis: "K", Value: k})
			jdx := mapping.IndexOf(mapping.Coord{Axis: "J", Value: x.Get("J")}, mapping.Coord{Axis: "K", Value: k})
			s += av(idx) * bv(jdx)
			abs += abs1(av(idx) * bv(jdx))
		}
		return fmt.Sprintf("%s/%s", rustFloat(s), rustFloat(abs))
	}, "pad")
	assert.Equal(t, want, got)
	// The check's tolerance: an einsum over K = 5 terms rounds 5 times
	// (verify.Expected.Depth), bf16 has 8 significant bits.
	assert.Contains(t, string(src), "check_floats(&floats(&out.to_buf()), &want, 5.0, 0.0078125);")
}

func abs1(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// rustFloat prints v as Rust's {:?} does for these small integral values.
func rustFloat(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// TestHostOracleInt runs the emitted integer oracles: add with a scalar on
// i8 wraps (127 + 100 = -29), mul on i32 wraps.
func TestHostOracleInt(t *testing.T) {
	t.Run("add i8", func(t *testing.T) {
		p := oracleProgram(t, "A=2, B=3", "i8", []string{"x"}, []string{"B, A"}, "A # 4, B",
			`{"op": "add", "inputs": ["x"], "output": "out", "scalar": 100}`)
		src, err := Rust(p, RustOptions{})
		require.NoError(t, err)
		xv := func(x mapping.Index) int64 { return int64(120 + x.Get("A")*3 + x.Get("B")) }
		x := buffer(t, p, "x", func(i mapping.Index) string { return strconv.FormatInt(xv(i), 10) }, "i64::MIN")
		got := runRust(t, oracleSource(t, string(src))+fmt.Sprintf(`
fn main() {
    let x: Vec<i64> = vec![%s];
    for w in oracle(&x) {
        match w {
            Some(v) => println!("{}", v),
            None => println!("pad"),
        }
    }
}
`, strings.Join(x, ", ")))
		want := buffer(t, p, "out", func(i mapping.Index) string { return strconv.Itoa(int(int8(xv(i) + 100))) }, "pad")
		assert.Equal(t, want, got)
	})
	t.Run("mul i32", func(t *testing.T) {
		p := oracleProgram(t, "A=4", "i32", []string{"x", "y"}, []string{"A", "A"}, "A",
			`{"op": "mul", "inputs": ["x", "y"], "output": "out"}`)
		src, err := Rust(p, RustOptions{})
		require.NoError(t, err)
		vals := []int64{1 << 20, -(1 << 30), 2147483647, -7}
		v := func(i mapping.Index) string { return strconv.FormatInt(vals[i.Get("A")], 10) }
		x := buffer(t, p, "x", v, "0")
		got := runRust(t, oracleSource(t, string(src))+fmt.Sprintf(`
fn main() {
    let x: Vec<i64> = vec![%s];
    for w in oracle(&x, &x) {
        println!("{}", w.unwrap());
    }
}
`, strings.Join(x, ", ")))
		var want []string
		for _, a := range vals {
			want = append(want, strconv.Itoa(int(int32(a)*int32(a))))
		}
		assert.Equal(t, want, got)
	})
}

// TestRustSyntax parses every emitted golden file with rustfmt (a full Rust
// parser), when it is installed.
func TestRustSyntax(t *testing.T) {
	rustfmt, err := exec.LookPath("rustfmt")
	if err != nil {
		t.Skip("rustfmt is not installed")
	}
	for _, name := range goldenKernels {
		src, err := Rust(loadGolden(t, name), RustOptions{Version: "test"})
		require.NoError(t, err)
		cmd := exec.Command(rustfmt, "--edition", "2021", "--emit", "stdout")
		cmd.Stdin = strings.NewReader(string(src))
		out, err := cmd.CombinedOutput()
		assert.NoError(t, err, "%s: %s", name, out)
	}
}
