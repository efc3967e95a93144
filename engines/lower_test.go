package engines

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

func loadKernel(t *testing.T, name string) *kernel.Program {
	t.Helper()
	data, err := os.ReadFile("../workloads/kernels/" + name + ".json")
	require.NoError(t, err)
	return parseKernel(t, string(data))
}

func parseKernel(t *testing.T, src string) *kernel.Program {
	t.Helper()
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(src), &p))
	return &p
}

// engineOf names the StageConfig field each stage kind sets.
var engineOf = map[kernel.StageKind]string{
	kernel.StFetch: "fetch", kernel.StSwitch: "switch", kernel.StCollect: "collect",
	kernel.StToTRF: "to_trf", kernel.StAlign: "align", kernel.StContract: "contract",
	kernel.StAccumulate: "accumulate", kernel.StCast: "cast", kernel.StTranspose: "transpose",
	kernel.StCommit: "commit",
}

// TestLowerGoldenKernels lowers the manual's Hello contraction kernels
// (002 L300-566, as workloads/kernels/*.json with the decisions of
// docs/spec-decisions.md): every DMA op gets a command, every stage exactly
// its engine's configuration, and the lowered program's JSON round-trips
// byte for byte and is the same on every run.
func TestLowerGoldenKernels(t *testing.T) {
	for _, name := range []string{"hello-dot", "hello-gemv", "hello-gemm"} {
		t.Run(name, func(t *testing.T) {
			p := loadKernel(t, name)
			require.NoError(t, Lower(Default(), p))
			for i, op := range p.Ops {
				if op.Kind != kernel.OpChain {
					require.NotNil(t, op.DMA, "ops[%d]", i)
					assert.NotEmpty(t, op.DMA.Descriptors, "ops[%d]", i)
					continue
				}
				for k, st := range op.Stages {
					if st.Kind == kernel.StBegin {
						assert.Nil(t, st.Config)
						continue
					}
					require.NotNil(t, st.Config, "ops[%d].stages[%d]", i, k)
					fields := map[string]any{}
					b, err := json.Marshal(st.Config)
					require.NoError(t, err)
					require.NoError(t, json.Unmarshal(b, &fields))
					assert.Len(t, fields, 1, "ops[%d].stages[%d] %s: %s", i, k, st.Kind, b)
					assert.Contains(t, fields, engineOf[st.Kind], "ops[%d].stages[%d]", i, k)
				}
			}
			out, err := json.Marshal(p)
			require.NoError(t, err)
			q := parseKernel(t, string(out))
			again, err := json.Marshal(q)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(again), "lowered JSON round trip")

			r := loadKernel(t, name)
			require.NoError(t, Lower(Default(), r))
			twice, err := json.Marshal(r)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(twice), "deterministic lowering")
		})
	}
}

// TestLowerManualGEMMTRF: the manual's GEMM as written, K = 2048 (002 L479),
// needs 16 KB per TRF Row: the to_trf stage fails with TRF-R3, located in
// the program (docs/spec-decisions.md "Hello GEMM TRF over-capacity").
func TestLowerManualGEMMTRF(t *testing.T) {
	data, err := os.ReadFile("../workloads/kernels/hello-gemm.json")
	require.NoError(t, err)
	src := strings.Replace(string(data), `"I=512, J=512, K=1024"`, `"I=512, J=512, K=2048"`, 1)
	p := parseKernel(t, src)
	err = Lower(Default(), p)
	var le *LowerError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, 2, le.Op)
	assert.Equal(t, 3, le.Stage)
	var v *Violation
	require.True(t, errors.As(err, &v), "%v", err)
	assert.Equal(t, "TRF-R3", v.Rule.ID)
	assert.Contains(t, err.Error(), "ops[2].stages[3] (to_trf): trf: ")
}

