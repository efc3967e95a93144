package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Options configure Verify.
type Options struct {
	// Seed seeds the random input values and the slice sample.
	Seed uint64
	// Sample is 0 to simulate every slice, or K > 0 to simulate K slices
	// chosen at random among those the output is read from (SliceSample).
	Sample int
	// Workers bounds the goroutines that run slices; 0 means GOMAXPROCS.
	Workers int
	// MemoryBudget refuses, before anything is allocated, a kernel whose
	// MemoryEstimate passes it (bytes; 0: no limit).
	MemoryBudget int64
}

// ParseSlices reads the --slices form: `all` (0) or `sample:K` (K ≥ 1).
func ParseSlices(s string) (int, error) {
	if s == "all" {
		return 0, nil
	}
	if rest, ok := strings.CutPrefix(s, "sample:"); ok {
		k, err := strconv.Atoi(rest)
		if err == nil && k >= 1 {
			return k, nil
		}
		return 0, fmt.Errorf("slices %q: col %d: want a positive slice count after sample:", s, len("sample:")+1)
	}
	return 0, fmt.Errorf("slices %q: want all or sample:K", s)
}

// SlicesString prints a sample size in the form ParseSlices reads.
func SlicesString(sample int) string {
	if sample <= 0 {
		return "all"
	}
	return "sample:" + strconv.Itoa(sample)
}

// Report is the outcome of Verify.
type Report struct {
	// Kernel names the program; Seed and Slices are the options used.
	Kernel string
	Seed   uint64
	Slices string
	// Simulated lists the sampled slices (`chip 0 cluster 1 slice 17`),
	// empty when every slice ran.
	Simulated []string
	// Compared is the number of output elements compared: all of them, or
	// with sampling those the sampled slices produce.
	Compared int
	// Unverified counts, when sampling, the output elements a sampled
	// slice holds (through the output's DM source) that the kernel copied
	// from a slice that did not run: they are not computed, so they fail.
	Unverified int
	// MACs is the number of multiply-accumulates simulated.
	MACs int64
	// Comparison is the element-by-element comparison with the reference.
	Comparison Comparison
	// Pass reports that the simulation matches the reference.
	Pass bool
}

// Verify runs kernel p on simulated hardware and compares its output with
// the reference its Reference states:
//
//  1. p is lowered (engines.Lower): configurations it states are kept,
//     the others derived; p is modified in place.
//  2. Every HBM input gets random values from opts.Seed, exactly
//     representable in its dtype (RandomValues), stored through its
//     mappings.
//  3. The executor runs the program (Executor).
//  4. The reference output's HBM bytes are read back through its mappings
//     and compared (Compare) with Reference computed from the inputs.
//
// With opts.Sample = K, K slices are chosen at random among the slices the
// output's DMAs read from (the live slices of the DM source of every to_hbm
// op writing the output); chains run only on them (stages feeding a switch
// still run everywhere), and only the output elements they produce are
// compared. An output element is attributed to the slice whose DM the
// to_hbm DMA copied it from; data computed on a slice that did not run
// taints everything it reaches (through DMAs, switches and later chains),
// and tainted elements are not compared. Comparing only the sampled slices'
// elements is exact for them: each element is compared against the full
// reference as with every slice simulated.
func Verify(spec *engines.Spec, p *kernel.Program, opts Options) (*Report, error) {
	rep, _, err := verifyOutput(spec, p, opts)
	return rep, err
}

