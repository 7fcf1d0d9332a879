//! What one channel of SWP-RELAY must remember: every delivery_id seen, per publisher
//! scope, for the dedupe retention window (§4: the same delivery_id within the window is a
//! duplicate delivery, CORE-020), whether the delivery was acknowledged or dead-lettered,
//! and, when a relay's retry policy is declared, the attempts it made and when.
//!
//! `scope` names the sender of a message (the peer's identity under S1, or a role). An
//! acknowledgement, NACK or status names a delivery published by *another* scope: the
//! consumer acknowledges what the relay delivered, the relay dead-letters what the
//! publisher published. The clock is injected.
//!
//! The retry rule is judged only with a [`RetryPolicy`]: a harness watching a relay gives
//! the schedule the relay declares, so a re-publish of an unacknowledged delivery must come
//! at the declared delay from the previous attempt, within a tolerance, and never beyond
//! the declared number of attempts, after an acknowledgement or after a dead letter. An
//! endpoint receiving publishes gives none: any duplicate is simply a duplicate.

use super::message::RelayMessage;
use crate::payload::{hex, shown};
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use swp_core::ErrorCode;

/// Default dedupe retention window: 24 hours, the doc's recommendation (§4).
pub const DEFAULT_DEDUPE_WINDOW_MS: u64 = 24 * 60 * 60 * 1000;
/// Default bound on deliveries remembered per channel.
pub const DEFAULT_MAX_DELIVERIES: usize = 4096;

/// A relay's declared retry schedule (§4: "retry policy MUST define backoff/limits").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// `delays_ms[k]`: how long after attempt k+1 (1-based) attempt k+2 is made when no
    /// acknowledgement came. Its length is the number of retries, so a delivery is
    /// attempted at most `delays_ms.len() + 1` times. An explicit list expresses constant,
    /// exponential and capped backoff alike.
    pub delays_ms: Vec<u64>,
    /// How far a retry may land from its declared time, either way.
    pub tolerance_ms: u64,
}

/// The implementation-defined parts of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Within this many ms of its first publish, a delivery_id is a duplicate (§4).
    pub dedupe_window_ms: u64,
    /// Deliveries remembered; past the window or settled ones are forgotten first.
    pub max_deliveries: usize,
    /// The finite set of reasons a non-retryable NACK (a dead letter) may carry; empty:
    /// any non-empty reason (the set is not known).
    pub reasons: Vec<String>,
    /// The retry schedule to judge re-publishes against; `None`: not judged.
    pub retry: Option<RetryPolicy>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            dedupe_window_ms: DEFAULT_DEDUPE_WINDOW_MS,
            max_deliveries: DEFAULT_MAX_DELIVERIES,
            reasons: Vec::new(),
            retry: None,
        }
    }
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A delivery_id new to its publisher (or past the window): deliver it.
    Published,
    /// The same delivery_id within the window: a duplicate, not to be delivered again as
    /// new. `attempt` counts this publisher's publishes of it (2 for the first repeat).
    Duplicate {
        /// The attempt number.
        attempt: u32,
    },
    /// A delivery acknowledged (again, if it was already).
    Acked,
    /// A retryable NACK: the delivery may be attempted again.
    Nacked,
    /// A non-retryable NACK: the delivery is dead-lettered with this reason.
    DeadLettered {
        /// Its reason code.
        reason: String,
    },
    /// A `RELAY_STATUS`.
    Status,
    /// A `RELAY_ERR`.
    Error,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// An ACK or NACK for a delivery the channel never saw published by the other side.
    #[error("no delivery {0} published by the other side of this channel")]
    UnknownDelivery(String),
    /// A non-retryable NACK with no reason (RELAY-008: dead letters carry one).
    #[error("delivery {0}: a non-retryable NACK must carry a reason_code (swp-relay §4)")]
    MissingReason(String),
    /// A dead-letter reason outside the declared finite set (RELAY-008).
    #[error("delivery {id}: reason_code {reason} is not one of {allowed} (swp-relay §4)")]
    UnknownReason {
        /// The delivery.
        id: String,
        /// The reason received.
        reason: String,
        /// The set.
        allowed: String,
    },
    /// A NACK after the delivery was acknowledged, or an ACK after it was dead-lettered.
    #[error("delivery {id}: {what} after it was {was}")]
    Settled {
        /// The delivery.
        id: String,
        /// What came.
        what: &'static str,
        /// How it had been settled.
        was: &'static str,
    },
    /// A re-publish of a delivery that was acknowledged or dead-lettered (RELAY-012).
    #[error("delivery {id}: attempt {attempt} after the delivery was {was} (swp-relay §4, §6: retry policy)")]
    RetryAfterSettled {
        /// The delivery.
        id: String,
        /// The attempt number.
        attempt: u32,
        /// How it had been settled.
        was: &'static str,
    },
    /// More attempts than the policy allows (RELAY-012).
    #[error("delivery {id}: attempt {attempt}, beyond the declared limit of {limit} attempts (swp-relay §6)")]
    BeyondLimit {
        /// The delivery.
        id: String,
        /// The attempt number.
        attempt: u32,
        /// The declared number of attempts.
        limit: usize,
    },
    /// A retry off the declared schedule (RELAY-012).
    #[error("delivery {id}: attempt {attempt} came {elapsed_ms} ms after the previous one; the declared backoff is {expected_ms} ms +/- {tolerance_ms} ms (swp-relay §6)")]
    OffSchedule {
        /// The delivery.
        id: String,
        /// The attempt number.
        attempt: u32,
        /// Time since the previous attempt.
        elapsed_ms: u64,
        /// The declared delay.
        expected_ms: u64,
        /// The tolerance.
        tolerance_ms: u64,
    },
    /// Too many deliveries in flight.
    #[error("more than {0} deliveries in flight on this channel")]
    Full(usize),
}

