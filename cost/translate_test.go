package cost

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// tiledGEMM builds a program that repeats the golden GEMM 512×512×2048's ops
// over tiles tile views of its arguments (kernel.Tensor.View): every DMA op
// is the same move as the golden kernel's, at another HBM base.
func tiledGEMM(t testing.TB, tiles int) *kernel.Program { return tiledGEMMAt(t, tiles, 0) }

// tiledGEMMAt is tiledGEMM with every tile view moved by shift bytes.
func tiledGEMMAt(t testing.TB, tiles int, shift int64) *kernel.Program {
	t.Helper()
	b, err := os.ReadFile("../workloads/kernels/gemm-512x512x2048.json")
	require.NoError(t, err)
	var k map[string]any
	require.NoError(t, json.Unmarshal(b, &k))
	tensors := k["tensors"].([]any)
	ops := k["ops"].([]any)
	byName := map[string]map[string]any{}
	for _, x := range tensors {
		tm := x.(map[string]any)
		byName[tm["name"].(string)] = tm
	}
	// Tile strides: the arguments are 2 MiB (a, b) and 512 KiB (out).
	stride := map[string]int64{"a": 2 << 20, "b": 2 << 20, "out": 512 << 10}
	var newOps []any
	for tile := 0; tile < tiles; tile++ {
		for _, x := range ops {
			o := map[string]any{}
			for key, v := range x.(map[string]any) {
				o[key] = v
			}
			for _, side := range []string{"src", "dst"} {
				name, ok := o[side].(string)
				if !ok || stride[name] == 0 {
					continue
				}
				base := byName[name]
				v := map[string]any{}
				for key, val := range base {
					v[key] = val
				}
				v["name"] = fmt.Sprintf("%s_t%d", name, tile)
				v["role"] = "intermediate"
				v["view"] = name
				v["addr"] = int64(base["addr"].(float64)) + int64(tile)*stride[name] + shift
				tensors = append(tensors, v)
				o[side] = v["name"]
			}
			newOps = append(newOps, o)
		}
	}
	k["tensors"], k["ops"] = tensors, newOps
	delete(k, "reference")
	src, err := json.Marshal(k)
	require.NoError(t, err)
	var p kernel.Program
	require.NoError(t, json.Unmarshal(src, &p))
	require.NoError(t, engines.Lower(engines.Default(), &p))
	return &p
}

// BenchmarkEvaluateTiled prices a 64-tile program with a new Model each
// time: the planner's first exact evaluation of a tiled plan, whose DMA ops
// repeat one move over 64 HBM tile bases.
func BenchmarkEvaluateTiled(b *testing.B) {
	p := tiledGEMM(b, 64)
	b.ReportAllocs()
	for b.Loop() {
		m, err := NewModel(engines.Default())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Evaluate(p); err != nil {
			b.Fatal(err)
		}
	}
}

// translatable returns the address bits a translation may flip by the
// argument of translate.go, derived from the spec independently of the
// model: bits at or above the 256-byte request (002 L2469), below the HBM
// size, the slice and bank-group bits (002 L2966, L2969, L2970, L2975)
// included.
func translatable() uint64 {
	h := &spec.HBM
	var m uint64
	for b := 8; b < 64 && uint64(1)<<uint(b) < uint64(h.Bytes.Value); b++ {
		m |= 1 << uint(b)
	}
	return m
}

// sideBytes calls f with every byte address of one side of d, walking its
// loops directly (the packet is the innermost loops, contiguous).
func sideBytes(d *kernel.DMADescriptor, src bool, f func(a uint64)) {
	eb := d.ElemBits / 8
	var rec func(i, addr int)
	rec = func(i, addr int) {
		if i == len(d.Entries) {
			for j := 0; j < eb; j++ {
				f(uint64(addr + j))
			}
			return
		}
		s := d.Entries[i].DstStride
		if src {
			s = d.Entries[i].SrcStride
		}
		for k := 0; k < d.Entries[i].Size; k++ {
			rec(i+1, addr+k*s)
		}
	}
	base := d.DstBase
	if src {
		base = d.SrcBase
	}
	rec(0, base)
}

