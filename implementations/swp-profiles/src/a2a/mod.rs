//! Profile 2, A2A (`a2a-profile.md`) over P1: message classes by msg_type, required-field
//! semantics ([`message`]), and the task lifecycle state machine ([`lifecycle`]).

pub mod lifecycle;
pub mod message;

pub use lifecycle::{Lifecycle, LifecycleError, Seen};
pub use message::{decode, decode_form, encode_form, A2aError, A2aMessage};

/// The profile id of A2A.
pub const PROFILE_ID: u64 = 2;
/// msg_type of a Handshake.
pub const MSG_HANDSHAKE: u64 = 1;
/// msg_type of a Task.
pub const MSG_TASK: u64 = 2;
/// msg_type of an Event.
pub const MSG_EVENT: u64 = 3;
/// msg_type of a Result.
pub const MSG_RESULT: u64 = 4;
