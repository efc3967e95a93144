package engines

import (
	"bytes"
	_ "embed" // rngd.yaml
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"tcpmap/model/pos"
)

// The hardware spec: every number of the RNGD chip that tcpmap uses, each with
// its citation in the manual (seed 002 unless stated). rngd.yaml holds the
// numbers; the types below mirror it field for field, and their doc comments
// repeat the citations. Parse checks the file: unknown, missing, null and
// ill-typed fields, citations, and the arithmetic that ties numbers together
// (slices per cluster = DMNs × slices per DMN, DM bit mapping covers the DM, and
// so on), reporting `file:line: field: message`.

//go:embed rngd.yaml
var rngdYAML []byte

// Value is one hardware number (or list of numbers) as the manual states it,
// with its citation.
type Value[T any] struct {
	// Value is the number, list or name.
	Value T `yaml:"value" json:"value"`
	// Cite names the manual lines that state Value, e.g. "002 L1757-1758, L2018".
	Cite string `yaml:"cite" json:"cite"`
	// DerivedFromExample is true when the manual gives Value only inside a
	// worked example.
	DerivedFromExample bool `yaml:"derived_from_example,omitempty" json:"derived_from_example,omitempty"`
	// Assumption is true when the manual does not state Value and tcpmap chose
	// it; Note says why.
	Assumption bool `yaml:"assumption,omitempty" json:"assumption,omitempty"`
	// Note explains how to read Value or why it was chosen.
	Note string `yaml:"note,omitempty" json:"note,omitempty"`
}

// Int is a cited integer.
type Int = Value[int]

// Ints is a cited list of integers.
type Ints = Value[[]int]

// Float is a cited real number.
type Float = Value[float64]

// Bool is a cited flag.
type Bool = Value[bool]

// Str is a cited name.
type Str = Value[string]

// Strs is a cited list of names.
type Strs = Value[[]string]

// cited is implemented by every *Value; it lets reflection-based code (checks,
// Entries) treat the instantiations alike.
type cited interface {
	citation() (cite string, derived, assumption bool, note string)
	raw() any
}

func (v *Value[T]) citation() (string, bool, bool, string) {
	return v.Cite, v.DerivedFromExample, v.Assumption, v.Note
}

func (v *Value[T]) raw() any { return v.Value }

// Spec is the RNGD hardware as tcpmap models it: one field per unit, mirroring
// rngd.yaml. Obtain it with Default, Load or Parse; treat it as read-only.
type Spec struct {
	// Clock is the core clock.
	Clock ClockSpec `yaml:"clock" json:"clock"`
	// Chip holds chip-level counts.
	Chip ChipSpec `yaml:"chip" json:"chip"`
	// Cluster holds cluster-level counts (002 L130-131, L2863-2872).
	Cluster ClusterSpec `yaml:"cluster" json:"cluster"`
	// Slice holds per-slice counts.
	Slice SliceSpec `yaml:"slice" json:"slice"`
	// Stream holds the Tensor Unit's stream widths.
	Stream StreamSpec `yaml:"stream" json:"stream"`
	// Sequencer holds the limits shared by fetch, commit and DMA sequencers
	// (002 L1628-1638).
	Sequencer SequencerSpec `yaml:"sequencer" json:"sequencer"`
	// Fetch is the Fetch Engine and its adapter (002 L1689-2144).
	Fetch FetchSpec `yaml:"fetch" json:"fetch"`
	// Switch is the Switch Engine (002 L3054-3542).
	Switch SwitchSpec `yaml:"switch" json:"switch"`
	// Collect is the Collect Engine (002 L3543-3669).
	Collect CollectSpec `yaml:"collect" json:"collect"`
	// StreamAdapter is the Aligner's data path (002 L3898-3957).
	StreamAdapter StreamAdapterSpec `yaml:"stream_adapter" json:"stream_adapter"`
	// Contraction is the Contraction Engine overview (002 L3670-3788).
	Contraction ContractionSpec `yaml:"contraction" json:"contraction"`
	// TRF is the tensor register file and its sequencer (002 L4035-4296).
	TRF TRFSpec `yaml:"trf" json:"trf"`
	// Reducer is the Contraction Engine's reducer (002 L4297-4548).
	Reducer ReducerSpec `yaml:"reducer" json:"reducer"`
	// Vector is the Vector Engine (002 L4549-6755).
	Vector VectorSpec `yaml:"vector" json:"vector"`
	// Cast is the Cast Engine (002 L6756-6819).
	Cast CastSpec `yaml:"cast" json:"cast"`
	// Transpose is the Transpose Engine (002 L6820-7041).
	Transpose TransposeSpec `yaml:"transpose" json:"transpose"`
	// Commit is the Commit Engine and its adapter (002 L2145-2353).
	Commit CommitSpec `yaml:"commit" json:"commit"`
	// DM is the data memory (on-chip SRAM) (002 L2862-2941).
	DM DMSpec `yaml:"dm" json:"dm"`
	// SPM is the scratchpad memory (002 L2942-2947).
	SPM SPMSpec `yaml:"spm" json:"spm"`
	// VRF is the vector register file.
	VRF VRFSpec `yaml:"vrf" json:"vrf"`
	// HBM is the high-bandwidth memory (002 L2948-3009).
	HBM HBMSpec `yaml:"hbm" json:"hbm"`
	// DMA is the DMA Engine (002 L2354-2847).
	DMA DMASpec `yaml:"dma" json:"dma"`
	// PCIe is the inter-chip link.
	PCIe PCIeSpec `yaml:"pcie" json:"pcie"`

	name         string   // file name the spec was parsed from
	hbmStackMask uint64   // address bits selecting the HBM stack
	hbmChanMasks []uint64 // per channel bit: the address bits XORed into it
	hbmChannels  int      // channels per stack
}

// ClockSpec is the core clock.
type ClockSpec struct {
	// GHz is the core clock frequency. Not stated by the manual; its cycle
	// estimates assume 1 GHz (002 L2623, L2744). An assumption.
	GHz Float `yaml:"ghz" json:"ghz"`
}

// ChipSpec holds chip-level counts.
type ChipSpec struct {
	// ChipsPerSystem is NUM_CHIPS, system-dependent (002 L129, L1079); the
	// default 1 is an assumption.
	ChipsPerSystem Int `yaml:"chips_per_system" json:"chips_per_system"`
	// Clusters per chip: 2 (002 L130, L1080, L2866).
	Clusters Int `yaml:"clusters" json:"clusters"`
	// SRAMBytes is the chip's DM: 256 MB (002 L138, L1075, L2863).
	SRAMBytes Int `yaml:"sram_bytes" json:"sram_bytes"`
	// MaxChipsPerDMACommand is the largest chip count a DMA command names:
	// 4 (002 L2515, L2474).
	MaxChipsPerDMACommand Int `yaml:"max_chips_per_dma_command" json:"max_chips_per_dma_command"`
}

// ClusterSpec holds cluster-level counts.
type ClusterSpec struct {
	// Slices per cluster: 256 (002 L130-131, L1081).
	Slices Int `yaml:"slices" json:"slices"`
	// DMNs (data memory networks) per cluster: 8 (002 L2867, L2831).
	DMNs Int `yaml:"dmns" json:"dmns"`
	// SlicesPerDMN: 32 (002 L2868, L2872).
	SlicesPerDMN Int `yaml:"slices_per_dmn" json:"slices_per_dmn"`
	// SlicesPerPE: 64 (002 L2343).
	SlicesPerPE Int `yaml:"slices_per_pe" json:"slices_per_pe"`
}

// SliceSpec holds per-slice counts.
type SliceSpec struct {
	// Rows are the MAC rows of the Contraction Engine: 8 (002 L132, L1067,
	// L4298).
	Rows Int `yaml:"rows" json:"rows"`
}

// StreamSpec holds the Tensor Unit's stream widths.
type StreamSpec struct {
	// FlitBytes: 32 (002 L3011, L1878, L2121).
	FlitBytes Int `yaml:"flit_bytes" json:"flit_bytes"`
	// DualChannelFlitBytes: 64 (002 L1997, L2127).
	DualChannelFlitBytes Int `yaml:"dual_channel_flit_bytes" json:"dual_channel_flit_bytes"`
	// MACWidthBytes is what the Reducer consumes per Row per cycle: 64
	// (002 L4099, L3921).
	MACWidthBytes Int `yaml:"mac_width_bytes" json:"mac_width_bytes"`
}

// SequencerSpec holds the limits shared by fetch, commit and DMA sequencers.
type SequencerSpec struct {
	// MaxEntries after merging: 8 (002 L1568, L1630).
	MaxEntries Int `yaml:"max_entries" json:"max_entries"`
	// MaxEntrySize is the iteration limit per entry: 65536 (002 L1632).
	MaxEntrySize Int `yaml:"max_entry_size" json:"max_entry_size"`
	// PacketBytes are the base packet sizes: 1…32 (002 L1632, L2118).
	PacketBytes Ints `yaml:"packet_bytes" json:"packet_bytes"`
}

// FetchSpec is the Fetch Engine and its adapter.
type FetchSpec struct {
	// PacketAlignBytes (FETCH_ALIGN_BYTES): 8 (002 L1723, L2114).
	PacketAlignBytes Int `yaml:"packet_align_bytes" json:"packet_align_bytes"`
	// AddressAlignBytes: 1 (002 L1755-1756).
	AddressAlignBytes Int `yaml:"address_align_bytes" json:"address_align_bytes"`
	// MainFetchSizes are the main context's fetch_size values (002 L1757-1758).
	MainFetchSizes Ints `yaml:"main_fetch_sizes" json:"main_fetch_sizes"`
	// SubFetchSize is the sub context's fetch_size: 8 (002 L1759, L2021).
	SubFetchSize Int `yaml:"sub_fetch_size" json:"sub_fetch_size"`
	// SubFetchSizeI4ToI32 is the sub context's fetch_size when casting i4 to
	// i32: 4 (002 L1759, L2020).
	SubFetchSizeI4ToI32 Int `yaml:"sub_fetch_size_i4_to_i32" json:"sub_fetch_size_i4_to_i32"`
	// MaxCastOutputBytes per fetch: 32 (002 L1996-1998).
	MaxCastOutputBytes Int `yaml:"max_cast_output_bytes" json:"max_cast_output_bytes"`
	// CastLatencyCycles: min and max, 1–2 (002 L2135).
	CastLatencyCycles Ints `yaml:"cast_latency_cycles" json:"cast_latency_cycles"`
	// MaxInterleavedTensors: 2 (002 L1847, L1850).
	MaxInterleavedTensors Int `yaml:"max_interleaved_tensors" json:"max_interleaved_tensors"`
	// PeakDMBytesPerCycle with DMN interleaving: 256 (002 L2133, L3788).
	PeakDMBytesPerCycle Int `yaml:"peak_dm_bytes_per_cycle" json:"peak_dm_bytes_per_cycle"`
	// MaskValidCountMax4Bit: 255 (002 L1902).
	MaskValidCountMax4Bit Int `yaml:"mask_valid_count_max_4bit" json:"mask_valid_count_max_4bit"`
	// MaskValidCountMaxF32: 31 (002 L1902).
	MaskValidCountMaxF32 Int `yaml:"mask_valid_count_max_f32" json:"mask_valid_count_max_f32"`
	// MaskMaxPacketBytes: 256 (002 L1902).
	MaskMaxPacketBytes Int `yaml:"mask_max_packet_bytes" json:"mask_max_packet_bytes"`
	// MaskPerIndexMaxAxis: per-index valid counts need an axis of at most 8
	// (002 L1927).
	MaskPerIndexMaxAxis Int `yaml:"mask_per_index_max_axis" json:"mask_per_index_max_axis"`
}

