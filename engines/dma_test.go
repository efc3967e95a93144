package engines

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
	"tcpmap/model/mapping"
)

// dmaCase describes a DMA request in the manual's notation.
type dmaCase struct {
	axes, dtype        string
	srcMedia, dstMedia kernel.MediaKind
	src, dst           [4]string // chip, cluster, slice, element ("" = none)
	srcAddr, dstAddr   int
	srcBase, dstBase   [3]int // chip, cluster, slice
	stream             [5]string
}

func (c dmaCase) request(t testing.TB) (DMARequest, error) {
	ax, err := mapping.ParseAxes(c.axes)
	if err != nil {
		return DMARequest{}, err
	}
	dt := dtype.I8
	if c.dtype != "" {
		if dt, err = dtype.Parse(c.dtype); err != nil {
			return DMARequest{}, err
		}
	}
	parse := func(s string) (*mapping.Expr, error) {
		if s == "" {
			return nil, nil
		}
		return mapping.Parse(s, ax, nil)
	}
	var ps [13]*mapping.Expr
	srcs := append(append(c.src[:0:0], c.src[:]...), c.dst[:]...)
	srcs = append(srcs, c.stream[:]...)
	for i, s := range srcs {
		if ps[i], err = parse(s); err != nil {
			return DMARequest{}, fmt.Errorf("%q: %w", s, err)
		}
	}
	return DMARequest{Axes: ax, DType: dt,
		Src: DMATensor{Media: c.srcMedia, Chip: ps[0], Cluster: ps[1], Slice: ps[2], Element: ps[3], Addr: c.srcAddr,
			BaseChip: c.srcBase[0], BaseCluster: c.srcBase[1], BaseSlice: c.srcBase[2]},
		Dst: DMATensor{Media: c.dstMedia, Chip: ps[4], Cluster: ps[5], Slice: ps[6], Element: ps[7], Addr: c.dstAddr,
			BaseChip: c.dstBase[0], BaseCluster: c.dstBase[1], BaseSlice: c.dstBase[2]},
		Stream: DMAStream{Chip: ps[8], Cluster: ps[9], Slice: ps[10], Time: ps[11], Packet: ps[12]},
	}, nil
}

const (
	dmaSliceStride = 4 << 20             // slice_stride, 002 L2541
	dmaDMNStride   = 32 * dmaSliceStride // DMN_stride: 32 slices (docs/spec-decisions.md)
)

// dmaSideWant is one side of an expected descriptor: entries as the manual
// prints them (size:stride, outermost first), stride0 and base.
type dmaSideWant struct {
	sizes   []int
	strides []int
	base    int
	stride0 int
}

func checkDMASides(t *testing.T, d kernel.DMADescriptor, read, write dmaSideWant) {
	t.Helper()
	var sz, rs, ws []int
	for _, e := range d.Entries {
		sz = append(sz, e.Size)
		rs = append(rs, e.SrcStride)
		ws = append(ws, e.DstStride)
	}
	assert.Equal(t, read.sizes, sz, "read sizes")
	assert.Equal(t, write.sizes, sz, "write sizes")
	assert.Equal(t, read.strides, rs, "read strides")
	assert.Equal(t, write.strides, ws, "write strides")
	assert.Equal(t, read.base, d.SrcBase, "read base")
	assert.Equal(t, write.base, d.DstBase, "write base")
	assert.Equal(t, read.stride0, d.Stride0, "stride0")
}

func deriveDMAT(t *testing.T, c dmaCase) *kernel.DMACommand {
	t.Helper()
	req, err := c.request(t)
	require.NoError(t, err)
	cmd, err := DeriveDMA(Default(), req)
	require.NoError(t, err)
	return cmd
}

