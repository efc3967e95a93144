package workload

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
)

const shipped = "../../workloads"

func load(t *testing.T, name string) *Workload {
	t.Helper()
	w, err := Load(filepath.Join(shipped, name))
	require.NoError(t, err)
	return w
}

// einsumMACs sums the iteration spaces of the einsum ops, computed here from
// the axis sizes and the operands (independently of Op.Iter).
func einsumMACs(t *testing.T, w *Workload) int64 {
	t.Helper()
	var n int64
	for _, op := range w.Ops {
		if op.Kind != KindEinsum {
			continue
		}
		m := int64(1)
		for _, a := range op.Einsum.Axes() {
			s, ok := w.AxisSize(a)
			require.True(t, ok, a)
			m *= s
		}
		n += m
	}
	return n
}

func TestShippedWorkloadsValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(shipped, "*.yaml"))
	require.NoError(t, err)
	want := []string{"attention-head.yaml", "bmm.yaml", "dot.yaml", "gemm-4k.yaml", "gemm.yaml", "gemv.yaml",
		"llama3-70b-decode.yaml", "llama3-70b-prefill.yaml", "moe.yaml"}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
		w, err := Load(f)
		if assert.NoError(t, err, f) {
			s := w.Summary()
			assert.Positive(t, s.FLOPs, f)
			assert.Positive(t, s.MinBytes, f)
			assert.Equal(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), w.Name, "name matches the file name")
		}
	}
	assert.Subset(t, got, want)
}

// The Hello, TCP! contractions: shapes and dtypes of 002 L300-L530.
func TestHelloContractions(t *testing.T) {
	bf16 := int64(2) // bytes, 002 L335
	for _, c := range []struct {
		file            string
		einsum          string
		contracted      []string
		flops, minBytes int64
	}{
		// dot: axes![A = 2048] (002 L315), I, I -> 1 (002 L114).
		{"dot.yaml", "A,A->", []string{"A"}, 2 * 2048, (2048 + 2048 + 1) * bf16},
		// gemv: axes![I = 256, J = 2048] (002 L410), IJ, J -> I (002 L115).
		{"gemv.yaml", "IJ,J->I", []string{"J"}, 2 * 256 * 2048, (256*2048 + 2048 + 256) * bf16},
		// gemm: axes![I = 512, J = 512, K = 2048] (002 L479), IK, KJ -> IJ (002 L116).
		{"gemm.yaml", "IK,KJ->IJ", []string{"K"}, 2 * 512 * 512 * 2048, (512*2048 + 2048*512 + 512*512) * bf16},
		{"gemm-4k.yaml", "IK,KJ->IJ", []string{"K"}, 2 * 4096 * 4096 * 4096, 3 * 4096 * 4096 * bf16},
		// bmm: VMK, VNK -> VMN (002 L3710), V=32 M=32 K=32 N=8*3 (002 L3716-L3719).
		{"bmm.yaml", "VMK,VNK->VMN", []string{"K"}, 2 * 32 * 32 * 24 * 32, (32*32*32 + 32*24*32 + 32*32*24) * bf16},
	} {
		w := load(t, c.file)
		s := w.Summary()
		assert.Equal(t, FormEinsum, s.Form, c.file)
		assert.Equal(t, c.einsum, s.Einsum, c.file)
		assert.Equal(t, c.contracted, w.Ops[0].Einsum.Contracted(), c.file)
		assert.Equal(t, c.flops, s.FLOPs, c.file)
		assert.Equal(t, c.minBytes, s.MinBytes, c.file)
		assert.Equal(t, 1, s.Chips, c.file) // #[device(chip = 1)], 002 L332, L432, L490
		assert.Equal(t, &EinsumDTypes{In: dtype.BF16, Acc: dtype.F32, Out: dtype.BF16}, w.DTypes, c.file)
	}
	w := load(t, "gemm.yaml")
	require.NotNil(t, w.Tensor(EinsumIn0).LayoutExpr)
	assert.Equal(t, "I, K", w.Tensor(EinsumIn0).LayoutExpr.String())
}

