package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/cost"
	"tcpmap/engines"
)

// TestLayerRoofline: a layer's roofline from its own numbers. The
// attention head (S = T = 2048, D = 128): qk and pv are 2048 · 2048 · 128
// bf16 MACs each, 2^29 · 2 at 131,072 a cycle (002 L132, L4099) = 8,192
// cycles; it reads q, k and v (2048 · 128 bf16, 512 KiB each) and the f32
// mask (16 MiB) once and writes o (512 KiB) once, memory-bound. A gather
// reads its table at the rows it gathers only, and an update in place
// writes the rows it updates: the same layer with a rows-table lookup and
// a cache update adds those, not the table or the cache.
func TestLayerRoofline(t *testing.T) {
	spec := engines.Default()
	head := workloadFile(t, "attention-head.yaml")
	compute := 2.0 * 2048 * 2048 * 128 / 131072
	require.Equal(t, 8192.0, compute)
	read := int64(3*2048*128*2 + 2048*2048*4)
	mem := cost.HBMRoofline(spec, 1, read, 2048*128*2)
	require.Greater(t, mem, compute)
	assert.InDelta(t, mem, LayerRoofline(head, spec), 1e-6)

	w := loadWorkload(t, `
name: lookup
chips: 1
axes: {R: 4096, S: 16, E: 64, C: 256}
tensors:
  table:  {axes: [R, E], dtype: bf16}
  idx:    {axes: [S], dtype: i32}
  rows:   {axes: [S, E], dtype: bf16}
  cache:  {axes: [C, E], dtype: bf16}
  cache2: {axes: [C, E], dtype: bf16}
  row:    {axes: [E], dtype: bf16}
ops:
  - {name: look, kind: gather, inputs: [table, idx], outputs: [rows], axes: [R]}
  - {name: upd, kind: update_slice, inputs: [cache, row], outputs: [cache2], axis: C}
`)
	// Read: the 16 gathered rows of 64 bf16 (not the 4096-row table), the
	// index, the cache (read by the update: an input no plan skips) and
	// the row; written: rows, and one row of the cache in place.
	read = 16*64*2 + 16*4 + 256*64*2 + 64*2
	write := int64(16*64*2 + 64*2)
	assert.InDelta(t, cost.HBMRoofline(spec, 1, read, write), LayerRoofline(w, spec), 1e-6)
}
