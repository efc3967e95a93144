//! Stub of furiosa-visa-std 0.1.0, the library of the manual's Hello kernels
//! (furiosa-ai/furiosa-opt, furiosa-visa-std/Cargo.toml `version = "0.1.0"`).
//!
//! It restates the signatures of the types, traits and methods tcpmap's
//! emitter and the manual's Hello kernels use, with the generic parameters,
//! argument types and trait bounds the vendor's source states, so that
//! rustc type-checks a kernel against it as it would against the library.
//! Each item cites the vendor file it restates. Bodies are
//! `unimplemented!()`: the stub checks types, it runs nothing. What the
//! library checks at run time (packet sizes, the collect's 32-byte flit,
//! mapping algebra) is not restated: tcpmap's engines check those.

#![feature(adt_const_params)]
#![feature(register_tool)]
#![register_tool(tcp)]
#![allow(incomplete_features, dead_code, unused_variables, private_bounds, private_interfaces)]

extern crate self as furiosa_visa_std;

#[path = "../mapping.rs"]
#[doc(hidden)]
pub mod __mapping;

use core::future::Future;
use core::marker::ConstParamTy;
use core::marker::PhantomData;
use core::ops::DerefMut;

use __mapping::{Identity, M};

fn stub<T>() -> T {
    unimplemented!("tcpmap stub: type-checking only")
}

/// The prelude (furiosa-visa-std/src/lib.rs `pub mod prelude`).
pub mod prelude {
    pub use super::__mapping::{AxisName, Identity, M, Pair, Padding, Symbol};
    pub use super::cast::{ContractionCast, FetchCast, StreamCast};
    pub use super::context::*;
    pub use super::memory_tensor::*;
    pub use super::runtime::*;
    pub use super::scalar::*;
    pub use super::stream_tensor::*;
    pub use super::vector_engine::*;
    pub use tcpmap_stub_macros::{axes_visa as axes, device_visa as device, m_visa as m};
}

pub use cast::Cast;

/// Scalars (furiosa-visa-std/src/scalar.rs).
pub mod scalar {
    /// A scalar type (`Scalar: LinalgScalar + Debug + Clone + Copy + PartialEq + Num`).
    pub trait Scalar: core::fmt::Debug + Clone + Copy + PartialEq {
        /// Bits per element.
        const BITS: usize;
    }

    macro_rules! std_scalar {
        ($($t:ty),*) => { $(impl Scalar for $t { const BITS: usize = core::mem::size_of::<$t>() * 8; })* };
    }
    // `impl_scalar_std!(i8, i16, i32, f32, u8)`.
    std_scalar!(i8, i16, i32, f32, u8);

    /// An initialized or uninitialized value (`Opt<D>`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Opt<D> {
        /// Initialized value.
        Init(D),
        /// Uninitialized value.
        Uninit,
    }

    impl<D> Opt<D> {
        /// Returns the initialized value, or panics if uninitialized.
        pub fn unwrap(self) -> D {
            super::stub()
        }

        /// Maps the initialized value.
        pub fn map<D2>(self, f: impl FnOnce(D) -> D2) -> Opt<D2> {
            super::stub()
        }
    }

    /// 8-bit floating point type (`pub struct f8(::f8::f8)`).
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct f8(u8);

    /// 16-bit brain floating point type (`pub struct bf16(half::bf16)`).
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct bf16(u16);

    /// 8-bit floating point type with 4-bit exponent (`pub struct f8e4m3(u8)`).
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct f8e4m3(u8);

    /// 4-bit signed integer (`pub struct i4(i8)`).
    #[allow(non_camel_case_types)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct i4(i8);

    impl Scalar for f8 {
        const BITS: usize = 8;
    }
    impl Scalar for bf16 {
        const BITS: usize = 16;
    }
    impl Scalar for f8e4m3 {
        const BITS: usize = 8;
    }
    impl Scalar for i4 {
        const BITS: usize = 4;
    }

    impl bf16 {
        /// Creates `bf16` from `f32`.
        pub fn from_f32(val: f32) -> Self {
            super::stub()
        }
        /// Converts to `f32`.
        pub fn to_f32(self) -> f32 {
            super::stub()
        }
    }

    impl f8e4m3 {
        /// Creates `f8e4m3` from `f32`.
        pub fn from_f32(val: f32) -> Self {
            super::stub()
        }
        /// Converts to `f32`.
        pub fn to_f32(self) -> f32 {
            super::stub()
        }
    }

    impl i4 {
        /// Creates `i4` from `i32`.
        pub fn from_i32(val: i32) -> Self {
            super::stub()
        }
        /// Converts to `i32`.
        pub fn to_i32(self) -> i32 {
            super::stub()
        }
    }

    // The library's only conversions out of its own types: `From<bf16> for
    // f32`, `From<f8e4m3> for f32`, `From<i4> for i32` (no `f64::from`).
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
    impl From<i4> for i32 {
        fn from(val: i4) -> Self {
            super::stub()
        }
    }

    // `impl rand::distr::Distribution<X> for StandardUniform` for f8, bf16,
    // f8e4m3 (none for i4).
    macro_rules! sampled {
        ($($t:ty),*) => {
            $(impl rand::distr::Distribution<$t> for rand::distr::StandardUniform {
                fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> $t {
                    super::stub()
                }
            })*
        };
    }
    sampled!(f8, bf16, f8e4m3);
}

/// Casts (furiosa-visa-std/src/cast.rs).
pub mod cast {
    use super::__mapping::M;
    use super::scalar::{Scalar, bf16, f8e4m3, i4};

    /// Types that can be cast during fetch operations.
    pub trait FetchCast<D: Scalar>: Into<D> + Cast<D> {}

    // Identity casts.
    impl<D> FetchCast<D> for D where D: Scalar {}
    impl FetchCast<i32> for i8 {}
    impl FetchCast<f32> for bf16 {}
    impl FetchCast<f32> for f8e4m3 {}
    impl FetchCast<i32> for i4 {}

    /// Casting between scalar types.
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
    casts!(i8 => i32, i32 => i8, bf16 => f32, f32 => bf16, f8e4m3 => f32, f32 => f8e4m3, i4 => i32, i32 => i4);

    /// Output type for contraction (DPE accumulates in wider type).
    pub trait ContractionCast: Scalar {
        /// The wider scalar type that accumulates contraction results.
        type Output: Scalar;
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
    impl ContractionCast for i4 {
        type Output = i32;
    }

    /// Stream tensors that can be cast to a different scalar type.
    pub trait StreamCast<D: Scalar> {
        /// The output tensor type after casting to scalar type `D2`.
        type CastOutput<D2: Scalar, OutPacket: M>
        where
            D: Cast<D2>;

        /// Casts this tensor's scalar type from `D` to `D2`.
        fn cast<D2: Scalar, OutPacket: M>(self) -> Self::CastOutput<D2, OutPacket>
        where
            D: Cast<D2>;
    }
}

/// Contexts (furiosa-visa-std/src/context.rs).
pub mod context {
    use super::*;
    use crate::__mapping::{AxisName, Symbol};
    use crate::memory_tensor::{DmTensorView, HbmTensor};
    use crate::scalar::Scalar;
    use crate::stream_tensor::BeginTensor;

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
        pub fn acquire() -> impl DerefMut<Target = Context> {
            stub::<Box<Context>>()
        }
    }

    impl<const T: Tu> TuContext<{ T }> {
        /// Begin a tensor unit operation in this context.
        pub fn begin<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M>(
            &'l mut self,
            tensor: DmTensorView<'l, D, Chip, Cluster, Slice, Element>,
        ) -> BeginTensor<'l, { T }, D, Chip, Cluster, Slice, Identity, Element> {
            stub()
        }
        /// Begin a tensor unit operation in this context with interleaved
        /// tensors: the axis `I` (size 2) of the Time alternates between
        /// lhs and rhs (furiosa-visa-std/src/context.rs, a837582; 002 L1843-1867). Its D is any Scalar.
        pub fn begin_interleaved<'l, I: AxisName, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M>(
            &'l mut self,
            lhs: DmTensorView<'l, D, Chip, Cluster, Slice, Element>,
            rhs: DmTensorView<'l, D, Chip, Cluster, Slice, Element>,
        ) -> BeginTensor<'l, { T }, D, Chip, Cluster, Slice, Symbol<I>, Element> {
            stub()
        }
    }

    impl<const DMA: Dma> DmaContext<DMA> {
        /// Cluster shuffle (HBM to HBM).
        pub fn hbm_cluster_shuffle<D: Scalar, Chip: M, Element: M>(
            &mut self,
            _tensor: &HbmTensor<D, Chip, Element>,
            _shuffle_pattern: &[usize],
        ) -> HbmTensor<D, Chip, Element> {
            stub()
        }
    }
}

