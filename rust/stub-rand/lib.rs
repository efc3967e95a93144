//! Stub of the parts of rand 0.9 the emitted host programs and the stubbed
//! libraries use: `SeedableRng::seed_from_u64`, `rngs::SmallRng`, the `Rng`
//! trait and `distr::{Distribution, StandardUniform}` with the primitive
//! types StandardUniform samples. Nothing here runs.

/// The core of a random number generator.
pub trait RngCore {
    /// The next random u64.
    fn next_u64(&mut self) -> u64;
}

/// A random number generator (rand 0.9 `Rng`).
pub trait Rng: RngCore {}

impl<R: RngCore + ?Sized> Rng for R {}

/// A generator built from a seed.
pub trait SeedableRng: Sized {
    /// A generator seeded from a u64.
    fn seed_from_u64(state: u64) -> Self;
}

/// Generators.
pub mod rngs {
    /// A small fast generator (rand 0.9 with the `small_rng` feature).
    #[derive(Debug, Clone)]
    pub struct SmallRng(u64);

    impl super::RngCore for SmallRng {
        fn next_u64(&mut self) -> u64 {
            self.0
        }
    }

    impl super::SeedableRng for SmallRng {
        fn seed_from_u64(state: u64) -> Self {
            SmallRng(state)
        }
    }
}

/// Distributions.
pub mod distr {
    /// A distribution of values of T.
    pub trait Distribution<T> {
        /// One sample.
        fn sample<R: super::Rng + ?Sized>(&self, rng: &mut R) -> T;
    }

    /// The standard distribution of a type.
    #[derive(Debug, Clone, Copy)]
    pub struct StandardUniform;

    macro_rules! standard {
        ($($t:ty),*) => {
            $(impl Distribution<$t> for StandardUniform {
                fn sample<R: super::Rng + ?Sized>(&self, _rng: &mut R) -> $t {
                    unimplemented!("tcpmap stub: type-checking only")
                }
            })*
        };
    }
    standard!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool);
}
