package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/pos"
)

// TestParseBaselineErrors: every rejected baseline is a *pos.Error naming
// the file and the line (and column) of a JSON error, or the field.
func TestParseBaselineErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"syntax", "{\n  \"tolerance\": 0.01,\n  \"kernels\": [}\n}", "b.json:3:15: invalid character '}' looking for beginning of value"},
		{"type", "{\n  \"tolerance\":\n    \"x\"\n}", "b.json:3: json: cannot unmarshal string into Go struct field Baseline.tolerance of type float64"},
		{"unknown field", "{\n  \"tolerance\": 0.01,\n  \"tolerence\": 0.01\n}", `b.json:3: json: unknown field "tolerence"`},
		{"truncated", "{\n  \"tolerance\": 0.01,\n", "b.json:3:1: unexpected EOF"},
		{"tolerance", "{\n  \"tolerance\": 1\n}", "b.json:2: tolerance: 1 outside [0, 1)"},
		{"missing file", "{\"tolerance\": 0.01,\n \"plans\": [\n  {\"cycles\": 5}]}", "b.json:3: plans[0].file: missing"}, // the entry's line
		{"duplicate file", "{\"tolerance\": 0.01, \"kernels\": [\n {\"file\": \"a\", \"cycles\": 5},\n {\"file\": \"a\", \"cycles\": 6}]}", `b.json:3: kernels[1].file: duplicate "a"`},
		{"negative cycles", "{\"tolerance\": 0.01, \"kernels\": [\n {\"file\": \"a\",\n  \"cycles\": -5}]}", "b.json:3: kernels[0].cycles: -5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBaseline("b.json", []byte(c.src))
			require.Error(t, err)
			assert.EqualError(t, err, c.want)
			var pe *pos.Error
			assert.ErrorAs(t, err, &pe)
		})
	}
}