/// Tensors placed on memory (furiosa-visa-std/src/memory_tensor.rs).
pub mod memory_tensor {
    use super::*;
    use crate::context::{Dma, DmaContext};
    use crate::scalar::{Opt, Scalar};
    use crate::vector_engine::VeScalar;

    /// Address.
    pub type Address = u64;

    /// Address in the tensor register file (`#[derive(Clone, Debug)]`: not Copy).
    #[derive(Clone, Debug)]
    pub enum TrfAddress {
        /// Address in the first half of TRF.
        FirstHalf,
        /// Address in the second half of TRF.
        SecondHalf,
        /// Address in the full TRF.
        Full,
    }

    /// Tensor stored in host memory.
    #[derive(Debug, Clone)]
    pub struct HostTensor<D: Scalar, Element: M> {
        _m: PhantomData<(D, Element)>,
    }

    impl<D: Scalar, Element: M> HostTensor<D, Element> {
        /// Creates a tensor from a vector.
        pub fn from_buf(data: Vec<Opt<D>>) -> Self {
            stub()
        }
        /// Creates a tensor filled with zeros.
        pub fn zero() -> Self {
            stub()
        }
        /// Creates a tensor filled with random values.
        pub fn rand(rng: &mut impl rand::Rng) -> Self
        where
            rand::distr::StandardUniform: rand::distr::Distribution<D>,
        {
            stub()
        }
        /// Creates an uninitialized tensor.
        pub fn uninit() -> Self {
            stub()
        }
        /// Converts to HBM tensor.
        pub async fn to_hbm<Chip: M, Element2: M>(
            &self,
            _dma: &mut DmaContext<{ Dma::Pcie }>,
            address: Address,
        ) -> HbmTensor<D, Chip, Element2> {
            stub()
        }
        /// Returns the tensor data as a flat vector in physical layout order.
        pub fn to_buf(&self) -> Vec<Opt<D>> {
            stub()
        }
    }

    /// Tensor stored in HBM memory.
    #[derive(Debug)]
    pub struct HbmTensor<D: Scalar, Chip: M, Element: M> {
        _m: PhantomData<(D, Chip, Element)>,
    }

    impl<D: Scalar, Chip: M, Element: M> HbmTensor<D, Chip, Element> {
        /// Returns the HBM address of this tensor.
        pub fn address(&self) -> Address {
            stub()
        }
        /// Size in bytes.
        pub fn size() -> usize {
            stub()
        }
        /// Creates an HBM tensor handle at the given raw address.
        ///
        /// # Safety
        /// As the library's: the layout at the address must match the mapping.
        pub unsafe fn from_addr(address: Address) -> Self {
            stub()
        }
        /// Converts to host tensor.
        pub async fn to_host<Element2: M>(&self, _dma: &mut DmaContext<{ Dma::Pcie }>) -> HostTensor<D, Element2> {
            stub()
        }
        /// Converts to HBM tensor.
        pub fn to_hbm<const DMA: Dma, Element2: M>(
            &self,
            _dma: &mut DmaContext<{ DMA }>,
            address: Address,
        ) -> HbmTensor<D, Chip, Element2> {
            stub()
        }
        /// Creates an immutable view.
        pub fn view<'l>(&'l self) -> HbmTensorView<'l, D, Chip, Element> {
            stub()
        }
        /// Creates a mutable view.
        pub fn view_mut<'l>(&'l mut self) -> HbmTensorViewMut<'l, D, Chip, Element> {
            stub()
        }
        /// Converts to data memory tensor.
        pub fn to_dm<Cluster: M, Slice: M, Element2: M>(
            &self,
            _dma: &mut DmaContext<{ Dma::Tensor }>,
            address: Address,
        ) -> DmTensor<D, Chip, Cluster, Slice, Element2> {
            stub()
        }
    }

    /// View of an HBM tensor.
    #[derive(Debug, Clone)]
    pub struct HbmTensorView<'l, D: Scalar, Chip: M, Element: M> {
        _m: PhantomData<(&'l (), D, Chip, Element)>,
    }

    impl<'l, D: Scalar, Chip: M, Element: M> HbmTensorView<'l, D, Chip, Element> {
        /// Returns the base HBM address of this view.
        pub fn address(&self) -> Address {
            stub()
        }
        /// Writes to HBM tensor view.
        pub fn to_hbm_view<const DMA: Dma, Element2: M>(
            self,
            _dma: &mut DmaContext<{ DMA }>,
            dst: HbmTensorViewMut<'l, D, Chip, Element2>,
        ) {
            stub()
        }
        /// Converts to data memory tensor.
        pub fn to_dm<Cluster: M, Slice: M, Element2: M>(
            self,
            _dma: &mut DmaContext<{ Dma::Tensor }>,
            address: Address,
        ) -> DmTensor<D, Chip, Cluster, Slice, Element2> {
            stub()
        }
        /// Writes to data memory tensor view.
        pub fn to_dm_view<Cluster: M, Slice: M, Element2: M>(
            self,
            _dma: &mut DmaContext<{ Dma::Tensor }>,
            dst: DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element2>,
        ) {
            stub()
        }
        /// Creates immutable views by splitting along a tile expression.
        pub fn tile<Index: M, const LEN: usize, Element2: M>(&self, start: usize) -> HbmTensorView<'l, D, Chip, Element2> {
            stub()
        }
    }

    /// Mutable view of an HBM tensor.
    #[derive(Debug)]
    pub struct HbmTensorViewMut<'l, D: Scalar, Chip: M, Element: M> {
        _m: PhantomData<(&'l mut (), D, Chip, Element)>,
    }

    impl<'l, D: Scalar, Chip: M, Element: M> HbmTensorViewMut<'l, D, Chip, Element> {
        /// Returns the base HBM address of this view.
        pub fn address(&self) -> Address {
            stub()
        }
        /// Creates mutable views by splitting along a tile expression.
        pub fn tile<Index: M, const LEN: usize, Element2: M>(
            &mut self,
            start: usize,
        ) -> HbmTensorViewMut<'l, D, Chip, Element2> {
            stub()
        }
    }

    /// Tensor stored in data memory.
    #[derive(Debug)]
    pub struct DmTensor<D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M> {
        _m: PhantomData<(D, Chip, Cluster, Slice, Element)>,
    }

    impl<D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M> DmTensor<D, Chip, Cluster, Slice, Element> {
        /// Creates a DM tensor handle at the given raw address.
        ///
        /// # Safety
        /// As the library's: the layout at the address must match the mapping.
        pub unsafe fn from_addr(address: Address) -> Self {
            stub()
        }
        /// Converts to HBM tensor.
        pub fn to_hbm<Element2: M>(
            &self,
            _dma: &mut DmaContext<{ Dma::Tensor }>,
            address: Address,
        ) -> HbmTensor<D, Chip, Element2> {
            stub()
        }
        /// Converts to data memory tensor.
        pub fn to_dm<Slice2: M, Element2: M>(
            &self,
            _dma: &mut DmaContext<{ Dma::Tensor }>,
            address: Address,
        ) -> DmTensor<D, Chip, Cluster, Slice2, Element2> {
            stub()
        }
        /// Creates an immutable view.
        pub fn view<'l>(&'l self) -> DmTensorView<'l, D, Chip, Cluster, Slice, Element> {
            stub()
        }
        /// Creates a mutable view.
        pub fn view_mut<'l>(&'l mut self) -> DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element> {
            stub()
        }
    }

    /// Mutable view of a data memory tensor.
    #[derive(Debug)]
    pub struct DmTensorViewMut<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M> {
        _m: PhantomData<(&'l mut (), D, Chip, Cluster, Slice, Element)>,
    }

    /// View of a data memory tensor.
    #[derive(Debug, Clone)]
    pub struct DmTensorView<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M> {
        _m: PhantomData<(&'l (), D, Chip, Cluster, Slice, Element)>,
    }

    impl<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M> DmTensorView<'l, D, Chip, Cluster, Slice, Element> {
        /// Writes data to a mutable tensor view for HBM.
        pub fn to_hbm_view<Element2: M>(
            self,
            _dma: &mut DmaContext<{ Dma::Tensor }>,
            dst: HbmTensorViewMut<'l, D, Chip, Element2>,
        ) {
            stub()
        }
        /// Writes data to a mutable tensor view for data memory.
        pub fn to_dm_view<Slice2: M, Element2: M>(
            self,
            _dma: &mut DmaContext<{ Dma::Tensor }>,
            dst: DmTensorViewMut<'l, D, Chip, Cluster, Slice2, Element2>,
        ) {
            stub()
        }
        /// Creates immutable views by splitting along a tile expression over Element.
        pub fn tile<Index: M, const LEN: usize, Element2: M>(
            &self,
            start: usize,
        ) -> DmTensorView<'l, D, Chip, Cluster, Slice, Element2> {
            stub()
        }
    }

    impl<'l, D: Scalar, Chip: M, Cluster: M, Slice: M, Element: M> DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element> {
        /// Creates mutable views by splitting along a tile expression over Element.
        pub fn tile<Index: M, const LEN: usize, Element2: M>(
            &mut self,
            start: usize,
        ) -> DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element2> {
            stub()
        }
    }

    /// Tensor stored in the tensor register file.
    #[derive(Debug)]
    pub struct TrfTensor<D: Scalar, Chip: M, Cluster: M, Slice: M, Row: M, Element: M> {
        _m: PhantomData<(D, Chip, Cluster, Slice, Row, Element)>,
    }

    impl<D: Scalar, Chip: M, Cluster: M, Slice: M, Row: M, Element: M> TrfTensor<D, Chip, Cluster, Slice, Row, Element> {
        /// Creates a TRF tensor handle at the given raw address.
        ///
        /// # Safety
        /// As the library's: the layout at the address must match the mapping.
        pub unsafe fn from_addr(address: TrfAddress) -> Self {
            stub()
        }
    }

    /// Tensor stored in the vector register file (VRF).
    #[derive(Debug, Clone)]
    pub struct VrfTensor<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M> {
        _m: PhantomData<(D, Chip, Cluster, Slice, Element)>,
    }

    impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M> VrfTensor<D, Chip, Cluster, Slice, Element> {
        /// Creates a VRF tensor handle at the given raw address.
        ///
        /// # Safety
        /// As the library's: the layout at the address must match the mapping.
        pub unsafe fn from_addr(address: Address) -> Self {
            stub()
        }
    }
}

