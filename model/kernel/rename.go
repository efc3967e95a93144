package kernel

import (
	"fmt"
	"strings"
)

// Rename returns a copy of p with every tensor name, and every reference
// to one (views, a gathered argument's table and index, op and handoff
// sources and destinations, a gather's index and its DMA's indirect
// entries, stage tensors, an interleaved begin's second tensor, the
// reference's inputs and output),
// mapped by f; the rest is shared with p.
// It is an error when f maps two tensors to one name.
func (p *Program) Rename(f func(string) string) (*Program, error) {
	q := *p
	q.Tensors = make([]*Tensor, len(p.Tensors))
	for i, t := range p.Tensors {
		c := *t
		c.Name = f(t.Name)
		if c.View != "" {
			c.View = f(c.View)
		}
		if g := t.Gather; g != nil {
			c.Gather = &Gather{Table: f(g.Table), Index: f(g.Index)}
		}
		q.Tensors[i] = &c
	}
	q.Ops = make([]*Op, len(p.Ops))
	for i, op := range p.Ops {
		o := *op
		if o.Src != "" {
			o.Src = f(o.Src)
		}
		if o.Dst != "" {
			o.Dst = f(o.Dst)
		}
		if o.Index != "" {
			o.Index = f(o.Index)
			o.DMA = op.DMA.renamedIndex(f)
		}
		o.Stages = make([]*Stage, len(op.Stages))
		for k, st := range op.Stages {
			s := *st
			if s.Tensor != "" {
				s.Tensor = f(s.Tensor)
				if s.Kind.IsVectorOp() && s.Tensor != st.Tensor {
					// A VRF operand named in the Param (`group(&y_vrf,
					// GroupId::Zero)`) is the stage's tensor.
					s.Param = renameRef(s.Param, st.Tensor, s.Tensor)
				}
			}
			// An interleaved begin's second tensor (002 L1866).
			if b, err := ParseBeginInterleave(s.Param); s.Kind == StBegin && err == nil && b != nil {
				b.Tensor = f(b.Tensor)
				s.Param = b.String()
			}
			if s.Config != nil && s.Config.VectorOp != nil {
				// A lowered vector op names its VRF operands' tensor.
				c := *s.Config
				c.VectorOp = s.Config.VectorOp.renamed(f)
				s.Config = &c
			}
			o.Stages[k] = &s
		}
		q.Ops[i] = &o
	}
	q.Handoff = make([]*Op, len(p.Handoff))
	for i, op := range p.Handoff {
		o := *op
		o.Src, o.Dst = f(o.Src), f(o.Dst)
		q.Handoff[i] = &o
	}
	if len(p.Handoff) == 0 {
		q.Handoff = nil
	}
	if r := p.Reference; r != nil {
		c := *r
		c.Inputs = make([]string, len(r.Inputs))
		for i, in := range r.Inputs {
			c.Inputs[i] = f(in)
		}
		c.Output = f(r.Output)
		q.Reference = &c
	}
	seen := map[string]bool{}
	for _, t := range q.Tensors {
		if seen[t.Name] {
			return nil, fmt.Errorf("two tensors are renamed to %q", t.Name)
		}
		seen[t.Name] = true
	}
	return &q, nil
}

// renamed returns a copy of c whose VRF operands name their tensors by f.
func (c *VectorOpConfig) renamed(f func(string) string) *VectorOpConfig {
	d := *c
	slots := func(ss []VeSlotConfig) []VeSlotConfig {
		if ss == nil {
			return nil
		}
		out := make([]VeSlotConfig, len(ss))
		for i, sl := range ss {
			out[i] = sl
			out[i].Operands = make([]VeOperandConfig, len(sl.Operands))
			for j, o := range sl.Operands {
				if o.VRF != nil {
					v := *o.VRF
					v.Tensor = f(v.Tensor)
					o.VRF = &v
				}
				out[i].Operands[j] = o
			}
		}
		return out
	}
	d.Slots = slots(c.Slots)
	if c.Pair != nil {
		p := *c.Pair
		for g := range p.Slots {
			p.Slots[g] = slots(c.Pair.Slots[g])
		}
		d.Pair = &p
	}
	return &d
}

// renameRef replaces each reference `&from` in a vector op's Param (the
// name whole: not followed by a name's character) with `&to`.
func renameRef(param, from, to string) string {
	var b strings.Builder
	ref := "&" + from
	for {
		i := strings.Index(param, ref)
		if i < 0 {
			b.WriteString(param)
			return b.String()
		}
		j := i + len(ref)
		if j < len(param) && isNameByte(param[j]) {
			b.WriteString(param[:j])
			param = param[j:]
			continue
		}
		b.WriteString(param[:i] + "&" + to)
		param = param[j:]
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c == '@' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// renamedIndex returns a copy of c whose indirect entries name their index
// tensor by f (nil for nil).
func (c *DMACommand) renamedIndex(f func(string) string) *DMACommand {
	if c == nil {
		return nil
	}
	d := *c
	d.Descriptors = make([]DMADescriptor, len(c.Descriptors))
	for i, ds := range c.Descriptors {
		d.Descriptors[i] = ds
		d.Descriptors[i].Entries = make([]DMAEntry, len(ds.Entries))
		for k, e := range ds.Entries {
			if e.Index != nil {
				x := *e.Index
				x.Tensor = f(x.Tensor)
				e.Index = &x
			}
			d.Descriptors[i].Entries[k] = e
		}
	}
	return &d
}
