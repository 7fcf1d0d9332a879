//! Outbound frames: the E1 encoding of replies within the configured limits, and the error
//! frame that carries a core or profile reject back to the peer.
//!
//! Error frame format (the reference's choice; core-spec §5 leaves error encoding to the
//! profile): `profile_id` 1, `msg_type` 2 (a JSON-RPC response), `msg_id` = the rejected
//! frame's msg_id when it was decoded, else a generated `swp-err-NNNNNNNN`, `ts_unix_ms` =
//! now, payload
//! `{"jsonrpc":"2.0","id":null,"error":{"code":C,"message":M,"data":{"swp_error":"ERR_..."}}}`
//! where `C` is the MCP mapping §6 code of the error's core category, or -32600 for codes
//! outside the core table.

use super::PROFILE_MCP;
use bytes::{Bytes, BytesMut};
use serde::Serialize;
use swp_core::dispatch::ProfileReject;
use swp_core::e1;
use swp_core::{CoreError, Envelope, ErrorCode, Extensions, Limits, CORE_VERSION};

/// JSON-RPC code used when a canonical code has no core mapping (MCP mapping §6 only maps
/// core categories): "invalid request" is the closest generic answer.
pub const FALLBACK_JSONRPC_CODE: i64 = -32600;

/// Why the endpoint refuses a frame: a core reject or a profile reject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Reject {
    /// The core rejected the frame (framing, envelope, policy, unknown profile, duplicate).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The profile rejected the frame.
    #[error(transparent)]
    Profile(#[from] ProfileReject),
}

impl Reject {
    /// A profile reject with `code` and a reason.
    pub fn profile(code: ErrorCode, detail: impl Into<String>) -> Self {
        Reject::Profile(ProfileReject {
            code,
            detail: detail.into(),
        })
    }

    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Reject::Core(e) => e.code(),
            Reject::Profile(r) => r.code,
        }
    }

    /// The JSON-RPC code of the error frame.
    pub fn jsonrpc_code(&self) -> i64 {
        self.code().jsonrpc_code().unwrap_or(FALLBACK_JSONRPC_CODE)
    }
}

/// An outbound frame that the configured limits do not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Oversize {
    /// The msg_id is outside `[MIN_MSG_ID_BYTES, MAX_MSG_ID_BYTES]`.
    #[error("outbound msg_id of {len} octets is outside [{min}, {max}]")]
    MsgId {
        /// Its length.
        len: usize,
        /// The lower bound.
        min: usize,
        /// The upper bound.
        max: usize,
    },
    /// The payload exceeds `MAX_PAYLOAD_BYTES`.
    #[error("outbound payload of {len} octets exceeds MAX_PAYLOAD_BYTES {max}")]
    Payload {
        /// Its length.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// The frame body exceeds `MAX_FRAME_BYTES`.
    #[error("outbound frame of {len} octets exceeds MAX_FRAME_BYTES {max}")]
    Frame {
        /// The body length.
        len: usize,
        /// The bound.
        max: u32,
    },
}

/// Appends one canonical E1 frame to `out`, or refuses when the peer (which enforces the
/// same limits as we do, in a symmetric deployment) would have to reject it.
pub fn put_frame(
    out: &mut BytesMut,
    limits: &Limits,
    msg_type: u64,
    ts_unix_ms: u64,
    msg_id: Bytes,
    payload: Bytes,
) -> Result<(), Oversize> {
    put_profile_frame(
        out,
        limits,
        PROFILE_MCP,
        msg_type,
        ts_unix_ms,
        msg_id,
        payload,
    )
}

