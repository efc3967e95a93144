//! Stub of furiosa-opt-std 0.6.0, the vendor's current library
//! (furiosa-ai/furiosa-opt, furiosa-opt-std/Cargo.toml `version = "0.6.0"`,
//! commit d4d05a7; files unchanged since 0.5.0 or 0.4.0 are read at the
//! commits that store them, 4a3bd67 and 423b285).
//!
//! It restates the signatures of the types, traits and methods tcpmap's
//! emitter uses, with the generic parameters, argument types and trait
//! bounds of the vendor's source, so that rustc type-checks a kernel against
//! it as it would against the library. Each item cites the vendor file it
//! restates. What changed from 0.1.0 (furiosa-visa-std) and matters here:
//! no addresses (HostTensor::to_hbm, to_dm, to_hbm, commit, to_vrf take none;
//! HbmTensor::new replaces from_addr; no TrfAddress, to_trf takes none);
//! `fetch::<Time, Packet>()` keeps the element type and `fetch_cast::<D>()`
//! converts; the contraction is `contract_outer` (4 + 1 generics),
//! `contract_packet`, `contract_time`, `contract_lane(LaneMode)`; a commit is
//! `commit_trim::<Packet>().commit::<Element>()`; the Vector Engine enters by
//! `vector_intra_slice_tag(TagMode)`; every tensor type has a defaulted
//! backend parameter `B`; the tool attribute is `furiosa_opt`.
//! Bodies are `unimplemented!()`: the stub checks types, it runs nothing.

#![feature(adt_const_params)]
#![feature(register_tool)]
#![register_tool(furiosa_opt)]
#![allow(incomplete_features, dead_code, unused_variables, private_bounds, private_interfaces)]

extern crate self as furiosa_opt_std;

#[path = "../mapping.rs"]
#[doc(hidden)]
pub mod __mapping;

use core::future::Future;
use core::marker::ConstParamTy;
use core::marker::PhantomData;

use __mapping::{Identity, M};

pub use context::Device;

fn stub<T>() -> T {
    unimplemented!("tcpmap stub: type-checking only")
}

/// The prelude (furiosa-opt-std/src/lib.rs `pub mod prelude`, d4d05a7).
pub mod prelude {
    pub use super::__mapping::{AxisName, Identity, M, Pair, Padding, Symbol};
    pub use super::backend::*;
    pub use super::cast::{
        Cast, CastEngineCast, CommitCast, ContractionAccumulator, ContractionCast, ContractionWeight, FetchCast,
    };
    pub use super::context::*;
    pub use super::engine::*;
    pub use super::runtime::*;
    pub use super::scalar::*;
    pub use super::tensor::*;
    pub use tcpmap_stub_macros::{axes_opt as axes, device_opt as device, m_opt as m};
}

/// Backends (furiosa-opt-std/src/backend/mod.rs).
pub mod backend {
    /// A backend: where a tensor's storage lives.
    pub trait Backend: core::fmt::Debug + 'static {}
    /// The host-side emulator, the default build.
    #[derive(Debug)]
    pub struct Cpu;
    /// The NPU.
    #[derive(Debug)]
    pub struct Npu;
    impl Backend for Cpu {}
    impl Backend for Npu {}
}

/// Scalars (furiosa-opt-std/src/scalar.rs, d4d05a7).
pub mod scalar {
    /// A scalar type (`Scalar: LinalgScalar + Debug + Clone + Copy + PartialEq + Num + Send + Sync`).
    pub trait Scalar: core::fmt::Debug + Clone + Copy + PartialEq + Send + Sync {
        /// Bits per element on the wire.
        const BITS: usize;
    }

    /// A scalar that may live in host/HBM/DM memory: every dtype but the
    /// zero-point staging types i5 and i9.
    pub trait MaterializableScalar: Scalar {}

    macro_rules! std_scalar {
        ($($t:ty),*) => { $(
            impl Scalar for $t { const BITS: usize = core::mem::size_of::<$t>() * 8; }
            impl MaterializableScalar for $t {}
        )* };
    }
    // `impl_scalar! { i8; u8; i16; i32; f8e4m3; f8e5m2; bf16; f32; }`.
    std_scalar!(i8, u8, i16, i32, f32);

    /// An initialized or uninitialized value (`Opt<D>`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Opt<D> {
        /// Initialized value.
        Init(D),
        /// Uninitialized value.
        Uninit,
    }

    macro_rules! own_scalar {
        ($($t:ident($r:ty) = $bits:expr, $mat:tt;)*) => { $(
            #[allow(non_camel_case_types)]
            #[derive(Clone, Copy, Debug, PartialEq)]
            #[doc = concat!("The `", stringify!($t), "` scalar.")]
            pub struct $t($r);
            impl Scalar for $t { const BITS: usize = $bits; }
            own_scalar!(@mat $t $mat);
        )* };
        (@mat $t:ident yes) => { impl MaterializableScalar for $t {} };
        (@mat $t:ident no) => {};
    }
    own_scalar! {
        bf16(u16) = 16, yes;
        f8e4m3(u8) = 8, yes;
        f8e5m2(u8) = 8, yes;
        f4e2m1(u8) = 4, yes;
        i4(i8) = 4, yes;
        i5(i8) = 5, no;
        i9(i16) = 9, no;
    }

    impl bf16 {
        /// Creates `bf16` from `f32`.
        pub const fn from_f32(val: f32) -> Self {
            bf16(0)
        }
        /// Converts to `f32`.
        pub fn to_f32(self) -> f32 {
            super::stub()
        }
    }

    impl From<bf16> for f32 {
        fn from(val: bf16) -> Self {
            super::stub()
        }
    }
    impl From<f8e4m3> for f32 {
        fn from(val: f8e4m3) -> Self {
            super::stub()
        }
    }
    impl From<f8e5m2> for f32 {
        fn from(val: f8e5m2) -> Self {
            super::stub()
        }
    }
    impl From<i4> for i32 {
        fn from(val: i4) -> Self {
            super::stub()
        }
    }

    // `impl rand::distr::Distribution<X> for StandardUniform` for bf16,
    // f8e4m3, f8e5m2.
    macro_rules! sampled {
        ($($t:ty),*) => {
            $(impl rand::distr::Distribution<$t> for rand::distr::StandardUniform {
                fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> $t {
                    super::stub()
                }
            })*
        };
    }
    sampled!(bf16, f8e4m3, f8e5m2);
}

/// Conversions (furiosa-opt-std/src/cast.rs, d4d05a7).
pub mod cast {
    use super::scalar::{MaterializableScalar, Scalar, bf16, f4e2m1, f8e4m3, f8e5m2, i4, i5, i9};

    /// Host-side value conversion between scalar types.
    pub trait Cast<D: Scalar> {
        /// Casts self to target type D.
        fn cast(self) -> D;
    }

    impl<D: Scalar> Cast<D> for D {
        fn cast(self) -> D {
            self
        }
    }

    macro_rules! casts {
        ($($a:ty => $b:ty),*) => { $(impl Cast<$b> for $a { fn cast(self) -> $b { super::stub() } })* };
    }
    casts!(
        i8 => i32, i32 => i8, bf16 => f32, f32 => bf16, f8e4m3 => f32, f32 => f8e4m3, f8e5m2 => f32,
        f32 => f8e5m2, i4 => i32, i32 => i4, i16 => i32, i32 => i16, i5 => i32, i32 => i5, i9 => i32, i32 => i9
    );

    /// The Fetch Adapter's conversions, one impl per RNGD conversion.
    pub trait FetchCast<D: Scalar>: Cast<D> {}
    impl<D> FetchCast<D> for D where D: Scalar {}
    impl FetchCast<i32> for i4 {}
    impl FetchCast<i32> for i8 {}
    impl FetchCast<i32> for i16 {}
    impl FetchCast<f32> for f8e4m3 {}
    impl FetchCast<f32> for f8e5m2 {}
    impl FetchCast<f32> for bf16 {}
    impl FetchCast<bf16> for f32 {}

    /// The Cast Engine's narrowings (no identity).
    pub trait CastEngineCast<D: Scalar>: Cast<D> {}
    impl CastEngineCast<i4> for i32 {}
    impl CastEngineCast<i8> for i32 {}
    impl CastEngineCast<i16> for i32 {}
    impl CastEngineCast<f8e4m3> for f32 {}
    impl CastEngineCast<f8e5m2> for f32 {}
    impl CastEngineCast<bf16> for f32 {}

    /// The Commit Adapter's one cast, `f32 -> bf16`.
    pub trait CommitCast<D: Scalar>: Cast<D> {
        /// The fused-ReLU form.
        fn cast_relu(self) -> D;
    }
    impl CommitCast<bf16> for f32 {
        fn cast_relu(self) -> bf16 {
            super::stub()
        }
    }

    /// The contraction's accumulator widths, i32 and f32.
    pub trait ContractionAccumulator: MaterializableScalar {}
    impl ContractionAccumulator for i32 {}
    impl ContractionAccumulator for f32 {}

    /// Weight (TRF) types contracted against a stream type.
    pub trait ContractionWeight<Stream: Scalar>: Scalar {}
    impl ContractionWeight<i4> for i4 {}
    impl ContractionWeight<i5> for i4 {}
    impl ContractionWeight<i4> for i5 {}
    impl ContractionWeight<i5> for i5 {}
    impl ContractionWeight<i8> for i8 {}
    impl ContractionWeight<i9> for i8 {}
    impl ContractionWeight<i8> for i9 {}
    impl ContractionWeight<i9> for i9 {}
    impl ContractionWeight<bf16> for bf16 {}
    impl ContractionWeight<f8e4m3> for f8e4m3 {}
    impl ContractionWeight<f8e5m2> for f8e5m2 {}

    /// The element types the contraction engine multiplies, with their
    /// accumulator: i4, i5, i8, i9, f8e4m3, f8e5m2, bf16.
    pub trait ContractionCast: Scalar + ContractionWeight<Self> + Cast<<Self as ContractionCast>::Output> {
        /// The accumulator type.
        type Output: ContractionAccumulator + Cast<Self>;
    }
    impl ContractionCast for i8 {
        type Output = i32;
    }
    impl ContractionCast for bf16 {
        type Output = f32;
    }
    impl ContractionCast for f8e4m3 {
        type Output = f32;
    }
    impl ContractionCast for f8e5m2 {
        type Output = f32;
    }
    impl ContractionCast for i4 {
        type Output = i32;
    }
    impl ContractionCast for i5 {
        type Output = i32;
    }
    impl ContractionCast for i9 {
        type Output = i32;
    }

    /// `f4e2m1` decodes only by table lookup.
    pub trait TableLookup<D: Scalar> {}
    impl TableLookup<f8e4m3> for f4e2m1 {}
    impl TableLookup<f8e5m2> for f4e2m1 {}
}

/// Contexts (furiosa-opt-std/src/context.rs, stored at 4a3bd67 and unchanged in 0.6.0).
pub mod context {
    use super::*;
    use crate::__mapping::{AxisName, Symbol};
    use crate::scalar::{MaterializableScalar, Scalar};
    use crate::tensor::memory::DmTensorView;
    use crate::tensor::tu::BeginTensor;

