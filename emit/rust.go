package emit

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"tcpmap/emit/rustapi"
	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// RustOptions are the inputs of Rust besides the program.
type RustOptions struct {
	// Version is the tcpmap version written into the header.
	Version string
	// Cost is the predicted cost as one line of text (for example
	// "10234 cycles"), written into the header; empty when the program was
	// not priced.
	Cost string
	// Spec is the hardware whose memories CheckAddresses checks the
	// program against; nil means engines.Default(), the RNGD chip the
	// Virtual ISA targets.
	Spec *engines.Spec
	// API is the library the file is written against; "" means Visa01,
	// the manual's.
	API API
}

// Rust prints p as a Rust Virtual ISA source file in the manual's API
// (002 L175-220, L246-299, L307-362, L401-465, L473-525):
//
//   - a header of `// tcpmap:` directive lines (the kernel's name, its
//     reference, the predicted cost, the tcpmap version) that Read uses;
//   - the crate attributes, `extern crate` and `use` lines of the manual's
//     examples;
//   - `axes![...]` and the type aliases Chip, Cluster, Slice, Time, Packet
//     and Row (see chooseAliases);
//   - the host program: a `run` function that creates random inputs, moves
//     them to HBM, launches the kernel, reads the output back and compares it
//     with a host oracle computed from p.Reference; `main` and a test call it
//     (see writeHost for the host API it assumes);
//   - the `#[device(chip = N)]` kernel: one `let` per op in program order,
//     each annotated with the full tensor type, the chains with every type
//     parameter spelled out (`.fetch::<bf16, m![1], m![A]>()`).
//
// Rust refuses a program it cannot print faithfully: one that fails
// Validate, whose live tensors overlap in memory (CheckAddresses), whose
// tensor names are not Rust identifiers, that binds a tensor twice, uses one
// before it is produced, or states a field no Virtual ISA call spells.
// Lowered engine configurations (Stage.Config, Op.DMA) are not printed: the
// vendor's compiler derives them from the kernel text. The output is
// deterministic: the same program gives the same bytes.
//
// A tiled program that kernel.Recognize finds to be a regular loop over
// tiles (the planner's tiled candidates) prints as one `for` over its tiles
// with `tile::<dim, 1, _>(i)` views (loop.go); any other program prints in
// straight line, and one with tile views there is refused (a view is bound
// by the loop that takes it).
func Rust(p *kernel.Program, opts RustOptions) ([]byte, error) {
	if p == nil {
		return nil, fmt.Errorf("emit: nil program")
	}
	api, err := ParseAPI(string(opts.API.OrDefault()))
	if err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	for _, s := range []struct{ what, v string }{{"name", p.Name}, {"version", opts.Version}, {"cost", opts.Cost}} {
		if strings.ContainsAny(s.v, "\r\n") {
			return nil, fmt.Errorf("emit %q: the %s %q spans several lines", p.Name, s.what, s.v)
		}
	}
	spec := opts.Spec
	if spec == nil {
		spec = engines.Default()
	}
	for i, op := range p.Ops {
		if op.Index != "" {
			why := gatherUnspelled
			if op.Scatter {
				why = scatterUnspelled
			}
			return nil, fmt.Errorf("emit %q: ops[%d] (%s): %s", p.Name, i, op.Kind, why)
		}
	}
	if len(p.Handoff) > 0 {
		h := p.Handoff[0]
		name := h.Src
		if h.Kind == kernel.OpToHBM {
			name = h.Dst
		}
		if t, ok := p.Tensor(name); ok {
			name = t.Base()
		}
		return nil, fmt.Errorf("emit %q: the kernel hands %s over in DM to or from a neighbouring kernel (its program's handoffs), which no launch can pass on: emit the layer's graph plan, which writes the pair as one device function", p.Name, name)
	}
	if err := CheckAddresses(spec, p); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	if err := checkAxes(p.Axes, api); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	if err := api.CheckTensors(p); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	// Tensor names become Rust identifiers (names.go).
	q, names, err := rustNames(p)
	if err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	// A regular loop over tiles prints as one (see loop.go); any other
	// program in straight line.
	lp, body := loopForm(q)
	var k *analysis
	if lp == nil {
		// Tile views of the arguments and the result are bound where an
		// op first takes them (straightView), the result before the
		// first op when views of it are written.
		pre := map[string]bool{}
		for _, t := range q.Tensors {
			if t.Mem == kernel.HBM && t.View != "" && t.Role == kernel.Intermediate {
				pre[t.Name] = true
				if b, ok := q.Tensor(t.View); ok && b.Role == kernel.Output {
					pre[b.Name] = true
				}
			}
		}
		k, err = analyzeRebind(q, pre, len(pre) > 0)
	} else {
		// The loop declares its views, slots and result before it
		// starts (loop.go), and a pipelined body reads a slot its lead
		// ops filled on the tile before (kernel.Recognize checked that
		// unrolling the loop gives the program back).
		pre := map[string]bool{}
		for _, t := range body.Tensors {
			if t.Role != kernel.Input {
				pre[t.Name] = true
			}
		}
		k, err = analyzeWith(body, pre)
	}
	if err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	w := &rustWriter{p: q, k: k, api: api, names: names, ind: "    "}
	w.aliases = chooseAliases(q, api)
	if lp != nil {
		w.p, w.lp = body, lp
	}
	if err := w.file(opts); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	return w.buf.Bytes(), nil
}

