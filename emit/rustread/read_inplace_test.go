package rustread

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/emit"
	"tcpmap/emit/rustapi"
	"tcpmap/model/kernel"
)

// updateSlice is an update_slice kernel as search/opslice.go writes it:
// the cache's last S overwritten by the row, in place.
const updateSlice = `{
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

// TestReadInPlace: a kernel updating an argument in place reads back as
// written in both APIs, and its malformed forms are refused where they go
// wrong.
func TestReadInPlace(t *testing.T) {
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(updateSlice), &p))
	for _, api := range rustapi.APIs {
		src, err := emit.Rust(&p, emit.RustOptions{API: api})
		require.NoError(t, err)
		got, err := Read("u.rs", src)
		require.NoError(t, err, "%s", src)
		data, err := json.Marshal(got)
		require.NoError(t, err)
		assert.JSONEq(t, updateSlice, string(data), "%s", api)
	}
	good, err := emit.Rust(&p, emit.RustOptions{})
	require.NoError(t, err)
	src := string(good)
	for _, c := range []struct{ name, old, new, want string }{
		{"another index", "(7);", "(9);", "index 9 of S: want 0 to 7"},
		{"another axis", "tile::<m![S], 1,", "tile::<m![D], 1,", "the view of cache with D pinned is"},
		{"a view of the row", "cache.view_mut()", "row.view_mut()", "a view outside a tile loop is a view of the argument the kernel updates in place"},
		{"lent immutably", "&mut cache_hbm", "&cache_hbm", "launch lends cache_hbm as &cache_hbm"},
		{"not &mut", "cache: &mut HbmTensor", "cache: &HbmTensor", "a view outside a tile loop is a view of the argument the kernel updates in place"},
		{"copy of the view", "row.view().to_hbm_view(&mut ctx.tdma, cache_new_row)", "cache_new_row.view().to_hbm_view(&mut ctx.tdma, cache_new_row)", "copies an HBM argument of the kernel"},
		{"copy into the row", "to_hbm_view(&mut ctx.tdma, cache_new_row)", "to_hbm_view(&mut ctx.tdma, row)", "writes a view of the argument the kernel updates in place, not row"},
		{"two tile mappings", "1, m![H, 1 # 8, D]>(7)", "1, m![H, 1 # 4, D]>(7)", "is not the view's type's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(src, c.old), "the edit must apply once: %s", c.old)
			_, err := Read("u.rs", []byte(strings.Replace(src, c.old, c.new, 1)))
			require.Error(t, err)
			var re *Error
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Contains(t, re.Msg, c.want)
		})
	}
}
