package engines

import (
	"errors"
	"fmt"
	"slices"

	"tcpmap/model/kernel"
)

// Check is the validator of a kernel program against the hardware: every
// command that reads a kernel or a plan (cost, verify, emit, regress) runs
// it before anything else, so that they agree on what a valid kernel is.
// It checks, in order, stopping at the first error:
//
//   - the program's structure (kernel.Program.Validate: names, mappings,
//     contexts, chains);
//   - its dataflow: no tensor is read before an earlier op writes it
//     (kernel.Program.CheckDataflow);
//   - every tensor's address against its memory: an HBM, DM or VRF address
//     inside the chip's HBM or the slice's DM or VRF (MEM-C4, MEM-C1,
//     MEM-C3), and a TRF tensor at address 0, since its address mode places
//     it (MEM-A1);
//   - the footprint rules (CheckFootprint): every tensor fits its memory
//     (MEM-C1..C4), and tensors live together share no byte (SCH-R7) and
//     no TRF region (TRF-R8).
//
// The engine rules of each op (fetch sizes, sequencer limits, routes, ...)
// are Lower's: commands that price or run the program lower it, and emit
// lowers a copy. Errors name the offending field (a *kernel.FieldError, or
// Validate's `tensors[3] "x": ...`), and a broken rule wraps its
// *Violation with the rule's ID and citation.
func Check(spec *Spec, p *kernel.Program) error {
	if spec == nil || p == nil {
		return errors.New("check: nil spec or program")
	}
	if err := p.Validate(); err != nil {
		return err
	}
	// Before anything sized by it is allocated (the simulator holds each
	// chip's memories): the system's chips (002 L129, L1079).
	if n := spec.Chip.ChipsPerSystem.Value; p.Chips > n {
		return &kernel.FieldError{Path: "chips", Err: ruleError(ruleChips.Violate("the program runs on %d chips; the system has %d (chip.chips_per_system; --hw names a spec of a larger system)", p.Chips, n).With("chips", p.Chips).With("limit", n))}
	}
	if err := p.CheckDataflow(); err != nil {
		return err
	}
	if v := checkChips(p); v != nil {
		return &kernel.FieldError{Path: "chips", Err: ruleError(v)}
	}
	dmaAligned := dmaAlignedTensors(p)
	for i, t := range p.Tensors {
		if v := checkAddress(spec, t); v != nil {
			return &kernel.FieldError{Path: fmt.Sprintf("tensors[%d].addr", i), Err: ruleError(v)}
		}
		if v := checkAlignment(t, dmaAligned[t.Name]); v != nil {
			return &kernel.FieldError{Path: fmt.Sprintf("tensors[%d].addr", i), Err: ruleError(v)}
		}
	}
	issues, err := CheckFootprint(spec, p)
	if err != nil {
		return err
	}
	for _, is := range issues {
		// A capacity issue is the tensor's; an overlap is reported at the
		// later tensor's address.
		at := is.A
		if is.B >= 0 {
			at = is.B
		}
		return &kernel.FieldError{Path: fmt.Sprintf("tensors[%d].addr", at), Err: ruleError(is.Violation)}
	}
	return nil
}

// ruleError words a violation with its rule's ID first: `MEM-C1 memory: ...
// (002 L138)`.
func ruleError(v *Violation) error { return fmt.Errorf("%s %w", v.Rule.ID, v) }

// ruleChips: a program runs on the system's chips.
var ruleChips = NewRule(Rule{ID: "CHIP-R1", Engine: "memory", Name: "chips of the system",
	Cite: "002 L129, L1079",
	Text: "a program's #[device(chip = N)] is at most the system's NUM_CHIPS (chip.chips_per_system)"})

// ruleMemTRFAddr: a TRF tensor has no byte address of its own.
var ruleMemTRFAddr = NewRule(Rule{ID: "MEM-A1", Engine: "memory", Name: "TRF tensors are placed by address mode",
	Cite: "002 L4044-4060, L4151-4155",
	Text: "to_trf takes a TrfAddress (FirstHalf, SecondHalf or Full), not a byte address: a TRF tensor occupies its mode's region, and its addr is 0"})