// typeNames are the type names an emitted file uses besides the axes: the
// aliases, the library's types it names, the host program's, and the marker
// type of `#[device] fn kernel` (`Kernel` under furiosa-visa-std). An axis
// cannot be named as one of them.
var typeNames = strings.Fields(`Chip Cluster Slice Time Packet Row Lane Kernel Context HostTensor HbmTensor HbmTensorView
	HbmTensorViewMut DmTensor TrfTensor VrfTensor TrfAddress AccumulationKind LaneMode SwitchConfig BranchMode TagMode
	FxpBinaryOp Opt SmallRng SeedableRng Vec Option Some None Box Self`)

// checkAxes refuses axes the file cannot declare: a skewed axis (`B' =
// B - A`, 002 L988), which neither library's axes! takes (it declares `NAME
// = SIZE` pairs, furiosa-mapping-macro/src/lib.rs `axes`) and whose name is
// no Rust identifier, and an axis named as a type the file uses.
func checkAxes(a mapping.Axes, api API) error {
	for _, s := range a.Skews() {
		return fmt.Errorf("axes!: skewed axis %s = %s - %s: %s declares axes as NAME = SIZE only, and %s is no Rust identifier",
			s.Name, s.Base, s.By, api.Library(), s.Name)
	}
	for _, ax := range a.List() {
		for _, n := range typeNames {
			if ax.Name == n {
				return fmt.Errorf("axes!: axis %s has the name of a type the emitted file uses", ax.Name)
			}
		}
	}
	return nil
}

// role is the hardware dimension a mapping position stands for; the type
// aliases are per role.
type role uint8

const (
	roleNone role = iota // element mappings and the output side of the Reducer: never aliased
	roleChip
	roleCluster
	roleSlice
	roleTime
	rolePacket
	roleRow
	nRoles
)

// roleName is the alias of role r: furiosa-opt-std 0.6.0 calls the TRF's
// Row a Lane (TrfTensor<D, Chip, Cluster, Slice, Lane, Element>,
// tensor/memory.rs).
func roleName(r role, api API) string {
	if r == roleRow && api == Opt06 {
		return "Lane"
	}
	return roleNames[r]
}

// roleOrder is the order of the alias declarations: the manual's
// (Chip, Cluster, Slice, Time, Packet, Row; 002 L411-416).
var roleOrder = []role{roleChip, roleCluster, roleSlice, roleTime, rolePacket, roleRow}

var roleNames = [nRoles]string{"", "Chip", "Cluster", "Slice", "Time", "Packet", "Row"}

// alias is one `type Name = m![...];` declaration.
type alias struct {
	name string
	expr *mapping.Expr
	text string
}

// chooseAliases picks the type aliases of a program, deterministically:
//
//   - Chip, Cluster, Slice and Row name the kernel's spatial layout, and
//     every Hello kernel declares them (002 L184-186, L255-257, L316-320,
//     L411-416, L480-484; Row only where a TRF tensor exists): each gets an
//     alias for the mapping used most often in its positions (tensor types,
//     the switch's Slice), ties going to the first in program order.
//   - Time and Packet get an alias when the first chain with an align
//     stage keeps one Time (Packet) mapping through its fetch, collect and
//     align, as the Hello GEMV does (002 L414-415, L455-457): then the name
//     is the contraction's own Time (Packet). The Hello vector kernels and
//     the GEMM declare none (002 L183-186, L479-484); the Hello dot
//     product's `type Time = m![1]` (002 L319), used by its fetches only,
//     is the one departure (docs/spec-decisions.md "Emitted Rust: type
//     aliases").
//
// An alias is used at its own role's positions only, for mappings that print
// exactly as the alias does; the Reducer's outputs (contract, accumulate,
// cast) and element mappings are always written out, as the manual does
// (002 L356-359, L458-460, L518-520).
func chooseAliases(p *kernel.Program, api API) [nRoles]*alias {
	var out [nRoles]*alias
	counts := [nRoles]map[string]int{}
	first := [nRoles][]*mapping.Expr{}
	add := func(r role, e *mapping.Expr) {
		if e == nil {
			return
		}
		if counts[r] == nil {
			counts[r] = map[string]int{}
		}
		t := e.String()
		if counts[r][t] == 0 {
			first[r] = append(first[r], e)
		}
		counts[r][t]++
	}
	// Positions in the order the kernel prints them: the signature, then the
	// ops.
	for _, t := range p.Tensors {
		if t.Mem == kernel.HBM && t.Role == kernel.Input {
			add(roleChip, t.Chip)
		}
	}
	for _, t := range p.Tensors {
		if t.Mem == kernel.HBM && t.Role == kernel.Output {
			add(roleChip, t.Chip)
		}
	}
	for _, op := range p.Ops {
		var produced []string
		switch op.Kind {
		case kernel.OpChain:
			for _, st := range op.Stages {
				if st.Kind == kernel.StSwitch {
					add(roleSlice, st.Slice)
				}
			}
			produced = append(produced, op.Stages[len(op.Stages)-1].Tensor)
		default:
			produced = append(produced, op.Dst)
		}
		for _, name := range produced {
			t, _ := p.Tensor(name)
			if t == nil || t.Role == kernel.Output || t.Role == kernel.Input {
				continue
			}
			add(roleChip, t.Chip)
			add(roleCluster, t.Cluster)
			add(roleSlice, t.Slice)
			add(roleRow, t.Row)
		}
	}
	for _, r := range []role{roleChip, roleCluster, roleSlice, roleRow} {
		var best *mapping.Expr
		for _, e := range first[r] {
			if best == nil || counts[r][e.String()] > counts[r][best.String()] {
				best = e
			}
		}
		if best != nil {
			out[r] = &alias{name: roleName(r, api), expr: best, text: best.String()}
		}
	}
	for _, op := range p.Ops {
		if op.Kind != kernel.OpChain || !hasStage(op, kernel.StAlign) {
			continue
		}
		for _, r := range []role{roleTime, rolePacket} {
			var common *mapping.Expr
			same, n := true, 0
			for _, st := range op.Stages {
				switch st.Kind {
				case kernel.StFetch, kernel.StCollect, kernel.StAlign:
					e := st.Time
					if r == rolePacket {
						e = st.Packet
					}
					if e == nil {
						same = false
						continue
					}
					n++
					if common == nil {
						common = e
					} else if common.String() != e.String() {
						same = false
					}
				}
			}
			if same && n >= 3 && common != nil {
				out[r] = &alias{name: roleNames[r], expr: common, text: common.String()}
			}
		}
		break
	}
	return out
}