    /// Tensor units.
    #[derive(Debug, PartialEq, Eq, ConstParamTy)]
    pub enum Tu {
        /// Main context.
        Main,
        /// Sub context.
        Sub,
    }

    /// DMA units.
    #[derive(Debug, PartialEq, Eq, ConstParamTy)]
    pub enum Dma {
        /// Tensor DMA.
        Tensor,
        /// PCIe DMA.
        Pcie,
    }

    /// Context for a specific tensor unit.
    #[derive(Debug)]
    pub struct TuContext<const T: Tu> {
        _marker: PhantomData<()>,
    }

    /// Context for a specific DMA engine.
    #[derive(Debug)]
    pub struct DmaContext<const DMA: Dma> {
        _marker: PhantomData<()>,
    }

    /// Logical device a kernel runs on, declared by `#[device(chip, pe)]`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Device {
        /// Number of chips.
        pub chip: u8,
        /// Number of PEs per chip.
        pub pe: u8,
    }

    /// Device context.
    #[derive(Debug)]
    pub struct Context {
        /// Tensor unit for the main context.
        pub main: TuContext<{ Tu::Main }>,
        /// Tensor unit for the sub context.
        pub sub: TuContext<{ Tu::Sub }>,
        /// Tensor DMA context.
        pub tdma: DmaContext<{ Dma::Tensor }>,
        /// PCIe DMA context.
        pub pdma: DmaContext<{ Dma::Pcie }>,
    }

    impl Context {
        /// Acquire the tensor units.
        pub fn acquire() -> Acquired {
            stub()
        }
    }

    /// Process-wide [`Context`] handle returned by [`Context::acquire`].
    #[derive(Debug)]
    pub struct Acquired(Box<Context>);

    impl core::ops::Deref for Acquired {
        type Target = Context;
        fn deref(&self) -> &Context {
            &self.0
        }
    }

    impl core::ops::DerefMut for Acquired {
        fn deref_mut(&mut self) -> &mut Context {
            &mut self.0
        }
    }

    impl Acquired {
        /// Binds the process to a kernel's logical device.
        pub fn bind(self, device: Device) -> Self {
            self
        }
    }

    impl<const T: Tu> TuContext<{ T }> {
        /// Begin a tensor unit operation in this context.
        pub fn begin<'l, D: MaterializableScalar, Chip: M, Cluster: M, Slice: M, Element: M>(
            &'l mut self,
            tensor: DmTensorView<'l, D, Chip, Cluster, Slice, Element>,
        ) -> BeginTensor<'l, { T }, D, Chip, Cluster, Slice, Identity, Element> {
            stub()
        }
        /// Begin a tensor unit operation in this context with interleaved
        /// tensors: the axis `I` (size 2) of the Time alternates between
        /// lhs and rhs (furiosa-opt-std/src/context.rs, 06dda28; 002 L1843-1867). Its D is any Scalar.
        pub fn begin_interleaved<'l, I: AxisName, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M>(
            &'l mut self,
            lhs: DmTensorView<'l, D, Chip, Cluster, Slice, Element>,
            rhs: DmTensorView<'l, D, Chip, Cluster, Slice, Element>,
        ) -> BeginTensor<'l, { T }, D, Chip, Cluster, Slice, Symbol<I>, Element> {
            stub()
        }
    }
}

/// Tensors (furiosa-opt-std/src/tensor/).
pub mod tensor {
    pub use self::memory::*;
    pub use self::tu::*;

    /// Tensors placed on memory (tensor/memory.rs, d4d05a7).
    pub mod memory {
        use crate::__mapping::M;
        use crate::backend::Backend;
        use crate::context::{Dma, DmaContext};
        use crate::engine::vector::VeScalar;
        use crate::runtime::CurrentBackend;
        use crate::scalar::{MaterializableScalar, Scalar};
        use crate::stub;
        use core::marker::PhantomData;

        /// Address.
        pub type Address = u64;

        /// Tensor stored in host memory.
        #[derive(Debug, Clone)]
        pub struct HostTensor<D: MaterializableScalar, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(D, Element, B)>,
        }

        impl<D: MaterializableScalar, Element: M, B: Backend> HostTensor<D, Element, B> {
            /// Creates a tensor from an initialized buffer.
            pub fn from_vec(data: impl IntoIterator<Item = D>) -> Self {
                stub()
            }
            /// Stages this host tensor into a fresh HBM region assigned by the runtime allocator.
            pub async fn to_hbm<Chip: M, Element2: M>(
                &self,
                _dma: &mut DmaContext<{ Dma::Pcie }>,
            ) -> HbmTensor<D, Chip, Element2, B> {
                stub()
            }
            /// Returns the tensor data as a flat `Vec<D>`, consuming the tensor.
            pub fn into_vec(self) -> Vec<D> {
                stub()
            }
            /// Creates a tensor filled with random values.
            pub fn rand(rng: &mut impl rand::Rng) -> Self
            where
                rand::distr::StandardUniform: rand::distr::Distribution<D>,
            {
                stub()
            }
        }

        /// Tensor stored in HBM memory.
        pub struct HbmTensor<D: Scalar, Chip: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(D, Chip, Element, B)>,
        }

        impl<D: Scalar, Chip: M, Element: M, B: Backend> core::fmt::Debug for HbmTensor<D, Chip, Element, B> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("HbmTensor")
            }
        }

        impl<D: Scalar, Chip: M, Element: M, B: Backend> HbmTensor<D, Chip, Element, B> {
            /// A fresh HBM tensor, for a device function's output.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                stub()
            }
            /// Size of the packed device image in bytes.
            pub fn size() -> usize {
                stub()
            }
            /// Converts to host tensor.
            pub async fn to_host<Element2: M>(&self, _dma: &mut DmaContext<{ Dma::Pcie }>) -> HostTensor<D, Element2, B>
            where
                D: MaterializableScalar,
            {
                stub()
            }
            /// Returns the tensor data as a flat logical `Vec<D>`.
            pub fn into_vec(self) -> Vec<D>
            where
                D: MaterializableScalar,
            {
                stub()
            }
            /// Converts to data memory tensor.
            pub fn to_dm<Cluster: M, Slice: M, Element2: M>(
                &self,
                _dma: &mut DmaContext<{ Dma::Tensor }>,
            ) -> DmTensor<D, Chip, Cluster, Slice, Element2, B> {
                stub()
            }
        }

        impl<D: MaterializableScalar, Chip: M, Element: M, B: Backend> HbmTensor<D, Chip, Element, B> {
            /// Creates an immutable view of the tensor.
            pub fn view<'l>(&'l self) -> HbmTensorView<'l, D, Chip, Element, B> {
                stub()
            }
            /// Creates a mutable view of the tensor.
            pub fn view_mut<'l>(&'l mut self) -> HbmTensorViewMut<'l, D, Chip, Element, B> {
                stub()
            }
            /// Converts to an HBM tensor.
            pub fn to_hbm<const DMA: Dma, Element2: M>(&self, _dma: &mut DmaContext<{ DMA }>) -> HbmTensor<D, Chip, Element2, B> {
                stub()
            }
        }

        /// View of an HBM tensor.
        #[derive(Debug, Clone)]
        pub struct HbmTensorView<'l, D: Scalar, Chip: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(&'l (), D, Chip, Element, B)>,
        }

        impl<'l, D: Scalar, Chip: M, Element: M, B: Backend> HbmTensorView<'l, D, Chip, Element, B> {
            /// Writes to HBM tensor view.
            pub fn to_hbm_view<const DMA: Dma, Chip2: M, Element2: M>(
                self,
                _dma: &mut DmaContext<{ DMA }>,
                dst: HbmTensorViewMut<'l, D, Chip2, Element2, B>,
            ) {
                stub()
            }
            /// Writes to data memory tensor view.
            pub fn to_dm_view<Chip2: M, Cluster: M, Slice: M, Element2: M>(
                self,
                _dma: &mut DmaContext<{ Dma::Tensor }>,
                dst: DmTensorViewMut<'l, D, Chip2, Cluster, Slice, Element2, B>,
            ) {
                stub()
            }
            /// Creates immutable views by splitting along a tile expression.
            pub fn tile<Index: M, const LEN: usize, Element2: M>(
                &self,
                start: usize,
            ) -> HbmTensorView<'l, D, Chip, Element2, B> {
                stub()
            }
        }

        impl<'l, D: MaterializableScalar, Chip: M, Element: M, B: Backend> HbmTensorView<'l, D, Chip, Element, B> {
            /// Converts to data memory tensor.
            pub fn to_dm<Cluster: M, Slice: M, Element2: M>(
                self,
                _dma: &mut DmaContext<{ Dma::Tensor }>,
            ) -> DmTensor<D, Chip, Cluster, Slice, Element2, B> {
                stub()
            }
        }

        /// Mutable view of an HBM tensor.
        #[derive(Debug)]
        pub struct HbmTensorViewMut<'l, D: Scalar, Chip: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(&'l mut (), D, Chip, Element, B)>,
        }

        impl<'l, D: Scalar, Chip: M, Element: M, B: Backend> HbmTensorViewMut<'l, D, Chip, Element, B> {
            /// Creates mutable views by splitting along a tile expression (consumes the view).
            pub fn tile<Index: M, const LEN: usize, Element2: M>(self, start: usize) -> HbmTensorViewMut<'l, D, Chip, Element2, B> {
                stub()
            }
        }

        /// Tensor stored in data memory.
        #[derive(Debug)]
        pub struct DmTensor<D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(D, Chip, Cluster, Slice, Element, B)>,
        }

        impl<D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend> DmTensor<D, Chip, Cluster, Slice, Element, B> {
            /// Creates a fresh DM tensor handle with no assigned address.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                stub()
            }
            /// Creates immutable views.
            pub fn view<'l>(&'l self) -> DmTensorView<'l, D, Chip, Cluster, Slice, Element, B> {
                stub()
            }
            /// Creates mutable views.
            pub fn view_mut<'l>(&'l mut self) -> DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element, B> {
                stub()
            }
            /// Converts to an HBM tensor.
            pub fn to_hbm<Element2: M>(&self, _dma: &mut DmaContext<{ Dma::Tensor }>) -> HbmTensor<D, Chip, Element2, B> {
                stub()
            }
            /// Converts to data memory tensor.
            pub fn to_dm<Slice2: M, Element2: M>(
                &self,
                _dma: &mut DmaContext<{ Dma::Tensor }>,
            ) -> DmTensor<D, Chip, Cluster, Slice2, Element2, B> {
                stub()
            }
        }

        /// Mutable view of a data memory tensor.
        #[derive(Debug)]
        pub struct DmTensorViewMut<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(&'l mut (), D, Chip, Cluster, Slice, Element, B)>,
        }

        /// View of a data memory tensor.
        #[derive(Debug, Clone)]
        pub struct DmTensorView<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(&'l (), D, Chip, Cluster, Slice, Element, B)>,
        }

        impl<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend> DmTensorView<'l, D, Chip, Cluster, Slice, Element, B> {
            /// Writes data to a mutable tensor view for HBM.
            pub fn to_hbm_view<Chip2: M, Element2: M>(
                self,
                _dma: &mut DmaContext<{ Dma::Tensor }>,
                dst: HbmTensorViewMut<'l, D, Chip2, Element2, B>,
            ) {
                stub()
            }
            /// Writes data to a mutable tensor view for data memory.
            pub fn to_dm_view<Chip2: M, Cluster2: M, Slice2: M, Element2: M>(
                self,
                _dma: &mut DmaContext<{ Dma::Tensor }>,
                dst: DmTensorViewMut<'l, D, Chip2, Cluster2, Slice2, Element2, B>,
            ) {
                stub()
            }
            /// Creates immutable views by splitting along a tile expression over Element.
            pub fn tile<Index: M, const LEN: usize, Element2: M>(
                &self,
                start: usize,
            ) -> DmTensorView<'l, D, Chip, Cluster, Slice, Element2, B> {
                stub()
            }
        }

        impl<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend> DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element, B> {
            /// Creates mutable views by splitting along a tile expression over Element.
            pub fn tile<Index: M, const LEN: usize, Element2: M>(
                self,
                start: usize,
            ) -> DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element2, B> {
                stub()
            }
        }

        /// Tensor stored in the tensor register file.
        #[derive(Debug)]
        pub struct TrfTensor<D: Scalar, Chip: M, Cluster: M, Slice: M, Lane: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(D, Chip, Cluster, Slice, Lane, Element, B)>,
        }

        impl<D: Scalar, Chip: M, Cluster: M, Slice: M, Lane: M, Element: M, B: Backend> TrfTensor<D, Chip, Cluster, Slice, Lane, Element, B> {
            /// A fresh TRF tensor, placed by the compiler.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                stub()
            }
        }

        /// Tensor stored in the vector register file (VRF).
        #[derive(Debug, Clone)]
        pub struct VrfTensor<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend = CurrentBackend> {
            _m: PhantomData<(D, Chip, Cluster, Slice, Element, B)>,
        }

        impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M, B: Backend> VrfTensor<D, Chip, Cluster, Slice, Element, B> {
            /// A fresh VRF tensor, placed by the compiler.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                stub()
            }
        }
    }

    /// The Tensor Unit stream typestate (tensor/tu.rs, 423b285).
    pub mod tu {
        use crate::__mapping::M;
        use crate::backend::Backend;
        use crate::context::{Tu, TuContext};
        use crate::runtime::CurrentBackend;
        use crate::scalar::Scalar;
        use core::marker::PhantomData;

        /// Marker trait for pipeline position of Tensor Unit tensors.
        pub trait Position: core::fmt::Debug + 'static {}

        /// After beginning the pipeline.
        #[derive(Debug)]
        pub struct PositionBegin;
        impl Position for PositionBegin {}

        /// Tensor streamed through the Tensor Unit pipeline.
        #[derive(Debug)]
        pub struct TuTensor<
            'l,
            const T: Tu,
            P: Position,
            D: Scalar,
            Chip: M,
            Cluster: M,
            Slice: M,
            Time: M,
            Packet: M,
            B: Backend = CurrentBackend,
        > {
            pub(crate) ctx: &'l mut TuContext<{ T }>,
            pub(crate) _m: PhantomData<(P, D, Chip, Cluster, Slice, Time, Packet, B)>,
        }

        /// Tensor streamed after the beginning.
        pub type BeginTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet, B = CurrentBackend> =
            TuTensor<'l, { T }, PositionBegin, D, Chip, Cluster, Slice, Time, Packet, B>;
    }
}

