package verify

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// The Vector Engine's stages and to_vrf (002 L4549-5277, L280-285): a pass
// vector_init → vector_intra_slice_branch → the intra-slice block's stages
// → vector_final over the slice's packets (eight 32-bit lanes in Way8,
// four in Way4, 002 L4551, L4731), each stage running its configuration
// with the engines' semantics (engines/vector_exec.go). The pass's
// per-slice state, the elements' ExecutionIds, the packets' valid counts
// and the stash, lives in veSlice.

// veSlice is one worker's Vector Engine state for the slice it runs: the
// current packet width, the ExecutionIds (nil: all 0) in one of two
// buffers, the valid counts (nil: all lanes valid) and the stash.
type veSlice struct {
	lanes  int
	tags   []uint8
	tagBuf [2][]uint8
	tagCur int
	vc     []uint8
	vcBuf  [2][]uint8
	vcCur  int
	stash  []byte
	stashB []byte
}

// reset starts a pass of lanes-wide packets.
func (v *veSlice) reset(lanes int) {
	v.lanes, v.tags, v.vc, v.stash = lanes, nil, nil, nil
}

// nextTags returns the other tag buffer, of n entries.
func (v *veSlice) nextTags(n int) []uint8 {
	k := 1 - v.tagCur
	if cap(v.tagBuf[k]) < n {
		v.tagBuf[k] = make([]uint8, n)
	}
	v.tagCur = k
	return v.tagBuf[k][:n]
}

// nextVC returns the other valid-count buffer, of n entries.
func (v *veSlice) nextVC(n int) []uint8 {
	k := 1 - v.vcCur
	if cap(v.vcBuf[k]) < n {
		v.vcBuf[k] = make([]uint8, n)
	}
	v.vcCur = k
	return v.vcBuf[k][:n]
}

// planVector checks a Vector Engine stage's configuration; it returns the
// VRF tensor the stage reads, if any.
func planVector(s *kernel.Stage) (vrf string, err error) {
	c := s.Config
	if c != nil && s.Kind != kernel.StToVRF {
		if err := engines.CheckVectorConfig(s.Kind, c); err != nil {
			if errors.Is(err, engines.ErrNotModelled) {
				return "", err
			}
			return "", fmt.Errorf("%s: %w", s.Kind, err)
		}
	}
	missing := fmt.Errorf("no %s configuration: lower the program first (engines.Lower)", s.Kind)
	need := func(ok bool) error {
		if c == nil || !ok {
			return missing
		}
		return nil
	}
	switch k := s.Kind; {
	case k == kernel.StToVRF:
		return "", need(c != nil && c.ToVRF != nil)
	case k == kernel.StVectorInit:
		return "", need(c != nil && c.VectorInit != nil)
	case k == kernel.StVectorFinal:
		return "", need(c != nil && c.VectorFinal != nil)
	case k == kernel.StVectorBranch:
		if err := need(c != nil && c.VectorBranch != nil); err != nil {
			return "", err
		}
		switch m := c.VectorBranch.Mode; m {
		case kernel.BranchUnconditional, kernel.BranchComparison, kernel.BranchAxisToggle, kernel.BranchValidCount:
		default:
			return "", fmt.Errorf("BranchMode::%s: %w", m, engines.ErrNotModelled)
		}
	case k == kernel.StVectorStash:
		return "", need(c != nil && c.VectorStash != nil)
	case k == kernel.StVectorUnzip:
		return "", need(c != nil && c.VectorUnzip != nil)
	case kernel.ZipCluster(k) != "":
		return "", need(c != nil && c.VectorOp != nil && c.VectorOp.Zip)
	case k.IsVectorOp():
		if err := need(c != nil && c.VectorOp != nil); err != nil {
			return "", err
		}
		if _, ok := engines.VeFunc(k, c.VectorOp.Op, c.VectorOp.DType.String() == "f32"); !ok {
			return "", fmt.Errorf("%s: op %s on %s: %w", k, c.VectorOp.Op, c.VectorOp.DType, engines.ErrNotModelled)
		}
		if r := c.VectorOp.VRF(); r != nil {
			// One packet of the stream's lanes per time step (002 L4551, L4731).
			if r.ElemBytes != 4 || (r.Lanes != 8 && r.Lanes != 4) {
				return "", fmt.Errorf("%s: a VRF read of %d lanes of %d bytes, not one 8- or 4-lane packet of 32-bit elements", k, r.Lanes, r.ElemBytes)
			}
			return r.Tensor, nil
		}
	case k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		return "", need(c != nil && c.VectorConvert != nil)
	case k == kernel.StVectorSplit || k == kernel.StVectorTrim || k == kernel.StVectorConcat || k == kernel.StVectorPad:
		return "", need(c != nil && c.VectorWay != nil)
	case k == kernel.StVectorReduce:
		return "", need(c != nil && c.VectorReduce != nil)
	case k == kernel.StVectorFilter:
		return "", need(c != nil && c.VectorFilter != nil)
	default:
		return "", fmt.Errorf("%s: %w", s.Kind, engines.ErrNotModelled)
	}
	return "", nil
}

// vectorPackets checks that the stream holds packets × lanes 32-bit
// elements.
func vectorPackets(in []byte, lanes, packets int) error {
	if lanes < 1 || packets < 0 || len(in) != lanes*4*packets {
		return fmt.Errorf("vector: the stream holds %d bytes, the pass takes %d packets of %d 32-bit lanes", len(in), packets, lanes)
	}
	return nil
}