// randomBatch returns 1-3 random descriptors between HBM and the DMs of
// cluster 0: various packets, strides (some negative, some overlapping),
// unaligned HBM bases.
func randomBatch(r *rand.Rand) []kernel.DMADescriptor {
	var ds []kernel.DMADescriptor
	for k := 0; k < 1+r.Intn(3); k++ {
		pk := 8 << r.Intn(8) // 8 .. 1024 bytes
		var loops []loop
		dmStride := pk
		for l := 0; l < 1+r.Intn(2); l++ {
			n := 1 + r.Intn(6)
			hs := pk << r.Intn(10)
			switch r.Intn(5) {
			case 0:
				hs = -hs
			case 1:
				hs = pk * (1 + r.Intn(5)) // carries between loops
			case 2:
				hs = 0 // broadcast
			}
			loops = append([]loop{{n, hs, dmStride}}, loops...)
			dmStride *= n
		}
		loops = append(loops, loop{pk, 1, 1})
		base := 1<<30 + r.Intn(1<<26)
		if r.Intn(2) == 0 {
			base &^= 255
		}
		dmBase := r.Intn(4) * 1024
		if r.Intn(4) == 0 {
			dmBase += 4
		}
		eng := dmn(0, 0, r.Intn(8))
		d := desc(eng, hbm(0), dm(0, 0, eng.DMN), base, dmBase, pk, loops...)
		if r.Intn(2) == 0 { // DM to HBM
			d = desc(eng, dm(0, 0, eng.DMN), hbm(0), dmBase, base, pk, swap(loops)...)
		}
		d.Exec = k
		ds = append(ds, d)
	}
	return ds
}

func swap(ls []loop) []loop {
	out := make([]loop, len(ls))
	for i, l := range ls {
		out[i] = loop{l.n, l.dst, l.src}
	}
	return out
}

// fixedBits returns, by walking every byte, the bits constant over each HBM
// side of ds, and the first HBM side's base.
func fixedBits(ds []kernel.DMADescriptor) (fixed, first uint64) {
	fixed = ^uint64(0)
	seen := false
	for i := range ds {
		d := &ds[i]
		for _, src := range []bool{true, false} {
			md, base := d.Dst, d.DstBase
			if src {
				md, base = d.Src, d.SrcBase
			}
			if md.Kind != kernel.MediaHBM {
				continue
			}
			and, or := ^uint64(0), uint64(0)
			sideBytes(d, src, func(a uint64) { and &= a; or |= a })
			fixed &= and | ^or
			if !seen {
				first, seen = uint64(base), true
			}
		}
	}
	return fixed, first
}

// xorHBM returns ds with every HBM address XOR delta: each HBM base XOR
// delta, valid when delta's bits are fixed on every HBM side.
func xorHBM(ds []kernel.DMADescriptor, delta uint64) []kernel.DMADescriptor {
	out := make([]kernel.DMADescriptor, len(ds))
	for i, d := range ds {
		d.Entries = append([]kernel.DMAEntry(nil), d.Entries...)
		if d.Src.Kind == kernel.MediaHBM {
			d.SrcBase ^= int(delta)
		}
		if d.Dst.Kind == kernel.MediaHBM {
			d.DstBase ^= int(delta)
		}
		out[i] = d
	}
	return out
}

