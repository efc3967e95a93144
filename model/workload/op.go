package workload

import (
	"fmt"
	"sort"
	"strings"
)

// Kind is the kind of an op.
type Kind string

// Op kinds. A contraction (einsum) runs on the Contraction Engine; the
// vector kinds are what the manual's case studies run on the Vector Engine;
// the data kinds move or view data without arithmetic.
const (
	// KindEinsum is a two-input contraction; its einsum is the operands'
	// axes (inputs → output) and every input axis absent from the output is
	// summed (002 L110-L111). The output dtype may differ from the inputs'
	// (the accumulator is cast, 002 L306).
	KindEinsum Kind = "einsum"

	// Elementwise kinds. Each input's axes are a subset of the output's
	// (the input is broadcast along the others) and the output has no axis
	// that no input has. With `scalar:` the last input is that constant
	// (002 L161: vector_fxp(AddFxp, 1) adds a constant).
	KindAdd     Kind = "add"      // a + b (residual connection, 002 L8140)
	KindSub     Kind = "sub"      // a - b (002 L8643)
	KindMul     Kind = "mul"      // a * b (SwiGLU product, 002 L8166; 1/sqrt(d_k) scaling, 002 L8089)
	KindDiv     Kind = "div"      // a / b
	KindCeilDiv Kind = "ceil_div" // ceil(a / b) (Num_Blocks, 002 L8638)
	KindMax     Kind = "max"      // max(a, b)
	KindGT      Kind = "gt"       // 1 if a > b else 0 (002 L8565)
	KindGE      Kind = "ge"       // 1 if a >= b else 0 (002 L8654)
	KindLT      Kind = "lt"       // 1 if a < b else 0 (002 L8582)
	KindWhere   Kind = "where"    // cond != 0 ? a : b (002 L8652)
	KindExp     Kind = "exp"      // e^x
	KindSigmoid Kind = "sigmoid"  // 1 / (1 + e^-x)
	KindSiLU    Kind = "silu"     // x * sigmoid(x) (002 L8165-L8166)
	KindCast    Kind = "cast"     // the same values in another dtype
	// Bit kinds of the manual's branchless top-k (002 L8543-8590), on i32
	// bit patterns.
	KindPack    Kind = "pack"     // (bits of bf16 a) << 16 | b: a score and its index in one i32 (002 L8547)
	KindUnpack  Kind = "unpack"   // the bf16 nearest the f32 whose bits are a: a >> 16 when a's lower half is below 0x8000 (002 L8589)
	KindSortKey Kind = "sort_key" // a, or a ^ 0x7fff0000 where a < 0: a packed float ordered as an i32 (002 L8550-8552)
	KindBitAnd  Kind = "bit_and"  // a & b (002 L8590)

	// Reductions and normalizations along named axes.
	KindSoftmax    Kind = "softmax"     // exp(x_i) / sum_j exp(x_j) along `axis` (002 L8109)
	KindRMSNorm    Kind = "rmsnorm"     // x / sqrt(mean(x^2)) along `axis` (002 L8016)
	KindCausalMask Kind = "causal_mask" // x if key <= query else -inf (002 L8094, L8098)
	KindReduce     Kind = "reduce"      // `op` (sum or max) over `axes` (002 L8570, L8705)
	KindCumsum     Kind = "cumsum"      // inclusive prefix sum over `axes`, row-major (002 L8643, L8648)
	KindTopK       Kind = "topk"        // the `k`-axis-size largest along `axis`: values and indices (002 L8481)
	KindOneHot     Kind = "one_hot"     // one-hot of integer indices along the new `axis` (002 L8630)
	KindCompact    Kind = "compact"     // keep x where keep != 0, compacted over `axes` (filter_compaction, 002 L8583, L8654)

	// Data movement and views: no arithmetic.
	KindGather      Kind = "gather"       // table[index] over the table's `axes` (002 L8003, L8053, L8685)
	KindScatter     Kind = "scatter"      // data to the output's `axes` at index (002 L8672-L8673)
	KindCopy        Kind = "copy"         // the same tensor in another buffer/layout (KV cache store, 002 L8070)
	KindReshape     Kind = "reshape"      // row-major view with other axes, same elements (002 L8056-L8057)
	KindUpdateSlice Kind = "update_slice" // dest with one index of `axis` replaced by src, in place (002 L8295-L8296)
)

// kindSpec describes the shape of one kind: arity, allowed parameters and
// whether it computes (vector), contracts, or only moves data.
type kindSpec struct {
	in, out int      // number of inputs and outputs
	maxIn   int      // more inputs allowed, up to maxIn (0: in exactly)
	scalar  bool     // `scalar` may stand for the last input
	params  []string // parameter fields, all required
	class   opClass
}

type opClass int

const (
	classContraction opClass = iota
	classVector
	classData
)

