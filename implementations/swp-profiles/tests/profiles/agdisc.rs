//! SWP-AGDISC (profile 10): what a card must carry, ETag semantics, not-modified answers
//! tied to the validator asked about, and freshness on the caller's clock.

use crate::FORMS;
use bytes::Bytes;
use prost::Message;
use swp_core::ErrorCode;
use swp_profiles::agdisc::{self, AgdiscMessage, Cache, CacheError, Cached, Config, Seen};
use swp_profiles::p1::pb::agdisc::{AgdiscDoc, AgdiscErr, AgdiscGet, AgdiscNotModified};
use swp_profiles::payload::PayloadError;
use swp_profiles::{Ctx, Profile};

fn get(agent: &str, inm: &str) -> AgdiscMessage {
    AgdiscMessage::Get(AgdiscGet {
        agent_id: agent.into(),
        if_none_match: inm.into(),
    })
}

fn doc(agent: &str, rev: &str, card: &'static [u8], etag: &str, max_age_ms: u64) -> AgdiscMessage {
    AgdiscMessage::Doc(AgdiscDoc {
        agent_id: agent.into(),
        schema_revision: rev.into(),
        card_payload: Bytes::from_static(card),
        etag: etag.into(),
        max_age_ms,
    })
}

fn nm(agent: &str, etag: &str) -> AgdiscMessage {
    AgdiscMessage::NotModified(AgdiscNotModified {
        agent_id: agent.into(),
        etag: etag.into(),
    })
}

/// AGDISC-010: msg_types outside 1..=4 are ERR_UNSUPPORTED_MSG_TYPE, whatever the octets.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 5, 6, 99] {
            assert_eq!(
                agdisc::decode(form, t, b"\x0a\x01a").unwrap_err().code(),
                ErrorCode::UnsupportedMsgType
            );
        }
    }
}

