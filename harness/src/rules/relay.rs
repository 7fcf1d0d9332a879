//! SWP-RELAY (profile 19, swp-relay.md): delivery ids (§4), acknowledgements naming a real
//! delivery (SI-P19-6), dedupe within the window (§4, SI-P19-5), the retry policy's limits
//! and timing (§4, §6; SI-P19-3, -4) and dead-letter reasons (§4, SI-P19-1).
//!
//! Deliveries are keyed by (publisher side, delivery_id) (SI-P19-5). A `RELAY_PUBLISH` that
//! names a delivery_id the other side published is the relay delivering it back (the loop
//! topology of SI-P19-7): an attempt of that delivery. An ACK or NACK from the publisher of a
//! delivery that came back is the consumer's; one from the other side is the relay's answer
//! to its publisher. The retry schedule, dedupe window and reason set are the SUT's, so they
//! judge the endpoint acting as relay only.

use super::common::{show, trackable, Table};
use super::config::{Config, Ctx};
use super::verdict::{decode, Level, Rule, Side, Violation};
use crate::p1::pb::types::relay::{RelayAck, RelayErr, RelayNack, RelayPublish, RelayStatus};

/// The profile_id of SWP-RELAY.
pub(super) const PROFILE_ID: u64 = 19;

const MSG_TYPE: Rule = Rule {
    name: "relay.msg-type-assigned",
    profile: "RELAY",
    requirement: "RELAY-013",
    level: Level::Must,
    section: "§3, §6",
    checks: "msg_type is 1 PUBLISH, 2 ACK, 3 NACK, 4 STATUS or 5 ERR",
};
const PUBLISH_DELIVERY_ID: Rule = Rule {
    name: "relay.publish-delivery-id",
    profile: "RELAY",
    requirement: "RELAY-009",
    level: Level::Must,
    section: "§4, §6 (SI-P19-6)",
    checks: "every RELAY_PUBLISH carries a non-empty delivery_id",
};
const NAMES_DELIVERY: Rule = Rule {
    name: "relay.ack-names-delivery",
    profile: "RELAY",
    requirement: "RELAY-004",
    level: Level::Must,
    section: "§4 (SI-P19-6)",
    checks: "RELAY_ACK and RELAY_NACK name a delivery_id the other side published or delivered",
};
const DEAD_LETTER_REASON: Rule = Rule {
    name: "relay.dead-letter-reason",
    profile: "RELAY",
    requirement: "RELAY-008",
    level: Level::Must,
    section: "§4 (SI-P19-1)",
    checks: "the SUT's dead letter (non-retryable NACK to the publisher) has a reason from RELAY_DEAD_LETTER_REASONS",
};
const DUPLICATE_NOT_REDELIVERED: Rule = Rule {
    name: "relay.duplicate-not-redelivered",
    profile: "RELAY",
    requirement: "RELAY-005",
    level: Level::Must,
    section: "§4 (SI-P19-5)",
    checks: "a delivery_id published again within the dedupe window is not delivered again after its ack",
};
const NO_RETRY_AFTER_ACK: Rule = Rule {
    name: "relay.no-retry-after-ack",
    profile: "RELAY",
    requirement: "RELAY-012",
    level: Level::Must,
    section: "§4, §6",
    checks: "a delivery the consumer acknowledged is not attempted again (tolerance for a crossing retry)",
};
const NO_DELIVERY_AFTER_FINAL_NACK: Rule = Rule {
    name: "relay.no-delivery-after-final-nack",
    profile: "RELAY",
    requirement: "RELAY-012",
    level: Level::Must,
    section: "§5, §6 (SI-P19-4)",
    checks: "a non-retryable NACK from the consumer ends the delivery",
};
const NO_DELIVERY_AFTER_DEAD_LETTER: Rule = Rule {
    name: "relay.no-delivery-after-dead-letter",
    profile: "RELAY",
    requirement: "RELAY-012",
    level: Level::Must,
    section: "§4, §6 (SI-P19-1)",
    checks: "a dead-lettered delivery is not attempted again",
};
const ATTEMPT_LIMIT: Rule = Rule {
    name: "relay.attempt-limit",
    profile: "RELAY",
    requirement: "RELAY-012",
    level: Level::Must,
    section: "§4, §6 (SI-P19-3)",
    checks: "the SUT makes at most its declared number of delivery attempts",
};
const RETRY_TIMING: Rule = Rule {
    name: "relay.retry-timing",
    profile: "RELAY",
    requirement: "RELAY-012",
    level: Level::Must,
    section: "§4, §6 (SI-P19-3, -4)",
    checks: "the SUT's retry k+1 comes its declared delay after attempt k, within RELAY_RETRY_TOLERANCE_MS (not after a NACK)",
};
const DEAD_LETTER_TIMING: Rule = Rule {
    name: "relay.dead-letter-timing",
    profile: "RELAY",
    requirement: "RELAY-012",
    level: Level::Must,
    section: "§4, §6 (SI-P19-3)",
    checks: "after its last timed-out attempt, the SUT's dead letter comes RELAY_DEAD_LETTER_AFTER_MS later",
};

