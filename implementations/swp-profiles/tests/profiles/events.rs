//! SWP-EVENTS (profile 13): the event record's required fields, the severity enumeration,
//! unknown extensions, event_id uniqueness per producer, batches, subscriptions, and the
//! relay judge of order and correlation.

use crate::FORMS;
use bytes::Bytes;
use prost::Message;
use swp_core::ErrorCode;
use swp_profiles::events::stream::Config;
use swp_profiles::events::{
    self, codes, EventsMessage, Relay, RelayError, Seen, Stream, StreamError,
};
use swp_profiles::p1::pb::events::{EventRecord, EvtBatch, EvtPublish};
use swp_profiles::payload::PayloadError;

fn record(id: &str) -> EventRecord {
    EventRecord {
        event_id: id.into(),
        event_type: "org.example.tick".into(),
        severity: "info".into(),
        ts_unix_ms: 1_700_000_000_000,
        msg_id: Bytes::new(),
        task_id: Bytes::new(),
        rpc_id: Bytes::from_static(b"rpc-1"),
        body: Bytes::from_static(b"{}"),
    }
}

fn publish(r: EventRecord) -> Vec<u8> {
    EvtPublish { event: Some(r) }.encode_to_vec()
}

/// EVENTS-019: msg_types outside 1..=5 are ERR_UNSUPPORTED_MSG_TYPE.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 6, 9] {
            assert_eq!(
                events::decode(form, t, b"").unwrap_err().code(),
                ErrorCode::UnsupportedMsgType
            );
        }
    }
}

/// EVENTS-002..007, EVENTS-016, EVENTS-017: every required field of a published or batched
/// event, each missing in turn; one correlation key of the three is enough.
#[test]
fn required_event_fields() {
    type Strip = fn(&mut EventRecord);
    let cases: [(&str, Strip); 6] = [
        ("event_id", |r| r.event_id.clear()),
        ("event_type", |r| r.event_type.clear()),
        ("severity", |r| r.severity.clear()),
        ("ts_unix_ms", |r| r.ts_unix_ms = 0),
        ("msg_id, task_id or rpc_id", |r| r.rpc_id.clear()),
        ("body", |r| r.body.clear()),
    ];
    for form in FORMS {
        for (field, strip) in cases {
            let mut r = record("e1");
            strip(&mut r);
            for (t, b) in [
                (1, publish(r.clone())),
                (
                    4,
                    EvtBatch {
                        events: vec![record("e0"), r],
                    }
                    .encode_to_vec(),
                ),
            ] {
                match events::decode(form, t, &form.frame(t, b)) {
                    Err(e @ PayloadError::MissingField { .. }) => {
                        assert!(e.to_string().contains(field), "{e}");
                        assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
                    }
                    other => panic!("{field}: {other:?}"),
                }
            }
        }
        for key in ["msg_id", "task_id"] {
            let mut r = record("e1");
            r.rpc_id.clear();
            match key {
                "msg_id" => r.msg_id = Bytes::from_static(b"m"),
                _ => r.task_id = Bytes::from_static(b"t"),
            }
            assert!(
                events::decode(form, 1, &form.frame(1, publish(r))).is_ok(),
                "{key}"
            );
        }
        assert!(matches!(
            events::decode(
                form,
                1,
                &form.frame(1, EvtPublish { event: None }.encode_to_vec())
            ),
            Err(PayloadError::MissingField { field: "event", .. })
        ));
    }
}

/// EVENTS-012: severity takes a value of the documented enumeration, which is a parameter.
#[test]
fn severity_enumeration() {
    assert_eq!(
        events::SEVERITIES,
        ["trace", "debug", "info", "warn", "error", "fatal"]
    );
    let mut s = Stream::default();
    let mut r = record("e1");
    r.severity = "loud".into();
    let e = s.publish(0, "", &r).unwrap_err();
    assert!(matches!(e, StreamError::InvalidSeverity { .. }), "{e}");
    assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
    r.severity = "INFO".into();
    assert!(s.publish(0, "", &r).is_err(), "compared exactly");
    let mut s = Stream::new(Config {
        severities: vec!["loud".into()],
        ..Config::default()
    });
    r.severity = "loud".into();
    assert_eq!(s.publish(0, "", &r), Ok(Seen::Published));
}

/// EVENTS-014: unknown fields, in the record, around it and in the wrapper, leave the known
/// required fields valid and intact.
#[test]
fn unknown_extensions_do_not_invalidate_known_fields() {
    let mut inner = record("e1").encode_to_vec();
    inner.extend_from_slice(&[0xf8, 0x07, 0x05, 0xfa, 0x07, 0x02, b'h', b'i']); // fields 127
    let mut b = vec![0x0a];
    prost::encoding::encode_varint(inner.len() as u64, &mut b);
    b.extend_from_slice(&inner);
    b.extend_from_slice(&[0x10, 0x2a]); // EvtPublish field 2
    for form in FORMS {
        let mut p = form.frame(1, b.clone());
        p.extend_from_slice(&[0x48, 0x01]); // field 9, in the wrapper or the message
        match events::decode(form, 1, &p) {
            Ok(EventsMessage::Publish(EvtPublish { event: Some(r) })) => {
                assert_eq!(r, record("e1"))
            }
            other => panic!("{form:?}: {other:?}"),
        }
    }
}

