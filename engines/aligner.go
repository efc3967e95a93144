package engines

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The Aligner (002 L3789-4034): the Stream Adapter, the data path of
// `align::<OutTime, OutPacket, _, _>(&trf)`, and the combination of both
// Aligner paths. The TRF Sequencer, the weight path, is in trf.go.
//
// Stream Adapter derivation (computing.md §5.4, reference-notes §3.6): with
// e the element size and the collect stream [Time, Packet] of 32-byte flits,
//
//   - collect_flits = 2 when OutPacket ≡ [Time % 2, Packet] (the innermost
//     Time factor of two flits is consumed into the packet, 002 L3923-3924);
//     the stream time after collection is Time / 2;
//   - collect_flits = 1 when OutPacket ≡ Packet # (64 B / e) (no Time axis
//     consumed, the second half zero, 002 L3925-3927);
//   - OutTime ≡ [Time after collection, tiling axes], the tiling axes being
//     absent from the activation data (002 L3937-3946);
//   - Rows = Row::SIZE of the TRF tensor (002 L3929-3931).
//
// A 64-byte input packet is one dual-channel flit (002 L3928): collect_flits
// = 1 with OutPacket ≡ Packet; see docs/spec-decisions.md "Aligner input of
// 64 bytes (Hello GEMV)".

var (
	ruleSAFlit = NewRule(Rule{ID: "SA-R0", Engine: "aligner", Name: "input flit",
		Cite: "002 L3914, L3928",
		Text: "the Stream Adapter receives 32-byte flits from the Collect Engine, or one 64-byte dual-channel flit"})
	ruleSAOutPacket = NewRule(Rule{ID: "SA-R1", Engine: "aligner", Name: "OutPacket is mac_width",
		Cite: "002 L3921, L3952",
		Text: "OutPacket is always 64 bytes (mac_width), zero-padded when collect_flits = 1"})
	ruleSACollect = NewRule(Rule{ID: "SA-R3", Engine: "aligner", Name: "flit collection",
		Cite: "002 L3923-3927",
		Text: "collect_flits = 2 consumes the innermost Time axis into Packet; collect_flits = 1 consumes none and zero-pads the second 32 bytes"})
	ruleSARows = NewRule(Rule{ID: "SA-R5", Engine: "aligner", Name: "rows broadcast",
		Cite: "002 L3929-3931, L3953",
		Text: "the collected packet is broadcast to 1, 2, 4 or 8 Rows, the Row::SIZE of the computation mapping"})
	ruleSATiling = NewRule(Rule{ID: "SA-R6", Engine: "aligner", Name: "time broadcast",
		Cite: "002 L3937-3946, L3954",
		Text: "OutTime is the collected Time followed by tiling axes, which have no corresponding axes in the activation data and sit at the innermost positions of OutTime"})
	ruleSABuffer = NewRule(Rule{ID: "SA-R8", Engine: "aligner", Name: "flit buffer",
		Cite: "002 L3781, L3928, L3951",
		Text: "the Flit Buffer holds at most 96 bytes; configurations exceeding it are invalid"})
	ruleCEType = NewRule(Rule{ID: "CE-R5", Engine: "aligner", Name: "data types",
		Cite: "002 L3782, L4532-4533",
		Text: "contraction inputs are i4, i8, f8 or bf16; the Reducer does not take f32 directly"})
	ruleCEAlignment = NewRule(Rule{ID: "CE-R1", Engine: "aligner", Name: "mapping alignment",
		Cite: "002 L3778, L3790-3791",
		Text: "the computation mapping from the Stream Adapter must exactly match the one from the TRF Sequencer"})
)

// ErrNotModelled is wrapped by errors for hardware features the manual
// documents only on pages it lacks (shift-reuse, 002 L3876, L3911, L3957).
var ErrNotModelled = errors.New("not modelled")