impl DeliveryError {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            DeliveryError::Full(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }

    /// The `RELAY_ERR.code` an endpoint answers with.
    pub fn reply_code(&self) -> &'static str {
        match self {
            DeliveryError::UnknownDelivery(_) => super::codes::UNKNOWN_DELIVERY,
            DeliveryError::Full(_) => super::codes::TOO_MANY_DELIVERIES,
            _ => super::codes::INVALID_MESSAGE,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Acked,
    Dead,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Acked => "acknowledged",
            State::Dead => "dead-lettered",
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    scope: String,
    first_ms: u64,
    last_ms: u64,
    attempts: u32,
    state: State,
    /// A retryable NACK came since the last attempt: the next one is not held to the
    /// timeout schedule (the doc does not say when a NACKed delivery is retried).
    nacked: bool,
}

/// The deliveries of one channel.
#[derive(Debug, Clone)]
pub struct Deliveries {
    config: Config,
    /// By delivery_id, one entry per publisher scope (a relay keeps the publisher's id).
    by_id: HashMap<Bytes, Vec<Entry>>,
    count: usize,
    /// Admissions, oldest first: (delivery_id, scope, first_ms); records of entries since
    /// replaced or forgotten are skipped and dropped lazily. Not a
    /// [`crate::bounded::Bounded`]: a delivery is found by its id whatever its scope, it
    /// leaves by settlement or its dedupe window rather than by age alone, and a record is
    /// told stale by its admission time.
    order: VecDeque<(Bytes, String, u64)>,
}

impl Deliveries {
    /// An empty channel.
    pub fn new(config: Config) -> Self {
        Deliveries {
            config,
            by_id: HashMap::new(),
            count: 0,
            order: VecDeque::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Deliveries remembered.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether none is remembered.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Forgets one entry past the window or settled, the oldest first; false if none. The
    /// admission queue is walked from its oldest end, dropping stale records (entries
    /// replaced or already forgotten) on the way, so a steady state of settled deliveries
    /// costs O(1) per admission.
    fn evict_one(&mut self, now_ms: u64) -> bool {
        let window = self.config.dedupe_window_ms;
        let mut i = 0;
        while i < self.order.len() {
            let (id, scope, first) = &self.order[i];
            let found = self.by_id.get(id).and_then(|v| {
                v.iter()
                    .position(|e| e.scope == *scope && e.first_ms == *first)
                    .map(|k| {
                        (
                            k,
                            v[k].state != State::Pending
                                || now_ms.saturating_sub(v[k].first_ms) >= window,
                        )
                    })
            });
            match found {
                None => {
                    self.order.remove(i);
                }
                Some((_, false)) => i += 1,
                Some((k, true)) => {
                    let (id, ..) = self.order.remove(i).unwrap_or_default();
                    if let Some(v) = self.by_id.get_mut(&id) {
                        v.remove(k);
                        if v.is_empty() {
                            self.by_id.remove(&id);
                        }
                    }
                    self.count -= 1;
                    return true;
                }
            }
        }
        false
    }

    /// The entry of `id` published by a scope other than `scope`.
    fn other(&mut self, scope: &str, id: &Bytes) -> Option<&mut Entry> {
        self.by_id
            .get_mut(id)?
            .iter_mut()
            .find(|e| e.scope != scope)
    }

    fn publish(&mut self, now_ms: u64, scope: &str, did: &Bytes) -> Result<Seen, DeliveryError> {
        let window = self.config.dedupe_window_ms;
        let live = self.by_id.get(did).and_then(|v| {
            v.iter()
                .position(|e| e.scope == scope && now_ms.saturating_sub(e.first_ms) < window)
        });
        if let Some(i) = live {
            let retry = self.config.retry.clone();
            let Some(e) = self.by_id.get_mut(did).and_then(|v| v.get_mut(i)) else {
                return Err(DeliveryError::UnknownDelivery(hex(did)));
            };
            let attempt = e.attempts.saturating_add(1);
            if let Some(pol) = retry {
                let id = hex(did);
                if e.state != State::Pending {
                    return Err(DeliveryError::RetryAfterSettled {
                        id,
                        attempt,
                        was: e.state.name(),
                    });
                }
                let limit = pol.delays_ms.len() + 1;
                if attempt as usize > limit {
                    return Err(DeliveryError::BeyondLimit { id, attempt, limit });
                }
                if !e.nacked {
                    let expected_ms = pol.delays_ms[(attempt - 2) as usize];
                    let elapsed_ms = now_ms.saturating_sub(e.last_ms);
                    if elapsed_ms.saturating_add(pol.tolerance_ms) < expected_ms
                        || elapsed_ms > expected_ms.saturating_add(pol.tolerance_ms)
                    {
                        return Err(DeliveryError::OffSchedule {
                            id,
                            attempt,
                            elapsed_ms,
                            expected_ms,
                            tolerance_ms: pol.tolerance_ms,
                        });
                    }
                }
            }
            e.attempts = attempt;
            e.last_ms = now_ms;
            e.nacked = false;
            return Ok(Seen::Duplicate { attempt });
        }
        // New, or past the window: a fresh delivery replaces what was remembered.
        if let Some(v) = self.by_id.get_mut(did) {
            let before = v.len();
            v.retain(|e| e.scope != scope);
            self.count -= before - v.len();
        }
        while self.count >= self.config.max_deliveries {
            if !self.evict_one(now_ms) {
                return Err(DeliveryError::Full(self.config.max_deliveries));
            }
        }
        self.by_id.entry(did.clone()).or_default().push(Entry {
            scope: scope.to_owned(),
            first_ms: now_ms,
            last_ms: now_ms,
            attempts: 1,
            state: State::Pending,
            nacked: false,
        });
        self.count += 1;
        self.order
            .push_back((did.clone(), scope.to_owned(), now_ms));
        if self.order.len() > 2 * self.config.max_deliveries.max(8) {
            let by_id = &self.by_id;
            self.order.retain(|(id, scope, first)| {
                by_id
                    .get(id)
                    .is_some_and(|v| v.iter().any(|e| e.scope == *scope && e.first_ms == *first))
            });
        }
        Ok(Seen::Published)
    }
}

impl WireError for DeliveryError {
    fn code(&self) -> ErrorCode {
        DeliveryError::code(self)
    }
}

impl Profile for Deliveries {
    profile_codec!(RelayMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = DeliveryError;

    fn new(config: Config) -> Self {
        Deliveries::new(config)
    }

    /// Steps the channel with one message from `scope` at `now_ms`.
    fn step(&mut self, ctx: Ctx<'_>, m: &RelayMessage) -> Result<Seen, DeliveryError> {
        let Ctx { now_ms, scope } = ctx;
        match m {
            RelayMessage::Publish(p) => self.publish(now_ms, scope, &p.delivery_id),
            RelayMessage::Ack(a) => {
                let id = hex(&a.delivery_id);
                let e = self
                    .other(scope, &a.delivery_id)
                    .ok_or_else(|| DeliveryError::UnknownDelivery(id.clone()))?;
                if e.state == State::Dead {
                    return Err(DeliveryError::Settled {
                        id,
                        what: "an ACK",
                        was: e.state.name(),
                    });
                }
                e.state = State::Acked;
                Ok(Seen::Acked)
            }
            RelayMessage::Nack(n) => {
                let id = hex(&n.delivery_id);
                if !n.retryable {
                    if n.reason_code.is_empty() {
                        return Err(DeliveryError::MissingReason(id));
                    }
                    let set = &self.config.reasons;
                    if !set.is_empty() && !set.contains(&n.reason_code) {
                        return Err(DeliveryError::UnknownReason {
                            id,
                            reason: shown(&n.reason_code),
                            allowed: set.join(" "),
                        });
                    }
                }
                let e = self
                    .other(scope, &n.delivery_id)
                    .ok_or_else(|| DeliveryError::UnknownDelivery(id.clone()))?;
                if e.state == State::Acked {
                    return Err(DeliveryError::Settled {
                        id,
                        what: "a NACK",
                        was: e.state.name(),
                    });
                }
                if n.retryable {
                    e.nacked = true;
                    Ok(Seen::Nacked)
                } else {
                    e.state = State::Dead;
                    Ok(Seen::DeadLettered {
                        reason: n.reason_code.clone(),
                    })
                }
            }
            RelayMessage::Status(_) => Ok(Seen::Status),
            RelayMessage::Err(_) => Ok(Seen::Error),
        }
    }
}
