//! Profile 10, SWP-AGDISC (`swp-agdisc.md`) over P1: message classes by msg_type and what a
//! card must carry ([`message`]), and the per-channel cache judge that applies ETag
//! semantics, matches `AGDISC_NOT_MODIFIED` to the validator asked about, and tracks each
//! card's explicit freshness on the caller's clock ([`cache`]).

pub mod cache;
pub mod message;

pub use cache::{Cache, CacheError, Cached, Config, Seen};
pub use message::{decode, encode, AgdiscMessage};

/// The profile id of SWP-AGDISC.
pub const PROFILE_ID: u64 = 10;
/// msg_type of `AGDISC_GET`.
pub const MSG_GET: u64 = 1;
/// msg_type of `AGDISC_DOC`.
pub const MSG_DOC: u64 = 2;
/// msg_type of `AGDISC_NOT_MODIFIED` (an optional class, §2).
pub const MSG_NOT_MODIFIED: u64 = 3;
/// msg_type of `AGDISC_ERR`.
pub const MSG_ERR: u64 = 4;

/// The `AgdiscErr.code` values this library uses: the four reasons of §6, spelled as the
/// project spells them (the spec names the reasons, not their strings, so a SUT declares
/// its own in its manifest).
pub mod codes {
    /// No card for that agent (AGDISC-013).
    pub const NOT_FOUND: &str = "not_found";
    /// The card held for that agent is not a valid card (AGDISC-014).
    pub const INVALID_CARD: &str = "invalid_card";
    /// The asker may not see that card.
    pub const UNAUTHORIZED: &str = "unauthorized";
    /// The responder failed.
    pub const INTERNAL: &str = "internal";
}
