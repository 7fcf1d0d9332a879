//! The SWP reference implementation as a library: the testee protocol (shared with the
//! harness, which drives it), the reference's answers to testee requests, and the
//! reference endpoint (`swp-ref serve`): its sans-IO connection logic and its tokio edge;
//! the byte-preserving relay (`swp-ref relay`); the MCP gateway (`swp-ref mcp-gateway`);
//! and the resource limits those three servers share.
#![forbid(unsafe_code)]

pub mod endpoint;
pub mod gateway;
pub mod limits;
pub mod mcpproxy;
pub mod relay;
pub mod serve;
pub mod testee;
