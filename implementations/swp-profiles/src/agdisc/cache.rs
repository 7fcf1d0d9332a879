//! The SWP-AGDISC judge of one channel: the cards seen per `(scope, agent_id)` with their
//! validators and freshness, and the GETs still waiting for an answer.
//!
//! - **ETag semantics** (§5): a validator names one representation. A card arriving under
//!   an etag that already named another revision or other card octets for that agent, in
//!   the copy held or in any card seen before it, is refused (`EtagReused`): a strong
//!   validator is never reused for another representation (RFC 9110 §8.8.1), so replacing
//!   the copy under another etag does not free the old one.
//! - **`AGDISC_NOT_MODIFIED`** says the cached copy named by the asker's validator is still
//!   valid (§5), so it must answer a pending conditional GET for that agent, with the very
//!   validator the GET sent (`UnsolicitedNotModified`, `ValidatorMismatch`). It renews the
//!   copy's freshness from `now_ms`.
//! - **Freshness** (§5, explicit max-age): a card is fresh for `max_age_ms` from the time it
//!   (or a not-modified answer for it) arrived; `0` means no freshness, revalidate every
//!   time. [`Seen::Get`] says what a cache holds when a GET is sent: nothing, a fresh copy
//!   (it could have answered itself) or a stale one (the GET is the refresh §5 asks for).
//!   Time is the caller's; nothing here reads a clock.
//!
//! A GET is answered by the first `AGDISC_DOC` or `AGDISC_NOT_MODIFIED` naming its agent, or
//! by the scope's next `AGDISC_ERR` (which names no agent). A card nobody asked for is taken
//! as a push (`solicited: false`): the spec has no rule against one.
//!
//! Caps: `max_cards` cards (the card first seen longest ago is forgotten, in O(1): a scan
//! for stale cards on every arrival cost 10 µs a message at the default cap), as many
//! validators (`(scope, agent_id, etag)` with a digest of what it named; the oldest is
//! forgotten first),
//! `max_pending` GETs (the oldest is forgotten), `max_card_bytes` per card (a larger card is
//! refused as a quota, `ERR_RATE_LIMIT_EXCEEDED`).

use super::message::AgdiscMessage;
use crate::bounded::Bounded;
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use bytes::Bytes;
use sha2::{Digest as _, Sha256};
use std::collections::VecDeque;
use swp_core::ErrorCode;

/// Caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Cards remembered per channel.
    pub max_cards: usize,
    /// GETs waiting for an answer per channel.
    pub max_pending: usize,
    /// The largest card body taken.
    pub max_card_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_cards: 1024,
            max_pending: 256,
            max_card_bytes: 1 << 20,
        }
    }
}

/// What a cache holds for an agent when a GET for it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cached {
    /// No copy.
    Nothing,
    /// A copy within its max-age.
    Fresh,
    /// A copy past its max-age: the GET refreshes it.
    Stale,
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A GET, now pending.
    Get {
        /// It sent a validator.
        conditional: bool,
        /// What was held for the agent.
        cached: Cached,
    },
    /// A card, now held.
    Doc {
        /// It answered a pending GET.
        solicited: bool,
        /// It replaced a copy held under another validator (a refresh with new content).
        replaced: bool,
    },
    /// A not-modified answer.
    NotModified {
        /// The copy it names was held, and is fresh again.
        renewed: bool,
    },
    /// An error answer.
    Error {
        /// It answered a pending GET.
        solicited: bool,
    },
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// A card under the validator of the copy held, with other content (§5, ETag semantics).
    #[error("agent {agent_id:?}: a card under etag {etag:?} differs from the card already seen under it; a validator names one representation (swp-agdisc §5)")]
    EtagReused {
        /// The agent.
        agent_id: String,
        /// The validator.
        etag: String,
    },
    /// A not-modified answer with no conditional GET waiting for that agent.
    #[error("agent {0:?}: AGDISC_NOT_MODIFIED answers no conditional AGDISC_GET (swp-agdisc §5)")]
    UnsolicitedNotModified(String),
    /// A not-modified answer naming another validator than the GET sent.
    #[error("agent {agent_id:?}: AGDISC_NOT_MODIFIED names etag {answered:?}, the AGDISC_GET asked about {asked:?} (swp-agdisc §5)")]
    ValidatorMismatch {
        /// The agent.
        agent_id: String,
        /// The GET's `if_none_match`.
        asked: String,
        /// The answer's etag.
        answered: String,
    },
    /// A card body over the cap.
    #[error("a card of {0} octets is over the cap")]
    TooLarge(usize),
}

