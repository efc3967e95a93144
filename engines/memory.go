package engines

import (
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Memory footprint rules: every tensor fits its memory, and tensors live at
// the same time do not share bytes (002 L138-140, L154-155, L7056) or TRF
// regions (002 L4156-4158). cost, verify and emit all check them through
// CheckFootprint (or MemoryMap.Compute) and report the violations their own
// way.

// The capacity and overlap rules.
var (
	ruleMemDM = NewRule(Rule{ID: "MEM-C1", Engine: "memory", Name: "DM capacity",
		Cite: "002 L138, L1088, L2874",
		Text: "a DM tensor lies within its slice's 512 KB of DM: addr + Element bytes ≤ dm.bytes_per_slice"})
	ruleMemTRF = NewRule(Rule{ID: "MEM-C2", Engine: "memory", Name: "TRF capacity",
		Cite: "002 L139, L1089, L4118, L4151-4155",
		Text: "a TRF tensor's Row × Element bytes fit the TRF of its slice (8 Rows × 8 KB) in Full mode, half of it in FirstHalf or SecondHalf"})
	ruleMemVRF = NewRule(Rule{ID: "MEM-C3", Engine: "memory", Name: "VRF capacity",
		Cite: "002 L140, L1090",
		Text: "a VRF tensor lies within its slice's 8 KB of VRF"})
	ruleMemHBM = NewRule(Rule{ID: "MEM-C4", Engine: "memory", Name: "HBM capacity",
		Cite: "002 L137, L2949",
		Text: "an HBM tensor lies within its chip's 48 GB of HBM"})
	ruleMemOverlap = NewRule(Rule{ID: "SCH-R7", Engine: "memory", Name: "tensor addresses must not collide",
		Cite: "002 L154-155, L7056",
		Text: "tensors live at the same time must not overlap: both contexts share the flat on-chip SRAM and the programmer assigns addresses so that tensors do not collide"})
)

// Footprint is where and when a tensor of a program lives.
//
// Liveness: a tensor is live from the first op that names it (reads or
// writes it) to the last one, both included, in program order (a DM
// tensor a handoff names, from before the first op or until after the
// last, kernel.Program.Handoff); the main
// and sub contexts run concurrently (002 L151-153), so program order is the
// only order the check relies on. A kernel argument or result (role Input
// or Output) is live throughout (First = -1, Last = len(Ops)): the host owns
// it before, during and after the kernel, so the result may not land on an
// input even after the input was read. A tensor no op names and that is
// neither is never live (First > Last).
type Footprint struct {
	// Mem is the tensor's memory.
	Mem kernel.Memory
	// Lo and Hi are the bytes [Lo, Hi) the tensor occupies in each
	// position: from Addr for HBM, DM and VRF; for TRF, Row × Element bytes
	// from the start of its address mode's half (002 L4138, L4151-4155).
	Lo, Hi int64
	// Positions is the set of positions whose mappings hold data (padding
	// holds none): bit c for chip c of an HBM tensor, bit
	// (c·clusters + k)·slices + s for slice s of cluster k of chip c
	// otherwise. Each slice has its own DM, TRF and VRF (002 L138-140), so
	// two tensors can collide only on a position both hold.
	Positions []uint64
	// First and Last are the live op range (see Footprint).
	First, Last int
	// Base is the index of the tensor whose bytes this one holds: a tile
	// view's argument (kernel.Tensor.View), or the tensor itself. Tensors
	// of one base hold the same data and never collide with each other.
	Base int
	// Trf is the address mode of a TRF tensor.
	Trf kernel.TrfAddress
}

// Live reports whether the tensor is live at some point.
func (f *Footprint) Live() bool { return f.First <= f.Last }

// LiveTogether reports whether two footprints' live op ranges meet.
func (f *Footprint) LiveTogether(g *Footprint) bool {
	return f.Live() && g.Live() && f.First <= g.Last && g.First <= f.Last
}

// SharePosition returns the first position both footprints hold.
func (f *Footprint) SharePosition(g *Footprint) (int, bool) {
	for i := 0; i < len(f.Positions) && i < len(g.Positions); i++ {
		if w := f.Positions[i] & g.Positions[i]; w != 0 {
			for b := 0; b < 64; b++ {
				if w&(1<<uint(b)) != 0 {
					return i*64 + b, true
				}
			}
		}
	}
	return 0, false
}

// Overlaps reports whether two footprints share a byte of one memory on a
// common position, regardless of liveness. It is what a scheduler's RAW,
// WAR and WAW hazards compare (002 L7069-7070).
func (f *Footprint) Overlaps(g *Footprint) bool {
	if f.Mem != g.Mem || f.Lo >= g.Hi || g.Lo >= f.Hi {
		return false
	}
	for i := 0; i < len(f.Positions) && i < len(g.Positions); i++ {
		if f.Positions[i]&g.Positions[i] != 0 {
			return true
		}
	}
	return false
}

// Access is a tensor an op reads or writes.
type Access struct {
	// Tensor is the index of the tensor in Program.Tensors.
	Tensor int
	// Write is set when the op writes it.
	Write bool
}

// MemoryIssue is a broken footprint rule: a tensor beyond its memory's
// capacity (B = -1) or two tensors live together on common bytes or TRF
// regions (A < B).
type MemoryIssue struct {
	// Violation names the rule: MEM-C1..C4, SCH-R7, or TRF-R8 for TRF
	// address regions (002 L4156-4158).
	Violation *Violation
	// A and B are tensor indices in Program.Tensors.
	A, B int
	// Position is, for an overlap, the first position both tensors hold
	// (see Footprint.Positions).
	Position int
}

// MemoryMap is the footprint of every tensor of a program and the accesses
// of every op. Its storage is reused by Compute; positions are cached by
// their mapping expressions unless NoCache is set.
type MemoryMap struct {
	// Footprints has one entry per tensor, in Program.Tensors order.
	Footprints []Footprint
	// Accesses are the accesses of all ops; op i's are
	// Accesses[AccessAt[i]:AccessAt[i+1]].
	Accesses []Access
	// AccessAt indexes Accesses by op (len(Ops)+1 entries).
	AccessAt []int
	// Issues are the broken rules, capacity first (in tensor order), then
	// overlaps (by pairs in tensor order).
	Issues []MemoryIssue
	// NoCache disables the positions cache.
	NoCache bool

	sets  map[[3]*mapping.Expr][]uint64
	spans map[*mapping.Expr]int
}

// maxPositionSets bounds the positions cache; a full cache is emptied. It
// is the simulator's bound, not a hardware number.
const maxPositionSets = 1 << 14

// CheckFootprint returns the broken capacity and overlap rules of p, or an
// error when p is malformed (a null or unknown tensor, a missing mapping).
func CheckFootprint(spec *Spec, p *kernel.Program) ([]MemoryIssue, error) {
	var m MemoryMap
	m.NoCache = true
	if err := m.Compute(spec, p); err != nil {
		return nil, err
	}
	return m.Issues, nil
}

// Compute fills m with p's footprints, accesses and issues.
func (m *MemoryMap) Compute(spec *Spec, p *kernel.Program) error {
	if spec == nil || p == nil {
		return fmt.Errorf("memory: nil spec or program")
	}
	m.Footprints, m.Issues = m.Footprints[:0], m.Issues[:0]
	for i, t := range p.Tensors {
		if t == nil {
			return fmt.Errorf("tensors[%d]: null", i)
		}
		fp, err := m.footprintOf(spec, p, i, t)
		if err != nil {
			return fmt.Errorf("tensors[%d] %q: %w", i, t.Name, err)
		}
		fp.First, fp.Last = len(p.Ops), -1
		if t.Role == kernel.Input || t.Role == kernel.Output {
			fp.First, fp.Last = -1, len(p.Ops)
		}
		fp.Base = i
		if t.View != "" {
			if fp.Base = tensorIndex(p, t.View); fp.Base < 0 {
				return fmt.Errorf("tensors[%d] %q: view of unknown tensor %q", i, t.Name, t.View)
			}
		}
		m.Footprints = append(m.Footprints, fp)
	}
	m.Accesses, m.AccessAt = m.Accesses[:0], m.AccessAt[:0]
	for i, op := range p.Ops {
		if op == nil {
			return fmt.Errorf("ops[%d]: null", i)
		}
		m.AccessAt = append(m.AccessAt, len(m.Accesses))
		touch := func(name string, write bool) error {
			k := tensorIndex(p, name)
			if k < 0 {
				return fmt.Errorf("ops[%d] (%s): unknown tensor %q", i, op.Kind, name)
			}
			m.Accesses = append(m.Accesses, Access{Tensor: k, Write: write})
			fp := &m.Footprints[k]
			fp.First, fp.Last = min(fp.First, i), max(fp.Last, i)
			return nil
		}
		var err error
		switch op.Kind {
		case kernel.OpChain:
			for _, st := range op.Stages {
				if st == nil || err != nil {
					continue
				}
				if st.Kind.ReadsVRF() && st.Tensor != "" {
					err = touch(st.Tensor, false)
				}
				switch st.Kind {
				case kernel.StBegin, kernel.StAlign:
					err = touch(st.Tensor, false)
					if rhs := st.InterleavedTensor(); rhs != "" && err == nil {
						err = touch(rhs, false)
					}
				case kernel.StToTRF, kernel.StToVRF, kernel.StCommit:
					err = touch(st.Tensor, true)
				}
			}
		default:
			if err = touch(op.Src, false); err == nil {
				err = touch(op.Dst, true)
			}
		}
		if err != nil {
			return err
		}
	}
	m.AccessAt = append(m.AccessAt, len(m.Accesses))
	// A DM tensor the previous kernel left is live from before the first
	// op, one the next kernel takes until after the last
	// (kernel.Program.Handoff).
	for i, op := range p.Handoff {
		name, entry := op.Dst, true
		if op.Kind == kernel.OpToHBM {
			name, entry = op.Src, false
		}
		k := tensorIndex(p, name)
		if k < 0 {
			return fmt.Errorf("handoff[%d] (%s): unknown tensor %q", i, op.Kind, name)
		}
		fp := &m.Footprints[k]
		if entry {
			fp.First, fp.Last = -1, max(fp.Last, -1)
		} else {
			fp.First, fp.Last = min(fp.First, len(p.Ops)), len(p.Ops)
		}
	}
	// Tensors live at the same time on common bytes (SCH-R7) or TRF
	// regions (TRF-R8).
	for a := range m.Footprints {
		for b := a + 1; b < len(m.Footprints); b++ {
			x, y := &m.Footprints[a], &m.Footprints[b]
			if x.Mem != y.Mem || x.Base == y.Base || !x.LiveTogether(y) {
				continue
			}
			if x.Mem != kernel.TRF && (x.Lo >= y.Hi || y.Lo >= x.Hi) {
				continue
			}
			g, ok := x.SharePosition(y)
			if !ok {
				continue
			}
			var v *Violation
			if x.Mem == kernel.TRF {
				// Full dedicates the entire TRF to one tensor, each half
				// holds one (002 L4156-4158).
				err := CheckTRFRegions(x.Trf, y.Trf)
				if err == nil {
					continue
				}
				var ok bool
				if v, ok = err.(*Violation); !ok {
					return fmt.Errorf("tensors %q and %q: %w", p.Tensors[a].Name, p.Tensors[b].Name, err)
				}
			} else {
				v = ruleMemOverlap.Violate("%s tensors %q (bytes %d..%d, live ops %s) and %q (bytes %d..%d, live ops %s) overlap",
					x.Mem, p.Tensors[a].Name, x.Lo, x.Hi, LiveSpan(x, len(p.Ops)), p.Tensors[b].Name, y.Lo, y.Hi, LiveSpan(y, len(p.Ops)))
			}
			m.Issues = append(m.Issues, MemoryIssue{Violation: v, A: a, B: b, Position: g})
		}
	}
	return nil
}

// LiveSpan prints a footprint's live op range of a program of n ops, e.g.
// `start..3`.
func LiveSpan(f *Footprint, n int) string {
	from, to := "start", "end"
	if f.First >= 0 {
		from = fmt.Sprint(f.First)
	}
	if f.Last < n {
		to = fmt.Sprint(f.Last)
	}
	return from + ".." + to
}

func tensorIndex(p *kernel.Program, name string) int {
	for i, t := range p.Tensors {
		if t != nil && t.Name == name {
			return i
		}
	}
	return -1
}

// footprintOf computes t's bytes and positions, and records a tensor beyond
// its memory's capacity.
func (m *MemoryMap) footprintOf(spec *Spec, p *kernel.Program, i int, t *kernel.Tensor) (Footprint, error) {
	fp := Footprint{Mem: t.Mem, Trf: t.TrfAddress}
	if t.Element == nil || t.Chip == nil {
		return fp, fmt.Errorf("missing element or chip mapping")
	}
	elems := t.Element.Size()
	if t.View != "" && t.Mem == kernel.HBM {
		// A tile view's mapping keeps its parent's strides with the tiled
		// digit padded (`B = 2 # 4`, 002 L813-831): its elements end at its
		// last live position, inside the parent, not Size() past its
		// address.
		var err error
		if elems, err = m.liveSpan(t.Element); err != nil {
			return fp, err
		}
	}
	n, err := t.DType.BytesFor(elems)
	if err != nil {
		return fp, err
	}
	bytes := int64(n)
	var limit int64
	var rule *Rule
	fp.Lo = t.Addr
	switch t.Mem {
	case kernel.HBM, kernel.DM, kernel.VRF:
		limit, rule = memLimit(spec, t.Mem)
	case kernel.TRF:
		if t.Row == nil {
			return fp, fmt.Errorf("TRF tensor without a row mapping")
		}
		// One region per slice: Row × Element bytes from the start of the
		// address mode's half (002 L4138, L4151-4155).
		bytes *= int64(t.Row.Size())
		total := int64(spec.TRF.BytesPerRowLane.Value * spec.Slice.Rows.Value)
		fp.Lo, limit, rule = 0, total, ruleMemTRF
		switch t.TrfAddress {
		case kernel.TrfFirstHalf:
			limit = total / 2
		case kernel.TrfSecondHalf:
			fp.Lo = total / 2
		}
	default:
		return fp, fmt.Errorf("memory %q", t.Mem)
	}
	fp.Hi = fp.Lo + bytes
	if fp.Hi > limit {
		v := rule.Violate("%s tensor %q occupies bytes %d..%d, beyond the %d bytes available", t.Mem, t.Name, fp.Lo, fp.Hi, limit).
			With("end", int(fp.Hi)).With("capacity", int(limit))
		m.Issues = append(m.Issues, MemoryIssue{Violation: v, A: i, B: -1})
	}
	if t.Mem == kernel.HBM {
		fp.Positions, err = m.positions(spec, p, t.Chip, nil, nil)
	} else {
		fp.Positions, err = m.positions(spec, p, t.Chip, t.Cluster, t.Slice)
	}
	return fp, err
}

// liveSpan returns one past the last position of e that is not padding
// (cached by mapping).
func (m *MemoryMap) liveSpan(e *mapping.Expr) (int, error) {
	if n, ok := m.spans[e]; ok && !m.NoCache {
		return n, nil
	}
	fs, err := mapping.FactorizeShared(e)
	if err != nil {
		return 0, err
	}
	n := liveExtent(fs)
	if !m.NoCache {
		if m.spans == nil || len(m.spans) >= maxPositionSets {
			m.spans = map[*mapping.Expr]int{}
		}
		m.spans[e] = n
	}
	return n, nil
}

// liveExtent returns one past the last live (non-padding) position of a
// factorized mapping: walking the factors innermost first, a digit of
// Extent x adds (x-1) times the extent below it, a padding only widens
// that extent (mapping.Factor).
func liveExtent(fs mapping.Factors) int {
	below, last := 1, 0
	for _, f := range fs {
		if f.Kind == mapping.FactorPad {
			below = f.Extent
			continue
		}
		last += (f.Extent - 1) * below
		below *= f.Extent
	}
	return last + 1
}

// positions returns the (cached) set of positions whose mappings hold data
// (see Footprint.Positions).
func (m *MemoryMap) positions(spec *Spec, p *kernel.Program, chip, cluster, slice *mapping.Expr) ([]uint64, error) {
	key := [3]*mapping.Expr{chip, cluster, slice}
	if s, ok := m.sets[key]; ok {
		return s, nil
	}
	nc, ncl, nsl := chip.Size(), 1, 1
	if cluster != nil {
		if slice == nil {
			return nil, fmt.Errorf("cluster mapping without a slice mapping")
		}
		ncl, nsl = spec.Chip.Clusters.Value, spec.Cluster.Slices.Value
		if cluster.Size() > ncl || slice.Size() > nsl {
			return nil, fmt.Errorf("cluster × slice mapping of %d × %d positions, the chip has %d × %d (002 L130-131)", cluster.Size(), slice.Size(), ncl, nsl)
		}
	}
	set := make([]uint64, (nc*ncl*nsl+63)/64)
	var err error
	holds := func(e *mapping.Expr) []bool {
		if err != nil {
			return nil
		}
		var prog *mapping.Program
		if prog, err = mapping.Compile(e, p.Axes); err != nil {
			return nil
		}
		dst := make([]int, prog.Slots())
		out := make([]bool, e.Size())
		for i := range out {
			k, _ := prog.Eval(i, dst)
			out[i] = k == mapping.Live || k == mapping.Multi
		}
		return out
	}
	hc := holds(chip)
	var hk, hs []bool
	if cluster != nil {
		hk, hs = holds(cluster), holds(slice)
	}
	if err != nil {
		return nil, err
	}
	for c, ok := range hc {
		if !ok {
			continue
		}
		if cluster == nil {
			set[c/64] |= 1 << uint(c%64)
			continue
		}
		for k, okk := range hk {
			for s, oks := range hs {
				if okk && oks {
					b := (c*ncl+k)*nsl + s
					set[b/64] |= 1 << uint(b%64)
				}
			}
		}
	}
	if !m.NoCache {
		if m.sets == nil {
			m.sets = map[[3]*mapping.Expr][]uint64{}
		}
		if len(m.sets) >= maxPositionSets {
			clear(m.sets)
		}
		m.sets[key] = set
	}
	return set, nil
}

// memLimit returns an addressed memory's bytes (HBM per chip, DM and VRF
// per slice) and the rule an address beyond them breaks; 0 and nil for
// the TRF, which its address mode places (and any other memory).
func memLimit(spec *Spec, mem kernel.Memory) (int64, *Rule) {
	switch mem {
	case kernel.HBM:
		return spec.HBM.Bytes.Value, ruleMemHBM // 002 L137
	case kernel.DM:
		return int64(spec.DM.BytesPerSlice.Value), ruleMemDM // 002 L138
	case kernel.VRF:
		return int64(spec.VRF.BytesPerSlice.Value), ruleMemVRF // 002 L140
	}
	return 0, nil
}
