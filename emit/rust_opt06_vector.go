package emit

import (
	"fmt"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// The Vector Engine's intra-slice stages under furiosa-opt-std 0.6.0
// (engine/vector/tensor/vector_tensor.rs, operand.rs, branch.rs,
// op/mod.rs at d4d05a7 and 423b285). The same stage prints as the 0.6.0
// call:
//
//   - the tag unit: vector_intra_slice_tag(TagMode::Zero) or
//     TagMode::Comparison([Cmp::Less(0), ...]);
//   - the narrow and widen layers are renamed: vector_split →
//     vector_narrow_split, vector_trim_way4 → vector_narrow_trim,
//     vector_concat → vector_widen_concat, vector_pad_way8 →
//     vector_widen_pad, with the same type arguments;
//   - vector_fp_div takes no op (DivF is implicit);
//   - an operand is written bare when it is one unguarded slot (a
//     constant, `&vrf`, `Stash`, `(o0, o1)`), and otherwise as a Branched
//     layout: `Branched::imm(TagGuard::group(GroupId::One), 0)` for a
//     constant, `.rf(guard, &vrf)` or `.rf(guard, Stash)` for the register
//     port, which comes last;
//   - vector_filter takes a TagGuard: `TagGuard::group(GroupId::Zero)`;
//   - the conversions, the reduce, the logic, fxp, fp and clip ops,
//     vector_stash and the two-group pair (vector_intra_slice_unzip, the
//     per-group ops with one operand or `()` per group, the _zip ops) keep
//     their 0.1.0 spelling.
//
// What 0.6.0 cannot say is refused by optCheckVector with the op and the
// reason.

// optRenamed are the stages whose 0.6.0 method has another name.
var optRenamed = map[kernel.StageKind]string{
	kernel.StVectorSplit:  "vector_narrow_split",
	kernel.StVectorTrim:   "vector_narrow_trim",
	kernel.StVectorConcat: "vector_widen_concat",
	kernel.StVectorPad:    "vector_widen_pad",
}

// optMethod is the 0.6.0 method name of a stage kind.
func optMethod(k kernel.StageKind) string {
	if n, ok := optRenamed[k]; ok {
		return n
	}
	return string(k)
}

// optCheckVector refuses the intra-slice stages furiosa-opt-std 0.6.0
// cannot express, or tcpmap does not spell in it: a trim, pad, stash,
// filter or reduce of the two-group pair (paired is set between
// vector_intra_slice_unzip and the zip op), a per-group operand other
// than a constant or a VRF tensor, a unary op's argument mode, the ops
// 0.6.0 dropped, and operand layouts its Branched builder has no form for.
func optCheckVector(st *kernel.Stage, paired bool) error {
	lib := Opt06.Library()
	switch k := st.Kind; {
	case paired && (k == kernel.StVectorTrim || k == kernel.StVectorPad):
		return fmt.Errorf("%s of the two-group pair: %s's VectorTensorPair has no %s (vector_tensor_pair.rs leaves it out on purpose: the bypass form zero-pads the groups' execution ids on the back 4 lanes); vector_narrow_split and vector_widen_concat move the pair between Way8 and Way4", k, lib, optMethod(k))
	case paired && (k == kernel.StVectorStash || k == kernel.StVectorFilter || k == kernel.StVectorReduce):
		return fmt.Errorf("%s of the two-group pair: %s's VectorTensorPair has no %s (vector_tensor_pair.rs); zip the groups first", k, lib, k)
	case k == kernel.StVectorBranch:
		b, err := kernel.ParseBranch(st.Param)
		if err != nil {
			return err
		}
		switch b.Mode {
		case kernel.BranchUnconditional, kernel.BranchComparison:
			return nil
		case kernel.BranchAxisToggle:
			return fmt.Errorf("branch mode AxisToggle: %s's TagMode::AxisToggle takes furiosa-mapping's Ident, which tcpmap does not spell", lib)
		}
		return fmt.Errorf("branch mode %s: %s withholds it (engine/vector/branch.rs: TagMode has Zero, AxisToggle and Comparison only)", b.Mode, lib)
	case k.IsVectorOp():
		c, err := kernel.ParseVeCall(k, st.Param, st.Tensor)
		if err != nil {
			return err
		}
		if k == kernel.StVectorFpUnary && c.Mode != "" {
			return fmt.Errorf("%s's unary ops carry no argument mode (op/arg_mode.rs: ArgMode::Unary is op(mainstream)); %s %s", lib, c.Op, c.Mode)
		}
		if strings.HasPrefix(c.Op, "Mask") {
			return fmt.Errorf("%s has no %s (op/mod.rs: FpBinaryOp is AddF, SubF, MulF, DivF; FpTernaryOp is FmaF)", lib, c.Op)
		}
		if c.Pair {
			for _, g := range c.Groups {
				if len(g) > 1 || len(g) == 1 && g[0].Guard != kernel.GuardAlways {
					return fmt.Errorf("%s: a per-group operand of the two-group pair is one unguarded operand or () (operand.rs: IntoGroupOperand takes no Branched layout)", lib)
				}
				for _, s := range g {
					for i, o := range s.Operands {
						if o.Kind == kernel.VeStash || i > 0 && o.Kind != kernel.VeConst {
							return fmt.Errorf("%s: a per-group operand of the two-group pair is a constant or a VRF tensor, and a ternary one's operand1 a constant (operand.rs: IntoGroupOperand, IntoGroupTernaryOperand read no stash)", lib)
						}
					}
				}
			}
			return nil
		}
		_, err = optOperand(c.Slots)
		return err
	}
	return nil
}

// optVectorCall prints an intra-slice stage as furiosa-opt-std 0.6.0's
// call; dt is the stream's element type before the stage, updated by the
// conversions. The stage has passed optCheckVector.
func (w *rustWriter) optVectorCall(st *kernel.Stage, dt *dtype.DType) (string, error) {
	tp := func(args ...string) string { return "::<" + strings.Join(args, ", ") + ">" }
	switch k := st.Kind; {
	case k == kernel.StVectorBranch:
		b, err := kernel.ParseBranch(st.Param)
		if err != nil {
			return "", err
		}
		if b.Mode == kernel.BranchUnconditional {
			return "vector_intra_slice_tag(TagMode::Zero)", nil
		}
		var xs []string
		for _, c := range b.Cmps {
			if c.Boundary == "" {
				xs = append(xs, "Cmp::"+c.Op)
			} else {
				xs = append(xs, "Cmp::"+c.Op+"("+c.Boundary+")")
			}
		}
		return "vector_intra_slice_tag(TagMode::Comparison([" + strings.Join(xs, ", ") + "]))", nil
	case k.IsVectorOp():
		c, err := kernel.ParseVeCall(k, st.Param, st.Tensor)
		if err != nil {
			return "", err
		}
		info, _ := kernel.LookupVeOp(k, c.Op)
		name := string(k)
		if c.Mode != "" {
			name += "_with_mode"
		}
		if c.Pair {
			// One operand per group, `()` to skip one; the unary op's
			// booleans (vector_tensor_pair.rs). vector_fp_div has no op.
			args := c.Rust(k, *dt)
			if k == kernel.StVectorFpDiv {
				args = strings.TrimPrefix(args, kernel.RustVeOp(k, *dt, c.Op)+", ")
			}
			return name + "(" + args + ")", nil
		}
		var args []string
		if k != kernel.StVectorFpDiv {
			args = append(args, kernel.RustVeOp(k, *dt, c.Op))
		}
		if c.Mode != "" {
			args = append(args, kernel.RustArgMode(info.Arity, c.Mode))
		}
		if len(c.Slots) > 0 {
			operand, err := optOperand(c.Slots)
			if err != nil {
				return "", err
			}
			args = append(args, operand)
		}
		return name + "(" + strings.Join(args, ", ") + ")", nil
	case k == kernel.StVectorSplit || k == kernel.StVectorConcat:
		return optMethod(k) + tp(w.mapText(st.Time, roleNone), w.mapText(st.Packet, roleNone)) + "()", nil
	case k == kernel.StVectorTrim || k == kernel.StVectorPad:
		return optMethod(k) + tp(w.mapText(st.Packet, roleNone)) + "()", nil
	case k == kernel.StVectorFilter:
		g, err := kernel.ParseFilterGroup(st.Param)
		if err != nil {
			return "", err
		}
		return string(k) + tp(w.mapText(st.Time, roleNone)) + "(" + optGuard(g) + ")", nil
	}
	// The conversions, the reduce, vector_stash, the unzip and the zip ops
	// are spelled as in 0.1.0.
	return w.vectorCall(st, dt)
}

// optGuard prints a slot's guard as a TagGuard.
func optGuard(g int) string {
	switch g {
	case kernel.GuardGroup0:
		return "TagGuard::group(GroupId::Zero)"
	case kernel.GuardGroup1:
		return "TagGuard::group(GroupId::One)"
	}
	return "TagGuard::all()"
}

// optOperand prints an op's operand slots: bare when there is one
// unguarded slot, else a Branched layout (operand.rs): the constant slots
// as immediate registers (`imm`, three at most), a VRF or stash slot as
// the register-file port (`rf`), which is filled last.
func optOperand(slots []kernel.VeSlot) (string, error) {
	payload := func(s kernel.VeSlot) string {
		var xs []string
		for _, o := range s.Operands {
			xs = append(xs, o.String())
		}
		if len(xs) == 1 {
			return xs[0]
		}
		return "(" + strings.Join(xs, ", ") + ")"
	}
	if len(slots) == 1 && slots[0].Guard == kernel.GuardAlways {
		return payload(slots[0]), nil
	}
	var b strings.Builder
	imms := 0
	for i, s := range slots {
		if b.Len() == 0 {
			b.WriteString("Branched::")
		} else {
			b.WriteString(".")
		}
		port := s.Operands[0].Kind != kernel.VeConst
		for _, o := range s.Operands[1:] {
			if o.Kind != kernel.VeConst {
				return "", fmt.Errorf("%s: a ternary slot's operand1 is a constant (operand.rs: PortArg (&vrf, f32), (Stash, f32))", Opt06.Library())
			}
		}
		if port {
			if i != len(slots)-1 {
				return "", fmt.Errorf("%s: a pass reads its register-file port (a VRF tensor or the stash) in its last slot (operand.rs: AtRf), and slot %d of %d reads it", Opt06.Library(), i+1, len(slots))
			}
			b.WriteString("rf(")
		} else {
			imms++
			if imms > 3 {
				return "", fmt.Errorf("%s: a pass has three immediate registers (operand.rs: CanAppendImm), and the operand needs %d", Opt06.Library(), imms)
			}
			b.WriteString("imm(")
		}
		b.WriteString(optGuard(s.Guard) + ", " + payload(s) + ")")
	}
	return b.String(), nil
}
