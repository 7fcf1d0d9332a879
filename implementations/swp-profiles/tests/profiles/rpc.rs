//! SWP-RPC (profile 12): messages, required fields, both P1 forms, the call lifecycle and the
//! idempotency window.

use crate::FORMS;
use bytes::Bytes;
use prost::Message;
use swp_core::ErrorCode;
use swp_profiles::p1::pb::rpc::{RpcCancel, RpcErr, RpcReq, RpcResp, RpcStreamItem};
use swp_profiles::payload::PayloadError;
use swp_profiles::rpc::lifecycle::Gate;
use swp_profiles::rpc::{
    self, codes, Config, Lifecycle, LifecycleError, Outcome, RpcMessage, Seen,
};
use swp_profiles::P1Form;
use swp_profiles::{Ctx, Profile};

fn req(id: &'static [u8], params: &'static [u8], key: &str) -> RpcReq {
    RpcReq {
        rpc_id: Bytes::from_static(id),
        method: "org.example.echo".into(),
        params: Bytes::from_static(params),
        idempotency_key: key.into(),
    }
}
fn resp(id: &'static [u8], result: &'static [u8]) -> RpcResp {
    RpcResp {
        rpc_id: Bytes::from_static(id),
        result: Bytes::from_static(result),
    }
}
fn err(id: &'static [u8], code: &str, retryable: bool) -> RpcErr {
    RpcErr {
        rpc_id: Bytes::from_static(id),
        error_code: code.into(),
        retryable,
        error_message: "no".into(),
    }
}
fn item(id: &'static [u8], seq_no: u64, is_terminal: bool) -> RpcStreamItem {
    RpcStreamItem {
        rpc_id: Bytes::from_static(id),
        seq_no,
        item: Bytes::from_static(b"x"),
        is_terminal,
    }
}
fn cancel(id: &'static [u8]) -> RpcCancel {
    RpcCancel {
        rpc_id: Bytes::from_static(id),
        reason: String::new(),
    }
}

/// RPC-016, RPC-013: any msg_type outside 1..=5 is ERR_UNSUPPORTED_MSG_TYPE, whatever the
/// octets, in both forms.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 6, 7, 255, u64::MAX] {
            for payload in [&b""[..], b"\x0a\x01r", b"\xff"] {
                let e = rpc::decode(form, t, payload).unwrap_err();
                assert_eq!(e.code(), ErrorCode::UnsupportedMsgType, "{t} {e}");
            }
        }
    }
}

/// RPC-014, RPC-012: the required fields of §4, read as "not empty"; retryable is a bool
/// and always has a value; an empty result, seq_no 0 and an empty cancel reason are fine.
#[test]
fn required_fields() {
    // The field refused, the same in both forms.
    let missing = |t: u64, bytes: Vec<u8>| {
        let fields: Vec<&'static str> = FORMS
            .iter()
            .map(
                |form| match rpc::decode(*form, t, &form.frame(t, bytes.clone())) {
                    Err(PayloadError::MissingField { field, .. }) => field,
                    other => panic!("{t} {form:?}: {other:?}"),
                },
            )
            .collect();
        assert_eq!(fields[0], fields[1]);
        fields[0]
    };
    assert_eq!(missing(1, req(b"", b"", "").encode_to_vec()), "rpc_id");
    let mut r = req(b"r", b"", "");
    r.method.clear();
    assert_eq!(missing(1, r.encode_to_vec()), "method");
    assert_eq!(missing(2, resp(b"", b"x").encode_to_vec()), "rpc_id");
    let mut e = err(b"r", "", false);
    assert_eq!(missing(3, e.encode_to_vec()), "error_code");
    e.error_code = "internal".into();
    e.error_message.clear();
    assert_eq!(missing(3, e.encode_to_vec()), "error_message");
    let mut s = item(b"r", 0, false);
    s.item.clear();
    assert_eq!(missing(4, s.encode_to_vec()), "item");
    assert_eq!(missing(5, cancel(b"").encode_to_vec()), "rpc_id");
    for form in FORMS {
        let ok: [(u64, Vec<u8>); 4] = [
            (2, resp(b"r", b"").encode_to_vec()),
            (3, err(b"r", "internal", false).encode_to_vec()),
            (4, item(b"r", 0, false).encode_to_vec()),
            (5, cancel(b"r").encode_to_vec()),
        ];
        for (t, b) in ok {
            assert!(rpc::decode(form, t, &form.frame(t, b)).is_ok(), "{t}");
        }
    }
}

