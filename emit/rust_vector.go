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

// checkVector refuses the intra-slice stages an API cannot express or
// tcpmap does not spell in it: under furiosa-opt-std 0.6.0 what
// optCheckVector refuses (rust_opt06_vector.go). The two-group pair has no
// vector_trim_way4 or vector_pad_way8 under furiosa-visa-std 0.1.0
// (vector_tensor_pair.rs at a837582 leaves them out on purpose), so a
// Narrow or Widen of the pair by trim or pad is refused there.
func (a API) checkVector(st *kernel.Stage, paired bool) error {
	if a == Opt06 {
		return optCheckVector(st, paired)
	}
	if paired && (st.Kind == kernel.StVectorTrim || st.Kind == kernel.StVectorPad) {
		return fmt.Errorf("%s of the two-group pair: %s's VectorTensorPair has no %s (vector_tensor_pair.rs leaves it out; the manual's pair examples, 002 L5222-5248, call it); vector_split and vector_concat move the pair between Way8 and Way4", st.Kind, a.Library(), st.Kind)
	}
	return nil
}

// vectorTime is the stream's Time after an intra-slice stage, as
// engines.Lower tracks it: the Time a stage states (vector_split and
// vector_concat's, the reduce's OTime, the filter's Time2, the unzip's
// SplitTime), else the Time before it. A commit_trim under
// furiosa-opt-std 0.6.0 is computed from it.
func vectorTime(st *kernel.Stage, before *mapping.Expr) *mapping.Expr {
	if st.Time != nil {
		return st.Time
	}
	return before
}

// vectorMethods are the intra-slice calls the reader knows, by method name
// (the `_with_mode` forms fold into their stage).
var vectorMethods = func() map[string]kernel.StageKind {
	m := map[string]kernel.StageKind{"vector_intra_slice_branch": kernel.StVectorBranch}
	for _, k := range kernel.VectorStageKinds {
		if k != kernel.StVectorBranch {
			m[string(k)] = k
		}
		if k.IsVectorOp() || kernel.ZipCluster(k) != "" {
			m[string(k)+"_with_mode"] = k
		}
	}
	return m
}()

// vectorStage reads an intra-slice call into st; it reports false (with
// r.err set) on a malformed call.
func (r *reader) vectorStage(m token, tf []typeArg, s *stream, st *kernel.Stage) bool {
	k := vectorMethods[m.text]
	st.Kind = k
	want := map[kernel.StageKind]int{
		kernel.StVectorSplit: 2, kernel.StVectorConcat: 2, kernel.StVectorTrim: 1, kernel.StVectorPad: 1,
		kernel.StVectorReduce: 3, kernel.StVectorFilter: 1, kernel.StVectorUnzip: 3,
	}[k]
	if want == 0 && tf != nil {
		r.fail(m.off, "%s takes no type arguments", m.text)
		return false
	}
	if want > 0 && len(tf) != want {
		r.fail(m.off, "%s takes %d type arguments, found %d", m.text, want, len(tf))
		return false
	}
	switch {
	case k == kernel.StVectorStash:
		r.noArgs()
		return r.err == nil
	case k == kernel.StVectorSplit || k == kernel.StVectorConcat:
		st.Time, st.Packet = r.mapOf(tf[0]), r.mapOf(tf[1])
		s.time = vectorTime(st, s.time)
		r.noArgs()
		return r.err == nil
	case k == kernel.StVectorTrim || k == kernel.StVectorPad:
		st.Packet = r.mapOf(tf[0])
		r.noArgs()
		return r.err == nil
	case k == kernel.StVectorUnzip:
		if tf[0].name == "" {
			r.fail(tf[0].off, "vector_intra_slice_unzip's first type argument is the group axis")
			return false
		}
		st.Axis = tf[0].name
		if tile := r.mapOf(tf[1]); tile != nil {
			st.Param = tile.String()
		}
		st.Time = r.mapOf(tf[2])
		s.time = vectorTime(st, s.time)
		r.noArgs()
		return r.err == nil
	}
	args := r.rawArgs()
	if r.err != nil {
		return false
	}
	texts := make([]string, len(args))
	for i, a := range args {
		texts[i] = a.text
	}
	joined := strings.Join(texts, ", ")
	off := m.off
	if len(args) > 0 {
		off = args[0].off
	}
	switch {
	case k == kernel.StVectorBranch:
		b, err := kernel.ParseBranch(joined)
		if err != nil {
			r.fail(off, "%v", err)
			return false
		}
		st.Param = b.Param()
	case k.IsVectorOp():
		vrf := ""
		for _, a := range args {
			for _, t := range vrfNames(a.text) {
				v, ok := r.vars[t]
				if !ok || v.Mem != kernel.VRF {
					r.fail(a.off, "%s's operand %s is not a VRF tensor", m.text, t)
					return false
				}
				vrf = v.Name
			}
		}
		c, err := kernel.ParseVeCall(k, joined, vrf)
		if err != nil {
			r.fail(off, "%v", err)
			return false
		}
		if (c.Mode != "") != strings.HasSuffix(m.text, "_with_mode") {
			r.fail(m.off, "%s: a mode goes with the _with_mode call", m.text)
			return false
		}
		st.Tensor, st.Param = c.VRF(), c.Param()
	case k == kernel.StVectorFxpToFp || k == kernel.StVectorFpToFxp:
		if len(args) != 1 {
			r.fail(m.off, "%s takes int_width", m.text)
			return false
		}
		iw, err := kernel.ParseIntWidth(args[0].text)
		if err != nil {
			r.fail(args[0].off, "%v", err)
			return false
		}
		st.Param = strconv.Itoa(iw)
		s.dt = dtype.F32
		if k == kernel.StVectorFpToFxp {
			s.dt = dtype.I32
		}
	case k == kernel.StVectorReduce:
		if tf[0].name == "" {
			r.fail(tf[0].off, "vector_intra_slice_reduce's first type argument is the reduce axis")
			return false
		}
		st.Axis = tf[0].name
		st.Time, st.Packet = r.mapOf(tf[1]), r.mapOf(tf[2])
		if len(args) != 1 {
			r.fail(m.off, "vector_intra_slice_reduce takes one op")
			return false
		}
		st.Param = kernel.CanonicalReduceOp(args[0].text)
		if _, ok := kernel.LookupVeOp(k, st.Param); !ok {
			r.fail(args[0].off, "unknown intra-slice reduce op %q", args[0].text)
			return false
		}
	case kernel.ZipCluster(k) != "":
		c, err := kernel.ParseVeZip(k, joined)
		if err != nil {
			r.fail(off, "%v", err)
			return false
		}
		if (c.Mode != "") != strings.HasSuffix(m.text, "_with_mode") {
			r.fail(m.off, "%s: a mode goes with the _with_mode call", m.text)
			return false
		}
		st.Param = c.ZipParam()
	case k == kernel.StVectorFilter:
		st.Time = r.mapOf(tf[0])
		g, err := kernel.ParseFilterGroup(joined)
		if err != nil {
			r.fail(off, "%v", err)
			return false
		}
		st.Param = strconv.Itoa(g)
	}
	s.time = vectorTime(st, s.time)
	return r.err == nil
}

// vrfNames lists the `&name` operands of an argument's text.
func vrfNames(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '&' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j > i+1 {
			out = append(out, s[i+1:j])
		}
	}
	return out
}
