package engines

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the generated testdata/bad-*.yaml files")

func TestDefault(t *testing.T) {
	s := Default()
	require.NotNil(t, s)
	assert.Equal(t, "rngd.yaml", s.Name())
	assert.Same(t, s, Default(), "parsed once")
	// The embedded file parses without error (Default would panic otherwise,
	// but check the error path too).
	_, err := Parse(rngdYAML, "rngd.yaml")
	require.NoError(t, err)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "copy.yaml")
	require.NoError(t, os.WriteFile(path, rngdYAML, 0o644))
	s, err := Load(path)
	require.NoError(t, err)
	assert.Equal(t, path, s.Name())
	assert.Equal(t, Default().Entries(), s.Entries())

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

// TestManualNumbers checks every number the spec catalogs quote against the
// spec, one row per number with the manual lines that state it. The expected
// values are copied from the manual, not from rngd.yaml.
func TestManualNumbers(t *testing.T) {
	got := map[string]any{}
	for _, e := range Default().Entries() {
		got[e.Path] = e.Value
	}
	tests := []struct {
		path string
		want any
		cite string
	}{
		{"clock.ghz", 1.0, "002 L2623 'At 1GHz', L2744"},
		{"chip.clusters", 2, "002 L130 'Cluster | 2 per chip'"},
		{"chip.sram_bytes", 256 << 20, "002 L138 '256 MB total', L1075"},
		{"chip.max_chips_per_dma_command", 4, "002 L2515 '0 | 1 | 2 | 3 (when using 4 chips)'"},
		{"cluster.slices", 256, "002 L131 'Slice | 256 per cluster'"},
		{"cluster.dmns", 8, "002 L2867 'DMNs | 8 / Cluster'"},
		{"cluster.slices_per_dmn", 32, "002 L2868 'Slices | 32 / DMN'"},
		{"cluster.slices_per_pe", 64, "002 L2343 '64 slices per PE'"},
		{"slice.rows", 8, "002 L132 'Row | 8 per slice'"},
		{"stream.flit_bytes", 32, "002 L3011 '32-byte flow control units'"},
		{"stream.dual_channel_flit_bytes", 64, "002 L2127 '64-byte flits'"},
		{"stream.mac_width_bytes", 64, "002 L4099 'mac_width (64 bytes)'"},
		{"sequencer.max_entries", 8, "002 L1630 'Maximum 8 entries'"},
		{"sequencer.max_entry_size", 65536, "002 L1632 'size <= 65,536'"},
		{"sequencer.packet_bytes", []int{1, 2, 4, 8, 16, 32}, "002 L1632 '1, 2, 4, 8, 16, or 32 bytes'"},
		{"fetch.packet_align_bytes", 8, "002 L1723 '8-byte aligned'"},
		{"fetch.address_align_bytes", 1, "002 L1756 '1-byte aligned'"},
		{"fetch.main_fetch_sizes", []int{1, 2, 4, 8, 16, 32}, "002 L1758"},
		{"fetch.sub_fetch_size", 8, "002 L1759 '8 bytes (otherwise)'"},
		{"fetch.sub_fetch_size_i4_to_i32", 4, "002 L1759 '4 bytes (when casting from i4 to i32)'"},
		{"fetch.max_cast_output_bytes", 32, "002 L1996 'not exceed 32 bytes'"},
		{"fetch.cast_latency_cycles", []int{1, 2}, "002 L2135 'type conversion takes 1–2 cycles'"},
		{"fetch.max_interleaved_tensors", 2, "002 L1850 'At most two tensors'"},
		{"fetch.peak_dm_bytes_per_cycle", 256, "002 L2133 '256 B/cycle'"},
		{"fetch.mask_valid_count_max_4bit", 255, "002 L1902 '0-255 for 4-bit types'"},
		{"fetch.mask_valid_count_max_f32", 31, "002 L1902 '0-31 for f32'"},
		{"fetch.mask_max_packet_bytes", 256, "002 L1902 'must not exceed 256 bytes'"},
		{"fetch.mask_per_index_max_axis", 8, "002 L1927 'axis size is 8 or less'"},
		{"switch.contexts", 2, "002 L2125 'two Switch Engines (one for each context)'"},
		{"switch.channel_bytes", 32, "002 L2125 '32-byte data width'"},
		{"switch.ring_slices", 256, "002 L3487 'ring connecting 256 slices'"},
		{"switch.router_entries", 256, "002 L3487 '256 router configuration entries'"},
		{"switch.max_ring_size", 256, "002 L3364 'maximum value of 256'"},
		{"switch.ring_size_power_of_two", true, "002 L3364 'must be a power of 2'"},
		{"switch.router_buffer_packets", 1, "002 L3489 'essentially one packet'"},
		{"switch.slices_in_out", 256, "002 L3502"},
		{"collect.output_packet_bytes", 32, "002 L3549 'exactly 32 bytes'"},
		{"collect.pad_value", 0, "002 L2122 'with zeros'"},
		{"stream_adapter.collect_flits", []int{1, 2, 3}, "002 L3950"},
		{"stream_adapter.default_collect_flits", 2, "002 L3919 '2 (default)'"},
		{"stream_adapter.flit_buffer_bytes", 96, "002 L3928 '96-byte physical capacity'"},
		{"stream_adapter.out_packet_bytes", 64, "002 L3921 'always 64 bytes'"},
		{"stream_adapter.rows", []int{1, 2, 4, 8}, "002 L3953"},
		{"contraction.input_types", []string{"i4", "i8", "f8", "bf16"}, "002 L3782"},
		{"contraction.integer_output_type", "i32", "002 L3782"},
		{"contraction.float_output_type", "f32", "002 L3782"},
		{"contraction.rows", []int{1, 2, 4, 8}, "002 L3780"},
		{"trf.bank_rows", 8, "002 L4116 '8 bank rows'"},
		{"trf.bank_columns", 2, "002 L4116 '2 bank columns'"},
		{"trf.rows_per_bank", 128, "002 L4118 '128 rows (Full mode)'"},
		{"trf.half_rows_per_bank", 64, "002 L4118 '64 rows (Half mode)'"},
		{"trf.row_bytes", 32, "002 L4118 '32 bytes (320b)'"},
		{"trf.row_bits", 320, "002 L4140 '64 positions × 5 bits = 320 bits'"},
		{"trf.slot_bits", 5, "002 L4140 '5-bit granularity'"},
		{"trf.bytes_per_row_lane", 8 << 10, "002 L1089 '8KB / Row'"},
		{"trf.address_bits.bank_row", 3, "002 L4133"},
		{"trf.address_bits.row_in_bank_full", 7, "002 L4138"},
		{"trf.address_bits.row_in_bank_half", 6, "002 L4138"},
		{"trf.address_bits.bank_col", 1, "002 L4139"},
		{"trf.address_bits.offset", 6, "002 L4140"},
		{"trf.address_modes", []string{"FirstHalf", "SecondHalf", "Full"}, "002 L4153-4155"},
		{"trf.rows", []int{1, 2, 4, 8}, "002 L4164-4167"},
		{"trf.reg_read_sizes", []int{1, 2, 4, 8, 16, 32, 64}, "002 L4104"},
		{"trf.full_read_align_bytes", 64, "002 L4111"},
		{"trf.reg_types", []TRFRegType{{0, 5, 1, 64}, {1, 10, 2, 32}, {2, 10, 2, 32}, {3, 20, 4, 16}}, "002 L4144-4147"},
		{"trf.sequencer.max_entries", 8, "002 L4173 'Entries | 1–8'"},
		{"trf.sequencer.max_entry_size", 65536, "002 L4174"},
		{"trf.sequencer.stride_bits", 32, "002 L4175 'signed 32-bit'"},
		{"trf.cache.rows_per_lane", 4, "002 L4186"},
		{"trf.cache.columns", 2, "002 L4186"},
		{"trf.cache.entry_bytes", 32, "002 L4187"},
		{"trf.cache.lanes", 8, "002 L4188"},
		{"trf.cache.total_bytes", 2048, "002 L4189 '2,048 bytes'"},
		{"reducer.rows", 8, "002 L4298 '8 independent Rows'"},
		{"reducer.tree_depth.i4", 7, "002 L4388 'i4: depth 7'"},
		{"reducer.tree_depth.i8", 6, "002 L4388 'i8/f8: depth 6'"},
		{"reducer.tree_depth.f8", 6, "002 L4388"},
		{"reducer.tree_depth.bf16", 5, "002 L4388 'bf16: depth 5'"},
		{"reducer.spatial_latency_cycles.i4", 7, "002 L4543 '128 elements in 7 cycles'"},
		{"reducer.spatial_latency_cycles.i8", 6, "002 L4543"},
		{"reducer.spatial_latency_cycles.f8", 6, "002 L4543"},
		{"reducer.spatial_latency_cycles.bf16", 5, "002 L4543 '32 elements in 5 cycles'"},
		{"reducer.resize_columns", 32, "002 L4397 'exactly 32 i32/f32 elements per Row'"},
		{"reducer.spatial_output_limit_elements", 32, "002 L4531"},
		{"reducer.accumulator_rows", 8, "002 L4409 '8 rows × 32 columns × 4 registers/column'"},
		{"reducer.accumulator_columns", 32, "002 L4409"},
		{"reducer.accumulator_registers_per_column", 4, "002 L4409"},
		{"reducer.accumulator_slots", 1024, "002 L4409 '1024 slots total'"},
		{"reducer.interleaved_inner_capacity", 128, "002 L4434 'capacity of 128'"},
		{"reducer.sequential_inner_capacity", 32, "002 L4434 'Sequential 32-element capacity'"},
		{"reducer.output_bus_elements", 8, "002 L4491 '8 elements-wide'"},
		{"reducer.sequential_output_elements", []int{8, 16, 24, 32}, "002 L4491"},
		{"reducer.reduce_max_rows", 1, "002 L4533 'single Row (Row 0)'"},
		{"vector.types", []string{"i32", "f32"}, "002 L4551"},
		{"vector.way8_elements_per_cycle", 8, "002 L4731"},
		{"vector.way4_elements_per_cycle", 4, "002 L4731"},
		{"vector.alu_latency_cycles", 1, "002 L5275"},
		{"vector.execution_id_bits", 4, "002 L4795 '4-bit ExecutionId (0-15)'"},
		{"vector.stash_slots", 1, "002 L4984 'single slot per pass'"},
		{"vector.logic_alus", []string{"LogicAnd", "LogicOr", "LogicXor", "LogicLshift", "LogicRshift"}, "002 L4805"},
		{"vector.fxp_alus", []string{"FxpAdd", "FxpLshift", "FxpMul", "FxpRshift"}, "002 L4823"},
		{"vector.float_alus", []string{"FpFma", "FpFpu", "FpExp", "FpMul0", "FpMul1"}, "002 L4877"},
		{"vector.clip_alus", []string{"ClipAdd", "ClipMax", "ClipMin"}, "002 L4955"},
		{"vector.intra_reduce_tree_width", 4, "002 L5386"},
		{"vector.intra_reduce_tree_depth", 2, "002 L5387"},
		{"vector.intra_reduce_accumulator_slots", 8, "002 L5388"},
		{"vector.inter_slice_slices", 256, "002 L6584"},
		{"vector.inter_slice_cycles_256_slices", 256, "002 L4375 '256 slice results (256 cycles)'"},
		{"vector.vcg_max_valid_count", 8, "002 L6176"},
		{"vector.vcg_max_counters", 8, "002 L6213 'Up to 8 nested counters'"},
		{"vector.vcg_gate_dims", 3, "002 L6189"},
		{"cast.input_packet_bytes", 32, "002 L6781"},
		{"cast.output_packet_bytes", 32, "002 L6782"},
		{"transpose.buffers", 2, "002 L6859 'two internal buffers'"},
		{"transpose.buffer_cols", 16, "002 L6859 'num_buffer_cols = 16'"},
		{"transpose.bus_bytes", 32, "002 L6865"},
		{"transpose.types", []TransposeType{
			{4, 16, 64, 16, []int{16, 32}},
			{8, 8, 32, 8, []int{8, 16, 32}},
			{16, 8, 16, 4, []int{8, 16, 32}},
			{32, 8, 8, 2, []int{8, 16, 32}},
		}, "002 L6880-6883"},
		{"commit.input_packet_bytes", 32, "002 L2328"},
		{"commit.commit_in_sizes", []int{8, 16, 24, 32}, "002 L2193"},
		{"commit.main_commit_sizes", []int{8, 16, 24, 32}, "002 L2247"},
		{"commit.sub_commit_size", 8, "002 L2248"},
		{"commit.stride_multiple_bytes", 8, "002 L2338"},
		{"commit.slice_bitmap_bits", 256, "002 L2316 '256-bit mask'"},
		{"commit.generate_value_bits", 32, "002 L2326"},
		{"dm.bytes_per_slice", 512 << 10, "002 L138 '512 KB/slice', L2874"},
		{"dm.banks", 16, "002 L2869 'Banks | 16 / Slice'"},
		{"dm.bank_width_bytes", 8, "002 L2871 'Bytes | 8 / Row'"},
		{"dm.rows_per_bank", 4096, "002 L2870 'Rows | 4096 / Bank'"},
		{"dm.bytes_per_cycle_per_slice", 128, "002 L2874 '128 B/cycle'"},
		{"dm.address_bits.byte", []int{0, 1, 2}, "002 L2877 '0–2 | Byte'"},
		{"dm.address_bits.bank", []int{3, 4, 5, 6}, "002 L2878 '3–6 | Bank'"},
		{"dm.address_bits.row", []int{7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, "002 L2879 '7–18 | Row'"},
		{"dm.read_align_bytes", 1, "002 L2426"},
		{"dm.write_align_bytes", 8, "002 L2426"},
		{"dm.misaligned_write_factor", 3, "002 L2414 'tripling the time'"},
		{"dm.controller_priority", []string{"main_fetch", "main_commit", "sub_fetch", "sub_commit", "dma"}, "002 L2900-2904"},
		{"dm.dmn_bytes_per_cycle", 128, "002 L2884 '128 B/cycle bandwidth'"},
		{"dm.interleaved_bytes_per_cycle", 256, "002 L2935 'saturated 256 B/cycle'"},
		{"dm.dma_unit_cycles_per_dmn", 2, "002 L2884 'two cycles per DMN'"},
		{"dm.command_queue_entries_per_slice", 2, "002 L2895 'two command queue entries'"},
		{"dm.bank_starvation.consecutive_access_limit", 64, "002 L2856 '< 64 consecutive same-bank accesses'"},
		{"dm.bank_starvation.noc_timeout_cycles", 4096, "002 L2905 'After 4,096 cycles'"},
		{"dm.bank_starvation.tdma_io_bytes", 256, "002 L2939 'TDMA_IO_BYTE=256'"},
		{"dm.bank_starvation.dmn_io_bytes", 128, "002 L2939 'DMN_IO_BYTE=128'"},
		{"dm.bank_starvation.dmn_size", 32, "002 L2939 'DMN_SIZE=32'"},
		{"dm.bank_starvation.dma_banks_per_request", 16, "002 L2929 'occupies 16 banks at once'"},
		{"dm.bank_starvation.sub_banks_per_access", 1, "002 L2929 'only one bank'"},
		{"spm.bytes_per_cycle_per_dmn", 128, "002 L2945 '128 B/cycle'"},
		{"spm.same_chip_only", true, "002 L2825"},
		{"vrf.bytes_per_slice", 8 << 10, "002 L140 '8 KB / slice'"},
		{"hbm.bytes", int64(48) << 30, "002 L2949 '48GB of HBM'"},
		{"hbm.peak_tb_per_s", 1.5, "002 L2980 '1.5TB/s per chip'"},
		{"hbm.read_tb_per_s", 0.75, "002 L2602"},
		{"hbm.write_tb_per_s", 0.75, "002 L2602"},
		{"hbm.stacks", 2, "002 L2952"},
		{"hbm.channels_per_stack", 16, "002 L2953"},
		{"hbm.slices_per_channel", 3, "002 L2954"},
		{"hbm.bank_groups_per_slice", 4, "002 L2955"},
		{"hbm.banks_per_bank_group", 4, "002 L2956"},
		{"hbm.rows_per_bank", 16 << 10, "002 L2957 '16K / Bank'"},
		{"hbm.bytes_per_row", 2 << 10, "002 L2958 '2K / Row'"},
		{"hbm.address_bits.byte", []int{0, 1, 2, 3, 4, 5, 6, 7, 14, 15, 16}, "002 L2963, L2967, L2974 'bits 0-7, 14-16'"},
		{"hbm.address_bits.stack", []int{8}, "002 L2964"},
		{"hbm.address_bits.channel", []int{9, 10, 11, 12}, "002 L2965"},
		{"hbm.address_bits.bank_group", []int{13, 19}, "002 L2966, L2969"},
		{"hbm.address_bits.bank", []int{17, 18}, "002 L2968"},
		{"hbm.address_bits.slice", []int{20, 34}, "002 L2975 'Two bits (20 and 34)'"},
		{"hbm.address_bits.row", []int{21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 35}, "002 L2971, L2973"},
		{"hbm.channel_xor[0]", []int{9, 13, 21, 25}, "002 L2977 'XOR of bits 9, 13, 21, and 25'"},
		{"hbm.channel_select_bits", []int{9, 28}, "002 L2738 'bits 9-28'"},
		{"hbm.controller_ghz", 0.75, "002 L2980"},
		{"hbm.controller_bytes_per_cycle", 64, "002 L2980 '64B/cycle'"},
		{"hbm.channel_gb_per_s", 48.0, "002 L2980 '48GB/s per channel'"},
		{"hbm.burst_per_cycle", 8, "002 L3009 'eight bursts per cycle'"},
		{"hbm.access_unit_bytes", 256, "002 L2980 'fundamental transfer unit is 256 bytes'"},
		{"hbm.cycles_per_access_unit", 4, "002 L2980 '4 clock cycles per channel'"},
		{"hbm.command_queue_entries", 64, "002 L2981 '64-entry command queue'"},
		{"hbm.unaligned_read_factor", 2, "002 L2859 '2× penalty'"},
		{"hbm.unaligned_write_factor", 50, "002 L2859 '~50× penalty'"},
		{"hbm.row_conflict_factor", []int{30, 40}, "002 L2860 '30–40× degradation'"},
		{"hbm.row_switch_ns", []int{40, 50}, "002 L2987 '40–50 ns'"},
		{"hbm.row_switch_cycles_tccd_clock", []int{60, 75}, "002 L2987 '60–75 cycles at 1.5 GHz'"},
		{"hbm.tccd_ghz", 1.5, "002 L2997"},
		{"hbm.tccd_same_slice_other_bank_group", 2, "002 L2999"},
		{"hbm.tccd_other_slice", 3, "002 L3000"},
		{"hbm.tccd_same_slice_same_bank_group", 4, "002 L3001"},
		{"hbm.cycles_per_request", 5.3, "002 L2744 'approximately 5.3 cycles per request at 1GHz'"},
		{"hbm.bank_conflict_cycles_per_request", 40, "002 L2710 'approximately 40 cycles'"},
		{"dma.engines_per_chip", 8, "002 L2404 'eight DMA Engines'"},
		{"dma.dmns_per_engine", 2, "002 L2404 'one per pair of DMNs'"},
		{"dma.bytes_per_cycle", 256, "002 L2596 'up to 256 bytes per clock cycle'"},
		{"dma.gb_per_s_per_engine", 256, "002 L2636 '256 GB/s'"},
		{"dma.aggregate_tb_per_s", 2.0, "002 L2751 'DMA Engine bandwidth (2TB/s)'"},
		{"dma.startup_cycles", 500, "002 L2467 'approximately 500 cycles'"},
		{"dma.request_bytes", 256, "002 L2469 '256-byte units'"},
		{"dma.max_packet_bytes", 4096, "002 L2429 '4096 bytes'"},
		{"dma.axi_max_beats", 256, "002 L2414 '256 beats'"},
		{"dma.axi_data_bytes", 16, "002 L2414 '16-byte data width'"},
		{"dma.hbm_read_align_bytes", 1, "002 L2426"},
		{"dma.hbm_write_align_bytes", 1, "002 L2426"},
		{"dma.hbm_packet_align_bytes", 1, "002 L2426"},
		{"dma.dm_read_align_bytes", 1, "002 L2426"},
		{"dma.dm_write_align_bytes", 8, "002 L2426"},
		{"dma.dm_packet_align_bytes", 8, "002 L2426"},
		{"dma.hbm_to_dm_align_bytes", 8, "002 L2427"},
		{"dma.slice_stride_bytes", 4 << 20, "002 L2541 'slice_stride = 4MB'"},
		{"dma.max_engines_per_command", 32, "002 L2474 'up to 32 DMA Engines'"},
		{"pcie.bytes_per_cycle", 30, "002 L2605 '30 bytes/cycle'"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			v, ok := got[tc.path]
			require.True(t, ok, "%s missing from the spec (%s)", tc.path, tc.cite)
			assert.Equal(t, tc.want, v, "%s (%s)", tc.path, tc.cite)
		})
	}
}

