// Package emittest holds the test helpers of the emitter's and the Rust
// reader's tests: the golden kernel programs and ways to change them.
package emittest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// Root is the repository root: the nearest directory above the working
// directory that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		require.NotEqual(t, dir, up, "no go.mod above the working directory")
		dir = up
	}
}

// GoldenKernels are the shipped kernel programs.
var GoldenKernels = []string{"hello-add", "hello-mul", "hello-dot", "hello-gemv", "hello-gemm"}

// LoadGolden reads the shipped kernel program name (workloads/kernels).
func LoadGolden(t testing.TB, name string) *kernel.Program {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(t), "workloads", "kernels", name+".json"))
	require.NoError(t, err)
	var p kernel.Program
	require.NoError(t, json.Unmarshal(b, &p), name)
	return &p
}

// ProgramJSON is a program's JSON form without its lowered configurations,
// which the Rust text does not carry.
func ProgramJSON(t testing.TB, p *kernel.Program) string {
	t.Helper()
	q := *p
	q.Ops = nil
	for _, op := range p.Ops {
		o := *op
		o.DMA = nil
		o.Stages = nil
		for _, st := range op.Stages {
			s := *st
			s.Config = nil
			o.Stages = append(o.Stages, &s)
		}
		q.Ops = append(q.Ops, &o)
	}
	b, err := json.Marshal(&q)
	require.NoError(t, err)
	return string(b)
}

// Tensor is p's tensor name, nil when p has none.
func Tensor(p *kernel.Program, name string) *kernel.Tensor {
	t, _ := p.Tensor(name)
	return t
}

// LastChain is p's last chain op, nil when p has none.
func LastChain(p *kernel.Program) *kernel.Op {
	for i := len(p.Ops) - 1; i >= 0; i-- {
		if p.Ops[i].Kind == kernel.OpChain {
			return p.Ops[i]
		}
	}
	return nil
}

// StageOf is op's first stage of kind k, nil when op has none.
func StageOf(op *kernel.Op, k kernel.StageKind) *kernel.Stage {
	for _, st := range op.Stages {
		if st.Kind == k {
			return st
		}
	}
	return nil
}

// RenameTensor renames p's tensor from to to, and every reference to it,
// in place.
func RenameTensor(p *kernel.Program, from, to string) {
	Tensor(p, from).Name = to
	for _, op := range p.Ops {
		if op.Src == from {
			op.Src = to
		}
		if op.Dst == from {
			op.Dst = to
		}
		for _, st := range op.Stages {
			if st.Tensor == from {
				st.Tensor = to
			}
		}
	}
	if r := p.Reference; r != nil {
		for i, in := range r.Inputs {
			if in == from {
				r.Inputs[i] = to
			}
		}
		if r.Output == from {
			r.Output = to
		}
	}
}

// AddSwitch puts the GEMV's Broadcast01 (002 L391-399) into its sub chain,
// between fetch and collect.
func AddSwitch(p *kernel.Program, param string) {
	sub := p.Ops[2]
	sw := &kernel.Stage{Kind: kernel.StSwitch, Slice: mapping.MustParse("I", p.Axes, nil), Time: mapping.Identity(), Param: param}
	sub.Stages = append(sub.Stages[:2], append([]*kernel.Stage{sw}, sub.Stages[2:]...)...)
}

// Unwrap removes the mdbook wrapper `#![allow(unused)] fn main() { ... }`
// around the GEMV and GEMM listings (002 L401-402, L465; L473-474, L525),
// which is the book's rendering, not part of the kernel file.
func Unwrap(src string) string {
	if rest, ok := strings.CutPrefix(src, "#![allow(unused)]\nfn main() {\n"); ok {
		rest = strings.TrimRight(rest, "\n")
		return strings.TrimSuffix(rest, "}") + "\n"
	}
	return src
}

// TiledKernels are the planner's tiled kernels (search.Build of tiled
// candidates of IK,KJ->IJ with I = J = 256, K = 2048 bf16, unlowered):
// one tiled axis single- and double-buffered, two tiled axes
// double-buffered; then its K-chunked kernels (constraints.Space.TileK:
// the long-k-gemm of search/tilek_test.go, I = J = 8, K = 8192 in 2 chunks
// single-buffered and 4 double-buffered, and I = 16, J = 8, K = 20480 in 2
// output tiles of 5 chunks double-buffered; the split reduce's unzip
// parameter written without `m![...]`, as kernel programs write it); in
// emit/testdata.
var TiledKernels = []string{"tiled-1axis-single", "tiled-1axis-double", "tiled-2axis-double",
	"tiledk-k2-single", "tiledk-k4-double", "tiledk-k5-2tile-double"}

// VectorGolden are Vector Engine kernels of every stage kind.
// (in the default API, furiosa-visa-std 0.1.0, which spells them; the
// kernels it refuses are emit's apiRefusals').
var VectorGolden = []string{"ve-staged-pipeline", "ve-residual-max", "ve-vrf-add", "ve-reduce-packet", "ve-pair-add",
	"ve-pair-one-side", "ve-branch-relu", "ve-vcg-time", "silu-decode", "ve-stash-narrow-widen", "ve-bias-minus-x"}