// StreamAdapterInput is what the Stream Adapter's configuration derives
// from: the collect stream, the TRF tensor's Row and the computation mapping
// `align::<OutTime, OutPacket, _, _>` requests.
type StreamAdapterInput struct {
	// DType is the element type of both operands.
	DType dtype.DType
	// Time and Packet are the collect stream's mappings
	// (CollectTensor<..., Time, Packet>).
	Time, Packet *mapping.Expr
	// Row is the TRF tensor's Row mapping, which becomes the computation Row.
	Row *mapping.Expr
	// OutTime and OutPacket are the computation mapping's Time and Packet.
	OutTime, OutPacket *mapping.Expr
}

// DeriveStreamAdapter derives the Stream Adapter's configuration, or returns
// the *Violation of the rule the mappings break.
func DeriveStreamAdapter(spec *Spec, in StreamAdapterInput) (kernel.StreamAdapterConfig, error) {
	var c kernel.StreamAdapterConfig
	if spec == nil {
		return c, errors.New("aligner: nil hardware spec")
	}
	if err := ceCheckExprs("aligner", []string{"time", "packet", "row", "out time", "out packet"},
		in.Time, in.Packet, in.Row, in.OutTime, in.OutPacket); err != nil {
		return c, err
	}
	if err := ceCheckType(in.DType); err != nil {
		return c, err
	}
	for _, e := range []*mapping.Expr{in.Time, in.Packet, in.OutTime, in.OutPacket} {
		if ceHasLinear(e) {
			return c, fmt.Errorf("aligner: %s is a sliding window: shift-reuse (collect_flits = 3) is documented only on the Advanced Operations page the manual lacks (002 L3740, L3876, L3911): %w",
				e.Text(), ErrNotModelled)
		}
	}
	flit := spec.Stream.FlitBytes.Value // 002 L3011
	dual := spec.Stream.DualChannelFlitBytes.Value
	mac := spec.StreamAdapter.OutPacketBytes.Value // 002 L3921
	fb, err := ceBytes(in.DType, in.Packet.Size(), "packet")
	if err != nil {
		return c, err
	}
	if fb != flit && fb != dual {
		return c, ruleSAFlit.Violate("input packet %s is %d bytes, want a %d-byte flit (or one %d-byte dual-channel flit)",
			in.Packet.Text(), fb, flit, dual).With("packet_bytes", fb)
	}
	ob, err := ceBytes(in.DType, in.OutPacket.Size(), "out packet")
	if err != nil {
		return c, err
	}
	if ob != mac {
		return c, ruleSAOutPacket.Violate("OutPacket %s is %d bytes, want %d (mac_width)", in.OutPacket.Text(), ob, mac).
			With("out_packet_bytes", ob)
	}
	rows := in.Row.Size()
	if !ceContains(spec.StreamAdapter.Rows.Value, rows) {
		return c, ruleSARows.Violate("Row %s has size %d, want one of %v", in.Row.Text(), rows, spec.StreamAdapter.Rows.Value).
			With("rows", rows)
	}

	// Flit collection (002 L3923-3927): find collect_flits and the time after
	// collection.
	var (
		pack  int
		after *mapping.Expr
	)
	macElems := in.OutPacket.Size()
	switch {
	case fb == dual:
		if ceEquiv(in.OutPacket, in.Packet) {
			pack, after = 1, in.Time
		}
	default:
		n := mac / flit // flits per mac_width window: 2
		if in.Time.Size()%n == 0 {
			to, tp, err := ceSplit(in.Time, n)
			if err == nil && ceEquiv(in.OutPacket, mapping.Pair(tp, in.Packet)) {
				pack, after = n, to
			}
		}
		if pack == 0 {
			padded, err := mapping.NewPadding(in.Packet, macElems, mapping.Top)
			if err == nil && ceEquiv(in.OutPacket, padded) {
				pack, after = 1, in.Time
			}
		}
	}
	if pack == 0 {
		if fb == dual {
			return c, ruleSACollect.Violate("OutPacket %s must be the dual-channel flit %s", in.OutPacket.Text(), in.Packet.Text())
		}
		want := "[" + ceInnerTimeText(in.Time, mac/flit) + ", " + in.Packet.String() + "]"
		return c, ruleSACollect.Violate("OutPacket %s is neither %s (collect_flits = 2) nor m![%s # %d] (collect_flits = 1)",
			in.OutPacket.Text(), want, in.Packet.String(), macElems)
	}
	if buf := spec.StreamAdapter.FlitBufferBytes.Value; pack*fb > buf {
		return c, ruleSABuffer.Violate("collecting %d flits of %d bytes needs %d bytes, the Flit Buffer holds %d", pack, fb, pack*fb, buf).
			With("bytes", pack*fb)
	}

	// Time broadcast (002 L3937-3946): OutTime = [after, tiling...].
	ot := in.OutTime.Size()
	if ot%after.Size() != 0 {
		return c, ruleSATiling.Violate("OutTime %s (size %d) is not the collected time %s (size %d) followed by tiling axes",
			in.OutTime.Text(), ot, after.Text(), after.Size()).With("out_time", ot)
	}
	tiling := ot / after.Size()
	outer, inner, err := ceSplit(in.OutTime, tiling)
	if err != nil || !ceEquiv(outer, after) {
		return c, ruleSATiling.Violate("OutTime %s must start with the collected time %s and end with the tiling axes (size %d)",
			in.OutTime.Text(), after.Text(), tiling)
	}
	if shared := ceShared(inner.Symbols(), in.Time.Symbols(), in.Packet.Symbols()); len(shared) > 0 {
		return c, ruleSATiling.Violate("tiling part %s of OutTime %s uses %s, which the activation data carries",
			inner.Text(), in.OutTime.Text(), strings.Join(shared, ", "))
	}
	c = kernel.StreamAdapterConfig{
		CollectFlits:  pack,
		FlitBytes:     fb,
		DataBytes:     pack * fb,
		Rows:          rows,
		TimeBroadcast: tiling,
		InSteps:       in.Time.Size(),
		OutSteps:      ot,
	}
	if tiling > 1 {
		c.TimeBroadcastTerms = mapping.Normalize(inner).String()
	}
	return c, nil
}

