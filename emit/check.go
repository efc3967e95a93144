package emit

import (
	"fmt"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// analysis is what the Rust printer needs to know about a program beyond
// Validate: the kernel's parameters and result.
type analysis struct {
	inputs []*kernel.Tensor // HBM inputs, in tensor order: the kernel's parameters
	output *kernel.Tensor   // the HBM output, the kernel's result; nil if none
	// inPlace is the input the output is, updated in place
	// (kernel.Tensor.InPlace): a `&mut` parameter, and the kernel returns
	// nothing.
	inPlace *kernel.Tensor
}

// rustKeywords are Rust's strict and reserved keywords, which no variable
// can be named.
var rustKeywords = strings.Fields(`as async await break const continue crate dyn else enum extern false fn for
	if impl in let loop match mod move mut pub ref return self Self static struct super trait true type
	unsafe use where while abstract become box do final macro override priv try typeof unsized virtual yield gen`)

// reservedNames are the names the emitted file uses itself: the context,
// the functions and the host program's locals.
var reservedNames = []string{"ctx", "kernel", "main", "run", "oracle", "check_floats", "check_ints", "floats", "ints",
	"wrap", "seed", "rng", "want", "tests", "m", "axes"}

// identOK reports whether name can be a variable of the emitted kernel: a
// snake_case Rust identifier (lower case or '_' first) that is neither a
// keyword nor a name the file uses itself.
func identOK(name string) error {
	if name == "" || !(name[0] == '_' || name[0] >= 'a' && name[0] <= 'z') {
		return fmt.Errorf("%q is not a snake_case Rust identifier (it must start with a lower-case letter or '_')", name)
	}
	if name == "_" {
		return fmt.Errorf("%q cannot name a tensor", name)
	}
	for i := 0; i < len(name); i++ {
		if !isIdentChar(name[i]) {
			return fmt.Errorf("%q is not a Rust identifier (character %q)", name, name[i])
		}
	}
	for _, k := range rustKeywords {
		if name == k {
			return fmt.Errorf("%q is a Rust keyword", name)
		}
	}
	for _, k := range reservedNames {
		if name == k {
			return fmt.Errorf("%q is a name the emitted file uses itself", name)
		}
	}
	return nil
}

// stageSpelling says which Stage fields the Virtual ISA call of a stage kind
// spells, and which of them it needs.
type stageSpelling struct {
	tensor, dtype, time, packet, slice, param field
}

type field uint8

const (
	no       field = iota // the call has no place for it: it must be zero
	optional              // may be given
	required              // must be given
)

var spellings = map[kernel.StageKind]stageSpelling{
	kernel.StBegin:        {tensor: required, param: optional},
	kernel.StFetch:        {dtype: optional, time: required, packet: required},
	kernel.StSwitch:       {slice: required, time: required, param: optional},
	kernel.StCollect:      {time: required, packet: required},
	kernel.StToTRF:        {tensor: required},
	kernel.StToVRF:        {tensor: required},
	kernel.StAlign:        {tensor: required, time: required, packet: required},
	kernel.StContract:     {packet: required, param: optional},
	kernel.StAccumulate:   {time: required, packet: required, param: required},
	kernel.StCast:         {dtype: required, packet: required},
	kernel.StTranspose:    {time: required, packet: required},
	kernel.StVectorInit:   {},
	kernel.StVectorBranch: {param: required},
	kernel.StVectorFxp:    {tensor: optional, param: required},
	kernel.StVectorFinal:  {},
	kernel.StCommit:       {tensor: required},

	kernel.StVectorInterSlice: {slice: required, time: required, param: required},
}

func checkStage(st *kernel.Stage) error {
	sp, ok := spellings[st.Kind]
	if !ok {
		return fmt.Errorf("unknown stage kind %q", st.Kind)
	}
	if err := checkVectorStage(st); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		want field
		set  bool
	}{
		{"tensor", sp.tensor, st.Tensor != ""},
		{"dtype", sp.dtype, st.DType != 0},
		{"time", sp.time, st.Time != nil},
		{"packet", sp.packet, st.Packet != nil},
		{"slice", sp.slice, st.Slice != nil},
		{"param", sp.param, st.Param != ""},
	} {
		if f.want == no && f.set {
			return fmt.Errorf("%s has no %s: no Virtual ISA spelling for it", st.Kind, f.name)
		}
		if f.want == required && !f.set {
			return fmt.Errorf("%s needs a %s", st.Kind, f.name)
		}
	}
	switch st.Kind {
	case kernel.StContract:
		// contract::<OutPacket>() takes no reduce op: it reduce-adds
		// (002 L4310-4316). Reduce-max has no spelling in the manual.
		if st.Param != "" && kernel.ReduceOp(st.Param) != kernel.ReduceAdd {
			return fmt.Errorf("contract with reduce op %q: contract::<OutPacket>() only reduce-adds (002 L4310-4316)", st.Param)
		}
	case kernel.StAccumulate:
		if _, err := kernel.ParseAccumulationKind(st.Param); err != nil {
			return err
		}
	case kernel.StVectorInterSlice:
		if _, _, err := kernel.ParseInterSliceOp(st.Param); err != nil {
			return err
		}
	case kernel.StSwitch:
		if _, err := switchConfig(st); err != nil {
			return err
		}
	}
	return nil
}