// TestHBMTranslationInvariance: a batch and its translation by bits fixed
// on every HBM side, slice and bank-group bits included, get identical
// prices, per descriptor and in total; the model's key translation uses
// only such bits; and the cached Model serves the translation exactly what
// pricing it afresh gives.
func TestHBMTranslationInvariance(t *testing.T) {
	m := newModel(t)
	allowed := translatable()
	// The model's allowed bits are those derived from the spec's fields.
	require.Equal(t, allowed, m.shiftMask)
	require.Equal(t, allowed&(1<<13|1<<19|1<<20|1<<34), uint64(1<<13|1<<19|1<<20|1<<34), "RNGD's bank-group and slice bits (002 L2966-2975) too")
	r := rand.New(rand.NewSource(5))
	hits := 0
	for iter := 0; iter < 300; iter++ {
		ds := randomBatch(r)
		fixed, first := fixedBits(ds)
		k := fixed & allowed
		// The model's key translation is of such bits, with the first
		// side's values (translate.go).
		shift := m.hbmShift(ds)
		require.Zero(t, shift&^k, "iteration %d: %+v", iter, ds)
		require.Equal(t, first&shift, shift, "iteration %d", iter)

		delta := k & r.Uint64() & (1<<34 - 1)
		ds2 := xorHBM(ds, delta)
		est1, err := m.EstimateDescriptors(ds)
		require.NoError(t, err)
		per1 := append([]DescriptorEstimate(nil), m.Descriptors()...)
		est2, err := m.EstimateDescriptors(ds2)
		require.NoError(t, err)
		require.Equal(t, est1, est2, "iteration %d: delta %#x of %+v", iter, delta, ds)
		require.Equal(t, per1, m.Descriptors(), "iteration %d", iter)

		// The cached model against a fresh one, with two commands.
		cached, err := NewModel(spec)
		require.NoError(t, err)
		fresh, err := NewModel(spec)
		require.NoError(t, err)
		fresh.NoCache = true
		counts := []int{len(ds)}
		if len(ds) > 1 {
			counts = []int{1, len(ds) - 1}
		}
		alone := make([]float64, len(counts))
		for i := range alone {
			alone[i] = float64(1000 * (i + 1))
		}
		_, err = cached.dmaPrice(ds, counts, alone)
		require.NoError(t, err)
		want, err := fresh.dmaPrice(ds2, counts, alone)
		require.NoError(t, err)
		got, err := cached.dmaPrice(ds2, counts, alone)
		require.NoError(t, err)
		require.Equal(t, *want, *got, "iteration %d", iter)
		if len(cached.dmas) == 1 {
			hits++
		}
	}
	// Most translations are recognised (the key's fixed bits are a
	// conservative bound).
	assert.Greater(t, hits, 150)
}

// TestTranslatedCacheKey: a batch that is not a translation by fixed,
// allowed bits gets an entry of its own (and its own, right, price).
func TestTranslatedCacheKey(t *testing.T) {
	// Example 2 reads 256 rows 64 KiB apart (002 L2650-2652): HBM bits
	// 0-23 vary, 24 and up are fixed.
	base := example2(1 << 30)
	cases := []struct {
		name  string
		ds    []kernel.DMADescriptor
		share bool
	}{
		{"fixed allowed bit 26", example2(1<<30 | 1<<26), true},
		{"fixed allowed bit 30 cleared, 27 set", xorHBM(base, 1<<30|1<<27), true},
		{"bank-group bit 19", example2(1<<30 | 1<<19), false},
		{"slice bit 20", example2(1<<30 | 1<<20), false},
		{"varying bit 12: not a XOR", example2(1<<30 | 1<<12), false},
		{"below the request", example2(1<<30 | 1<<26 | 64), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cached, err := NewModel(spec)
			require.NoError(t, err)
			fresh, err := NewModel(spec)
			require.NoError(t, err)
			fresh.NoCache = true
			_, err = cached.dmaPrice(base, []int{1}, nil)
			require.NoError(t, err)
			got, err := cached.dmaPrice(c.ds, []int{1}, nil)
			require.NoError(t, err)
			entries := 0
			for _, l := range cached.dmas {
				entries += len(l)
			}
			if c.share {
				assert.Equal(t, 1, entries)
			} else {
				assert.Equal(t, 2, entries)
			}
			want, err := fresh.dmaPrice(c.ds, []int{1}, nil)
			require.NoError(t, err)
			assert.Equal(t, *want, *got)
		})
	}
	// A translation reaching outside HBM is an error, not a cache hit.
	cached, err := NewModel(spec)
	require.NoError(t, err)
	_, err = cached.dmaPrice(example2(0), []int{1}, nil)
	require.NoError(t, err)
	_, err = cached.dmaPrice(example2(int(spec.HBM.Bytes.Value)), []int{1}, nil)
	assert.ErrorContains(t, err, "beyond")
}

