package emit

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
)

// goldenKernels are the shipped kernel programs.
var goldenKernels = []string{"hello-add", "hello-mul", "hello-dot", "hello-gemv", "hello-gemm"}

func loadGolden(t testing.TB, name string) *kernel.Program {
	t.Helper()
	p, err := ReadFile(filepath.Join("..", "workloads", "kernels", name+".json"))
	require.NoError(t, err)
	return p
}

// programJSON is a program's JSON form without its lowered configurations,
// which the Rust text does not carry.
func programJSON(t testing.TB, p *kernel.Program) string {
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

func TestRoundTripGolden(t *testing.T) {
	for _, name := range goldenKernels {
		t.Run(name, func(t *testing.T) {
			p := loadGolden(t, name)
			src, err := Rust(p, RustOptions{Version: "test", Cost: "1234 cycles"})
			require.NoError(t, err)
			got, err := Read(name+".rs", src)
			require.NoError(t, err, "%s", src)
			assert.JSONEq(t, programJSON(t, p), programJSON(t, got))
		})
	}
}