// AlignInput is what `collect.align::<OutTime, OutPacket, _, _>(&trf)`
// derives from (002 L3885-3897): the collect stream, the TRF tensor and the
// requested computation mapping.
type AlignInput struct {
	// DType is the element type shared by stream and TRF (002 L3891-3894).
	DType dtype.DType
	// Time and Packet are the collect stream's mappings.
	Time, Packet *mapping.Expr
	// Row and Element are the TRF tensor's mappings.
	Row, Element *mapping.Expr
	// OutTime and OutPacket are the computation mapping.
	OutTime, OutPacket *mapping.Expr
}

// DeriveAlign derives both Aligner paths for one align call. Both are
// derived against the same computation mapping [Row, OutTime, OutPacket],
// which is how the compiler enforces CE-R1 (002 L3778).
func DeriveAlign(spec *Spec, in AlignInput) (kernel.AlignConfig, error) {
	var c kernel.AlignConfig
	sa, err := DeriveStreamAdapter(spec, StreamAdapterInput{DType: in.DType, Time: in.Time, Packet: in.Packet,
		Row: in.Row, OutTime: in.OutTime, OutPacket: in.OutPacket})
	if err != nil {
		return c, err
	}
	ts, err := DeriveTRFSequencer(spec, TRFSequencerInput{DType: in.DType, Row: in.Row, Element: in.Element,
		OutTime: in.OutTime, OutPacket: in.OutPacket})
	if err != nil {
		return c, err
	}
	if sa.OutSteps != ts.Steps() || sa.Rows != ts.Rows {
		return c, ruleCEAlignment.Violate("the Stream Adapter produces %d steps on %d Rows, the TRF Sequencer %d steps on %d Rows",
			sa.OutSteps, sa.Rows, ts.Steps(), ts.Rows)
	}
	return kernel.AlignConfig{StreamAdapter: sa, TRFSequencer: ts}, nil
}