// TestLowerChainRules: the tensors a chain produces keep the stream's
// spatial mappings (002 L2154, L4056-4065).
func TestLowerChainRules(t *testing.T) {
	data, err := os.ReadFile("../workloads/kernels/hello-dot.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, old, new, rule string
	}{
		{"commit to other slices", `"name": "out_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256"`,
			`"name": "out_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 128, 2"`, "CHAIN-R1"},
		{"TRF on other slices", `"role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": "1 # 256", "row": "1"`,
			`"role": "intermediate", "chip": "1", "cluster": "2", "slice": "1 # 256", "row": "1"`, "CHAIN-R2"},
		{"commit of another dtype", `"name": "out_dm", "mem": "dm", "dtype": "bf16"`, `"name": "out_dm", "mem": "dm", "dtype": "f32"`, "CHAIN-R1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := string(data)
			require.Contains(t, src, tc.old)
			p := parseKernel(t, strings.Replace(src, tc.old, tc.new, 1))
			var v *Violation
			err := Lower(Default(), p)
			require.True(t, errors.As(err, &v), "%v", err)
			assert.Equal(t, tc.rule, v.Rule.ID)
		})
	}
}

// TestLowerKeepsStatedConfig: a configuration the program states is kept
// as written (the simulator runs hand-written configurations, wrong ones
// included); the others are derived.
func TestLowerKeepsStatedConfig(t *testing.T) {
	p := loadKernel(t, "hello-dot")
	require.NoError(t, Lower(Default(), p))
	fetch := p.Ops[3].Stages[1]
	require.NotNil(t, fetch.Config.Fetch)
	// A wrong base, consistent with every other field (a stride would
	// change the contiguous run, which FE-R5 ties to fetch_size).
	wrong := *fetch.Config.Fetch
	wrong.Seq.Base = 2

	q := loadKernel(t, "hello-dot")
	q.Ops[3].Stages[1].Config = &kernel.StageConfig{Fetch: &wrong}
	require.NoError(t, Lower(Default(), q))
	assert.Equal(t, 2, q.Ops[3].Stages[1].Config.Fetch.Seq.Base)
	assert.NotNil(t, q.Ops[3].Stages[2].Config.Collect)
}

// TestLowerDMASpreadsOverDMNs: a DMA to a tensor on all 256 slices of a
// cluster runs on the cluster's 8 DMNs, each moving its own 32 slices
// (002 L2544, L2867-2868); a tensor on one slice runs on one.
func TestLowerDMASpreadsOverDMNs(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		op     int
		dmns   int
	}{
		{"hello-gemm", 0, 8}, {"hello-gemm", 1, 8}, {"hello-gemm", 4, 8},
		{"hello-gemv", 0, 8},
		{"hello-dot", 0, 1},
	} {
		p := loadKernel(t, tc.kernel)
		require.NoError(t, Lower(Default(), p))
		cmd := p.Ops[tc.op].DMA
		seen := map[int]bool{}
		for _, d := range cmd.Descriptors {
			seen[d.Dmn.DMN] = true
			side := d.Dst
			if side.Kind != kernel.MediaDM {
				side = d.Src
			}
			assert.Equal(t, d.Dmn.DMN, side.Dmn.DMN, "%s ops[%d]: a DMN moves its own slices", tc.kernel, tc.op)
		}
		assert.Len(t, seen, tc.dmns, "%s ops[%d]", tc.kernel, tc.op)
	}
}

