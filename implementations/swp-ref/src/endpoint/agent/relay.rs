//! The reference as an SWP-RELAY relay (profile 19) whose consumer is the publishing
//! connection itself: the harness sits on both sides of the relay, publisher and consumer,
//! and judges what the relay delivers, retries and dead-letters on its own timers.
//!
//! | topic | what the reference does with a new delivery_id |
//! |---|---|
//! | `swp.test.loop` | delivers it back on this connection as `RELAY_PUBLISH` (fresh msg_id, the publisher's delivery_id, topic, payload and ttl_ms unchanged); unacknowledged, it retries 500 ms after each attempt, 3 attempts in all, and 500 ms after the last dead-letters it |
//! | `swp.test.gated` | nothing: publishing on it is policy-gated for every peer, rejected with `ERR_SECURITY_POLICY` before any delivery is recorded |
//! | other | dead-letters it at once, reason `no_route` |
//!
//! A dead letter is a `RELAY_NACK` to the publisher: the delivery_id, `retryable: false`
//! and a reason from the library's set (`retry_exhausted`, `ttl_expired`,
//! `consumer_rejected`, `no_route`). A consumer's `RELAY_ACK` settles the delivery; a
//! retryable `RELAY_NACK` moves the next attempt to 500 ms after it (or dead-letters with
//! `retry_exhausted` when none is left); a non-retryable one dead-letters it with
//! `consumer_rejected`. The publisher gets nothing else: acceptance is silent. A delivery_id
//! published again within the 24 h dedupe window is a duplicate and is not delivered again,
//! whatever it carries. `ttl_ms` is carried, not enforced. `RELAY_STATUS` and `RELAY_ERR`
//! from the peer change nothing. A publish without a delivery_id, an unassigned msg_type,
//! and an ACK or NACK naming no delivery are rejected.

use super::{refusal, step, Action, Config, Incoming, Out, ProfileAgent, Reject};
use bytes::Bytes;
use swp_core::ErrorCode;
use swp_profiles::p1::pb::relay::{RelayNack, RelayPublish};
use swp_profiles::p1::P1Form;
use swp_profiles::relay::{self, codes, Deliveries, RelayMessage, Seen};
use swp_profiles::{Ctx, Profile};

/// The topic whose consumer is the publishing connection.
pub const LOOP_TOPIC: &str = "swp.test.loop";
/// The topic no peer may publish on.
pub const GATED_TOPIC: &str = "swp.test.gated";
/// The wait after attempt k (1-based) before attempt k + 1.
pub const RETRY_DELAYS_MS: [u64; 2] = [500, 500];
/// The wait after the last attempt before the dead letter.
pub const DEAD_LETTER_AFTER_MS: u64 = 500;
/// Loop deliveries in flight per connection; one more is refused.
pub const MAX_IN_FLIGHT: usize = 64;
/// The relay's own scope in its deliveries (a peer's scope is its identity).
const OWN: &str = "\u{0}swp-ref-relay";

#[derive(Debug)]
struct Flight {
    publish: RelayPublish,
    attempts: u32,
    due_ms: u64,
}

/// The RELAY state of one connection.
#[derive(Debug)]
pub struct Agent {
    deliveries: Deliveries,
    form: P1Form,
    flights: Vec<Flight>,
}

impl Agent {
    /// The relay with the library's 24 h dedupe window and dead-letter reasons.
    pub fn new(form: P1Form) -> Self {
        Agent {
            deliveries: Deliveries::new(relay::Config {
                reasons: relay::DEAD_LETTER_REASONS.map(String::from).to_vec(),
                ..relay::Config::default()
            }),
            form,
            flights: Vec::new(),
        }
    }

    /// Our own message: it passes our machine first, then goes out under a fresh msg_id.
    fn own(&mut self, now_ms: u64, m: &RelayMessage, outs: &mut Vec<Out>) {
        if self.deliveries.step(Ctx::new(now_ms, OWN), m).is_ok() {
            outs.push(Out::of::<Deliveries>(self.form, m, None));
        }
    }

    fn dead_letter(&mut self, now_ms: u64, delivery_id: Bytes, reason: &str, outs: &mut Vec<Out>) {
        let m = RelayMessage::Nack(RelayNack {
            delivery_id,
            retryable: false,
            reason_code: reason.into(),
        });
        self.own(now_ms, &m, outs);
    }

    fn position(&self, delivery_id: &Bytes) -> Option<usize> {
        self.flights
            .iter()
            .position(|f| f.publish.delivery_id == *delivery_id)
    }
}