// verifyOutput is Verify, also returning the simulated output as compared
// (elements out of the comparison are NaN): the mutation study compares it
// bit by bit with the unmutated kernel's.
func verifyOutput(spec *engines.Spec, p *kernel.Program, opts Options) (*Report, *Logical, error) {
	if spec == nil || p == nil {
		return nil, nil, errors.New("verify: nil spec or program")
	}
	if p.Reference == nil {
		return nil, nil, fmt.Errorf("kernel %q states no reference: nothing to verify against", p.Name)
	}
	if err := engines.Lower(spec, p); err != nil {
		return nil, nil, err
	}
	if err := checkMemory(fmt.Sprintf("kernel %q", p.Name), MemoryEstimate(p), opts.MemoryBudget); err != nil {
		return nil, nil, err
	}
	outT, _ := p.Tensor(p.Reference.Output)
	dev, err := NewDevice(spec, p.Chips)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))
	outAxes := map[string]bool{}
	for _, e := range outT.Dims() {
		for _, s := range e.Symbols() {
			outAxes[s] = true
		}
	}
	inputs := map[string]*Logical{}
	indexRows, err := gatherIndexRows(p)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range p.Tensors {
		if t.Mem != kernel.HBM || t.Role != kernel.Input || t.Gather != nil {
			continue
		}
		l, err := NewLogical(p, t)
		if err != nil {
			return nil, nil, err
		}
		r := p.Reference.Range
		if n, ok := indexRows[t.Name]; ok {
			// A gathered argument's index: rows of its table.
			r = []float64{0, float64(n - 1)}
		}
		draw := RandomValuesIn
		if ref := p.Reference; ref.Op == kernel.RefScatter && len(ref.Inputs) == 2 && t.Name == ref.Inputs[1] {
			draw = distinctRows // a scatter's index: distinct rows of the output (DMA-R17)
		}
		if err := draw(rng, l, r); err != nil {
			return nil, nil, err
		}
		if err := padInput(p.Reference.Valid, outAxes, l); err != nil {
			return nil, nil, err
		}
		if err := WriteHBMTensor(dev, p, t, l); err != nil {
			return nil, nil, err
		}
		inputs[t.Name] = l
	}
	if err := gatheredInputs(p, inputs); err != nil {
		return nil, nil, err
	}
	rep := &Report{Kernel: p.Name, Seed: opts.Seed, Slices: SlicesString(opts.Sample)}
	var run []bool
	if opts.Sample > 0 {
		sample, err := SliceSample(dev, p, opts.Sample, opts.Seed)
		if err != nil {
			return nil, nil, err
		}
		run = make([]bool, dev.TotalSlices())
		for _, g := range sample {
			run[g] = true
			rep.Simulated = append(rep.Simulated, dev.SliceName(g))
		}
	}
	x, err := NewExecutor(dev, p, ExecOptions{Run: run, Workers: opts.Workers})
	if err != nil {
		return nil, nil, err
	}
	if err := x.RunHandoffs(kernel.OpToDM); err != nil {
		return nil, nil, err
	}
	if err := x.Run(); err != nil {
		return nil, nil, err
	}
	if err := x.RunHandoffs(kernel.OpToHBM); err != nil {
		return nil, nil, err
	}
	rep.MACs = x.MACs()
	got, from, err := readHBMTensor(dev, p, outT)
	if err != nil {
		return nil, nil, err
	}
	// With sampled slices the reference is computed only at the elements
	// compared: those a sampled slice produced (clean) or holds (want).
	var need, clean, want []bool
	var holder []int64
	var srcs []int64
	if run != nil {
		var origin []int32
		origin, srcs = x.origin[outT.Name], x.originSrc[outT.Name]
		if want, err = sampledElements(dev, p, got, run); err != nil {
			return nil, nil, err
		}
		if holder, err = dmHolders(dev, p, got); err != nil {
			return nil, nil, err
		}
		need = make([]bool, len(got.Vals))
		clean = make([]bool, len(got.Vals))
		for i := range got.Vals {
			pos := from[i]
			clean[i] = pos >= 0 && origin != nil && origin[pos] > 0 && origin[pos] != originHBM && run[origin[pos]-1]
			need[i] = clean[i] || want[i]
		}
	}
	exp, err := ReferenceFor(p, inputs, need)
	if err != nil {
		return nil, nil, err
	}
	rep.Compared = len(got.Vals) - maskPadding(p.Reference.Valid, got, exp)
	if run != nil {
		rep.Compared = 0
		for i := range got.Vals {
			if math.IsNaN(got.Vals[i]) && math.IsNaN(exp.Out.Vals[i]) && padded(p.Reference.Valid, got, i) {
				continue // padding (maskPadding)
			}
			// Every element, sampled or not, must be copied from the DM
			// byte that holds it: a DMA that reads another slice or
			// address is a failure whether or not that slice ran.
			if h := holder[i]; h >= 0 {
				if pos := from[i]; pos < 0 || srcs == nil || srcs[pos] != h {
					got.Vals[i] = math.NaN()
					rep.Unverified++
					rep.Compared++
					continue
				}
			}
			if need[i] {
				// An element a sampled slice holds but the kernel copied
				// from elsewhere (a slice that did not run, tainted data,
				// nowhere) is not computed: it is flagged, a NaN where
				// the reference has a value, so that sampling never turns
				// a FAIL into a PASS.
				if !clean[i] {
					got.Vals[i] = math.NaN()
					rep.Unverified++
				}
				rep.Compared++
				continue
			}
			// Not produced by a sampled slice: a NaN on both sides is a
			// match for Compare (a NaN reference requires a NaN).
			got.Vals[i] = math.NaN()
			exp.Out.Vals[i] = math.NaN()
			if exp.Abs != nil {
				exp.Abs.Vals[i] = 0
			}
		}
		if rep.Compared == 0 {
			return nil, nil, fmt.Errorf("kernel %q: no output element comes from the %d sampled slices alone (the kernel moves data across slices); verify with every slice", p.Name, opts.Sample)
		}
	}
	rep.Comparison = Compare(exp, got)
	rep.Pass = rep.Comparison.Pass && rep.Unverified == 0
	return rep, got, nil
}

