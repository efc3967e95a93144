// Package emit prints kernel programs: Rust Virtual ISA kernels in the
// vendor's APIs, and the program's JSON form. It computes no costs. (Plan
// files are model/plan's; timeline traces and cost reports are cost's,
// cost.WriteTrace and cost.Report.)
//
// # Rust kernels
//
// Rust prints a kernel.Program as a Rust source file in the API of one of
// the vendor's libraries (API, RustOptions.API; the two APIs and what each
// can spell are package emit/rustapi's): furiosa-visa-std 0.1.0,
// the API of the manual's Hello kernels (002 L175-525, the default), or
// furiosa-opt-std 0.6.0, whose compiler places tensors (the plan's
// placement is kept in `// tcpmap:place` header lines). The file has axes!,
// type aliases, a host program whose test compares the kernel with a host
// oracle computed from the program's Reference, and the #[device(chip = N)]
// kernel with every type parameter spelled out; a tiled program prints as
// one loop over its tiles (loop.go). Tensor names become snake_case
// identifiers (names.go). CheckAddresses, which Rust runs, refuses
// programs whose live tensors overlap in memory (002 L154-155); what an
// API cannot spell is refused with the op and the reason. The output is
// deterministic, and type-checks against the stubs of both libraries in
// rust/ (`make rust-check`).
//
// Package emit/rustread reads such a file, in either API, or one of the
// manual's own Hello kernels, back into a kernel.Program; emit then read
// gives the same program.
//
// JSON prints a program's JSON form (kernel.Program.MarshalJSON), indented.
//
// The choices where the manual's examples disagree with each other (the
// statement form, variable names, type aliases, overlapping addresses) are
// recorded in docs/spec-decisions.md under "Emitted Rust: ...", and the
// golden tests compare the emitter's device code with the manual's text
// modulo exactly those documented differences.
//
// # Files
//
//   - rust.go: Rust, the alias choice and the kernel printer;
//   - rust_vector.go, interslice.go, interleave.go: the Vector Engine's
//     calls, the Inter-Slice Block's, an interleaved begin;
//   - api.go: the API names, from package rustapi;
//   - names.go: tensor names as Rust identifiers;
//   - loop.go: the loop form of a tiled kernel;
//   - host.go: the host program and the host oracle;
//   - check.go: what Rust refuses, and CheckAddresses;
//   - addr.go: how addresses are written;
//   - json.go: JSON.
package emit