// TestFlags pins which values are assumptions and which come only from worked
// examples, so that changing either is deliberate.
func TestFlags(t *testing.T) {
	var assumptions, examples []string
	for _, e := range Default().Entries() {
		assert.NotEmpty(t, e.Cite, e.Path)
		if e.Assumption {
			assumptions = append(assumptions, e.Path)
			assert.NotEmpty(t, e.Note, "assumption %s needs a note", e.Path)
		}
		if e.DerivedFromExample {
			examples = append(examples, e.Path)
		}
	}
	assert.Equal(t, []string{"clock.ghz", "chip.chips_per_system", "hbm.channel_xor[1]", "hbm.channel_xor[2]", "hbm.channel_xor[3]"}, assumptions)
	assert.Equal(t, []string{"vector.inter_slice_cycles_256_slices", "hbm.cycles_per_request", "hbm.bank_conflict_cycles_per_request"}, examples)
}

func TestDerived(t *testing.T) {
	s := Default()
	// 2 clusters × 256 slices (002 L130-131).
	assert.Equal(t, 2*256, s.TotalSlices())
	// The manual's cycle estimates assume 1 GHz (002 L2623).
	assert.InDelta(t, 1e-9, s.CycleTime(), 1e-21)

	// Per Row per cycle the reducer takes mac_width = 64 bytes (002 L4099):
	// 128 i4, 64 i8/f8 or 32 bf16 elements (002 L4388); × 8 rows × 256 slices
	// × 2 clusters (002 L130-132).
	for _, tc := range []struct {
		bits, want int
	}{
		{4, 2 * 256 * 8 * 128},
		{8, 2 * 256 * 8 * 64},
		{16, 2 * 256 * 8 * 32},
	} {
		got, err := s.PeakMACsPerCycle(tc.bits)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%d-bit", tc.bits)
	}
	for _, bits := range []int{0, 1, 5, 32, -8} {
		_, err := s.PeakMACsPerCycle(bits)
		assert.ErrorContains(t, err, "002 L3782", "%d-bit", bits)
	}
}