var kinds = map[Kind]kindSpec{
	KindEinsum:      {in: 2, out: 1, class: classContraction},
	KindAdd:         {in: 2, out: 1, scalar: true, class: classVector},
	KindSub:         {in: 2, out: 1, scalar: true, class: classVector},
	KindMul:         {in: 2, out: 1, scalar: true, class: classVector},
	KindDiv:         {in: 2, out: 1, scalar: true, class: classVector},
	KindCeilDiv:     {in: 2, out: 1, scalar: true, class: classVector},
	KindMax:         {in: 2, out: 1, scalar: true, class: classVector},
	KindGT:          {in: 2, out: 1, scalar: true, class: classVector},
	KindGE:          {in: 2, out: 1, scalar: true, class: classVector},
	KindLT:          {in: 2, out: 1, scalar: true, class: classVector},
	KindWhere:       {in: 3, out: 1, scalar: true, class: classVector},
	KindExp:         {in: 1, out: 1, class: classVector},
	KindSigmoid:     {in: 1, out: 1, class: classVector},
	KindSiLU:        {in: 1, out: 1, class: classVector},
	KindCast:        {in: 1, out: 1, class: classVector},
	KindPack:        {in: 2, out: 1, class: classVector},
	KindUnpack:      {in: 1, out: 1, class: classVector},
	KindSortKey:     {in: 1, out: 1, class: classVector},
	KindBitAnd:      {in: 2, out: 1, scalar: true, class: classVector},
	KindSoftmax:     {in: 1, out: 1, params: []string{"axis"}, class: classVector},
	KindRMSNorm:     {in: 1, out: 1, params: []string{"axis"}, class: classVector},
	KindCausalMask:  {in: 1, maxIn: 2, out: 1, params: []string{"query", "key"}, class: classVector},
	KindReduce:      {in: 1, out: 1, params: []string{"op", "axes"}, class: classVector},
	KindCumsum:      {in: 1, out: 1, params: []string{"axes"}, class: classVector},
	KindTopK:        {in: 1, out: 2, params: []string{"axis", "k"}, class: classVector},
	KindOneHot:      {in: 1, maxIn: 2, out: 1, params: []string{"axis"}, class: classVector},
	KindCompact:     {in: 2, out: 1, params: []string{"axes"}, class: classVector},
	KindGather:      {in: 2, out: 1, params: []string{"axes"}, class: classData},
	KindScatter:     {in: 2, out: 1, params: []string{"axes"}, class: classData},
	KindCopy:        {in: 1, out: 1, class: classData},
	KindReshape:     {in: 1, out: 1, class: classData},
	KindUpdateSlice: {in: 2, out: 1, params: []string{"axis"}, class: classData},
}

// Kinds returns every op kind, sorted by name.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func kindList() string {
	ks := Kinds()
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// IsContraction reports whether ops of kind k run as a contraction.
func (k Kind) IsContraction() bool { return k == KindEinsum }

// IsVector reports whether ops of kind k compute elementwise or along axes
// (Vector Engine work in the manual's case studies).
func (k Kind) IsVector() bool { s, ok := kinds[k]; return ok && s.class == classVector }

// IsData reports whether ops of kind k only move or view data.
func (k Kind) IsData() bool { s, ok := kinds[k]; return ok && s.class == classData }

// Reduce operators of the reduce kind.
const (
	ReduceSum = "sum"
	ReduceMax = "max"
)

// Op is one operation of a workload. Inputs and Outputs name tensors; the
// parameter fields used depend on Kind.
type Op struct {
	Name    string   `json:"name"`
	Kind    Kind     `json:"kind"`
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	// Einsum is the contraction of an einsum op, derived from its operands'
	// axes.
	Einsum *Einsum `json:"einsum,omitempty"`
	// Axis: the axis of softmax, rmsnorm, topk (the one searched),
	// one_hot (the new depth axis), update_slice (the one indexed).
	Axis string `json:"axis,omitempty"`
	// Axes: the axes of reduce and cumsum, the table axes a gather indexes,
	// the output axes a scatter addresses, the axes compact packs.
	Axes []string `json:"axes,omitempty"`
	// K is the output axis of topk; its size is the number kept.
	K string `json:"k,omitempty"`
	// Query and Key are the two axes of causal_mask (keep key <= query).
	Query string `json:"query,omitempty"`
	Key   string `json:"key,omitempty"`
	// Reduce is the operator of reduce: sum or max.
	Reduce string `json:"op,omitempty"`
	// Scalar, when set, is the constant that stands for the last input.
	Scalar *float64 `json:"scalar,omitempty"`
	// Iter is the size of the op's iteration space: the product of the sizes
	// of every axis of its operands.
	Iter int64 `json:"iter"`
	Line int   `json:"line"`
	// Epilogue, on an einsum of a fused workload (Fuse), are the ops its
	// kernel does after the contraction, in order; Outputs then name the
	// last one's output. A workload file never sets it.
	Epilogue []*Op `json:"epilogue,omitempty"`
}

// FLOPs is the op's arithmetic count by the package convention: an einsum
// is 2 per point of its iteration space (one multiply and one add per MAC);
// a vector op is 1 per point of its iteration space (every operand axis);
// a data op (gather, scatter, copy, reshape, update_slice) is 0.
func (o *Op) FLOPs() int64 {
	switch {
	case o.Kind == KindEinsum:
		return 2 * o.Iter
	case o.Kind.IsVector():
		return o.Iter
	}
	return 0
}

// String prints the op in one line: "name: kind(in, ...) -> out, ...".
func (o *Op) String() string {
	s := fmt.Sprintf("%s: %s(%s) -> %s", o.Name, o.Kind, strings.Join(o.Inputs, ", "), strings.Join(o.Outputs, ", "))
	if o.Einsum != nil {
		s += " [" + o.Einsum.String() + "]"
	}
	return s
}
