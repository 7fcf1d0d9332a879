//! Decoding an A2A payload for its msg_type and checking the required fields of its message
//! class (§3-4). P1 rules: unknown protobuf fields are skipped (the decoder does that);
//! bytes that do not decode, or that leave a required field empty, are
//! `ERR_INVALID_PROFILE_PAYLOAD`.

use super::{MSG_EVENT, MSG_HANDSHAKE, MSG_RESULT, MSG_TASK};
use crate::p1::pb::a2a::{Event, Handshake, Result as A2aResult, Task};
use prost::Message;
use swp_core::ErrorCode;

/// A valid A2A message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum A2aMessage {
    /// msg_type 1.
    Handshake(Handshake),
    /// msg_type 2.
    Task(Task),
    /// msg_type 3.
    Event(Event),
    /// msg_type 4.
    Result(A2aResult),
}

/// Why an A2A payload is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum A2aError {
    /// msg_type outside 1..=4 (§3).
    #[error(
        "msg_type {0} is not defined by the A2A profile (1 Handshake, 2 Task, 3 Event, 4 Result)"
    )]
    UnsupportedMsgType(u64),
    /// Bytes that do not decode as the message for the msg_type (P1 §2).
    #[error("payload does not decode as {message}: {detail}")]
    Malformed {
        /// The message expected.
        message: &'static str,
        /// The decoder's complaint.
        detail: String,
    },
    /// A required field is empty (§4). proto3 cannot tell an absent scalar from its
    /// default, so "required" means "not empty".
    #[error("{message}.{field} is required (a2a-profile §4)")]
    MissingField {
        /// The message.
        message: &'static str,
        /// The field (or the alternatives, for Event content).
        field: &'static str,
    },
}

