package engines

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// TestCastManualExamples reproduces every cast of the manual.
func TestCastManualExamples(t *testing.T) {
	spec := Default()
	cases := []struct {
		name, cite, axes  string
		from, to          dtype.DType
		packet, outPacket string
		valid, in, out    int
	}{
		// "A = 8 elements x 4 bytes (i32) = 32 bytes ... A # 32 padding fills the remaining 24 bytes".
		{"CAST-EX-1 single flit", "002 L6792-6802", "B=4, A=8", dtype.I32, dtype.I8, "A", "A # 32", 8, 8, 32},
		// "Input packet A # 8 = 4 data elements padded to 8 ... padded to 32: m![A # 32]".
		{"CAST-EX-2 padded input", "002 L6810-6818", "A=4", dtype.I32, dtype.I8, "A # 8", "A # 32", 4, 8, 32},
		// "N = 8 f32 elements per packet (32 bytes). After cast: N = 8 bf16 elements padded to 16".
		{"CAST-EX-3 cast + commit", "002 L2176-2184", "P=256, M=16, N=8", dtype.F32, dtype.BF16, "N", "N # 16", 8, 8, 16},
		{"CAST-EX-4 dot product", "002 L357-358", "A=2048", dtype.F32, dtype.BF16, "1 # 8", "1 # 16", 1, 8, 16},
		{"CAST-EX-4 GEMV", "002 L459-460", "I=256, J=2048", dtype.F32, dtype.BF16, "1 # 8", "1 # 16", 1, 8, 16},
		{"CAST-EX-4 GEMM", "002 L519-520", "I=512, J=512, K=2048", dtype.F32, dtype.BF16, "J % 8", "J % 8 # 16", 8, 8, 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ax := ceAx(t, tc.axes)
			c, err := DeriveCast(spec, CastInput{From: tc.from, To: tc.to, Packet: ceM(t, ax, tc.packet), OutPacket: ceM(t, ax, tc.outPacket)})
			require.NoError(t, err, tc.cite)
			assert.Equal(t, kernel.CastConfig{From: tc.from, To: tc.to, Valid: tc.valid, InElems: tc.in, OutElems: tc.out}, c, tc.cite)
		})
	}
}

// TestCastRejects covers the Cast Engine's rules.
func TestCastRejects(t *testing.T) {
	spec := Default()
	ax := ceAx(t, "A=8, B=16")
	cases := []struct {
		name              string
		from, to          dtype.DType
		packet, outPacket string
		rule              string
	}{
		{"f32 to i8", dtype.F32, dtype.I8, "A", "A # 32", "CAST-R2"},
		{"i32 to bf16", dtype.I32, dtype.BF16, "A", "A # 16", "CAST-R2"},
		{"identity", dtype.F32, dtype.F32, "A", "A", "CAST-R2"},
		{"bf16 input", dtype.BF16, dtype.F8E4M3, "B", "B # 32", "CAST-R2"},
		{"16-byte input", dtype.I32, dtype.I8, "A % 4", "A % 4 # 32", "CAST-R1"},
		{"output not padded to 32 bytes", dtype.I32, dtype.I8, "A", "A # 16", "CAST-R3"},
		{"output reordered", dtype.I32, dtype.I8, "A", "A % 2, A / 2 # 16", "CAST-R3"},
		{"output of another axis", dtype.F32, dtype.BF16, "A", "B", "CAST-R3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DeriveCast(spec, CastInput{From: tc.from, To: tc.to, Packet: ceM(t, ax, tc.packet), OutPacket: ceM(t, ax, tc.outPacket)})
			ceRequireRule(t, err, tc.rule)
		})
	}
	_, err := DeriveCast(spec, CastInput{From: dtype.I32, To: dtype.I8})
	assert.ErrorContains(t, err, "missing packet mapping")
}

// TestCastPacket checks the packet semantics: conversion with the target's
// rounding (f32 → bf16 round to nearest even, i32 → i8 wrap; model/dtype)
// and zero padding.
func TestCastPacket(t *testing.T) {
	in := make([]byte, 32)
	out := make([]byte, 32)
	for i := range out {
		out[i] = 0xAA
	}
	c := kernel.CastConfig{From: dtype.I32, To: dtype.I8, Valid: 4, InElems: 8, OutElems: 32}
	for i, v := range []int64{1, -2, 300, -129} {
		require.NoError(t, dtype.I32.StoreInt(in, i, v))
	}
	require.NoError(t, CastPacket(&c, in, out))
	want := make([]byte, 32)
	copy(want, []byte{1, 0xfe, 300 - 256, 127}) // 300 wraps to 44, −129 to 127
	assert.Equal(t, want, out)

	f := kernel.CastConfig{From: dtype.F32, To: dtype.BF16, Valid: 8, InElems: 8, OutElems: 16}
	vals := []float32{1, 1 + 1.0/256, 1 + 3.0/256, -2.5, 0, 65504, 1e-3, 3}
	for i, v := range vals {
		require.NoError(t, dtype.F32.StoreF32(in, i, v))
	}
	require.NoError(t, CastPacket(&f, in, out))
	for i, v := range vals {
		got, err := dtype.BF16.LoadF32(out, i)
		require.NoError(t, err)
		assert.Equal(t, float32(dtype.Round(float64(v), dtype.BF16)), got, "element %d", i)
	}
	assert.Equal(t, make([]byte, 16), out[16:])
	one, err := dtype.BF16.LoadF32(out, 1)
	require.NoError(t, err)
	assert.Equal(t, float32(1), one, "1 + 2^-8 ties to even: 1")
	allocs := testing.AllocsPerRun(100, func() { _ = CastPacket(&f, in, out) })
	assert.Zero(t, allocs)
	assert.Error(t, CastPacket(&f, in[:16], out))
	assert.Error(t, CastPacket(nil, in, out))
}