/// [`put_frame`] for any profile.
pub fn put_profile_frame(
    out: &mut BytesMut,
    limits: &Limits,
    profile_id: u64,
    msg_type: u64,
    ts_unix_ms: u64,
    msg_id: Bytes,
    payload: Bytes,
) -> Result<(), Oversize> {
    let id_len = msg_id.len();
    if id_len == 0 || id_len < limits.min_msg_id_bytes || id_len > limits.max_msg_id_bytes {
        return Err(Oversize::MsgId {
            len: id_len,
            min: limits.min_msg_id_bytes,
            max: limits.max_msg_id_bytes,
        });
    }
    if payload.len() > limits.max_payload_bytes {
        return Err(Oversize::Payload {
            len: payload.len(),
            max: limits.max_payload_bytes,
        });
    }
    let env = Envelope {
        version: CORE_VERSION,
        profile_id,
        msg_type,
        flags: 0,
        ts_unix_ms,
        msg_id,
        extensions: Extensions::empty(),
        payload,
    };
    let len = env.encoded_len();
    if len > limits.max_frame_bytes as usize {
        return Err(Oversize::Frame {
            len,
            max: limits.max_frame_bytes,
        });
    }
    out.reserve(4 + len);
    // Cannot fail: `len` fits the u32 frame bound checked above.
    e1::encode_frame(&env, out).map_err(|e| Oversize::Frame {
        len: e.len,
        max: limits.max_frame_bytes,
    })
}

#[derive(Serialize)]
struct ErrorPayload<'a> {
    jsonrpc: &'static str,
    id: (),
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i64,
    message: &'a str,
    data: ErrorData,
}

#[derive(Serialize)]
struct ErrorData {
    swp_error: &'static str,
}

/// The JSON-RPC payload of an error frame. `message` is the reject's display, or only the
/// code name when `brief` (used when the full message would not fit the limits).
pub fn error_payload(reject: &Reject, brief: bool) -> Vec<u8> {
    let code = reject.code();
    let full;
    let message = if brief {
        code.as_str()
    } else {
        full = reject.to_string();
        &full
    };
    let p = ErrorPayload {
        jsonrpc: "2.0",
        id: (),
        error: ErrorBody {
            code: reject.jsonrpc_code(),
            message,
            data: ErrorData {
                swp_error: code.as_str(),
            },
        },
    };
    // Serializing plain strings and integers into a Vec cannot fail.
    serde_json::to_vec(&p).unwrap_or_default()
}

/// Prefix of generated error-frame msg_ids.
pub const ERROR_ID_PREFIX: &str = "swp-err-";
/// Prefix of the msg_ids of notifications the endpoint originates (`swp/stream`).
pub const NOTIFICATION_ID_PREFIX: &str = "swp-ntf-";
/// Prefix of the msg_ids of A2A messages the endpoint originates (Handshake, Event, Result).
pub const A2A_ID_PREFIX: &str = "swp-a2a-";
/// Prefix of the msg_ids of server-to-client MCP requests the endpoint originates.
pub const ASK_ID_PREFIX: &str = "swp-ask-";
/// Prefix of the msg_ids of SWP-* messages the endpoint originates (stream items, events,
/// chunks).
pub const AGENT_ID_PREFIX: &str = "swp-out-";

/// The msg_id of an error frame whose rejected frame had none: `swp-err-` and an 8-digit
/// counter (16 octets, the core-spec's recommended length), widened or narrowed only when
/// the configured msg_id bounds exclude 16 octets.
pub fn error_msg_id(counter: u64, limits: &Limits) -> Bytes {
    generated_msg_id(ERROR_ID_PREFIX, counter, limits)
}

/// The fresh msg_id of a notification the endpoint originates: `swp-ntf-` and a counter,
/// sized like [`error_msg_id`]. Callers share one counter between the two kinds, so the ids
/// stay distinct even when narrow bounds leave no room for the prefix.
pub fn notification_msg_id(counter: u64, limits: &Limits) -> Bytes {
    generated_msg_id(NOTIFICATION_ID_PREFIX, counter, limits)
}

/// A fresh msg_id for an A2A message the endpoint originates.
pub fn a2a_msg_id(counter: u64, limits: &Limits) -> Bytes {
    generated_msg_id(A2A_ID_PREFIX, counter, limits)
}