// StreamAdapterPacket writes the computation packet of time step t (64 bytes)
// into dst: the CollectFlits flits of collect time step
// (t / TimeBroadcast)·CollectFlits + k, then zeros (002 L3921-3927, L3939).
// stream holds the collect stream's flits in time order, FlitBytes each. It
// does not allocate.
func StreamAdapterPacket(c *kernel.StreamAdapterConfig, stream []byte, t int, dst []byte) error {
	if c == nil || c.CollectFlits < 1 || c.FlitBytes < 1 || c.TimeBroadcast < 1 || c.CollectFlits*c.FlitBytes > len(dst) {
		return errors.New("aligner: invalid stream adapter configuration or packet buffer")
	}
	if t < 0 || t >= c.OutSteps {
		return fmt.Errorf("aligner: time step %d outside [0, %d)", t, c.OutSteps)
	}
	first := (t / c.TimeBroadcast) * c.CollectFlits
	from := first * c.FlitBytes
	n := c.CollectFlits * c.FlitBytes
	if from+n > len(stream) {
		return fmt.Errorf("aligner: stream holds %d bytes, time step %d needs bytes up to %d", len(stream), t, from+n)
	}
	copy(dst[:n], stream[from:from+n])
	clear(dst[n:])
	return nil
}

// ---- helpers shared by the contraction-side engines (aligner, trf, reducer,
// cast, transpose). Names start with "ce" to stay clear of other engines'
// helpers in this package.

// ceCheckExprs rejects nil and invalid mappings, naming the argument.
func ceCheckExprs(engine string, names []string, es ...*mapping.Expr) error {
	for i, e := range es {
		name := fmt.Sprintf("mapping %d", i)
		if i < len(names) {
			name = names[i]
		}
		if e == nil {
			return fmt.Errorf("%s: missing %s mapping", engine, name)
		}
		if err := e.Err(); err != nil {
			return fmt.Errorf("%s: invalid %s mapping: %w", engine, name, err)
		}
	}
	return nil
}

// ceCheckType checks that d is a contraction input type (002 L3782).
func ceCheckType(d dtype.DType) error {
	if _, err := dtype.AccType(d); err != nil {
		return ruleCEType.Violate("element type %s is not a contraction input (i4, i8, f8, bf16)", d)
	}
	return nil
}

// ceBytes is the byte size of n elements of d.
func ceBytes(d dtype.DType, n int, what string) (int, error) {
	b, err := d.BytesFor(n)
	if err != nil {
		return 0, fmt.Errorf("%s of %d %s elements: %w", what, n, d, err)
	}
	return b, nil
}

// ceHasLinear reports whether e contains a linear combination `$(...)`,
// the sliding-window form of convolution inputs (002 L1004-1016, L3742).
func ceHasLinear(e *mapping.Expr) bool {
	switch e.Kind() {
	case mapping.KindLinear:
		return true
	case mapping.KindPair:
		for _, p := range e.Parts() {
			if ceHasLinear(p) {
				return true
			}
		}
	case mapping.KindStride, mapping.KindModulo, mapping.KindResize, mapping.KindPadding:
		return ceHasLinear(e.Inner())
	}
	return false
}

// ceContains reports whether v is in list.
func ceContains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ceSplit is mapping.SplitAt restricted to clean splits: n must fall on a
// loop boundary of e's factorized form, or cut one loop into whole parts
// (`K / 16` of 4 at 2; `K # 32` with K = 16 at 16), so that the outer and
// inner parts are independent mappings. A split through the middle of a
// ragged loop (`W # 32` with W = 30 at 8) or across loops that do not nest
// is refused: its parts would only be views that decode positions together.
func ceSplit(e *mapping.Expr, n int) (outer, inner *mapping.Expr, err error) {
	if n < 1 || e.Size()%n != 0 {
		return nil, nil, fmt.Errorf("cannot split %s (size %d) at %d", e.Text(), e.Size(), n)
	}
	ds, err := ceDigits(e)
	if err != nil {
		return nil, nil, err
	}
	cum := 1
	for _, d := range ds {
		if cum >= n {
			break
		}
		if n < cum*d.size {
			k := n / cum
			if n%cum != 0 || d.size%k != 0 || (d.live%k != 0 && d.live != 1) {
				return nil, nil, fmt.Errorf("cannot split %s at %d: the split cuts loop %s", e.Text(), n, d.text())
			}
			break
		}
		cum *= d.size
	}
	return mapping.SplitAt(e, n)
}

