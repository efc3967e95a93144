//! Mapping expressions as types: what the stubs' `m![...]` expands to.
//!
//! The vendor's furiosa-mapping crate represents a mapping by a type built
//! from `Identity`, `Symbol<A>`, `Pair<L, R>` and the postfix operators, each
//! implementing `M` (furiosa-mapping/src/lib.rs, furiosa-mapping-types; the
//! names appear in furiosa-visa-std/src/context.rs, e.g.
//! `Padding<Identity, CLUSTER_DIM>`, `Symbol<I>`, `Pair<Chip, Element>`).
//! These types carry the structure of the expression the kernel wrote, so two
//! mapping arguments unify exactly when they are written alike, as the
//! vendor's do. Sizes are computed loosely; no kernel the stubs check reads
//! them.

use core::marker::PhantomData;

/// A mapping expression type (`M` in furiosa-mapping).
pub trait M {
    /// The number of positions.
    const SIZE: usize;
}

/// An axis declared by `axes!` (`AxisName` in furiosa-mapping).
pub trait AxisName {
    /// The axis's name.
    const NAME: &'static str;
    /// The axis's size.
    const SIZE: usize;
}

/// `m![1]`.
#[derive(Debug, Clone, Copy)]
pub struct Identity;

/// `m![N]`, a broadcast of size N (furiosa-opt-std 0.6.0 grammar only).
#[derive(Debug, Clone, Copy)]
pub struct Broadcast<const N: usize>;

/// `m![A]` for an axis A.
#[derive(Debug)]
pub struct Symbol<A>(PhantomData<A>);

/// `m![L, R]`.
#[derive(Debug)]
pub struct Pair<L, R>(PhantomData<(L, R)>);

/// `m![E / N]`.
#[derive(Debug)]
pub struct Stride<E, const N: usize>(PhantomData<E>);

/// `m![E % N]`.
#[derive(Debug)]
pub struct Modulo<E, const N: usize>(PhantomData<E>);

/// `m![E = N]`.
#[derive(Debug)]
pub struct Resize<E, const N: usize>(PhantomData<E>);

/// The padding kind of `#` / `#{*}`.
#[derive(Debug)]
pub struct Top;

/// The padding kind of `#{!}` (furiosa-opt-std 0.6.0 grammar only).
#[derive(Debug)]
pub struct Bottom;

/// The padding kind of `#{0}` (furiosa-opt-std 0.6.0 grammar only).
#[derive(Debug)]
pub struct Zero;

/// `m![E # N]`, with its padding kind.
#[derive(Debug)]
pub struct Padding<E, const N: usize, K = Top>(PhantomData<(E, K)>);

impl M for Identity {
    const SIZE: usize = 1;
}

impl<const N: usize> M for Broadcast<N> {
    const SIZE: usize = N;
}

impl<A: AxisName> M for Symbol<A> {
    const SIZE: usize = A::SIZE;
}

impl<L: M, R: M> M for Pair<L, R> {
    const SIZE: usize = L::SIZE * R::SIZE;
}

impl<E: M, const N: usize> M for Stride<E, N> {
    const SIZE: usize = E::SIZE.div_ceil(N);
}

impl<E: M, const N: usize> M for Modulo<E, N> {
    const SIZE: usize = if E::SIZE < N { E::SIZE } else { N };
}

impl<E: M, const N: usize> M for Resize<E, N> {
    const SIZE: usize = N;
}

impl<E: M, const N: usize, K> M for Padding<E, N, K> {
    const SIZE: usize = N;
}
