// The manual's Hello kernel hello-gemm (002 L473-525, emit/testdata/manual/hello-gemm.rs)
// without the book's `#![allow(unused)] fn main() { ... }` wrapper, which is
// its rendering, not part of the file (emit/golden_test.go unwrap).
// The faults docs/spec-decisions.md records are fixed:
//   - "Hello GEMM TRF over-capacity": K = 1024.
//   - "Hello GEMM golden kernel: B's HBM layout and DM addresses": B is m![J, K] in HBM.
//   - (same entry) b at DM 65536.
//   - (same entry) the result at DM 131072.
// It must type-check against rust/stub-visa-0.1 (make rust-check).
#![feature(register_tool)]
#![register_tool(tcp)]
extern crate furiosa_visa_std;
use furiosa_visa_std::prelude::*;
axes![I = 512, J = 512, K = 1024];
type Chip = m![1];
type Cluster = m![1 # 2];
// Distribute output dimensions `I` and `J` across slices
type Slice = m![I / 32, J / 32]; // Each slice handles a 16 × 16 output tile
type Row = m![J % 8];
// Host code similar to previous examples:
// - Create matrix tensors A and B
// - Transfer to HBM
// - Launch kernel
// - Transfer result back
#[device(chip = 1)]
fn kernel(
ctx: &mut Context,
a: &HbmTensor<bf16, Chip, m![I, K]>,
b: &HbmTensor<bf16, Chip, m![J, K]>,
) -> HbmTensor<bf16, Chip, m![I, J]> {
// Move data from HBM to DM
let a: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, K]> = a.to_dm(&mut ctx.tdma, 0);
let b: DmTensor<bf16, Chip, Cluster, Slice, m![J % 32, K]> = b.to_dm(&mut ctx.tdma, 1 << 16);
// Load matrix B into TRF
// Switch Engine distributes B across 256 slices
// Each slice gets the full `K` dimension but only its (16 × 16) output tile
// See: Switch Engine topologies for details on distribution
let b_trf: TrfTensor<bf16, Chip, Cluster, Slice, Row, m![J / 8 % 4, K]> = ctx
.sub
.begin(b.view())
.fetch::<bf16, m![J % 8, J / 8 % 4], m![K]>()
.collect::<m![J % 8, J / 8 % 4, K / 16], m![K % 16]>()
.to_trf(TrfAddress::Full);
// Compute GEMM: A × B
// Switch Engine ensures matching (`I / 32`, `J / 32`) slice distribution
// Contraction reduces along `K`, preserves `I` and `J`
let result: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, J % 32]> = ctx
.main
.begin(a.view())
.fetch::<bf16, m![I % 32, J / 8 % 4], m![K]>()
.collect::<m![I % 32, J / 8 % 4, K / 16], m![K % 16]>()
.align::<m![I % 32, J / 8 % 4, K / 32], m![K % 32], _, _>(&b_trf)
.contract::<m![1]>()
.accumulate::<m![I % 32, J / 8 % 4], m![J % 8]>(AccumulationKind::Interleaved)
.cast::<bf16, m![J % 8 # 16]>()
.commit(1 << 17);
// Transfer result to HBM
result.to_hbm(&mut ctx.tdma, 2 << 28)
}

