package kernel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateSliceFile is an update_slice kernel as search/opslice.go writes
// it: the cache updated in place at its last S, by one HBM-to-HBM DMA of
// the new row into a tile view of the cache.
const updateSliceFile = `{
  "name": "update", "axes": "H=2, S=8, D=16", "chips": 1,
  "tensors": [
    {"name": "cache", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "H, S, D", "addr": 0},
    {"name": "row", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "H, D", "addr": 268435456},
    {"name": "cache_new", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "H, S, D", "addr": 0, "view": "cache"},
    {"name": "cache_new_row", "mem": "hbm", "dtype": "bf16", "role": "intermediate", "chip": "1", "element": "H, 1 # 8, D", "addr": 224, "view": "cache"}
  ],
  "ops": [{"context": "dma", "kind": "hbm_to_hbm", "src": "row", "dst": "cache_new_row"}],
  "reference": {"op": "update_slice", "inputs": ["cache", "row"], "output": "cache_new", "axis": "S"}
}`

func TestInPlaceResult(t *testing.T) {
	var p Program
	require.NoError(t, json.Unmarshal([]byte(updateSliceFile), &p))
	out, _ := p.Tensor("cache_new")
	assert.True(t, out.InPlace())
	assert.Equal(t, "cache", out.Base())
	row, _ := p.Tensor("cache_new_row")
	assert.False(t, row.InPlace(), "a tile view is no result")
	assert.Equal(t, "S", p.Reference.Axis)
	data, err := json.Marshal(&p)
	require.NoError(t, err)
	assert.JSONEq(t, updateSliceFile, string(data))

	for _, tc := range []struct{ name, old, new, want string }{
		{"another address", `"addr": 0, "view": "cache"}`, `"addr": 256, "view": "cache"}`, "an input at the same address with the same mappings"},
		{"another element", `"element": "H, S, D", "addr": 0, "view"`, `"element": "S, H, D", "addr": 0, "view"`, "an input at the same address with the same mappings"},
		{"an input views", `"role": "input", "chip": "1", "element": "H, D", "addr": 268435456}`, `"role": "input", "chip": "1", "element": "H, D", "addr": 268435456, "view": "cache"}`, "only an intermediate HBM tensor (a tile view) or a result"},
		{"no axis", `, "axis": "S"`, ``, `update_slice axis "": no such axis`},
		{"unknown axis", `"axis": "S"`, `"axis": "T"`, `update_slice axis "T": no such axis`},
		{"one input", `"inputs": ["cache", "row"]`, `"inputs": ["cache"]`, "update_slice needs two inputs"},
		{"axis of another op", `"op": "update_slice", "inputs": ["cache", "row"]`, `"op": "add", "inputs": ["cache", "row"]`, "an axis goes with op update_slice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, strings.Contains(updateSliceFile, tc.old), tc.old)
			var q Program
			err := json.Unmarshal([]byte(strings.Replace(updateSliceFile, tc.old, tc.new, 1)), &q)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
