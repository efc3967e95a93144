package search

import (
	"errors"
	"strconv"
	"strings"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// lowerer lowers the programs of many candidates with engines.Lower, op by
// op, remembering each op's result: candidates share most of their ops
// (the DMA moves, the TRF load), so each distinct op is derived once. An op
// is lowered in a program of its own that holds only the tensors it names,
// which gives the same result as lowering it in place: engines.Lower
// derives a DMA command from its two tensors and a chain stage by stage
// from its begin tensor (002 L1704-1705), and keeps configurations a
// program states.
type lowerer struct {
	spec *engines.Spec
	memo map[string]*opLowered
	key  strings.Builder
	// tensors indexes the program being lowered by tensor name.
	tensors map[string]*kernel.Tensor
	// hits and misses count memo lookups.
	hits, misses int
}

// opLowered is the result of lowering one op.
type opLowered struct {
	dma     *kernel.DMACommand
	configs []*kernel.StageConfig
	err     *engines.LowerError
}

func newLowerer(spec *engines.Spec) *lowerer {
	return &lowerer{spec: spec, memo: map[string]*opLowered{}, tensors: map[string]*kernel.Tensor{}}
}

// lower lowers p in place, or returns the first op's error as
// engines.Lower would (a *engines.LowerError locating the op and stage).
func (l *lowerer) lower(p *kernel.Program) error {
	clear(l.tensors)
	for _, t := range p.Tensors {
		l.tensors[t.Name] = t
	}
	for i, op := range p.Ops {
		k := l.opKey(p, op)
		r, ok := l.memo[k]
		if ok {
			l.hits++
		} else {
			l.misses++
			r = l.lowerOne(p, op)
			l.memo[k] = r
		}
		if r.err != nil {
			e := *r.err
			e.Op = i
			return &e
		}
		if op.Kind == kernel.OpChain {
			for s, st := range op.Stages {
				st.Config = r.configs[s]
			}
		} else {
			op.DMA = r.dma
		}
	}
	return nil
}

// lowerOne lowers op alone.
func (l *lowerer) lowerOne(p *kernel.Program, op *kernel.Op) *opLowered {
	q := &kernel.Program{Name: p.Name, Axes: p.Axes, Chips: p.Chips}
	seen := map[string]bool{}
	add := func(name string) {
		if name == "" || seen[name] {
			return
		}
		if t, ok := l.tensors[name]; ok {
			seen[name] = true
			q.Tensors = append(q.Tensors, t)
			if t.View != "" && !seen[t.View] {
				// A view is checked against the tensor it views.
				if b, ok := l.tensors[t.View]; ok {
					seen[t.View] = true
					q.Tensors = append(q.Tensors, b)
				}
			}
		}
	}
	o := *op
	o.Stages = nil
	add(op.Src)
	add(op.Dst)
	for _, st := range op.Stages {
		s := *st
		o.Stages = append(o.Stages, &s)
		add(st.Tensor)
	}
	q.Ops = []*kernel.Op{&o}
	err := engines.Lower(l.spec, q)
	if err != nil {
		var le *engines.LowerError
		if !errors.As(err, &le) {
			le = &engines.LowerError{Stage: -1, Kind: string(op.Kind), Err: err}
		}
		return &opLowered{err: le}
	}
	r := &opLowered{dma: o.DMA}
	for _, st := range o.Stages {
		r.configs = append(r.configs, st.Config)
	}
	return r
}

// opKey is a string that determines an op's lowering: its kind, context,
// stages and every property of the tensors it names.
func (l *lowerer) opKey(p *kernel.Program, op *kernel.Op) string {
	b := &l.key
	b.Reset()
	b.WriteString(string(op.Context))
	b.WriteByte('|')
	b.WriteString(string(op.Kind))
	tensor := func(name string) {
		b.WriteString("|T")
		t, ok := l.tensors[name]
		if !ok {
			b.WriteString("?" + name)
			return
		}
		b.WriteString(string(t.Mem))
		b.WriteByte(',')
		b.WriteString(t.DType.String())
		for _, e := range []*mapping.Expr{t.Chip, t.Cluster, t.Slice, t.Row, t.Element} {
			b.WriteByte(',')
			if e != nil {
				b.WriteString(e.String())
			}
		}
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(t.Addr, 10))
		b.WriteByte(',')
		b.WriteString(string(t.TrfAddress))
		b.WriteByte(',')
		b.WriteString(t.View)
	}
	if op.Kind != kernel.OpChain {
		tensor(op.Src)
		tensor(op.Dst)
		return b.String()
	}
	for _, st := range op.Stages {
		b.WriteString("|S")
		b.WriteString(string(st.Kind))
		if st.Tensor != "" {
			tensor(st.Tensor)
		}
		b.WriteByte(',')
		if st.DType != 0 {
			b.WriteString(st.DType.String())
		}
		for _, e := range []*mapping.Expr{st.Time, st.Packet, st.Slice} {
			b.WriteByte(',')
			if e != nil {
				b.WriteString(e.String())
			}
		}
		b.WriteByte(',')
		b.WriteString(st.Param)
	}
	return b.String()
}
