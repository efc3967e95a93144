package kernel

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
)

// Recognize finds the tile loop a program is the unrolling of: a program
// with tile views (Tensor.View) whose tensors are its HBM arguments and
// result, then its views in the order its ops take them, then its on-chip
// tensors; whose ops are the steps of one body; and which Unroll gives back
// exactly (lowered configurations aside, which the steps do not share). It
// reports false for any other program, which then has no loop form.
//
// The ops of one signature (opSig: context, kind, the views or arguments
// moved, the stages' parameters) are the firings of one body op, or of two
// when their products say so (a K-chunked main chain: chunk 0 into the
// running sum, the others into ps0). The most firings of a signature is the
// loop's step count. For each choice of tiled axes with that count, each
// signature's firings are matched to a level, a phase (LoopOp.Phase) and a
// lead flag whose tiles keep the program's order: every op lies between
// the firings of an anchor (a signature that fires at every step) of the
// steps before and after it. The body is the order of the steps' ops, the
// slots the tensors each body op produces, each slot's buffer index the
// first formula (LoopSlot.Index) that fits its products.
func Recognize(p *Program) (*TileLoop, bool) {
	if p == nil {
		return nil, false
	}
	rc, ok := newRecognizer(p)
	if !ok {
		return nil, false
	}
	want, err := flatJSON(p.Tensors, p.Ops)
	if err != nil {
		return nil, false
	}
	var found *TileLoop
	try := func(l *TileLoop) bool {
		ts, flat, err := l.Unroll(rc.args)
		if err != nil {
			return false
		}
		got, err := flatJSON(ts, flat)
		if err == nil && bytes.Equal(got, want) {
			found = l
			return true
		}
		return false
	}
	for _, axes := range axisChoices(p.Axes, rc.steps) {
		if !rc.viewsFit(axes) {
			continue
		}
		for _, piped := range []bool{false, true} {
			if rc.loops(axes, piped, try) {
				return found, true
			}
		}
	}
	return nil, false
}

// recognizer holds a program's ops grouped by signature.
type recognizer struct {
	p      *Program
	args   []*Tensor
	isArg  map[string]*Tensor
	tensor map[string]*Tensor
	pos    map[string]int // a tensor's position in p.Tensors
	// group is each op's signature group; members each group's ops, in
	// program order.
	group   []int
	members [][]int
	steps   int
}

func newRecognizer(p *Program) (*recognizer, bool) {
	rc := &recognizer{p: p, isArg: map[string]*Tensor{}, tensor: map[string]*Tensor{}, pos: map[string]int{}}
	views := 0
	for i, t := range p.Tensors {
		if t.View != "" {
			views++
		}
		if t.Mem == HBM && t.Role != Intermediate {
			rc.args = append(rc.args, t)
			rc.isArg[t.Name] = t
		}
		rc.tensor[t.Name] = t
		rc.pos[t.Name] = i
	}
	if views == 0 {
		return nil, false
	}
	ids := map[string]int{}
	rc.group = make([]int, len(p.Ops))
	for i, op := range p.Ops {
		s := opSig(p, rc.args, op)
		g, ok := ids[s]
		if !ok {
			g = len(rc.members)
			ids[s] = g
			rc.members = append(rc.members, nil)
		}
		rc.group[i] = g
		rc.members[g] = append(rc.members[g], i)
		rc.steps = max(rc.steps, len(rc.members[g]))
	}
	return rc, rc.steps >= 2
}

// viewsFit reports whether every tile view of the program has the mapping
// of its tensor's tile over the axes it holds (loopView): a cheap test
// that rules out most choices of axes before their loops are built.
func (rc *recognizer) viewsFit(axes []LoopAxis) bool {
	l := &TileLoop{Axes: axes}
	want := map[string]string{}
	for _, t := range rc.p.Tensors {
		if t.View == "" {
			continue
		}
		w, ok := want[t.View]
		if !ok {
			v, fits := loopView(l, rc.isArg[t.View], 0)
			if !fits {
				return false
			}
			w = v.Maps[len(v.Maps)-1].String()
			want[t.View] = w
		}
		if t.Element == nil || t.Element.String() != w {
			return false
		}
	}
	return true
}