impl CacheError {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            CacheError::TooLarge(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Card {
    etag: String,
    revision: String,
    body: Bytes,
    max_age_ms: u64,
    validated_at: u64,
}

impl Card {
    fn fresh(&self, now_ms: u64) -> bool {
        now_ms < self.validated_at.saturating_add(self.max_age_ms)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    scope: String,
    agent_id: String,
    if_none_match: String,
}

/// A validator: (scope, agent_id, etag).
type Validator = (String, String, String);

/// What a card names: its revision and octets, digested (length-prefixed, so that no two
/// cards share a digest by moving octets between the fields).
fn representation(revision: &str, body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((revision.len() as u64).to_le_bytes());
    h.update(revision.as_bytes());
    h.update(body);
    h.finalize().into()
}

/// What a held card costs: its octets and its key's, beyond a constant per entry.
fn card_weight((scope, agent_id): &(String, String), c: &Card) -> usize {
    std::mem::size_of::<Card>()
        + scope.len()
        + agent_id.len()
        + c.etag.len()
        + c.revision.len()
        + c.body.len()
}

/// What a remembered validator costs.
fn validator_weight((scope, agent_id, etag): &Validator, _: &[u8; 32]) -> usize {
    32 + scope.len() + agent_id.len() + etag.len()
}

/// The cards and pending GETs of one channel.
#[derive(Debug, Clone)]
pub struct Cache {
    config: Config,
    /// The cards held, the first seen forgotten first when `max_cards` are held.
    cards: Bounded<(String, String), Card>,
    pending: VecDeque<Pending>,
    /// Every validator seen, with the representation it named: a replaced copy's etag
    /// still names its card. Bounded like the cards.
    validators: Bounded<Validator, [u8; 32]>,
}

impl Cache {
    /// An empty cache.
    pub fn new(config: Config) -> Self {
        Cache {
            cards: Bounded::weighed(config.max_cards, card_weight),
            pending: VecDeque::new(),
            validators: Bounded::weighed(config.max_cards, validator_weight),
            config,
        }
    }

    /// Octets of the cards and validators held (the waiting GETs are capped in count and
    /// made of capped identifiers), for the owner's memory account. O(1).
    pub fn held_bytes(&self) -> usize {
        self.cards.bytes().saturating_add(self.validators.bytes())
    }

    /// Whether a fresh copy of `agent_id`'s card is held for `scope` at `now_ms`.
    pub fn cached(&self, now_ms: u64, scope: &str, agent_id: &str) -> Cached {
        match self.cards.get(&(scope.to_owned(), agent_id.to_owned())) {
            None => Cached::Nothing,
            Some(c) if c.fresh(now_ms) => Cached::Fresh,
            Some(_) => Cached::Stale,
        }
    }

    fn take_pending(&mut self, scope: &str, agent_id: Option<&str>) -> Option<Pending> {
        let i = self
            .pending
            .iter()
            .position(|p| p.scope == scope && agent_id.is_none_or(|a| p.agent_id == a))?;
        self.pending.remove(i)
    }
}

impl WireError for CacheError {
    fn code(&self) -> ErrorCode {
        CacheError::code(self)
    }
}

impl Profile for Cache {
    profile_codec!(AgdiscMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = CacheError;

    fn new(config: Config) -> Self {
        Cache::new(config)
    }

    /// Steps the cache with one message of `scope` at `now_ms`. A refused message changes
    /// nothing.
    fn step(&mut self, ctx: Ctx<'_>, m: &AgdiscMessage) -> Result<Seen, CacheError> {
        let Ctx { now_ms, scope } = ctx;
        match m {
            AgdiscMessage::Get(g) => {
                let cached = self.cached(now_ms, scope, &g.agent_id);
                if self.pending.len() >= self.config.max_pending {
                    self.pending.pop_front();
                }
                self.pending.push_back(Pending {
                    scope: scope.to_owned(),
                    agent_id: g.agent_id.clone(),
                    if_none_match: g.if_none_match.clone(),
                });
                Ok(Seen::Get {
                    conditional: !g.if_none_match.is_empty(),
                    cached,
                })
            }
            AgdiscMessage::Doc(d) => {
                if d.card_payload.len() > self.config.max_card_bytes {
                    return Err(CacheError::TooLarge(d.card_payload.len()));
                }
                let key = (scope.to_owned(), d.agent_id.clone());
                let named = representation(&d.schema_revision, &d.card_payload);
                let validator = (scope.to_owned(), d.agent_id.clone(), d.etag.clone());
                let held = self.cards.get(&key);
                let reused_held = held.is_some_and(|c| {
                    c.etag == d.etag
                        && (c.revision != d.schema_revision || c.body != d.card_payload)
                });
                let reused_earlier = self.validators.get(&validator).is_some_and(|v| *v != named);
                if !d.etag.is_empty() && (reused_held || reused_earlier) {
                    return Err(CacheError::EtagReused {
                        agent_id: d.agent_id.clone(),
                        etag: d.etag.clone(),
                    });
                }
                let replaced = held.is_some_and(|c| c.etag != d.etag);
                let solicited = self.take_pending(scope, Some(&d.agent_id)).is_some();
                if !d.etag.is_empty() && !self.validators.contains_key(&validator) {
                    self.validators.insert(validator, named);
                }
                // A new card takes the place of the oldest when full; a renewed one keeps
                // its place.
                self.cards.insert(
                    key,
                    Card {
                        etag: d.etag.clone(),
                        revision: d.schema_revision.clone(),
                        body: d.card_payload.clone(),
                        max_age_ms: d.max_age_ms,
                        validated_at: now_ms,
                    },
                );
                Ok(Seen::Doc {
                    solicited,
                    replaced,
                })
            }
            AgdiscMessage::NotModified(n) => {
                let i = self
                    .pending
                    .iter()
                    .position(|p| {
                        p.scope == scope && p.agent_id == n.agent_id && !p.if_none_match.is_empty()
                    })
                    .ok_or_else(|| CacheError::UnsolicitedNotModified(n.agent_id.clone()))?;
                if self.pending[i].if_none_match != n.etag {
                    return Err(CacheError::ValidatorMismatch {
                        agent_id: n.agent_id.clone(),
                        asked: self.pending[i].if_none_match.clone(),
                        answered: n.etag.clone(),
                    });
                }
                self.pending.remove(i);
                let renewed = match self.cards.get_mut(&(scope.to_owned(), n.agent_id.clone())) {
                    Some(c) if c.etag == n.etag => {
                        c.validated_at = now_ms;
                        true
                    }
                    _ => false,
                };
                Ok(Seen::NotModified { renewed })
            }
            AgdiscMessage::Err(_) => Ok(Seen::Error {
                solicited: self.take_pending(scope, None).is_some(),
            }),
        }
    }
}