func hasStage(op *kernel.Op, k kernel.StageKind) bool {
	for _, st := range op.Stages {
		if st.Kind == k {
			return true
		}
	}
	return false
}

// rustWriter accumulates the file.
type rustWriter struct {
	p       *kernel.Program
	k       *analysis
	api     API
	names   []namePair
	aliases [nRoles]*alias
	buf     bytes.Buffer
	// ind is the indentation of a statement of the kernel's body; lp is the
	// tile loop being printed (nil outside one).
	ind string
	lp  *loopPrinter
	// err is the first error a printing helper met (mapText).
	err error
}

func (w *rustWriter) line(format string, args ...any) {
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

// fail records the first error of a printing helper; the caller that
// prints a whole op, stage or declaration takes it (takeErr) and says
// where it arose.
func (w *rustWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// takeErr returns and clears the recorded error.
func (w *rustWriter) takeErr() error {
	err := w.err
	w.err = nil
	return err
}

// mapSpelling checks that m![...] of e is in the API's grammar: no linear
// combination `$(...)` in either (furiosa-mapping's parser.lalrpop has no
// such term); under furiosa-visa-std 0.1.0 no broadcast other than 1 ("Broadcast
// not supported") and no padding kind other than Top (`#` only; a
// Bottom `#{!}` prints as `#` where the reader knows it, in the result's
// mutable tile views). It returns e's text in that grammar.
func (w *rustWriter) mapSpelling(e *mapping.Expr, bottomOK bool) string {
	var bad string
	var walk func(x *mapping.Expr)
	walk = func(x *mapping.Expr) {
		if x == nil || bad != "" {
			return
		}
		switch x.Kind() {
		case mapping.KindLinear:
			bad = "a linear combination $(...) is in neither library's m! grammar"
			return
		case mapping.KindBroadcast:
			if x.Arg() != 1 && w.api == Visa01 {
				bad = fmt.Sprintf("broadcast %d: %s's m! takes the number 1 only (\"Broadcast not supported\")", x.Arg(), w.api.Library())
			}
		case mapping.KindPadding:
			if w.api == Visa01 && x.PadKind() != mapping.Top && !(bottomOK && x.PadKind() == mapping.Bottom) {
				bad = fmt.Sprintf("padding %s: %s's m! has Top padding `#` only", x.PadKind(), w.api.Library())
			}
		}
		if x.Kind() == mapping.KindPair {
			for _, q := range x.Parts() {
				walk(q)
			}
			return
		}
		walk(x.Inner())
	}
	walk(e)
	if bad != "" {
		w.fail(fmt.Errorf("m![%s]: %s", e, bad))
	}
	t := e.String()
	if w.api == Visa01 {
		t = strings.ReplaceAll(t, "#{!}", "#")
	}
	return t
}

// mapText prints a mapping at a position of role r: the role's alias when
// the mapping prints as it does, `m![{Alias}, rest]` when a Time or Packet
// mapping extends its alias (the manual's escape, 002 L346, L972-984), the
// literal `m![...]` otherwise.
func (w *rustWriter) mapText(e *mapping.Expr, r role) string {
	return w.mapTextOf(e, r, false)
}

func (w *rustWriter) mapTextOf(e *mapping.Expr, r role, bottomOK bool) string {
	t := w.mapSpelling(e, bottomOK)
	a := w.aliases[r]
	if a == nil {
		return "m![" + t + "]"
	}
	if a.text == e.String() {
		return a.name
	}
	if (r == roleTime || r == rolePacket) && !a.expr.IsIdentity() && e.Kind() == mapping.KindPair {
		ap, ep := a.expr.Parts(), e.Parts()
		if len(ep) > len(ap) {
			match := true
			for i := range ap {
				if ap[i].String() != ep[i].String() {
					match = false
					break
				}
			}
			if match {
				rest := make([]string, 0, len(ep)-len(ap)+1)
				rest = append(rest, "{"+a.name+"}")
				for _, x := range ep[len(ap):] {
					rest = append(rest, w.mapSpelling(x, bottomOK))
				}
				return "m![" + strings.Join(rest, ", ") + "]"
			}
		}
	}
	return "m![" + t + "]"
}

// typeText prints a tensor's Virtual ISA type (002 L133-141, L145).
func (w *rustWriter) typeText(t *kernel.Tensor) string {
	d := t.DType.String()
	switch t.Mem {
	case kernel.HBM:
		return fmt.Sprintf("HbmTensor<%s, %s, %s>", d, w.mapText(t.Chip, roleChip), w.mapText(t.Element, roleNone))
	case kernel.DM:
		return fmt.Sprintf("DmTensor<%s, %s, %s, %s, %s>", d, w.mapText(t.Chip, roleChip), w.mapText(t.Cluster, roleCluster),
			w.mapText(t.Slice, roleSlice), w.mapText(t.Element, roleNone))
	case kernel.TRF:
		return fmt.Sprintf("TrfTensor<%s, %s, %s, %s, %s, %s>", d, w.mapText(t.Chip, roleChip), w.mapText(t.Cluster, roleCluster),
			w.mapText(t.Slice, roleSlice), w.mapText(t.Row, roleRow), w.mapText(t.Element, roleNone))
	default: // VRF
		return fmt.Sprintf("VrfTensor<%s, %s, %s, %s, %s>", d, w.mapText(t.Chip, roleChip), w.mapText(t.Cluster, roleCluster),
			w.mapText(t.Slice, roleSlice), w.mapText(t.Element, roleNone))
	}
}

func (w *rustWriter) file(opts RustOptions) error {
	p := w.p
	w.line("// Code generated by tcpmap; DO NOT EDIT.")
	w.line("// tcpmap:kernel %s", p.Name)
	if r := p.Reference; r != nil {
		w.line("// tcpmap:reference %s", referenceText(r))
	}
	if opts.Cost != "" {
		w.line("// tcpmap:cost %s", opts.Cost)
	}
	if opts.Version != "" {
		w.line("// tcpmap:version %s", opts.Version)
	}
	w.line("// Written against %s (tcpmap emit --api %s).", w.api.Library(), w.api)
	if wide := dualCollects(p); len(wide) > 0 {
		// docs/spec-decisions.md "Collect packet: 32-byte flits in the
		// libraries, 64-byte dual-channel flits in the manual".
		names := strings.Join(wide, ", ")
		if len(wide) > 3 {
			names = fmt.Sprintf("%s and %d more", strings.Join(wide[:3], ", "), len(wide)-3)
		}
		w.line("// Note: the chains producing %s collect 64-byte packets", names)
		w.line("// (one dual-channel flit, 002 L2127, L3928), which the collect of")
		w.line("// %s refuses when the kernel runs (it makes 32-byte flits);", w.api.Library())
		w.line("// `tcpmap plan --target %s` plans without them.", w.api)
	}
	if len(w.names) > 0 {
		w.line("// Tensors renamed to Rust identifiers (identifier, the program's name):")
		for _, n := range w.names {
			w.line("// tcpmap:name %s %s", n.ident, n.orig)
		}
	}
	if w.api == Opt06 {
		w.placement()
	}
	// Crate attributes, extern crates and uses as the manual's examples
	// have them (002 L175-182); the tool the library's #[device] expands
	// to is registered.
	w.line("#![feature(register_tool)]")
	w.line("#![register_tool(%s)]", w.api.Tool())
	w.line("extern crate %s;", w.api.Crate())
	w.line("extern crate tokio;")
	w.line("extern crate rand;")
	w.line("use rand::SeedableRng;")
	w.line("use rand::rngs::SmallRng;")
	w.line("use %s::prelude::*;", w.api.Crate())
	w.line("")
	w.line("axes![%s];", axesText(p.Axes))
	for _, r := range roleOrder {
		if a := w.aliases[r]; a != nil {
			w.line("type %s = m![%s];", a.name, w.mapSpelling(a.expr, false))
			if err := w.takeErr(); err != nil {
				return fmt.Errorf("type %s: %w", a.name, err)
			}
		}
	}
	w.line("")
	if err := w.host(); err != nil {
		return err
	}
	if err := w.takeErr(); err != nil {
		return fmt.Errorf("the host program: %w", err)
	}
	w.line("")
	if err := w.kernel(); err != nil {
		return err
	}
	return w.err
}

// dualCollects lists the tensors produced by the chains whose collect packet
// is larger than one 32-byte flit: a 64-byte dual-channel flit, which the
// manual allows and both libraries refuse at run time
// (furiosa-visa-std/src/stream_tensor.rs FLIT_BYTES, CollectTensor;
// furiosa-opt-std/src/engine/collect.rs assert_packet_one_flit).
func dualCollects(p *kernel.Program) []string {
	var out []string
	for _, op := range p.Ops {
		bits := 0
		for _, st := range op.Stages {
			switch st.Kind {
			case kernel.StBegin:
				if t, ok := p.Tensor(st.Tensor); ok {
					bits = t.DType.SizeBits()
				}
			case kernel.StFetch:
				if st.DType != 0 {
					bits = st.DType.SizeBits()
				}
			case kernel.StCollect:
				if st.Packet != nil && st.Packet.Size()*bits > 32*8 {
					out = append(out, op.Stages[len(op.Stages)-1].Tensor)
				}
			}
		}
	}
	return out
}

// placement writes the plan's placement of every tensor the file binds
// (furiosa-opt-std 0.6.0 takes no address; docs/spec-decisions.md "Emitted
// Rust: placement under furiosa-opt-std 0.6.0"): `// tcpmap:place NAME
// ADDR`, a TrfAddress for a TRF tensor, a list for a double buffer of the
// tile loop, followed by its index over the producing op's tile t
// (`[t % 2]`) when it is not the count of the first producing op's fires
// (a K-chunked loop's running sum).
func (w *rustWriter) placement() {
	w.line("// The plan's placement, which %s leaves to its compiler (tcpmap reads it back):", w.api.Library())
	for _, t := range w.p.Tensors {
		if t.View != "" {
			continue
		}
		var vals []string
		index := ""
		if w.lp != nil {
			if s := w.lp.l.Slot(t.Name); s != nil && len(s.Tensors) > 1 {
				for _, x := range s.Tensors {
					vals = append(vals, placeText(x))
				}
				// The buffers alternate with the producing op's fires,
				// unless the index says otherwise (a running sum).
				if s.Period != 0 || s.Stride != w.lp.l.Stride(w.lp.level[s.Name]) {
					index = "[" + slotIndex(s, "t") + "]"
				}
			}
		}
		if vals == nil {
			w.line("// tcpmap:place %s %s", t.Name, placeText(t))
			continue
		}
		w.line("// tcpmap:place %s [%s]%s", t.Name, strings.Join(vals, ", "), index)
	}
}

// placeText is a tensor's placement: its TrfAddress or its address.
func placeText(t *kernel.Tensor) string {
	if t.Mem == kernel.TRF {
		return "TrfAddress::" + string(t.TrfAddress)
	}
	return addrText(t.Addr, t.Mem == kernel.HBM)
}

// axesText prints an axis declaration as the manual writes it:
// `A = 2048`, `I = 256, J = 2048` (002 L183, L410). Skewed axes are refused
// before (checkAxes).
func axesText(a mapping.Axes) string {
	var parts []string
	for _, ax := range a.List() {
		parts = append(parts, fmt.Sprintf("%s = %d", ax.Name, ax.Size))
	}
	return strings.Join(parts, ", ")
}

// referenceText prints a Reference for the header directive:
// `einsum(lhs, rhs) -> out`, `add(input, 1) -> out` (a number is the
// scalar).
func referenceText(r *kernel.Reference) string {
	args := append([]string(nil), r.Inputs...)
	if r.Scalar != 0 {
		args = append(args, strconv.FormatFloat(r.Scalar, 'g', -1, 64))
	}
	text := fmt.Sprintf("%s(%s) -> %s", r.Op, strings.Join(args, ", "), r.Output)
	if len(r.Valid) > 0 {
		// The padded axes' workload sizes (kernel.Reference.Valid).
		var vs []string
		for _, a := range slices.Sorted(maps.Keys(r.Valid)) {
			vs = append(vs, fmt.Sprintf("%s: %d", a, r.Valid[a]))
		}
		text += " valid(" + strings.Join(vs, ", ") + ")"
	}
	if r.Axis != "" {
		text += " axis(" + r.Axis + ")" // `update_slice(cache, row) -> cache_new axis(S)`
	}
	if r.Epilogue != "" {
		text += " then " + r.Epilogue // `einsum(q, k) -> s then (acc) * 0.5` (kernel.Reference.Epilogue)
	}
	if r.Expr != "" {
		text += " = " + r.Expr // `expr(x, w) -> out = x * w` (rust_vector.go)
	}
	if len(r.Range) == 2 {
		text += fmt.Sprintf(" ; inputs in [%s, %s]", strconv.FormatFloat(r.Range[0], 'g', -1, 64), strconv.FormatFloat(r.Range[1], 'g', -1, 64))
	}
	return text
}

// maxLine is rustfmt's default max_width, which decides whether the kernel's
// signature fits on one line (002 L200) or takes one parameter per line
// (002 L270-274).
const maxLine = 100

func (w *rustWriter) kernel() error {
	p, k := w.p, w.k
	params := []string{"ctx: &mut Context"}
	for _, t := range k.inputs {
		ref := "&"
		if t == k.inPlace {
			ref = "&mut " // the result: this argument updated in place
		}
		params = append(params, fmt.Sprintf("%s: %s%s", t.Name, ref, w.typeText(t)))
	}
	ret := ""
	if k.output != nil && k.inPlace == nil {
		ret = " -> " + w.typeText(k.output)
	}
	if err := w.takeErr(); err != nil {
		return fmt.Errorf("the kernel's signature: %w", err)
	}
	w.line("#[device(chip = %d)]", p.Chips)
	if one := "fn kernel(" + strings.Join(params, ", ") + ")" + ret + " {"; len(one) <= maxLine {
		w.line("%s", one)
	} else {
		w.line("fn kernel(")
		for _, s := range params {
			w.line("    %s,", s)
		}
		w.line(")%s {", ret)
	}
	if w.lp != nil {
		return w.loopKernel()
	}
	viewed := k.output != nil && slices.ContainsFunc(p.Tensors, func(t *kernel.Tensor) bool { return t.View == k.output.Name && t.Role == kernel.Intermediate })
	if viewed && k.inPlace == nil {
		// Tiles of the result are written through its views: it exists
		// first (as a tile loop's does, loop.go).
		if w.api == Opt06 {
			w.line("    let mut %s: %s = HbmTensor::new();", k.output.Name, w.typeText(k.output))
		} else {
			w.line("    let mut %s: %s = unsafe { HbmTensor::from_addr(%s) };", k.output.Name, w.typeText(k.output), addrText(k.output.Addr, true))
		}
	}
	bound := map[string]bool{}
	for i, op := range p.Ops {
		tail := k.output != nil && i == len(p.Ops)-1 && op.Kind == kernel.OpToHBM && op.Dst == k.output.Name
		var err error
		for _, name := range []string{op.Src, op.Dst} {
			if t, ok := p.Tensor(name); ok && err == nil && (op.Kind == kernel.OpToDM || op.Kind == kernel.OpToHBM) && t.Mem == kernel.HBM && t.View != "" && t.Role == kernel.Intermediate && !bound[name] {
				bound[name] = true
				err = w.straightView(t)
			}
		}
		if t, ok := p.Tensor(op.Dst); err == nil && ok && op.Kind == kernel.OpToHBM && t.View != "" && t.Role == kernel.Intermediate {
			// A tile of the result: DmTensorView::to_hbm_view
			// (memory_tensor.rs; tensor/memory.rs).
			w.line("%s%s.view().to_hbm_view(&mut ctx.tdma, %s);", w.ind, op.Src, op.Dst)
		} else if err == nil {
			err = w.op(op, tail)
		}
		if err == nil {
			err = w.takeErr()
		}
		if err != nil {
			return fmt.Errorf("ops[%d] (%s): %w", i, op.Kind, err)
		}
	}
	if k.output != nil && k.inPlace == nil && (viewed || !(len(p.Ops) > 0 && p.Ops[len(p.Ops)-1].Kind == kernel.OpToHBM && p.Ops[len(p.Ops)-1].Dst == k.output.Name)) {
		w.line("    %s", k.output.Name)
	}
	w.line("}")
	return nil
}

// dmaArgs is the argument list of a DMA call: the DMA context, and under
// furiosa-visa-std 0.1.0 the destination address (002 L339, L361);
// furiosa-opt-std 0.6.0 places the destination itself
// (tensor/memory.rs `to_dm(&self, _dma)`, `to_hbm(&self, _dma)`).
func (w *rustWriter) dmaArgs(dst *kernel.Tensor, hbm bool) string {
	if w.api == Opt06 {
		return "&mut ctx.tdma"
	}
	return "&mut ctx.tdma, " + w.addr(dst, hbm)
}

func (w *rustWriter) op(op *kernel.Op, tail bool) error {
	p := w.p
	switch op.Kind {
	case kernel.OpToDM, kernel.OpDMToDM:
		dst, _ := p.Tensor(op.Dst)
		if src, _ := p.Tensor(op.Src); op.Kind == kernel.OpDMToDM && src != nil {
			if same, _ := mapping.Equiv(src.Cluster, dst.Cluster); !same {
				// The cluster reduce's exchange on the manual's hardware.
				return fmt.Errorf("op %s -> %s: a DM-to-DM DMA between the clusters (Cluster %s to %s, 002 L2386-2389) has no call in the libraries: DmTensor::to_dm keeps the Cluster mapping; plan with --target visa-0.1 or opt-0.6, whose cluster reduce exchanges through HBM",
					op.Src, op.Dst, src.Cluster.Text(), dst.Cluster.Text())
			}
		}
		// 002 L339: `let lhs: DmTensor<...> = lhs.to_dm(&mut ctx.tdma, 0);`
		src := w.asType(op.Src, dst.DType)
		w.line("%s%s%s.to_dm(%s);", w.ind, w.bind(dst), src, w.dmaArgs(dst, false))
	case kernel.OpHBMToHBM:
		return w.hbmToView(op)
	case kernel.OpToHBM:
		dst, _ := p.Tensor(op.Dst)
		call := fmt.Sprintf("%s.to_hbm(%s)", op.Src, w.dmaArgs(dst, true))
		if src, _ := p.Tensor(op.Src); src != nil && src.DType != dst.DType {
			if w.api == Opt06 {
				return noReinterpret(fmt.Sprintf("op %s -> %s: the DMA writes %s bytes into the %s tensor", op.Src, op.Dst, src.DType, dst.DType))
			}
			// The bytes of another type: the HBM tensor they make, then
			// its handle in dst's type at its address.
			bits := *dst
			bits.DType, bits.Name = src.DType, dst.Name+"_bits"
			w.line("%slet %s: %s = %s;", w.ind, bits.Name, w.typeText(&bits), call)
			call = fmt.Sprintf("unsafe { HbmTensor::from_addr(%s.address()) }", bits.Name)
		}
		if tail {
			// 002 L361: the kernel's result is its tail expression.
			w.line("    %s", call)
		} else {
			w.line("%s%s%s;", w.ind, w.bind(dst), call)
		}
	case kernel.OpChain:
		return w.chain(op)
	}
	if err := w.takeErr(); err != nil {
		return fmt.Errorf("tensor %s: %w", op.Dst, err)
	}
	return nil
}

// asType is HBM tensor name as the source of a DMA into a tensor of type
// d: name itself, or, when name is of another type of the same width
// (a DMA moves bytes, engines.dmaTypes), a handle of type d at its
// address, bound first (HbmTensor::from_addr).
func (w *rustWriter) asType(name string, d dtype.DType) string {
	t, ok := w.p.Tensor(name)
	if !ok || t.DType == d || t.Mem != kernel.HBM {
		return name
	}
	if w.api == Opt06 {
		w.fail(noReinterpret(fmt.Sprintf("the DMA reads the %s tensor %s as %s", t.DType, name, d)))
		return name
	}
	bits := *t
	bits.DType, bits.Name = d, name+"_bits"
	w.line("%slet %s: %s = unsafe { HbmTensor::from_addr(%s.address()) };", w.ind, bits.Name, w.typeText(&bits), name)
	return bits.Name
}

// noReinterpret is the refusal, under furiosa-opt-std 0.6.0, of the DMA
// that what describes: the library has no call that reads an HBM tensor's
// bytes as another type.
func noReinterpret(what string) error {
	return fmt.Errorf("%s: furiosa-opt-std 0.6.0 has no call that reinterprets an HBM tensor's bytes (no HbmTensor::from_addr); emit with --api visa-0.1", what)
}

// chainState is what printing a chain tracks: the stream's element type and
// Time, the TRF tensor an align reads (its Row), and the contract's packet.
type chainState struct {
	dt             dtype.DType
	time           *mapping.Expr
	trf            *kernel.Tensor
	contractPacket *mapping.Expr
	// paired is set between vector_intra_slice_unzip and the zip op that
	// merges the two groups.
	paired bool
}

// chain prints a chain as the manual does (002 L342-359):
//
//	let rhs: TrfTensor<...> = ctx
//	    .sub
//	    .begin(rhs.view())
//	    .fetch::<bf16, Time, m![A]>()
//	    ...
//	    .to_trf(TrfAddress::Full);
func (w *rustWriter) chain(op *kernel.Op) error {
	p := w.p
	last := op.Stages[len(op.Stages)-1]
	dst, _ := p.Tensor(last.Tensor)
	w.line("%s%sctx", w.ind, w.bind(dst))
	if err := w.takeErr(); err != nil {
		return fmt.Errorf("the type of %s: %w", dst.Name, err)
	}
	w.line("%s    .%s", w.ind, op.Context)
	var cs chainState
	var calls []string
	for i, st := range op.Stages {
		c, err := w.stage(st, &cs)
		if err == nil {
			err = w.takeErr()
		}
		if err != nil {
			return fmt.Errorf("stages[%d] (%s): %w", i, st.Kind, err)
		}
		calls = append(calls, c...)
	}
	for i, c := range calls {
		end := ""
		if i == len(calls)-1 {
			end = ";"
		}
		w.line("%s    .%s%s", w.ind, c, end)
	}
	return nil
}

// stage prints one stage of a chain as the method calls of the API (one,
// except under furiosa-opt-std 0.6.0 a converting fetch, an accumulate and a
// commit, which are two); cs tracks the stream.
func (w *rustWriter) stage(st *kernel.Stage, cs *chainState) ([]string, error) {
	p := w.p
	api := w.api
	tp := func(args ...string) string { return "::<" + strings.Join(args, ", ") + ">" }
	one := func(s string) ([]string, error) { return []string{s}, nil }
	switch st.Kind {
	case kernel.StBegin:
		t, _ := p.Tensor(st.Tensor)
		cs.dt = t.DType
		call, err := beginCall(st) // 002 L205, L1866
		if err != nil {
			return nil, err
		}
		return one(call)
	case kernel.StFetch:
		// fetch::<D, Time, Packet>() (002 L1705, L207); a fetch that
		// states no type keeps the stream's (engines.Lower). 0.6.0:
		// fetch::<Time, Packet>() keeps the type, fetch_cast::<D>()
		// converts (engine/fetch.rs, engine/fetch_adapter.rs).
		from := cs.dt
		if st.DType != 0 {
			cs.dt = st.DType
		}
		cs.time = st.Time
		if err := api.CheckFetch(from, cs.dt); err != nil {
			return nil, err
		}
		if api == Opt06 {
			calls := []string{"fetch" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket)) + "()"}
			if cs.dt != from {
				calls = append(calls, "fetch_cast"+tp(cs.dt.String())+"()")
			}
			return calls, nil
		}
		return one("fetch" + tp(cs.dt.String(), w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket)) + "()")
	case kernel.StSwitch:
		// switch::<Slice, Time>(SwitchConfig::...) (002 L3069, L3196-3202).
		cfg, err := switchConfig(st)
		if err != nil {
			return nil, err
		}
		if api == Visa01 && cfg.Topology == kernel.SwitchForwarding {
			// stream_tensor.rs: SwitchConfig has no Forwarding variant; a
			// kernel collects the FetchTensor directly.
			return nil, fmt.Errorf("%s's SwitchConfig has no Forwarding (a kernel calls collect on the fetched stream instead)", api.Library())
		}
		cs.time = st.Time
		return one("switch" + tp(w.mapText(st.Slice, roleSlice), w.mapText(st.Time, roleTime)) + "(" + cfg.String() + ")")
	case kernel.StCollect:
		cs.time = st.Time
		return one("collect" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket)) + "()") // 002 L3081
	case kernel.StToTRF:
		if api == Opt06 {
			return one("to_trf()") // engine/collect.rs: the compiler places a TRF tensor
		}
		t, _ := p.Tensor(st.Tensor)
		return one("to_trf(" + w.trfMode(t) + ")") // 002 L347, L4056
	case kernel.StToVRF:
		if !rustapi.VeScalar(cs.dt) {
			return nil, fmt.Errorf("to_vrf of a %s stream: the VRF holds i32 or f32 (VeScalar)", cs.dt)
		}
		if api == Opt06 {
			return one("to_vrf()")
		}
		t, _ := p.Tensor(st.Tensor)
		return one("to_vrf(" + w.addr(t, false) + ")") // 002 L285
	case kernel.StAlign:
		if err := api.CheckContraction(cs.dt); err != nil {
			return nil, err
		}
		cs.trf, _ = p.Tensor(st.Tensor)
		cs.time = st.Time
		if api == Opt06 {
			// contract_outer::<OutTime, OutPacket, Lane, TrfElement, TrfD>(&trf)
			// (engine/contraction/outer/mod.rs).
			return one("contract_outer" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket), "_", "_", "_") + "(&" + st.Tensor + ")")
		}
		// align::<Time, Packet, _, _>(&trf) (002 L355, L4304).
		return one("align" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket), "_", "_") + "(&" + st.Tensor + ")")
	case kernel.StContract:
		if acc, err := dtype.AccType(cs.dt); err == nil {
			cs.dt = acc // 002 L4312
		}
		cs.contractPacket = st.Packet
		if api == Opt06 {
			return one("contract_packet" + tp(w.mapText(st.Packet, roleNone)) + "()") // engine/contraction/packet.rs
		}
		return one("contract" + tp(w.mapText(st.Packet, roleNone)) + "()") // 002 L356, L4314
	case kernel.StAccumulate:
		kind, err := kernel.ParseAccumulationKind(st.Param)
		if err != nil {
			return nil, err
		}
		cs.time = st.Time
		if api == Opt06 {
			// contract_time::<Time'>() then contract_lane::<OutTime,
			// OutPacket>(LaneMode) (engine/contraction/time.rs, lane.rs):
			// Time' is accumulate's OutTime without the packet or the
			// [Row, packet] it appends (engines.RetainedTime).
			if cs.trf == nil || cs.contractPacket == nil {
				return nil, fmt.Errorf("accumulate without a preceding align and contract")
			}
			kept, err := engines.RetainedTime(engines.Default(), kind, cs.trf.Row, cs.contractPacket, st.Time)
			if err != nil {
				return nil, err
			}
			return []string{
				"contract_time" + tp(w.mapText(kept, roleNone)) + "()",
				"contract_lane" + tp(w.mapText(st.Time, roleNone), w.mapText(st.Packet, roleNone)) + "(LaneMode::" + string(kind) + ")",
			}, nil
		}
		// 002 L357, L4321.
		return one("accumulate" + tp(w.mapText(st.Time, roleNone), w.mapText(st.Packet, roleNone)) + "(AccumulationKind::" + string(kind) + ")")
	case kernel.StCast:
		if err := api.CheckCast(cs.dt, st.DType); err != nil {
			return nil, err
		}
		cs.dt = st.DType
		return one("cast" + tp(st.DType.String(), w.mapText(st.Packet, roleNone)) + "()") // 002 L6767
	case kernel.StTranspose:
		cs.time = st.Time
		return one("transpose" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket)) + "()") // 002 L6832
	case kernel.StVectorInit:
		if !rustapi.VeScalar(cs.dt) {
			return nil, fmt.Errorf("vector_init of a %s stream: the Vector Engine takes i32 or f32 (VeScalar)", cs.dt)
		}
		return one("vector_init()") // 002 L211
	case kernel.StVectorBranch:
		if api == Opt06 {
			// vector_intra_slice_tag(TagMode) (engine/vector/branch.rs;
			// rust_opt06_vector.go).
			if err := rustapi.Opt06.CheckVector(st, false); err != nil {
				return nil, err
			}
			call, err := w.optVectorCall(st, &cs.dt)
			if err != nil {
				return nil, err
			}
			return one(call)
		}
		// vector_intra_slice_branch(BranchMode) with the mode's full
		// spelling (002 L212, L4794-4802; vector_engine/branch.rs).
		call, err := w.vectorCall(st, &cs.dt)
		if err != nil {
			return nil, err
		}
		return one(call)
	case kernel.StVectorFinal:
		return one("vector_final()") // 002 L216
	case kernel.StVectorInterSlice:
		call, err := interSliceCall(st, cs.dt, tp(w.mapText(st.Slice, roleSlice), w.mapText(st.Time, roleTime)))
		if err != nil {
			return nil, err
		}
		cs.time = st.Time // TimeOut (002 L6584-6585)
		return one(call)
	case kernel.StCommit:
		t, _ := p.Tensor(st.Tensor)
		if api == Opt06 {
			// commit_trim::<Packet'>().commit::<Element>() (engine/commit_adapter.rs,
			// engine/commit.rs): Packet' is the packet the commit writes,
			// Element's inner |Element| / |Time| positions (the split of
			// 002 L2154's commit).
			if cs.time == nil || cs.time.Size() == 0 || t.Element.Size()%cs.time.Size() != 0 {
				return nil, fmt.Errorf("commit of %s: the stream's Time does not divide the element mapping", st.Tensor)
			}
			_, trim, err := mapping.SplitAt(t.Element, t.Element.Size()/cs.time.Size())
			if err != nil {
				return nil, fmt.Errorf("commit of %s: %w", st.Tensor, err)
			}
			return []string{"commit_trim" + tp(w.mapText(trim, roleNone)) + "()", "commit" + tp(w.mapText(t.Element, roleNone)) + "()"}, nil
		}
		return one("commit" + tp(w.mapText(t.Element, roleNone)) + "(" + w.addr(t, false) + ")") // 002 L359, L2154
	}
	if _, ok := vectorSpellings[st.Kind]; ok || st.Kind == kernel.StVectorFxp {
		if err := api.CheckVector(st, cs.paired); err != nil {
			return nil, err
		}
		if st.Kind == kernel.StVectorUnzip {
			cs.paired = true
		} else if kernel.ZipCluster(st.Kind) != "" {
			cs.paired = false
		}
		call, err := w.vectorCall(st, &cs.dt) // rust_vector.go
		if api == Opt06 {
			call, err = w.optVectorCall(st, &cs.dt) // rust_opt06_vector.go
		}
		if err != nil {
			return nil, err
		}
		cs.time = st.VectorTime(cs.time)
		return one(call)
	}
	return nil, fmt.Errorf("unknown stage kind %q", st.Kind)
}

// switchConfig is the SwitchConfig a switch stage passes: its Param, or the
// configuration engines.Lower recorded.
func switchConfig(st *kernel.Stage) (kernel.SwitchConfig, error) {
	if st.Param != "" {
		return kernel.ParseSwitchConfig(st.Param)
	}
	if st.Config != nil && st.Config.Switch != nil && st.Config.Switch.Config.Topology.Valid() {
		return st.Config.Switch.Config, nil
	}
	return kernel.SwitchConfig{}, fmt.Errorf("the switch states no SwitchConfig (002 L3069: .switch(config) takes one); lower the program or state its param")
}
