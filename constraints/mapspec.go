package constraints

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"tcpmap/model/mapping"
	"tcpmap/model/pos"
	"tcpmap/model/workload"
)

// The mapping-file reader and the unsat cores over it: a full or partial
// mapping, written in the manual's notation (the Hello GEMM's `type Slice =
// m![I / 32, J / 32]`, `type Row = m![J % 8]`, 002 L483-484), becomes
// assumption literals over the skeleton encoding (sat.go): a structurally
// impossible mapping is UNSAT, and the solver's failed assumptions,
// minimized by deletion, name the skeleton rules and the mapping fields
// that conflict (Core). The planner completes a possible one
// (search.Explain).

// MapField is one field of a mapping file, with its position.
type MapField struct {
	// Name is the YAML key (`slice`), Value its text (`m![I / 32, J / 32]`).
	Name, Value string
	// Line and Col locate the value in the file.
	Line, Col int
}

// MapDim is a hardware dimension's mapping: each axis's factor there.
type MapDim struct {
	MapField
	// Factor[a] is axis a's factor (1 for an axis the expression leaves
	// out); Stride[a] the coordinate stride of its innermost digit (0 when
	// absent); Text[a] its digits as text (`I / 32`).
	Factor [MaxAxes]int
	Stride [MaxAxes]int
	Text   [MaxAxes]string
	// Order lists the axes of the expression, major first.
	Order []int
}

// MapSpec is a full or partial mapping of a workload: nil fields are free.
type MapSpec struct {
	// File is the mapping file's name.
	File string
	// Stationary is the input held in the TRF (its tensor name).
	Stationary *MapField
	stationary uint8
	// Content, Mode and Accumulate fix the packet's content, its mode and
	// the accumulation kind.
	Content, Mode, Accumulate *MapField
	content                   PacketContent
	mode                      PacketMode
	acc                       Accumulation
	// Switch fixes whether the streamed operand is shared by its ring
	// through the Switch Engine (Candidate.Switch).
	Switch *MapField
	sw     bool
	// Dims are the per-level mappings, by Level (Tile, Cluster, Slice,
	// Time, Row, Packet; Chip is not a mapping field).
	Dims [NumLevels]*MapDim
}

// mapFields are the keys of a mapping file and the levels they map.
var mapFields = []struct {
	name  string
	level Level
}{{"tile", Tile}, {"cluster", Cluster}, {"slice", Slice}, {"time", Time}, {"row", Row}, {"packet", Packet}}

// LoadMapSpec reads a mapping file for the problem p.
func LoadMapSpec(file string, p *Problem) (*MapSpec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParseMapSpec(file, data, p)
}