/// RPC-014: octets that are not protobuf are ERR_INVALID_PROFILE_PAYLOAD; unknown fields
/// are skipped (P1 §4).
#[test]
fn malformed_and_unknown_fields() {
    for form in FORMS {
        let e = rpc::decode(form, 1, b"\x0a\x05ab").unwrap_err();
        assert!(matches!(e, PayloadError::Malformed { .. }), "{e}");
        assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
    }
    let mut b = req(b"r", b"p", "").encode_to_vec();
    b.extend_from_slice(&[0x78, 0x01, 0x82, 0x01, 0x02, b'x', b'y']);
    for form in FORMS {
        let m = rpc::decode(form, 1, &form.frame(1, b.clone())).unwrap();
        assert_eq!(m, RpcMessage::Req(req(b"r", b"p", "")));
    }
}

/// RPC-001, P1-015: the spec kit's own fixtures use both forms. `rpc_0001`'s payload is a
/// bare RpcReq; `poc_0002`'s is the Payload wrapper around one. Each decodes in its form
/// and is refused in the other.
#[test]
fn the_spec_kits_fixtures_use_both_forms() {
    let bare = b"\x0a\x03rpc\x12\x19rpc_0001_req_resp_success";
    let wrapped = b"\x0a\x22\x0a\x02r1\x12\x09demo.echo\x1a\x11{\"hello\":\"world\"}";
    let m = rpc::decode(P1Form::Message, 1, bare).unwrap();
    assert!(matches!(&m, RpcMessage::Req(r) if r.method == "rpc_0001_req_resp_success"));
    assert!(rpc::decode(P1Form::Wrapper, 1, bare).is_err());
    let m = rpc::decode(P1Form::Wrapper, 1, wrapped).unwrap();
    assert!(matches!(&m, RpcMessage::Req(r) if r.method == "demo.echo" && &r.rpc_id[..] == b"r1"));
    assert_eq!(rpc::encode(P1Form::Wrapper, &m), wrapped.to_vec());
    // Read as a bare RpcReq, the wrapper's field 1 is an rpc_id and method is missing.
    assert!(rpc::decode(P1Form::Message, 1, wrapped).is_err());
}

/// RPC-001: a wrapper must carry the member its msg_type names, and one at all.
#[test]
fn wrapper_mismatch_and_empty_wrapper() {
    let w = rpc::encode(P1Form::Wrapper, &RpcMessage::Resp(resp(b"r", b"")));
    assert_eq!(
        rpc::decode(P1Form::Wrapper, 1, &w),
        Err(PayloadError::WrapperMismatch {
            msg_type: 1,
            carried: 2
        })
    );
    assert!(matches!(
        rpc::decode(P1Form::Wrapper, 2, b""),
        Err(PayloadError::EmptyWrapper { .. })
    ));
    // An unknown wrapper field is skipped; with no oneof member left, nothing is carried.
    assert!(matches!(
        rpc::decode(P1Form::Wrapper, 2, b"\x38\x01"),
        Err(PayloadError::EmptyWrapper { .. })
    ));
}

/// RPC-005, RPC-017, CORE-018: one terminal outcome per rpc_id; the same terminal again is
/// the same outcome, a different one is refused.
#[test]
fn exactly_one_terminal_outcome() {
    let mut l = Lifecycle::default();
    assert!(matches!(
        l.response("", &resp(b"a", b"1")),
        Err(LifecycleError::UnknownRpc { .. })
    ));
    assert_eq!(l.request(0, "", &req(b"a", b"", "")), Ok(Seen::Opened));
    assert_eq!(
        l.response("", &resp(b"a", b"1")),
        Ok(Seen::Closed {
            cancelled: false,
            waiting: vec![]
        })
    );
    assert_eq!(
        l.response("", &resp(b"a", b"1")),
        Ok(Seen::DuplicateTerminal)
    );
    let e = l.response("", &resp(b"a", b"2")).unwrap_err();
    assert_eq!(e, LifecycleError::ConflictingTerminal("61".into()));
    assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
    assert!(matches!(
        l.error("", &err(b"a", codes::INTERNAL, false)),
        Err(LifecycleError::ConflictingTerminal(_))
    ));
    // The same rpc_id requested again: identical is a duplicate, different is refused.
    assert_eq!(
        l.request(5, "", &req(b"a", b"", "")),
        Ok(Seen::DuplicateRequest)
    );
    assert_eq!(
        l.request(5, "", &req(b"a", b"other", "")),
        Err(LifecycleError::ConflictingRequest("61".into()))
    );
    // Another scope has its own rpc_ids.
    assert_eq!(
        l.request(5, "peer-2", &req(b"a", b"other", "")),
        Ok(Seen::Opened)
    );
}

