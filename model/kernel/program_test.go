package kernel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helloDot is the manual's Hello dot product kernel (002 L413-454) in the
// JSON form: two bf16 vectors of A = 2048 in one slice, rhs loaded into TRF
// in the sub context, lhs streamed through the Contraction Engine in main.
const helloDot = `{
  "name": "hello-dot", "axes": "A=2048", "chips": 1,
  "tensors": [
    {"name": "lhs", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 0},
    {"name": "rhs", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "A", "addr": 268435456},
    {"name": "out", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "1", "addr": 536870912},
    {"name": "lhs_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 0},
    {"name": "rhs_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "A", "addr": 4096},
    {"name": "rhs_trf", "mem": "trf", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "row": "1", "element": "A", "addr": 0, "trf_address": "Full"},
    {"name": "out_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "element": "1 # 8", "addr": 8192}
  ],
  "ops": [
    {"context": "dma", "kind": "to_dm", "src": "lhs", "dst": "lhs_dm"},
    {"context": "dma", "kind": "to_dm", "src": "rhs", "dst": "rhs_dm"},
    {"context": "sub", "kind": "chain", "stages": [
      {"kind": "begin", "tensor": "rhs_dm"},
      {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "A"},
      {"kind": "collect", "time": "A / 16", "packet": "A % 16"},
      {"kind": "to_trf", "tensor": "rhs_trf"}]},
    {"context": "main", "kind": "chain", "stages": [
      {"kind": "begin", "tensor": "lhs_dm"},
      {"kind": "fetch", "dtype": "bf16", "time": "1", "packet": "A"},
      {"kind": "collect", "time": "A / 16", "packet": "A % 16"},
      {"kind": "align", "tensor": "rhs_trf", "time": "A / 32", "packet": "A % 32"},
      {"kind": "contract", "packet": "1"},
      {"kind": "accumulate", "time": "1", "packet": "1 # 8", "param": "Interleaved"},
      {"kind": "cast", "dtype": "bf16", "packet": "1 # 16"},
      {"kind": "commit", "tensor": "out_dm"}]},
    {"context": "dma", "kind": "to_hbm", "src": "out_dm", "dst": "out"}
  ]
}`

func TestProgramJSONRoundTrip(t *testing.T) {
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := replaceOnce(t, helloDot, tc.old, tc.new)
			var p Program
			err := json.Unmarshal([]byte(src), &p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	i := strings.Index(s, old)
	require.GreaterOrEqual(t, i, 0, "fixture lacks %q", old)
	return s[:i] + new + s[i+len(old):]
}

// FuzzProgramJSON feeds arbitrary bytes to the decoder: it must return an
// error or a program that re-encodes to itself, and never panic.
func FuzzProgramJSON(f *testing.F) {
	f.Add([]byte(helloDot))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"axes":"A=4","chips":1,"tensors":[null]}`))
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
