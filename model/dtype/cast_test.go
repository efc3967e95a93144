package dtype

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanCast(t *testing.T) {
	tests := []struct {
		site     Site
		from, to DType
		want     bool
		cite     string
	}{
		// Fetch Adapter, RNGD (002 L1962-L1972).
		{FetchCast, I4, I5, true, "002 L1965"},
		{FetchCast, I4, I32, true, "002 L1965"},
		{FetchCast, I8, I9, true, "002 L1966"},
		{FetchCast, I8, I32, true, "002 L1966"},
		{FetchCast, I16, I32, true, "002 L1967"},
		{FetchCast, F8E4M3, F32, true, "002 L1968"},
		{FetchCast, F8E5M2, F32, true, "002 L1969"},
		{FetchCast, BF16, F32, true, "002 L1970"},
		{FetchCast, F16, F32, true, "002 L1971"},
		{FetchCast, F32, BF16, true, "002 L1972"},
		{FetchCast, BF16, BF16, true, "002 L345: fetch::<bf16> of bf16"},
		{FetchCast, I8, I8, true, "002 L1863-L1866 (i8 fetched as i8)"},
		{FetchCast, I4, I9, false, "RNGD-S only (002 L1976)"},
		{FetchCast, F8E4M3, BF16, false, "RNGD-S only (002 L1978)"},
		{FetchCast, I32, I8, false, "narrowing is the Cast Engine's"},
		{FetchCast, F32, F16, false, "not in 002 L1962-L1972"},
		{FetchCast, I5, I5, false, "staging types never sit in DM (RN L779)"},
		{FetchCast, F4E2M1, F4E2M1, false, "f4e2m1 only via table lookup (RN L894)"},
		// RNGD-S additions (002 L1973-L1979), plus everything RNGD has.
		{FetchCastRNGDS, I4, I9, true, "002 L1976"},
		{FetchCastRNGDS, I16, I9, true, "002 L1977"},
		{FetchCastRNGDS, F8E4M3, BF16, true, "002 L1978"},
		{FetchCastRNGDS, F8E5M2, BF16, true, "002 L1979"},
		{FetchCastRNGDS, F16, F32, true, "002 L1971"},
		// Cast Engine (002 L6776-L6779).
		{CastEngine, I32, I4, true, "002 L6778"},
		{CastEngine, I32, I8, true, "002 L6778"},
		{CastEngine, I32, I16, true, "002 L6778"},
		{CastEngine, F32, F8E5M2, true, "002 L6779"},
		{CastEngine, F32, F8E4M3, true, "002 L6779"},
		{CastEngine, F32, F16, true, "002 L6779"},
		{CastEngine, F32, BF16, true, "002 L6779"},
		{CastEngine, F32, F32, false, "no identity (RN L902)"},
		{CastEngine, I32, I32, false, "no identity (RN L902)"},
		{CastEngine, F32, I8, false, "not in 002 L6778-L6779"},
		{CastEngine, BF16, F8E4M3, false, "inputs are f32/i32 only (002 L6775)"},
		// Commit cast (RN L902).
		{CommitCast, F32, BF16, true, "RN L902"},
		{CommitCast, F32, F16, false, "RN L902: only f32→bf16"},
		{CommitCast, I32, I8, false, "RN L902"},
		// Contraction widening (002 L4391, L4533; RN L904).
		{Contraction, I4, I32, true, "002 L4391"},
		{Contraction, I8, I32, true, "002 L4391"},
		{Contraction, I5, I32, true, "RN L904"},
		{Contraction, I9, I32, true, "RN L904"},
		{Contraction, F8E4M3, F32, true, "002 L4391 (f8)"},
		{Contraction, F8E5M2, F32, true, "002 L4391 (f8)"},
		{Contraction, BF16, F32, true, "002 L4391"},
		{Contraction, F32, F32, false, "002 L3782: no f32 input"},
		{Contraction, F16, F32, false, "002 L3782: i4, i8, f8, bf16 only"},
		{Contraction, I16, I32, false, "002 L3782"},
		{Contraction, BF16, BF16, false, "002 L4533: widening is mandatory"},
		// Invalid sites and types.
		{Site(0), F32, BF16, false, ""},
		{numSites, F32, BF16, false, ""},
		{FetchCast, DType(0), F32, false, ""},
		{FetchCast, F32, DType(200), false, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, CanCast(tt.site, tt.from, tt.to), "%s %s→%s (%s)", tt.site, tt.from, tt.to, tt.cite)
	}
}

func TestPairs(t *testing.T) {
	// Exact sizes of each table: RNGD fetch = 10 listed pairs (002 L1965-L1972)
	// + 9 identities (002 L2525 types); RNGD-S adds 4 (002 L1976-L1979); Cast
	// Engine 7 (002 L6778-L6779); commit 1; contraction 7.
	want := map[Site]int{FetchCast: 19, FetchCastRNGDS: 23, CastEngine: 7, CommitCast: 1, Contraction: 7}
	for _, s := range Sites {
		ps := Pairs(s)
		assert.Len(t, ps, want[s], "%s", s)
		for _, p := range ps {
			assert.True(t, CanCast(s, p.From, p.To), "%s %s", s, p)
		}
		count := 0
		for _, f := range All {
			for _, to := range All {
				if CanCast(s, f, to) {
					count++
				}
			}
		}
		assert.Equal(t, len(ps), count, "%s", s)
		assert.Equal(t, ps, Pairs(s), "deterministic")
		assert.NotContains(t, s.String(), "site(")
	}
	// RNGD-S is a superset of RNGD.
	for _, p := range Pairs(FetchCast) {
		assert.True(t, CanCast(FetchCastRNGDS, p.From, p.To), "%s", p)
	}
	assert.Nil(t, Pairs(Site(0)))
	assert.Equal(t, "site(0)", Site(0).String())
	assert.Equal(t, "f32→bf16", Pair{F32, BF16}.String())
}

func TestAccType(t *testing.T) {
	// 002 L4391: "Inputs i4/i8 produce i32 outputs, and inputs f8/bf16
	// produce f32 outputs"; i5/i9 RN L904.
	tests := map[DType]DType{I4: I32, I5: I32, I8: I32, I9: I32, F8E4M3: F32, F8E5M2: F32, BF16: F32}
	for _, d := range All {
		acc, err := AccType(d)
		want, ok := tests[d]
		if !ok {
			assert.Error(t, err, "%s (002 L3782)", d)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, want, acc, "%s", d)
		assert.True(t, CanCast(Contraction, d, acc), "%s: AccType agrees with the Contraction site", d)
	}
	_, err := AccType(DType(0))
	assert.Error(t, err)
}

func TestContractionPair(t *testing.T) {
	tests := []struct {
		in, trf DType
		want    bool
	}{
		{BF16, BF16, true}, // 002 L3715
		{F8E4M3, F8E4M3, true},
		{F8E5M2, F8E5M2, true},
		{F8E4M3, F8E5M2, false}, // floats only with the same type (RN L905)
		{BF16, F8E4M3, false},
		{I4, I4, true}, {I4, I5, true}, {I5, I4, true}, {I5, I5, true}, // RN L906
		{I8, I9, true}, {I9, I8, true}, {I8, I8, true},
		{I4, I8, false}, {I5, I9, false},
		{I8, BF16, false},
		{F32, F32, false}, {I32, I32, false}, {F16, F16, false}, // not contraction inputs (002 L3782)
		{DType(0), DType(0), false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ContractionPair(tt.in, tt.trf), "%s×%s", tt.in, tt.trf)
	}
}