/// EVENTS-010: an event_id is unique per producer: the same event again is a re-delivery,
/// another event under the same id is refused; producers have their own ids; the retention
/// is a parameter.
#[test]
fn event_id_unique_per_producer() {
    let mut s = Stream::new(Config {
        id_retention_ms: 1_000,
        ..Config::default()
    });
    assert_eq!(s.publish(0, "p1", &record("e1")), Ok(Seen::Published));
    assert_eq!(s.publish(5, "p1", &record("e1")), Ok(Seen::DuplicateEvent));
    let mut other = record("e1");
    other.body = Bytes::from_static(b"other");
    assert_eq!(
        s.publish(5, "p1", &other),
        Err(StreamError::EventIdReused("\"e1\"".into()))
    );
    assert_eq!(s.publish(5, "p2", &other), Ok(Seen::Published));
    assert_eq!(
        s.publish(1_000, "p1", &other),
        Ok(Seen::Published),
        "past retention"
    );
}

/// EVENTS-013: a batch is taken in order and whole: a reused id inside it refuses all of it.
#[test]
fn batches_are_ordered_and_atomic() {
    let mut s = Stream::default();
    s.publish(0, "", &record("e1")).unwrap();
    let batch = [record("e1"), record("e2"), record("e3"), record("e2")];
    assert_eq!(
        s.batch(0, "", &batch),
        Ok(Seen::Batch {
            fresh: 2,
            duplicates: 2
        })
    );
    let mut clash = record("e5");
    clash.severity = "warn".into();
    assert!(matches!(
        s.batch(0, "", &[record("e4"), record("e5"), clash]),
        Err(StreamError::EventIdReused(_))
    ));
    assert_eq!(
        s.publish(0, "", &record("e4")),
        Ok(Seen::Published),
        "nothing was recorded"
    );
    assert_eq!(
        s.batch(0, "", &[]),
        Ok(Seen::Batch {
            fresh: 0,
            duplicates: 0
        })
    );
}

/// EVENTS-009, EVENTS-011, EVENTS-013, EVENTS-018: a relayed stream keeps publication order
/// (filtering may skip, never reorder or repeat) and correlation keys.
#[test]
fn relay_order_and_correlation() {
    let mut r = Relay::default();
    for id in ["e1", "e2", "e3", "e4"] {
        r.published(&record(id)).unwrap();
    }
    assert_eq!(
        r.published(&record("e1")),
        Err(RelayError::PublishedTwice("\"e1\"".into()))
    );
    r.delivered(&record("e1")).unwrap();
    r.delivered(&record("e3")).unwrap(); // e2 filtered out
    assert_eq!(r.pending(), 1);
    assert!(matches!(
        r.delivered(&record("e2")),
        Err(RelayError::OutOfOrder { .. })
    ));
    assert!(matches!(
        r.delivered(&record("e3")),
        Err(RelayError::OutOfOrder { .. })
    ));
    let mut changed = record("e4");
    changed.rpc_id = Bytes::from_static(b"rpc-2");
    assert_eq!(
        r.delivered(&changed),
        Err(RelayError::CorrelationChanged {
            event_id: "\"e4\"".into(),
            key: "rpc_id"
        })
    );
    r.delivered(&record("e4")).unwrap();
    assert!(matches!(
        r.delivered(&record("e9")),
        Err(RelayError::NotPublished(_))
    ));
    let mut small = Relay::new(1);
    small.published(&record("a")).unwrap();
    assert_eq!(small.published(&record("b")), Err(RelayError::Full(1)));
}

/// EVENTS-015: subscription failures are refusals with an EVT_ERR code; subscriptions are
/// named by their filter and bounded.
#[test]
fn subscriptions() {
    let mut s = Stream::new(Config {
        max_subscriptions: 1,
        ..Config::default()
    });
    assert_eq!(s.subscribe("", "ticks"), Ok(Seen::Subscribed));
    assert_eq!(s.subscribe("", "ticks"), Ok(Seen::AlreadySubscribed));
    assert!(s.is_subscribed("", "ticks"));
    let e = s.subscribe("", "echo").unwrap_err();
    assert_eq!(
        (e.code(), e.reply_code()),
        (ErrorCode::RateLimitExceeded, codes::TOO_MANY_SUBSCRIPTIONS)
    );
    assert_eq!(s.unsubscribe("", "ticks"), Ok(Seen::Unsubscribed));
    let e = s.unsubscribe("", "ticks").unwrap_err();
    assert_eq!(e.reply_code(), codes::UNKNOWN_SUBSCRIPTION);
    assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
}

/// Bounded memory: the oldest event_id is forgotten first; no publish is refused for room.
#[test]
fn bounded_ids() {
    let mut s = Stream::new(Config {
        max_ids: 2,
        ..Config::default()
    });
    for id in ["e1", "e2", "e3"] {
        s.publish(0, "", &record(id)).unwrap();
    }
    assert_eq!(s.ids_len(), 2);
    let mut other = record("e1");
    other.body = Bytes::from_static(b"x");
    assert_eq!(
        s.publish(0, "", &other),
        Ok(Seen::Published),
        "e1 was forgotten"
    );
    assert!(s
        .publish(0, "", &{
            let mut r = record("e3");
            r.body = Bytes::from_static(b"x");
            r
        })
        .is_err());
}
