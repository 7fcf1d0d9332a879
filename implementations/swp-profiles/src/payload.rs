//! What the SWP-* profile libraries (RPC, EVENTS, OBS, ARTIFACT, STATE) share about a P1
//! payload: decoding either payload form ([`P1Form`]) for a msg_type, the refusal
//! taxonomy with its one canonical code per refusal, and the "required = not empty" check.

pub use crate::p1::P1Form;
use prost::Message;
use swp_core::ErrorCode;

/// Why a payload is refused before any state is consulted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// A msg_type the profile does not assign ("any other msg_type is invalid", §3 of
    /// every profile doc).
    #[error("msg_type {msg_type} is not defined by {profile} ({known})")]
    UnsupportedMsgType {
        /// The profile's name.
        profile: &'static str,
        /// The msg_type received.
        msg_type: u64,
        /// The assigned msg_types, for the message.
        known: &'static str,
    },
    /// Bytes that do not decode as the message (or wrapper) for the msg_type (P1 §2).
    #[error("payload does not decode as {message}: {detail}")]
    Malformed {
        /// The message expected.
        message: &'static str,
        /// The decoder's complaint.
        detail: String,
    },
    /// A `Payload` wrapper whose oneof is not set.
    #[error("the {profile} Payload wrapper carries no message")]
    EmptyWrapper {
        /// The profile's name.
        profile: &'static str,
    },
    /// A `Payload` wrapper carrying another class than the envelope's msg_type names.
    #[error("msg_type {msg_type}, but the Payload wrapper carries oneof member {carried}")]
    WrapperMismatch {
        /// The envelope's msg_type.
        msg_type: u64,
        /// The field number of the oneof member present.
        carried: u64,
    },
    /// A required field is empty. proto3 cannot tell an absent field from its default, so
    /// "required" reads as "not empty" (docs/a2a.md; deviations in docs/profiles.md).
    #[error("{message}.{field} is required ({clause})")]
    MissingField {
        /// The message.
        message: &'static str,
        /// The field (or alternatives).
        field: &'static str,
        /// Where the profile doc requires it.
        clause: &'static str,
    },
    /// A field is present but its value breaks the profile's rules.
    #[error("{message}.{field}: {why} ({clause})")]
    Invalid {
        /// The message.
        message: &'static str,
        /// The field.
        field: &'static str,
        /// What is wrong.
        why: String,
        /// The clause broken.
        clause: &'static str,
    },
}

impl PayloadError {
    /// The canonical code: an unassigned msg_type is `ERR_UNSUPPORTED_MSG_TYPE`, everything
    /// else about the payload's encoding or semantics is `ERR_INVALID_PROFILE_PAYLOAD`.
    pub fn code(&self) -> ErrorCode {
        match self {
            PayloadError::UnsupportedMsgType { .. } => ErrorCode::UnsupportedMsgType,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }
}

/// Decodes `payload` as `M` (unknown fields skipped, P1 §4).
pub(crate) fn parse<M: Message + Default>(
    name: &'static str,
    payload: &[u8],
) -> Result<M, PayloadError> {
    M::decode(payload).map_err(|e| PayloadError::Malformed {
        message: name,
        detail: e.to_string(),
    })
}

/// `Err(MissingField)` unless `ok`.
pub(crate) fn need(
    ok: bool,
    message: &'static str,
    field: &'static str,
    clause: &'static str,
) -> Result<(), PayloadError> {
    if ok {
        Ok(())
    } else {
        Err(PayloadError::MissingField {
            message,
            field,
            clause,
        })
    }
}

/// What a profile tells [`decode_form`] about itself.
pub(crate) struct Codec<M, W> {
    /// Its name, for messages.
    pub name: &'static str,
    /// Its assigned msg_types, for messages.
    pub known: &'static str,
    /// The highest assigned msg_type (they run from 1).
    pub max_msg_type: u64,
    /// Decodes the bare message for an assigned msg_type.
    pub bare: fn(u64, &[u8]) -> Result<M, PayloadError>,
    /// The wrapper's full name, for messages.
    pub wrapper_name: &'static str,
    /// The message a decoded wrapper carries, if any.
    pub unwrap: fn(W) -> Option<M>,
    /// The msg_type of a message.
    pub msg_type_of: fn(&M) -> u64,
}

/// Decodes a payload of `form` for `msg_type`: the msg_type is checked first (an
/// unassigned one is refused whatever the bytes), then the bytes; a wrapper must carry
/// exactly the member the msg_type names (prost applies protobuf's oneof rule: the last
/// member on the wire wins).
pub(crate) fn decode_form<M, W: Message + Default>(
    p: &Codec<M, W>,
    form: P1Form,
    msg_type: u64,
    payload: &[u8],
) -> Result<M, PayloadError> {
    if !(1..=p.max_msg_type).contains(&msg_type) {
        return Err(PayloadError::UnsupportedMsgType {
            profile: p.name,
            msg_type,
            known: p.known,
        });
    }
    match form {
        P1Form::Message => (p.bare)(msg_type, payload),
        P1Form::Wrapper => {
            let w: W = parse(p.wrapper_name, payload)?;
            let m = (p.unwrap)(w).ok_or(PayloadError::EmptyWrapper { profile: p.name })?;
            let carried = (p.msg_type_of)(&m);
            if carried != msg_type {
                return Err(PayloadError::WrapperMismatch { msg_type, carried });
            }
            Ok(m)
        }
    }
}

/// Lower-case hex of opaque octets, for error messages.
pub(crate) fn hex(b: &[u8]) -> String {
    use std::fmt::Write;
    // Long ids are cut: an error message must stay small whatever the peer sent.
    let shown = &b[..b.len().min(32)];
    let mut s = String::with_capacity(shown.len() * 2 + 3);
    for x in shown {
        let _ = write!(s, "{x:02x}");
    }
    if b.len() > shown.len() {
        s.push_str("...");
    }
    s
}

/// A string for error messages, quoted and escaped, cut to 64 characters: a peer's
/// control characters and length never reach a message as they are.
pub fn shown(s: &str) -> String {
    match s.char_indices().nth(64) {
        Some((i, _)) => format!("{:?}...", &s[..i]),
        None => format!("{s:?}"),
    }
}
