package emit

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/plan"
)

// reinterpretKernels are the top-k's pack and unpack at small sizes
// (search/testdata/ops/topk-parts.yaml), whose DMAs read or write an i32
// tensor's bytes as f32 (docs/spec-decisions.md "Top-k: the manual's
// branchless form").
var reinterpretKernels = []string{"topk-pack", "topk-unpack"}

// TestEmitReinterpret: under furiosa-visa-std 0.1.0 a DMA of bytes as
// another type reads through a handle of that type at the tensor's address
// (HbmTensor::from_addr), and a result written as another type is returned
// so; furiosa-opt-std 0.6.0 has no such call, and the emitter refuses,
// naming the tensor.
func TestEmitReinterpret(t *testing.T) {
	want := map[string][]string{
		"topk-pack": {
			"let pos_bits: HbmTensor<f32, Chip, m![E]> = unsafe { HbmTensor::from_addr(pos.address()) };",
			"= pos_bits.to_dm(&mut ctx.tdma, ",
			"let packed_bits: HbmTensor<f32, Chip, m![T, E]> = packed_dm.to_hbm(&mut ctx.tdma, ",
			"    unsafe { HbmTensor::from_addr(packed_bits.address()) }\n}",
		},
		"topk-unpack": {
			"let sel_bits: HbmTensor<f32, Chip, m![T, K]> = unsafe { HbmTensor::from_addr(sel.address()) };",
			"= sel_bits.to_dm(&mut ctx.tdma, 0);",
		},
	}
	refused := map[string]string{
		"topk-pack":   `ops[1] (to_dm): tensor pos_dm: the DMA reads the i32 tensor pos as f32: furiosa-opt-std 0.6.0 has no call`,
		"topk-unpack": `the DMA reads the i32 tensor sel as f32: furiosa-opt-std 0.6.0 has no call`,
	}
	for _, name := range reinterpretKernels {
		pl, err := plan.Read(filepath.Join("testdata", name+".plan.json"))
		require.NoError(t, err)
		src, err := Rust(pl.Program, RustOptions{Version: "test", API: Visa01})
		require.NoError(t, err, name)
		for _, w := range want[name] {
			assert.Contains(t, string(src), w, name)
		}
		_, err = Rust(pl.Program, RustOptions{Version: "test", API: Opt06})
		assert.ErrorContains(t, err, refused[name], name)
	}
	// pack's result alone written as another type (its index read as
	// its own): refused at the store.
	pl, err := plan.Read(filepath.Join("testdata", "topk-pack.plan.json"))
	require.NoError(t, err)
	pos, ok := pl.Program.Tensor("pos")
	require.True(t, ok)
	pos.DType = dtype.F32
	_, err = Rust(pl.Program, RustOptions{Version: "test", API: Opt06})
	assert.ErrorContains(t, err, "op packed_dm -> packed: the DMA writes f32 bytes into the i32 tensor: furiosa-opt-std 0.6.0 has no call")
}
