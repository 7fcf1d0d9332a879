//! The minimal MCP mapping handler (profile 1) the reference serves until the full profile
//! lands: payload shape checks (mcp-mapping-profile §2-4), `ping`, `swp/whoami`,
//! `swp/delay`, the test hooks `swp/fail` and `swp/stream`, and the JSON-RPC "method not
//! found" answer for everything else.
//!
//! Test hooks (deterministic, so conformance vectors can drive the profile's error and
//! streaming paths):
//!
//! - `swp/fail`: the handling of the request fails; the answer is a JSON-RPC error response
//!   `{"code":-32603,"message":"Internal error"}` on the request's msg_id (§6: the failure
//!   stays a JSON-RPC `error`, not an SWP reject).
//! - `swp/stream` with params `{"count": N, "fail": bool}` (`N` ≤ [`MAX_STREAM_PARTIALS`],
//!   `fail` optional, default false): `N` partial outputs as `notifications/progress`
//!   notifications (msg_type 3, fresh msg_ids, `progressToken` = the request id), then one
//!   terminal response on the request's msg_id (§7): a text result `done`, or with `fail` a
//!   JSON-RPC error -32603.
//!
//! The payload is parsed without building a JSON tree: every member is kept as the raw
//! text of its value (`RawValue`), so the request `id` is echoed octet for octet (§5:
//! "Gateways MUST preserve JSON-RPC id values unchanged") and a ping costs no allocation
//! beyond its reply.

use super::reply::Reject;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use swp_core::{CoreCategory, ErrorCode};

/// `msg_type` of a JSON-RPC request.
pub const MSG_TYPE_REQUEST: u64 = 1;
/// `msg_type` of a JSON-RPC response.
pub const MSG_TYPE_RESPONSE: u64 = 2;
/// `msg_type` of a JSON-RPC notification.
pub const MSG_TYPE_NOTIFICATION: u64 = 3;

/// Longest delay `swp/delay` accepts, so a pending response never outlives a few seconds.
pub const MAX_DELAY_MS: u64 = 10_000;

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC "invalid params".
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC "internal error": the code §6 assigns to the core `INTERNAL_ERROR` category.
pub const INTERNAL_ERROR: i64 = CoreCategory::InternalError.jsonrpc_code();

/// Most partial outputs `swp/stream` emits for one request.
pub const MAX_STREAM_PARTIALS: u64 = 16;

/// What the connection should do with one accepted profile-1 envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this response payload now (`msg_type` 2, the request's msg_id).
    Reply(Vec<u8>),
    /// Send this response payload after `ms` milliseconds.
    Delayed {
        /// The delay.
        ms: u64,
        /// The response payload.
        payload: Vec<u8>,
    },
    /// Send each partial payload as a notification (`msg_type` 3, a fresh msg_id each), in
    /// order, then the terminal response payload (`msg_type` 2, the request's msg_id).
    Stream {
        /// The notification payloads.
        partials: Vec<Vec<u8>>,
        /// The terminal response payload.
        terminal: Vec<u8>,
    },
    /// Nothing to send.
    Nothing,
    /// Reject the frame with an error frame.
    Reject(Reject),
}

/// The members of a JSON-RPC message this handler looks at, each as the raw text of its
/// value; `None` when the member is absent (a JSON `null` is `Some("null")`).
#[derive(Deserialize)]
struct Message<'a> {
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

fn invalid(detail: impl Into<String>) -> Action {
    Action::Reject(Reject::profile(ErrorCode::InvalidMcpPayload, detail))
}

/// Handles one accepted profile-1 envelope. `identity` is the authenticated peer identity.
pub fn handle(msg_type: u64, payload: &[u8], identity: Option<&str>) -> Action {
    if !matches!(
        msg_type,
        MSG_TYPE_REQUEST | MSG_TYPE_RESPONSE | MSG_TYPE_NOTIFICATION
    ) {
        return Action::Reject(Reject::profile(
            ErrorCode::UnsupportedMsgType,
            format!(
                "msg_type {msg_type} is not defined by the MCP mapping profile \
                 (1 request, 2 response, 3 notification)"
            ),
        ));
    }
    let Ok(text) = std::str::from_utf8(payload) else {
        return invalid("payload is not UTF-8 (mcp-mapping-profile §2)");
    };
    // A struct also deserializes from a JSON array; the profile carries objects only
    // (batches are out of scope, §4).
    if !text.trim_start().starts_with('{') {
        return invalid("payload is not a JSON object");
    }
    let msg: Message<'_> = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => return invalid(format!("payload is not a valid JSON-RPC object: {e}")),
    };
    if msg.jsonrpc.and_then(raw_str).as_deref() != Some("2.0") {
        return invalid("jsonrpc member must be \"2.0\"");
    }
    match msg_type {
        MSG_TYPE_REQUEST => request(&msg, identity),
        MSG_TYPE_RESPONSE => {
            if msg.id.is_none() {
                invalid("response has no id")
            } else if msg.result.is_some() == msg.error.is_some() {
                invalid("response must carry exactly one of result and error")
            } else {
                Action::Nothing
            }
        }
        _ => notification(&msg),
    }
}

