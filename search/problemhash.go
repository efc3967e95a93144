package search

import (
	"tcpmap/constraints"
	"tcpmap/results/digest"
)

// canonicalProblem is what a point's workload hash covers: the
// contraction as the planner sees it, without file names or positions.
type canonicalProblem struct {
	Einsum string             `json:"einsum"`
	Axes   []canonicalAxis    `json:"axes"`
	In     []canonicalOperand `json:"in"`
	Out    canonicalOperand   `json:"out"`
	Acc    string             `json:"acc"`
	Chips  int                `json:"chips"`
	// Epilogue is the fused ops' work (kind and constant), in order;
	// left out without one, so that other problems keep their hashes.
	Epilogue []canonicalEpilogue `json:"epilogue,omitempty"`
	// Operands are the epilogue's tensors (left out without one).
	Operands []canonicalOperand `json:"operands,omitempty"`
}

type canonicalEpilogue struct {
	Kind   string   `json:"kind"`
	Scalar *float64 `json:"scalar,omitempty"`
}

type canonicalAxis struct {
	Name  string `json:"name"`
	Size  int    `json:"size"`
	Valid int    `json:"valid,omitempty"`
	Class string `json:"class"`
}

type canonicalOperand struct {
	Name   string   `json:"name"`
	Axes   []string `json:"axes"`
	DType  string   `json:"dtype"`
	Layout string   `json:"layout"`
}

// ProblemHash is the content hash of a contraction (record.Key.Workload).
func ProblemHash(p *constraints.Problem) (string, error) {
	c := canonicalProblem{Einsum: p.Einsum(), Acc: p.Acc.String(), Chips: p.Chips}
	for _, a := range p.Axes {
		c.Axes = append(c.Axes, canonicalAxis{Name: a.Name, Size: a.Size, Valid: a.Valid, Class: a.Class.String()})
	}
	op := func(o *constraints.Operand) canonicalOperand {
		l := ""
		if o.Layout != nil {
			l = o.Layout.Text()
		}
		return canonicalOperand{Name: o.Name, Axes: o.Axes, DType: o.DType.String(), Layout: l}
	}
	c.In = []canonicalOperand{op(&p.In[0]), op(&p.In[1])}
	c.Out = op(&p.Out)
	for _, e := range p.Epilogue {
		c.Epilogue = append(c.Epilogue, canonicalEpilogue{Kind: string(e.Kind), Scalar: e.Scalar})
	}
	for i := range p.Operands {
		c.Operands = append(c.Operands, op(&p.Operands[i]))
	}
	return digest.JSON(c)
}