// TestDMBank reproduces the manual's DM bit mapping (002 L2874-2879): 128
// consecutive bytes spread over all 16 banks, 8 bytes per bank, then the
// next row.
func TestDMBank(t *testing.T) {
	s := Default()
	for addr := uint64(0); addr < 128; addr++ {
		assert.Equal(t, int(addr/8), s.DMBank(addr), "addr %d", addr)
		assert.Equal(t, 0, s.DMRow(addr), "addr %d", addr)
	}
	assert.Equal(t, 0, s.DMBank(128))
	assert.Equal(t, 1, s.DMRow(128))
	assert.Equal(t, 4095, s.DMRow(512<<10-1), "last byte of the 512 KB slice is in row 4095")
	assert.Equal(t, 15, s.DMBank(512<<10-1))

	// A 256-byte DMA request touches all 16 banks of a slice (002 L2929).
	banks := map[int]bool{}
	for addr := uint64(1024); addr < 1024+256; addr += 8 {
		banks[s.DMBank(addr)] = true
	}
	assert.Len(t, banks, 16)

	// A stride of 128 bytes stays in one bank: the pattern the 64-access rule
	// guards against (002 L2898).
	for i := uint64(0); i < 64; i++ {
		assert.Equal(t, 3, s.DMBank(24+128*i))
	}
}

