//! The SWP reference implementation as a library: the testee protocol (shared with the
//! harness, which drives it), the reference's answers to testee requests, and the
//! reference endpoint (`swp-ref serve`): its sans-IO connection logic and its tokio edge;
//! and the byte-preserving relay (`swp-ref relay`).
#![forbid(unsafe_code)]

pub mod endpoint;
pub mod mcpproxy;
pub mod relay;
pub mod serve;
pub mod testee;