// SwitchSpec is the Switch Engine.
type SwitchSpec struct {
	// Contexts: one Switch Engine per context, 2 (002 L2125).
	Contexts Int `yaml:"contexts" json:"contexts"`
	// ChannelBytes is each engine's data width: 32 (002 L2125).
	ChannelBytes Int `yaml:"channel_bytes" json:"channel_bytes"`
	// RingSlices: the physical ring connects 256 slices (002 L3057, L3487).
	RingSlices Int `yaml:"ring_slices" json:"ring_slices"`
	// RouterEntries: 256, one per slice (002 L3487).
	RouterEntries Int `yaml:"router_entries" json:"router_entries"`
	// MaxRingSize: 256 (002 L3364).
	MaxRingSize Int `yaml:"max_ring_size" json:"max_ring_size"`
	// RingSizePowerOfTwo: ring_size must be a power of 2 (002 L3364).
	RingSizePowerOfTwo Bool `yaml:"ring_size_power_of_two" json:"ring_size_power_of_two"`
	// RouterBufferPackets: essentially one packet (002 L3489).
	RouterBufferPackets Int `yaml:"router_buffer_packets" json:"router_buffer_packets"`
	// SlicesInOut: InSlice::SIZE = OutSlice::SIZE = 256 (002 L3502).
	SlicesInOut Int `yaml:"slices_in_out" json:"slices_in_out"`
}

// CollectSpec is the Collect Engine.
type CollectSpec struct {
	// OutputPacketBytes: exactly one 32-byte flit (002 L3039, L3544, L3549).
	OutputPacketBytes Int `yaml:"output_packet_bytes" json:"output_packet_bytes"`
	// PadValue: packets are padded with zeros (002 L2122).
	PadValue Int `yaml:"pad_value" json:"pad_value"`
}

// StreamAdapterSpec is the Aligner's data path.
type StreamAdapterSpec struct {
	// CollectFlits: 1, 2 or 3 (002 L3916-3920, L3950).
	CollectFlits Ints `yaml:"collect_flits" json:"collect_flits"`
	// DefaultCollectFlits: 2 (002 L3919).
	DefaultCollectFlits Int `yaml:"default_collect_flits" json:"default_collect_flits"`
	// FlitBufferBytes: 96 (002 L3928, L3951).
	FlitBufferBytes Int `yaml:"flit_buffer_bytes" json:"flit_buffer_bytes"`
	// OutPacketBytes: always 64 = mac_width (002 L3921, L3952).
	OutPacketBytes Int `yaml:"out_packet_bytes" json:"out_packet_bytes"`
	// Rows receiving the broadcast: 1, 2, 4, 8 (002 L3931, L3953).
	Rows Ints `yaml:"rows" json:"rows"`
}

// ContractionSpec is the Contraction Engine overview.
type ContractionSpec struct {
	// InputTypes: i4, i8, f8, bf16 (002 L3782).
	InputTypes Strs `yaml:"input_types" json:"input_types"`
	// IntegerOutputType: i4/i8 widen to i32 (002 L3782, L4391).
	IntegerOutputType Str `yaml:"integer_output_type" json:"integer_output_type"`
	// FloatOutputType: f8/bf16 widen to f32 (002 L3782, L4391).
	FloatOutputType Str `yaml:"float_output_type" json:"float_output_type"`
	// Rows: 1, 2, 4 or 8 (002 L3780).
	Rows Ints `yaml:"rows" json:"rows"`
}

// TRFSpec is the tensor register file.
type TRFSpec struct {
	// BankRows: 8, one per Row (002 L4116-4117).
	BankRows Int `yaml:"bank_rows" json:"bank_rows"`
	// BankColumns: 2 (002 L4116).
	BankColumns Int `yaml:"bank_columns" json:"bank_columns"`
	// RowsPerBank in Full mode: 128 (002 L4118).
	RowsPerBank Int `yaml:"rows_per_bank" json:"rows_per_bank"`
	// HalfRowsPerBank in FirstHalf/SecondHalf mode: 64 (002 L4118, L4138).
	HalfRowsPerBank Int `yaml:"half_rows_per_bank" json:"half_rows_per_bank"`
	// RowBytes: 32 logical bytes per bank row (002 L4118).
	RowBytes Int `yaml:"row_bytes" json:"row_bytes"`
	// RowBits: 320 physical bits per bank row (002 L4118, L4140).
	RowBits Int `yaml:"row_bits" json:"row_bits"`
	// SlotBits: elements are stored in 5-bit slots (002 L4140).
	SlotBits Int `yaml:"slot_bits" json:"slot_bits"`
	// BytesPerRowLane: 8 KB per Row (002 L139, L1089).
	BytesPerRowLane Int `yaml:"bytes_per_row_lane" json:"bytes_per_row_lane"`
	// AddressBits are the widths of the TRF address fields (002 L4130-4140).
	AddressBits TRFAddressBits `yaml:"address_bits" json:"address_bits"`
	// AddressModes: FirstHalf, SecondHalf, Full (002 L4151-4155).
	AddressModes Strs `yaml:"address_modes" json:"address_modes"`
	// Rows (bank rows used): 1, 2, 4, 8 (002 L4162-4167).
	Rows Ints `yaml:"rows" json:"rows"`
	// RegReadSizes: powers of two 1…64 bytes (002 L4104).
	RegReadSizes Ints `yaml:"reg_read_sizes" json:"reg_read_sizes"`
	// FullReadAlignBytes: with reg_read_size = 64, base and strides align to 64
	// (002 L4110-4111).
	FullReadAlignBytes Int `yaml:"full_read_align_bytes" json:"full_read_align_bytes"`
	// RegTypes is the reg_types table (002 L4141-4147).
	RegTypes Value[[]TRFRegType] `yaml:"reg_types" json:"reg_types"`
	// Sequencer holds the TRF sequencer limits (002 L4171-4175).
	Sequencer TRFSequencerSpec `yaml:"sequencer" json:"sequencer"`
	// Cache is the TRF read cache (002 L4179-4199).
	Cache TRFCacheSpec `yaml:"cache" json:"cache"`
}

// TRFAddressBits are the widths of the TRF address fields (002 L4130-4140).
type TRFAddressBits struct {
	// BankRow: 3 bits (002 L4133, L4137).
	BankRow Int `yaml:"bank_row" json:"bank_row"`
	// RowInBankFull: 7 bits (002 L4133, L4138).
	RowInBankFull Int `yaml:"row_in_bank_full" json:"row_in_bank_full"`
	// RowInBankHalf: 6 bits (002 L4133, L4138).
	RowInBankHalf Int `yaml:"row_in_bank_half" json:"row_in_bank_half"`
	// BankCol: 1 bit (002 L4133, L4139).
	BankCol Int `yaml:"bank_col" json:"bank_col"`
	// Offset: 6 bits of 5-bit slots (002 L4133, L4140).
	Offset Int `yaml:"offset" json:"offset"`
}

// TRFRegType is one row of the reg_types table (002 L4141-4147).
type TRFRegType struct {
	// RegType is the reg_types value.
	RegType int `yaml:"reg_type" json:"reg_type"`
	// ElementBits is the stored element width.
	ElementBits int `yaml:"element_bits" json:"element_bits"`
	// Slots is the number of 5-bit slots per element.
	Slots int `yaml:"slots" json:"slots"`
	// ElementsPerRow is the number of elements per bank row.
	ElementsPerRow int `yaml:"elements_per_row" json:"elements_per_row"`
}

// TRFSequencerSpec holds the TRF sequencer limits.
type TRFSequencerSpec struct {
	// MaxEntries: 8 (002 L4173).
	MaxEntries Int `yaml:"max_entries" json:"max_entries"`
	// MaxEntrySize: 65536 (002 L4174).
	MaxEntrySize Int `yaml:"max_entry_size" json:"max_entry_size"`
	// StrideBits: strides are signed 32-bit (002 L4175).
	StrideBits Int `yaml:"stride_bits" json:"stride_bits"`
}

// TRFCacheSpec is the direct-mapped TRF read cache.
type TRFCacheSpec struct {
	// RowsPerLane: 4 (002 L4186).
	RowsPerLane Int `yaml:"rows_per_lane" json:"rows_per_lane"`
	// Columns: 2 bank columns (002 L4186).
	Columns Int `yaml:"columns" json:"columns"`
	// EntryBytes: 32 (002 L4187).
	EntryBytes Int `yaml:"entry_bytes" json:"entry_bytes"`
	// Lanes (Rows): 8 (002 L4188).
	Lanes Int `yaml:"lanes" json:"lanes"`
	// TotalBytes: 2048 (002 L4189).
	TotalBytes Int `yaml:"total_bytes" json:"total_bytes"`
}

// ReducerSpec is the Contraction Engine's reducer.
type ReducerSpec struct {
	// Rows: 8 (002 L4298, L4529).
	Rows Int `yaml:"rows" json:"rows"`
	// TreeDepth per input type (002 L4388, L4530-4531).
	TreeDepth ReducerTypes `yaml:"tree_depth" json:"tree_depth"`
	// SpatialLatencyCycles per input type (002 L4543).
	SpatialLatencyCycles ReducerTypes `yaml:"spatial_latency_cycles" json:"spatial_latency_cycles"`
	// ResizeColumns: output resized to 32 i32/f32 elements per Row (002 L4397).
	ResizeColumns Int `yaml:"resize_columns" json:"resize_columns"`
	// SpatialOutputLimitElements at tree depth 0: 32 (002 L4531-4532).
	SpatialOutputLimitElements Int `yaml:"spatial_output_limit_elements" json:"spatial_output_limit_elements"`
	// AccumulatorRows: 8 (002 L4409, L4534).
	AccumulatorRows Int `yaml:"accumulator_rows" json:"accumulator_rows"`
	// AccumulatorColumns: 32 (002 L4409, L4534).
	AccumulatorColumns Int `yaml:"accumulator_columns" json:"accumulator_columns"`
	// AccumulatorRegistersPerColumn: 4 (002 L4409, L4534).
	AccumulatorRegistersPerColumn Int `yaml:"accumulator_registers_per_column" json:"accumulator_registers_per_column"`
	// AccumulatorSlots: 1024 (002 L4409, L4432, L4534).
	AccumulatorSlots Int `yaml:"accumulator_slots" json:"accumulator_slots"`
	// InterleavedInnerCapacity: 128 (002 L4434, L4535-4536).
	InterleavedInnerCapacity Int `yaml:"interleaved_inner_capacity" json:"interleaved_inner_capacity"`
	// SequentialInnerCapacity: 32 (002 L4434, L4537).
	SequentialInnerCapacity Int `yaml:"sequential_inner_capacity" json:"sequential_inner_capacity"`
	// OutputBusElements per beat: 8 (002 L4436, L4484, L4491).
	OutputBusElements Int `yaml:"output_bus_elements" json:"output_bus_elements"`
	// SequentialOutputElements: 8, 16, 24 or 32 (002 L4491).
	SequentialOutputElements Ints `yaml:"sequential_output_elements" json:"sequential_output_elements"`
	// ReduceMaxRows: reduce-max uses Row 0 only (002 L4395, L4533).
	ReduceMaxRows Int `yaml:"reduce_max_rows" json:"reduce_max_rows"`
}

// ReducerTypes holds one number per reducer input type (002 L3782).
type ReducerTypes struct {
	// I4 is the value for i4.
	I4 Int `yaml:"i4" json:"i4"`
	// I8 is the value for i8.
	I8 Int `yaml:"i8" json:"i8"`
	// F8 is the value for f8.
	F8 Int `yaml:"f8" json:"f8"`
	// BF16 is the value for bf16.
	BF16 Int `yaml:"bf16" json:"bf16"`
}