// TestHBMChannel reproduces the manual's HBM address examples.
func TestHBMChannel(t *testing.T) {
	s := Default()
	// Bit 8 is the stack, bits 9-12 the channel (002 L2964-2965); channel bit 0
	// is the XOR of bits 9, 13, 21 and 25 (002 L2977).
	for _, tc := range []struct {
		addr uint64
		want int
	}{
		{0, 0},
		{255, 0},     // bits 0-7: byte within the 256-byte unit (002 L2983)
		{1 << 8, 16}, // stack 1
		{1 << 9, 1},  // channel bit 0
		{1 << 13, 1}, // XORed into channel bit 0
		{1 << 21, 1}, // XORed into channel bit 0
		{1 << 25, 1}, // XORed into channel bit 0
		{1<<9 | 1<<13, 0},
		{1<<9 | 1<<13 | 1<<21 | 1<<25, 0},
		{1 << 11, 4}, // stride 2048 toggles a channel bit (002 L2622)
		{1 << 12, 8},
		{1<<8 | 1<<12, 24},
	} {
		assert.Equal(t, tc.want, s.HBMChannel(tc.addr), "addr %#x", tc.addr)
	}

	count := func(addrs func(yield func(uint64))) map[int]int {
		n := map[int]int{}
		addrs(func(a uint64) { n[s.HBMChannel(a)]++ })
		return n
	}
	uniform := func(t *testing.T, n map[int]int, channels, each int) {
		t.Helper()
		assert.Len(t, n, channels)
		for ch, c := range n {
			assert.Equal(t, each, c, "channel %d", ch)
		}
	}

	// Example 1 (002 L2608-2636): read [A=8:2048, B=8:256, C=256:1] @ 0 and
	// write [A=8:256, B=8:2048, C=256:1] @ 16384: 64 requests each; strides
	// 256 and 2048 spread them over the channels (002 L2622), so 32 channels
	// get two requests each.
	t.Run("Example1", func(t *testing.T) {
		reads := count(func(y func(uint64)) {
			for a := range uint64(8) {
				for b := range uint64(8) {
					y(a*2048 + b*256)
				}
			}
		})
		uniform(t, reads, 32, 2)
		writes := count(func(y func(uint64)) {
			for a := range uint64(8) {
				for b := range uint64(8) {
					y(16384 + a*256 + b*2048)
				}
			}
		})
		uniform(t, writes, 32, 2)
	})

	// Example 4 (002 L2682-2716): per DMN (cluster i, dmn j)
	// [B%256=256:1024, C/256=4:256, A%32=32:2^21, A/32=2:2^26, C%256=256:1]
	// @ i·2^20 + j·2^18; "524288 total requests, distributed evenly across
	// 32 HBM channels" → "Each channel handles: 16384 requests"
	// (002 L2706-2709).
	t.Run("Example4", func(t *testing.T) {
		n := count(func(y func(uint64)) {
			for i := range uint64(2) {
				for j := range uint64(4) {
					for b := range uint64(256) {
						for c := range uint64(4) {
							for a1 := range uint64(32) {
								for a2 := range uint64(2) {
									y(i<<20 + j<<18 + b*1024 + c*256 + a1<<21 + a2<<26)
								}
							}
						}
					}
				}
			}
		})
		uniform(t, n, 32, 16384)
	})

	// Example 5 (002 L2717-2751): [C=8:512, B%32=32:4096, B/32=2:131072,
	// D%256=256:1] @ i·2^20 + j·2^18 never toggles the stack bit 8: "4096
	// total requests, distributed across only 16 channels", "Each channel
	// handles: 256 requests" (002 L2742-2743).
	t.Run("Example5", func(t *testing.T) {
		n := count(func(y func(uint64)) {
			for i := range uint64(2) {
				for j := range uint64(4) {
					for c := range uint64(8) {
						for b1 := range uint64(32) {
							for b2 := range uint64(2) {
								y(i<<20 + j<<18 + c*512 + b1*4096 + b2*131072)
							}
						}
					}
				}
			}
		})
		uniform(t, n, 16, 256)
		for ch := range n {
			assert.Less(t, ch, 16, "all in stack 0")
		}
	})
}

