package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// runInterleaved runs verify/testdata/interleaved-fetch.json, the manual's
// fetch_interleaved (002 L1858-1867: lhs, rhs of m![A, B] i8, Time m![A, I],
// Packet m![B]) committed to out (element m![A, I, B]; its Logical is
// row-major over the declared axes A, B, I), and returns the inputs and
// the output.
func runInterleaved(t *testing.T, edit func(p *kernel.Program)) (lhs, rhs, out *Logical) {
	t.Helper()
	p := loadKernelT(t, "testdata/interleaved-fetch.json")
	require.NoError(t, engines.Lower(engines.Default(), p))
	if edit != nil {
		edit(p)
	}
	d, x, ins := runProgram(t, p, 5, ExecOptions{})
	require.NoError(t, x.Run())
	outT, _ := p.Tensor("out")
	got, err := ReadHBMTensor(d, p, outT)
	require.NoError(t, err)
	return ins["lhs"], ins["rhs"], got
}

// TestExecInterleavedFetch: "The first temporal iteration fetches from
// lhs, the second iteration fetches from rhs, the third iteration fetches
// the next packet from lhs" (002 L1848-1850): out[a, i, b] is lhs[a, b]
// for i = 0 and rhs[a, b] for i = 1.
func TestExecInterleavedFetch(t *testing.T) {
	lhs, rhs, out := runInterleaved(t, nil)
	for a := 0; a < 512; a++ {
		for b := 0; b < 32; b++ {
			require.Equal(t, lhs.Vals[a*32+b], out.Vals[(a*32+b)*2+0], "a=%d b=%d from lhs", a, b)
			require.Equal(t, rhs.Vals[a*32+b], out.Vals[(a*32+b)*2+1], "a=%d b=%d from rhs", a, b)
		}
	}
}

// TestExecInterleavedFetchRunsItsConfig: the simulator reads the second
// tensor where the fetch sequencer's interleave entry says: a wrong stride
// reads other bytes.
func TestExecInterleavedFetchRunsItsConfig(t *testing.T) {
	lhs, rhs, out := runInterleaved(t, func(p *kernel.Program) {
		f := p.Ops[2].Stages[1].Config.Fetch
		require.NotNil(t, f.Interleave)
		found := false
		for k, e := range f.Seq.Entries {
			if e.Stride == f.Interleave.Stride && e.Size == 2 {
				f.Seq.Entries[k].Stride = 32 // the next row of lhs, not rhs
				f.ContiguousRun = f.Seq.ContiguousRun()
				f.ContiguousBytes = f.ContiguousRun * f.InType.SizeBits() / 8
				found = true
			}
		}
		require.True(t, found, "the sequencer has the interleave entry: %s", f.Seq)
	})
	same := 0
	for a := 0; a < 511; a++ {
		for b := 0; b < 32; b++ {
			if out.Vals[(a*32+b)*2+1] == rhs.Vals[a*32+b] {
				same++
			}
			assert.Equal(t, lhs.Vals[(a+1)*32+b], out.Vals[(a*32+b)*2+1])
		}
	}
	assert.Less(t, same, 511*32/50, "rhs is no longer read")
}
