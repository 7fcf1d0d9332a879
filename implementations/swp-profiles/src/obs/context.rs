//! The trace context of one SWP-OBS channel, per scope: `OBS_SET` makes a context current,
//! `OBS_GET` asks for it, and `OBS_DOC` must give it back as it was set (§4, §6: valid
//! context preserved exactly, unknown tracestate entries never mutated, the correlation
//! linkage unchanged). The machine judges a channel, so an endpoint feeds what it
//! receives and what it answers, and a harness judges the answers it observes.
//!
//! `scope` is the peer's identity under S1, or empty. A refused message changes nothing.

use super::message::ObsMessage;
use super::trace::tracestate_entries;
use crate::p1::pb::obs::{ObsDoc, ObsSet};
use crate::payload::shown;
use crate::profile::{profile_codec, Ctx, Profile, WireError};
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use swp_core::ErrorCode;

/// Default longest tracestate kept (W3C asks propagators to carry at least 512 characters).
pub const DEFAULT_MAX_TRACESTATE_BYTES: usize = 8192;
/// Default bound on scopes with a context per channel.
pub const DEFAULT_MAX_SCOPES: usize = 1024;
/// Default bound on `OBS_GET`s awaiting their document, per scope.
pub const DEFAULT_MAX_PENDING: usize = 64;

/// The implementation-defined parts of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// tracestate keys the endpoint owns and may update (W3C lets a participant rewrite its
    /// own entry); with none, a document must carry the tracestate octet for octet.
    pub own_tracestate_keys: Vec<String>,
    /// Longest tracestate accepted; a longer one is refused, never cut.
    pub max_tracestate_bytes: usize,
    /// Scopes with state; scopes with nothing set or pending are forgotten first.
    pub max_scopes: usize,
    /// `OBS_GET`s awaiting an answer per scope.
    pub max_pending: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            own_tracestate_keys: Vec::new(),
            max_tracestate_bytes: DEFAULT_MAX_TRACESTATE_BYTES,
            max_scopes: DEFAULT_MAX_SCOPES,
            max_pending: DEFAULT_MAX_PENDING,
        }
    }
}

/// A trace context with its correlation linkage, as `OBS_SET` and `OBS_DOC` carry it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraceContext {
    /// The traceparent, as received.
    pub traceparent: String,
    /// The tracestate, as received.
    pub tracestate: String,
    /// Correlation to a message.
    pub msg_id: Bytes,
    /// Correlation to an A2A task.
    pub task_id: Bytes,
    /// Correlation to an SWP-RPC call.
    pub rpc_id: Bytes,
}

impl TraceContext {
    /// The context an `OBS_SET` carries.
    pub fn of_set(s: &ObsSet) -> Self {
        TraceContext {
            traceparent: s.traceparent.clone(),
            tracestate: s.tracestate.clone(),
            msg_id: s.msg_id.clone(),
            task_id: s.task_id.clone(),
            rpc_id: s.rpc_id.clone(),
        }
    }

    /// The context an `OBS_DOC` carries.
    pub fn of_doc(d: &ObsDoc) -> Self {
        TraceContext {
            traceparent: d.traceparent.clone(),
            tracestate: d.tracestate.clone(),
            msg_id: d.msg_id.clone(),
            task_id: d.task_id.clone(),
            rpc_id: d.rpc_id.clone(),
        }
    }

    /// The document that returns this context unchanged.
    pub fn to_doc(&self) -> ObsDoc {
        ObsDoc {
            traceparent: self.traceparent.clone(),
            tracestate: self.tracestate.clone(),
            msg_id: self.msg_id.clone(),
            task_id: self.task_id.clone(),
            rpc_id: self.rpc_id.clone(),
        }
    }

    /// Whether one of msg_id, task_id, rpc_id links it (OBS-004, a SHOULD).
    pub fn is_correlated(&self) -> bool {
        !(self.msg_id.is_empty() && self.task_id.is_empty() && self.rpc_id.is_empty())
    }

    /// Whether it carries no trace context at all.
    pub fn is_empty(&self) -> bool {
        self.traceparent.is_empty() && self.tracestate.is_empty()
    }
}

