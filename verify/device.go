package verify

import (
	"errors"
	"fmt"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Device is the simulated memory of the chips a kernel runs on: each chip's
// HBM (48 GB, 002 L137), each slice's DM (512 KB, 002 L138), TRF (in its
// bank-row layout, engines.TRFMemory, 002 L4116-4118) and VRF (8 KB,
// 002 L140, engines.VRFMemory). The sizes come from the hardware spec.
// Memory is allocated lazily: HBM and DM page by page on first write, a
// slice's TRF and VRF on first use. A 48 GB HBM or 512 slices × 512 KB of DM
// cost only what a kernel touches, and reading memory never written gives
// zeros.
//
// A slice is named by its global index (chip·clusters + cluster)·slices +
// slice, slice counted within its cluster (SliceIndex). Distinct slices may be
// accessed from distinct goroutines at the same time; one slice, and HBM,
// from one goroutine at a time.
type Device struct {
	spec     *engines.Spec
	chips    int
	clusters int // per chip
	slices   int // per cluster
	hbm      []*paged
	dm       []*paged
	vrf      []*engines.VRFMemory
	trf      []*engines.TRFMemory
}

// Page sizes of the lazy memories. They are the simulator's allocation
// unit, not hardware numbers.
const (
	hbmPageBits = 16 // 64 KB pages
	hbmDirBits  = 12 // 4096 pages (256 MB) per directory
	dmPageBits  = 12 // 4 KB pages
)

// NewDevice returns the zeroed memory of chips chips with the sizes of spec.
func NewDevice(spec *engines.Spec, chips int) (*Device, error) {
	if spec == nil {
		return nil, errors.New("device: nil hardware spec")
	}
	if chips < 1 {
		return nil, fmt.Errorf("device: %d chips", chips)
	}
	d := &Device{spec: spec, chips: chips, clusters: spec.Chip.Clusters.Value, slices: spec.Cluster.Slices.Value}
	if d.clusters < 1 || d.slices < 1 {
		return nil, fmt.Errorf("device: spec has %d clusters of %d slices", d.clusters, d.slices)
	}
	hbm := spec.HBM.Bytes.Value              // 48 GB per chip, 002 L137
	dm := int64(spec.DM.BytesPerSlice.Value) // 512 KB per slice, 002 L138
	for i := 0; i < chips; i++ {
		d.hbm = append(d.hbm, newPaged(hbm, hbmPageBits, hbmDirBits))
	}
	n := d.TotalSlices()
	d.dm = make([]*paged, n)
	d.vrf = make([]*engines.VRFMemory, n)
	d.trf = make([]*engines.TRFMemory, n)
	for g := range d.dm {
		d.dm[g] = newPaged(dm, dmPageBits, 0)
	}
	return d, nil
}

// Spec returns the hardware spec the device was made with.
func (d *Device) Spec() *engines.Spec { return d.spec }

// Chips is the number of chips.
func (d *Device) Chips() int { return d.chips }

// TotalSlices is the number of slices of all chips.
func (d *Device) TotalSlices() int { return d.chips * d.clusters * d.slices }

// SliceIndex returns the global index of slice slice of cluster cluster of
// chip chip, or false when one is out of range.
func (d *Device) SliceIndex(chip, cluster, slice int) (int, bool) {
	if chip < 0 || chip >= d.chips || cluster < 0 || cluster >= d.clusters || slice < 0 || slice >= d.slices {
		return 0, false
	}
	return (chip*d.clusters+cluster)*d.slices + slice, true
}

// SliceCoords splits a global slice index into chip, cluster and slice.
func (d *Device) SliceCoords(g int) (chip, cluster, slice int) {
	return g / (d.clusters * d.slices), g / d.slices % d.clusters, g % d.slices
}

// SliceName prints a global slice as `chip 0 cluster 1 slice 17`.
func (d *Device) SliceName(g int) string {
	c, cl, s := d.SliceCoords(g)
	return fmt.Sprintf("chip %d cluster %d slice %d", c, cl, s)
}

func (d *Device) chipMem(chip int) (*paged, error) {
	if chip < 0 || chip >= d.chips {
		return nil, fmt.Errorf("HBM of chip %d: the device has %d chips", chip, d.chips)
	}
	return d.hbm[chip], nil
}

func (d *Device) sliceMem(ms []*paged, what string, g int) (*paged, error) {
	if g < 0 || g >= len(ms) {
		return nil, fmt.Errorf("%s of slice %d: the device has %d slices", what, g, len(ms))
	}
	return ms[g], nil
}

// ReadHBM fills dst from chip's HBM at byte address addr.
func (d *Device) ReadHBM(chip int, addr int64, dst []byte) error {
	m, err := d.chipMem(chip)
	if err != nil {
		return err
	}
	return m.read(addr, dst, "HBM")
}

// WriteHBM writes src to chip's HBM at byte address addr.
func (d *Device) WriteHBM(chip int, addr int64, src []byte) error {
	m, err := d.chipMem(chip)
	if err != nil {
		return err
	}
	return m.write(addr, src, "HBM")
}

// ReadDM fills dst from the DM of global slice g at byte address addr.
func (d *Device) ReadDM(g int, addr int64, dst []byte) error {
	m, err := d.sliceMem(d.dm, "DM", g)
	if err != nil {
		return err
	}
	return m.read(addr, dst, "DM")
}

// WriteDM writes src to the DM of global slice g at byte address addr.
func (d *Device) WriteDM(g int, addr int64, src []byte) error {
	m, err := d.sliceMem(d.dm, "DM", g)
	if err != nil {
		return err
	}
	return m.write(addr, src, "DM")
}

// ReadVRF fills dst from the VRF of global slice g at byte address addr.
func (d *Device) ReadVRF(g int, addr int64, dst []byte) error {
	m, err := d.VRF(g)
	if err != nil {
		return err
	}
	b := m.Bytes()
	if addr < 0 || addr > int64(len(b)) || int64(len(dst)) > int64(len(b))-addr {
		return fmt.Errorf("VRF access of %d bytes at address %d is outside its %d bytes", len(dst), addr, len(b))
	}
	copy(dst, b[addr:])
	return nil
}

// WriteVRF writes src to the VRF of global slice g at byte address addr.
func (d *Device) WriteVRF(g int, addr int64, src []byte) error {
	m, err := d.VRF(g)
	if err != nil {
		return err
	}
	b := m.Bytes()
	if addr < 0 || addr > int64(len(b)) || int64(len(src)) > int64(len(b))-addr {
		return fmt.Errorf("VRF access of %d bytes at address %d is outside its %d bytes", len(src), addr, len(b))
	}
	copy(b[addr:], src)
	return nil
}

// VRF returns the vector register file of global slice g (8 KB, 002 L140),
// allocating it on first use.
func (d *Device) VRF(g int) (*engines.VRFMemory, error) {
	if g < 0 || g >= len(d.vrf) {
		return nil, fmt.Errorf("VRF of slice %d: the device has %d slices", g, len(d.vrf))
	}
	if d.vrf[g] == nil {
		m, err := engines.NewVRFMemory(d.spec)
		if err != nil {
			return nil, err
		}
		d.vrf[g] = m
	}
	return d.vrf[g], nil
}

// TRF returns the register file of global slice g, allocating it on first
// use.
func (d *Device) TRF(g int) (*engines.TRFMemory, error) {
	if g < 0 || g >= len(d.trf) {
		return nil, fmt.Errorf("TRF of slice %d: the device has %d slices", g, len(d.trf))
	}
	if d.trf[g] == nil {
		m, err := engines.NewTRFMemory(d.spec)
		if err != nil {
			return nil, err
		}
		d.trf[g] = m
	}
	return d.trf[g], nil
}

// Allocated is the number of bytes of simulated memory the device holds:
// the pages written so far and the register files in use.
func (d *Device) Allocated() int64 {
	var n int64
	for _, ms := range [][]*paged{d.hbm, d.dm} {
		for _, m := range ms {
			n += m.allocated()
		}
	}
	for _, m := range d.vrf {
		if m != nil {
			n += int64(len(m.Bytes()))
		}
	}
	t := &d.spec.TRF
	for _, m := range d.trf {
		if m != nil {
			n += int64(t.BankRows.Value * t.RowsPerBank.Value * t.BankColumns.Value * t.RowBytes.Value)
		}
	}
	return n
}

// paged is a lazily allocated byte-addressed memory of size bytes: a table
// of directories of pages, each allocated on first write.
type paged struct {
	size     int64
	pageBits uint
	dirBits  uint
	dirs     [][][]byte
	pages    int
}

func newPaged(size int64, pageBits, dirBits uint) *paged {
	per := int64(1) << (pageBits + dirBits)
	return &paged{size: size, pageBits: pageBits, dirBits: dirBits, dirs: make([][][]byte, (size+per-1)/per)}
}

func (m *paged) allocated() int64 { return int64(m.pages) << m.pageBits }

func (m *paged) check(addr int64, n int, what string) error {
	if addr < 0 || addr > m.size || int64(n) > m.size-addr {
		return fmt.Errorf("%s access of %d bytes at address %d is outside its %d bytes", what, n, addr, m.size)
	}
	return nil
}

// page returns the page holding addr, allocating it when alloc is set; nil
// for a page never written when alloc is not set.
func (m *paged) page(addr int64, alloc bool) []byte {
	p := addr >> m.pageBits
	dir, idx := p>>m.dirBits, p&(1<<m.dirBits-1)
	if m.dirs[dir] == nil {
		if !alloc {
			return nil
		}
		m.dirs[dir] = make([][]byte, 1<<m.dirBits)
	}
	pg := m.dirs[dir][idx]
	if pg == nil && alloc {
		pg = make([]byte, 1<<m.pageBits)
		m.dirs[dir][idx] = pg
		m.pages++
	}
	return pg
}

func (m *paged) read(addr int64, dst []byte, what string) error {
	if err := m.check(addr, len(dst), what); err != nil {
		return err
	}
	mask := int64(1)<<m.pageBits - 1
	for len(dst) > 0 {
		off := addr & mask
		n := min(int64(len(dst)), mask+1-off)
		if pg := m.page(addr, false); pg != nil {
			copy(dst[:n], pg[off:off+n])
		} else {
			clear(dst[:n])
		}
		dst, addr = dst[n:], addr+n
	}
	return nil
}

func (m *paged) write(addr int64, src []byte, what string) error {
	if err := m.check(addr, len(src), what); err != nil {
		return err
	}
	mask := int64(1)<<m.pageBits - 1
	for len(src) > 0 {
		off := addr & mask
		n := min(int64(len(src)), mask+1-off)
		copy(m.page(addr, true)[off:off+n], src[:n])
		src, addr = src[n:], addr+n
	}
	return nil
}

// Allocation: which DM and VRF bytes each tensor occupies, and when.

// Extent is the byte range [Lo, Hi) a tensor occupies in one slice's DM or
// VRF.
type Extent struct {
	Lo, Hi int64
}

// Lifetime is the span of ops during which a tensor holds data: from the op
// that first writes it to the last op that reads (or writes) it, both
// included.
type Lifetime struct {
	First, Last int
}

// Allocation is where and when a DM, TRF or VRF tensor of a program lives.
type Allocation struct {
	Tensor *kernel.Tensor
	// Extent is its bytes in each slice that holds it (DM and VRF only).
	Extent Extent
	// Slices are the global slices that hold it: the live positions of its
	// Chip, Cluster and Slice mappings (002 L1029-1200), in ascending order.
	Slices []int
	// Life is when it holds data.
	Life Lifetime
}

// tensorSlices returns the global slices where t's Chip, Cluster and Slice
// mappings hold data: position (c, k, s) of the three mappings is chip c,
// cluster k, slice s of the cluster; padding positions hold nothing.
func tensorSlices(d *Device, t *kernel.Tensor) ([]int, error) {
	chip, cl, sl := t.Chip, t.Cluster, t.Slice
	if cl == nil || sl == nil {
		return nil, fmt.Errorf("tensor %q has no cluster or slice mapping", t.Name)
	}
	return spatialSlices(d, chip, cl, sl, t.Name)
}

// spatialSlices returns the global slices the live positions of a (Chip,
// Cluster, Slice) mapping triple name.
func spatialSlices(d *Device, chip, cl, sl *mapping.Expr, name string) ([]int, error) {
	if chip == nil {
		chip = mapping.Identity()
	}
	if chip.Size() > d.chips || cl.Size() > d.clusters || sl.Size() > d.slices {
		return nil, fmt.Errorf("tensor %q spans %d chips, %d clusters and %d slices per cluster; the device has %d, %d and %d",
			name, chip.Size(), cl.Size(), sl.Size(), d.chips, d.clusters, d.slices)
	}
	var out []int
	for c := 0; c < chip.Size(); c++ {
		if chip.Map(c).Kind != mapping.Live {
			continue
		}
		for k := 0; k < cl.Size(); k++ {
			if cl.Map(k).Kind != mapping.Live {
				continue
			}
			for s := 0; s < sl.Size(); s++ {
				if sl.Map(s).Kind == mapping.Live {
					g, _ := d.SliceIndex(c, k, s)
					out = append(out, g)
				}
			}
		}
	}
	return out, nil
}

// tensorUses records, for every tensor, the ops that write and read it, in
// program order.
func tensorUses(p *kernel.Program) (writes, reads map[string][]int) {
	writes, reads = map[string][]int{}, map[string][]int{}
	add := func(m map[string][]int, name string, i int) {
		if l := m[name]; len(l) == 0 || l[len(l)-1] != i {
			m[name] = append(l, i)
		}
	}
	for i, op := range p.Ops {
		switch op.Kind {
		case kernel.OpToDM:
			add(writes, op.Dst, i)
		case kernel.OpToHBM:
			add(reads, op.Src, i)
		case kernel.OpDMToDM:
			add(reads, op.Src, i)
			add(writes, op.Dst, i)
		case kernel.OpChain:
			for _, st := range op.Stages {
				if st.Kind.ReadsVRF() && st.Tensor != "" {
					add(reads, st.Tensor, i)
				}
				switch st.Kind {
				case kernel.StBegin, kernel.StAlign:
					add(reads, st.Tensor, i)
					if rhs := st.InterleavedTensor(); rhs != "" {
						add(reads, rhs, i)
					}
				case kernel.StToTRF, kernel.StToVRF, kernel.StCommit:
					add(writes, st.Tensor, i)
				}
			}
		}
	}
	return writes, reads
}

// Allocate computes where and when each DM, TRF and VRF tensor of p lives
// and checks the allocation: each tensor is written before it is read, and
// the footprint rules of engines.CheckFootprint hold: every tensor fits its
// memory (DM 512 KB, 002 L138; TRF, 002 L139; VRF 8 KB, 002 L140; HBM,
// 002 L137), no two tensors live at the same time share a byte of one
// slice's DM or VRF or of one chip's HBM (002 L154-155), or break the TRF's
// address regions (002 L4156-4158). Lifetimes are engines.Footprint's: from
// the first op that names a tensor (its first write, since reads come
// after) to the last. The allocations are returned in the order of
// p.Tensors; HBM tensors and tensors no op uses have none.
func Allocate(d *Device, p *kernel.Program) ([]Allocation, error) {
	if err := p.CheckDataflow(); err != nil {
		return nil, err
	}
	writes, _ := tensorUses(p)
	var mm engines.MemoryMap
	mm.NoCache = true
	if err := mm.Compute(d.spec, p); err != nil {
		return nil, err
	}
	for _, is := range mm.Issues {
		if err := memoryError(d, p, &mm, &is); err != nil {
			return nil, err
		}
	}
	var out []Allocation
	for _, op := range p.Handoff {
		if op.Kind == kernel.OpToDM {
			writes[op.Dst] = append([]int{-1}, writes[op.Dst]...) // left by the previous kernel
		}
	}
	for i, t := range p.Tensors {
		if t.Mem == kernel.HBM || len(writes[t.Name]) == 0 {
			continue // HBM, or declared and never used
		}
		slices, err := tensorSlices(d, t)
		if err != nil {
			return nil, err
		}
		f := &mm.Footprints[i]
		a := Allocation{Tensor: t, Slices: slices, Life: Lifetime{First: f.First, Last: f.Last}}
		if t.Mem != kernel.TRF {
			a.Extent = Extent{Lo: f.Lo, Hi: f.Hi}
		}
		out = append(out, a)
	}
	return out, nil
}

// memoryError words a broken footprint rule as verify reports it.
func memoryError(d *Device, p *kernel.Program, mm *engines.MemoryMap, is *engines.MemoryIssue) error {
	n := len(p.Ops)
	ta, fa := p.Tensors[is.A], &mm.Footprints[is.A]
	if is.B < 0 {
		if ta.Mem == kernel.DM || ta.Mem == kernel.VRF {
			return fmt.Errorf("%s tensor %q occupies bytes %d..%d, beyond the %d bytes of a slice's %[1]s (%s)",
				memName(ta.Mem), ta.Name, fa.Lo, fa.Hi, memCapacity(d, ta.Mem), is.Violation.Rule.ID)
		}
		return fmt.Errorf("%s tensor %q: %w", memName(ta.Mem), ta.Name, is.Violation)
	}
	tb, fb := p.Tensors[is.B], &mm.Footprints[is.B]
	where := fmt.Sprintf("chip %d", is.Position)
	if ta.Mem != kernel.HBM {
		where = d.SliceName(is.Position)
	}
	if ta.Mem == kernel.TRF {
		return fmt.Errorf("TRF tensors %q (ops %s) and %q (ops %s) are live together on %s: %w",
			ta.Name, engines.LiveSpan(fa, n), tb.Name, engines.LiveSpan(fb, n), where, is.Violation)
	}
	return fmt.Errorf("%s tensors %q (bytes %d..%d, ops %s) and %q (bytes %d..%d, ops %s) overlap on %s while both are live (%s)",
		memName(ta.Mem), ta.Name, fa.Lo, fa.Hi, engines.LiveSpan(fa, n),
		tb.Name, fb.Lo, fb.Hi, engines.LiveSpan(fb, n), where, is.Violation.Rule.ID)
}

// memCapacity is a slice's bytes of DM (002 L138) or VRF (002 L140).
func memCapacity(d *Device, m kernel.Memory) int {
	if m == kernel.VRF {
		return d.spec.VRF.BytesPerSlice.Value
	}
	return d.spec.DM.BytesPerSlice.Value
}

// memName is a memory's name as the manual writes it: DM, TRF, VRF, HBM.
func memName(m kernel.Memory) string { return strings.ToUpper(string(m)) }