// sampledElements marks the output's logical elements that a sampled
// slice holds: the elements of the DM source of every to_hbm op writing
// the output (or a tile view of it) on the slices run marks, through the
// source's mappings (a tensor position holds the sum of its dimensions'
// indices, model/kernel.Tensor). A correct kernel copies each of them from
// such a slice.
func sampledElements(d *Device, p *kernel.Program, out *Logical, run []bool) ([]bool, error) {
	want := make([]bool, out.Len())
	for _, op := range slices.Concat(p.Ops, p.Handoff) {
		if op.Kind != kernel.OpToHBM {
			continue
		}
		dst, ok := p.Tensor(op.Dst)
		if !ok || dst.Base() != p.Reference.Output {
			continue
		}
		src, ok := p.Tensor(op.Src)
		if !ok || src.Cluster == nil || src.Slice == nil || src.Chip == nil {
			continue
		}
		if !spatialOnce(src) {
			// A source held on several slices (a broadcast spatial
			// mapping) may be copied from any of them: its elements are
			// compared where they come from, not flagged.
			continue
		}
		for c := 0; c < src.Chip.Size(); c++ {
			cc := src.Chip.Map(c)
			if cc.Kind != mapping.Live {
				continue
			}
			for k := 0; k < src.Cluster.Size(); k++ {
				kc := src.Cluster.Map(k)
				if kc.Kind != mapping.Live {
					continue
				}
				for sl := 0; sl < src.Slice.Size(); sl++ {
					g, ok := d.SliceIndex(c, k, sl)
					if !ok || !run[g] {
						continue
					}
					sc := src.Slice.Map(sl)
					if sc.Kind != mapping.Live {
						continue
					}
					base := append(append(append([]mapping.Coord(nil), cc.Index.Coords()...), kc.Index.Coords()...), sc.Index.Coords()...)
					for e := 0; e < src.Element.Size(); e++ {
						ec := src.Element.Map(e)
						if ec.Kind != mapping.Live {
							continue
						}
						idx := mapping.IndexOf(append(append([]mapping.Coord(nil), base...), ec.Index.Coords()...)...)
						if off, ok := out.Offset(idx); ok {
							want[off] = true
						}
					}
				}
			}
		}
	}
	return want, nil
}

