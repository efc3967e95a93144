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
)

// TestReadInPlace: a kernel updating an argument in place reads back as
// written in both APIs, and its malformed forms are refused where they go
// wrong.
func TestReadInPlace(t *testing.T) {
	p := loadGolden(t, "update-slice")
	file, err := json.Marshal(p)
	require.NoError(t, err)
	for _, api := range rustapi.APIs {
		src, err := emit.Rust(p, emit.RustOptions{API: api})
		require.NoError(t, err)
		got, err := Read("u.rs", src)
		require.NoError(t, err, "%s", src)
		data, err := json.Marshal(got)
		require.NoError(t, err)
		assert.JSONEq(t, string(file), string(data), "%s", api)
	}
	good, err := emit.Rust(p, emit.RustOptions{})
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
