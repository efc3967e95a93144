package record

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/results/digest"
)

// testRecord makes a planned result for point i of a fake sweep (the
// result store's tests make the same).
func testRecord(t testing.TB, i int) *Record {
	plan, err := Compress([]byte(fmt.Sprintf(`{"version": 1, "point": %d}`, i)))
	require.NoError(t, err)
	m := 256 << (i % 4)
	return &Record{
		Key:   Key{Workload: digest.Bytes([]byte("w" + strconv.Itoa(i))), HW: digest.Bytes([]byte("hw")), Options: digest.Bytes([]byte("o")), Cost: "1"},
		Sweep: "test", Point: i, Workload: "gemm", Einsum: "M K, K N -> M N",
		Axes: fmt.Sprintf("M=%d, N=256, K=256", m), DType: "bf16",
		Params: map[string]string{"M": strconv.Itoa(m), "dtype": "bf16"},
		Status: StatusPlanned, Cycles: float64(1000 + 7*i%13), Bottleneck: []string{"dma/hbm", "main/switch"}[i%2],
		Bound: "memory", Optimal: "proven", Roofline: 0.5, MACs: float64(m) * 256 * 256, WallSeconds: float64(i),
		Plan: plan,
	}
}

// testRecords are points 0 to 7 of the fake sweep, in order.
func testRecords(t testing.TB) []*Record {
	var rs []*Record
	for i := 0; i < 8; i++ {
		rs = append(rs, testRecord(t, i))
	}
	return rs
}

func TestFilterMatch(t *testing.T) {
	all := testRecords(t)
	cond := func(s string) Cond {
		c, err := ParseCond(s)
		require.NoError(t, err)
		return c
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []int
	}{
		{"all", Filter{}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"M equal", Filter{Where: []Cond{cond("M=512")}}, []int{1, 5}},
		{"M range", Filter{Where: []Cond{cond("M=512..1024")}}, []int{1, 2, 5, 6}},
		{"M greater", Filter{Where: []Cond{cond("M>1024")}}, []int{3, 7}},
		{"dtype", Filter{Where: []Cond{cond("dtype=bf16"), cond("M<=256")}}, []int{0, 4}},
		{"not", Filter{Where: []Cond{cond("M!=256")}}, []int{1, 2, 3, 5, 6, 7}},
		{"bottleneck", Filter{Bottleneck: "switch"}, []int{1, 3, 5, 7}},
		{"workload", Filter{Workload: "gemv"}, nil},
		{"column", Filter{Where: []Cond{cond("cycles>=1008")}}, []int{3, 5, 7}},
		{"missing param", Filter{Where: []Cond{cond("K=256")}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, r := range all {
				if tc.f.Match(r) {
					got = append(got, r.Point)
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestBest(t *testing.T) {
	all := testRecords(t)
	best := Best(all, []string{"M"})
	require.Len(t, best, 4)
	for _, b := range best {
		for _, r := range all {
			if r.Params["M"] == b.Params["M"] {
				assert.LessOrEqual(t, b.Cycles, r.Cycles)
			}
		}
	}
	one := Best(all, nil)
	require.Len(t, one, 1)
	assert.Equal(t, 1000.0, one[0].Cycles)
}

func TestParseCondErrors(t *testing.T) {
	for _, s := range []string{"M", "=5", "M=", "M<abc", "M=9..1", "M=a..b"} {
		_, err := ParseCond(s)
		assert.Error(t, err, s)
	}
}

func TestExport(t *testing.T) {
	rs := []*Record{testRecord(t, 0), testRecord(t, 1)}
	var j, c bytes.Buffer
	require.NoError(t, WriteJSON(&j, rs))
	require.NoError(t, WriteCSV(&c, rs))
	assert.Contains(t, j.String(), `"M": "512"`)
	lines := strings.Split(strings.TrimSpace(c.String()), "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasSuffix(lines[0], "param:M,param:dtype"))
	assert.True(t, strings.HasSuffix(lines[2], ",512,bf16"))
}

func TestPointTextAndCompress(t *testing.T) {
	r := testRecord(t, 1)
	r.Op = "up"
	r.Params["workload"] = "gemm"
	assert.Equal(t, "gemm/up M=512 dtype=bf16", r.PointText())
	plan, err := Decompress(r.Plan)
	require.NoError(t, err)
	assert.Equal(t, `{"version": 1, "point": 1}`, string(plan))
}
