//! The reference endpoint's MCP server behaviour on profile 1: the payload rules come from
//! `swp_profiles::mcp`; this module answers `initialize`, `tools/list`, `tools/call` (the
//! deterministic tool set in [`super::tools`]), `ping`, `swp/whoami`, `swp/delay`, the test
//! hooks `swp/fail` and `swp/stream`, and "method not found" for everything else.
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
//!   JSON-RPC error -32603. The request id may be at most [`MAX_STREAM_ID_BYTES`] octets
//!   of JSON (else -32602), which bounds what one request can make the endpoint write.
//!
//! Members stay raw JSON text, so the request `id` is echoed octet for octet (§5) and a
//! ping costs no allocation beyond its reply.

use super::reply::Reject;
use super::tools;
use serde::Deserialize;
use serde_json::value::RawValue;
use swp_profiles::mcp::{jsonrpc, McpMessage};

pub use swp_profiles::mcp::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND};
pub use swp_profiles::mcp::{MSG_TYPE_NOTIFICATION, MSG_TYPE_REQUEST, MSG_TYPE_RESPONSE};

/// Longest delay `swp/delay` accepts, so a pending response never outlives a few seconds.
pub const MAX_DELAY_MS: u64 = 10_000;

/// Most partial outputs `swp/stream` emits for one request.
pub const MAX_STREAM_PARTIALS: u64 = 16;

/// Longest request id (as JSON text) `swp/stream` accepts. Every partial echoes the id as
/// its `progressToken`, so without this bound one request would make the endpoint write
/// (and, against a slow reader, hold) up to 17 times its own size; with it, one
/// `swp/stream` request produces at most about 6 KiB, whatever its size.
pub const MAX_STREAM_ID_BYTES: usize = 256;

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
    /// Run these steps over time: notifications, a server-to-client request, the
    /// terminal response (the conformance fixtures, [`super::script`]).
    Script(super::script::Script),
    /// Nothing to send.
    Nothing,
    /// Reject the frame with an error frame.
    Reject(Reject),
}

/// Handles one accepted profile-1 envelope. `identity` is the authenticated peer identity;
/// a request `authz` refuses to it is rejected with `ERR_SECURITY_POLICY` and not run.
pub fn handle(
    msg_type: u64,
    payload: &[u8],
    identity: Option<&str>,
    authz: &crate::endpoint::authz::Authz,
) -> Action {
    match swp_profiles::mcp::parse(msg_type, payload) {
        Err(e) => Action::Reject(Reject::profile(e.code(), e.to_string())),
        Ok(McpMessage::Request { method, .. }) if authz.denies(identity, &method) => {
            Action::Reject(Reject::profile(
                swp_core::ErrorCode::SecurityPolicy,
                format!(
                    "{} is not authorized for {method}",
                    identity.unwrap_or("a peer without an identity")
                ),
            ))
        }
        Ok(McpMessage::Request { id, method, params }) => request(id, &method, params, identity),
        // Responses and notifications are answered by nothing (§4: a notification MUST NOT
        // require a response).
        Ok(McpMessage::Response { .. } | McpMessage::Notification { .. }) => Action::Nothing,
    }
}

