package rustread

import (
	"strings"

	"tcpmap/emit/rustapi"
	"tcpmap/model/kernel"
)

// Reading the two APIs (api.go). The crate a file names (`extern crate
// furiosa_opt_std;`, `use furiosa_visa_std::prelude::*;`) tells its API;
// a file that names neither is read as furiosa-visa-std 0.1.0, the
// manual's. Under furiosa-opt-std 0.6.0 the program takes no address, and
// the plan's placement comes from the header's `// tcpmap:place NAME
// VALUE` lines, one per tensor the kernel binds (a list for a tile loop's
// double buffer). Under both, a `// tcpmap:name IDENT ORIGINAL` line gives
// a tensor whose name is no Rust identifier its name back (names.go).

// crateDecl parses `extern crate NAME;` or `use NAME::...;` and takes the
// API from the crate.
func (r *reader) crateDecl() {
	if r.next().text == "extern" {
		r.expect("crate")
	}
	c := r.tok()
	if c.kind == tIdent {
		switch c.text {
		case rustapi.Visa01.Crate():
			r.setAPI(rustapi.Visa01, c.off)
		case rustapi.Opt06.Crate():
			r.setAPI(rustapi.Opt06, c.off)
		}
	}
	r.skipTo(";")
}

// setAPI records the file's API, named at off.
func (r *reader) setAPI(a rustapi.API, off int) {
	switch {
	case r.apiSet && r.api != a:
		r.fail(off, "the file names both %s and %s", r.api.Library(), a.Library())
	case r.sawKernel && r.api != a:
		r.fail(off, "%s is named after the kernel, which was read as %s", a.Library(), r.api.Library())
	}
	r.api, r.apiSet = a, true
}

// place is the value of a `// tcpmap:place` line: an address or a
// TrfAddress, or a list of them for a double buffer, with the tokens of
// its index over the producing op's tile t when it is not the count of the
// op's fires (`[t % 2]`: a K-chunked loop's running sum).
type place struct {
	addrs []int64
	modes []kernel.TrfAddress
	list  bool
	index []token
	off   int
	used  bool
}

// readPlaces parses the file's place lines.
func (r *reader) readPlaces() {
	r.places = map[string]*place{}
	for _, d := range r.dirs {
		if d.name != "place" || r.err != nil {
			continue
		}
		name, rest, _ := strings.Cut(d.value, " ")
		rest = strings.TrimSpace(rest)
		at := d.voff + strings.Index(d.value, rest)
		if name == "" || rest == "" {
			r.fail(d.off, "want // tcpmap:place NAME VALUE")
			return
		}
		if r.places[name] != nil {
			r.fail(d.voff, "a second tcpmap:place line for %s", name)
			return
		}
		toks, _, off, err := lex(rest)
		if err != nil {
			r.fail(at+off, "%v", err)
			return
		}
		for k := range toks {
			toks[k].off += at
		}
		sub := &reader{file: r.file, src: r.src, toks: toks}
		pl := &place{off: d.voff}
		elem := func() {
			if sub.is("TrfAddress") {
				t := sub.next()
				sub.expect("::")
				m := sub.ident()
				if sub.err != nil {
					return
				}
				mode, err := kernel.ParseTrfAddress(m.text)
				if err != nil {
					sub.fail(t.off, "%v", err)
					return
				}
				pl.modes = append(pl.modes, mode)
				return
			}
			pl.addrs = append(pl.addrs, sub.constExpr())
		}
		if sub.accept("[") {
			pl.list = true
			for sub.err == nil {
				elem()
				if !sub.accept(",") {
					break
				}
			}
			sub.expect("]")
			if sub.err == nil && len(pl.addrs)+len(pl.modes) < 2 {
				sub.fail(at, "a list of placements is a double buffer: two or more")
			}
			if sub.err == nil && sub.is("[") {
				open := sub.i
				end := sub.skipBalanced("[")
				if sub.err == nil {
					pl.index = append(append([]token(nil), sub.toks[open+1:end]...), token{kind: tEOF, off: sub.toks[end].off})
				}
			}
		} else {
			elem()
		}
		if sub.err == nil && sub.tok().kind != tEOF {
			sub.fail(sub.tok().off, "unexpected %s after the placement", describe(sub.tok()))
		}
		if sub.err == nil && len(pl.addrs) > 0 && len(pl.modes) > 0 {
			sub.fail(at, "a placement is addresses or TrfAddress modes, not both")
		}
		if sub.err != nil {
			r.err = sub.err
			return
		}
		r.places[name] = pl
	}
}