// TestHBMLocate checks the field decoding of the HBM bit table (002
// L2961-2973) and reproduces Example 4's row conflicts: the A%32 and A/32
// loops "correspond to HBM address bits 21 and 26, which control row
// addressing within banks" so that accesses switch rows (002 L2703).
func TestHBMLocate(t *testing.T) {
	s := Default()
	for _, tc := range []struct {
		addr uint64
		want HBMLocation
	}{
		{0, HBMLocation{}},
		{1 << 13, HBMLocation{Channel: 1, BankGroup: 1}}, // bit 13: bank group, XORed into channel bit 0
		{1 << 19, HBMLocation{BankGroup: 2}},
		{1 << 17, HBMLocation{Bank: 1}},
		{1 << 18, HBMLocation{Bank: 2}},
		{1 << 20, HBMLocation{Slice: 1}},
		{1 << 34, HBMLocation{Slice: 2}},
		{1 << 21, HBMLocation{Channel: 1, Row: 1}},
		{1 << 33, HBMLocation{Row: 1 << 12}},
		{1 << 35, HBMLocation{Row: 1 << 13}},
		{1<<14 | 1<<16 | 0xff, HBMLocation{Channel: 2 | 8}}, // byte bits 14-16, XORed into channel bits 1 and 3
	} {
		assert.Equal(t, tc.want, s.HBMLocate(tc.addr), "addr %#x", tc.addr)
	}

	// Example 4 (002 L2682-2716), DMN (0, 0), first B and C: the 64 requests
	// of the A%32 (stride 2^21) and A/32 (stride 2^26) loops.
	type bank struct{ ch, slice, bg, bank int }
	rows := map[bank]map[int]bool{}
	for a1 := range uint64(32) {
		for a2 := range uint64(2) {
			l := s.HBMLocate(a1<<21 + a2<<26)
			b := bank{l.Channel, l.Slice, l.BankGroup, l.Bank}
			if rows[b] == nil {
				rows[b] = map[int]bool{}
			}
			rows[b][l.Row] = true
		}
	}
	n := 0
	for b, r := range rows {
		assert.Equal(t, bank{b.ch, 0, 0, 0}, b, "one bank per channel")
		n += len(r)
	}
	assert.Equal(t, 64, n, "every request opens a different row of its bank")
}

