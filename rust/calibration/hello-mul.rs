// The manual's Hello kernel hello-mul (002 L246-299, emit/testdata/manual/hello-mul.rs)
// The faults docs/spec-decisions.md records are fixed:
//   - "Hello elementwise multiplication output address": the output goes to 2 << 28, not over rhs.
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
type Slice = m![A / 8 # 256];
#[tokio::main]
async fn main() {
let mut ctx = Context::acquire();
let mut rng = SmallRng::seed_from_u64(42);
let lhs = HostTensor::<i32, m![A]>::rand(&mut rng);
let rhs = HostTensor::<i32, m![A]>::rand(&mut rng);
let lhs_hbm = lhs.to_hbm(&mut ctx.pdma, 0).await;
let rhs_hbm = rhs.to_hbm(&mut ctx.pdma, 1 << 28).await;
let out_hbm = launch(kernel, (&mut ctx, &lhs_hbm, &rhs_hbm)).await;
let _out = out_hbm.to_host::<m![A]>(&mut ctx.pdma).await;
}
#[device(chip = 1)]
fn kernel(
ctx: &mut Context,
lhs: &HbmTensor<i32, Chip, m![A]>,
rhs: &HbmTensor<i32, Chip, m![A]>,
) -> HbmTensor<i32, Chip, m![A]> {
// Move both operands from HBM to DM; use distinct base addresses to avoid overlap
let lhs_dm = lhs.to_dm::<Cluster, Slice, m![A % 8]>(&mut ctx.tdma, 0);
let rhs_dm = rhs.to_dm::<Cluster, Slice, m![A % 8]>(&mut ctx.tdma, 1 << 12);
// Sub context: load rhs into VRF (runs concurrently with the main context below).
// VRF holds a per-slice operand that the Vector Engine reads every cycle.
let rhs_vrf: VrfTensor<i32, Chip, Cluster, Slice, m![A % 8]> = ctx
.sub
.begin(rhs_dm.view())
.fetch::<i32, m![1], m![A % 8]>()
.collect::<m![A % 8 / 8], m![A % 8 % 8]>()
.to_vrf(0);
// Main context: multiply every lhs element by its rhs counterpart from VRF
let result = ctx
.main
.begin(lhs_dm.view())
.fetch::<i32, m![1], m![A % 8]>()
.collect::<m![1], m![A % 8]>()
.vector_init()
.vector_intra_slice_branch(BranchMode::Unconditional)
// Each slice multiplies its 8 lhs elements by the matching 8 rhs elements in VRF
.vector_fxp(FxpBinaryOp::MulInt, &rhs_vrf)
.vector_final()
.commit::<m![A % 8]>(1 << 13);
result.to_hbm(&mut ctx.tdma, 2 << 28)
}
