//! Profile 19, SWP-RELAY (`swp-relay.md`) over P1: message classes by msg_type with the
//! publish's required `delivery_id` ([`message`]), and the per-channel delivery
//! bookkeeping ([`deliveries`]): deduplication within a retention window, acknowledgements,
//! the retry schedule a relay declares, and dead-letter reasons from a finite set.

pub mod deliveries;
pub mod message;

pub use deliveries::{Config, Deliveries, DeliveryError, RetryPolicy, Seen};
pub use message::{decode, encode, RelayMessage};

/// The profile id of SWP-RELAY.
pub const PROFILE_ID: u64 = 19;
/// msg_type of `RELAY_PUBLISH`.
pub const MSG_PUBLISH: u64 = 1;
/// msg_type of `RELAY_ACK`.
pub const MSG_ACK: u64 = 2;
/// msg_type of `RELAY_NACK` (optional class).
pub const MSG_NACK: u64 = 3;
/// msg_type of `RELAY_STATUS` (optional class).
pub const MSG_STATUS: u64 = 4;
/// msg_type of `RELAY_ERR`.
pub const MSG_ERR: u64 = 5;

/// The dead-letter reasons this library documents (§4 asks for a finite enumerated set);
/// [`deliveries::Config::reasons`] replaces it.
pub const DEAD_LETTER_REASONS: [&str; 4] = [
    codes::RETRY_EXHAUSTED,
    codes::TTL_EXPIRED,
    codes::CONSUMER_REJECTED,
    codes::NO_ROUTE,
];

/// The reason codes (`RelayNack.reason_code`) and `RELAY_ERR.code` values this library uses.
pub mod codes {
    /// Every attempt of the retry policy went unacknowledged.
    pub const RETRY_EXHAUSTED: &str = "retry_exhausted";
    /// The publish's `ttl_ms` ran out before delivery was confirmed.
    pub const TTL_EXPIRED: &str = "ttl_expired";
    /// The consumer refused the message as not retryable.
    pub const CONSUMER_REJECTED: &str = "consumer_rejected";
    /// No consumer serves the topic.
    pub const NO_ROUTE: &str = "no_route";
    /// `RELAY_ERR.code`: too many deliveries in flight on the channel.
    pub const TOO_MANY_DELIVERIES: &str = "too_many_deliveries";
    /// `RELAY_ERR.code`: an acknowledgement for a delivery the channel does not know.
    pub const UNKNOWN_DELIVERY: &str = "unknown_delivery";
    /// `RELAY_ERR.code`: anything else the relay refused.
    pub const INVALID_MESSAGE: &str = "invalid_message";
}