// pattern is when the ops of one signature fire: at the tiles of one phase
// of a level, or split into two body ops, PhaseFirst and PhaseRest of a
// level (PhaseLast of a level of two tiles); lead or not.
type pattern struct {
	level  int
	phases []Phase
	lead   bool
	tiles  []int  // the tiles it fires at, in order
	which  []int8 // for each, the index of its phase in phases
}

// patterns lists the patterns of a loop over axes, in the order Recognize
// prefers them among those that put an op in the same steps: the phases of
// the innermost levels first, PhaseFirst before PhaseLast, PhaseRest and
// PhaseMiddle, the splits last; a lead op (PhaseFirst only) after the op
// that is not.
func patterns(l *TileLoop, piped bool) []pattern {
	n := len(l.Axes)
	var base []pattern
	for lv := n; lv >= 0; lv-- {
		for _, ph := range []Phase{PhaseFirst, PhaseLast, PhaseRest, PhaseMiddle} {
			if l.Stride(lv) >= ph.MinStride() {
				base = append(base, pattern{level: lv, phases: []Phase{ph}})
			}
		}
	}
	// The splits: PhaseFirst and the other tiles of the level, PhaseRest
	// (PhaseLast of a level of 2 tiles).
	for lv := n - 1; lv >= 0; lv-- {
		rest := PhaseRest
		if l.Stride(lv) < rest.MinStride() {
			rest = PhaseLast
		}
		base = append(base, pattern{level: lv, phases: []Phase{PhaseFirst, rest}})
	}
	var out []pattern
	for _, pt := range base {
		for t := range l.Steps() {
			for k, ph := range pt.phases {
				if l.Fires(&LoopOp{Level: pt.level, Phase: ph}, t) {
					pt.tiles = append(pt.tiles, t)
					pt.which = append(pt.which, int8(k))
					break
				}
			}
		}
		out = append(out, pt)
		// A lead op loads the next tile ahead: at the first tile of its
		// level only (002 L4151-4158).
		if piped && len(pt.phases) == 1 && pt.phases[0] == PhaseFirst {
			lead := pt
			lead.lead = true
			out = append(out, lead)
		}
	}
	return out
}

// maxCombos bounds the choices of patterns Recognize tries per anchor.
const maxCombos = 64

// loops builds the loops over axes whose steps keep the program's order
// and calls try on each until it reports true.
func (rc *recognizer) loops(axes []LoopAxis, piped bool, try func(*TileLoop) bool) bool {
	l := &TileLoop{Axes: axes}
	steps := l.Steps()
	pats := patterns(l, piped)
	last := steps - 1 // the last step
	shift := func(lead bool) int {
		if piped && !lead {
			return 1
		}
		return 0
	}
	if piped {
		last = steps
	}
	anchorsBefore := make([]int, len(rc.p.Ops))
	for a, ms := range rc.members {
		if len(ms) != steps {
			continue
		}
		for _, aLead := range []bool{false, true} {
			if aLead && !piped {
				continue
			}
			// The anchor's k-th firing is in step k + off; an op between
			// its firings k-1 and k is in a step between theirs.
			off := shift(aLead)
			k := 0
			for i := range rc.p.Ops {
				anchorsBefore[i] = k
				if rc.group[i] == a {
					k++
				}
			}
			// Each group's patterns that fit, those that put its ops in
			// the earliest steps first (an op between two anchors belongs
			// to the step before: a split reduce's pass after its chunk's
			// main chain, not before the next chunk's loads).
			cands := make([][]pattern, len(rc.members))
			ok := true
			for g, ms := range rc.members {
				var early []int
				for _, pt := range pats {
					if len(pt.tiles) != len(ms) || g == a && (pt.lead != aLead || len(pt.tiles) != steps) {
						continue
					}
					fits, sum := true, 0
					for k, i := range ms {
						st := pt.tiles[k] + shift(pt.lead)
						lo, hi := 0, last
						if b := anchorsBefore[i]; b > 0 {
							lo = b - 1 + off
						}
						if b := anchorsBefore[i]; b < steps {
							hi = b + off
						}
						if st < lo || st > hi {
							fits = false
							break
						}
						sum += st
					}
					if fits {
						cands[g] = append(cands[g], pt)
						early = append(early, sum)
					}
				}
				if len(cands[g]) == 0 {
					ok = false
					break
				}
				sort.Stable(byEarly{cands[g], early})
			}
			if !ok {
				continue
			}
			// Every combination of the candidates, the first ones first.
			pick := make([]int, len(cands))
			for n := 0; n < maxCombos; n++ {
				combo := make([]pattern, len(cands))
				for g := range cands {
					combo[g] = cands[g][pick[g]]
				}
				if lp := rc.build(axes, combo, piped); lp != nil && try(lp) {
					return true
				}
				g := len(pick) - 1
				for ; g >= 0; g-- {
					if pick[g]++; pick[g] < len(cands[g]) {
						break
					}
					pick[g] = 0
				}
				if g < 0 {
					break
				}
			}
		}
	}
	return false
}