// dmHolders returns, for each logical element of the output, the DM byte
// the to_hbm ops writing the output should copy it from: the global slice
// << 32 | the byte address of the element in its DM source; -1 when no
// source holds it, -2 when several positions do (a broadcast: any of them
// will do) or the source's elements are narrower than a byte.
func dmHolders(d *Device, p *kernel.Program, out *Logical) ([]int64, error) {
	h := make([]int64, out.Len())
	for i := range h {
		h[i] = -1
	}
	stride := make(map[string]int, len(out.Axes))
	s := 1
	for i := len(out.Axes) - 1; i >= 0; i-- {
		stride[out.Axes[i].Name] = s
		s *= out.Axes[i].Size
	}
	for _, op := range slices.Concat(p.Ops, p.Handoff) {
		if op.Kind != kernel.OpToHBM {
			continue
		}
		dst, ok := p.Tensor(op.Dst)
		if !ok || dst.Base() != p.Reference.Output {
			continue
		}
		src, ok := p.Tensor(op.Src)
		if !ok || src.Chip == nil || src.Cluster == nil || src.Slice == nil {
			continue
		}
		bits := int64(src.DType.SizeBits())
		e := mapping.Pair(mapping.Pair(mapping.Pair(src.Chip, src.Cluster), src.Slice), src.Element)
		prog, err := mapping.Compile(e, p.Axes)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", src.Name, err)
		}
		slot := make([]int, prog.Coords()) // the output stride of each axis slot
		for name, st := range stride {
			if k, ok := p.Axes.Slot(name); ok && k < len(slot) {
				slot[k] = st
			}
		}
		coords := make([]int, prog.Slots())
		E, S, K := src.Element.Size(), src.Slice.Size(), src.Cluster.Size()
		for pos := 0; pos < prog.Size(); pos++ {
			if kind, _ := prog.Eval(pos, coords); kind != mapping.Live {
				continue
			}
			off := 0
			for k, st := range slot {
				off += coords[k] * st
			}
			if off < 0 || off >= len(h) {
				continue
			}
			el, sl, cl, ch := pos%E, pos/E%S, pos/(E*S)%K, pos/(E*S*K)
			g, ok := d.SliceIndex(ch, cl, sl)
			if !ok || bits < 8 {
				h[off] = -2
				continue
			}
			v := int64(g)<<32 | (src.Addr + int64(el)*bits/8)
			switch h[off] {
			case -1:
				h[off] = v
			case v:
			default:
				h[off] = -2
			}
		}
	}
	return h, nil
}

// spatialOnce reports whether each element of DM tensor t lives on one
// slice: its Chip, Cluster and Slice mappings factorize without a broadcast
// factor.
func spatialOnce(t *kernel.Tensor) bool {
	for _, e := range []*mapping.Expr{t.Chip, t.Cluster, t.Slice} {
		fs, err := mapping.Factorize(e)
		if err != nil {
			return false
		}
		for _, f := range fs {
			if f.Kind == mapping.FactorBroadcast {
				return false
			}
		}
	}
	return true
}

// SliceSample chooses k slices at random (from seed) among the slices the
// reference output is read from: the live slices of the DM source of every
// to_hbm op writing it or one of its tile views. All of them when there are at most k. The result is
// in ascending order, with the peers withClusterPeers adds.
func SliceSample(d *Device, p *kernel.Program, k int, seed uint64) ([]int, error) {
	if p.Reference == nil {
		return nil, errors.New("sample: the kernel states no reference")
	}
	cand := map[int]bool{}
	for _, op := range slices.Concat(p.Ops, p.Handoff) {
		if op.Kind != kernel.OpToHBM {
			continue
		}
		// The output itself, or a tile view of it (Tensor.View).
		if dst, ok := p.Tensor(op.Dst); !ok || dst.Base() != p.Reference.Output {
			continue
		}
		src, ok := p.Tensor(op.Src)
		if !ok {
			return nil, fmt.Errorf("sample: unknown tensor %q", op.Src)
		}
		gs, err := tensorSlices(d, src)
		if err != nil {
			return nil, err
		}
		for _, g := range gs {
			cand[g] = true
		}
	}
	if len(cand) == 0 {
		if out, ok := p.Tensor(p.Reference.Output); ok && out.InPlace() {
			// An update in place (an update_slice): HBM to HBM, no slice.
			return nil, fmt.Errorf("sample: the kernel updates %q in place by HBM-to-HBM copies, on no slice: there are no slices to sample (verify it whole, --slices all)", out.View)
		}
		if slices.ContainsFunc(p.Ops, func(op *kernel.Op) bool { return op.Index != "" }) {
			return nil, fmt.Errorf("sample: the kernel gathers %q by an HBM-to-HBM copy, on no slice: there are no slices to sample (verify it whole, --slices all)", p.Reference.Output)
		}
		return nil, fmt.Errorf("sample: no to_hbm op writes the output %q from DM", p.Reference.Output)
	}
	list := make([]int, 0, len(cand))
	for g := range cand {
		list = append(list, g)
	}
	sort.Ints(list)
	if k < len(list) {
		rng := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		list = list[:k]
		sort.Ints(list)
	}
	return withClusterPeers(d, p, list), nil
}

