package emit

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// TestRustInPlace: the kernel takes the cache &mut and returns nothing,
// binds the view of its last S (index 7: 224 bytes = 7 rows of 16 bf16)
// and copies the row there; the host lends the cache's device tensor
// &mut and reads it back as the result; the oracle takes the row at
// s == 7. A view at no index of the axis, or pinning two axes, is refused.
func TestRustInPlace(t *testing.T) {
	// The shipped update_slice kernel (search/opslice.go's form).
	data, err := os.ReadFile("../workloads/kernels/update-slice.json")
	require.NoError(t, err)
	inPlaceProgram := string(data)
	read := func(src string) *kernel.Program {
		var p kernel.Program
		require.NoError(t, json.Unmarshal([]byte(src), &p))
		return &p
	}
	out, err := Rust(read(inPlaceProgram), RustOptions{})
	require.NoError(t, err)
	for _, want := range []string{
		"    cache: &mut HbmTensor<bf16, Chip, m![H, S, D]>,\n    row: &HbmTensor<bf16, Chip, m![H, D]>,\n) {",
		"    let cache_new_row: HbmTensorViewMut<'_, bf16, Chip, m![H, 1 # 8, D]> =\n        cache.view_mut().tile::<m![S], 1, m![H, 1 # 8, D]>(7);\n",
		"    row.view().to_hbm_view(&mut ctx.tdma, cache_new_row);\n}",
		"    let mut cache_hbm = cache.to_hbm(&mut ctx.pdma, 0).await;",
		"    launch(kernel, (&mut ctx, &mut cache_hbm, &row_hbm)).await;\n    let cache_new = cache_hbm.to_host::<m![H, S, D]>(&mut ctx.pdma).await;",
		"let t = if s == 7 { row[h * 16 + d] } else { cache[h * 128 + s * 16 + d] };",
		"// tcpmap:reference update_slice(cache, row) -> cache_new axis(S)",
	} {
		assert.Contains(t, string(out), want)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"between indices", `"addr": 224, "view"`, `"addr": 100, "view"`, "sits 100 bytes past it: not an index of S"},
		{"two axes pinned", `"element": "H, 1 # 8, D", "addr": 224`, `"element": "1 # 2, 1 # 8, D", "addr": 224`, "is not the argument with one axis pinned"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(inPlaceProgram, c.old))
			_, err := Rust(read(strings.Replace(inPlaceProgram, c.old, c.new, 1)), RustOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
