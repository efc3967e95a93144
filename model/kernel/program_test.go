package kernel

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helloDotFile is the manual's Hello dot product kernel (002 L413-454) in
// the JSON form: two bf16 vectors of A = 2048 in one slice, rhs loaded into
// TRF in the sub context, lhs streamed through the Contraction Engine in main.
const helloDotFile = "../../workloads/kernels/hello-dot.json"

func readHelloDot(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile(helloDotFile)
	require.NoError(tb, err)
	return string(data)
}

func TestProgramJSONRoundTrip(t *testing.T) {
	helloDot := readHelloDot(t)
	var p Program
	require.NoError(t, json.Unmarshal([]byte(helloDot), &p))
	assert.Equal(t, "hello-dot", p.Name)
	require.Len(t, p.Ops, 5)
	assert.Equal(t, 2048, p.Ops[3].Stages[1].Packet.Size())
	out, err := json.Marshal(&p)
	require.NoError(t, err)
	assert.JSONEq(t, helloDot, string(out))

	var q Program
	require.NoError(t, json.Unmarshal(out, &q))
	again, err := json.Marshal(&q)
	require.NoError(t, err)
	assert.Equal(t, string(out), string(again), "encoding is deterministic")
}

func TestProgramJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown field", `"chips": 1,`, `"chips": 1, "chip": 2,`, `unknown field "chip"`},
		{"bad mapping", `"packet": "A % 32"`, `"packet": "A % 33"`, `ops[3].stages[3].packet: "A % 33"`},
		{"unknown axis", `"element": "A", "addr": 0}`, `"element": "Q", "addr": 0}`, `tensors[0].element`},
		{"bad dtype", `"dtype": "bf16", "role": "input"`, `"dtype": "bf17", "role": "input"`, `tensors[0].dtype`},
		{"unknown tensor", `"tensor": "rhs_trf"}]`, `"tensor": "nope"}]`, `unknown tensor "nope"`},
		{"wrong memory", `"src": "lhs", "dst": "lhs_dm"`, `"src": "lhs_dm", "dst": "lhs"`, `is in dm, want hbm`},
		{"chain without terminal", `{"kind": "to_trf", "tensor": "rhs_trf"}]`, `{"kind": "contract", "packet": "1"}]`, `a chain ends in to_trf, to_vrf or commit`},
		{"dma in main", `{"context": "dma", "kind": "to_hbm"`, `{"context": "main", "kind": "to_hbm"`, `dma context`},
		{"trf without row", `"row": "1", "element": "A", "addr": 0, "trf_address": "Full"`, `"element": "A", "addr": 0, "trf_address": "Full"`, `needs a row mapping`},
		{"duplicate tensor", `{"name": "rhs", "mem"`, `{"name": "lhs", "mem"`, `duplicate tensor name`},
		{"no chips", `"chips": 1`, `"chips": 0`, `chips must be at least 1`},
		{"reference to DM", `"inputs": ["lhs", "rhs"]`, `"inputs": ["lhs", "rhs_dm"]`, `reference: tensor "rhs_dm" is a dm intermediate tensor, want an HBM input`},
		{"reference op", `"op": "einsum"`, `"op": "conv"`, `reference: unknown op "conv"`},
		{"reference scalar", `"output": "out"}`, `"output": "out", "scalar": 1}`, `a scalar goes with add of one input`},
		{"view of an intermediate", `"trf_address": "Full"`, `"trf_address": "Full", "view": "lhs_dm"`, `only an intermediate HBM tensor (a tile view) or a result (the argument updated in place) views an argument`},
		{"index on a load", `"src": "lhs", "dst": "lhs_dm"`, `"src": "lhs", "dst": "lhs_dm", "index": "rhs"`, `an index (a gather) is read by an HBM-to-HBM copy or a load of a gathered argument only, not to_dm`},
		{"scatter without an index", `"src": "lhs", "dst": "lhs_dm"`, `"src": "lhs", "dst": "lhs_dm", "scatter": true`, `a scatter is an HBM-to-HBM copy through an index, not to_dm with index ""`},
		{"scatter reference of one input", `"op": "einsum", "inputs": ["lhs", "rhs"]`, `"op": "scatter", "inputs": ["lhs"]`, `scatter needs two inputs, the data and the index, not 1`},
		{"gather by a float index", `"element": "A", "addr": 0},`, `"element": "A", "addr": 0, "gather": {"table": "rhs", "index": "rhs"}},`, `tensors[0] "lhs": gather: the index "rhs" is bf16, not an integer`},
		{"gather of unknown table", `"element": "A", "addr": 0},`, `"element": "A", "addr": 0, "gather": {"table": "zz", "index": "rhs"}},`, `gather: unknown table "zz"`},
		{"gather into DM", `"slice": "1 # 256", "element": "A", "addr": 0},`, `"slice": "1 # 256", "element": "A", "addr": 0, "gather": {"table": "rhs", "index": "rhs"}},`, `tensors[3] "lhs_dm": gather: a gathered tensor is an HBM argument (role input, no view), not a dm intermediate tensor`},
		{"view of unknown", `"role": "input", "chip": "1", "element": "A", "addr": 0}`, `"role": "intermediate", "chip": "1", "element": "A", "addr": 0, "view": "zz"}`, `view of "zz", which is not an HBM tensor of the kernel`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := replaceOnce(t, readHelloDot(t), tc.old, tc.new)
			var p Program
			err := json.Unmarshal([]byte(src), &p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func replaceOnce(t testing.TB, s, old, new string) string {
	t.Helper()
	i := strings.Index(s, old)
	require.GreaterOrEqual(t, i, 0, "fixture lacks %q", old)
	return s[:i] + new + s[i+len(old):]
}

// FuzzProgramJSON feeds arbitrary bytes to the decoder: it must return an
// error or a program that re-encodes to itself, and never panic.
func FuzzProgramJSON(f *testing.F) {
	f.Add([]byte(readHelloDot(f)))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"axes":"A=4","chips":1,"tensors":[null]}`))
	f.Add([]byte(`{"name":"e","axes":"A=4","chips":1,"tensors":[],"ops":[],"reference":{"op":"einsum","inputs":["x"],"output":"y","epilogue":"(acc) * 0.5"}}`))
	if data, err := os.ReadFile(updateSliceFile); err == nil {
		f.Add(data) // a result updated in place
	}
	{
		// Handoffs: lhs left in DM by the previous kernel, out for the next.
		var p Program
		if err := json.Unmarshal([]byte(readHelloDot(f)), &p); err == nil {
			p.Handoff = []*Op{p.Ops[0], p.Ops[4]}
			p.Ops = p.Ops[1:4]
			if data, err := json.Marshal(&p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(gatheredHelloDot(f))) // a gathered argument and its load through the index
	if data, err := os.ReadFile("../../results/plans/moe-dispatch.plan.json"); err == nil {
		// A scatter: its op's "scatter" and its descriptors' indirect
		// entries on the write side.
		var pl struct{ Program json.RawMessage }
		if json.Unmarshal(data, &pl) == nil && len(pl.Program) > 0 {
			f.Add([]byte(pl.Program))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Program
		if err := json.Unmarshal(data, &p); err != nil {
			return
		}
		out, err := json.Marshal(&p)
		require.NoError(t, err)
		var q Program
		require.NoError(t, json.Unmarshal(out, &q), "re-decoding %s", out)
		again, err := json.Marshal(&q)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}

// gatheredHelloDot is the Hello dot kernel with lhs a gathered argument:
// the rows of tab at idx (Tensor.Gather), loaded through idx.
func gatheredHelloDot(tb testing.TB) string {
	tb.Helper()
	src := replaceOnce(tb, readHelloDot(tb), `{"name": "lhs", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 0},`,
		`{"name": "lhs", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 0, "gather": {"table": "tab", "index": "idx"}},
    {"name": "tab", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 1073741824},
    {"name": "idx", "mem": "hbm", "dtype": "i32", "role": "input", "chip": "1", "element": "A", "addr": 2147483648},`)
	return replaceOnce(tb, src, `"src": "lhs", "dst": "lhs_dm"`, `"src": "lhs", "dst": "lhs_dm", "index": "idx"`)
}

// TestGatheredJSON: a gathered argument reads back and writes the same
// JSON; its load without the index is refused.
func TestGatheredJSON(t *testing.T) {
	var p Program
	require.NoError(t, json.Unmarshal([]byte(gatheredHelloDot(t)), &p))
	lhs, _ := p.Tensor("lhs")
	assert.Equal(t, &Gather{Table: "tab", Index: "idx"}, p.Gathered(lhs))
	out, err := json.Marshal(&p)
	require.NoError(t, err)
	var q Program
	require.NoError(t, json.Unmarshal(out, &q))
	again, err := json.Marshal(&q)
	require.NoError(t, err)
	assert.Equal(t, string(out), string(again))
	bad := replaceOnce(t, gatheredHelloDot(t), `"src": "lhs", "dst": "lhs_dm", "index": "idx"`, `"src": "lhs", "dst": "lhs_dm"`)
	err = json.Unmarshal([]byte(bad), &q)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"lhs" holds the rows of tab at idx: it is read by a load (to_dm) through that index, not to_dm with index ""`)
}