// TestDMAManualExamples reproduces the DMA configurations the manual states.
func TestDMAManualExamples(t *testing.T) {
	t.Run("MOV-EX-33 NCHW to NHWC is rejected into DM (002 L2392-2402)", func(t *testing.T) {
		// No configuration is stated; every per-element DM write is a 1-byte
		// packet, which the 8-byte DM packet alignment forbids (decision
		// "DMA Example MOV-EX-33"). The same move into HBM is legal.
		c := dmaCase{axes: "N=4,C=3,H=8,W=8", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[N, C, H, W]"}, dst: [4]string{"", "", "", "[N, H, W, C]"},
			stream: [5]string{"", "", "", "[N, H, W]", "C"}}
		req, err := c.request(t)
		require.NoError(t, err)
		_, err = DeriveDMA(Default(), req)
		dmaViolationOf(t, err, ruleDMAAlign)
		c.dstMedia = kernel.MediaHBM
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 1)
		assert.Equal(t, 1, cmd.Descriptors[0].Stride0)
		checkDMAOracle(t, c, cmd)
	})
	t.Run("MOV-EX-34 HBM to HBM (002 L2431-2464)", func(t *testing.T) {
		// The stated configs have typos (DMA-A2); the pseudo-code's loops and
		// indices (002 L2445-2459) are reproduced: read h*8 + c*64 + n*192,
		// write h*96 + c*32 + n*8, packet 8.
		c := dmaCase{axes: "N=4,C=3,H=8,W=8", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
			src: [4]string{"", "", "", "[N, C, H, W]"}, dst: [4]string{"", "", "", "[H, C, N, W]"},
			srcAddr: 1024, dstAddr: 2048, stream: [5]string{"", "", "", "[H, C, N]", "W"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 1)
		d := cmd.Descriptors[0]
		checkDMASides(t, d,
			dmaSideWant{[]int{8, 3, 4, 8}, []int{8, 64, 192, 1}, 1024, 8},
			dmaSideWant{[]int{8, 3, 4, 8}, []int{96, 32, 8, 1}, 2048, 8})
		assert.Equal(t, 8*3*4, d.Packets) // loops h, c, n; w_packet 0..1
		checkDMAOracle(t, c, cmd)
	})
	t.Run("MOV-EX-37/38/39 A*B*C to B*A*C (002 L2555-2588)", func(t *testing.T) {
		c := dmaCase{axes: "A=256,B=256,C=256", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
			src: [4]string{"", "", "", "[A, B, C]"}, dst: [4]string{"", "", "", "[B, A, C]"},
			dstAddr: 256 * 256 * 256, stream: [5]string{"", "", "", "[A, B]", "C"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 1)
		d := cmd.Descriptors[0]
		checkDMASides(t, d,
			dmaSideWant{[]int{256, 256, 256}, []int{65536, 256, 1}, 0, 256},
			dmaSideWant{[]int{256, 256, 256}, []int{256, 65536, 1}, 256 * 256 * 256, 256})
		assert.Equal(t, kernel.DmnIndex{}, d.Dmn) // DmnIndex = (0, 0, 0), 002 L2582
		// The complete descriptor (002 L2580-2582).
		assert.Equal(t, "DMN(0, 0, 0) #0: [A=256:(65536, 256), B=256:(256, 65536), C=256:(1, 1)], base=(0, 16777216), stride0=256, HBM(0) -> HBM(0)", d.String())
		assert.Equal(t, kernel.MediaHBM, d.Src.Kind)
		assert.Equal(t, kernel.MediaHBM, d.Dst.Kind)
		// 256 × 256 data cycles: one 256-byte packet per cycle (002 L2579, L2584).
		assert.Equal(t, 256*256, d.Packets)
		// The address table (002 L2570-2576): i = a·256² + b·256 + c reads i
		// and writes 256·a + 256²·b + c + write_base.
		ax, err := mapping.ParseAxes(c.axes)
		require.NoError(t, err)
		e2 := mapping.MustParse("[B, A, C]", ax, nil)
		for _, i := range []int{0, 1, 255, 256, 3*65536 + 7*256 + 9} {
			r, w := dmaDescAddr(d, i)
			a, b, cc := i/65536, i/256%256, i%256
			assert.Equal(t, i, r, "read %d", i)
			assert.Equal(t, 256*a+65536*b+cc+256*256*256, w, "write %d", i)
			// MOV-EX-37 (002 L2555-2562): e_2 position j holds
			// {A: (j % 65536) / 256, B: j / 65536, C: j % 256}.
			j := w - 256*256*256
			want := mapping.IndexOf(mapping.Coord{Axis: "A", Value: j % 65536 / 256},
				mapping.Coord{Axis: "B", Value: j / 65536}, mapping.Coord{Axis: "C", Value: j % 256})
			got := e2.Map(j)
			assert.True(t, got.Index.Equal(want), "e_2 position %d holds %s, want %s", j, got, want)
			assert.True(t, want.Equal(mapping.IndexOf(mapping.Coord{Axis: "A", Value: a}, mapping.Coord{Axis: "B", Value: b}, mapping.Coord{Axis: "C", Value: cc})))
		}
	})
	t.Run("MOV-EX-40 Example 1 HBM to HBM (002 L2608-2636)", func(t *testing.T) {
		c := dmaCase{axes: "A=8,B=8,C=256", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
			src: [4]string{"", "", "", "[A, B, C]"}, dst: [4]string{"", "", "", "[B, A, C]"},
			dstAddr: 16384, stream: [5]string{"", "", "", "[A, B]", "C"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 1)
		d := cmd.Descriptors[0]
		checkDMASides(t, d,
			dmaSideWant{[]int{8, 8, 256}, []int{2048, 256, 1}, 0, 256},
			dmaSideWant{[]int{8, 8, 256}, []int{256, 2048, 1}, 16384, 256})
		assert.Equal(t, "[A=8:2048, B=8:256, C=256:1]:256 HBM@0", cmd.Side(d, true))
		assert.Equal(t, "[A=8:256, B=8:2048, C=256:1]:256 HBM@16384", cmd.Side(d, false))
		assert.Equal(t, 64, d.Requests) // "64 read requests + 64 write requests" (002 L2623)
		// Address table (002 L2624-2635): i=256 reads 256, writes 2048 + base.
		r, w := dmaDescAddr(d, 256)
		assert.Equal(t, 256, r)
		assert.Equal(t, 2048+16384, w)
		checkDMAOracle(t, c, cmd)
	})
	t.Run("MOV-EX-41 Example 2 HBM to DM (002 L2637-2658)", func(t *testing.T) {
		c := dmaCase{axes: "A=256,B=256,C=256", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[B, A, C]"}, dst: [4]string{"", "", "A / 4", "[A % 4, B, C]"},
			stream: [5]string{"", "", "", "[B, A % 4, A / 4 % 32, A / 128]", "C"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 1)
		d := cmd.Descriptors[0]
		checkDMASides(t, d,
			dmaSideWant{[]int{256, 4, 32, 2, 256}, []int{65536, 256, 1024, 32768, 1}, 0, 256},
			dmaSideWant{[]int{256, 4, 32, 2, 256}, []int{256, 65536, dmaSliceStride, dmaDMNStride, 1}, 0, 256})
		assert.Equal(t, "[B=256:256, A % 4=4:65536, A / 4 % 32=32:slice_stride, A / 128=2:DMN_stride, C=256:1]:256 DM@(0, 0, 0)", cmd.Side(d, false))
		assert.Equal(t, 65536, d.Requests) // 256 * 4 * 32 * 2 (002 L2647)
	})
	t.Run("MOV-EX-42 Example 3 DM to DM (002 L2659-2681)", func(t *testing.T) {
		// The read stride of B is 256, not the stated 1 (DMA-A6).
		c := dmaCase{axes: "A=256,B=256,C=256", srcMedia: kernel.MediaDM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "A / 4", "[A % 4, B, C]"}, dst: [4]string{"", "", "A / 4", "[B, A % 4, C]"},
			dstAddr: 4 * 256 * 256, stream: [5]string{"", "", "", "[B, A % 4, A / 4 % 32, A / 128]", "C"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 1)
		d := cmd.Descriptors[0]
		checkDMASides(t, d,
			dmaSideWant{[]int{256, 4, 32, 2, 256}, []int{256, 65536, dmaSliceStride, dmaDMNStride, 1}, 0, 256},
			dmaSideWant{[]int{256, 4, 32, 2, 256}, []int{1024, 256, dmaSliceStride, dmaDMNStride, 1}, 4 * 256 * 256, 256})
		assert.Equal(t, 65536, d.Requests) // 002 L2672-2673
	})
	t.Run("MOV-EX-43 Example 4 bank conflict (002 L2682-2716)", func(t *testing.T) {
		// Source and destination reconstructed (DMA-A7): HBM m![A, B, C] to
		// the DM layout stated as In.
		c := dmaCase{axes: "A=64,B=2048,C=1024", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[A, B, C]"}, dst: [4]string{"", "B / 1024", "[B / 256 % 4, A]", "[B % 256, C]"},
			stream: [5]string{"", "B / 1024", "B / 256 % 4", "[B % 256, C / 256, A % 32, A / 32]", "C % 256"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 8) // "1 chip (8 DMNs)" (002 L2685)
		assert.True(t, cmd.Homogeneous)
		for _, d := range cmd.Descriptors {
			i, j := d.Dmn.Cluster, d.Dmn.DMN
			checkDMASides(t, d,
				dmaSideWant{[]int{256, 4, 32, 2, 256}, []int{1024, 256, 1 << 21, 1 << 26, 1}, i*1024*1024 + j*256*1024, 256},
				dmaSideWant{[]int{256, 4, 32, 2, 256}, []int{1024, 256, dmaSliceStride, dmaDMNStride, 1}, j * 64 * dmaSliceStride, 256})
			assert.Equal(t, i, d.Dst.Dmn.Cluster)
			assert.Equal(t, 65536, d.Requests) // per DMN (002 L2706)
		}
	})
	t.Run("MOV-EX-44 Example 5 stack interleaving (002 L2717-2751)", func(t *testing.T) {
		// The read side is HBM although labelled DM (DMA-A8).
		c := dmaCase{axes: "A=8,B=64,C=8,D=512", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[A, B, C, D]"}, dst: [4]string{"", "A / 4", "[A % 4, B]", "[C, D % 256]"},
			stream: [5]string{"", "A / 4", "A % 4", "[C, B % 32, B / 32]", "D % 256"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 8)
		assert.True(t, cmd.Homogeneous)
		for _, d := range cmd.Descriptors {
			i, j := d.Dmn.Cluster, d.Dmn.DMN
			checkDMASides(t, d,
				dmaSideWant{[]int{8, 32, 2, 256}, []int{512, 4096, 131072, 1}, i<<20 + j<<18, 256},
				dmaSideWant{[]int{8, 32, 2, 256}, []int{256, dmaSliceStride, dmaDMNStride, 1}, j * 64 * dmaSliceStride, 256})
			assert.Equal(t, 512, d.Requests) // 8 * 32 * 2 per DMN (002 L2741)
		}
	})
	t.Run("MOV-EX-45 Example 6 segmentation (002 L2752-2808)", func(t *testing.T) {
		// A' = A + 1# is A # 16. HBM bases are per chip (decision DMA-A9).
		c := dmaEx6()
		cmd := deriveDMAT(t, c)
		assert.False(t, cmd.Homogeneous)
		require.Len(t, cmd.Descriptors, 4*2*5) // 4 chips × 2 clusters × (3 + 2)
		row := 15 * 32 * 256
		for _, d := range cmd.Descriptors {
			j, k := d.Dmn.Cluster, d.Dmn.DMN
			assert.Equal(t, d.Dmn.Chip, d.Dst.Dmn.Chip)
			hb := j*row + k*4*256
			switch {
			case k < 3:
				checkDMASides(t, d,
					dmaSideWant{[]int{2, 32, 2, 256}, []int{256, dmaSliceStride, dmaDMNStride, 1}, k * 64 * dmaSliceStride, 256},
					dmaSideWant{[]int{2, 32, 2, 256}, []int{256, 15 * 256, 512, 1}, hb, 256})
				assert.Equal(t, 2*32*2, d.Packets) // "2 * 32 * 2 packets" (002 L2799)
			case d.Exec == 0:
				checkDMASides(t, d,
					dmaSideWant{[]int{2, 32, 1, 256}, []int{256, dmaSliceStride, dmaDMNStride, 1}, 3 * 64 * dmaSliceStride, 256},
					dmaSideWant{[]int{2, 32, 1, 256}, []int{256, 15 * 256, 512, 1}, hb, 256})
				assert.Equal(t, 64, d.Packets) // 002 L2805
			default:
				// Exec #1: A'%2=1 on both sides, read base + DMN_stride (DMA-A9).
				checkDMASides(t, d,
					dmaSideWant{[]int{1, 32, 1, 256}, []int{256, dmaSliceStride, dmaDMNStride, 1}, 3*64*dmaSliceStride + dmaDMNStride, 256},
					dmaSideWant{[]int{1, 32, 1, 256}, []int{256, 15 * 256, 512, 1}, hb + 512, 256})
				assert.Equal(t, 32, d.Packets) // 002 L2806
			}
		}
	})
	t.Run("MOV-EX-36 heterogeneous mapping strides (002 L2532-2541)", func(t *testing.T) {
		// The C=32 read stride is 256, not 32 * 256 (DMA-A5).
		c := dmaCase{axes: "A=4,B=256,C=256,D=256", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"A", "", "", "[B, C, D]"}, dst: [4]string{"A", "B / 128", "C", "[B % 128, D]"},
			stream: [5]string{"A", "B / 128", "C / 64", "[C % 32, B % 128, C / 32 % 2]", "D"}}
		cmd := deriveDMAT(t, c)
		require.Len(t, cmd.Descriptors, 4*2*4)
		for _, d := range cmd.Descriptors {
			i, j, k := d.Dmn.Chip, d.Dmn.Cluster, d.Dmn.DMN
			checkDMASides(t, d,
				dmaSideWant{[]int{32, 128, 2, 256}, []int{256, 256 * 256, 32 * 256, 1}, j*128*65536 + k*64*256, 256},
				dmaSideWant{[]int{32, 128, 2, 256}, []int{dmaSliceStride, 256, 32 * dmaSliceStride, 1}, k * 64 * dmaSliceStride, 256})
			assert.Equal(t, i, d.Src.Dmn.Chip)
			assert.Equal(t, i, d.Dst.Dmn.Chip)
			assert.Equal(t, j, d.Dst.Dmn.Cluster)
		}
	})
}

func dmaEx6() dmaCase {
	// A' = A + 1# (002 L2762) is declared as the axis A = 16, of which the
	// destination holds A = 15 (docs/spec-decisions.md "DMA Example 6").
	return dmaCase{axes: "A=16,B=32,C=256,D=8", srcMedia: kernel.MediaDM, dstMedia: kernel.MediaHBM,
		src:    [4]string{"D / 2", "D % 2", "[A / 4, A / 2 % 2, B]", "[A % 2, C]"},
		dst:    [4]string{"D / 2", "", "", "[D % 2, B, A = 15, C]"},
		stream: [5]string{"D / 2", "D % 2", "A / 4", "[A % 2, B, A / 2 % 2]", "C"}}
}

// dmaDescAddr returns the read and write byte address of element position i
// of a descriptor (the nested loops of 002 L2567-2579, innermost fastest).
func dmaDescAddr(d kernel.DMADescriptor, i int) (int, int) {
	r, w := d.SrcBase, d.DstBase
	for k := len(d.Entries) - 1; k >= 0; k-- {
		e := d.Entries[k]
		r += i % e.Size * e.SrcStride
		w += i % e.Size * e.DstStride
		i /= e.Size
	}
	return r, w
}

// TestDMAPacketSplitting: MOV-EX-35 (002 L2469-2472).
func TestDMAPacketSplitting(t *testing.T) {
	for _, tc := range []struct {
		x, stride0, requests int
	}{
		{4095, 4095, 16}, // "packet size 4095 results in 16 DMA requests"
		{4099, 1, 4099},  // "since 4099 is prime ... 1 byte at a time"
		{4096, 4096, 16},
		{8192, 4096, 32},
	} {
		t.Run(fmt.Sprint(tc.x), func(t *testing.T) {
			c := dmaCase{axes: fmt.Sprintf("X=%d", tc.x), srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
				src: [4]string{"", "", "", "X"}, dst: [4]string{"", "", "", "X"}, dstAddr: 1 << 20,
				stream: [5]string{"", "", "", "", "X"}}
			cmd := deriveDMAT(t, c)
			require.Len(t, cmd.Descriptors, 1)
			d := cmd.Descriptors[0]
			assert.Equal(t, tc.stride0, d.Stride0)
			assert.Equal(t, (tc.stride0+255)/256, d.RequestsPerPacket)
			assert.Equal(t, tc.requests, d.Requests)
		})
	}
}

func dmaViolationOf(t *testing.T, err error, r *Rule) {
	t.Helper()
	require.Error(t, err)
	var v *Violation
	require.True(t, errors.As(err, &v), "not a violation: %v", err)
	assert.Equal(t, r.ID, v.Rule.ID, "%v", err)
}

// TestDMARules checks each rule's violation.
func TestDMARules(t *testing.T) {
	base := func() dmaCase {
		return dmaCase{axes: "A=8,B=64", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[A, B]"}, dst: [4]string{"", "", "", "[A, B]"},
			stream: [5]string{"", "", "", "A", "B"}}
	}
	run := func(c dmaCase) error {
		req, err := c.request(t)
		require.NoError(t, err)
		_, err = DeriveDMA(Default(), req)
		return err
	}
	t.Run("legal", func(t *testing.T) { require.NoError(t, run(base())) })
	t.Run("DMA-R1 HBM to DM transposed element (reference-notes G6)", func(t *testing.T) {
		// "Transposes the element axes in a to_dm, which the DMA cannot do":
		// a 1-byte run cannot meet the 8-byte DM packet alignment.
		c := dmaCase{axes: "A=8,B=64", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[A, B]"}, dst: [4]string{"", "", "B / 4", "[B % 4, A]"},
			stream: [5]string{"", "", "", "[B, A]", "1"}}
		c.stream[4] = ""
		c.stream[3] = "B"
		c.stream[4] = "A"
		dmaViolationOf(t, run(c), ruleDMAAlign)
	})
	t.Run("DMA-R1 HBM to DM read address 8 B (002 L2427)", func(t *testing.T) {
		c := base()
		c.srcAddr = 4
		dmaViolationOf(t, run(c), ruleDMAAlign)
	})
	t.Run("DMA-R1 DM write address 8 B (002 L2426)", func(t *testing.T) {
		c := base()
		c.srcMedia = kernel.MediaDM
		c.dstAddr = 4
		dmaViolationOf(t, run(c), ruleDMAAlign)
		c.dstAddr = 0
		c.srcAddr = 4 // DM read address: 1 B
		require.NoError(t, run(c))
	})
	t.Run("DMA-R1 HBM to HBM is byte aligned (002 L2426)", func(t *testing.T) {
		c := base()
		c.dstMedia = kernel.MediaHBM
		c.srcAddr, c.dstAddr = 3, 5
		require.NoError(t, run(c))
	})
	t.Run("DMA-R1 DM to DM packet 8 B (002 L2426)", func(t *testing.T) {
		c := dmaCase{axes: "A=8,B=4", srcMedia: kernel.MediaDM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[A, B]"}, dst: [4]string{"", "", "", "[A, B]"},
			stream: [5]string{"", "", "", "A", "B"}}
		c.dst[3] = "[A, B # 8]"
		dmaViolationOf(t, run(c), ruleDMAAlign)
	})
	t.Run("DMA-R3 HBM tensor with a slice part (002 L2417)", func(t *testing.T) {
		c := base()
		c.src = [4]string{"", "", "A", "B"}
		dmaViolationOf(t, run(c), ruleDMAForm)
	})
	t.Run("DMA-R3 time crossing clusters (002 L2487-2491)", func(t *testing.T) {
		c := base()
		c.dst = [4]string{"", "A / 4", "", "[A % 4, B]"}
		dmaViolationOf(t, run(c), ruleDMAForm)
	})
	t.Run("DMA-R3 more DMNs than the grammar names (002 L2518)", func(t *testing.T) {
		c := dmaCase{axes: "A=16,B=64", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[A, B]"}, dst: [4]string{"", "", "A", "B"},
			stream: [5]string{"", "", "A", "", "B"}}
		dmaViolationOf(t, run(c), ruleDMAForm)
	})
	t.Run("DMA-R5 source holds fewer coordinates than the destination (002 L2478, L2550)", func(t *testing.T) {
		c := base()
		c.src[3] = "[A = 4, B]"
		dmaViolationOf(t, run(c), ruleDMATensor)
	})
	t.Run("broadcast read of an axis the source lacks (spec decision)", func(t *testing.T) {
		// docs/spec-decisions.md "DMA: broadcast reads": the GEMV's vector
		// is moved to every I slice (002 L439-442).
		c := base()
		c.src[3] = "B"
		require.NoError(t, run(c))
		checkDMAOracle(t, c, deriveDMAT(t, c))
		// A stream axis neither side holds would write one address many
		// times: still illegal.
		c = base()
		c.stream = [5]string{"", "", "", "[A, 4]", "B"}
		dmaViolationOf(t, run(c), ruleDMAWrite)
	})
	t.Run("DMA-R6 broadcast write (002 L7775)", func(t *testing.T) {
		c := base()
		c.axes = "A=8,B=64,E=2"
		c.src[3] = "[E, A, B]"
		c.stream = [5]string{"", "", "", "[E, A]", "B"}
		dmaViolationOf(t, run(c), ruleDMAWrite)
	})
	t.Run("DMA-R6 partial write", func(t *testing.T) {
		c := base()
		c.stream = [5]string{"", "", "", "A % 4", "B"}
		err := run(c)
		require.Error(t, err)
		var v *Violation
		require.True(t, errors.As(err, &v), "%v", err)
	})
	t.Run("DMA-R8 SPM same chip (002 L2825)", func(t *testing.T) {
		c := dmaCase{axes: "A=2,B=64", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaSPM,
			src: [4]string{"A", "", "", "B"}, dst: [4]string{"", "", "", "B"}, dstBase: [3]int{1, 0, 0},
			stream: [5]string{"A", "", "", "", "B"}}
		c.dst[0] = "A"
		dmaViolationOf(t, run(c), ruleDMASPM)
	})
	t.Run("SEQ-R1 entry limit of one side (002 L2423, L1630)", func(t *testing.T) {
		c := dmaCase{axes: "A=2,B=2,C=2,D=2,E=2,F=2,G=2,H=2,I=2,J=8", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
			src: [4]string{"", "", "", "[A, B, C, D, E, F, G, H, I, J]"}, dst: [4]string{"", "", "", "[I, H, G, F, E, D, C, B, A, J]"},
			stream: [5]string{"", "", "", "[A, B, C, D, E, F, G, H, I]", "J"}}
		dmaViolationOf(t, run(c), ruleSeqEntries)
	})
	t.Run("DMA-R9 entry limit of the paired loops (002 L2423, L2545)", func(t *testing.T) {
		// Each side has 8 entries; their common refinement has 12.
		c := dmaCase{axes: "A=64,B=64,C=64,D=64", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
			src:    [4]string{"", "", "", "[A / 8, B / 8, C / 8, D / 8, A % 8, B % 8, C % 8, D % 8]"},
			dst:    [4]string{"", "", "", "[A / 4, B / 4, C / 4, D / 4, A % 4, B % 4, C % 4, D % 4]"},
			stream: [5]string{"", "", "", "[A, B, C]", "D"}}
		dmaViolationOf(t, run(c), ruleDMASeq)
	})
	t.Run("DMA-R10 DM element beyond 512 KB (002 L2874)", func(t *testing.T) {
		c := base()
		c.dstAddr = 512*1024 - 256
		dmaViolationOf(t, run(c), ruleDMACapacity)
	})
	t.Run("DMA-R11 odd i4 run", func(t *testing.T) {
		c := dmaCase{axes: "A=8,B=3", dtype: "i4", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
			src: [4]string{"", "", "", "[A, B]"}, dst: [4]string{"", "", "", "[B, A]"},
			stream: [5]string{"", "", "", "A", "B"}}
		dmaViolationOf(t, run(c), ruleDMAWholeBytes)
	})
}

// TestCheckDMACommand applies the descriptor rules to hand-written commands.
func TestCheckDMACommand(t *testing.T) {
	spec := Default()
	good := func() *kernel.DMACommand {
		return &kernel.DMACommand{Descriptors: []kernel.DMADescriptor{{
			Src: kernel.DMAMedia{Kind: kernel.MediaHBM}, Dst: kernel.DMAMedia{Kind: kernel.MediaHBM},
			Entries: []kernel.DMAEntry{{Size: 256, SrcStride: 65536, DstStride: 256}, {Size: 256, SrcStride: 256, DstStride: 65536}, {Size: 256, SrcStride: 1, DstStride: 1}},
			DstBase: 256 * 256 * 256, Stride0: 256, ElemBits: 8, Bytes: 1 << 24,
		}}}
	}
	require.NoError(t, CheckDMACommand(spec, good()))
	c := good()
	c.Descriptors[0].Stride0 = 4097
	dmaViolationOf(t, CheckDMACommand(spec, c), ruleDMAPacket)
	c = good()
	c.Descriptors = append(c.Descriptors, c.Descriptors[0])
	c.Descriptors[1].Dst.Kind = kernel.MediaDM
	dmaViolationOf(t, CheckDMACommand(spec, c), ruleDMAMedia)
	c = good()
	c.Descriptors[0].Dmn.DMN = 8
	dmaViolationOf(t, CheckDMACommand(spec, c), ruleDMAForm)
	c = good()
	c.Descriptors[0].Dst.Kind = kernel.MediaDM
	c.Descriptors[0].DstBase = 12
	dmaViolationOf(t, CheckDMACommand(spec, c), ruleDMAAlign)
	assert.Error(t, CheckDMACommand(nil, c))
}

// TestDMAOracleProperty derives random small DMAs and checks each against
// the oracle.
func TestDMAOracleProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	perms := [][]string{{"A", "B", "C"}, {"B", "A", "C"}, {"C", "B", "A"}, {"A", "C", "B"}}
	media := []kernel.MediaKind{kernel.MediaHBM, kernel.MediaDM}
	ok := 0
	for n := 0; n < 300; n++ {
		a, b, c := 1+rng.Intn(6), 1+rng.Intn(5), []int{1, 2, 8, 16}[rng.Intn(4)]
		sp, dp := perms[rng.Intn(4)], perms[rng.Intn(4)]
		tp := perms[rng.Intn(4)]
		cs := dmaCase{axes: fmt.Sprintf("A=%d,B=%d,C=%d", a, b, c),
			srcMedia: media[rng.Intn(2)], dstMedia: media[rng.Intn(2)],
			src:     [4]string{"", "", "", "[" + strings.Join(sp, ", ") + "]"},
			dst:     [4]string{"", "", "", "[" + strings.Join(dp, ", ") + "]"},
			srcAddr: 8 * rng.Intn(4), dstAddr: 8 * rng.Intn(4),
			stream: [5]string{"", "", "", "[" + tp[0] + ", " + tp[1] + "]", tp[2]}}
		if rng.Intn(3) == 0 && cs.dstMedia == kernel.MediaDM {
			cs.dst = [4]string{"", "", dp[0], "[" + dp[1] + ", " + dp[2] + "]"}
			cs.stream[2] = dp[0]
			rest := []string{}
			for _, x := range tp {
				if x != dp[0] {
					rest = append(rest, x)
				}
			}
			cs.stream[3], cs.stream[4] = rest[0], rest[1]
		}
		req, err := cs.request(t)
		require.NoError(t, err)
		cmd, err := DeriveDMA(Default(), req)
		if err != nil {
			var v *Violation
			require.True(t, errors.As(err, &v), "%+v: non-violation error %v", cs, err)
			continue
		}
		ok++
		checkDMAOracle(t, cs, cmd)
	}
	assert.Greater(t, ok, 50)
}

func TestDMAOracleEx6Scaled(t *testing.T) {
	c := dmaEx6Scaled()
	cmd := deriveDMAT(t, c)
	assert.Len(t, cmd.Descriptors, 2*2*3)
	checkDMAOracle(t, c, cmd)
}

// dmaEx6Scaled is Example 6's structure (002 L2752-2808) on fewer chips and
// bytes: A = 7 of 8 over 2 DMNs of 4.
func dmaEx6Scaled() dmaCase {
	return dmaCase{axes: "A=8,B=4,C=8,D=4", srcMedia: kernel.MediaDM, dstMedia: kernel.MediaHBM,
		src:    [4]string{"D / 2", "D % 2", "[A / 4, A / 2 % 2, B]", "[A % 2, C]"},
		dst:    [4]string{"D / 2", "", "", "[D % 2, B, A = 7, C]"},
		stream: [5]string{"D / 2", "D % 2", "A / 4", "[A % 2, B, A / 2 % 2]", "C"}}
}

// dmaMemKey is one byte of device memory.
type dmaMemKey struct {
	kind          kernel.MediaKind
	chip, cluster int
	addr          int
}

// dmaLayoutBytes enumerates a tensor's bytes: address → "index#byte", with an
// address computation independent of the derivation (positions decoded by
// the plain part sizes, 002 L2541 for the DM slice window).
//
// With keep set, the labels name only the coordinates of the axes in keep:
// a destination's labels projected onto the axes the source holds, since a
// DMA broadcasts the axes its source lacks (docs/spec-decisions.md "DMA:
// broadcast reads").
func dmaLayoutBytes(t *testing.T, req DMARequest, s DMATensor, eb int, keep map[string]bool) (map[dmaMemKey]string, map[dmaMemKey]bool) {
	t.Helper()
	one := mapping.Identity()
	part := func(e *mapping.Expr) *mapping.Expr {
		if e == nil {
			return one
		}
		return e
	}
	ch, cl, sl, el := part(s.Chip), part(s.Cluster), part(s.Slice), part(s.Element)
	full := mapping.Pair(ch, cl, sl, el)
	require.NoError(t, full.Err())
	live := map[dmaMemKey]string{}
	all := map[dmaMemKey]bool{}
	for p := 0; p < full.Size(); p++ {
		e := p % el.Size()
		r := p / el.Size()
		si := r % sl.Size()
		r /= sl.Size()
		ci := r % cl.Size()
		chip := r / cl.Size()
		k := dmaMemKey{kind: s.Media, chip: s.BaseChip + chip, addr: s.Addr + e*eb}
		if s.Media == kernel.MediaDM {
			k.cluster = s.BaseCluster + ci
			k.addr += (s.BaseSlice + si) * dmaSliceStride
		}
		cell := full.Map(p)
		for b := 0; b < eb; b++ {
			kb := k
			kb.addr += b
			all[kb] = true
			if cell.Kind == mapping.Live {
				idx := cell.Index
				if keep != nil {
					var cs []mapping.Coord
					for _, c := range idx.Coords() {
						if keep[c.Axis] {
							cs = append(cs, c)
						}
					}
					idx = mapping.IndexOf(cs...)
				}
				live[kb] = fmt.Sprintf("%s#%d", idx, b)
			}
		}
	}
	return live, all
}

// checkDMAOracle runs the command on simulated memory: every packet copies
// stride0 bytes from its read address to its write address (002
// L2567-2579); then every live destination byte must hold the source byte of
// the same tensor index, written once, and nothing outside the destination
// may be written.
func checkDMAOracle(t *testing.T, c dmaCase, cmd *kernel.DMACommand) {
	t.Helper()
	require.NoError(t, dmaOracle(t, c, cmd))
}

func dmaOracle(t *testing.T, c dmaCase, cmd *kernel.DMACommand) error {
	t.Helper()
	req, err := c.request(t)
	require.NoError(t, err)
	bits := req.DType.Bits()
	require.Zero(t, bits%8)
	eb := bits / 8
	src, _ := dmaLayoutBytes(t, req, req.Src, eb, nil)
	held := map[string]bool{}
	for _, e := range []*mapping.Expr{req.Src.Chip, req.Src.Cluster, req.Src.Slice, req.Src.Element} {
		if e != nil {
			for _, a := range e.Symbols() {
				held[a] = true
			}
		}
	}
	want, dstAll := dmaLayoutBytes(t, req, req.Dst, eb, held)
	got := map[dmaMemKey]string{}
	writes := map[dmaMemKey]int{}
	key := func(m kernel.DMAMedia, addr int) dmaMemKey {
		k := dmaMemKey{kind: m.Kind, chip: m.Dmn.Chip, addr: addr}
		if m.Kind == kernel.MediaDM {
			k.cluster = m.Dmn.Cluster
		}
		return k
	}
	for _, d := range cmd.Descriptors {
		require.Zero(t, d.Bytes%d.Stride0)
		for q := 0; q < d.Packets; q++ {
			o := q * d.Stride0
			r, w := dmaDescAddr(d, o/eb)
			r += o % eb
			w += o % eb
			for b := 0; b < d.Stride0; b++ {
				v, ok := src[key(d.Src, r+b)]
				if !ok {
					v = "garbage"
				}
				k := key(d.Dst, w+b)
				if !dstAll[k] {
					return fmt.Errorf("%s: write outside the destination at %+v", d, k)
				}
				got[k] = v
				writes[k]++
			}
		}
	}
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("destination byte %+v holds %q, want %q", k, got[k], v)
		}
		if writes[k] != 1 {
			return fmt.Errorf("destination byte %+v written %d times", k, writes[k])
		}
	}
	return nil
}

// TestDMAOracleFails: the oracle rejects a wrong stride, a wrong base and a
// missing segment.
func TestDMAOracleFails(t *testing.T) {
	c := dmaCase{axes: "A=8,B=8,C=16", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaHBM,
		src: [4]string{"", "", "", "[A, B, C]"}, dst: [4]string{"", "", "", "[B, A, C]"},
		dstAddr: 4096, stream: [5]string{"", "", "", "[A, B]", "C"}}
	cmd := deriveDMAT(t, c)
	require.NoError(t, dmaOracle(t, c, cmd))
	cmd.Descriptors[0].Entries[0].DstStride += 16
	assert.Error(t, dmaOracle(t, c, cmd))
	cmd = deriveDMAT(t, c)
	cmd.Descriptors[0].SrcBase++
	assert.Error(t, dmaOracle(t, c, cmd))
	c6 := dmaEx6Scaled()
	cmd = deriveDMAT(t, c6)
	require.NoError(t, dmaOracle(t, c6, cmd))
	cmd.Descriptors = cmd.Descriptors[:len(cmd.Descriptors)-1]
	assert.Error(t, dmaOracle(t, c6, cmd))
}

// FuzzDeriveDMA: the derivation never panics, and what it derives passes
// the oracle.
func FuzzDeriveDMA(f *testing.F) {
	f.Add("A=4,B=8", "[A, B]", "", "[B, A]", "", "", "A", "B", uint8(0), uint8(1))
	f.Add("A=16,B=4,C=8", "[A % 2, C]", "[A / 2, B]", "[B, A = 15, C]", "", "A / 4", "[A % 4, B]", "C", uint8(1), uint8(0))
	f.Add("A=8,B=64", "[A, B]", "", "[B % 4, A]", "B / 4", "", "B", "A", uint8(0), uint8(1))
	f.Add("B=2", "[1]", "", "[B]", "", "", "B", "1", uint8(5), uint8(0)) // found: broadcast read
	f.Fuzz(func(t *testing.T, axes, se, ss, de, ds, sl, tm, pk string, sm, dm uint8) {
		ms := []kernel.MediaKind{kernel.MediaHBM, kernel.MediaDM, kernel.MediaSPM, "X"}
		c := dmaCase{axes: axes, srcMedia: ms[sm%4], dstMedia: ms[dm%4],
			src: [4]string{"", "", ss, se}, dst: [4]string{"", "", ds, de},
			stream: [5]string{"", "", sl, tm, pk}}
		req, err := c.request(t)
		if err != nil {
			return
		}
		for _, e := range []*mapping.Expr{req.Src.Element, req.Src.Slice, req.Dst.Element, req.Dst.Slice} {
			if e != nil && e.Size() > 1<<12 {
				return // keep each input fast (the oracle enumerates layouts)
			}
		}
		cmd, err := DeriveDMA(Default(), req)
		if err != nil || cmd == nil {
			return
		}
		_ = cmd.String()
		if c.srcMedia == kernel.MediaSPM || c.dstMedia == kernel.MediaSPM {
			return
		}
		total := 0
		for _, d := range cmd.Descriptors {
			total += d.Bytes
		}
		if total <= 1<<12 && req.DType.Bits()%8 == 0 {
			checkDMAOracle(t, c, cmd)
		}
	})
}

// TestDMASegmentationProperty: DM → HBM moves whose DMNs split an axis
// unevenly (Example 6's shape, 002 L2752-2808) are segmented so that the
// oracle holds, for every valid extent of the axis.
func TestDMASegmentationProperty(t *testing.T) {
	n := 0
	for _, pq := range [][2]int{{4, 2}, {8, 2}, {8, 4}, {16, 4}, {16, 8}} {
		p, q := pq[0], pq[1]
		for a := 1; a <= p; a++ {
			for b := 1; b <= 3; b += 2 {
				held := fmt.Sprintf("A = %d", a)
				if a == p {
					held = "A"
				}
				c := dmaCase{axes: fmt.Sprintf("A=%d,B=%d,C=8", p, b), srcMedia: kernel.MediaDM, dstMedia: kernel.MediaHBM,
					src:    [4]string{"", "", "[A / 2, B]", "[A % 2, C]"},
					dst:    [4]string{"", "", "", "[B, " + held + ", C]"},
					stream: [5]string{"", "", fmt.Sprintf("A / %d", q), fmt.Sprintf("[A %% %d, B]", q), "C"}}
				t.Run(fmt.Sprintf("P%d/q%d/a%d/b%d", p, q, a, b), func(t *testing.T) {
					if a < q {
						// One DMN's time term alone overruns the tensor: the
						// write sequencer has no address for it (SEQ-R5, or
						// stride 0 where the destination holds one A).
						req, err := c.request(t)
						require.NoError(t, err)
						_, err = DeriveDMA(Default(), req)
						var v *Violation
						require.True(t, errors.As(err, &v), "%v", err)
						return
					}
					cmd := deriveDMAT(t, c)
					checkDMAOracle(t, c, cmd)
					if a%q == 0 {
						assert.Len(t, cmd.Descriptors, a/q, "even split: one descriptor per DMN")
					}
				})
				n++
			}
		}
	}
	assert.Greater(t, n, 50)
}

// TestDMASubByte: a 4-bit run is one loop over its bytes (RN §5.1 G3:
// whole bytes).
func TestDMASubByte(t *testing.T) {
	c := dmaCase{axes: "A=4,B=16,C=2", dtype: "i4", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
		src: [4]string{"", "", "", "[C, A, B]"}, dst: [4]string{"", "", "C", "[A, B]"},
		stream: [5]string{"", "", "", "[C, A]", "B"}}
	cmd := deriveDMAT(t, c)
	require.Len(t, cmd.Descriptors, 1)
	d := cmd.Descriptors[0]
	// C steps 32 bytes on the read side, a slice on the write side; A and B
	// (64 contiguous i4 = 32 bytes) are one byte loop.
	require.Len(t, d.Entries, 2)
	assert.Equal(t, kernel.DMAEntry{Size: 2, SrcStride: 32, DstStride: dmaSliceStride, Term: "C"}, d.Entries[0])
	assert.Equal(t, 32, d.Entries[1].Size)
	assert.Equal(t, 32, d.Stride0)
	assert.Equal(t, 64, d.Bytes)
}

// TestDMAHeterogeneousStreamFn: each DMN may have its own Time and Packet
// (002 L2492-2504); descriptors differ per DMN and the move stays exact.
func TestDMAHeterogeneousStreamFn(t *testing.T) {
	c := dmaCase{axes: "A=8,B=4,C=8", srcMedia: kernel.MediaDM, dstMedia: kernel.MediaHBM,
		src:    [4]string{"", "", "[A / 2, B]", "[A % 2, C]"},
		dst:    [4]string{"", "", "", "[B, A = 7, C]"},
		stream: [5]string{"", "", "A / 4", "", ""}}
	req, err := c.request(t)
	require.NoError(t, err)
	ax := req.Axes
	req.StreamFn = func(d kernel.DmnIndex) (*mapping.Expr, *mapping.Expr) {
		if d.DMN == 0 {
			return mapping.MustParse("[A % 4, B]", ax, nil), mapping.MustParse("C", ax, nil)
		}
		return mapping.MustParse("[B, A % 4]", ax, nil), mapping.MustParse("C", ax, nil)
	}
	cmd, err := DeriveDMA(Default(), req)
	require.NoError(t, err)
	assert.False(t, cmd.Homogeneous)
	require.Len(t, cmd.Descriptors, 3) // DMN 1 holds A = 4..6: segmented in two
	assert.Equal(t, "A % 4", cmd.Descriptors[0].Entries[0].Term)
	assert.Equal(t, "B", cmd.Descriptors[1].Entries[0].Term)
	checkDMAOracle(t, c, cmd)

	// A DMN whose stream overlaps another's is caught.
	req.StreamFn = func(d kernel.DmnIndex) (*mapping.Expr, *mapping.Expr) {
		return mapping.MustParse("[A % 4, B]", ax, nil), mapping.MustParse("C", ax, nil)
	}
	req.Stream.Slice = mapping.MustParse("A / 4", ax, nil)
	_, err = DeriveDMA(Default(), req)
	require.NoError(t, err) // different DMN coordinates: no overlap
	req.Stream.Slice = mapping.MustParse("2", ax, nil)
	_, err = DeriveDMA(Default(), req)
	dmaViolationOf(t, err, ruleDMAWrite)
}

// TestDMADeterministic: the same request gives byte-identical output.
func TestDMADeterministic(t *testing.T) {
	c := dmaEx6Scaled()
	a := deriveDMAT(t, c).String()
	for i := 0; i < 5; i++ {
		assert.Equal(t, a, deriveDMAT(t, c).String())
	}
}

// BenchmarkDeriveDMA derives Example 2 (002 L2637-2658) and Example 6
// (002 L2752-2808).
func BenchmarkDeriveDMA(b *testing.B) {
	for _, c := range []struct {
		name string
		c    dmaCase
	}{
		{"Example2", dmaCase{axes: "A=256,B=256,C=256", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
			src: [4]string{"", "", "", "[B, A, C]"}, dst: [4]string{"", "", "A / 4", "[A % 4, B, C]"},
			stream: [5]string{"", "", "", "[B, A % 4, A / 4 % 32, A / 128]", "C"}}},
		{"Example6", dmaEx6()},
	} {
		b.Run(c.name, func(b *testing.B) {
			req, err := c.c.request(b)
			require.NoError(b, err)
			spec := Default()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := DeriveDMA(spec, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDMADistinctWrites: overlapping packets of two descriptors are caught.
func TestDMADistinctWrites(t *testing.T) {
	d := kernel.DMADescriptor{Src: kernel.DMAMedia{Kind: kernel.MediaHBM}, Dst: kernel.DMAMedia{Kind: kernel.MediaHBM},
		Entries: []kernel.DMAEntry{{Size: 4, SrcStride: 256, DstStride: 256}, {Size: 256, SrcStride: 1, DstStride: 1}},
		Stride0: 256, ElemBits: 8, Bytes: 1024, Packets: 4}
	e := d
	e.DstBase = 1024
	require.NoError(t, checkDistinctWrites(&kernel.DMACommand{Descriptors: []kernel.DMADescriptor{d, e}}))
	e.DstBase = 1000
	dmaViolationOf(t, checkDistinctWrites(&kernel.DMACommand{Descriptors: []kernel.DMADescriptor{d, e}}), ruleDMAWrite)
	e.Dst.Dmn.Chip = 1 // another chip's HBM
	require.NoError(t, checkDistinctWrites(&kernel.DMACommand{Descriptors: []kernel.DMADescriptor{d, e}}))
}

// TestDMAMultiDMNProperty: homogeneous moves spread over DMNs by a stream
// slice part (002 L2473-2491), DM → DM and DM → HBM with slice layouts, all
// checked by the oracle.
func TestDMAMultiDMNProperty(t *testing.T) {
	n := 0
	for _, a := range []int{2, 4, 8} {
		for _, q := range []int{1, 2, 4} {
			if q > a || a/q > 8 {
				continue
			}
			for _, b := range []int{1, 3} {
				for _, cc := range []int{8, 16} {
					for _, dst := range [][4]string{
						{"", "", "[B, A]", "C"}, {"", "", "", "[B, A, C]"}, {"", "", "[A % 2, B, A / 2]", "C"}} {
						media := kernel.MediaDM
						if dst[2] == "" {
							media = kernel.MediaHBM
						}
						tm := fmt.Sprintf("[A %% %d, B]", q)
						if q == 1 {
							tm = "B"
						}
						c := dmaCase{axes: fmt.Sprintf("A=%d,B=%d,C=%d", a, b, cc), srcMedia: kernel.MediaDM, dstMedia: media,
							src: [4]string{"", "", "A", "[B, C]"}, dst: dst, dstAddr: 64,
							stream: [5]string{"", "", fmt.Sprintf("A / %d", q), tm, "C"}}
						t.Run(fmt.Sprintf("A%d/q%d/B%d/C%d/%s", a, q, b, cc, strings.Join(dst[2:], ";")), func(t *testing.T) {
							cmd := deriveDMAT(t, c)
							assert.Len(t, cmd.Descriptors, a/q)
							checkDMAOracle(t, c, cmd)
						})
						n++
					}
				}
			}
		}
	}
	assert.Greater(t, n, 40)
}

// TestDMAOracleEx36Scaled: MOV-EX-36's structure (002 L2532-2541) over
// chips, clusters and DMNs, scaled down so that the oracle can run: the
// bases the manual gives only symbolically are checked here.
func TestDMAOracleEx36Scaled(t *testing.T) {
	c := dmaCase{axes: "A=2,B=4,C=8,D=8", srcMedia: kernel.MediaHBM, dstMedia: kernel.MediaDM,
		src: [4]string{"A", "", "", "[B, C, D]"}, dst: [4]string{"A", "B / 2", "C", "[B % 2, D]"},
		stream: [5]string{"A", "B / 2", "C / 4", "[C % 2, B % 2, C / 2 % 2]", "D"}}
	cmd := deriveDMAT(t, c)
	require.Len(t, cmd.Descriptors, 2*2*2)
	assert.True(t, cmd.Homogeneous)
	checkDMAOracle(t, c, cmd)
}
