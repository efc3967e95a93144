//! Stub of the parts of tokio the emitted host programs use: the
//! `#[tokio::main]` and `#[tokio::test]` attributes on an `async fn`.
//! A blocking `__block_on` stands in for the runtime; nothing here runs.

pub use tcpmap_stub_macros::{tokio_main as main, tokio_test as test};

/// Runs a future to completion (what the attributes expand to).
pub fn __block_on<F: core::future::Future>(_f: F) -> F::Output {
    unimplemented!("tcpmap stub: type-checking only")
}
