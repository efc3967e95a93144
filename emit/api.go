package emit

import (
	"fmt"
	"strings"

	"tcpmap/model/dtype"
	"tcpmap/model/kernel"
)

// API is the Rust library an emitted kernel is written against: one of the
// two versions of FuriosaAI's Virtual ISA library (furiosa-ai/furiosa-opt).
// The same kernel program prints in each API's idiom; what an API cannot
// express is refused with an error that names the op. rust/ holds a stub of
// each version that `make rust-check` type-checks the emitted files against
// (rust/README.md).
type API string

const (
	// Visa01 is furiosa-visa-std 0.1.0, the library the manual's Hello
	// kernels are written in (002 L158-530): every transfer and commit takes
	// an address, to_trf a TrfAddress, fetch converts (`fetch::<D, Time,
	// Packet>`), the contraction is align / contract / accumulate. The
	// default.
	Visa01 API = "visa-0.1"
	// Opt06 is furiosa-opt-std 0.6.0, the vendor's current library: the
	// compiler places every tensor (no address, no TrfAddress, HbmTensor::new
	// instead of from_addr), `fetch::<Time, Packet>()` keeps the element type
	// and `fetch_cast::<D>()` converts, the contraction is contract_outer /
	// contract_packet / contract_time / contract_lane, a commit is
	// `commit_trim::<Packet>().commit::<Element>()`, the Vector Engine enters
	// by `vector_intra_slice_tag(TagMode)` and its stages are renamed and
	// retyped (rust_opt06_vector.go). The plan's placement is
	// kept in `// tcpmap:place` lines (docs/spec-decisions.md "Emitted Rust:
	// placement under furiosa-opt-std 0.6.0").
	Opt06 API = "opt-0.6"
)

// APIs lists the APIs in the order `tcpmap emit --api` documents them.
var APIs = []API{Visa01, Opt06}

