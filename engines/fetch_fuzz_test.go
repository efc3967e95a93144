package engines

import (
	"testing"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// FuzzDeriveFetch feeds random mapping expressions to the derivations:
// ConfigFetch, DeriveSequencer in both modes and ConfigCommit must never
// panic, must fail only with errors (rule violations for well-formed
// mappings that break a rule), and every configuration they return for a
// small stream must pass the semantic oracle.
func FuzzDeriveFetch(f *testing.F) {
	for _, c := range seqCases {
		f.Add(c.axes, c.buf, c.time, c.packet, uint8(1), uint8(0))
	}
	for _, c := range fetchCases {
		f.Add(c.axes, c.elem, c.time, c.pkt, uint8(c.in), uint8(1))
	}
	for _, c := range commitCases {
		f.Add(c.axes, c.elem, c.time, c.pkt, uint8(c.dt), uint8(2))
	}
	spec := Default()
	f.Fuzz(func(t *testing.T, axesSrc, bufSrc, timeSrc, packetSrc string, dt, flags uint8) {
		ax, err := mapping.ParseAxes(axesSrc)
		if err != nil {
			return
		}
		b, err1 := mapping.Parse(bufSrc, ax, nil)
		tm, err2 := mapping.Parse(timeSrc, ax, nil)
		p, err3 := mapping.Parse(packetSrc, ax, nil)
		if err1 != nil || err2 != nil || err3 != nil {
			return
		}
		d := dtype.All[int(dt)%len(dtype.All)]
		ctx := kernel.CtxMain
		if flags&1 != 0 {
			ctx = kernel.CtxSub
		}
		small := mapping.Pair(tm, p).Size() <= 1<<12 && b.Size() <= 1<<12
		for _, mode := range []SeqMode{SeqRead, SeqWrite} {
			sd, err := DeriveSequencer(spec, SeqRequest{Buf: b, Time: tm, Packet: p, Mode: mode})
			if err != nil {
				continue
			}
			if small && !checkOracle(t, b, tm, p, mode, sd.Config, nil) {
				t.Fatalf("%s: buf %s, time %s, packet %s (%s) -> %s", axesSrc, b, tm, p, mode, sd.Config.Labeled())
			}
		}
		fc, err := ConfigFetch(spec, FetchRequest{InType: d, OutType: d, Element: b, Time: tm, Packet: p, Context: ctx,
			ClusterSize: 2, SliceSize: 256, Table: flags&2 != 0})
		if err == nil {
			if fc.FetchElems < 1 || fc.Seq.PacketSize%fc.FetchElems != 0 || fc.ContiguousRun%fc.FetchElems != 0 {
				t.Fatalf("fetch_size %d elements does not divide packet %d and run %d", fc.FetchElems, fc.Seq.PacketSize, fc.ContiguousRun)
			}
			if small && !checkOracle(t, b, tm, p, SeqRead, fc.Seq, nil) {
				t.Fatalf("fetch %s", fc.Seq.Labeled())
			}
			if fc.Adapter.Mask != nil {
				for pos := 0; pos < fc.Seq.Size() && pos < 1<<12; pos++ {
					MaskedAt(fc.Adapter.Mask, &fc.Seq, pos)
				}
			}
		}
		cc, err := ConfigCommit(spec, CommitRequest{DType: d, Time: tm, Packet: p, Element: b, Context: ctx, FromFetch: flags&4 != 0})
		if err == nil {
			trunc := p
			if cc.CommitInElems < p.Size() {
				trunc = p.Resize(cc.CommitInElems)
			}
			if small && !checkOracle(t, b, tm, trunc, SeqWrite, cc.Seq, nil) {
				t.Fatalf("commit %s", cc.Seq.Labeled())
			}
			for w := 0; w < cc.WritesPerStep; w++ {
				if _, _, err := CommitWrite(cc, 0, w); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