// Placement rules of tensors.
var (
	ruleMemElemAlign = NewRule(Rule{ID: "MEM-A2", Engine: "memory", Name: "element alignment",
		Cite: "002 L1070-1072",
		Text: "alignment constraints apply to the Element dimension: the starting address must be a multiple of size_of::<D>()"})
	ruleMemDMAAlign = NewRule(Rule{ID: "MEM-A3", Engine: "memory", Name: "8-byte DMA alignment",
		Cite: "002 L2414, L2426-2427, L2836-2837",
		Text: "DM writes need 8-byte aligned addresses and HBM-to-DM transfers 8-byte aligned read addresses: a DM tensor a DMA writes, and an HBM tensor a DMA moves to DM, start on 8 bytes"})
	ruleMemChips = NewRule(Rule{ID: "MEM-A4", Engine: "memory", Name: "the kernel's chips",
		Cite: "002 L62, L199, L1031",
		Text: "#[device(chip = N)] runs the kernel on N chips, and the tensors' Chip dimension spans them: the largest Chip::SIZE is N"})
)

// checkChips checks MEM-A4: some tensor's Chip mapping spans the kernel's
// chips, none more.
func checkChips(p *kernel.Program) *Violation {
	n := 0
	for _, t := range p.Tensors {
		if t.Chip != nil {
			n = max(n, t.Chip.Size())
		}
	}
	if n != p.Chips {
		return ruleMemChips.Violate("kernel %q runs on %d chips, its tensors' Chip mappings span %d", p.Name, p.Chips, n).With("chips", p.Chips)
	}
	return nil
}

// dmaAlignedTensors names the tensors MEM-A3 applies to: the DM
// destination of every DMA, and the HBM source of every to_dm.
func dmaAlignedTensors(p *kernel.Program) map[string]bool {
	out := map[string]bool{}
	for _, op := range slices.Concat(p.Ops, p.Handoff) {
		switch op.Kind {
		case kernel.OpToDM:
			out[op.Src], out[op.Dst] = true, true
		case kernel.OpDMToDM:
			out[op.Dst] = true
		}
	}
	return out
}

// checkAlignment checks MEM-A2 and, for a tensor a DMA writes to DM or
// reads into DM, MEM-A3. A tile view's address is inside its argument
// (kernel.Tensor.View) and follows the tile, so only MEM-A2 applies to it.
func checkAlignment(t *kernel.Tensor, dma bool) *Violation {
	if t.Mem == kernel.TRF {
		return nil // placed by address mode (MEM-A1)
	}
	if b := int64(t.DType.SizeBits()); b >= 8 && t.Addr%(b/8) != 0 {
		return ruleMemElemAlign.Violate("%s tensor %q of %s at address %d, not a multiple of %d", t.Mem, t.Name, t.DType, t.Addr, b/8).With("addr", int(t.Addr))
	}
	if dma && t.View == "" && t.Addr%8 != 0 {
		return ruleMemDMAAlign.Violate("%s tensor %q at address %d, not a multiple of 8", t.Mem, t.Name, t.Addr).With("addr", int(t.Addr))
	}
	return nil
}

// checkAddress checks that t's address lies inside its memory: the chip's
// HBM (002 L137), the slice's DM (002 L138) or VRF (002 L140); a TRF
// tensor's is 0 (its mode places it). The end of the tensor is
// CheckFootprint's; checking the start first keeps that sum from
// overflowing.
func checkAddress(spec *Spec, t *kernel.Tensor) *Violation {
	var limit int64
	var rule *Rule
	switch t.Mem {
	case kernel.HBM, kernel.DM, kernel.VRF:
		limit, rule = memLimit(spec, t.Mem)
	case kernel.TRF:
		if t.Addr != 0 {
			return ruleMemTRFAddr.Violate("TRF tensor %q has byte address %d; its TrfAddress::%s places it, and its addr is 0", t.Name, t.Addr, t.TrfAddress).
				With("addr", int(t.Addr))
		}
		return nil
	default:
		return nil // Validate reports the memory
	}
	if t.Addr < 0 || t.Addr >= limit {
		return rule.Violate("%s tensor %q at address %d, beyond the %d bytes available", t.Mem, t.Name, t.Addr, limit).
			With("addr", int(t.Addr)).With("capacity", int(limit))
	}
	return nil
}
