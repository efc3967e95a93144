package emit

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"tcpmap/emit/rustread"
	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// TestCheckAddresses: tensors collide only while both are live (002
// L154-155); a dead tensor's bytes may be reused, TRF halves are disjoint,
// and the kernel's HBM arguments and result are live throughout.
func TestCheckAddresses(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(p *kernel.Program)
		want string // "" when legal
	}{
		{"golden", func(p *kernel.Program) {}, ""},
		// rhs_dm is read by op 2 only; out_dm is committed by op 3.
		{"reuse of a dead DM tensor", func(p *kernel.Program) { tensor(p, "out_dm").Addr = tensor(p, "rhs_dm").Addr }, ""},
		// lhs_dm is read by the chain (op 3) that commits out_dm.
		{"commit over the chain's own input", func(p *kernel.Program) { tensor(p, "out_dm").Addr = 0 },
			`DM tensors "lhs_dm" [0, 4096) and "out_dm" [0, 16) overlap while both are live (ops 0-3 and 3-4)`},
		{"adjacent", func(p *kernel.Program) { tensor(p, "rhs_dm").Addr = 4096 }, ""},
		{"one byte", func(p *kernel.Program) { tensor(p, "rhs_dm").Addr = 4095 }, `"lhs_dm" [0, 4096) and "rhs_dm" [4095, 8191)`},
		// The result may not land on an input even after the input was
		// read: the host still owns it.
		{"result over an input", func(p *kernel.Program) { tensor(p, "out").Addr = 1 << 28 },
			`HBM tensors "rhs" [268435456, 268439552) and "out" [268435456, 268435458) overlap while both are live (ops all: a kernel argument or result`},
		{"TRF halves", func(p *kernel.Program) { addTRF(p, kernel.TrfFirstHalf, kernel.TrfSecondHalf) }, ""},
		{"TRF half and full", func(p *kernel.Program) { addTRF(p, kernel.TrfFirstHalf, kernel.TrfFull) },
			`TRF tensors "rhs_trf" (FirstHalf) and "second" (Full) share TRF rows while both are live (ops 2-4 and 3;`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mutated(t, "hello-dot", c.f)
			err := CheckAddresses(engines.Default(), p)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, c.want)
		})
	}
}

func BenchmarkRust(b *testing.B) {
	p := loadGolden(b, "hello-gemm")
	for i := 0; i < b.N; i++ {
		if _, err := Rust(p, RustOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	src, err := Rust(loadGolden(b, "hello-gemm"), RustOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if _, err := rustread.Read("gemm.rs", src); err != nil {
			b.Fatal(err)
		}
	}
}

// addTRF sets rhs_trf's address mode to a and loads a second TRF tensor with
// mode b in another sub chain while rhs_trf is live.
func addTRF(p *kernel.Program, a, b kernel.TrfAddress) {
	tensor(p, "rhs_trf").TrfAddress = a
	tr := *tensor(p, "rhs_trf")
	tr.Name, tr.TrfAddress = "second", b
	p.Tensors = append(p.Tensors, &tr)
	src := p.Ops[2].Stages
	sub := &kernel.Op{Context: kernel.CtxSub, Kind: kernel.OpChain, Stages: []*kernel.Stage{
		src[0], src[1], src[2], {Kind: kernel.StToTRF, Tensor: "second"}}}
	p.Ops = append(p.Ops[:3], append([]*kernel.Op{sub}, p.Ops[3:]...)...)
}
