package kernel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/mapping"
)

// TestParseRefExpr: the expression language of an expr reference
// (docs/spec-decisions.md "Expression references").
func TestParseRefExpr(t *testing.T) {
	for in, want := range map[string]string{
		"x + 100": "(x + 100)",
		"exp(x - reduce_max(x, C)) / reduce_sum(exp(x - reduce_max(x, C)), C)": "(exp((x - reduce_max(x, C))) / reduce_sum(exp((x - reduce_max(x, C))), C))",
		"-x * 2.0 + -1e-5":                       "(((-x) * 2.0) + (-1e-05))",
		"max(round(sigmoid(float(x + 100))), 0)": "max(round(sigmoid(float((x + 100)))), 0)",
		"a - b - c":                              "((a - b) - c)",
		"a / b * c":                              "((a / b) * c)",
		"sat_add(x, 2147483647)":                 "sat_add(x, 2147483647)",
		"x'":                                     "x'",
		"bf16(x * 3.0) * y":                      "(bf16((x * 3.0)) * y)",
		// The branchless top-k's packing (002 L8547-8590).
		"bit_or(bits(x), i)":                          "bit_or(bits(x), i)",
		"from_bits(bit_and(p, -65536))":               "from_bits(bit_and(p, (-65536)))",
		"bit_xor(p, bit_and(shr(p, 31), 2147418112))": "bit_xor(p, bit_and(shr(p, 31), 2147418112))",
		"shr(p + 1, 16) - bit_and(p, 65535) * 2":      "(shr((p + 1), 16) - (bit_and(p, 65535) * 2))",
	} {
		n, err := ParseRefExpr(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, n.String(), in)
		back, err := ParseRefExpr(n.String())
		require.NoError(t, err)
		assert.Equal(t, n.String(), back.String())
	}
	for in, msg := range map[string]string{
		"":                 "column 1: unexpected end",
		"x +":              "column 4: unexpected end",
		"foo(x)":           "column 1: unknown function foo",
		"max(x)":           "max takes 2 arguments",
		"exp(x, y)":        "exp takes 1 argument",
		"reduce_sum(x, 3)": "second argument is an axis",
		"(x":               "want ')'",
		"x y":              `unexpected "y"`,
		"2147483648":       "beyond i32",
		"1e":               "bad number",
		"x $ y":            `unexpected "$ y"`,
		"bits(x, y)":       "bits takes 1 argument",
		"from_bits()":      "unexpected",
		"bit_and(p)":       "bit_and takes 2 arguments",
		"bit_or(p, 1, 2)":  "bit_or takes 2 arguments",
		"bit_xor(p":        "bit_xor takes 2 arguments",
		"shr(p, 1":         "shr takes 2 arguments",
	} {
		_, err := ParseRefExpr(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

// TestValidateRefExpr: an expr reference names its inputs and declared
// axes only, and uses every input.
func TestValidateRefExpr(t *testing.T) {
	p := &Program{Name: "k", Chips: 1}
	var err error
	p.Axes, err = mapping.ParseAxes("A=8, R=4")
	require.NoError(t, err)
	p.Tensors = []*Tensor{
		{Name: "x", Mem: HBM, DType: 1, Role: Input},
		{Name: "y", Mem: HBM, DType: 1, Role: Output},
	}
	for expr, msg := range map[string]string{
		"reduce_sum(x, R)": "",
		"reduce_sum(x, Q)": `"Q", which is not a declared axis`,
		"x + z":            `"z" is not an input`,
		"1.0":              `input "x" is not used`,
		"x\n+ 1":           "spans several lines",
	} {
		err := p.validateRefExpr(&Reference{Op: RefExpr, Inputs: []string{"x"}, Output: "y", Expr: expr})
		if msg == "" {
			assert.NoError(t, err, expr)
			continue
		}
		require.Error(t, err, expr)
		assert.Contains(t, err.Error(), msg, expr)
	}
}

// FuzzParseRefExpr: an expression that parses prints to one that parses
// to the same print.
func FuzzParseRefExpr(f *testing.F) {
	for _, s := range []string{"x + 100", "exp(x - reduce_max(x, C)) / reduce_sum(exp(x), C)", "-x * 2.0", "max(round(float(x)), 0)", "sat_sub(a, b)", "bit_or(bits(x), i)", "from_bits(bit_and(p, -65536))", "bit_xor(p, bit_and(shr(p, 31), 2147418112))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseRefExpr(s)
		if err != nil {
			return
		}
		back, err := ParseRefExpr(n.String())
		if err != nil {
			t.Fatalf("%q prints %q, which does not parse: %v", s, n.String(), err)
		}
		if back.String() != n.String() {
			t.Fatalf("%q: %q reads back as %q", s, n.String(), back.String())
		}
	})
}
