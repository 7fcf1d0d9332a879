//! Profile 14, SWP-ARTIFACT (`swp-artifact.md`) over P1: message classes by msg_type with
//! the transfer metadata they must carry ([`message`]), the hash algorithms ([`hash`]),
//! deterministic chunk placement and resume tokens ([`chunking`]), the per-channel transfer
//! machine that judges order, ranges, integrity and resume ([`transfer`]), and the
//! sender's side of a transfer ([`source`]).

pub mod chunking;
pub mod hash;
pub mod message;
pub mod source;
pub mod transfer;

pub use hash::HashAlg;
pub use message::{decode, encode, ArtifactMessage};
pub use transfer::{Config, Seen, TransferError, Transfers};

/// The profile id of SWP-ARTIFACT.
pub const PROFILE_ID: u64 = 14;
/// msg_type of `ART_OFFER`.
pub const MSG_OFFER: u64 = 1;
/// msg_type of `ART_GET`.
pub const MSG_GET: u64 = 2;
/// msg_type of `ART_CHUNK`.
pub const MSG_CHUNK: u64 = 3;
/// msg_type of `ART_ACK`.
pub const MSG_ACK: u64 = 4;
/// msg_type of `ART_ERR`.
pub const MSG_ERR: u64 = 5;

/// The `ART_ERR.code` values this library uses.
pub mod codes {
    /// No such artifact.
    pub const NOT_FOUND: &str = "not_found";
    /// A range outside the artifact.
    pub const INVALID_RANGE: &str = "invalid_range";
    /// A resume token the endpoint did not issue for this artifact.
    pub const INVALID_RESUME_TOKEN: &str = "invalid_resume_token";
    /// A chunk out of order.
    pub const OUT_OF_ORDER: &str = "out_of_order";
    /// The received octets do not hash to the offered hash.
    pub const INTEGRITY_MISMATCH: &str = "integrity_mismatch";
    /// Any other transfer breach.
    pub const INVALID_TRANSFER: &str = "invalid_transfer";
    /// Too many artifacts or tokens on the channel.
    pub const TOO_MANY: &str = "too_many";
}