/// RPC-002, RPC-017: no stream item after the terminal outcome.
#[test]
fn no_stream_item_after_terminal() {
    let mut l = Lifecycle::default();
    l.request(0, "", &req(b"s", b"", "")).unwrap();
    assert_eq!(l.stream_item("", &item(b"s", 1, false)), Ok(Seen::Item));
    l.error("", &err(b"s", codes::INTERNAL, true)).unwrap();
    assert_eq!(
        l.stream_item("", &item(b"s", 2, false)),
        Err(LifecycleError::ItemAfterTerminal("73".into()))
    );
    assert!(matches!(
        l.stream_item("", &item(b"t", 1, false)),
        Err(LifecycleError::UnknownRpc { .. })
    ));
}

/// RPC-010, RPC-018: seq_no strictly increases per rpc_id; gaps are allowed; nothing follows
/// the item marked is_terminal; calls do not share sequences.
#[test]
fn seq_no_strictly_increasing() {
    let mut l = Lifecycle::default();
    l.request(0, "", &req(b"s", b"", "")).unwrap();
    l.request(0, "", &req(b"u", b"", "")).unwrap();
    assert_eq!(l.stream_item("", &item(b"s", 0, false)), Ok(Seen::Item));
    assert_eq!(l.stream_item("", &item(b"s", 1, false)), Ok(Seen::Item));
    assert_eq!(
        l.stream_item("", &item(b"s", 1, false)),
        Err(LifecycleError::SeqNotIncreasing {
            rpc_id: "73".into(),
            last: 1,
            got: 1
        })
    );
    assert!(l.stream_item("", &item(b"s", 0, false)).is_err());
    assert_eq!(l.stream_item("", &item(b"u", 0, false)), Ok(Seen::Item));
    assert_eq!(l.stream_item("", &item(b"s", 7, true)), Ok(Seen::Item));
    assert_eq!(
        l.stream_item("", &item(b"s", 8, false)),
        Err(LifecycleError::ItemAfterLastItem("73".into()))
    );
    // The terminal outcome still follows the last item.
    assert!(matches!(
        l.response("", &resp(b"s", b"")),
        Ok(Seen::Closed { .. })
    ));
}

/// RPC-003, RPC-004: a cancel before the terminal is accepted and reported on the terminal;
/// one that crossed the terminal is ignored; one for no call is refused.
#[test]
fn cancel_before_and_after_terminal() {
    let mut l = Lifecycle::default();
    l.request(0, "", &req(b"c", b"", "")).unwrap();
    assert_eq!(l.cancel("", &cancel(b"c")), Ok(Seen::CancelRequested));
    assert_eq!(l.cancel("", &cancel(b"c")), Ok(Seen::CancelRequested));
    assert!(l.is_open("", &Bytes::from_static(b"c")));
    assert_eq!(
        l.error("", &err(b"c", codes::CANCELLED, false)),
        Ok(Seen::Closed {
            cancelled: true,
            waiting: vec![]
        })
    );
    assert_eq!(l.cancel("", &cancel(b"c")), Ok(Seen::CancelIgnored));
    assert!(matches!(
        l.cancel("", &cancel(b"d")),
        Err(LifecycleError::UnknownRpc { .. })
    ));
}

/// RPC-008, RPC-019: a replay of an idempotency key with the same method and params, on a
/// new rpc_id, must end with the original outcome; the machine hands it over and holds the
/// replay to it.
#[test]
fn replay_returns_the_original_outcome() {
    let mut l = Lifecycle::default();
    assert_eq!(l.request(0, "", &req(b"r1", b"p", "k")), Ok(Seen::Opened));
    l.response("", &resp(b"r1", b"42")).unwrap();
    let original = Outcome::Resp {
        result: Bytes::from_static(b"42"),
    };
    assert_eq!(
        l.request(10, "", &req(b"r2", b"p", "k")),
        Ok(Seen::Replay {
            original: Bytes::from_static(b"r1"),
            outcome: Some(original.clone())
        })
    );
    let answer = original.to_message(Bytes::from_static(b"r2"));
    assert_eq!(answer, RpcMessage::Resp(resp(b"r2", b"42")));
    assert!(matches!(
        l.step(Ctx::new(11, ""), &answer),
        Ok(Seen::Closed { .. })
    ));
    l.request(12, "", &req(b"r3", b"p", "k")).unwrap();
    assert_eq!(
        l.response("", &resp(b"r3", b"43")),
        Err(LifecycleError::ReplayOutcomeDiffers {
            rpc_id: "7233".into(),
            original: "7231".into()
        })
    );
    // An error outcome is replayed the same way.
    l.request(0, "", &req(b"e1", b"p", "k-err")).unwrap();
    l.error("", &err(b"e1", codes::UNAVAILABLE, true)).unwrap();
    assert!(matches!(
        l.request(1, "", &req(b"e2", b"p", "k-err")),
        Ok(Seen::Replay {
            outcome: Some(Outcome::Err {
                retryable: true,
                ..
            }),
            ..
        })
    ));
}