/// Every SWP-RELAY rule.
pub(super) const RULES: &[&Rule] = &[
    &MSG_TYPE,
    &PUBLISH_DELIVERY_ID,
    &NAMES_DELIVERY,
    &DEAD_LETTER_REASON,
    &DUPLICATE_NOT_REDELIVERED,
    &NO_RETRY_AFTER_ACK,
    &NO_DELIVERY_AFTER_FINAL_NACK,
    &NO_DELIVERY_AFTER_DEAD_LETTER,
    &ATTEMPT_LIMIT,
    &RETRY_TIMING,
    &DEAD_LETTER_TIMING,
];

/// A decoded SWP-RELAY message whose own fields hold.
pub(super) enum Msg {
    Publish(RelayPublish),
    Ack(RelayAck),
    Nack(RelayNack),
    Other,
}

/// Decodes by msg_type and checks the class's required fields (§4).
pub(super) fn check(msg_type: u64, bare: &[u8]) -> Result<Msg, Violation> {
    match msg_type {
        1 => {
            let m: RelayPublish = decode(bare, "relay.RelayPublish")?;
            if m.delivery_id.is_empty() {
                return Err(PUBLISH_DELIVERY_ID.violation("RELAY_PUBLISH without delivery_id"));
            }
            Ok(Msg::Publish(m))
        }
        2 => Ok(Msg::Ack(decode(bare, "relay.RelayAck")?)),
        3 => Ok(Msg::Nack(decode(bare, "relay.RelayNack")?)),
        4 => {
            let _: RelayStatus = decode(bare, "relay.RelayStatus")?;
            Ok(Msg::Other)
        }
        5 => {
            let _: RelayErr = decode(bare, "relay.RelayErr")?;
            Ok(Msg::Other)
        }
        t => Err(MSG_TYPE.violation(format!("msg_type {t} is not assigned in SWP-RELAY"))),
    }
}

/// One published delivery and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Delivery {
    /// When the dedupe window of this delivery_id started.
    first_ms: u64,
    /// Attempts the relay made (deliveries back to the publisher's side).
    attempts: u64,
    last_attempt_ms: u64,
    /// No NACK followed the last attempt, so the next one is timed.
    timed_next: bool,
    acked_ms: Option<u64>,
    republished_since_ack: bool,
    final_nack_ms: Option<u64>,
    dead_lettered: bool,
    /// A re-publish whose dedupe status is unknown: the relay may have started afresh.
    unjudged: bool,
    /// A delivery of this delivery_id was attempted before the publisher started this one
    /// afresh (past the dedupe window): a late ACK or NACK of that attempt may still come.
    attempted_before: bool,
}

impl Delivery {
    fn new(now: u64) -> Delivery {
        Delivery {
            first_ms: now,
            attempts: 0,
            last_attempt_ms: now,
            timed_next: true,
            acked_ms: None,
            republished_since_ack: false,
            final_nack_ms: None,
            dead_lettered: false,
            unjudged: false,
            attempted_before: false,
        }
    }
}

/// The wait after attempt `k` (1-based) before attempt `k + 1`.
fn delay(cfg: &Config, k: u64) -> Option<u64> {
    let listed = cfg.relay_retry_delays_ms.as_ref().and_then(|l| {
        let i = usize::try_from(k.checked_sub(1)?).ok()?;
        l.get(i).copied()
    });
    listed.or(cfg.relay_retry_backoff_ms)
}

/// The declared number of attempts (the first one counted).
fn max_attempts(cfg: &Config) -> Option<u64> {
    cfg.relay_max_attempts.or_else(|| {
        cfg.relay_retry_delays_ms
            .as_ref()
            .map(|l| (l.len() as u64).saturating_add(1))
    })
}

/// Whether `now` is within `tol` of `expected`.
fn on_time(now: u64, expected: u64, tol: u64) -> bool {
    now.abs_diff(expected) <= tol
}