impl ProfileAgent for Agent {
    type Profile = Deliveries;

    fn for_connection(_: &Config, form: P1Form) -> Self {
        Agent::new(form)
    }

    fn form(&self) -> P1Form {
        self.form
    }

    fn on_message(&mut self, m: RelayMessage, at: Incoming<'_>) -> Result<Action, Reject> {
        let now_ms = at.now_ms;
        if let RelayMessage::Publish(p) = &m {
            if p.topic == GATED_TOPIC {
                return Err(refusal(
                    ErrorCode::SecurityPolicy,
                    format!("publishing on {GATED_TOPIC} is not allowed"),
                ));
            }
            if p.topic == LOOP_TOPIC && self.flights.len() >= MAX_IN_FLIGHT {
                return Err(refusal(
                    ErrorCode::RateLimitExceeded,
                    format!("more than {MAX_IN_FLIGHT} loop deliveries in flight"),
                ));
            }
        }
        let seen = step::<Self>(&mut self.deliveries, at.ctx(), &m)?;
        let mut outs = Vec::new();
        match (&m, seen) {
            (RelayMessage::Publish(p), Seen::Published) if p.topic == LOOP_TOPIC => {
                self.own(now_ms, &m, &mut outs);
                self.flights.push(Flight {
                    publish: p.clone(),
                    attempts: 1,
                    due_ms: now_ms.saturating_add(RETRY_DELAYS_MS[0]),
                });
            }
            (RelayMessage::Publish(p), Seen::Published) => {
                self.dead_letter(now_ms, p.delivery_id.clone(), codes::NO_ROUTE, &mut outs);
            }
            (RelayMessage::Ack(a), _) => {
                if let Some(i) = self.position(&a.delivery_id) {
                    self.flights.swap_remove(i);
                }
            }
            (RelayMessage::Nack(n), Seen::Nacked) => {
                if let Some(i) = self.position(&n.delivery_id) {
                    if (self.flights[i].attempts as usize) <= RETRY_DELAYS_MS.len() {
                        let k = self.flights[i].attempts as usize - 1;
                        self.flights[i].due_ms = now_ms.saturating_add(RETRY_DELAYS_MS[k]);
                    } else {
                        let f = self.flights.swap_remove(i);
                        self.dead_letter(
                            now_ms,
                            f.publish.delivery_id,
                            codes::RETRY_EXHAUSTED,
                            &mut outs,
                        );
                    }
                }
            }
            (RelayMessage::Nack(n), Seen::DeadLettered { .. }) => {
                if let Some(i) = self.position(&n.delivery_id) {
                    let f = self.flights.swap_remove(i);
                    self.dead_letter(
                        now_ms,
                        f.publish.delivery_id,
                        codes::CONSUMER_REJECTED,
                        &mut outs,
                    );
                }
            }
            // Duplicates are not delivered again; statuses and errors change nothing.
            _ => {}
        }
        Ok(Action::from_outs(outs))
    }

    /// When [`ProfileAgent::on_timer`] should next run, if a delivery waits.
    fn next_deadline(&self) -> Option<u64> {
        self.flights.iter().map(|f| f.due_ms).min()
    }