/// Tensors streamed through the pipeline (furiosa-visa-std/src/stream_tensor.rs).
pub mod stream_tensor {
    use super::*;
    use crate::cast::{Cast, ContractionCast, FetchCast, StreamCast};
    use crate::context::{Tu, TuContext};
    use crate::memory_tensor::{Address, DmTensor, DmTensorViewMut, TrfAddress, TrfTensor, VrfTensor};
    use crate::scalar::Scalar;
    use crate::vector_engine::{VeScalar, VectorInitTensor};

    /// Contraction mode for accumulation.
    #[derive(Clone, Debug)]
    pub enum AccumulationKind {
        /// Interleaved accumulation.
        Interleaved,
        /// Sequential accumulation.
        Sequential,
    }

    /// Marker trait for the pipeline position of stream tensors.
    pub trait Position: core::fmt::Debug + 'static {}

    macro_rules! positions {
        ($($p:ident),*) => { $(#[derive(Debug)] pub struct $p; impl Position for $p {})* };
    }
    positions!(
        PositionBegin,
        PositionFetch,
        PositionSwitch,
        PositionCollect,
        PositionContraction,
        PositionVectorFinal,
        PositionCast,
        PositionTranspose
    );

    /// Tensor streamed through the pipeline.
    #[derive(Debug)]
    pub struct StreamTensor<'l, const T: Tu, P: Position, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> {
        pub(crate) ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(P, D, Chip, Cluster, Slice, Time, Packet)>,
    }

    /// Tensor streamed after the beginning.
    pub type BeginTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionBegin, D, Chip, Cluster, Slice, Time, Packet>;
    /// Tensor streamed after the fetch engine.
    pub type FetchTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionFetch, D, Chip, Cluster, Slice, Time, Packet>;
    /// Tensor streamed after the switch engine.
    pub type SwitchTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionSwitch, D, Chip, Cluster, Slice, Time, Packet>;
    /// Tensor after the collect engine.
    pub type CollectTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionCollect, D, Chip, Cluster, Slice, Time, Packet>;
    /// Tensor streamed after the contraction engine.
    pub type AccumulationTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionContraction, D, Chip, Cluster, Slice, Time, Packet>;
    /// Tensor after the vector engine (after `vector_final()`).
    pub type VectorFinalTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionVectorFinal, D, Chip, Cluster, Slice, Time, Packet>;
    /// Tensor streamed after the cast engine.
    pub type CastTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionCast, D, Chip, Cluster, Slice, Time, Packet>;
    /// Tensor streamed after the transpose engine.
    pub type TransposeTensor<'l, const T: Tu, D, Chip, Cluster, Slice, Time, Packet> =
        StreamTensor<'l, { T }, PositionTranspose, D, Chip, Cluster, Slice, Time, Packet>;

    /// Pair of aligned tensors ready for contraction.
    #[derive(Debug)]
    pub struct AlignedPair<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Row: M, Time: M, Packet: M> {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(D, Chip, Cluster, Slice, Row, Time, Packet)>,
    }

    /// Tensor after contraction, before accumulation.
    #[derive(Debug)]
    pub struct ContractionTensor<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Row: M, Time: M, Packet: M> {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(D, Chip, Cluster, Slice, Row, Time, Packet)>,
    }

    /// Configuration for the `switch` operation (no `Forwarding` variant).
    #[derive(Debug, Clone)]
    pub enum SwitchConfig {
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
            /// Ring group size for the custom routing.
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

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        BeginTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Performs fetch operation to create a fetched tensor.
        pub fn fetch<D2: Scalar, Time2: M, Packet2: M>(self) -> FetchTensor<'l, T, D2, Chip, Cluster, Slice, Time2, Packet2>
        where
            D: FetchCast<D2>,
        {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        FetchTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Performs switching operation to create a switched tensor.
        pub fn switch<Slice2: M, Time2: M>(self, config: SwitchConfig) -> SwitchTensor<'l, T, D, Chip, Cluster, Slice2, Time2, Packet> {
            stub()
        }
        /// Skips the switching network and goes directly to collect.
        pub fn collect<Time2: M, Packet2: M>(self) -> CollectTensor<'l, T, D, Chip, Cluster, Slice, Time2, Packet2> {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        SwitchTensor<'l, { T }, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Normalizes packet to exactly 32 bytes (one flit).
        pub fn collect<Time2: M, Packet2: M>(self) -> CollectTensor<'l, T, D, Chip, Cluster, Slice, Time2, Packet2> {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        CollectTensor<'l, { T }, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Stores to the tensor register file.
        pub fn to_trf<Row: M, Element: M>(self, address: TrfAddress) -> TrfTensor<D, Chip, Cluster, Slice, Row, Element> {
            stub()
        }
        /// Stores to the vector register file.
        pub fn to_vrf<Element2: M>(self, address: Address) -> VrfTensor<D, Chip, Cluster, Slice, Element2>
        where
            D: VeScalar,
        {
            stub()
        }
        /// Initializes Vector Engine processing for this tensor.
        pub fn vector_init(self) -> VectorInitTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
        where
            D: VeScalar,
        {
            stub()
        }
        /// Aligns LHS stream and RHS TRF to computation shape.
        pub fn align<OutTime: M, OutPacket: M, Row: M, TrfElement: M>(
            self,
            trf_tensor: &TrfTensor<D, Chip, Cluster, Slice, Row, TrfElement>,
        ) -> AlignedPair<'l, { T }, D, Chip, Cluster, Slice, Row, OutTime, OutPacket> {
            stub()
        }
        /// Performs transpose operation.
        pub fn transpose<OutTime: M, OutPacket: M>(self) -> TransposeTensor<'l, T, D, Chip, Cluster, Slice, OutTime, OutPacket> {
            stub()
        }
    }

    impl<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> StreamCast<D>
        for CollectTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
    {
        type CastOutput<D2: Scalar, OutPacket: M>
            = CastTensor<'l, T, D2, Chip, Cluster, Slice, Time, OutPacket>
        where
            D: Cast<D2>;

        fn cast<D2: Scalar, OutPacket: M>(self) -> Self::CastOutput<D2, OutPacket>
        where
            D: Cast<D2>,
        {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Row: M, Time: M, Packet: M>
        AlignedPair<'l, { T }, D, Chip, Cluster, Slice, Row, Time, Packet>
    {
        /// Performs contraction (LAT reduce within Packet).
        pub fn contract<OutPacket: M>(
            self,
        ) -> ContractionTensor<'l, { T }, <D as ContractionCast>::Output, Chip, Cluster, Slice, Row, Time, OutPacket>
        where
            D: ContractionCast + Cast<<D as ContractionCast>::Output>,
        {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Row: M, Time: M, Packet: M>
        ContractionTensor<'l, { T }, D, Chip, Cluster, Slice, Row, Time, Packet>
    {
        /// Performs accumulation (accumulator reduce across Time).
        pub fn accumulate<OutTime: M, OutPacket: M>(
            self,
            kind: AccumulationKind,
        ) -> AccumulationTensor<'l, { T }, D, Chip, Cluster, Slice, OutTime, OutPacket> {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        AccumulationTensor<'l, { T }, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Initializes Vector Engine processing from contraction output.
        pub fn vector_init(self) -> VectorInitTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
        where
            D: VeScalar,
        {
            stub()
        }
    }

    impl<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> StreamCast<D>
        for AccumulationTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
    {
        type CastOutput<D2: Scalar, OutPacket: M>
            = CastTensor<'l, T, D2, Chip, Cluster, Slice, Time, OutPacket>
        where
            D: Cast<D2>;

        fn cast<D2: Scalar, OutPacket: M>(self) -> Self::CastOutput<D2, OutPacket>
        where
            D: Cast<D2>,
        {
            stub()
        }
    }

    impl<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> StreamCast<D>
        for VectorFinalTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
    {
        type CastOutput<D2: Scalar, OutPacket: M>
            = CastTensor<'l, T, D2, Chip, Cluster, Slice, Time, OutPacket>
        where
            D: Cast<D2>;

        fn cast<D2: Scalar, OutPacket: M>(self) -> Self::CastOutput<D2, OutPacket>
        where
            D: Cast<D2>,
        {
            stub()
        }
    }

    impl<'l, const T: Tu, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        VectorFinalTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Stores to the vector register file after VE pipeline.
        pub fn to_vrf<Element: M>(self, address: Address) -> VrfTensor<D, Chip, Cluster, Slice, Element>
        where
            D: VeScalar,
        {
            stub()
        }
        /// Performs transpose operation.
        pub fn transpose<Time2: M, Packet2: M>(self) -> TransposeTensor<'l, T, D, Chip, Cluster, Slice, Time2, Packet2> {
            stub()
        }
    }

    impl<'l, const T: Tu, P: Position, D: Scalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        StreamTensor<'l, { T }, P, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Commits to the data memory.
        pub fn commit<Element: M>(self, address: Address) -> DmTensor<D, Chip, Cluster, Slice, Element> {
            stub()
        }
        /// Commits to mutable tensor view in the data memory.
        pub fn commit_view<Element: M>(self, dst: DmTensorViewMut<'l, D, Chip, Cluster, Slice, Element>) {
            stub()
        }
    }
}

