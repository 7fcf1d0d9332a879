//! Classification and validation of one profile-1 payload for its `msg_type`
//! (mcp-mapping-profile §2-4), without building a JSON tree: every member is kept as the raw
//! text of its value, so ids are echoed octet for octet and relays never re-serialise.

use super::{MSG_TYPE_NOTIFICATION, MSG_TYPE_REQUEST, MSG_TYPE_RESPONSE};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use swp_core::ErrorCode;

/// Why a payload is not a valid profile-1 message for its `msg_type`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpPayloadError {
    /// The `msg_type` is not 1, 2 or 3.
    #[error(
        "msg_type {0} is not defined by the MCP mapping profile (1 request, 2 response, 3 notification)"
    )]
    UnsupportedMsgType(u64),
    /// The payload is not UTF-8 (§2).
    #[error("payload is not UTF-8 (mcp-mapping-profile §2)")]
    NotUtf8,
    /// The payload is a JSON array: batches are out of scope for this profile version (§4).
    #[error("payload is a JSON array: batches are not carried by this profile version")]
    Batch,
    /// The payload is not one JSON object.
    #[error("payload is not a valid JSON-RPC object: {0}")]
    NotJsonObject(String),
    /// `jsonrpc` is absent or not `"2.0"`.
    #[error("jsonrpc member must be \"2.0\"")]
    Version,
    /// A request or response without an `id`.
    #[error("{0} has no id")]
    MissingId(&'static str),
    /// An id that is not a string, a number or null (JSON-RPC 2.0 §4).
    #[error("request id must be a string, a number or null")]
    BadId,
    /// A request or notification without a string `method`.
    #[error("{0} has no string method")]
    MissingMethod(&'static str),
    /// A response with both or neither of `result` and `error`.
    #[error("response must carry exactly one of result and error")]
    ResponseShape,
    /// A notification (msg_type 3) carrying an `id` member, even `null`.
    #[error(
        "a notification (msg_type 3) carries no id; a message with an id is a request (msg_type 1)"
    )]
    NotificationWithId,
}

impl McpPayloadError {
    /// The one canonical code this failure is rejected with.
    pub fn code(&self) -> ErrorCode {
        match self {
            McpPayloadError::UnsupportedMsgType(_) => ErrorCode::UnsupportedMsgType,
            _ => ErrorCode::InvalidMcpPayload,
        }
    }
}

/// A valid profile-1 message, each member the raw JSON text of its value.
#[derive(Debug, Clone)]
pub enum McpMessage<'a> {
    /// msg_type 1.
    Request {
        /// The request id, as sent.
        id: &'a RawValue,
        /// The method, unescaped.
        method: Cow<'a, str>,
        /// The params, as sent.
        params: Option<&'a RawValue>,
    },
    /// msg_type 2.
    Response {
        /// The id of the request answered, as sent.
        id: &'a RawValue,
        /// The result, when the response is a success.
        result: Option<&'a RawValue>,
        /// The error object, when the response is a failure.
        error: Option<&'a RawValue>,
    },
    /// msg_type 3.
    Notification {
        /// The method, unescaped.
        method: Cow<'a, str>,
        /// The params, as sent.
        params: Option<&'a RawValue>,
    },
}

