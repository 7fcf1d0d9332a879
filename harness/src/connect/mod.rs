//! How the harness reaches a SUT (docs/architecture.md, Data flow): codec
//! connectors (the reference in process, a testee process), wires to endpoints (stdio, TCP,
//! TLS), supervision of the processes it starts (and of all they start, `reap`), and the
//! test PKI it generates.

pub mod builtin;
pub mod driver;
#[cfg(feature = "builtin-sut")]
pub mod inproc;
pub mod pki;
pub mod process;
pub mod reap;
pub mod testee;
pub mod wire;
