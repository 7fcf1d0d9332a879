//! Profile 1, the MCP mapping profile (`mcp-mapping-profile.md`): JSON-RPC 2.0 messages
//! carried one per SWP envelope.
//!
//! - [`message`] classifies and validates a payload for its `msg_type` (§2-4).
//! - [`jsonrpc`] builds responses that echo a request id octet for octet (§5) and maps core
//!   errors to JSON-RPC codes (§6).
//! - [`correlate`] owns msg_id correlation: fresh ids per in-flight request, duplicate
//!   detection, response matching (§5).

pub mod correlate;
pub mod jsonrpc;
pub mod message;

pub use correlate::{CorrelationError, Correlator, InFlight};
pub use message::{parse, McpMessage, McpPayloadError};

/// The profile id of the MCP mapping profile.
pub const PROFILE_ID: u64 = 1;
/// `msg_type` of a JSON-RPC request.
pub const MSG_TYPE_REQUEST: u64 = 1;
/// `msg_type` of a JSON-RPC response.
pub const MSG_TYPE_RESPONSE: u64 = 2;
/// `msg_type` of a JSON-RPC notification.
pub const MSG_TYPE_NOTIFICATION: u64 = 3;
