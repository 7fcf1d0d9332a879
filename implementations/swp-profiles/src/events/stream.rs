//! What one channel of SWP-EVENTS must remember: the event_ids each producer used (§5:
//! unique per producer scope), the severity enumeration (§6), and the channel's
//! subscriptions. `scope` names the producer of a published event (the peer's identity
//! under S1, or empty); the clock is injected.
//!
//! Order: the doc's "stream" is read as the SWP stream (core §3: a stream is the sequence
//! of frames of one connection), so the sender's order is the order of its frames and of
//! the events inside a batch. This machine sees that order as it is fed; whether a relay
//! honours it is judged by [`super::Relay`].
//!
//! Subscriptions: the schema gives `EVT_UNSUBSCRIBE` a `subscription_id` but no message
//! that returns one, so a subscription is named by its filter (docs/spec-issues-profiles.md).

use super::message::EventsMessage;
use super::SEVERITIES;
use crate::bounded::Bounded;
use crate::p1::pb::events::EventRecord;
use crate::payload::shown;
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use swp_core::ErrorCode;

/// Default bound on event_ids remembered per channel.
pub const DEFAULT_MAX_IDS: usize = 4096;
/// Default time an event_id is remembered: one day.
pub const DEFAULT_ID_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
/// Default bound on subscriptions per channel.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 64;

/// The implementation-defined parts of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The severity enumeration (§6), compared exactly.
    pub severities: Vec<String>,
    /// event_ids remembered; the oldest is forgotten first (every event is complete once
    /// published, so none is "open").
    pub max_ids: usize,
    /// How long an event_id is remembered (the retention within which reuse is caught).
    pub id_retention_ms: u64,
    /// Subscriptions per channel; one more is refused.
    pub max_subscriptions: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            severities: SEVERITIES.iter().map(|s| (*s).to_owned()).collect(),
            max_ids: DEFAULT_MAX_IDS,
            id_retention_ms: DEFAULT_ID_RETENTION_MS,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
        }
    }
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A new event.
    Published,
    /// An event equal to one this producer already published (a re-delivery): nothing new.
    DuplicateEvent,
    /// A batch, in order: how many events were new and how many repeated.
    Batch {
        /// New events.
        fresh: usize,
        /// Re-deliveries.
        duplicates: usize,
    },
    /// A new subscription.
    Subscribed,
    /// A subscription the channel already had: nothing new.
    AlreadySubscribed,
    /// A subscription ended.
    Unsubscribed,
    /// An `EVT_ERR`.
    Error,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// A severity outside the enumeration (EVENTS-012).
    #[error("event {event_id}: severity {severity} is not one of {allowed} (swp-events §6)")]
    InvalidSeverity {
        /// The event.
        event_id: String,
        /// The severity received.
        severity: String,
        /// The enumeration.
        allowed: String,
    },
    /// An event_id this producer already used for another event (EVENTS-010).
    #[error("event_id {0} reused by its producer for a different event (swp-events §5)")]
    EventIdReused(String),
    /// An unsubscribe naming no subscription of the channel (§7: an `EVT_ERR` case).
    #[error("no subscription {0} on this channel")]
    UnknownSubscription(String),
    /// Too many subscriptions.
    #[error("more than {0} subscriptions on this channel")]
    Full(usize),
}

impl StreamError {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            StreamError::Full(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }

    /// The `EVT_ERR.code` an endpoint answers with.
    pub fn reply_code(&self) -> &'static str {
        match self {
            StreamError::UnknownSubscription(_) => super::codes::UNKNOWN_SUBSCRIPTION,
            StreamError::Full(_) => super::codes::TOO_MANY_SUBSCRIPTIONS,
            _ => super::codes::INVALID_EVENT,
        }
    }
}

type IdKey = (String, String);

/// The digest of everything in a record, to tell a re-delivery from a reuse of its id.
fn digest(r: &EventRecord) -> [u8; 32] {
    let mut h = Sha256::new();
    for f in [
        r.event_type.as_bytes(),
        r.severity.as_bytes(),
        &r.ts_unix_ms.to_le_bytes(),
        &r.msg_id,
        &r.task_id,
        &r.rpc_id,
        &r.body,
    ] {
        h.update((f.len() as u64).to_le_bytes());
        h.update(f);
    }
    h.finalize().into()
}

/// One channel's events state.
#[derive(Debug, Clone)]
pub struct Stream {
    config: Config,
    /// (producer scope, event_id) → (digest, when first seen), oldest first.
    ids: Bounded<IdKey, ([u8; 32], u64)>,
    subscriptions: HashSet<(String, String)>,
}

impl Default for Stream {
    fn default() -> Self {
        Stream::new(Config::default())
    }
}