// withClusterPeers adds to a sample, when the program moves data between
// the clusters slice for slice (a DM tensor copied into one with another
// Cluster and the same Slice mapping, by one DM-to-DM DMA or through an
// HBM tensor of the kernel's own: the cluster reduce's exchange), the same
// slice of every other cluster of its chip: a sampled slice's result
// depends on what its peers computed.
func withClusterPeers(d *Device, p *kernel.Program, list []int) []int {
	moved := func(src, dst *kernel.Tensor) bool {
		sameCluster, _ := mapping.Equiv(src.Cluster, dst.Cluster)
		sameSlice, _ := mapping.Equiv(src.Slice, dst.Slice)
		return !sameCluster && sameSlice
	}
	staged := map[string][]*kernel.Tensor{} // an intermediate HBM tensor's DM sources
	exchange := false
	for _, op := range p.Ops {
		src, ok1 := p.Tensor(op.Src)
		dst, ok2 := p.Tensor(op.Dst)
		if !ok1 || !ok2 {
			continue
		}
		switch {
		case op.Kind == kernel.OpDMToDM:
			exchange = exchange || moved(src, dst)
		case op.Kind == kernel.OpToHBM && dst.Role == kernel.Intermediate && dst.View == "":
			staged[dst.Name] = append(staged[dst.Name], src)
		case op.Kind == kernel.OpToDM:
			for _, from := range staged[src.Name] {
				exchange = exchange || moved(from, dst)
			}
		}
	}
	if !exchange {
		return list
	}
	seen := map[int]bool{}
	var out []int
	for _, g := range list {
		chip, _, slice := d.SliceCoords(g)
		for cl := range d.clusters {
			if h, ok := d.SliceIndex(chip, cl, slice); ok && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	sort.Ints(out)
	return out
}

// RandomValues fills l with random values exactly representable in its
// dtype: floats uniform in [-2, 2) rounded to the dtype (a modest range, so
// that sums of products stay far from overflow), integers uniform over the
// dtype's whole range.
func RandomValues(rng *rand.Rand, l *Logical) error {
	switch {
	case l.DType.IsFloat():
		for i := range l.Vals {
			l.Vals[i] = dtype.Round(rng.Float64()*4-2, l.DType)
		}
	case l.DType.IsInt():
		lo, hi, err := l.DType.IntRange()
		if err != nil {
			return err
		}
		n := uint64(hi - lo + 1)
		for i := range l.Vals {
			l.Vals[i] = float64(lo + int64(rng.Uint64N(n)))
		}
	default:
		return fmt.Errorf("tensor %q: no random values of dtype %s", l.Name, l.DType)
	}
	return nil
}

// padded reports whether position off of l lies in the padding of an axis
// valid names (kernel.Reference.Valid).
func padded(valid map[string]int, l *Logical, off int) bool {
	if len(valid) == 0 {
		return false
	}
	for i := len(l.Axes) - 1; i >= 0; i-- {
		a := l.Axes[i]
		c := off % a.Size
		off /= a.Size
		if v, ok := valid[a.Name]; ok && c >= v {
			return true
		}
	}
	return false
}

// padInput stores the padding contract of kernel.Reference.Valid in input
// l: its positions in the padding of an axis hold 0 when the axis is
// contracted (not an axis of the output, outAxes), so that they add
// nothing to the sums (002 L3768-3776), and a poison otherwise (NaN, or
// the type's largest integer), so that a kernel letting a padded free
// position reach a valid output element fails.
func padInput(valid map[string]int, outAxes map[string]bool, l *Logical) error {
	if len(valid) == 0 {
		return nil
	}
	poison := math.NaN()
	if l.DType.IsInt() {
		_, hi, err := l.DType.IntRange()
		if err != nil {
			return err
		}
		poison = float64(hi)
	}
	cs := make([]int, 0, len(l.Axes))
	for off := range l.Vals {
		cs = l.Coords(off, cs)
		zero, pad := false, false
		for i, a := range l.Axes {
			if v, ok := valid[a.Name]; ok && cs[i] >= v {
				pad = true
				zero = zero || !outAxes[a.Name]
			}
		}
		switch {
		case zero:
			l.Vals[off] = 0
		case pad:
			l.Vals[off] = poison
		}
	}
	return nil
}

// distinctRows draws l's values as distinct integers of [rng[0], rng[1]]
// in random order (a scatter's index: each row of its output written
// once).
func distinctRows(g *rand.Rand, l *Logical, rng []float64) error {
	if len(rng) != 2 {
		return fmt.Errorf("tensor %q: a scatter's index needs the output's rows as its range", l.Name)
	}
	lo, hi := int(math.Ceil(rng[0])), int(math.Floor(rng[1]))
	if hi-lo+1 < len(l.Vals) {
		return fmt.Errorf("tensor %q: %d distinct rows wanted of %d", l.Name, len(l.Vals), hi-lo+1)
	}
	for i, v := range g.Perm(hi - lo + 1)[:len(l.Vals)] {
		l.Vals[i] = float64(lo + v)
	}
	return nil
}

// RandomValuesIn is RandomValues with the values drawn uniformly from
// [lo, hi] = rng[0], rng[1] instead, rounded to the dtype (integers: the
// integers of [lo, hi] that the dtype holds); an empty range is
// RandomValues.
func RandomValuesIn(g *rand.Rand, l *Logical, rng []float64) error {
	if len(rng) == 0 {
		return RandomValues(g, l)
	}
	if len(rng) != 2 || !(rng[0] < rng[1]) {
		return fmt.Errorf("tensor %q: range %v", l.Name, rng)
	}
	lo, hi := rng[0], rng[1]
	switch {
	case l.DType.IsFloat():
		for i := range l.Vals {
			l.Vals[i] = dtype.Round(lo+g.Float64()*(hi-lo), l.DType)
		}
	case l.DType.IsInt():
		dlo, dhi, err := l.DType.IntRange()
		if err != nil {
			return err
		}
		a, b := max(int64(math.Ceil(lo)), dlo), min(int64(math.Floor(hi)), dhi)
		if a > b {
			return fmt.Errorf("tensor %q: no %s in [%v, %v]", l.Name, l.DType, lo, hi)
		}
		for i := range l.Vals {
			l.Vals[i] = float64(a + int64(g.Uint64N(uint64(b-a+1))))
		}
	default:
		return fmt.Errorf("tensor %q: no random values of dtype %s", l.Name, l.DType)
	}
	return nil
}

// maskPadding takes the output positions in the padding of kernel.Reference.
// Valid out of the comparison (a NaN on both sides matches, as Compare
// reads it) and returns how many it took.
func maskPadding(valid map[string]int, got *Logical, exp *Expected) int {
	n := 0
	for i := range got.Vals {
		if padded(valid, got, i) {
			got.Vals[i] = math.NaN()
			exp.Out.Vals[i] = math.NaN()
			if exp.Abs != nil {
				exp.Abs.Vals[i] = 0
			}
			n++
		}
	}
	return n
}

// String prints the report for the CLI: a PASS or FAIL line, the
// comparison and the run's figures.
func (r *Report) String() string {
	var b strings.Builder
	verdict := "FAIL"
	if r.Pass {
		verdict = "PASS"
	}
	fmt.Fprintf(&b, "%s %s (seed %d, slices %s)\n", verdict, r.Kernel, r.Seed, r.Slices)
	fmt.Fprintf(&b, "  %s\n", r.Comparison)
	fmt.Fprintf(&b, "  compared %d of %d output elements; %d MACs simulated\n", r.Compared, r.Comparison.N, r.MACs)
	if r.Unverified > 0 {
		fmt.Fprintf(&b, "  %d output elements the sampled slices hold were copied from slices that did not run: not verified, counted as failures\n", r.Unverified)
	}
	if len(r.Simulated) > 0 {
		fmt.Fprintf(&b, "  simulated slices: %s\n", strings.Join(r.Simulated, "; "))
	}
	return b.String()
}

// MarshalJSON writes the report with non-finite errors as strings ("+Inf",
// "NaN"), which JSON numbers cannot hold.
func (r *Report) MarshalJSON() ([]byte, error) {
	c := r.Comparison
	type mismatch struct {
		Index string    `json:"index"`
		Ref   jsonFloat `json:"ref"`
		Got   jsonFloat `json:"got"`
		Lo    jsonFloat `json:"lo"`
		Hi    jsonFloat `json:"hi"`
	}
	var first *mismatch
	if m := c.FirstBad; m != nil {
		first = &mismatch{Index: m.Index, Ref: jsonFloat(m.Ref), Got: jsonFloat(m.Got), Lo: jsonFloat(m.Lo), Hi: jsonFloat(m.Hi)}
	}
	return json.Marshal(struct {
		Kernel     string    `json:"kernel"`
		Pass       bool      `json:"pass"`
		Seed       uint64    `json:"seed"`
		Slices     string    `json:"slices"`
		Simulated  []string  `json:"simulated_slices,omitempty"`
		Output     string    `json:"output"`
		DType      string    `json:"dtype"`
		Elements   int       `json:"elements"`
		Compared   int       `json:"compared"`
		MACs       int64     `json:"macs"`
		Problem    string    `json:"problem,omitempty"`
		MaxAbs     jsonFloat `json:"max_abs_error"`
		MaxRel     jsonFloat `json:"max_rel_error"`
		Bound      jsonFloat `json:"bound"`
		Worst      string    `json:"worst,omitempty"`
		Mismatches int       `json:"mismatches"`
		FirstBad   *mismatch `json:"first_mismatch,omitempty"`
		Unverified int       `json:"unverified,omitempty"`
	}{r.Kernel, r.Pass, r.Seed, r.Slices, r.Simulated, c.Name, c.DType.String(), c.N, r.Compared, r.MACs, c.Problem,
		jsonFloat(c.MaxAbs), jsonFloat(c.MaxRel), jsonFloat(c.Bound), c.Worst, c.Mismatches, first, r.Unverified})
}

// jsonFloat is a float64 whose JSON form is a string when it is not finite.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v)
}

// gatherIndexRows maps the index of each gathered argument of p
// (kernel.Tensor.Gather) to its table's row count: the index's random
// values are drawn among them.
func gatherIndexRows(p *kernel.Program) (map[string]int, error) {
	out := map[string]int{}
	for _, t := range p.Tensors {
		if t.Gather == nil {
			continue
		}
		table, ok := p.Tensor(t.Gather.Table)
		if !ok {
			return nil, fmt.Errorf("gathered %q: no table %q", t.Name, t.Gather.Table)
		}
		tl, err := NewLogical(p, table)
		if err != nil {
			return nil, err
		}
		vl, err := NewLogical(p, t)
		if err != nil {
			return nil, err
		}
		at := axisPos(vl)
		rows := 1
		for _, a := range tl.Axes {
			if _, ok := at[a.Name]; !ok {
				rows *= a.Size
			}
		}
		if n, ok := out[t.Gather.Index]; ok && n != rows {
			return nil, fmt.Errorf("index %q serves tables of %d and %d rows", t.Gather.Index, n, rows)
		}
		out[t.Gather.Index] = rows
	}
	return out, nil
}

// gatheredInputs sets each gathered argument's values in inputs: its
// table's rows at its index's values (the gather it stands for), which
// the reference reads; the device holds the table and the index, which
// the kernel's loads read through.
func gatheredInputs(p *kernel.Program, inputs map[string]*Logical) error {
	for _, t := range p.Tensors {
		if t.Gather == nil {
			continue
		}
		l, err := NewLogical(p, t)
		if err != nil {
			return err
		}
		table, index := inputs[t.Gather.Table], inputs[t.Gather.Index]
		if table == nil || index == nil {
			return fmt.Errorf("gathered %q: no values for %q or %q", t.Name, t.Gather.Table, t.Gather.Index)
		}
		if _, err := gather(l, table, index, t.DType.IsInt()); err != nil {
			return fmt.Errorf("gathered %q: %w", t.Name, err)
		}
		inputs[t.Name] = l
	}
	return nil
}
