package verify

import (
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The Vector Engine's stages and to_vrf (002 L4549-5277, L280-285): a pass
// vector_init → vector_intra_slice_branch → vector_fxp… → vector_final over
// packets of one 32-byte flit (eight 32-bit lanes, 002 L4551), as far as
// engines/vector.go models it.

// planVector checks a Vector Engine stage's configuration; it returns the
// VRF tensor the stage reads, if any.
func planVector(s *kernel.Stage) (vrf string, err error) {
	c := s.Config
	missing := fmt.Errorf("no %s configuration: lower the program first (engines.Lower)", s.Kind)
	switch s.Kind {
	case kernel.StToVRF:
		if c == nil || c.ToVRF == nil {
			return "", missing
		}
	case kernel.StVectorInit:
		if c == nil || c.VectorInit == nil {
			return "", missing
		}
	case kernel.StVectorBranch:
		if c == nil || c.VectorBranch == nil {
			return "", missing
		}
		if m := c.VectorBranch.Mode; m != kernel.BranchUnconditional {
			// Only Unconditional gives every element ExecutionId 0, so that
			// every later stage applies to it (002 L4798).
			return "", fmt.Errorf("BranchMode::%s: %w", m, engines.ErrNotModelled)
		}
	case kernel.StVectorFxp:
		if c == nil || c.VectorFxp == nil {
			return "", missing
		}
		if r := c.VectorFxp.VRF; r != nil {
			// VectorFxp reads one 32-byte flit per packet (002 L4551).
			if r.Lanes < 1 || r.ElemBytes < 1 || r.Lanes > 32/r.ElemBytes || r.Lanes*r.ElemBytes != 32 {
				return "", fmt.Errorf("vector_fxp: a VRF read of %d lanes of %d bytes, not one 32-byte flit", r.Lanes, r.ElemBytes)
			}
			return r.Tensor, nil
		}
	case kernel.StVectorFinal:
		if c == nil || c.VectorFinal == nil {
			return "", missing
		}
	default:
		return "", fmt.Errorf("%s: %w", s.Kind, engines.ErrNotModelled)
	}
	return "", nil
}

// vectorPackets checks that the stream holds packets × lanes 32-bit
// elements: one flit per packet (002 L4551).
func vectorPackets(in []byte, lanes, packets int) error {
	if lanes < 1 || packets < 0 || len(in) != lanes*4*packets {
		return fmt.Errorf("vector: the stream holds %d bytes, the pass takes %d packets of %d 32-bit lanes", len(in), packets, lanes)
	}
	return nil
}

// vectorStage runs one Vector Engine stage on slice g; vector_init,
// the Unconditional branch and vector_final pass the packets on unchanged.
func (r *sliceRun) vectorStage(sp *stagePlan, g int, in []byte, cur int) ([]byte, int, error) {
	c := sp.cfg
	switch sp.kind {
	case kernel.StVectorInit:
		return in, cur, vectorPackets(in, c.VectorInit.Lanes, c.VectorInit.Packets)
	case kernel.StVectorBranch:
		return in, cur, nil
	case kernel.StVectorFinal:
		return in, cur, vectorPackets(in, c.VectorFinal.Lanes, c.VectorFinal.Packets)
	case kernel.StVectorFxp:
		return r.vectorFxp(c.VectorFxp, g, in, cur)
	case kernel.StToVRF:
		return nil, -1, r.toVRF(c.ToVRF, g, in)
	}
	return nil, -1, fmt.Errorf("%s: %w", sp.kind, engines.ErrNotModelled)
}

// vectorFxp applies the Fxp op to every packet, the operand a constant or
// the VRF flit the packet's time step reads (002 L4821-4836, L5054-5058).
func (r *sliceRun) vectorFxp(c *kernel.VectorFxpConfig, g int, in []byte, cur int) ([]byte, int, error) {
	fb := r.x.spec.Stream.FlitBytes.Value // 32-byte flits, 002 L4551
	if len(in)%fb != 0 {
		return nil, -1, fmt.Errorf("vector_fxp: the stream holds %d bytes, not whole %d-byte flits", len(in), fb)
	}
	out, k := r.buffer(cur, len(in))
	var vrf *engines.VRFMemory
	var flit []byte
	if c.VRF != nil {
		var err error
		if vrf, err = r.x.dev.VRF(g); err != nil {
			return nil, -1, err
		}
		flit = r.packet[:fb]
	}
	for t := 0; t*fb < len(in); t++ {
		if vrf != nil {
			if err := vrf.ReadFlit(c.VRF, t, flit); err != nil {
				return nil, -1, err
			}
		}
		if err := engines.VectorFxp(c, in[t*fb:(t+1)*fb], flit, out[t*fb:(t+1)*fb]); err != nil {
			return nil, -1, err
		}
	}
	return out, k, nil
}

// toVRF stores the collect flits in the VRF of slice g (002 L280-285).
func (r *sliceRun) toVRF(c *kernel.ToVRFConfig, g int, in []byte) error {
	fb := r.x.spec.Stream.FlitBytes.Value // 32-byte flits, 002 L3033
	if len(in) != c.Flits*fb {
		return fmt.Errorf("to_vrf: the stream holds %d bytes, the configuration stores %d flits of %d bytes", len(in), c.Flits, fb)
	}
	vrf, err := r.x.dev.VRF(g)
	if err != nil {
		return err
	}
	for t := 0; t < c.Flits; t++ {
		if err := vrf.StoreFlit(c, t, in[t*fb:(t+1)*fb]); err != nil {
			return err
		}
	}
	return nil
}