// analyze checks that a validated program can be printed as a Rust kernel
// and finds its parameters and result.
func analyze(p *kernel.Program) (*analysis, error) { return analyzeWith(p, nil) }

// isOnChip reports whether name is a DM, TRF or VRF tensor of p.
func isOnChip(p *kernel.Program, name string) bool {
	t, ok := p.Tensor(name)
	return ok && t.Mem != kernel.HBM
}

// analyzeWith is analyze for the body of a tile loop: the tensors named in
// pre exist before the body (the loop's result and tile views) and may be
// written again, as every step writes a tile of the result.
func analyzeWith(p *kernel.Program, pre map[string]bool) (*analysis, error) {
	return analyzeRebind(p, pre, false)
}

// analyzeRebind is analyzeWith; with rebind, an on-chip tensor may be
// produced again (a double buffer of a program of several tiles printed in
// straight line: each production binds its name anew, as Rust's `let`
// shadows).
func analyzeRebind(p *kernel.Program, pre map[string]bool, rebind bool) (*analysis, error) {
	a := &analysis{}
	defined := map[string]bool{}
	for name := range pre {
		defined[name] = true
	}
	for _, t := range p.Tensors {
		if err := identOK(t.Name); err != nil {
			return nil, fmt.Errorf("tensor %s", err)
		}
		if t.Mem == kernel.TRF && t.Addr != 0 {
			return nil, fmt.Errorf("TRF tensor %q at address %d: to_trf places a TRF tensor by its TrfAddress only (002 L4056-4059)", t.Name, t.Addr)
		}
		switch {
		case t.Role == kernel.Input:
			a.inputs = append(a.inputs, t)
			defined[t.Name] = true
		case t.Role == kernel.Output:
			if a.output != nil {
				return nil, fmt.Errorf("outputs %q and %q: a kernel returns one HbmTensor (002 L200)", a.output.Name, t.Name)
			}
			a.output = t
			if t.InPlace() {
				a.inPlace, _ = p.Tensor(t.View)
				defined[t.Name] = true // the argument's bytes, written through views
			}
		}
	}
	if a.output != nil {
		for _, t := range a.inputs {
			if t.Name+"_hbm" == a.output.Name {
				return nil, fmt.Errorf("output %q is the host program's name for input %q's device tensor", a.output.Name, t.Name)
			}
		}
	}
	use := func(name string) error {
		if !defined[name] {
			return fmt.Errorf("tensor %q is used before an op produces it", name)
		}
		return nil
	}
	def := func(name string) error {
		if defined[name] && !pre[name] && !(rebind && isOnChip(p, name)) {
			return fmt.Errorf("tensor %q is produced twice: the kernel binds each tensor once", name)
		}
		defined[name] = true
		return nil
	}
	for i, op := range p.Ops {
		err := func() error {
			switch op.Kind {
			case kernel.OpToDM, kernel.OpDMToDM, kernel.OpToHBM, kernel.OpHBMToHBM:
				if err := use(op.Src); err != nil {
					return err
				}
				return def(op.Dst)
			}
			for k, st := range op.Stages {
				if err := checkStage(st); err != nil {
					return fmt.Errorf("stages[%d]: %w", k, err)
				}
				switch st.Kind {
				case kernel.StBegin, kernel.StAlign, kernel.StVectorFxp, kernel.StVectorLogic, kernel.StVectorFpBinary,
					kernel.StVectorFpTernary, kernel.StVectorFpDiv, kernel.StVectorClip:
					if st.Tensor != "" {
						if err := use(st.Tensor); err != nil {
							return fmt.Errorf("stages[%d] (%s): %w", k, st.Kind, err)
						}
					}
					if rhs := st.InterleavedTensor(); rhs != "" {
						if err := use(rhs); err != nil {
							return fmt.Errorf("stages[%d] (%s): %w", k, st.Kind, err)
						}
					}
				case kernel.StToTRF, kernel.StToVRF, kernel.StCommit:
					if err := def(st.Tensor); err != nil {
						return fmt.Errorf("stages[%d] (%s): %w", k, st.Kind, err)
					}
				}
			}
			return nil
		}()
		if err != nil {
			return nil, fmt.Errorf("ops[%d] (%s): %w", i, op.Kind, err)
		}
	}
	for _, t := range p.Tensors {
		if !defined[t.Name] {
			return nil, fmt.Errorf("tensor %q is produced by no op", t.Name)
		}
	}
	return a, nil
}

