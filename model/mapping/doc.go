// Package mapping implements the TCP mapping-expression algebra, the
// `m![...]` language of the Virtual ISA manual (002 L582-1028, "Mapping
// Expressions"): a mapping expression says which tensor element every
// position of a linear buffer holds.
//
// # Vocabulary
//
//   - [Axes] declares the tensor axes and their sizes (`axes![A = 8, B = 512]`,
//     002 L590-595), optionally with skewed axes (`B' = B - A`, 002 L986-1003).
//   - [Expr] is an immutable expression tree: symbols, broadcasts (`m![1]` is
//     the identity), pairs (major, minor), stride `/`, modulo `%`, resize `=`,
//     padding `#` with a [PadKind], and linear combinations `$(e1:n1, ...)`.
//     [Parse] reads the text form; [Sym], [Pair], [Expr.Div] etc. build
//     expressions in code; [Expr.String] prints the canonical text.
//   - [Expr.Map] is the exact position semantics (reference-notes §2.4): a
//     buffer position maps to a [Cell] that is a live tensor [Index], padding,
//     or out of bounds. [Program] is the compiled, allocation-free form of the
//     same function for hot loops.
//   - [Equiv] decides semantic equivalence (002 L1017-1028) by enumeration.
//   - [Factorize] and [Normalize] give the factorized normal form
//     (reference-notes §2.5-2.6): an innermost-first list of digit factors that
//     the engines walk to derive sequencer configurations.
//   - [SplitAt], [TileView] and [CheckTile] are the view operations
//     (reference-notes §2.7-2.8, 002 L813-831, L954-971).
//
// # Position semantics in one paragraph
//
// A symbol A of size S maps position i < S to {A: i}. A pair [L, R] maps i to
// L(i / |R|) + R(i % |R|) (coordinates add per axis; a padding cell on the
// major side wins). E / s maps i to E(i*s); E % m and E = m keep the first m
// cells; E # p appends padding cells up to size p. Coordinate 0 is dropped
// from indices (002 L671-673), so position 0 of every expression is the empty
// index {}. Two rules go beyond the manual's trait code, both recorded in
// docs/spec-decisions.md: the operand of `/ % =` that is itself a compound
// mapping (`[C, D # 64] / 13`) contributes a position inside that mapping, and
// contributions to the same compound add up before it is decoded, so that
// `[E / n, E % n] ≡ E` holds for every E (002 L1023-1024); and a cell whose
// summed coordinate exceeds its axis (cell 15 of `[R # 16 / 4, R # 16 % 4]`
// with R=14) holds no tensor element and is Top padding.
package mapping
