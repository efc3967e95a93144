package emit

import (
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// hbmToView prints the one HBM-to-HBM copy a kernel spells: an HBM
// argument copied into a tile view of the argument the kernel updates in
// place (an update_slice, search/opslice.go), the view bound first:
//
//	let cache_new_row: HbmTensorViewMut<'_, bf16, Chip, m![H, 1 # 8, D]> =
//	    cache.view_mut().tile::<m![S], 1, m![H, 1 # 8, D]>(7);
//	row.view().to_hbm_view(&mut ctx.tdma, cache_new_row);
//
// (HbmTensor::view_mut, HbmTensorViewMut::tile, HbmTensorView::to_hbm_view
// in both libraries). The view pins one axis of the argument's element to
// one index: its element is the argument's with that axis's term `1 # n`,
// at that index's byte offset. Any other HBM-to-HBM copy (a graph's
// relayout, in search.GraphProgram's merged programs, which are priced,
// not emitted) is refused.
// gatherUnspelled is why a gather's DMA is not emitted in either API.
const gatherUnspelled = "a gather (the DMA's indirect loop over an index tensor, 002 L1684-1688) has no spelling in the manual's Rust API " +
	"(its indirect sequencing is a TODO, 002 L1004-1006), and furiosa-opt-std 0.6.0's dma_gather is not in the catalogs tcpmap's stubs are built from"

// scatterUnspelled is why emit refuses a scatter (kernel.Op.Scatter).
const scatterUnspelled = "a scatter (the DMA's indirect loop on the write side, 002 L1684-1688) has no spelling in the manual's Rust API " +
	"(its indirect sequencing is a TODO, 002 L1004-1006), and furiosa-opt-std 0.6.0's dma_scatter is not in the catalogs tcpmap's stubs are built from"

func (w *rustWriter) hbmToView(op *kernel.Op) error {
	p, k := w.p, w.k
	src, _ := p.Tensor(op.Src)
	dst, _ := p.Tensor(op.Dst)
	if k.inPlace == nil || dst == nil || dst.View != k.inPlace.Name || dst.Role != kernel.Intermediate {
		return fmt.Errorf("op %s -> %s: an HBM-to-HBM copy other than into a view of the argument the kernel updates in place (a graph's relayout) is not emitted in a kernel", op.Src, op.Dst)
	}
	if src == nil || src.Role != kernel.Input {
		return fmt.Errorf("op %s -> %s: the copy into the argument updated in place reads an HBM argument, not %s", op.Src, op.Dst, op.Src)
	}
	axis, idx, err := pinned(k.inPlace, dst)
	if err != nil {
		return fmt.Errorf("op %s -> %s: %w", op.Src, op.Dst, err)
	}
	el := w.mapTextOf(dst.Element, roleNone, true)
	w.line("%slet %s: HbmTensorViewMut<'_, %s, %s, %s> =", w.ind, dst.Name, dst.DType, w.mapText(dst.Chip, roleChip), el)
	w.line("%s    %s.view_mut().tile::<m![%s], 1, %s>(%d);", w.ind, k.inPlace.Name, axis, el, idx)
	w.line("%s%s.view().to_hbm_view(&mut ctx.tdma, %s);", w.ind, src.Name, dst.Name)
	return nil
}

// pinned finds the axis a tile view v of HBM argument b pins and the index
// it pins it to: v's element is b's with one term, an axis of size n,
// replaced by `1 # n`, and v sits that index's stride of bytes past b.
func pinned(b, v *kernel.Tensor) (string, int64, error) {
	bt, vt := b.Element.Parts(), v.Element.Parts()
	if b.Element.Kind() != mapping.KindPair {
		bt = []*mapping.Expr{b.Element}
	}
	if v.Element.Kind() != mapping.KindPair {
		vt = []*mapping.Expr{v.Element}
	}
	bad := fmt.Errorf("the view m![%s] of %s m![%s] is not the argument with one axis pinned (`1 # n` for the axis)", v.Element, b.Name, b.Element)
	if len(bt) != len(vt) {
		return "", 0, bad
	}
	axis, at := "", -1
	for i := range bt {
		if bt[i].Equal(vt[i]) {
			continue
		}
		if at >= 0 || bt[i].Kind() != mapping.KindSymbol || vt[i].Kind() != mapping.KindPadding || !vt[i].Inner().IsIdentity() || vt[i].Size() != bt[i].Size() {
			return "", 0, bad
		}
		axis, at = bt[i].Name(), i
	}
	if at < 0 {
		return "", 0, bad
	}
	stride := int64(b.DType.Bits()) / 8
	for _, t := range bt[at+1:] {
		stride *= int64(t.Size())
	}
	off := v.Addr - b.Addr
	if off < 0 || off%stride != 0 || off/stride >= int64(bt[at].Size()) {
		return "", 0, fmt.Errorf("the view of %s sits %d bytes past it: not an index of %s (a stride of %d bytes, %d indices)", b.Name, off, axis, stride, bt[at].Size())
	}
	return axis, off / stride, nil
}