func TestEntries(t *testing.T) {
	s := Default()
	e := s.Entries()
	require.NotEmpty(t, e)
	assert.Equal(t, "clock.ghz", e[0].Path)
	assert.Equal(t, "pcie.bytes_per_cycle", e[len(e)-1].Path)
	assert.Equal(t, e, s.Entries(), "deterministic")
	seen := map[string]bool{}
	for _, x := range e {
		assert.False(t, seen[x.Path], "duplicate path %s", x.Path)
		seen[x.Path] = true
	}
	// Every line of rngd.yaml that carries a citation is one entry.
	cites := 0
	for _, line := range strings.Split(string(rngdYAML), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			cites += strings.Count(line, "cite: ")
		}
	}
	assert.Equal(t, cites, len(e))

	// The JSON form round-trips through the YAML field names.
	data, err := json.Marshal(s)
	require.NoError(t, err)
	var back map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Contains(t, back["dm"], "bytes_per_slice")
}

func TestCheckCite(t *testing.T) {
	for _, ok := range []string{"002 L1", "002 L8720", "002 L1757-1758", "002 L1757-1758, L2018", "000 L260", "004 L1, L2-3"} {
		assert.Empty(t, checkCite(ok), ok)
	}
	for _, bad := range []string{"", "002", "L130", "002 L0", "002 L8721", "000 L261", "005 L1", "002 L20-10", "002 L1,L2", "002 l130", "002 L130 "} {
		assert.NotEmpty(t, checkCite(bad), bad)
	}
}

// edit describes a bad spec generated from rngd.yaml by replacing old with new.
// line is the text whose line the error names (new when empty).
type edit struct {
	file, old, new, line, msg string
}