/// The members of a JSON-RPC message the profile looks at; `None` when absent (a JSON
/// `null` is `Some("null")`).
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Distinguishes a member set to `null` from an absent one (a plain `Option` cannot).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The string a raw JSON value holds, borrowed unless it contains escapes; `None` when the
/// value is not a string.
fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let s = raw.get();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(s).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Classifies and validates one payload received with `msg_type`.
pub fn parse(msg_type: u64, payload: &[u8]) -> Result<McpMessage<'_>, McpPayloadError> {
    if !matches!(
        msg_type,
        MSG_TYPE_REQUEST | MSG_TYPE_RESPONSE | MSG_TYPE_NOTIFICATION
    ) {
        return Err(McpPayloadError::UnsupportedMsgType(msg_type));
    }
    let text = std::str::from_utf8(payload).map_err(|_| McpPayloadError::NotUtf8)?;
    // A struct also deserializes from a JSON array, so arrays are refused before parsing.
    match text.trim_start().as_bytes().first() {
        Some(b'{') => {}
        Some(b'[') => return Err(McpPayloadError::Batch),
        _ => {
            return Err(McpPayloadError::NotJsonObject(
                "the payload does not start with '{'".into(),
            ))
        }
    }
    let m: Members<'_> =
        serde_json::from_str(text).map_err(|e| McpPayloadError::NotJsonObject(e.to_string()))?;
    if m.jsonrpc.and_then(raw_str).as_deref() != Some("2.0") {
        return Err(McpPayloadError::Version);
    }
    match msg_type {
        MSG_TYPE_REQUEST => {
            let method = m
                .method
                .and_then(raw_str)
                .ok_or(McpPayloadError::MissingMethod("request"))?;
            let id = m.id.ok_or(McpPayloadError::MissingId("request"))?;
            if !valid_id(id) {
                return Err(McpPayloadError::BadId);
            }
            Ok(McpMessage::Request {
                id,
                method,
                params: m.params,
            })
        }
        MSG_TYPE_RESPONSE => {
            let id = m.id.ok_or(McpPayloadError::MissingId("response"))?;
            if m.result.is_some() == m.error.is_some() {
                return Err(McpPayloadError::ResponseShape);
            }
            Ok(McpMessage::Response {
                id,
                result: m.result,
                error: m.error,
            })
        }
        _ => {
            let method = m
                .method
                .and_then(raw_str)
                .ok_or(McpPayloadError::MissingMethod("notification"))?;
            // JSON-RPC 2.0 §4.1: a request object without `id` is a notification, so one
            // with an `id` is a request sent under the wrong msg_type.
            if m.id.is_some() {
                return Err(McpPayloadError::NotificationWithId);
            }
            Ok(McpMessage::Notification {
                method,
                params: m.params,
            })
        }
    }
}

/// JSON-RPC 2.0 §4: an id is a string, a number or null.
fn valid_id(id: &RawValue) -> bool {
    matches!(
        id.get().as_bytes().first(),
        Some(b'"' | b'-' | b'0'..=b'9' | b'n')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(t: u64, p: &[u8]) -> McpPayloadError {
        parse(t, p).expect_err(&String::from_utf8_lossy(p))
    }

    #[test]
    fn invalid_payloads_map_to_one_code_each() {
        let bad: [&[u8]; 9] = [
            b"\xff{}",
            b"[1,2]",
            b"{",
            b"",
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
        ];
        for p in bad {
            assert_eq!(err(1, p).code(), ErrorCode::InvalidMcpPayload);
        }
        assert_eq!(err(4, b"{}").code(), ErrorCode::UnsupportedMsgType);
        assert_eq!(err(0, b"{}").code(), ErrorCode::UnsupportedMsgType);
    }

    #[test]
    fn responses_and_notifications() {
        assert!(matches!(
            parse(2, br#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Ok(McpMessage::Response {
                result: Some(_),
                error: None,
                ..
            })
        ));
        assert!(matches!(
            parse(3, br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#),
            Ok(McpMessage::Notification { .. })
        ));
        let bad: [(u64, &[u8], McpPayloadError); 5] = [
            (
                2,
                br#"{"jsonrpc":"2.0","id":1}"#,
                McpPayloadError::ResponseShape,
            ),
            (
                2,
                br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#,
                McpPayloadError::ResponseShape,
            ),
            (
                2,
                br#"{"jsonrpc":"2.0","result":{}}"#,
                McpPayloadError::MissingId("response"),
            ),
            (
                3,
                br#"{"jsonrpc":"2.0"}"#,
                McpPayloadError::MissingMethod("notification"),
            ),
            (
                3,
                br#"{"jsonrpc":"2.0","method":"notifications/x","id":null}"#,
                McpPayloadError::NotificationWithId,
            ),
        ];
        for (t, p, e) in bad {
            assert_eq!(err(t, p), e);
        }
    }

    #[test]
    fn batches_are_rejected_whatever_the_msg_type() {
        for p in [&b" \t[{}]"[..], b"[]"] {
            for t in 1..=3 {
                assert_eq!(err(t, p), McpPayloadError::Batch);
            }
        }
    }

    #[test]
    fn escaped_methods_are_unescaped() {
        match parse(1, br#"{"method":"p\u0069ng","id":7,"jsonrpc":"2.0"}"#) {
            Ok(McpMessage::Request { method, id, .. }) => {
                assert_eq!(method, "ping");
                assert_eq!(id.get(), "7");
            }
            other => panic!("{other:?}"),
        }
    }
}