// byEarly sorts patterns by the sum of their ops' steps.
type byEarly struct {
	p   []pattern
	sum []int
}

func (b byEarly) Len() int           { return len(b.p) }
func (b byEarly) Less(i, j int) bool { return b.sum[i] < b.sum[j] }
func (b byEarly) Swap(i, j int) {
	b.p[i], b.p[j] = b.p[j], b.p[i]
	b.sum[i], b.sum[j] = b.sum[j], b.sum[i]
}

// bodyOp is a body op being recognized: its group and phase, and its
// firings.
type bodyOp struct {
	level   int
	phase   Phase
	lead    bool
	first   int   // its first firing's op index
	firings []int // op indices
	tiles   []int // the tile of each firing
}

// build makes the loop of a choice of patterns, one per group: nil when
// its steps do not keep the program's order, its body has no order, or a
// slot has no buffer index.
func (rc *recognizer) build(axes []LoopAxis, combo []pattern, piped bool) *TileLoop {
	l := &TileLoop{Axes: axes}
	ops := rc.p.Ops
	// The body ops, in the order of their first firings.
	ids := map[[2]int]int{}
	var body []*bodyOp
	of := make([]int, len(ops))
	step := make([]int, len(ops))
	leads := false
	for i := range ops {
		g := rc.group[i]
		pt := combo[g]
		k := 0
		for rc.members[g][k] != i {
			k++
		}
		w := int(pt.which[k])
		id, ok := ids[[2]int{g, w}]
		if !ok {
			id = len(body)
			ids[[2]int{g, w}] = id
			body = append(body, &bodyOp{level: pt.level, phase: pt.phases[w], lead: pt.lead, first: i})
		}
		b := body[id]
		b.firings = append(b.firings, i)
		b.tiles = append(b.tiles, pt.tiles[k])
		of[i] = id
		step[i] = pt.tiles[k]
		if piped && !pt.lead {
			step[i]++
		}
		leads = leads || pt.lead
		if i > 0 && step[i] < step[i-1] {
			return nil
		}
	}
	if piped && !leads {
		return nil // the loop without lead ops was tried
	}
	order, ok := bodyOrder(len(body), of, step, body)
	if !ok {
		return nil
	}
	// Slots: the tensors each body op produces, joined when two body ops
	// produce one tensor (the running sum of K chunks).
	produced := func(o *Op) string {
		nm := o.Dst
		if o.Kind == OpChain {
			nm = ""
			if len(o.Stages) > 0 {
				nm = o.Stages[len(o.Stages)-1].Tensor
			}
		}
		if t := rc.tensor[nm]; t == nil || t.View != "" || rc.isArg[nm] != nil {
			return ""
		}
		return nm
	}
	root := make([]int, len(body))
	for i := range root {
		root[i] = i
	}
	find := func(i int) int {
		for root[i] != i {
			i = root[i]
		}
		return i
	}
	owner := map[string]int{}
	for id, b := range body {
		for _, i := range b.firings {
			nm := produced(ops[i])
			if nm == "" {
				continue
			}
			if o, ok := owner[nm]; ok {
				if x, y := find(o), find(id); x != y {
					root[max(x, y)] = min(x, y)
				}
				continue
			}
			owner[nm] = id
		}
	}
	slotOf := map[string]string{} // tensor → slot
	for id := range body {
		if find(id) != id {
			continue
		}
		var producers []*bodyOp
		for j, b := range body {
			if find(j) == id {
				producers = append(producers, b)
			}
		}
		s, ok := rc.slot(l, producers, owner, produced)
		if !ok {
			return nil
		}
		if s == nil {
			continue // produces no on-chip tensor
		}
		for _, t := range s.Tensors {
			slotOf[t.Name] = s.Name
		}
		l.Slots = append(l.Slots, s)
	}
	// The slots in the program's order of their tensors (the builder's,
	// which Unroll keeps).
	sort.SliceStable(l.Slots, func(a, b int) bool { return rc.pos[l.Slots[a].Tensors[0].Name] < rc.pos[l.Slots[b].Tensors[0].Name] })
	rename := func(nm string) string {
		if s, ok := slotOf[nm]; ok {
			return s
		}
		return nm
	}
	for _, id := range order {
		b := body[id]
		op := ops[b.first]
		c := *op
		// Views.
		for _, nm := range []*string{&c.Src, &c.Dst} {
			t := rc.tensor[*nm]
			if t == nil || t.View == "" {
				continue
			}
			same := 0
			for _, w := range l.Views {
				if w.Base == t.View {
					same++
				}
			}
			v, ok := loopView(l, rc.isArg[t.View], same)
			if !ok {
				return nil
			}
			l.Views = append(l.Views, v)
			*nm = v.Name
		}
		if c.Kind != OpChain {
			if t := rc.tensor[c.Src]; t != nil && t.View == "" {
				c.Src = rename(c.Src)
			}
			if t := rc.tensor[c.Dst]; t != nil && t.View == "" {
				c.Dst = rename(c.Dst)
			}
		}
		c.DMA = nil
		if c.Kind == OpChain {
			c.Stages = nil
			for _, st := range op.Stages {
				s := *st
				s.Config = nil
				s.Tensor = rename(s.Tensor)
				if bi, err := ParseBeginInterleave(s.Param); s.Kind == StBegin && err == nil && bi != nil {
					bi.Tensor = rename(bi.Tensor)
					s.Param = bi.String()
				}
				c.Stages = append(c.Stages, &s)
			}
		}
		l.Body = append(l.Body, &LoopOp{Op: &c, Level: b.level, Lead: b.lead, Phase: b.phase})
	}
	return l
}

