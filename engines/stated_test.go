package engines

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestStatedConfigRules: issue 18 §4's surviving mutants, each a single-field
// corruption of a fully configured (lowered) golden kernel, are rejected by
// the validator every command runs (Check, then Lower keeping the stated
// configurations), naming the manual's rule.
func TestStatedConfigRules(t *testing.T) {
	type tc struct {
		name   string
		kernel string
		rule   string // the rule's ID
		cite   string // the manual's lines the rule rests on
		mutate func(t *testing.T, p *kernel.Program)
	}
	stage := func(p *kernel.Program, op, st int) *kernel.StageConfig { return p.Ops[op].Stages[st].Config }
	cases := []tc{
		{"stream adapter rows", "hello-dot", "SA-R5", "002 L3929-3931",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 3).Align.StreamAdapter.Rows++ }},
		{"TRF sequencer rows", "hello-gemv", "SA-R5", "002 L3929-3931, L4161-4168",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 3).Align.TRFSequencer.Rows *= 2 }},
		{"DM tensor off its element size", "hello-dot", "MEM-A2", "002 L1070-1072",
			func(t *testing.T, p *kernel.Program) { p.Tensors[6].Addr++ }},
		{"HBM tensor moved to DM off 8 bytes", "hello-dot", "MEM-A3", "002 L2426-2427",
			func(t *testing.T, p *kernel.Program) { p.Tensors[0].Addr += 2 }},
		{"DM tensor a DMA writes off 8 bytes", "hello-dot", "MEM-A3", "002 L2426, L2836",
			func(t *testing.T, p *kernel.Program) { p.Tensors[4].Addr += 4 }},
		{"DMA entry inside the packet", "hello-dot", "DMA-R14", "002 L2512, L2579",
			func(t *testing.T, p *kernel.Program) {
				d := &p.Ops[0].DMA.Descriptors[0]
				d.Entries[len(d.Entries)-1].SrcStride *= 2
			}},
		{"grown outermost DMA loop", "hello-gemv", "DMA-R13", "002 L2510-2512, L2567-2582",
			func(t *testing.T, p *kernel.Program) {
				for i := range p.Ops[0].DMA.Descriptors { // every DMN's: the command stays homogeneous
					p.Ops[0].DMA.Descriptors[i].Entries[0].Size++
				}
			}},
		{"grown outermost commit loop", "hello-gemv", "CM-R11", "002 L2239-2248",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 7).Commit.Seq.Entries[0].Size *= 2 }},
		{"TRF tensor of another type", "hello-dot", "CHAIN-R5", "002 L4056-4059",
			func(t *testing.T, p *kernel.Program) { p.Tensors[5].DType = dtype.I8 }},
		{"to_trf reg_type", "hello-dot", "TRF-R14", "002 L4141-4147",
			func(t *testing.T, p *kernel.Program) { stage(p, 2, 3).ToTRF.RegType++ }},
		{"contract.in", "hello-dot", "RED-R15", "002 L4310-4317",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 4).Contract.In = dtype.I8 }},
		{"contract.out", "hello-dot", "RED-R15", "002 L4312",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 4).Contract.Out = dtype.I32 }},
		{"collect deleted", "hello-dot", "CHAIN-R4", "002 L4049-4065",
			func(t *testing.T, p *kernel.Program) {
				s := p.Ops[3].Stages
				p.Ops[3].Stages = append(s[:2:2], s[3:]...)
			}},
		{"fetches_per_packet", "hello-dot", "FE-R14", "002 L2050-2057",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 1).Fetch.Adapter.FetchesPerPacket++ }},
		{"sub-context fetch_size", "hello-dot", "FE-R5", "002 L1759, L2018-2021",
			func(t *testing.T, p *kernel.Program) { stage(p, 2, 1).Fetch.FetchSize *= 2 }},
		{"commit_in_size 12", "hello-dot", "CM-R2", "002 L2193",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 7).Commit.CommitInSize = 12 }},
		{"commit_in_size 40", "hello-dot", "CM-R2", "002 L2193",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 7).Commit.CommitInSize = 40 }},
		{"TRF sequencer longer than its stream", "hello-gemv", "CE-R1", "002 L3778, L3790-3791",
			func(t *testing.T, p *kernel.Program) {
				es := stage(p, 3, 3).Align.TRFSequencer.Entries
				es[len(es)-1].Size *= 2
			}},
		{"fetch config of the other context", "hello-dot", "FE-R12", "002 L1757-1759",
			func(t *testing.T, p *kernel.Program) { stage(p, 2, 1).Fetch.Context = kernel.CtxMain }},
		{"commit config of the other context", "hello-dot", "CM-R11", "002 L2149-2164",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 7).Commit.Context = kernel.CtxSub }},
		{"DM DMN index contradicting the address", "hello-gemv", "DMA-R15", "002 L2514-2518, L2867-2868",
			func(t *testing.T, p *kernel.Program) {
				ds := p.Ops[0].DMA.Descriptors
				require.Greater(t, len(ds), 1)
				ds[1].Dst.Dmn.DMN = 0
			}},
		{"DMA media contradicting the op's tensors", "hello-dot", "DMA-R12", "002 L2514, L2550",
			func(t *testing.T, p *kernel.Program) { p.Ops[0].DMA.Descriptors[0].Dst.Kind = kernel.MediaHBM }},
		{"two chips, every Chip mapping of size 1", "hello-dot", "MEM-A4", "002 L62, L1031",
			func(t *testing.T, p *kernel.Program) { p.Chips = 2 }},
		{"stated collect off its derivation", "hello-dot", "COL-R7", "002 L3543-3564",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 2).Collect.PadBytes++ }},
	}
	for _, size := range []int{0, 3, 31, 33, 64} {
		cases = append(cases, tc{fmt.Sprintf("fetch_size %d", size), "hello-dot", "FE-R5", "002 L1757-1761",
			func(t *testing.T, p *kernel.Program) { stage(p, 3, 1).Fetch.FetchSize = size }})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := loadKernel(t, c.kernel)
			spec := Default()
			if c.rule == "MEM-A4" {
				// Two chips on a two-chip system (CHIP-R1 refuses them on
				// the default one-chip system before MEM-A4 is reached).
				sp := *spec
				sp.Chip.ChipsPerSystem.Value = 2
				spec = &sp
			}
			require.NoError(t, Lower(spec, p))
			require.NoError(t, Check(spec, p), "the lowered kernel is valid")
			c.mutate(t, p)
			err := Check(spec, p)
			if err == nil {
				err = Lower(spec, p)
			}
			require.Error(t, err, "the corrupted kernel must be rejected")
			var v *Violation
			require.True(t, errors.As(err, &v), "want a rule violation, got %v", err)
			require.Equal(t, c.rule, v.Rule.ID, "%v (%s)", err, c.cite)
		})
	}
}

// TestStatedSubContextCommitSize: a sub-context commit writes 8 bytes at a
// time (002 L2247-2248, L2330): hello-add's main-context commit, of
// commit_size 32, stated for the sub context breaks CM-R3.
func TestStatedSubContextCommitSize(t *testing.T) {
	p := loadKernel(t, "hello-add")
	spec := Default()
	require.NoError(t, Lower(spec, p))
	c := *p.Ops[1].Stages[7].Config.Commit
	require.Equal(t, kernel.CtxMain, c.Context)
	want := CommitStated{Context: kernel.CtxMain, DType: c.DType}
	require.NoError(t, CheckCommitConfig(spec, &c, want))
	c.Context, want.Context = kernel.CtxSub, kernel.CtxSub
	require.Equal(t, 32, c.CommitSize)
	err := CheckCommitConfig(spec, &c, want)
	var v *Violation
	require.ErrorAs(t, err, &v)
	require.Equal(t, "CM-R3", v.Rule.ID, "%v", err)
}