// ceEquiv decides equivalence with every padding kind treated alike (the
// manual's own definition, 002 L753-758): factorized forms are compared
// without enumerating positions; mappings without one are enumerated.
func ceEquiv(a, b *mapping.Expr) bool {
	if a == nil || b == nil || a.Err() != nil || b.Err() != nil || a.Size() != b.Size() {
		return false
	}
	fa, errA := mapping.FactorizeShared(a)
	fb, errB := mapping.FactorizeShared(b)
	if errA == nil && errB == nil {
		return ceLooseFactors(fa).equal(ceLooseFactors(fb))
	}
	ok, _ := mapping.EquivLoose(a, b)
	return ok
}

// ceLoose is a factor list with padding kinds erased and adjacent paddings
// merged.
type ceLoose []mapping.Factor

func ceLooseFactors(fs mapping.Factors) ceLoose {
	out := make(ceLoose, 0, len(fs))
	for _, f := range fs {
		if f.Kind == mapping.FactorPad {
			f.Pad = mapping.Top
			if n := len(out); n > 0 && out[n-1].Kind == mapping.FactorPad {
				if f.Extent > out[n-1].Extent {
					out[n-1].Extent = f.Extent
				}
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

func (l ceLoose) equal(o ceLoose) bool {
	if len(l) != len(o) {
		return false
	}
	for i := range l {
		a, b := l[i], o[i]
		if a.Kind != b.Kind || a.Axis != b.Axis || a.AxisSize != b.AxisSize || a.Stride != b.Stride || a.Extent != b.Extent {
			return false
		}
	}
	return true
}

// ceStrip removes the outermost padding of e (`K / 4 # 8` → `K / 4`,
// `1 # 8` → `1`): the live prefix that slicing padded axes keeps
// (002 L4437-4441, L6783).
func ceStrip(e *mapping.Expr) (*mapping.Expr, error) {
	fs, err := mapping.Factorize(e)
	if err != nil {
		return nil, err
	}
	n := len(fs)
	for n > 0 && fs[n-1].Kind == mapping.FactorPad {
		n--
	}
	if n == len(fs) {
		return e, nil
	}
	return fs[:n].Expr(), nil
}

// ceShared lists the symbols of a that also occur in any of bs, sorted.
func ceShared(a []string, bs ...[]string) []string {
	seen := map[string]bool{}
	for _, b := range bs {
		for _, s := range b {
			seen[s] = true
		}
	}
	var out []string
	for _, s := range a {
		if seen[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// ceInnerTimeText prints the innermost n positions of time, for messages.
func ceInnerTimeText(time *mapping.Expr, n int) string {
	if _, inner, err := ceSplit(time, n); err == nil {
		return inner.String()
	}
	return fmt.Sprintf("<innermost %d of %s>", n, time.String())
}

// ceDigitKind classifies a ceDigit.
type ceDigitKind uint8

const (
	ceTerm  ceDigitKind = iota // steps the coordinate of an axis
	ceBcast                    // a broadcast digit m![n]: no axis
	cePad                      // a padding-only digit: one live value, the rest padding
)

// ceDigit is one loop of a factorized mapping: size iterations (padding
// included) of which the first live are data; a term digit adds
// value·stride to its axis' coordinate. pos is the position stride: the
// product of the sizes of the digits inside it.
type ceDigit struct {
	kind     ceDigitKind
	axis     string
	axisSize int
	stride   int
	live     int
	size     int
	pos      int
}

// sameRange reports whether two term digits step the same coordinates.
func (d ceDigit) sameRange(o ceDigit) bool {
	return d.kind == ceTerm && o.kind == ceTerm && d.axis == o.axis && d.stride == o.stride && d.live == o.live
}

// text prints a term digit as a mapping term (`K / 16 % 2`), a broadcast
// as its size and a padding digit as `1 # n`.
func (d ceDigit) text() string {
	switch d.kind {
	case ceBcast:
		return fmt.Sprint(d.size)
	case cePad:
		return fmt.Sprintf("1 # %d", d.size)
	}
	e := mapping.Sym(d.axis, d.axisSize)
	if d.stride > 1 {
		e = e.Div(d.stride)
	}
	if d.live < e.Size() {
		if e.Size()%d.live == 0 {
			e = e.Mod(d.live)
		} else {
			e = e.Resize(d.live)
		}
	}
	if d.size > d.live {
		e = e.Pad(d.size, mapping.Top)
	}
	if e.Err() != nil {
		return fmt.Sprintf("%s:%dx%d", d.axis, d.stride, d.live)
	}
	return mapping.Normalize(e).String()
}

// ceDigits turns e's factorized form into loops, innermost first. A padding
// factor extends the loop below it when it pads a whole number of that
// loop's blocks (`K # 32` is a K loop of 32 with 16 live), and becomes a
// padding digit otherwise (`1 # 8`).
func ceDigits(e *mapping.Expr) ([]ceDigit, error) {
	fs, err := mapping.FactorizeShared(e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Text(), err)
	}
	var ds []ceDigit
	cum := 1
	for _, f := range fs {
		switch f.Kind {
		case mapping.FactorTerm:
			ds = append(ds, ceDigit{kind: ceTerm, axis: f.Axis, axisSize: f.AxisSize, stride: f.Stride, live: f.Extent, size: f.Extent, pos: cum})
			cum *= f.Extent
		case mapping.FactorBroadcast:
			ds = append(ds, ceDigit{kind: ceBcast, live: f.Extent, size: f.Extent, pos: cum})
			cum *= f.Extent
		case mapping.FactorPad:
			if f.Extent <= cum {
				continue
			}
			if n := len(ds); n > 0 && f.Extent%ds[n-1].pos == 0 {
				ds[n-1].size = f.Extent / ds[n-1].pos
			} else if f.Extent%cum == 0 {
				ds = append(ds, ceDigit{kind: cePad, live: 1, size: f.Extent / cum, pos: cum})
			} else {
				return nil, fmt.Errorf("%s: padding to %d is not a whole number of loop iterations", e.Text(), f.Extent)
			}
			cum = f.Extent
		}
	}
	if cum != e.Size() {
		return nil, fmt.Errorf("%s: loops cover %d positions, the mapping has %d", e.Text(), cum, e.Size())
	}
	return ds, nil
}

// ceRefine splits the term digits of every list at every digit boundary any
// list has on the same axis (the common refinement of reference-notes
// §3.1), so that equal coordinate ranges become equal digits. It fails when
// two decompositions of an axis do not nest (002 L1672-1683: `A % 5, A / 5`
// against `A % 3, A / 3`).
func ceRefine(lists ...*[]ceDigit) error {
	bps := map[string][]int{}
	for _, l := range lists {
		for _, d := range *l {
			if d.kind == ceTerm {
				bps[d.axis] = append(bps[d.axis], d.stride, d.stride*d.live)
			}
		}
	}
	for a := range bps {
		sort.Ints(bps[a])
	}
	for _, l := range lists {
		var out []ceDigit
		for _, d := range *l {
			if d.kind != ceTerm {
				out = append(out, d)
				continue
			}
			cur := d
			for _, b := range bps[d.axis] {
				if b <= cur.stride || b >= cur.stride*cur.live {
					continue
				}
				if b%cur.stride != 0 {
					return fmt.Errorf("axis %s: digit %s cannot be split at coordinate step %d", d.axis, cur.text(), b)
				}
				k := b / cur.stride
				if cur.live%k != 0 || cur.size%k != 0 {
					return fmt.Errorf("axis %s: digit %s cannot be split at coordinate step %d", d.axis, cur.text(), b)
				}
				out = append(out, ceDigit{kind: ceTerm, axis: d.axis, axisSize: d.axisSize, stride: cur.stride, live: k, size: k, pos: cur.pos})
				cur = ceDigit{kind: ceTerm, axis: d.axis, axisSize: d.axisSize, stride: b, live: cur.live / k, size: cur.size / k, pos: cur.pos * k}
			}
			out = append(out, cur)
		}
		*l = out
	}
	return nil
}

// ceAxes is the set of axes the term digits of ds step.
func ceAxes(ds []ceDigit) map[string]bool {
	m := map[string]bool{}
	for _, d := range ds {
		if d.kind == ceTerm {
			m[d.axis] = true
		}
	}
	return m
}

// AlignStated is what a chain says about its align: the collect stream's
// Time::SIZE, the TRF tensor's Row::SIZE and the computation Time.
type AlignStated struct {
	InSteps int
	Rows    int
	OutTime *mapping.Expr
}

// CheckAlignConfig checks an align configuration's two paths against each
// other and against the chain: both produce the computation mapping
// [Row, OutTime, OutPacket] (CE-R1: the same Rows and steps; the TRF
// Sequencer runs exactly as long as the stream), the Rows are the TRF
// tensor's Row::SIZE (SA-R5), and the Stream Adapter's sizes follow from
// its flit collection (SA-R3) and time broadcast (SA-R6).
func CheckAlignConfig(spec *Spec, c *kernel.AlignConfig, want AlignStated) error {
	if spec == nil || c == nil {
		return errors.New("aligner: nil spec or configuration")
	}
	sa, ts := &c.StreamAdapter, &c.TRFSequencer
	if sa.Rows != want.Rows || ts.Rows != want.Rows {
		return ruleSARows.Violate("the Stream Adapter broadcasts to %d Rows and the TRF Sequencer reads %d; the TRF tensor's Row has %d", sa.Rows, ts.Rows, want.Rows).
			With("rows", sa.Rows)
	}
	if !ceContains(spec.Contraction.Rows.Value, sa.Rows) {
		return ruleSARows.Violate("%d Rows, want one of %v", sa.Rows, spec.Contraction.Rows.Value).With("rows", sa.Rows)
	}
	if sa.OutSteps != ts.Steps() {
		return ruleCEAlignment.Violate("the Stream Adapter produces %d computation steps, the TRF Sequencer reads %d", sa.OutSteps, ts.Steps()).
			With("out_steps", sa.OutSteps)
	}
	if want.OutTime != nil && sa.OutSteps != want.OutTime.Size() {
		return ruleCEAlignment.Violate("%d computation steps, the computation Time has %d", sa.OutSteps, want.OutTime.Size()).With("out_steps", sa.OutSteps)
	}
	if sa.InSteps != want.InSteps {
		return ruleSACollect.Violate("the Stream Adapter reads %d flits, the collect stream has %d", sa.InSteps, want.InSteps).With("in_steps", sa.InSteps)
	}
	if sa.CollectFlits < 1 || sa.FlitBytes < 1 || sa.DataBytes != sa.CollectFlits*sa.FlitBytes || sa.InSteps%sa.CollectFlits != 0 {
		return ruleSACollect.Violate("collect_flits %d of %d bytes stated as %d data bytes, from %d flits", sa.CollectFlits, sa.FlitBytes, sa.DataBytes, sa.InSteps).
			With("collect_flits", sa.CollectFlits)
	}
	if sa.TimeBroadcast < 1 || sa.OutSteps != sa.InSteps/sa.CollectFlits*sa.TimeBroadcast {
		return ruleSATiling.Violate("%d computation steps from %d flits collected %d at a time, broadcast %d times", sa.OutSteps, sa.InSteps, sa.CollectFlits, sa.TimeBroadcast).
			With("time_broadcast", sa.TimeBroadcast)
	}
	return nil
}