/// What a message did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// The context is now current for the scope.
    ContextSet {
        /// Whether it is linked to a msg_id, task_id or rpc_id (OBS-004 is a SHOULD, so
        /// an unlinked context is accepted and reported here).
        correlated: bool,
    },
    /// A snapshot request: an endpoint answers with [`TraceContext::to_doc`] of `current`,
    /// or an empty document when there is none.
    Snapshot {
        /// The request's flag.
        include_current: bool,
        /// The context in effect.
        current: Option<TraceContext>,
    },
    /// A document that preserves the context in effect.
    Doc {
        /// Whether it answered a pending `OBS_GET`.
        solicited: bool,
    },
    /// An `OBS_ERR`.
    Error,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// A tracestate longer than the endpoint keeps.
    #[error("tracestate of {len} octets exceeds {max}")]
    TracestateTooLong {
        /// Its length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// The document's traceparent differs from the one set (OBS-005).
    #[error("OBS_DOC traceparent {got} differs from the one set, {set} (swp-obs §6)")]
    TraceparentChanged {
        /// The traceparent set.
        set: String,
        /// The one returned.
        got: String,
    },
    /// An entry the endpoint does not own was changed, dropped, added or moved (OBS-003,
    /// OBS-007).
    #[error("OBS_DOC tracestate mutates the unknown entry {0} (swp-obs §4)")]
    UnknownEntryMutated(String),
    /// Same entries, other octets (OBS-005: valid context is preserved exactly).
    #[error(
        "OBS_DOC tracestate {got} is not the tracestate set, {set}, octet for octet (swp-obs §6)"
    )]
    TracestateChanged {
        /// The tracestate set.
        set: String,
        /// The one returned.
        got: String,
    },
    /// The document drops the context in effect although asked for it.
    #[error(
        "OBS_DOC carries no trace context although one is in effect and include_current was set"
    )]
    ContextDropped,
    /// The correlation linkage changed (obs_0004: linkage is deterministic).
    #[error("OBS_DOC {0} differs from the context set")]
    CorrelationChanged(&'static str),
    /// Too many scopes.
    #[error("more than {0} scopes with trace context on this channel")]
    Full(usize),
    /// Too many `OBS_GET`s awaiting a document.
    #[error("more than {0} OBS_GET awaiting a document")]
    TooManyPending(usize),
}

impl ContextError {
    /// The canonical code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ContextError::Full(_) | ContextError::TooManyPending(_) => ErrorCode::RateLimitExceeded,
            _ => ErrorCode::InvalidProfilePayload,
        }
    }
}