// vectorStage runs one Vector Engine stage on slice g.
func (r *sliceRun) vectorStage(sp *stagePlan, gs int, in []byte, cur int) ([]byte, int, error) {
	g := gs
	c := sp.cfg
	v := &r.ve
	st := func() engines.VEStream { return engines.VEStream{Data: in, Lanes: v.lanes, Tags: v.tags, VC: v.vc} }
	switch k := sp.kind; {
	case k == kernel.StVectorInit:
		v.reset(c.VectorInit.Lanes)
		r.x.veElems.Add(int64(len(in) / 4))
		if err := vectorPackets(in, c.VectorInit.Lanes, c.VectorInit.Packets); err != nil {
			return nil, -1, err
		}
		if vcg := c.VectorInit.VCG; vcg != nil {
			// The Valid Count Generator tags each flit entering the pass
			// (002 L6169); s is the slice's number in its cluster.
			vc := v.nextVC(c.VectorInit.Packets)
			if err := engines.VCGValidCounts(vcg, gs%r.x.dev.slices, vc); err != nil {
				return nil, -1, err
			}
			v.vc = vc
		}
		return in, cur, nil
	case k == kernel.StVectorFinal:
		return in, cur, vectorPackets(in, c.VectorFinal.Lanes, c.VectorFinal.Packets)
	case k == kernel.StToVRF:
		return nil, -1, r.toVRF(c.ToVRF, g, in)
	case k == kernel.StVectorBranch:
		if c.VectorBranch.Mode == kernel.BranchUnconditional || c.VectorBranch.Mode == kernel.BranchValidCount && v.vc == nil {
			v.tags = nil
			return in, cur, nil
		}
		tags := v.nextTags(len(in) / 4)
		if err := engines.VectorBranchApply(c.VectorBranch, st(), g%r.x.dev.slices, tags); err != nil {
			return nil, -1, err
		}
		v.tags = tags
		return in, cur, nil
	case k == kernel.StVectorStash:
		if cap(v.stashB) < len(in) {
			v.stashB = make([]byte, len(in))
		}
		v.stash = v.stashB[:len(in)]
		copy(v.stash, in)
		return in, cur, nil
	case k.IsVectorOp():
		src := engines.VeSources{Stash: v.stash}
		if c.VectorOp.VRF() != nil {
			vrf, err := r.x.dev.VRF(g)
			if err != nil {
				return nil, -1, err
			}
			src.VRF = vrf
		}
		out, o := r.buffer(cur, len(in))
		return out, o, engines.VectorOpApply(k, c.VectorOp, st(), src, out)
	case k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		out, o := r.buffer(cur, len(in))
		copy(out, in)
		return out, o, engines.VectorConvertApply(c.VectorConvert, out)
	case k == kernel.StVectorUnzip:
		// Both groups start with ExecutionId 0 (furiosa-visa-std
		// VectorTensorPair::new).
		v.tags = nil
		out, o := r.buffer(cur, len(in))
		return out, o, engines.VectorUnzipApply(c.VectorUnzip, st(), out)
	case kernel.ZipCluster(k) != "":
		out, o := r.buffer(cur, len(in)/2)
		if err := engines.VectorOpApply(k, c.VectorOp, st(), engines.VeSources{}, out); err != nil {
			return nil, -1, err
		}
		if v.tags != nil {
			// The result sits in group 1's positions and keeps its
			// ExecutionIds (furiosa-visa-std vector_*_zip).
			tags := v.nextTags(len(out) / 4)
			copy(tags, v.tags[len(v.tags)/2:])
			v.tags = tags
		}
		return out, o, nil
	case k == kernel.StVectorSplit || k == kernel.StVectorTrim || k == kernel.StVectorConcat || k == kernel.StVectorPad:
		w := c.VectorWay
		out, o := r.buffer(cur, 4*w.OutLanes*w.OutPackets)
		res := engines.VEStream{Data: out, Lanes: w.OutLanes}
		if v.tags != nil {
			res.Tags = v.nextTags(w.OutLanes * w.OutPackets)
		}
		if v.vc != nil {
			res.VC = v.nextVC(w.OutPackets)
		}
		if err := engines.VectorWayApply(w, st(), res); err != nil {
			return nil, -1, err
		}
		v.lanes, v.tags, v.vc = w.OutLanes, res.Tags, res.VC
		return out, o, nil
	case k == kernel.StVectorReduce:
		rc := c.VectorReduce
		out, o := r.buffer(cur, 4*rc.Lanes*rc.OutPackets)
		var tags []uint8
		if v.tags != nil {
			tags = v.nextTags(rc.Lanes * rc.OutPackets)
		}
		if err := engines.VectorReduceApply(rc, st(), out, tags); err != nil {
			return nil, -1, err
		}
		v.tags, v.vc = tags, nil
		return out, o, nil
	case k == kernel.StVectorFilter:
		fc := c.VectorFilter
		out, o := r.buffer(cur, 4*fc.Lanes*fc.OutPackets)
		vc := v.nextVC(fc.OutPackets)
		if _, err := engines.VectorFilterApply(fc, st(), out, vc); err != nil {
			return nil, -1, err
		}
		v.tags, v.vc = nil, vc
		return out, o, nil
	}
	return nil, -1, fmt.Errorf("%s: %w", sp.kind, engines.ErrNotModelled)
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

// VectorElements is the number of elements the Vector Engine's passes
// took in so far, over every slice that ran.
func (x *Executor) VectorElements() int64 { return x.veElems.Load() }