impl Stream {
    /// A machine with these parameters (caps of 0 are raised to 1).
    pub fn new(mut config: Config) -> Self {
        config.max_ids = config.max_ids.max(1);
        config.max_subscriptions = config.max_subscriptions.max(1);
        Stream {
            ids: Bounded::new(config.max_ids),
            subscriptions: HashSet::new(),
            config,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn severity(&self, r: &EventRecord) -> Result<(), StreamError> {
        if self.config.severities.contains(&r.severity) {
            Ok(())
        } else {
            Err(StreamError::InvalidSeverity {
                event_id: shown(&r.event_id),
                severity: shown(&r.severity),
                allowed: self.config.severities.join("|"),
            })
        }
    }

    /// Whether the record is new (`true`), a re-delivery (`false`) or a reuse of its id.
    fn classify(&self, now_ms: u64, key: &IdKey, d: &[u8; 32]) -> Result<bool, StreamError> {
        match self.ids.get(key) {
            Some((prev, at)) if now_ms.saturating_sub(*at) < self.config.id_retention_ms => {
                if prev == d {
                    Ok(false)
                } else {
                    Err(StreamError::EventIdReused(shown(&key.1)))
                }
            }
            _ => Ok(true),
        }
    }

    fn remember(&mut self, now_ms: u64, key: IdKey, d: [u8; 32]) {
        // Forget ids past retention from the oldest on, and the oldest while still full.
        while let Some((_, (_, at))) = self.ids.oldest() {
            let stale = now_ms.saturating_sub(*at) >= self.config.id_retention_ms;
            if !stale && self.ids.len() < self.config.max_ids {
                break;
            }
            self.ids.pop_oldest();
        }
        // A re-used id past its retention counts from now: it becomes the newest.
        self.ids.insert_newest(key, (d, now_ms));
    }

    /// One published event from producer `scope`.
    pub fn publish(
        &mut self,
        now_ms: u64,
        scope: &str,
        r: &EventRecord,
    ) -> Result<Seen, StreamError> {
        self.severity(r)?;
        let key = (scope.to_owned(), r.event_id.clone());
        let d = digest(r);
        if self.classify(now_ms, &key, &d)? {
            self.remember(now_ms, key, d);
            Ok(Seen::Published)
        } else {
            Ok(Seen::DuplicateEvent)
        }
    }

    /// A batch from producer `scope`, in its order (EVENTS-013). All or nothing: a refused
    /// event refuses the batch and records none of it.
    pub fn batch(
        &mut self,
        now_ms: u64,
        scope: &str,
        events: &[EventRecord],
    ) -> Result<Seen, StreamError> {
        // Events new to the channel, in batch order; a map keeps a large batch linear.
        let mut planned: Vec<(IdKey, [u8; 32])> = Vec::new();
        let mut in_batch: HashMap<&str, [u8; 32]> = HashMap::new();
        for r in events {
            self.severity(r)?;
            let d = digest(r);
            // Earlier in this batch counts as already seen.
            match in_batch.get(r.event_id.as_str()) {
                Some(prev) if *prev == d => continue,
                Some(_) => return Err(StreamError::EventIdReused(shown(&r.event_id))),
                None => {}
            }
            in_batch.insert(&r.event_id, d);
            let key = (scope.to_owned(), r.event_id.clone());
            if self.classify(now_ms, &key, &d)? {
                planned.push((key, d));
            }
        }
        let fresh = planned.len();
        for (key, d) in planned {
            self.remember(now_ms, key, d);
        }
        Ok(Seen::Batch {
            fresh,
            duplicates: events.len() - fresh,
        })
    }

    /// An `EVT_SUBSCRIBE`; the filter names the subscription.
    pub fn subscribe(&mut self, scope: &str, filter: &str) -> Result<Seen, StreamError> {
        let key = (scope.to_owned(), filter.to_owned());
        if self.subscriptions.contains(&key) {
            return Ok(Seen::AlreadySubscribed);
        }
        if self.subscriptions.len() >= self.config.max_subscriptions {
            return Err(StreamError::Full(self.config.max_subscriptions));
        }
        self.subscriptions.insert(key);
        Ok(Seen::Subscribed)
    }

    /// An `EVT_UNSUBSCRIBE`.
    pub fn unsubscribe(&mut self, scope: &str, subscription_id: &str) -> Result<Seen, StreamError> {
        if self
            .subscriptions
            .remove(&(scope.to_owned(), subscription_id.to_owned()))
        {
            Ok(Seen::Unsubscribed)
        } else {
            Err(StreamError::UnknownSubscription(shown(subscription_id)))
        }
    }

    /// Whether `scope` holds the subscription named `filter`.
    pub fn is_subscribed(&self, scope: &str, filter: &str) -> bool {
        self.subscriptions
            .contains(&(scope.to_owned(), filter.to_owned()))
    }

    /// event_ids remembered.
    pub fn ids_len(&self) -> usize {
        self.ids.len()
    }
}

impl WireError for StreamError {
    fn code(&self) -> ErrorCode {
        StreamError::code(self)
    }
}

impl Profile for Stream {
    profile_codec!(EventsMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = StreamError;

    fn new(config: Config) -> Self {
        Stream::new(config)
    }

    /// Steps the machine with any decoded message.
    fn step(&mut self, ctx: Ctx<'_>, m: &EventsMessage) -> Result<Seen, StreamError> {
        let Ctx { now_ms, scope } = ctx;
        match m {
            EventsMessage::Publish(p) => match &p.event {
                Some(r) => self.publish(now_ms, scope, r),
                // decode() refuses this; a hand-built message without an event is empty.
                None => Ok(Seen::Batch {
                    fresh: 0,
                    duplicates: 0,
                }),
            },
            EventsMessage::Batch(b) => self.batch(now_ms, scope, &b.events),
            EventsMessage::Subscribe(s) => self.subscribe(scope, &s.filter),
            EventsMessage::Unsubscribe(u) => self.unsubscribe(scope, &u.subscription_id),
            EventsMessage::Err(_) => Ok(Seen::Error),
        }
    }
}