/// A notification is answered by nothing (§4: it MUST NOT require a response). A msg_type 3
/// payload with an `id` member (even `null`) is not a notification: JSON-RPC 2.0 §4.1 calls
/// a request object without `id` a notification, so one with an `id` is a request sent
/// under the wrong msg_type. It is rejected rather than answered, since answering it would
/// treat the notification path as one that produces responses.
fn notification(msg: &Message<'_>) -> Action {
    if msg.method.and_then(raw_str).is_none() {
        return invalid("notification has no string method");
    }
    if msg.id.is_some() {
        return invalid(
            "a notification (msg_type 3) carries no id; a message with an id is a request \
             (msg_type 1)",
        );
    }
    Action::Nothing
}

fn request(msg: &Message<'_>, identity: Option<&str>) -> Action {
    let Some(method) = msg.method.and_then(raw_str) else {
        return invalid("request has no string method");
    };
    let Some(id) = msg.id else {
        return invalid("request has no id");
    };
    // JSON-RPC 2.0 §4: an id is a string, a number or null.
    if !matches!(
        id.get().as_bytes().first(),
        Some(b'"' | b'-' | b'0'..=b'9' | b'n')
    ) {
        return invalid("request id must be a string, a number or null");
    }
    match &*method {
        "ping" => Action::Reply(result(id, "{}")),
        "swp/whoami" => {
            let identity = match identity {
                // Serializing a &str cannot fail.
                Some(s) => serde_json::to_string(s).unwrap_or_default(),
                None => "null".to_owned(),
            };
            Action::Reply(result(id, &format!("{{\"identity\":{identity}}}")))
        }
        "swp/delay" => match delay_ms(msg.params) {
            Some(0) => Action::Reply(result(id, "{}")),
            Some(ms) => Action::Delayed {
                ms,
                payload: result(id, "{}"),
            },
            None => Action::Reply(error(
                id,
                INVALID_PARAMS,
                &format!("Invalid params: swp/delay takes {{\"ms\": 0..={MAX_DELAY_MS}}}"),
            )),
        },
        "swp/fail" => Action::Reply(error(id, INTERNAL_ERROR, "Internal error")),
        "swp/stream" => match stream_params(msg.params) {
            Some((count, fail)) => stream(id, count, fail),
            None => Action::Reply(error(
                id,
                INVALID_PARAMS,
                &format!(
                    "Invalid params: swp/stream takes \
                     {{\"count\": 0..={MAX_STREAM_PARTIALS}, \"fail\": false|true}}"
                ),
            )),
        },
        _ => Action::Reply(error(id, METHOD_NOT_FOUND, "Method not found")),
    }
}

/// `count` progress notifications correlated by the raw request id, then the terminal
/// response: a result, or after `fail` a JSON-RPC internal error.
fn stream(id: &RawValue, count: u64, fail: bool) -> Action {
    let token = id.get();
    let partials = (1..=count)
        .map(|k| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\
                 \"params\":{{\"progressToken\":{token},\"progress\":{k},\"total\":{count}}}}}"
            )
            .into_bytes()
        })
        .collect();
    let terminal = if fail {
        error(
            id,
            INTERNAL_ERROR,
            &format!("Internal error: the stream failed after {count} partial outputs"),
        )
    } else {
        result(id, r#"{"content":[{"type":"text","text":"done"}]}"#)
    };
    Action::Stream { partials, terminal }
}

/// The `count` and `fail` of `swp/stream` params, when they are well typed and in bounds.
fn stream_params(params: Option<&RawValue>) -> Option<(u64, bool)> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Params {
        count: u64,
        #[serde(default)]
        fail: bool,
    }
    let raw = params?.get();
    // A struct also deserializes from an array; params here are by name only.
    if !raw.starts_with('{') {
        return None;
    }
    let p: Params = serde_json::from_str(raw).ok()?;
    (p.count <= MAX_STREAM_PARTIALS).then_some((p.count, p.fail))
}

