//! The states one SWP-STATE channel knows, keyed by state_id: a PUT stores an immutable
//! blob whose id fits its content (STATE-002, STATE-005) and whose declared parents exist
//! (STATE-003, STATE-004: as parents must exist first and states never change, the parent
//! references form a DAG); a DELTA stores an opaque delta the same way, its content
//! unchecked (§4: the delta format is opaque); a GET finds a state or gets a deterministic
//! not-found (STATE-007).
//!
//! The machine judges a channel: a PUT or DELTA whose id a pending GET asked for is the
//! answer to it, not a store request, so its parents need not be known to this side (the
//! holder of a state need not ship its history). State is shared, so the store is keyed by
//! id alone, not by peer. A refused message changes nothing, except that a GET is recorded
//! as pending even when the state is missing (its answer may still come from the peer).
//!
//! Nothing is evicted: forgetting a state would change later GET answers and parent checks,
//! so a full store refuses.

use super::id::{IdError, IdScheme};
use super::message::StateMessage;
use crate::p1::pb::state::{StateDelta, StatePut};
use crate::payload::hex;
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use swp_core::ErrorCode;

/// Default bound on states stored per channel.
pub const DEFAULT_MAX_STATES: usize = 4096;
/// Default bound on octets stored per channel.
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;
/// Default bound on GETs awaiting an answer.
pub const DEFAULT_MAX_PENDING: usize = 256;

/// The implementation-defined parts of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// How ids relate to content.
    pub scheme: IdScheme,
    /// States stored.
    pub max_states: usize,
    /// Octets stored (ids, blobs, deltas, parents, metadata).
    pub max_bytes: usize,
    /// GETs awaiting an answer; the oldest is forgotten first.
    pub max_pending: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            scheme: IdScheme::default(),
            max_states: DEFAULT_MAX_STATES,
            max_bytes: DEFAULT_MAX_BYTES,
            max_pending: DEFAULT_MAX_PENDING,
        }
    }
}

/// A stored state, as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Stored by `STATE_PUT`.
    Put(StatePut),
    /// Stored by `STATE_DELTA`.
    Delta(StateDelta),
}

impl Entry {
    /// The message that returns it unchanged (the answer to a GET; state_0005: a delta
    /// comes back as the same opaque octets).
    pub fn to_message(&self) -> StateMessage {
        match self {
            Entry::Put(p) => StateMessage::Put(p.clone()),
            Entry::Delta(d) => StateMessage::Delta(d.clone()),
        }
    }

    fn size(&self) -> usize {
        let (id, a, b, parents) = match self {
            Entry::Put(p) => (&p.state_id, &p.blob, &p.metadata, &p.parent_ids),
            Entry::Delta(d) => (&d.state_id, &d.delta, &Bytes::new(), &d.parent_ids),
        };
        id.len() + a.len() + b.len() + parents.iter().map(Bytes::len).sum::<usize>()
    }
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A new state stored.
    Stored,
    /// The same state again: nothing new (states are immutable and idempotent).
    Duplicate,
    /// The answer to a pending GET, recorded.
    Answer,
    /// A GET for a stored state: an endpoint answers with [`Entry::to_message`].
    Found(Entry),
    /// A `STATE_ERR`.
    Error,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The id does not fit its content or scheme (STATE-005).
    #[error("state {id}: {error} (swp-state §6)")]
    BadId {
        /// The id, hex.
        id: String,
        /// What is wrong.
        error: IdError,
    },
    /// A declared parent does not exist (STATE-003).
    #[error("state {id} declares parent {parent}, which does not exist (swp-state §4)")]
    MissingParent {
        /// The id, hex.
        id: String,
        /// The parent, hex.
        parent: String,
    },
    /// The id exists with other content.
    #[error("state {0} exists with other content; states are immutable")]
    Conflicting(String),
    /// No such state (STATE-007).
    #[error("no state {0}")]
    NotFound(String),
    /// The store is full.
    #[error("the state store is full ({0} states or its octet budget)")]
    Full(usize),
}

impl StoreError {
    /// The canonical code: a missing state is `ERR_NOT_FOUND` (the profile defines a
    /// missing-state outcome, §6); a full store is a quota; the rest is invalid payload.
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::NotFound(_) => ErrorCode::NotFound,
            StoreError::Full(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }

