// The manual's Hello kernel hello-dot (002 L307-362, emit/testdata/manual/hello-dot.rs)
// Faults docs/spec-decisions.md records: none: it type-checks as written.
// It must type-check against rust/stub-visa-0.1 (make rust-check).
#![feature(register_tool)]
#![register_tool(tcp)]
extern crate furiosa_visa_std;
extern crate tokio;
extern crate rand;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use furiosa_visa_std::prelude::*;
axes![A = 2048];
type Chip = m![1];
type Cluster = m![1 # 2];
type Slice = m![1 # 256]; // 1 active slice; m![A / 8 # 256] would distribute across all 256
type Time = m![1]; // No temporal iteration
type Row = m![1]; // No row parallelism
#[tokio::main]
async fn main() {
let mut ctx = Context::acquire();
let mut rng = SmallRng::seed_from_u64(42);
let lhs = HostTensor::<bf16, m![A]>::rand(&mut rng);
let rhs = HostTensor::<bf16, m![A]>::rand(&mut rng);
let lhs_hbm = lhs.to_hbm(&mut ctx.pdma, 0).await;
let rhs_hbm = rhs.to_hbm(&mut ctx.pdma, 1 << 28).await;
let out_hbm = launch(kernel, (&mut ctx, &lhs_hbm, &rhs_hbm)).await;
let out = out_hbm.to_host::<m![1]>(&mut ctx.pdma).await;
}
#[device(chip = 1)]
fn kernel(
ctx: &mut Context,
lhs: &HbmTensor<bf16, Chip, m![A]>,
rhs: &HbmTensor<bf16, Chip, m![A]>,
) -> HbmTensor<bf16, Chip, m![1]> {
// HBM → DM
let lhs: DmTensor<bf16, Chip, Cluster, Slice, m![A]> = lhs.to_dm(&mut ctx.tdma, 0);
let rhs: DmTensor<bf16, Chip, Cluster, Slice, m![A]> = rhs.to_dm(&mut ctx.tdma, 1 << 12);
// Sub context: load rhs into TRF (TrfAddress::Full dedicates the entire TRF to this tensor)
let rhs: TrfTensor<bf16, Chip, Cluster, Slice, Row, m![A]> = ctx
.sub
.begin(rhs.view())
.fetch::<bf16, Time, m![A]>()
.collect::<m![{Time}, A / 16], m![A % 16]>()
.to_trf(TrfAddress::Full);
// Main context: stream lhs through the Contraction Engine, reduce along A
let result: DmTensor<bf16, Chip, Cluster, Slice, m![1 # 8]> = ctx
.main
.begin(lhs.view())
.fetch::<bf16, Time, m![A]>()
.collect::<m![A / 16], m![A % 16]>()
// Pair consecutive 32-byte flits into 64-byte packets, halving time steps (A/16 → A/32)
.align::<m![A / 32], m![A % 32], _, _>(&rhs)
.contract::<m![1]>()
.accumulate::<m![1], m![1 # 8]>(AccumulationKind::Interleaved)
.cast::<bf16, m![1 # 16]>() // cast f32 accumulator output back to bf16
.commit::<m![1 # 8]>(1 << 13);
// DM → HBM
result.to_hbm(&mut ctx.tdma, 2 << 28)
}
