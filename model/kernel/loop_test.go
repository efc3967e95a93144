package kernel

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadProgram(t *testing.T, path string) *Program {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var p Program
	require.NoError(t, json.Unmarshal(b, &p))
	return &p
}

// TestRecognizeTiled: the planner's tiled kernels (emit/testdata/tiled-*,
// built by search.Build) are loops over tiles, and their loops unroll to
// the same programs.
func TestRecognizeTiled(t *testing.T) {
	for _, tc := range []struct {
		file   string
		axes   []string
		counts []int
		slots  int
		levels []int
	}{
		// J = 64 in 2 tiles: 2 stores of a result tile, one per step.
		{"tiled-1axis-single", []string{"J"}, []int{2}, 4, []int{0, 1, 1, 1, 1}},
		{"tiled-1axis-double", []string{"J"}, []int{4}, 4, []int{0, 1, 1, 1, 1}},
		// I in 2 outer tiles, J in 4 inner: in0 (I, K) and its TRF load
		// change with I only (level 1), the rest every step.
		{"tiled-2axis-double", []string{"I", "J"}, []int{2, 4}, 4, []int{1, 2, 1, 2, 2}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := loadProgram(t, "../../emit/testdata/"+tc.file+".json")
			l, ok := Recognize(p)
			require.True(t, ok)
			var names []string
			var counts []int
			for _, a := range l.Axes {
				names = append(names, a.Name)
				counts = append(counts, a.Count)
			}
			assert.Equal(t, tc.axes, names)
			assert.Equal(t, tc.counts, counts)
			assert.Len(t, l.Slots, tc.slots)
			var levels []int
			for _, b := range l.Body {
				levels = append(levels, b.Level)
			}
			assert.Equal(t, tc.levels, levels)
			steps := 0
			for _, op := range p.Ops {
				if op.Kind == OpToHBM {
					steps++
				}
			}
			assert.Equal(t, steps, l.Steps())
			var args []*Tensor
			for _, x := range p.Tensors {
				if x.Mem == HBM && x.Role != Intermediate {
					args = append(args, x)
				}
			}
			ts, ops, err := l.Unroll(args)
			require.NoError(t, err)
			want, err := flatJSON(p.Tensors, p.Ops)
			require.NoError(t, err)
			got, err := flatJSON(ts, ops)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

// TestRecognizeNotALoop: programs without tile views, and tiled programs
// whose ops are not one body repeated, have no loop form.
func TestRecognizeNotALoop(t *testing.T) {
	_, ok := Recognize(loadProgram(t, "../../workloads/kernels/hello-gemm.json"))
	assert.False(t, ok, "untiled")
	_, ok = Recognize(nil)
	assert.False(t, ok, "nil")
	for name, mutate := range map[string]func(p *Program){
		"view address": func(p *Program) {
			t, _ := p.Tensor("in1_t2")
			t.Addr += 128
		},
		"dropped op": func(p *Program) { p.Ops = p.Ops[:len(p.Ops)-2] },
		"swapped ops": func(p *Program) {
			n := len(p.Ops)
			p.Ops[n-1], p.Ops[n-2] = p.Ops[n-2], p.Ops[n-1]
		},
		"buffer order": func(p *Program) {
			for _, op := range p.Ops {
				if op.Kind == OpToDM && op.Dst == "in1_dm1" {
					op.Dst = "in1_dm0"
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := loadProgram(t, "../../emit/testdata/tiled-2axis-double.json")
			mutate(p)
			_, ok := Recognize(p)
			assert.False(t, ok)
		})
	}
}

// TestUnrollErrors: a loop naming what it does not define fails.
func TestUnrollErrors(t *testing.T) {
	p := loadProgram(t, "../../emit/testdata/tiled-2axis-double.json")
	l, ok := Recognize(p)
	require.True(t, ok)
	var args []*Tensor
	for _, x := range p.Tensors {
		if x.Mem == HBM && x.Role != Intermediate {
			args = append(args, x)
		}
	}
	l.Body[0].Level = 7
	_, _, err := l.Unroll(args)
	assert.ErrorContains(t, err, "level 7")
	l.Body[0].Level = 1
	l.Body[2].Op.Stages[0].Tensor = "nope"
	_, _, err = l.Unroll(args)
	assert.ErrorContains(t, err, `"nope" is used before the loop produces it`)
}