// VectorSpec is the Vector Engine.
type VectorSpec struct {
	// Types: i32 and f32 only (002 L4551, L5254).
	Types Strs `yaml:"types" json:"types"`
	// Way8ElementsPerCycle: 8 (002 L4731, L5272).
	Way8ElementsPerCycle Int `yaml:"way8_elements_per_cycle" json:"way8_elements_per_cycle"`
	// Way4ElementsPerCycle: 4 (002 L4731, L5273).
	Way4ElementsPerCycle Int `yaml:"way4_elements_per_cycle" json:"way4_elements_per_cycle"`
	// ALULatencyCycles: each ALU adds one cycle (002 L5275).
	ALULatencyCycles Int `yaml:"alu_latency_cycles" json:"alu_latency_cycles"`
	// ExecutionIDBits: 4 (002 L4795, L5255).
	ExecutionIDBits Int `yaml:"execution_id_bits" json:"execution_id_bits"`
	// StashSlots per pass: 1 (002 L4984, L5258).
	StashSlots Int `yaml:"stash_slots" json:"stash_slots"`
	// LogicALUs (002 L4805).
	LogicALUs Strs `yaml:"logic_alus" json:"logic_alus"`
	// FxpALUs (002 L4823).
	FxpALUs Strs `yaml:"fxp_alus" json:"fxp_alus"`
	// FloatALUs (002 L4877).
	FloatALUs Strs `yaml:"float_alus" json:"float_alus"`
	// ClipALUs (002 L4955).
	ClipALUs Strs `yaml:"clip_alus" json:"clip_alus"`
	// IntraReduceTreeWidth: 4-way (002 L5386).
	IntraReduceTreeWidth Int `yaml:"intra_reduce_tree_width" json:"intra_reduce_tree_width"`
	// IntraReduceTreeDepth: 2 (002 L5387).
	IntraReduceTreeDepth Int `yaml:"intra_reduce_tree_depth" json:"intra_reduce_tree_depth"`
	// IntraReduceAccumulatorSlots: 8 (002 L5381, L5388).
	IntraReduceAccumulatorSlots Int `yaml:"intra_reduce_accumulator_slots" json:"intra_reduce_accumulator_slots"`
	// InterSliceSlices: reduction within the 256 slices of a cluster (002 L6584).
	InterSliceSlices Int `yaml:"inter_slice_slices" json:"inter_slice_slices"`
	// InterSliceCycles256Slices: 256 cycles to reduce 256 slice results, from
	// a worked example (002 L4369, L4375).
	InterSliceCycles256Slices Int `yaml:"inter_slice_cycles_256_slices" json:"inter_slice_cycles_256_slices"`
	// VCGMaxValidCount: vc ∈ 0…8 (002 L6176).
	VCGMaxValidCount Int `yaml:"vcg_max_valid_count" json:"vcg_max_valid_count"`
	// VCGMaxCounters: up to 8 (002 L6202, L6213).
	VCGMaxCounters Int `yaml:"vcg_max_counters" json:"vcg_max_counters"`
	// VCGGateDims: 3 (002 L6184, L6189).
	VCGGateDims Int `yaml:"vcg_gate_dims" json:"vcg_gate_dims"`
}

// CastSpec is the Cast Engine.
type CastSpec struct {
	// InputPacketBytes: exactly one flit (002 L6781).
	InputPacketBytes Int `yaml:"input_packet_bytes" json:"input_packet_bytes"`
	// OutputPacketBytes: padded back to 32 bytes (002 L6782).
	OutputPacketBytes Int `yaml:"output_packet_bytes" json:"output_packet_bytes"`
}

// TransposeSpec is the Transpose Engine.
type TransposeSpec struct {
	// Buffers: 2 (002 L6859).
	Buffers Int `yaml:"buffers" json:"buffers"`
	// BufferCols: num_buffer_cols = 16 (002 L6859).
	BufferCols Int `yaml:"buffer_cols" json:"buffer_cols"`
	// BusBytes: input and output packets are 32 bytes (002 L6865, L6885).
	BusBytes Int `yaml:"bus_bytes" json:"bus_bytes"`
	// Types is the per-width parameter table (002 L6877-6883).
	Types Value[[]TransposeType] `yaml:"types" json:"types"`
}

// TransposeType is one row of the Transpose Engine's parameter table
// (002 L6877-6883).
type TransposeType struct {
	// Bits is the element width.
	Bits int `yaml:"bits" json:"bits"`
	// ElementsPerPacket is elements_per_packet.
	ElementsPerPacket int `yaml:"elements_per_packet" json:"elements_per_packet"`
	// OutputAlignment is output_alignment, in elements.
	OutputAlignment int `yaml:"output_alignment" json:"output_alignment"`
	// MaxInRows is the largest in_rows.
	MaxInRows int `yaml:"max_in_rows" json:"max_in_rows"`
	// ValidInCols are the valid in_cols.
	ValidInCols []int `yaml:"valid_in_cols" json:"valid_in_cols"`
}

// CommitSpec is the Commit Engine and its adapter.
type CommitSpec struct {
	// InputPacketBytes: always a full 32-byte flit (002 L2192, L2328).
	InputPacketBytes Int `yaml:"input_packet_bytes" json:"input_packet_bytes"`
	// CommitInSizes: 8, 16, 24, 32 (002 L2193, L2330).
	CommitInSizes Ints `yaml:"commit_in_sizes" json:"commit_in_sizes"`
	// MainCommitSizes: 8, 16, 24, 32 (002 L2247, L2330).
	MainCommitSizes Ints `yaml:"main_commit_sizes" json:"main_commit_sizes"`
	// SubCommitSize: 8 (002 L2248, L2330).
	SubCommitSize Int `yaml:"sub_commit_size" json:"sub_commit_size"`
	// StrideMultipleBytes: commit strides are multiples of 8 bytes (002 L2338).
	StrideMultipleBytes Int `yaml:"stride_multiple_bytes" json:"stride_multiple_bytes"`
	// SliceBitmapBits: 256 (002 L2316, L2343).
	SliceBitmapBits Int `yaml:"slice_bitmap_bits" json:"slice_bitmap_bits"`
	// GenerateValueBits: generate mode writes one 32-bit value (002 L2325-2326).
	GenerateValueBits Int `yaml:"generate_value_bits" json:"generate_value_bits"`
}

// DMSpec is the data memory of one slice and its networks.
type DMSpec struct {
	// BytesPerSlice: 512 KB (002 L138, L1088, L2874).
	BytesPerSlice Int `yaml:"bytes_per_slice" json:"bytes_per_slice"`
	// Banks per slice: 16 (002 L2869, L2874).
	Banks Int `yaml:"banks" json:"banks"`
	// BankWidthBytes: 8 (002 L2871, L2874, L2414).
	BankWidthBytes Int `yaml:"bank_width_bytes" json:"bank_width_bytes"`
	// RowsPerBank: 4096 (002 L2870).
	RowsPerBank Int `yaml:"rows_per_bank" json:"rows_per_bank"`
	// BytesPerCyclePerSlice: 128 (002 L2874).
	BytesPerCyclePerSlice Int `yaml:"bytes_per_cycle_per_slice" json:"bytes_per_cycle_per_slice"`
	// AddressBits is the slice address bit mapping (002 L2875-2879).
	AddressBits DMAddressBits `yaml:"address_bits" json:"address_bits"`
	// ReadAlignBytes: 1 (002 L2426, L2414).
	ReadAlignBytes Int `yaml:"read_align_bytes" json:"read_align_bytes"`
	// WriteAlignBytes: 8 (002 L2426, L2414, L2836).
	WriteAlignBytes Int `yaml:"write_align_bytes" json:"write_align_bytes"`
	// MisalignedWriteFactor: read-modify-write triples the time (002 L2414).
	MisalignedWriteFactor Int `yaml:"misaligned_write_factor" json:"misaligned_write_factor"`
	// ControllerPriority lists the DM requesters, highest first (002 L2899-2904).
	ControllerPriority Strs `yaml:"controller_priority" json:"controller_priority"`
	// DMNBytesPerCycle: 128 per DMN (002 L2884, L2934, L2603).
	DMNBytesPerCycle Int `yaml:"dmn_bytes_per_cycle" json:"dmn_bytes_per_cycle"`
	// InterleavedBytesPerCycle: 256 with DMN interleaving (002 L2603, L2814,
	// L2935).
	InterleavedBytesPerCycle Int `yaml:"interleaved_bytes_per_cycle" json:"interleaved_bytes_per_cycle"`
	// DMAUnitCyclesPerDMN: a 256-byte transfer takes 2 cycles on one DMN
	// (002 L2884, L2657).
	DMAUnitCyclesPerDMN Int `yaml:"dma_unit_cycles_per_dmn" json:"dma_unit_cycles_per_dmn"`
	// CommandQueueEntriesPerSlice: 2 (002 L2895, L2935).
	CommandQueueEntriesPerSlice Int `yaml:"command_queue_entries_per_slice" json:"command_queue_entries_per_slice"`
	// BankStarvation holds the 64-access rule's numbers (002 L2897-2941).
	BankStarvation BankStarvationSpec `yaml:"bank_starvation" json:"bank_starvation"`
}

// DMAddressBits is the slice address bit mapping, least significant bit first
// (002 L2875-2879).
type DMAddressBits struct {
	// Byte: bits 0–2 (002 L2877).
	Byte Ints `yaml:"byte" json:"byte"`
	// Bank: bits 3–6 (002 L2878).
	Bank Ints `yaml:"bank" json:"bank"`
	// Row: bits 7–18 (002 L2879).
	Row Ints `yaml:"row" json:"row"`
}

// BankStarvationSpec holds the numbers of the 64-access rule.
type BankStarvationSpec struct {
	// ConsecutiveAccessLimit: a run of 64 consecutive same-bank accesses is a
	// violation (002 L2856, L2920, L2938-2939); see docs/spec-decisions.md.
	ConsecutiveAccessLimit Int `yaml:"consecutive_access_limit" json:"consecutive_access_limit"`
	// NoCTimeoutCycles: 4096 (002 L2905, L2940, L2841).
	NoCTimeoutCycles Int `yaml:"noc_timeout_cycles" json:"noc_timeout_cycles"`
	// TDMAIOBytes: TDMA_IO_BYTE = 256 (002 L2939).
	TDMAIOBytes Int `yaml:"tdma_io_bytes" json:"tdma_io_bytes"`
	// DMNIOBytes: DMN_IO_BYTE = 128 (002 L2939).
	DMNIOBytes Int `yaml:"dmn_io_bytes" json:"dmn_io_bytes"`
	// DMNSize: DMN_SIZE = 32 (002 L2939).
	DMNSize Int `yaml:"dmn_size" json:"dmn_size"`
	// DMABanksPerRequest: a DMA request occupies 16 banks (002 L2929, L2908).
	DMABanksPerRequest Int `yaml:"dma_banks_per_request" json:"dma_banks_per_request"`
	// SubBanksPerAccess: sub fetch/commit occupy one bank (002 L2929).
	SubBanksPerAccess Int `yaml:"sub_banks_per_access" json:"sub_banks_per_access"`
}

// SPMSpec is the scratchpad memory.
type SPMSpec struct {
	// BytesPerCyclePerDMN: 128 (002 L2945, L2947); see docs/spec-decisions.md.
	BytesPerCyclePerDMN Int `yaml:"bytes_per_cycle_per_dmn" json:"bytes_per_cycle_per_dmn"`
	// SameChipOnly: SPM transfers stay on one chip (002 L2825).
	SameChipOnly Bool `yaml:"same_chip_only" json:"same_chip_only"`
}