/// RPC-008: a replay that arrives while the original runs waits for it; the original's
/// terminal names the replays to answer.
#[test]
fn replay_while_the_original_runs() {
    let mut l = Lifecycle::default();
    l.request(0, "", &req(b"r1", b"p", "k")).unwrap();
    assert_eq!(
        l.request(1, "", &req(b"r2", b"p", "k")),
        Ok(Seen::Replay {
            original: Bytes::from_static(b"r1"),
            outcome: None
        })
    );
    assert_eq!(
        l.response("", &resp(b"r1", b"v")),
        Ok(Seen::Closed {
            cancelled: false,
            waiting: vec![Bytes::from_static(b"r2")]
        })
    );
    assert!(matches!(
        l.response("", &resp(b"r2", b"v")),
        Ok(Seen::Closed { .. })
    ));
}

/// RPC-009, RPC-019, CORE-019: a replay with other inputs must end in an RPC_ERR, the same
/// error_code and retryable each time.
#[test]
fn conflicting_replay_is_a_deterministic_terminal_error() {
    let mut l = Lifecycle::default();
    l.request(0, "", &req(b"r1", b"a", "k")).unwrap();
    l.response("", &resp(b"r1", b"ok")).unwrap();
    assert_eq!(
        l.request(1, "", &req(b"r2", b"b", "k")),
        Ok(Seen::Conflict {
            original: Bytes::from_static(b"r1")
        })
    );
    assert_eq!(
        l.response("", &resp(b"r2", b"ok")),
        Err(LifecycleError::ConflictNotRefused("7232".into()))
    );
    assert!(matches!(
        l.error("", &err(b"r2", codes::IDEMPOTENCY_CONFLICT, false)),
        Ok(Seen::Closed { .. })
    ));
    // The method counts as input too.
    let mut other = req(b"r3", b"a", "k");
    other.method = "org.example.other".into();
    assert!(matches!(
        l.request(2, "", &other),
        Ok(Seen::Conflict { .. })
    ));
    assert_eq!(
        l.error("", &err(b"r3", codes::INVALID_REQUEST, false)),
        Err(LifecycleError::ConflictErrorDiffers("7233".into()))
    );
    assert!(l
        .error("", &err(b"r3", codes::IDEMPOTENCY_CONFLICT, false))
        .is_ok());
}

/// RPC-007, RPC-011: the replay window is a parameter; past it, the key starts afresh.
#[test]
fn the_replay_window_is_a_parameter() {
    let mut l = Lifecycle::new(Config {
        replay_window_ms: 1_000,
        ..Config::default()
    });
    assert_eq!(l.config().replay_window_ms, 1_000);
    l.request(100, "", &req(b"r1", b"a", "k")).unwrap();
    l.response("", &resp(b"r1", b"1")).unwrap();
    assert!(matches!(
        l.request(1_099, "", &req(b"r2", b"a", "k")),
        Ok(Seen::Replay { .. })
    ));
    // At the window's end the key is new again, with whatever inputs.
    assert_eq!(
        l.request(1_100, "", &req(b"r3", b"b", "k")),
        Ok(Seen::Opened)
    );
    assert!(matches!(
        l.request(1_200, "", &req(b"r4", b"a", "k")),
        Ok(Seen::Conflict { original }) if &original[..] == b"r3"
    ));
    // Keys are per scope.
    assert_eq!(
        l.request(1_200, "peer-2", &req(b"r4", b"a", "k")),
        Ok(Seen::Opened)
    );
}

/// RPC-015: a policy-gated method is refused with ERR_SECURITY_POLICY, and opens nothing.
#[test]
fn policy_gate() {
    let mut l = Lifecycle::new(Config {
        gated: vec![Gate {
            method: "org.example.admin".into(),
            allowed_scopes: vec!["admin".into()],
        }],
        ..Config::default()
    });
    let mut r = req(b"g", b"", "");
    r.method = "org.example.admin".into();
    let e = l.request(0, "", &r).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SecurityPolicy);
    assert!(l.is_empty());
    assert_eq!(l.request(0, "admin", &r), Ok(Seen::Opened));
}