/// The Tensor Unit engines (furiosa-opt-std/src/engine/, d4d05a7: mod.rs
/// holds the pipeline adjacency restated here; fetch.rs, fetch_adapter.rs,
/// switch.rs, collect.rs, contraction/, cast.rs, transpose.rs,
/// commit_adapter.rs, commit.rs the methods).
pub mod engine {
    use crate::__mapping::M;
    use crate::backend::Backend;
    use crate::cast::{Cast, CastEngineCast, CommitCast, ContractionAccumulator, ContractionCast, ContractionWeight, FetchCast};
    use crate::context::{Tu, TuContext};
    use crate::runtime::CurrentBackend;
    use crate::scalar::{MaterializableScalar, Scalar};
    use crate::stub;
    use crate::tensor::memory::{DmTensor, DmTensorViewMut, TrfTensor, VrfTensor};
    use crate::tensor::tu::{Position, PositionBegin, TuTensor};
    use core::marker::PhantomData;

    pub use self::vector::*;

    macro_rules! positions {
        ($($p:ident => $alias:ident),* $(,)?) => { $(
            #[derive(Debug)]
            #[doc = concat!("The position after `", stringify!($alias), "`'s stage.")]
            pub struct $p;
            impl Position for $p {}
            #[doc = concat!("A tensor at `", stringify!($p), "`.")]
            pub type $alias<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet, B = CurrentBackend> =
                TuTensor<'l, { T }, $p, D, Chip, Cluster, Slice, Time, Packet, B>;
        )* };
    }
    positions!(
        PositionFetch => FetchTensor,
        PositionFetchMask => FetchMaskTensor,
        PositionFetchTableLookup => FetchTableLookupTensor,
        PositionFetchCast => FetchCastTensor,
        PositionFetchZeroPointSub => FetchZeroPointSubTensor,
        PositionSwitch => SwitchTensor,
        PositionCollect => CollectTensor,
        PositionContraction => ContractTensor,
        PositionCast => CastTensor,
        PositionTranspose => TransposeTensor,
        PositionCommitTrim => CommitTrimTensor,
        PositionCommitCast => CommitCastTensor,
        PositionCommitValidCountPack => CommitValidCountPackTensor,
        PositionVectorFinal => VectorFinalTensor,
    );

    macro_rules! can_apply {
        ($($tr:ident: $($p:ident),*;)*) => { $(
            #[doc = concat!("Source positions that can enter `", stringify!($tr), "`'s stage.")]
            pub trait $tr: Position {}
            $(impl $tr for $p {})*
        )* };
    }
    can_apply! {
        CanApplyFetch: PositionBegin;
        CanApplyFetchMask: PositionFetch;
        CanApplyFetchTableLookup: PositionFetch, PositionFetchMask;
        CanApplyFetchCast: PositionFetch, PositionFetchMask, PositionFetchTableLookup;
        CanApplyFetchZeroPointSub: PositionFetch, PositionFetchMask, PositionFetchTableLookup, PositionFetchCast;
        CanApplySwitch: PositionFetch, PositionFetchMask, PositionFetchTableLookup, PositionFetchCast, PositionFetchZeroPointSub;
        CanApplyCollect: PositionFetch, PositionFetchMask, PositionFetchTableLookup, PositionFetchCast, PositionFetchZeroPointSub, PositionSwitch;
        CanApplyToTrf: PositionCollect;
        CanApplyToVrf: PositionCollect, PositionVectorFinal;
        CanApplyContractOuter: PositionCollect;
        CanApplyVectorInit: PositionCollect, PositionContraction;
        CanApplyCast: PositionCollect, PositionContraction, PositionVectorFinal;
        CanApplyTranspose: PositionCollect, PositionContraction, PositionVectorFinal, PositionCast;
        CanApplyCommitTrim: PositionCollect, PositionContraction, PositionVectorFinal, PositionCast, PositionTranspose;
        CanApplyCommitCast: PositionCommitTrim;
        CanApplyCommitValidCountPack: PositionCommitTrim;
        CanApplyCommit: PositionCommitTrim, PositionCommitCast, PositionCommitValidCountPack;
    }