/// A fresh msg_id for a server-to-client MCP request the endpoint originates (the
/// conformance fixtures' sampling and elicitation); the client's answer comes back on it.
pub fn ask_msg_id(counter: u64, limits: &Limits) -> Bytes {
    generated_msg_id(ASK_ID_PREFIX, counter, limits)
}

/// A fresh msg_id for an SWP-* message the endpoint originates.
pub fn agent_msg_id(counter: u64, limits: &Limits) -> Bytes {
    generated_msg_id(AGENT_ID_PREFIX, counter, limits)
}

fn generated_msg_id(prefix: &str, counter: u64, limits: &Limits) -> Bytes {
    let want = 16usize.clamp(limits.min_msg_id_bytes, limits.max_msg_id_bytes.max(1));
    let s = if want > prefix.len() {
        let width = want - prefix.len();
        format!("{prefix}{:0width$}", digits(counter, width))
    } else {
        format!("{:0want$}", digits(counter, want))
    };
    Bytes::from(s)
}

/// `counter` reduced to at most `width` decimal digits, so the id keeps its exact length.
fn digits(counter: u64, width: usize) -> u64 {
    match 10u64.checked_pow(width.min(19) as u32) {
        Some(m) => counter % m,
        None => counter,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_have_sixteen_octets_by_default() {
        let l = Limits::default();
        assert_eq!(&error_msg_id(7, &l)[..], b"swp-err-00000007");
        assert_eq!(error_msg_id(123_456_789, &l).len(), 16);
        assert_eq!(&notification_msg_id(8, &l)[..], b"swp-ntf-00000008");
    }

    #[test]
    fn generated_ids_follow_narrow_bounds() {
        let l = Limits {
            min_msg_id_bytes: 20,
            max_msg_id_bytes: 24,
            ..Limits::default()
        };
        assert_eq!(&error_msg_id(7, &l)[..], b"swp-err-000000000007");
        let l = Limits {
            min_msg_id_bytes: 1,
            max_msg_id_bytes: 4,
            ..Limits::default()
        };
        assert_eq!(&error_msg_id(12_345, &l)[..], b"2345");
    }

    #[test]
    fn error_payload_shape() {
        let r = Reject::Core(CoreError::FrameTooLarge { len: 9, max: 8 });
        let v: serde_json::Value = serde_json::from_slice(&error_payload(&r, false)).unwrap();
        assert_eq!(
            v.to_string(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"length prefix 9 exceeds MAX_FRAME_BYTES 8","data":{"swp_error":"ERR_FRAME_TOO_LARGE"}}}"#
        );
        let r = Reject::profile(ErrorCode::UnsupportedMsgType, "msg_type 9");
        let v: serde_json::Value = serde_json::from_slice(&error_payload(&r, true)).unwrap();
        assert_eq!(v["error"]["code"], -32600);
        assert_eq!(v["error"]["message"], "ERR_UNSUPPORTED_MSG_TYPE");
    }

    #[test]
    fn put_frame_refuses_what_the_limits_forbid() {
        let l = Limits::with_max_frame(64);
        let mut out = BytesMut::new();
        let id = Bytes::from_static(b"0123456789abcdef");
        assert!(matches!(
            put_frame(
                &mut out,
                &l,
                2,
                0,
                Bytes::from_static(b"short"),
                Bytes::new()
            ),
            Err(Oversize::MsgId { .. })
        ));
        assert!(matches!(
            put_frame(&mut out, &l, 2, 0, id.clone(), Bytes::from(vec![b'x'; 100])),
            Err(Oversize::Payload { .. })
        ));
        assert!(out.is_empty());
        put_frame(&mut out, &l, 2, 5, id, Bytes::from_static(b"{}")).unwrap();
        let body = out.split_off(4).freeze();
        let env = e1::decode(&body, &l).unwrap();
        assert_eq!((env.profile_id, env.msg_type, env.ts_unix_ms), (1, 2, 5));
    }
}
