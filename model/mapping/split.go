package mapping

import "fmt"

// SplitAt splits e at n (reference-notes §2.7 `split_at(target)`): inner
// holds the first n positions, outer steps over blocks of n, and the pair
// outer, inner reads the same buffer as e. n must divide e.Size().
//
// When e factorizes and n falls on a digit boundary (possibly cutting a
// digit or a padded block), both sides are canonical expressions (§2.6
// vectors: split_at(m![A # 4, B # 4], 8) with A = B = 2 is inner
// m![A, B # 4], outer m![1 # 2]). Otherwise the sides are the composite
// views inner = [e] % n and outer = [e] / n (split_at(m![B, A # 9], 4)), whose
// pair decodes summed positions of e (see [Expr.Map]).
func SplitAt(e *Expr, n int) (outer, inner *Expr, err error) {
	if err := e.Err(); err != nil {
		return nil, nil, err
	}
	if n < 1 || e.size%n != 0 {
		return nil, nil, fmt.Errorf("split_at(%s, %d): %d does not divide size %d", e, n, n, e.size)
	}
	if fs, ferr := Factorize(e); ferr == nil {
		if o, i, ok := splitFactors(fs, n); ok {
			return o.Expr(), i.Expr(), nil
		}
	}
	if inner, err = NewModulo(e, n); err != nil {
		return nil, nil, err
	}
	if outer, err = NewStride(e, n); err != nil {
		return nil, nil, err
	}
	return outer, inner, nil
}

// splitFactors splits a canonical factor list at position n.
func splitFactors(fs Factors, n int) (outer, inner Factors, ok bool) {
	below := 1
	k := 0
	for ; below != n; k++ {
		if k == len(fs) || n%below != 0 {
			return nil, nil, false
		}
		d := n / below
		f := fs[k]
		if f.Kind == FactorPad {
			switch {
			case n%f.Extent == 0:
				below = f.Extent
				continue
			case f.Extent%n == 0: // the inner side pads to n, the outer keeps only block 0 live
				inner = append(append(Factors(nil), fs[:k]...), Factor{Kind: FactorPad, Extent: n, Pad: f.Pad})
				rest, err := scalePads(fs[k:], n)
				if err != nil {
					return nil, nil, false
				}
				return canonical(rest), canonical(inner), true
			}
			return nil, nil, false
		}
		e := f.Extent
		switch {
		case d%e == 0:
			below *= e
			continue
		case e%d == 0:
			lo, hi := f, f
			lo.Extent = d
			hi.Stride *= d
			hi.Extent = e / d
			inner = append(append(Factors(nil), fs[:k]...), lo)
			rest, err := scalePads(append(Factors{hi}, fs[k+1:]...), n)
			if err != nil {
				return nil, nil, false
			}
			return canonical(rest), canonical(inner), true
		case e < d && k+1 < len(fs) && fs[k+1].Kind == FactorPad && fs[k+1].Extent%n == 0:
			// split_at(m![A # 16], 4) with A = 3: inner A # 4, outer 1 # 4.
			inner = append(append(Factors(nil), fs[:k+1]...), Factor{Kind: FactorPad, Extent: n, Pad: fs[k+1].Pad})
			rest, err := scalePads(fs[k+1:], n)
			if err != nil {
				return nil, nil, false
			}
			return canonical(rest), canonical(inner), true
		}
		return nil, nil, false
	}
	rest, err := scalePads(fs[k:], n)
	if err != nil {
		return nil, nil, false
	}
	return canonical(rest), canonical(append(Factors(nil), fs[:k]...)), true
}

// TileView computes the view type of a tile (002 L813-831, L954-971;
// reference-notes §2.8): base with the digit dim resized to n and padded back
// to dim's extent with kind (Top for a read view, Bottom for view_mut), so the
// view keeps base's footprint and strides (002 L830-831). dim must be a digit
// of base: one or more adjacent axis terms of base's factorized form, e.g.
// `B` or `B / 32` of m![A, B]. n = 1 collapses the digit to `1 # |dim|`
// (002 L971). For base m![A, B] (A = 8, B = 512): dim m![B], n 2 gives
// m![A, B = 2 # 512]; dim m![B / 32], n 2 gives m![A, B / 32 = 2 # 16, B % 32].
func TileView(base, dim *Expr, n int, kind PadKind) (*Expr, error) {
	if err := base.Err(); err != nil {
		return nil, err
	}
	if err := dim.Err(); err != nil {
		return nil, err
	}
	if n < 1 || n > dim.size {
		return nil, fmt.Errorf("tile size %d must be between 1 and the size %d of %s", n, dim.size, dim.Text())
	}
	bf, df, at, err := tileDigit(base, dim)
	if err != nil {
		return nil, err
	}
	run := Factors(append(Factors(nil), df...)).Expr()
	var piece *Expr
	if n == 1 {
		piece = Identity() // 002 L971: B / 32 = 1 simplifies to the identity
	} else {
		piece = run.Resize(n)
	}
	piece = piece.Pad(dim.size, kind)
	if err := piece.Err(); err != nil {
		return nil, err
	}
	out := append(Factors(nil), bf[:at]...)
	out = append(out, Factor{Kind: FactorTerm, Extent: dim.size, part: piece})
	out = append(out, bf[at+len(df):]...)
	return out.Expr(), nil
}

