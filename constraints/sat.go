package constraints

import (
	"errors"
	"math"
)

// The mapspace's skeleton as a SAT problem (issue §2). A skeleton is the
// part of a candidate that fixes its spatial shape: the stationary input,
// the packet's content and mode, the accumulation kind, and every axis's
// factors at Cluster, Slice, Row, Packet and Time. The rest of a candidate
// (tiling, time order, broadcast place, DM layouts) is enumerated under a
// skeleton by Space.EnumerateWhere.
//
// Factors are encoded by prime-power units: an axis of size Π p^k has k
// units of each prime p, each placed at exactly one level (one-hot), units
// of one prime in non-decreasing level order (so a factorization has one
// encoding); the factor at a level is the product of its units. Hardware
// sizes are weighted sums of unit literals in the log domain (sorting
// networks, logic.CardSort). Where a rule is not exactly linear in the log
// domain (a prime other than 2), the encoding over-approximates the space
// and decoding checks the skeleton against the enumerator, blocking it when
// no candidate has it.

// satLevels are the levels a skeleton places units at, in unit order.
var satLevels = [...]Level{Cluster, Slice, Row, Packet, Time}

const nSatLevels = len(satLevels)

// unit is one prime-power unit of an axis's size.
type unit struct {
	axis  int
	prime int
	lits  [nSatLevels]Lit
}

// Skeleton is a decoded SAT model.
type Skeleton struct {
	stationary uint8
	sw         bool
	content    PacketContent
	mode       PacketMode
	acc        Accumulation
	split      [MaxAxes][NumLevels]int32
}

// satSpace is a Space's skeleton encoding.
type Encoding struct {
	s *Space
	p *Formula
	// stat is true when input 1 is stationary; cols when the packet holds
	// columns; seq when the accumulation is Sequential; sw when the
	// streamed operand is switched (Candidate.Switch).
	stat, cols, seq, sw Lit
	mode                [NumPacketModes]Lit
	units               []unit
	// scale multiplies log2 weights (1 when every size is a power of two).
	scale int
	// timeSum sums the units at Time with weights rounded up, and
	// unitWeight is that weight summed over every unit: the spatial units
	// (Cluster, Slice, Row, Packet) weigh unitWeight − timeSum, each unit
	// being at exactly one level (SPACE-UNITS), which spares the encoding
	// a sum over four literals a unit. computeConst is ⌊scale·log2 Π
	// sizes⌋.
	timeSum      *Sum
	unitWeight   int
	computeConst int
	// repl[t] sums the Cluster and Slice units of the axes input t lacks,
	// weights rounded down.
	repl [2]*Sum
	// run[t] adds to repl[t] the Cluster and Slice units of input t's
	// innermost HBM axis when a short run can occur (Space.shortRun), and
	// runConst[t] is ⌊scale·log2(request / bytes of that axis)⌋ (< 0);
	// nil otherwise.
	run      [2]*Sum
	runConst [2]int
	// decision are the literals a skeleton is read from.
	decision []Lit
}