/// The Vector Engine (furiosa-visa-std/src/vector_engine/: tensor/vector_tensor.rs,
/// tensor/vector_tensor_pair.rs, op/mod.rs, op/arg_mode.rs, operand.rs,
/// branch.rs, stage/markers.rs). The tensor types keep the stage `S`, the
/// element type, the five mappings, the entry order and the packet mode of
/// the vendor's `VectorTensor`; its stash and context parameters, which only
/// gate `vector_stash`/`vector_filter` after a zip, are left out (tcpmap's
/// engines check those, VE-R pair rules).
pub mod vector_engine {
    use super::*;
    use crate::__mapping::{AxisName, Pair};
    use crate::context::{Tu, TuContext};
    use crate::memory_tensor::VrfTensor;
    use crate::scalar::Scalar;
    use crate::stream_tensor::VectorFinalTensor;

    /// Scalar types the Vector Engine supports: i32 and f32
    /// (vector_engine/scalar.rs).
    pub trait VeScalar: Scalar {}
    impl VeScalar for i32 {}
    impl VeScalar for f32 {}

    /// The mapping of a tensor in the Vector Engine (tensor/mod.rs
    /// `VeTensorShape`): `m![{Chip}, {Cluster}, {Slice}, {Time}, {Packet}]`.
    pub type VeTensorShape<Chip, Cluster, Slice, Time, Packet> = Pair<Chip, Pair<Cluster, Pair<Slice, Pair<Time, Packet>>>>;

    /// Which block a pass entered first (stage/markers.rs).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, ConstParamTy)]
    pub enum VeOrder {
        /// The intra-slice block first.
        IntraFirst,
        /// The inter-slice block first.
        InterFirst,
    }

    /// Packet mode (stage/markers.rs): 8 lanes, or 4 after a Narrow.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, ConstParamTy)]
    pub enum PacketMode {
        /// Eight lanes.
        Way8,
        /// Four lanes (the float stages).
        Way4,
    }
    use PacketMode::{Way4, Way8};

    // ---- branch.rs

    /// Branch mode configuration (branch.rs).
    #[derive(Debug, Clone)]
    pub enum BranchMode {
        /// No branching.
        Unconditional,
        /// Toggle group id on an axis index.
        AxisToggle {
            /// Axis identifier.
            axis: &'static str,
        },
        /// Valid count generator.
        ValidCount,
        /// Each branch id bit from a comparison.
        Comparison([InputCmp; 4]),
        /// Execution ids from VRF.
        Vrf,
    }

    /// A comparison of the branch unit (branch.rs).
    #[derive(Debug, Clone)]
    pub enum InputCmp {
        /// i32 comparison.
        I32(InputCmpI32),
        /// f32 comparison.
        F32(InputCmpF32),
    }

    macro_rules! input_cmp {
        ($name:ident, $t:ty) => {
            /// Comparisons of one element type (branch.rs).
            #[derive(Debug, Clone)]
            pub enum $name {
                /// Equal to the boundary.
                Equal { boundary: $t },
                /// Less than the boundary.
                Less { boundary: $t },
                /// Greater than the boundary.
                Greater { boundary: $t },
                /// Less, unsigned.
                LessUnsigned { boundary: $t },
                /// Greater, unsigned.
                GreaterUnsigned { boundary: $t },
                /// Always set.
                True,
                /// Never set.
                False,
            }
        };
    }
    input_cmp!(InputCmpI32, i32);
    input_cmp!(InputCmpF32, f32);