// generated are the rejection cases made from rngd.yaml by one edit; each is
// written to testdata/<file> by `go test -run TestRejections -update`.
var generated = []edit{
	{file: "bad-missing-field.yaml", old: "  banks: {value: 16, cite: \"002 L2869, L2874\"}\n", new: "", line: "dm:\n",
		msg: "dm.banks: missing required field"},
	{file: "bad-missing-cite.yaml", old: `banks: {value: 16, cite: "002 L2869, L2874"}`, new: `banks: {value: 16}`,
		msg: "dm.banks.cite: missing required field"},
	{file: "bad-null.yaml", old: `banks: {value: 16,`, new: `banks: {value: ~,`,
		msg: "dm.banks.value: null value"},
	{file: "bad-null-item.yaml", old: `packet_bytes: {value: [1, 2, 4, 8, 16, 32]`, new: `packet_bytes: {value: [1, 2, ~, 8, 16, 32]`,
		msg: "sequencer.packet_bytes.value[2]: null value"},
	{file: "bad-unknown-value-field.yaml", old: `banks: {value: 16,`, new: `banks: {value: 16, unit: banks,`,
		msg: "dm.banks: unknown field (not in engines.Value[int])"},
	{file: "bad-wrong-type.yaml", old: `banks: {value: 16,`, new: `banks: {value: sixteen,`,
		msg: "dm.banks: cannot unmarshal !!str `sixteen` into int"},
	{file: "bad-cite-form.yaml", old: `banks: {value: 16, cite: "002 L2869, L2874"}`, new: `banks: {value: 16, cite: "L2869"}`,
		msg: `dm.banks.cite: citation "L2869" is not of the form "002 L1234[-1240][, L1300]"`},
	{file: "bad-cite-range.yaml", old: `banks: {value: 16, cite: "002 L2869, L2874"}`, new: `banks: {value: 16, cite: "002 L9869"}`,
		msg: `dm.banks.cite: citation "002 L9869": line range L9869 outside seed 002 (1-8720) or reversed`},
	{file: "bad-assumption-note.yaml", old: `ghz: {value: 1.0, cite: "002 L2623, L2744", assumption: true, note: "the core clock is never stated; the manual's cycle estimates assume 1 GHz ('At 1GHz')"}`,
		new: `ghz: {value: 1.0, cite: "002 L2623, L2744", assumption: true}`,
		msg: "clock.ghz.note: an assumption needs a note saying why"},
	{file: "bad-negative.yaml", old: `bytes_per_cycle: {value: 30,`, new: `bytes_per_cycle: {value: -30,`,
		msg: "pcie.bytes_per_cycle.value: -30 must be positive"},
	{file: "bad-dmn-count.yaml", old: `slices_per_dmn: {value: 32,`, new: `slices_per_dmn: {value: 16,`, line: "  slices: {value: 256",
		msg: "cluster.slices.value: 256, want dmns × slices_per_dmn (8 × 16) = 128"},
	{file: "bad-dm-size.yaml", old: `rows_per_bank: {value: 4096,`, new: `rows_per_bank: {value: 2048,`, line: "  bytes_per_slice: {value: 524288",
		msg: "dm.bytes_per_slice.value: 524288, want banks × bank_width_bytes × rows_per_bank (16 × 8 × 2048) = 262144"},
	{file: "bad-not-pow2.yaml", old: `banks: {value: 16,`, new: `banks: {value: 12,`,
		msg: "dm.banks.value: 12 is not a power of two"},
	{file: "bad-dm-bits.yaml", old: `row: {value: [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18], cite: "002 L2879"}`,
		new: `row: {value: [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17], cite: "002 L2879"}`,
		msg: "dm.address_bits.row.value: 11 bits address 2048 units, want dm.rows_per_bank = 4096"},
	{file: "bad-dm-bits-overlap.yaml", old: `bank: {value: [3, 4, 5, 6], cite: "002 L2878"}`,
		new: `bank: {value: [2, 4, 5, 6], cite: "002 L2878"}`,
		msg: "dm.address_bits.bank.value: bit 2 is assigned twice"},
	{file: "bad-trf-capacity.yaml", old: `bytes_per_row_lane: {value: 8192,`, new: `bytes_per_row_lane: {value: 16384,`,
		msg: "trf.bytes_per_row_lane.value: 16384, want bank_columns × rows_per_bank × row_bytes (2 × 128 × 32) = 8192"},
	{file: "bad-reducer-depth.yaml", old: `bf16: {value: 5, cite: "002 L4388, L4530-4531"}`, new: `bf16: {value: 6, cite: "002 L4388, L4530-4531"}`,
		msg: "reducer.tree_depth.bf16.value: bf16: 2^6 elements × 16 bits != mac_width 512 bits"},
	{file: "bad-bank-starvation.yaml", old: `consecutive_access_limit: {value: 64,`, new: `consecutive_access_limit: {value: 63,`,
		msg: "dm.bank_starvation.consecutive_access_limit.value: 63, want ceil(noc_timeout_cycles / ((tdma_io_bytes / dmn_io_bytes) × dmn_size)) = ceil(4096 / 64) = 64"},
	{file: "bad-hbm-geometry.yaml", old: `slices_per_channel: {value: 3,`, new: `slices_per_channel: {value: 4,`, line: "  bytes: {value: 51539607552",
		msg: "hbm.bytes.value: 51539607552, want stacks × channels × slices × bank groups × banks × rows × bytes per row = 68719476736"},
	{file: "bad-hbm-bits.yaml", old: `stack: {value: [8], cite: "002 L2964"}`, new: `stack: {value: [36], cite: "002 L2964"}`,
		msg: "hbm.address_bits.stack.value: bit 36 is outside the 36 address bits of hbm.bytes"},
	{file: "bad-hbm-bits-twice.yaml", old: `bank: {value: [17, 18], cite: "002 L2968"}`, new: `bank: {value: [16, 18], cite: "002 L2968"}`,
		msg: "hbm.address_bits.bank.value: bit 16 is assigned twice"},
	{file: "bad-channel-xor.yaml", old: `{value: [12, 16, 24, 28],`, new: `{value: [12, 16, 24, 30],`,
		msg: "hbm.channel_xor[3].value: bit 30 is outside channel_select_bits [9 28]"},
	{file: "bad-channel-xor-lead.yaml", old: `{value: [10, 14, 22, 26],`, new: `{value: [14, 10, 22, 26],`,
		msg: "hbm.channel_xor[1].value: [14 10 22 26] must start with channel bit 10"},
	{file: "bad-hbm-bandwidth.yaml", old: `channel_gb_per_s: {value: 48,`, new: `channel_gb_per_s: {value: 64,`,
		msg: "hbm.channel_gb_per_s.value: 64, want controller_ghz × controller_bytes_per_cycle = 48"},
	{file: "bad-dma-engines.yaml", old: `engines_per_chip: {value: 8,`, new: `engines_per_chip: {value: 16,`,
		msg: "dma.engines_per_chip.value: 16, want chip.clusters × cluster.dmns / dmns_per_engine (one engine per pair of DMNs, 002 L2404) = 8"},
	{file: "bad-transpose.yaml", old: `{bits: 16, elements_per_packet: 8, output_alignment: 16,`, new: `{bits: 16, elements_per_packet: 8, output_alignment: 32,`, line: "  types:\n",
		msg: "transpose.types.value: 16-bit row: output_alignment 32 × 16 bits != bus 32 bytes"},
	{file: "bad-multi-document.yaml", old: "pcie:\n", new: "pcie:\n  bytes_per_cycle: {value: 30, cite: \"002 L2605\"}\n---\npcie:\n", line: "---\n",
		msg: "more than one YAML document"},
}