// MAC counts of one Llama 3 70B layer against the catalog's independent
// derivation (shared/spec/vector-and-kernels.md §8.6.4, from 002 L7986-L7991):
// projections B·S·855,638,016, RoPE B·S·18,432, scores + weighted sum
// B·S²·16,384 (prefill) or B·Sctx·16,384 (decode).
func TestLlamaMACs(t *testing.T) {
	w := load(t, "llama3-70b-prefill.yaml")
	B, _ := w.AxisSize("B")
	S, _ := w.AxisSize("S")
	assert.Equal(t, B*S*855638016+B*S*18432+B*S*S*16384, einsumMACs(t, w))
	assert.Equal(t, []string{"kv_cache_K", "kv_cache_V", "x_l"}, w.Summary().Outputs)

	w = load(t, "llama3-70b-decode.yaml")
	B, _ = w.AxisSize("B")
	Sctx, _ := w.AxisSize("Sctx")
	assert.Equal(t, B*855638016+B*18432+B*Sctx*16384, einsumMACs(t, w))
	// The cache update writes one row per head (2·Hkv·Dk = 2048 values per
	// batch element, §8.6.4) instead of the whole cache.
	weights := int64(855638016) * 2
	cache := 2 * B * 8 * Sctx * 128 * 2
	acts := 2 * B * 8192 * 2 // x_prev in, x_l out
	rope := int64(8192*64*2*2)*2 + 4
	assert.Equal(t, weights+cache+acts+rope+B*2048*2, w.MinBytes())
}

// The MoE grid is the worst case the compiler allocates, (T*K - E)/B + E
// (002 L8617), rounded up to whole 256-byte HBM units of a row of i32
// (002 L2983-2985; docs/spec-decisions.md "The MoE's grid: 256 blocks").
func TestMoEGrid(t *testing.T) {
	w := load(t, "moe.yaml")
	size := func(a string) int64 { s, ok := w.AxisSize(a); require.True(t, ok, a); return s }
	worst := (size("T")*size("K")-size("E"))/size("BLK") + size("E")
	const unit = 256 / 4 // i32 block ids a 256-byte unit
	assert.Equal(t, (worst+unit-1)/unit*unit, size("GRID"), "the worst case %d rounded up to %d blocks", worst, unit)
	assert.Equal(t, []string{"moe_out"}, w.Summary().Outputs)
}

