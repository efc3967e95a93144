package verify

import (
	"fmt"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// The executor's HBM tensors.

// hbmLayout walks an HBM tensor's positions: position pos of
// Pair(Chip, Element) is element pos mod |Element| of chip pos / |Element|,
// at byte address Addr + element·bits/8 of that chip's HBM (002 L137,
// L1029-1200).
type hbmLayout struct {
	t      *kernel.Tensor
	prog   *mapping.Program
	per    int
	bits   int
	stride []int // per axis slot: the Logical stride, 0 for axes it lacks
	coords []int
}

func newHBMLayout(p *kernel.Program, t *kernel.Tensor, l *Logical) (*hbmLayout, error) {
	chip := t.Chip
	if chip == nil {
		chip = mapping.Identity()
	}
	e := mapping.Pair(chip, t.Element)
	prog, err := mapping.Compile(e, p.Axes)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	h := &hbmLayout{t: t, prog: prog, per: t.Element.Size(), bits: t.DType.SizeBits(),
		stride: make([]int, prog.Coords()), coords: make([]int, prog.Slots())}
	s := 1
	for i := len(l.Axes) - 1; i >= 0; i-- {
		slot, ok := p.Axes.Slot(l.Axes[i].Name)
		if !ok {
			return nil, fmt.Errorf("tensor %q: axis %s is not declared", t.Name, l.Axes[i].Name)
		}
		h.stride[slot] = s
		s *= l.Axes[i].Size
	}
	return h, nil
}

// logical returns the Logical offset of position pos, or false for padding.
func (h *hbmLayout) logical(pos int) (int, bool) {
	kind, _ := h.prog.Eval(pos, h.coords)
	if kind != mapping.Live {
		return 0, false
	}
	off := 0
	for slot, s := range h.stride {
		off += h.coords[slot] * s
	}
	return off, true
}

// chipBytes is the byte extent of one chip's part of the tensor.
func (h *hbmLayout) chipBytes() int { return (h.per*h.bits + 7) / 8 }

// WriteHBMTensor stores l's values into tensor t's HBM bytes through its
// mappings; positions of t's padding are left as they are.
func WriteHBMTensor(d *Device, p *kernel.Program, t *kernel.Tensor, l *Logical) error {
	h, err := newHBMLayout(p, t, l)
	if err != nil {
		return err
	}
	buf := make([]byte, h.chipBytes())
	for chip := 0; chip < h.prog.Size()/h.per; chip++ {
		if err := d.ReadHBM(chip, t.Addr, buf); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		for e := 0; e < h.per; e++ {
			off, ok := h.logical(chip*h.per + e)
			if !ok {
				continue
			}
			if err := t.DType.Store(buf, e, l.Vals[off]); err != nil {
				return fmt.Errorf("tensor %q at %s: %w", t.Name, l.IndexString(off), err)
			}
		}
		if err := d.WriteHBM(chip, t.Addr, buf); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	return nil
}

// ReadHBMTensor reads tensor t's values from its HBM bytes through its
// mappings.
func ReadHBMTensor(d *Device, p *kernel.Program, t *kernel.Tensor) (*Logical, error) {
	l, _, err := readHBMTensor(d, p, t)
	return l, err
}

// readHBMTensor reads t and, for each Logical offset, the HBM position it
// was read from (-1 when no live position holds it).
func readHBMTensor(d *Device, p *kernel.Program, t *kernel.Tensor) (*Logical, []int, error) {
	l, err := NewLogical(p, t)
	if err != nil {
		return nil, nil, err
	}
	h, err := newHBMLayout(p, t, l)
	if err != nil {
		return nil, nil, err
	}
	from := make([]int, l.Len())
	for i := range from {
		from[i] = -1
	}
	buf := make([]byte, h.chipBytes())
	for chip := 0; chip < h.prog.Size()/h.per; chip++ {
		if err := d.ReadHBM(chip, t.Addr, buf); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		for e := 0; e < h.per; e++ {
			off, ok := h.logical(chip*h.per + e)
			if !ok {
				continue
			}
			v, err := t.DType.Load(buf, e)
			if err != nil {
				return nil, nil, fmt.Errorf("tensor %q: %w", t.Name, err)
			}
			l.Vals[off] = v
			from[off] = chip*h.per + e
		}
	}
	return l, from, nil
}
