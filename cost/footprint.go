package cost

import (
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Footprints: the bytes each tensor occupies, which ops read and write them,
// and the hazards that follow. The scheduler serializes ops whose accesses
// overlap (RAW, WAR, WAW on the byte ranges of the tensors they read and
// write, 002 L7069-7070); a tensor beyond its memory's capacity, or two
// tensors live at the same time on the same bytes, is an error of the kernel
// (002 L154-155, L7056), reported as an Invalid finding.

// The rules this file checks.
var (
	ruleDMCapacity = engines.NewRule(engines.Rule{ID: "MEM-C1", Engine: "memory", Name: "DM capacity",
		Cite: "002 L138, L1088, L2874",
		Text: "a DM tensor lies within its slice's 512 KB of DM: addr + Element bytes ≤ dm.bytes_per_slice"})
	ruleTRFTotal = engines.NewRule(engines.Rule{ID: "MEM-C2", Engine: "memory", Name: "TRF capacity",
		Cite: "002 L139, L1089, L4118, L4151-4155",
		Text: "a TRF tensor's Row × Element bytes fit the TRF of its slice (8 Rows × 8 KB) in Full mode, half of it in FirstHalf or SecondHalf"})
	ruleVRFCapacity = engines.NewRule(engines.Rule{ID: "MEM-C3", Engine: "memory", Name: "VRF capacity",
		Cite: "002 L140, L1090",
		Text: "a VRF tensor lies within its slice's 8 KB of VRF"})
	ruleHBMCapacity = engines.NewRule(engines.Rule{ID: "MEM-C4", Engine: "memory", Name: "HBM capacity",
		Cite: "002 L137, L2949",
		Text: "an HBM tensor lies within its chip's 48 GB of HBM"})
	ruleOverlap = engines.NewRule(engines.Rule{ID: "SCH-R7", Engine: "memory", Name: "tensor addresses must not collide",
		Cite: "002 L154-155, L7056",
		Text: "tensors live at the same time must not overlap: both contexts share the flat on-chip SRAM and the programmer assigns addresses so that tensors do not collide"})
)

// footprint is the bytes a tensor occupies: [lo, hi) of every position in
// set (chips for HBM; chip × cluster × slice for DM, TRF and VRF).
type footprint struct {
	mem    kernel.Memory
	lo, hi int64
	set    []uint64
	// first and last are the ops that first and last touch the tensor; an
	// input is live from the start (-1), an output to the end.
	first, last int
}

func (a *footprint) overlaps(b *footprint) bool {
	if a.mem != b.mem || a.lo >= b.hi || b.lo >= a.hi {
		return false
	}
	for i := 0; i < len(a.set) && i < len(b.set); i++ {
		if a.set[i]&b.set[i] != 0 {
			return true
		}
	}
	return false
}

// opAccess is a tensor an op reads or writes.
type opAccess struct {
	tensor int
	write  bool
}

func tensorIndex(p *kernel.Program, name string) int {
	for i, t := range p.Tensors {
		if t != nil && t.Name == name {
			return i
		}
	}
	return -1
}

// footprints computes every tensor's footprint, the accesses of every op,
// and the capacity and overlap findings.
func (m *Model) footprints(p *kernel.Program) error {
	m.fps = m.fps[:0]
	for i, t := range p.Tensors {
		if t == nil {
			return fmt.Errorf("tensors[%d]: null", i)
		}
		fp, err := m.footprintOf(p, t)
		if err != nil {
			return fmt.Errorf("tensors[%d] %q: %w", i, t.Name, err)
		}
		fp.first, fp.last = len(p.Ops), -1
		switch t.Role {
		case kernel.Input:
			fp.first = -1
		case kernel.Output:
			fp.last = len(p.Ops)
		}
		m.fps = append(m.fps, fp)
	}
	m.accs = m.accs[:0]
	m.accAt = m.accAt[:0]
	for i, op := range p.Ops {
		if op == nil {
			return fmt.Errorf("ops[%d]: null", i)
		}
		m.accAt = append(m.accAt, len(m.accs))
		touch := func(name string, write bool) error {
			k := tensorIndex(p, name)
			if k < 0 {
				return fmt.Errorf("ops[%d] (%s): unknown tensor %q", i, op.Kind, name)
			}
			m.accs = append(m.accs, opAccess{tensor: k, write: write})
			fp := &m.fps[k]
			fp.first, fp.last = min(fp.first, i), max(fp.last, i)
			return nil
		}
		var err error
		switch op.Kind {
		case kernel.OpChain:
			for _, st := range op.Stages {
				if st == nil || err != nil {
					continue
				}
				switch st.Kind {
				case kernel.StBegin, kernel.StAlign:
					err = touch(st.Tensor, false)
				case kernel.StVectorFxp:
					if st.Tensor != "" {
						err = touch(st.Tensor, false)
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
	m.accAt = append(m.accAt, len(m.accs))
	// Tensors live at the same time on the same bytes (SCH-R7).
	for a := range m.fps {
		for b := a + 1; b < len(m.fps); b++ {
			x, y := &m.fps[a], &m.fps[b]
			if x.first > x.last || y.first > y.last || x.first > y.last || y.first > x.last || !x.overlaps(y) {
				continue
			}
			v := ruleOverlap.Violate("%s tensors %q (bytes %d..%d, live ops %s) and %q (bytes %d..%d, live ops %s) overlap",
				x.mem, p.Tensors[a].Name, x.lo, x.hi, liveSpan(x, len(p.Ops)), p.Tensors[b].Name, y.lo, y.hi, liveSpan(y, len(p.Ops)))
			m.report.Findings = append(m.report.Findings, OpFinding{Op: -1, Finding: Finding{Violation: v, Effect: Invalid}})
		}
	}
	return nil
}

func liveSpan(f *footprint, n int) string {
	from, to := "start", "end"
	if f.first >= 0 {
		from = fmt.Sprint(f.first)
	}
	if f.last < n {
		to = fmt.Sprint(f.last)
	}
	return from + ".." + to
}

// footprintOf computes t's bytes and positions, and reports a tensor beyond
// its memory's capacity.
func (m *Model) footprintOf(p *kernel.Program, t *kernel.Tensor) (footprint, error) {
	fp := footprint{mem: t.Mem}
	if t.Element == nil || t.Chip == nil {
		return fp, fmt.Errorf("missing element or chip mapping")
	}
	n, err := t.DType.BytesFor(t.Element.Size())
	if err != nil {
		return fp, err
	}
	bytes := int64(n)
	spec := m.spec
	var limit int64
	var rule *engines.Rule
	fp.lo = t.Addr
	switch t.Mem {
	case kernel.HBM:
		limit, rule = spec.HBM.Bytes.Value, ruleHBMCapacity
	case kernel.DM:
		limit, rule = int64(spec.DM.BytesPerSlice.Value), ruleDMCapacity
	case kernel.VRF:
		limit, rule = int64(spec.VRF.BytesPerSlice.Value), ruleVRFCapacity
	case kernel.TRF:
		if t.Row == nil {
			return fp, fmt.Errorf("TRF tensor without a row mapping")
		}
		// One region per slice: Row × Element bytes from the start of the
		// address mode's half (002 L4138, L4151-4155).
		bytes *= int64(t.Row.Size())
		total := int64(spec.TRF.BytesPerRowLane.Value * spec.Slice.Rows.Value)
		fp.lo, limit, rule = 0, total, ruleTRFTotal
		switch t.TrfAddress {
		case kernel.TrfFirstHalf:
			limit = total / 2
		case kernel.TrfSecondHalf:
			fp.lo = total / 2
		}
	default:
		return fp, fmt.Errorf("memory %q", t.Mem)
	}
	fp.hi = fp.lo + bytes
	if fp.hi > limit {
		v := rule.Violate("%s tensor %q occupies bytes %d..%d, beyond the %d bytes available", t.Mem, t.Name, fp.lo, fp.hi, limit).
			With("end", int(fp.hi)).With("capacity", int(limit))
		m.report.Findings = append(m.report.Findings, OpFinding{Op: -1, Finding: Finding{Violation: v, Effect: Invalid}})
	}
	if t.Mem == kernel.HBM {
		fp.set, err = m.positions(p, t.Chip, nil, nil)
	} else {
		fp.set, err = m.positions(p, t.Chip, t.Cluster, t.Slice)
	}
	return fp, err
}

// positions returns the cached set of positions whose mappings hold data
// (a padding position holds none): bit c for chip c of an HBM tensor, bit
// (c·clusters + k)·slices + s for slice s of cluster k of chip c otherwise.
func (m *Model) positions(p *kernel.Program, chip, cluster, slice *mapping.Expr) ([]uint64, error) {
	key := [3]*mapping.Expr{chip, cluster, slice}
	if s, ok := m.sets[key]; ok {
		return s, nil
	}
	nc, ncl, nsl := chip.Size(), 1, 1
	if cluster != nil {
		if slice == nil {
			return nil, fmt.Errorf("cluster mapping without a slice mapping")
		}
		ncl, nsl = m.spec.Chip.Clusters.Value, m.spec.Cluster.Slices.Value
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
		if len(m.sets) >= maxCacheEntries {
			clear(m.sets)
		}
		m.sets[key] = set
	}
	return set, nil
}

// conflict reports a RAW, WAR or WAW hazard between ops i and j: one writes
// bytes the other reads or writes (002 L7069).
func (m *Model) conflict(i, j int) bool {
	for _, a := range m.accs[m.accAt[i]:m.accAt[i+1]] {
		for _, b := range m.accs[m.accAt[j]:m.accAt[j+1]] {
			if (a.write || b.write) && (a.tensor == b.tensor || m.fps[a.tensor].overlaps(&m.fps[b.tensor])) {
				return true
			}
		}
	}
	return false
}