func TestInvalidFiles(t *testing.T) {
	for _, c := range []struct {
		file  string
		where string // file:line:col: field
		msg   string
	}{
		{"unknown_axis.yaml", "2:13: einsum", "unknown axis Q"},
		{"repeated_output_axis.yaml", "2:17: einsum", "axis I repeated in the output"},
		{"output_axis_not_in_input.yaml", "3:48: einsum.output[1]", "output axis L is in no input"},
		{"multi_letter_compact.yaml", "2:13: einsum", "space inside an operand"},
		{"multi_letter_glued.yaml", "2:11: einsum", "multi-letter axes such as Dk need the list form"},
		{"unknown_dtype.yaml", "5:7: dtype.in", `unknown dtype "bf17"`},
		{"wrong_acc.yaml", "4:22: dtype.acc", "a i8 contraction accumulates in i32, not f32"},
		{"unknown_field.yaml", "6:1: batch", "unknown field"},
		{"missing_chips.yaml", "1:1: chips", "missing required field"},
		{"unused_axis.yaml", "3:26: axes.L", "axis declared but not used"},
		{"layout_size.yaml", "7:8: layouts.in0", "size mismatch: layout m![I / 2, K] has 16 positions"},
		{"layout_syntax.yaml", "7:14: layouts.in1", `unknown axis "Q"`},
		{"graph_unknown_kind.yaml", "8:23: ops[0].kind", `unknown op kind "gelu"`},
		{"graph_cycle.yaml", "9:42: ops[0].inputs[1]", "cycle: ops [first, second]"},
		{"graph_used_before.yaml", "9:39: ops[0].inputs[0]", "tensor a used before it is produced (by op second, line 10"},
		{"graph_missing_tensor.yaml", "10:17: ops[0].inputs[1]", "unknown tensor bias"},
		{"graph_wrong_arity.yaml", "10:13: ops[0].inputs", "wrong arity: silu takes 1 inputs, got 2"},
		{"graph_reduction_axis.yaml", "9:12: ops[0].axis", "reduction axis T not present in input s [S, D]"},
		{"graph_size_mismatch.yaml", "13:10: ops[0].key", "size mismatch: query S is 4, key T is 8"},
		{"graph_unused_tensor.yaml", "7:3: tensors.spare", "tensor declared but not used"},
		{"graph_einsum_dtypes.yaml", "9:42: ops[0].inputs[1]", "einsum inputs share one element type"},
		{"graph_tensor_unknown_axis.yaml", "6:17: tensors.y.axes[1]", "unknown axis E"},
		{"graph_reshape_mismatch.yaml", "8:57: ops[0].outputs[0]", "size mismatch: reshape of x [S, D] (32 elements) to y [S, H, Dh] (16 elements)"},
		{"graph_produced_twice.yaml", "9:53: ops[1].outputs[0]", "tensor y is produced twice (also by op a, line 8)"},
		{"graph_values_kind.yaml", "6:51: tensors.mask.values.kind", `unknown values kind "triangle" (causal, prefix, iota)`},
		{"graph_values_iota_axes.yaml", "6:63: tensors.pos.values.axis", "an iota over E is a tensor over E alone, not pos [T, E]"},
		{"graph_values_iota_field.yaml", "6:63: tensors.pos.values.query", "values of kind iota take no query"},
		{"graph_one_hot_positions.yaml", "9:50: ops[0].inputs[1]", "the positions pos must have values {kind: iota, axis: E}"},
		{"graph_values_axis.yaml", "6:74: tensors.mask.values.key", "axis D not present in tensor mask [S, T]"},
		{"graph_values_produced.yaml", "8:49: ops[0].outputs[0]", "tensor mask has values {kind: causal, query: S, key: T}: an input, not produced by an op"},
		{"graph_causal_mask_values.yaml", "9:51: ops[0].inputs[1]", "the mask bias must have values {kind: causal, query: S, key: T}"},
		{"graph_causal_mask_arity.yaml", "8:47: ops[0].inputs", "wrong arity: causal_mask takes 1 to 2 inputs, got 3"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", c.file)
			w, err := Load(path)
			require.Error(t, err)
			assert.Nil(t, w)
			var list ErrorList
			require.True(t, errors.As(err, &list))
			prefix := path + ":" + c.where + ": "
			found := false
			for _, e := range list {
				if strings.HasPrefix(e.Error(), prefix) && strings.Contains(e.Msg, c.msg) {
					found = true
				}
			}
			assert.True(t, found, "want %q ... %q in\n%v", prefix, c.msg, err)
		})
	}
}

func TestYAMLSyntaxError(t *testing.T) {
	_, err := Load("testdata/yaml_syntax.yaml")
	require.Error(t, err)
	var list ErrorList
	require.True(t, errors.As(err, &list))
	require.Len(t, list, 1)
	// The flow mapping opened on line 3 is never closed; yaml.v3 reports
	// the line and no column.
	assert.Equal(t, "testdata/yaml_syntax.yaml", list[0].File)
	assert.Equal(t, 3, list[0].Line)
	assert.Equal(t, "did not find expected ',' or '}'", list[0].Msg)
	assert.Equal(t, "yaml", list[0].Field)
}

func TestEveryErrorReported(t *testing.T) {
	src := `name: bad
chips: 0
axes: {S: 4, d: 8}
tensors:
  x: {axes: [S], dtype: bf16, shape: [4]}
ops:
  - {name: a, kind: exp, inputs: [x], outputs: [y]}
`
	_, err := Parse([]byte(src), "mem.yaml")
	var list ErrorList
	require.True(t, errors.As(err, &list))
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	assert.Equal(t, []string{
		"mem.yaml:2:8: chips: 0 out of range [1, 1048576]",
		`mem.yaml:3:14: axes: bad axis name "d" (an uppercase letter, then letters, digits or _, as in m![...])`,
		"mem.yaml:5:31: tensors.x.shape: unknown field (allowed: axes, dtype, layout, values)",
	}, got)
}

