package emit

import (
	"strings"

	"tcpmap/emit/rustapi"
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
// What 0.6.0 cannot say is refused by rustapi.CheckVector with the op and the
// reason.

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
			operand, err := rustapi.OptOperand(c.Slots)
			if err != nil {
				return "", err
			}
			args = append(args, operand)
		}
		return name + "(" + strings.Join(args, ", ") + ")", nil
	case k == kernel.StVectorSplit || k == kernel.StVectorConcat:
		return rustapi.OptMethod(k) + tp(w.mapText(st.Time, roleNone), w.mapText(st.Packet, roleNone)) + "()", nil
	case k == kernel.StVectorTrim || k == kernel.StVectorPad:
		return rustapi.OptMethod(k) + tp(w.mapText(st.Packet, roleNone)) + "()", nil
	case k == kernel.StVectorFilter:
		g, err := kernel.ParseFilterGroup(st.Param)
		if err != nil {
			return "", err
		}
		return string(k) + tp(w.mapText(st.Time, roleNone)) + "(" + rustapi.OptGuard(g) + ")", nil
	}
	// The conversions, the reduce, vector_stash, the unzip and the zip ops
	// are spelled as in 0.1.0.
	return w.vectorCall(st, dt)
}