// placeOf is the placement of the tensor bound to variable name under
// furiosa-opt-std 0.6.0, which the text does not carry: its place line. A
// list is a double buffer of the tile loop, whose buffers alternate with
// the producing op's fires, as the 0.1.0 text's `[a, b][t / S % 2]` does.
func (r *reader) placeOf(name string, at int, trf bool) (int64, kernel.TrfAddress) {
	if r.err != nil {
		return 0, ""
	}
	pl := r.places[name]
	if pl == nil {
		r.fail(at, "no // tcpmap:place line for %s: %s takes no address, and the file keeps the plan's placement in its header", name, rustapi.Opt06.Library())
		return 0, ""
	}
	if trf != (len(pl.modes) > 0) {
		want := "an address"
		if trf {
			want = "a TrfAddress"
		}
		r.fail(pl.off, "the placement of %s is %s", name, want)
		return 0, ""
	}
	// A slot of the tile loop that another statement produces again (a
	// running sum) takes its place again.
	again := r.lp != nil && !r.lp.done && r.lp.slots[name] != nil
	if pl.used && !again {
		r.fail(at, "%s is placed twice", name)
		return 0, ""
	}
	pl.used = true
	if pl.list {
		lp := r.lp
		if lp == nil || lp.done {
			r.fail(pl.off, "a list places a double buffer of the tile loop, and %s is bound outside it", name)
			return 0, ""
		}
		lp.parity, lp.parityModes = pl.addrs, pl.modes
		lp.parityStride, lp.parityPeriod, lp.parityTile, lp.parityOff = lp.l.Stride(lp.level), 0, lp.tile, pl.off
		if pl.index != nil {
			sub := &reader{file: r.file, src: r.src, toks: pl.index, lp: &loopRead{loopVar: "t"}}
			base, stride, period := sub.slotIndex(len(pl.addrs) + len(pl.modes))
			if sub.err == nil && (base != "t" || sub.tok().kind != tEOF) {
				sub.fail(pl.index[0].off, "a place line's buffer index is over the producing op's tile t: t [%% P] [/ S] %% M")
			}
			if sub.err != nil {
				r.err = sub.err
				return 0, ""
			}
			lp.parityStride, lp.parityPeriod = stride, period
		}
	}
	if trf {
		return 0, pl.modes[0]
	}
	return pl.addrs[0], ""
}

// checkPlaces refuses place lines in a furiosa-visa-std 0.1.0 file, whose
// text places every tensor, and place lines that name no tensor.
func (r *reader) checkPlaces() {
	for _, d := range r.dirs {
		if d.name != "place" || r.err != nil {
			continue
		}
		if r.api != rustapi.Opt06 {
			r.fail(d.off, "a tcpmap:place line in a %s file, whose text places its tensors", r.api.Library())
			return
		}
		name, _, _ := strings.Cut(d.value, " ")
		if pl := r.places[name]; pl != nil && !pl.used {
			r.fail(d.off, "tcpmap:place names %s, which the kernel does not bind", name)
			return
		}
	}
}

// rename gives the tensors their names back from the name lines.
func (r *reader) rename(p *kernel.Program) *kernel.Program {
	orig := map[string]string{}
	for _, d := range r.dirs {
		if d.name != "name" || r.err != nil {
			continue
		}
		f := strings.Fields(d.value)
		if len(f) != 2 {
			r.fail(d.off, "want // tcpmap:name IDENT ORIGINAL")
			return nil
		}
		if _, dup := orig[f[0]]; dup {
			r.fail(d.off, "a second tcpmap:name line for %s", f[0])
			return nil
		}
		if _, ok := p.Tensor(f[0]); !ok {
			r.fail(d.off, "tcpmap:name names %s, which is no tensor of the kernel", f[0])
			return nil
		}
		orig[f[0]] = f[1]
	}
	if r.err != nil || len(orig) == 0 {
		return p
	}
	q, err := p.Rename(func(n string) string {
		if o, ok := orig[n]; ok {
			return o
		}
		return n
	})
	if err != nil {
		r.fail(0, "tcpmap:name: %v", err)
		return nil
	}
	return q
}