// ParseMapSpec parses a mapping file's content: a YAML mapping with the
// optional fields stationary (an input's tensor name), content
// (contracted|columns), packet_mode (single|dual|half), accumulate
// (Interleaved|Sequential), switch (false|true: Candidate.Switch), and tile, cluster, slice, time, row and packet,
// each an m![...] expression over the problem's axes. A level's expression
// is complete: an axis it leaves out has factor 1 there. Its digits' strides
// must be those of the nesting tile, cluster, slice, time, row, packet
// (major to minor within an axis, 002 L483-484, L503), and the time
// expression's axes, major first, are the computation's time order. A
// time without a tile field leaves the tiling free (time is then the
// computation time of one tile). Padding (`1 # 2`, 002 L317) uses no
// hardware; a broadcast digit is an error. Errors are *workload.Error with
// the file, line, column and field.
func ParseMapSpec(file string, data []byte, p *Problem) (*MapSpec, error) {
	errAt := func(n *yaml.Node, field, format string, args ...any) error {
		return pos.Errorf(file, n, field, format, args...)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, pos.YAML(file, err)[0]
	}
	m := &MapSpec{File: file}
	if doc.Kind == 0 {
		return m, nil // an empty file: nothing fixed
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, errAt(root, "", "a mapping file is a YAML mapping of fields")
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if prev, ok := seen[k.Value]; ok {
			return nil, errAt(k, k.Value, "repeated field (first at line %d)", prev)
		}
		seen[k.Value] = k.Line
		if v.Kind != yaml.ScalarNode {
			return nil, errAt(v, k.Value, "want a scalar")
		}
		f := &MapField{Name: k.Value, Value: v.Value, Line: v.Line, Col: v.Column}
		choose := func(names []string) (int, error) {
			for i, n := range names {
				if v.Value == n {
					return i, nil
				}
			}
			return 0, errAt(v, k.Value, "%q: want one of %s", v.Value, strings.Join(names, ", "))
		}
		var err error
		var i int
		switch k.Value {
		case "stationary":
			names := []string{p.In[0].Name, p.In[1].Name}
			if i, err = choose(names); err == nil {
				m.Stationary, m.stationary = f, uint8(i)
			}
		case "content":
			if i, err = choose([]string{"contracted", "columns"}); err == nil {
				m.Content, m.content = f, PacketContent(i)
			}
		case "packet_mode":
			if i, err = choose(packetModeNames[:]); err == nil {
				m.Mode, m.mode = f, PacketMode(i)
			}
		case "accumulate":
			if i, err = choose([]string{"Interleaved", "Sequential"}); err == nil {
				m.Accumulate, m.acc = f, Accumulation(i)
			}
		case "switch":
			if i, err = choose([]string{"false", "true"}); err == nil {
				m.Switch, m.sw = f, i == 1
			}
		default:
			lv := Level(NumLevels)
			for _, mf := range mapFields {
				if mf.name == k.Value {
					lv = mf.level
				}
			}
			if lv == NumLevels {
				return nil, errAt(k, k.Value, "unknown field; want stationary, content, packet_mode, accumulate, switch, tile, cluster, slice, time, row or packet")
			}
			m.Dims[lv], err = parseDim(p, f, v, file)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// parseDim reads one level's m![...] expression.
func parseDim(p *Problem, f *MapField, v *yaml.Node, file string) (*MapDim, error) {
	fail := func(col int, format string, args ...any) error {
		return &workload.Error{File: file, Line: v.Line, Col: col, Field: f.Name, Msg: fmt.Sprintf(format, args...)}
	}
	e, err := mapping.Parse(v.Value, p.Decl, nil)
	if err != nil {
		var se *mapping.SyntaxError
		if errors.As(err, &se) {
			msg := se.Msg
			if v.LineComment != "" {
				// `slice: m![1 # 2]` unquoted: YAML reads ` #` as a comment.
				msg += fmt.Sprintf(" (YAML read %q as a comment: quote the expression)", v.LineComment)
			}
			return nil, fail(pos.ScalarCol(v, se.Col), "%s", msg)
		}
		return nil, fail(v.Column, "%v", err)
	}
	fs, err := mapping.Factorize(e)
	if err != nil {
		return nil, fail(v.Column, "%v", err)
	}
	d := &MapDim{MapField: *f}
	for a := range d.Factor {
		d.Factor[a] = 1
	}
	// Factors are innermost first; Order is major first.
	for i := len(fs) - 1; i >= 0; i-- {
		x := fs[i]
		switch x.Kind {
		case mapping.FactorPad:
			continue // padding (`1 # 2`, 002 L317) uses no hardware
		case mapping.FactorBroadcast:
			return nil, fail(v.Column, "broadcast digit m![%d]: a mapping places axes, it does not replicate them", x.Extent)
		}
		a := p.axis(x.Axis)
		if a < 0 {
			return nil, fail(v.Column, "axis %s is not an axis of the contraction", x.Axis)
		}
		if d.Stride[a] == 0 {
			d.Order = append(d.Order, a)
		}
		d.Factor[a] *= x.Extent
		if d.Stride[a] == 0 || x.Stride < d.Stride[a] {
			d.Stride[a] = x.Stride
		}
		if d.Text[a] != "" {
			d.Text[a] += ", "
		}
		d.Text[a] += digitText(p.Axes[a], x.Stride, x.Extent)
		if p.Axes[a].Size%d.Factor[a] != 0 {
			return nil, fail(v.Column, "axis %s: digits of %d values do not divide its size %d", x.Axis, d.Factor[a], p.Axes[a].Size)
		}
	}
	return d, nil
}

// digitText prints one digit of an axis in the manual's notation.
func digitText(ax Axis, stride, extent int) string {
	switch {
	case stride == 1 && extent == ax.Size:
		return ax.Name
	case stride*extent == ax.Size:
		return fmt.Sprintf("%s / %d", ax.Name, stride)
	case stride == 1:
		return fmt.Sprintf("%s %% %d", ax.Name, extent)
	}
	return fmt.Sprintf("%s / %d %% %d", ax.Name, stride, extent)
}

// RuleViolation is a skeleton rule of a minimal unsatisfiable core.
type RuleViolation struct {
	Rule string `json:"rule"`
	Cite string `json:"cite"`
	Text string `json:"text"`
}

// Conflict is a minimal unsatisfiable set of rules and mapping fields.
type Conflict struct {
	Rules []RuleViolation `json:"rules"`
	// Fields print as `slice: I / 32`, with the file position.
	Fields []FieldUse `json:"fields,omitempty"`
	// core is the set as literals (for tests).
	core []Lit
}

// FieldUse is a mapping field (or one axis of it) in an explanation.
type FieldUse struct {
	// Text is `slice: I / 32`, or `slice: K absent (factor 1)`.
	Text string `json:"field"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// satLevel returns l's index in satLevels (-1 for Tile and Chip).
func satLevel(l Level) int {
	for i, x := range satLevels {
		if x == l {
			return i
		}
	}
	return -1
}

// Assumption is one assumption literal and the field it stands for.
type Assumption struct {
	lit Lit
	use FieldUse
}

// Assumptions translates the mapping's fields into literals over e.
func (m *MapSpec) Assumptions(e *Encoding) ([]Assumption, error) {
	c := e.p
	var out []Assumption
	add := func(f *MapField, text string, conds ...Lit) {
		a := c.Var()
		for _, x := range conds {
			c.Clause(0, a.Not(), x)
		}
		out = append(out, Assumption{lit: a, use: FieldUse{Text: f.Name + ": " + text, Line: f.Line, Col: f.Col}})
	}
	if f := m.Stationary; f != nil {
		l := e.stat
		if m.stationary == 0 {
			l = l.Not()
		}
		add(f, f.Value, l)
	}
	if f := m.Content; f != nil {
		l := e.cols
		if m.content == PacketContracted {
			l = l.Not()
		}
		add(f, f.Value, l)
	}
	if f := m.Mode; f != nil {
		add(f, f.Value, e.mode[m.mode])
	}
	if f := m.Accumulate; f != nil {
		l := e.seq
		if m.acc == AccInterleaved {
			l = l.Not()
		}
		add(f, f.Value, l)
	}
	if f := m.Switch; f != nil {
		l := e.sw
		if !m.sw {
			l = l.Not()
		}
		add(f, f.Value, l)
	}
	p := e.s.P
	for _, mf := range mapFields {
		d := m.Dims[mf.level]
		if d == nil {
			continue
		}
		// The skeleton's Time is the product of Time and Tile (tilings
		// split it under a skeleton): exact when both are given, a
		// divisor otherwise.
		li := satLevel(mf.level)
		exact := true
		other := 1
		switch mf.level {
		case Tile:
			li = satLevel(Time)
			if m.Dims[Time] != nil {
				continue // encoded with time
			}
			exact = false
		case Time:
			if t := m.Dims[Tile]; t != nil {
				other = 0
			} else {
				exact = false
			}
		}
		for a, ax := range p.Axes {
			f := d.Factor[a]
			text := d.Text[a]
			if other == 0 {
				f *= m.Dims[Tile].Factor[a]
				if t := m.Dims[Tile].Text[a]; t != "" {
					text = strings.TrimSpace(text + " (tile: " + t + ")")
				}
			}
			if text == "" {
				if !exact {
					continue
				}
				text = ax.Name + " absent (factor 1)"
			}
			var conds []Lit
			for _, pr := range distinct(primeFactors(ax.Size)) {
				k := 0
				for g := f; g%pr == 0; g /= pr {
					k++
				}
				var ts []Term
				for _, u := range e.units {
					if u.axis == a && u.prime == pr {
						ts = append(ts, Term{Lit: u.lits[li], Weight: 1})
					}
				}
				sum, err := c.NewSum(ts)
				if err != nil {
					return nil, err
				}
				if k > 0 {
					conds = append(conds, sum.AtLeast(k))
				}
				if exact {
					conds = append(conds, sum.AtMost(k))
				}
			}
			add(&d.MapField, text, conds...)
		}
	}
	return out, nil
}

// distinct drops repeats from a sorted list.
func distinct(xs []int) []int {
	var out []int
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// Where restricts the enumeration to the candidates agreeing with m.
func (m *MapSpec) Where(p *Problem) func(Stage, *Candidate) bool {
	n := len(p.Axes)
	eqLevel := func(c *Candidate, l Level) bool {
		d := m.Dims[l]
		if d == nil {
			return true
		}
		for a := range n {
			if c.Factor(a, l) != d.Factor[a] {
				return false
			}
		}
		return true
	}
	sameOrder := func(got []int, d *MapDim, c *Candidate, l Level) bool {
		var want []int
		for _, a := range d.Order {
			if c.Factor(a, l) > 1 {
				want = append(want, a)
			}
		}
		if len(want) != len(got) {
			return false
		}
		for i := range want {
			if want[i] != got[i] {
				return false
			}
		}
		return true
	}
	return func(st Stage, c *Candidate) bool {
		switch st {
		case StageSlices:
			return eqLevel(c, Cluster) && eqLevel(c, Slice)
		case StageStationary:
			return (m.Stationary == nil || c.Stationary == m.stationary) && (m.Switch == nil || c.Switch == m.sw)
		case StagePacket:
			return (m.Content == nil || c.Content == m.content) && (m.Mode == nil || c.Mode == m.mode) &&
				(m.Accumulate == nil || c.Acc == m.acc) && eqLevel(c, Packet)
		case StageRows:
			if !eqLevel(c, Row) {
				return false
			}
			// Time holds Tile × Time until the tilings split it.
			for a := range n {
				f := 1
				for _, l := range []Level{Tile, Time} {
					if d := m.Dims[l]; d != nil {
						f *= d.Factor[a]
					}
				}
				if m.Dims[Tile] != nil && m.Dims[Time] != nil {
					if c.Factor(a, Time) != f {
						return false
					}
				} else if c.Factor(a, Time)%f != 0 {
					return false
				}
			}
			return true
		case StageTiles:
			if !eqLevel(c, Tile) || !eqLevel(c, Time) {
				return false
			}
			if d := m.Dims[Tile]; d != nil && !sameOrder(c.Tiles(), d, c, Tile) {
				return false
			}
			return true
		case StageOrder:
			if d := m.Dims[Time]; d != nil && !sameOrder(c.TimeOrder(), d, c, Time) {
				return false
			}
			// Each digit's stride: the levels nest Tile, Cluster, Slice,
			// Time, Row, Packet within an axis (002 L483-484, L503).
			for _, mf := range mapFields {
				d := m.Dims[mf.level]
				if d == nil {
					continue
				}
				for a := range n {
					if d.Stride[a] != 0 && d.Stride[a] != c.Below(a, mf.level) {
						return false
					}
				}
			}
		}
		return true
	}
}

// explainCore minimizes the last UNSAT solve's failed assumptions by
// deletion.
func Core(e *Encoding, as []Assumption, timeout time.Duration) Conflict {
	c := e.p
	pos := map[Lit]int{}
	all := c.Rules()
	for i, r := range all {
		pos[r] = i
	}
	for i, a := range as {
		pos[a.lit] = len(all) + i
	}
	core := c.Why()
	sort.Slice(core, func(i, j int) bool { return pos[core[i]] < pos[core[j]] })
	for i := 0; i < len(core); {
		var rules, assume []Lit
		for j, l := range core {
			if j == i {
				continue
			}
			if pos[l] < len(all) {
				rules = append(rules, l)
			} else {
				assume = append(assume, l)
			}
		}
		if c.SolveRules(rules, timeout, assume...) == Unsat {
			core = append(core[:i], core[i+1:]...)
		} else {
			i++
		}
	}
	k := Conflict{core: core}
	for _, l := range core {
		if r, ok := c.RuleOf(l); ok {
			k.Rules = append(k.Rules, RuleViolation{Rule: r.ID, Cite: r.Cite, Text: r.Text})
		} else {
			k.Fields = append(k.Fields, as[pos[l]-len(all)].use)
		}
	}
	return k
}

// ErrTimeout says a solve ran out of time.
var ErrTimeout = errors.New("constraints: the solve timed out")

// Conflicts returns why mapping m is structurally impossible: each a
// minimal set of skeleton rules and mapping fields that cannot hold
// together (Core). After the first, each is found among the fields the
// earlier ones leave out, so they name independent mistakes; a conflict
// without fields means the workload itself has no skeleton. None when some
// skeleton agrees with m. Each solve is bounded by timeout (0: none);
// ErrTimeout when one ran out.
func (e *Encoding) Conflicts(m *MapSpec, timeout time.Duration) ([]Conflict, error) {
	as, err := m.Assumptions(e)
	if err != nil {
		return nil, err
	}
	var out []Conflict
	left := as
	for {
		lits := make([]Lit, len(left))
		for i, a := range left {
			lits[i] = a.lit
		}
		r := e.p.Solve(timeout, lits...)
		if r == Unknown {
			return nil, ErrTimeout
		}
		if r == Sat {
			return out, nil
		}
		k := Core(e, left, timeout)
		out = append(out, k)
		if len(k.Fields) == 0 {
			return out, nil
		}
		// The next conflict among the fields this one leaves out.
		in := map[Lit]bool{}
		for _, l := range k.core {
			in[l] = true
		}
		var rest []Assumption
		for _, a := range left {
			if !in[a.lit] {
				rest = append(rest, a)
			}
		}
		left = rest
	}
}

// Lits returns the conflict's core as literals: its rules' activation
// literals and its fields' assumptions.
func (k Conflict) Lits() []Lit { return k.core }