// ParseAPI reads an API name (visa-0.1 or opt-0.6).
func ParseAPI(s string) (API, error) {
	for _, a := range APIs {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown API %q (want %s)", s, apiNames())
}

func apiNames() string {
	var s []string
	for _, a := range APIs {
		s = append(s, string(a))
	}
	return strings.Join(s, " or ")
}

// orDefault is a, or Visa01 for the zero value.
func (a API) orDefault() API {
	if a == "" {
		return Visa01
	}
	return a
}

// Library is the library's name and version.
func (a API) Library() string {
	if a.orDefault() == Opt06 {
		return "furiosa-opt-std 0.6.0"
	}
	return "furiosa-visa-std 0.1.0"
}

// crate is the library's crate name.
func (a API) crate() string {
	if a.orDefault() == Opt06 {
		return "furiosa_opt_std"
	}
	return "furiosa_visa_std"
}

// tool is the tool name the library's `#[device]` attributes with
// (`#[tcp::device]`, furiosa-opt-macro/src/lib.rs of 0.1.0;
// `#[furiosa_opt::device]` of 0.6.0), which the crate registers.
func (a API) tool() string {
	if a.orDefault() == Opt06 {
		return "furiosa_opt"
	}
	return "tcp"
}

// scalars are each API's element types: furiosa-visa-std/src/scalar.rs
// implements Scalar for i8, i16, i32, f32, u8, f8, bf16, f8e4m3, i4;
// furiosa-opt-std/src/scalar.rs (0.6.0) for i8, u8, i16, i32, f8e4m3,
// f8e5m2, bf16, f32, i4, f4e2m1 and the staging types i5, i9 ("f16 is no
// longer a vISA scalar", CHANGES.md v0.6.0).
var scalars = map[API][]dtype.DType{
	Visa01: {dtype.I8, dtype.I16, dtype.I32, dtype.F32, dtype.BF16, dtype.F8E4M3, dtype.I4},
	Opt06:  {dtype.I8, dtype.I16, dtype.I32, dtype.F32, dtype.BF16, dtype.F8E4M3, dtype.F8E5M2, dtype.F4E2M1, dtype.I4, dtype.I5, dtype.I9},
}

// fetchCasts are the conversions of each API's FetchCast besides the
// identity: furiosa-visa-std/src/cast.rs (i8→i32, bf16→f32, f8e4m3→f32,
// i4→i32); furiosa-opt-std/src/cast.rs of 0.6.0 (i4→i32, i8→i32, i16→i32,
// f8e4m3→f32, f8e5m2→f32, bf16→f32, f32→bf16).
var fetchCasts = map[API][]dtype.Pair{
	Visa01: {{From: dtype.I8, To: dtype.I32}, {From: dtype.BF16, To: dtype.F32}, {From: dtype.F8E4M3, To: dtype.F32}, {From: dtype.I4, To: dtype.I32}},
	Opt06: {{From: dtype.I4, To: dtype.I32}, {From: dtype.I8, To: dtype.I32}, {From: dtype.I16, To: dtype.I32}, {From: dtype.F8E4M3, To: dtype.F32},
		{From: dtype.F8E5M2, To: dtype.F32}, {From: dtype.BF16, To: dtype.F32}, {From: dtype.F32, To: dtype.BF16}},
}

// engineCasts are the Cast Engine's conversions: any `Cast` of a VeScalar
// in furiosa-visa-std (i32→i8, i32→i4, f32→bf16, f32→f8e4m3 and the
// identity, cast.rs); CastEngineCast in 0.6.0 (i32→i4, i8, i16;
// f32→f8e4m3, f8e5m2, bf16; no identity).
var engineCasts = map[API][]dtype.Pair{
	Visa01: {{From: dtype.I32, To: dtype.I8}, {From: dtype.I32, To: dtype.I4}, {From: dtype.F32, To: dtype.BF16}, {From: dtype.F32, To: dtype.F8E4M3},
		{From: dtype.I32, To: dtype.I32}, {From: dtype.F32, To: dtype.F32}},
	Opt06: {{From: dtype.I32, To: dtype.I4}, {From: dtype.I32, To: dtype.I8}, {From: dtype.I32, To: dtype.I16}, {From: dtype.F32, To: dtype.F8E4M3},
		{From: dtype.F32, To: dtype.F8E5M2}, {From: dtype.F32, To: dtype.BF16}},
}

// contractionTypes are each API's ContractionCast implementors:
// i8, bf16, f8e4m3, i4 (furiosa-visa-std/src/cast.rs); i8, bf16, f8e4m3,
// f8e5m2, i4, i5, i9 (0.6.0).
var contractionTypes = map[API][]dtype.DType{
	Visa01: {dtype.I8, dtype.BF16, dtype.F8E4M3, dtype.I4},
	Opt06:  {dtype.I8, dtype.BF16, dtype.F8E4M3, dtype.F8E5M2, dtype.I4, dtype.I5, dtype.I9},
}

func hasDType(ds []dtype.DType, d dtype.DType) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

func hasPair(ps []dtype.Pair, from, to dtype.DType) bool {
	for _, p := range ps {
		if p.From == from && p.To == to {
			return true
		}
	}
	return false
}

// checkScalar refuses an element type the API has no scalar for.
func (a API) checkScalar(d dtype.DType) error {
	if !hasDType(scalars[a.orDefault()], d) {
		return fmt.Errorf("%s has no scalar type %s", a.Library(), d)
	}
	return nil
}

// isVE reports whether d is a Vector Engine scalar (VeScalar: i32 and f32
// in both versions, vector_engine/scalar.rs).
func isVE(d dtype.DType) bool { return d == dtype.I32 || d == dtype.F32 }

// checkTensors refuses the program's tensors whose element type the API
// cannot spell, or that the API's tensor type bounds exclude (a VRF tensor
// of a non-VeScalar; a host tensor of a staging type).
func (a API) checkTensors(p *kernel.Program) error {
	for _, t := range p.Tensors {
		if err := a.checkScalar(t.DType); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if t.Mem == kernel.VRF && !isVE(t.DType) {
			return fmt.Errorf("tensor %q: VrfTensor<%s, ...>: the VRF holds i32 or f32 only (VeScalar)", t.Name, t.DType)
		}
	}
	return nil
}

// checkFetch refuses a fetch conversion the API's FetchCast lacks.
func (a API) checkFetch(from, to dtype.DType) error {
	if from == to || hasPair(fetchCasts[a.orDefault()], from, to) {
		return nil
	}
	return fmt.Errorf("%s's fetch cannot convert %s to %s (FetchCast)", a.Library(), from, to)
}

// checkCast refuses a Cast Engine conversion the API lacks.
func (a API) checkCast(from, to dtype.DType) error {
	if !isVE(from) {
		return fmt.Errorf("%s's cast takes an i32 or f32 stream (VeScalar), not %s", a.Library(), from)
	}
	if hasPair(engineCasts[a.orDefault()], from, to) {
		return nil
	}
	return fmt.Errorf("%s's cast cannot convert %s to %s", a.Library(), from, to)
}

// checkContraction refuses a contraction of a type the API's multiplier
// does not take (ContractionCast).
func (a API) checkContraction(d dtype.DType) error {
	if hasDType(contractionTypes[a.orDefault()], d) {
		return nil
	}
	return fmt.Errorf("%s does not contract %s streams (ContractionCast)", a.Library(), d)
}
