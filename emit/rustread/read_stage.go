package rustread

import (
	"strconv"
	"strings"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// beginInterleaved reads `begin_interleaved::<I, _, _, _, _, _>(lhs.view(),
// rhs.view())` into st: two DM tensors of one element type.
func (r *reader) beginInterleaved(m token, tf []typeArg, st *kernel.Stage, s *stream) bool {
	st.Kind = kernel.StBegin
	if !r.nargs(m, tf, 1, 6) {
		return false
	}
	axis := tf[0]
	if axis.expr != nil || axis.name == "_" {
		r.fail(axis.off, "begin_interleaved's first type argument is the interleave axis")
		return false
	}
	for _, a := range tf[1:] {
		if a.name != "_" {
			r.fail(a.off, "begin_interleaved's other type arguments come from the tensors: write _")
			return false
		}
	}
	r.expect("(")
	var ts [2]*kernel.Tensor
	for i := range ts {
		if i > 0 {
			r.expect(",")
		}
		v := r.ident()
		r.expect(".")
		r.expect("view")
		r.noArgs()
		if r.err != nil {
			return false
		}
		t, ok := r.vars[v.text]
		if !ok || t.Mem != kernel.DM {
			r.fail(v.off, "begin_interleaved needs DM tensors, %s is not one", v.text)
			return false
		}
		if i == 1 && t.DType != ts[0].DType {
			r.fail(v.off, "%s is %s, %s is %s: interleaved tensors have one element type", v.text, t.DType, ts[0].Name, ts[0].DType)
			return false
		}
		ts[i] = t
	}
	r.expect(")")
	if r.err != nil {
		return false
	}
	st.Tensor = ts[0].Name
	st.Param = kernel.BeginInterleave{Axis: axis.name, Tensor: ts[1].Name}.String()
	*s = stream{dt: ts[0].DType, chip: ts[0].Chip, cluster: ts[0].Cluster, slic: ts[0].Slice}
	return true
}

// interSlice reads `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)`
// into st: the stream's Slice and Time become SliceOut and TimeOut (002
// L6584-6585), and the op's enum must be the stream's element type's.
func (r *reader) interSlice(m token, tf []typeArg, st *kernel.Stage, s *stream) bool {
	st.Kind = kernel.StVectorInterSlice
	if !r.nargs(m, tf, 2) {
		return false
	}
	st.Slice, st.Time = r.mapOf(tf[0]), r.mapOf(tf[1])
	a, ok := r.oneRaw(m)
	if !ok {
		return false
	}
	op, d, err := kernel.ParseInterSliceOp(a.text)
	if err != nil {
		r.fail(a.off, "%v", err)
		return false
	}
	if d == 0 {
		r.fail(a.off, "write the op with its enum, %s::%s (002 L6649)", kernel.InterSliceEnum(s.dt), op)
		return false
	}
	if d != s.dt {
		r.fail(a.off, "%s on a %s stream: the op's enum is %s", strings.TrimSpace(a.text), s.dt, kernel.InterSliceEnum(s.dt))
		return false
	}
	st.Param = kernel.InterSliceEnum(d) + "::" + string(op)
	s.slic, s.time = st.Slice, st.Time
	return true
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
		s.time = st.VectorTime(s.time)
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
		s.time = st.VectorTime(s.time)
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
	s.time = st.VectorTime(s.time)
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
