package workload

import (
	"fmt"
	"strings"
	"testing"
)

// manyAxes is a graph workload declaring n axes, three of them used.
func manyAxes(n int) []byte {
	var b strings.Builder
	b.WriteString("name: many\nchips: 1\naxes: {")
	for i := range n {
		fmt.Fprintf(&b, "X%d: 2, ", i)
	}
	b.WriteString("I: 4, K: 4, J: 4}\ntensors:\n  a: {axes: [I, K], dtype: bf16}\n  b: {axes: [K, J], dtype: bf16}\n  c: {axes: [I, J], dtype: bf16}\n")
	b.WriteString("ops:\n  - {name: mm, kind: einsum, inputs: [a, b], outputs: [c]}\n")
	return []byte(b.String())
}

// BenchmarkParseManyAxes parses a workload declaring 100,000 axes (52 s
// once, when each declaration searched the axes before it).
func BenchmarkParseManyAxes(b *testing.B) {
	data := manyAxes(100000)
	for b.Loop() {
		if _, err := Parse(data, "many.yaml"); err == nil {
			b.Fatal("unused axes are errors")
		}
	}
}

// TestParseManyAxes: declaring many axes stays linear — every unused one
// is reported with its position.
func TestParseManyAxes(t *testing.T) {
	_, err := Parse(manyAxes(5000), "many.yaml")
	if err == nil || !strings.Contains(err.Error(), "axes.X4999: axis declared but not used") {
		t.Fatalf("got %v", err)
	}
}