// VRFSpec is the vector register file.
type VRFSpec struct {
	// BytesPerSlice: 8 KB (002 L140, L1090, L7917).
	BytesPerSlice Int `yaml:"bytes_per_slice" json:"bytes_per_slice"`
}

// HBMSpec is the high-bandwidth memory of one chip.
type HBMSpec struct {
	// Bytes: 48 GB (002 L137, L2949).
	Bytes Value[int64] `yaml:"bytes" json:"bytes"`
	// PeakTBPerS: 1.5 TB/s (002 L137, L2980, L2819).
	PeakTBPerS Float `yaml:"peak_tb_per_s" json:"peak_tb_per_s"`
	// ReadTBPerS: 0.75 TB/s (002 L2602, L2636).
	ReadTBPerS Float `yaml:"read_tb_per_s" json:"read_tb_per_s"`
	// WriteTBPerS: 0.75 TB/s (002 L2602).
	WriteTBPerS Float `yaml:"write_tb_per_s" json:"write_tb_per_s"`
	// Stacks: 2 (002 L2952).
	Stacks Int `yaml:"stacks" json:"stacks"`
	// ChannelsPerStack: 16 (002 L2953).
	ChannelsPerStack Int `yaml:"channels_per_stack" json:"channels_per_stack"`
	// SlicesPerChannel: 3 (002 L2954).
	SlicesPerChannel Int `yaml:"slices_per_channel" json:"slices_per_channel"`
	// BankGroupsPerSlice: 4 (002 L2955).
	BankGroupsPerSlice Int `yaml:"bank_groups_per_slice" json:"bank_groups_per_slice"`
	// BanksPerBankGroup: 4 (002 L2956).
	BanksPerBankGroup Int `yaml:"banks_per_bank_group" json:"banks_per_bank_group"`
	// RowsPerBank: 16K (002 L2957).
	RowsPerBank Int `yaml:"rows_per_bank" json:"rows_per_bank"`
	// BytesPerRow: 2K (002 L2958, L2974).
	BytesPerRow Int `yaml:"bytes_per_row" json:"bytes_per_row"`
	// AddressBits is the chip address bit mapping (002 L2961-2977).
	AddressBits HBMAddressBits `yaml:"address_bits" json:"address_bits"`
	// ChannelXOR lists, per channel bit (least significant first), the address
	// bits XORed into it; the first is the channel bit itself (002 L2977).
	// Only bit 0 is stated; see docs/spec-decisions.md.
	ChannelXOR []Ints `yaml:"channel_xor" json:"channel_xor"`
	// ChannelSelectBits: the lowest and highest address bit feeding the
	// channel, 9 and 28 (002 L2738, L2988).
	ChannelSelectBits Ints `yaml:"channel_select_bits" json:"channel_select_bits"`
	// ControllerGHz: 0.75 (002 L2980).
	ControllerGHz Float `yaml:"controller_ghz" json:"controller_ghz"`
	// ControllerBytesPerCycle: 64 (002 L2980).
	ControllerBytesPerCycle Int `yaml:"controller_bytes_per_cycle" json:"controller_bytes_per_cycle"`
	// ChannelGBPerS: 48 (002 L2980, L2819).
	ChannelGBPerS Float `yaml:"channel_gb_per_s" json:"channel_gb_per_s"`
	// BurstPerCycle: 8 bursts per controller cycle (002 L3009).
	BurstPerCycle Int `yaml:"burst_per_cycle" json:"burst_per_cycle"`
	// AccessUnitBytes: 256 (002 L2980, L2983).
	AccessUnitBytes Int `yaml:"access_unit_bytes" json:"access_unit_bytes"`
	// CyclesPerAccessUnit: 4 controller cycles (002 L2980, L2623).
	CyclesPerAccessUnit Int `yaml:"cycles_per_access_unit" json:"cycles_per_access_unit"`
	// CommandQueueEntries per channel controller: 64 (002 L2981).
	CommandQueueEntries Int `yaml:"command_queue_entries" json:"command_queue_entries"`
	// UnalignedReadFactor: 2 (002 L2859, L2984).
	UnalignedReadFactor Int `yaml:"unaligned_read_factor" json:"unaligned_read_factor"`
	// UnalignedWriteFactor: roughly 50 (002 L2859, L2985).
	UnalignedWriteFactor Int `yaml:"unaligned_write_factor" json:"unaligned_write_factor"`
	// RowConflictFactor: 30–40× vs an open row (002 L2860, L2987).
	RowConflictFactor Ints `yaml:"row_conflict_factor" json:"row_conflict_factor"`
	// RowSwitchNs: 40–50 ns (002 L2987).
	RowSwitchNs Ints `yaml:"row_switch_ns" json:"row_switch_ns"`
	// RowSwitchCyclesTCCDClock: 60–75 cycles at 1.5 GHz (002 L2987).
	RowSwitchCyclesTCCDClock Ints `yaml:"row_switch_cycles_tccd_clock" json:"row_switch_cycles_tccd_clock"`
	// TCCDGHz: tCCD is counted at 1.5 GHz (002 L2997).
	TCCDGHz Float `yaml:"tccd_ghz" json:"tccd_ghz"`
	// TCCDSameSliceOtherBankGroup: 2 cycles (002 L2999).
	TCCDSameSliceOtherBankGroup Int `yaml:"tccd_same_slice_other_bank_group" json:"tccd_same_slice_other_bank_group"`
	// TCCDOtherSlice: 3 cycles (002 L3000).
	TCCDOtherSlice Int `yaml:"tccd_other_slice" json:"tccd_other_slice"`
	// TCCDSameSliceSameBankGroup: 4 cycles (002 L3001).
	TCCDSameSliceSameBankGroup Int `yaml:"tccd_same_slice_same_bank_group" json:"tccd_same_slice_same_bank_group"`
	// CyclesPerRequest: ≈5.3 core cycles per 256-byte request per channel, from
	// a worked example (002 L2744).
	CyclesPerRequest Float `yaml:"cycles_per_request" json:"cycles_per_request"`
	// BankConflictCyclesPerRequest: ≈40, from a worked example (002 L2710).
	BankConflictCyclesPerRequest Int `yaml:"bank_conflict_cycles_per_request" json:"bank_conflict_cycles_per_request"`
}

// HBMAddressBits is the chip's HBM address bit mapping, least significant bit
// first (002 L2961-2973).
type HBMAddressBits struct {
	// Byte: bits 0–7 and 14–16 (002 L2963, L2967, L2974).
	Byte Ints `yaml:"byte" json:"byte"`
	// Stack: bit 8 (002 L2964).
	Stack Ints `yaml:"stack" json:"stack"`
	// Channel: bits 9–12, before the XOR (002 L2965).
	Channel Ints `yaml:"channel" json:"channel"`
	// BankGroup: bits 13 and 19 (002 L2966, L2969).
	BankGroup Ints `yaml:"bank_group" json:"bank_group"`
	// Bank: bits 17–18 (002 L2968).
	Bank Ints `yaml:"bank" json:"bank"`
	// Slice: bits 20 and 34 (002 L2970, L2972, L2975).
	Slice Ints `yaml:"slice" json:"slice"`
	// Row: bits 21–33 and 35 (002 L2971, L2973).
	Row Ints `yaml:"row" json:"row"`
}

// DMASpec is the DMA Engine.
type DMASpec struct {
	// EnginesPerChip: 8 (002 L2404, L2831).
	EnginesPerChip Int `yaml:"engines_per_chip" json:"engines_per_chip"`
	// DMNsPerEngine: one engine per pair of DMNs (002 L2404, L2831).
	DMNsPerEngine Int `yaml:"dmns_per_engine" json:"dmns_per_engine"`
	// BytesPerCycle per engine: 256 (002 L2596).
	BytesPerCycle Int `yaml:"bytes_per_cycle" json:"bytes_per_cycle"`
	// GBPerSPerEngine: 256 GB/s (002 L2636, L2980).
	GBPerSPerEngine Int `yaml:"gb_per_s_per_engine" json:"gb_per_s_per_engine"`
	// AggregateTBPerS: 2 TB/s (002 L2751).
	AggregateTBPerS Float `yaml:"aggregate_tb_per_s" json:"aggregate_tb_per_s"`
	// StartupCycles per command: ≈500 (002 L2467, L2827).
	StartupCycles Int `yaml:"startup_cycles" json:"startup_cycles"`
	// RequestBytes: packets split into 256-byte requests (002 L2469).
	RequestBytes Int `yaml:"request_bytes" json:"request_bytes"`
	// MaxPacketBytes: 4096 (002 L2428-2429, L2512, L2838).
	MaxPacketBytes Int `yaml:"max_packet_bytes" json:"max_packet_bytes"`
	// AXIMaxBeats: 256 (002 L2414).
	AXIMaxBeats Int `yaml:"axi_max_beats" json:"axi_max_beats"`
	// AXIDataBytes: 16 (002 L2414).
	AXIDataBytes Int `yaml:"axi_data_bytes" json:"axi_data_bytes"`
	// HBMReadAlignBytes: 1 (002 L2426).
	HBMReadAlignBytes Int `yaml:"hbm_read_align_bytes" json:"hbm_read_align_bytes"`
	// HBMWriteAlignBytes: 1 (002 L2426).
	HBMWriteAlignBytes Int `yaml:"hbm_write_align_bytes" json:"hbm_write_align_bytes"`
	// HBMPacketAlignBytes: 1 (002 L2426).
	HBMPacketAlignBytes Int `yaml:"hbm_packet_align_bytes" json:"hbm_packet_align_bytes"`
	// DMReadAlignBytes: 1 (002 L2426).
	DMReadAlignBytes Int `yaml:"dm_read_align_bytes" json:"dm_read_align_bytes"`
	// DMWriteAlignBytes: 8 (002 L2426).
	DMWriteAlignBytes Int `yaml:"dm_write_align_bytes" json:"dm_write_align_bytes"`
	// DMPacketAlignBytes: 8 (002 L2426).
	DMPacketAlignBytes Int `yaml:"dm_packet_align_bytes" json:"dm_packet_align_bytes"`
	// HBMToDMAlignBytes: HBM→DM needs 8 for addresses and packet (002 L2427,
	// L2837).
	HBMToDMAlignBytes Int `yaml:"hbm_to_dm_align_bytes" json:"hbm_to_dm_align_bytes"`
	// SliceStrideBytes: 4 MB virtual address space per slice (002 L2541).
	SliceStrideBytes Int `yaml:"slice_stride_bytes" json:"slice_stride_bytes"`
	// MaxEnginesPerCommand: 32 with four chips (002 L2474).
	MaxEnginesPerCommand Int `yaml:"max_engines_per_command" json:"max_engines_per_command"`
}

// PCIeSpec is the inter-chip link.
type PCIeSpec struct {
	// BytesPerCycle: 30 for reads and writes (002 L2389, L2605, L2845).
	BytesPerCycle Int `yaml:"bytes_per_cycle" json:"bytes_per_cycle"`
}

// Name returns the name of the file the spec was parsed from.
func (s *Spec) Name() string { return s.name }

// TotalSlices returns the slices of one chip: clusters × slices per cluster
// (002 L130-131).
func (s *Spec) TotalSlices() int { return s.Chip.Clusters.Value * s.Cluster.Slices.Value }

// CycleTime returns the duration of one core cycle in seconds (1 / clock).
func (s *Spec) CycleTime() float64 { return 1 / (s.Clock.GHz.Value * 1e9) }

