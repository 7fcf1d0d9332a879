//! Profile 17, SWP-STATE (`swp-state.md`) over P1: message classes by msg_type
//! ([`message`]), content-addressed state ids ([`id`]), and the per-channel store that
//! enforces id/hash consistency, existing parents and immutability, and answers GETs
//! deterministically ([`store`]).

pub mod id;
pub mod message;
pub mod store;

pub use id::IdScheme;
pub use message::{decode, encode, StateMessage};
pub use store::{Config, Entry, Seen, Store, StoreError};

/// The profile id of SWP-STATE.
pub const PROFILE_ID: u64 = 17;
/// msg_type of `STATE_PUT`.
pub const MSG_PUT: u64 = 1;
/// msg_type of `STATE_GET`.
pub const MSG_GET: u64 = 2;
/// msg_type of `STATE_DELTA`.
pub const MSG_DELTA: u64 = 3;
/// msg_type of `STATE_ERR`.
pub const MSG_ERR: u64 = 4;

/// The `StateErr.code` values this library uses.
pub mod codes {
    /// No state with that id (STATE-007).
    pub const NOT_FOUND: &str = "not_found";
    /// The id does not match the content (STATE-005).
    pub const HASH_MISMATCH: &str = "hash_mismatch";
    /// The id is not of the scheme's form.
    pub const INVALID_STATE_ID: &str = "invalid_state_id";
    /// A declared parent does not exist (STATE-003).
    pub const MISSING_PARENT: &str = "missing_parent";
    /// The id exists with other content (states are immutable).
    pub const CONFLICTING_STATE: &str = "conflicting_state";
    /// The store is full.
    pub const TOO_MANY: &str = "too_many";
}
