//! Profile 18, SWP-OBS (`swp-obs.md`) over P1: message classes by msg_type with the trace
//! context rules of §4 ([`message`], [`trace`]), and the per-channel context machine that
//! judges whether a context document preserves what was set ([`context`]).

pub mod context;
pub mod message;
pub mod trace;

pub use context::{compare, Config, ContextError, Contexts, Seen, TraceContext};
pub use message::{decode, encode, ObsMessage};

/// The profile id of SWP-OBS.
pub const PROFILE_ID: u64 = 18;
/// msg_type of `OBS_SET`.
pub const MSG_SET: u64 = 1;
/// msg_type of `OBS_GET`.
pub const MSG_GET: u64 = 2;
/// msg_type of `OBS_DOC`.
pub const MSG_DOC: u64 = 3;
/// msg_type of `OBS_ERR`.
pub const MSG_ERR: u64 = 4;

/// The `OBS_ERR.code` values this library uses.
pub mod codes {
    /// A traceparent that is not a valid W3C traceparent (§4, §6).
    pub const INVALID_TRACEPARENT: &str = "invalid_traceparent";
    /// Trace context without the traceparent it needs.
    pub const MISSING_TRACEPARENT: &str = "missing_traceparent";
    /// A tracestate longer than the endpoint keeps.
    pub const TRACESTATE_TOO_LONG: &str = "tracestate_too_long";
    /// Too many contexts or pending requests on the channel.
    pub const TOO_MANY: &str = "too_many";
}