// smallTiled builds a program of the synthetic test kernels' tensors
// (testkernel_test.go) that moves tiles of x and w in, copies, and moves the
// result out, over tiles 4 KiB tile views each, moved by shift bytes.
func smallTiled(t testing.TB, tiles int, shift int64) *kernel.Program {
	t.Helper()
	var views, ops []string
	for tile := 0; tile < tiles; tile++ {
		off := shift + int64(tile)*4096
		for _, v := range []struct {
			name string
			addr int64
			role string
		}{{"x", 0, "input"}, {"w", 402653184, "input"}, {"out", 536870912, "output"}} {
			views = append(views, fmt.Sprintf(`{"name": "%s_t%d", "mem": "hbm", "dtype": "bf16", "role": "intermediate", "chip": "1", "element": "A", "addr": %d, "view": %q}`,
				v.name, tile, v.addr+off, v.name))
		}
		ops = append(ops, dmaOp("to_dm", fmt.Sprintf("x_t%d", tile), "x_dm"), dmaOp("to_dm", fmt.Sprintf("w_t%d", tile), "w_dm"),
			copyChain("main", "x_dm", "z_dm"), dmaOp("to_hbm", "z_dm", fmt.Sprintf("out_t%d", tile)))
	}
	src := fmt.Sprintf(`{"name": "tiled", "axes": "A=2048", "chips": 1, "tensors": [%s, %s], "ops": [%s]}`,
		fmt.Sprintf(testTensors, 8192), strings.Join(views, ",\n"), strings.Join(ops, ",\n"))
	var p kernel.Program
	require.NoError(t, json.Unmarshal([]byte(src), &p), src)
	require.NoError(t, engines.Lower(engines.Default(), &p))
	return &p
}

// TestTiledEvaluateTranslated: a tiled program moved in HBM by bits fixed
// in every view is priced from the first one's cache entries, with the very
// report a model without caches gives (cycles, per-op times, per-engine
// busy, findings); moved otherwise, it is priced afresh, rightly too.
func TestTiledEvaluateTranslated(t *testing.T) {
	p1 := smallTiled(t, 4, 0)
	cases := []struct {
		name  string
		shift int64
		share bool
	}{
		{"bit 26", 1 << 26, true},
		{"bits 26 and 31", 1<<26 | 1<<31, true},
		{"bit 27: w's base has it, the move carries", 1 << 27, false},
		{"bank-group bit 19 (issue order by arrival)", 1 << 19, true},
		{"bit 12, inside a row", 1 << 12, false},
		{"unaligned", 1<<26 + 64, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p2 := smallTiled(t, 4, c.shift)
			cached, err := NewModel(spec)
			require.NoError(t, err)
			_, err = cached.Evaluate(p1)
			require.NoError(t, err)
			entries := 0
			for _, l := range cached.dmas {
				entries += len(l)
			}
			got, err := cached.Evaluate(p2)
			require.NoError(t, err)
			after := 0
			for _, l := range cached.dmas {
				after += len(l)
			}
			if c.share {
				assert.Equal(t, entries, after, "every DMA batch of the moved program is served from the cache")
			} else {
				assert.Greater(t, after, entries)
			}
			fresh, err := NewModel(spec)
			require.NoError(t, err)
			fresh.NoCache = true
			want, err := fresh.Evaluate(p2)
			require.NoError(t, err)
			require.Equal(t, want.Clone(), got.Clone())
			if c.shift%256 != 0 {
				require.NotEmpty(t, want.Findings, "misaligned HBM accesses are findings")
			}
		})
	}
}

// BenchmarkEvaluateTiled512 prices a 512-tile program (about 2,000 ops,
// the size of the tiled prefill plans that once took 32 s to price).
func BenchmarkEvaluateTiled512(b *testing.B) {
	p := tiledGEMM(b, 512)
	b.ReportMetric(float64(len(p.Ops)), "ops")
	for b.Loop() {
		m, err := NewModel(engines.Default())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Evaluate(p); err != nil {
			b.Fatal(err)
		}
	}
}
