//! SWP-OBS (profile 18): traceparent validation, trace context presence, and the context
//! machine judging preservation of traceparent, tracestate and correlation.

use crate::FORMS;
use bytes::Bytes;
use prost::Message;
use swp_core::ErrorCode;
use swp_profiles::obs::context::Config;
use swp_profiles::obs::trace::{parse_traceparent, tracestate_entries};
use swp_profiles::obs::{self, ContextError, Contexts, ObsMessage, Seen, TraceContext};
use swp_profiles::p1::pb::obs::{ObsDoc, ObsSet};
use swp_profiles::payload::PayloadError;
use swp_profiles::{Ctx, Profile};

const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn ctx(tp: &str, ts: &str) -> TraceContext {
    TraceContext {
        traceparent: tp.into(),
        tracestate: ts.into(),
        rpc_id: Bytes::from_static(b"rpc-1"),
        ..TraceContext::default()
    }
}

/// OBS-008: msg_types outside 1..=4 are ERR_UNSUPPORTED_MSG_TYPE.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 5, 12] {
            assert_eq!(
                obs::decode(form, t, b"").unwrap_err().code(),
                ErrorCode::UnsupportedMsgType
            );
        }
    }
}

/// OBS-002, OBS-006: the W3C traceparent format, each way of breaking it.
#[test]
fn traceparent_format() {
    let p = parse_traceparent(TP).unwrap();
    assert_eq!((p.version, p.flags), ("00", "01"));
    assert_eq!(p.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    // A later version may carry more after a '-'.
    assert!(parse_traceparent(&format!("01{}-what-the-future-holds", &TP[2..])).is_ok());
    for bad in [
        "",
        &TP[..54],
        &format!("{TP}-"),           // 00 is exactly 55
        &format!("01{}x", &TP[2..]), // no '-' after 55
        &format!("ff{}", &TP[2..]),  // forbidden version
        &TP.to_uppercase(),          // upper-case hex
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // zero trace-id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // zero parent-id
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // separator
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", // not hex
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-é",
    ] {
        assert!(parse_traceparent(bad).is_err(), "{bad:?}");
    }
    for form in FORMS {
        let set = ObsSet {
            traceparent: TP.replace("00f0", "00F0"),
            ..ObsSet::default()
        };
        let e = obs::decode(form, 1, &form.frame(1, set.encode_to_vec())).unwrap_err();
        assert!(
            matches!(
                e,
                PayloadError::Invalid {
                    field: "traceparent",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
    }
}

/// §4: a traceparent is required when context is present; OBS_SET always carries context;
/// an empty OBS_DOC (no context) is valid.
#[test]
fn traceparent_required_with_context() {
    for form in FORMS {
        let frame = |t: u64, b: Vec<u8>| form.frame(t, b);
        let no_tp = ObsSet::default().encode_to_vec();
        assert!(matches!(
            obs::decode(form, 1, &frame(1, no_tp)),
            Err(PayloadError::MissingField {
                field: "traceparent",
                ..
            })
        ));
        let state_only = ObsDoc {
            tracestate: "a=1".into(),
            ..ObsDoc::default()
        };
        assert!(obs::decode(form, 3, &frame(3, state_only.encode_to_vec())).is_err());
        assert!(obs::decode(form, 3, &frame(3, vec![])).is_ok());
    }
}

/// OBS-005: a document returns the context set, octet for octet; the tracestate string is
/// kept as received, white space included.
#[test]
fn context_preserved_exactly() {
    let mut c = Contexts::default();
    let set = ctx(TP, "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7");
    assert_eq!(
        c.set("", set.clone()),
        Ok(Seen::ContextSet { correlated: true })
    );
    assert_eq!(
        c.get("", true),
        Ok(Seen::Snapshot {
            include_current: true,
            current: Some(set.clone())
        })
    );
    assert_eq!(c.doc("", &set), Ok(Seen::Doc { solicited: true }));
    assert_eq!(c.doc("", &set), Ok(Seen::Doc { solicited: false }));
    let msg = ObsMessage::Doc(set.to_doc());
    assert_eq!(
        c.step(Ctx::scoped(""), &msg),
        Ok(Seen::Doc { solicited: false })
    );
    let e = c
        .doc("", &ctx(&TP.replace("-01", "-00"), &set.tracestate))
        .unwrap_err();
    assert!(matches!(e, ContextError::TraceparentChanged { .. }), "{e}");
    let e = c
        .doc("", &ctx(TP, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"))
        .unwrap_err();
    assert!(matches!(e, ContextError::TracestateChanged { .. }), "{e}");
    assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
}

/// OBS-003, OBS-007: unknown tracestate entries are never changed, dropped or reordered;
/// the endpoint's own key may be updated and moved to the front (W3C).
#[test]
fn unknown_tracestate_entries_are_not_mutated() {
    let set = ctx(TP, "own=1,congo=t61,rojo=00f");
    let own = vec!["own".to_owned()];
    assert!(obs::compare(&set, &ctx(TP, "own=2, congo=t61, rojo=00f"), &own).is_ok());
    assert!(obs::compare(&set, &ctx(TP, "congo=t61,rojo=00f"), &own).is_ok());
    for (got, entry) in [
        ("own=1,congo=t62,rojo=00f", "congo=t61"),
        ("own=1,rojo=00f,congo=t61", "congo=t61"),
        ("own=1,congo=t61", "rojo=00f"),
        ("own=1,congo=t61,rojo=00f,new=1", "new=1"),
    ] {
        assert_eq!(
            obs::compare(&set, &ctx(TP, got), &own),
            Err(ContextError::UnknownEntryMutated(format!("{entry:?}"))),
            "{got}"
        );
    }
    // Without an own key, every entry is unknown.
    assert!(matches!(
        obs::compare(&set, &ctx(TP, "own=2,congo=t61,rojo=00f"), &[]),
        Err(ContextError::UnknownEntryMutated(_))
    ));
    assert_eq!(
        tracestate_entries(" a=1 ,\tb=2,,"),
        vec![("a", "a=1"), ("b", "b=2")]
    );
}

/// OBS-004 and obs_0004: correlation is reported when absent (a SHOULD) and must come back
/// unchanged.
#[test]
fn correlation_linkage() {
    let mut c = Contexts::default();
    assert_eq!(
        c.set(
            "",
            TraceContext {
                traceparent: TP.into(),
                ..TraceContext::default()
            }
        ),
        Ok(Seen::ContextSet { correlated: false })
    );
    c.set("", ctx(TP, "")).unwrap();
    let mut got = ctx(TP, "");
    got.rpc_id = Bytes::from_static(b"rpc-2");
    assert_eq!(
        c.doc("", &got),
        Err(ContextError::CorrelationChanged("rpc_id"))
    );
}

/// include_current false may be answered with an empty document; true may not.
#[test]
fn include_current() {
    let mut c = Contexts::default();
    // No context yet: anything valid answers.
    c.get("", true).unwrap();
    assert_eq!(
        c.doc("", &TraceContext::default()),
        Ok(Seen::Doc { solicited: true })
    );
    c.set("", ctx(TP, "")).unwrap();
    c.get("", false).unwrap();
    assert_eq!(
        c.doc("", &TraceContext::default()),
        Ok(Seen::Doc { solicited: true })
    );
    c.get("", true).unwrap();
    assert_eq!(
        c.doc("", &TraceContext::default()),
        Err(ContextError::ContextDropped)
    );
    assert_eq!(c.doc("", &ctx(TP, "")), Ok(Seen::Doc { solicited: true }));
}

/// A refused OBS_SET leaves the context in effect; scopes have their own context.
#[test]
fn refusals_change_nothing_and_scopes_are_separate() {
    let mut c = Contexts::new(Config {
        max_tracestate_bytes: 8,
        ..Config::default()
    });
    c.set("", ctx(TP, "a=1")).unwrap();
    assert!(matches!(
        c.set("", ctx(TP, "a=123456789")),
        Err(ContextError::TracestateTooLong { len: 11, max: 8 })
    ));
    assert_eq!(c.current("").map(|x| x.tracestate.as_str()), Some("a=1"));
    assert_eq!(c.current("peer-2"), None);
}

/// Bounded memory: scopes and pending GETs are capped (ERR_RATE_LIMIT_EXCEEDED); scopes with
/// nothing set or pending are forgotten first.
#[test]
fn bounded() {
    let mut c = Contexts::new(Config {
        max_scopes: 1,
        max_pending: 1,
        ..Config::default()
    });
    c.get("a", true).unwrap();
    assert_eq!(c.get("a", true), Err(ContextError::TooManyPending(1)));
    assert_eq!(c.set("b", ctx(TP, "")), Err(ContextError::Full(1)));
    assert_eq!(
        c.set("b", ctx(TP, "")).unwrap_err().code(),
        ErrorCode::RateLimitExceeded
    );
    c.doc("a", &TraceContext::default()).unwrap();
    assert!(c.set("b", ctx(TP, "")).is_ok(), "scope a had nothing left");
}