    /// Configuration for the switch (furiosa-opt-lower-types/src/switch.rs).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum SwitchConfig {
        /// Passes each slice's data through unchanged.
        Forwarding,
        /// Replicates data across slices along slice dimensions 0 and 1.
        Broadcast01 {
            /// Slice dimension 1 size.
            slice1: usize,
            /// Slice dimension 0 size.
            slice0: usize,
            /// Time dimension 0 size.
            time0: usize,
        },
        /// Replicates data across slices along slice dimension 1.
        Broadcast1 {
            /// Slice dimension 1 size.
            slice1: usize,
            /// Slice dimension 0 size.
            slice0: usize,
        },
        /// Swaps slice1 and slice0.
        Transpose {
            /// Slice dimension 1 size.
            slice1: usize,
            /// Slice dimension 0 size.
            slice0: usize,
        },
        /// Swaps and transposes between the slice and time dimensions.
        InterTranspose {
            /// Slice dimension 1 size.
            slice1: usize,
            /// Slice dimension 0 size.
            slice0: usize,
            /// Time dimension 0 size.
            time0: usize,
        },
        /// Routes data across slices using a custom snoop bitmap.
        CustomBroadcast {
            /// Ring group size.
            ring_size: usize,
        },
        /// `Transpose` and `Broadcast1` at once.
        TransposedBroadcast1 {
            /// Slice dimension 1 size.
            slice1: usize,
            /// Slice dimension 0 size.
            slice0: usize,
        },
    }

    /// Contraction mode for the Lane Folder (contraction/lane.rs).
    #[derive(Clone, Debug)]
    pub enum LaneMode {
        /// Interleaved.
        Interleaved,
        /// Sequential.
        Sequential,
    }

    // fetch.rs
    impl<'l, const T: Tu, P: CanApplyFetch, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Runs the Fetch Sequencer; the element type is unchanged.
        pub fn fetch<OutTime: M, OutPacket: M>(self) -> FetchTensor<'l, T, D, Chip, Cluster, Slice, OutTime, OutPacket, B> {
            stub()
        }
    }

    // fetch_adapter.rs
    impl<'l, const T: Tu, P: CanApplyFetchCast, D: MaterializableScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Runs the Fetch Adapter's type-casting stage.
        pub fn fetch_cast<OutD: Scalar>(self) -> FetchCastTensor<'l, T, OutD, Chip, Cluster, Slice, Time, Packet, B>
        where
            D: FetchCast<OutD>,
        {
            stub()
        }
    }

    // switch.rs
    impl<'l, const T: Tu, P: CanApplySwitch, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Applies switching network routing only.
        pub fn switch<OutSlice: M, OutTime: M>(
            self,
            config: SwitchConfig,
        ) -> SwitchTensor<'l, T, D, Chip, Cluster, OutSlice, OutTime, Packet, B> {
            stub()
        }
    }

    // collect.rs
    impl<'l, const T: Tu, P: CanApplyCollect, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Normalizes packet to exactly 32 bytes (one flit).
        pub fn collect<Time2: M, Packet2: M>(self) -> CollectTensor<'l, T, D, Chip, Cluster, Slice, Time2, Packet2, B> {
            stub()
        }
    }

    impl<'l, const T: Tu, P: CanApplyToTrf, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Stores to the tensor register file.
        pub fn to_trf<Lane: M, Element: M>(self) -> TrfTensor<D, Chip, Cluster, Slice, Lane, Element, B> {
            stub()
        }
    }

    impl<'l, const T: Tu, P: CanApplyToVrf, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Stores to the vector register file.
        pub fn to_vrf<Element: M>(self) -> VrfTensor<D, Chip, Cluster, Slice, Element, B> {
            stub()
        }
    }

    /// Output of the Outer stage (contraction/outer/mod.rs).
    #[derive(Debug)]
    pub struct ContractOuterTensor<
        'l,
        const T: Tu,
        D: Scalar,
        Storage: ContractionCast<Output = D>,
        Chip: M,
        Cluster: M,
        Slice: M,
        Lane: M,
        Time: M,
        Packet: M,
        B: Backend = CurrentBackend,
    > {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(D, Storage, Chip, Cluster, Slice, Lane, Time, Packet, B)>,
    }

    /// After the Packet Reducer (contraction/mod.rs).
    #[derive(Debug)]
    pub struct ContractPacketTensor<
        'l,
        const T: Tu,
        D: Scalar,
        Chip: M,
        Cluster: M,
        Slice: M,
        Lane: M,
        Time: M,
        Packet: M,
        B: Backend = CurrentBackend,
    > {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(D, Chip, Cluster, Slice, Lane, Time, Packet, B)>,
    }

    /// After the Time Reducer (contraction/mod.rs).
    #[derive(Debug)]
    pub struct ContractTimeTensor<
        'l,
        const T: Tu,
        D: Scalar,
        Chip: M,
        Cluster: M,
        Slice: M,
        Lane: M,
        Time: M,
        Packet: M,
        B: Backend = CurrentBackend,
    > {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(D, Chip, Cluster, Slice, Lane, Time, Packet, B)>,
    }

    impl<'l, const T: Tu, P: CanApplyContractOuter, D: Scalar + ContractionCast, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Runs the Outer stage against a TRF tensor.
        pub fn contract_outer<OutTime: M, OutPacket: M, Lane: M, TrfElement: M, TrfD>(
            self,
            trf_tensor: &TrfTensor<TrfD, Chip, Cluster, Slice, Lane, TrfElement, B>,
        ) -> ContractOuterTensor<'l, T, <D as ContractionCast>::Output, D, Chip, Cluster, Slice, Lane, OutTime, OutPacket, B>
        where
            D: Cast<<D as ContractionCast>::Output>,
            TrfD: Scalar + ContractionWeight<D> + Cast<<D as ContractionCast>::Output>,
        {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Storage: ContractionCast<Output = D>, Chip: M, Cluster: M, Slice: M, Lane: M, Time: M, Packet: M, B: Backend>
        ContractOuterTensor<'l, T, D, Storage, Chip, Cluster, Slice, Lane, Time, Packet, B>
    {
        /// Spatial reduction within `Packet`.
        pub fn contract_packet<OutPacket: M>(self) -> ContractPacketTensor<'l, T, D, Chip, Cluster, Slice, Lane, Time, OutPacket, B> {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Lane: M, Time: M, Packet: M, B: Backend>
        ContractPacketTensor<'l, T, D, Chip, Cluster, Slice, Lane, Time, Packet, B>
    {
        /// Accumulates over `Time`, shrinking it to `OutTime`.
        pub fn contract_time<OutTime: M>(self) -> ContractTimeTensor<'l, T, D, Chip, Cluster, Slice, Lane, OutTime, Packet, B> {
            stub()
        }
    }

    impl<'l, const T: Tu, D: ContractionAccumulator, Chip: M, Cluster: M, Slice: M, Lane: M, Time: M, Packet: M, B: Backend>
        ContractTimeTensor<'l, T, D, Chip, Cluster, Slice, Lane, Time, Packet, B>
    {
        /// Folds the `Lane` dimension into the output stream.
        pub fn contract_lane<OutTime: M, OutPacket: M>(self, mode: LaneMode) -> ContractTensor<'l, T, D, Chip, Cluster, Slice, OutTime, OutPacket, B> {
            stub()
        }
    }

    // cast.rs
    impl<'l, const T: Tu, P: CanApplyCast, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Casts each element to `OutD` and pads the output packet to one flit.
        pub fn cast<OutD: Scalar, OutPacket: M>(self) -> CastTensor<'l, T, OutD, Chip, Cluster, Slice, Time, OutPacket, B>
        where
            D: CastEngineCast<OutD>,
        {
            stub()
        }
    }

    // transpose.rs
    impl<'l, const T: Tu, P: CanApplyTranspose, D: MaterializableScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Performs transpose operation.
        pub fn transpose<OutTime: M, OutPacket: M>(self) -> TransposeTensor<'l, T, D, Chip, Cluster, Slice, OutTime, OutPacket, B> {
            stub()
        }
    }

    // commit_adapter.rs
    impl<'l, const T: Tu, P: CanApplyCommitTrim, D: MaterializableScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Runs the Commit Adapter's trimming stage.
        pub fn commit_trim<OutPacket: M>(self) -> CommitTrimTensor<'l, T, D, Chip, Cluster, Slice, Time, OutPacket, B> {
            stub()
        }
    }

    impl<'l, const T: Tu, P: CanApplyCommitCast, D: MaterializableScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Runs the Commit Adapter's type-casting stage (`f32 -> bf16`).
        pub fn commit_cast<OutD: Scalar>(self) -> CommitCastTensor<'l, T, OutD, Chip, Cluster, Slice, Time, Packet, B>
        where
            D: CommitCast<OutD>,
        {
            stub()
        }
    }

    // commit.rs
    impl<'l, const T: Tu, P: CanApplyCommit, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
        TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
    {
        /// Commits to data memory.
        pub fn commit<Element: M>(self) -> DmTensor<D, Chip, Cluster, Slice, Element, B> {
            stub()
        }
        /// Commits to a mutable tensor view in data memory.
        pub fn commit_view<Element: M>(self, dst: DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element, B>) {
            stub()
        }
    }

    /// The Vector Engine (engine/vector/, d4d05a7; stage/markers.rs and
    /// op/mod.rs at 423b285): the entry (`vector_init`, the tag unit, the
    /// inter-slice reducer), the intra-slice stages of a single stream with
    /// their typestate (stage, stash slot, entry order, context, way), the
    /// operand forms (a constant, `&VrfTensor`, `Stash`, a `Branched`
    /// layout) and `vector_final`, and the two-group pair
    /// (vector_tensor_pair.rs: unzip, the per-group ops, the `_zip` ops).
    pub mod vector {
        use crate::__mapping::{AxisName, Pair, M};
        use crate::backend::Backend;
        use crate::context::{Tu, TuContext};
        use crate::scalar::Scalar;
        use crate::stub;
        use crate::tensor::memory::VrfTensor;
        use crate::tensor::tu::TuTensor;
        use core::marker::PhantomData;

        pub use self::stage::{VeOrder, Way};
        pub use self::stash_slot::{Fresh, Occupied, Spent, StashState};

        /// Scalar types the Vector Engine supports: i32 and f32 (engine/vector/scalar.rs).
        pub trait VeScalar: Scalar {}
        impl VeScalar for i32 {}
        impl VeScalar for f32 {}

        /// A VE stream's five-axis mapping (engine/vector/tensor/mod.rs
        /// `m![{ Chip }, { Cluster }, { Slice }, { Time }, { Packet }]`).
        pub type VeTensorShape<Chip, Cluster, Slice, Time, Packet> = Pair<Chip, Pair<Cluster, Pair<Slice, Pair<Time, Packet>>>>;

        // ---- the guard vocabulary (furiosa-opt-common-ir/src/lib.rs, re-exported by engine/vector/branch.rs)

        /// One of the two groups: bit 3 of the execution id.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum GroupId {
            /// Group 0.
            Zero,
            /// Group 1.
            One,
        }

        /// Requirement on one execution-id bit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum BitReq {
            /// The bit must be 1.
            One,
            /// The bit must be 0.
            Zero,
            /// The bit is unconstrained.
            #[default]
            Ignore,
        }

        /// Predicate gating one operand slot on the element's execution id.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct TagGuard([BitReq; 4], bool);

        impl TagGuard {
            /// Applies to every element.
            pub const fn all() -> Self {
                Self([BitReq::Ignore; 4], false)
            }
            /// Applies where the execution id satisfies `bits`.
            pub const fn matches(bits: [BitReq; 4]) -> Self {
                Self(bits, false)
            }
            /// Applies where the execution id does not satisfy `bits`.
            pub const fn not_matches(bits: [BitReq; 4]) -> Self {
                Self(bits, true)
            }
            /// Applies to one group.
            pub const fn group(id: GroupId) -> Self {
                let bit3 = match id {
                    GroupId::Zero => BitReq::Zero,
                    GroupId::One => BitReq::One,
                };
                Self([BitReq::Ignore, BitReq::Ignore, BitReq::Ignore, bit3], false)
            }
        }

        // ---- the tag unit (engine/vector/branch.rs)

        /// One comparison of the tag unit, typed by the stream it reads (`Cmp<D>`).
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum Cmp<D: VeScalar> {
            /// Equal to the boundary.
            Equal(D),
            /// Less than the boundary.
            Less(D),
            /// Greater than the boundary.
            Greater(D),
            /// Less, the bit patterns read as unsigned.
            LessUnsigned(D),
            /// Greater, the bit patterns read as unsigned.
            GreaterUnsigned(D),
            /// Always set the bit.
            True,
            /// Never set the bit.
            False,
        }

        /// Tag mode configuration (`TagMode<D: VeScalar>`; `ValidCount` and `Vrf` are withheld).
        #[derive(Debug, Clone)]
        pub enum TagMode<D: VeScalar> {
            /// No branching: every element with tag 0.
            Zero,
            /// Toggle the group id on an axis index.
            AxisToggle {
                /// The axis (furiosa-mapping's `Ident`, not restated: tcpmap does not emit it).
                axis: &'static str,
            },
            /// Each tag bit from a comparison.
            Comparison([Cmp<D>; 4]),
        }

        /// What a slot's register-file port reads.
        #[derive(Debug)]
        pub enum RfPort<D: VeScalar, Mapping: M> {
            /// An external register.
            External(PhantomData<(D, Mapping)>),
            /// The stash.
            Stash,
        }

        // ---- ops (engine/vector/op/mod.rs, op/arg_mode.rs, alu.rs)

        /// The Fp cluster's two multipliers (engine/vector/alu.rs).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FpMulAlu {
            /// Multiplier 0.
            Mul0,
            /// Multiplier 1.
            Mul1,
        }

        /// Logic cluster binary operations for i32.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum LogicBinaryOpI32 {
            /// Bitwise AND.
            BitAnd,
            /// Bitwise OR.
            BitOr,
            /// Bitwise XOR.
            BitXor,
            /// Left shift.
            LeftShift,
            /// Logical right shift.
            LogicRightShift,
            /// Arithmetic right shift.
            ArithRightShift,
        }

        /// Logic cluster binary operations for f32.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum LogicBinaryOpF32 {
            /// Bitwise AND.
            BitAnd,
            /// Bitwise OR.
            BitOr,
            /// Bitwise XOR.
            BitXor,
        }

        /// Fixed-point binary operations.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FxpBinaryOp {
            /// Fixed-point add (wrapping).
            AddFxp,
            /// Fixed-point add (saturating).
            AddFxpSat,
            /// Fixed-point subtract (wrapping).
            SubFxp,
            /// Fixed-point subtract (saturating).
            SubFxpSat,
            /// Left shift.
            LeftShift,
            /// Left shift (saturating).
            LeftShiftSat,
            /// Fixed-point multiply.
            MulFxp,
            /// Integer multiply.
            MulInt,
            /// Logical right shift.
            LogicRightShift,
            /// Arithmetic right shift.
            ArithRightShift,
            /// Arithmetic right shift with rounding.
            ArithRightShiftRound,
        }

        /// Fp unary operations.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FpUnaryOp {
            /// e^x.
            Exp,
            /// e^(-x).
            NegExp,
            /// Square root.
            Sqrt,
            /// Hyperbolic tangent.
            Tanh,
            /// Sigmoid.
            Sigmoid,
            /// Error function.
            Erf,
            /// Natural logarithm.
            Log,
            /// Sine.
            Sin,
            /// Cosine.
            Cos,
        }

        /// Fp binary operations.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FpBinaryOp {
            /// Addition.
            AddF,
            /// Subtraction.
            SubF,
            /// Multiplication on one of the two multipliers.
            MulF(FpMulAlu),
            /// Division.
            DivF,
        }

        /// Fp ternary operations.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FpTernaryOp {
            /// Fused multiply-add.
            FmaF,
        }

        /// Intra-slice reduce operations for i32.
        #[derive(Debug, Clone, Copy)]
        pub enum IntraSliceReduceOpI32 {
            /// Saturating addition.
            AddSat,
            /// Maximum.
            Max,
            /// Minimum.
            Min,
        }

        /// Intra-slice reduce operations for f32.
        #[derive(Debug, Clone, Copy)]
        pub enum IntraSliceReduceOpF32 {
            /// Addition.
            Add,
            /// Maximum.
            Max,
            /// Minimum.
            Min,
        }

        /// Inter-slice reduce operations on i32.
        #[derive(Debug, Clone, Copy)]
        pub enum InterSliceReduceOpI32 {
            /// Addition.
            Add,
            /// Saturating addition.
            AddSat,
            /// Maximum.
            Max,
            /// Minimum.
            Min,
        }

        /// Inter-slice reduce operations on f32.
        #[derive(Debug, Clone, Copy)]
        pub enum InterSliceReduceOpF32 {
            /// Addition.
            Add,
            /// Maximum.
            Max,
            /// Minimum.
            Min,
            /// Multiplication.
            Mul,
        }

        /// FpDiv binary operations (implicit in `vector_fp_div`).
        #[derive(Debug, Clone, Copy)]
        pub enum FpDivBinaryOp {
            /// Division.
            DivF,
        }

        /// Clip binary operations for i32.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ClipBinaryOpI32 {
            /// Minimum.
            Min,
            /// Maximum.
            Max,
            /// Absolute minimum.
            AbsMin,
            /// Absolute maximum.
            AbsMax,
            /// Fixed-point add (wrapping).
            AddFxp,
            /// Fixed-point add (saturating).
            AddFxpSat,
        }

        /// Clip binary operations for f32.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ClipBinaryOpF32 {
            /// Minimum.
            Min,
            /// Maximum.
            Max,
            /// Absolute minimum.
            AbsMin,
            /// Absolute maximum.
            AbsMax,
            /// Addition.
            Add,
        }

        /// Binary argument mode: ModeXY is op(argX, argY), 0 the stream, 1 operand0.
        #[derive(Debug, Clone, Copy)]
        pub enum BinaryArgMode {
            /// op(mainstream, mainstream).
            Mode00,
            /// op(mainstream, operand0).
            Mode01,
            /// op(operand0, mainstream).
            Mode10,
            /// op(operand0, operand0).
            Mode11,
        }

        /// Ternary argument mode: ModeXYZ, 0 the stream, 1 operand0, 2 operand1.
        #[derive(Debug, Clone, Copy)]
        pub enum TernaryArgMode {
            /// op(m, o0, o1).
            Mode012,
            /// op(m, m, o1).
            Mode002,
            /// op(o0, m, o1).
            Mode102,
            /// op(o0, o0, o1).
            Mode112,
            /// op(m, o1, m).
            Mode020,
            /// op(m, o1, o0).
            Mode021,
            /// op(o0, o1, m).
            Mode120,
        }

        /// Pipeline stages, contexts, entry order and way (engine/vector/stage/markers.rs).
        pub mod stage {
            use core::marker::ConstParamTy;

            /// Tensor context markers.
            pub trait VeTensorContext {}
            /// A single stream.
            #[derive(Debug, Clone, Copy)]
            pub struct Standalone;
            impl VeTensorContext for Standalone {}
            /// One group of a pair.
            #[derive(Debug, Clone, Copy)]
            pub struct Group;
            impl VeTensorContext for Group {}
            /// The zipped pair.
            #[derive(Debug, Clone, Copy)]
            pub struct Zipped;
            impl VeTensorContext for Zipped {}
            /// Contexts that can commit.
            pub trait Commitable: VeTensorContext {}
            impl Commitable for Standalone {}
            impl Commitable for Zipped {}

            /// Which VE block was entered first.
            #[derive(Debug, Clone, Copy, PartialEq, Eq, ConstParamTy)]
            pub enum VeOrder {
                /// The intra-slice chain.
                IntraFirst,
                /// The inter-slice reducer.
                InterFirst,
            }

            /// 8-way or 4-way packets.
            #[derive(Debug, Clone, Copy, PartialEq, Eq, ConstParamTy)]
            pub enum Way {
                /// The full 8-element flit.
                Way8,
                /// The front 4 elements (float ops).
                Way4,
            }

            /// A stage.
            pub trait Stage {}
            /// Intra-slice stages: Tag through Clip.
            pub trait IntraSliceStage: Stage {}
            /// Inter-slice stages.
            pub trait InterSliceStage: Stage {}
            /// Stages that may stash: Tag, Logic, Fxp, Narrow, Fp, FpDiv, Clip.
            pub trait Stashable: Stage {}
            /// Stage transitions.
            pub trait CanTransitionTo<Target: Stage> {}

            macro_rules! stages {
                ($($s:ident: $($tr:ident),*;)*) => {$(
                    /// A stage marker.
                    #[derive(Debug, Clone, Copy)]
                    pub struct $s;
                    impl Stage for $s {}
                    $(impl $tr for $s {})*
                )*};
            }
            stages! {
                Tag: IntraSliceStage, Stashable;
                Logic: IntraSliceStage, Stashable;
                Fxp: IntraSliceStage, Stashable;
                FxpToFp: IntraSliceStage;
                Narrow: IntraSliceStage, Stashable;
                Fp: IntraSliceStage, Stashable;
                IntraSliceReduce: IntraSliceStage;
                FpDiv: IntraSliceStage, Stashable;
                Widen: IntraSliceStage;
                FpToFxp: IntraSliceStage;
                Clip: IntraSliceStage, Stashable;
                InterSliceReduce: InterSliceStage;
                Filter: ;
                Output: ;
            }

            macro_rules! transitions {
                ($($to:ident <- $($from:ident),*;)*) => {$($(impl CanTransitionTo<$to> for $from {})*)*};
            }
            transitions! {
                Logic <- Tag, Logic;
                Fxp <- Tag, Logic, Fxp;
                FxpToFp <- Tag, Logic, Fxp;
                Narrow <- Tag, Logic, Fxp, FxpToFp;
                Fp <- Tag, Logic, Fxp, FxpToFp, Narrow, Fp;
                IntraSliceReduce <- Tag, Logic, Fxp, FxpToFp, Narrow, Fp;
                FpDiv <- Tag, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce;
                Widen <- Tag, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv;
                FpToFxp <- Tag, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen;
                Clip <- Tag, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip;
                Tag <- InterSliceReduce;
                Filter <- InterSliceReduce, Tag, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip;
                Output <- InterSliceReduce, Tag, Logic, Fxp, Filter, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip, Output;
                InterSliceReduce <- Logic, Fxp, FxpToFp, Widen, FpToFxp, Clip;
            }
        }

        /// The stash slot's typestate (engine/vector/stash_slot.rs):
        /// `Fresh --vector_stash--> Occupied<D, Mapping, W> --Stash read--> Spent`.
        pub mod stash_slot {
            use super::{VeScalar, Way};
            use crate::__mapping::M;
            use core::marker::PhantomData;

            mod sealed {
                pub trait Sealed {}
            }
            /// Occupancy of the stash slot.
            pub trait StashState: core::fmt::Debug + sealed::Sealed {}
            /// Never written.
            #[derive(Debug)]
            pub struct Fresh;
            impl StashState for Fresh {}
            impl sealed::Sealed for Fresh {}
            /// Written and read.
            #[derive(Debug)]
            pub struct Spent;
            impl StashState for Spent {}
            impl sealed::Sealed for Spent {}
            /// Holds a tensor written at way `W`.
            pub struct Occupied<D: VeScalar, Mapping: M, const W: Way> {
                data: PhantomData<(D, Mapping)>,
            }
            impl<D: VeScalar, Mapping: M, const W: Way> core::fmt::Debug for Occupied<D, Mapping, W> {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("Occupied")
                }
            }
            impl<D: VeScalar, Mapping: M, const W: Way> StashState for Occupied<D, Mapping, W> {}
            impl<D: VeScalar, Mapping: M, const W: Way> sealed::Sealed for Occupied<D, Mapping, W> {}
        }

        // ---- operands (engine/vector/operand.rs)

        mod sealed {
            pub trait Sealed {}
            pub trait SlotSealed {}
        }

        /// The operand that reads the stash (read-once).
        #[derive(Debug, Clone, Copy)]
        pub struct Stash;

        /// An operand that leaves the stash slot alone (everything but `Stash`).
        pub trait Plain: sealed::Sealed {}

        /// How an operand moves the stash slot, for a reader of scalar `RD` on a way-`W` pipeline.
        pub trait StashTransition<S: StashState, RD: VeScalar, const W: Way> {
            /// The stash typestate after this operand.
            type Next: StashState;
        }
        impl<S: StashState, RD: VeScalar, T: Plain, const W: Way> StashTransition<S, RD, W> for T {
            type Next = S;
        }
        impl<D: VeScalar, StashMapping: M, const W: Way> StashTransition<Occupied<D, StashMapping, W>, D, W> for Stash {
            type Next = Spent;
        }
        impl<D: VeScalar, StashMapping: M, const W: Way> StashTransition<Occupied<D, StashMapping, W>, D, W> for (Stash, f32) {
            type Next = Spent;
        }

        /// The builder's stash slot is empty.
        #[derive(Debug, Clone, Copy)]
        pub struct NoStash;
        /// The builder's rf port reads the stash.
        #[derive(Debug, Clone, Copy)]
        pub struct WithStash;
        /// One immediate register spoken for.
        #[derive(Debug, Clone, Copy)]
        pub struct OneReg;
        /// Two immediate registers spoken for.
        #[derive(Debug, Clone, Copy)]
        pub struct TwoRegs;
        /// Three immediate registers spoken for.
        #[derive(Debug, Clone, Copy)]
        pub struct ThreeRegs;
        /// The rf port filled, last.
        #[derive(Debug, Clone, Copy)]
        pub struct AtRf;

        /// A position with an immediate register left.
        pub trait CanAppendImm {
            /// The position after one more immediate.
            type Next;
        }
        impl CanAppendImm for OneReg {
            type Next = TwoRegs;
        }
        impl CanAppendImm for TwoRegs {
            type Next = ThreeRegs;
        }
        /// A position whose rf port is free.
        pub trait CanFillRf {}
        impl CanFillRf for OneReg {}
        impl CanFillRf for TwoRegs {}
        impl CanFillRf for ThreeRegs {}

        /// What one arity's slots carry.
        pub trait RegPayload<D: VeScalar, Mapping: M>: sealed::SlotSealed {
            /// What the rf port slot carries.
            type Port;
        }
        impl<Mapping: M> RegPayload<i32, Mapping> for i32 {
            type Port = RfPort<i32, Mapping>;
        }
        impl<Mapping: M> RegPayload<f32, Mapping> for f32 {
            type Port = RfPort<f32, Mapping>;
        }
        impl<Mapping: M> RegPayload<f32, Mapping> for (f32, f32) {
            type Port = (RfPort<f32, Mapping>, f32);
        }

        /// Opens a guarded operand.
        #[derive(Debug)]
        pub enum Branched {}

        impl Branched {
            /// Opens with one immediate register, applied where `guard` matches.
            pub fn imm<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>>(
                guard: TagGuard,
                v: Reg,
            ) -> VeOperandBuilder<D, Mapping, Reg, NoStash, OneReg> {
                stub()
            }
            /// Opens with the rf port, applied where `guard` matches.
            pub fn rf<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>, A: PortArg<D, Mapping, Reg>>(
                guard: TagGuard,
                arg: A,
            ) -> VeOperandBuilder<D, Mapping, Reg, A::Mark, AtRf> {
                stub()
            }
        }

        /// One VE pass's slots, built by `Branched`.
        #[derive(Debug)]
        pub struct VeOperandBuilder<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>, StashMark = NoStash, Slot = OneReg> {
            _mark: PhantomData<(D, Mapping, Reg, StashMark, Slot)>,
        }

        impl<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>, StashMark, Slot: CanAppendImm>
            VeOperandBuilder<D, Mapping, Reg, StashMark, Slot>
        {
            /// The next immediate register.
            pub fn imm(self, guard: TagGuard, v: Reg) -> VeOperandBuilder<D, Mapping, Reg, StashMark, Slot::Next> {
                stub()
            }
        }

        impl<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>, StashMark, Slot: CanFillRf>
            VeOperandBuilder<D, Mapping, Reg, StashMark, Slot>
        {
            /// The rf port, last.
            pub fn rf<A: PortArg<D, Mapping, Reg>>(self, guard: TagGuard, arg: A) -> VeOperandBuilder<D, Mapping, Reg, A::Mark, AtRf> {
                stub()
            }
        }

        /// A unary op, bare or with its guard.
        pub trait IntoGuardedUnaryOp: sealed::SlotSealed {}
        impl IntoGuardedUnaryOp for FpUnaryOp {}
        impl IntoGuardedUnaryOp for (TagGuard, FpUnaryOp) {}
        impl sealed::SlotSealed for FpUnaryOp {}
        impl sealed::SlotSealed for TagGuard {}

        /// What the rf port reads: `&vrf` or `Stash`, with `operand1` for a ternary pass.
        pub trait PortArg<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>>: sealed::SlotSealed {
            /// `WithStash` for a stash read, `NoStash` otherwise.
            type Mark;
        }
        impl<D: VeScalar, Mapping: M, Chip: M, Cluster: M, Slice: M, Element: M> PortArg<D, Mapping, D>
            for &VrfTensor<D, Chip, Cluster, Slice, Element>
        where
            D: RegPayload<D, Mapping, Port = RfPort<D, Mapping>>,
        {
            type Mark = NoStash;
        }
        impl<D: VeScalar, Mapping: M> PortArg<D, Mapping, D> for Stash
        where
            D: RegPayload<D, Mapping, Port = RfPort<D, Mapping>>,
        {
            type Mark = WithStash;
        }
        impl<Mapping: M, Chip: M, Cluster: M, Slice: M, Element: M> PortArg<f32, Mapping, (f32, f32)>
            for (&VrfTensor<f32, Chip, Cluster, Slice, Element>, f32)
        {
            type Mark = NoStash;
        }
        impl<Mapping: M> PortArg<f32, Mapping, (f32, f32)> for (Stash, f32) {
            type Mark = WithStash;
        }

        impl<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>, Slot> sealed::Sealed for VeOperandBuilder<D, Mapping, Reg, NoStash, Slot> {}
        impl<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>, Slot> Plain for VeOperandBuilder<D, Mapping, Reg, NoStash, Slot> {}
        impl<D: VeScalar, StashMapping: M, Mapping: M, Reg: RegPayload<D, Mapping>, const W: Way>
            StashTransition<Occupied<D, StashMapping, W>, D, W> for VeOperandBuilder<D, Mapping, Reg, WithStash, AtRf>
        {
            type Next = Spent;
        }

        impl sealed::Sealed for i32 {}
        impl Plain for i32 {}
        impl sealed::Sealed for f32 {}
        impl Plain for f32 {}
        impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M> sealed::Sealed for &VrfTensor<D, Chip, Cluster, Slice, Element> {}
        impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M> Plain for &VrfTensor<D, Chip, Cluster, Slice, Element> {}
        impl<A: Plain, B: Plain> sealed::Sealed for (A, B) {}
        impl<A: Plain, B: Plain> Plain for (A, B) {}

        impl sealed::SlotSealed for i32 {}
        impl sealed::SlotSealed for f32 {}
        impl sealed::SlotSealed for Stash {}
        impl sealed::SlotSealed for () {}
        impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M> sealed::SlotSealed for &VrfTensor<D, Chip, Cluster, Slice, Element> {}
        impl<A: sealed::SlotSealed, B: sealed::SlotSealed> sealed::SlotSealed for (A, B) {}
        impl<D: VeScalar, Mapping: M, Reg: RegPayload<D, Mapping>, StashMark, Slot> sealed::SlotSealed
            for VeOperandBuilder<D, Mapping, Reg, StashMark, Slot>
        {
        }

        /// How a binary operand fills one pass's slots.
        pub trait IntoBranchedOperand<D: VeScalar, TargetMapping: M>: Sized + sealed::SlotSealed {}
        impl<Mapping: M> IntoBranchedOperand<i32, Mapping> for i32 {}
        impl<Mapping: M> IntoBranchedOperand<f32, Mapping> for f32 {}
        impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M, Mapping: M> IntoBranchedOperand<D, Mapping>
            for &VrfTensor<D, Chip, Cluster, Slice, Element>
        {
        }
        impl<D: VeScalar, Mapping: M> IntoBranchedOperand<D, Mapping> for Stash {}
        impl<D: VeScalar, Mapping: M, StashMark, Slot> IntoBranchedOperand<D, Mapping> for VeOperandBuilder<D, Mapping, D, StashMark, Slot> where
            D: RegPayload<D, Mapping, Port = RfPort<D, Mapping>>
        {
        }

        /// How a ternary operand fills one pass's slots.
        pub trait IntoTernaryOperand<D: VeScalar, TargetMapping: M>: Sized + sealed::SlotSealed {}
        impl<Mapping: M> IntoTernaryOperand<f32, Mapping> for (f32, f32) {}
        impl<Chip: M, Cluster: M, Slice: M, Element: M, Mapping: M> IntoTernaryOperand<f32, Mapping>
            for (&VrfTensor<f32, Chip, Cluster, Slice, Element>, f32)
        {
        }
        impl<Mapping: M> IntoTernaryOperand<f32, Mapping> for (Stash, f32) {}
        impl<Mapping: M, StashMark, Slot> IntoTernaryOperand<f32, Mapping> for VeOperandBuilder<f32, Mapping, (f32, f32), StashMark, Slot> {}

        // ---- tensors (engine/vector/tensor/vector_tensor.rs)

        /// VE input after `vector_init()`.
        #[derive(Debug)]
        pub struct VectorInitTensor<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> {
            ctx: &'l mut TuContext<{ T }>,
            _m: PhantomData<(D, Chip, Cluster, Slice, Time, Packet)>,
        }

        /// A tensor in the Vector Engine: stage `S`, stash slot `Stash`,
        /// entry order `VE_ORDER`, context `FS`, way `W`.
        #[derive(Debug)]
        pub struct VectorTensor<
            'l,
            const T: Tu,
            S: stage::Stage,
            D: VeScalar,
            Chip: M,
            Cluster: M,
            Slice: M,
            Time: M,
            Packet: M,
            Stash: StashState,
            const VE_ORDER: VeOrder,
            FS: stage::VeTensorContext = stage::Standalone,
            const W: Way = { Way::Way8 },
        > {
            ctx: &'l mut TuContext<{ T }>,
            _m: PhantomData<(S, D, Chip, Cluster, Slice, Time, Packet, Stash, FS)>,
        }

        /// Shorthand for this module's signatures: a tensor of the same `'l`, `T`, `Chip`, `Cluster`, `Slice`.
        macro_rules! vt {
            ($s:ty, $d:ty, $time:ty, $packet:ty, $st:ty, $o:expr, $fs:ty, $w:expr) => {
                VectorTensor<'l, T, $s, $d, Chip, Cluster, Slice, $time, $packet, $st, { $o }, $fs, { $w }>
            };
        }

        impl<'l, const T: Tu, P: super::CanApplyVectorInit, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, B: Backend>
            TuTensor<'l, T, P, D, Chip, Cluster, Slice, Time, Packet, B>
        {
            /// Initializes Vector Engine processing for this tensor.
            pub fn vector_init(self) -> VectorInitTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet> {
                stub()
            }
        }

        impl<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
            VectorInitTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
        {
            /// Enters the intra-slice pipeline (single stream).
            pub fn vector_intra_slice_tag(
                self,
                branch: TagMode<D>,
            ) -> vt!(stage::Tag, D, Time, Packet, Fresh, VeOrder::IntraFirst, stage::Standalone, Way::Way8) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::InterSliceStage + stage::CanTransitionTo<stage::Tag>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::Commitable>
            VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, St, { VeOrder::InterFirst }, FS, { Way::Way8 }>
        {
            /// Enters the intra-slice pipeline from the inter-slice output.
            pub fn vector_intra_slice_tag(
                self,
                branch: TagMode<D>,
            ) -> vt!(stage::Tag, D, Time, Packet, Fresh, VeOrder::InterFirst, stage::Standalone, Way::Way8) {
                stub()
            }
        }

        // vector_inter_slice_reduce::<OutSlice, OutTime>(op), InterFirst from
        // vector_init() or IntraFirst from an intra-slice stage.
        macro_rules! inter_slice {
            ($d:ty, $op:ty) => {
                impl<'l, const T: Tu, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> VectorInitTensor<'l, T, $d, Chip, Cluster, Slice, Time, Packet> {
                    /// Inter-slice reduce as the first VE operation.
                    pub fn vector_inter_slice_reduce<OutSlice: M, OutTime: M>(
                        self,
                        op: $op,
                    ) -> VectorTensor<'l, T, stage::InterSliceReduce, $d, Chip, Cluster, OutSlice, OutTime, Packet, Fresh, { VeOrder::InterFirst }> {
                        stub()
                    }
                }
                impl<
                    'l,
                    const T: Tu,
                    S: stage::IntraSliceStage + stage::CanTransitionTo<stage::InterSliceReduce>,
                    Chip: M,
                    Cluster: M,
                    Slice: M,
                    Time: M,
                    Packet: M,
                    St: StashState,
                    FS: stage::Commitable,
                > VectorTensor<'l, T, S, $d, Chip, Cluster, Slice, Time, Packet, St, { VeOrder::IntraFirst }, FS, { Way::Way8 }>
                {
                    /// Inter-slice reduce from an intra-slice stage.
                    pub fn vector_inter_slice_reduce<OutSlice: M, OutTime: M>(
                        self,
                        op: $op,
                    ) -> VectorTensor<'l, T, stage::InterSliceReduce, $d, Chip, Cluster, OutSlice, OutTime, Packet, Fresh, { VeOrder::IntraFirst }> {
                        stub()
                    }
                }
            };
        }
        inter_slice!(i32, InterSliceReduceOpI32);
        inter_slice!(f32, InterSliceReduceOpF32);

        impl<'l, const T: Tu, S: stage::Stashable, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const W: Way, const O: VeOrder>
            VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, Fresh, O, stage::Standalone, W>
        {
            /// Writes the stream to the stash (write-once).
            pub fn vector_stash(self) -> vt!(S, D, Time, Packet, Occupied<D, VeTensorShape<Chip, Cluster, Slice, Time, Packet>, W>, O, stage::Standalone, W) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::Commitable, const O: VeOrder>
            VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way8 }>
        {
            /// Exits the Vector Engine pipeline and returns a stream tensor.
            pub fn vector_final(self) -> super::VectorFinalTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet> {
                stub()
            }
        }

        // The binary ops of one cluster on one scalar and way: `$name(op,
        // operand)` and `$name_with_mode(op, mode, operand)`.
        macro_rules! binary {
            ($name:ident, $with_mode:ident, $stage:ident, $d:ty, $op:ty, $w:expr) => {
                impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::$stage>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
                    VectorTensor<'l, T, S, $d, Chip, Cluster, Slice, Time, Packet, St, O, FS, { $w }>
                {
                    /// The cluster's binary operation.
                    pub fn $name<Op>(self, op: $op, operand: Op) -> vt!(stage::$stage, $d, Time, Packet, Op::Next, O, stage::Standalone, $w)
                    where
                        Op: IntoBranchedOperand<$d, VeTensorShape<Chip, Cluster, Slice, Time, Packet>> + StashTransition<St, $d, { $w }>,
                    {
                        stub()
                    }
                    /// The cluster's binary operation with an explicit mode.
                    pub fn $with_mode<Op>(self, op: $op, mode: BinaryArgMode, operand: Op) -> vt!(stage::$stage, $d, Time, Packet, Op::Next, O, stage::Standalone, $w)
                    where
                        Op: IntoBranchedOperand<$d, VeTensorShape<Chip, Cluster, Slice, Time, Packet>> + StashTransition<St, $d, { $w }>,
                    {
                        stub()
                    }
                }
            };
        }
        binary!(vector_logic, vector_logic_with_mode, Logic, i32, LogicBinaryOpI32, Way::Way8);
        binary!(vector_logic, vector_logic_with_mode, Logic, f32, LogicBinaryOpF32, Way::Way8);
        binary!(vector_fxp, vector_fxp_with_mode, Fxp, i32, FxpBinaryOp, Way::Way8);
        binary!(vector_fp_binary, vector_fp_binary_with_mode, Fp, f32, FpBinaryOp, Way::Way4);
        binary!(vector_clip, vector_clip_with_mode, Clip, i32, ClipBinaryOpI32, Way::Way8);
        binary!(vector_clip, vector_clip_with_mode, Clip, f32, ClipBinaryOpF32, Way::Way8);

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FxpToFp>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
            VectorTensor<'l, T, S, i32, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way8 }>
        {
            /// Converts i32 to f32.
            pub fn vector_fxp_to_fp(self, int_width: u32) -> vt!(stage::FxpToFp, f32, Time, Packet, St, O, stage::Standalone, Way::Way8) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Narrow>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
            VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way8 }>
        {
            /// Narrow layer (split): 8-element packets to 4, the factor of 2 into Time.
            pub fn vector_narrow_split<Time2: M, Packet2: M>(self) -> vt!(stage::Narrow, D, Time2, Packet2, St, O, FS, Way::Way4) {
                stub()
            }
            /// Strips the back-4 dummy lanes of an 8-element packet.
            pub fn vector_narrow_trim<Packet2: M>(self) -> vt!(stage::Narrow, D, Time, Packet2, St, O, FS, Way::Way4) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Fp>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
            VectorTensor<'l, T, S, f32, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way4 }>
        {
            /// Fp unary operation, applied where its guard matches.
            pub fn vector_fp_unary<Op: IntoGuardedUnaryOp>(self, op: Op) -> vt!(stage::Fp, f32, Time, Packet, St, O, stage::Standalone, Way::Way4) {
                stub()
            }
            /// Fp ternary operation.
            pub fn vector_fp_ternary<Op>(self, op: FpTernaryOp, operands: Op) -> vt!(stage::Fp, f32, Time, Packet, Op::Next, O, stage::Standalone, Way::Way4)
            where
                Op: IntoTernaryOperand<f32, VeTensorShape<Chip, Cluster, Slice, Time, Packet>> + StashTransition<St, f32, { Way::Way4 }>,
            {
                stub()
            }
            /// Fp ternary operation with an explicit mode.
            pub fn vector_fp_ternary_with_mode<Op>(
                self,
                op: FpTernaryOp,
                mode: TernaryArgMode,
                operands: Op,
            ) -> vt!(stage::Fp, f32, Time, Packet, Op::Next, O, stage::Standalone, Way::Way4)
            where
                Op: IntoTernaryOperand<f32, VeTensorShape<Chip, Cluster, Slice, Time, Packet>> + StashTransition<St, f32, { Way::Way4 }>,
            {
                stub()
            }
        }

        macro_rules! intra_reduce {
            ($d:ty, $op:ty) => {
                impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::IntraSliceReduce>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
                    VectorTensor<'l, T, S, $d, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way4 }>
                {
                    /// Intra-slice reduce.
                    pub fn vector_intra_slice_reduce<Reduce: AxisName, OutTime: M, OutPacket: M>(
                        self,
                        op: $op,
                    ) -> vt!(stage::IntraSliceReduce, $d, OutTime, OutPacket, St, O, stage::Standalone, Way::Way4) {
                        stub()
                    }
                }
            };
        }
        intra_reduce!(i32, IntraSliceReduceOpI32);
        intra_reduce!(f32, IntraSliceReduceOpF32);

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FpDiv>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
            VectorTensor<'l, T, S, f32, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way4 }>
        {
            /// Floating-point division (the op, `DivF`, is implicit).
            pub fn vector_fp_div<Op>(self, operand: Op) -> vt!(stage::FpDiv, f32, Time, Packet, Op::Next, O, FS, Way::Way4)
            where
                Op: IntoBranchedOperand<f32, VeTensorShape<Chip, Cluster, Slice, Time, Packet>> + StashTransition<St, f32, { Way::Way4 }>,
            {
                stub()
            }
            /// Floating-point division with an explicit mode.
            pub fn vector_fp_div_with_mode<Op>(self, mode: BinaryArgMode, operand: Op) -> vt!(stage::FpDiv, f32, Time, Packet, Op::Next, O, FS, Way::Way4)
            where
                Op: IntoBranchedOperand<f32, VeTensorShape<Chip, Cluster, Slice, Time, Packet>> + StashTransition<St, f32, { Way::Way4 }>,
            {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Widen>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
            VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way4 }>
        {
            /// Widen layer (concat): two time steps' 4-element packets into one 8-element packet.
            pub fn vector_widen_concat<Time2: M, Packet2: M>(self) -> vt!(stage::Widen, D, Time2, Packet2, St, O, FS, Way::Way8) {
                stub()
            }
            /// Pads a 4-element packet back to 8.
            pub fn vector_widen_pad<Packet2: M>(self) -> vt!(stage::Widen, D, Time, Packet2, St, O, FS, Way::Way8) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FpToFxp>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, FS: stage::VeTensorContext, const O: VeOrder>
            VectorTensor<'l, T, S, f32, Chip, Cluster, Slice, Time, Packet, St, O, FS, { Way::Way8 }>
        {
            /// Converts f32 to i32.
            pub fn vector_fp_to_fxp(self, int_width: u32) -> vt!(stage::FpToFxp, i32, Time, Packet, St, O, stage::Standalone, Way::Way8) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Filter>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, St: StashState, const O: VeOrder>
            VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, St, O, stage::Standalone, { Way::Way8 }>
        {
            /// Filter by branch id.
            pub fn vector_filter<Time2: M>(self, config: TagGuard) -> vt!(stage::Filter, D, Time2, Packet, St, O, stage::Standalone, Way::Way8) {
                stub()
            }
        }

        // ---- the two-group pair (engine/vector/tensor/vector_tensor_pair.rs, operand.rs)

        /// A per-group operand of a pair op: a constant, `&VrfTensor`, or `()` to skip the group
        /// (no `Branched` layout, no `Stash`: a pair op spends its guards on the groups and reads no stash).
        pub trait IntoGroupOperand<D: VeScalar, Mapping: M>: sealed::SlotSealed {}
        impl<D: VeScalar, Mapping: M> IntoGroupOperand<D, Mapping> for () {}
        impl<Mapping: M> IntoGroupOperand<i32, Mapping> for i32 {}
        impl<Mapping: M> IntoGroupOperand<f32, Mapping> for f32 {}
        impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M, Mapping: M> IntoGroupOperand<D, Mapping>
            for &VrfTensor<D, Chip, Cluster, Slice, Element>
        {
        }

        /// A per-group ternary operand: `(operand0, operand1)` with a constant or `&vrf` operand0, or `()`
        /// (the pass-through of an already built `GroupTernaryOperand` is not restated).
        pub trait IntoGroupTernaryOperand<Mapping: M>: sealed::SlotSealed {}
        impl<Mapping: M> IntoGroupTernaryOperand<Mapping> for () {}
        impl<T, Mapping: M> IntoGroupTernaryOperand<Mapping> for (T, f32)
        where
            (T, f32): IntoTernaryOperand<f32, Mapping>,
            T: Plain,
        {
        }

        /// Two groups of interleaved data, processed together until a `_zip` op merges them.
        #[derive(Debug)]
        pub struct VectorTensorPair<
            'l,
            const T: Tu,
            D: VeScalar,
            S: stage::Stage,
            Chip: M,
            Cluster: M,
            Slice: M,
            SplitTime: M,
            Packet: M,
            const W: Way = { Way::Way8 },
        > {
            ctx: &'l mut TuContext<{ T }>,
            _m: PhantomData<(D, S, Chip, Cluster, Slice, SplitTime, Packet)>,
        }

        impl<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
            VectorInitTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
        {
            /// Enters the intra-slice pipeline (two-group / unzip).
            pub fn vector_intra_slice_unzip<I: AxisName, TileTime: M, SplitTime: M>(
                self,
            ) -> VectorTensorPair<'l, T, D, stage::Tag, Chip, Cluster, Slice, SplitTime, Packet> {
                stub()
            }
        }

        /// Shorthand for a pair of the same `'l`, `T`, `Chip`, `Cluster`, `Slice`.
        macro_rules! vp {
            ($d:ty, $s:ty, $time:ty, $packet:ty, $w:expr) => {
                VectorTensorPair<'l, T, $d, $s, Chip, Cluster, Slice, $time, $packet, { $w }>
            };
        }

        // A cluster's per-group binary op on one scalar and way.
        macro_rules! pair_binary {
            ($name:ident, $with_mode:ident, $stage:ident, $d:ty, $op:ty, $w:expr) => {
                impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::$stage>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
                    VectorTensorPair<'l, T, $d, S, Chip, Cluster, Slice, SplitTime, Packet, { $w }>
                {
                    /// The binary op on both groups, each with its own operand.
                    pub fn $name(
                        self,
                        op: $op,
                        group0_operand: impl IntoGroupOperand<$d, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                        group1_operand: impl IntoGroupOperand<$d, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                    ) -> vp!($d, stage::$stage, SplitTime, Packet, $w) {
                        stub()
                    }
                    /// The binary op on both groups with an explicit mode.
                    pub fn $with_mode(
                        self,
                        op: $op,
                        mode: BinaryArgMode,
                        group0_operand: impl IntoGroupOperand<$d, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                        group1_operand: impl IntoGroupOperand<$d, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                    ) -> vp!($d, stage::$stage, SplitTime, Packet, $w) {
                        stub()
                    }
                }
            };
        }
        pair_binary!(vector_logic, vector_logic_with_mode, Logic, i32, LogicBinaryOpI32, Way::Way8);
        pair_binary!(vector_logic, vector_logic_with_mode, Logic, f32, LogicBinaryOpF32, Way::Way8);
        pair_binary!(vector_fxp, vector_fxp_with_mode, Fxp, i32, FxpBinaryOp, Way::Way8);
        pair_binary!(vector_fp_binary, vector_fp_binary_with_mode, Fp, f32, FpBinaryOp, Way::Way4);
        pair_binary!(vector_clip, vector_clip_with_mode, Clip, i32, ClipBinaryOpI32, Way::Way8);
        pair_binary!(vector_clip, vector_clip_with_mode, Clip, f32, ClipBinaryOpF32, Way::Way8);

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FxpToFp>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
            VectorTensorPair<'l, T, i32, S, Chip, Cluster, Slice, SplitTime, Packet, { Way::Way8 }>
        {
            /// Converts both groups from i32 to f32.
            pub fn vector_fxp_to_fp(self, int_width: u32) -> vp!(f32, stage::FxpToFp, SplitTime, Packet, Way::Way8) {
                stub()
            }
        }

        impl<'l, const T: Tu, D: VeScalar, S: stage::Stage + stage::CanTransitionTo<stage::Narrow>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
            VectorTensorPair<'l, T, D, S, Chip, Cluster, Slice, SplitTime, Packet, { Way::Way8 }>
        {
            /// Narrow layer (split) of both groups (the pair has no `vector_narrow_trim`).
            pub fn vector_narrow_split<SplitTime2: M, Packet2: M>(self) -> vp!(D, stage::Narrow, SplitTime2, Packet2, Way::Way4) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Fp>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
            VectorTensorPair<'l, T, f32, S, Chip, Cluster, Slice, SplitTime, Packet, { Way::Way4 }>
        {
            /// A unary op on the groups it is applied to.
            pub fn vector_fp_unary(self, op: FpUnaryOp, group0_apply: bool, group1_apply: bool) -> vp!(f32, stage::Fp, SplitTime, Packet, Way::Way4) {
                stub()
            }
            /// A ternary op on both groups.
            pub fn vector_fp_ternary(
                self,
                op: FpTernaryOp,
                group0_operand: impl IntoGroupTernaryOperand<VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                group1_operand: impl IntoGroupTernaryOperand<VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
            ) -> vp!(f32, stage::Fp, SplitTime, Packet, Way::Way4) {
                stub()
            }
            /// A ternary op on both groups with an explicit mode.
            pub fn vector_fp_ternary_with_mode(
                self,
                op: FpTernaryOp,
                mode: TernaryArgMode,
                group0_operand: impl IntoGroupTernaryOperand<VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                group1_operand: impl IntoGroupTernaryOperand<VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
            ) -> vp!(f32, stage::Fp, SplitTime, Packet, Way::Way4) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FpDiv>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
            VectorTensorPair<'l, T, f32, S, Chip, Cluster, Slice, SplitTime, Packet, { Way::Way4 }>
        {
            /// Division of both groups (the op, `DivF`, is implicit).
            pub fn vector_fp_div(
                self,
                group0_operand: impl IntoGroupOperand<f32, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                group1_operand: impl IntoGroupOperand<f32, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
            ) -> vp!(f32, stage::FpDiv, SplitTime, Packet, Way::Way4) {
                stub()
            }
            /// Division of both groups with an explicit mode.
            pub fn vector_fp_div_with_mode(
                self,
                mode: BinaryArgMode,
                group0_operand: impl IntoGroupOperand<f32, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
                group1_operand: impl IntoGroupOperand<f32, VeTensorShape<Chip, Cluster, Slice, SplitTime, Packet>>,
            ) -> vp!(f32, stage::FpDiv, SplitTime, Packet, Way::Way4) {
                stub()
            }
        }

        impl<'l, const T: Tu, D: VeScalar, S: stage::Stage + stage::CanTransitionTo<stage::Widen>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
            VectorTensorPair<'l, T, D, S, Chip, Cluster, Slice, SplitTime, Packet, { Way::Way4 }>
        {
            /// Widen layer (concat) of both groups (the pair has no `vector_widen_pad`).
            pub fn vector_widen_concat<SplitTime2: M, Packet2: M>(self) -> vp!(D, stage::Widen, SplitTime2, Packet2, Way::Way8) {
                stub()
            }
        }

        impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FpToFxp>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
            VectorTensorPair<'l, T, f32, S, Chip, Cluster, Slice, SplitTime, Packet, { Way::Way8 }>
        {
            /// Converts both groups from f32 to i32.
            pub fn vector_fp_to_fxp(self, int_width: u32) -> vp!(i32, stage::FpToFxp, SplitTime, Packet, Way::Way8) {
                stub()
            }
        }

        // A cluster's zip: op(group0, group1), a single Zipped stream.
        macro_rules! pair_zip {
            ($name:ident, $with_mode:ident, $stage:ident, $d:ty, $op:ty, $w:expr) => {
                impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::$stage>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
                    VectorTensorPair<'l, T, $d, S, Chip, Cluster, Slice, Time, Packet, { $w }>
                {
                    /// Merges the two groups with the op.
                    pub fn $name(self, op: $op) -> vt!(stage::$stage, $d, Time, Packet, Fresh, VeOrder::IntraFirst, stage::Zipped, $w) {
                        stub()
                    }
                    /// Merges the two groups with the op and an explicit mode (0 group 0, 1 group 1).
                    pub fn $with_mode(self, op: $op, mode: BinaryArgMode) -> vt!(stage::$stage, $d, Time, Packet, Fresh, VeOrder::IntraFirst, stage::Zipped, $w) {
                        stub()
                    }
                }
            };
        }
        pair_zip!(vector_logic_zip, vector_logic_zip_with_mode, Logic, i32, LogicBinaryOpI32, Way::Way8);
        pair_zip!(vector_logic_zip, vector_logic_zip_with_mode, Logic, f32, LogicBinaryOpF32, Way::Way8);
        pair_zip!(vector_fxp_zip, vector_fxp_zip_with_mode, Fxp, i32, FxpBinaryOp, Way::Way8);
        pair_zip!(vector_fp_zip, vector_fp_zip_with_mode, Fp, f32, FpBinaryOp, Way::Way4);
        pair_zip!(vector_clip_zip, vector_clip_zip_with_mode, Clip, i32, ClipBinaryOpI32, Way::Way8);
        pair_zip!(vector_clip_zip, vector_clip_zip_with_mode, Clip, f32, ClipBinaryOpF32, Way::Way8);
    }
}

/// The runtime (furiosa-opt-std/src/runtime.rs, d4d05a7).
pub mod runtime {
    use super::*;
    use crate::backend::{Backend, Cpu};
    use crate::context::{Context, DmaContext, TuContext};
    use crate::scalar::Scalar;
    use crate::tensor::memory::{HbmTensor, HbmTensorView, HbmTensorViewMut};

    /// The backend of a plain build.
    pub type CurrentBackend = Cpu;

    /// Types that can be sent to device functions.
    pub trait DeviceSend {}

    impl DeviceSend for () {}
    macro_rules! send_prim {
        ($($t:ty),*) => { $(impl DeviceSend for $t {})* };
    }
    send_prim!(bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);
    impl DeviceSend for &mut Context {}
    impl<const T: crate::context::Tu> DeviceSend for &mut TuContext<T> {}
    impl<const DMA: crate::context::Dma> DeviceSend for &mut DmaContext<DMA> {}
    impl<D: Scalar, Chip: M, Element: M, B: Backend> DeviceSend for HbmTensor<D, Chip, Element, B> {}
    impl<D: Scalar, Chip: M, Element: M, B: Backend> DeviceSend for &HbmTensor<D, Chip, Element, B> {}
    impl<D: Scalar, Chip: M, Element: M, B: Backend> DeviceSend for &mut HbmTensor<D, Chip, Element, B> {}
    impl<D: Scalar, Chip: M, Element: M, B: Backend> DeviceSend for HbmTensorView<'_, D, Chip, Element, B> {}
    impl<D: Scalar, Chip: M, Element: M, B: Backend> DeviceSend for HbmTensorViewMut<'_, D, Chip, Element, B> {}
    macro_rules! send_tuple {
        ($($T:ident),+) => { impl<$($T: DeviceSend),+> DeviceSend for ($($T,)+) {} };
    }
    send_tuple!(A);
    send_tuple!(A, B);
    send_tuple!(A, B, C);
    send_tuple!(A, B, C, D);
    send_tuple!(A, B, C, D, E);
    send_tuple!(A, B, C, D, E, F);
    send_tuple!(A, B, C, D, E, F, G);
    send_tuple!(A, B, C, D, E, F, G, H);
    send_tuple!(A, B, C, D, E, F, G, H, I);
    send_tuple!(A, B, C, D, E, F, G, H, I, J);

    /// Device function trait, generated by `#[device]`.
    pub trait DeviceFn<Args: DeviceSend> {
        /// Return type of the device function.
        type Output: DeviceSend;
        /// Execute the device function.
        fn execute(args: Args) -> impl Future<Output = Self::Output>;
    }

    /// Launches a device function.
    pub async fn launch<F, P>(_f: F, args: P) -> F::Output
    where
        F: DeviceFn<P>,
        P: DeviceSend,
    {
        stub()
    }
}