impl A2aError {
    /// The canonical code of the failure.
    pub fn code(&self) -> ErrorCode {
        match self {
            A2aError::UnsupportedMsgType(_) => ErrorCode::UnsupportedMsgType,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }
}

fn parse<M: Message + Default>(name: &'static str, payload: &[u8]) -> Result<M, A2aError> {
    M::decode(payload).map_err(|e| A2aError::Malformed {
        message: name,
        detail: e.to_string(),
    })
}

fn need(ok: bool, message: &'static str, field: &'static str) -> Result<(), A2aError> {
    if ok {
        Ok(())
    } else {
        Err(A2aError::MissingField { message, field })
    }
}

/// Decodes and checks one A2A payload in `form`: the bare message of the msg_type, or the
/// annex's `Payload` wrapper, which must carry the member the msg_type names (a wrapper
/// carrying another member, or none, is malformed).
pub fn decode_form(
    form: crate::p1::P1Form,
    msg_type: u64,
    payload: &[u8],
) -> Result<A2aMessage, A2aError> {
    use crate::p1::pb::a2a::{payload::Body, Payload};
    if form == crate::p1::P1Form::Message || !(MSG_HANDSHAKE..=MSG_RESULT).contains(&msg_type) {
        return decode(msg_type, payload);
    }
    let w: Payload = parse("Payload", payload)?;
    let (carried, bare) = match w.body {
        Some(Body::Handshake(m)) => (MSG_HANDSHAKE, m.encode_to_vec()),
        Some(Body::Task(m)) => (MSG_TASK, m.encode_to_vec()),
        Some(Body::Event(m)) => (MSG_EVENT, m.encode_to_vec()),
        Some(Body::Result(m)) => (MSG_RESULT, m.encode_to_vec()),
        None => {
            return Err(A2aError::Malformed {
                message: "Payload",
                detail: "the wrapper carries no message".into(),
            })
        }
    };
    if carried != msg_type {
        return Err(A2aError::Malformed {
            message: "Payload",
            detail: format!(
                "the wrapper carries member {carried} in a frame of msg_type {msg_type}"
            ),
        });
    }
    decode(msg_type, &bare)
}

/// Encodes an A2A message in `form`.
pub fn encode_form(form: crate::p1::P1Form, m: &A2aMessage) -> Vec<u8> {
    let msg_type = match m {
        A2aMessage::Handshake(_) => MSG_HANDSHAKE,
        A2aMessage::Task(_) => MSG_TASK,
        A2aMessage::Event(_) => MSG_EVENT,
        A2aMessage::Result(_) => MSG_RESULT,
    };
    form.frame(msg_type, encode(m))
}

/// Decodes and checks one A2A payload.
pub fn decode(msg_type: u64, payload: &[u8]) -> Result<A2aMessage, A2aError> {
    match msg_type {
        MSG_HANDSHAKE => {
            let h: Handshake = parse("Handshake", payload)?;
            need(!h.agent_id.is_empty(), "Handshake", "agent_id")?;
            Ok(A2aMessage::Handshake(h))
        }
        MSG_TASK => {
            let t: Task = parse("Task", payload)?;
            need(!t.task_id.is_empty(), "Task", "task_id")?;
            need(!t.kind.is_empty(), "Task", "kind")?;
            Ok(A2aMessage::Task(t))
        }
        MSG_EVENT => {
            let e: Event = parse("Event", payload)?;
            need(!e.task_id.is_empty(), "Event", "task_id")?;
            need(
                !e.message.is_empty() || !e.event_payload.is_empty(),
                "Event",
                "message or event_payload",
            )?;
            Ok(A2aMessage::Event(e))
        }
        MSG_RESULT => {
            let r: A2aResult = parse("Result", payload)?;
            need(!r.task_id.is_empty(), "Result", "task_id")?;
            // §4: a failure carries its reason. A success's output may be empty bytes.
            need(
                r.ok || !r.error_message.is_empty(),
                "Result",
                "error_message",
            )?;
            Ok(A2aMessage::Result(r))
        }
        other => Err(A2aError::UnsupportedMsgType(other)),
    }
}

/// Encodes a message deterministically (prost writes fields in number order, no unknowns).
pub fn encode(m: &A2aMessage) -> Vec<u8> {
    match m {
        A2aMessage::Handshake(x) => x.encode_to_vec(),
        A2aMessage::Task(x) => x.encode_to_vec(),
        A2aMessage::Event(x) => x.encode_to_vec(),
        A2aMessage::Result(x) => x.encode_to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn task(id: &'static [u8], kind: &str) -> Vec<u8> {
        Task {
            task_id: Bytes::from_static(id),
            kind: kind.into(),
            input: Bytes::new(),
        }
        .encode_to_vec()
    }

    #[test]
    fn required_fields() {
        assert!(matches!(
            decode(MSG_TASK, &task(b"t", "echo")),
            Ok(A2aMessage::Task(_))
        ));
        assert_eq!(
            decode(MSG_TASK, &task(b"", "echo")),
            Err(A2aError::MissingField {
                message: "Task",
                field: "task_id"
            })
        );
        assert_eq!(
            decode(MSG_TASK, &task(b"t", "")).unwrap_err().code(),
            ErrorCode::InvalidProfilePayload
        );
        let fail = A2aResult {
            task_id: Bytes::from_static(b"t"),
            ok: false,
            ..Default::default()
        };
        assert!(decode(MSG_RESULT, &fail.encode_to_vec()).is_err());
        let ev = Event {
            task_id: Bytes::from_static(b"t"),
            ..Default::default()
        };
        assert!(decode(MSG_EVENT, &ev.encode_to_vec()).is_err());
        assert!(decode(MSG_HANDSHAKE, &Handshake::default().encode_to_vec()).is_err());
        assert_eq!(
            decode(5, b"").unwrap_err().code(),
            ErrorCode::UnsupportedMsgType
        );
    }

    #[test]
    fn unknown_fields_are_skipped_and_garbage_is_refused() {
        let mut b = task(b"t", "echo");
        // Field 15, varint 1; field 16, length-delimited "xy".
        b.extend_from_slice(&[0x78, 0x01, 0x82, 0x01, 0x02, b'x', b'y']);
        assert!(matches!(decode(MSG_TASK, &b), Ok(A2aMessage::Task(t)) if t.kind == "echo"));
        for bad in [&b"\x0a\x05ab"[..], b"\xff", b"\x12\x02\xff\xfe"] {
            assert!(
                matches!(decode(MSG_TASK, bad), Err(A2aError::Malformed { .. })),
                "{bad:?}"
            );
        }
    }
}
