package pos

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJSONLine(t *testing.T) {
	data := []byte(`{
  "name": "k",
  "tensors": [
    {"name": "a", "addr": 0},
    {
      "name": "b",
      "addr": 64
    }
  ],
  "cost": {"cycles": -5}
}`)
	for _, c := range []struct {
		path string
		line int
	}{
		{"name", 2},
		{"tensors", 3},
		{"tensors[0]", 4},
		{"tensors[0].addr", 4},
		{"tensors[1]", 5},
		{"tensors[1].addr", 7},
		{"tensors[1].dtype", 5}, // not there: its longest prefix
		{"tensors[7].addr", 3},  // no such item: the list
		{"cost.cycles", 10},
		{"nothing", 0},
		{"", 0},
	} {
		assert.Equal(t, c.line, JSONLine(data, c.path), c.path)
	}
	assert.Equal(t, 4, JSONKeyLine(data, "addr"), "the first key of that name")
	assert.Equal(t, 10, JSONKeyLine(data, "cycles"))
	assert.Equal(t, 0, JSONKeyLine(data, "dtype"))
	// Broken JSON: what comes before the break is found, nothing after it.
	broken := []byte("{\n \"a\": 1,\n \"b\": ]\n \"c\": 2}")
	assert.Equal(t, 2, JSONLine(broken, "a"))
	assert.Equal(t, 0, JSONLine(broken, "c"))
}

// BenchmarkJSONLine: locating a field near the end of a large program is
// linear in its size.
func BenchmarkJSONLine(b *testing.B) {
	var s strings.Builder
	s.WriteString("{\"ops\": [\n")
	for i := range 5000 {
		if i > 0 {
			s.WriteString(",\n")
		}
		s.WriteString(`  {"kind": "dma", "src": "a", "dst": "b", "stages": [{"kind": "fetch"}, {"kind": "commit"}]}`)
	}
	s.WriteString("\n]}\n")
	data := []byte(s.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if JSONLine(data, "ops[4999].stages[1]") != 5001 {
			b.Fatal("wrong line")
		}
	}
}

// FuzzJSONLine: on any bytes and any path, JSONLine and JSONKeyLine answer
// a line of the input or 0, and never panic.
func FuzzJSONLine(f *testing.F) {
	f.Add([]byte("{\n \"a\": [1, {\"b\": 2}],\n \"c\": {}\n}"), "a[1].b")
	f.Add([]byte("[{\"x\": 1}, \n{\"x\": 2}]"), "[1].x")
	f.Add([]byte("{\"a\": }"), "a")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		if len(data) > 1<<14 {
			return
		}
		lines := 1 + strings.Count(string(data), "\n")
		l := JSONLine(data, path)
		if l < 0 || l > lines {
			t.Fatalf("line %d outside the %d lines", l, lines)
		}
		if k := JSONKeyLine(data, path); k < 0 || k > lines {
			t.Fatalf("key line %d outside the %d lines", k, lines)
		}
	})
}