fn request(
    id: &RawValue,
    method: &str,
    params: Option<&RawValue>,
    identity: Option<&str>,
) -> Action {
    match method {
        "ping" => Action::Reply(result(id, "{}")),
        "swp/whoami" => {
            let identity = match identity {
                // Serializing a &str cannot fail.
                Some(s) => serde_json::to_string(s).unwrap_or_default(),
                None => "null".to_owned(),
            };
            Action::Reply(result(id, &format!("{{\"identity\":{identity}}}")))
        }
        "swp/delay" => match delay_ms(params) {
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
        "swp/stream" if id.get().len() > MAX_STREAM_ID_BYTES => Action::Reply(error(
            id,
            INVALID_PARAMS,
            &format!(
                "Invalid params: swp/stream echoes the request id in every partial output, \
                 so the id may be at most {MAX_STREAM_ID_BYTES} octets of JSON"
            ),
        )),
        "swp/stream" => match stream_params(params) {
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
        "initialize" => Action::Reply(result(
            id,
            &tools::initialize_result(params.map(RawValue::get)),
        )),
        "tools/list" => Action::Reply(result(id, tools::tools_list_result())),
        "tools/call" => match tools::call(params.map(RawValue::get)) {
            tools::CallOutcome::Result(r) => Action::Reply(result(id, &r)),
            tools::CallOutcome::Error(code, message) => Action::Reply(error(id, code, &message)),
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

/// A success response echoing the raw request id; `result` is JSON text.
fn result(id: &RawValue, result: &str) -> Vec<u8> {
    jsonrpc::result(id.get(), result)
}

/// An error response echoing the raw request id.
fn error(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    jsonrpc::error(id.get(), code, message, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::authz::Authz;
    use swp_core::ErrorCode;

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
                reply(handle(1, p.as_bytes(), None, &Authz::default())),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
            );
        }
        // Escapes in the method name are decoded before matching.
        let p = br#"{"method":"p\u0069ng","id":7,"jsonrpc":"2.0"}"#;
        assert_eq!(
            reply(handle(1, p, None, &Authz::default())),
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
        );
    }

    #[test]
    fn whoami_reports_the_identity_or_null() {
        let p = br#"{"jsonrpc":"2.0","id":"w","method":"swp/whoami"}"#;
        assert_eq!(
            reply(handle(1, p, Some("spiffe://x/\"y"), &Authz::default())),
            r#"{"jsonrpc":"2.0","id":"w","result":{"identity":"spiffe://x/\"y"}}"#
        );
        assert_eq!(
            reply(handle(1, p, None, &Authz::default())),
            r#"{"jsonrpc":"2.0","id":"w","result":{"identity":null}}"#
        );
    }

    #[test]
    fn delay_is_bounded() {
        let p = br#"{"jsonrpc":"2.0","id":1,"method":"swp/delay","params":{"ms":250}}"#;
        assert!(matches!(
            handle(1, p, None, &Authz::default()),
            Action::Delayed { ms: 250, .. }
        ));
        for params in [r#"{"ms":10001}"#, r#"{"ms":-1}"#, r#"{}"#, "[5]", "null"] {
            let p = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"swp/delay","params":{params}}}"#);
            assert!(
                reply(handle(1, p.as_bytes(), None, &Authz::default())).contains("-32602"),
                "{params}"
            );
        }
    }

    #[test]
    fn unknown_methods_get_a_json_rpc_error() {
        let p = br#"{"jsonrpc":"2.0","id":[1][0],"method":"tools/list"}"#;
        assert_eq!(
            code(handle(1, p, None, &Authz::default())),
            ErrorCode::InvalidMcpPayload
        );
        let p = br#"{"jsonrpc":"2.0","id":3,"method":"resources/list"}"#;
        assert_eq!(
            reply(handle(1, p, None, &Authz::default())),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#
        );
    }

    #[test]
    fn invalid_payloads_and_msg_types_are_rejected_with_the_profile_code() {
        // The full table lives with the rules in swp_profiles::mcp::message; here, that the
        // endpoint turns each kind of refusal into a reject with its code.
        assert_eq!(
            code(handle(1, b"\xff{}", None, &Authz::default())),
            ErrorCode::InvalidMcpPayload
        );
        assert_eq!(
            code(handle(4, b"{}", None, &Authz::default())),
            ErrorCode::UnsupportedMsgType
        );
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
            assert_eq!(handle(t, p, None, &Authz::default()), Action::Nothing);
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
                code(handle(t, p, None, &Authz::default())),
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
                    code(handle(t, p, None, &Authz::default())),
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
            reply(handle(1, p, None, &Authz::default())),
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
        let (partials, terminal) = stream_of(handle(1, p, None, &Authz::default()));
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
            assert_eq!(
                handle(3, n.as_bytes(), None, &Authz::default()),
                Action::Nothing
            );
        }

        let p =
            br#"{"jsonrpc":"2.0","id":7,"method":"swp/stream","params":{"fail":true,"count":2}}"#;
        let (partials, terminal) = stream_of(handle(1, p, None, &Authz::default()));
        assert_eq!(partials.len(), 2);
        assert!(partials[1].contains(r#""progressToken":7,"progress":2,"total":2"#));
        let v: serde_json::Value = serde_json::from_str(&terminal).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["error"]["code"], -32603);
        assert!(v.get("result").is_none());

        // No partials at all: only the terminal response.
        let p =
            br#"{"jsonrpc":"2.0","id":1,"method":"swp/stream","params":{"count":0,"fail":false}}"#;
        let (partials, terminal) = stream_of(handle(1, p, None, &Authz::default()));
        assert!(partials.is_empty());
        assert!(terminal.contains(r#""result""#));
        let p = br#"{"jsonrpc":"2.0","id":1,"method":"swp/stream","params":{"count":16}}"#;
        assert_eq!(stream_of(handle(1, p, None, &Authz::default())).0.len(), 16);
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
                reply(handle(1, p.as_bytes(), None, &Authz::default())).contains("-32602"),
                "{params}"
            );
        }
        let p = br#"{"jsonrpc":"2.0","id":1,"method":"swp/stream"}"#;
        assert!(reply(handle(1, p, None, &Authz::default())).contains("-32602"));
    }
}
