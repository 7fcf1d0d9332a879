//! `swp-ref mcp-gateway`: MCP clients speak JSON-RPC over stdio, HTTP or WebSocket; the
//! gateway validates every message through one pipeline (the envelope policy's schema, tool
//! I/O schemas, the canonical error table) and forwards it upstream as profile-1 frames.
//! See docs/mcp-gateway.md.

pub mod canonical;
pub mod envelope;
pub mod http;
pub mod log;
pub mod origin;
pub mod pipeline;
pub mod policy;
pub mod route;
pub mod schemas;
pub mod serve;
pub mod session;
pub mod streamable;
pub mod upstream;
pub mod ws;
pub mod wsconn;

pub use canonical::{Canonical, GatewayError, UnknownCanonical};
pub use pipeline::{Ingress, Pipeline};
pub use policy::EnvelopePolicy;
