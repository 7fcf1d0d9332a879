//! Judging a relayed event stream against what was published into it: every delivered
//! event was published, deliveries keep the publication order (EVENTS-009, EVENTS-013,
//! EVENTS-018: a subscriber may see a filtered subsequence, never a reordering or a
//! repeat), and correlation keys arrive unchanged (EVENTS-011). A harness keeps one
//! [`Relay`] per stream it publishes into and subscribes to; a broker can keep one to check
//! itself.

use crate::p1::pb::events::EventRecord;
use crate::payload::shown;
use bytes::Bytes;
use std::collections::HashMap;

/// Default bound on published events remembered.
pub const DEFAULT_MAX_PUBLISHED: usize = 4096;

/// A relay breach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayError {
    /// Delivered but never published into this stream.
    #[error("event {0} delivered but never published")]
    NotPublished(String),
    /// Delivered before an event published earlier that was already delivered, or twice.
    #[error("event {event_id} delivered after {after}, which was published after it (swp-events §5, §6)")]
    OutOfOrder {
        /// The event delivered.
        event_id: String,
        /// The event already delivered that was published later (or the same one).
        after: String,
    },
    /// A correlation key changed on the way (EVENTS-011).
    #[error("event {event_id}: correlation key {key} changed between publication and delivery (swp-events §5)")]
    CorrelationChanged {
        /// The event.
        event_id: String,
        /// msg_id, task_id or rpc_id.
        key: &'static str,
    },
    /// An event_id published twice into the stream.
    #[error("event {0} published twice")]
    PublishedTwice(String),
    /// More published events than the judge keeps.
    #[error("more than {0} published events to remember")]
    Full(usize),
}

#[derive(Debug, Clone)]
struct Published {
    index: usize,
    msg_id: Bytes,
    task_id: Bytes,
    rpc_id: Bytes,
}

/// The judge of one relayed stream.
#[derive(Debug, Clone)]
pub struct Relay {
    published: HashMap<String, Published>,
    /// event_ids by publication index, to name the event a reordering jumped over.
    by_index: Vec<String>,
    last_delivered: Option<usize>,
    max: usize,
}

impl Default for Relay {
    fn default() -> Self {
        Relay::new(DEFAULT_MAX_PUBLISHED)
    }
}

impl Relay {
    /// A judge remembering at most `max` published events.
    pub fn new(max: usize) -> Self {
        Relay {
            published: HashMap::new(),
            by_index: Vec::new(),
            last_delivered: None,
            max: max.max(1),
        }
    }

    /// An event published into the stream, in publication order (batch members in batch
    /// order).
    pub fn published(&mut self, r: &EventRecord) -> Result<(), RelayError> {
        if self.published.contains_key(&r.event_id) {
            return Err(RelayError::PublishedTwice(shown(&r.event_id)));
        }
        if self.published.len() >= self.max {
            return Err(RelayError::Full(self.max));
        }
        let index = self.by_index.len();
        self.by_index.push(r.event_id.clone());
        self.published.insert(
            r.event_id.clone(),
            Published {
                index,
                msg_id: r.msg_id.clone(),
                task_id: r.task_id.clone(),
                rpc_id: r.rpc_id.clone(),
            },
        );
        Ok(())
    }

    /// An event delivered out of the stream.
    pub fn delivered(&mut self, r: &EventRecord) -> Result<(), RelayError> {
        let Some(p) = self.published.get(&r.event_id) else {
            return Err(RelayError::NotPublished(shown(&r.event_id)));
        };
        if let Some(last) = self.last_delivered.filter(|last| p.index <= *last) {
            return Err(RelayError::OutOfOrder {
                event_id: shown(&r.event_id),
                after: shown(self.by_index.get(last).map_or("", String::as_str)),
            });
        }
        for (key, sent, got) in [
            ("msg_id", &p.msg_id, &r.msg_id),
            ("task_id", &p.task_id, &r.task_id),
            ("rpc_id", &p.rpc_id, &r.rpc_id),
        ] {
            if sent != got {
                return Err(RelayError::CorrelationChanged {
                    event_id: shown(&r.event_id),
                    key,
                });
            }
        }
        self.last_delivered = Some(p.index);
        Ok(())
    }

    /// Events published and not yet delivered or skipped: those after the last delivery.
    pub fn pending(&self) -> usize {
        self.by_index.len() - self.last_delivered.map_or(0, |l| l + 1)
    }
}
