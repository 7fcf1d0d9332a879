//! Profile 15, SWP-CRED (`swp-cred.md`) over P1: message classes by msg_type
//! ([`message`]) and the per-channel delegation chains that enforce credential types,
//! the binding of a credential to the channel's S1 identity, a maximum chain length, a
//! bounded expiry on every entry judged on the receiver's clock, replay and revocation
//! ([`chains`]).

pub mod chains;
pub mod message;

pub use chains::{Binding, Chains, Config, CredError, Seen};
pub use message::{decode, encode, CredMessage};

/// The profile id of SWP-CRED.
pub const PROFILE_ID: u64 = 15;
/// msg_type of `CRED_PRESENT`.
pub const MSG_PRESENT: u64 = 1;
/// msg_type of `CRED_DELEGATE`.
pub const MSG_DELEGATE: u64 = 2;
/// msg_type of `CRED_REVOKE` (an optional class, §2).
pub const MSG_REVOKE: u64 = 3;
/// msg_type of `CRED_ERR`.
pub const MSG_ERR: u64 = 4;

/// The credential type of the reference's test scheme ([`Binding::Subject`]): the
/// credential is `sub=<identity>`, bound to that S1 identity.
pub const SUBJECT_TYPE: &str = "swp.test.subject";

/// The `CredErr.code` values this library uses.
pub mod codes {
    /// The credential type is not accepted (swp-cred §6).
    pub const UNSUPPORTED_TYPE: &str = "unsupported_cred_type";
    /// The credential octets are not a credential of their type.
    pub const INVALID_CREDENTIAL: &str = "invalid_credential";
    /// The credential is bound to another identity than the channel's.
    pub const WRONG_BINDING: &str = "binding_mismatch";
    /// The entry, or the chain it extends, has expired on the receiver's clock.
    pub const EXPIRED: &str = "expired";
    /// The entry's expiry lies beyond the receiver's bound.
    pub const EXPIRY_UNBOUNDED: &str = "expiry_unbounded";
    /// One entry more than the maximum chain length.
    pub const CHAIN_TOO_LONG: &str = "chain_too_long";
    /// The chain's root presented again on this channel.
    pub const REPLAY: &str = "replay";
    /// No such chain for this identity.
    pub const UNKNOWN_CHAIN: &str = "unknown_chain";
    /// The chain was revoked.
    pub const REVOKED: &str = "revoked";
    /// This receiver does not support `CRED_REVOKE`.
    pub const REVOKE_UNSUPPORTED: &str = "revoke_unsupported";
    /// Too many chains open.
    pub const TOO_MANY: &str = "too_many";
}