// primeFactors returns n's prime factors with multiplicity, ascending.
func primeFactors(n int) []int {
	var out []int
	for p := 2; p*p <= n; p++ {
		for n%p == 0 {
			out = append(out, p)
			n /= p
		}
	}
	if n > 1 {
		out = append(out, n)
	}
	return out
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// ErrNoEncoding says the SAT encoding does not cover a space.
var ErrNoEncoding = errors.New("search: the SAT encoding needs power-of-two packet, row and cluster sizes")

// The skeleton rules, each a group of clauses guarded by its literal.
var (
	ruleSpaceUnits = Rule{ID: "SPACE-FACTORS", Cite: "002 L129-132, L147",
		Text: "each axis is split into factors over Cluster, Slice, Row, Packet and Time whose product is its size"}
	ruleSpaceRoles = Rule{ID: "SPACE-ROLES", Cite: "002 L104-120, L4099-4105, L4384-4392",
		Text: "contracted axes go to Packet and Time, to Slice where the Inter-Slice Block adds their partial sums (f32 or i32 accumulators, without a switch, 002 L6583-6755), and to Cluster where the cluster reduce adds them (f32 or i32 accumulators, 002 L7382-7610); output axes to Cluster, Slice and Time; the stationary operand's own axes also to Row; a packet of columns holds the streamed operand's output axes (and contracted axes innermost when no full contracted packet exists, 002 L4392)"}
	ruleSpaceClusters = Rule{ID: "SPACE-CLUSTERS", Cite: "002 L130, L317, L7382-7610",
		Text: "a chip has 2 clusters: at most that many on the output axes, or on a contracted axis the cluster reduce adds"}
	ruleSpaceSlices = Rule{ID: "SPACE-SLICES", Cite: "002 L131, L318",
		Text: "a cluster has 256 slices: the slice factors multiply to at most 256"}
	ruleSpaceRows = Rule{ID: "SPACE-ROWS", Cite: "002 L132, L4162-4167",
		Text: "Row::SIZE is 1, 2, 4 or 8"}
	ruleSpacePacket = Rule{ID: "SPACE-PACKET", Cite: "002 L4099, L3011, L3916-3927",
		Text: "a computation packet holds 64 bytes (mac_width), or one 32-byte flit zero-padded when no full packet divides the contracted axes"}
	ruleSpaceTRF = Rule{ID: "SPACE-TRF", Cite: "002 L4118, L4148, L4151-4155",
		Text: "a TRF Row holds 8 KB × 8 / Row::SIZE; the stationary operand's contracted axes, never tiled, must fit one Row"}
	ruleSpaceDM = Rule{ID: "SPACE-DM", Cite: "002 L138",
		Text: "a slice's DM holds 512 KB: one tile of each tensor, its contracted axes whole and its Row and Packet factors, must fit"}
	ruleSpaceRun = Rule{ID: "SPACE-RUN", Cite: "002 L2425-2427, L2836-2837",
		Text: "a slice's share of an input's innermost HBM axis is a run that reaches its DM alone: a whole number of 8-byte HBM → DM packets"}
	ruleSpaceAcc = Rule{ID: "SPACE-ACCUMULATE", Cite: "002 L4447-4492",
		Text: "Sequential accumulation only with a packet of columns"}
)

// newSatSpace encodes s's skeletons.
func NewEncoding(s *Space) (*Encoding, error) {
	p := s.P
	clusters := s.clusters
	if !isPow2(s.PacketElems(Single)) || !isPow2(s.PacketElems(Half)) || !isPow2(clusters) || !isPow2(s.slices) {
		return nil, ErrNoEncoding
	}
	for _, r := range s.rows {
		if !isPow2(r) {
			return nil, ErrNoEncoding
		}
	}
	e := &Encoding{s: s, p: NewFormula(), scale: 1}
	for _, ax := range p.Axes {
		if !isPow2(ax.Size) {
			e.scale = 4
		}
	}
	c := e.p
	e.stat, e.cols, e.seq, e.sw = c.Var(), c.Var(), c.Var(), c.Var()
	for m := range e.mode {
		e.mode[m] = c.Var()
	}
	e.decision = append(e.decision, e.stat, e.cols, e.seq, e.sw)
	// shared[t]: input t is the streamed operand of a switched skeleton,
	// shared by its ring instead of copied into each slice
	// (Candidate.Switch): sw ∧ (t streamed).
	var shared [2]Lit
	for t := range 2 {
		streamed := e.stat // input 1 stationary: input 0 streams
		if t == 1 {
			streamed = e.stat.Not()
		}
		shared[t] = c.Var()
		c.Implies(0, shared[t], e.sw)
		c.Implies(0, shared[t], streamed)
		c.Clause(0, e.sw.Not(), streamed.Not(), shared[t])
	}
	e.decision = append(e.decision, e.mode[:]...)

	rUnits := c.Rule(ruleSpaceUnits)
	rRoles := c.Rule(ruleSpaceRoles)
	rClusters := c.Rule(ruleSpaceClusters)
	rSlices := c.Rule(ruleSpaceSlices)
	rRows := c.Rule(ruleSpaceRows)
	rPacket := c.Rule(ruleSpacePacket)
	rAcc := c.Rule(ruleSpaceAcc)

	c.ExactlyOne(rPacket, e.mode[:])
	c.Implies(rAcc, e.seq, e.cols)
	c.Implies(rPacket, e.mode[Half], e.cols.Not())
	// Half only when no full packet divides the contracted axes (the
	// enumerator's canonical choice, Space.packets).
	var contracted []int
	for a, ax := range p.Axes {
		if ax.Class == Contracted {
			contracted = append(contracted, a)
		}
	}
	full := len(packetSplits(contracted, func(a int) int { return p.Axes[a].Size }, s.PacketElems(Single))) > 0
	// With contracted axes split across slices (or clusters) a slice's
	// share may have no full packet though the axes have one: Half stays
	// open, and the enumerator decides per skeleton (decode checks it).
	// Split across the clusters only, it stays open only when some
	// contracted axis halved has none.
	half := !full || s.splitK
	if full && !s.splitK && s.clusterK {
		for _, a := range contracted {
			if p.Axes[a].Size%clusters != 0 {
				continue
			}
			share := func(b int) int {
				if b == a {
					return p.Axes[b].Size / clusters
				}
				return p.Axes[b].Size
			}
			half = half || len(packetSplits(contracted, share, s.PacketElems(Single))) == 0
		}
	}
	if !half {
		c.Clause(rPacket, e.mode[Half].Not())
	}

	isStat := func(owner int) Lit {
		if owner == 1 {
			return e.stat
		}
		return e.stat.Not()
	}
	var clusterT, sliceT, rowT, packetT, timeT []Term
	// runSplitT[t] holds the 2-units of input t's innermost HBM axis at
	// Cluster and Slice (RunsFit).
	var runSplitT [2][]Term
	var runAxis, runUnits [2]int
	var runOK [2]bool
	for t := range 2 {
		runAxis[t], runUnits[t], runOK[t] = s.runUnits(t)
	}
	// splitT holds, for each contracted unit, its Slice literal negated
	// (SplitK) and its Cluster literal negated (ClusterK), each weighted
	// ⌈log2 p⌉, and splitW the weights' sum: splitT + x ≤ k + splitW is
	// x ≤ k + the weight of the units split across slices or clusters,
	// which shrink every floor the TRF and DM clauses bound (a unit sits
	// at one level, so one of its two literals is false at most).
	var splitT []Term
	splitW := 0
	var dmT [NumTensors][]Term
	operands := [NumTensors]*Operand{&p.In[0], &p.In[1], &p.Out}
	var replT, runT [2][]Term
	var inner [2]int
	var short [2]bool
	for t := range 2 {
		inner[t], short[t] = s.ShortRun(t)
	}
	lvl := func(l Level) int {
		for i, x := range satLevels {
			if x == l {
				return i
			}
		}
		return -1
	}
	logW := func(prime int, up bool) int {
		x := float64(e.scale) * math.Log2(float64(prime))
		if up {
			return int(math.Ceil(x - 1e-9))
		}
		return int(math.Floor(x + 1e-9))
	}
	sizeLog := 0.0
	for a, ax := range p.Axes {
		sizeLog += math.Log2(float64(ax.Size))
		var prev *unit
		for _, pr := range primeFactors(ax.Size) {
			u := unit{axis: a, prime: pr}
			for i := range u.lits {
				u.lits[i] = c.Var()
			}
			e.decision = append(e.decision, u.lits[:]...)
			c.ExactlyOne(rUnits, u.lits[:])
			if prev != nil && prev.prime == pr {
				// Non-decreasing levels: unit i+1 is not below unit i.
				for i := range nSatLevels {
					for j := i + 1; j < nSatLevels; j++ {
						c.Clause(rUnits, prev.lits[j].Not(), u.lits[i].Not())
					}
				}
			}
			// Roles: the level table (levels.go), a free axis's as its
			// operand is stationary or streamed.
			for _, l := range satLevels {
				at := u.lits[lvl(l)]
				switch ax.Class {
				case Contracted:
					s.roleClauses(c, rRoles, RoleC, l, at, e.cols)
					if l == Slice && s.splitK {
						// A split candidate does not switch (SplitK).
						c.Clause(rRoles, at.Not(), e.sw.Not())
						w := int(math.Ceil(math.Log2(float64(pr)) - 1e-9))
						splitT = append(splitT, Term{Lit: at.Not(), Weight: w})
						splitW += w
					}
					if l == Cluster && s.clusterK {
						w := int(math.Ceil(math.Log2(float64(pr)) - 1e-9))
						splitT = append(splitT, Term{Lit: at.Not(), Weight: w})
						splitW += w
					}
				case Batch:
					s.roleClauses(c, rRoles, RoleB, l, at, e.cols)
				default:
					owner := 0
					if ax.Class == Free1 {
						owner = 1
					}
					st := isStat(owner)
					s.roleClauses(c, rRoles, RoleFW, l, at, e.cols, st.Not())
					s.roleClauses(c, rRoles, RoleFX, l, at, e.cols, st)
				}
			}
			at := func(l Level) Lit { return u.lits[lvl(l)] }
			// Hardware sizes are powers of two: only 2-units at Cluster,
			// Row and Packet.
			if pr != 2 {
				c.Clause(rClusters, at(Cluster).Not())
				c.Clause(rRows, at(Row).Not())
				c.Clause(rPacket, at(Packet).Not())
			} else {
				clusterT = append(clusterT, Term{Lit: at(Cluster), Weight: 1})
				rowT = append(rowT, Term{Lit: at(Row), Weight: 1})
				packetT = append(packetT, Term{Lit: at(Packet), Weight: 1})
				if ax.Class != Contracted {
					for t, o := range operands {
						if o.Has(ax.Name) {
							dmT[t] = append(dmT[t],
								Term{Lit: at(Row), Weight: 1},
								Term{Lit: at(Packet), Weight: 1})
						}
					}
				}
			}
			for t := range 2 {
				if runOK[t] && a == runAxis[t] && pr == 2 {
					runSplitT[t] = append(runSplitT[t], Term{Lit: at(Cluster), Weight: 1}, Term{Lit: at(Slice), Weight: 1})
				}
			}
			sliceT = append(sliceT, Term{Lit: at(Slice), Weight: logW(pr, false)})
			timeT = append(timeT, Term{Lit: at(Time), Weight: logW(pr, true)})
			e.unitWeight += logW(pr, true)
			for t := range 2 {
				for _, l := range []Level{Cluster, Slice} {
					term := Term{Lit: at(l), Weight: logW(pr, false)}
					if l == Slice && !p.In[t].Has(ax.Name) {
						// A slice unit of an axis t lacks replicates t
						// unless t is shared by the ring: y = at ∧ ¬shared.
						y := c.Var()
						c.Implies(0, y, at(l))
						c.Implies(0, y, shared[t].Not())
						c.Clause(0, at(l).Not(), shared[t], y)
						term.Lit = y
					}
					if !p.In[t].Has(ax.Name) {
						replT[t] = append(replT[t], term)
						runT[t] = append(runT[t], term)
					} else if short[t] && a == inner[t] && ax.Class != Contracted {
						// (A contracted axis's slice digits are innermost:
						// neighbouring slices' runs are one run.)
						runT[t] = append(runT[t], term)
					}
				}
			}
			e.units = append(e.units, u)
			prev = &e.units[len(e.units)-1]
		}
	}
	sum := func(ts []Term) (*Sum, error) { return c.NewSum(ts) }
	cl, err := sum(clusterT)
	if err != nil {
		return nil, err
	}
	c.Clause(rClusters, cl.AtMost(log2(clusters)))
	sl, err := sum(sliceT)
	if err != nil {
		return nil, err
	}
	c.Clause(rSlices, sl.AtMost(e.scale*log2(s.slices)))
	rw, err := sum(rowT)
	if err != nil {
		return nil, err
	}
	c.Clause(rRows, rw.AtMost(log2(s.rows[len(s.rows)-1])))
	switch {
	case s.splitK || s.clusterK:
		// Row units, plus the contracted units kept whole, within the
		// room of a Row holding the contracted axes whole.
		rs, err := sum(append(append([]Term(nil), rowT...), splitT...))
		if err != nil {
			return nil, err
		}
		if k := s.TRFUnitsSplit() + splitW; k < 0 {
			c.Clause(c.Rule(ruleSpaceTRF))
		} else if k < rs.Max() {
			c.Clause(c.Rule(ruleSpaceTRF), rs.AtMost(k))
		}
	default:
		if r := s.MaxRows(); r == 0 {
			c.Clause(c.Rule(ruleSpaceTRF)) // not even one Row fits
		} else if r < s.rows[len(s.rows)-1] {
			// No tiling makes a Row hold less than the contracted axes.
			c.Clause(c.Rule(ruleSpaceTRF), rw.AtMost(log2(r)))
		}
	}
	pk, err := sum(packetT)
	if err != nil {
		return nil, err
	}
	// A tile holds at least a slice's Row and Packet factors of each
	// tensor's output axes and its contracted axes whole (Space.dmFloor).
	// A switched skeleton's streamed tile is shared by a ring of up to
	// max_ring_size slices (dmUnitsOf's ring).
	rDM := c.Rule(ruleSpaceDM)
	for t := range NumTensors {
		for _, sw := range []bool{false, true} {
			unless := e.sw // the bound of the unswitched skeletons
			ring := 1
			if sw {
				unless, ring = e.sw.Not(), s.Spec.Switch.MaxRingSize.Value
			}
			terms := dmT[t]
			k := s.DMUnitsOf(t, ring)
			if (s.splitK || s.clusterK) && t != TensorOut {
				// The inputs hold every contracted axis: their floors
				// shrink with the units split across slices.
				terms = append(append([]Term(nil), dmT[t]...), splitT...)
				k = s.DMUnitsSplit(t, ring) + splitW
			}
			switch {
			case k < 0:
				c.Clause(rDM, unless)
			case len(terms) > 0 && k < len(terms)*maxWeight(terms):
				d, err := sum(terms)
				if err != nil {
					return nil, err
				}
				if k < d.Max() {
					c.Clause(rDM, unless, d.AtMost(k))
				}
			}
		}
	}
	// Runs of whole HBM → DM packets (RunsFit), the switched streamed
	// input aside (shared).
	rRun := c.Rule(ruleSpaceRun)
	for t := range 2 {
		ts := runSplitT[t]
		switch {
		case !runOK[t] || len(ts) == 0:
		case runUnits[t] < 0:
			// Any split of the axis leaves runs below a packet.
			for _, x := range ts {
				c.Clause(rRun, shared[t], x.Lit.Not())
			}
		case runUnits[t] < len(ts):
			d, err := sum(ts)
			if err != nil {
				return nil, err
			}
			c.Clause(rRun, shared[t], d.AtMost(runUnits[t]))
		}
	}
	for m := range NumPacketModes {
		k := log2(s.PacketElems(m))
		c.Clause(rPacket, e.mode[m].Not(), pk.AtLeast(k))
		c.Clause(rPacket, e.mode[m].Not(), pk.AtMost(k))
	}
	if e.timeSum, err = sum(timeT); err != nil {
		return nil, err
	}
	e.computeConst = int(math.Floor(float64(e.scale)*sizeLog + 1e-9))
	for t := range 2 {
		if e.repl[t], err = sum(replT[t]); err != nil {
			return nil, err
		}
		if short[t] {
			if e.run[t], err = sum(runT[t]); err != nil {
				return nil, err
			}
			req := float64(s.Spec.DMA.RequestBytes.Value)
			axisBytes := float64(p.Axes[inner[t]].Size) * s.ElemBytes(t)
			e.runConst[t] = int(math.Floor(float64(e.scale)*math.Log2(req/axisBytes) + 1e-9))
		}
	}
	return e, nil
}

// log2 returns ⌊log2 n⌋.
func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// Decode reads the last model's skeleton.
func (e *Encoding) Decode() Skeleton {
	var k Skeleton
	c := e.p
	if c.Value(e.stat) {
		k.stationary = 1
	}
	if c.Value(e.cols) {
		k.content = PacketColumns
	}
	if c.Value(e.seq) {
		k.acc = AccSequential
	}
	k.sw = c.Value(e.sw)
	for m, l := range e.mode {
		if c.Value(l) {
			k.mode = PacketMode(m)
		}
	}
	for a := range MaxAxes {
		for l := range NumLevels {
			k.split[a][l] = 1
		}
	}
	for _, u := range e.units {
		for i, l := range u.lits {
			if c.Value(l) {
				k.split[u.axis][satLevels[i]] *= int32(u.prime)
			}
		}
	}
	return k
}

// PlacementClause returns the clause that excludes every skeleton with
// the last model's Cluster and Slice placement: for each unit, its
// Cluster and Slice literals differ from the model's.
func (e *Encoding) PlacementClause() []Lit {
	c := e.p
	cl := make([]Lit, 0, 2*len(e.units))
	for _, u := range e.units {
		for _, l := range []Lit{u.lits[0], u.lits[1]} { // satLevels: Cluster, Slice
			if c.Value(l) {
				cl = append(cl, l.Not())
			} else {
				cl = append(cl, l)
			}
		}
	}
	return cl
}

// Matches restricts the enumeration to a skeleton's candidates.
func (k *Skeleton) Matches(st Stage, c *Candidate, axes int) bool {
	eq := func(levels ...Level) bool {
		for a := range axes {
			for _, l := range levels {
				if c.Split[a][l] != k.split[a][l] {
					return false
				}
			}
		}
		return true
	}
	switch st {
	case StageSlices:
		return eq(Cluster, Slice)
	case StageStationary:
		return c.Stationary == k.stationary && c.Switch == k.sw
	case StagePacket:
		return c.Content == k.content && c.Mode == k.mode && c.Acc == k.acc && eq(Packet)
	case StageRows:
		return eq(Row, Time)
	}
	return true
}

// Candidate returns the skeleton's fields as a candidate (for its bounds,
// and the start of Space.enumerateSkeleton): no Time or tile order yet.
func (k *Skeleton) Candidate() Candidate {
	var c Candidate
	c.Stationary, c.Switch, c.Content, c.Mode, c.Acc, c.Split = k.stationary, k.sw, k.content, k.mode, k.acc, k.split
	for a := range MaxAxes {
		c.Order[a], c.TileOrder[a] = NoAxis, NoAxis
	}
	return c
}

// BoundLits returns literals stating that the skeleton's lower bounds are
// at most x cycles, in the encoding's rounding, which never excludes a
// skeleton whose exact bounds are at most x. The planner gives the prices:
// fixed, the cycles every kernel pays, and rate, the HBM read bytes a
// cycle; the bounds are fixed + the compute packets a slice runs, and
// fixed + each input's bytes times its replication (and short-run penalty)
// over rate; input handed (an index, or -1 for none) is handed over in
// DM by the kernel before, read from no HBM: it has no input bound.
func (e *Encoding) BoundLits(x, fixed, rate float64, handed int) []Lit {
	s := e.s
	sc := float64(e.scale)
	var out []Lit
	// compute: fixed + 2^{(C - Σ)/scale} ≤ x  ⟺  Σ ≥ C - scale·log2(x - fixed).
	if x <= fixed {
		return []Lit{e.p.True().Not()}
	}
	lx := sc * math.Log2(x-fixed)
	k := float64(e.computeConst) - lx
	// Σ ≥ ⌈k⌉  ⟺  timeSum ≤ unitWeight − ⌈k⌉.
	out = append(out, e.timeSum.AtMost(e.unitWeight-int(math.Ceil(k-1e-9))))
	for t := range 2 {
		n, err := s.P.In[t].Bytes()
		if err != nil || n == 0 || t == handed {
			continue
		}
		// fixed + bytes·2^{Σ/scale}/rate ≤ x  ⟺  Σ ≤ scale·log2((x-fixed)·rate/bytes).
		// With a short run: Σ + Σ_inner + runConst ≤ scale·log2(...) too.
		r := sc * math.Log2((x-fixed)*rate/float64(n))
		lim := int(math.Floor(r + 1e-9))
		out = append(out, e.repl[t].AtMost(lim))
		if e.run[t] != nil {
			out = append(out, e.run[t].AtMost(lim-e.runConst[t]))
		}
	}
	return out
}

// maxWeight returns the largest weight of ts.
func maxWeight(ts []Term) int {
	m := 0
	for _, t := range ts {
		m = max(m, t.Weight)
	}
	return m
}