/// The deliveries of one connection, keyed by (publisher side, delivery_id).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct State {
    pubs: Table<(Side, Vec<u8>), Delivery>,
}

impl State {
    /// Judges `msg` from `ctx.side`, then records it.
    pub(super) fn observe(&mut self, ctx: &Ctx, msg: Msg) -> Result<(), Violation> {
        match msg {
            Msg::Publish(p) => self.publish(ctx, p),
            Msg::Ack(a) => self.answer(ctx, &a.delivery_id, None),
            Msg::Nack(n) => self.answer(ctx, &n.delivery_id, Some((n.retryable, n.reason_code))),
            Msg::Other => Ok(()),
        }
    }

    fn publish(&mut self, ctx: &Ctx, p: RelayPublish) -> Result<(), Violation> {
        let (side, now, cfg) = (ctx.side, ctx.now_ms, ctx.config);
        if !trackable(&p.delivery_id) {
            return Ok(());
        }
        let id = show(&p.delivery_id);
        let tol = cfg.relay_retry_tolerance_ms;
        let relayed = (side.other(), p.delivery_id.to_vec());
        if let Some(rec) = self.pubs.get(&relayed) {
            // `side` delivers back a delivery the other side published: an attempt.
            let n = rec.attempts.saturating_add(1);
            if !rec.unjudged {
                if rec.dead_lettered {
                    return Err(NO_DELIVERY_AFTER_DEAD_LETTER.violation(format!(
                        "delivery {id} attempted again after its dead letter"
                    )));
                }
                if rec
                    .final_nack_ms
                    .is_some_and(|t| now > t.saturating_add(tol))
                {
                    return Err(NO_DELIVERY_AFTER_FINAL_NACK.violation(format!(
                        "delivery {id} attempted again after a non-retryable NACK"
                    )));
                }
                if rec.acked_ms.is_some_and(|t| now > t.saturating_add(tol)) {
                    return Err(if rec.republished_since_ack {
                        DUPLICATE_NOT_REDELIVERED.violation(format!(
                            "duplicate publish of {id} within the dedupe window delivered again"
                        ))
                    } else {
                        NO_RETRY_AFTER_ACK.violation(format!(
                            "delivery {id} attempted again after the consumer acknowledged it"
                        ))
                    });
                }
                if side == Side::Endpoint {
                    if let Some(max) = max_attempts(cfg).filter(|m| n > *m) {
                        return Err(ATTEMPT_LIMIT.violation(format!(
                            "attempt {n} of delivery {id}; the declared limit is {max}"
                        )));
                    }
                    if n >= 2 && rec.timed_next {
                        if let Some(d) = delay(cfg, n - 1) {
                            let expected = rec.last_attempt_ms.saturating_add(d);
                            if !on_time(now, expected, tol) {
                                return Err(RETRY_TIMING.violation(format!(
                                    "attempt {n} of delivery {id} at {now} ms; declared at {expected} ms (±{tol})"
                                )));
                            }
                        }
                    }
                }
            }
            if let Some(rec) = self.pubs.get_mut(&relayed) {
                rec.attempts = n;
                rec.last_attempt_ms = now;
                rec.timed_next = true;
            }
            return Ok(());
        }
        let own = (side, p.delivery_id.to_vec());
        match self.pubs.get_mut(&own) {
            None => self.pubs.insert(own, Delivery::new(now)),
            Some(rec) => {
                // A publisher's repeat: within the relay's window it is a duplicate.
                let window = match side {
                    Side::Harness => cfg.relay_dedupe_window_ms,
                    Side::Endpoint => None,
                };
                match window {
                    Some(w) => {
                        let age = now.saturating_sub(rec.first_ms);
                        if age >= w.saturating_add(tol) {
                            let attempted = rec.attempts > 0 || rec.attempted_before;
                            *rec = Delivery::new(now);
                            rec.attempted_before = attempted;
                        } else if age.saturating_add(tol) > w {
                            rec.unjudged = true;
                        } else if rec.acked_ms.is_some() {
                            rec.republished_since_ack = true;
                        }
                    }
                    None => rec.unjudged = true,
                }
            }
        }
        Ok(())
    }

