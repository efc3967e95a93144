package rustread

import (
	"strconv"
	"strings"
	"tcpmap/emit/rustapi"

	"tcpmap/model/kernel"
)

// Reading the Vector Engine's intra-slice calls of furiosa-opt-std 0.6.0
// (rust_opt06_vector.go prints them) back to the stages: each 0.6.0 form
// is rewritten to the stage's canonical Param, and the forms 0.6.0 shares
// with 0.1.0 are read by vectorStage (rust_vector.go).

// optVectorMethods are the intra-slice calls of 0.6.0 the reader knows,
// by method name.
var optVectorMethods = func() map[string]kernel.StageKind {
	m := map[string]kernel.StageKind{}
	for name, k := range vectorMethods {
		if _, renamed := rustapi.OptRenamed[k]; renamed || k == kernel.StVectorBranch {
			continue
		}
		m[name] = k
	}
	for k, name := range rustapi.OptRenamed {
		m[name] = k
	}
	return m
}()

// isVectorMethod reports whether name is an intra-slice call of the file's
// API.
func (r *reader) isVectorMethod(name string) bool {
	if r.api == rustapi.Opt06 {
		_, ok := optVectorMethods[name]
		return ok
	}
	_, ok := vectorMethods[name]
	return ok
}

// readVectorStage reads an intra-slice call of the file's API into st; it
// reports false (with r.err set) on a malformed call.
func (r *reader) readVectorStage(m token, tf []typeArg, s *stream, st *kernel.Stage) bool {
	if r.api != rustapi.Opt06 {
		return r.vectorStage(m, tf, s, st)
	}
	k := optVectorMethods[m.text]
	switch {
	case rustapi.OptRenamed[k] != "":
		// The narrow and widen layers: 0.1.0's calls under other names.
		m.text = string(k)
		return r.vectorStage(m, tf, s, st)
	case k == kernel.StVectorFilter:
		return r.optFilter(m, tf, s, st)
	case k.IsVectorOp():
		return r.optVectorOp(m, k, tf, s, st)
	}
	return r.vectorStage(m, tf, s, st)
}

// optTag reads vector_intra_slice_tag(TagMode::Zero) or
// TagMode::Comparison([Cmp::Less(0), ...]) into st.
func (r *reader) optTag(m token, tf []typeArg, st *kernel.Stage) bool {
	st.Kind = kernel.StVectorBranch
	if tf != nil {
		r.fail(m.off, "%s takes no type arguments", m.text)
		return false
	}
	a, ok := r.oneRaw(m)
	if !ok {
		return false
	}
	mode, ok := strings.CutPrefix(strings.Join(strings.Fields(a.text), ""), "TagMode::")
	if !ok {
		r.fail(a.off, "vector_intra_slice_tag takes a TagMode, found %q", a.text)
		return false
	}
	if mode == "Zero" {
		st.Param = string(kernel.BranchUnconditional)
		return true
	}
	if !strings.HasPrefix(mode, "Comparison(") {
		r.fail(a.off, "vector_intra_slice_tag: tcpmap reads TagMode::Zero and TagMode::Comparison, found %q", a.text)
		return false
	}
	b, err := kernel.ParseBranch(strings.ReplaceAll(mode, "Cmp::", ""))
	if err != nil {
		r.fail(a.off, "%v", err)
		return false
	}
	st.Param = b.Param()
	return true
}

// optFilter reads vector_filter::<Time2>(TagGuard::group(GroupId::Zero)).
func (r *reader) optFilter(m token, tf []typeArg, s *stream, st *kernel.Stage) bool {
	st.Kind = kernel.StVectorFilter
	if len(tf) != 1 {
		r.fail(m.off, "vector_filter takes 1 type argument, found %d", len(tf))
		return false
	}
	st.Time = r.mapOf(tf[0])
	a, ok := r.oneRaw(m)
	if !ok {
		return false
	}
	g, ok := optReadGuard(a.text)
	if !ok || g == kernel.GuardAlways {
		r.fail(a.off, "vector_filter takes TagGuard::group(GroupId::Zero) or One, found %q", a.text)
		return false
	}
	st.Param = strconv.Itoa(g)
	s.time = st.VectorTime(s.time)
	return r.err == nil
}

