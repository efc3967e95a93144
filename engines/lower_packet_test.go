package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/mapping"
)

// TestCapPacket: a DM tensor's live digits move in DMA packets of at most
// max_packet_bytes = 4096 bytes (002 L2428-2429, L2512), cut on a digit
// boundary so that the outer part, which walks in time, keeps a
// factorized form for the sequencer (002 L1660-1683: incompatible shapes
// are rejected). Each case's split is worked out by hand; a brute force
// over every divisor of the size (mapping.SplitAt, mapping.Factorize)
// checks that no larger count would do.
func TestCapPacket(t *testing.T) {
	spec := Default()
	require.Equal(t, 4096, spec.DMA.MaxPacketBytes.Value) // 002 L2428-2429
	for _, tc := range []struct {
		name, axes, packet string
		dt                 dtype.DType
		outer, inner       string // "" outer: the packet fits whole
	}{
		// moe.yaml down_proj's up tensor: 64·768 bf16 elements; 2048 (4096
		// bytes) is the largest divisor that fits but cuts F = 768 = 3·256,
		// so the packet is [BLK % 2, F] = 1536 elements (3072 bytes).
		{"down_proj [BLK, F]", "BLK=64, F=768", "BLK, F", dtype.BF16, "BLK / 2", "BLK % 2, F"},
		{"[BLK % 32, F]", "BLK=32, F=768", "BLK, F", dtype.BF16, "BLK / 2", "BLK % 2, F"},
		{"fits: 2048 bf16 = 4096 bytes", "A=32, B=64", "A, B", dtype.BF16, "", "A, B"},
		{"powers of two", "A=64, B=64", "A, B", dtype.BF16, "A / 32", "A % 32, B"},
		// 1024 f32 elements: D whole, F cut by 4 (768 % 4 = 0).
		{"f32 [F, D]", "F=768, D=256", "F, D", dtype.F32, "F / 4", "F % 4, D"},
		// 8·4099 i8 elements, 4099 prime: no cut fits but one element.
		{"prime innermost digit", "A=8, P=4099", "A, P", dtype.I8, "A, P", "1"},
		// i4: 4095 nibbles are not whole bytes, 2·4095 = 8190 (4095 bytes) are.
		{"i4 whole bytes", "A=4, B=4095", "A, B", dtype.I4, "A / 2", "A % 2, B"},
		{"i8 cut by 3", "A=6, B=1000", "A, B", dtype.I8, "A / 3", "A % 3, B"},
		{"split axis digits", "F=768, D=8", "F / 256, D, F % 256", dtype.BF16, "F / 256", "D, F % 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			axes, err := mapping.ParseAxes(tc.axes)
			require.NoError(t, err)
			parse := func(src string) *mapping.Expr {
				e, err := mapping.Parse(src, axes, nil)
				require.NoError(t, err, src)
				return e
			}
			packet := parse(tc.packet)
			outer, inner, err := capPacket(spec, tc.dt, packet)
			require.NoError(t, err)
			if tc.outer == "" {
				assert.True(t, outer.IsIdentity(), "outer %s", outer)
			} else {
				ok, _ := mapping.Equiv(parse(tc.outer), outer)
				assert.True(t, ok, "outer %s, want %s", outer, tc.outer)
			}
			ok, _ := mapping.Equiv(parse(tc.inner), inner)
			assert.True(t, ok, "inner %s, want %s", inner, tc.inner)
			b, err := tc.dt.BytesFor(inner.Size())
			if inner.Size() > 1 {
				require.NoError(t, err)
				assert.LessOrEqual(t, b, 4096)
			}
			_, err = mapping.Factorize(outer)
			assert.NoError(t, err)

			// Brute force: the largest divisor within 4096 whole bytes whose
			// split leaves both parts factorizable.
			want := 1
			for n := packet.Size(); n > 1; n-- {
				if packet.Size()%n != 0 {
					continue
				}
				if b, err := tc.dt.BytesFor(n); err != nil || b > 4096 {
					continue
				}
				o, i, err := mapping.SplitAt(packet, n)
				require.NoError(t, err)
				_, oerr := mapping.Factorize(o)
				_, ierr := mapping.Factorize(i)
				if oerr == nil && ierr == nil {
					want = n
					break
				}
			}
			assert.Equal(t, want, inner.Size())
		})
	}
}

// TestCapPacketErrors: an element type without a size has no packet.
func TestCapPacketErrors(t *testing.T) {
	axes, err := mapping.ParseAxes("A=8192")
	require.NoError(t, err)
	e, err := mapping.Parse("A", axes, nil)
	require.NoError(t, err)
	_, _, err = capPacket(Default(), dtype.DType(0), e)
	assert.Error(t, err)
}
