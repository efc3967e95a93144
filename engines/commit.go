package engines

import (
	"errors"
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Commit Engine (002 L2145-2353): the Commit Adapter truncates each
// 32-byte packet to its leading commit_in_size bytes, and the Commit
// Sequencer (a Write-mode sequencer, see DeriveSequencer) writes them to DM
// in commit_size chunks. ConfigCommit is the compiler's derivation from
// `commit::<Element>(addr)` (002 L2237-2238: "commit_in_size ... is
// automatically derived by the compiler from the output tensor mapping").

// Commit rules: moving.md §5.3 CE-R1..R9, renamed CM-R* because CE-R* are
// the Contraction Engine's IDs in computing.md.
var (
	ruleCommitInPacket = NewRule(Rule{ID: "CM-R1", Engine: "commit", Name: "input packet",
		Cite: "002 L2192, L2328",
		Text: "the input packet is one full 32-byte flit"})
	ruleCommitInSize = NewRule(Rule{ID: "CM-R2", Engine: "commit", Name: "commit_in_size",
		Cite: "002 L2193, L2330",
		Text: "commit_in_size, the leading bytes of each packet written to DM, is 8, 16, 24 or 32 bytes"})
	ruleCommitSize = NewRule(Rule{ID: "CM-R3", Engine: "commit", Name: "commit_size",
		Cite: "002 L2243-2248, L2330",
		Text: "commit_size = gcd(contiguous_sram_access_size, commit_in_size) is 8, 16, 24 or 32 bytes in the main context and 8 bytes in the sub context"})
	ruleCommitSubChain = NewRule(Rule{ID: "CM-R4", Engine: "commit", Name: "sub-context chain",
		Cite: "002 L2337-2338",
		Text: "sub-context commits can only follow fetch, not the Cast or Transpose Engine"})
	ruleCommitStride = NewRule(Rule{ID: "CM-R6", Engine: "commit", Name: "stride alignment",
		Cite: "002 L2338",
		Text: "all commit sequencer strides are multiples of 8 bytes (entries inside one commit_size write excepted)"})
	ruleCommitSubOnly = NewRule(Rule{ID: "CM-R7", Engine: "commit", Name: "sub-context stages",
		Cite: "002 L2323-2336",
		Text: "valid count packing and generate mode exist in the sub context only"})
	ruleCommitBitmap = NewRule(Rule{ID: "CM-R10", Engine: "commit", Name: "slice bitmap",
		Cite: "002 L2314-2318",
		Text: "the 256-bit slice bitmap has one bit per slice"})
)

// CommitRequest describes `stream.commit::<Element>(addr)` (002 L2149-2164).
type CommitRequest struct {
	// DType is the element type of the stream and of the DM tensor.
	DType dtype.DType
	// Time and Packet are the input stream's mappings.
	Time, Packet *mapping.Expr
	// Element is the DM tensor's Element mapping.
	Element *mapping.Expr
	// Context is kernel.CtxMain or kernel.CtxSub.
	Context kernel.Context
	// FromFetch reports that the stream comes straight from a fetch
	// (required in the sub context, 002 L2337-2338).
	FromFetch bool
	// Slice is the tensor's Slice mapping; when set, the slice bitmap is
	// derived from it (DeriveSliceBitmap). Nil leaves the bitmap unset.
	Slice *mapping.Expr
	// ValidCountPacking requests the sub context's valid count packing
	// (002 L2324).
	ValidCountPacking bool
}

// ConfigCommit derives the commit configuration: commit_in_size (the
// shortest 8-byte-multiple prefix of the packet that holds every element the
// Element mapping stores, 002 L2191-2238), the Write-mode sequencer of the
// truncated stream into Element, contiguous_sram_access_size, commit_size =
// gcd(contiguous, commit_in_size) (002 L2243) and the writes per packet. It
// checks CE-R1..R4, CE-R6, CE-R7 and the sequencer's rules (002 L2321,
// L2338).
func ConfigCommit(spec *Spec, req CommitRequest) (*kernel.CommitConfig, error) {
	if spec == nil {
		return nil, errors.New("commit: no hardware spec")
	}
	if req.DType.Bits() == 0 {
		return nil, fmt.Errorf("commit: invalid element type %v", req.DType)
	}
	if req.Context != kernel.CtxMain && req.Context != kernel.CtxSub {
		return nil, fmt.Errorf("commit: context must be main or sub, got %q", req.Context)
	}
	for _, e := range []*mapping.Expr{req.Element, req.Time, req.Packet} {
		if e == nil || e.Err() != nil {
			return nil, errors.New("commit: missing or invalid mapping")
		}
	}
	if req.Context == kernel.CtxSub && !req.FromFetch {
		return nil, ruleCommitSubChain.Violate("a sub-context commit must directly follow a fetch")
	}
	if req.ValidCountPacking && req.Context != kernel.CtxSub {
		return nil, ruleCommitSubOnly.Violate("valid count packing is a sub-context stage")
	}
	bitsPer := req.DType.SizeBits()
	flit := spec.Commit.InputPacketBytes.Value
	pb, err := req.DType.BytesFor(req.Packet.Size())
	if err != nil || pb != flit {
		return nil, ruleCommitInPacket.Violate("input packet of %d %s elements is not %d bytes", req.Packet.Size(), req.DType, flit).
			With("packet_elems", req.Packet.Size())
	}
	cfg := &kernel.CommitConfig{Context: req.Context, DType: req.DType, InPacketBytes: flit, ValidCountPacking: req.ValidCountPacking}

	// Truncation: keep the shortest prefix holding every element Element
	// stores, rounded up to whole 8-byte units (002 L2193, L7699).
	k, err := commitPrefix(req.Packet, req.Element)
	if err != nil {
		return nil, err
	}
	unit := spec.Commit.StrideMultipleBytes.Value
	inBytes := (k*bitsPer + 8*unit - 1) / (8 * unit) * unit
	if !containsInt(spec.Commit.CommitInSizes.Value, inBytes) {
		return nil, ruleCommitInSize.Violate("commit_in_size of %d bytes is not one of %v", inBytes, spec.Commit.CommitInSizes.Value).With("commit_in_size", inBytes)
	}
	cfg.CommitInSize, cfg.CommitInElems = inBytes, inBytes*8/bitsPer
	packet := req.Packet
	if cfg.CommitInElems < packet.Size() {
		if packet, err = mapping.NewResize(req.Packet, cfg.CommitInElems); err != nil {
			return nil, fmt.Errorf("commit: truncating %s: %w", req.Packet.String(), err)
		}
	}
	d, err := DeriveSequencer(spec, SeqRequest{Buf: req.Element, Time: req.Time, Packet: packet, Mode: SeqWrite})
	if err != nil {
		return nil, err
	}
	cfg.Seq = d.Config
	cfg.Steps = req.Time.Size()
	cfg.ContiguousRun = contiguousRun(cfg.Seq)
	cfg.ContiguousBytes = cfg.ContiguousRun * bitsPer / 8
	cfg.CommitSize = dtype.GCD(cfg.ContiguousBytes, cfg.CommitInSize)
	if req.Context == kernel.CtxSub {
		sub := spec.Commit.SubCommitSize.Value
		if cfg.CommitSize%sub != 0 {
			return nil, ruleCommitSize.Violate("sub-context commit_size must be %d bytes; gcd(contiguous %d, commit_in_size %d) = %d", sub, cfg.ContiguousBytes, cfg.CommitInSize, cfg.CommitSize).
				With("commit_size", cfg.CommitSize)
		}
		cfg.CommitSize = sub
	} else if !containsInt(spec.Commit.MainCommitSizes.Value, cfg.CommitSize) {
		return nil, ruleCommitSize.Violate("commit_size gcd(contiguous %d, commit_in_size %d) = %d bytes is not one of %v", cfg.ContiguousBytes, cfg.CommitInSize, cfg.CommitSize, spec.Commit.MainCommitSizes.Value).
			With("commit_size", cfg.CommitSize)
	}
	cfg.WritesPerStep = cfg.CommitInSize / cfg.CommitSize
	if err := checkCommitStrides(spec, cfg); err != nil {
		return nil, err
	}
	if req.Slice != nil {
		bm, err := DeriveSliceBitmap(req.Slice)
		if err != nil {
			return nil, err
		}
		cfg.SliceBitmap = &bm
	}
	return cfg, nil
}

// commitPrefix returns the length of the shortest packet prefix that holds
// every live packet element the Element mapping stores.
func commitPrefix(packet, elem *mapping.Expr) (int, error) {
	fs, err := mapping.Factorize(elem)
	if err != nil {
		return 0, ruleSeqIncompatible.Violate("element mapping %s has no factorized form: %v", elem.String(), err)
	}
	pf, err := mapping.Factorize(packet)
	if err != nil {
		return 0, ruleSeqIncompatible.Violate("packet mapping %s has no factorized form: %v", packet.String(), err)
	}
	ext := pf.Extents()
	var buf [8]axisVal
	k := 0
	for j := 0; j < packet.Size(); j++ {
		coords, live := decodeFactors(pf, ext, j, buf[:0])
		if live && holds(fs, coords) {
			k = j + 1
		}
	}
	if k == 0 {
		return 0, ruleCommitInSize.Violate("no element of the packet %s is stored by %s", packet.String(), elem.String())
	}
	return k, nil
}

// axisVal is one axis coordinate.
type axisVal struct {
	axis string
	v    int
}

// decodeFactors decodes position p of a factorized mapping (innermost-first
// factors fs with cumulative extents ext, mapping.Factors.Map): the axis
// coordinates, appended to out, and whether the cell is live (not padding).
func decodeFactors(fs mapping.Factors, ext []int, p int, out []axisVal) ([]axisVal, bool) {
	for k := len(fs) - 1; k >= 0; k-- {
		below := 1
		if k > 0 {
			below = ext[k-1]
		}
		f := fs[k]
		switch f.Kind {
		case mapping.FactorPad:
			if p >= below {
				return out, false
			}
		case mapping.FactorTerm:
			d := p / below
			p %= below
			found := false
			for i := range out {
				if out[i].axis == f.Axis {
					out[i].v += d * f.Stride
					found = true
				}
			}
			if !found {
				out = append(out, axisVal{f.Axis, d * f.Stride})
			}
		case mapping.FactorBroadcast:
			p %= below
		}
	}
	return out, true
}

// holds reports whether the factorized buffer holds every coordinate
// (with the other axes at 0): each coordinate decomposes into the buffer's
// digits of its axis, largest step first. Axes the buffer lacks count as
// held (the sequencer rejects them).
func holds(fs mapping.Factors, coords []axisVal) bool {
	for _, c := range coords {
		v, found := c.v, false
		prev := 0 // step of the digit just used; the next is smaller
		for {
			best := -1
			for i, f := range fs {
				if f.Kind == mapping.FactorTerm && f.Axis == c.axis && (prev == 0 || f.Stride < prev) && (best < 0 || f.Stride > fs[best].Stride) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			found = true
			f := fs[best]
			e := v / f.Stride
			if e >= f.Extent {
				return false
			}
			v -= e * f.Stride
			prev = f.Stride
		}
		if found && v != 0 {
			return false
		}
	}
	return true
}

// checkCommitStrides checks CE-R6 (002 L2338): every entry outside the
// contiguous commit_size chunk steps a multiple of 8 bytes.
func checkCommitStrides(spec *Spec, cfg *kernel.CommitConfig) error {
	bitsPer := cfg.DType.SizeBits()
	chunk := cfg.CommitSize * 8 / bitsPer
	unit := spec.Commit.StrideMultipleBytes.Value
	covered := 1
	for k := len(cfg.Seq.Entries) - 1; k >= 0; k-- {
		e := cfg.Seq.Entries[k]
		if covered < chunk {
			covered *= e.Size
			continue
		}
		if (e.Stride*bitsPer)%(8*unit) != 0 {
			return ruleCommitStride.Violate("entry %d (%d:%d) steps %d bits, not a multiple of %d bytes", k, e.Size, e.Stride, e.Stride*bitsPer, unit).
				With("entry", k).With("stride", e.Stride)
		}
	}
	return nil
}

// DeriveSliceBitmap derives the commit's slice bitmap from the tensor's
// Slice mapping: bit k is set when slice position k holds data, so padded
// slice positions receive no commit (002 L2314-2319; docs/spec-decisions.md
// "Commit slice bitmap").
func DeriveSliceBitmap(slice *mapping.Expr) (kernel.SliceBitmap, error) {
	var bm kernel.SliceBitmap
	if slice == nil || slice.Err() != nil {
		return bm, errors.New("commit: missing or invalid slice mapping")
	}
	if n := slice.Size(); n > kernel.SliceBitmapBits {
		return bm, ruleCommitBitmap.Violate("Slice::SIZE %d exceeds the %d-bit bitmap", n, kernel.SliceBitmapBits).With("slices", n)
	}
	// Compiled, each position's kind without allocating (a linear
	// combination does not compile: Map then).
	if axes, err := mapping.AxesOf(slice); err == nil {
		if prog, err := mapping.Compile(slice, axes); err == nil {
			dst := make([]int, prog.Slots())
			for k := 0; k < slice.Size(); k++ {
				if kind, _ := prog.Eval(k, dst); kind == mapping.Live {
					bm.Set(k)
				}
			}
			return bm, nil
		}
	}
	for k := 0; k < slice.Size(); k++ {
		if slice.Map(k).Kind == mapping.Live {
			bm.Set(k)
		}
	}
	return bm, nil
}

// CommitWrite returns the w-th DM write of time step t: the byte offset in
// the (truncated) packet it takes and the DM byte address it writes, relative
// to the tensor's address (002 L2244-2246, L2303-2307). It does not allocate.
func CommitWrite(cfg *kernel.CommitConfig, t, w int) (packetOff, addr int, err error) {
	if t < 0 || t >= cfg.Steps || w < 0 || w >= cfg.WritesPerStep {
		return 0, 0, fmt.Errorf("commit: no write %d of step %d (%d steps, %d writes each)", w, t, cfg.Steps, cfg.WritesPerStep)
	}
	bitsPer := cfg.DType.SizeBits()
	chunk := cfg.CommitSize * 8 / bitsPer
	p := t*cfg.CommitInElems + w*chunk
	return w * cfg.CommitSize, cfg.Seq.Offset(p) * bitsPer / 8, nil
}

// CommitTruncate is the Commit Adapter's truncation (002 L2190-2194): the
// leading CommitInSize bytes of a 32-byte input flit.
func CommitTruncate(cfg *kernel.CommitConfig, flit []byte) ([]byte, error) {
	if len(flit) != cfg.InPacketBytes {
		return nil, fmt.Errorf("commit: input flit of %d bytes, want %d", len(flit), cfg.InPacketBytes)
	}
	if cfg.CommitInSize < 0 || cfg.CommitInSize > len(flit) {
		return nil, fmt.Errorf("commit: commit_in_size %d of a %d-byte flit", cfg.CommitInSize, len(flit))
	}
	return flit[:cfg.CommitInSize], nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// ruleCommitStated ties a stated commit configuration to its chain and its
// fields to one another.
var ruleCommitStated = NewRule(Rule{ID: "CM-R11", Engine: "commit", Name: "context, type and steps",
	Cite: "002 L2149-2164, L2192-2193, L2239-2248",
	Text: "commit::<Element>(addr) runs in its chain's context on the stream's type; the Commit Sequencer writes one truncated packet of commit_in_size bytes per Time step, in commit_in_size / commit_size writes"})

// CommitStated is what a chain says about its commit: its context, the
// stream's type and Time mapping, and the DM tensor's Slice mapping.
type CommitStated struct {
	Context kernel.Context
	DType   dtype.DType
	Time    *mapping.Expr
	Slice   *mapping.Expr
}

// CheckCommitConfig checks a commit configuration against the chain that
// states it (CM-R11) and the commit rules on its sizes: the input packet
// (CM-R1), commit_in_size (CM-R2), commit_size (CM-R3), the strides
// (CM-R6) and the slice bitmap (CM-R10).
func CheckCommitConfig(spec *Spec, cfg *kernel.CommitConfig, want CommitStated) error {
	if spec == nil || cfg == nil {
		return errors.New("commit: nil spec or configuration")
	}
	if cfg.Context != want.Context {
		return ruleCommitStated.Violate("the configuration is for the %q context, the chain runs in %q", cfg.Context, want.Context)
	}
	if cfg.DType != want.DType {
		return ruleCommitStated.Violate("the configuration commits %s, the stream is %s", cfg.DType, want.DType)
	}
	if flit := spec.Commit.InputPacketBytes.Value; cfg.InPacketBytes != flit {
		return ruleCommitInPacket.Violate("input packet of %d bytes, want %d", cfg.InPacketBytes, flit).With("in_packet_bytes", cfg.InPacketBytes)
	}
	if !containsInt(spec.Commit.CommitInSizes.Value, cfg.CommitInSize) {
		return ruleCommitInSize.Violate("commit_in_size of %d bytes is not one of %v", cfg.CommitInSize, spec.Commit.CommitInSizes.Value).With("commit_in_size", cfg.CommitInSize)
	}
	bits := cfg.DType.SizeBits()
	if bits <= 0 || cfg.CommitInElems*bits != cfg.CommitInSize*8 || cfg.Seq.PacketSize != cfg.CommitInElems {
		return ruleCommitInSize.Violate("commit_in_size %d bytes stated as %d %s elements, the sequencer's packet is %d", cfg.CommitInSize, cfg.CommitInElems, cfg.DType, cfg.Seq.PacketSize).
			With("commit_in_elems", cfg.CommitInElems)
	}
	if want.Time != nil && cfg.Steps != want.Time.Size() {
		return ruleCommitStated.Violate("%d steps, the stream's Time has %d", cfg.Steps, want.Time.Size()).With("steps", cfg.Steps)
	}
	if cfg.Seq.Steps() != cfg.Steps {
		return ruleCommitStated.Violate("the sequencer %s writes %d packets, the stream has %d steps", cfg.Seq, cfg.Seq.Steps(), cfg.Steps).With("steps", cfg.Steps)
	}
	run := contiguousRun(cfg.Seq)
	if cfg.ContiguousRun != run || cfg.ContiguousBytes != run*bits/8 {
		return ruleCommitSize.Violate("contiguous run stated as %d elements (%d bytes), the sequencer %s has %d", cfg.ContiguousRun, cfg.ContiguousBytes, cfg.Seq, run).
			With("contiguous_run", cfg.ContiguousRun)
	}
	size := dtype.GCD(cfg.ContiguousBytes, cfg.CommitInSize)
	if cfg.Context == kernel.CtxSub {
		sub := spec.Commit.SubCommitSize.Value
		if size%sub != 0 {
			return ruleCommitSize.Violate("sub-context commit_size must be %d bytes; gcd(contiguous %d, commit_in_size %d) = %d", sub, cfg.ContiguousBytes, cfg.CommitInSize, size).With("commit_size", size)
		}
		size = sub
	}
	if cfg.CommitSize != size || !containsInt(spec.Commit.MainCommitSizes.Value, size) {
		return ruleCommitSize.Violate("commit_size %d bytes; gcd(contiguous %d, commit_in_size %d) in the %s context gives %d", cfg.CommitSize, cfg.ContiguousBytes, cfg.CommitInSize, cfg.Context, size).
			With("commit_size", cfg.CommitSize)
	}
	if cfg.WritesPerStep != cfg.CommitInSize/cfg.CommitSize {
		return ruleCommitSize.Violate("%d writes per step of %d bytes from a %d-byte packet", cfg.WritesPerStep, cfg.CommitSize, cfg.CommitInSize).With("writes_per_step", cfg.WritesPerStep)
	}
	if err := checkCommitStrides(spec, cfg); err != nil {
		return err
	}
	if cfg.SliceBitmap != nil && want.Slice != nil {
		bm, err := DeriveSliceBitmap(want.Slice)
		if err != nil {
			return err
		}
		if bm != *cfg.SliceBitmap {
			return ruleCommitBitmap.Violate("the slice bitmap enables other slices than the DM tensor's Slice m![%s]", want.Slice)
		}
	}
	return nil
}
