package kernel

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateSliceFile is the shipped update_slice kernel (search/opslice.go's
// form): the cache updated in place at its last S, by one HBM-to-HBM DMA
// of the new row into a tile view of the cache.
const updateSliceFile = "../../workloads/kernels/update-slice.json"

func TestInPlaceResult(t *testing.T) {
	data, err := os.ReadFile(updateSliceFile)
	require.NoError(t, err)
	file := string(data)
	var p Program
	require.NoError(t, json.Unmarshal(data, &p))
	out, _ := p.Tensor("cache_new")
	assert.True(t, out.InPlace())
	assert.Equal(t, "cache", out.Base())
	row, _ := p.Tensor("cache_new_row")
	assert.False(t, row.InPlace(), "a tile view is no result")
	assert.Equal(t, "S", p.Reference.Axis)
	enc, err := json.Marshal(&p)
	require.NoError(t, err)
	assert.JSONEq(t, file, string(enc))

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
			require.True(t, strings.Contains(file, tc.old), tc.old)
			var q Program
			err := json.Unmarshal([]byte(strings.Replace(file, tc.old, tc.new, 1)), &q)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