// CheckAddresses checks p's tensors against the overlap rules of
// engines.MemoryMap on the hardware spec: no two tensors of one memory
// share a byte while both are live: "the programmer must explicitly assign DM addresses ... to
// prevent tensors from overlapping. Addresses must not collide"
// (002 L154-155). Liveness is engines.Footprint's: from the first op that
// names a tensor to the last one, in program order; the HBM inputs and
// outputs are live throughout (the host owns them before and after the
// kernel). Extents are per chip (HBM) or per slice (DM, TRF, VRF): two
// tensors collide only on a slice both hold, since each slice has its own
// DM, TRF and VRF (002 L138-140). TRF tensors occupy their TrfAddress
// region: Full excludes every other, FirstHalf and SecondHalf each other
// not (002 L4151-4158).
//
// Capacity (MEM-C1..C4) is not refused here: the emitter prints a kernel
// as written, and the manual's own Hello GEMM exceeds the TRF as written
// (docs/spec-decisions.md, "Hello GEMM TRF over-capacity"). `tcpmap emit`
// runs engines.Check first, as cost and verify do, which refuses it.
func CheckAddresses(spec *engines.Spec, p *kernel.Program) error {
	var mm engines.MemoryMap
	mm.NoCache = true
	if err := mm.Compute(spec, p); err != nil {
		return err
	}
	n := len(p.Ops)
	for _, is := range mm.Issues {
		if is.B >= 0 {
			return overlapError(p, &mm, &is, n)
		}
	}
	return nil
}

func overlapError(p *kernel.Program, mm *engines.MemoryMap, is *engines.MemoryIssue, n int) error {
	a, fa := p.Tensors[is.A], &mm.Footprints[is.A]
	b, fb := p.Tensors[is.B], &mm.Footprints[is.B]
	if a.Mem == kernel.TRF {
		return fmt.Errorf("TRF tensors %q (%s) and %q (%s) share TRF rows while both are live (ops %s and %s; 002 L4151-4158)",
			a.Name, a.TrfAddress, b.Name, b.TrfAddress, opRange(fa.First, fa.Last, n), opRange(fb.First, fb.Last, n))
	}
	return fmt.Errorf("%s tensors %q [%d, %d) and %q [%d, %d) overlap while both are live (ops %s and %s); addresses must not collide (002 L154-155)",
		strings.ToUpper(string(a.Mem)), a.Name, fa.Lo, fa.Hi, b.Name, fb.Lo, fb.Hi,
		opRange(fa.First, fa.Last, n), opRange(fb.First, fb.Last, n))
}

func opRange(from, to, n int) string {
	if from < 0 && to >= n {
		return "all: a kernel argument or result"
	}
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d-%d", from, to)
}