    /// The `StateErr.code` an endpoint answers with.
    pub fn reply_code(&self) -> &'static str {
        use super::codes;
        match self {
            StoreError::BadId {
                error: IdError::Mismatch,
                ..
            } => codes::HASH_MISMATCH,
            StoreError::BadId { .. } => codes::INVALID_STATE_ID,
            StoreError::MissingParent { .. } => codes::MISSING_PARENT,
            StoreError::Conflicting(_) => codes::CONFLICTING_STATE,
            StoreError::NotFound(_) => codes::NOT_FOUND,
            StoreError::Full(_) => codes::TOO_MANY,
        }
    }
}

/// The states of one channel.
#[derive(Debug, Clone)]
pub struct Store {
    config: Config,
    states: HashMap<Bytes, Entry>,
    bytes: usize,
    pending: VecDeque<Bytes>,
}

impl Default for Store {
    fn default() -> Self {
        Store::new(Config::default())
    }
}

impl Store {
    /// A store with these parameters (caps of 0 are raised to 1).
    pub fn new(mut config: Config) -> Self {
        config.max_states = config.max_states.max(1);
        config.max_pending = config.max_pending.max(1);
        Store {
            config,
            states: HashMap::new(),
            bytes: 0,
            pending: VecDeque::new(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A `STATE_PUT`.
    pub fn put(&mut self, p: &StatePut) -> Result<Seen, StoreError> {
        self.config
            .scheme
            .verify(&p.state_id, &p.blob)
            .map_err(|error| StoreError::BadId {
                id: hex(&p.state_id),
                error,
            })?;
        self.admit(Entry::Put(p.clone()), &p.state_id, &p.parent_ids)
    }

    /// A `STATE_DELTA`.
    pub fn delta(&mut self, d: &StateDelta) -> Result<Seen, StoreError> {
        self.config
            .scheme
            .check_form(&d.state_id)
            .map_err(|error| StoreError::BadId {
                id: hex(&d.state_id),
                error,
            })?;
        self.admit(Entry::Delta(d.clone()), &d.state_id, &d.parent_ids)
    }

    fn admit(&mut self, e: Entry, id: &Bytes, parents: &[Bytes]) -> Result<Seen, StoreError> {
        let answering = self.pending.iter().position(|x| x == id);
        if let Some(prev) = self.states.get(id) {
            if *prev != e {
                return Err(StoreError::Conflicting(hex(id)));
            }
            if let Some(i) = answering {
                self.pending.remove(i);
                return Ok(Seen::Answer);
            }
            return Ok(Seen::Duplicate);
        }
        if answering.is_none() {
            if let Some(missing) = parents.iter().find(|x| !self.states.contains_key(*x)) {
                return Err(StoreError::MissingParent {
                    id: hex(id),
                    parent: hex(missing),
                });
            }
        }
        let size = e.size();
        if self.states.len() >= self.config.max_states
            || self.bytes.saturating_add(size) > self.config.max_bytes
        {
            return Err(StoreError::Full(self.config.max_states));
        }
        self.bytes += size;
        self.states.insert(id.clone(), e);
        Ok(match answering {
            Some(i) => {
                self.pending.remove(i);
                Seen::Answer
            }
            None => Seen::Stored,
        })
    }

    /// A `STATE_GET`: the state, or `NotFound`; recorded as pending either way.
    pub fn get(&mut self, id: &Bytes) -> Result<Seen, StoreError> {
        if self.pending.len() >= self.config.max_pending {
            self.pending.pop_front();
        }
        self.pending.push_back(id.clone());
        match self.states.get(id) {
            Some(e) => Ok(Seen::Found(e.clone())),
            None => Err(StoreError::NotFound(hex(id))),
        }
    }

    /// Octets the states hold (what `max_bytes` caps).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// A stored state.
    pub fn lookup(&self, id: &[u8]) -> Option<&Entry> {
        self.states.get(id)
    }

    /// States stored.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether none is stored.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

impl WireError for StoreError {
    fn code(&self) -> ErrorCode {
        StoreError::code(self)
    }
}

impl Profile for Store {
    profile_codec!(StateMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = StoreError;

    fn new(config: Config) -> Self {
        Store::new(config)
    }

    /// Steps the machine with any decoded message.
    fn step(&mut self, _ctx: Ctx<'_>, m: &StateMessage) -> Result<Seen, StoreError> {
        match m {
            StateMessage::Put(p) => self.put(p),
            StateMessage::Get(g) => self.get(&g.state_id),
            StateMessage::Delta(d) => self.delta(d),
            StateMessage::Err(_) => Ok(Seen::Error),
        }
    }
}
