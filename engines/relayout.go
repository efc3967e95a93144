package engines

import (
	"errors"
	"fmt"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// DeriveRelayout derives the DMA command that copies a tensor from one HBM
// layout (from, at byte address src) into another (to, at dst): an
// HBM-to-HBM move through two element mappings, as the manual's Example 1
// moves `m![A, B, C]` into `m![B, A, C]` (002 L2608-2636). Graph planning
// prices a relayout between a producer's layout and a consumer's with it
// (docs/spec-decisions.md "Graph relayouts").
//
// The stream walks the destination's digits in its order (its writes run
// in order); the packet is the run both layouts share innermost (the
// longest common suffix of their factors; at least the destination's
// innermost digit), cut to the largest packet a DMA moves (002 L2428-2429).
// The outermost digits of the walk spread over the chip's clusters and
// each cluster's DMNs when they divide (one descriptor per DMN, each DMA
// Engine running its pair's, 002 L2404, L2544); otherwise one DMN runs it
// all. The rules are DeriveDMA's. A transpose of the innermost axis moves
// one element a packet (legal between HBM tensors: the 8-byte packets are
// HBM-to-DM's rule, 002 L2427, L2837), which the cost model prices at a
// request, and a read-modify-write, per element (002 L2984-2985).
func DeriveRelayout(spec *Spec, axes mapping.Axes, dt dtype.DType, from, to *mapping.Expr, src, dst int) (*kernel.DMACommand, error) {
	if spec == nil {
		return nil, errors.New("relayout: no hardware spec")
	}
	ff, err := mapping.Factorize(liveDigits(from))
	if err != nil || liveDigits(from) == nil {
		return nil, fmt.Errorf("relayout: the layout %s is not factorizable", from)
	}
	tf, err := mapping.Factorize(liveDigits(to))
	if err != nil || liveDigits(to) == nil || len(tf) == 0 {
		return nil, fmt.Errorf("relayout: the layout %s is not factorizable", to)
	}
	// Factors run innermost first.
	n := 0
	for n < len(ff) && n < len(tf) && sameFactor(ff[n], tf[n]) {
		n++
	}
	n = max(n, 1)
	packet, time := tf[:n].Expr(), tf[n:].Expr()
	outer, packet, err := capPacket(spec, dt, packet)
	if err != nil {
		return nil, fmt.Errorf("relayout: %w", err)
	}
	time = mapping.Pair(time, outer)
	one := mapping.Identity()
	req := DMARequest{Axes: axes, DType: dt,
		Src: DMATensor{Media: kernel.MediaHBM, Chip: one, Element: from, Addr: src},
		Dst: DMATensor{Media: kernel.MediaHBM, Chip: one, Element: to, Addr: dst}}
	clusters := spec.Chip.Clusters.Value
	dmns := spec.Cluster.Slices.Value / max(spec.Cluster.SlicesPerDMN.Value, 1)
	if cl, dm, t, ok := spreadRelayout(time, clusters, dmns); ok {
		req.Stream = DMAStream{Cluster: cl, Slice: dm, Time: t, Packet: packet}
		if cmd, err := DeriveDMA(spec, req); err == nil {
			return cmd, nil
		}
	}
	req.Stream = DMAStream{Time: time, Packet: packet}
	return DeriveDMA(spec, req)
}

// sameFactor reports whether two factors are the same digit of the same
// axis.
func sameFactor(a, b mapping.Factor) bool {
	return a.Kind == b.Kind && a.Axis == b.Axis && a.Stride == b.Stride && a.Extent == b.Extent
}

// spreadRelayout splits the outermost positions of a relayout's walk over
// clusters and then DMNs: cluster × dmn positions, the rest in time.
func spreadRelayout(time *mapping.Expr, clusters, dmns int) (cl, dm, rest *mapping.Expr, ok bool) {
	n := time.Size()
	if clusters < 1 || dmns < 1 || n%(clusters*dmns) != 0 {
		return nil, nil, nil, false
	}
	cl, rest1, err := mapping.SplitAt(time, n/clusters)
	if err != nil {
		return nil, nil, nil, false
	}
	dm, rest, err = mapping.SplitAt(rest1, rest1.Size()/dmns)
	if err != nil {
		return nil, nil, nil, false
	}
	return cl, dm, rest, true
}