    /// Retries and dead letters that are due, earliest first.
    fn on_timer(&mut self, now_ms: u64) -> Vec<Out> {
        let mut outs = Vec::new();
        while let Some(i) = self
            .flights
            .iter()
            .enumerate()
            .filter(|(_, f)| f.due_ms <= now_ms)
            .min_by_key(|(_, f)| f.due_ms)
            .map(|(i, _)| i)
        {
            let attempts = self.flights[i].attempts as usize;
            if attempts <= RETRY_DELAYS_MS.len() {
                let m = RelayMessage::Publish(self.flights[i].publish.clone());
                self.own(now_ms, &m, &mut outs);
                let f = &mut self.flights[i];
                f.attempts += 1;
                f.due_ms = now_ms.saturating_add(
                    RETRY_DELAYS_MS
                        .get(attempts)
                        .copied()
                        .unwrap_or(DEAD_LETTER_AFTER_MS),
                );
            } else {
                let f = self.flights.swap_remove(i);
                self.dead_letter(
                    now_ms,
                    f.publish.delivery_id,
                    codes::RETRY_EXHAUSTED,
                    &mut outs,
                );
            }
        }
        outs
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{code, outs};
    use super::*;
    use swp_profiles::p1::pb::relay::RelayAck;

    const ID: Bytes = Bytes::from_static(b"msg-000000000001");

    fn enc(m: &RelayMessage) -> Vec<u8> {
        relay::encode(P1Form::Message, m)
    }

    fn publish(id: &'static [u8], topic: &str) -> RelayMessage {
        RelayMessage::Publish(RelayPublish {
            delivery_id: Bytes::from_static(id),
            topic: topic.into(),
            payload: Bytes::from_static(b"hello"),
            ttl_ms: 0,
        })
    }

    fn decode(o: &Out) -> RelayMessage {
        relay::decode(P1Form::Message, o.msg_type, &o.payload).unwrap()
    }

    #[test]
    fn a_loop_delivery_is_retried_then_dead_lettered() {
        let mut a = Agent::new(P1Form::Message);
        let p = publish(b"d-1", LOOP_TOPIC);
        let o = outs(a.handle(1, &ID, &enc(&p), "", 0));
        assert_eq!(o.len(), 1);
        assert_eq!(decode(&o[0]), p);
        assert_eq!(a.next_deadline(), Some(500));
        assert!(a.on_timer(499).is_empty());
        assert_eq!(decode(&a.on_timer(500)[0]), p);
        assert_eq!(decode(&a.on_timer(1_000)[0]), p);
        let dl = a.on_timer(1_500);
        assert_eq!(
            decode(&dl[0]),
            RelayMessage::Nack(RelayNack {
                delivery_id: Bytes::from_static(b"d-1"),
                retryable: false,
                reason_code: codes::RETRY_EXHAUSTED.into()
            })
        );
        assert_eq!(a.next_deadline(), None);
    }

    #[test]
    fn an_ack_settles_and_a_duplicate_is_not_delivered() {
        let mut a = Agent::new(P1Form::Message);
        outs(a.handle(1, &ID, &enc(&publish(b"d-1", LOOP_TOPIC)), "", 0));
        let ack = RelayMessage::Ack(RelayAck {
            delivery_id: Bytes::from_static(b"d-1"),
        });
        assert!(outs(a.handle(2, &ID, &enc(&ack), "", 10)).is_empty());
        assert_eq!(a.next_deadline(), None);
        assert!(outs(a.handle(1, &ID, &enc(&publish(b"d-1", LOOP_TOPIC)), "", 20)).is_empty());
        // Unknown topics are dead-lettered at once; unknown deliveries and missing ids refused.
        let o = outs(a.handle(1, &ID, &enc(&publish(b"d-2", "nowhere")), "", 30));
        assert!(matches!(decode(&o[0]), RelayMessage::Nack(n) if n.reason_code == codes::NO_ROUTE));
        let stray = RelayMessage::Ack(RelayAck {
            delivery_id: Bytes::from_static(b"zz"),
        });
        assert_eq!(
            code(a.handle(2, &ID, &enc(&stray), "", 40)),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(
            code(a.handle(1, &ID, &enc(&publish(b"", LOOP_TOPIC)), "", 40)),
            ErrorCode::InvalidProfilePayload
        );
        assert_eq!(
            code(a.handle(6, &ID, b"", "", 40)),
            ErrorCode::UnsupportedMsgType
        );
        let gated = enc(&publish(b"d-3", GATED_TOPIC));
        assert_eq!(
            code(a.handle(1, &ID, &gated, "", 50)),
            ErrorCode::SecurityPolicy
        );
    }

    #[test]
    fn consumer_nacks_move_or_end_the_delivery() {
        let mut a = Agent::new(P1Form::Message);
        outs(a.handle(1, &ID, &enc(&publish(b"d-1", LOOP_TOPIC)), "", 0));
        let nack = |retryable| {
            enc(&RelayMessage::Nack(RelayNack {
                delivery_id: Bytes::from_static(b"d-1"),
                retryable,
                reason_code: "busy".into(),
            }))
        };
        assert!(outs(a.handle(3, &ID, &nack(true), "", 100)).is_empty());
        assert_eq!(a.next_deadline(), Some(600));
        assert_eq!(a.on_timer(600).len(), 1);
        outs(a.handle(3, &ID, &nack(true), "", 700));
        assert_eq!(a.on_timer(1_200).len(), 1);
        // The third attempt NACKed: nothing left, dead letter at once.
        let o = outs(a.handle(3, &ID, &nack(true), "", 1_300));
        assert!(
            matches!(decode(&o[0]), RelayMessage::Nack(n) if n.reason_code == codes::RETRY_EXHAUSTED)
        );
    }
}