// PeakMACsPerCycle returns the multiply-accumulates one chip performs per
// cycle on elements of elemBits bits: clusters × slices × rows × mac_width
// bytes × 8 / elemBits (002 L130-132, L4099, L4387-4388). elemBits must be
// the width of a Contraction Engine input type: 4 (i4), 8 (i8, f8) or 16
// (bf16) (002 L3782).
func (s *Spec) PeakMACsPerCycle(elemBits int) (int, error) {
	perRow := 0
	for _, t := range s.Reducer.TreeDepth.types() {
		if t.bits == elemBits {
			perRow = 1 << t.v.Value // 2^depth elements reduced per cycle (002 L4388)
		}
	}
	if perRow == 0 {
		return 0, fmt.Errorf("PeakMACsPerCycle: no Contraction Engine input type has %d-bit elements (i4, i8, f8, bf16: 002 L3782)", elemBits)
	}
	return s.TotalSlices() * s.Slice.Rows.Value * perRow, nil
}

// HBMChannel returns the HBM channel, 0 … stacks × channels per stack − 1,
// that the chip address addr falls in: the stack bit (bit 8) selects the upper
// or lower half, and each channel bit is the XOR of the address bits listed in
// channel_xor (002 L2964-2965, L2977). Channel c of stack k is numbered
// k × channels_per_stack + c.
func (s *Spec) HBMChannel(addr uint64) int {
	ch := 0
	for i, m := range s.hbmChanMasks {
		ch |= (bits.OnesCount64(addr&m) & 1) << i
	}
	if addr&s.hbmStackMask != 0 {
		ch += s.hbmChannels
	}
	return ch
}

// HBMLocation is where an HBM address falls: the channel (as HBMChannel
// numbers it) and, within it, the slice, bank group, bank and row.
type HBMLocation struct {
	Channel   int // 0 … stacks × channels per stack − 1
	Slice     int // raw value of the slice bits 20 and 34 (002 L2970, L2972)
	BankGroup int // bits 13 and 19 (002 L2966, L2969)
	Bank      int // bits 17–18 (002 L2968)
	Row       int // bits 21–33 and 35 (002 L2971, L2973)
}

// HBMLocate decodes the chip address addr with the address bit mapping
// (002 L2961-2977). Two accesses with the same Channel, Slice, BankGroup and
// Bank but different Rows conflict: the second must close and open a row
// (002 L2987).
func (s *Spec) HBMLocate(addr uint64) HBMLocation {
	ab := &s.HBM.AddressBits
	return HBMLocation{
		Channel:   s.HBMChannel(addr),
		Slice:     int(extractBits(addr, ab.Slice.Value)),
		BankGroup: int(extractBits(addr, ab.BankGroup.Value)),
		Bank:      int(extractBits(addr, ab.Bank.Value)),
		Row:       int(extractBits(addr, ab.Row.Value)),
	}
}

// DMBank returns the DM bank, 0 … banks − 1, of the byte at slice address addr:
// address bits 3–6 (002 L2875-2879). Bits outside the bank field are ignored.
func (s *Spec) DMBank(addr uint64) int {
	return int(extractBits(addr, s.DM.AddressBits.Bank.Value))
}

// DMRow returns the row within its bank of the byte at slice address addr:
// address bits 7–18 (002 L2879). Bits outside the row field are ignored.
func (s *Spec) DMRow(addr uint64) int {
	return int(extractBits(addr, s.DM.AddressBits.Row.Value))
}

// extractBits gathers the address bits listed (least significant first) into
// an integer.
func extractBits(addr uint64, list []int) uint64 {
	var v uint64
	for i, b := range list {
		v |= (addr >> uint(b) & 1) << uint(i)
	}
	return v
}

type reducerType struct {
	name string
	bits int
	v    *Int
}

// types lists the reducer input types with their element widths (002 L3782,
// L4383).
func (r *ReducerTypes) types() []reducerType {
	return []reducerType{{"i4", 4, &r.I4}, {"i8", 8, &r.I8}, {"f8", 8, &r.F8}, {"bf16", 16, &r.BF16}}
}

// ---- Loading ----

var defaultSpec = sync.OnceValues(func() (*Spec, error) { return Parse(rngdYAML, "rngd.yaml") })

// Default returns the embedded RNGD spec (engines/rngd.yaml), parsed once. It
// panics only if the embedded file is invalid, which TestDefault rules out.
// The returned Spec is shared: do not modify it.
func Default() *Spec {
	s, err := defaultSpec()
	if err != nil {
		panic("engines: embedded rngd.yaml is invalid: " + err.Error())
	}
	return s
}

// Load reads and parses the spec file at path.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Error is a problem in a spec file (a pos.Error): the file, the 1-based
// line (0 if unknown), the dotted field path ("dm.banks.value"; empty for
// syntax errors) and what is wrong, formatted `file:line: field: message`.
type Error = pos.Error

// ErrorList is every problem Parse found, in line order.
type ErrorList = pos.ErrorList

// Parse parses and checks a spec; name is the file name used in errors. It
// rejects YAML syntax errors, unknown, duplicate, missing, null and ill-typed
// fields, malformed citations and numbers that contradict each other; the
// error is an ErrorList of `file:line: field: message`.
func Parse(data []byte, name string) (*Spec, error) {
	p := &parser{file: name, pos: map[cited]fieldPos{}}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, p.yamlError(err, nil)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, ErrorList{{File: name, Line: 1, Msg: "empty spec"}}
	}
	doc := root.Content[0]
	lines := map[int]string{}
	indexLines(doc, "", lines, 0)

	s := &Spec{name: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, p.yamlError(err, lines)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		line := extra.Line
		if err != nil {
			return nil, p.yamlError(err, lines)
		}
		return nil, ErrorList{{File: name, Line: line, Msg: "more than one YAML document"}}
	}

	p.walk(reflect.ValueOf(s).Elem(), doc, "", doc.Line)
	if len(p.errs) > 0 {
		return nil, p.sorted()
	}
	p.check(s)
	if len(p.errs) > 0 {
		return nil, p.sorted()
	}
	s.derive()
	return s, nil
}

// derive precomputes the address-mapping masks used by HBMChannel.
func (s *Spec) derive() {
	s.hbmStackMask = 0
	for _, b := range s.HBM.AddressBits.Stack.Value {
		s.hbmStackMask |= 1 << uint(b)
	}
	s.hbmChanMasks = make([]uint64, len(s.HBM.ChannelXOR))
	for i, x := range s.HBM.ChannelXOR {
		for _, b := range x.Value {
			s.hbmChanMasks[i] |= 1 << uint(b)
		}
	}
	s.hbmChannels = s.HBM.ChannelsPerStack.Value
}

// fieldPos is where a Value sits in the file.
type fieldPos struct {
	path string
	line int
}

type parser struct {
	file string
	pos  map[cited]fieldPos // *Value[T] → its path and line
	errs ErrorList
}

func (p *parser) add(line int, field, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) sorted() ErrorList {
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	return p.errs
}

// yamlError converts a yaml.v3 error (syntax or type errors, which carry
// "line N:" prefixes) into an ErrorList, naming the field at that line.
func (p *parser) yamlError(err error, lines map[int]string) error {
	for _, e := range pos.YAML(p.file, err) {
		m := e.Msg
		field := lines[e.Line]
		if fm := unknownFieldRE.FindStringSubmatch(m); fm != nil && field != "" {
			m = "unknown field (not in " + fm[2] + ")"
		}
		p.add(e.Line, field, "%s", m)
	}
	return p.sorted()
}

var unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)

// indexLines maps each line that holds a mapping key or a sequence item to the
// dotted path of that field, for naming the fields of yaml.v3's line-only
// errors. It does not follow aliases.
func indexLines(n *yaml.Node, path string, lines map[int]string, depth int) {
	if n == nil || depth > 64 {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sub := joinPath(path, k.Value)
			if _, ok := lines[k.Line]; !ok {
				lines[k.Line] = sub
			}
			indexLines(v, sub, lines, depth+1)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			sub := fmt.Sprintf("%s[%d]", path, i)
			if _, ok := lines[c.Line]; !ok && c.Kind != yaml.ScalarNode {
				lines[c.Line] = sub
			}
			indexLines(c, sub, lines, depth+1)
		}
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// yamlName returns a struct field's YAML key and whether it may be omitted.
func yamlName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("yaml")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, strings.Contains(opts, "omitempty")
}