/// The `ms` of `swp/delay` params, when it is an integer within bounds.
fn delay_ms(params: Option<&RawValue>) -> Option<u64> {
    #[derive(Deserialize)]
    struct Params {
        ms: u64,
    }
    let raw = params?.get();
    // A struct also deserializes from an array (`[5]`); params here are by name only.
    if !raw.starts_with('{') {
        return None;
    }
    let p: Params = serde_json::from_str(raw).ok()?;
    (p.ms <= MAX_DELAY_MS).then_some(p.ms)
}

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// A success response echoing the raw request id; `result` is JSON text.
fn result(id: &RawValue, result: &str) -> Vec<u8> {
    let id = id.get().as_bytes();
    let mut v = Vec::with_capacity(PREFIX.len() + id.len() + 11 + result.len() + 1);
    v.extend_from_slice(PREFIX);
    v.extend_from_slice(id);
    v.extend_from_slice(br#","result":"#);
    v.extend_from_slice(result.as_bytes());
    v.push(b'}');
    v
}

/// An error response echoing the raw request id.
fn error(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    // Serializing a &str cannot fail.
    let message = serde_json::to_string(message).unwrap_or_default();
    let body = format!("{{\"code\":{code},\"message\":{message}}}");
    let id = id.get().as_bytes();
    let mut v = Vec::with_capacity(PREFIX.len() + id.len() + 10 + body.len() + 1);
    v.extend_from_slice(PREFIX);
    v.extend_from_slice(id);
    v.extend_from_slice(br#","error":"#);
    v.extend_from_slice(body.as_bytes());
    v.push(b'}');
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(a: Action) -> String {
        match a {
            Action::Reply(v) => String::from_utf8(v).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    fn code(a: Action) -> ErrorCode {
        match a {
            Action::Reject(r) => r.code(),
            other => panic!("expected a reject, got {other:?}"),
        }
    }

    #[test]
    fn ping_echoes_the_id_octet_for_octet() {
        for id in [
            "1",
            "\"a\\u0062\"",
            "1.0e2",
            "-0",
            "null",
            "18446744073709551616",
        ] {
            let p = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(
                reply(handle(1, p.as_bytes(), None)),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
            );
        }
        // Escapes in the method name are decoded before matching.
        let p = br#"{"method":"p\u0069ng","id":7,"jsonrpc":"2.0"}"#;
        assert_eq!(
            reply(handle(1, p, None)),
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
        );
    }

    #[test]
    fn whoami_reports_the_identity_or_null() {
        let p = br#"{"jsonrpc":"2.0","id":"w","method":"swp/whoami"}"#;
        assert_eq!(
            reply(handle(1, p, Some("spiffe://x/\"y"))),
            r#"{"jsonrpc":"2.0","id":"w","result":{"identity":"spiffe://x/\"y"}}"#
        );
        assert_eq!(
            reply(handle(1, p, None)),
            r#"{"jsonrpc":"2.0","id":"w","result":{"identity":null}}"#
        );
    }

    #[test]
    fn delay_is_bounded() {
        let p = br#"{"jsonrpc":"2.0","id":1,"method":"swp/delay","params":{"ms":250}}"#;
        assert!(matches!(
            handle(1, p, None),
            Action::Delayed { ms: 250, .. }
        ));
        for params in [r#"{"ms":10001}"#, r#"{"ms":-1}"#, r#"{}"#, "[5]", "null"] {
            let p = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"swp/delay","params":{params}}}"#);
            assert!(
                reply(handle(1, p.as_bytes(), None)).contains("-32602"),
                "{params}"
            );
        }
    }

    #[test]
    fn unknown_methods_get_a_json_rpc_error() {
        let p = br#"{"jsonrpc":"2.0","id":[1][0],"method":"tools/list"}"#;
        assert_eq!(code(handle(1, p, None)), ErrorCode::InvalidMcpPayload);
        let p = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
        assert_eq!(
            reply(handle(1, p, None)),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#
        );
    }

    #[test]
    fn invalid_payloads_and_msg_types() {
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
            assert_eq!(
                code(handle(1, p, None)),
                ErrorCode::InvalidMcpPayload,
                "{p:?}"
            );
        }
        assert_eq!(code(handle(4, b"{}", None)), ErrorCode::UnsupportedMsgType);
        assert_eq!(code(handle(0, b"{}", None)), ErrorCode::UnsupportedMsgType);
    }

    #[test]
    fn responses_and_notifications_get_nothing() {
        let ok: [(u64, &[u8]); 3] = [
            (2, br#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            (
                2,
                br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
            ),
            (3, br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#),
        ];
        for (t, p) in ok {
            assert_eq!(handle(t, p, None), Action::Nothing);
        }
        let bad: [(u64, &[u8]); 6] = [
            (2, br#"{"jsonrpc":"2.0","id":1}"#),
            (2, br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#),
            (2, br#"{"jsonrpc":"2.0","result":{}}"#),
            (3, br#"{"jsonrpc":"2.0"}"#),
            // An id makes it a request, whatever the msg_type says.
            (
                3,
                br#"{"jsonrpc":"2.0","id":9,"method":"notifications/progress"}"#,
            ),
            (
                3,
                br#"{"jsonrpc":"2.0","method":"notifications/x","id":null}"#,
            ),
        ];
        for (t, p) in bad {
            assert_eq!(
                code(handle(t, p, None)),
                ErrorCode::InvalidMcpPayload,
                "{}",
                String::from_utf8_lossy(p)
            );
        }
    }

    #[test]
    fn batch_arrays_are_rejected_whatever_the_msg_type() {
        let batches: [&[u8]; 4] = [
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
            b" \t\r\n[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            b"[]",
            br#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#,
        ];
        for p in batches {
            for t in 1..=3 {
                assert_eq!(
                    code(handle(t, p, None)),
                    ErrorCode::InvalidMcpPayload,
                    "{t} {}",
                    String::from_utf8_lossy(p)
                );
            }
        }
    }

    #[test]
    fn fail_answers_an_internal_error_on_the_request() {
        let p = br#"{"jsonrpc":"2.0","id":"f-1","method":"swp/fail"}"#;
        assert_eq!(
            reply(handle(1, p, None)),
            r#"{"jsonrpc":"2.0","id":"f-1","error":{"code":-32603,"message":"Internal error"}}"#
        );
        // The same code the error frames use for the core INTERNAL_ERROR category.
        assert_eq!(INTERNAL_ERROR, -32603);
    }

    fn stream_of(a: Action) -> (Vec<String>, String) {
        match a {
            Action::Stream { partials, terminal } => (
                partials
                    .into_iter()
                    .map(|p| String::from_utf8(p).unwrap())
                    .collect(),
                String::from_utf8(terminal).unwrap(),
            ),
            other => panic!("expected a stream, got {other:?}"),
        }
    }

    #[test]
    fn stream_emits_progress_then_a_terminal_response() {
        let p = br#"{"jsonrpc":"2.0","id":"s-1","method":"swp/stream","params":{"count":3}}"#;
        let (partials, terminal) = stream_of(handle(1, p, None));
        assert_eq!(
            partials,
            (1..=3)
                .map(|k| format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"s-1","progress":{k},"total":3}}}}"#
                ))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            terminal,
            r#"{"jsonrpc":"2.0","id":"s-1","result":{"content":[{"type":"text","text":"done"}]}}"#
        );
        // Each partial is itself a valid notification for this handler.
        for n in &partials {
            assert_eq!(handle(3, n.as_bytes(), None), Action::Nothing);
        }

        let p =
            br#"{"jsonrpc":"2.0","id":7,"method":"swp/stream","params":{"fail":true,"count":2}}"#;
        let (partials, terminal) = stream_of(handle(1, p, None));
        assert_eq!(partials.len(), 2);
        assert!(partials[1].contains(r#""progressToken":7,"progress":2,"total":2"#));
        let v: serde_json::Value = serde_json::from_str(&terminal).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["error"]["code"], -32603);
        assert!(v.get("result").is_none());

        // No partials at all: only the terminal response.
        let p =
            br#"{"jsonrpc":"2.0","id":1,"method":"swp/stream","params":{"count":0,"fail":false}}"#;
        let (partials, terminal) = stream_of(handle(1, p, None));
        assert!(partials.is_empty());
        assert!(terminal.contains(r#""result""#));
        let p = br#"{"jsonrpc":"2.0","id":1,"method":"swp/stream","params":{"count":16}}"#;
        assert_eq!(stream_of(handle(1, p, None)).0.len(), 16);
    }

    #[test]
    fn stream_params_are_checked() {
        for params in [
            r#"{"count":17}"#,
            r#"{"count":-1}"#,
            r#"{"count":"2"}"#,
            r#"{"count":2,"fail":"yes"}"#,
            r#"{"count":2,"extra":1}"#,
            r#"{"fail":true}"#,
            "[2,true]",
            "null",
        ] {
            let p =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"swp/stream","params":{params}}}"#);
            assert!(
                reply(handle(1, p.as_bytes(), None)).contains("-32602"),
                "{params}"
            );
        }
        let p = br#"{"jsonrpc":"2.0","id":1,"method":"swp/stream"}"#;
        assert!(reply(handle(1, p, None)).contains("-32602"));
    }
}
