package verify

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

func TestLogical(t *testing.T) {
	data, err := os.ReadFile("../workloads/kernels/hello-gemm.json")
	require.NoError(t, err)
	var p kernel.Program
	require.NoError(t, json.Unmarshal(data, &p))
	b, _ := p.Tensor("b")
	l, err := NewLogical(&p, b)
	require.NoError(t, err)
	// b is m![J, K]: its axes in declaration order (I, J, K) are J then K.
	require.Len(t, l.Axes, 2)
	assert.Equal(t, "J", l.Axes[0].Name)
	assert.Equal(t, "K", l.Axes[1].Name)
	assert.Equal(t, 512*1024, l.Len())
	off, ok := l.Offset(mapping.IndexOf(mapping.Coord{Axis: "J", Value: 3}, mapping.Coord{Axis: "K", Value: 5}, mapping.Coord{Axis: "I", Value: 9}))
	require.True(t, ok)
	assert.Equal(t, 3*1024+5, off)
	assert.Equal(t, []int{3, 5}, l.Coords(off, nil))
	assert.Equal(t, "{J: 3, K: 5}", l.IndexString(off))
	_, ok = l.Offset(mapping.IndexOf(mapping.Coord{Axis: "K", Value: 1024}))
	assert.False(t, ok)

	out, _ := p.Tensor("out")
	o, err := NewLogical(&p, out)
	require.NoError(t, err)
	assert.Equal(t, 512*512, o.Len())
}
