//! Profile 13, SWP-EVENTS (`swp-events.md`) over P1: message classes by msg_type with the
//! event record's required fields ([`message`]), the per-channel producer and subscription
//! bookkeeping ([`stream`]), and the judge of a relayed stream's order and correlation
//! ([`relay`]).

pub mod message;
pub mod relay;
pub mod stream;

pub use message::{decode, encode, EventsMessage};
pub use relay::{Relay, RelayError};
pub use stream::{Config, Seen, Stream, StreamError};

/// The profile id of SWP-EVENTS.
pub const PROFILE_ID: u64 = 13;
/// msg_type of `EVT_PUBLISH`.
pub const MSG_PUBLISH: u64 = 1;
/// msg_type of `EVT_SUBSCRIBE`.
pub const MSG_SUBSCRIBE: u64 = 2;
/// msg_type of `EVT_UNSUBSCRIBE`.
pub const MSG_UNSUBSCRIBE: u64 = 3;
/// msg_type of `EVT_BATCH`.
pub const MSG_BATCH: u64 = 4;
/// msg_type of `EVT_ERR`.
pub const MSG_ERR: u64 = 5;

/// The severity enumeration this library documents (§6 asks for a finite,
/// implementation-documented one): OpenTelemetry's short severity names, lower case,
/// compared exactly. [`stream::Config::severities`] replaces it.
pub const SEVERITIES: [&str; 6] = ["trace", "debug", "info", "warn", "error", "fatal"];

/// The `EVT_ERR.code` values this library uses (§7: subscription, auth, filter failures).
pub mod codes {
    /// Unsubscribe of a subscription the channel does not have.
    pub const UNKNOWN_SUBSCRIPTION: &str = "unknown_subscription";
    /// A filter the endpoint does not serve.
    pub const UNKNOWN_FILTER: &str = "unknown_filter";
    /// The subscriber may not subscribe to this stream.
    pub const UNAUTHORIZED: &str = "unauthorized";
    /// Too many subscriptions on the channel.
    pub const TOO_MANY_SUBSCRIPTIONS: &str = "too_many_subscriptions";
    /// A published event the endpoint refused.
    pub const INVALID_EVENT: &str = "invalid_event";
}
