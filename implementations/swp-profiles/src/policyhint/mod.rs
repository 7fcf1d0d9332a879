//! Profile 16, SWP-POLICYHINT (`swp-policyhint.md`) over P1: message classes by msg_type
//! and the constraint-entry rules ([`message`]), and the per-channel table of constraints
//! in effect, with a declared unknown-key policy and deterministic conflict resolution
//! ([`policy`]). Hints are advisory: nothing here touches core validation.

pub mod message;
pub mod policy;

pub use message::{decode, encode, Mode, PolicyMessage};
pub use policy::{Config, ConflictPolicy, Policy, PolicyError, Seen, UnknownKeys};

/// The profile id of SWP-POLICYHINT.
pub const PROFILE_ID: u64 = 16;
/// msg_type of `POLICY_HINT_SET`.
pub const MSG_HINT_SET: u64 = 1;
/// msg_type of `POLICY_HINT_ACK`.
pub const MSG_HINT_ACK: u64 = 2;
/// msg_type of `POLICY_VIOLATION`.
pub const MSG_VIOLATION: u64 = 3;
/// msg_type of `POLICY_ERR`.
pub const MSG_ERR: u64 = 4;

/// The `reason_code` / `PolicyErr.code` values this library uses.
pub mod codes {
    /// A MUST constraint the receiver cannot satisfy.
    pub const UNSATISFIABLE: &str = "unsatisfiable";
    /// A constraint whose key the receiver does not know (policy `Violation`).
    pub const UNKNOWN_KEY: &str = "unknown_key";
    /// Two constraints on one key and scope disagree (policy `Reject`).
    pub const CONFLICT: &str = "conflicting_constraints";
    /// Too many constraints in effect.
    pub const TOO_MANY: &str = "too_many";
}
