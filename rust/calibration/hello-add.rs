// The manual's Hello kernel hello-add (002 L175-220, emit/testdata/manual/hello-add.rs)
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
axes![A = 2048]; // declare named axis A with size 2048; used in all tensor types below
type Chip = m![1];
type Cluster = m![1 # 2]; // 1 active cluster; hardware has 2 per chip
type Slice = m![A / 8 # 256]; // distribute A across 256 slices, 8 elements each
#[tokio::main]
async fn main() {
let mut ctx = Context::acquire();
// Create input on the host and transfer to HBM
let mut rng = SmallRng::seed_from_u64(42);
let input = HostTensor::<i32, m![A]>::rand(&mut rng);
let in_hbm = input.to_hbm(&mut ctx.pdma, 0).await;
// Launch the device kernel
let out_hbm = launch(kernel, (&mut ctx, &in_hbm)).await;
// Transfer result back to host
let _out = out_hbm.to_host::<m![A]>(&mut ctx.pdma).await;
}
#[device(chip = 1)]
fn kernel(ctx: &mut Context, input: &HbmTensor<i32, Chip, m![A]>) -> HbmTensor<i32, Chip, m![A]> {
// HBM → DM: split 2048 elements across 256 slices (8 elements per slice)
let dm = input.to_dm::<Cluster, Slice, m![A % 8]>(&mut ctx.tdma, 0);
let result = ctx
.main
.begin(dm.view())
// Fetch: stream 8-element packets from DM into the pipeline
.fetch::<i32, m![1], m![A % 8]>()
// Collect: normalize the stream into 32-byte flits (8 × i32)
.collect::<m![1], m![A % 8]>()
// Vector Engine: enter pipeline and arm unconditionally
.vector_init()
.vector_intra_slice_branch(BranchMode::Unconditional)
// Add the scalar constant 1 to every element
.vector_fxp(FxpBinaryOp::AddFxp, 1)
// Exit VE and commit: write results back to DM
.vector_final()
.commit::<m![A % 8]>(1 << 12);
// DM → HBM
result.to_hbm(&mut ctx.tdma, 1 << 28)
}
