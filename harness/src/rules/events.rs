//! SWP-EVENTS (profile 13, swp-events.md): the event record's required fields (§4), the
//! documented severity enumeration (§6), event_id uniqueness per producer (§5), and what a
//! side that forwards the peer's events back (an echo stream) owes them: their correlation
//! keys (§5) and their order (§5, §6 for batches).
//!
//! The producer scope is the sending side (docs/spec-issues-profiles.md: the peer identity).
//! An event a side sends with the event_id, event_type and body of an event the other side
//! published is a forward of that event.

use super::common::{digest, show, trackable, Digest, PerSide, Table};
use super::config::{Ctx, EDGE_SLACK_MS};
use super::verdict::{decode, Level, Rule, Violation};
use crate::p1::pb::types::events::{
    EventRecord, EvtBatch, EvtErr, EvtPublish, EvtSubscribe, EvtUnsubscribe,
};

/// The profile_id of SWP-EVENTS.
pub(super) const PROFILE_ID: u64 = 13;

const MSG_TYPE: Rule = Rule {
    name: "events.msg-type-assigned",
    profile: "EVENTS",
    requirement: "EVENTS-019",
    level: Level::Must,
    section: "§3, §8",
    checks: "msg_type is 1 PUBLISH, 2 SUBSCRIBE, 3 UNSUBSCRIBE, 4 BATCH or 5 ERR",
};
const PUBLISH_HAS_EVENT: Rule = Rule {
    name: "events.publish-has-event",
    profile: "EVENTS",
    requirement: "EVENTS-016",
    level: Level::Must,
    section: "§4, §8",
    checks: "EVT_PUBLISH carries its event record",
};
const EVENT_ID: Rule = Rule {
    name: "events.event-id",
    profile: "EVENTS",
    requirement: "EVENTS-002",
    level: Level::Must,
    section: "§4",
    checks: "every published or batched event carries a non-empty event_id",
};
const EVENT_TYPE: Rule = Rule {
    name: "events.event-type",
    profile: "EVENTS",
    requirement: "EVENTS-003",
    level: Level::Must,
    section: "§4",
    checks: "every event carries a non-empty event_type",
};
const SEVERITY: Rule = Rule {
    name: "events.severity",
    profile: "EVENTS",
    requirement: "EVENTS-004",
    level: Level::Must,
    section: "§4",
    checks: "every event carries a non-empty severity",
};
const TIMESTAMP: Rule = Rule {
    name: "events.timestamp",
    profile: "EVENTS",
    requirement: "EVENTS-005",
    level: Level::Must,
    section: "§4 (SI: 0 is absent)",
    checks: "every event carries a non-zero ts_unix_ms",
};
const CORRELATION: Rule = Rule {
    name: "events.correlation-key",
    profile: "EVENTS",
    requirement: "EVENTS-006",
    level: Level::Must,
    section: "§4",
    checks: "every event carries at least one of msg_id, task_id, rpc_id",
};
const BODY: Rule = Rule {
    name: "events.body",
    profile: "EVENTS",
    requirement: "EVENTS-007",
    level: Level::Must,
    section: "§4 (SI: body)",
    checks: "every event carries a non-empty body",
};
const SEVERITY_ENUM: Rule = Rule {
    name: "events.severity-enumerated",
    profile: "EVENTS",
    requirement: "EVENTS-012",
    level: Level::Must,
    section: "§6",
    checks: "severity is one of the declared EVENTS_SEVERITIES (undeclared: not judged)",
};
const EVENT_ID_UNIQUE: Rule = Rule {
    name: "events.event-id-unique",
    profile: "EVENTS",
    requirement: "EVENTS-010",
    level: Level::Must,
    section: "§5 (SI: re-delivery, retention)",
    checks:
        "a producer never reuses an event_id for another event (an identical re-delivery is fine)",
};
const CORRELATION_PRESERVED: Rule = Rule {
    name: "events.correlation-preserved",
    profile: "EVENTS",
    requirement: "EVENTS-011",
    level: Level::Must,
    section: "§5",
    checks: "a forwarded event keeps every correlation key the original carried",
};
const FORWARD_ORDER: Rule = Rule {
    name: "events.forward-order",
    profile: "EVENTS",
    requirement: "EVENTS-009",
    level: Level::Must,
    section: "§5, §6 (SI: stream order)",
    checks: "forwarded events keep the order in which the peer published them (skips allowed)",
};

/// Every SWP-EVENTS rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &PUBLISH_HAS_EVENT,
    &EVENT_ID,
    &EVENT_TYPE,
    &SEVERITY,
    &TIMESTAMP,
    &CORRELATION,
    &BODY,
    &SEVERITY_ENUM,
    &EVENT_ID_UNIQUE,
    &CORRELATION_PRESERVED,
    &FORWARD_ORDER,
];