// bodyOrder orders the body ops so that every step's ops keep their
// program order: a topological order of "a before b in some step", the op
// that fires first in the program first among the free ones. It reports
// false when two steps order two ops both ways.
func bodyOrder(n int, of, step []int, body []*bodyOp) ([]int, bool) {
	before := make([][]bool, n)
	for i := range before {
		before[i] = make([]bool, n)
	}
	indeg := make([]int, n)
	for i := 1; i < len(of); i++ {
		a, b := of[i-1], of[i]
		if step[i] != step[i-1] || a == b || before[a][b] {
			continue
		}
		before[a][b] = true
		indeg[b]++
	}
	placed := make([]bool, n)
	var order []int
	for len(order) < n {
		next := -1
		for j := range n {
			if !placed[j] && indeg[j] == 0 && (next < 0 || body[j].first < body[next].first) {
				next = j
			}
		}
		if next < 0 {
			return nil, false
		}
		placed[next] = true
		order = append(order, next)
		for j := range n {
			if before[next][j] {
				indeg[j]--
			}
		}
	}
	return order, true
}

// slot is the slot of the tensors a set of body ops produce, with the
// first buffer index (LoopSlot.Index) that fits their products: for one
// producer, a double buffer alternating with its fires (Stride the stride
// of its level); for several (a running sum), also a buffer alternating
// with a tile over an inner level or within an outer one (Period). It
// returns nil and true when they produce no on-chip tensor.
func (rc *recognizer) slot(l *TileLoop, producers []*bodyOp, owner map[string]int, produced func(*Op) string) (*LoopSlot, bool) {
	type event struct {
		tile int
		name string
	}
	var events []event
	var names []string
	seen := map[string]bool{}
	first := producers[0]
	for _, b := range producers {
		if b.first < first.first {
			first = b
		}
		for k, i := range b.firings {
			nm := produced(rc.p.Ops[i])
			if nm == "" {
				continue
			}
			events = append(events, event{b.tiles[k], nm})
			if !seen[nm] {
				seen[nm] = true
				names = append(names, nm)
			}
		}
	}
	if len(names) == 0 {
		return nil, true
	}
	n := len(l.Axes)
	type formula struct{ stride, period int }
	forms := []formula{{l.Stride(first.level), 0}}
	if len(producers) > 1 {
		for lv := n; lv >= 0; lv-- {
			forms = append(forms, formula{l.Stride(lv), 0})
		}
		for lp := 1; lp < n; lp++ {
			for ls := n; ls > lp; ls-- {
				forms = append(forms, formula{l.Stride(ls), l.Stride(lp)})
			}
		}
	}
	// Double buffers the loop declares but does not reach (a tensor loaded
	// once of a double-buffered loop): x0 with x1, x2, ... declared, which
	// no op produces.
	all := names
	if pre, ok := strings.CutSuffix(names[len(names)-1], strconv.Itoa(len(names)-1)); ok && pre != "" {
		for k := len(names); ; k++ {
			nm := pre + strconv.Itoa(k)
			if _, made := owner[nm]; made || rc.tensor[nm] == nil {
				break
			}
			all = append(all, nm)
		}
	}
	sizes := []int{len(all)}
	if len(all) > len(names) {
		sizes = append(sizes, len(names))
	}
	for _, f := range forms {
		for _, m := range sizes {
			s := &LoopSlot{Stride: f.stride, Period: f.period, Tensors: make([]*Tensor, m)}
			got := make([]string, m)
			ok := true
			for _, e := range events {
				k := s.Index(e.tile)
				if got[k] == "" {
					got[k] = e.name
				} else if got[k] != e.name {
					ok = false
					break
				}
			}
			used := map[string]bool{}
			for k := range got {
				if !ok {
					break
				}
				if got[k] == "" && k < len(all) {
					got[k] = all[k]
				}
				ok = got[k] != "" && !used[got[k]]
				used[got[k]] = true
				s.Tensors[k] = rc.tensor[got[k]]
			}
			if !ok {
				continue
			}
			name, ok := slotName(got)
			if !ok {
				return nil, false
			}
			if t := rc.tensor[name]; t != nil && !used[name] {
				return nil, false // the slot's name is another tensor's
			}
			s.Name = name
			return s, true
		}
	}
	return nil, false
}

