package plan

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// TestValidateStoredPlans: the plans the planner stored are valid (the
// large compressed ones are read by `tcpmap regress`, which validates
// them too).
func TestValidateStoredPlans(t *testing.T) {
	files, err := filepath.Glob("../../results/plans/*.plan.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		_, err := Read(f)
		assert.NoError(t, err, f)
	}
}

// TestValidate: a plan whose fields contradict each other or the program,
// or lie outside their ranges, is refused at the offending field.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Plan)
		path   string
		want   string
	}{
		{"negative cycles", func(p *Plan) { p.Cost.Cycles = -5 }, "cost.cycles", "-5 is negative"},
		{"zero cycles", func(p *Plan) { p.Cost.Cycles = 0 }, "cost.cycles", "a kernel takes time"},
		{"NaN seconds", func(p *Plan) { p.Cost.Seconds = math.NaN() }, "cost.seconds", "not a number"},
		{"utilization above 1", func(p *Plan) { p.Cost.MACUtilization = 1.5 }, "cost.mac_utilization", "at most 1"},
		{"unknown bound", func(p *Plan) { p.Cost.Bound = "fast" }, "cost.bound", `"fast": want one of compute, memory`},
		{"negative HBM bytes", func(p *Plan) { p.Cost.HBMBytes = -1 }, "cost.hbm_bytes", "negative"},
		{"workload axes contradict the program", func(p *Plan) { p.Workload.Axes = "A=4096" }, "workload.axes", `"A=4096", but the program's axes are "A=2048"`},
		{"program axis ahead of the workload's", func(p *Plan) { p.Program.Axes = mustAxes(t, "Kc=2, A=2048") }, "workload.axes", `"A=2048", but the program's axes are "Kc=2, A=2048"`},
		{"einsum of another axis", func(p *Plan) { p.Workload.Einsum = "B, B -> 1" }, "workload.einsum", "axis B is not among the workload's axes"},
		{"einsum unreadable", func(p *Plan) { p.Workload.Einsum = "A A" }, "workload.einsum", "want `IN0, IN1 -> OUT`"},
		{"einsum contradicts the program's tensors", func(p *Plan) { p.Workload.Einsum = "A, A -> A" }, "workload.einsum", `operand 2 has axes [A], but the program's tensor "out" holds []`},
		{"factors do not multiply to the size", func(p *Plan) { p.Mapping.Axes[0].Time = 32 }, "mapping.axes[0]", "multiply to 1024, not its size 2048"},
		{"a zero factor", func(p *Plan) { p.Mapping.Axes[0].Row = 0 }, "mapping.axes[0].row", "factor 0"},
		{"an axis renamed", func(p *Plan) { p.Mapping.Axes[0].Name = "B" }, "mapping.axes[0].name", `"B", want "A"`},
		{"size contradicts the workload", func(p *Plan) { p.Mapping.Axes[0].Size = 4096 }, "mapping.axes[0].size", "4096, but the workload's A is 2048"},
		{"chips contradict the program", func(p *Plan) { p.Mapping.Axes[0].Chip, p.Mapping.Axes[0].Time = 2, 32 }, "mapping.axes", "multiply to 2 chips, the program runs on 1"},
		{"unknown class", func(p *Plan) { p.Mapping.Axes[0].Class = "spare" }, "mapping.axes[0].class", `"spare"`},
		{"row order without rows", func(p *Plan) { p.Mapping.Axes[0].RowOuter = true }, "mapping.axes[0].row_outer", "only an axis with Row and Time factors above 1"},
		{"dealt out without slices", func(p *Plan) { p.Mapping.Axes[0].DealtOut = true }, "mapping.axes[0].dealt_out", "only an axis with Time and Cluster or Slice factors above 1"},
		{"cluster digit inner without clusters", func(p *Plan) { p.Mapping.Axes[0].ClusterInner = true }, "mapping.axes[0].cluster_inner", "only an axis with Cluster and Slice factors above 1"},
		{"digits name no level", func(p *Plan) { p.Mapping.Axes[0].Digits = "time.lane" }, "mapping.axes[0].digits", `no level "lane"`},
		{"digits name a level twice", func(p *Plan) { p.Mapping.Axes[0].Digits = "time.time" }, "mapping.axes[0].digits", "level time twice"},
		{"digits name a unit level", func(p *Plan) { p.Mapping.Axes[0].Digits = "slice.time" }, "mapping.axes[0].digits", "level slice has factor 1"},
		{"digits miss a level", func(p *Plan) {
			p.Mapping.Axes[0].Time, p.Mapping.Axes[0].Slice = 32, 2
			p.Mapping.Axes[0].Digits = "time"
		}, "mapping.axes[0].digits", "level slice (factor 2) missing"},
		{"digits beside a named order", func(p *Plan) {
			p.Mapping.Axes[0].Time, p.Mapping.Axes[0].Slice = 32, 2
			p.Mapping.Axes[0].DealtOut, p.Mapping.Axes[0].Digits = true, "time.slice"
		}, "mapping.axes[0].digits", "beside row_outer, dealt_out or cluster_inner"},
		{"time order misses an axis", func(p *Plan) { p.Mapping.TimeOrder = nil }, "mapping.time_order", "misses axis A, whose Time factor is 64"},
		{"tile order names an untiled axis", func(p *Plan) { p.Mapping.TileOrder = []string{"A"} }, "mapping.tile_order[0]", `axis "A" has no Tile factor above 1`},
		{"stationary is no input", func(p *Plan) { p.Mapping.Stationary = "out" }, "mapping.stationary", `"out": want one of the program's inputs`},
		{"streaming is the stationary", func(p *Plan) { p.Mapping.Streaming = "rhs" }, "mapping.stationary", `"rhs"`},
		{"layout of another tensor", func(p *Plan) { p.Mapping.Layouts[2].Tensor = "lhs" }, "mapping.layouts[2].tensor", `"lhs", want "out"`},
		{"copy layout of an input", func(p *Plan) { p.Mapping.Layouts[0].Order = "copy" }, "mapping.layouts[0].order", "copy is for the output only"},
		{"unknown packet", func(p *Plan) { p.Mapping.Packet = "triple" }, "mapping.packet", `"triple"`},
		{"unknown accumulation", func(p *Plan) { p.Mapping.Accumulate = "Random" }, "mapping.accumulate", "Random"},
		{"program without reference", func(p *Plan) { p.Program.Reference = nil }, "program.reference", "want an einsum of two inputs"},
		{"unknown planner", func(p *Plan) { p.Search.Planner = "greedy" }, "search.planner", `"greedy"`},
		{"stopped yet optimal", func(p *Plan) { p.Search.Stopped = "timeout" }, "search.optimal", `"exhaustive", but the search stopped early (timeout)`},
		{"negative count", func(p *Plan) { p.Search.Pruned = -1 }, "search.pruned", "negative"},
		{"lower bound above the cycles", func(p *Plan) { p.Search.LowerBound = 5000 }, "search.lower_bound_cycles", "above the plan's 1962 cycles"},
		{"proven below its bound", func(p *Plan) { p.Search.Optimal, p.Search.LowerBound = "proven", 1000 }, "search.lower_bound_cycles", "a proven plan's bound is its cycles"},
		{"gap above 1", func(p *Plan) { p.Search.Optimal, p.Search.Gap = "", 1.5 }, "search.gap", "within [0, 1]"},
		{"no tile bound", func(p *Plan) { p.Search.MaxTiles = 0 }, "search.max_tiles", "at least 1"},
		{"empty rule count", func(p *Plan) { p.Search.Illegal[0].Count = 0 }, "search.illegal[0]", "count of at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sample(t)
			require.NoError(t, p.Validate())
			tc.mutate(p)
			err := p.Validate()
			require.Error(t, err)
			var fe *kernel.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tc.path, fe.Path, "%v", err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestValidateStoppedByMemory: a plan whose search stopped at its memory
// budget (plan --memory, search.StoppedMemory) reads back.
func TestValidateStoppedByMemory(t *testing.T) {
	p := sample(t)
	p.Search.Optimal, p.Search.Stopped, p.Search.Gap = "", "memory", 0.5
	require.NoError(t, p.Validate())
	data, err := p.Marshal()
	require.NoError(t, err)
	_, err = Unmarshal(data)
	assert.NoError(t, err)
}

// TestValidateProgramAxes: a program may declare axes of its own after
// the workload's (a K-chunked plan's interleave axis, Kc).
func TestValidateProgramAxes(t *testing.T) {
	p := sample(t)
	p.Program.Axes = mustAxes(t, "A=2048, Kc=2")
	assert.NoError(t, p.Validate())
}

func mustAxes(t *testing.T, s string) mapping.Axes {
	t.Helper()
	a, err := mapping.ParseAxes(s)
	require.NoError(t, err)
	return a
}

// TestUnmarshalValidates: Unmarshal refuses an invalid plan with the
// field's path (a negative cost, a program error under "program", a type
// error inside the program at its offset in the whole file).
func TestUnmarshalValidates(t *testing.T) {
	data, err := sample(t).Marshal()
	require.NoError(t, err)
	src := string(data)
	_, err = Unmarshal([]byte(strings.Replace(src, `"cycles": 1962,`, `"cycles": -5,`, 1)))
	assert.EqualError(t, err, "cost.cycles: -5 is negative")

	_, err = Unmarshal([]byte(strings.Replace(src, `"chips": 1,`, `"chips": 0,`, 1)))
	var fe *kernel.FieldError
	require.True(t, errors.As(err, &fe), "%v", err)
	assert.Equal(t, "program", fe.Path)

	bad := strings.Replace(src, `"addr": 4096`, `"addr": "x"`, 1)
	require.NotEqual(t, src, bad)
	_, err = Unmarshal([]byte(bad))
	require.ErrorContains(t, err, "addr")
	at := strings.Index(bad, `"addr": "x"`)
	var ute *json.UnmarshalTypeError
	if assert.True(t, errors.As(err, &ute), "%v", err) {
		assert.InDelta(t, at, int(ute.Offset), 16, "the offset counts from the start of the file")
	}
}

// FuzzUnmarshal: any bytes either decode to a plan that validates and
// marshals back to a plan that decodes, or give an error; never a panic.
func FuzzUnmarshal(f *testing.F) {
	for _, name := range []string{"gemv", "dot", "bmm"} {
		if data, err := os.ReadFile("../../results/plans/" + name + ".plan.json"); err == nil {
			f.Add(data)
		}
	}
	if data, err := os.ReadFile("testdata/decode-silu.plan.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"version": 1, "program": null}`))
	f.Add([]byte(`{"version": 1, "cost": {"cycles": -5}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Unmarshal(data)
		if err != nil {
			return
		}
		require.NoError(t, p.Validate())
		out, err := p.Marshal()
		require.NoError(t, err)
		_, err = Unmarshal(out)
		require.NoError(t, err)
	})
}

// FuzzDecode: the plan file's bytes, gzip-compressed or not (the stored
// plans compressed and corrupted), decode to a valid plan or an error,
// never a panic, and a compressed plan decodes as its JSON does.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"gemv", "dot"} {
		if data, err := os.ReadFile("../../results/plans/" + name + ".plan.json"); err == nil {
			f.Add(data)
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(data)
			_ = zw.Close()
			f.Add(b.Bytes())
			f.Add(b.Bytes()[:b.Len()/2])
		}
	}
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			return
		}
		require.NoError(t, p.Validate())
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			return
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, err = zw.Write(data)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		q, err := Decode(b.Bytes())
		require.NoError(t, err)
		assert.Equal(t, p, q)
	})
}