    /// The group bit of an execution id (branch.rs).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum GroupId {
        /// Group 0.
        Zero,
        /// Group 1.
        One,
    }

    /// Which execution ids an operand or filter admits (branch.rs).
    #[derive(Debug, Clone, Default)]
    pub enum ValidBranchIds {
        /// Only one group.
        ValidGroup {
            /// The group.
            id: GroupId,
        },
        /// Every element.
        #[default]
        ValidAlways,
    }

    impl From<GroupId> for ValidBranchIds {
        fn from(id: GroupId) -> Self {
            ValidBranchIds::ValidGroup { id }
        }
    }

    // ---- op/mod.rs, op/arg_mode.rs, alu.rs

    macro_rules! ve_enum {
        ($(#[$m:meta])* $name:ident { $($v:ident),* $(,)? }) => {
            $(#[$m])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub enum $name { $(#[allow(missing_docs)] $v),* }
        };
    }
    ve_enum!(/// Logic binary operations on i32 (op/mod.rs).
        LogicBinaryOpI32 { BitAnd, BitOr, BitXor, LeftShift, LogicRightShift, ArithRightShift });
    ve_enum!(/// Logic binary operations on f32 (op/mod.rs).
        LogicBinaryOpF32 { BitAnd, BitOr, BitXor });
    ve_enum!(/// Fixed-point binary operations (op/mod.rs).
        FxpBinaryOp { AddFxp, AddFxpSat, SubFxp, SubFxpSat, LeftShift, LeftShiftSat, MulFxp, MulInt, LogicRightShift, ArithRightShift, ArithRightShiftRound });
    ve_enum!(/// Float unary operations (op/mod.rs).
        FpUnaryOp { Exp, NegExp, Sqrt, Tanh, Sigmoid, Erf, Log, Sin, Cos });
    ve_enum!(/// The multiplier ALU of a float multiply (alu.rs).
        FpMulAlu { Mul0, Mul1 });
    ve_enum!(/// Float ternary operations (op/mod.rs).
        FpTernaryOp { FmaF, MaskFmaF });
    ve_enum!(/// Intra-slice reduce operations on i32 (op/mod.rs).
        IntraSliceReduceOpI32 { AddSat, Max, Min });
    ve_enum!(/// Intra-slice reduce operations on f32 (op/mod.rs).
        IntraSliceReduceOpF32 { Add, Max, Min });
    ve_enum!(/// Inter-slice reduce operations on i32 (op/mod.rs).
        InterSliceReduceOpI32 { Add, AddSat, Max, Min });
    ve_enum!(/// Inter-slice reduce operations on f32 (op/mod.rs).
        InterSliceReduceOpF32 { Add, Max, Min, Mul });
    ve_enum!(/// FpDiv binary operations (op/mod.rs).
        FpDivBinaryOp { DivF });
    ve_enum!(/// Clip binary operations on i32 (op/mod.rs).
        ClipBinaryOpI32 { Min, Max, AbsMin, AbsMax, AddFxp, AddFxpSat });
    ve_enum!(/// Clip binary operations on f32 (op/mod.rs).
        ClipBinaryOpF32 { Min, Max, AbsMin, AbsMax, Add });
    ve_enum!(/// Unary argument modes (op/arg_mode.rs).
        UnaryArgMode { Mode0, Mode1 });
    ve_enum!(/// Binary argument modes, ModeXY = op(argX, argY), 0 the stream, 1 the operand (op/arg_mode.rs).
        BinaryArgMode { Mode00, Mode01, Mode10, Mode11 });
    ve_enum!(/// Ternary argument modes (op/arg_mode.rs).
        TernaryArgMode { Mode012, Mode002, Mode102, Mode112, Mode020, Mode021, Mode120 });

    /// Float binary operations (op/mod.rs).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum FpBinaryOp {
        /// Addition.
        AddF,
        /// Subtraction.
        SubF,
        /// Multiplication on a multiplier ALU.
        MulF(FpMulAlu),
        /// Masked multiplication.
        MaskMulF(FpMulAlu),
        /// Division.
        DivF,
    }

    /// A float division with its mode (op/mod.rs `FpDivOp`, fields
    /// crate-private): `vector_fp_div` takes it, built by
    /// `FpDivBinaryOp::with_mode`.
    #[derive(Debug, Clone, Copy)]
    pub struct FpDivOp {
        op: FpDivBinaryOp,
        mode: BinaryArgMode,
    }

    impl FpDivBinaryOp {
        /// Converts to FpDivOp with the argument mode.
        pub fn with_mode(self, mode: BinaryArgMode) -> FpDivOp {
            FpDivOp { op: self, mode }
        }
    }

    // ---- operand.rs

    /// The stash read marker (operand.rs).
    #[derive(Debug, Clone, Copy)]
    pub struct Stash;

    /// A right-hand operand: a constant, VRF data, or the stash (operand.rs).
    #[derive(Debug, Clone)]
    pub enum VeRhs<D: VeScalar, TargetMapping: M> {
        /// A constant.
        Const {
            /// The value.
            v: D,
        },
        /// VRF data transposed to the target's mapping.
        Vrf {
            /// The data.
            data: PhantomData<TargetMapping>,
        },
        /// The stash.
        Stash,
    }

    impl<D: VeScalar, TargetMapping: M> VeRhs<D, TargetMapping> {
        /// A constant operand.
        pub fn constant(v: D) -> Self {
            VeRhs::Const { v }
        }
        /// A VRF operand, transposed (with broadcast) to the target mapping.
        pub fn vrf<Chip: M, Cluster: M, Slice: M, Element: M>(vrf: &VrfTensor<D, Chip, Cluster, Slice, Element>) -> Self {
            stub()
        }
    }

    impl<TargetMapping: M> From<i32> for VeRhs<i32, TargetMapping> {
        fn from(v: i32) -> Self {
            VeRhs::Const { v }
        }
    }
    impl<TargetMapping: M> From<f32> for VeRhs<f32, TargetMapping> {
        fn from(v: f32) -> Self {
            VeRhs::Const { v }
        }
    }
    impl<D: VeScalar, TargetMapping: M> From<Stash> for VeRhs<D, TargetMapping> {
        fn from(_: Stash) -> Self {
            VeRhs::Stash
        }
    }
    impl<D: VeScalar, Chip: M, Cluster: M, Slice: M, Element: M, TargetMapping: M> From<&VrfTensor<D, Chip, Cluster, Slice, Element>>
        for VeRhs<D, TargetMapping>
    {
        fn from(vrf: &VrfTensor<D, Chip, Cluster, Slice, Element>) -> Self {
            VeRhs::vrf(vrf)
        }
    }

    /// An operand with the execution ids it applies to (operand.rs).
    #[derive(Debug, Clone)]
    pub struct VeBranchOperand<D: VeScalar, TargetMapping: M> {
        /// The operand.
        pub operand: VeRhs<D, TargetMapping>,
        /// The ids it applies to.
        pub valid_branch_ids: ValidBranchIds,
    }

    impl<D: VeScalar, TargetMapping: M> VeBranchOperand<D, TargetMapping> {
        /// Applied to every group.
        pub fn always(operand: VeRhs<D, TargetMapping>) -> Self {
            VeBranchOperand { operand, valid_branch_ids: ValidBranchIds::ValidAlways }
        }
        /// Applied to one group.
        pub fn group(operand: VeRhs<D, TargetMapping>, id: GroupId) -> Self {
            VeBranchOperand { operand, valid_branch_ids: ValidBranchIds::ValidGroup { id } }
        }
    }

    impl<R, D: VeScalar, Mapping: M> From<R> for VeBranchOperand<D, Mapping>
    where
        R: Into<VeRhs<D, Mapping>>,
    {
        fn from(rhs: R) -> Self {
            VeBranchOperand::always(rhs.into())
        }
    }

    /// Operands of a binary operation: one operand, or an array of guarded
    /// ones (operand.rs `IntoOperands<D, TargetMapping>`).
    pub trait IntoOperands<D: VeScalar, TargetMapping: M> {}
    impl<T, D: VeScalar, TargetMapping: M> IntoOperands<D, TargetMapping> for T where T: Into<VeBranchOperand<D, TargetMapping>> {}
    impl<D: VeScalar, TargetMapping: M, const N: usize> IntoOperands<D, TargetMapping> for [VeBranchOperand<D, TargetMapping>; N] {}

    /// The operands of a ternary operation (operand.rs `TernaryOperand`).
    #[derive(Debug, Clone)]
    pub struct TernaryOperand<Mapping: M> {
        /// First operand.
        pub operand0: VeRhs<f32, Mapping>,
        /// Second operand.
        pub operand1: f32,
        /// The ids it applies to.
        pub valid_branch_ids: ValidBranchIds,
    }
    impl<R, Mapping: M> From<(R, f32)> for TernaryOperand<Mapping>
    where
        R: Into<VeRhs<f32, Mapping>>,
    {
        fn from((operand0, operand1): (R, f32)) -> Self {
            TernaryOperand { operand0: operand0.into(), operand1, valid_branch_ids: ValidBranchIds::ValidAlways }
        }
    }

    /// Operands of a ternary operation (operand.rs `IntoTernaryOperands`).
    pub trait IntoTernaryOperands<TargetMapping: M> {}
    impl<T, TargetMapping: M> IntoTernaryOperands<TargetMapping> for T where T: Into<TernaryOperand<TargetMapping>> {}
    impl<TargetMapping: M, const N: usize> IntoTernaryOperands<TargetMapping> for [TernaryOperand<TargetMapping>; N] {}

    /// One group's operand of a paired operation, `()` to skip the group
    /// (operand.rs `IntoGroupOperand`).
    pub trait IntoGroupOperand<D: VeScalar, Mapping: M> {}
    impl<D: VeScalar, Mapping: M> IntoGroupOperand<D, Mapping> for () {}
    impl<D: VeScalar, Mapping: M> IntoGroupOperand<D, Mapping> for Option<VeBranchOperand<D, Mapping>> {}
    impl<T, D: VeScalar, Mapping: M> IntoGroupOperand<D, Mapping> for T where T: Into<VeBranchOperand<D, Mapping>> {}

    /// One group's ternary operands, `()` to skip (operand.rs).
    pub trait IntoGroupTernaryOperand<Mapping: M> {}
    impl<Mapping: M> IntoGroupTernaryOperand<Mapping> for () {}
    impl<T, Mapping: M> IntoGroupTernaryOperand<Mapping> for T where T: Into<TernaryOperand<Mapping>> {}

    // ---- stage/markers.rs

    /// Pipeline stages and their order (stage/markers.rs).
    pub mod stage {
        /// A stage.
        pub trait Stage {}
        /// The intra-slice stages.
        pub trait IntraSliceStage: Stage {}
        /// The inter-slice stages.
        pub trait InterSliceStage: Stage {}
        /// Stages `vector_stash` may follow.
        pub trait Stashable: Stage {}
        /// Stages that may go on to `Target`.
        pub trait CanTransitionTo<Target: Stage> {}
        macro_rules! stages {
            ($($s:ident: $($tr:ident),*;)*) => {$(
                #[doc = concat!("The ", stringify!($s), " stage.")]
                #[derive(Debug, Clone, Copy)]
                pub struct $s;
                impl Stage for $s {}
                $(impl $tr for $s {})*
            )*};
        }
        stages! {
            Branch: IntraSliceStage, Stashable;
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
        macro_rules! to {
            ($t:ident <- $($s:ident),*) => { $(impl CanTransitionTo<$t> for $s {})* };
        }
        to!(Logic <- Branch, Logic);
        to!(Fxp <- Branch, Logic, Fxp);
        to!(FxpToFp <- Branch, Logic, Fxp);
        to!(Narrow <- Branch, Logic, Fxp, FxpToFp);
        to!(Fp <- Branch, Logic, Fxp, FxpToFp, Narrow, Fp);
        to!(IntraSliceReduce <- Branch, Logic, Fxp, FxpToFp, Narrow, Fp);
        to!(FpDiv <- Branch, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce);
        to!(Widen <- Branch, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv);
        to!(FpToFxp <- Branch, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen);
        to!(Clip <- Branch, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip);
        to!(Branch <- InterSliceReduce);
        to!(Filter <- InterSliceReduce, Branch, Logic, Fxp, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip);
        to!(Output <- InterSliceReduce, Branch, Logic, Fxp, Filter, FxpToFp, Narrow, Fp, IntraSliceReduce, FpDiv, Widen, FpToFxp, Clip, Output);
        to!(InterSliceReduce <- Branch, Logic, Fxp, FxpToFp, Widen, FpToFxp, Clip);
    }

    // ---- tensor/vector_tensor.rs

    /// VE input after `vector_init()`.
    #[derive(Debug)]
    pub struct VectorInitTensor<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(D, Chip, Cluster, Slice, Time, Packet)>,
    }

    /// A tensor in the Vector Engine at stage `S`, entered in order `O`, in
    /// packet mode `W` (vector_tensor.rs `VectorTensor`).
    #[derive(Debug)]
    pub struct VectorTensor<
        'l,
        const T: Tu,
        S,
        D: VeScalar,
        Chip: M,
        Cluster: M,
        Slice: M,
        Time: M,
        Packet: M,
        const O: VeOrder = { VeOrder::IntraFirst },
        const W: PacketMode = { Way8 },
    > {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(S, D, Chip, Cluster, Slice, Time, Packet)>,
    }

    /// The two groups of two-group mode (vector_tensor_pair.rs `VectorTensorPair`).
    #[derive(Debug)]
    pub struct VectorTensorPair<'l, const T: Tu, D: VeScalar, S, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M, const W: PacketMode = { Way8 }> {
        ctx: &'l mut TuContext<{ T }>,
        _m: PhantomData<(D, S, Chip, Cluster, Slice, SplitTime, Packet)>,
    }

    /// The shape a method's operands are transposed to.
    type Shape<Chip, Cluster, Slice, Time, Packet> = VeTensorShape<Chip, Cluster, Slice, Time, Packet>;

    impl<'l, const T: Tu, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        VectorInitTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet>
    {
        /// Enters the intra-slice block (single stream).
        pub fn vector_intra_slice_branch(self, branch: BranchMode) -> VectorTensor<'l, T, stage::Branch, D, Chip, Cluster, Slice, Time, Packet> {
            stub()
        }
        /// Enters the intra-slice block in two-group mode.
        pub fn vector_intra_slice_unzip<I: AxisName, TileTime: M, SplitTime: M>(
            self,
        ) -> VectorTensorPair<'l, T, D, stage::Branch, Chip, Cluster, Slice, SplitTime, Packet> {
            stub()
        }
    }

    macro_rules! inter_slice_first {
        ($d:ty, $op:ty) => {
            impl<'l, const T: Tu, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M> VectorInitTensor<'l, T, $d, Chip, Cluster, Slice, Time, Packet> {
                /// Inter-slice reduce as the first VE operation.
                pub fn vector_inter_slice_reduce<Slice2: M, Time2: M>(
                    self,
                    op: $op,
                ) -> VectorTensor<'l, T, stage::InterSliceReduce, $d, Chip, Cluster, Slice2, Time2, Packet, { VeOrder::InterFirst }> {
                    stub()
                }
            }
            impl<'l, const T: Tu, S: stage::IntraSliceStage + stage::CanTransitionTo<stage::InterSliceReduce>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
                VectorTensor<'l, T, S, $d, Chip, Cluster, Slice, Time, Packet, { VeOrder::IntraFirst }, { Way8 }>
            {
                /// Inter-slice reduce from an intra-slice stage (IntraFirst).
                pub fn vector_inter_slice_reduce<Slice2: M, Time2: M>(
                    self,
                    op: $op,
                ) -> VectorTensor<'l, T, stage::InterSliceReduce, $d, Chip, Cluster, Slice2, Time2, Packet, { VeOrder::IntraFirst }> {
                    stub()
                }
            }
        };
    }
    inter_slice_first!(i32, InterSliceReduceOpI32);
    inter_slice_first!(f32, InterSliceReduceOpF32);

    impl<'l, const T: Tu, S: stage::InterSliceStage + stage::CanTransitionTo<stage::Branch>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
        VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, { VeOrder::InterFirst }, { Way8 }>
    {
        /// Enters the intra-slice block after an InterFirst reduce.
        pub fn vector_intra_slice_branch(self, branch: BranchMode) -> VectorTensor<'l, T, stage::Branch, D, Chip, Cluster, Slice, Time, Packet, { VeOrder::InterFirst }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, O, { Way8 }>
    {
        /// Exits the Vector Engine (Way8 only).
        pub fn vector_final(self) -> VectorFinalTensor<'l, T, D, Chip, Cluster, Slice, Time, Packet> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stashable, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder, const W: PacketMode>
        VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, O, W>
    {
        /// Writes the stream to the stash.
        pub fn vector_stash(self) -> Self {
            stub()
        }
    }

    /// Binary ops of one cluster on one element type and packet mode:
    /// `name(op, operand)` and `name_with_mode(op, mode, operand)`.
    macro_rules! binary_ops {
        ($d:ty, $w:ident, $stage:ident, $op:ty, $name:ident, $with_mode:ident) => {
            impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::$stage>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
                VectorTensor<'l, T, S, $d, Chip, Cluster, Slice, Time, Packet, O, { $w }>
            {
                #[doc = concat!("`", stringify!($name), "` (vector_tensor.rs).")]
                pub fn $name(
                    self,
                    op: $op,
                    operand: impl IntoOperands<$d, Shape<Chip, Cluster, Slice, Time, Packet>>,
                ) -> VectorTensor<'l, T, stage::$stage, $d, Chip, Cluster, Slice, Time, Packet, O, { $w }> {
                    stub()
                }
                #[doc = concat!("`", stringify!($with_mode), "` (vector_tensor.rs).")]
                pub fn $with_mode(
                    self,
                    op: $op,
                    mode: BinaryArgMode,
                    operand: impl IntoOperands<$d, Shape<Chip, Cluster, Slice, Time, Packet>>,
                ) -> VectorTensor<'l, T, stage::$stage, $d, Chip, Cluster, Slice, Time, Packet, O, { $w }> {
                    stub()
                }
            }
        };
    }
    binary_ops!(i32, Way8, Logic, LogicBinaryOpI32, vector_logic, vector_logic_with_mode);
    binary_ops!(f32, Way8, Logic, LogicBinaryOpF32, vector_logic, vector_logic_with_mode);
    binary_ops!(i32, Way8, Fxp, FxpBinaryOp, vector_fxp, vector_fxp_with_mode);
    binary_ops!(f32, Way4, Fp, FpBinaryOp, vector_fp_binary, vector_fp_binary_with_mode);
    binary_ops!(i32, Way8, Clip, ClipBinaryOpI32, vector_clip, vector_clip_with_mode);
    binary_ops!(f32, Way8, Clip, ClipBinaryOpF32, vector_clip, vector_clip_with_mode);

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FxpToFp>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, i32, Chip, Cluster, Slice, Time, Packet, O, { Way8 }>
    {
        /// i32 to f32.
        pub fn vector_fxp_to_fp(self, int_width: u32) -> VectorTensor<'l, T, stage::FxpToFp, f32, Chip, Cluster, Slice, Time, Packet, O, { Way8 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FpToFxp>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, f32, Chip, Cluster, Slice, Time, Packet, O, { Way8 }>
    {
        /// f32 to i32.
        pub fn vector_fp_to_fxp(self, int_width: u32) -> VectorTensor<'l, T, stage::FpToFxp, i32, Chip, Cluster, Slice, Time, Packet, O, { Way8 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Narrow>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, O, { Way8 }>
    {
        /// Narrow by split: Way8 to Way4, a factor 2 into Time.
        pub fn vector_split<Time2: M, Packet2: M>(self) -> VectorTensor<'l, T, stage::Narrow, D, Chip, Cluster, Slice, Time2, Packet2, O, { Way4 }> {
            stub()
        }
        /// Narrow by trim: the back four lanes dropped.
        pub fn vector_trim_way4<Packet2: M>(self) -> VectorTensor<'l, T, stage::Narrow, D, Chip, Cluster, Slice, Time, Packet2, O, { Way4 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Widen>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, O, { Way4 }>
    {
        /// Widen by concat: Way4 to Way8, a factor 2 out of Time.
        pub fn vector_concat<Time2: M, Packet2: M>(self) -> VectorTensor<'l, T, stage::Widen, D, Chip, Cluster, Slice, Time2, Packet2, O, { Way8 }> {
            stub()
        }
        /// Widen by pad: four padding lanes added.
        pub fn vector_pad_way8<Packet2: M>(self) -> VectorTensor<'l, T, stage::Widen, D, Chip, Cluster, Slice, Time, Packet2, O, { Way8 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Fp>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }>
    {
        /// Float unary operation.
        pub fn vector_fp_unary(self, op: FpUnaryOp) -> VectorTensor<'l, T, stage::Fp, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }> {
            stub()
        }
        /// Float unary operation with a mode.
        pub fn vector_fp_unary_with_mode(self, op: FpUnaryOp, mode: UnaryArgMode) -> VectorTensor<'l, T, stage::Fp, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }> {
            stub()
        }
        /// Float ternary operation.
        pub fn vector_fp_ternary(
            self,
            op: FpTernaryOp,
            operands: impl IntoTernaryOperands<Shape<Chip, Cluster, Slice, Time, Packet>>,
        ) -> VectorTensor<'l, T, stage::Fp, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }> {
            stub()
        }
        /// Float ternary operation with a mode.
        pub fn vector_fp_ternary_with_mode(
            self,
            op: FpTernaryOp,
            mode: TernaryArgMode,
            operands: impl IntoTernaryOperands<Shape<Chip, Cluster, Slice, Time, Packet>>,
        ) -> VectorTensor<'l, T, stage::Fp, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }> {
            stub()
        }
    }

    macro_rules! intra_slice_reduce {
        ($d:ty, $op:ty) => {
            impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::IntraSliceReduce>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
                VectorTensor<'l, T, S, $d, Chip, Cluster, Slice, Time, Packet, O, { Way4 }>
            {
                /// Intra-slice reduce over the axis `Reduce`.
                pub fn vector_intra_slice_reduce<Reduce: AxisName, OTime: M, OPacket: M>(
                    self,
                    op: $op,
                ) -> VectorTensor<'l, T, stage::IntraSliceReduce, $d, Chip, Cluster, Slice, OTime, OPacket, O, { Way4 }> {
                    stub()
                }
            }
        };
    }
    intra_slice_reduce!(i32, IntraSliceReduceOpI32);
    intra_slice_reduce!(f32, IntraSliceReduceOpF32);

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FpDiv>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }>
    {
        /// Float division; `op` is an `FpDivOp` (`FpDivBinaryOp::DivF.with_mode(mode)`).
        pub fn vector_fp_div(
            self,
            op: FpDivOp,
            operand: impl IntoOperands<f32, Shape<Chip, Cluster, Slice, Time, Packet>>,
        ) -> VectorTensor<'l, T, stage::FpDiv, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }> {
            stub()
        }
        /// Float division with a mode.
        pub fn vector_fp_div_with_mode(
            self,
            op: FpDivBinaryOp,
            mode: BinaryArgMode,
            operand: impl IntoOperands<f32, Shape<Chip, Cluster, Slice, Time, Packet>>,
        ) -> VectorTensor<'l, T, stage::FpDiv, f32, Chip, Cluster, Slice, Time, Packet, O, { Way4 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Filter>, D: VeScalar, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M, const O: VeOrder>
        VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, O, { Way8 }>
    {
        /// Keeps the elements of the admitted execution ids.
        pub fn vector_filter<Time2: M>(self, config: ValidBranchIds) -> VectorTensor<'l, T, stage::Filter, D, Chip, Cluster, Slice, Time2, Packet, O, { Way8 }> {
            stub()
        }
    }

    // ---- tensor/vector_tensor_pair.rs

    /// Per-group binary ops of one cluster: `name(op, group0, group1)` and
    /// `name_with_mode(op, mode, group0, group1)`.
    macro_rules! pair_binary_ops {
        ($d:ty, $w:ident, $stage:ident, $op:ty, $name:ident, $with_mode:ident) => {
            impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::$stage>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
                VectorTensorPair<'l, T, $d, S, Chip, Cluster, Slice, SplitTime, Packet, { $w }>
            {
                #[doc = concat!("Per-group `", stringify!($name), "` (vector_tensor_pair.rs); `()` skips a group.")]
                pub fn $name(
                    self,
                    op: $op,
                    group0_operand: impl IntoGroupOperand<$d, Shape<Chip, Cluster, Slice, SplitTime, Packet>>,
                    group1_operand: impl IntoGroupOperand<$d, Shape<Chip, Cluster, Slice, SplitTime, Packet>>,
                ) -> VectorTensorPair<'l, T, $d, stage::$stage, Chip, Cluster, Slice, SplitTime, Packet, { $w }> {
                    stub()
                }
                #[doc = concat!("Per-group `", stringify!($with_mode), "` (vector_tensor_pair.rs).")]
                pub fn $with_mode(
                    self,
                    op: $op,
                    mode: BinaryArgMode,
                    group0_operand: impl IntoGroupOperand<$d, Shape<Chip, Cluster, Slice, SplitTime, Packet>>,
                    group1_operand: impl IntoGroupOperand<$d, Shape<Chip, Cluster, Slice, SplitTime, Packet>>,
                ) -> VectorTensorPair<'l, T, $d, stage::$stage, Chip, Cluster, Slice, SplitTime, Packet, { $w }> {
                    stub()
                }
            }
        };
    }
    pair_binary_ops!(i32, Way8, Logic, LogicBinaryOpI32, vector_logic, vector_logic_with_mode);
    pair_binary_ops!(f32, Way8, Logic, LogicBinaryOpF32, vector_logic, vector_logic_with_mode);
    pair_binary_ops!(i32, Way8, Fxp, FxpBinaryOp, vector_fxp, vector_fxp_with_mode);
    pair_binary_ops!(f32, Way4, Fp, FpBinaryOp, vector_fp_binary, vector_fp_binary_with_mode);
    pair_binary_ops!(f32, Way4, FpDiv, FpDivBinaryOp, vector_fp_div, vector_fp_div_with_mode);
    pair_binary_ops!(i32, Way8, Clip, ClipBinaryOpI32, vector_clip, vector_clip_with_mode);
    pair_binary_ops!(f32, Way8, Clip, ClipBinaryOpF32, vector_clip, vector_clip_with_mode);

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::Fp>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
        VectorTensorPair<'l, T, f32, S, Chip, Cluster, Slice, SplitTime, Packet, { Way4 }>
    {
        /// Per-group float unary operation; the flags say which groups apply it.
        pub fn vector_fp_unary(self, op: FpUnaryOp, group0_apply: bool, group1_apply: bool) -> VectorTensorPair<'l, T, f32, stage::Fp, Chip, Cluster, Slice, SplitTime, Packet, { Way4 }> {
            stub()
        }
        /// Per-group float unary operation with a mode.
        pub fn vector_fp_unary_with_mode(
            self,
            op: FpUnaryOp,
            mode: UnaryArgMode,
            group0_apply: bool,
            group1_apply: bool,
        ) -> VectorTensorPair<'l, T, f32, stage::Fp, Chip, Cluster, Slice, SplitTime, Packet, { Way4 }> {
            stub()
        }
        /// Per-group float ternary operation.
        pub fn vector_fp_ternary(
            self,
            op: FpTernaryOp,
            group0_operand: impl IntoGroupTernaryOperand<Shape<Chip, Cluster, Slice, SplitTime, Packet>>,
            group1_operand: impl IntoGroupTernaryOperand<Shape<Chip, Cluster, Slice, SplitTime, Packet>>,
        ) -> VectorTensorPair<'l, T, f32, stage::Fp, Chip, Cluster, Slice, SplitTime, Packet, { Way4 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FxpToFp>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
        VectorTensorPair<'l, T, i32, S, Chip, Cluster, Slice, SplitTime, Packet, { Way8 }>
    {
        /// i32 to f32 on both groups.
        pub fn vector_fxp_to_fp(self, int_width: u32) -> VectorTensorPair<'l, T, f32, stage::FxpToFp, Chip, Cluster, Slice, SplitTime, Packet, { Way8 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::FpToFxp>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
        VectorTensorPair<'l, T, f32, S, Chip, Cluster, Slice, SplitTime, Packet, { Way8 }>
    {
        /// f32 to i32 on both groups.
        pub fn vector_fp_to_fxp(self, int_width: u32) -> VectorTensorPair<'l, T, i32, stage::FpToFxp, Chip, Cluster, Slice, SplitTime, Packet, { Way8 }> {
            stub()
        }
    }

    // The pair has vector_split and vector_concat only: no vector_trim_way4
    // or vector_pad_way8 (vector_tensor_pair.rs leaves them out).
    impl<'l, const T: Tu, D: VeScalar, S: stage::Stage + stage::CanTransitionTo<stage::Narrow>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
        VectorTensorPair<'l, T, D, S, Chip, Cluster, Slice, SplitTime, Packet, { Way8 }>
    {
        /// Narrow both groups by split.
        pub fn vector_split<SplitTime2: M, Packet2: M>(self) -> VectorTensorPair<'l, T, D, stage::Narrow, Chip, Cluster, Slice, SplitTime2, Packet2, { Way4 }> {
            stub()
        }
    }

    impl<'l, const T: Tu, D: VeScalar, S: stage::Stage + stage::CanTransitionTo<stage::Widen>, Chip: M, Cluster: M, Slice: M, SplitTime: M, Packet: M>
        VectorTensorPair<'l, T, D, S, Chip, Cluster, Slice, SplitTime, Packet, { Way4 }>
    {
        /// Widen both groups by concat.
        pub fn vector_concat<SplitTime2: M, Packet2: M>(self) -> VectorTensorPair<'l, T, D, stage::Widen, Chip, Cluster, Slice, SplitTime2, Packet2, { Way8 }> {
            stub()
        }
    }

    /// The zip ops of one cluster: `name(op)` and `name_with_mode(op, mode)`
    /// merge the groups into one stream (vector_tensor_pair.rs).
    macro_rules! zip_ops {
        ($d:ty, $w:ident, $stage:ident, $op:ty, $name:ident, $with_mode:ident) => {
            impl<'l, const T: Tu, S: stage::Stage + stage::CanTransitionTo<stage::$stage>, Chip: M, Cluster: M, Slice: M, Time: M, Packet: M>
                VectorTensorPair<'l, T, $d, S, Chip, Cluster, Slice, Time, Packet, { $w }>
            {
                #[doc = concat!("`", stringify!($name), "`: op(group0, group1).")]
                pub fn $name(self, op: $op) -> VectorTensor<'l, T, stage::$stage, $d, Chip, Cluster, Slice, Time, Packet, { VeOrder::IntraFirst }, { $w }> {
                    stub()
                }
                #[doc = concat!("`", stringify!($with_mode), "` with the argument mode over the two groups.")]
                pub fn $with_mode(self, op: $op, mode: BinaryArgMode) -> VectorTensor<'l, T, stage::$stage, $d, Chip, Cluster, Slice, Time, Packet, { VeOrder::IntraFirst }, { $w }> {
                    stub()
                }
            }
        };
    }
    zip_ops!(i32, Way8, Logic, LogicBinaryOpI32, vector_logic_zip, vector_logic_zip_with_mode);
    zip_ops!(f32, Way8, Logic, LogicBinaryOpF32, vector_logic_zip, vector_logic_zip_with_mode);
    zip_ops!(i32, Way8, Fxp, FxpBinaryOp, vector_fxp_zip, vector_fxp_zip_with_mode);
    zip_ops!(f32, Way4, Fp, FpBinaryOp, vector_fp_zip, vector_fp_zip_with_mode);
    zip_ops!(i32, Way8, Clip, ClipBinaryOpI32, vector_clip_zip, vector_clip_zip_with_mode);
    zip_ops!(f32, Way8, Clip, ClipBinaryOpF32, vector_clip_zip, vector_clip_zip_with_mode);
}

