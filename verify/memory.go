package verify

import (
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
	"tcpmap/model/plan"
)

// Bytes a verification holds per element, measured on the prefill layer's
// kernels: an input's float64 values and its HBM bytes (16); the output's
// values read back, its reference with the two bounds, where each element
// came from and, sampled, which slice holds it (80). The scale of a 1 GiB
// f32 tensor (2 × 2^28 elements) took 23.7 GB (estimate 25.8 GB); the
// prefill down_proj (294 M input and 16.8 M output elements) 5 GB
// (estimate 6.0 GB).
const (
	inputBytesPerElem  = 16
	outputBytesPerElem = 80
	// A graph holds each tensor's device values, its reference and the
	// error it carries, plus its kernel's own verification.
	graphBytesPerElem = 48
)

// DefaultMemoryBudget is the memory a verification may need by its
// estimate (MemoryEstimate) before it is refused: 16 GiB of this project's
// 24 GiB machines.
const DefaultMemoryBudget = 16 << 30

// MemoryEstimate is about how many bytes Verify needs for p: its HBM
// inputs' and output's elements at the rates above.
func MemoryEstimate(p *kernel.Program) int64 {
	var total int64
	for _, t := range p.Tensors {
		if t.Mem != kernel.HBM || t.View != "" {
			continue
		}
		n := logicalElems(p, t)
		switch {
		case p.Reference != nil && t.Name == p.Reference.Output:
			total += n * (outputBytesPerElem + epilogueBytesPerElem(p.Reference.Epilogue))
		case t.Role == kernel.Input:
			total += n * inputBytesPerElem
		}
	}
	return total
}

// epilogueBytesPerElem is what an einsum's epilogue adds per output
// element (verify/refexpr.go epilogue): the einsum's interval (three
// float64s), each operation's interval of the expression (three each) and
// the result with its two bounds (three): 24 bytes each; 0 without one.
func epilogueBytesPerElem(src string) int64 {
	if src == "" {
		return 0
	}
	n, err := kernel.ParseRefExpr(src)
	if err != nil {
		return 0
	}
	ops := int64(0)
	n.Walk(func(x *kernel.RefNode) {
		if x.Op != "num" && x.Op != "input" {
			ops++
		}
	})
	return 24 * (2 + ops)
}

// logicalElems is the element count of t's logical tensor (the product of
// the sizes of the axes it names).
func logicalElems(p *kernel.Program, t *kernel.Tensor) int64 {
	named := map[string]bool{}
	for _, e := range t.Dims() {
		for _, s := range e.Symbols() {
			named[s] = true
		}
	}
	n := int64(1)
	for _, a := range p.Axes.List() {
		if named[a.Name] && n < 1<<40 {
			n *= int64(a.Size)
		}
	}
	return n
}

// GraphMemoryEstimate is about how many bytes VerifyGraph needs for g:
// every tensor of the graph at graphBytesPerElem, and the largest of its
// kernels' own verifications.
func GraphMemoryEstimate(g *plan.Graph) int64 {
	var total, kernels int64
	for _, o := range g.Ops {
		if o.Plan != nil && o.Plan.Program != nil {
			kernels = max(kernels, MemoryEstimate(o.Plan.Program))
		}
	}
	axes, err := mapping.ParseAxes(g.Workload.Axes)
	if err != nil {
		return kernels // VerifyGraph reports the axes
	}
	for _, t := range g.Tensors {
		n := int64(1)
		for _, a := range t.Axes {
			if s, ok := axes.Size(a); ok && n < 1<<40 {
				n *= int64(s)
			}
		}
		total += n * graphBytesPerElem
	}
	return total + kernels
}

// checkMemory refuses a verification whose estimate passes budget (0: no
// limit), saying how to verify it instead.
func checkMemory(what string, need, budget int64) error {
	if budget <= 0 || need <= budget {
		return nil
	}
	return fmt.Errorf("verify: %s needs about %.1f GiB to simulate, more than the memory budget of %.1f GiB (--memory): verify it at reduced sizes (tcpmap plan --axes) or raise the budget",
		what, float64(need)/(1<<30), float64(budget)/(1<<30))
}
