package dtype

import "fmt"

// Site is a place in the pipeline where an element type may change.
type Site uint8

// The conversion sites.
const (
	// FetchCast is the Fetch Adapter's type casting stage on RNGD
	// (002 L1960-L1972), plus the identity the examples use (fetch of bf16
	// as bf16, 002 L345; RN L900 "identity").
	FetchCast Site = iota + 1
	// FetchCastRNGDS is FetchCast on RNGD-S, which adds i4→i9, i16→i9,
	// f8e4m3→bf16 and f8e5m2→bf16 (002 L1973-L1979).
	FetchCastRNGDS
	// CastEngine is the Cast Engine's precision lowering (002 L6774-L6779);
	// no identity (RN L902).
	CastEngine
	// CommitCast is the Commit Adapter's f32→bf16 cast of the newer
	// library (RN L902-L904, RN L1154). The seed's commit adapter only
	// truncates (002 L2187-L2189); see docs/spec-decisions.md "Commit cast".
	CommitCast
	// Contraction is the multiplier's mandatory widening to the
	// accumulator (002 L3782, L4391, L4533; i5/i9 from RN L904, 002 L4383).
	Contraction
	numSites
)

// Sites lists every site in declaration order.
var Sites = []Site{FetchCast, FetchCastRNGDS, CastEngine, CommitCast, Contraction}

var siteNames = [numSites]string{
	FetchCast:      "fetch-cast",
	FetchCastRNGDS: "fetch-cast-rngd-s",
	CastEngine:     "cast-engine",
	CommitCast:     "commit-cast",
	Contraction:    "contraction",
}

// String returns the site's name, or "site(N)" for an invalid value.
func (s Site) String() string {
	if s == 0 || s >= numSites {
		return fmt.Sprintf("site(%d)", uint8(s))
	}
	return siteNames[s]
}

// Pair is one legal conversion From → To.
type Pair struct {
	From, To DType
}

// String renders the pair as "from→to".
func (p Pair) String() string { return p.From.String() + "→" + p.To.String() }

// fetchRNGD is the RNGD Fetch Adapter table (002 L1962-L1972).
var fetchRNGD = []Pair{
	{I4, I5}, {I4, I32}, // 002 L1965
	{I8, I9}, {I8, I32}, // 002 L1966
	{I16, I32},    // 002 L1967
	{F8E4M3, F32}, // 002 L1968
	{F8E5M2, F32}, // 002 L1969
	{BF16, F32},   // 002 L1970
	{F16, F32},    // 002 L1971
	{F32, BF16},   // 002 L1972
}

// fetchRNGDS adds the RNGD-S pairs (002 L1973-L1979).
var fetchRNGDS = []Pair{
	{I4, I9},       // 002 L1976
	{I16, I9},      // 002 L1977
	{F8E4M3, BF16}, // 002 L1978
	{F8E5M2, BF16}, // 002 L1979
}

// castEngine is the Cast Engine's precision lowering table (002 L6776-L6779).
var castEngine = []Pair{
	{I32, I4}, {I32, I8}, {I32, I16}, // 002 L6778
	{F32, F8E5M2}, {F32, F8E4M3}, {F32, F16}, {F32, BF16}, // 002 L6779
}

// commitCast is the newer commit adapter's only cast (RN L902, RN L1154).
var commitCast = []Pair{{F32, BF16}}

// contraction is the multiplier widening (002 L4391, L4533; RN L904).
var contraction = []Pair{
	{I4, I32}, {I5, I32}, {I8, I32}, {I9, I32}, // 002 L4391, L3782 "i4/i8 → i32"; RN L904 adds i5, i9
	{F8E4M3, F32}, {F8E5M2, F32}, {BF16, F32}, // 002 L4391, L3782 "f8/bf16 → f32"
}

// legal[site][from][to], built from the tables above.
var legal = func() (t [numSites][numDTypes][numDTypes]bool) {
	set := func(s Site, ps []Pair) {
		for _, p := range ps {
			t[s][p.From][p.To] = true
		}
	}
	for _, s := range []Site{FetchCast, FetchCastRNGDS} {
		for _, d := range All {
			if d.IsStorage() {
				t[s][d][d] = true // identity: 002 L345, RN L900
			}
		}
		set(s, fetchRNGD)
	}
	set(FetchCastRNGDS, fetchRNGDS)
	set(CastEngine, castEngine)
	set(CommitCast, commitCast)
	set(Contraction, contraction)
	return t
}()

// CanCast reports whether site can convert from → to. Invalid sites or types
// are never legal.
func CanCast(site Site, from, to DType) bool {
	if site == 0 || site >= numSites || !from.Valid() || !to.Valid() {
		return false
	}
	return legal[site][from][to]
}

// Pairs returns the legal conversions of site, ordered by (From, To) in
// declaration order of the types; nil for an invalid site.
func Pairs(site Site) []Pair {
	if site == 0 || site >= numSites {
		return nil
	}
	var out []Pair
	for _, f := range All {
		for _, t := range All {
			if legal[site][f][t] {
				out = append(out, Pair{f, t})
			}
		}
	}
	return out
}

// AccType returns the accumulator type of a contraction over in: i4, i5, i8,
// i9 → i32 and f8e4m3, f8e5m2, bf16 → f32 (002 L3782, L4391, L4533; i5/i9
// RN L904). Other inputs cannot enter the Reducer ("The Reducer does not
// support f32 input directly", 002 L3782): an error.
func AccType(in DType) (DType, error) {
	switch in {
	case I4, I5, I8, I9:
		return I32, nil
	case F8E4M3, F8E5M2, BF16:
		return F32, nil
	}
	return 0, fmt.Errorf("%s cannot be a contraction input (only i4, i5, i8, i9, f8e4m3, f8e5m2, bf16; 002 L3782)", in)
}

// ContractionPair reports whether a stream of type in can be multiplied with
// TRF weights of type trf: floats only with the same type, integers within a
// family {i4, i5} or {i8, i9} (RN L905-L906; the manual's examples pair
// equal types, e.g. "input_type = bf16, trf_type = bf16", 002 L3715).
func ContractionPair(in, trf DType) bool {
	fam := func(d DType) int {
		switch d {
		case I4, I5:
			return 1
		case I8, I9:
			return 2
		case F8E4M3, F8E5M2, BF16:
			return 10 + int(d)
		}
		return 0
	}
	f := fam(in)
	return f != 0 && f == fam(trf)
}
