package search

import (
	"fmt"
	"slices"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/workload"
)

// A gather (the RoPE table lookup of the transformer layers, 002 L8043-8053,
// L8269-8277; the MoE's weight gathers, 002 L8683-8686) is one HBM-to-HBM
// DMA whose read side walks the table's rows in the order the index's
// values give: the sequencer's IndirectLoop (002 L1684-1688;
// engines.DeriveGather, docs/spec-decisions.md "Gather: the DMA's indirect
// loop"). No slice computes. The table's gathered axes must be its major
// ones, so that a row is a contiguous run; the output holds the index's
// axes, then the row. The space has that one candidate (its spread over the
// DMA engines is the command's), so its plan is optimal by enumeration.

// gatherSpace fills s for a gather op o, or says why it has none.
func (s *opSpace) gatherSpace(at string) (*opSpace, error) {
	w := s.w
	table, index := s.ins[0], s.ins[1]
	s.family = "gather"
	s.order = map[string][]string{}
	for _, t := range []*workload.Tensor{table, index, s.out} {
		ord, err := layoutOrder(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
		s.order[t.Name] = live(w, ord)
	}
	if !index.DType.IsInt() {
		return nil, fmt.Errorf("%s: the index %s is %s: a gather's index holds row numbers, integers", at, index.Name, index.DType)
	}
	if table.DType != s.out.DType {
		return nil, fmt.Errorf("%s: the table %s is %s, the output %s %s: a gather copies the rows as they are", at, table.Name, table.DType, s.out.Name, s.out.DType)
	}
	if _, err := engines.GatherLayout(table.Name, index.Name, s.out.Name, s.order[table.Name], s.order[index.Name], s.order[s.out.Name]); err != nil {
		return nil, fmt.Errorf("%s: no kernel: %v", at, err)
	}
	if err := indexedInOrder(w, table, s.out, s.order[table.Name]); err != nil {
		return nil, fmt.Errorf("%s: no kernel: %v", at, err)
	}
	s.axes = axesDecl(w, s.order[table.Name], s.order[index.Name])
	s.cands = []opCand{{Tiles: 1, Form: string(workload.KindGather)}}
	return s, nil
}

// indexedInOrder checks that the axes an index's values address (t's axes
// other lacks: a gather's table's gathered ones, a scatter's output's
// scattered ones) lie in t's layout ord in the order t declares them: the
// value is their flat row-major position in that order (the op's
// reference), and the DMA's indirect loop steps the layout's rows.
func indexedInOrder(w *workload.Workload, t, other *workload.Tensor, ord []string) error {
	var declared, laid []string
	for _, a := range live(w, t.Axes) {
		if !slices.Contains(other.Axes, a) {
			declared = append(declared, a)
		}
	}
	for _, a := range ord {
		if !slices.Contains(other.Axes, a) {
			laid = append(laid, a)
		}
	}
	if !slices.Equal(declared, laid) {
		return fmt.Errorf("%s's layout m![%s] holds the axes its index addresses as %s, but the index's value is their position in the order %s declares them, %s",
			t.Name, strings.Join(ord, ", "), strings.Join(laid, ", "), t.Name, strings.Join(declared, ", "))
	}
	return nil
}

// axesDecl is a program's axes declaration over the axes of ords, in
// their order, each once, those of size 1 left out (in no mapping).
func axesDecl(w *workload.Workload, ords ...[]string) string {
	var names []string
	for _, ord := range ords {
		for _, a := range live(w, ord) {
			n, _ := w.AxisSize(a)
			if d := fmt.Sprintf("%s=%d", a, n); !slices.Contains(names, d) {
				names = append(names, d)
			}
		}
	}
	return strings.Join(names, ", ")
}

// live is ord without its axes of size 1, which are in no mapping.
func live(w *workload.Workload, ord []string) []string {
	var out []string
	for _, a := range ord {
		if n, _ := w.AxisSize(a); n > 1 {
			out = append(out, a)
		}
	}
	return out
}

// buildGather writes the gather's program: the table and the index as
// arguments, the output as the result, and the one DMA between them.
func (s *opSpace) buildGather() (*kernel.Program, error) {
	table, index := s.ins[0], s.ins[1]
	b := &opBuilder{s: s, k: kProg{Name: s.o.Name, Axes: s.axes, Chips: 1}}
	bytes := func(t *workload.Tensor) int64 { return t.Elems * int64(t.DType.SizeBits()) / 8 }
	// Each tensor at a 256 MiB boundary past the one before.
	ia := alignUp(bytes(table), 256<<20)
	oa := alignUp(ia+bytes(index), 256<<20)
	b.k.Tensors = []kTensor{
		{Name: table.Name, Mem: "hbm", DType: table.DType.String(), Role: "input", Chip: "1", Element: b.hbmElement(table)},
		{Name: index.Name, Mem: "hbm", DType: index.DType.String(), Role: "input", Chip: "1", Element: b.hbmElement(index), Addr: ia},
		{Name: s.out.Name, Mem: "hbm", DType: s.out.DType.String(), Role: "output", Chip: "1", Element: b.hbmElement(s.out), Addr: oa},
	}
	b.k.Ops = []kOp{{Context: "dma", Kind: "hbm_to_hbm", Src: table.Name, Dst: s.out.Name, Index: index.Name}}
	// The index's random values are rows of the table (the reference's
	// range is every input's: the table's copied values do not mind it).
	rows := 1
	for _, a := range s.o.Axes {
		n, _ := s.w.AxisSize(a)
		rows *= int(n)
	}
	b.k.Reference = kReference{Op: "gather", Inputs: []string{table.Name, index.Name}, Output: s.out.Name, Range: []float64{0, float64(rows - 1)}}
	return b.k.program()
}

// A scatter (the MoE's dispatch, 002 L8664-8675) is the gather's DMA with
// its IndirectLoop on the write side: each data row written at the output
// row its index values name (engines.DeriveScatter; docs/spec-decisions.md
// "Scatter: the DMA's indirect loop on the write side"). The output's
// scattered axes must be its major ones and the index must hold the axes it
// shares with the data first; the output's rows no index names are not
// written. One candidate, as a gather's.

// scatterSpace fills s for a scatter op, or says why it has none.
func (s *opSpace) scatterSpace(at string) (*opSpace, error) {
	w := s.w
	data, index := s.ins[0], s.ins[1]
	s.family = "scatter"
	s.order = map[string][]string{}
	for _, t := range []*workload.Tensor{data, index, s.out} {
		ord, err := layoutOrder(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
		s.order[t.Name] = live(w, ord)
	}
	if !index.DType.IsInt() {
		return nil, fmt.Errorf("%s: the index %s is %s: a scatter's index holds row numbers, integers", at, index.Name, index.DType)
	}
	if data.DType != s.out.DType {
		return nil, fmt.Errorf("%s: the data %s is %s, the output %s %s: a scatter copies the rows as they are", at, data.Name, data.DType, s.out.Name, s.out.DType)
	}
	if _, _, err := engines.ScatterLayout(data.Name, index.Name, s.out.Name, s.order[data.Name], s.order[index.Name], s.order[s.out.Name]); err != nil {
		return nil, fmt.Errorf("%s: no kernel: %v", at, err)
	}
	if err := indexedInOrder(w, s.out, data, s.order[s.out.Name]); err != nil {
		return nil, fmt.Errorf("%s: no kernel: %v", at, err)
	}
	s.axes = axesDecl(w, s.order[s.out.Name], s.order[index.Name])
	s.cands = []opCand{{Tiles: 1, Form: string(workload.KindScatter)}}
	return s, nil
}

// buildScatter writes the scatter's program: the data and the index as
// arguments, the output as the result, and the one DMA between them.
func (s *opSpace) buildScatter() (*kernel.Program, error) {
	data, index := s.ins[0], s.ins[1]
	b := &opBuilder{s: s, k: kProg{Name: s.o.Name, Axes: s.axes, Chips: 1}}
	bytes := func(t *workload.Tensor) int64 { return t.Elems * int64(t.DType.SizeBits()) / 8 }
	ia := alignUp(bytes(data), 256<<20)
	oa := alignUp(ia+bytes(index), 256<<20)
	b.k.Tensors = []kTensor{
		{Name: data.Name, Mem: "hbm", DType: data.DType.String(), Role: "input", Chip: "1", Element: b.hbmElement(data)},
		{Name: index.Name, Mem: "hbm", DType: index.DType.String(), Role: "input", Chip: "1", Element: b.hbmElement(index), Addr: ia},
		{Name: s.out.Name, Mem: "hbm", DType: s.out.DType.String(), Role: "output", Chip: "1", Element: b.hbmElement(s.out), Addr: oa},
	}
	b.k.Ops = []kOp{{Context: "dma", Kind: "hbm_to_hbm", Src: data.Name, Dst: s.out.Name, Index: index.Name, Scatter: true}}
	// The index's random values are distinct rows of the output
	// (verify draws them so for a scatter's reference).
	rows := 1
	for _, a := range s.o.Axes {
		n, _ := s.w.AxisSize(a)
		rows *= int(n)
	}
	b.k.Reference = kReference{Op: "scatter", Inputs: []string{data.Name, index.Name}, Output: s.out.Name, Range: []float64{0, float64(rows - 1)}}
	return b.k.program()
}
