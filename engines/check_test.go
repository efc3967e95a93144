package engines

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// TestCheckGoldenKernels: the golden kernels are valid.
func TestCheckGoldenKernels(t *testing.T) {
	files, err := filepath.Glob("../workloads/kernels/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NoError(t, Check(Default(), parseKernel(t, string(data))), f)
	}
}

// TestCheck: single corruptions of the Hello GEMV each break one check,
// reported at the offending field with the rule and its citation.
func TestCheck(t *testing.T) {
	data, err := os.ReadFile("../workloads/kernels/hello-gemv.json")
	require.NoError(t, err)
	src := string(data)
	for _, tc := range []struct {
		name     string
		old, new string
		path     string // the FieldError's path ("" when Validate words it)
		rule     string
		want     string
	}{
		{"read before written: the matrix's DMA after the chain reading it",
			`{"context": "dma", "kind": "to_dm", "src": "matrix", "dst": "matrix_dm"},`, ``,
			"ops[2].stages[0].tensor", "", `reads DM tensor "matrix_dm", which no op writes`},
		{"TRF tensor at a byte address", `"addr": 0, "trf_address": "Full"`, `"addr": 1000000000, "trf_address": "Full"`,
			"tensors[5].addr", "MEM-A1", `TRF tensor "vector_trf" has byte address 1000000000; its TrfAddress::Full places it, and its addr is 0 (002 L4044-4060, L4151-4155)`},
		{"HBM address at 2^62", `"addr": 536870912`, `"addr": 4611686018427387904`,
			"tensors[2].addr", "MEM-C4", `hbm tensor "out" at address 4611686018427387904, beyond the 51539607552 bytes available (002 L137, L2949)`},
		{"HBM address near 2^63 (the end would overflow)", `"addr": 536870912`, `"addr": 9223372036854775000`,
			"tensors[2].addr", "MEM-C4", `beyond the 51539607552 bytes available`},
		{"DM address beyond the slice", `"element": "1 # 8", "addr": 8192`, `"element": "1 # 8", "addr": 524288`,
			"tensors[6].addr", "MEM-C1", `dm tensor "out_dm" at address 524288, beyond the 524288 bytes available (002 L138, L1088, L2874)`},
		{"DM tensor ending beyond the slice", `"element": "1 # 8", "addr": 8192`, `"element": "1 # 8", "addr": 524280`,
			"tensors[6].addr", "MEM-C1", `dm tensor "out_dm" occupies bytes 524280..524296, beyond the 524288 bytes available`},
		{"DM tensors overlapping while live", `"element": "J", "addr": 4096}`, `"element": "J", "addr": 2048}`,
			"tensors[4].addr", "SCH-R7", `dm tensors "matrix_dm" (bytes 0..4096, live ops 0..3) and "vector_dm" (bytes 2048..6144, live ops 1..2) overlap (002 L154-155, L7056)`},
		{"structure (Validate)", `"chips": 1`, `"chips": 0`, "", "", `chips must be at least 1, got 0`},
		{"chips beyond the system's (2^62 drove the simulator to 9 GB)", `"chips": 1`, `"chips": 4611686018427387904`,
			"chips", "CHIP-R1", `the program runs on 4611686018427387904 chips; the system has 1 (chip.chips_per_system; --hw names a spec of a larger system) (002 L129, L1079)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(src, tc.old, tc.new, 1)
			require.NotEqual(t, src, bad)
			var p kernel.Program
			if err := json.Unmarshal([]byte(bad), &p); err != nil {
				// Validate runs while decoding too.
				require.Empty(t, tc.path, "%v", err)
				assert.ErrorContains(t, err, tc.want)
				return
			}
			err := Check(Default(), &p)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
			if tc.path != "" {
				var fe *kernel.FieldError
				require.True(t, errors.As(err, &fe), "%v", err)
				assert.Equal(t, tc.path, fe.Path)
			}
			if tc.rule != "" {
				var v *Violation
				require.True(t, errors.As(err, &v), "%v", err)
				assert.Equal(t, tc.rule, v.Rule.ID)
				assert.True(t, strings.HasPrefix(err.Error(), tc.path+": "+tc.rule+" memory: "), err.Error())
			}
		})
	}
}
