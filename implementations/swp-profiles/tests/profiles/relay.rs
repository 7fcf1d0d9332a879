//! SWP-RELAY (profile 19): the publish's required delivery_id, unassigned msg_types,
//! deduplication within the retention window, acknowledgements, the retry schedule a relay
//! declares, and dead-letter reasons from a finite set.

use crate::FORMS;
use bytes::Bytes;
use swp_core::ErrorCode;
use swp_profiles::p1::pb::relay::{RelayAck, RelayNack, RelayPublish};
use swp_profiles::payload::PayloadError;
use swp_profiles::relay::{
    self, codes, Config, Deliveries, DeliveryError, RelayMessage, RetryPolicy, Seen,
};
use swp_profiles::{Ctx, Profile};

fn publish(id: &'static [u8]) -> RelayMessage {
    RelayMessage::Publish(RelayPublish {
        delivery_id: Bytes::from_static(id),
        topic: "t".into(),
        payload: Bytes::from_static(b"body"),
        ttl_ms: 0,
    })
}

fn ack(id: &'static [u8]) -> RelayMessage {
    RelayMessage::Ack(RelayAck {
        delivery_id: Bytes::from_static(id),
    })
}

fn nack(id: &'static [u8], retryable: bool, reason: &str) -> RelayMessage {
    RelayMessage::Nack(RelayNack {
        delivery_id: Bytes::from_static(id),
        retryable,
        reason_code: reason.into(),
    })
}

/// RELAY-013, RELAY-015: msg_types outside 1..=5 are ERR_UNSUPPORTED_MSG_TYPE.
#[test]
fn unassigned_msg_types_are_unsupported() {
    for form in FORMS {
        for t in [0, 6, 99] {
            assert_eq!(
                relay::decode(form, t, b"").unwrap_err().code(),
                ErrorCode::UnsupportedMsgType
            );
        }
    }
}

/// RELAY-003, RELAY-009, RELAY-014, RELAY-016: a publish without a delivery_id (absent or
/// empty, which P1 cannot tell apart) is refused as an invalid payload, in both forms.
#[test]
fn a_publish_needs_a_delivery_id() {
    for form in FORMS {
        let m = RelayMessage::Publish(RelayPublish {
            delivery_id: Bytes::new(),
            topic: "t".into(),
            payload: Bytes::from_static(b"x"),
            ttl_ms: 0,
        });
        let e = relay::decode(form, relay::MSG_PUBLISH, &relay::encode(form, &m)).unwrap_err();
        assert!(matches!(
            e,
            PayloadError::MissingField {
                field: "delivery_id",
                ..
            }
        ));
        assert_eq!(e.code(), ErrorCode::InvalidProfilePayload);
        let ok = publish(b"d-1");
        assert_eq!(
            relay::decode(form, relay::MSG_PUBLISH, &relay::encode(form, &ok)).unwrap(),
            ok
        );
    }
}

/// RELAY-005, RELAY-011, CORE-020: the same delivery_id within the window is a duplicate,
/// per publisher; one past the window is new again.
#[test]
fn duplicates_within_the_window() {
    let mut d = Deliveries::new(Config {
        dedupe_window_ms: 1_000,
        ..Config::default()
    });
    assert_eq!(
        d.step(Ctx::new(0, "p"), &publish(b"a")).unwrap(),
        Seen::Published
    );
    assert_eq!(
        d.step(Ctx::new(999, "p"), &publish(b"a")).unwrap(),
        Seen::Duplicate { attempt: 2 }
    );
    // Another publisher's id is its own.
    assert_eq!(
        d.step(Ctx::new(999, "q"), &publish(b"a")).unwrap(),
        Seen::Published
    );
    assert_eq!(
        d.step(Ctx::new(1_000, "p"), &publish(b"a")).unwrap(),
        Seen::Published
    );
}