    /// An ACK (`nack` None) or NACK (`Some((retryable, reason))`) from `ctx.side`.
    fn answer(
        &mut self,
        ctx: &Ctx,
        delivery_id: &[u8],
        nack: Option<(bool, String)>,
    ) -> Result<(), Violation> {
        let (side, now, cfg) = (ctx.side, ctx.now_ms, ctx.config);
        if !trackable(delivery_id) {
            return Ok(());
        }
        let id = show(delivery_id);
        let mine = (side, delivery_id.to_vec());
        let theirs = (side.other(), delivery_id.to_vec());
        if self.pubs.get(&mine).is_some_and(|r| r.attempts > 0) {
            // The consumer answers a delivery of its own publish.
            if let Some(rec) = self.pubs.get_mut(&mine) {
                match nack {
                    None => {
                        rec.acked_ms.get_or_insert(now);
                    }
                    // SI-P19-4: after a retryable NACK the next attempt is not timed.
                    Some((true, _)) => rec.timed_next = false,
                    Some((false, _)) => {
                        rec.final_nack_ms.get_or_insert(now);
                    }
                }
            }
            return Ok(());
        }
        if self
            .pubs
            .get(&mine)
            .is_some_and(|r| r.attempts == 0 && r.attempted_before)
        {
            // The consumer answers an attempt of the delivery before the publisher started
            // this one afresh: it crossed the re-publish, and tells nothing about this one.
            return Ok(());
        }
        let Some(rec) = self.pubs.get(&theirs) else {
            if self.pubs.overflowed() {
                return Ok(());
            }
            let what = if nack.is_some() {
                "RELAY_NACK"
            } else {
                "RELAY_ACK"
            };
            return Err(NAMES_DELIVERY.violation(format!(
                "{what} for {id}, which the other side neither published nor delivered"
            )));
        };
        // The relay answers its publisher: a non-retryable NACK is the dead letter (SI-P19-1).
        let Some((false, reason)) = nack else {
            return Ok(());
        };
        if side == Side::Endpoint {
            if let Some(set) = &cfg.relay_dead_letter_reasons {
                if !set.contains(&reason) {
                    return Err(DEAD_LETTER_REASON.violation(format!(
                        "dead letter of {id} with reason {}, not one of {}",
                        show(reason.as_bytes()),
                        set.join(", ")
                    )));
                }
            }
            let exhausted = max_attempts(cfg).is_some_and(|m| rec.attempts == m);
            let timed = !rec.unjudged
                && rec.timed_next
                && rec.acked_ms.is_none()
                && rec.final_nack_ms.is_none()
                && !rec.dead_lettered;
            if let (Some(after), true, true) = (cfg.relay_dead_letter_after_ms, exhausted, timed) {
                let expected = rec.last_attempt_ms.saturating_add(after);
                let tol = cfg.relay_retry_tolerance_ms;
                if !on_time(now, expected, tol) {
                    return Err(DEAD_LETTER_TIMING.violation(format!(
                        "dead letter of {id} at {now} ms; declared at {expected} ms (±{tol})"
                    )));
                }
            }
        }
        if let Some(rec) = self.pubs.get_mut(&theirs) {
            rec.dead_lettered = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{enc, full_config, sequence_property, Run, Step};
    use super::super::Side::*;
    use super::*;
    use proptest::prelude::*;

    fn publish(id: &str) -> RelayPublish {
        RelayPublish {
            delivery_id: id.as_bytes().to_vec().into(),
            topic: "loop".into(),
            payload: b"p".to_vec().into(),
            ttl_ms: 0,
        }
    }
    fn ack(id: &str) -> RelayAck {
        RelayAck {
            delivery_id: id.as_bytes().to_vec().into(),
        }
    }
    fn nack(id: &str, retryable: bool, reason: &str) -> RelayNack {
        RelayNack {
            delivery_id: id.as_bytes().to_vec().into(),
            retryable,
            reason_code: reason.into(),
        }
    }
    fn scheduled() -> Run {
        Run::with(
            PROFILE_ID,
            Config {
                relay_retry_delays_ms: Some(vec![100, 200]),
                relay_dead_letter_reasons: Some(vec!["retry_exhausted".into()]),
                relay_dead_letter_after_ms: Some(300),
                relay_dedupe_window_ms: Some(10_000),
                relay_retry_tolerance_ms: 50,
                ..Config::default()
            },
        )
    }

    #[test]
    fn msg_type_must_be_assigned() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 6, &publish("d"), "relay.msg-type-assigned");
        r.ok(Harness, 1, &publish("d"));
        r.ok(Endpoint, 4, &RelayStatus::default());
        r.ok(Endpoint, 5, &RelayErr::default());
    }