func TestRejectedInputs(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"empty", "", "m.yaml: empty file"},
		{"comment only", "# nothing\n", "m.yaml: empty file"},
		{"syntax on line 1", "name: a: b\n", "m.yaml:1: yaml: mapping values are not allowed in this context"}, // yaml.v3 prints no line
		{"broken second document", "name: a\n---\nname: [b\n", "m.yaml:3: yaml: did not find expected ',' or ']'"},
		{"two documents", "name: a\n---\nname: b\n", "m.yaml:2:1: more than one YAML document"},
		{"not a mapping", "- 1\n", "m.yaml:1:1: must be a mapping, got a list"},
		{"neither form", "name: a\nchips: 1\n", "m.yaml:1:1: einsum: missing: a workload has einsum (single einsum) or ops (graph)"},
		{"both forms", "einsum: I,I->\nops: []\n", "m.yaml:2:1: ops: a workload has either einsum"},
		{"alias", "name: &n a\neinsum: *n\naxes: {A: 1}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", "m.yaml:2:9: einsum: YAML aliases are not supported"},
		{"repeated key", "name: a\nname: b\n", "m.yaml:2:1: name: repeated key (first at line 1)"},
		{"axis too big", "name: a\neinsum: A,A->\naxes: {A: 1099511627777}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", "m.yaml:3:11: axes.A: 1099511627777 out of range [1, 1099511627776]"},
		{"tensor too big", "name: a\neinsum: AB,BC->AC\naxes: {A: 1099511627776, B: 1099511627776, C: 1}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", "m.yaml:2:9: einsum: tensor in0 has more than"},
		{"odd i4", "name: a\neinsum: A,A->\naxes: {A: 3}\ndtype: {in: i4, acc: i32, out: i32}\nchips: 1\n", "m.yaml:2:9: einsum: tensor in0: BytesFor: 3 i4 elements"},
		{"staging dtype", "name: a\neinsum: A,A->\naxes: {A: 2}\ndtype: {in: i5, acc: i32, out: i32}\nchips: 1\n", "m.yaml:4:13: dtype.in: i5 is not a storage type"},
		{"f32 contraction", "name: a\neinsum: A,A->\naxes: {A: 2}\ndtype: {in: f32, acc: f32, out: f32}\nchips: 1\n", "m.yaml:4:13: dtype.in: f32 cannot be a contraction input"},
		{"one operand", "name: a\neinsum: AB->A\naxes: {A: 2, B: 2}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", "m.yaml:2:9: einsum: an einsum takes 2 inputs (002 L110), got 1"},
		{"alias of alias", "name: a\neinsum: A,B->\naxes: {A: 2, B: A, C: B}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n", "m.yaml:3:23: axes.C: axis B is itself an alias"},
		{"unknown layout tensor", "name: a\neinsum: A,A->\naxes: {A: 2}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\nlayouts: {in2: \"m![A]\"}\n", "m.yaml:6:11: layouts.in2: unknown tensor in2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), "m.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// Each kind's shape rule rejects a wrong output and accepts a right one.
func TestKindShapeRules(t *testing.T) {
	head := "name: g\nchips: 1\naxes: {T: 4, E: 8, K: 2, G: 3, B: 2, D: 4}\ntensors:\n"
	for _, c := range []struct {
		name    string
		tensors string
		op      string
		want    string // "" = valid
	}{
		{"topk ok", "  s: {axes: [T, E], dtype: bf16}\n  v: {axes: [T, K], dtype: bf16}\n  i: {axes: [T, K], dtype: i32}\n",
			"{name: o, kind: topk, inputs: [s], outputs: [v, i], axis: E, k: K}", ""},
		{"topk float indices", "  s: {axes: [T, E], dtype: bf16}\n  v: {axes: [T, K], dtype: bf16}\n  i: {axes: [T, K], dtype: bf16}\n",
			"{name: o, kind: topk, inputs: [s], outputs: [v, i], axis: E, k: K}", "indices i must have an integer dtype"},
		{"topk k too big", "  s: {axes: [T, K], dtype: bf16}\n  v: {axes: [T, E], dtype: bf16}\n  i: {axes: [T, E], dtype: i32}\n",
			"{name: o, kind: topk, inputs: [s], outputs: [v, i], axis: K, k: E}", "size mismatch: keeps E = 8 of only K = 2"},
		{"reduce ok", "  s: {axes: [T, E], dtype: bf16}\n  r: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: reduce, inputs: [s], outputs: [r], op: sum, axes: [E]}", ""},
		{"reduce keeps axis", "  s: {axes: [T, E], dtype: bf16}\n  r: {axes: [T, E], dtype: bf16}\n",
			"{name: o, kind: reduce, inputs: [s], outputs: [r], op: sum, axes: [E]}", "output r [T, E] must have axes [T]"},
		{"reduce bad op", "  s: {axes: [T, E], dtype: bf16}\n  r: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: reduce, inputs: [s], outputs: [r], op: mean, axes: [E]}", `unknown reduce op "mean"`},
		{"reduce axis absent", "  s: {axes: [T], dtype: bf16}\n  r: {axes: [], dtype: bf16}\n",
			"{name: o, kind: reduce, inputs: [s], outputs: [r], op: sum, axes: [T, E]}", "reduction axis E not present in input s [T]"},
		{"broadcast add ok", "  a: {axes: [T, E], dtype: i32}\n  b: {axes: [E], dtype: i32}\n  c: {axes: [T, E], dtype: i32}\n",
			"{name: o, kind: add, inputs: [a, b], outputs: [c]}", ""},
		{"add reduces", "  a: {axes: [T, E], dtype: i32}\n  c: {axes: [T], dtype: i32}\n",
			"{name: o, kind: add, inputs: [a], outputs: [c], scalar: 1}", "elementwise ops broadcast, they do not reduce"},
		{"add invents axis", "  a: {axes: [T], dtype: i32}\n  c: {axes: [T, E], dtype: i32}\n",
			"{name: o, kind: add, inputs: [a], outputs: [c], scalar: 1}", "output axes [E] are in no input"},
		{"scalar not allowed", "  a: {axes: [T], dtype: bf16}\n  c: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: exp, inputs: [a], outputs: [c], scalar: 1}", "ops[0].scalar: unknown field"},
		{"scalar nan", "  a: {axes: [T], dtype: bf16}\n  c: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: mul, inputs: [a], outputs: [c], scalar: .nan}", "must be finite"},
		{"cast same", "  a: {axes: [T], dtype: bf16}\n  c: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: cast, inputs: [a], outputs: [c]}", "cast from bf16 to the same dtype"},
		{"one_hot ok", "  i: {axes: [T, K], dtype: i32}\n  m: {axes: [T, K, E], dtype: i32}\n",
			"{name: o, kind: one_hot, inputs: [i], outputs: [m], axis: E}", ""},
		{"one_hot float", "  i: {axes: [T, K], dtype: bf16}\n  m: {axes: [T, K, E], dtype: i32}\n",
			"{name: o, kind: one_hot, inputs: [i], outputs: [m], axis: E}", "index tensor i must have an integer dtype"},
		{"gather ok", "  w: {axes: [E, D], dtype: bf16}\n  i: {axes: [G], dtype: i32}\n  g: {axes: [G, D], dtype: bf16}\n",
			"{name: o, kind: gather, inputs: [w, i], outputs: [g], axes: [E]}", ""},
		{"gather wrong out", "  w: {axes: [E, D], dtype: bf16}\n  i: {axes: [G], dtype: i32}\n  g: {axes: [G, E, D], dtype: bf16}\n",
			"{name: o, kind: gather, inputs: [w, i], outputs: [g], axes: [E]}", "must have axes [G, D]"},
		{"scatter ok", "  x: {axes: [T, D], dtype: bf16}\n  i: {axes: [T, K], dtype: i32}\n  y: {axes: [G, B, D], dtype: bf16}\n",
			"{name: o, kind: scatter, inputs: [x, i], outputs: [y], axes: [G, B]}", ""},
		{"compact too many", "  x: {axes: [E], dtype: i32}\n  k: {axes: [E], dtype: i32}\n  y: {axes: [G, D], dtype: i32}\n",
			"{name: o, kind: compact, inputs: [x, k], outputs: [y], axes: [E]}", "size mismatch: compacts 8 elements per row into 12 slots"},
		{"update_slice ok", "  c: {axes: [T, D], dtype: bf16}\n  n: {axes: [D], dtype: bf16}\n  u: {axes: [T, D], dtype: bf16}\n",
			"{name: o, kind: update_slice, inputs: [c, n], outputs: [u], axis: T}", ""},
		{"update_slice bad slice", "  c: {axes: [T, D], dtype: bf16}\n  n: {axes: [T], dtype: bf16}\n  u: {axes: [T, D], dtype: bf16}\n",
			"{name: o, kind: update_slice, inputs: [c, n], outputs: [u], axis: T}", "slice n [T] must have axes [D]"},
		{"einsum output not in input", "  a: {axes: [T, E], dtype: bf16}\n  b: {axes: [E, K], dtype: bf16}\n  c: {axes: [T, D], dtype: bf16}\n",
			"{name: o, kind: einsum, inputs: [a, b], outputs: [c]}", "output axis D is in no input"},
		{"missing param", "  a: {axes: [T], dtype: bf16}\n  c: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: softmax, inputs: [a], outputs: [c]}", "ops[0].axis: missing required field"},
		{"param unknown axis", "  a: {axes: [T], dtype: bf16}\n  c: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: softmax, inputs: [a], outputs: [c], axis: Z}", "unknown axis Z"},
		{"self loop", "  a: {axes: [T], dtype: bf16}\n",
			"{name: o, kind: exp, inputs: [a], outputs: [a]}", "cycle: ops [o] depend on each other through tensor a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Declare every axis as used through a spare op-free reference: tensors
			// only use some axes, so unused-axis errors are filtered out here.
			src := head + c.tensors + "ops:\n  - " + c.op + "\n"
			_, err := Parse([]byte(src), "k.yaml")
			var list ErrorList
			if err != nil {
				require.True(t, errors.As(err, &list))
			}
			var msgs []string
			for _, e := range list {
				if e.Msg != "axis declared but not used" {
					msgs = append(msgs, e.Error())
				}
			}
			if c.want == "" {
				assert.Empty(t, msgs)
				return
			}
			assert.Contains(t, strings.Join(msgs, "\n"), c.want)
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, dir := range []string{shipped, "testdata"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(data, "fuzz.yaml")
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			for _, e := range list {
				if e.File != "fuzz.yaml" || e.Msg == "" {
					t.Fatalf("malformed error %#v", e)
				}
			}
			return
		}
		s := w.Summary()
		if s.FLOPs < 0 || s.MinBytes < 0 || len(w.Ops) == 0 {
			t.Fatalf("bad summary %+v", s)
		}
		// A valid graph expands into a valid graph (Expand parses what
		// it writes).
		if _, _, err := Expand(w); err != nil {
			t.Fatalf("expand: %v", err)
		}
	})
}

func TestKindsSorted(t *testing.T) {
	ks := Kinds()
	assert.Len(t, ks, len(kinds))
	for i := 1; i < len(ks); i++ {
		assert.Less(t, string(ks[i-1]), string(ks[i]))
	}
	assert.True(t, KindEinsum.IsContraction())
	assert.True(t, KindSoftmax.IsVector())
	assert.True(t, KindGather.IsData())
	assert.False(t, Kind("gelu").IsVector())
}

// BenchmarkParse measures validating the largest shipped graph.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(shipped, "llama3-70b-prefill.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "llama3-70b-prefill.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCausalValues: a tensor's values rule is read, and a causal mask
// holds 0 where the key is at most the query and −inf elsewhere (added
// to x, it is causal_mask's x where key <= query, 002 L8094).
func TestCausalValues(t *testing.T) {
	w, err := Parse([]byte(`name: masked
chips: 1
axes: {H: 2, S: 4, T: 4}
tensors:
  s:    {axes: [H, S, T], dtype: f32}
  mask: {axes: [S, T], dtype: f32, values: {kind: causal, query: S, key: T}}
  m:    {axes: [H, S, T], dtype: f32}
ops:
  - {name: causal, kind: causal_mask, inputs: [s, mask], outputs: [m], query: S, key: T}
`), "masked.yaml")
	require.NoError(t, err)
	v := w.Tensor("mask").Values
	require.NotNil(t, v)
	assert.Equal(t, Values{Kind: ValuesCausal, Query: "S", Key: "T"}, *v)
	assert.Equal(t, "{kind: causal, query: S, key: T}", v.Text())
	assert.Zero(t, v.At(2, 1))
	assert.Zero(t, v.At(2, 2))
	assert.True(t, math.IsInf(v.At(1, 2), -1))
	assert.Nil(t, w.Tensor("s").Values)
}
