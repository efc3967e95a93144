package engines

import (
	"fmt"

	"tcpmap/model/kernel"
)

// lowerVectorIntra lowers a stage of the intra-slice block between
// vector_init and vector_final (002 L4733-4747): it checks the pass's
// structure (stage order, Way8/Way4, ALUs, the stash) and derives the
// stage's configuration from the stream, which it then updates (type,
// Time, Packet). A configuration the stage states is kept, the checks
// still run.
func lowerVectorIntra(spec *Spec, st *chainState, stage *kernel.Stage, tensor *kernel.Tensor, cfg *kernel.StageConfig, keep bool) error {
	v := st.ve
	s := VectorStream{DType: st.dt, Slice: st.slice, Time: st.time, Packet: st.packet}
	k := stage.Kind
	if k == kernel.StVectorStash {
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
		c, err := DeriveVectorReduce(spec, VectorReduceInput{Stream: s, Axis: stage.Axis, Op: stage.Param, OTime: stage.Time, OPacket: stage.Packet})
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