    #[test]
    fn a_publish_carries_a_delivery_id() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Harness, 1, &publish(""), "relay.publish-delivery-id");
        r.ok(Harness, 1, &publish("d"));
    }

    #[test]
    fn answers_name_a_delivery() {
        let mut r = Run::new(PROFILE_ID);
        r.err(Endpoint, 2, &ack("d"), "relay.ack-names-delivery");
        r.err(
            Harness,
            3,
            &nack("d", true, "x"),
            "relay.ack-names-delivery",
        );
        r.ok(Harness, 1, &publish("d"));
        // The relay acknowledges its publisher (SI-P19-2: either way passes).
        r.ok(Endpoint, 2, &ack("d"));
        // The consumer cannot acknowledge a delivery that never came back.
        r.err(Harness, 2, &ack("d"), "relay.ack-names-delivery");
        r.ok(Endpoint, 1, &publish("d"));
        r.ok(Harness, 2, &ack("d"));
    }

    #[test]
    fn dead_letters_use_the_declared_reasons() {
        let mut r = scheduled();
        r.ok(Harness, 1, &publish("d"));
        r.err(
            Endpoint,
            3,
            &nack("d", false, "gave_up"),
            "relay.dead-letter-reason",
        );
        r.ok(Endpoint, 3, &nack("d", false, "retry_exhausted"));
        // A retryable NACK to the publisher is not a dead letter.
        r.ok(Harness, 1, &publish("e"));
        r.ok(Endpoint, 3, &nack("e", true, "busy"));
        // Undeclared: any reason.
        let mut u = Run::new(PROFILE_ID);
        u.ok(Harness, 1, &publish("d"));
        u.ok(Endpoint, 3, &nack("d", false, "gave_up"));
    }

    #[test]
    fn an_acknowledged_delivery_is_not_attempted_again() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &publish("d"));
        r.at(10).ok(Endpoint, 1, &publish("d"));
        r.at(20).ok(Harness, 2, &ack("d"));
        // A retry crossing the ack is tolerated.
        r.at(200).ok(Endpoint, 1, &publish("d"));
        r.at(300)
            .err(Endpoint, 1, &publish("d"), "relay.no-retry-after-ack");
    }

    #[test]
    fn a_duplicate_within_the_window_is_not_delivered_again() {
        let mut r = scheduled();
        r.ok(Harness, 1, &publish("d"));
        r.at(10).ok(Endpoint, 1, &publish("d"));
        r.at(20).ok(Harness, 2, &ack("d"));
        r.at(1_000).ok(Harness, 1, &publish("d"));
        r.at(1_100).err(
            Endpoint,
            1,
            &publish("d"),
            "relay.duplicate-not-redelivered",
        );
        // Past the window the same id is a new delivery.
        r.at(10_100).ok(Harness, 1, &publish("d"));
        r.at(10_110).ok(Endpoint, 1, &publish("d"));
        // Undeclared window: a re-publish may start afresh, so nothing is judged.
        let mut u = Run::new(PROFILE_ID);
        u.ok(Harness, 1, &publish("d"));
        u.ok(Endpoint, 1, &publish("d"));
        u.ok(Harness, 2, &ack("d"));
        u.at(1_000).ok(Harness, 1, &publish("d"));
        u.at(1_100).ok(Endpoint, 1, &publish("d"));
    }

    #[test]
    fn an_answer_to_an_attempt_before_a_fresh_publish_is_accepted() {
        // Found by tests/rules_differential.rs: the publisher re-published past the dedupe
        // window (a fresh delivery), then acknowledged the attempt that came before it.
        let mut r = scheduled();
        r.ok(Harness, 1, &publish("d"));
        r.at(100).ok(Endpoint, 1, &publish("d"));
        r.at(10_200).ok(Harness, 1, &publish("d"));
        r.at(10_300).ok(Harness, 2, &ack("d"));
        r.at(10_310)
            .ok(Harness, 3, &nack("d", false, "consumer_rejected"));
        // It does not settle the fresh delivery: its first attempt is still to come.
        r.at(10_400).ok(Endpoint, 1, &publish("d"));
        r.at(10_410).ok(Harness, 2, &ack("d"));
        r.at(20_000)
            .err(Endpoint, 1, &publish("d"), "relay.no-retry-after-ack");
        // Without an earlier attempt, an ACK of a delivery that never came back still names
        // nothing.
        r.ok(Harness, 1, &publish("e"));
        r.at(40_100).ok(Harness, 1, &publish("e"));
        r.err(Harness, 2, &ack("e"), "relay.ack-names-delivery");
    }

    #[test]
    fn a_final_nack_ends_the_delivery() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &publish("d"));
        r.ok(Endpoint, 1, &publish("d"));
        r.ok(Harness, 3, &nack("d", false, "consumer_rejected"));
        r.at(1_000).err(
            Endpoint,
            1,
            &publish("d"),
            "relay.no-delivery-after-final-nack",
        );
        // A retryable NACK does not.
        r.ok(Harness, 1, &publish("e"));
        r.ok(Endpoint, 1, &publish("e"));
        r.ok(Harness, 3, &nack("e", true, "busy"));
        r.at(2_000).ok(Endpoint, 1, &publish("e"));
    }

    #[test]
    fn a_dead_lettered_delivery_is_not_attempted_again() {
        let mut r = Run::new(PROFILE_ID);
        r.ok(Harness, 1, &publish("d"));
        r.ok(Endpoint, 1, &publish("d"));
        r.ok(Endpoint, 3, &nack("d", false, "retry_exhausted"));
        r.at(1_000).err(
            Endpoint,
            1,
            &publish("d"),
            "relay.no-delivery-after-dead-letter",
        );
    }

    #[test]
    fn the_sut_keeps_its_attempt_limit() {
        let mut r = scheduled();
        r.ok(Harness, 1, &publish("d"));
        r.at(0).ok(Endpoint, 1, &publish("d"));
        r.at(100).ok(Endpoint, 1, &publish("d"));
        r.at(300).ok(Endpoint, 1, &publish("d"));
        r.at(600)
            .err(Endpoint, 1, &publish("d"), "relay.attempt-limit");
        let mut b = Run::with(
            PROFILE_ID,
            Config {
                relay_retry_backoff_ms: Some(100),
                relay_max_attempts: Some(2),
                ..Config::default()
            },
        );
        b.ok(Harness, 1, &publish("d"));
        b.ok(Endpoint, 1, &publish("d"));
        b.at(100).ok(Endpoint, 1, &publish("d"));
        b.at(200)
            .err(Endpoint, 1, &publish("d"), "relay.attempt-limit");
    }

    #[test]
    fn the_sut_retries_on_its_schedule() {
        let mut r = scheduled();
        r.ok(Harness, 1, &publish("d"));
        r.at(5).ok(Endpoint, 1, &publish("d"));
        r.at(40)
            .err(Endpoint, 1, &publish("d"), "relay.retry-timing");
        r.at(170)
            .err(Endpoint, 1, &publish("d"), "relay.retry-timing");
        r.at(140).ok(Endpoint, 1, &publish("d"));
        // After a retryable NACK the next attempt is not timed (SI-P19-4).
        r.at(150).ok(Harness, 3, &nack("d", true, "busy"));
        r.at(160).ok(Endpoint, 1, &publish("d"));
        // The harness relaying the endpoint's publish is not held to the SUT's schedule.
        r.ok(Endpoint, 1, &publish("h"));
        r.at(161).ok(Harness, 1, &publish("h"));
        r.at(162).ok(Harness, 1, &publish("h"));
    }

    #[test]
    fn the_dead_letter_follows_the_last_attempt_on_time() {
        let mut r = scheduled();
        r.ok(Harness, 1, &publish("d"));
        r.at(0).ok(Endpoint, 1, &publish("d"));
        r.at(100).ok(Endpoint, 1, &publish("d"));
        r.at(300).ok(Endpoint, 1, &publish("d"));
        r.at(400).err(
            Endpoint,
            3,
            &nack("d", false, "retry_exhausted"),
            "relay.dead-letter-timing",
        );
        r.at(610)
            .ok(Endpoint, 3, &nack("d", false, "retry_exhausted"));
    }

    fn step() -> impl Strategy<Value = Step> {
        let id = prop::sample::select(vec!["a", "b", ""]);
        let side = prop::sample::select(vec![Harness, Endpoint]);
        let msg = prop_oneof![
            id.clone().prop_map(|i| (1u64, enc(&publish(i)))),
            id.clone().prop_map(|i| (2u64, enc(&ack(i)))),
            (
                id,
                any::<bool>(),
                prop::sample::select(vec!["retry_exhausted", "x"])
            )
                .prop_map(|(i, r, c)| (3u64, enc(&nack(i, r, c)))),
            Just((4u64, enc(&RelayStatus::default()))),
            (0u64..7, prop::collection::vec(any::<u8>(), 0..16)),
        ];
        (0u64..20_000, side, msg).prop_map(|(t, s, (mt, b))| (t, s, mt, b))
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