// TestLowerDMASpreadsOverLiveDMNs: a DMA runs on every DMN that holds a
// live slice of its DM side, whatever the number of live slices, each DMN
// moving its own slices' bytes (a slice's DMN is slice / 32, 002
// L2867-2868; one DMA Engine per DMN pair, 002 L2404, L2544); a DMN with
// no live slice takes no part. Both directions, HBM to DM and DM to HBM.
func TestLowerDMASpreadsOverLiveDMNs(t *testing.T) {
	for _, tc := range []struct {
		name, axes, slice string
		dmns              []int
	}{
		{"16 slices under DMN 0", "I=16, J=2048", "I # 256", []int{0}},
		{"64 slices under DMNs 0-1", "I=64, J=2048", "I # 256", []int{0, 1}},
		{"16 slices, 2 a DMN", "I=16, J=2048", "I / 2, I % 2 # 32", []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"4 slices, 1 an engine", "I=4, J=2048", "I, 1 # 64", []int{0, 2, 4, 6}},
		{"12 slices, 3 an engine", "I=12, J=2048", "I / 3, I % 3 # 64", []int{0, 2, 4, 6}},
		{"8 slices, 1 a DMN", "I=8, J=2048", "I, 1 # 32", []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"all 256", "I=256, J=2048", "I", []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"128 slices, a PE pair", "I=128, J=2048", "I", []int{0, 1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parseKernel(t, fmt.Sprintf(`{"name": "spread", "axes": %q, "chips": 1,
  "tensors": [
    {"name": "m", "mem": "hbm", "dtype": "bf16", "role": "input", "chip": "1", "element": "I, J", "addr": 0},
    {"name": "o", "mem": "hbm", "dtype": "bf16", "role": "output", "chip": "1", "element": "I, J", "addr": 268435456},
    {"name": "m_dm", "mem": "dm", "dtype": "bf16", "role": "intermediate", "chip": "1", "cluster": "1 # 2", "slice": %q, "element": "J", "addr": 0}
  ],
  "ops": [
    {"context": "dma", "kind": "to_dm", "src": "m", "dst": "m_dm"},
    {"context": "dma", "kind": "to_hbm", "src": "m_dm", "dst": "o"}
  ]}`, tc.axes, tc.slice))
			require.NoError(t, Lower(Default(), p))
			for _, op := range p.Ops {
				var dmns []int
				bytes := map[int]int{}
				for _, d := range op.DMA.Descriptors {
					side := d.Dst
					if side.Kind != kernel.MediaDM {
						side = d.Src
					}
					assert.Equal(t, d.Dmn.DMN, side.Dmn.DMN, "%s: a DMN moves its own slices", op.Kind)
					if bytes[d.Dmn.DMN] == 0 {
						dmns = append(dmns, d.Dmn.DMN)
					}
					bytes[d.Dmn.DMN] += d.Bytes
				}
				assert.Equal(t, tc.dmns, dmns, "%s", op.Kind)
				for _, k := range dmns {
					assert.Equal(t, bytes[dmns[0]], bytes[k], "%s: DMN %d's share", op.Kind, k)
				}
			}
		})
	}
}

// TestLowerSwitchDualChannel: a switch in a dual channel chain (a 64-byte
// collect packet, 002 L1997, L2127) moves 64-byte flits, one per 64-byte
// packet: the two 32-byte Switch Engines combine (002 L2125-2127, L2140;
// docs/spec-decisions.md "Switch in a dual channel chain"). The same switch
// in a single channel chain moves two 32-byte flits per packet
// (cycles_per_packet = packet_size / 32, 002 L3526).
func TestLowerSwitchDualChannel(t *testing.T) {
	data, err := os.ReadFile("../workloads/kernels/hello-gemv.json")
	require.NoError(t, err)
	const fetch = `{"kind": "fetch", "dtype": "bf16", "time": "J / 32", "packet": "J % 32"}`
	src := strings.Join(strings.Fields(string(data)), " ")
	require.Contains(t, src, strings.Join(strings.Fields(fetch), " "))
	for _, tc := range []struct {
		name, collect string
		flit, flits   int
	}{
		{"dual", `{"kind": "collect", "time": "J / 32", "packet": "J % 32"}`, 64, 1},
		{"single", `{"kind": "collect", "time": "J / 16", "packet": "J % 16"}`, 32, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw := `{"kind": "switch", "slice": "I", "time": "J / 32"}`
			s := strings.Replace(src, strings.Join(strings.Fields(fetch), " ")+", "+
				strings.Join(strings.Fields(`{"kind": "collect", "time": "J / 32", "packet": "J % 32"}`), " "),
				strings.Join(strings.Fields(fetch), " ")+", "+sw+", "+tc.collect, 1)
			require.NotEqual(t, src, s)
			p := parseKernel(t, s)
			require.NoError(t, Lower(Default(), p))
			cfg := p.Ops[3].Stages[2].Config
			require.NotNil(t, cfg)
			require.NotNil(t, cfg.Switch)
			assert.Equal(t, tc.flit, cfg.Switch.FlitBytes)
			assert.Equal(t, tc.flits, cfg.Switch.FlitsPerPacket)
		})
	}
}

