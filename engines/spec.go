package engines

import (
	_ "embed" // rngd.yaml
	"fmt"
	"math/bits"
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