/// Compares a returned context with the one set: the traceparent octet for octet, the
/// unknown tracestate entries (keys outside `own_keys`) unchanged and in order, and, when
/// the endpoint owns no key, the tracestate octet for octet; then the correlation keys.
/// Also serves a harness comparing two hops (obs_0002).
pub fn compare(
    set: &TraceContext,
    got: &TraceContext,
    own_keys: &[String],
) -> Result<(), ContextError> {
    if set.traceparent != got.traceparent {
        return Err(ContextError::TraceparentChanged {
            set: shown(&set.traceparent),
            got: shown(&got.traceparent),
        });
    }
    if set.tracestate != got.tracestate {
        let unknown = |s: &str| {
            tracestate_entries(s)
                .into_iter()
                .filter(|(k, _)| !own_keys.iter().any(|o| o == k))
                .map(|(_, m)| m.to_owned())
                .collect::<Vec<_>>()
        };
        let (a, b) = (unknown(&set.tracestate), unknown(&got.tracestate));
        if a != b {
            // Name the first entry that differs, from whichever side has it.
            let first = a
                .iter()
                .zip(&b)
                .find(|(x, y)| x != y)
                .map(|(x, _)| x.clone())
                .or_else(|| a.get(b.len()).or(b.get(a.len())).cloned())
                .unwrap_or_default();
            return Err(ContextError::UnknownEntryMutated(shown(&first)));
        }
        if own_keys.is_empty() {
            return Err(ContextError::TracestateChanged {
                set: shown(&set.tracestate),
                got: shown(&got.tracestate),
            });
        }
    }
    for (name, a, b) in [
        ("msg_id", &set.msg_id, &got.msg_id),
        ("task_id", &set.task_id, &got.task_id),
        ("rpc_id", &set.rpc_id, &got.rpc_id),
    ] {
        if a != b {
            return Err(ContextError::CorrelationChanged(name));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Default)]
struct ScopeState {
    current: Option<TraceContext>,
    /// include_current of each pending `OBS_GET`, oldest first.
    pending: VecDeque<bool>,
}

/// The trace contexts of one channel.
#[derive(Debug, Clone)]
pub struct Contexts {
    config: Config,
    scopes: HashMap<String, ScopeState>,
}

impl Default for Contexts {
    fn default() -> Self {
        Contexts::new(Config::default())
    }
}

impl Contexts {
    /// A machine with these parameters (caps of 0 are raised to 1).
    pub fn new(mut config: Config) -> Self {
        config.max_scopes = config.max_scopes.max(1);
        config.max_pending = config.max_pending.max(1);
        Contexts {
            config,
            scopes: HashMap::new(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn scope_mut(&mut self, scope: &str) -> Result<&mut ScopeState, ContextError> {
        if !self.scopes.contains_key(scope) {
            if self.scopes.len() >= self.config.max_scopes {
                self.scopes
                    .retain(|_, s| s.current.is_some() || !s.pending.is_empty());
            }
            if self.scopes.len() >= self.config.max_scopes {
                return Err(ContextError::Full(self.config.max_scopes));
            }
        }
        Ok(self.scopes.entry(scope.to_owned()).or_default())
    }

    /// The context in effect for `scope`.
    pub fn current(&self, scope: &str) -> Option<&TraceContext> {
        self.scopes.get(scope).and_then(|s| s.current.as_ref())
    }

    /// An `OBS_SET` (its traceparent already validated by decoding).
    pub fn set(&mut self, scope: &str, c: TraceContext) -> Result<Seen, ContextError> {
        if c.tracestate.len() > self.config.max_tracestate_bytes {
            return Err(ContextError::TracestateTooLong {
                len: c.tracestate.len(),
                max: self.config.max_tracestate_bytes,
            });
        }
        let correlated = c.is_correlated();
        self.scope_mut(scope)?.current = Some(c);
        Ok(Seen::ContextSet { correlated })
    }

    /// An `OBS_GET`.
    pub fn get(&mut self, scope: &str, include_current: bool) -> Result<Seen, ContextError> {
        let max = self.config.max_pending;
        let s = self.scope_mut(scope)?;
        if s.pending.len() >= max {
            return Err(ContextError::TooManyPending(max));
        }
        s.pending.push_back(include_current);
        Ok(Seen::Snapshot {
            include_current,
            current: s.current.clone(),
        })
    }

    /// An `OBS_DOC`: judged against the context in effect, if any. Asked with
    /// `include_current` false, an empty document also answers (the flag's meaning is not
    /// defined; docs/spec-issues-profiles.md).
    pub fn doc(&mut self, scope: &str, got: &TraceContext) -> Result<Seen, ContextError> {
        if got.tracestate.len() > self.config.max_tracestate_bytes {
            return Err(ContextError::TracestateTooLong {
                len: got.tracestate.len(),
                max: self.config.max_tracestate_bytes,
            });
        }
        let Some(s) = self.scopes.get_mut(scope) else {
            return Ok(Seen::Doc { solicited: false });
        };
        let asked = s.pending.front().copied();
        if let Some(set) = &s.current {
            let empty_allowed = asked == Some(false);
            if got.is_empty() {
                if !empty_allowed {
                    return Err(ContextError::ContextDropped);
                }
            } else {
                compare(set, got, &self.config.own_tracestate_keys)?;
            }
        }
        let solicited = s.pending.pop_front().is_some();
        Ok(Seen::Doc { solicited })
    }
}

impl WireError for ContextError {
    fn code(&self) -> ErrorCode {
        ContextError::code(self)
    }
}

impl Profile for Contexts {
    profile_codec!(ObsMessage);
    type Config = Config;
    type Seen = Seen;
    type Error = ContextError;

    fn new(config: Config) -> Self {
        Contexts::new(config)
    }

    /// Steps the machine with any decoded message.
    fn step(&mut self, ctx: Ctx<'_>, m: &ObsMessage) -> Result<Seen, ContextError> {
        let scope = ctx.scope;
        match m {
            ObsMessage::Set(s) => self.set(scope, TraceContext::of_set(s)),
            ObsMessage::Get(g) => self.get(scope, g.include_current),
            ObsMessage::Doc(d) => self.doc(scope, &TraceContext::of_doc(d)),
            ObsMessage::Err(_) => Ok(Seen::Error),
        }
    }
}
