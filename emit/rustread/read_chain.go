package rustread

import (
	"path/filepath"
	"strconv"
	"strings"

	"tcpmap/emit/rustapi"
	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// typeArg is one argument of a turbofish: a mapping, an identifier (an
// alias or an element type, told apart by the method) or `_`.
type typeArg struct {
	expr *mapping.Expr // m![...]
	name string        // an identifier
	off  int
}

// turbofish parses `::<A, B, ...>`.
func (r *reader) turbofish() []typeArg {
	r.expect("::")
	r.expect("<")
	var out []typeArg
	for r.err == nil && !r.is(">") {
		t := r.tok()
		switch {
		case t.kind == tIdent && t.text == "m" && r.peek(1).text == "!":
			out = append(out, typeArg{expr: r.mapArg(), off: t.off})
		case t.kind == tIdent:
			r.next()
			out = append(out, typeArg{name: t.text, off: t.off})
		default:
			r.fail(t.off, "want a type argument, found %s", describe(t))
			return nil
		}
		if !r.accept(",") {
			break
		}
	}
	r.expect(">")
	if r.err != nil {
		return nil
	}
	if out == nil {
		out = []typeArg{}
	}
	return out
}

// mapOf resolves a type argument that must be a mapping.
func (r *reader) mapOf(a typeArg) *mapping.Expr {
	if r.err != nil {
		return nil
	}
	if a.expr != nil {
		return a.expr
	}
	if a.name == "_" {
		r.fail(a.off, "want a mapping, found '_'")
		return nil
	}
	e, ok := r.env[a.name]
	if !ok {
		r.fail(a.off, "unknown type alias %s (want m![...] or a declared alias)", a.name)
		return nil
	}
	return e
}

// dtypeOf resolves a type argument that must be an element type.
func (r *reader) dtypeOf(a typeArg) dtype.DType {
	if r.err != nil {
		return 0
	}
	if a.expr != nil {
		r.fail(a.off, "want an element type, found a mapping")
		return 0
	}
	d, err := dtype.Parse(a.name)
	if err != nil {
		r.fail(a.off, "%v", err)
		return 0
	}
	return d
}

// settle picks a produced tensor's type from the method's type arguments
// (from, nil when absent) and the let's annotation; when both are given
// they must agree.
func (r *reader) settle(from, ann *kernel.Tensor, annOff int, mem kernel.Memory, at token) *kernel.Tensor {
	if r.err != nil {
		return nil
	}
	if ann != nil && ann.Mem != mem {
		r.fail(annOff, "the annotation is a %s tensor, %s produces a %s tensor", ann.Mem, at.text, mem)
		return nil
	}
	switch {
	case from == nil && ann == nil:
		r.fail(at.off, "%s needs its tensor type: annotate the let or give the type arguments", at.text)
		return nil
	case from == nil:
		c := *ann
		return &c
	case ann != nil && !sameType(from, ann):
		r.fail(annOff, "the annotation disagrees with the type %s produces", at.text)
		return nil
	}
	return from
}

// rawArg is one argument of a call as source text.
type rawArg struct {
	text string
	off  int
}

// rawArgs parses `( ... )` and returns its top-level comma-separated
// arguments as text.
func (r *reader) rawArgs() []rawArg {
	open := r.expect("(")
	if r.err != nil {
		return nil
	}
	var out []rawArg
	depth := 0
	start := -1
	end := 0
	flush := func(at int) {
		if start >= 0 {
			out = append(out, rawArg{text: strings.TrimSpace(r.src[start:end]), off: start})
		} else {
			r.fail(at, "empty argument")
		}
		start = -1
	}
	for r.err == nil {
		t := r.tok()
		switch {
		case t.kind == tEOF:
			r.fail(open.off, "unclosed '('")
			return nil
		case t.kind == tPunct && (t.text == "(" || t.text == "[" || t.text == "{"):
			depth++
		case t.kind == tPunct && (t.text == ")" || t.text == "]" || t.text == "}"):
			if depth == 0 {
				if t.text != ")" {
					r.fail(t.off, "unbalanced %q", t.text)
					return nil
				}
				r.next()
				if start >= 0 || len(out) > 0 {
					flush(t.off)
				}
				return out
			}
			depth--
		case depth == 0 && t.kind == tPunct && t.text == ",":
			flush(t.off)
			r.next()
			continue
		}
		if start < 0 {
			start = t.off
		}
		end = t.off + len(t.text)
		r.next()
	}
	return nil
}

// stream is the state of a chain: the element type, the spatial mappings
// and the Time of the stream after the stages read so far, and what the
// calls furiosa-opt-std 0.6.0 splits a stage into need (api.go).
type stream struct {
	dt                  dtype.DType
	chip, cluster, slic *mapping.Expr
	time                *mapping.Expr
	last                string         // the method read last
	fetch               *kernel.Stage  // the fetch, which fetch_cast converts
	trf                 *kernel.Tensor // align's TRF tensor
	packet              *mapping.Expr  // contract's OutPacket
	kept                *mapping.Expr  // contract_time's Time', for contract_lane
	keptOff             int
	trim                *mapping.Expr // commit_trim's Packet, for commit
	trimOff             int
	paired              bool // between vector_intra_slice_unzip and a zip op
}

// apiOnly are the chain methods of one API only: furiosa-opt-std 0.6.0
// splits fetch, the contraction and commit into several calls and spells
// the branch unit's entry as a tag (api.go).
var apiOnly = map[string]rustapi.API{
	"align": rustapi.Visa01, "contract": rustapi.Visa01, "accumulate": rustapi.Visa01, "vector_intra_slice_branch": rustapi.Visa01,
	"fetch_cast": rustapi.Opt06, "contract_outer": rustapi.Opt06, "contract_packet": rustapi.Opt06, "contract_time": rustapi.Opt06,
	"contract_lane": rustapi.Opt06, "commit_trim": rustapi.Opt06, "vector_intra_slice_tag": rustapi.Opt06,
	// The narrow and widen layers, renamed in 0.6.0 (rustapi.OptRenamed).
	"vector_split": rustapi.Visa01, "vector_trim_way4": rustapi.Visa01, "vector_concat": rustapi.Visa01, "vector_pad_way8": rustapi.Visa01,
	"vector_narrow_split": rustapi.Opt06, "vector_narrow_trim": rustapi.Opt06, "vector_widen_concat": rustapi.Opt06, "vector_widen_pad": rustapi.Opt06,
}

// chain parses `ctx.main|sub.begin(x.view()).stage()...;` (002 L203-217).
func (r *reader) chain(name token, ann *kernel.Tensor, annOff int) {
	r.next() // ctx
	r.expect(".")
	c := r.ident()
	if r.err != nil {
		return
	}
	op := &kernel.Op{Kind: kernel.OpChain}
	switch c.text {
	case "main":
		op.Context = kernel.CtxMain
	case "sub":
		op.Context = kernel.CtxSub
	default:
		r.fail(c.off, "unknown context %s.%s (want main or sub, 002 L151-152)", r.ctxName, c.text)
		return
	}
	var s stream
	var produced *kernel.Tensor
	r.binding = name.text
	for r.err == nil && r.accept(".") {
		m := r.ident()
		if r.err != nil {
			return
		}
		if produced != nil {
			r.fail(m.off, "%s after the chain's terminal stage", m.text)
			return
		}
		if len(op.Stages) == 0 && m.text != "begin" && m.text != "begin_interleaved" {
			r.fail(m.off, "a chain starts with begin(dm.view()) or begin_interleaved, found %s", m.text)
			return
		}
		var tf []typeArg
		if r.is("::") {
			tf = r.turbofish()
		}
		if r.err != nil {
			return
		}
		if a, ok := apiOnly[m.text]; ok && a != r.api {
			r.fail(m.off, "%s is a method of %s, and the file is written against %s", m.text, a.Library(), r.api.Library())
			return
		}
		st, t := r.stage(m, tf, &s, ann, annOff)
		if r.err != nil {
			return
		}
		s.last = m.text
		if st == nil {
			continue // a call that completes the stage before it
		}
		if s.kept != nil && st.Kind != kernel.StAccumulate {
			r.fail(s.keptOff, "contract_time without the contract_lane that completes it")
			return
		}
		if s.trim != nil && st.Kind != kernel.StCommit {
			r.fail(s.trimOff, "commit_trim without the commit that completes it")
			return
		}
		op.Stages = append(op.Stages, st)
		if t != nil {
			produced = t
			r.newTensor(name.text, t)
			st.Tensor = t.Name
			r.interm = append(r.interm, t)
		}
	}
	if r.err != nil {
		return
	}
	if produced == nil {
		r.fail(r.tok().off, "the chain ends without to_trf, to_vrf or commit")
		return
	}
	r.prog.Ops = append(r.prog.Ops, op)
}

// nargs checks a turbofish's length.
func (r *reader) nargs(m token, tf []typeArg, want ...int) bool {
	for _, n := range want {
		if len(tf) == n {
			return true
		}
	}
	sig := signatures[m.text]
	if r.api == rustapi.Opt06 && signaturesOpt[m.text] != "" {
		sig = signaturesOpt[m.text]
	}
	if tf == nil {
		r.fail(m.off, "%s needs its type arguments %s", m.text, sig)
	} else {
		r.fail(m.off, "%s takes %s, found %d type arguments", m.text, sig, len(tf))
	}
	return false
}

// signatures are the turbofish forms of the stage methods (002 L1705,
// L2154, L3069, L3081, L4056, L4304, L4314, L4321, L6767, L6832).
var signatures = map[string]string{
	"fetch": "<D, Time, Packet>", "switch": "<Slice, Time>", "collect": "<Time, Packet>",
	"align": "<Time, Packet, _, _>", "contract": "<OutPacket>", "accumulate": "<Time, Packet>",
	"cast": "<D, Packet>", "transpose": "<Time, Packet>", "commit": "<Element>", "to_trf": "<Row, Element>",
	"vector_inter_slice_reduce": "<SliceOut, TimeOut>", "begin_interleaved": "<I, _, _, _, _, _>",
}

// signaturesOpt are furiosa-opt-std 0.6.0's forms where they differ
// (engine/fetch.rs, fetch_adapter.rs, contraction/, commit_adapter.rs).
var signaturesOpt = map[string]string{
	"fetch": "<Time, Packet>", "fetch_cast": "<D>", "contract_outer": "<Time, Packet, _, _, _>",
	"contract_packet": "<OutPacket>", "contract_time": "<Time>", "contract_lane": "<Time, Packet>",
	"commit_trim": "<Packet>",
}

// noArgs checks `()`.
func (r *reader) noArgs() {
	r.expect("(")
	r.expect(")")
}

// oneRaw parses a call's single argument as text.
func (r *reader) oneRaw(m token) (rawArg, bool) {
	args := r.rawArgs()
	if r.err != nil {
		return rawArg{}, false
	}
	if len(args) != 1 {
		r.fail(m.off, "%s takes one argument, found %d", m.text, len(args))
		return rawArg{}, false
	}
	return args[0], true
}

// after checks that method m follows the call it completes.
func (r *reader) after(m token, s *stream, prev string) bool {
	if s.last != prev {
		r.fail(m.off, "%s follows %s", m.text, prev)
		return false
	}
	return true
}

// stageAddr parses the address a terminal stage takes under
// furiosa-visa-std 0.1.0 (`(ADDR)`), or `()` and the place line under
// furiosa-opt-std 0.6.0.
func (r *reader) stageAddr(m token) int64 {
	if r.api == rustapi.Opt06 {
		r.noArgs()
		a, _ := r.placeOf(r.binding, m.off, false)
		return a
	}
	r.expect("(")
	a := r.constExpr()
	r.expect(")")
	return a
}

// stage parses one method call of a chain; for a terminal stage it returns
// the tensor it produces (not yet named). A call that completes the stage
// before it (furiosa-opt-std 0.6.0's fetch_cast, contract_time,
// commit_trim) returns no stage.
func (r *reader) stage(m token, tf []typeArg, s *stream, ann *kernel.Tensor, annOff int) (*kernel.Stage, *kernel.Tensor) {
	st := &kernel.Stage{}
	noTF := func() bool {
		if tf != nil {
			r.fail(m.off, "%s takes no type arguments", m.text)
			return false
		}
		return true
	}
	switch m.text {
	case "begin":
		// begin(dm.view()) (002 L205).
		st.Kind = kernel.StBegin
		if !noTF() {
			return nil, nil
		}
		r.expect("(")
		v := r.ident()
		r.expect(".")
		r.expect("view")
		r.noArgs()
		r.expect(")")
		if r.err != nil {
			return nil, nil
		}
		t, ok := r.variable(v.text)
		if !ok || t.Mem != kernel.DM {
			r.fail(v.off, "begin needs a DM tensor, %s is not one", v.text)
			return nil, nil
		}
		st.Tensor = t.Name
		*s = stream{dt: t.DType, chip: t.Chip, cluster: t.Cluster, slic: t.Slice}
	case "fetch":
		// fetch::<D, Time, Packet>() (002 L1705); 0.6.0: fetch::<Time,
		// Packet>() keeps the element type, which a fetch_cast after it
		// converts.
		st.Kind = kernel.StFetch
		if r.api == rustapi.Opt06 {
			if !r.nargs(m, tf, 2) {
				return nil, nil
			}
			st.DType, st.Time, st.Packet = s.dt, r.mapOf(tf[0]), r.mapOf(tf[1])
		} else {
			if !r.nargs(m, tf, 3) {
				return nil, nil
			}
			st.DType, st.Time, st.Packet = r.dtypeOf(tf[0]), r.mapOf(tf[1]), r.mapOf(tf[2])
		}
		r.noArgs()
		s.dt, s.time, s.fetch = st.DType, st.Time, st
	case "fetch_cast":
		if !r.after(m, s, "fetch") || !r.nargs(m, tf, 1) {
			return nil, nil
		}
		d := r.dtypeOf(tf[0])
		r.noArgs()
		if r.err != nil {
			return nil, nil
		}
		if err := r.api.CheckFetch(s.dt, d); err != nil {
			r.fail(m.off, "%v", err)
			return nil, nil
		}
		s.fetch.DType, s.dt = d, d
		return nil, nil
	case "switch":
		st.Kind = kernel.StSwitch
		if !r.nargs(m, tf, 2) {
			return nil, nil
		}
		st.Slice, st.Time = r.mapOf(tf[0]), r.mapOf(tf[1])
		a, ok := r.oneRaw(m)
		if !ok {
			return nil, nil
		}
		cfg, err := kernel.ParseSwitchConfig(a.text)
		if err != nil {
			r.failIn(a.off, a.text, err)
			return nil, nil
		}
		if r.api == rustapi.Visa01 && cfg.Topology == kernel.SwitchForwarding {
			r.fail(a.off, "%s's SwitchConfig has no Forwarding", r.api.Library())
			return nil, nil
		}
		st.Param = cfg.Variant()
		s.slic, s.time = st.Slice, st.Time
	case "collect", "transpose":
		st.Kind = kernel.StCollect
		if m.text == "transpose" {
			st.Kind = kernel.StTranspose
		}
		if !r.nargs(m, tf, 2) {
			return nil, nil
		}
		st.Time, st.Packet = r.mapOf(tf[0]), r.mapOf(tf[1])
		r.noArgs()
		s.time = st.Time
	case "align", "contract_outer":
		// align::<Time, Packet, _, _>(&trf) (002 L4304); 0.6.0:
		// contract_outer::<Time, Packet, _, _, _>(&trf).
		st.Kind = kernel.StAlign
		ns := []int{2, 4}
		if m.text == "contract_outer" {
			ns = []int{5}
		}
		if !r.nargs(m, tf, ns...) {
			return nil, nil
		}
		for _, a := range tf[2:] {
			if a.name != "_" {
				r.fail(a.off, "%s's Row and TRF element come from the TRF tensor: write _", m.text)
				return nil, nil
			}
		}
		st.Time, st.Packet = r.mapOf(tf[0]), r.mapOf(tf[1])
		r.expect("(")
		r.expect("&")
		v := r.ident()
		r.expect(")")
		if r.err != nil {
			return nil, nil
		}
		t, ok := r.variable(v.text)
		if !ok || t.Mem != kernel.TRF {
			r.fail(v.off, "%s needs a TRF tensor, %s is not one", m.text, v.text)
			return nil, nil
		}
		st.Tensor = t.Name
		s.time, s.trf = st.Time, t
	case "contract", "contract_packet":
		st.Kind = kernel.StContract
		if !r.nargs(m, tf, 1) {
			return nil, nil
		}
		st.Packet = r.mapOf(tf[0])
		r.noArgs()
		// Contraction widens i4/i8 to i32 and f8/bf16 to f32 (002 L4312).
		if acc, err := dtype.AccType(s.dt); err == nil {
			s.dt = acc
		}
		s.packet = st.Packet
	case "contract_time":
		// contract_time::<Time'>() (engine/contraction/time.rs): checked
		// by the contract_lane that completes it.
		if !r.after(m, s, "contract_packet") || !r.nargs(m, tf, 1) {
			return nil, nil
		}
		s.kept, s.keptOff = r.mapOf(tf[0]), m.off
		r.noArgs()
		return nil, nil
	case "accumulate", "contract_lane":
		st.Kind = kernel.StAccumulate
		if !r.nargs(m, tf, 2) {
			return nil, nil
		}
		st.Time, st.Packet = r.mapOf(tf[0]), r.mapOf(tf[1])
		a, ok := r.oneRaw(m)
		if !ok {
			return nil, nil
		}
		text := a.text
		if m.text == "contract_lane" {
			var cut bool
			if text, cut = strings.CutPrefix(text, "LaneMode::"); !cut {
				r.fail(a.off, "contract_lane takes LaneMode::Interleaved or LaneMode::Sequential")
				return nil, nil
			}
		}
		k, err := kernel.ParseAccumulationKind(text)
		if err != nil {
			r.fail(a.off, "%v", err)
			return nil, nil
		}
		st.Param = string(k)
		if m.text == "contract_lane" {
			// The Time the temporal accumulation keeps is what the
			// stage's OutTime and kind imply (engines.RetainedTime).
			if s.kept == nil || s.last != "contract_time" {
				r.fail(m.off, "contract_lane follows contract_time")
				return nil, nil
			}
			if s.trf == nil || s.packet == nil {
				r.fail(m.off, "contract_lane without contract_outer and contract_packet before it")
				return nil, nil
			}
			want, err := engines.RetainedTime(engines.Default(), k, s.trf.Row, s.packet, st.Time)
			if err != nil {
				r.fail(m.off, "%v", err)
				return nil, nil
			}
			if !want.Equal(s.kept) {
				r.fail(s.keptOff, "contract_time keeps %s: contract_lane::<%s, _>(LaneMode::%s) keeps %s", s.kept.Text(), st.Time.Text(), k, want.Text())
				return nil, nil
			}
			s.kept = nil
		}
		s.time = st.Time
	case "cast":
		st.Kind = kernel.StCast
		if !r.nargs(m, tf, 2) {
			return nil, nil
		}
		st.DType, st.Packet = r.dtypeOf(tf[0]), r.mapOf(tf[1])
		r.noArgs()
		if r.err == nil {
			if err := r.api.CheckCast(s.dt, st.DType); err != nil {
				r.fail(m.off, "%v", err)
				return nil, nil
			}
		}
		s.dt = st.DType
	case "vector_init", "vector_final":
		st.Kind = kernel.StVectorInit
		if m.text == "vector_final" {
			st.Kind = kernel.StVectorFinal
		}
		if !noTF() {
			return nil, nil
		}
		r.noArgs()
	case "vector_intra_slice_tag":
		// 0.6.0's entry, TagMode::Zero or Comparison (read_opt06_vector.go).
		if !r.optTag(m, tf, st) {
			return nil, nil
		}
	case "vector_inter_slice_reduce":
		if !r.interSlice(m, tf, st, s) {
			return nil, nil
		}
	case "begin_interleaved":
		if !r.beginInterleaved(m, tf, st, s) {
			return nil, nil
		}
	case "to_trf":
		// to_trf::<Row, Element>(TrfAddress) returns TrfTensor<D, Chip,
		// Cluster, Slice, Row, Element> (002 L4056-4059); 0.6.0's to_trf()
		// takes no TrfAddress (engine/collect.rs).
		st.Kind = kernel.StToTRF
		var from *kernel.Tensor
		if tf != nil {
			if !r.nargs(m, tf, 2) {
				return nil, nil
			}
			from = &kernel.Tensor{Mem: kernel.TRF, Role: kernel.Intermediate, DType: s.dt, Chip: s.chip, Cluster: s.cluster,
				Slice: s.slic, Row: r.mapOf(tf[0]), Element: r.mapOf(tf[1])}
		}
		mode := r.trfArg(m)
		if r.err != nil {
			return nil, nil
		}
		t := r.settle(from, ann, annOff, kernel.TRF, m)
		if t == nil {
			return nil, nil
		}
		t.TrfAddress = mode
		return st, t
	case "to_vrf":
		st.Kind = kernel.StToVRF
		if !noTF() {
			return nil, nil
		}
		addr := r.stageAddr(m)
		t := r.settle(nil, ann, annOff, kernel.VRF, m)
		if t == nil {
			return nil, nil
		}
		t.Addr = addr
		return st, t
	case "commit_trim":
		// commit_trim::<Packet'>() (engine/commit_adapter.rs): checked by
		// the commit that completes it.
		if !r.nargs(m, tf, 1) {
			return nil, nil
		}
		s.trim, s.trimOff = r.mapOf(tf[0]), m.off
		r.noArgs()
		return nil, nil
	case "commit":
		// commit::<Element>(address) returns DmTensor<D, Chip, Cluster,
		// Slice, Element> (002 L2154); 0.6.0: commit_trim::<Packet'>()
		// .commit::<Element>().
		st.Kind = kernel.StCommit
		var from *kernel.Tensor
		if tf != nil {
			if !r.nargs(m, tf, 1) {
				return nil, nil
			}
			from = &kernel.Tensor{Mem: kernel.DM, Role: kernel.Intermediate, DType: s.dt, Chip: s.chip, Cluster: s.cluster,
				Slice: s.slic, Element: r.mapOf(tf[0])}
		}
		if r.api == rustapi.Opt06 && (s.trim == nil || s.last != "commit_trim") {
			r.fail(m.off, "%s's commit follows commit_trim", r.api.Library())
			return nil, nil
		}
		addr := r.stageAddr(m)
		t := r.settle(from, ann, annOff, kernel.DM, m)
		if t == nil {
			return nil, nil
		}
		if r.api == rustapi.Opt06 {
			// Packet' is Element's inner |Element| / |Time| positions.
			var want *mapping.Expr
			if s.time != nil && s.time.Size() > 0 && t.Element.Size()%s.time.Size() == 0 {
				_, want, _ = mapping.SplitAt(t.Element, t.Element.Size()/s.time.Size())
			}
			if want == nil || !want.Equal(s.trim) {
				r.fail(s.trimOff, "commit_trim's packet is %s; the commit writes %s, the inner |Element| / |Time| positions of its element", s.trim.Text(), describeExpr(want))
				return nil, nil
			}
			s.trim = nil
		}
		t.Addr = addr
		return st, t
	default:
		if r.isVectorMethod(m.text) {
			if !r.readVectorStage(m, tf, s, st) { // read_opt06_vector.go
				return nil, nil
			}
			// What the emitter refuses in an API, the reader refuses too.
			if err := r.api.CheckVector(st, s.paired); err != nil {
				r.fail(m.off, "%s: %v", m.text, err)
				return nil, nil
			}
			if st.Kind == kernel.StVectorUnzip {
				s.paired = true
			} else if kernel.ZipCluster(st.Kind) != "" {
				s.paired = false
			}
			return st, nil
		}
		r.fail(m.off, "unknown chain stage %s", m.text)
		return nil, nil
	}
	return st, nil
}

// describeExpr prints e, or "none" for nil.
func describeExpr(e *mapping.Expr) string {
	if e == nil {
		return "none"
	}
	return e.Text()
}

// trfArg parses to_trf's argument: a TrfAddress under furiosa-visa-std
// 0.1.0, the alternating halves of a tile loop's double buffer
// (read_loop.go), or `()` and the place line under furiosa-opt-std 0.6.0.
func (r *reader) trfArg(m token) kernel.TrfAddress {
	if r.api == rustapi.Opt06 {
		r.noArgs()
		_, mode := r.placeOf(r.binding, m.off, true)
		return mode
	}
	if r.is("(") && r.peek(1).text == "[" && r.lp != nil && !r.lp.done {
		r.next()
		mode := r.parityTrf()
		r.expect(")")
		return mode
	}
	a, ok := r.oneRaw(m)
	if !ok {
		return ""
	}
	mode, err := kernel.ParseTrfAddress(a.text)
	if err != nil {
		r.fail(a.off, "%v", err)
		return ""
	}
	return mode
}

// finish checks what the whole file supplies and assembles the program.
func (r *reader) finish() (*kernel.Program, error) {
	end := len(r.src)
	if !r.haveAxes {
		r.fail(end, "no axes! declaration")
	}
	if !r.sawKernel {
		r.fail(end, "no #[device(chip = N)] kernel")
	}
	if r.err != nil {
		return nil, r.err
	}
	p := r.prog
	p.Axes, p.Chips = r.axes, r.chips
	// Directives.
	seen := map[string]bool{}
	for _, d := range r.dirs {
		if seen[d.name] && (d.name == "kernel" || d.name == "reference") {
			r.fail(d.off, "a second tcpmap:%s directive", d.name)
			return nil, r.err
		}
		seen[d.name] = true
		switch d.name {
		case "kernel":
			p.Name = d.value
		case "reference":
			p.Reference = r.reference(d)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if p.Name == "" {
		base := filepath.Base(r.file)
		p.Name = strings.TrimSuffix(base, filepath.Ext(base))
		if r.file == "" || p.Name == "" || p.Name == "." {
			r.fail(0, "no tcpmap:kernel directive and no file name to name the kernel after")
			return nil, r.err
		}
	}
	// The result.
	if r.output != nil {
		if r.output.Name == "" {
			if r.tailOp == nil {
				r.fail(r.outputOff, "the kernel's result is produced by no to_hbm")
				return nil, r.err
			}
			name := strings.TrimSuffix(r.launchOut, "_hbm")
			if name == "" || name == r.launchOut {
				name = "out"
			}
			for k := 2; r.names[name]; k++ {
				name = strings.TrimSuffix(r.launchOut, "_hbm") + "_" + strconv.Itoa(k)
				if r.launchOut == "" || !strings.HasSuffix(r.launchOut, "_hbm") {
					name = "out_" + strconv.Itoa(k)
				}
			}
			r.output.Name = name
			r.names[name] = true
			r.tailOp.Dst = name
			if r.api == rustapi.Opt06 {
				r.output.Addr, _ = r.placeOf(name, r.outAt, false)
			}
		}
	}
	// Input addresses from the host program.
	if len(r.inputs) > 0 {
		if r.launchArgs == nil {
			r.fail(end, "no host program launches the kernel: the HBM addresses of its inputs are unknown (want launch(kernel, (&mut ctx, &x_hbm, ...)) and x.to_hbm(&mut ctx.pdma, ADDR))")
			return nil, r.err
		}
		if len(r.launchArgs) != len(r.inputs) {
			r.fail(r.launchOff, "launch passes %d tensors, the kernel takes %d", len(r.launchArgs), len(r.inputs))
			return nil, r.err
		}
		for i, t := range r.inputs {
			a, ok := r.hostAddr[r.launchArgs[i]]
			if !ok {
				r.fail(r.launchOff, "launch passes %s, which the host program does not move to HBM with to_hbm(&mut ctx.pdma%s)", r.launchArgs[i],
					map[bool]string{true: ", ADDR", false: ""}[r.api == rustapi.Visa01])
				return nil, r.err
			}
			if r.api == rustapi.Opt06 {
				a, _ = r.placeOf(t.Name, r.launchOff, false)
			}
			t.Addr = a
		}
	}
	if r.inPlaceResult(); r.err != nil {
		return nil, r.err
	}
	if r.unrollLoop(); r.err != nil {
		return nil, r.err
	}
	if r.checkPlaces(); r.err != nil {
		return nil, r.err
	}
	p.Tensors = append(p.Tensors, r.inputs...)
	if r.output != nil {
		p.Tensors = append(p.Tensors, r.output)
	}
	p.Tensors = append(p.Tensors, r.interm...)
	if p = r.rename(p); r.err != nil {
		return nil, r.err
	}
	if err := p.Validate(); err != nil {
		r.fail(0, "%v", err)
		return nil, r.err
	}
	return p, nil
}

// reference parses `OP(ARG, ...) -> OUT [valid(...)] [axis(AXIS)] [then EPILOGUE] [=
// EXPR] [; inputs in [lo, hi]]`, where a numeric argument is the scalar of
// add.
func (r *reader) reference(d directive) *kernel.Reference {
	at := d.off + len("// tcpmap:reference ")
	head, rng, hasRange := strings.Cut(d.value, " ; inputs in ")
	v, expr, hasExpr := strings.Cut(head, " = ")
	v, epi, hasEpi := strings.Cut(v, " then ")
	arrow := strings.LastIndex(v, "->")
	open, close := strings.IndexByte(v, '('), -1
	if arrow >= 0 {
		close = strings.LastIndexByte(v[:arrow], ')')
	}
	if open < 0 || close < open || arrow < close {
		r.fail(at, "want OP(INPUT, ...) -> OUTPUT in the reference directive")
		return nil
	}
	out := v[arrow+2:]
	axis := ""
	if i := strings.Index(out, " axis("); i >= 0 {
		// The axis of an update_slice: ` axis(Sctx)`.
		a, ok := strings.CutSuffix(strings.TrimSpace(out[i+len(" axis("):]), ")")
		if !ok || strings.TrimSpace(a) == "" {
			r.fail(at+arrow+2+i, "want axis(AXIS) after the reference's output")
			return nil
		}
		axis, out = strings.TrimSpace(a), out[:i]
	}
	var valid map[string]int
	if i := strings.Index(out, " valid("); i >= 0 {
		// The padded axes' workload sizes: ` valid(I: 1500, K: 999)`.
		list, ok := strings.CutSuffix(strings.TrimSpace(out[i+len(" valid("):]), ")")
		if !ok {
			r.fail(at+arrow+2+i, "want valid(AXIS: SIZE, ...) after the reference's output")
			return nil
		}
		valid = map[string]int{}
		for _, kv := range strings.Split(list, ",") {
			name, size, ok := strings.Cut(kv, ":")
			n, err := strconv.Atoi(strings.TrimSpace(size))
			name = strings.TrimSpace(name)
			if !ok || err != nil || name == "" {
				r.fail(at+arrow+2+i, "valid size %q: want AXIS: SIZE", strings.TrimSpace(kv))
				return nil
			}
			valid[name] = n
		}
		out = out[:i]
	}
	ref := &kernel.Reference{Op: kernel.RefOp(strings.TrimSpace(v[:open])), Output: strings.TrimSpace(out), Valid: valid, Axis: axis}
	scalars := 0
	for _, a := range strings.Split(v[open+1:close], ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			r.fail(at+open, "empty argument in the reference directive")
			return nil
		}
		if c := a[0]; c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil {
				r.fail(at+open, "reference scalar %q is not a number", a)
				return nil
			}
			scalars++
			ref.Scalar = f
			continue
		}
		ref.Inputs = append(ref.Inputs, a)
	}
	if scalars > 1 {
		r.fail(at+open, "a reference has at most one scalar")
		return nil
	}
	if hasExpr {
		ref.Expr = strings.TrimSpace(expr)
	}
	if hasEpi {
		ref.Epilogue = strings.TrimSpace(epi)
	}
	if hasRange {
		lo, hi, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(rng), "["), "]"), ",")
		a, errA := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b, errB := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if !ok || errA != nil || errB != nil {
			r.fail(at+len(head), "want `; inputs in [lo, hi]` in the reference directive")
			return nil
		}
		ref.Range = []float64{a, b}
	}
	return ref
}