/// The runtime (furiosa-visa-std/src/runtime/mod.rs).
pub mod runtime {
    use super::*;
    use crate::context::{Context, DmaContext, TuContext};
    use crate::memory_tensor::{HbmTensor, HbmTensorView, HbmTensorViewMut};
    use crate::scalar::Scalar;

    /// Types that can be sent to device functions.
    pub(crate) trait DeviceSend {}

    impl DeviceSend for () {}
    macro_rules! send_prim {
        ($($t:ty),*) => { $(impl DeviceSend for $t {})* };
    }
    send_prim!(bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);
    impl DeviceSend for &mut Context {}
    impl<const T: crate::context::Tu> DeviceSend for &mut TuContext<T> {}
    impl<const DMA: crate::context::Dma> DeviceSend for &mut DmaContext<DMA> {}
    impl<D: Scalar, Chip: M, Element: M> DeviceSend for HbmTensor<D, Chip, Element> {}
    impl<D: Scalar, Chip: M, Element: M> DeviceSend for &HbmTensor<D, Chip, Element> {}
    impl<D: Scalar, Chip: M, Element: M> DeviceSend for &mut HbmTensor<D, Chip, Element> {}
    impl<D: Scalar, Chip: M, Element: M> DeviceSend for HbmTensorView<'_, D, Chip, Element> {}
    impl<D: Scalar, Chip: M, Element: M> DeviceSend for HbmTensorViewMut<'_, D, Chip, Element> {}
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
