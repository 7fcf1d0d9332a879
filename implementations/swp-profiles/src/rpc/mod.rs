//! Profile 12, SWP-RPC (`swp-rpc.md`) over P1: message classes by msg_type with their
//! required fields ([`message`]), and the per-channel call lifecycle with idempotency-key
//! replay ([`lifecycle`]).

pub mod lifecycle;
pub mod message;

pub use lifecycle::{Config, Lifecycle, LifecycleError, Outcome, Seen};
pub use message::{decode, encode, RpcMessage};

/// The profile id of SWP-RPC.
pub const PROFILE_ID: u64 = 12;
/// msg_type of `RPC_REQ`.
pub const MSG_REQ: u64 = 1;
/// msg_type of `RPC_RESP`.
pub const MSG_RESP: u64 = 2;
/// msg_type of `RPC_ERR`.
pub const MSG_ERR: u64 = 3;
/// msg_type of `RPC_STREAM_ITEM`.
pub const MSG_STREAM_ITEM: u64 = 4;
/// msg_type of `RPC_CANCEL`.
pub const MSG_CANCEL: u64 = 5;

/// The `RPC_ERR.error_code` values this library uses: the doc's recommended error classes
/// (§7) plus one for a conflicting idempotency replay (§6), which the classes do not name.
pub mod codes {
    /// Malformed or unacceptable request.
    pub const INVALID_REQUEST: &str = "invalid_request";
    /// No such method.
    pub const UNKNOWN_METHOD: &str = "unknown_method";
    /// The caller may not call the method.
    pub const UNAUTHORIZED: &str = "unauthorized";
    /// The call took too long.
    pub const TIMEOUT: &str = "timeout";
    /// The callee cannot serve now.
    pub const UNAVAILABLE: &str = "unavailable";
    /// The callee failed.
    pub const INTERNAL: &str = "internal";
    /// The call was cancelled (§5: the terminal error after `RPC_CANCEL`).
    pub const CANCELLED: &str = "cancelled";
    /// An idempotency key replayed with other inputs (§6).
    pub const IDEMPOTENCY_CONFLICT: &str = "idempotency_conflict";
}