/// A decoded SWP-EVENTS message whose own fields hold: the events it carries, in order.
pub(super) struct Msg {
    events: Vec<EventRecord>,
}

/// Decodes by msg_type and checks every carried record's required fields (§4).
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    let events = match msg_type {
        1 => {
            let m: EvtPublish = decode(bare, "events.EvtPublish")?;
            vec![m
                .event
                .ok_or_else(|| PUBLISH_HAS_EVENT.violation("EVT_PUBLISH without event"))?]
        }
        2 => {
            let _: EvtSubscribe = decode(bare, "events.EvtSubscribe")?;
            Vec::new()
        }
        3 => {
            let _: EvtUnsubscribe = decode(bare, "events.EvtUnsubscribe")?;
            Vec::new()
        }
        4 => decode::<EvtBatch>(bare, "events.EvtBatch")?.events,
        5 => {
            let _: EvtErr = decode(bare, "events.EvtErr")?;
            Vec::new()
        }
        t => return Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-EVENTS"))),
    };
    for e in &events {
        check_record(e)?;
    }
    Ok(Msg { events })
}

fn check_record(e: &EventRecord) -> Result<(), Violation> {
    if e.event_id.is_empty() {
        return Err(EVENT_ID.violation("event without event_id"));
    }
    let id = show(e.event_id.as_bytes());
    if e.event_type.is_empty() {
        return Err(EVENT_TYPE.violation(format!("event {id} without event_type")));
    }
    if e.severity.is_empty() {
        return Err(SEVERITY.violation(format!("event {id} without severity")));
    }
    if e.ts_unix_ms == 0 {
        return Err(TIMESTAMP.violation(format!("event {id} without ts_unix_ms")));
    }
    if e.msg_id.is_empty() && e.task_id.is_empty() && e.rpc_id.is_empty() {
        return Err(CORRELATION.violation(format!(
            "event {id} carries none of msg_id, task_id, rpc_id"
        )));
    }
    if e.body.is_empty() {
        return Err(BODY.violation(format!("event {id} with an empty body")));
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Produced {
    /// Every field, to tell a re-delivery from a reuse.
    content: Digest,
    /// event_type and body, to recognise a forward of the event.
    ident: Digest,
    keys: [Option<Digest>; 3],
    at_ms: u64,
    /// Position among the producer's events.
    index: u64,
}

/// The event ids each producer used, and each forwarder's position in the peer's stream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    produced: PerSide<Table<String, Produced>>,
    published: PerSide<u64>,
    last_forwarded: PerSide<Option<u64>>,
}

fn key_digest(k: &[u8]) -> Option<Digest> {
    (!k.is_empty()).then(|| digest(&[k]))
}

fn produced(e: &EventRecord, at_ms: u64) -> Produced {
    let ts = e.ts_unix_ms.to_le_bytes();
    Produced {
        content: digest(&[
            e.event_id.as_bytes(),
            e.event_type.as_bytes(),
            e.severity.as_bytes(),
            &ts,
            &e.msg_id,
            &e.task_id,
            &e.rpc_id,
            &e.body,
        ]),
        ident: digest(&[e.event_type.as_bytes(), &e.body]),
        keys: [
            key_digest(&e.msg_id),
            key_digest(&e.task_id),
            key_digest(&e.rpc_id),
        ],
        at_ms,
        index: 0,
    }
}

/// Where an earlier use of an event_id stands against the retention.
enum Age {
    Live,
    Edge,
    Expired,
}

fn age(ctx: &Ctx, at_ms: u64) -> Age {
    let Some(retention) = ctx.config.events_id_retention_ms else {
        // Undeclared: remembered for the whole connection.
        return Age::Live;
    };
    let age = ctx.now_ms.saturating_sub(at_ms);
    if age >= retention.saturating_add(EDGE_SLACK_MS) {
        Age::Expired
    } else if age.saturating_add(EDGE_SLACK_MS) > retention {
        Age::Edge
    } else {
        Age::Live
    }
}

impl State {
    /// Judges every event of `msg` from `ctx.side` in order, then records them all: a batch
    /// is all or nothing (docs/spec-issues-profiles.md).
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        let side = ctx.side;
        if let Some(allowed) = &ctx.config.events_severities {
            if let Some(e) = msg.events.iter().find(|e| !allowed.contains(&e.severity)) {
                return Err(SEVERITY_ENUM.violation(format!(
                    "event {} has severity {}, not one of the declared {}",
                    show(e.event_id.as_bytes()),
                    show(e.severity.as_bytes()),
                    allowed.join(", ")
                )));
            }
        }
        let mut fresh: Vec<(String, Produced)> = Vec::new();
        let mut last_fwd = *self.last_forwarded.get(side);
        let mut counter = *self.published.get(side);
        for e in &msg.events {
            if !trackable(e.event_id.as_bytes()) {
                continue;
            }
            let mut p = produced(e, ctx.now_ms);
            if let Some(orig) = self.produced.get(side.other()).get(&e.event_id) {
                if orig.ident == p.ident {
                    let names = ["msg_id", "task_id", "rpc_id"];
                    for ((o, c), name) in orig.keys.iter().zip(&p.keys).zip(names) {
                        if o.is_some() && o != c {
                            return Err(CORRELATION_PRESERVED.violation(format!(
                                "forwarded event {} lost or changed its {name}",
                                show(e.event_id.as_bytes())
                            )));
                        }
                    }
                    if last_fwd.is_some_and(|l| orig.index < l) {
                        return Err(FORWARD_ORDER.violation(format!(
                            "forwarded event {} comes after a later event of the same stream",
                            show(e.event_id.as_bytes())
                        )));
                    }
                    last_fwd = Some(last_fwd.map_or(orig.index, |l| l.max(orig.index)));
                }
            }
            let earlier = fresh
                .iter()
                .rev()
                .find(|(id, _)| *id == e.event_id)
                .map(|(_, p)| p)
                .or_else(|| self.produced.get(side).get(&e.event_id));
            let record = match earlier {
                None => true,
                Some(prev) => match age(ctx, prev.at_ms) {
                    Age::Expired => true,
                    Age::Edge => false,
                    Age::Live if prev.content == p.content => false,
                    Age::Live => {
                        return Err(EVENT_ID_UNIQUE.violation(format!(
                            "event_id {} reused for another event",
                            show(e.event_id.as_bytes())
                        )))
                    }
                },
            };
            if record {
                counter = counter.saturating_add(1);
                p.index = counter;
                fresh.push((e.event_id.clone(), p));
            }
        }
        let table = self.produced.get_mut(side);
        for (id, p) in fresh {
            if table.is_full() && !table.contains(&id) {
                // Make room from ids past their retention before giving up on the new one.
                table.retain(|_, q| !matches!(age(ctx, q.at_ms), Age::Expired));
            }
            table.insert(id, p);
        }
        *self.published.get_mut(side) = counter;
        *self.last_forwarded.get_mut(side) = last_fwd;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::{Config, Side::*};
    use super::*;
    use proptest::prelude::*;

    fn ev(id: &str, body: &str) -> EventRecord {
        EventRecord {
            event_id: id.into(),
            event_type: "t".into(),
            severity: "info".into(),
            ts_unix_ms: 1,
            msg_id: b"m".to_vec().into(),
            task_id: Default::default(),
            rpc_id: Default::default(),
            body: body.as_bytes().to_vec().into(),
        }
    }
    fn publish(e: EventRecord) -> EvtPublish {
        EvtPublish { event: Some(e) }
    }
    fn batch(events: Vec<EventRecord>) -> EvtBatch {
        EvtBatch { events }
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Endpoint,
            6,
            &publish(ev("e", "b")),
            "events.msg-type-assigned",
        );
        r.ok(Endpoint, 1, &publish(ev("e", "b")));
    }

    #[test]
    fn records_carry_the_required_fields() {
        let mut r = Run::new(PROFILE_ID);
        r.err(
            Endpoint,
            1,
            &EvtPublish { event: None },
            "events.publish-has-event",
        );
        type Spoil = fn(&mut EventRecord);
        let cases: [(Spoil, &str); 6] = [
            (|e| e.event_id.clear(), "events.event-id"),
            (|e| e.event_type.clear(), "events.event-type"),
            (|e| e.severity.clear(), "events.severity"),
            (|e| e.ts_unix_ms = 0, "events.timestamp"),
            (|e| e.msg_id = Default::default(), "events.correlation-key"),
            (|e| e.body = Default::default(), "events.body"),
        ];
        for (spoil, rule) in cases {
            let mut e = ev("e", "b");
            spoil(&mut e);
            r.err(Endpoint, 1, &publish(e.clone()), rule);
            r.err(Endpoint, 4, &batch(vec![ev("f", "b"), e]), rule);
        }
        let mut e = ev("e", "b");
        e.msg_id = Default::default();
        e.rpc_id = b"r".to_vec().into();
        r.ok(Endpoint, 1, &publish(e));
        r.ok(Endpoint, 4, &batch(vec![]));
        r.ok(Endpoint, 2, &EvtSubscribe::default());
        r.ok(Endpoint, 3, &EvtUnsubscribe::default());
        r.ok(Endpoint, 5, &EvtErr::default());
    }

    #[test]
    fn severity_is_judged_against_the_declared_enumeration_only() {
        let mut e = ev("e", "b");
        e.severity = "loud".into();
        Run::new(PROFILE_ID).ok(Endpoint, 1, &publish(e.clone()));
        let mut r = Run::with(
            PROFILE_ID,
            Config {
                events_severities: Some(vec!["info".into()]),
                ..Config::default()
            },
        );
        r.err(
            Endpoint,
            1,
            &publish(e.clone()),
            "events.severity-enumerated",
        );
        r.err(
            Harness,
            4,
            &batch(vec![ev("a", "b"), e]),
            "events.severity-enumerated",
        );
        r.ok(Endpoint, 1, &publish(ev("e", "b")));
    }

    #[test]
    fn an_event_id_names_one_event_per_producer() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Endpoint, 1, &publish(ev("e", "b")));
        r.ok(Endpoint, 1, &publish(ev("e", "b")));
        r.err(
            Endpoint,
            1,
            &publish(ev("e", "other")),
            "events.event-id-unique",
        );
        r.err(
            Endpoint,
            4,
            &batch(vec![ev("x", "1"), ev("x", "2")]),
            "events.event-id-unique",
        );
        // The batch was refused as a whole: x is still free.
        r.ok(Endpoint, 1, &publish(ev("x", "2")));
        // Another producer has its own scope.
        r.ok(Harness, 1, &publish(ev("e", "other")));
    }

    #[test]
    fn past_the_declared_retention_an_event_id_is_free_again() {
        let mut r = Run::with(
            PROFILE_ID,
            Config {
                events_id_retention_ms: Some(5_000),
                ..Config::default()
            },
        );
        r.ok(Endpoint, 1, &publish(ev("e", "b")));
        r.at(3_000).err(
            Endpoint,
            1,
            &publish(ev("e", "c")),
            "events.event-id-unique",
        );
        r.at(5_500).ok(Endpoint, 1, &publish(ev("e", "c")));
        r.at(6_001).ok(Endpoint, 1, &publish(ev("e", "c")));
        r.at(7_000).err(
            Endpoint,
            1,
            &publish(ev("e", "d")),
            "events.event-id-unique",
        );
    }

    #[test]
    fn a_forward_keeps_the_correlation_keys() {
        let mut r = Run::new(PROFILE_ID);
        let mut orig = ev("e", "b");
        orig.task_id = b"t".to_vec().into();
        r.ok(Harness, 1, &publish(orig.clone()));
        let mut lost = orig.clone();
        lost.task_id = Default::default();
        r.err(Endpoint, 1, &publish(lost), "events.correlation-preserved");
        let mut changed = orig.clone();
        changed.msg_id = b"other".to_vec().into();
        r.err(
            Endpoint,
            1,
            &publish(changed),
            "events.correlation-preserved",
        );
        let mut added = orig.clone();
        added.rpc_id = b"r".to_vec().into();
        r.ok(Endpoint, 1, &publish(added));
    }

    #[test]
    fn forwards_keep_the_publication_order() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &publish(ev("1", "a")));
        r.ok(Harness, 4, &batch(vec![ev("2", "b"), ev("3", "c")]));
        r.ok(Harness, 1, &publish(ev("4", "d")));
        r.ok(Endpoint, 1, &publish(ev("1", "a")));
        r.ok(Endpoint, 1, &publish(ev("3", "c")));
        r.err(Endpoint, 1, &publish(ev("2", "b")), "events.forward-order");
        r.err(
            Endpoint,
            4,
            &batch(vec![ev("4", "d"), ev("3", "c")]),
            "events.forward-order",
        );
        r.ok(Endpoint, 4, &batch(vec![ev("3", "c"), ev("4", "d")]));
        // The endpoint's own events with other content are not forwards.
        r.ok(Endpoint, 1, &publish(ev("2", "own")));
    }

    fn step() -> impl Strategy<Value = Step> {
        let rec = (
            prop::sample::select(vec!["a", "b", "c", ""]),
            prop::sample::select(vec!["x", "y", ""]),
            prop::sample::select(vec!["info", "loud"]),
            any::<bool>(),
        )
            .prop_map(|(i, b, s, k)| {
                let mut e = ev(i, b);
                e.severity = s.into();
                if k {
                    e.task_id = b"t".to_vec().into();
                }
                e
            });
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            rec.clone().prop_map(|e| (1u64, enc(&publish(e)))),
            prop::collection::vec(rec, 0..4).prop_map(|es| (4u64, enc(&batch(es)))),
            Just((2u64, enc(&EvtSubscribe::default()))),
            (0u64..7, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..30_000, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
    }

    fn sorted(mut steps: Vec<Step>) -> Vec<Step> {
        steps.sort_by_key(|s| s.0);
        steps
    }

    proptest! {
        #[test]
        fn sequences_keep_the_state_on_refusal(steps in prop::collection::vec(step(), 0..40).prop_map(sorted)) {
            sequence_property(PROFILE_ID, &Config::default(), &steps);
            sequence_property(PROFILE_ID, &full_config(), &steps);
        }
    }
}
