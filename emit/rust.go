package emit

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

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
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	for _, s := range []struct{ what, v string }{{"name", p.Name}, {"version", opts.Version}, {"cost", opts.Cost}} {
		if strings.ContainsAny(s.v, "\r\n") {
			return nil, fmt.Errorf("emit %q: the %s %q spans several lines", p.Name, s.what, s.v)
		}
	}
	// A regular loop over tiles prints as one (see loop.go); any other
	// program in straight line.
	lp, body := loopForm(p)
	var k *analysis
	var err error
	if lp != nil {
		pre := map[string]bool{}
		for _, t := range body.Tensors {
			if t.View != "" || t.Role == kernel.Output {
				pre[t.Name] = true
			}
		}
		k, err = analyzeWith(body, pre)
	} else {
		k, err = analyze(p)
	}
	if err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	spec := opts.Spec
	if spec == nil {
		spec = engines.Default()
	}
	if err := CheckAddresses(spec, p); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	w := &rustWriter{p: p, k: k, aliases: chooseAliases(p), ind: "    "}
	if lp != nil {
		w.p, w.lp = body, lp
	}
	if err := w.file(opts); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	return w.buf.Bytes(), nil
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
func chooseAliases(p *kernel.Program) [nRoles]*alias {
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
			out[r] = &alias{name: roleNames[r], expr: best, text: best.String()}
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
	aliases [nRoles]*alias
	buf     bytes.Buffer
	// ind is the indentation of a statement of the kernel's body; lp is the
	// tile loop being printed (nil outside one).
	ind string
	lp  *loopPrinter
}

