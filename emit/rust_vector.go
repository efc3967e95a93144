package emit

import (
	"fmt"
	"strconv"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Vector Engine's intra-slice stages in Rust, both ways: the writer
// prints each stage as the manual's method call (002 L4733-5249, with the
// enum paths of furiosa-visa-std's vector_engine/op/mod.rs), the reader
// reads the call back to the stage, its Param in canonical form
// (kernel.VeCall.Param, kernel.BranchSpec.Param), so that emit → read gives
// the same program.

// vectorSpellings are the Stage fields each intra-slice call spells.
var vectorSpellings = map[kernel.StageKind]stageSpelling{
	kernel.StVectorLogic:     {tensor: optional, param: required},
	kernel.StVectorFpUnary:   {param: required},
	kernel.StVectorFpBinary:  {tensor: optional, param: required},
	kernel.StVectorFpTernary: {tensor: optional, param: required},
	kernel.StVectorFpDiv:     {tensor: optional, param: required},
	kernel.StVectorClip:      {tensor: optional, param: required},
	kernel.StVectorFxpToFp:   {param: required},
	kernel.StVectorFpToFxp:   {param: required},
	kernel.StVectorSplit:     {time: required, packet: required},
	kernel.StVectorTrim:      {packet: required},
	kernel.StVectorConcat:    {time: required, packet: required},
	kernel.StVectorPad:       {packet: required},
	kernel.StVectorReduce:    {time: required, packet: required, param: required},
	kernel.StVectorFilter:    {time: required, param: required},
	kernel.StVectorStash:     {},
	kernel.StVectorUnzip:     {time: required, param: required},
	kernel.StVectorLogicZip:  {param: required},
	kernel.StVectorFxpZip:    {param: required},
	kernel.StVectorFpZip:     {param: required},
	kernel.StVectorClipZip:   {param: required},
}

func init() {
	for k, s := range vectorSpellings {
		spellings[k] = s
	}
}

// checkVectorStage checks a Vector Engine stage's Param (and the reduce's
// axis) spells a call: the op, mode and operands, the branch mode, the
// int_width, the reduce op, the filter's group.
func checkVectorStage(st *kernel.Stage) error {
	if (st.Axis != "") != (st.Kind == kernel.StVectorReduce || st.Kind == kernel.StVectorUnzip) {
		if st.Axis == "" {
			return fmt.Errorf("%s needs its axis", st.Kind)
		}
		return fmt.Errorf("%s names no axis", st.Kind)
	}
	switch k := st.Kind; {
	case kernel.ZipCluster(k) != "":
		_, err := kernel.ParseVeZip(k, st.Param)
		return err
	case k == kernel.StVectorBranch:
		_, err := kernel.ParseBranch(st.Param)
		return err
	case k.IsVectorOp():
		_, err := kernel.ParseVeCall(k, st.Param, st.Tensor)
		return err
	case k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		_, err := kernel.ParseIntWidth(st.Param)
		return err
	case k == kernel.StVectorReduce:
		op := kernel.CanonicalReduceOp(st.Param)
		if _, ok := kernel.LookupVeOp(k, op); !ok {
			return fmt.Errorf("vector_intra_slice_reduce op %q: want AddSat, Add, Max or Min (002 L5391-5402)", st.Param)
		}
	case k == kernel.StVectorFilter:
		_, err := kernel.ParseFilterGroup(st.Param)
		return err
	}
	return nil
}

// vectorCall prints an intra-slice stage's method call; dt is the stream's
// element type before the stage, updated by the conversions.
func (w *rustWriter) vectorCall(st *kernel.Stage, dt *dtype.DType) (string, error) {
	tp := func(args ...string) string { return "::<" + strings.Join(args, ", ") + ">" }
	switch k := st.Kind; {
	case k == kernel.StVectorBranch:
		b, err := kernel.ParseBranch(st.Param)
		if err != nil {
			return "", err
		}
		return "vector_intra_slice_branch(" + b.Rust(*dt) + ")", nil // 002 L4567, L4794-4802
	case k.IsVectorOp():
		c, err := kernel.ParseVeCall(k, st.Param, st.Tensor)
		if err != nil {
			return "", err
		}
		name := string(k)
		if c.Mode != "" {
			name += "_with_mode" // 002 L5128, L5148
		}
		return name + "(" + c.Rust(k, *dt) + ")", nil
	case k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		iw, err := kernel.ParseIntWidth(st.Param)
		if err != nil {
			return "", err
		}
		*dt = dtype.F32
		if k == kernel.StVectorFpToFxp {
			*dt = dtype.I32
		}
		return string(k) + "(" + strconv.Itoa(iw) + ")", nil // 002 L4669, L4673
	case k == kernel.StVectorSplit || k == kernel.StVectorConcat:
		return string(k) + tp(w.mapText(st.Time, roleNone), w.mapText(st.Packet, roleNone)) + "()", nil // 002 L4862, L4934
	case k == kernel.StVectorTrim || k == kernel.StVectorPad:
		return string(k) + tp(w.mapText(st.Packet, roleNone)) + "()", nil // 002 L4670, L4672
	case k == kernel.StVectorReduce:
		op := kernel.CanonicalReduceOp(st.Param)
		// 002 L5419-5421.
		return string(k) + tp(st.Axis, w.mapText(st.Time, roleNone), w.mapText(st.Packet, roleNone)) +
			"(" + kernel.VeEnumPath(k, *dt) + op + ")", nil
	case k == kernel.StVectorFilter:
		g, err := kernel.ParseFilterGroup(st.Param)
		if err != nil {
			return "", err
		}
		return string(k) + tp(w.mapText(st.Time, roleNone)) + "(" + kernel.FilterGroupRust(g) + ")", nil
	case k == kernel.StVectorStash:
		return "vector_stash()", nil // 002 L5001
	case k == kernel.StVectorUnzip:
		// vector_intra_slice_unzip::<I, TileTime, SplitTime>() (002 L5176);
		// the Param holds TileTime's mapping.
		tile, err := mapping.Parse(st.Param, w.p.Axes, nil)
		if err != nil {
			return "", fmt.Errorf("TileTime %q: %w", st.Param, err)
		}
		return string(k) + tp(st.Axis, w.mapText(tile, roleNone), w.mapText(st.Time, roleNone)) + "()", nil
	case kernel.ZipCluster(k) != "":
		c, err := kernel.ParseVeZip(k, st.Param)
		if err != nil {
			return "", err
		}
		name := string(k)
		if c.Mode != "" {
			name += "_with_mode" // 002 L5148
		}
		return name + "(" + c.ZipRust(k, *dt) + ")", nil
	}
	return "", fmt.Errorf("unknown stage kind %q", st.Kind)
}
