package constraints

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/pos"
)

// TestParseMapSpecYAMLErrors: a mapping file's YAML problems are placed at
// their line, scanner problems as well as parser problems (yaml.v3 prints
// the parser's lines one too low; model/pos corrects only those).
func TestParseMapSpecYAMLErrors(t *testing.T) {
	s := levelSpace(t, "name: g\neinsum: IK,KJ->IJ\naxes: {I: 64, J: 64, K: 64}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n")
	for _, tc := range []struct {
		name, src string
		line      int
	}{
		{"scanner: anchor without a name on line 2", "stationary: in0\nb: &\n", 2},
		{"parser: a flow sequence not closed on line 2", "stationary: in0\nslice: [m![I]\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMapSpec("map.yaml", []byte(tc.src), s.P)
			require.Error(t, err)
			var pe *pos.Error
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.Equal(t, tc.line, pe.Line, "%v", err)
			assert.Equal(t, "map.yaml", pe.File)
		})
	}
}
