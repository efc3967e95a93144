package verify

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/pos"
)

// TestKernelFileLocations: errors in a kernel file name the file, the line
// and, where the JSON decoder gives one, the column.
func TestKernelFileLocations(t *testing.T) {
	data, err := os.ReadFile("../workloads/kernels/hello-dot.json")
	require.NoError(t, err)
	src := string(data)
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"syntax", `"chips": 1,`, `"chips": 1,,`, "k.json:2:53: invalid character ','"},
		{"type", `"chips": 1,`, `"chips": "one",`, "k.json:2: json: cannot unmarshal string"},
		{"mapping", `"element": "1", "addr": 536870912`, `"element": "1 +", "addr": 536870912`, "k.json:6: tensors[2].element: "},
		{"validate tensor", `"mem": "hbm", "dtype": "bf16", "role": "output"`, `"mem": "hbm", "dtype": "bf16", "role": "outptu"`, `k.json:6: tensors[2] "out": role "outptu"`},
		{"validate stage", `{"kind": "begin", "tensor": "lhs_dm"}`, `{"kind": "begin", "tensor": "lhs_dmx"}`, `k.json:21: ops[3] (chain): stages[0] (begin): unknown tensor "lhs_dmx"`},
		{"unknown field", `"chips": 1,`, `"chips": 1, "chipz": 1,`, `k.json:2: json: unknown field "chipz"`},
		{"reference", `"output": "out"}`, `"output": "outx"}`, `k.json:31: reference: unknown tensor "outx"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, src, tc.old)
			_, _, err := ParseKernel("k.json", []byte(strings.Replace(src, tc.old, tc.new, 1)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	p, s, err := ParseKernel("k.json", data)
	require.NoError(t, err)
	// A lowering error: the line of the stage.
	le := &engines.LowerError{Op: 3, Stage: 4, Kind: "contract", Err: errors.New("boom")}
	assert.Equal(t, "k.json:25: ops[3].stages[4] (contract): boom", s.Locate(le).Error())
	// The located error is a *pos.Error that still wraps what it locates.
	var pe *pos.Error
	require.ErrorAs(t, s.Locate(le), &pe)
	assert.Equal(t, pos.Error{File: "k.json", Line: 25, Err: le}, *pe)
	var le2 *engines.LowerError
	assert.ErrorAs(t, s.Locate(le), &le2)
	// An execution error wrapped by something else: still found.
	xe := fmt.Errorf("run: %w", &ExecError{Op: 4, Stage: -1, Kind: "to_hbm", Err: errors.New("boom")})
	assert.Equal(t, "k.json:29: run: ops[4] (to_hbm): boom", s.Locate(xe).Error())
	// A field error: the line of its field; nested ones join their paths
	// (a plan's program under "program"), and what they wrap adds its own.
	fe := &kernel.FieldError{Path: "tensors[2].addr", Err: errors.New("boom")}
	assert.Equal(t, "k.json:6: tensors[2].addr: boom", s.Locate(fe).Error())
	plan := &Source{Name: "p.json", Data: []byte("{\n \"cost\": {\"cycles\": -5},\n \"program\": " + src + "}")}
	assert.Equal(t, "p.json:8: program: tensors[2].addr: boom", plan.Locate(&kernel.FieldError{Path: "program", Err: fe}).Error())
	assert.Equal(t, "p.json:27: program: ops[3].stages[4] (contract): boom", plan.Locate(&kernel.FieldError{Path: "program", Err: le}).Error())
	assert.Equal(t, "p.json:2: cost.cycles: boom", plan.Locate(&kernel.FieldError{Path: "cost.cycles", Err: errors.New("boom")}).Error())
	// No location: the file name only.
	assert.Equal(t, "k.json: boom", s.Locate(errors.New("boom")).Error())
	assert.NoError(t, s.Locate(nil))
	assert.Equal(t, "hello-dot", p.Name)

	_, _, err = LoadKernel("testdata/no-such-kernel.json")
	assert.Error(t, err)
}

// FuzzParseKernel: a kernel file's bytes (the golden kernels, corrupted)
// parse to a program or to an error that names the file, never a panic.
func FuzzParseKernel(f *testing.F) {
	for _, name := range []string{"hello-gemv", "hello-add", "ve-pair-add"} {
		if data, err := os.ReadFile("../workloads/kernels/" + name + ".json"); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := ParseKernel("k.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "k.json") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if p == nil {
			t.Fatal("no program and no error")
		}
	})
}

// FuzzParseSlices: --slices parses to a sample size that prints back to
// itself, or to an error; never a panic.
func FuzzParseSlices(f *testing.F) {
	for _, s := range []string{"all", "sample:1", "sample:64", "sample:", "sample:-3", "sample:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseSlices(s)
		if err != nil {
			return
		}
		back, err := ParseSlices(SlicesString(k))
		if err != nil || back != k {
			t.Fatalf("%q → %d → %q → %d, %v", s, k, SlicesString(k), back, err)
		}
	})
}