/// RELAY-002, RELAY-004: acknowledgements name a delivery the other side published; a
/// NACK after an ACK, or an ACK after a dead letter, is refused.
#[test]
fn acknowledgements_name_the_other_sides_delivery() {
    let mut d = Deliveries::new(Config::default());
    d.step(Ctx::new(0, "relay"), &publish(b"a")).unwrap();
    assert!(matches!(
        d.step(Ctx::new(1, "relay"), &ack(b"a")),
        Err(DeliveryError::UnknownDelivery(_))
    ));
    assert_eq!(
        d.step(Ctx::new(1, "consumer"), &ack(b"a")).unwrap(),
        Seen::Acked
    );
    assert_eq!(
        d.step(Ctx::new(2, "consumer"), &ack(b"a")).unwrap(),
        Seen::Acked
    );
    assert!(matches!(
        d.step(
            Ctx::new(3, "consumer"),
            &nack(b"a", false, codes::CONSUMER_REJECTED)
        ),
        Err(DeliveryError::Settled { .. })
    ));
    let e = d.step(Ctx::new(3, "consumer"), &ack(b"zz")).unwrap_err();
    assert_eq!(e.reply_code(), codes::UNKNOWN_DELIVERY);
    d.step(Ctx::new(4, "relay"), &publish(b"b")).unwrap();
    assert_eq!(
        d.step(
            Ctx::new(5, "consumer"),
            &nack(b"b", false, codes::CONSUMER_REJECTED)
        )
        .unwrap(),
        Seen::DeadLettered {
            reason: codes::CONSUMER_REJECTED.into()
        }
    );
    assert!(matches!(
        d.step(Ctx::new(6, "consumer"), &ack(b"b")),
        Err(DeliveryError::Settled { .. })
    ));
}

/// RELAY-008: a dead letter carries a reason from the declared finite set.
#[test]
fn dead_letter_reasons_come_from_the_set() {
    let mut d = Deliveries::new(Config {
        reasons: relay::DEAD_LETTER_REASONS.map(String::from).to_vec(),
        ..Config::default()
    });
    d.step(Ctx::new(0, "publisher"), &publish(b"a")).unwrap();
    assert!(matches!(
        d.step(Ctx::new(1, "relay"), &nack(b"a", false, "")),
        Err(DeliveryError::MissingReason(_))
    ));
    assert!(matches!(
        d.step(Ctx::new(1, "relay"), &nack(b"a", false, "gremlins")),
        Err(DeliveryError::UnknownReason { .. })
    ));
    // A retryable NACK is no dead letter: its reason is free.
    assert_eq!(
        d.step(Ctx::new(1, "relay"), &nack(b"a", true, "busy"))
            .unwrap(),
        Seen::Nacked
    );
    assert!(matches!(
        d.step(
            Ctx::new(2, "relay"),
            &nack(b"a", false, codes::RETRY_EXHAUSTED)
        )
        .unwrap(),
        Seen::DeadLettered { .. }
    ));
}

fn judged() -> Deliveries {
    Deliveries::new(Config {
        retry: Some(RetryPolicy {
            delays_ms: vec![300, 600],
            tolerance_ms: 100,
        }),
        ..Config::default()
    })
}

/// RELAY-012: re-publishes follow the declared schedule: each at its delay from the
/// previous attempt within the tolerance, never beyond the limit.
#[test]
fn retries_follow_the_declared_schedule() {
    let mut d = judged();
    d.step(Ctx::new(0, "relay"), &publish(b"a")).unwrap();
    assert!(matches!(
        d.step(Ctx::new(150, "relay"), &publish(b"a")),
        Err(DeliveryError::OffSchedule { attempt: 2, .. })
    ));
    assert!(matches!(
        d.step(Ctx::new(450, "relay"), &publish(b"a")),
        Err(DeliveryError::OffSchedule { .. })
    ));
    assert_eq!(
        d.step(Ctx::new(350, "relay"), &publish(b"a")).unwrap(),
        Seen::Duplicate { attempt: 2 }
    );
    assert_eq!(
        d.step(Ctx::new(950, "relay"), &publish(b"a")).unwrap(),
        Seen::Duplicate { attempt: 3 }
    );
    assert!(matches!(
        d.step(Ctx::new(1_550, "relay"), &publish(b"a")),
        Err(DeliveryError::BeyondLimit { limit: 3, .. })
    ));
}

