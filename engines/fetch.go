package engines

import (
	"errors"
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Fetch Engine (002 L1689-2144): the Fetch Sequencer reads DM into a
// packet stream (a Read-mode sequencer, see DeriveSequencer) and the Fetch
// Adapter post-processes the packets (fetch_adapter.go). ConfigFetch is the
// compiler's derivation of both from the types of
// `begin(dm).fetch::<D2, Time, Packet>()`.

// Fetch rules (moving.md §3.3 IDs).
var (
	ruleFetchCluster = NewRule(Rule{ID: "FE-R1", Engine: "fetch", Name: "cluster size",
		Cite: "002 L1709, L1751-1754",
		Text: "Cluster::SIZE is 1 or the chip's 2 clusters (the seed asserts 2; relaxed as the newer library does, docs/spec-decisions.md)"})
	ruleFetchSlice = NewRule(Rule{ID: "FE-R2", Engine: "fetch", Name: "slice size",
		Cite: "002 L1710, L1751-1754, L2343",
		Text: "Slice::SIZE is 64, 128 or 256 (whole PEs of 64 slices; the seed asserts 256, relaxed as the newer library does)"})
	ruleFetchAlign = NewRule(Rule{ID: "FE-R4", Engine: "fetch", Name: "output packet alignment",
		Cite: "002 L1711-1716, L1723, L2114",
		Text: "the output packet (Packet2::SIZE elements of D2) is a multiple of 8 bytes, the fetch sequencer's read granularity"})
	ruleFetchSize = NewRule(Rule{ID: "FE-R5", Engine: "fetch", Name: "fetch size",
		Cite: "002 L1757-1761",
		Text: "fetch_size is the largest supported divisor of gcd(packet_size, contiguous_sram_access_size): 1, 2, 4, 8, 16 or 32 bytes in the main context; 8 bytes (4 when casting i4 to i32) in the sub context"})
	ruleFetchInterleave = NewRule(Rule{ID: "FE-R8", Engine: "fetch", Name: "interleave",
		Cite: "002 L1843-1850",
		Text: "at most two tensors with identical mappings are interleaved, selected by an axis of size 2 in Time"})
	ruleFetchCastPair = NewRule(Rule{ID: "FA-R4", Engine: "fetch", Name: "cast pair",
		Cite: "002 L1960-1979, L2116",
		Text: "the fetch cast D -> D2 is one of the listed pairs (RNGD; RNGD-S adds four), or no cast"})
	ruleFetchCastLimit = NewRule(Rule{ID: "FA-R5", Engine: "fetch", Name: "cast output limit",
		Cite: "002 L1995-2021",
		Text: "with type casting, the data produced by one fetch must not exceed 32 bytes"})
	ruleFetchSubStages = NewRule(Rule{ID: "FA-R1", Engine: "fetch", Name: "sub-context adapter",
		Cite: "002 L1870",
		Text: "the sub-context adapter supports only zero-point subtraction (and the casts its fetch_size rule names, 002 L1759); masking and table indexing are main-context stages"})
	ruleFetchZeroPoint = NewRule(Rule{ID: "FE-R11", Engine: "fetch", Name: "zero point",
		Cite: "002 L2022-2049, L2117",
		Text: "zero points are i8 values that fit the target type, one per interleaved tensor, for integer data"})
)

// FetchRequest describes `begin(dm).fetch::<D2, Time, Packet>()` (002
// L1700-1719) and its adapter options.
type FetchRequest struct {
	// InType is D, the element type in DM; OutType is D2, the type of the
	// fetched stream (equal to InType when there is no cast).
	InType, OutType dtype.DType
	// Element is the DM tensor's Element mapping: the buffer the sequencer
	// reads (one slice's DM data, 002 L1725).
	Element *mapping.Expr
	// Time and Packet are the output stream's mappings (Time2, Packet2).
	Time, Packet *mapping.Expr
	// Context is kernel.CtxMain or kernel.CtxSub.
	Context kernel.Context
	// ClusterSize and SliceSize are Cluster::SIZE and Slice::SIZE of the
	// tensor (002 L1709-1710).
	ClusterSize, SliceSize int
	// Interleave is set for begin_interleaved (002 L1866).
	Interleave *FetchInterleaveRequest
	// LeftPad shifts a padded axis right inside its padded extent: position
	// j of the axis holds element j - LeftPad.N, and the first N positions
	// are masked (`# 2 + B + # 4`, 002 L1905-1911). Nil for none.
	LeftPad *FetchLeftPad
	// Table is true for fetch_with_table (002 L1949-1954).
	Table bool
	// ZeroPoints are the values of fetch_with_zero_point (one) or
	// fetch_with_zero_points (one per interleaved tensor) (002 L2030-2049).
	ZeroPoints []int
	// RNGDS selects the RNGD-S cast table (002 L1973-1979).
	RNGDS bool
}

// FetchInterleaveRequest names the interleave axis of Time and the distance
// in bytes from the first tensor's DM address to the second's.
type FetchInterleaveRequest struct {
	Axis        string
	OffsetBytes int
}

// FetchLeftPad is a left padding of Axis by N elements.
type FetchLeftPad struct {
	Axis string
	N    int
}

// ConfigFetch derives the fetch configuration (002 L1744: "The compiler
// automatically configures the sequencer and adapter from the output type
// signature"): the sequencer (DeriveSequencer in Read mode over the DM
// Element mapping), contiguous_sram_access_size, fetch_size, the batching
// factor and the adapter stages. It checks FE-R1, FE-R2, FE-R4, FE-R5,
// FE-R8, FA-R1, FA-R3..R5, FE-R11 and the sequencer's rules.
func ConfigFetch(spec *Spec, req FetchRequest) (*kernel.FetchConfig, error) {
	cfg, err := deriveFetch(spec, req)
	if err != nil {
		return nil, err
	}
	if err := CheckFetchAlign(spec, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// CheckFetchAlign checks FE-R4: the output packet is a multiple of 8 bytes
// (002 L1711-1716).
func CheckFetchAlign(spec *Spec, cfg *kernel.FetchConfig) error {
	if a := spec.Fetch.PacketAlignBytes.Value; cfg.PacketBytes%a != 0 {
		return ruleFetchAlign.Violate("output packet of %d %s elements is %d bytes, not a multiple of %d", cfg.PacketElems, cfg.OutType, cfg.PacketBytes, a).
			With("packet_bytes", cfg.PacketBytes).With("align", a)
	}
	return nil
}

// deriveFetch is ConfigFetch without the output alignment check.
func deriveFetch(spec *Spec, req FetchRequest) (*kernel.FetchConfig, error) {
	if spec == nil {
		return nil, errors.New("fetch: no hardware spec")
	}
	if req.InType.Bits() == 0 || req.OutType.Bits() == 0 {
		return nil, fmt.Errorf("fetch: invalid element types %v -> %v", req.InType, req.OutType)
	}
	if req.Context != kernel.CtxMain && req.Context != kernel.CtxSub {
		return nil, fmt.Errorf("fetch: context must be main or sub, got %q", req.Context)
	}
	if err := checkFetchSizes(spec, req.ClusterSize, req.SliceSize); err != nil {
		return nil, err
	}
	site := dtype.FetchCast
	if req.RNGDS {
		site = dtype.FetchCastRNGDS
	}
	if !dtype.CanCast(site, req.InType, req.OutType) {
		return nil, ruleFetchCastPair.Violate("cannot cast %s to %s in the fetch adapter", req.InType, req.OutType)
	}
	if req.Context == kernel.CtxSub && req.Table {
		return nil, ruleFetchSubStages.Violate("table indexing is not available in the sub context")
	}
	for _, e := range []*mapping.Expr{req.Element, req.Time, req.Packet} {
		if e == nil || e.Err() != nil {
			return nil, errors.New("fetch: missing or invalid mapping")
		}
	}
	seqReq := SeqRequest{Buf: req.Element, Time: req.Time, Packet: req.Packet, Mode: SeqRead}
	var inter *kernel.FetchInterleave
	if it := req.Interleave; it != nil {
		var err error
		if inter, err = fetchInterleave(spec, req, it); err != nil {
			return nil, err
		}
		seqReq.Extra = []SeqExtraDim{{Axis: inter.Axis, Size: inter.Tensors, Stride: inter.Stride}}
	}
	d, err := DeriveSequencer(spec, seqReq)
	if err != nil {
		return nil, err
	}
	cfg := &kernel.FetchConfig{
		Context: req.Context, InType: req.InType, OutType: req.OutType,
		Seq: d.Config, Steps: d.Config.Steps(), PacketElems: req.Packet.Size(), Interleave: inter,
	}
	if lp := req.LeftPad; lp != nil {
		m, ok := axisUnitStride(req.Element, lp.Axis)
		if !ok || lp.N < 0 {
			return nil, fmt.Errorf("fetch: left padding of %d on axis %q, which the DM element mapping does not hold with step 1", lp.N, lp.Axis)
		}
		// The sequencer starts lpad elements before the tensor (`@ base_addr
		// = -2`, 002 L1908).
		cfg.Seq.Base = -lp.N * m
	}
	if cfg.PacketBytes, err = req.OutType.BytesFor(cfg.PacketElems); err != nil {
		return nil, ruleFetchAlign.Violate("output packet of %d %s elements is not whole bytes", cfg.PacketElems, req.OutType).With("packet_elems", cfg.PacketElems)
	}
	inBits := req.InType.SizeBits()
	cfg.ContiguousRun = contiguousRun(cfg.Seq)
	cfg.ContiguousBytes = cfg.ContiguousRun * inBits / 8
	if err := chooseFetchSize(spec, req, cfg); err != nil {
		return nil, err
	}
	if err := CheckSeqPacketFetch(cfg.Seq, cfg.FetchElems); err != nil {
		return nil, err
	}
	cfg.FetchesPerPacket = (cfg.Seq.PacketSize + cfg.FetchElems - 1) / cfg.FetchElems
	if err := deriveFetchAdapter(spec, req, cfg, d.src, d.zeroPad); err != nil {
		return nil, err
	}
	return cfg, nil
}

// checkFetchSizes checks FE-R1/FE-R2 (002 L1709-1710): Cluster::SIZE is 1
// or the chip's clusters; Slice::SIZE is a power-of-two number of whole PEs
// (64 slices each, 002 L2343) up to the cluster's slices. See
// docs/spec-decisions.md "Fetch Cluster and Slice sizes".
func checkFetchSizes(spec *Spec, cluster, slice int) error {
	if cluster != 1 && cluster != spec.Chip.Clusters.Value {
		return ruleFetchCluster.Violate("Cluster size must be 1 or %d, got %d", spec.Chip.Clusters.Value, cluster).With("cluster", cluster)
	}
	for s := spec.Cluster.SlicesPerPE.Value; s <= spec.Cluster.Slices.Value; s *= 2 {
		if s == slice {
			return nil
		}
		if s <= 0 {
			break
		}
	}
	return ruleFetchSlice.Violate("Slice size must be %d, %d or %d, got %d", spec.Cluster.SlicesPerPE.Value, 2*spec.Cluster.SlicesPerPE.Value, spec.Cluster.Slices.Value, slice).With("slice", slice)
}

// fetchInterleave checks the interleave axis (002 L1843-1850) and converts
// the tensors' distance to elements.
func fetchInterleave(spec *Spec, req FetchRequest, it *FetchInterleaveRequest) (*kernel.FetchInterleave, error) {
	n := 0
	for _, p := range req.Time.Parts() {
		if p.Kind() == mapping.KindSymbol && p.Name() == it.Axis {
			n = p.Size()
		}
	}
	for _, s := range req.Element.Symbols() {
		if s == it.Axis {
			return nil, ruleFetchInterleave.Violate("interleave axis %s is also an axis of the DM tensor", it.Axis)
		}
	}
	if n == 0 {
		return nil, ruleFetchInterleave.Violate("interleave axis %s is not a term of Time %s", it.Axis, req.Time.String())
	}
	if max := spec.Fetch.MaxInterleavedTensors.Value; n > max {
		return nil, ruleFetchInterleave.Violate("interleaving %d tensors, at most %d", n, max).With("tensors", n).With("limit", max)
	}
	bits := req.InType.SizeBits()
	if it.OffsetBytes == 0 || (it.OffsetBytes*8)%bits != 0 {
		return nil, fmt.Errorf("fetch: interleaved tensors %d bytes apart: must be a non-zero multiple of the %s element size", it.OffsetBytes, req.InType)
	}
	return &kernel.FetchInterleave{Axis: it.Axis, Tensors: n, Stride: it.OffsetBytes * 8 / bits}, nil
}

// axisUnitStride returns the memory stride (elements) of the buffer digit
// that steps axis by 1.
func axisUnitStride(buf *mapping.Expr, axis string) (int, bool) {
	fs, err := mapping.Factorize(buf)
	if err != nil {
		return 0, false
	}
	cum := 1
	for _, f := range fs {
		switch f.Kind {
		case mapping.FactorTerm:
			if f.Axis == axis && f.Stride == 1 {
				return cum, true
			}
			cum *= f.Extent
		case mapping.FactorBroadcast:
			cum *= f.Extent
		case mapping.FactorPad:
			cum = f.Extent
		}
	}
	return 0, false
}

// chooseFetchSize sets fetch_size (002 L1757-1761): the largest supported
// size dividing gcd(packet_size, contiguous_sram_access_size), capped so
// that a cast produces at most 32 bytes per fetch (002 L1996); the sub
// context reads 8 bytes, 4 when casting i4 to i32 (002 L1759, L2018-2021).
func chooseFetchSize(spec *Spec, req FetchRequest, cfg *kernel.FetchConfig) error {
	inBits, outBits := req.InType.SizeBits(), req.OutType.SizeBits()
	maxOut := spec.Fetch.MaxCastOutputBytes.Value
	packet, run := cfg.Seq.PacketSize, cfg.ContiguousRun
	g := dtype.GCD(packet, run)
	if req.Context == kernel.CtxSub {
		f := spec.Fetch.SubFetchSize.Value
		if req.InType == dtype.I4 && req.OutType == dtype.I32 {
			f = spec.Fetch.SubFetchSizeI4ToI32.Value
		}
		if err := CheckFetchCast(spec, req.InType, req.OutType, f); err != nil {
			return err
		}
		el := f * 8 / inBits
		if (f*8)%inBits != 0 || g%el != 0 {
			return ruleFetchSize.Violate("sub-context fetch_size of %d bytes (%d elements) does not divide gcd(packet %d, contiguous run %d) = %d elements", f, el, packet, run, g).
				With("fetch_size", f).With("gcd_elems", g)
		}
		cfg.FetchSize, cfg.FetchElems = f, el
		return nil
	}
	el := 0
	for _, f := range spec.Fetch.MainFetchSizes.Value {
		if req.InType != req.OutType && f*outBits > maxOut*inBits {
			continue // FA-R5: the cast output of one fetch exceeds 32 bytes
		}
		if a := f * 8 / inBits; (f*8)%inBits == 0 && a > el && g%a == 0 {
			el = a
		}
	}
	if el == 0 {
		return ruleFetchSize.Violate("no fetch_size in %v bytes (at most %d bytes of cast output) divides gcd(packet %d, contiguous run %d) = %d %s elements",
			spec.Fetch.MainFetchSizes.Value, maxOut, packet, run, g, req.InType).With("gcd_elems", g)
	}
	cfg.FetchElems, cfg.FetchSize = el, el*inBits/8
	return nil
}

// CheckFetchCast checks FA-R5 (002 L1995-2017): with a cast, one fetch of
// fetchSize bytes of from produces at most 32 bytes of to.
func CheckFetchCast(spec *Spec, from, to dtype.DType, fetchSize int) error {
	if from == to {
		return nil
	}
	out := fetchSize * to.SizeBits() / from.SizeBits()
	if max := spec.Fetch.MaxCastOutputBytes.Value; out > max {
		return ruleFetchCastLimit.Violate("casting %s to %s with a fetch_size of %d bytes produces %d bytes, exceeding the %d-byte limit", from, to, fetchSize, out, max).
			With("fetch_size", fetchSize).With("output_bytes", out)
	}
	return nil
}

// Rules of a fetch configuration a kernel states (issue 18: a stated
// configuration is run as written, so every field the hardware derives from
// another must agree with it).
var (
	ruleFetchContext = NewRule(Rule{ID: "FE-R12", Engine: "fetch", Name: "context",
		Cite: "002 L1757-1759",
		Text: "a fetch runs in its chain's context, main or sub; the context decides the fetch_size values allowed"})
	ruleFetchTypes = NewRule(Rule{ID: "FE-R13", Engine: "fetch", Name: "types and packet",
		Cite: "002 L1700-1724, L1711",
		Text: "begin(dm).fetch::<D2, Time, Packet>() reads the DM tensor's type D and produces D2 in packets of Packet::SIZE elements, Time::SIZE of them; the adapter casts exactly when D2 is not D"})
	ruleFetchBatching = NewRule(Rule{ID: "FE-R14", Engine: "fetch", Name: "fetches per packet",
		Cite: "002 L2050-2057, L2060, L2071",
		Text: "the Fetch Adapter batches fetches_per_packet = ceil(packet_size / fetch_size) fetches into one packet"})
)

// FetchStated is what a chain says about its fetch: the context the chain
// runs in, the DM tensor's type, and the stage's type and mappings.
type FetchStated struct {
	Context         kernel.Context
	InType, OutType dtype.DType
	Time, Packet    *mapping.Expr
}

// CheckFetchConfig checks a fetch configuration against the stage that
// states it and against the rules that tie its fields together: the
// context (FE-R12), the types, packet and step counts (FE-R13),
// fetch_size as the manual determines it, the largest supported divisor of
// gcd(packet_size, contiguous_sram_access_size) for the context (FE-R5,
// 002 L1757-1761), and the batching factor (FE-R14).
func CheckFetchConfig(spec *Spec, cfg *kernel.FetchConfig, want FetchStated) error {
	if spec == nil || cfg == nil {
		return errors.New("fetch: nil spec or configuration")
	}
	if cfg.Context != want.Context {
		return ruleFetchContext.Violate("the configuration is for the %q context, the chain runs in %q", cfg.Context, want.Context)
	}
	if cfg.InType != want.InType || cfg.OutType != want.OutType {
		return ruleFetchTypes.Violate("the configuration fetches %s -> %s, the chain %s -> %s", cfg.InType, cfg.OutType, want.InType, want.OutType)
	}
	if cfg.Adapter.Cast != (cfg.InType != cfg.OutType) {
		return ruleFetchTypes.Violate("adapter cast %v for %s -> %s", cfg.Adapter.Cast, cfg.InType, cfg.OutType)
	}
	if want.Packet != nil && cfg.PacketElems != want.Packet.Size() {
		return ruleFetchTypes.Violate("packet of %d elements, the stage's Packet has %d", cfg.PacketElems, want.Packet.Size()).With("packet_elems", cfg.PacketElems)
	}
	if pb, err := cfg.OutType.BytesFor(cfg.PacketElems); err != nil || pb != cfg.PacketBytes {
		return ruleFetchTypes.Violate("packet of %d %s elements stated as %d bytes", cfg.PacketElems, cfg.OutType, cfg.PacketBytes).With("packet_bytes", cfg.PacketBytes)
	}
	if cfg.Steps != cfg.Seq.Steps() {
		return ruleFetchTypes.Violate("%d steps, the sequencer %s walks %d packets", cfg.Steps, cfg.Seq, cfg.Seq.Steps()).With("steps", cfg.Steps)
	}
	if want.Time != nil && want.Packet != nil && cfg.Seq.Steps()*cfg.Seq.PacketSize != want.Time.Size()*want.Packet.Size() {
		return ruleFetchTypes.Violate("the sequencer %s visits %d elements, the stream [Time, Packet] holds %d", cfg.Seq, cfg.Seq.Steps()*cfg.Seq.PacketSize, want.Time.Size()*want.Packet.Size())
	}
	inBits := cfg.InType.SizeBits()
	run := contiguousRun(cfg.Seq)
	if cfg.ContiguousRun != run || cfg.ContiguousBytes != run*inBits/8 {
		return ruleFetchSize.Violate("contiguous run stated as %d elements (%d bytes), the sequencer %s has %d", cfg.ContiguousRun, cfg.ContiguousBytes, cfg.Seq, run).
			With("contiguous_run", cfg.ContiguousRun)
	}
	derived := kernel.FetchConfig{Seq: cfg.Seq, ContiguousRun: run}
	req := FetchRequest{InType: cfg.InType, OutType: cfg.OutType, Context: cfg.Context}
	if err := chooseFetchSize(spec, req, &derived); err != nil {
		return err
	}
	if cfg.FetchSize != derived.FetchSize || cfg.FetchElems != derived.FetchElems {
		return ruleFetchSize.Violate("fetch_size %d bytes (%d elements); for packet %d and contiguous run %d of %s in the %s context it is %d bytes",
			cfg.FetchSize, cfg.FetchElems, cfg.Seq.PacketSize, run, cfg.InType, cfg.Context, derived.FetchSize).With("fetch_size", cfg.FetchSize)
	}
	n := (cfg.Seq.PacketSize + cfg.FetchElems - 1) / cfg.FetchElems
	if cfg.FetchesPerPacket != n || cfg.Adapter.FetchesPerPacket != n {
		return ruleFetchBatching.Violate("fetches_per_packet %d (adapter %d), ceil(%d / %d) = %d", cfg.FetchesPerPacket, cfg.Adapter.FetchesPerPacket, cfg.Seq.PacketSize, cfg.FetchElems, n).
			With("fetches_per_packet", cfg.Adapter.FetchesPerPacket)
	}
	return CheckFetchAlign(spec, cfg)
}