// tileDigit finds dim among the digits of base: it returns base's factors
// refined to dim's digit boundaries, dim's factors, and the index in the
// refined list where dim's run of factors starts.
func tileDigit(base, dim *Expr) (bf, df Factors, at int, err error) {
	bf, err = Factorize(base)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("tile of %s: %w", base.Text(), err)
	}
	df, err = Factorize(dim)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("tile dimension %s: %w", dim.Text(), err)
	}
	if len(df) == 0 {
		return nil, nil, 0, fmt.Errorf("tile dimension %s has a single position", dim.Text())
	}
	for _, f := range df {
		if f.Kind != FactorTerm {
			return nil, nil, 0, fmt.Errorf("tile dimension %s must be axis digits without padding or broadcast", dim.Text())
		}
	}
	bf = refine(bf, df)
	at = -1
	for k := 0; k+len(df) <= len(bf) && at < 0; k++ {
		match := true
		for j, d := range df {
			b := bf[k+j]
			if b.Kind != FactorTerm || b.part != nil || b.Axis != d.Axis || b.Stride != d.Stride || b.Extent != d.Extent {
				match = false
				break
			}
		}
		if match {
			at = k
		}
	}
	if at < 0 {
		return nil, nil, 0, fmt.Errorf("tile dimension %s is not a digit of %s (factors %v)", dim.Text(), base.Text(), bf)
	}
	return bf, df, at, nil
}

// TileOffset is the buffer position in base where the tile
// `view.tile::<dim, n, _>(start)` begins (002 L813-831, L954-971): start is
// a position along dim (`tile::<m![B / 32], 2, _>(i)` starts at block i), and
// position q of the tile's view is position TileOffset + q of base. The tile
// must fit: start + n ≤ |dim| (002 L963-966: tiles 0..14 of 16 blocks).
func TileOffset(base, dim *Expr, n, start int) (int, error) {
	if err := base.Err(); err != nil {
		return 0, err
	}
	if err := dim.Err(); err != nil {
		return 0, err
	}
	if n < 1 || start < 0 || start+n > dim.size {
		return 0, fmt.Errorf("tile of %d at %d does not fit the %d positions of %s", n, start, dim.size, dim.Text())
	}
	bf, _, at, err := tileDigit(base, dim)
	if err != nil {
		return 0, err
	}
	below := 1
	if at > 0 {
		below = bf[:at].Size()
	}
	return start * below, nil
}

// refine splits the terms of bf so that every digit boundary of the terms
// of df is a factor boundary of bf.
func refine(bf, df Factors) Factors {
	for _, d := range df {
		for _, b := range []int{d.Stride, d.Stride * d.Extent} {
			var out Factors
			for _, f := range bf {
				if f.Kind == FactorTerm && f.part == nil && f.Axis == d.Axis && b%f.Stride == 0 {
					a := b / f.Stride
					if a > 1 && a < f.Extent && f.Extent%a == 0 {
						lo, hi := f, f
						lo.Extent = a
						hi.Stride *= a
						hi.Extent = f.Extent / a
						out = append(out, lo, hi)
						continue
					}
				}
				out = append(out, f)
			}
			bf = out
		}
	}
	return bf
}

// Tile checks the view type of `base.tile::<dim, n, view>()` (002 L813-831,
// L954-971): view must be equivalent to [TileView] of base, dim, n with Top
// padding (a read view) or Bottom padding (view_mut, reference-notes §2.8).
// The error names the expected view.
func Tile(base, dim *Expr, n int, view *Expr) error {
	if err := view.Err(); err != nil {
		return err
	}
	want, err := TileView(base, dim, n, Top)
	if err != nil {
		return err
	}
	if ok, _ := Equiv(view, want); ok {
		return nil
	}
	mut, err := TileView(base, dim, n, Bottom)
	if err == nil {
		if ok, _ := Equiv(view, mut); ok {
			return nil
		}
	}
	why := ""
	if ok, at := Equiv(view, want); !ok {
		if view.size != want.size {
			why = fmt.Sprintf(": size %d, expected %d", view.size, want.size)
		} else {
			why = fmt.Sprintf(": position %d holds %v, expected %v", at, view.Map(at), want.Map(at))
		}
	}
	return fmt.Errorf("tile::<%s, %d, %s> of %s: the view must be %s%s", dim.Text(), n, view.Text(), base.Text(), want.Text(), why)
}
