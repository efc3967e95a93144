package cost

import "tcpmap/model/kernel"

// Footprints: the bytes each tensor occupies, which ops read and write them,
// and the hazards that follow. The scheduler serializes ops whose accesses
// overlap (RAW, WAR, WAW on the byte ranges of the tensors they read and
// write, 002 L7069-7070); a tensor beyond its memory's capacity, or two
// tensors live at the same time on the same bytes, is an error of the kernel
// (002 L154-155, L7056), reported as an Invalid finding. The rules and the
// footprints are engines.MemoryMap's.

// footprints computes every tensor's footprint, the accesses of every op,
// and the capacity and overlap findings.
func (m *Model) footprints(p *kernel.Program) error {
	m.mem.NoCache = m.NoCache
	if err := m.mem.Compute(m.spec, p); err != nil {
		return err
	}
	for _, is := range m.mem.Issues {
		m.report.Findings = append(m.report.Findings, OpFinding{Op: -1, Finding: Finding{Violation: is.Violation, Effect: Invalid}})
	}
	return nil
}

// conflict reports a RAW, WAR or WAW hazard between ops i and j: one writes
// bytes the other reads or writes (002 L7069).
func (m *Model) conflict(i, j int) bool {
	mm := &m.mem
	fps := mm.Footprints
	for _, a := range mm.Accesses[mm.AccessAt[i]:mm.AccessAt[i+1]] {
		for _, b := range mm.Accesses[mm.AccessAt[j]:mm.AccessAt[j+1]] {
			if (a.Write || b.Write) && (a.Tensor == b.Tensor || fps[a.Tensor].Overlaps(&fps[b.Tensor])) {
				return true
			}
		}
	}
	return false
}
