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