/// RELAY-012: no retry after an acknowledgement or a dead letter; after a retryable NACK
/// the next attempt is not held to the timeout schedule.
#[test]
fn no_retry_once_settled() {
    let mut d = judged();
    d.step(Ctx::new(0, "relay"), &publish(b"a")).unwrap();
    d.step(Ctx::new(10, "consumer"), &ack(b"a")).unwrap();
    assert!(matches!(
        d.step(Ctx::new(300, "relay"), &publish(b"a")),
        Err(DeliveryError::RetryAfterSettled { .. })
    ));
    d.step(Ctx::new(0, "relay"), &publish(b"b")).unwrap();
    d.step(Ctx::new(10, "consumer"), &nack(b"b", true, "busy"))
        .unwrap();
    assert_eq!(
        d.step(Ctx::new(20, "relay"), &publish(b"b")).unwrap(),
        Seen::Duplicate { attempt: 2 }
    );
    d.step(
        Ctx::new(30, "consumer"),
        &nack(b"b", false, codes::CONSUMER_REJECTED),
    )
    .unwrap();
    assert!(matches!(
        d.step(Ctx::new(630, "relay"), &publish(b"b")),
        Err(DeliveryError::RetryAfterSettled { .. })
    ));
}

/// Bounded memory: settled or expired deliveries are forgotten first; with only pending
/// ones, a new delivery is refused with ERR_RATE_LIMIT_EXCEEDED.
#[test]
fn bounded() {
    let mut d = Deliveries::new(Config {
        max_deliveries: 2,
        dedupe_window_ms: 100,
        ..Config::default()
    });
    d.step(Ctx::new(0, "p"), &publish(b"a")).unwrap();
    d.step(Ctx::new(0, "p"), &publish(b"b")).unwrap();
    let e = d.step(Ctx::new(1, "p"), &publish(b"c")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::RateLimitExceeded);
    d.step(Ctx::new(2, "c"), &ack(b"a")).unwrap();
    assert_eq!(
        d.step(Ctx::new(3, "p"), &publish(b"c")).unwrap(),
        Seen::Published
    );
    assert_eq!(d.len(), 2);
    // Past the window, pending entries go too.
    assert_eq!(
        d.step(Ctx::new(200, "p"), &publish(b"d")).unwrap(),
        Seen::Published
    );
    assert_eq!(d.len(), 2);
}

/// RELAY-001, P1-022: every class round-trips in both P1 forms, the wrapper is the bare
/// message as field `msg_type`, and arbitrary octets never panic the decoder and are
/// refused as unsupported exactly for unassigned msg_types.
#[test]
fn every_class_round_trips_in_both_forms() {
    use swp_profiles::p1::pb::relay::{RelayErr, RelayStatus};
    let all = [
        publish(b"d-1"),
        ack(b"d-1"),
        nack(b"d-1", false, codes::RETRY_EXHAUSTED),
        RelayMessage::Status(RelayStatus {
            delivery_id: Bytes::from_static(b"d-1"),
            state: "pending".into(),
            attempt_count: 2,
        }),
        RelayMessage::Err(RelayErr {
            code: codes::INVALID_MESSAGE.into(),
            message: "m".into(),
        }),
    ];
    for m in &all {
        let bare = relay::encode(swp_profiles::P1Form::Message, m);
        let wrapped = relay::encode(swp_profiles::P1Form::Wrapper, m);
        assert_eq!(
            wrapped,
            swp_profiles::P1Form::Wrapper.frame(m.msg_type(), bare.clone())
        );
        for form in FORMS {
            let octets = relay::encode(form, m);
            assert_eq!(&relay::decode(form, m.msg_type(), &octets).unwrap(), m);
        }
    }
    let mut x: u32 = 7;
    for len in 0..64usize {
        let octets: Vec<u8> = (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 16) as u8
            })
            .collect();
        for form in FORMS {
            for t in 0..8u64 {
                if let Err(e) = relay::decode(form, t, &octets) {
                    assert_eq!(
                        e.code() == ErrorCode::UnsupportedMsgType,
                        !(1..=5).contains(&t)
                    );
                }
            }
        }
    }
}