// optVectorOp reads an ALU op call: `op(Enum::Op[, Mode], operand)`, the
// operand bare or a Branched layout, and vector_fp_div's `([Mode,]
// operand)` without an op.
func (r *reader) optVectorOp(m token, k kernel.StageKind, tf []typeArg, s *stream, st *kernel.Stage) bool {
	st.Kind = k
	if tf != nil {
		r.fail(m.off, "%s takes no type arguments", m.text)
		return false
	}
	args := r.rawArgs()
	if r.err != nil {
		return false
	}
	texts := make([]string, 0, len(args)+1)
	if k == kernel.StVectorFpDiv {
		texts = append(texts, "DivF")
	}
	vrf := ""
	for i, a := range args {
		for _, t := range vrfNames(a.text) {
			v, ok := r.vars[t]
			if !ok || v.Mem != kernel.VRF {
				r.fail(a.off, "%s's operand %s is not a VRF tensor", m.text, t)
				return false
			}
			vrf = v.Name
		}
		text := a.text
		if i == len(args)-1 && strings.HasPrefix(text, "Branched::") {
			slots, ok := optReadBranched(text)
			if !ok {
				r.fail(a.off, "%s: a Branched layout is Branched::imm(guard, constant) or Branched::rf(guard, &vrf or Stash), then .imm(...) and a last .rf(...), each guard TagGuard::all() or TagGuard::group(GroupId::Zero or One); found %q", m.text, text)
				return false
			}
			text = slots
		}
		texts = append(texts, text)
	}
	off := m.off
	if len(args) > 0 {
		off = args[0].off
	}
	c, err := kernel.ParseVeCall(k, strings.Join(texts, ", "), vrf)
	if err != nil {
		r.fail(off, "%v", err)
		return false
	}
	if (c.Mode != "") != strings.HasSuffix(m.text, "_with_mode") {
		r.fail(m.off, "%s: a mode goes with the _with_mode call", m.text)
		return false
	}
	st.Tensor, st.Param = c.VRF(), c.Param()
	s.time = st.VectorTime(s.time)
	return r.err == nil
}

// optReadGuard reads a TagGuard: TagGuard::all() (GuardAlways) or
// TagGuard::group(GroupId::Zero or One).
func optReadGuard(s string) (int, bool) {
	switch strings.Join(strings.Fields(s), "") {
	case "TagGuard::all()":
		return kernel.GuardAlways, true
	case "TagGuard::group(GroupId::Zero)":
		return kernel.GuardGroup0, true
	case "TagGuard::group(GroupId::One)":
		return kernel.GuardGroup1, true
	}
	return 0, false
}

// optReadBranched rewrites a Branched layout as the operand slots of a
// Param: `[c, group(d, GroupId::One), ...]`.
func optReadBranched(s string) (string, bool) {
	rest, _ := strings.CutPrefix(s, "Branched::")
	var slots []string
	for rest != "" {
		name, body, ok := strings.Cut(rest, "(")
		port := name == "rf"
		if !ok || (name != "imm" && !port) {
			return "", false
		}
		end := closing(body)
		if end < 0 {
			return "", false
		}
		guard, payload, ok := cutTopComma(body[:end])
		if !ok {
			return "", false
		}
		g, ok := optReadGuard(guard)
		if !ok {
			return "", false
		}
		payload = strings.TrimSpace(payload)
		first := strings.TrimPrefix(payload, "(")
		if p := strings.HasPrefix(first, "&") || strings.HasPrefix(first, "Stash"); p != port {
			return "", false // imm takes a constant, rf a VRF tensor or the stash
		}
		switch g {
		case kernel.GuardGroup0:
			payload = "group(" + payload + ", GroupId::Zero)"
		case kernel.GuardGroup1:
			payload = "group(" + payload + ", GroupId::One)"
		}
		slots = append(slots, payload)
		rest = strings.TrimSpace(body[end+1:])
		if rest != "" {
			if rest, ok = strings.CutPrefix(rest, "."); !ok {
				return "", false
			}
		}
	}
	if len(slots) == 1 {
		return slots[0], true
	}
	return "[" + strings.Join(slots, ", ") + "]", true
}

// closing is the index of the ')' closing an already opened '(' in s, or
// -1.
func closing(s string) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// cutTopComma cuts s at its first comma outside brackets.
func cutTopComma(s string) (string, string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				return s[:i], s[i+1:], true
			}
		}
	}
	return "", "", false
}
