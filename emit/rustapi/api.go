// Package rustapi is what tcpmap knows of the vendor's two Rust libraries
// for the Virtual ISA (github.com/furiosa-ai/furiosa-opt): their names and
// crates, which element types, conversions and intra-slice stages each can
// spell, and how a tiled kernel's loop writes a tile index. The emitter
// (package emit) prints what an API can spell and refuses the rest; the
// reader (package emit/rustread) refuses the same.
package rustapi

import (
	"fmt"
	"slices"
	"strconv"
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
	// by `vector_intra_slice_tag(TagMode::Zero)`. The plan's placement is
	// kept in `// tcpmap:place` lines (docs/spec-decisions.md "Emitted Rust:
	// placement under furiosa-opt-std 0.6.0").
	Opt06 API = "opt-0.6"
)

// APIs lists the APIs in the order `tcpmap emit --api` documents them.
var APIs = []API{Visa01, Opt06}

// Parse reads an API name (visa-0.1 or opt-0.6).
func Parse(s string) (API, error) {
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

// OrDefault is a, or Visa01 for the zero value.
func (a API) OrDefault() API {
	if a == "" {
		return Visa01
	}
	return a
}

// Library is the library's name and version.
func (a API) Library() string {
	if a.OrDefault() == Opt06 {
		return "furiosa-opt-std 0.6.0"
	}
	return "furiosa-visa-std 0.1.0"
}

// Crate is the library's crate name (furiosa_visa_std, furiosa_opt_std).
func (a API) Crate() string {
	if a.OrDefault() == Opt06 {
		return "furiosa_opt_std"
	}
	return "furiosa_visa_std"
}

// Tool is the tool name the library's `#[device]` attributes with
// (`#[tcp::device]`, furiosa-opt-macro/src/lib.rs of 0.1.0;
// `#[furiosa_opt::device]` of 0.6.0), which the crate registers.
func (a API) Tool() string {
	if a.OrDefault() == Opt06 {
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

// CheckScalar refuses an element type the API has no scalar for.
func (a API) CheckScalar(d dtype.DType) error {
	if !slices.Contains(scalars[a.OrDefault()], d) {
		return fmt.Errorf("%s has no scalar type %s", a.Library(), d)
	}
	return nil
}

// VeScalar reports whether d is a Vector Engine scalar (VeScalar: i32 and f32
// in both versions, vector_engine/scalar.rs).
func VeScalar(d dtype.DType) bool { return d == dtype.I32 || d == dtype.F32 }

// CheckTensors refuses the program's tensors whose element type the API
// cannot spell, or that the API's tensor type bounds exclude (a VRF tensor
// of a non-VeScalar; a host tensor of a staging type).
func (a API) CheckTensors(p *kernel.Program) error {
	for _, t := range p.Tensors {
		if err := a.CheckScalar(t.DType); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if t.Mem == kernel.VRF && !VeScalar(t.DType) {
			return fmt.Errorf("tensor %q: VrfTensor<%s, ...>: the VRF holds i32 or f32 only (VeScalar)", t.Name, t.DType)
		}
	}
	return nil
}

// CheckFetch refuses a fetch conversion the API's FetchCast lacks.
func (a API) CheckFetch(from, to dtype.DType) error {
	if from == to || slices.Contains(fetchCasts[a.OrDefault()], dtype.Pair{From: from, To: to}) {
		return nil
	}
	return fmt.Errorf("%s's fetch cannot convert %s to %s (FetchCast)", a.Library(), from, to)
}

// CheckCast refuses a Cast Engine conversion the API lacks.
func (a API) CheckCast(from, to dtype.DType) error {
	if !VeScalar(from) {
		return fmt.Errorf("%s's cast takes an i32 or f32 stream (VeScalar), not %s", a.Library(), from)
	}
	if slices.Contains(engineCasts[a.OrDefault()], dtype.Pair{From: from, To: to}) {
		return nil
	}
	return fmt.Errorf("%s's cast cannot convert %s to %s", a.Library(), from, to)
}

// CheckContraction refuses a contraction of a type the API's multiplier
// does not take (ContractionCast).
func (a API) CheckContraction(d dtype.DType) error {
	if slices.Contains(contractionTypes[a.OrDefault()], d) {
		return nil
	}
	return fmt.Errorf("%s does not contract %s streams (ContractionCast)", a.Library(), d)
}

// CheckVector refuses the intra-slice stages an API cannot express or
// tcpmap does not spell in it: under furiosa-opt-std 0.6.0 what
// optCheckVector refuses (opt06_vector.go). The two-group pair has no
// vector_trim_way4 or vector_pad_way8 under furiosa-visa-std 0.1.0
// (vector_tensor_pair.rs at a837582 leaves them out on purpose), so a
// Narrow or Widen of the pair by trim or pad is refused there.
func (a API) CheckVector(st *kernel.Stage, paired bool) error {
	if a == Opt06 {
		return optCheckVector(st, paired)
	}
	if paired && (st.Kind == kernel.StVectorTrim || st.Kind == kernel.StVectorPad) {
		return fmt.Errorf("%s of the two-group pair: %s's VectorTensorPair has no %s (vector_tensor_pair.rs leaves it out; the manual's pair examples, 002 L5222-5248, call it); vector_split and vector_concat move the pair between Way8 and Way4", st.Kind, a.Library(), st.Kind)
	}
	return nil
}

// TileIndex is an axis's index of the tile base (`t` or `t - 1`) as a
// tiled kernel's loop writes it: base / stride % count, without the parts
// that do nothing (no % count for the outermost axis).
func TileIndex(base string, stride, count int, outermost bool) string {
	s := base
	if strings.Contains(base, " ") && (stride > 1 || !outermost) {
		s = "(" + base + ")"
	}
	if stride > 1 {
		s += " / " + strconv.Itoa(stride)
	}
	if !outermost {
		s += " % " + strconv.Itoa(count)
	}
	return s
}
