//! The shape every SWP-* profile machine shares ([`Profile`]): its profile id, its decoded
//! P1 message, its parameters, what a step saw, its refusal with one canonical code
//! ([`WireError`]), and one `step` taking the message's context ([`Ctx`]). The channel and
//! the reference endpoint's agents are written once against it; the profiles themselves
//! are listed once, in [`crate::for_each_profile`].

use crate::payload::{P1Form, PayloadError};
use swp_core::ErrorCode;

/// Where and when a message is stepped: what a machine may judge it by besides its content.
///
/// `scope` keeps the peers of one channel apart (a producer's event ids, a caller's
/// rpc_ids, a publisher's delivery ids are its own): it is the sender's S1 identity, empty
/// when there is none, or a name an endpoint gives its own messages. `now_ms` is the
/// receiver's clock, for the rules that expire (replay and dedupe windows, id retention,
/// card freshness, credential expiry); a profile without such rules ignores it, as one
/// with a single table for the whole channel ignores `scope`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ctx<'a> {
    /// The receiver's clock, in milliseconds.
    pub now_ms: u64,
    /// The sender's scope on the channel.
    pub scope: &'a str,
}

impl<'a> Ctx<'a> {
    /// A message from `scope` at `now_ms`.
    pub fn new(now_ms: u64, scope: &'a str) -> Self {
        Ctx { now_ms, scope }
    }

    /// A message from `scope` at no particular time (for the profiles whose rules keep no
    /// clock, and for messages whose own rules do not read it).
    pub fn scoped(scope: &'a str) -> Self {
        Ctx { now_ms: 0, scope }
    }
}

/// A refusal that goes on the wire with one canonical code.
pub trait WireError: std::error::Error {
    /// The canonical code of the error frame that reports it.
    fn code(&self) -> ErrorCode;
}

impl WireError for PayloadError {
    fn code(&self) -> ErrorCode {
        PayloadError::code(self)
    }
}

/// One SWP-* profile: its P1 messages and the per-channel machine that judges them. The
/// implementing type is the machine; a channel holds one per profile it serves.
pub trait Profile {
    /// The profile id.
    const ID: u64;
    /// A decoded P1 message of the profile.
    type Message;
    /// The machine's parameters.
    type Config;
    /// What a message did.
    type Seen;
    /// Why the machine refused a message.
    type Error: WireError;

    /// A machine with these parameters.
    fn new(config: Self::Config) -> Self;

    /// Decodes and checks one payload of `form` for `msg_type`.
    fn decode(form: P1Form, msg_type: u64, payload: &[u8]) -> Result<Self::Message, PayloadError>;

    /// Encodes a message in `form`, deterministically.
    fn encode(form: P1Form, m: &Self::Message) -> Vec<u8>;

    /// The msg_type of a message.
    fn msg_type(m: &Self::Message) -> u64;

    /// Steps the machine with one decoded message. A refused message changes nothing.
    fn step(&mut self, ctx: Ctx<'_>, m: &Self::Message) -> Result<Self::Seen, Self::Error>;
}

/// Implements [`Profile`] for a profile's machine with its module's codec (`decode`,
/// `encode`, `PROFILE_ID`); only `step` is the machine's own. Used from each profile's own
/// folder.
macro_rules! profile_codec {
    ($message:ty) => {
        const ID: u64 = super::PROFILE_ID;
        type Message = $message;

        fn decode(
            form: $crate::payload::P1Form,
            msg_type: u64,
            payload: &[u8],
        ) -> Result<$message, $crate::payload::PayloadError> {
            super::decode(form, msg_type, payload)
        }

        fn encode(form: $crate::payload::P1Form, m: &$message) -> Vec<u8> {
            super::encode(form, m)
        }

        fn msg_type(m: &$message) -> u64 {
            m.msg_type()
        }
    };
}
pub(crate) use profile_codec;