// handWritten are the rejection cases written by hand (small files).
var handWritten = []struct{ file, want string }{
	{"bad-syntax.yaml", "bad-syntax.yaml:2: did not find expected ',' or '}'"},
	// yaml.v3 prints no line for a problem on the first line; it is line 1.
	{"bad-syntax-first-line.yaml", "bad-syntax-first-line.yaml:1: mapping values are not allowed in this context"},
	{"bad-unknown-field.yaml", "bad-unknown-field.yaml:3: clock.bogus: unknown field (not in engines.ClockSpec)"},
	{"bad-type.yaml", "bad-type.yaml:2: clock.ghz: cannot unmarshal !!str `fast` into float64"},
	{"bad-duplicate.yaml", `bad-duplicate.yaml:3: clock: mapping key "clock" already defined at line 1`},
	{"bad-empty.yaml", "bad-empty.yaml:1: empty spec"},
	{"bad-missing-units.yaml", "bad-missing-units.yaml:2: dm: missing required field"},
	{"bad-not-mapping.yaml", "bad-not-mapping.yaml:1: cannot unmarshal !!seq into engines.Spec"},
	{"bad-merge-key.yaml", "bad-merge-key.yaml:4: chip: merge keys (<<) are not supported"},
}

func lineOf(t *testing.T, data []byte, text string) int {
	t.Helper()
	i := strings.Index(string(data), text)
	require.GreaterOrEqual(t, i, 0, "%q not found", text)
	require.Equal(t, i, strings.LastIndex(string(data), text), "%q is not unique", text)
	return strings.Count(string(data[:i]), "\n") + 1
}

func TestRejections(t *testing.T) {
	for _, tc := range generated {
		t.Run(tc.file, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(string(rngdYAML), tc.old), "old text must occur once in rngd.yaml")
			want := []byte(strings.Replace(string(rngdYAML), tc.old, tc.new, 1))
			path := filepath.Join("testdata", tc.file)
			if *update {
				require.NoError(t, os.WriteFile(path, want, 0o644))
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), string(data), "%s is stale: run go test -run TestRejections -update", path)

			anchor := tc.line
			if anchor == "" {
				anchor = tc.new
			}
			msg := fmt.Sprintf("%s:%d: %s", tc.file, lineOf(t, data, anchor), tc.msg)
			_, err = Parse(data, tc.file)
			require.Error(t, err)
			var list ErrorList
			require.True(t, errors.As(err, &list), "error is an ErrorList")
			var msgs []string
			for _, e := range list {
				msgs = append(msgs, e.Error())
			}
			assert.Contains(t, msgs, msg)
		})
	}
	for _, tc := range handWritten {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			s, err := Parse(data, tc.file)
			assert.Nil(t, s)
			require.Error(t, err)
			assert.Contains(t, strings.Split(err.Error(), "\n"), tc.want)
		})
	}
}

// TestRejectionsCoverTestdata makes sure every testdata file is exercised.
func TestRejectionsCoverTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/bad-*.yaml")
	require.NoError(t, err)
	known := map[string]bool{}
	for _, g := range generated {
		known[g.file] = true
	}
	for _, h := range handWritten {
		known[h.file] = true
	}
	for _, f := range files {
		assert.True(t, known[filepath.Base(f)], "%s has no test case", f)
	}
	assert.Len(t, files, len(known))
}

func TestErrorFormat(t *testing.T) {
	assert.Equal(t, "f.yaml:3: dm.banks: bad", (&Error{File: "f.yaml", Line: 3, Field: "dm.banks", Msg: "bad"}).Error())
	assert.Equal(t, "f.yaml:3: bad", (&Error{File: "f.yaml", Line: 3, Msg: "bad"}).Error())
	assert.Equal(t, "f.yaml: bad", (&Error{File: "f.yaml", Msg: "bad"}).Error())
	l := ErrorList{{File: "a", Line: 1, Msg: "x"}, {File: "a", Line: 2, Msg: "y"}}
	assert.Equal(t, "a:1: x\na:2: y", l.Error())
}

func FuzzParse(f *testing.F) {
	f.Add(rngdYAML)
	files, _ := filepath.Glob("testdata/bad-*.yaml")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("clock: &a {ghz: *a}\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if s != nil {
				t.Fatal("spec returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		// An accepted spec is usable.
		s.HBMChannel(^uint64(0))
		s.DMBank(^uint64(0))
		if len(s.Entries()) == 0 {
			t.Fatal("accepted spec has no entries")
		}
	})
}

func BenchmarkHBMChannel(b *testing.B) {
	s := Default()
	var sink int
	for i := 0; b.Loop(); i++ {
		sink += s.HBMChannel(uint64(i) << 8)
	}
	_ = sink
}

func BenchmarkParseDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Parse(rngdYAML, "rngd.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
