package engines

import (
	"fmt"
	"slices"
	"strings"

	"tcpmap/model/kernel"
)

// A scatter in one DMA command: the gather's IndirectLoop (002 L1684-1688)
// on the write side. The MoE's dispatch places each token's row at the slot
// its Scatter_Idx names (002 L8664-8675); the vendor's newer library has the
// op as `dma_scatter`, its scaled index a row number (shared/spec/
// reference-notes.md §4, G9). The decision (docs/spec-decisions.md
// "Scatter: the DMA's indirect loop on the write side"): iteration i of the
// indirect entry writes at the index's value at position Offset + i·Step
// times the entry's destination stride (the row's bytes) and reads at i
// times its source stride; the destination's rows no index names are not
// written; two positions naming one row are an error of the kernel
// (DMA-R17), the order of the writes being unstated.

var ruleDMAScatterOnce = NewRule(Rule{ID: "DMA-R17", Engine: "dma", Name: "a scatter writes a row once",
	Cite: "002 L1684-1688, L8664-8675",
	Text: "a scatter's IndirectLoop writes each row at the offset its index value gives; the manual states no order among a command's descriptors (its DMNs run concurrently, 002 L2404), so two index positions naming one destination row leave that row undefined: the index's values must be distinct"})

// ScatterLayout checks the layouts a scatter's one DMA reads and writes
// (DeriveScatter), each given as its axes in row-major order, major first,
// axes of size 1 left out, and returns how many of the output's major axes
// are scattered (those the data lacks) and how many of the index's major
// axes the data shares. The data holds the shared axes, then the row; the
// index holds the shared axes, then the axes along which a row is written
// more than once (the MoE's K choices of a token); the output holds the
// scattered axes, then the row.
func ScatterLayout(dataName, indexName, outName string, data, index, out []string) (scattered, shared int, err error) {
	for shared < len(index) && shared < len(data) && index[shared] == data[shared] {
		shared++
	}
	for _, a := range index[shared:] {
		if slices.Contains(data, a) {
			return 0, 0, fmt.Errorf("the index %s is laid out m![%s] and the data %s m![%s]: a scatter's index holds the axes it shares with the data first, in the data's order, so that each position's row is read at a fixed stride", indexName, strings.Join(index, ", "), dataName, strings.Join(data, ", "))
		}
		if slices.Contains(out, a) {
			return 0, 0, fmt.Errorf("the index %s's axis %s is an axis of the output %s: the index names a row of the output, it does not lie along it", indexName, a, outName)
		}
	}
	row := data[shared:]
	if len(row) == 0 {
		return 0, 0, fmt.Errorf("the index %s holds every axis of the data %s: no row is left to move", indexName, dataName)
	}
	for scattered < len(out) && !slices.Contains(data, out[scattered]) {
		scattered++
	}
	if scattered == 0 {
		return 0, 0, fmt.Errorf("the output %s has no axis the data %s lacks: nothing to scatter along", outName, dataName)
	}
	if !slices.Equal(out[scattered:], row) {
		return 0, 0, fmt.Errorf("the output %s is laid out m![%s]; a scatter writes the scattered axes, then the data's row: m![%s, %s]", outName, strings.Join(out, ", "), strings.Join(out[:scattered], ", "), strings.Join(row, ", "))
	}
	return scattered, shared, nil
}

// DeriveScatter derives the command of a scatter: the rows of data (an HBM
// tensor), each written into out (an HBM tensor) at the rows index's values
// name, once for each of the index's positions along the axes data lacks.
// A row moves in packets of at most max_packet_bytes (002 L2428-2429), and
// the descriptors spread over the chip's DMNs as a gather's do
// (DeriveGather): each row's packets dealt out, then the index positions,
// dealt out too, in a number of parts that is a multiple of the positions
// per data row, so that each descriptor reads its rows at one stride.
func DeriveScatter(spec *Spec, data, index, out *kernel.Tensor) (*kernel.DMACommand, error) {
	eb, df, xf, of, err := indirectAxes(spec, "scatter", "data", data, index, out)
	if err != nil {
		return nil, err
	}
	g, sh, err := ScatterLayout(data.Name, index.Name, out.Name, names(df), names(xf), names(of))
	if err != nil {
		return nil, fmt.Errorf("scatter: %w", err)
	}
	rows, n, per, rowElems := 1, 1, 1, 1
	for _, a := range of[:g] {
		rows *= a.Size
	}
	for _, a := range xf {
		n *= a.Size
	}
	for _, a := range xf[sh:] {
		per *= a.Size
	}
	for _, a := range df[sh:] {
		rowElems *= a.Size
	}
	r := indirectRows{spec: spec, eb: eb, rowElems: rowElems}
	packets, total := r.packets(), r.dmns()
	// ki index parts, a multiple of per dividing n, and kr parts of a row:
	// the pair filling the most DMNs, index parts first on a tie. Data of
	// one row (every position reads it) takes any ki.
	step := per
	if n == per {
		step = 1
	}
	ki, kr := 0, 0
	for k := step; k <= n && k <= total; k += step {
		if n%k != 0 {
			continue
		}
		if q := largestDivisor(packets, total/k); k*q > ki*kr || (k*q == ki*kr && k > ki) {
			ki, kr = k, q
		}
	}
	if ki == 0 {
		return nil, fmt.Errorf("scatter: each row of %q is written at %d index positions, more than the chip's %d DMNs: a descriptor's one indirect loop steps the positions of one row apart", data.Name, per, total)
	}
	rowBytes := rowElems * eb
	cmd := r.deal(ki, kr, func(i int) (kernel.DMAEntry, int, int) {
		ix := &kernel.DMAIndex{Tensor: index.Name, Offset: i, Rows: rows, Write: true}
		if ki > 1 {
			ix.Step = ki
		}
		// Position i + t·ki reads data row (i + t·ki) / per = i/per + t·ki/per
		// (0 when the data is one row).
		return kernel.DMAEntry{Size: n / ki, SrcStride: ki / per * rowBytes, DstStride: rowBytes, Term: index.Name, Index: ix},
			int(data.Addr) + i/per*rowBytes, int(out.Addr)
	})
	if err := CheckDMACommand(spec, cmd); err != nil {
		return nil, fmt.Errorf("scatter: %w", err)
	}
	return cmd, nil
}

// ScatterOnce checks DMA-R17 on a scatter's index values (vals, the index
// tensor's elements in its row-major order): no destination row is named
// twice. Values outside [0, rows) are DMA-R16's.
func ScatterOnce(index string, vals []int, rows int) error {
	first := make(map[int]int, len(vals))
	for p, v := range vals {
		if v < 0 || v >= rows {
			continue
		}
		if q, ok := first[v]; ok {
			return ruleDMAScatterOnce.Violate("index %q names row %d at positions %d and %d", index, v, q, p).With("row", v)
		}
		first[v] = p
	}
	return nil
}