/// AGDISC-001, AGDISC-002 … AGDISC-005, AGDISC-011: a card names its agent, declares its
/// revision and has a body; a GET names an agent; a not-modified names agent and validator.
#[test]
fn required_fields() {
    let missing = |m: &AgdiscMessage, field: &str| {
        for form in FORMS {
            match agdisc::decode(form, m.msg_type(), &agdisc::encode(form, m)) {
                Err(PayloadError::MissingField { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{m:?} in {form:?}: {other:?}"),
            }
        }
    };
    missing(&doc("a", "", b"{}", "e", 1), "schema_revision");
    missing(&doc("", "1", b"{}", "e", 1), "agent_id");
    missing(&doc("a", "1", b"", "e", 1), "card_payload");
    missing(&get("", "e"), "agent_id");
    missing(&nm("", "e"), "agent_id");
    missing(&nm("a", ""), "etag");
    // Validators, freshness and everything in an error are optional.
    for m in [
        doc("a", "1", b"{}", "", 0),
        get("a", ""),
        AgdiscMessage::Err(AgdiscErr::default()),
    ] {
        for form in FORMS {
            assert_eq!(
                agdisc::decode(form, m.msg_type(), &agdisc::encode(form, &m)),
                Ok(m.clone())
            );
        }
    }
}

/// AGDISC-006, AGDISC-012: card octets that are not UTF-8 or JSON come back byte for byte.
#[test]
fn opaque_card_octets_are_kept() {
    let card: &'static [u8] = b"\x00\xff\xfe not json \x80";
    let m = doc("a", "1", card, "e", 5);
    for form in FORMS {
        let AgdiscMessage::Doc(d) = agdisc::decode(form, 2, &agdisc::encode(form, &m)).unwrap()
        else {
            panic!()
        };
        assert_eq!(d.card_payload, card);
    }
    // A wrapper carrying another class than the msg_type is refused.
    let w = agdisc::encode(swp_profiles::P1Form::Wrapper, &m);
    assert!(agdisc::decode(swp_profiles::P1Form::Wrapper, 1, &w).is_err());
    // The bare form is exactly the prost encoding.
    let AgdiscMessage::Doc(d) = m else { panic!() };
    assert_eq!(
        agdisc::encode(
            swp_profiles::P1Form::Message,
            &AgdiscMessage::Doc(d.clone())
        ),
        d.encode_to_vec()
    );
}

/// AGDISC-007: a validator names one representation.
#[test]
fn an_etag_names_one_card() {
    let mut c = Cache::new(Config::default());
    c.step(Ctx::new(0, ""), &get("a", "")).unwrap();
    assert_eq!(
        c.step(Ctx::new(0, ""), &doc("a", "1", b"one", "e1", 1000)),
        Ok(Seen::Doc {
            solicited: true,
            replaced: false
        })
    );
    // The same card again under its etag is fine; other octets or another revision are not.
    assert!(c
        .step(Ctx::new(1, ""), &doc("a", "1", b"one", "e1", 1000))
        .is_ok());
    for bad in [
        doc("a", "1", b"two", "e1", 1000),
        doc("a", "2", b"one", "e1", 1000),
    ] {
        let e = c.step(Ctx::new(2, ""), &bad).unwrap_err();
        assert!(matches!(e, CacheError::EtagReused { .. }), "{e}");
        assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
    }
    // New content under a new etag replaces the copy.
    assert_eq!(
        c.step(Ctx::new(3, ""), &doc("a", "2", b"two", "e2", 1000)),
        Ok(Seen::Doc {
            solicited: false,
            replaced: true
        })
    );
    // Cards are per scope: another peer's "e1" is its own.
    assert!(c
        .step(Ctx::new(3, "b"), &doc("a", "9", b"nine", "e1", 1000))
        .is_ok());
}

/// AGDISC-007: replacing the copy under another validator does not free the old one; a
/// strong validator never names another representation (found by the harness's
/// differential test, tests/rules_differential.rs: the cache compared only with the copy
/// held, so "e1", "", then "e1" with other octets passed).
#[test]
fn a_replaced_copys_etag_still_names_its_card() {
    let mut c = Cache::new(Config::default());
    c.step(Ctx::new(0, ""), &doc("a", "1", b"one", "e1", 1000))
        .unwrap();
    c.step(Ctx::new(1, ""), &doc("a", "2", b"two", "", 1000))
        .unwrap();
    c.step(Ctx::new(2, ""), &doc("a", "3", b"three", "e3", 1000))
        .unwrap();
    for bad in [
        doc("a", "1", b"other", "e1", 1000),
        doc("a", "9", b"one", "e1", 1000),
    ] {
        let e = c.step(Ctx::new(3, ""), &bad).unwrap_err();
        assert!(matches!(e, CacheError::EtagReused { .. }), "{e}");
    }
    // The card it named, again, is fine (a revalidated copy), and so is another agent's e1.
    assert!(c
        .step(Ctx::new(4, ""), &doc("a", "1", b"one", "e1", 1000))
        .is_ok());
    assert!(c
        .step(Ctx::new(4, ""), &doc("b", "1", b"other", "e1", 1000))
        .is_ok());
    // The memory is bounded: past max_cards validators, the oldest is forgotten.
    let mut small = Cache::new(Config {
        max_cards: 2,
        ..Config::default()
    });
    small
        .step(Ctx::new(0, ""), &doc("a", "1", b"one", "e1", 0))
        .unwrap();
    small
        .step(Ctx::new(0, ""), &doc("a", "2", b"two", "e2", 0))
        .unwrap();
    small
        .step(Ctx::new(0, ""), &doc("a", "3", b"three", "e3", 0))
        .unwrap();
    assert!(small
        .step(Ctx::new(0, ""), &doc("a", "9", b"nine", "e1", 0))
        .is_ok());
    assert!(small
        .step(Ctx::new(0, ""), &doc("a", "9", b"nine", "e3", 0))
        .is_err());
}

/// AGDISC-015, AGDISC-007: a not-modified answers a conditional GET with its validator.
#[test]
fn not_modified_answers_the_validator_asked_about() {
    let mut c = Cache::new(Config::default());
    assert!(matches!(
        c.step(Ctx::new(0, ""), &nm("a", "e1")),
        Err(CacheError::UnsolicitedNotModified(_))
    ));
    c.step(Ctx::new(0, ""), &get("a", "")).unwrap();
    // An unconditional GET is not answered not-modified.
    assert!(matches!(
        c.step(Ctx::new(0, ""), &nm("a", "e1")),
        Err(CacheError::UnsolicitedNotModified(_))
    ));
    c.step(Ctx::new(0, ""), &doc("a", "1", b"one", "e1", 1000))
        .unwrap();
    c.step(Ctx::new(0, ""), &get("a", "e1")).unwrap();
    let e = c.step(Ctx::new(0, ""), &nm("a", "e2")).unwrap_err();
    assert!(matches!(e, CacheError::ValidatorMismatch { .. }), "{e}");
    // The refusal changed nothing: the GET still waits.
    assert_eq!(
        c.step(Ctx::new(0, ""), &nm("a", "e1")),
        Ok(Seen::NotModified { renewed: true })
    );
    assert!(c.step(Ctx::new(0, ""), &nm("a", "e1")).is_err());
    // A validator the cache never saw may still be revalidated (the asker knew it).
    c.step(Ctx::new(0, ""), &get("z", "ez")).unwrap();
    assert_eq!(
        c.step(Ctx::new(0, ""), &nm("z", "ez")),
        Ok(Seen::NotModified { renewed: false })
    );
}

/// AGDISC-008: freshness runs from arrival for max_age_ms; a not-modified renews an expired
/// copy; 0 means revalidate every time.
#[test]
fn freshness_on_the_callers_clock() {
    let mut c = Cache::new(Config::default());
    c.step(Ctx::new(100, ""), &get("a", "")).unwrap();
    assert!(matches!(
        c.step(Ctx::new(100, ""), &get("a", "")),
        Ok(Seen::Get {
            cached: Cached::Nothing,
            conditional: false
        })
    ));
    c.step(Ctx::new(100, ""), &doc("a", "1", b"one", "e1", 1000))
        .unwrap();
    assert_eq!(c.cached(1099, "", "a"), Cached::Fresh);
    assert_eq!(c.cached(1100, "", "a"), Cached::Stale);
    assert_eq!(
        c.step(Ctx::new(5000, ""), &get("a", "e1")),
        Ok(Seen::Get {
            conditional: true,
            cached: Cached::Stale
        })
    );
    c.step(Ctx::new(5000, ""), &nm("a", "e1")).unwrap();
    assert_eq!(c.cached(5999, "", "a"), Cached::Fresh);
    assert_eq!(c.cached(6000, "", "a"), Cached::Stale);
    c.step(Ctx::new(7000, ""), &doc("b", "1", b"b", "", 0))
        .unwrap();
    assert_eq!(c.cached(7000, "", "b"), Cached::Stale);
}

/// Errors answer the oldest GET of the scope; caps forget rather than grow.
#[test]
fn errors_and_caps() {
    let mut c = Cache::new(Config {
        max_cards: 2,
        max_pending: 2,
        max_card_bytes: 4,
    });
    let err = AgdiscMessage::Err(AgdiscErr::default());
    assert_eq!(
        c.step(Ctx::new(0, ""), &err),
        Ok(Seen::Error { solicited: false })
    );
    c.step(Ctx::new(0, ""), &get("a", "")).unwrap();
    assert_eq!(
        c.step(Ctx::new(0, ""), &err),
        Ok(Seen::Error { solicited: true })
    );
    let e = c
        .step(Ctx::new(0, ""), &doc("a", "1", b"12345", "", 0))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::RateLimitExceeded);
    c.step(Ctx::new(0, ""), &doc("a", "1", b"a", "", 10))
        .unwrap();
    c.step(Ctx::new(0, ""), &doc("b", "1", b"b", "", 1000))
        .unwrap();
    // Full: the card first seen longest ago ("a") goes first.
    c.step(Ctx::new(50, ""), &doc("c", "1", b"c", "", 1000))
        .unwrap();
    assert_eq!(c.cached(50, "", "a"), Cached::Nothing);
    assert_eq!(c.cached(50, "", "b"), Cached::Fresh);
    // Pending GETs: the oldest is forgotten.
    for a in ["x", "y", "z"] {
        c.step(Ctx::new(60, ""), &get(a, "e")).unwrap();
    }
    assert!(c.step(Ctx::new(60, ""), &nm("x", "e")).is_err());
    assert!(c.step(Ctx::new(60, ""), &nm("z", "e")).is_ok());
}