/// Bounded memory: the call closed first is forgotten for a new one; when every call is
/// open, and when the key table is full within the window, the request is refused with
/// ERR_RATE_LIMIT_EXCEEDED.
#[test]
fn bounded() {
    let mut l = Lifecycle::new(Config {
        max_calls: 2,
        max_keys: 1,
        replay_window_ms: 100,
        ..Config::default()
    });
    l.request(0, "", &req(b"a", b"", "k1")).unwrap();
    l.request(0, "", &req(b"b", b"", "")).unwrap();
    let e = l.request(0, "", &req(b"c", b"", "")).unwrap_err();
    assert_eq!(e, LifecycleError::Full(2));
    assert_eq!(e.code(), ErrorCode::RateLimitExceeded);
    l.response("", &resp(b"a", b"")).unwrap();
    assert_eq!(
        l.request(50, "", &req(b"c", b"", "k2")),
        Err(LifecycleError::KeysFull(1))
    );
    // The refused request was not opened, but the closed call was forgotten for it.
    assert_eq!(l.len(), 1);
    assert_eq!(l.request(100, "", &req(b"c", b"", "k2")), Ok(Seen::Opened));
    assert_eq!(l.keys_len(), 1);
    // The first call closed is the first forgotten, whatever order the calls opened in.
    let mut l = Lifecycle::new(Config {
        max_calls: 2,
        ..Config::default()
    });
    l.request(0, "", &req(b"a", b"", "")).unwrap();
    l.request(0, "", &req(b"b", b"", "")).unwrap();
    l.response("", &resp(b"b", b"")).unwrap();
    l.response("", &resp(b"a", b"")).unwrap();
    assert_eq!(l.request(0, "", &req(b"c", b"", "")), Ok(Seen::Opened));
    // a is still known; b was forgotten for c, and a goes for b.
    assert_eq!(
        l.request(0, "", &req(b"a", b"", "")),
        Ok(Seen::DuplicateRequest)
    );
    assert_eq!(l.request(0, "", &req(b"b", b"", "")), Ok(Seen::Opened));
    assert_eq!(
        l.request(0, "", &req(b"a", b"", "")),
        Err(LifecycleError::Full(2))
    );
    // The outcome budget counts too.
    let mut l = Lifecycle::new(Config {
        max_replay_bytes: 4,
        replay_window_ms: 100,
        ..Config::default()
    });
    l.request(0, "", &req(b"a", b"", "k1")).unwrap();
    l.response("", &resp(b"a", b"12345")).unwrap();
    assert!(matches!(
        l.request(1, "", &req(b"b", b"", "k2")),
        Err(LifecycleError::KeysFull(_))
    ));
    assert_eq!(l.request(100, "", &req(b"b", b"", "k2")), Ok(Seen::Opened));
}

/// RPC-007: the key table stays right off the steady state. A key admitted again after its
/// window leaves a stale queue entry, which must not forget the live key; a clock that goes
/// back leaves expired keys behind live ones, which are still found.
#[test]
fn key_expiry_off_the_steady_state() {
    let mut l = Lifecycle::new(Config {
        max_keys: 1,
        replay_window_ms: 10,
        ..Config::default()
    });
    l.request(0, "", &req(b"a", b"1", "k1")).unwrap();
    assert_eq!(l.request(20, "", &req(b"b", b"2", "k1")), Ok(Seen::Opened));
    assert_eq!(
        l.request(25, "", &req(b"c", b"3", "k2")),
        Err(LifecycleError::KeysFull(1))
    );
    assert!(matches!(
        l.request(26, "", &req(b"d", b"9", "k1")),
        Ok(Seen::Conflict { original }) if &original[..] == b"b"
    ));
    assert_eq!(l.request(30, "", &req(b"e", b"3", "k2")), Ok(Seen::Opened));
    let mut l = Lifecycle::new(Config {
        max_keys: 2,
        replay_window_ms: 100,
        ..Config::default()
    });
    l.request(1_000, "", &req(b"a", b"", "k1")).unwrap();
    l.request(0, "", &req(b"b", b"", "k2")).unwrap();
    assert_eq!(
        l.request(1_050, "", &req(b"c", b"", "k3")),
        Ok(Seen::Opened)
    );
    assert!(matches!(
        l.request(1_060, "", &req(b"d", b"", "k1")),
        Ok(Seen::Replay { .. })
    ));
    assert_eq!(l.keys_len(), 2);
}