func (w *rustWriter) line(format string, args ...any) {
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

// mapText prints a mapping at a position of role r: the role's alias when
// the mapping prints as it does, `m![{Alias}, rest]` when a Time or Packet
// mapping extends its alias (the manual's escape, 002 L346, L972-984), the
// literal `m![...]` otherwise.
func (w *rustWriter) mapText(e *mapping.Expr, r role) string {
	t := e.String()
	a := w.aliases[r]
	if a == nil {
		return "m![" + t + "]"
	}
	if a.text == t {
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
					rest = append(rest, x.String())
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
	// Crate attributes, extern crates and uses as the manual's examples
	// have them (002 L175-182).
	w.line("#![feature(register_tool)]")
	w.line("#![register_tool(tcp)]")
	w.line("extern crate furiosa_visa_std;")
	w.line("extern crate tokio;")
	w.line("extern crate rand;")
	w.line("use rand::SeedableRng;")
	w.line("use rand::rngs::SmallRng;")
	w.line("use furiosa_visa_std::prelude::*;")
	w.line("")
	w.line("axes![%s];", axesText(p.Axes))
	for _, r := range roleOrder {
		if a := w.aliases[r]; a != nil {
			w.line("type %s = m![%s];", a.name, a.text)
		}
	}
	w.line("")
	if err := w.host(); err != nil {
		return err
	}
	w.line("")
	return w.kernel()
}

// axesText prints an axis declaration as the manual writes it:
// `A = 2048`, `I = 256, J = 2048` (002 L183, L410), skewed axes `B' = B - A`
// (002 L988).
func axesText(a mapping.Axes) string {
	var parts []string
	skewed := map[string]bool{}
	for _, s := range a.Skews() {
		skewed[s.Name] = true
	}
	for _, ax := range a.List() {
		if !skewed[ax.Name] {
			parts = append(parts, fmt.Sprintf("%s = %d", ax.Name, ax.Size))
		}
	}
	for _, s := range a.Skews() {
		parts = append(parts, fmt.Sprintf("%s = %s - %s", s.Name, s.Base, s.By))
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
	s := fmt.Sprintf("%s(%s) -> %s", r.Op, strings.Join(args, ", "), r.Output)
	if r.Expr != "" {
		s += " = " + r.Expr // `expr(x, w) -> out = x * w` (rust_vector.go)
	}
	if len(r.Range) == 2 {
		s += fmt.Sprintf(" ; inputs in [%s, %s]", strconv.FormatFloat(r.Range[0], 'g', -1, 64), strconv.FormatFloat(r.Range[1], 'g', -1, 64))
	}
	return s
}

// maxLine is rustfmt's default max_width, which decides whether the kernel's
// signature fits on one line (002 L200) or takes one parameter per line
// (002 L270-274).
const maxLine = 100

func (w *rustWriter) kernel() error {
	p, k := w.p, w.k
	params := []string{"ctx: &mut Context"}
	for _, t := range k.inputs {
		params = append(params, fmt.Sprintf("%s: &%s", t.Name, w.typeText(t)))
	}
	ret := ""
	if k.output != nil {
		ret = " -> " + w.typeText(k.output)
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
	for i, op := range p.Ops {
		tail := k.output != nil && i == len(p.Ops)-1 && op.Kind == kernel.OpToHBM && op.Dst == k.output.Name
		if err := w.op(op, tail); err != nil {
			return fmt.Errorf("ops[%d] (%s): %w", i, op.Kind, err)
		}
	}
	if k.output != nil && !(len(p.Ops) > 0 && p.Ops[len(p.Ops)-1].Kind == kernel.OpToHBM && p.Ops[len(p.Ops)-1].Dst == k.output.Name) {
		w.line("    %s", k.output.Name)
	}
	w.line("}")
	return nil
}

func (w *rustWriter) op(op *kernel.Op, tail bool) error {
	p := w.p
	switch op.Kind {
	case kernel.OpToDM, kernel.OpDMToDM:
		dst, _ := p.Tensor(op.Dst)
		// 002 L339: `let lhs: DmTensor<...> = lhs.to_dm(&mut ctx.tdma, 0);`
		w.line("%s%s%s.to_dm(&mut ctx.tdma, %s);", w.ind, w.bind(dst), op.Src, w.addr(dst, false))
	case kernel.OpToHBM:
		dst, _ := p.Tensor(op.Dst)
		call := fmt.Sprintf("%s.to_hbm(&mut ctx.tdma, %s)", op.Src, w.addr(dst, true))
		if tail {
			// 002 L361: the kernel's result is its tail expression.
			w.line("    %s", call)
		} else {
			w.line("%s%s%s;", w.ind, w.bind(dst), call)
		}
	case kernel.OpChain:
		return w.chain(op)
	}
	return nil
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
	w.line("%s    .%s", w.ind, op.Context)
	var dt dtype.DType
	for i, st := range op.Stages {
		call, err := w.stage(st, &dt)
		if err != nil {
			return fmt.Errorf("stages[%d] (%s): %w", i, st.Kind, err)
		}
		end := ""
		if i == len(op.Stages)-1 {
			end = ";"
		}
		w.line("%s    .%s%s", w.ind, call, end)
	}
	return nil
}

// stage prints one method call of a chain; dt tracks the stream's element
// type for a fetch that keeps it.
func (w *rustWriter) stage(st *kernel.Stage, dt *dtype.DType) (string, error) {
	p := w.p
	tp := func(args ...string) string { return "::<" + strings.Join(args, ", ") + ">" }
	switch st.Kind {
	case kernel.StBegin:
		t, _ := p.Tensor(st.Tensor)
		*dt = t.DType
		return fmt.Sprintf("begin(%s.view())", st.Tensor), nil // 002 L205
	case kernel.StFetch:
		// fetch::<D, Time, Packet>() (002 L1705, L207); a fetch that
		// states no type keeps the stream's (engines.Lower).
		if st.DType != 0 {
			*dt = st.DType
		}
		return "fetch" + tp(dt.String(), w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket)) + "()", nil
	case kernel.StSwitch:
		// switch::<Slice, Time>(SwitchConfig::...) (002 L3069, L3196-3202).
		cfg, err := switchConfig(st)
		if err != nil {
			return "", err
		}
		return "switch" + tp(w.mapText(st.Slice, roleSlice), w.mapText(st.Time, roleTime)) + "(" + cfg.String() + ")", nil
	case kernel.StCollect:
		return "collect" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket)) + "()", nil // 002 L3081
	case kernel.StToTRF:
		t, _ := p.Tensor(st.Tensor)
		return "to_trf(" + w.trfMode(t) + ")", nil // 002 L347, L4056
	case kernel.StToVRF:
		t, _ := p.Tensor(st.Tensor)
		return "to_vrf(" + w.addr(t, false) + ")", nil // 002 L285
	case kernel.StAlign:
		// align::<Time, Packet, _, _>(&trf) (002 L355, L4304).
		return "align" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket), "_", "_") + "(&" + st.Tensor + ")", nil
	case kernel.StContract:
		// Contraction widens i4/i8 to i32 and f8/bf16 to f32 (002 L4312).
		if acc, err := dtype.AccType(*dt); err == nil {
			*dt = acc
		}
		return "contract" + tp(w.mapText(st.Packet, roleNone)) + "()", nil // 002 L356, L4314
	case kernel.StAccumulate:
		kind, err := kernel.ParseAccumulationKind(st.Param)
		if err != nil {
			return "", err
		}
		// 002 L357, L4321.
		return "accumulate" + tp(w.mapText(st.Time, roleNone), w.mapText(st.Packet, roleNone)) + "(AccumulationKind::" + string(kind) + ")", nil
	case kernel.StCast:
		*dt = st.DType
		return "cast" + tp(st.DType.String(), w.mapText(st.Packet, roleNone)) + "()", nil // 002 L358, L6767
	case kernel.StTranspose:
		return "transpose" + tp(w.mapText(st.Time, roleTime), w.mapText(st.Packet, rolePacket)) + "()", nil // 002 L6832
	case kernel.StVectorInit:
		return "vector_init()", nil // 002 L211
	case kernel.StVectorFinal:
		return "vector_final()", nil // 002 L216
	case kernel.StCommit:
		t, _ := p.Tensor(st.Tensor)
		return "commit" + tp(w.mapText(t.Element, roleNone)) + "(" + w.addr(t, false) + ")", nil // 002 L359, L2154
	}
	if _, ok := vectorSpellings[st.Kind]; ok || st.Kind == kernel.StVectorBranch || st.Kind == kernel.StVectorFxp {
		return w.vectorCall(st, dt) // rust_vector.go
	}
	return "", fmt.Errorf("unknown stage kind %q", st.Kind)
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
