package cost

import (
	"testing"

	"tcpmap/model/kernel"
)

// FuzzDMAEstimate: any descriptor is priced or rejected with an error, never
// a panic, and the bound never exceeds the estimate.
func FuzzDMAEstimate(f *testing.F) {
	f.Add(uint8(0), uint8(1), uint16(8), uint16(256), int64(2048), int64(256), int64(0), int64(16384), uint16(256), uint8(3))
	f.Add(uint8(1), uint8(2), uint16(64), uint16(32), int64(1<<21), int64(1<<22), int64(5), int64(4), uint16(40), uint8(2))
	m, err := NewDMAModel(spec)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src, dst uint8, n1, n2 uint16, s1, s2, sb, db int64, stride0 uint16, dmn uint8) {
		media := func(k uint8) kernel.DMAMedia {
			switch k % 4 {
			case 0:
				return hbm(int(k/4) % 5)
			case 1:
				return dm(0, int(k/4)%3, int(k/16)%9)
			case 2:
				return kernel.DMAMedia{Kind: kernel.MediaSPM, Dmn: kernel.DmnIndex{Cluster: int(k/4) % 2, DMN: int(k/8) % 8}}
			}
			return kernel.DMAMedia{Kind: "bad"}
		}
		a, b := int(n1%64)+1, int(n2%64)+1
		p := int(stride0%4200) + 1
		d := kernel.DMADescriptor{Dmn: kernel.DmnIndex{DMN: int(dmn % 10)}, Src: media(src), Dst: media(dst),
			SrcBase: int(sb % (1 << 36)), DstBase: int(db % (1 << 36)), Stride0: p, ElemBits: 8,
			Entries: []kernel.DMAEntry{{Size: a, SrcStride: int(s1 % (1 << 30)), DstStride: int(s2 % (1 << 30))}, {Size: b, SrcStride: int(s2 % 4096), DstStride: int(s1 % 4096)}, {Size: p, SrcStride: 1, DstStride: 1}}}
		ds := []kernel.DMADescriptor{d}
		est, err := m.EstimateDescriptors(ds)
		bound, berr := m.DMABound(ds)
		if err != nil {
			return
		}
		if berr != nil {
			t.Fatalf("estimate %v but bound error %v", est.Cycles, berr)
		}
		if bound > est.Cycles+1e-6 {
			t.Fatalf("bound %v > estimate %v", bound, est.Cycles)
		}
	})
}

// FuzzDMABatchBound: a batch of two DMA commands whose descriptors run on
// the ports of a few DMA Engines (the engines' two DMN ports in parallel,
// one DMN's descriptors in sequence, 002 L2565, L2796-2807) is priced or
// rejected, never a panic; under DMA lower bounds the batch and each
// command end no later than priced exactly (DMABound, DMABoundEnds), as
// the planner's pruning needs.
func FuzzDMABatchBound(f *testing.F) {
	f.Add(uint8(0x1b), uint16(0x0123), uint16(32), uint16(4096), int64(4096), int64(0), uint8(2))
	f.Add(uint8(0x72), uint16(0x3a5c), uint16(8), uint16(256), int64(1<<21|1<<25), int64(1<<20), uint8(3))
	exact, err := NewModel(spec)
	if err != nil {
		f.Fatal(err)
	}
	bound, err := NewModel(spec)
	if err != nil {
		f.Fatal(err)
	}
	bound.DMABound = true
	f.Fuzz(func(t *testing.T, shape uint8, where uint16, n uint16, stride0 uint16, hstride, hbase int64, ndesc uint8) {
		p := []int{64, 256, 1024, 4096}[int(stride0)%4]
		size := int(n%32) + 1
		k := int(ndesc%4) + 2 // descriptors in the batch
		var ds []kernel.DMADescriptor
		for x := 0; x < k; x++ {
			bitsOf := int(where>>(4*(x%4))) & 0xf
			d := dmn(0, bitsOf>>3&1, bitsOf&7) // executing DMN: engine d/2, port d%2
			dmSide := dm(0, d.Cluster, d.DMN)  // its own DMN's DM
			if shape>>x&1 == 1 && x%2 == 1 {   // now and then another DMN of the pair
				dmSide.Dmn.DMN ^= 1
			}
			h := hbm(0)
			hb := int(hbase%(1<<30)) + x*size*p
			if hb < 0 {
				hb = -hb
			}
			st := int(hstride % (1 << 26))
			if st <= 0 {
				st = p
			}
			db := dmSide.Dmn.DMN * dms
			var e kernel.DMADescriptor
			if shape>>(x+4)&1 == 0 { // HBM to DM
				e = desc(d, h, dmSide, hb, db, p, loop{size, st, ss}, loop{p, 1, 1})
			} else { // DM to HBM
				e = desc(d, dmSide, h, db, hb, p, loop{size, ss, st}, loop{p, 1, 1})
			}
			e.Exec = x / 4
			ds = append(ds, e)
		}
		split := k / 2
		counts := []int{split, k - split}
		alone := make([]float64, 2)
		if _, err := exact.dma.EstimateDescriptors(ds); err != nil {
			return // rejected: out of HBM and the like
		}
		for c, at := range []int{0, split} {
			est, err := exact.dma.EstimateDescriptors(ds[at : at+counts[c]])
			if err != nil {
				t.Fatalf("the batch is priced but command %d alone is not: %v", c, err)
			}
			alone[c] = est.Cycles
		}
		// The second command's descriptors follow the first's on each
		// port (priceBatch offsets their Exec).
		for x := split; x < k; x++ {
			ds[x].Exec += 1 + (split-1)/4
		}
		e, err := exact.dmaPrice(ds, counts, alone)
		if err != nil {
			t.Fatal(err)
		}
		b, err := bound.dmaPrice(ds, counts, alone)
		if err != nil {
			t.Fatal(err)
		}
		if b.est.Cycles > e.est.Cycles+1e-6 {
			t.Fatalf("batch bound %v > price %v", b.est.Cycles, e.est.Cycles)
		}
		for c := range counts {
			if b.ends[c] > e.ends[c]+1e-6 {
				t.Fatalf("command %d: bound end %v > exact end %v (ends %v vs %v)", c, b.ends[c], e.ends[c], b.ends, e.ends)
			}
		}
	})
}