// TestLowerClusterExchange: the cluster reduce's DMA (docs/spec-decisions.md
// "Cluster reduce") moves P, partial sums over the clusters by K's digit,
// into Q, over the clusters by the output's outermost digit, DM to DM
// across the clusters (002 L2386-2389). Every DMN reads one cluster and
// writes one (DMA-R3, 002 L2487-2491), the engine of the source cluster
// runs it (002 L2548), all 8 DMNs of each cluster take part, and half the
// bytes change cluster; with the destination's cluster part as the stream's
// (the ordinary derivation) a DMN's time would cross the source's clusters,
// which DMA-R3 refuses.
func TestLowerClusterExchange(t *testing.T) {
	p := parseKernel(t, `{"name": "exchange", "axes": "I=256, J=32, K=16", "chips": 1,
  "tensors": [
    {"name": "ps", "mem": "dm", "dtype": "f32", "role": "intermediate", "chip": "1", "cluster": "K / 8", "slice": "I", "element": "J", "addr": 0},
    {"name": "pq", "mem": "dm", "dtype": "f32", "role": "intermediate", "chip": "1", "cluster": "J / 16", "slice": "I", "element": "K / 8, J % 16", "addr": 128}
  ],
  "ops": [{"context": "dma", "kind": "dm_to_dm", "src": "ps", "dst": "pq"}]}`)
	require.NoError(t, Lower(Default(), p))
	cmd := p.Ops[0].DMA
	total, across := 0, 0
	dmns := map[[2]int]bool{}
	for _, d := range cmd.Descriptors {
		assert.Equal(t, d.Dmn.Cluster, d.Src.Dmn.Cluster, "the source cluster's engine runs it")
		dmns[[2]int{d.Dmn.Cluster, d.Dmn.DMN}] = true
		total += d.Bytes
		if d.Src.Dmn.Cluster != d.Dst.Dmn.Cluster {
			across += d.Bytes
		}
	}
	assert.Equal(t, 2*256*32*4, total, "every partial sum of both clusters")
	assert.Equal(t, total/2, across, "half of them change cluster")
	assert.Len(t, dmns, 16, "8 DMNs in each cluster")

	src, _ := p.Tensor("ps")
	dst, _ := p.Tensor("pq")
	_, err := DeriveDMA(Default(), DMARequest{Axes: p.Axes, DType: src.DType, Src: dmaTensor(src), Dst: dmaTensor(dst),
		Stream: DMAStream{Cluster: dst.Cluster, Time: src.Slice, Packet: mapping.MustParse("K / 8, J % 16", p.Axes, nil)}})
	var v *Violation
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "DMA-R3", v.Rule.ID)
}

// TestDMATypes: a DMA moves bytes: one type, or one width with one side
// an integer type (the top-k's bf16 read as its bits, 002 L8547, L8589);
// two float types of one width, or two widths, are refused.
func TestDMATypes(t *testing.T) {
	for _, tc := range []struct {
		src, dst dtype.DType
		ok       bool
	}{
		{dtype.BF16, dtype.BF16, true},
		{dtype.BF16, dtype.I16, true},
		{dtype.I16, dtype.BF16, true},
		{dtype.F32, dtype.I32, true},
		{dtype.BF16, dtype.F16, false},
		{dtype.BF16, dtype.I32, false},
		{dtype.I8, dtype.I16, false},
	} {
		err := dmaTypes(&kernel.Tensor{Name: "a", DType: tc.src}, &kernel.Tensor{Name: "b", DType: tc.dst})
		if tc.ok {
			assert.NoError(t, err, "%s -> %s", tc.src, tc.dst)
		} else {
			assert.ErrorContains(t, err, "a DMA moves bytes", "%s -> %s", tc.src, tc.dst)
		}
	}
}