// walk pairs the decoded value v with its node n: it rejects missing required
// fields, nulls and merge keys, and records where each Value sits. keyLine is
// the line of the key that names v (where a block mapping's problems are
// reported).
func (p *parser) walk(v reflect.Value, n *yaml.Node, path string, keyLine int) {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	if isNull(n) {
		p.add(n.Line, path, "null value")
		return
	}
	if c, ok := v.Addr().Interface().(cited); ok {
		p.pos[c] = fieldPos{path: path, line: keyLine}
	}
	switch v.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			p.add(n.Line, path, "expected a mapping")
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "<<" {
				p.add(n.Content[i].Line, path, "merge keys (<<) are not supported")
				return
			}
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, optional := yamlName(f)
			sub := joinPath(path, name)
			var key, val *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == name {
					key, val = n.Content[j], n.Content[j+1]
				}
			}
			if val == nil {
				if !optional {
					p.add(keyLine, sub, "missing required field")
				}
				continue
			}
			p.walk(v.Field(i), val, sub, key.Line)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return // yaml.v3 has already rejected it
		}
		if len(n.Content) != v.Len() {
			// yaml.v3 drops null items from sequences; report them.
			for i, c := range n.Content {
				if isNull(c) {
					p.add(c.Line, fmt.Sprintf("%s[%d]", path, i), "null value")
				}
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			p.walk(v.Index(i), n.Content[i], fmt.Sprintf("%s[%d]", path, i), n.Content[i].Line)
		}
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// ---- Checks ----

// seedLines is the line count of each seed file, for checking citations.
var seedLines = map[string]int{"000": 260, "001": 88, "002": 8720, "003": 469, "004": 154}

var citeRE = regexp.MustCompile(`^(00[0-4]) (L\d+(?:-\d+)?(?:, L\d+(?:-\d+)?)*)$`)

// checkCite validates a citation such as "002 L1757-1758, L2018".
func checkCite(cite string) string {
	m := citeRE.FindStringSubmatch(cite)
	if m == nil {
		return fmt.Sprintf("citation %q is not of the form \"002 L1234[-1240][, L1300]\"", cite)
	}
	limit := seedLines[m[1]]
	for _, part := range strings.Split(m[2], ", ") {
		lo, hi, isRange := strings.Cut(strings.TrimPrefix(part, "L"), "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if isRange {
			b, _ = strconv.Atoi(hi)
		}
		if a < 1 || b > limit || b < a {
			return fmt.Sprintf("citation %q: line range %s outside seed %s (1-%d) or reversed", cite, part, m[1], limit)
		}
	}
	return ""
}

// at returns the path and line of a Value.
func (p *parser) at(field cited) fieldPos { return p.pos[field] }

// fail reports a problem with a Value.
func (p *parser) fail(field cited, format string, args ...any) {
	fp := p.at(field)
	p.add(fp.line, fp.path+".value", format, args...)
}

// eq reports field ≠ want, explaining want.
func (p *parser) eq(field *Int, want int, why string, args ...any) {
	if field.Value != want {
		p.fail(field, "%d, want %s = %d", field.Value, fmt.Sprintf(why, args...), want)
	}
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

func log2(n int) int { return bits.Len(uint(n)) - 1 }

func (p *parser) pow2(fields ...*Int) {
	for _, f := range fields {
		if !isPow2(f.Value) {
			p.fail(f, "%d is not a power of two", f.Value)
		}
	}
}

func (p *parser) pow2List(f *Ints) {
	for _, x := range f.Value {
		if !isPow2(x) {
			p.fail(f, "%d is not a power of two", x)
			return
		}
	}
}

// increasing checks that a list is non-empty and strictly increasing.
func (p *parser) increasing(f *Ints) bool {
	if len(f.Value) == 0 {
		p.fail(f, "empty list")
		return false
	}
	for i := 1; i < len(f.Value); i++ {
		if f.Value[i] <= f.Value[i-1] {
			p.fail(f, "list must be strictly increasing, got %v", f.Value)
			return false
		}
	}
	return true
}

func last(l []int) int {
	if len(l) == 0 {
		return 0
	}
	return l[len(l)-1]
}

// check runs every per-value and cross-value check.
func (p *parser) check(s *Spec) {
	// Generic: citations, notes on assumptions, positive numbers.
	zeroOK := map[any]bool{&s.Collect.PadValue: true}
	var entries []cited
	for c := range p.pos {
		entries = append(entries, c)
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := p.pos[entries[i]], p.pos[entries[j]]
		return a.line < b.line || (a.line == b.line && a.path < b.path)
	})
	for _, c := range entries {
		fp := p.pos[c]
		cite, _, assumption, note := c.citation()
		if msg := checkCite(cite); msg != "" {
			p.add(fp.line, fp.path+".cite", "%s", msg)
		}
		if assumption && strings.TrimSpace(note) == "" {
			p.add(fp.line, fp.path+".note", "an assumption needs a note saying why")
		}
		switch x := c.raw().(type) {
		case int:
			if x < 0 || (x == 0 && !zeroOK[c]) {
				p.add(fp.line, fp.path+".value", "%d must be positive", x)
			}
		case int64:
			if x <= 0 {
				p.add(fp.line, fp.path+".value", "%d must be positive", x)
			}
		case float64:
			if !(x > 0) || math.IsInf(x, 0) {
				p.add(fp.line, fp.path+".value", "%v must be positive and finite", x)
			}
		case []int:
			if len(x) == 0 {
				p.add(fp.line, fp.path+".value", "empty list")
			}
			for _, y := range x {
				if y < 0 {
					p.add(fp.line, fp.path+".value", "%d must not be negative", y)
					break
				}
			}
		case []string:
			if len(x) == 0 {
				p.add(fp.line, fp.path+".value", "empty list")
			}
		case string:
			if x == "" {
				p.add(fp.line, fp.path+".value", "empty name")
			}
		}
	}
	if len(p.errs) > 0 {
		return // the cross checks below assume sane numbers
	}
	p.checkCounts(s)
	p.checkStream(s)
	p.checkTRF(s)
	p.checkReducer(s)
	p.checkVector(s)
	p.checkDM(s)
	p.checkHBM(s)
	p.checkDMA(s)
}

func (p *parser) checkCounts(s *Spec) {
	c := &s.Cluster
	p.pow2(&c.Slices, &c.DMNs, &c.SlicesPerDMN, &c.SlicesPerPE, &s.Chip.Clusters, &s.Slice.Rows)
	p.eq(&c.Slices, c.DMNs.Value*c.SlicesPerDMN.Value, "dmns × slices_per_dmn (%d × %d)", c.DMNs.Value, c.SlicesPerDMN.Value)
	if c.Slices.Value%c.SlicesPerPE.Value != 0 {
		p.fail(&c.SlicesPerPE, "%d does not divide cluster.slices %d", c.SlicesPerPE.Value, c.Slices.Value)
	}
	p.eq(&s.Chip.SRAMBytes, s.Chip.Clusters.Value*c.Slices.Value*s.DM.BytesPerSlice.Value,
		"clusters × slices × dm.bytes_per_slice (%d × %d × %d)", s.Chip.Clusters.Value, c.Slices.Value, s.DM.BytesPerSlice.Value)
	p.eq(&s.Commit.SliceBitmapBits, c.Slices.Value, "cluster.slices")
	sw := &s.Switch
	p.eq(&sw.RingSlices, c.Slices.Value, "cluster.slices")
	p.eq(&sw.RouterEntries, sw.RingSlices.Value, "ring_slices")
	p.eq(&sw.MaxRingSize, sw.RingSlices.Value, "ring_slices")
	p.eq(&sw.SlicesInOut, c.Slices.Value, "cluster.slices")
	p.pow2(&sw.MaxRingSize)
	p.eq(&s.Vector.InterSliceSlices, c.Slices.Value, "cluster.slices")
}

func (p *parser) checkStream(s *Spec) {
	flit := s.Stream.FlitBytes.Value
	p.pow2(&s.Stream.FlitBytes, &s.Stream.MACWidthBytes)
	p.eq(&s.Stream.DualChannelFlitBytes, s.Switch.Contexts.Value*s.Switch.ChannelBytes.Value, "switch.contexts × switch.channel_bytes")
	p.eq(&s.Switch.ChannelBytes, flit, "stream.flit_bytes")
	p.eq(&s.Collect.OutputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Cast.InputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Cast.OutputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Commit.InputPacketBytes, flit, "stream.flit_bytes")
	p.eq(&s.Transpose.BusBytes, flit, "stream.flit_bytes")
	p.eq(&s.Fetch.MaxCastOutputBytes, flit, "stream.flit_bytes")

	// Sequencer and fetch sizes.
	sq := &s.Sequencer
	if p.increasing(&sq.PacketBytes) {
		p.pow2List(&sq.PacketBytes)
		if last(sq.PacketBytes.Value) != flit {
			p.fail(&sq.PacketBytes, "largest base packet %d, want stream.flit_bytes = %d", last(sq.PacketBytes.Value), flit)
		}
	}
	p.pow2(&sq.MaxEntrySize, &s.Fetch.PacketAlignBytes)
	f := &s.Fetch
	if p.increasing(&f.MainFetchSizes) {
		for _, x := range f.MainFetchSizes.Value {
			if !slices.Contains(sq.PacketBytes.Value, x) {
				p.fail(&f.MainFetchSizes, "fetch size %d is not a sequencer base packet size %v", x, sq.PacketBytes.Value)
			}
		}
	}
	for _, v := range []*Int{&f.SubFetchSize, &f.SubFetchSizeI4ToI32} {
		if !slices.Contains(sq.PacketBytes.Value, v.Value) {
			p.fail(v, "fetch size %d is not a sequencer base packet size %v", v.Value, sq.PacketBytes.Value)
		}
	}
	if len(f.CastLatencyCycles.Value) != 2 || f.CastLatencyCycles.Value[0] > f.CastLatencyCycles.Value[1] {
		p.fail(&f.CastLatencyCycles, "want [min, max], got %v", f.CastLatencyCycles.Value)
	}
	p.eq(&f.PeakDMBytesPerCycle, s.DM.InterleavedBytesPerCycle.Value, "dm.interleaved_bytes_per_cycle")

	// Commit sizes: multiples of the commit stride unit, at most one flit.
	cm := &s.Commit
	for _, l := range []*Ints{&cm.CommitInSizes, &cm.MainCommitSizes} {
		if !p.increasing(l) {
			continue
		}
		for _, x := range l.Value {
			if x%cm.StrideMultipleBytes.Value != 0 {
				p.fail(l, "%d is not a multiple of commit.stride_multiple_bytes %d", x, cm.StrideMultipleBytes.Value)
				break
			}
		}
		if last(l.Value) != flit {
			p.fail(l, "largest size %d, want stream.flit_bytes = %d", last(l.Value), flit)
		}
	}
	if !slices.Contains(cm.MainCommitSizes.Value, cm.SubCommitSize.Value) {
		p.fail(&cm.SubCommitSize, "%d is not one of commit.main_commit_sizes %v", cm.SubCommitSize.Value, cm.MainCommitSizes.Value)
	}
	p.eq(&cm.StrideMultipleBytes, s.DM.BankWidthBytes.Value, "dm.bank_width_bytes (writes are whole bank words, 002 L2414)")

	// Stream adapter.
	sa := &s.StreamAdapter
	p.eq(&s.Stream.MACWidthBytes, sa.DefaultCollectFlits.Value*flit, "stream_adapter.default_collect_flits × stream.flit_bytes")
	p.eq(&sa.OutPacketBytes, s.Stream.MACWidthBytes.Value, "stream.mac_width_bytes")
	if p.increasing(&sa.CollectFlits) {
		p.eq(&sa.FlitBufferBytes, last(sa.CollectFlits.Value)*flit, "max collect_flits × stream.flit_bytes")
		if !slices.Contains(sa.CollectFlits.Value, sa.DefaultCollectFlits.Value) {
			p.fail(&sa.DefaultCollectFlits, "%d is not one of collect_flits %v", sa.DefaultCollectFlits.Value, sa.CollectFlits.Value)
		}
	}
	for _, l := range []*Ints{&sa.Rows, &s.Contraction.Rows, &s.TRF.Rows} {
		if p.increasing(l) {
			p.pow2List(l)
			if last(l.Value) != s.Slice.Rows.Value {
				p.fail(l, "largest row count %d, want slice.rows = %d", last(l.Value), s.Slice.Rows.Value)
			}
		}
	}

	// Transpose table: one row per element width, each filling the 32-byte bus.
	tr := &s.Transpose
	prev := 0
	for _, t := range tr.Types.Value {
		switch {
		case t.Bits <= prev:
			p.fail(&tr.Types, "rows must have increasing bits, got %d after %d", t.Bits, prev)
		case t.OutputAlignment*t.Bits != tr.BusBytes.Value*8:
			p.fail(&tr.Types, "%d-bit row: output_alignment %d × %d bits != bus %d bytes", t.Bits, t.OutputAlignment, t.Bits, tr.BusBytes.Value)
		case t.ElementsPerPacket <= 0 || t.ElementsPerPacket*t.Bits > tr.BusBytes.Value*8:
			p.fail(&tr.Types, "%d-bit row: elements_per_packet %d does not fit the %d-byte bus", t.Bits, t.ElementsPerPacket, tr.BusBytes.Value)
		case t.MaxInRows <= 0 || len(t.ValidInCols) == 0:
			p.fail(&tr.Types, "%d-bit row: max_in_rows and valid_in_cols must be positive", t.Bits)
		}
		for _, c := range t.ValidInCols {
			if t.ElementsPerPacket > 0 && (c <= 0 || c%t.ElementsPerPacket != 0) {
				p.fail(&tr.Types, "%d-bit row: in_cols %d is not a multiple of elements_per_packet %d", t.Bits, c, t.ElementsPerPacket)
				break
			}
		}
		prev = t.Bits
	}
	if len(tr.Types.Value) == 0 {
		p.fail(&tr.Types, "empty table")
	}
}

func (p *parser) checkTRF(s *Spec) {
	t := &s.TRF
	a := &t.AddressBits
	p.pow2(&t.BankRows, &t.BankColumns, &t.RowsPerBank, &t.HalfRowsPerBank, &t.RowBytes)
	p.eq(&t.BankRows, 1<<a.BankRow.Value, "2^address_bits.bank_row")
	p.eq(&t.BankRows, s.Slice.Rows.Value, "slice.rows (one bank row per Row, 002 L4117)")
	p.eq(&t.RowsPerBank, 1<<a.RowInBankFull.Value, "2^address_bits.row_in_bank_full")
	p.eq(&t.HalfRowsPerBank, 1<<a.RowInBankHalf.Value, "2^address_bits.row_in_bank_half")
	p.eq(&t.HalfRowsPerBank, t.RowsPerBank.Value/2, "rows_per_bank / 2")
	p.eq(&t.BankColumns, 1<<a.BankCol.Value, "2^address_bits.bank_col")
	p.eq(&t.RowBits, t.SlotBits.Value<<a.Offset.Value, "slot_bits × 2^address_bits.offset")
	p.eq(&t.BytesPerRowLane, t.BankColumns.Value*t.RowsPerBank.Value*t.RowBytes.Value,
		"bank_columns × rows_per_bank × row_bytes (%d × %d × %d)", t.BankColumns.Value, t.RowsPerBank.Value, t.RowBytes.Value)
	if t.RowBytes.Value*8 > t.RowBits.Value {
		p.fail(&t.RowBytes, "%d bytes do not fit a %d-bit row", t.RowBytes.Value, t.RowBits.Value)
	}
	if p.increasing(&t.RegReadSizes) {
		p.pow2List(&t.RegReadSizes)
		if last(t.RegReadSizes.Value) != s.Stream.MACWidthBytes.Value {
			p.fail(&t.RegReadSizes, "largest %d, want stream.mac_width_bytes = %d", last(t.RegReadSizes.Value), s.Stream.MACWidthBytes.Value)
		}
	}
	p.eq(&t.FullReadAlignBytes, s.Stream.MACWidthBytes.Value, "stream.mac_width_bytes")
	for i, r := range t.RegTypes.Value {
		switch {
		case r.RegType != i:
			p.fail(&t.RegTypes, "row %d has reg_type %d, want %d", i, r.RegType, i)
		case r.ElementBits != r.Slots*t.SlotBits.Value:
			p.fail(&t.RegTypes, "reg_type %d: element_bits %d != slots %d × slot_bits %d", i, r.ElementBits, r.Slots, t.SlotBits.Value)
		case r.Slots <= 0 || r.ElementsPerRow*r.Slots != 1<<a.Offset.Value:
			p.fail(&t.RegTypes, "reg_type %d: elements_per_row %d × slots %d != 2^offset = %d", i, r.ElementsPerRow, r.Slots, 1<<a.Offset.Value)
		}
	}
	if len(t.RegTypes.Value) == 0 {
		p.fail(&t.RegTypes, "empty table")
	}
	want := []string{"FirstHalf", "SecondHalf", "Full"}
	if !reflect.DeepEqual(t.AddressModes.Value, want) {
		p.fail(&t.AddressModes, "%v, want %v (the TRF address modes tcpmap implements)", t.AddressModes.Value, want)
	}
	p.eq(&t.Sequencer.MaxEntries, s.Sequencer.MaxEntries.Value, "sequencer.max_entries (002 L4170)")
	p.eq(&t.Sequencer.MaxEntrySize, s.Sequencer.MaxEntrySize.Value, "sequencer.max_entry_size (002 L4170)")
	if t.Sequencer.StrideBits.Value > 64 {
		p.fail(&t.Sequencer.StrideBits, "%d bits exceed 64", t.Sequencer.StrideBits.Value)
	}
	c := &t.Cache
	p.eq(&c.TotalBytes, c.Lanes.Value*c.RowsPerLane.Value*c.Columns.Value*c.EntryBytes.Value,
		"lanes × rows_per_lane × columns × entry_bytes (%d × %d × %d × %d)", c.Lanes.Value, c.RowsPerLane.Value, c.Columns.Value, c.EntryBytes.Value)
	p.eq(&c.Lanes, t.BankRows.Value, "trf.bank_rows")
	p.eq(&c.Columns, t.BankColumns.Value, "trf.bank_columns")
	p.eq(&c.EntryBytes, t.RowBytes.Value, "trf.row_bytes")
}

func (p *parser) checkReducer(s *Spec) {
	r := &s.Reducer
	p.eq(&r.Rows, s.Slice.Rows.Value, "slice.rows")
	p.eq(&r.AccumulatorRows, r.Rows.Value, "reducer.rows")
	macBits := s.Stream.MACWidthBytes.Value * 8
	lat := r.SpatialLatencyCycles.types()
	for i, t := range r.TreeDepth.types() {
		// A tree of depth d reduces 2^d elements: the whole mac_width
		// (002 L4387-4388).
		if t.v.Value >= 31 || (1<<t.v.Value)*t.bits != macBits {
			p.fail(t.v, "%s: 2^%d elements × %d bits != mac_width %d bits", t.name, t.v.Value, t.bits, macBits)
		}
		p.eq(lat[i].v, t.v.Value, "reducer.tree_depth.%s (one cycle per level, 002 L4543)", t.name)
	}
	for _, name := range s.Contraction.InputTypes.Value {
		if !slices.Contains([]string{"i4", "i8", "f8", "bf16"}, name) {
			p.fail(&s.Contraction.InputTypes, "input type %q has no reducer.tree_depth entry", name)
		}
	}
	p.eq(&r.AccumulatorSlots, r.AccumulatorRows.Value*r.AccumulatorColumns.Value*r.AccumulatorRegistersPerColumn.Value,
		"accumulator_rows × accumulator_columns × accumulator_registers_per_column")
	p.eq(&r.ResizeColumns, r.AccumulatorColumns.Value, "accumulator_columns")
	p.eq(&r.SpatialOutputLimitElements, r.ResizeColumns.Value, "resize_columns")
	p.eq(&r.InterleavedInnerCapacity, r.AccumulatorSlots.Value/r.AccumulatorRows.Value, "accumulator_slots / accumulator_rows (002 L4536)")
	p.eq(&r.SequentialInnerCapacity, r.AccumulatorSlots.Value/r.ResizeColumns.Value, "accumulator_slots / resize_columns (002 L4538)")
	p.eq(&r.OutputBusElements, s.Stream.FlitBytes.Value/4, "stream.flit_bytes / 4 (32-bit elements)")
	if p.increasing(&r.SequentialOutputElements) {
		for _, x := range r.SequentialOutputElements.Value {
			if x%r.OutputBusElements.Value != 0 {
				p.fail(&r.SequentialOutputElements, "%d is not a multiple of output_bus_elements %d", x, r.OutputBusElements.Value)
				break
			}
		}
		if last(r.SequentialOutputElements.Value) != r.ResizeColumns.Value {
			p.fail(&r.SequentialOutputElements, "largest %d, want resize_columns = %d", last(r.SequentialOutputElements.Value), r.ResizeColumns.Value)
		}
	}
	if r.ReduceMaxRows.Value > r.Rows.Value {
		p.fail(&r.ReduceMaxRows, "%d exceeds reducer.rows %d", r.ReduceMaxRows.Value, r.Rows.Value)
	}
}

func (p *parser) checkVector(s *Spec) {
	v := &s.Vector
	p.eq(&v.Way8ElementsPerCycle, s.Stream.FlitBytes.Value/4, "stream.flit_bytes / 4 (eight 32-bit values per flit, 002 L4551)")
	p.eq(&v.Way4ElementsPerCycle, v.Way8ElementsPerCycle.Value/2, "way8_elements_per_cycle / 2")
	p.eq(&v.IntraReduceTreeWidth, v.Way4ElementsPerCycle.Value, "way4_elements_per_cycle (002 L5386)")
	p.eq(&v.IntraReduceTreeWidth, 1<<v.IntraReduceTreeDepth.Value, "2^intra_reduce_tree_depth")
	p.eq(&v.VCGMaxValidCount, v.Way8ElementsPerCycle.Value, "way8_elements_per_cycle (elements per flit)")
}

func (p *parser) checkDM(s *Spec) {
	d := &s.DM
	p.pow2(&d.BytesPerSlice, &d.Banks, &d.BankWidthBytes, &d.RowsPerBank)
	p.eq(&d.BytesPerSlice, d.Banks.Value*d.BankWidthBytes.Value*d.RowsPerBank.Value,
		"banks × bank_width_bytes × rows_per_bank (%d × %d × %d)", d.Banks.Value, d.BankWidthBytes.Value, d.RowsPerBank.Value)
	p.eq(&d.BytesPerCyclePerSlice, d.Banks.Value*d.BankWidthBytes.Value, "banks × bank_width_bytes")
	ab := &d.AddressBits
	p.bitField(&ab.Byte, d.BankWidthBytes.Value, "dm.bank_width_bytes")
	p.bitField(&ab.Bank, d.Banks.Value, "dm.banks")
	p.bitField(&ab.Row, d.RowsPerBank.Value, "dm.rows_per_bank")
	p.coverBits(log2(d.BytesPerSlice.Value), "dm.bytes_per_slice", &ab.Byte, &ab.Bank, &ab.Row)
	p.eq(&d.WriteAlignBytes, d.BankWidthBytes.Value, "dm.bank_width_bytes (002 L2414)")
	want := []string{"main_fetch", "main_commit", "sub_fetch", "sub_commit", "dma"}
	got := append([]string(nil), d.ControllerPriority.Value...)
	sort.Strings(got)
	w := append([]string(nil), want...)
	sort.Strings(w)
	if !reflect.DeepEqual(got, w) {
		p.fail(&d.ControllerPriority, "%v, want an order of %v", d.ControllerPriority.Value, want)
	}
	p.eq(&d.InterleavedBytesPerCycle, s.DMA.DMNsPerEngine.Value*d.DMNBytesPerCycle.Value, "dma.dmns_per_engine × dmn_bytes_per_cycle")
	p.eq(&d.DMAUnitCyclesPerDMN, s.DMA.RequestBytes.Value/d.DMNBytesPerCycle.Value, "dma.request_bytes / dmn_bytes_per_cycle")
	if s.DMA.RequestBytes.Value%d.DMNBytesPerCycle.Value != 0 {
		p.fail(&d.DMNBytesPerCycle, "%d does not divide dma.request_bytes %d", d.DMNBytesPerCycle.Value, s.DMA.RequestBytes.Value)
	}

	// The 64-access rule: (TDMA_IO_BYTE / DMN_IO_BYTE) × accesses × DMN_SIZE
	// must stay below the NoC timeout (002 L2938-2939); the limit is the
	// first run length that reaches it.
	b := &d.BankStarvation
	p.eq(&b.TDMAIOBytes, s.DMA.RequestBytes.Value, "dma.request_bytes")
	p.eq(&b.DMNIOBytes, d.DMNBytesPerCycle.Value, "dm.dmn_bytes_per_cycle")
	p.eq(&b.DMNSize, s.Cluster.SlicesPerDMN.Value, "cluster.slices_per_dmn")
	p.eq(&b.DMABanksPerRequest, d.Banks.Value, "dm.banks (a DMA request occupies every bank, 002 L2929)")
	if b.TDMAIOBytes.Value%b.DMNIOBytes.Value == 0 {
		k := b.TDMAIOBytes.Value / b.DMNIOBytes.Value * b.DMNSize.Value
		want := (b.NoCTimeoutCycles.Value + k - 1) / k // smallest n with k·n ≥ timeout
		p.eq(&b.ConsecutiveAccessLimit, want, "ceil(noc_timeout_cycles / ((tdma_io_bytes / dmn_io_bytes) × dmn_size)) = ceil(%d / %d)", b.NoCTimeoutCycles.Value, k)
	} else {
		p.fail(&b.DMNIOBytes, "%d does not divide tdma_io_bytes %d", b.DMNIOBytes.Value, b.TDMAIOBytes.Value)
	}
	if b.SubBanksPerAccess.Value > d.Banks.Value {
		p.fail(&b.SubBanksPerAccess, "%d exceeds dm.banks %d", b.SubBanksPerAccess.Value, d.Banks.Value)
	}
	p.pow2(&s.VRF.BytesPerSlice)
}

// bitField checks that a bit list addresses exactly count units.
func (p *parser) bitField(f *Ints, count int, what string) {
	if p.increasing(f) && 1<<len(f.Value) != count {
		p.fail(f, "%d bits address %d units, want %s = %d", len(f.Value), 1<<len(f.Value), what, count)
	}
}

// coverBits checks that the fields together use each bit 0 … n−1 exactly once.
func (p *parser) coverBits(n int, what string, fields ...*Ints) {
	seen := make([]bool, n)
	for _, f := range fields {
		for _, b := range f.Value {
			switch {
			case b >= n:
				p.fail(f, "bit %d is outside the %d address bits of %s", b, n, what)
				return
			case seen[b]:
				p.fail(f, "bit %d is assigned twice", b)
				return
			}
			seen[b] = true
		}
	}
	for b, ok := range seen {
		if !ok {
			p.fail(fields[0], "address bit %d of %s (%d bits) is in no field", b, what, n)
			return
		}
	}
}

func (p *parser) checkHBM(s *Spec) {
	h := &s.HBM
	ab := &h.AddressBits
	n0 := len(p.errs)
	p.pow2(&h.Stacks, &h.ChannelsPerStack, &h.BankGroupsPerSlice, &h.BanksPerBankGroup, &h.RowsPerBank, &h.BytesPerRow, &h.AccessUnitBytes)
	geometry := int64(h.Stacks.Value) * int64(h.ChannelsPerStack.Value) * int64(h.SlicesPerChannel.Value) *
		int64(h.BankGroupsPerSlice.Value) * int64(h.BanksPerBankGroup.Value) * int64(h.RowsPerBank.Value) * int64(h.BytesPerRow.Value)
	if h.Bytes.Value != geometry {
		p.fail(&h.Bytes, "%d, want stacks × channels × slices × bank groups × banks × rows × bytes per row = %d", h.Bytes.Value, geometry)
	}
	p.bitField(&ab.Byte, h.BytesPerRow.Value, "hbm.bytes_per_row")
	p.bitField(&ab.Stack, h.Stacks.Value, "hbm.stacks")
	p.bitField(&ab.Channel, h.ChannelsPerStack.Value, "hbm.channels_per_stack")
	p.bitField(&ab.BankGroup, h.BankGroupsPerSlice.Value, "hbm.bank_groups_per_slice")
	p.bitField(&ab.Bank, h.BanksPerBankGroup.Value, "hbm.banks_per_bank_group")
	p.bitField(&ab.Row, h.RowsPerBank.Value, "hbm.rows_per_bank")
	if p.increasing(&ab.Slice) && 1<<len(ab.Slice.Value) < h.SlicesPerChannel.Value {
		p.fail(&ab.Slice, "%d bits cannot name %d slices", len(ab.Slice.Value), h.SlicesPerChannel.Value)
	}
	if len(p.errs) > n0 {
		return // the bit-level checks below need a sane geometry
	}
	nbits := bits.Len64(uint64(h.Bytes.Value - 1))
	p.coverBits(nbits, "hbm.bytes", &ab.Byte, &ab.Stack, &ab.Channel, &ab.BankGroup, &ab.Bank, &ab.Slice, &ab.Row)
	if len(ab.Stack.Value) != 1 {
		p.fail(&ab.Stack, "want one stack bit, got %v", ab.Stack.Value)
	}

	// Channel XOR: one entry per channel bit, led by that bit, drawing only on
	// the channel-select range (002 L2738, L2977), each bit used once.
	sel := &h.ChannelSelectBits
	if len(sel.Value) != 2 || sel.Value[0] > sel.Value[1] || sel.Value[1] >= nbits {
		p.fail(sel, "want [lowest, highest] within the %d address bits, got %v", nbits, sel.Value)
		return
	}
	if len(h.ChannelXOR) != len(ab.Channel.Value) {
		p.add(p.at(&ab.Channel).line, "hbm.channel_xor", "%d entries, want one per channel bit (%d)", len(h.ChannelXOR), len(ab.Channel.Value))
		return
	}
	used := map[int]bool{}
	for i := range h.ChannelXOR {
		x := &h.ChannelXOR[i]
		if len(x.Value) == 0 || x.Value[0] != ab.Channel.Value[i] {
			p.fail(x, "%v must start with channel bit %d", x.Value, ab.Channel.Value[i])
			continue
		}
		for _, b := range x.Value {
			if b < sel.Value[0] || b > sel.Value[1] {
				p.fail(x, "bit %d is outside channel_select_bits %v", b, sel.Value)
				break
			}
			if used[b] {
				p.fail(x, "bit %d is XORed into two channel bits", b)
				break
			}
			used[b] = true
		}
	}
	if sel.Value[0] != ab.Channel.Value[0] {
		p.fail(sel, "lowest %d, want the first channel bit %d", sel.Value[0], ab.Channel.Value[0])
	}

	// Bandwidth arithmetic (002 L2980, L2987, L2602).
	const eps = 1e-9
	chGB := h.ControllerGHz.Value * float64(h.ControllerBytesPerCycle.Value)
	if math.Abs(h.ChannelGBPerS.Value-chGB) > eps {
		p.fail(&h.ChannelGBPerS, "%v, want controller_ghz × controller_bytes_per_cycle = %v", h.ChannelGBPerS.Value, chGB)
	}
	peak := float64(h.Stacks.Value*h.ChannelsPerStack.Value) * h.ChannelGBPerS.Value / 1000
	if math.Abs(h.PeakTBPerS.Value-math.Round(peak*10)/10) > eps {
		p.fail(&h.PeakTBPerS, "%v, want channels × channel_gb_per_s = %v TB/s rounded to 0.1", h.PeakTBPerS.Value, peak)
	}
	if math.Abs(h.ReadTBPerS.Value+h.WriteTBPerS.Value-h.PeakTBPerS.Value) > eps {
		p.fail(&h.ReadTBPerS, "read %v + write %v != peak_tb_per_s %v", h.ReadTBPerS.Value, h.WriteTBPerS.Value, h.PeakTBPerS.Value)
	}
	p.eq(&h.CyclesPerAccessUnit, h.AccessUnitBytes.Value/h.ControllerBytesPerCycle.Value, "access_unit_bytes / controller_bytes_per_cycle")
	req := float64(h.CyclesPerAccessUnit.Value) / h.ControllerGHz.Value * s.Clock.GHz.Value
	if math.Abs(h.CyclesPerRequest.Value-math.Round(req*10)/10) > eps {
		p.fail(&h.CyclesPerRequest, "%v, want cycles_per_access_unit / controller_ghz × clock.ghz = %.4f rounded to 0.1", h.CyclesPerRequest.Value, req)
	}
	for _, l := range []*Ints{&h.RowConflictFactor, &h.RowSwitchNs, &h.RowSwitchCyclesTCCDClock} {
		if len(l.Value) != 2 || l.Value[0] > l.Value[1] {
			p.fail(l, "want [min, max], got %v", l.Value)
			return
		}
	}
	for i := range 2 {
		c := float64(h.RowSwitchNs.Value[i]) * h.TCCDGHz.Value
		if math.Abs(float64(h.RowSwitchCyclesTCCDClock.Value[i])-c) > eps {
			p.fail(&h.RowSwitchCyclesTCCDClock, "%v, want row_switch_ns × tccd_ghz = %v", h.RowSwitchCyclesTCCDClock.Value, c)
			break
		}
	}
	if !(h.TCCDSameSliceOtherBankGroup.Value <= h.TCCDOtherSlice.Value && h.TCCDOtherSlice.Value <= h.TCCDSameSliceSameBankGroup.Value) {
		p.fail(&h.TCCDOtherSlice, "tCCD values must grow: other bank group ≤ other slice ≤ same bank group")
	}
}

func (p *parser) checkDMA(s *Spec) {
	d := &s.DMA
	p.eq(&d.EnginesPerChip, s.Chip.Clusters.Value*s.Cluster.DMNs.Value/d.DMNsPerEngine.Value,
		"chip.clusters × cluster.dmns / dmns_per_engine (one engine per pair of DMNs, 002 L2404)")
	if s.Chip.Clusters.Value*s.Cluster.DMNs.Value%d.DMNsPerEngine.Value != 0 {
		p.fail(&d.DMNsPerEngine, "%d does not divide the chip's DMNs", d.DMNsPerEngine.Value)
	}
	p.eq(&d.MaxPacketBytes, d.AXIMaxBeats.Value*d.AXIDataBytes.Value, "axi_max_beats × axi_data_bytes (002 L2414)")
	p.eq(&d.RequestBytes, s.HBM.AccessUnitBytes.Value, "hbm.access_unit_bytes")
	p.eq(&d.BytesPerCycle, d.RequestBytes.Value, "request_bytes (one request per cycle)")
	agg := float64(d.EnginesPerChip.Value*d.GBPerSPerEngine.Value) / 1000
	if math.Abs(d.AggregateTBPerS.Value-math.Round(agg*10)/10) > 1e-9 {
		p.fail(&d.AggregateTBPerS, "%v, want engines_per_chip × gb_per_s_per_engine = %v TB/s rounded to 0.1", d.AggregateTBPerS.Value, agg)
	}
	p.eq(&d.MaxEnginesPerCommand, s.Chip.MaxChipsPerDMACommand.Value*d.EnginesPerChip.Value, "chip.max_chips_per_dma_command × engines_per_chip")
	p.eq(&d.DMWriteAlignBytes, s.DM.WriteAlignBytes.Value, "dm.write_align_bytes")
	p.eq(&d.DMReadAlignBytes, s.DM.ReadAlignBytes.Value, "dm.read_align_bytes")
	for _, a := range []*Int{&d.HBMReadAlignBytes, &d.HBMWriteAlignBytes, &d.HBMPacketAlignBytes, &d.DMReadAlignBytes, &d.DMWriteAlignBytes, &d.DMPacketAlignBytes, &d.HBMToDMAlignBytes} {
		p.pow2(a)
		if d.MaxPacketBytes.Value%a.Value != 0 {
			p.fail(a, "%d does not divide max_packet_bytes %d", a.Value, d.MaxPacketBytes.Value)
		}
	}
	p.pow2(&d.SliceStrideBytes)
	if d.SliceStrideBytes.Value < s.DM.BytesPerSlice.Value {
		p.fail(&d.SliceStrideBytes, "%d is smaller than dm.bytes_per_slice %d", d.SliceStrideBytes.Value, s.DM.BytesPerSlice.Value)
	}
	if s.Chip.ChipsPerSystem.Value > s.Chip.MaxChipsPerDMACommand.Value {
		// Not an error in the hardware, but DMA commands name at most this many
		// chips (002 L2515); planners rely on it.
		p.fail(&s.Chip.ChipsPerSystem, "%d exceeds chip.max_chips_per_dma_command %d", s.Chip.ChipsPerSystem.Value, s.Chip.MaxChipsPerDMACommand.Value)
	}
}

// ---- Listing ----

// Entry is one cited number of a Spec, for listings.
type Entry struct {
	Path               string `json:"path"`  // dotted path, e.g. "dm.banks"
	Value              any    `json:"value"` // the number, list or name
	Cite               string `json:"cite"`
	DerivedFromExample bool   `json:"derived_from_example,omitempty"`
	Assumption         bool   `json:"assumption,omitempty"`
	Note               string `json:"note,omitempty"`
}

// Entries lists every cited value of the spec in file order.
func (s *Spec) Entries() []Entry {
	var out []Entry
	collectEntries(reflect.ValueOf(s).Elem(), "", &out)
	return out
}

func collectEntries(v reflect.Value, path string, out *[]Entry) {
	if v.CanAddr() {
		if c, ok := v.Addr().Interface().(cited); ok {
			cite, derived, assumption, note := c.citation()
			*out = append(*out, Entry{Path: path, Value: c.raw(), Cite: cite, DerivedFromExample: derived, Assumption: assumption, Note: note})
			return
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				name, _ := yamlName(f)
				collectEntries(v.Field(i), joinPath(path, name), out)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			collectEntries(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}