// slotName is the name of a slot of the tensors names, the inverse of
// SlotTensorName: the name of a single tensor; for buffers `<p>0`, `<p>1`,
// ... (the builder's double buffers in0_dm0, in0_dm1) the prefix p; for
// buffers `<p>j`, `<p>j+1`, ... with j ≥ 1 (a running sum out_ps1,
// out_ps2) the first name. The prefix ends in no digit.
func slotName(names []string) (string, bool) {
	if len(names) == 1 {
		return names[0], true
	}
	prefix, j, ok := splitNumber(names[0])
	if !ok {
		return "", false
	}
	for k, nm := range names {
		if nm != prefix+strconv.Itoa(j+k) {
			return "", false
		}
	}
	if j == 0 {
		return prefix, true
	}
	return names[0], true
}

// splitNumber splits a name into a prefix that ends in no digit and the
// number after it (no leading zero but for 0 itself).
func splitNumber(s string) (string, int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	digits := s[i:]
	if i == 0 || digits == "" || len(digits) > 1 && digits[0] == '0' || len(digits) > 9 {
		return "", 0, false
	}
	v, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, false
	}
	return s[:i], v, true
}

// SlotTensorName is the name of the k-th of the m tensors of the slot
// named slot: the slot's own name for a single tensor; for a slot named
// `<p><j>` (a number j: a running sum out_ps1 of out_ps1, out_ps2) `<p><j
// + k>`; for any other `<slot><k>` (in0_dm of in0_dm0, in0_dm1). The
// Rust reader names a tile loop's buffers by it (docs/spec-decisions.md
// "Emitted Rust: tile loops").
func SlotTensorName(slot string, k, m int) string {
	if m == 1 {
		return slot
	}
	if prefix, j, ok := splitNumber(slot); ok {
		return prefix + strconv.Itoa(j+k)
	}
	return slot + strconv.Itoa(k)
}
