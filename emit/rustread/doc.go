// Package rustread reads Rust Virtual ISA kernels back into kernel
// programs: the subset package emit prints, in either of the vendor's APIs
// (package emit/rustapi; the crate a file names tells which), and the
// manual's own Hello kernels (002 L175-525). Emitting a program and reading
// the file back gives the same program.
//
// Read parses a file's text; ReadFile reads a kernel program from a .rs or
// a .json file, for the commands that take a kernel. Errors are *Error
// values with the file, line and column. What an API cannot spell the
// reader refuses as the emitter does (rustapi.API's checks).
//
// # Files
//
//   - lex.go: the lexer and Error;
//   - read.go: Read, ReadFile, the file's items (axes!, aliases, the host
//     program, the #[device] kernel);
//   - read_chain.go: the chains of stages;
//   - read_loop.go: a tiled kernel's loop;
//   - read_api.go: the API a file names, and its header lines;
//   - read_stage.go: an interleaved begin, the Inter-Slice Block, the
//     Vector Engine's intra-slice calls.
package rustread
