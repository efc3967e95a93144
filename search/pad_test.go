package search_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/constraints"
	"tcpmap/emit"
	"tcpmap/emit/rustread"
	"tcpmap/engines"
	"tcpmap/model/workload"
	"tcpmap/search"
	"tcpmap/verify"
)

// TestPaddedPlansVerify (issue 14, "Any shape"): shapes whose sizes no
// packet or slice count divides have an empty mapspace; their aligned
// padding plans (search.SolveAnyShape), and the
// plan verifies on the simulator with the padding contract (zeros in the
// contracted axes' padding, a poison in the others', the output's padding
// not compared).
func TestPaddedPlansVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		pads      string // the padding planned
		compared  int    // the output elements compared: the valid ones
		long      bool   // without -short only (make test-long)
	}{
		// 24 bf16 fill no 64-byte packet (002 L4099): A to 32.
		{"odd-dot", "name: odd-dot\neinsum: A,A->\naxes: {A: 24}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n",
			"pad A from 24 to 32 (+33.3%)", 1, false},
		// Both prime. At +1/32 only J grows (to 54) and nothing plans; at
		// +1/8, I to 32 and J to 56 (a multiple of 8, the largest power of
		// two within 53 · 9/8).
		{"prime-gemv", "name: prime-gemv\neinsum: IJ,J->I\naxes: {I: 31, J: 53}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n",
			"pad I from 31 to 32 (+3.2%), pad J from 53 to 56 (+5.7%)", 31, false},
		// A GEMM with every axis odd: the free padding must not reach the
		// 15 × 23 valid outputs.
		{"odd-gemm", "name: odd-gemm\neinsum: IK,KJ->IJ\naxes: {I: 15, J: 23, K: 31}\ndtype: {in: bf16, acc: f32, out: bf16}\nchips: 1\n",
			"pad I from 15 to 16 (+6.7%), pad J from 23 to 24 (+4.3%), pad K from 31 to 32 (+3.2%)", 15 * 23, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.long && testing.Short() {
				t.Skip("long: `make test-long` runs it")
			}
			w, err := workload.Parse([]byte(tc.src), tc.name+".yaml")
			require.NoError(t, err)
			p, err := constraints.NewProblem(w, "")
			require.NoError(t, err)
			s, err := search.NewSpace(p, engines.Default())
			require.NoError(t, err)
			// Padding without split-K (its own tests): the padded spaces
			// stay small under -race.
			s = s.WithSplitK(false)
			pr, relax, why, err := search.SolveAnyShape(s, search.Solve, search.Options{}, true)
			require.NoError(t, err)
			require.NotNil(t, relax, "the workload's sizes have a plan: nothing to pad")
			assert.Nil(t, why, "an aligned padding plans: no need to explain the empty space")
			require.NotNil(t, pr.Best)
			assert.Equal(t, tc.pads, relax.String())
			assert.True(t, pr.Space.P.Padded())
			rep, err := verify.Verify(engines.Default(), pr.Best.Program, verify.Options{Seed: 1})
			require.NoError(t, err)
			assert.True(t, rep.Pass, "%s", rep)
			assert.Equal(t, tc.compared, rep.Compared)
			// The Rust kernel states the padding, and reads back with it.
			rs, err := emit.Rust(pr.Best.Program, emit.RustOptions{})
			require.NoError(t, err)
			back, err := rustread.Read(tc.name+".rs", rs)
			require.NoError(t, err)
			assert.Equal(t, pr.Space.P.Valid(), back.Reference.Valid)
		})
	}
}
