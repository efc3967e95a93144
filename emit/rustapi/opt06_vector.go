package rustapi

import (
	"fmt"
	"strings"

	"tcpmap/model/kernel"
)

// What furiosa-opt-std 0.6.0 can say of the Vector Engine's intra-slice
// stages (emit's rust_opt06_vector.go prints them; the reader reads them
// back): the renamed methods, the operand layouts, and the refusals.

// OptRenamed are the stages whose 0.6.0 method has another name.
var OptRenamed = map[kernel.StageKind]string{
	kernel.StVectorSplit:  "vector_narrow_split",
	kernel.StVectorTrim:   "vector_narrow_trim",
	kernel.StVectorConcat: "vector_widen_concat",
	kernel.StVectorPad:    "vector_widen_pad",
}

// OptMethod is the 0.6.0 method name of a stage kind.
func OptMethod(k kernel.StageKind) string {
	if n, ok := OptRenamed[k]; ok {
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
		return fmt.Errorf("%s of the two-group pair: %s's VectorTensorPair has no %s (vector_tensor_pair.rs leaves it out on purpose: the bypass form zero-pads the groups' execution ids on the back 4 lanes); vector_narrow_split and vector_widen_concat move the pair between Way8 and Way4", k, lib, OptMethod(k))
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
		_, err = OptOperand(c.Slots)
		return err
	}
	return nil
}

// OptGuard prints a slot's guard as a TagGuard.
func OptGuard(g int) string {
	switch g {
	case kernel.GuardGroup0:
		return "TagGuard::group(GroupId::Zero)"
	case kernel.GuardGroup1:
		return "TagGuard::group(GroupId::One)"
	}
	return "TagGuard::all()"
}

// OptOperand prints an op's operand slots: bare when there is one
// unguarded slot, else a Branched layout (operand.rs): the constant slots
// as immediate registers (`imm`, three at most), a VRF or stash slot as
// the register-file port (`rf`), which is filled last.
func OptOperand(slots []kernel.VeSlot) (string, error) {
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
		b.WriteString(OptGuard(s.Guard) + ", " + payload(s) + ")")
	}
	return b.String(), nil
}
