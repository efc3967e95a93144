// Package workload reads, validates and summarizes workload files: the
// tensor computations tcpmap plans, written in YAML (gopkg.in/yaml.v3).
// A file holds one of two forms.
//
// # Single einsum
//
//	name: gemm
//	einsum: IK,KJ->IJ          # or {inputs: [[I, K], [K, J]], output: [I, J]}
//	axes: {I: 512, J: 512, K: 2048}
//	dtype: {in: bf16, acc: f32, out: bf16}
//	chips: 1
//	layouts: {in0: "m![K, I]"} # optional
//
// The compact einsum takes single-letter axes written together, operands
// separated by commas, the output after "->" (empty for a scalar: "A,A->").
// Multi-letter axes need the list form. An einsum has two inputs
// (002 L110); an output axis must appear in an input; no axis repeats
// within an operand; every axis is declared in axes and every declared axis
// is used. The tensors of this form are named in0, in1 (the inputs, dtype
// in) and out (the output, dtype out); acc must be the accumulator the
// contraction widens in to (bf16/f8 → f32, i4/i8 → i32; 002 L3782).
// layouts is keyed by those tensor names: each value is a mapping
// expression (the m![...] algebra of tcpmap/model/mapping) over exactly the
// tensor's axes, with as many positions as the tensor has elements (no
// padding); a tensor without one is row-major in the order its axes are
// written (002 L574: the leftmost axis is major).
//
// # Graph
//
//	name: attention-head
//	chips: 1
//	axes: {S: 2048, T: 2048, D: 128}
//	tensors:
//	  q: {axes: [S, D], dtype: bf16}   # optional layout: "m![...]"
//	  ...
//	ops:
//	  - {name: qk, kind: einsum, inputs: [q, k], outputs: [s]}
//	  - {name: softmax, kind: softmax, inputs: [s], outputs: [p], axis: T}
//	  ...
//
// Tensors are declared once with their axes (an unordered set, 002 L101,
// written in the order of their default row-major layout), dtype and
// optional layout. Ops run in the order written; each has a name, a kind
// (see Kind: einsum, elementwise add/sub/mul/div/ceil_div/max/gt/ge/lt/where,
// exp/sigmoid/silu/cast, the bit kinds of the manual's top-k
// pack/unpack/sort_key/bit_and, softmax, rmsnorm, causal_mask, reduce,
// cumsum, topk, one_hot, compact, gather, scatter, copy, reshape,
// update_slice),
// inputs, outputs, and the parameters its kind requires (axis, axes, k,
// query, key, op; scalar for binary kinds, standing for the last input).
// An einsum op's contraction is its operands' axes: inputs → output. An
// axis size may name another axis declared with a number (Sq: S) for two
// roles of one length.
//
// A tensor may state its values by rule, `values: {kind: causal, query:
// S, key: T}`: an additive causal mask (0 where T <= S, −inf elsewhere),
// the attention_mask the manual's causal mask reads (002 L8094-8099), a
// constant input the host builds. causal_mask takes it as its second
// input (x + mask); without it the op has no kernel. `values: {kind:
// iota, axis: E}` states an integer tensor over E holding 0, 1, …, E−1
// (the manual's Expert_Indices, 002 L8623); one_hot takes it as its
// second input, the positions its indices are compared with.
//
// A tensor is a graph input when no op produces it, an output when no op
// consumes it, an intermediate otherwise. Each tensor is produced at most
// once, read only after the op producing it, and used by some op.
//
// # Required fields
//
// Every field shown above except layouts (and layout, values) is required, chips
// included: the chip count is system-dependent (002 L129) and is never
// defaulted. Unknown fields, repeated keys, YAML aliases and extra
// documents are errors.
//
// # Errors
//
// Parse and Load return an ErrorList with every problem found; each Error
// prints as file:line:col: field: msg, the position being the YAML node's
// (or, inside an einsum or layout string, the offending character's).
//
// # Counting conventions
//
// FLOPs: an einsum counts 2 per point of its iteration space (a multiply
// and an add per multiply-accumulate); a vector op counts 1 per point of
// its iteration space, the product of the sizes of every axis of its
// operands (softmax over [S, T] is S·T, not the several passes it takes);
// data ops (gather, scatter, copy, reshape, update_slice) count 0.
// MinBytes: every graph input read once and every graph output written
// once, at the dtype's width (i4 half a byte); an update_slice writes only
// its slice. The single-einsum form reads in0 and in1 and writes out.
package workload
