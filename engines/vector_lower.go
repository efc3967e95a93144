package engines

import (
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// lowerVectorIntra lowers a stage of the intra-slice block between
// vector_init and vector_final (002 L4733-4747): it checks the pass's
// structure (stage order, Way8/Way4, ALUs, the stash) and derives the
// stage's configuration from the stream, which it then updates (type,
// Time, Packet). A configuration the stage states is kept, the checks
// still run.
func lowerVectorIntra(spec *Spec, axes mapping.Axes, st *chainState, stage *kernel.Stage, tensor *kernel.Tensor, cfg *kernel.StageConfig, keep bool) error {
	v := st.ve
	s := VectorStream{DType: st.dt, Slice: st.slice, Time: st.time, Packet: st.packet, Groups: 1}
	if v.pair {
		s.Groups = 2
	}
	k := stage.Kind
	if k == kernel.StVectorStash {
		if v.pair || v.zipped {
			return ruleVEPair.Violate("vector_stash in two-group mode (002 L5204-5205, L5259)")
		}
		if !veStashable[v.stage] {
			return ruleVEStash.Violate("vector_stash after %s: the stash is taken at Branch, Logic, Fxp, Narrow, Fp, FpDiv or Clip", veStageNames[v.stage])
		}
		if v.stash != nil {
			return ruleVEStash.Violate("a second vector_stash: one stash per pass")
		}
		v.stash = &veStashState{dt: st.dt, time: st.time, packet: st.packet, lanes: st.packet.Size()}
		if !keep {
			cfg.VectorStash = &kernel.VectorStashConfig{DType: st.dt, Lanes: st.packet.Size(), Packets: st.time.Size()}
		}
		return nil
	}
	pos, ok := veStageOf[k]
	if !ok {
		return fmt.Errorf("vector: %s is not an intra-slice stage", k)
	}
	if err := v.enter(pos, k, st.prev); err != nil {
		return err
	}
	switch {
	case k == kernel.StVectorBranch:
		b, err := kernel.ParseBranch(stage.Param)
		if err != nil {
			return fmt.Errorf("vector: %w", err)
		}
		c, err := DeriveVectorBranchSpec(spec, b, s)
		if err != nil {
			return err
		}
		if !keep {
			cfg.VectorBranch = &c
		}
		return nil

	case k == kernel.StVectorUnzip:
		var tile *mapping.Expr
		if stage.Param != "" {
			var err error
			if tile, err = mapping.Parse(stage.Param, axes, nil); err != nil {
				return ruleVEPair.Violate("TileTime %q: %v", stage.Param, err)
			}
		}
		if stage.Time == nil || stage.Axis == "" {
			return ruleVEPair.Violate("vector_intra_slice_unzip::<I, TileTime, SplitTime> needs its group axis and SplitTime")
		}
		c, err := DeriveVectorUnzip(spec, s, stage.Axis, tile, stage.Time)
		if err != nil {
			return err
		}
		if !keep {
			cfg.VectorUnzip = &c
		}
		st.time = stage.Time
		v.pair = true
		return nil

	case kernel.ZipCluster(k) != "":
		call, err := kernel.ParseVeZip(k, stage.Param)
		if err != nil {
			return fmt.Errorf("vector: %w", err)
		}
		c, err := DeriveVectorZip(spec, k, call, s)
		if err != nil {
			return err
		}
		if keep && cfg.VectorOp != nil {
			c = *cfg.VectorOp
		} else if !keep {
			cfg.VectorOp = &c
		}
		v.pair, v.zipped = false, true
		return v.use(c.ALU)

	case k.IsVectorOp():
		call, err := kernel.ParseVeCall(k, stage.Param, stage.Tensor)
		if err != nil {
			return fmt.Errorf("vector: %w", err)
		}
		in := VectorOpInput{Kind: k, Call: call, Stream: s}
		if tensor != nil {
			if err := sameSpatial(ruleVRFSlices, st, tensor); err != nil {
				return err
			}
			in.VRF = &VRFReadInput{Tensor: tensor.Name, DType: tensor.DType, Element: tensor.Element, Base: int(tensor.Addr)}
		}
		reads := false
		for _, sl := range call.Slots {
			for _, o := range sl.Operands {
				reads = reads || o.Kind == kernel.VeStash
			}
		}
		if reads && v.stash != nil && !v.stash.read {
			in.Stash = &VectorStashInput{DType: v.stash.dt, Time: v.stash.time, Packet: v.stash.packet}
		}
		if reads && v.stash != nil && v.stash.read {
			return ruleVEStash.Violate("%s reads the stash a second time: a binary op consumes it", call.Op)
		}
		c, err := DeriveVectorOp(spec, in)
		if err != nil {
			return err
		}
		if reads {
			v.stash.read = true
		}
		if keep && cfg.VectorOp != nil {
			c = *cfg.VectorOp
		} else if !keep {
			cfg.VectorOp = &c
		}
		return v.use(c.ALU)

	case k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		w, err := kernel.ParseIntWidth(stage.Param)
		if err != nil {
			return ruleVEIntWidth.Violate("%v", err)
		}
		c, err := DeriveVectorConvert(k, w, st.dt)
		if err != nil {
			return err
		}
		if !keep {
			cfg.VectorConvert = &c
		}
		st.dt = c.To
		return nil

	case k == kernel.StVectorSplit || k == kernel.StVectorTrim || k == kernel.StVectorConcat || k == kernel.StVectorPad:
		c, err := DeriveVectorWay(spec, k, s, stage.Time, stage.Packet)
		if err != nil {
			return err
		}
		if !keep {
			cfg.VectorWay = &c
		}
		if stage.Time != nil {
			st.time = stage.Time
		}
		st.packet = stage.Packet
		v.way = c.OutLanes
		return nil

	case k == kernel.StVectorReduce:
		// The VCG tags the pass's input flits for a padded reduce axis
		// (002 L5582: "configured automatically by the compiler").
		vcg, err := DeriveVCG(spec, stage.Axis, v.input)
		if err != nil {
			return err
		}
		if vcg != nil && v.init != nil {
			v.init.VCG = vcg
		}
		c, err := DeriveVectorReduce(spec, VectorReduceInput{Stream: s, Axis: stage.Axis, Op: stage.Param, OTime: stage.Time, OPacket: stage.Packet, VCG: vcg != nil})
		if err != nil {
			return err
		}
		if !keep {
			cfg.VectorReduce = &c
		}
		st.time, st.packet = stage.Time, stage.Packet
		return nil

	case k == kernel.StVectorFilter:
		g, err := kernel.ParseFilterGroup(stage.Param)
		if err != nil {
			return ruleVEFilter.Violate("%v", err)
		}
		if stage.Time == nil {
			return ruleVEFilter.Violate("vector_filter::<Time2> needs its Time2")
		}
		c, err := DeriveVectorFilter(spec, s, g, stage.Time)
		if err != nil {
			return err
		}
		if !keep {
			cfg.VectorFilter = &c
		}
		st.time = stage.Time
		return nil
	}
	return fmt.Errorf("vector: unknown stage kind %q", k)
}
